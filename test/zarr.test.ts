/**
 * The Zarr v3 codec (ts/zarr/index.ts, `parle-codec/zarr`) under zarrita.js with its
 * FileSystemStore: arrays of every data type parle codes written and read back, 1-D to 4-D with
 * partial edge chunks, a sharded array (parle as the inner codec), concurrent reads, the
 * configuration's checks, and a corrupted chunk (a ParleError with its code; the other chunks
 * still read).
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, mkdirSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { tmpdir } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { join, normalize, sep } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import * as zarr from 'zarrita';
import { FileSystemStore } from '@zarrita/storage';
import { createEngine, createZarrGet, ErrorCodes, registerZarrCodec, WorkerFetchStore, type Engine } from '../ts/index.js';
import { decodeFetchedAt, fetchedScratchBytes } from '../ts/codec/cpu/fetched.js';
import { KernelHarness } from './support/kernels.js';

let engine: Engine;
let dir: string;
beforeAll(async () => {
  engine = await createEngine({ workers: 2, gpu: 'off', calibration: 'skip' });
  registerZarrCodec(zarr.registry as unknown as Map<string, () => Promise<unknown>>, { engine });
  dir = mkdtempSync(join(tmpdir(), 'parle-zarr-'));
});
afterAll(async () => {
  zarr.registry.delete('parle');
  await engine?.destroy();
  rmSync(dir, { recursive: true, force: true });
});

type Typed = Exclude<zarr.TypedArray<zarr.NumberDataType | zarr.BigintDataType>, never>;

/** Elements of `dtype`: smooth with a little noise (decimals for floats), `n` of them. */
function valuesOf(dtype: string, n: number): ArrayBufferView & { length: number } {
  const smooth = (i: number) => 1000 * Math.sin(i / 37) + ((i * 2654435761) >>> 28);
  switch (dtype) {
    case 'int8':
      return Int8Array.from({ length: n }, (_, i) => smooth(i) / 10);
    case 'int16':
      return Int16Array.from({ length: n }, (_, i) => smooth(i) * 20);
    case 'int32':
      return Int32Array.from({ length: n }, (_, i) => smooth(i) * 1e5);
    case 'int64':
      return BigInt64Array.from({ length: n }, (_, i) => BigInt(Math.round(smooth(i))) * 10_000_000_000n);
    case 'uint8':
      return Uint8Array.from({ length: n }, (_, i) => smooth(i) / 10 + 128);
    case 'uint16':
      return Uint16Array.from({ length: n }, (_, i) => smooth(i) + 2000);
    case 'uint32':
      return Uint32Array.from({ length: n }, (_, i) => (smooth(i) + 2000) * 1e5);
    case 'uint64':
      return BigUint64Array.from({ length: n }, (_, i) => BigInt(Math.round(smooth(i) + 2000)) << 33n);
    case 'float32':
      return Float32Array.from({ length: n }, (_, i) => Math.round(smooth(i) * 100) / 100);
    case 'float64':
      return Float64Array.from({ length: n }, (_, i) => Math.round(smooth(i) * 1000) / 1000);
    default:
      throw new Error(dtype);
  }
}

const bytes = (a: ArrayBufferView) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);

async function writeArray(name: string, dtype: string, shape: number[], chunkShape: number[], configuration: Record<string, unknown> = {}) {
  const store = new FileSystemStore(dir);
  const arr = await zarr.create(zarr.root(store).resolve(name), {
    shape,
    chunkShape,
    dtype: dtype as zarr.DataType,
    codecs: [{ name: 'parle', configuration }],
    // (zarrita fills a partial edge chunk with the fill value, null failing for 64-bit integers)
    fillValue: 0 as never,
  });
  const n = shape.reduce((a, d) => a * d, 1);
  const data = valuesOf(dtype, n);
  const stride = shape.map((_, d) => shape.slice(d + 1).reduce((a, x) => a * x, 1));
  await zarr.set(arr, null, { data: data as never, shape, stride });
  return { store, data };
}

/** Writes `name`: an int16 array of one shard of 2 x 2 inner chunks, parle the inner codec (zarrita writes no shards); its elements. */
async function writeSharded(name: string): Promise<Int16Array> {
  // zarrita writes no shards: one shard of 2 x 2 inner chunks, its index at the end
  const shape = [8, 12];
  const inner = [4, 6];
  const data = valuesOf('int16', 96) as Int16Array;
  const chunks: Uint8Array[] = [];
  for (const [ci, cj] of [
    [0, 0],
    [0, 1],
    [1, 0],
    [1, 1],
  ]) {
    const chunk = new Int16Array(24);
    for (let i = 0; i < 4; i++) for (let j = 0; j < 6; j++) chunk[i * 6 + j] = data[(ci * 4 + i) * 12 + cj * 6 + j];
    chunks.push(await engine.compress(chunk, { shape: inner }));
  }
  const index = new BigUint64Array(8);
  let at = 0;
  chunks.forEach((c, k) => {
    index[2 * k] = BigInt(at);
    index[2 * k + 1] = BigInt(c.length);
    at += c.length;
  });
  const base = join(dir, name);
  mkdirSync(join(base, 'c', '0'), { recursive: true });
  writeFileSync(join(base, 'c', '0', '0'), Buffer.concat([...chunks, bytes(index)]));
  writeFileSync(
    join(base, 'zarr.json'),
    JSON.stringify({
      zarr_format: 3,
      node_type: 'array',
      shape,
      data_type: 'int16',
      chunk_grid: { name: 'regular', configuration: { chunk_shape: shape } },
      chunk_key_encoding: { name: 'default', configuration: { separator: '/' } },
      fill_value: 0,
      codecs: [
        {
          name: 'sharding_indexed',
          configuration: {
            chunk_shape: inner,
            codecs: [{ name: 'parle' }],
            index_codecs: [{ name: 'bytes', configuration: { endian: 'little' } }],
            index_location: 'end',
          },
        },
      ],
      attributes: {},
    }),
  );
  return data;
}

describe('the parle codec in zarrita', () => {
  const types = ['int8', 'int16', 'int32', 'int64', 'uint8', 'uint16', 'uint32', 'uint64', 'float32', 'float64'];
  for (const [shape, chunkShape] of [
    [[1000], [300]],
    [
      [50, 70],
      [16, 32],
    ],
    [
      [9, 30, 40],
      [4, 16, 16],
    ],
    [
      [3, 5, 20, 24],
      [2, 2, 8, 8],
    ],
  ]) {
    it(`every data type round trips, shape [${shape}] in chunks of [${chunkShape}] (edge chunks partial)`, async () => {
      for (const dtype of types) {
        const name = `${dtype}-${shape.join('x')}`;
        const { store, data } = await writeArray(name, dtype, shape, chunkShape);
        const arr = await zarr.open(zarr.root(store).resolve(name), { kind: 'array' });
        const back = await zarr.get(arr);
        expect(back.shape, name).toEqual(shape);
        expect(bytes(back.data as unknown as ArrayBufferView).equals(bytes(data)), name).toBe(true);
        // a chunk file is a .parle container that records the chunk's shape
        const chunkDir = join(dir, name, 'c');
        const first = join(chunkDir, ...chunkShape.map(() => '0'));
        const container = new Uint8Array(readFileSync(first));
        expect(engine.inspect(container).shape, name).toEqual(chunkShape);
      }
    });
  }

  it('a chunk of up to 4 MiB is one .parle chunk; a larger one is spread over parts of at most 4 MiB', async () => {
    for (const [shape, chunkShape, parts] of [
      [[1200, 1000], [600, 1000], [600]],
      [
        [2400, 1000],
        [2400, 1000],
        [2097, 303],
      ],
    ]) {
      const name = `parts-${chunkShape.join('x')}`;
      const { store, data } = await writeArray(name, 'uint16', shape, chunkShape);
      const back = await zarr.get(await zarr.open(zarr.root(store).resolve(name), { kind: 'array' }));
      expect(bytes(back.data as unknown as ArrayBufferView).equals(bytes(data)), name).toBe(true);
      const report = engine.inspect(new Uint8Array(readFileSync(join(dir, name, 'c', '0', '0'))));
      expect(
        report.chunks.map((c) => c.elementCount / chunkShape[1]),
        name,
      ).toEqual(parts);
    }
  });

  it('a sub-region reads the chunks it touches; concurrent reads of one array agree', async () => {
    const { store, data } = await writeArray('region', 'float32', [64, 64], [16, 16]);
    const arr = await zarr.open(zarr.root(store).resolve('region'), { kind: 'array' });
    const region = await zarr.get(arr, [zarr.slice(10, 30), zarr.slice(5, 9)]);
    expect(region.shape).toEqual([20, 4]);
    const src = data as Float32Array;
    for (let i = 0; i < 20; i++)
      for (let j = 0; j < 4; j++) expect((region.data as Float32Array)[i * 4 + j]).toBe(src[(10 + i) * 64 + 5 + j]);
    const reads = await Promise.all(Array.from({ length: 6 }, () => zarr.get(arr)));
    for (const r of reads) expect(bytes(r.data as Float32Array).equals(bytes(src))).toBe(true);
  });

  it('a sharded array with parle as the inner codec reads back', async () => {
    const data = await writeSharded('sharded');
    const arr = await zarr.open(zarr.root(new FileSystemStore(dir)).resolve('sharded'), { kind: 'array' });
    const back = await zarr.get(arr);
    expect(bytes(back.data as Int16Array).equals(bytes(data))).toBe(true);
  });

  it('a corrupted chunk fails with its ParleError code; the other chunks still read', async () => {
    const { store, data } = await writeArray('corrupt', 'uint16', [40, 40], [20, 20]);
    const file = join(dir, 'corrupt', 'c', '1', '1');
    const packed = readFileSync(file);
    packed[packed.length - 3] ^= 0x5a;
    writeFileSync(file, packed);
    const arr = await zarr.open(zarr.root(store).resolve('corrupt'), { kind: 'array' });
    const error = await zarr.get(arr).then(
      () => undefined,
      (e: unknown) => e as { cause?: { code?: string } },
    );
    expect(error?.cause?.code).toBe(ErrorCodes.CHECKSUM_MISMATCH);
    const top = await zarr.get(arr, [zarr.slice(0, 20), null]);
    const src = data as Uint16Array;
    expect(bytes(top.data as Uint16Array).equals(bytes(src.subarray(0, 800)))).toBe(true);
  });

  it('the configuration: level and errorBound apply; an unknown key, a bad level and a type parle does not code are refused', async () => {
    const fast = await writeArray('level1', 'float32', [200, 200], [100, 100], { level: 1 });
    const small = await writeArray('level9', 'float32', [200, 200], [100, 100], { level: 9 });
    const size = (name: string) =>
      readdirSync(join(dir, name, 'c'), { recursive: true })
        .map((f) => join(dir, name, 'c', String(f)))
        .filter((f) => statSync(f).isFile())
        .reduce((a, f) => a + statSync(f).size, 0);
    expect(size('level9')).toBeLessThanOrEqual(size('level1'));
    void fast;
    void small;
    const lossy = await writeArray('lossy', 'float32', [100, 100], [50, 50], { errorBound: { abs: 0.01 } });
    const back = await zarr.get(await zarr.open(zarr.root(lossy.store).resolve('lossy'), { kind: 'array' }));
    const src = lossy.data as Float32Array;
    let worst = 0;
    (back.data as Float32Array).forEach((v, i) => (worst = Math.max(worst, Math.abs(v - src[i]))));
    expect(worst).toBeLessThanOrEqual(0.01);
    // float64 too (the f64 lossy mode)
    const lossy64 = await writeArray('lossy64', 'float64', [100, 100], [50, 50], { errorBound: { abs: 0.01 } });
    const back64 = await zarr.get(await zarr.open(zarr.root(lossy64.store).resolve('lossy64'), { kind: 'array' }));
    const src64 = lossy64.data as Float64Array;
    let worst64 = 0;
    (back64.data as Float64Array).forEach((v, i) => (worst64 = Math.max(worst64, Math.abs(v - src64[i]))));
    expect(worst64).toBeLessThanOrEqual(0.01);
    expect(back64.data).toBeInstanceOf(Float64Array);
    for (const [configuration, code] of [
      [{ levle: 9 }, ErrorCodes.INVALID_OPTION],
      [{ level: 11 }, ErrorCodes.INVALID_OPTION],
    ] as const) {
      const failed = await writeArray(`bad-${JSON.stringify(configuration)}`, 'uint8', [10], [10], configuration).then(
        () => undefined,
        (e: unknown) => e as { cause?: { code?: string }; code?: string },
      );
      expect(failed?.cause?.code ?? failed?.code, JSON.stringify(configuration)).toBe(code);
    }
    const store = new FileSystemStore(dir);
    const bools = await zarr.create(zarr.root(store).resolve('bools'), {
      shape: [8],
      chunkShape: [8],
      dtype: 'bool',
      codecs: [{ name: 'parle', configuration: {} }],
    });
    const failed = await zarr.set(bools, null, { data: new zarr.BoolArray(8) as never, shape: [8], stride: [1] }).then(
      () => undefined,
      (e: unknown) => e as { cause?: { code?: string }; code?: string },
    );
    expect(failed?.cause?.code ?? failed?.code).toBe(ErrorCodes.UNSUPPORTED_TYPE);
  });
});

describe('createGet: chunks decoded by the workers into their place in the result', () => {
  const same = (a: { data: unknown; shape: number[] }, b: { data: unknown; shape: number[] }) => {
    expect(a.shape).toEqual(b.shape);
    expect(bytes(a.data as ArrayBufferView).equals(bytes(b.data as ArrayBufferView))).toBe(true);
  };

  it('reads what zarr.get reads: whole arrays, regions, integer axes, steps, edge chunks, missing chunks', async () => {
    const get = createZarrGet(zarr, { engine });
    // a FileSystemStore's chunks are read by the workers (their file: URLs), one call a read
    const batch = vi.spyOn(engine, 'fetchAndDecompress');
    onTestFinished(() => batch.mockRestore());
    // chunks of 32 KiB and more (decoded on a worker) and smaller ones; partial edge chunks
    for (const [dtype, shape, chunks] of [
      ['uint16', [45, 70, 90], [16, 32, 64]],
      ['float32', [130, 300], [64, 128]],
      ['int64', [37, 41], [16, 16]],
    ] as const) {
      const { store } = await writeArray(`get-${dtype}`, dtype, [...shape], [...chunks]);
      const arr = await zarr.open(zarr.root(store).resolve(`get-${dtype}`), { kind: 'array' });
      const selections: (number | zarr.Slice | null)[][] = [
        shape.map(() => null),
        shape.map((d) => zarr.slice(Math.floor(d / 5), Math.floor((4 * d) / 5))),
        [Math.floor(shape[0] / 2), ...shape.slice(1).map(() => null)],
        shape.map((d) => zarr.slice(1, d - 1, 3)),
      ];
      for (const selection of selections) {
        const want = (await zarr.get(arr, selection)) as { data: unknown; shape: number[] };
        const got = (await get(arr, selection)) as { data: ArrayBufferView; shape: number[] };
        same(got, want);
        // the workers wrote it into shared memory
        expect(got.data.buffer).toBeInstanceOf(SharedArrayBuffer);
      }
      // a single element goes through zarr.get
      expect(
        await get(
          arr,
          shape.map(() => 0),
        ),
      ).toEqual(
        await zarr.get(
          arr,
          shape.map(() => 0),
        ),
      );
    }
    // a chunk never written: zarrita's fill value, as zarr.get
    const { store } = await writeArray('get-holes', 'uint16', [64, 64], [32, 32]);
    rmSync(join(dir, 'get-holes', 'c', '1', '0'));
    const holes = await zarr.open(zarr.root(store).resolve('get-holes'), { kind: 'array' });
    same((await get(holes)) as never, (await zarr.get(holes)) as never);
    // every read of a block of at least 2 chunks a worker (4): of the 3 arrays' 3 selections of
    // steps 1, all but the two single rows of 3 chunks; and the holes (4 chunks)
    expect(batch).toHaveBeenCalledTimes(3 * 3 - 2 + 1);
  });

  it('a sharded array whose inner codec is parle, and an array of other codecs (read by zarr.get)', async () => {
    const get = createZarrGet(zarr, { engine });
    const sharded = await zarr.open(zarr.root(new FileSystemStore(dir)).resolve('sharded'), { kind: 'array' });
    same((await get(sharded, [zarr.slice(3, 40), null])) as never, (await zarr.get(sharded, [zarr.slice(3, 40), null])) as never);
    const store = new FileSystemStore(dir);
    const other = await zarr.create(zarr.root(store).resolve('get-zstd'), {
      shape: [64, 64],
      chunkShape: [32, 32],
      dtype: 'uint16',
      codecs: [{ name: 'bytes', configuration: { endian: 'little' } }],
    });
    await zarr.set(other, null, { data: valuesOf('uint16', 4096) as never, shape: [64, 64], stride: [64, 1] });
    const got = (await get(other)) as { data: ArrayBufferView; shape: number[] };
    same(got, (await zarr.get(other)) as never);
    expect(got.data.buffer).not.toBeInstanceOf(SharedArrayBuffer); // zarr.get's own result
  });

  /** A u16 array of two chunks written with the parle codec, its second chunk's payload corrupted. */
  async function writeCorrupted(name: string) {
    const { store } = await writeArray(name, 'uint16', [128, 128], [64, 128]);
    const file = join(dir, name, 'c', '1', '0');
    const packed = readFileSync(file);
    packed[packed.length - 3] ^= 0x5a;
    writeFileSync(file, packed);
    return store;
  }

  it('a corrupted chunk fails with its ParleError code', async () => {
    const get = createZarrGet(zarr, { engine });
    const store = await writeCorrupted('get-corrupt');
    const arr = await zarr.open(zarr.root(store).resolve('get-corrupt'), { kind: 'array' });
    const error = await get(arr).then(
      () => undefined,
      (e: unknown) => e as { code?: string },
    );
    expect(error?.code).toMatch(/CHECKSUM_MISMATCH|CORRUPT/);
    same((await get(arr, [zarr.slice(0, 64), null])) as never, (await zarr.get(arr, [zarr.slice(0, 64), null])) as never);
  });

  it('a corrupted chunk decoded while another is still fetched: no unhandled rejection', async () => {
    // the sound chunk's read held back 300 ms: the corrupted one's decode fails before get's
    // fetches end (a stress run of the suite failed this way once, every test passing)
    const get = createZarrGet(zarr, { engine });
    const store = await writeCorrupted('get-corrupt-late');
    const slow = {
      get: async (key: string, options?: unknown) => {
        if (key.endsWith('c/0/0')) await sleep(300);
        return store.get(key as never, options as never);
      },
    };
    const arr = await zarr.open(zarr.root(slow as never).resolve('get-corrupt-late'), { kind: 'array' });
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const error = await get(arr).then(
        () => undefined,
        (e: unknown) => e as { code?: string },
      );
      expect(error?.code).toMatch(/CHECKSUM_MISMATCH|CORRUPT/);
      await sleep(50);
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});

describe('WorkerFetchStore: a store over HTTP whose requests the workers make', () => {
  let server: Server;
  let origin: string;
  /** Requests the server saw: method, path, Range. */
  const seen: string[] = [];
  beforeAll(async () => {
    // the store's folder over HTTP: 404 for what is missing, HEAD, single ranges (206), /fail/ a 500
    server = createServer((request, response) => {
      const path = decodeURIComponent(new URL(request.url ?? '/', 'http://x').pathname);
      seen.push(`${request.method} ${path} ${request.headers.range ?? ''}`.trim());
      if (path.startsWith('/fail/')) return void response.writeHead(500, 'Broken').end();
      const file = normalize(join(dir, path));
      if (!file.startsWith(dir + sep) || !existsSync(file) || !statSync(file).isFile()) return void response.writeHead(404).end();
      const body = readFileSync(file);
      const range = /^bytes=(\d*)-(\d*)$/.exec(request.headers.range ?? '');
      if (range) {
        const start = range[1] === '' ? body.length - Number(range[2]) : Number(range[1]);
        const end = range[1] === '' || range[2] === '' ? body.length - 1 : Number(range[2]);
        response.writeHead(206, { 'Content-Length': end - start + 1 });
        return void response.end(request.method === 'HEAD' ? undefined : body.subarray(start, end + 1));
      }
      response.writeHead(200, { 'Content-Length': body.length });
      response.end(request.method === 'HEAD' ? undefined : body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('reads what FileSystemStore reads, through createGet and zarr.get, without fetch on this thread', async () => {
    await writeArray('http-f32', 'float32', [130, 300], [64, 128]);
    rmSync(join(dir, 'http-f32', 'c', '1', '1')); // a missing chunk: the fill value
    const local = await zarr.open.v3(zarr.root(new FileSystemStore(dir)).resolve('http-f32'), { kind: 'array' });
    const fetchHere = vi.spyOn(globalThis, 'fetch');
    try {
      const store = new WorkerFetchStore(`${origin}/http-f32`, { engine, headers: { 'X-Parle': 'test' } });
      const remote = await zarr.open.v3(store, { kind: 'array' });
      const get = createZarrGet(zarr, { engine });
      for (const selection of [null, [zarr.slice(10, 100), zarr.slice(100, 290)]]) {
        const want = (await zarr.get(local, selection)) as { data: ArrayBufferView; shape: number[] };
        for (const got of [await get(remote, selection), await zarr.get(remote, selection)] as {
          data: ArrayBufferView;
          shape: number[];
        }[]) {
          expect(got.shape).toEqual(want.shape);
          expect(bytes(got.data).equals(bytes(want.data))).toBe(true);
        }
      }
      // the engine's workers made every request: none on this thread
      expect(fetchHere).not.toHaveBeenCalled();
      // createGet's whole read: one call for every chunk (the workers fetch, decode and place)
      const batch = vi.spyOn(engine, 'fetchAndDecompress');
      try {
        await get(remote);
        expect(batch).toHaveBeenCalledTimes(1);
        expect(batch.mock.calls[0][0]).toHaveLength(3 * 3);
        expect(batch.mock.calls[0][0][0].headers).toEqual({ 'X-Parle': 'test' });
      } finally {
        batch.mockRestore();
      }
      expect(seen).toContain('GET /http-f32/c/1/1');
    } finally {
      fetchHere.mockRestore();
    }
  });

  it('a sharded array: the index by a HEAD and a range, or one suffix request; the chunks by ranges', async () => {
    await writeSharded('sharded-http');
    const want = (await zarr.get(await zarr.open.v3(zarr.root(new FileSystemStore(dir)).resolve('sharded-http'), { kind: 'array' }))) as {
      data: ArrayBufferView;
    };
    for (const useSuffixRequest of [false, true]) {
      seen.length = 0;
      const store = new WorkerFetchStore(`${origin}/`, { engine, useSuffixRequest });
      const arr = await zarr.open.v3(zarr.root(store).resolve('sharded-http'), { kind: 'array' });
      const got = (await createZarrGet(zarr, { engine })(arr)) as { data: ArrayBufferView };
      expect(bytes(got.data).equals(bytes(want.data))).toBe(true);
      expect(seen.some((s) => s.startsWith('HEAD /sharded-http/c/0/0'))).toBe(!useSuffixRequest);
      expect(seen).toContain(
        useSuffixRequest
          ? 'GET /sharded-http/c/0/0 bytes=-64'
          : 'GET /sharded-http/c/0/0 bytes=' +
              (statSync(join(dir, 'sharded-http/c/0/0')).size - 64) +
              '-' +
              (statSync(join(dir, 'sharded-http/c/0/0')).size - 1),
      );
    }
  });

  it('errors: a status other than 200, 206 and 404, a failed fetch, an abort, an unknown option, a relative URL', async () => {
    const store = new WorkerFetchStore(`${origin}/fail`, { engine });
    await expect(store.get('/zarr.json')).rejects.toMatchObject({
      code: ErrorCodes.IO_ERROR,
      message: expect.stringMatching(/500 Broken/),
    });
    expect(await new WorkerFetchStore(`${origin}/nothing-here`, { engine }).get('/zarr.json')).toBeUndefined();
    // a port nothing listens on (the server's, closed)
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    await expect(new WorkerFetchStore(`http://127.0.0.1:${port}/`, { engine }).get('/zarr.json')).rejects.toMatchObject({
      code: ErrorCodes.IO_ERROR,
    });
    await expect(engine.fetchBytes(`${origin}/http-f32/zarr.json`, { signal: AbortSignal.abort() })).rejects.toMatchObject({
      code: ErrorCodes.ABORTED,
    });
    await expect(store.get('/zarr.json', { mode: 'cors' } as never)).rejects.toMatchObject({ code: ErrorCodes.INVALID_OPTION });
    expect(() => new WorkerFetchStore('/relative', { engine })).toThrow(expect.objectContaining({ code: ErrorCodes.INVALID_ARGUMENT }));
    expect(() => new WorkerFetchStore(origin, { engine, fetch } as never)).toThrow(
      expect.objectContaining({ code: ErrorCodes.INVALID_OPTION }),
    );
    await expect(engine.fetchBytes('relative/zarr.json')).rejects.toMatchObject({ code: ErrorCodes.INVALID_ARGUMENT });
    await expect(engine.fetchBytes(`${origin}/x`, { mode: 'cors' } as never)).rejects.toMatchObject({
      code: ErrorCodes.INVALID_OPTION,
      option: 'init.mode',
    });
    await expect(engine.fetchAndDecompress([], { out: new Uint8Array(1), init: { method: 'HEAD' } as never })).rejects.toMatchObject({
      code: ErrorCodes.INVALID_OPTION,
      option: 'init.method',
    });
  });

  // the scratch a worker's task reserves before it fetches (fetchedScratchBytes) holds the
  // decode of a Zarr chunk of 1 MiB of u8, one .parle chunk: a smooth volume (predicted, Huffman)
  // and runs of one and two (rle + huffman, the most streams an element); with 4x its bytes and
  // 1 MiB the volume's did not fit and every such chunk went back to the engine's thread
  it('a worker decodes a 1 MiB chunk of u8 in the scratch its task reserves', async () => {
    const harness = await KernelHarness.create('simd');
    const shape = [27, 217, 181];
    const count = shape[0] * shape[1] * shape[2];
    const volume = Uint8Array.from({ length: count }, (_, i) => {
      const z = Math.floor(i / (shape[1] * shape[2]));
      const y = Math.floor(i / shape[2]) % shape[1];
      const x = i % shape[2];
      return (64 + 40 * Math.sin(x / 17) + 30 * Math.cos(y / 23) + 3 * z + ((i * 2654435761) >>> 29)) & 0xff;
    });
    const runs = new Uint8Array(count);
    let x = 0x9e3779b9;
    for (let i = 0; i < count;) {
      x ^= x << 13;
      x ^= x >>> 17;
      x ^= x << 5;
      const length = 1 + (x & 1);
      runs.fill((x >>> 8) & 0x0f, i, i + length);
      i += length;
    }
    for (const [what, data] of [
      ['volume', volume],
      ['runs', runs],
    ] as const) {
      const body = await engine.compress(data, { shape, chunkBytes: count });
      expect(engine.inspect(body).chunks.length, what).toBe(1);
      harness.reset();
      const scratchBytes = fetchedScratchBytes(count, 1);
      const scratchPtr = harness.alloc(scratchBytes);
      const out = new Uint8Array(new SharedArrayBuffer(count));
      const place = { shape, start: [0, 0, 0], count: shape, outOffset: 0, outStrides: [shape[1] * shape[2], shape[2], 1] };
      const decoded = decodeFetchedAt(harness, {
        type: 'u8',
        scratchPtr,
        scratchBytes,
        out: { buffer: out.buffer as SharedArrayBuffer, byteOffset: 0, length: count },
        places: [place],
        body,
        item: 0,
      });
      expect(decoded, `${what}: decoded in the scratch`).toBe(true);
      expect(Buffer.from(out).equals(Buffer.from(data)), what).toBe(true);
    }
  });

  it('fetchAndDecompress: a corrupted chunk and chunks of another type or length fail with their codes, every other chunk placed, a 404 reported, a version-1 container decoded; the same without workers', async () => {
    const { data } = await writeArray('http-u16', 'uint16', [128, 128], [64, 128]);
    // chunk 1 of a copy: its payload damaged; chunk 1 of another: a container of u32
    for (const [name, chunk] of [
      ['http-u16-bad', (packed: Buffer) => ((packed[packed.length - 3] ^= 0x5a), packed)],
      ['http-u16-u32', async () => Buffer.from(await engine.compress(new Uint32Array(64 * 64)))],
      ['http-u16-short', async () => Buffer.from(await engine.compress(new Uint16Array(64 * 127)))],
    ] as const) {
      await writeArray(name, 'uint16', [128, 128], [64, 128]);
      const file = join(dir, name, 'c', '1', '0');
      writeFileSync(file, await chunk(readFileSync(file)));
    }
    const places = [0, 1].map((i) => ({
      shape: [64, 128],
      start: [0, 0],
      count: [64, 128],
      outOffset: i * 64 * 128,
      outStrides: [128, 1],
    }));
    for (const workers of [2, 0]) {
      const e = workers === 2 ? engine : await createEngine({ workers: 0, gpu: 'off', calibration: 'skip' });
      try {
        for (const [name, code] of [
          ['http-u16-bad', ErrorCodes.CHECKSUM_MISMATCH],
          ['http-u16-u32', ErrorCodes.CORRUPT],
          ['http-u16-short', ErrorCodes.CORRUPT],
        ] as const) {
          const out = new Uint16Array(new SharedArrayBuffer(128 * 128 * 2));
          const requests = places.map((place, i) => ({ url: `${origin}/${name}/c/${i}/0`, place }));
          await expect(e.fetchAndDecompress(requests, { out })).rejects.toMatchObject({ code });
          // the sound chunk is in its place
          expect(bytes(out.subarray(0, 64 * 128)).equals(bytes((data as Uint16Array).subarray(0, 64 * 128)))).toBe(true);
        }
        const out = new Uint16Array(new SharedArrayBuffer(128 * 128 * 2));
        const requests = [
          ...places.map((place, i) => ({ url: `${origin}/http-u16/c/${i}/0`, place })),
          { url: `${origin}/http-u16/c/9/0`, place: places[0] },
        ];
        expect(await e.fetchAndDecompress(requests, { out })).toEqual([2]);
        expect(bytes(out).equals(bytes(data))).toBe(true);
        // a version-1 container: the worker hands it back, decoded on the engine's thread
        const raw = new Uint16Array(readFileSync(new URL('./fixtures/v1/u16-noisy.raw', import.meta.url)).buffer.slice(0));
        mkdirSync(join(dir, 'v1'), { recursive: true });
        writeFileSync(join(dir, 'v1', 'u16.parle'), readFileSync(new URL('./fixtures/v1/u16-noisy.parle', import.meta.url)));
        const old = new Uint16Array(new SharedArrayBuffer(raw.byteLength + 4));
        const line = { shape: [raw.length], start: [0], count: [raw.length], outOffset: 2, outStrides: [1] };
        expect(await e.fetchAndDecompress([{ url: `${origin}/v1/u16.parle`, place: line }], { out: old })).toEqual([]);
        expect(bytes(old.subarray(2, 2 + raw.length)).equals(bytes(raw))).toBe(true);
        await expect(e.fetchAndDecompress([{ url: `${origin}/fail/x`, place: places[0] }], { out })).rejects.toMatchObject({
          code: ErrorCodes.IO_ERROR,
        });
      } finally {
        if (e !== engine) await e.destroy();
      }
    }
  });

  it('a store on local disk by a file: URL (Node): createGet and zarr.get read what FileSystemStore reads, sharded arrays by ranges', async () => {
    await writeArray('file-u16', 'uint16', [45, 70, 90], [16, 32, 64]);
    rmSync(join(dir, 'file-u16', 'c', '1', '1', '0')); // a missing chunk: the fill value
    await writeSharded('file-sharded');
    const get = createZarrGet(zarr, { engine });
    const batch = vi.spyOn(engine, 'fetchAndDecompress');
    try {
      for (const [name, selection] of [
        ['file-u16', null],
        ['file-u16', [zarr.slice(3, 40), null, zarr.slice(10, 80)]],
        ['file-sharded', null],
      ] as const) {
        const local = await zarr.open.v3(zarr.root(new FileSystemStore(dir)).resolve(name), { kind: 'array' });
        const want = (await zarr.get(local, selection)) as { data: ArrayBufferView; shape: number[] };
        for (const useSuffixRequest of [false, true]) {
          const store = new WorkerFetchStore(pathToFileURL(join(dir, name)), { engine, useSuffixRequest });
          const remote = await zarr.open.v3(store, { kind: 'array' });
          for (const got of [await get(remote, selection), await zarr.get(remote, selection)] as {
            data: ArrayBufferView;
            shape: number[];
          }[]) {
            expect(got.shape).toEqual(want.shape);
            expect(bytes(got.data).equals(bytes(want.data))).toBe(true);
          }
        }
      }
      // the regular array's reads by createGet went to the workers whole (2 reads x 2 stores)
      expect(batch).toHaveBeenCalledTimes(4);
    } finally {
      batch.mockRestore();
    }
    const response = await engine.fetchBytes(pathToFileURL(join(dir, 'file-u16', 'zarr.json')), { method: 'HEAD' });
    expect([response.status, response.headers['content-length']]).toEqual([200, String(statSync(join(dir, 'file-u16', 'zarr.json')).size)]);
    expect((await engine.fetchBytes(pathToFileURL(join(dir, 'nothing')))).status).toBe(404);
    expect((await engine.fetchBytes(pathToFileURL(join(dir, 'file-u16', 'zarr.json')), { headers: { Range: 'bytes=9-3' } })).status).toBe(
      416,
    );
  });

  it('an engine without workers makes the request on this thread', async () => {
    const inline = await createEngine({ workers: 0, gpu: 'off', calibration: 'skip' });
    try {
      const response = await inline.fetchBytes(`${origin}/http-f32/zarr.json`);
      expect(response.status).toBe(200);
      expect(JSON.parse(new TextDecoder().decode(response.body)).node_type).toBe('array');
      expect((await inline.fetchBytes(`${origin}/http-f32/zarr.json`, { method: 'HEAD' })).headers['content-length']).toBe(
        String(response.body.length),
      );
    } finally {
      await inline.destroy();
    }
  });
});
