// The service's strict interface (issue #33): query parameters required and checked per route
// (missing type, a parameter a route does not take, bad values, repeats), each answered with
// 400 and the code and `parameter` of the error body before the body is read; strict options of
// createService and runServe; and the same container bytes from POST /v1/compress as from the
// library's streaming compressor, compressFile and the `parle compress` command for the same
// elements and options. One service with the default options, on port 0; every assertion is
// about its own request.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine, type Engine } from '../ts/engine.js';
import { ErrorCodes, ParleError } from '../ts/errors.js';
import { DEFAULT_CHUNK_BYTES, readHeader } from '../ts/format/layout.js';
import { compressFile } from '../ts/node/files.js';
import { createService, runServe, type Service } from '../ts/service/index.js';
import type { ElementType, ParleArray } from '../ts/types.js';
import { elementSize } from '../ts/types.js';
import { Rng, caseSeed, describeSeed, fillRuns } from './support/random.js';

const BIN = fileURLToPath(new URL('../bin/parle.mjs', import.meta.url));
const OCTETS = { 'content-type': 'application/octet-stream' };
const PARLE = { 'content-type': 'application/x-parle' };

let engine: Engine;
let service: Service;
let base: string;
let scratch: string;

beforeAll(async () => {
  engine = await createEngine({ workers: 2, gpu: 'off' });
  service = await createService(engine); // the defaults: the chunk size is the library's
  base = await service.listen({ port: 0, host: '127.0.0.1' });
  scratch = await mkdtemp(join(tmpdir(), 'parle-service-options-'));
});

afterAll(async () => {
  await service?.close();
  await engine?.destroy();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

interface Reply {
  status: number;
  headers: Headers;
  body: Uint8Array;
}

async function post(path: string, body: Uint8Array, headers: Record<string, string> = OCTETS): Promise<Reply> {
  const res = await fetch(new URL(path, base), { method: 'POST', headers, body });
  return { status: res.status, headers: res.headers, body: new Uint8Array(await res.arrayBuffer()) };
}

async function get(path: string): Promise<Reply> {
  const res = await fetch(new URL(path, base));
  return { status: res.status, headers: res.headers, body: new Uint8Array(await res.arrayBuffer()) };
}

/** Checks a JSON error reply's status, code and `parameter`; returns its message. */
function expectError(reply: Reply, status: number, code: string, parameter?: string): string {
  expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
  const { error } = JSON.parse(Buffer.from(reply.body).toString());
  expect({ status: reply.status, code: error.code, parameter: error.parameter }).toEqual({ status, code, parameter });
  expect(error.message.length).toBeGreaterThan(0);
  return error.message as string;
}

function bytesOf(a: ParleArray): Uint8Array {
  return new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
}

const u8 = new Uint8Array(1000).fill(7);

describe('required parameters', () => {
  it('compress without type: 400 UNSUPPORTED_TYPE naming type (no default type)', async () => {
    const message = expectError(await post('/v1/compress', u8), 400, ErrorCodes.UNSUPPORTED_TYPE, 'type');
    expect(message).toMatch(/type/);
    expectError(await post('/v1/compress?level=5', u8), 400, ErrorCodes.UNSUPPORTED_TYPE, 'type');
    expectError(await post('/v1/compress?type=', u8), 400, ErrorCodes.UNSUPPORTED_TYPE, 'type');
  });

  it('sort without type: 400 UNSUPPORTED_TYPE naming type', async () => {
    expectError(await post('/v1/sort', u8), 400, ErrorCodes.UNSUPPORTED_TYPE, 'type');
  });

  it('decompress, healthz and metrics need no parameter', async () => {
    const packed = await post('/v1/compress?type=u8', u8);
    expect(packed.status).toBe(200);
    expect((await post('/v1/decompress', packed.body, PARLE)).status).toBe(200);
    expect((await get('/healthz')).status).toBe(200);
    expect((await get('/metrics')).status).toBe(200);
  });
});

describe('unknown parameters: 400 INVALID_OPTION naming the parameter as written', () => {
  it('a misspelt parameter, with the one it was probably meant to be', async () => {
    const message = expectError(await post('/v1/compress?type=u8&levle=9', u8), 400, ErrorCodes.INVALID_OPTION, 'levle');
    expect(message).toMatch(/unknown query parameter 'levle' \(did you mean 'level'\?\)/);
    expect(message).toMatch(/type, codec, level, decoder/);
    expectError(await post('/v1/compress?Type=u8', u8), 400, ErrorCodes.INVALID_OPTION, 'Type');
    expectError(await post('/v1/compress?type=u8&chunkBytes=4096', u8), 400, ErrorCodes.INVALID_OPTION, 'chunkBytes');
  });

  it('a parameter another route takes', async () => {
    const packed = (await post('/v1/compress?type=u8', u8)).body;
    const message = expectError(await post('/v1/decompress?type=u8', packed, PARLE), 400, ErrorCodes.INVALID_OPTION, 'type');
    expect(message).toMatch(/takes no query parameters/);
    expectError(await post('/v1/sort?type=u32&codec=auto', new Uint8Array(8)), 400, ErrorCodes.INVALID_OPTION, 'codec');
  });

  it('on the GET routes too', async () => {
    expectError(await get('/healthz?verbose=1'), 400, ErrorCodes.INVALID_OPTION, 'verbose');
    expectError(await get('/metrics?name[]=x'), 400, ErrorCodes.INVALID_OPTION, 'name[]');
  });

  it('a percent-encoded name is named decoded', async () => {
    expectError(await post('/v1/compress?type=u8&lev%20el=1', u8), 400, ErrorCodes.INVALID_OPTION, 'lev el');
  });

  it('answered before the body is read: a large declared body is not waited for', async () => {
    const req = http.request(new URL('/v1/compress?type=u8&levle=9', base), {
      method: 'POST',
      headers: { ...OCTETS, 'content-length': 64 << 20 },
      agent: false,
    });
    req.on('error', () => undefined); // the server closes the connection after its answer
    req.write(new Uint8Array(64 << 10));
    const [res] = (await once(req, 'response')) as [http.IncomingMessage];
    const pieces: Buffer[] = [];
    for await (const piece of res) pieces.push(piece as Buffer);
    expect(res.statusCode).toBe(400);
    expect(res.headers.connection).toBe('close');
    expect(JSON.parse(Buffer.concat(pieces).toString()).error).toMatchObject({ code: ErrorCodes.INVALID_OPTION, parameter: 'levle' });
    req.destroy();
  });
});

describe('bad values of known parameters: 400, naming the query parameter, never a library option', () => {
  it('type: 400 UNSUPPORTED_TYPE', async () => {
    const message = expectError(await post('/v1/compress?type=u128', u8), 400, ErrorCodes.UNSUPPORTED_TYPE, 'type');
    expect(message).toMatch(/u8, u16, u32, i32, f32, i8, i16, f16, f64, i64, u64; got 'u128'/);
    expectError(await post('/v1/sort?type=u16', u8), 400, ErrorCodes.UNSUPPORTED_TYPE, 'type');
  });

  it('codec: unknown stage, invalid pipeline, quantize, a raw +', async () => {
    for (const [query, pattern] of [
      ['codec=bogus', /^query parameter codec: unknown stage 'bogus'/],
      ['codec=', /^query parameter codec: unknown stage ''/],
      ['codec=huffman%2Bdelta', /^query parameter codec 'huffman\+delta'/],
      ['codec=quantize', /^query parameter codec: 'quantize' is not a codec stage/],
      ['codec=delta+huffman', /write it as %2B/],
    ] as const) {
      const message = expectError(await post(`/v1/compress?type=u8&${query}`, u8), 400, ErrorCodes.INVALID_OPTION, 'codec');
      expect(message, query).toMatch(pattern);
      expect(message, query).not.toMatch(/options\./);
    }
  });

  it('level: not an integer from 1 to 9', async () => {
    for (const level of ['0', '10', '-1', '5.0', '1e0', 'abc', '', '%205']) {
      const message = expectError(await post(`/v1/compress?type=u8&level=${level}`, u8), 400, ErrorCodes.INVALID_OPTION, 'level');
      expect(message, level).toMatch(/^query parameter level must be an integer from 1 to 9/);
    }
  });

  it('decoder: not cpu or gpu', async () => {
    for (const decoder of ['GPU', 'wasm', '', '%20gpu', 'gpu%20', '1']) {
      const message = expectError(await post(`/v1/compress?type=u8&decoder=${decoder}`, u8), 400, ErrorCodes.INVALID_OPTION, 'decoder');
      expect(message, decoder).toMatch(/^query parameter decoder must be one of cpu, gpu; got '/);
      expect(message, decoder).not.toMatch(/options\./);
    }
  });

  it('good values are taken: codec with %2B, level 1 and 9', async () => {
    const input = fillRuns(new Rng(caseSeed('service options good values')), new Uint16Array(50_000), { kind: 'uniform', maxRun: 30 });
    for (const query of [
      'codec=delta%2Bhuffman',
      'codec=auto',
      'codec=stored',
      'level=1',
      'level=9&codec=rle',
      'decoder=cpu',
      'decoder=gpu',
    ]) {
      const reply = await post(`/v1/compress?type=u16&${query}`, bytesOf(input));
      expect(reply.status, query).toBe(200);
      expect(Buffer.compare(bytesOf(await engine.decompress(reply.body)), bytesOf(input)), query).toBe(0);
    }
  });
});

describe('repeated parameters: one 400 INVALID_OPTION', () => {
  it('the same parameter twice, with equal or different values', async () => {
    const message = expectError(await post('/v1/compress?type=u8&type=u16', u8), 400, ErrorCodes.INVALID_OPTION, 'type');
    expect(message).toBe('query parameter type is given 2 times; give it once');
    expectError(await post('/v1/compress?type=u8&level=3&level=3', u8), 400, ErrorCodes.INVALID_OPTION, 'level');
    expectError(await post('/v1/compress?type=u8&decoder=gpu&decoder=cpu', u8), 400, ErrorCodes.INVALID_OPTION, 'decoder');
    expectError(await post('/v1/sort?type=u32&type=u32', new Uint8Array(8)), 400, ErrorCodes.INVALID_OPTION, 'type');
  });
});

describe('strict options of createService and runServe', () => {
  /** The INVALID_OPTION error `run` throws (fails the test when it does not). */
  async function invalidOption(run: () => Promise<unknown>): Promise<ParleError> {
    const error = await run().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ParleError);
    expect((error as ParleError).code).toBe(ErrorCodes.INVALID_OPTION);
    return error as ParleError;
  }

  it('createService: an unknown key, named as written', async () => {
    const e = await invalidOption(() => createService(engine, { maxbody: 5 } as never));
    expect(e.message).toMatch(/^options\.maxbody is not an option of createService \(did you mean maxBody\?\)/);
    expect(e.option).toBe('maxbody');
    expect((await invalidOption(() => createService(engine, { port: 8080 } as never))).message).toMatch(/^options\.port /);
  });

  it('createService: bad values and a non-object', async () => {
    for (const [options, pattern] of [
      [{ chunkBytes: 0 }, /^options\.chunkBytes must be an integer from 1024/],
      [{ maxBody: -1 }, /^options\.maxBody /],
      [{ timeoutMs: 1.5 }, /^options\.timeoutMs /],
      [{ maxWaitMs: -1 }, /^options\.maxWaitMs must be an integer from 0/],
      [{ shedRate: 0.5 }, /^options\.shedRate must be an integer from 0/],
      [{ minBodyRate: 0.5 }, /^options\.minBodyRate must be an integer from 0/],
      [{ bodyGraceMs: '5s' }, /^options\.bodyGraceMs must be an integer from 0/],
      [{ maxwaitms: 5 }, /^options\.maxwaitms is not an option of createService \(did you mean maxWaitMs\?\)/],
      [{ logger: 'yes' }, /^options\.logger must be a boolean/],
      [{ readMetrics: 'text' }, /^options\.readMetrics must be a function/],
      [null, /must be an object/],
      [[], /must be an object/],
    ] as const) {
      expect((await invalidOption(() => createService(engine, options as never))).message).toMatch(pattern);
    }
  });

  it('runServe: unknown keys and bad values are refused before anything starts (no port, no engine, no fork)', async () => {
    for (const [options, pattern] of [
      [{ prot: 0 }, /^options\.prot is not an option of runServe/],
      [{ port: 0, maxbody: 1 }, /^options\.maxbody is not an option of runServe \(did you mean maxBody\?\)/],
      [{ port: 0, processes: 2, chunkBytes: 10 }, /^options\.chunkBytes must be an integer from 1024/],
      [{ port: 70_000 }, /^options\.port must be an integer from 0 to 65535/],
      [{ port: 0, processes: 0 }, /^options\.processes must be a positive integer/],
      [{ port: 0, gpu: 'on' }, /^options\.gpu must be 'auto', 'off' or 'require'/],
      [{ port: 0, host: '' }, /^options\.host /],
      [{ port: 0, processes: 2, maxWaitMs: 1.5 }, /^options\.maxWaitMs must be an integer from 0/],
    ] as const) {
      // A stopSignal that never fires: were the options taken, the call would not settle.
      const e = await invalidOption(() =>
        runServe({ ...(options as object), log: () => undefined, stopSignal: new Promise(() => undefined) }),
      );
      expect(e.message).toMatch(pattern);
    }
  });
});

/** The library options a compress case's query stands for. */
interface CaseOptions {
  codec?: string;
  level?: number;
  decoder?: 'cpu' | 'gpu';
}

describe('POST /v1/compress writes the bytes the library and the command write', () => {
  /** Streams `bytes` through engine.createCompressor in 1 MiB pieces, as compressFile reads a file. */
  async function streamed(type: ElementType, bytes: Uint8Array, options: CaseOptions): Promise<Buffer> {
    const writer = engine.createCompressor(type, bytes.length / elementSize(type), options);
    const out: Uint8Array[] = [];
    for (let at = 0; at < bytes.length; at += 1 << 20) out.push(...(await writer.write(bytes.subarray(at, at + (1 << 20)))));
    out.push(...(await writer.end()));
    return Buffer.concat(out);
  }

  const cases: { name: string; type: ElementType; n: number; query: string; options: CaseOptions }[] = [
    { name: 'u8, defaults', type: 'u8', n: (1 << 20) + 12_345, query: '', options: {} },
    { name: 'u16, level 9', type: 'u16', n: 700_001, query: '&level=9', options: { level: 9 } },
    {
      name: 'u32, level 8, delta+huffman',
      type: 'u32',
      n: 300_000,
      query: '&level=8&codec=delta%2Bhuffman',
      options: { level: 8, codec: 'delta+huffman' },
    },
    { name: 'f32, level 1', type: 'f32', n: 100_000, query: '&level=1', options: { level: 1 } },
    {
      name: 'u16, decoder gpu, delta+shuffle+huffman',
      type: 'u16',
      n: 400_000,
      query: '&decoder=gpu&codec=delta%2Bshuffle%2Bhuffman',
      options: { decoder: 'gpu', codec: 'delta+shuffle+huffman' },
    },
  ];
  for (const { name, type, n, query, options } of cases) {
    it(`${name}: equal to createCompressor's and compressFile's bytes`, async () => {
      const seed = caseSeed(`service same bytes ${name}`);
      const bytes = new Uint8Array(n * elementSize(type));
      fillRuns(new Rng(seed), bytes, { kind: 'uniform', maxRun: 50 });
      const reply = await post(`/v1/compress?type=${type}${query}`, bytes);
      expect(reply.status, describeSeed(seed)).toBe(200);
      const input = join(scratch, `${type}-${n}.raw`);
      const output = `${input}.parle`;
      await writeFile(input, bytes);
      await compressFile(engine, input, output, { type, ...options, force: true });
      const viaFile = await readFile(output);
      expect(Buffer.compare(Buffer.from(reply.body), viaFile), describeSeed(seed)).toBe(0);
      expect(Buffer.compare(Buffer.from(reply.body), await streamed(type, bytes, options)), describeSeed(seed)).toBe(0);
      // The library's chunk size at that level: 256 KiB up to 7, 512 KiB at 8, 1 MiB at 9.
      const level = options.level ?? 5;
      const chunkBytes = level <= 7 ? DEFAULT_CHUNK_BYTES : level === 8 ? 512 << 10 : 1 << 20;
      const header = readHeader(reply.body);
      expect({ chunkLength: header.chunkLength, level: header.level }).toEqual({ chunkLength: chunkBytes / elementSize(type), level });
    });
  }

  it("decoder=gpu: engine.compress's mode-3 bytes, larger than decoder=cpu's (the default), both reading back", async () => {
    const seed = caseSeed('service decoder gpu');
    const rng = new Rng(seed);
    // skewed bytes over several chunks: the chooser codes them with huffman
    const bytes = new Uint8Array(700_000);
    for (let i = 0; i < bytes.length; i++) {
      let s = 0;
      while (s < 255 && rng.nextFloat() < 0.6) s++;
      bytes[i] = s;
    }
    const gpu = await post('/v1/compress?type=u8&decoder=gpu', bytes);
    const cpu = await post('/v1/compress?type=u8&decoder=cpu', bytes);
    const plain = await post('/v1/compress?type=u8', bytes);
    expect([gpu.status, cpu.status, plain.status]).toEqual([200, 200, 200]);
    expect(Buffer.compare(Buffer.from(gpu.body), await engine.compress(bytes, { decoder: 'gpu' })), describeSeed(seed)).toBe(0);
    expect(Buffer.compare(Buffer.from(plain.body), Buffer.from(cpu.body)), 'the default is decoder cpu').toBe(0);
    expect(gpu.body.length).toBeGreaterThan(cpu.body.length);
    expect(Buffer.compare(bytesOf(await engine.decompress(gpu.body)), bytes)).toBe(0);
  });

  it('the `parle compress` command writes the same file (a 1 MiB u8 file: 4 chunks of 256 KiB from both)', async () => {
    const bytes = new Uint8Array(1 << 20);
    fillRuns(new Rng(caseSeed('service same bytes as the command')), bytes, { kind: 'uniform', maxRun: 20 });
    const input = join(scratch, 'volume.u8');
    await writeFile(input, bytes);
    const child = spawn(process.execPath, [BIN, 'compress', input, `${input}.parle`, '--workers', '1'], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const [code] = await once(child, 'exit');
    expect(code, stderr).toBe(0);
    const reply = await post('/v1/compress?type=u8', bytes);
    expect(reply.status).toBe(200);
    const viaCommand = await readFile(`${input}.parle`);
    expect(readHeader(reply.body).chunkCount).toBe(4);
    expect(readHeader(viaCommand)).toEqual(readHeader(reply.body));
    expect(Buffer.compare(Buffer.from(reply.body), viaCommand)).toBe(0);
  });
});
