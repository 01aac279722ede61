// Caller-owned outputs and in-place chunks (issue 13): decompress into `out` (host or in the
// engine's memory), payloads read in place from a container in the engine's memory, compress
// reading a resident input in place; the checks on `out`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine, type Engine } from '../ts/engine.js';
import { compressBound } from '../ts/format/layout.js';
import { ErrorCodes, ParleError } from '../ts/errors.js';
import { bytesOf, type ParleArray } from '../ts/types.js';
import { readFile } from 'node:fs/promises';
import { Rng, caseSeed, describeSeed, fillRuns } from './support/random.js';

let engine: Engine;
beforeAll(async () => {
  // two workers: chunks of one call decode at once into neighbouring places of one array
  engine = await createEngine({ workers: 2, gpu: 'off', calibration: 'skip', inlineBytes: 0 });
});
afterAll(() => engine.destroy());

const same = (a: ParleArray, b: ParleArray) => a.length === b.length && Buffer.compare(bytesOf(a), bytesOf(b)) === 0;

async function codeOf(promise: Promise<unknown>): Promise<string> {
  const e = await promise.then(
    () => 'resolved',
    (error: unknown) => error,
  );
  if (!(e instanceof ParleError)) throw new Error(`expected a ParleError, got ${String(e)}`);
  return e.code;
}

function sample(seed: number, n: number): Uint16Array {
  const a = new Uint16Array(n);
  fillRuns(new Rng(seed), a, { kind: 'uniform', maxRun: 9 });
  return a;
}

describe('decompress into a caller-owned out', () => {
  // every pipeline whose last stage writes the elements: rle expands (with overshoot) into the
  // arena when the output is in place, so neighbouring chunks decoded at once stay intact
  const codecs = [
    'auto',
    'stored',
    'rle',
    'delta+rle',
    'rle+huffman',
    'delta+rle+huffman',
    'shuffle+rle',
    'delta+shuffle+rle+huffman',
    'huffman',
    'delta+huffman',
  ];
  for (const codec of codecs) {
    it(`${codec}: host out and resident out, many chunks at once`, async () => {
      const seed = caseSeed(`in place ${codec}`);
      const input = sample(seed, 50_001);
      const packed = await engine.compress(input, { codec, chunkBytes: 1024 });
      const host = new Uint16Array(input.length).fill(0xdead);
      expect(await engine.decompress(packed, { out: host })).toBe(host);
      expect(same(host, input), describeSeed(seed)).toBe(true);
      const resident = engine.alloc('u16', input.length);
      resident.fill(0xbeef);
      expect(await engine.decompress(packed, { out: resident })).toBe(resident);
      expect(same(resident, input), describeSeed(seed)).toBe(true);
      // a container in the engine's memory: payloads read in place, a resident result by default
      const residentBytes = engine.alloc('u8', packed.length);
      residentBytes.set(packed);
      const back = await engine.decompress(residentBytes);
      expect(same(back, input), describeSeed(seed)).toBe(true);
      expect(same(await engine.decompress(residentBytes, { out: resident.fill(0) }), input)).toBe(true);
      engine.free(back);
      engine.free(resident);
      engine.free(residentBytes);
    });
  }

  it('version-1 containers decode into out too', async () => {
    const packed = new Uint8Array(await readFile(new URL('./fixtures/v1/u8-runs.parle', import.meta.url)));
    const raw = new Uint8Array(await readFile(new URL('./fixtures/v1/u8-runs.raw', import.meta.url)));
    const out = engine.alloc('u8', raw.length);
    await engine.decompress(packed, { out });
    expect(same(out, raw)).toBe(true);
    engine.free(out);
  });

  it('out is checked: type, length, overlap, to device', async () => {
    const input = sample(caseSeed('in place checks'), 1000);
    const packed = await engine.compress(input);
    expect(await codeOf(engine.decompress(packed, { out: new Uint32Array(1000) }))).toBe(ErrorCodes.INVALID_ARGUMENT);
    expect(await codeOf(engine.decompress(packed, { out: new Uint16Array(999) }))).toBe(ErrorCodes.LENGTH_MISMATCH);
    expect(await codeOf(engine.decompress(packed, { out: [] as unknown as Uint16Array }))).toBe(ErrorCodes.INVALID_ARGUMENT);
    expect(await codeOf(engine.decompress(packed, { out: new Uint16Array(1000), to: 'device' } as never))).toBe(ErrorCodes.INVALID_OPTION);
    // out over the container's own bytes
    const shared = new ArrayBuffer(packed.length + 2002);
    const bytes = new Uint8Array(shared, 0, packed.length);
    bytes.set(packed);
    expect(await codeOf(engine.decompress(bytes, { out: new Uint16Array(shared, 0, 1000) }))).toBe(ErrorCodes.INVALID_ARGUMENT);
    // beside it is fine
    const beside = new Uint16Array(shared, Math.ceil(packed.length / 2) * 2, 1000);
    expect(same(await engine.decompress(bytes, { out: beside }), input)).toBe(true);
    // resident container and resident out that overlap
    const residentBytes = engine.alloc('u8', packed.length + 4000);
    residentBytes.set(packed);
    const view = new Uint16Array(residentBytes.buffer, residentBytes.byteOffset, 1000);
    expect(await codeOf(engine.decompress(residentBytes.subarray(0, packed.length), { out: view }))).toBe(ErrorCodes.INVALID_ARGUMENT);
    engine.free(residentBytes);
  });

  it('a bad chunk still fails with its code when decoding in place', async () => {
    const input = sample(caseSeed('in place corrupt'), 5000);
    const packed = await engine.compress(input, { chunkBytes: 1024 });
    const bad = packed.slice();
    // a byte of the last payload (the chunk index of 10 chunks follows it)
    bad[bad.length - (8 * 10 + 4) - 3] ^= 0x40;
    const out = engine.alloc('u16', input.length);
    expect(await codeOf(engine.decompress(bad, { out }))).toBe(ErrorCodes.CHECKSUM_MISMATCH);
    engine.free(out);
  });
});

describe('compress from a resident input', () => {
  it('reads it in place and writes the bytes a host copy gives', async () => {
    for (const codec of ['auto', 'delta+shuffle+rle+huffman', 'stored']) {
      const input = sample(caseSeed(`resident compress ${codec}`), 30_000);
      const resident = engine.alloc('u16', input.length);
      resident.set(input);
      const fromResident = await engine.compress(resident, { codec, chunkBytes: 4096 });
      const fromHost = await engine.compress(input, { codec, chunkBytes: 4096 });
      expect(Buffer.compare(fromResident, fromHost), codec).toBe(0);
      engine.free(resident);
    }
  });
});

describe('scan and rleDecode into a caller-owned out', () => {
  it('scan: host out, resident out, in place, and the checks', async () => {
    const rng = new Rng(caseSeed('scan out'));
    const input = new Uint32Array(70_001).map(() => rng.nextU32() & 0xffff);
    const expected = await engine.scan(input, { inclusive: true });
    const host = new Uint32Array(input.length);
    expect(await engine.scan(input, { inclusive: true, out: host })).toBe(host);
    expect(same(host, expected)).toBe(true);
    const resident = engine.alloc('u32', input.length);
    const residentInput = engine.alloc('u32', input.length);
    residentInput.set(input);
    expect(await engine.scan(residentInput, { inclusive: true, out: resident })).toBe(resident);
    expect(same(resident, expected)).toBe(true);
    // resident input into a host out, and in place
    expect(same(await engine.scan(residentInput, { inclusive: true, out: new Uint32Array(input.length) }), expected)).toBe(true);
    expect(await engine.scan(residentInput, { inclusive: true, out: residentInput })).toBe(residentInput);
    expect(same(residentInput, expected)).toBe(true);
    const copy = input.slice();
    await engine.scan(copy, { inclusive: true, out: copy });
    expect(same(copy, expected)).toBe(true);
    expect(await codeOf(engine.scan(input, { out: new Uint32Array(5) }))).toBe(ErrorCodes.LENGTH_MISMATCH);
    expect(await codeOf(engine.scan(input, { out: new Int32Array(input.length) }))).toBe(ErrorCodes.INVALID_ARGUMENT);
    expect(await codeOf(engine.scan(input, { out: new Uint32Array(input.buffer, 4, input.length - 1) as never }))).toBe(
      ErrorCodes.LENGTH_MISMATCH,
    );
    const wide = new Uint32Array(input.length + 1);
    wide.set(input);
    const shifted = new Uint32Array(wide.buffer, 4, input.length);
    expect(await codeOf(engine.scan(wide.subarray(0, input.length), { out: shifted }))).toBe(ErrorCodes.INVALID_ARGUMENT);
    engine.free(resident);
    engine.free(residentInput);
  });

  it('rleDecode: host out and resident out, host and resident runs', async () => {
    const input = sample(caseSeed('rle out'), 60_000);
    const runs = await engine.rleEncode(input);
    const host = new Uint16Array(input.length);
    expect(await engine.rleDecode(runs, { out: host })).toBe(host);
    expect(same(host, input)).toBe(true);
    const values = engine.alloc('u16', runs.values.length);
    values.set(runs.values);
    const lengths = engine.alloc('u32', runs.lengths.length);
    lengths.set(runs.lengths);
    const resident = engine.alloc('u16', input.length);
    expect(await engine.rleDecode({ values, lengths }, { out: resident })).toBe(resident);
    expect(same(resident, input)).toBe(true);
    expect(same(await engine.rleDecode({ values, lengths }, { out: new Uint16Array(input.length) }), input)).toBe(true);
    expect(await codeOf(engine.rleDecode(runs, { out: new Uint16Array(input.length + 1) }))).toBe(ErrorCodes.LENGTH_MISMATCH);
    expect(await codeOf(engine.rleDecode(runs, { out: new Uint8Array(input.length) }))).toBe(ErrorCodes.INVALID_ARGUMENT);
    for (const a of [values, lengths, resident]) engine.free(a);
  });
});

describe('streaming with out and a signal', () => {
  it('the decompressor decodes into out (host and resident) and hands out views of it', async () => {
    const input = sample(caseSeed('stream out'), 40_000);
    const packed = await engine.compress(input, { chunkBytes: 4096 });
    for (const out of [new Uint16Array(input.length), engine.alloc('u16', input.length)]) {
      const reader = engine.createDecompressor({ out });
      const pieces: Uint8Array[] = [];
      for (let at = 0; at < packed.length; at += 3000) pieces.push(...(await reader.write(packed.subarray(at, at + 3000))));
      pieces.push(...(await reader.end()));
      expect(pieces.every((p) => p.buffer === out.buffer)).toBe(true);
      expect(same(out, input)).toBe(true);
    }
    await expect(engine.createDecompressor({ out: new Uint16Array(5) }).write(packed)).rejects.toMatchObject({
      code: ErrorCodes.LENGTH_MISMATCH,
    });
    await expect(engine.createDecompressor({ out: new Uint8Array(input.length) }).write(packed)).rejects.toMatchObject({
      code: ErrorCodes.INVALID_ARGUMENT,
    });
  });

  it('an aborted signal stops the compressor and the decompressor', async () => {
    const input = sample(caseSeed('stream abort'), 40_000);
    const packed = await engine.compress(input, { chunkBytes: 4096 });
    const controller = new AbortController();
    controller.abort();
    await expect(engine.createCompressor('u16', input.length, { signal: controller.signal }).write(bytesOf(input))).rejects.toMatchObject({
      code: ErrorCodes.ABORTED,
    });
    await expect(engine.createDecompressor({ signal: controller.signal }).write(packed)).rejects.toMatchObject({
      code: ErrorCodes.ABORTED,
    });
  });
});

describe('sort into a caller-owned out', () => {
  it('keys and key-value, host and resident, in place, and the checks', async () => {
    const rng = new Rng(caseSeed('sort out'));
    const keys = new Uint32Array(50_001).map(() => rng.nextU32());
    const values = new Uint32Array(keys.length).map((_, i) => i);
    const expected = await engine.sort(keys, { values });
    const out = new Uint32Array(keys.length);
    const outValues = new Uint32Array(keys.length);
    const r = await engine.sort(keys, { values, out, outValues });
    expect(r.keys).toBe(out);
    expect(r.values).toBe(outValues);
    expect(same(out, expected.keys) && same(outValues, expected.values)).toBe(true);
    // resident keys into a resident out, and in place
    const resident = engine.alloc('u32', keys.length);
    resident.set(keys);
    const residentOut = engine.alloc('u32', keys.length);
    expect(await engine.sort(resident, { out: residentOut })).toBe(residentOut);
    expect(same(residentOut, expected.keys)).toBe(true);
    expect(await engine.sort(resident, { out: resident })).toBe(resident);
    expect(same(resident, expected.keys)).toBe(true);
    const copy = keys.slice();
    expect(await engine.sort(copy, { out: copy })).toBe(copy);
    expect(same(copy, expected.keys)).toBe(true);
    expect(await codeOf(engine.sort(keys, { out: new Uint32Array(3) }))).toBe(ErrorCodes.LENGTH_MISMATCH);
    expect(await codeOf(engine.sort(keys, { out: new Float32Array(keys.length) }))).toBe(ErrorCodes.INVALID_ARGUMENT);
    expect(await codeOf(engine.sort(keys, { values, outValues: new Uint32Array(keys.buffer, 4, keys.length - 1) }))).toBe(
      ErrorCodes.LENGTH_MISMATCH,
    );
    engine.free(resident);
    engine.free(residentOut);
  });
});

describe('compress into a caller-owned out', () => {
  it('writes the same container into out, reused across calls; compressBound is enough for stored data', async () => {
    const seed = caseSeed('compress out');
    const rng = new Rng(seed);
    const out = new Uint8Array(compressBound(60_000, 'u16', 4096)).fill(0xee);
    for (const codec of ['auto', 'stored', 'delta+shuffle+huffman']) {
      const input = sample(rng.nextU32(), 60_000);
      const fresh = await engine.compress(input, { codec, chunkBytes: 4096 });
      const got = await engine.compress(input, { codec, chunkBytes: 4096, out });
      expect(got.buffer).toBe(out.buffer);
      expect(got.byteOffset).toBe(0);
      expect(Buffer.compare(got, fresh), `${codec} ${describeSeed(seed)}`).toBe(0);
    }
    // an out in the engine's memory, beside a resident input
    const resident = engine.alloc('u16', 60_000);
    resident.set(sample(rng.nextU32(), 60_000));
    const residentOut = engine.alloc('u8', compressBound(60_000, 'u16', 4096));
    const inEngine = await engine.compress(resident, { chunkBytes: 4096, out: residentOut });
    expect(inEngine.buffer).toBe(residentOut.buffer);
    expect(Buffer.compare(inEngine, await engine.compress(resident.slice(), { chunkBytes: 4096 }))).toBe(0);
    engine.free(resident);
    engine.free(residentOut);
    // large enough for the workers to lay out the payloads (CpuPath.copyRanges): coded chunks,
    // then stored ones (noise), from a resident input into a resident out and into a host one
    const n = 400_000;
    const mixed = sample(rng.nextU32(), n);
    for (let i = n / 2; i < n; i++) mixed[i] = rng.nextU32() & 0xffff;
    const residentMixed = engine.alloc('u16', n);
    residentMixed.set(mixed);
    const bigOut = engine.alloc('u8', compressBound(n, 'u16', 16384));
    const onHost = await engine.compress(mixed, { chunkBytes: 16384 });
    const viaWorkers = await engine.compress(residentMixed, { chunkBytes: 16384, out: bigOut });
    expect(Buffer.compare(viaWorkers, onHost)).toBe(0);
    expect(Buffer.compare(await engine.compress(residentMixed, { chunkBytes: 16384 }), onHost)).toBe(0);
    expect(same(residentMixed, mixed)).toBe(true);
    engine.free(residentMixed);
    engine.free(bigOut);
    // incompressible bytes: every chunk stored, the bound exactly
    const noise = new Uint8Array(10_000);
    for (let i = 0; i < noise.length; i++) noise[i] = rng.nextU32() & 0xff;
    const tight = new Uint8Array(compressBound(noise.length, 'u8', 1024));
    const packed = await engine.compress(noise, { chunkBytes: 1024, out: tight });
    expect(packed.length).toBe(tight.length);
    expect(same((await engine.decompress(packed)) as Uint8Array, noise)).toBe(true);
  });

  it('refuses an out below compressBound (LENGTH_MISMATCH), overlapping the input or not bytes (INVALID_ARGUMENT)', async () => {
    const input = sample(7, 5000);
    const bound = compressBound(input.length, 'u16');
    expect(bound).toBe(32 + 32 + 10_000);
    // two chunks: their entries and the chunk index (8 bytes a chunk and its checksum)
    expect(compressBound(1000, 'u8', 500)).toBe(32 + 2 * 32 + 1000 + 2 * 8 + 4);
    expect(await codeOf(engine.compress(input, { out: new Uint8Array(bound - 1) }))).toBe(ErrorCodes.LENGTH_MISMATCH);
    const shared = new Uint8Array(40_000);
    const overlapping = new Uint16Array(shared.buffer, 0, 5000);
    overlapping.set(input);
    expect(await codeOf(engine.compress(overlapping, { out: shared.subarray(8000) }))).toBe(ErrorCodes.INVALID_ARGUMENT);
    expect(await codeOf(engine.compress(input, { out: new Uint16Array(bound) as unknown as Uint8Array }))).toBe(
      ErrorCodes.INVALID_ARGUMENT,
    );
    expect(() => compressBound(-1, 'u8')).toThrow(ParleError);
    expect(() => compressBound(1, 'u128' as never)).toThrow(ParleError);
  });
});
