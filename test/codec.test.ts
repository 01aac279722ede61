/**
 * The version-2 codec through the engine (docs/format.md, "Version 2: the codec pipeline"):
 * every pipeline and 'auto' round trip every element type; the engine's payloads decode with
 * the plain reference (test/support/codec-reference.ts) and carry its tree hashes; payloads the
 * reference encodes decode with the engine (its Huffman code lengths may differ from the
 * engine's, so this is the cross-decoding check); the size bounds; version-1 fixtures; inspect;
 * invalid codec options; and hostile version-2 input, bit-flipped as stored and with recomputed
 * hashes so that the structure checks are what must catch it. Seeded: failures print the seed.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine, type Engine } from '../ts/engine.js';
import { ErrorCodes, ParleError, type ErrorCode } from '../ts/errors.js';
import { xxh64 } from '../ts/format/checksum.js';
import { inspectContainer, readAtBytes } from '../ts/format/container.js';
import { Encoding, ENTRY_BYTES, HEADER_BYTES, indexBytes, makeHeader, writeEntry, writeHeader, writeIndex } from '../ts/format/layout.js';
import { bytesOf, elementSize, type ElementType, type ParleArray } from '../ts/types.js';
import * as ref from './support/codec-reference.js';
import { Rng, caseSeed, describeSeed, fillRuns, randomF32Bits } from './support/random.js';

const TYPES: readonly ElementType[] = ['u8', 'u16', 'u32', 'i32', 'f32'];
const SIZES = [0, 1, 17, 1000, 100_003];
const SHAPES = ['runs', 'noisy'] as const;
type Shape = (typeof SHAPES)[number];
type Width = 1 | 2 | 4;
const STAGE_NAMES = ['delta', 'shuffle', 'rle', 'huffman'] as const;
const STAGE_IDS: Record<string, number> = { delta: 1, shuffle: 2, rle: 3, huffman: 4, pack: 6 };
const ID_NAMES: Record<number, string> = Object.fromEntries(Object.entries(STAGE_IDS).map(([name, id]) => [id, name]));

let engine: Engine;
let engine2: Engine;
beforeAll(async () => {
  [engine, engine2] = await Promise.all([createEngine({ workers: 1, gpu: 'off' }), createEngine({ workers: 2, gpu: 'off' })]);
});
afterAll(async () => {
  await Promise.all([engine.destroy(), engine2.destroy()]);
});

// ---------------------------------------------------------------------------------------------
// Data
// ---------------------------------------------------------------------------------------------

const CTORS = { u8: Uint8Array, u16: Uint16Array, u32: Uint32Array, i32: Int32Array, f32: Float32Array } as const;

function makeArray(type: ElementType, n: number): ParleArray {
  return new CTORS[type](n);
}

/** The array's elements as unsigned words of its width (a view, not a copy). */
function wordsOf(array: ParleArray): Uint8Array | Uint16Array | Uint32Array {
  const b = bytesOf(array);
  return array.BYTES_PER_ELEMENT === 1
    ? b
    : array.BYTES_PER_ELEMENT === 2
      ? new Uint16Array(b.buffer, b.byteOffset, array.length)
      : new Uint32Array(b.buffer, b.byteOffset, array.length);
}

/**
 * Seeded test data: 'runs' (runs of 1..20 equal elements, random values), 'noisy' (a random walk
 * with small steps: delta and the high byte planes compress, runs are rare; floats: a smooth
 * signal plus noise in the low mantissa bits).
 */
function makeData(type: ElementType, n: number, shape: Shape, seed: number): ParleArray {
  const rng = new Rng(seed);
  const array = makeArray(type, n);
  if (shape === 'runs') {
    fillRuns(rng, wordsOf(array), { kind: 'uniform', maxRun: 20 });
    return array;
  }
  if (array instanceof Float32Array) {
    let v = 100;
    for (let i = 0; i < n; i++) {
      v += (rng.nextFloat() - 0.5) * 0.01;
      array[i] = v;
    }
    return array;
  }
  const words = wordsOf(array);
  const mask = 2 ** (8 * array.BYTES_PER_ELEMENT) - 1;
  let v = rng.nextU32() & mask;
  for (let i = 0; i < n; i++) {
    v = (v + rng.intBetween(-3, 3) + mask + 1) % (mask + 1);
    words[i] = v;
  }
  return array;
}

/** Every valid pipeline for `type` ('stored' for the empty one): subsequences of delta, shuffle, rle, huffman; shuffle only for 2 and 4 bytes. */
function pipelinesFor(type: ElementType): string[] {
  const stages = STAGE_NAMES.filter((s) => s !== 'shuffle' || elementSize(type) > 1);
  const out: string[] = [];
  for (let mask = 0; mask < 1 << stages.length; mask++) {
    const picked = stages.filter((_, i) => mask & (1 << i));
    out.push(picked.length === 0 ? 'stored' : picked.join('+'));
  }
  return out;
}

/** The pipelines that end in pack for `type`: every valid pipeline without huffman, pack appended. */
function packPipelinesFor(type: ElementType): string[] {
  return pipelinesFor(type)
    .filter((p) => !p.includes('huffman'))
    .map((p) => (p === 'stored' ? 'pack' : `${p}+pack`));
}

/** Whether a pipeline can make a payload smaller than its elements: delta and shuffle alone only add a directory. */
function canShrink(pipeline: string): boolean {
  return pipeline.includes('rle') || pipeline.includes('huffman') || pipeline.includes('pack');
}

function idsOf(pipeline: string): number[] {
  return pipeline === 'stored' ? [] : pipeline.split('+').map((name) => STAGE_IDS[name]);
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return Buffer.compare(Buffer.from(a.buffer, a.byteOffset, a.length), Buffer.from(b.buffer, b.byteOffset, b.length)) === 0;
}

function expectSameArray(actual: ParleArray, expected: ParleArray, context: string): void {
  expect(actual.constructor, context).toBe(expected.constructor);
  expect(actual.length, context).toBe(expected.length);
  if (!sameBytes(bytesOf(actual), bytesOf(expected))) {
    const a = bytesOf(actual);
    const e = bytesOf(expected);
    const at = a.findIndex((x, i) => x !== e[i]);
    expect.fail(`${context}: first differing byte ${at}: got ${a[at]}, expected ${e[at]}`);
  }
}

/** Resolves to the ParleError a promise (or a function) fails with; fails on anything else. */
async function parleErrorOf(work: Promise<unknown> | (() => unknown)): Promise<ParleError> {
  let result: unknown;
  try {
    result = await (typeof work === 'function' ? work() : work);
    result = 'resolved';
  } catch (e) {
    result = e;
  }
  if (!(result instanceof ParleError))
    throw new Error(`expected a ParleError, got ${result instanceof Error ? result.stack : String(result)}`);
  return result;
}

// ---------------------------------------------------------------------------------------------
// The container by hand (docs/format.md): header 32 bytes, then entry (32) + payload per chunk
// ---------------------------------------------------------------------------------------------

interface WalkedChunk {
  entryAt: number;
  count: number;
  stages: number[];
  streamCount: number;
  payload: Uint8Array;
  payloadHash: number;
  elementsHash: number;
}

/** Bytes of a version-4 container's chunk index for `chunks` chunks (written from two chunks on). */
const indexSize = (chunks: number) => (chunks >= 2 ? 8 * chunks + 4 : 0);

/** Walks a version-4, 3 (or 2) container without the library's readers. */
function walk(bytes: Uint8Array): {
  version: number;
  level: number;
  type: ElementType;
  chunkLength: number;
  count: number;
  chunks: WalkedChunk[];
} {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
  const version = view.getUint8(8);
  const level = view.getUint8(10);
  const type = TYPES[view.getUint8(9)];
  const chunkLength = view.getUint32(12, true);
  const count = Number(view.getBigUint64(16, true));
  const chunkCount = view.getUint32(24, true);
  const chunks: WalkedChunk[] = [];
  let at = HEADER_BYTES;
  for (let i = 0; i < chunkCount; i++) {
    const stages: number[] = [];
    for (let s = 0; s < 4 && bytes[at + 4 + s] !== 0; s++) stages.push(bytes[at + 4 + s]);
    const P = view.getUint32(at + 12, true);
    chunks.push({
      entryAt: at,
      count: view.getUint32(at, true),
      stages,
      streamCount: view.getUint32(at + 8, true),
      payload: bytes.subarray(at + ENTRY_BYTES, at + ENTRY_BYTES + P),
      payloadHash: view.getUint32(at + 16, true),
      elementsHash: view.getUint32(at + 20, true),
    });
    at += ENTRY_BYTES + P;
  }
  if (version === 4 && (view.getUint8(11) & 0x10) !== 0) {
    // the chunk index: every entry's offset (u64), then their checksum
    expect(chunkCount, 'an index only where there are two chunks or more').toBeGreaterThanOrEqual(2);
    chunks.forEach((c, i) => expect(Number(view.getBigUint64(at + 8 * i, true)), `chunk ${i} in the index`).toBe(c.entryAt));
    at += 8 * chunkCount + 4;
  } else expect(version !== 4 || chunkCount < 2, 'version 4 indexes two chunks or more').toBe(true);
  expect(at, 'the chunks (and the index) end at the end of the container').toBe(bytes.length);
  return { version, level, type, chunkLength, count, chunks };
}

function nameOf(stages: readonly number[]): string {
  return stages.length === 0 ? 'stored' : stages.map((id) => ID_NAMES[id]).join('+');
}

/** Recomputes the entry checksum at entry + 28: low 32 bits of XXH64(entry bytes 0..27). */
function resealEntry(bytes: Uint8Array, entryAt: number): void {
  new DataView(bytes.buffer, bytes.byteOffset).setUint32(
    entryAt + 28,
    Number(xxh64(bytes.subarray(entryAt, entryAt + 28)) & 0xffffffffn),
    true,
  );
}

/** Recomputes the payload's tree hash at entry + 16, then the entry checksum. */
function resealPayload(bytes: Uint8Array, entryAt: number): void {
  const view = new DataView(bytes.buffer, bytes.byteOffset);
  const P = view.getUint32(entryAt + 12, true);
  view.setUint32(entryAt + 16, ref.treeHash(bytes.subarray(entryAt + ENTRY_BYTES, entryAt + ENTRY_BYTES + P)), true);
  resealEntry(bytes, entryAt);
}

/**
 * A container of `elementBytes` (elements of `type`) in chunks of `chunkLength`, each chunk's
 * payload from `payloadOf` (undefined: stored), entries with the reference's tree hashes.
 */
function buildContainer(
  type: ElementType,
  elementBytes: Uint8Array,
  chunkLength: number,
  payloadOf: (chunk: Uint8Array, index: number) => { stages: number[]; payload: Uint8Array } | undefined,
): Uint8Array {
  const w = elementSize(type);
  const n = elementBytes.length / w;
  const header = makeHeader(type, n, chunkLength);
  const parts: Uint8Array[] = [writeHeader(header)];
  const entryOffsets: number[] = [];
  let at = parts[0].length;
  for (let i = 0; i < header.chunkCount; i++) {
    const chunk = elementBytes.subarray(i * chunkLength * w, Math.min(n, (i + 1) * chunkLength) * w);
    const coded = payloadOf(chunk, i) ?? { stages: [], payload: chunk };
    entryOffsets.push(at);
    at += ENTRY_BYTES + coded.payload.length;
    parts.push(
      writeEntry({
        elementCount: chunk.length / w,
        encoding: coded.stages.length === 0 ? Encoding.Stored : Encoding.Pipeline,
        runCount: 0,
        payloadBytes: coded.payload.length,
        payloadChecksum: BigInt(ref.treeHash(coded.payload)),
        elementsChecksum: BigInt(ref.treeHash(chunk)),
        stages: coded.stages,
        streamCount: ref.streamCount(coded.stages, w as Width) * (coded.stages.length > 0 ? 1 : 0),
      }),
      coded.payload,
    );
  }
  if (indexBytes(header) > 0) parts.push(writeIndex(entryOffsets));
  return Buffer.concat(parts);
}

/** A payload of raw streams: the directory (D, E) and the streams after it. */
function payloadOfStreams(streams: { decoded: number; stored: Uint8Array }[]): Uint8Array {
  const dir = new Uint8Array(8 * streams.length);
  const view = new DataView(dir.buffer);
  streams.forEach((s, j) => {
    view.setUint32(8 * j, s.decoded, true);
    view.setUint32(8 * j + 4, s.stored.length, true);
  });
  return Buffer.concat([dir, ...streams.map((s) => s.stored)]);
}

/** Decodes with the streaming reader fed in pieces of 1..step bytes. */
async function decodeStreaming(e: Engine, bytes: Uint8Array, rng: Rng, step: number): Promise<Uint8Array> {
  const reader = e.createDecompressor();
  const out: Uint8Array[] = [];
  for (let at = 0; at < bytes.length;) {
    const size = rng.intBetween(1, step);
    out.push(...(await reader.write(bytes.subarray(at, at + size))));
    at += size;
  }
  out.push(...(await reader.end()));
  return Buffer.concat(out);
}

/**
 * Checks an engine container against the reference: version 2, the size bound, per chunk the
 * requested pipeline (or stored), both tree hashes and (when `decode`) the reference's decode of
 * the payload. Returns the pipeline names of the chunks.
 */
function checkAgainstReference(packed: Uint8Array, input: ParleArray, requested: string, decode: boolean, context: string): string[] {
  const w = input.BYTES_PER_ELEMENT as Width;
  const raw = bytesOf(input);
  const walked = walk(packed);
  expect(walked.version, context).toBe(4);
  expect(walked.level, context).toBe(5);
  expect(walked.count, context).toBe(input.length);
  expect(packed.length, `size bound, ${context}`).toBeLessThanOrEqual(
    HEADER_BYTES + ENTRY_BYTES * walked.chunks.length + raw.length + indexSize(walked.chunks.length),
  );
  const names: string[] = [];
  walked.chunks.forEach((c, i) => {
    const where = `chunk ${i}, ${context}`;
    const name = nameOf(c.stages);
    names.push(name);
    if (requested !== 'auto') expect([requested, 'stored'], where).toContain(name);
    const chunkRaw = raw.subarray(i * walked.chunkLength * w, i * walked.chunkLength * w + c.count * w);
    expect(c.streamCount, where).toBe(c.stages.length === 0 ? 0 : ref.streamCount(c.stages, w));
    expect(c.elementsHash, `elements hash, ${where}`).toBe(ref.treeHash(chunkRaw));
    expect(c.payloadHash, `payload hash, ${where}`).toBe(ref.treeHash(c.payload));
    if (c.stages.length === 0) expect(sameBytes(c.payload, chunkRaw), `stored payload, ${where}`).toBe(true);
    else {
      expect(c.payload.length, `a piped payload is smaller than the elements, ${where}`).toBeLessThan(chunkRaw.length);
      if (decode) expect(sameBytes(ref.decodePayload(c.stages, c.payload, w, c.count), chunkRaw), `reference decode, ${where}`).toBe(true);
    }
  });
  return names;
}

// ---------------------------------------------------------------------------------------------
// Round trips
// ---------------------------------------------------------------------------------------------

describe('round trips of every pipeline and auto', () => {
  for (const type of TYPES) {
    for (const codec of [...pipelinesFor(type), ...packPipelinesFor(type), 'auto']) {
      it(`${type} ${codec}: sizes ${SIZES.join(', ')}, runs and noisy, chunks of 1 KiB and the default`, async () => {
        const coded = new Set<string>();
        for (const n of SIZES) {
          for (const shape of SHAPES) {
            const seed = caseSeed(`codec ${type} ${shape} ${n}`);
            const input = makeData(type, n, shape, seed);
            for (const chunkBytes of [1024, undefined]) {
              const context = `${type} ${codec} ${shape} n=${n} chunkBytes=${chunkBytes} ${describeSeed(seed)}`;
              const packed = await engine.compress(input, { codec, chunkBytes });
              // the reference's bit-by-bit Huffman decoder is slow: it reads the small containers
              const decode = n <= 1000 || !codec.includes('huffman');
              const names = checkAgainstReference(packed, input, codec, decode, context);
              names.forEach((name) => coded.add(name));
              const report = inspectContainer(readAtBytes(packed), packed.length);
              expect(report.version, context).toBe(4);
              expect(
                report.chunks.map((c) => c.encoding),
                context,
              ).toEqual(names);
              expectSameArray(await engine.decompress(packed), input, context);
            }
          }
        }
        // the requested pipeline was used somewhere, not only its stored fallback; delta and
        // shuffle alone add a directory to the elements, so they always fall back
        if (codec !== 'auto' && canShrink(codec)) expect([...coded], `${type} ${codec}`).toContain(codec);
        if (codec !== 'auto' && !canShrink(codec)) expect([...coded], `${type} ${codec}`).toEqual(['stored']);
      });
    }
  }

  it('large chunks: the reference decodes multi-segment Huffman payloads of the engine', async () => {
    for (const [type, codec] of [
      ['u8', 'huffman'],
      ['u16', 'delta+shuffle+huffman'],
      ['f32', 'shuffle+rle+huffman'],
      ['u32', 'auto'],
    ] as const) {
      const seed = caseSeed(`codec large ${type} ${codec}`);
      const input = makeData(type, 70_000, 'noisy', seed);
      const packed = await engine.compress(input, { codec });
      checkAgainstReference(packed, input, codec, true, `${type} ${codec} ${describeSeed(seed)}`);
    }
  });

  it('f32 NaN payloads, -0, infinities and denormals survive every pipeline', async () => {
    const seed = caseSeed('codec f32 specials');
    const bits = randomF32Bits(new Rng(seed), 5000, 0.5);
    const runs = new Uint32Array(3000);
    fillRuns(new Rng(seed + 1), runs, { kind: 'uniform', maxRun: 30 });
    for (let i = 0; i < runs.length; i++) runs[i] = [0x80000000, 0x7fc00001, 0xffffffff, 0x00000001][runs[i] & 3];
    for (const pattern of [bits, runs]) {
      const input = new Float32Array(pattern.buffer.slice(0));
      for (const codec of [...pipelinesFor('f32'), 'auto']) {
        const context = `${codec} ${describeSeed(seed)}`;
        const packed = await engine.compress(input, { codec, chunkBytes: 1024 });
        checkAgainstReference(packed, input, codec, true, context);
        const back = await engine.decompress(packed);
        expect(back, context).toBeInstanceOf(Float32Array);
        expect(sameBytes(bytesOf(back), bytesOf(input)), context).toBe(true);
      }
    }
  });

  it('two workers: the same bytes as one, multi-chunk, decoded by either engine and by the streaming reader', async () => {
    const seed = caseSeed('codec workers');
    const rng = new Rng(seed);
    const cases: [ParleArray, string, number | undefined][] = [
      [makeData('u16', 5_000_000, 'noisy', seed), 'auto', undefined], // three chunks of the default 4 MiB
      [makeData('u32', 300_000, 'runs', seed + 1), 'delta+shuffle+rle+huffman', 65536],
      [makeData('f32', 300_000, 'noisy', seed + 2), 'auto', 65536],
      [makeData('u8', 300_001, 'runs', seed + 3), 'rle+huffman', 4096],
    ];
    for (const [input, codec, chunkBytes] of cases) {
      const context = `${input.constructor.name} ${codec} ${chunkBytes} ${describeSeed(seed)}`;
      const one = await engine.compress(input, { codec, chunkBytes });
      const two = await engine2.compress(input, { codec, chunkBytes });
      expect(walk(two).chunks.length, context).toBeGreaterThan(1);
      expect(sameBytes(one, two), `one worker and two write the same bytes, ${context}`).toBe(true);
      expectSameArray(await engine2.decompress(one), input, context);
      expectSameArray(await engine.decompress(two), input, context);
      expect(sameBytes(await decodeStreaming(engine2, two, rng, 1 << 20), bytesOf(input)), `streaming, ${context}`).toBe(true);
      // the streaming writer, fed odd pieces, writes the same container
      const type = walk(one).type;
      const writer = engine2.createCompressor(type, input.length, { codec, chunkBytes });
      const raw = bytesOf(input);
      const parts: Uint8Array[] = [];
      for (let at = 0; at < raw.length;) {
        const size = rng.intBetween(1, 3 << 20);
        parts.push(...(await writer.write(raw.subarray(at, at + size))));
        at += size;
      }
      parts.push(...(await writer.end()));
      expect(sameBytes(Buffer.concat(parts), one), `streaming writer, ${context}`).toBe(true);
    }
  });
});

// ---------------------------------------------------------------------------------------------
// Sizes
// ---------------------------------------------------------------------------------------------

describe('the chooser and pack', () => {
  it("'auto' packs noisy integers of a narrow range (u32 and f32 bit patterns), never u8; the result decodes", async () => {
    const rng = new Rng(caseSeed('codec auto pack'));
    const n = 200_000;
    const u32 = new Uint32Array(n).map(() => 1000 + (rng.nextU32() % 200));
    const u8 = new Uint8Array(n).map(() => rng.nextU32() % 200);
    for (const level of [1, 5]) {
      const packed = await engine.compress(u32, { level });
      const names = walk(packed).chunks.map((c) => nameOf(c.stages));
      expect(
        names.every((name) => name.endsWith('pack')),
        `level ${level}: ${names.join(', ')}`,
      ).toBe(true);
      expectSameArray(await engine.decompress(packed), u32, `u32 level ${level}`);
      expect(sameBytes(await decodeStreaming(engine, packed, rng, 5000), bytesOf(u32)), `u32 level ${level}, streaming`).toBe(true);
      expectSameArray(await engine2.decompress(packed), u32, `u32 level ${level}, two workers`);
      const bytes = await engine.compress(u8, { level });
      expect(
        walk(bytes).chunks.some((c) => nameOf(c.stages).endsWith('pack')),
        `u8 level ${level}`,
      ).toBe(false);
    }
  });
});

describe('sizes', () => {
  it('uniform noise: every pipeline falls back to stored, exactly 32 + 32 per chunk + the elements + the chunk index', async () => {
    const seed = caseSeed('codec noise sizes');
    const rng = new Rng(seed);
    for (const type of TYPES) {
      const input = makeArray(type, 3000);
      const words = wordsOf(input);
      for (let i = 0; i < words.length; i++) words[i] = rng.nextU32();
      for (const codec of [...pipelinesFor(type), 'auto']) {
        const packed = await engine.compress(input, { codec, chunkBytes: 1024 });
        const walked = walk(packed);
        const context = `${type} ${codec} ${describeSeed(seed)}`;
        expect(
          walked.chunks.map((c) => nameOf(c.stages)).every((name) => name === 'stored'),
          context,
        ).toBe(true);
        expect(packed.length, context).toBe(
          HEADER_BYTES + ENTRY_BYTES * walked.chunks.length + bytesOf(input).length + indexSize(walked.chunks.length),
        );
      }
    }
  });

  /** Shapes that make the chooser's estimates miss: variable runs, rare long runs, mixtures. */
  function shapedData(type: ElementType, n: number, shape: string, rng: Rng): ParleArray {
    const array = makeArray(type, n);
    const words = wordsOf(array);
    const mask = 2 ** (8 * array.BYTES_PER_ELEMENT) - 1;
    switch (shape) {
      case 'runs':
        fillRuns(rng, words, { kind: 'uniform', maxRun: 20 });
        break;
      case 'long runs':
        fillRuns(rng, words, { kind: 'uniform', maxRun: 2000 });
        break;
      case 'singletons and one long run': {
        // mean run length over 128 (two LEB128 bytes estimated) while most runs take one byte
        for (let i = 0; i < n; i++) words[i] = i % 200 < 190 ? 7 : rng.nextU32() & mask;
        break;
      }
      case 'few values':
        for (let i = 0; i < n; i++) words[i] = [0, 1, mask, 1000 & mask][rng.nextU32() & 3];
        break;
      case 'noisy':
        return makeData(type, n, 'noisy', rng.nextU32());
      case 'noise':
        for (let i = 0; i < n; i++) words[i] = rng.nextU32();
        break;
      case 'constant':
        words.fill(42);
        break;
      case 'runs of noise':
        for (let i = 0; i < n;) {
          const v = rng.nextU32() & mask;
          const len = rng.nextFloat() < 0.5 ? 1 : rng.intBetween(2, 300);
          words.fill(v, i, Math.min(n, i + len));
          i += len;
        }
        break;
    }
    return array;
  }

  it("with 'auto' at level 9 no chunk is larger than codec 'rle' makes it (version 1's RLE + its 16-byte directory)", async () => {
    const seed = caseSeed('codec auto vs rle');
    const rng = new Rng(seed);
    const shapes = ['runs', 'long runs', 'singletons and one long run', 'few values', 'noisy', 'noise', 'constant', 'runs of noise'];
    for (const type of TYPES) {
      for (const shape of shapes) {
        const input = shapedData(type, 20_000, shape, rng);
        for (const chunkBytes of [1024, 4096, 65536]) {
          const context = `${type} ${shape} chunkBytes=${chunkBytes} ${describeSeed(seed)}`;
          const auto = walk(await engine.compress(input, { codec: 'auto', chunkBytes, level: 9 }));
          const rle = walk(await engine.compress(input, { codec: 'rle', chunkBytes }));
          expect(auto.chunks.length).toBe(rle.chunks.length);
          auto.chunks.forEach((c, i) => {
            const rleBytes = rle.chunks[i].payload.length;
            if (c.payload.length > rleBytes) {
              expect.fail(`chunk ${i}: auto chose ${nameOf(c.stages)} of ${c.payload.length} bytes, rle is ${rleBytes} bytes, ${context}`);
            }
          });
        }
      }
    }
  });

  // A regression: pack's estimate from 4 ranges of a sample missed the outliers of the MRI
  // sample's chunks and nothing else was encoded, so levels 6-8 came out 36-66 % larger than
  // level 5; a candidate that comes to more than 1.5x its estimate now has the next one tried
  it('a higher level is not larger than level 5 where the best estimate missed (the MRI sample)', async () => {
    const bytes = readFileSync(new URL('../data/samples/t1-mri.u16', import.meta.url));
    const mri = new Uint16Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 2);
    const five = (await engine.compress(mri, { level: 5 })).length;
    for (const level of [6, 7, 8, 9]) {
      const size = (await engine.compress(mri, { level })).length;
      expect(size, `level ${level}: ${size} bytes, level 5 ${five}`).toBeLessThanOrEqual(five * 1.01);
    }
  });

  // A regression: the chooser once skipped 'rle' when its estimate (2 LEB128 bytes a run, from
  // the mean run length of 170) was not below what delta+rle took (34 B), but rle takes 30 B:
  // most of its runs are single elements (1 byte each).
  it("with 'auto' no chunk is larger than 'rle': six runs, two of them long", async () => {
    const runs: [number, number][] = [
      [64, 1],
      [92, 285],
      [18, 735],
      [20, 1],
      [7, 1],
      [92, 1],
    ];
    const input = Uint8Array.from(runs.flatMap(([value, length]) => new Array<number>(length).fill(value)));
    expect(input.length).toBe(1024);
    const rle = walk(await engine.compress(input, { codec: 'rle' })).chunks[0];
    expect(rle.payload.length).toBe(16 + 6 + 8);
    const auto = walk(await engine.compress(input, { codec: 'auto' })).chunks[0];
    expect(auto.payload.length, `auto chose ${nameOf(auto.stages)}`).toBeLessThanOrEqual(rle.payload.length);
  });
});

// ---------------------------------------------------------------------------------------------
// The reference's payloads read by the engine
// ---------------------------------------------------------------------------------------------

describe('payloads the reference encodes decode with the engine', () => {
  it('every pipeline, every type, runs / noisy / few values, in chunks of 1 KiB (in memory and streaming)', async () => {
    const seed = caseSeed('codec reference payloads');
    const rng = new Rng(seed);
    for (const type of TYPES) {
      const w = elementSize(type);
      for (const pipeline of pipelinesFor(type).filter(canShrink)) {
        let piped = 0;
        for (const shape of ['runs', 'noisy', 'few values'] as const) {
          const input = makeData(type, 3001, shape === 'few values' ? 'runs' : shape, rng.nextU32());
          if (shape === 'few values') wordsOf(input).forEach((v, i, words) => (words[i] = v & 3));
          const stages = idsOf(pipeline);
          const packed = buildContainer(type, bytesOf(input), 1024 / w, (chunk) => {
            const payload = ref.encodePayload(stages, chunk, w);
            // a piped payload must be smaller than the elements (the entry's rule): else stored
            if (payload.length >= chunk.length) return undefined;
            piped++;
            return { stages, payload };
          });
          const context = `${type} ${pipeline} ${shape} ${describeSeed(seed)}`;
          expectSameArray(await engine.decompress(packed), input, context);
          expect(sameBytes(await decodeStreaming(engine, packed, rng, 700), bytesOf(input)), `streaming, ${context}`).toBe(true);
        }
        expect(piped, `${type} ${pipeline}: some chunk was coded`).toBeGreaterThan(0);
      }
    }
  });

  it("Huffman codes where the 11-bit limit binds (the reference's package-merge lengths)", async () => {
    const seed = caseSeed('codec reference fibonacci');
    const rng = new Rng(seed);
    // Fibonacci counts over 24 symbols: unlimited Huffman would use 23-bit codes
    const bytes: number[] = [];
    let [a, b] = [1, 1];
    for (let s = 0; s < 24; s++) {
      for (let i = 0; i < a; i++) bytes.push(s * 10);
      [a, b] = [b, a + b];
    }
    for (let i = bytes.length - 1; i > 0; i--) {
      const j = rng.nextU32() % (i + 1);
      [bytes[i], bytes[j]] = [bytes[j], bytes[i]];
    }
    const input = Uint8Array.from(bytes);
    const stream = ref.huffmanEncodeStream(input);
    const last = stream[2];
    const lengths = Array.from({ length: last + 1 }, (_, s) => (stream[3 + (s >> 1)] >> ((s & 1) * 4)) & 15);
    expect(Math.max(...lengths)).toBe(11);
    for (const pipeline of ['huffman', 'rle+huffman', 'delta+huffman']) {
      const stages = idsOf(pipeline);
      const packed = buildContainer('u8', input, input.length, (chunk) => ({ stages, payload: ref.encodePayload(stages, chunk, 1) }));
      expectSameArray(await engine.decompress(packed), input, `${pipeline} ${describeSeed(seed)}`);
    }
    // and the engine's own container of it reads back through the reference
    const own = await engine.compress(input, { codec: 'huffman' });
    checkAgainstReference(own, input, 'huffman', true, describeSeed(seed));
  });

  it('hand-built streams: segments of 2^10 and 2^20 symbols, mode 0 (raw), mode 1, and mode 2 larger than raw', async () => {
    const seed = caseSeed('codec reference streams');
    const rng = new Rng(seed);
    const skewed = Uint8Array.from({ length: 5000 }, () => {
      let s = 0;
      while (s < 255 && rng.nextFloat() < 0.5) s++;
      return s;
    });
    const cases: [string, ElementType, Uint8Array, number[], Uint8Array[]][] = [];
    for (const g of [10, 11, 20]) {
      cases.push([`huffman, g=${g}`, 'u8', skewed, [4], [ref.huffmanEncodeStream(skewed, g)]]);
    }
    // u32 shuffle+huffman: planes 0 and 1 skewed (mode 2), plane 2 random (mode 2 larger than raw, then
    // mode 0 as stored by hand), plane 3 all zero (mode 1)
    const count = 3000;
    const elements = new Uint8Array(count * 4);
    for (let i = 0; i < count; i++) {
      elements[4 * i] = skewed[i];
      elements[4 * i + 1] = skewed[(i * 7) % skewed.length];
      elements[4 * i + 2] = rng.nextU32() & 0xff;
    }
    const planes = ref.shuffle(elements, 4);
    const plane2Mode2 = ref.huffmanEncodeStream(planes[2], 10);
    expect(plane2Mode2.length).toBeGreaterThan(planes[2].length);
    const plane2Raw = Buffer.concat([Uint8Array.of(0), planes[2]]);
    for (const [name, plane2] of [
      ['mode 2 larger than raw', plane2Mode2],
      ['mode 0', plane2Raw],
    ] as const) {
      const streams = [
        ref.huffmanEncodeStream(planes[0], 10),
        ref.huffmanEncodeStream(planes[1], 12),
        plane2,
        ref.huffmanEncodeStream(planes[3]),
      ];
      expect(streams[3]).toEqual(Uint8Array.of(1, 0));
      cases.push([`shuffle+huffman, plane 2 ${name}`, 'u32', elements, [2, 4], streams]);
    }
    for (const [name, type, elementBytes, stages, streams] of cases) {
      const w = elementSize(type);
      const decoded = stages.includes(2) ? elementBytes.length / w : elementBytes.length;
      const payload = payloadOfStreams(streams.map((stored) => ({ decoded, stored })));
      expect(sameBytes(ref.decodePayload(stages, payload, w as Width, elementBytes.length / w), elementBytes), name).toBe(true);
      const packed = buildContainer(type, elementBytes, elementBytes.length / w, () => ({ stages, payload }));
      const back = await engine.decompress(packed);
      expect(sameBytes(bytesOf(back), elementBytes), `${name} ${describeSeed(seed)}`).toBe(true);
    }
  });

  // A regression: the engine once rejected a mode-2 stream of one symbol ("Huffman stream of 1
  // symbols"); docs/format.md allows mode 2 at any D and the reference decodes it.
  it('a mode-2 stream of a single symbol (D = 1), which the spec and the reference allow', async () => {
    // 1000 x 0x41, rle+huffman: values [0x41] as mode 2 (code {0x40: 1 bit, 0x41: 1 bit}, one
    // segment of 1 byte: bit 1 = 0x41), lengths [999 as LEB128 0xe7 0x07] as mode 0
    const input = new Uint8Array(1000).fill(0x41);
    const lengthsTable = new Uint8Array(33);
    lengthsTable[32] = 0x11; // symbols 0x40 and 0x41: 1 bit each
    const values = Buffer.concat([Uint8Array.of(2, 10, 0x41), lengthsTable, Uint8Array.of(1, 0, 0, 0), Uint8Array.of(1)]);
    const payload = payloadOfStreams([
      { decoded: 1, stored: values },
      { decoded: 2, stored: Uint8Array.of(0, 0xe7, 0x07) },
    ]);
    expect(sameBytes(ref.decodePayload([3, 4], payload, 1, 1000), input)).toBe(true);
    const packed = buildContainer('u8', input, 1000, () => ({ stages: [3, 4], payload }));
    expectSameArray(await engine.decompress(packed), input, 'mode 2, D = 1');
  });

  it('non-minimal LEB128 run lengths (0x80 0x00), which the reference accepts', async () => {
    // 300 elements: runs of 100 x 5, 100 x 6, 100 x 7; lengths - 1 = 99 as [0xe3 0x00], 99, [0xe3 0x00]
    const input = new Uint8Array(300).map((_, i) => 5 + Math.floor(i / 100));
    const fixed = payloadOfStreams([
      { decoded: 3, stored: Uint8Array.of(5, 6, 7) },
      { decoded: 5, stored: Uint8Array.of(0x80 | 99, 0x00, 99, 0x80 | 99, 0x00) },
    ]);
    expect(sameBytes(ref.decodePayload([3], fixed, 1, 300), input)).toBe(true);
    const packed = buildContainer('u8', input, 300, () => ({ stages: [3], payload: fixed }));
    expectSameArray(await engine.decompress(packed), input, 'non-minimal LEB128');
  });
});

// ---------------------------------------------------------------------------------------------
// Version 1, inspect, options
// ---------------------------------------------------------------------------------------------

describe('version-1 fixtures', () => {
  const dir = new URL('./fixtures/v1/', import.meta.url);
  const names = readdirSync(dir)
    .filter((f) => f.endsWith('.parle'))
    .map((f) => f.slice(0, -'.parle'.length));

  it('all five are there', () => {
    expect(names.sort()).toEqual(['f32-nan', 'i32-steps', 'u16-noisy', 'u32-empty', 'u8-runs']);
  });

  for (const name of ['f32-nan', 'i32-steps', 'u16-noisy', 'u32-empty', 'u8-runs']) {
    it(`${name} decodes to its .raw, in memory and streaming; inspect says version 1`, async () => {
      const packed = new Uint8Array(readFileSync(new URL(`${name}.parle`, dir)));
      const raw = new Uint8Array(readFileSync(new URL(`${name}.raw`, dir)));
      const type = name.split('-')[0] as ElementType;
      const back = await engine.decompress(packed);
      expect(back).toBeInstanceOf(CTORS[type]);
      expect(sameBytes(bytesOf(back), raw), name).toBe(true);
      const rng = new Rng(caseSeed(`codec fixture ${name}`));
      expect(sameBytes(await decodeStreaming(engine, packed, rng, 97), raw), `${name} streaming`).toBe(true);
      const report = inspectContainer(readAtBytes(packed), packed.length);
      expect(report.version).toBe(1);
      expect(report.type).toBe(type);
      for (const c of report.chunks) expect(['stored', 'rle']).toContain(c.encoding);
      // and written again, it is version 3 of the same elements
      const again = await engine.compress(back);
      expect(walk(again).version).toBe(4);
      expect(sameBytes(bytesOf(await engine.decompress(again)), raw)).toBe(true);
    });
  }
});

describe('version-2 fixtures (written by the version-2 writer, before version 3)', () => {
  const dir = new URL('./fixtures/v2/', import.meta.url);
  const names = readdirSync(dir)
    .filter((f) => f.endsWith('.parle'))
    .map((f) => f.slice(0, -'.parle'.length));

  it('all six are there', () => {
    expect(names.sort()).toEqual(['f32-lossy', 'f32-nan', 'i32-steps', 'u16-mri', 'u32-empty', 'u8-camera']);
  });

  for (const name of ['f32-lossy', 'f32-nan', 'i32-steps', 'u16-mri', 'u32-empty', 'u8-camera']) {
    it(`${name} decodes to its .raw, in memory and streaming; inspect says version 2`, async () => {
      const packed = new Uint8Array(readFileSync(new URL(`${name}.parle`, dir)));
      const raw = new Uint8Array(readFileSync(new URL(`${name}.raw`, dir)));
      const type = name.split('-')[0] as ElementType;
      expect(packed[8]).toBe(2);
      const back = await engine.decompress(packed);
      expect(back).toBeInstanceOf(CTORS[type]);
      expect(sameBytes(bytesOf(back), raw), name).toBe(true);
      const rng = new Rng(caseSeed(`codec v2 fixture ${name}`));
      expect(sameBytes(await decodeStreaming(engine, packed, rng, 97), raw), `${name} streaming`).toBe(true);
      const report = inspectContainer(readAtBytes(packed), packed.length);
      expect(report.version).toBe(2);
      expect(report.level).toBeUndefined();
      // a flipped bit in the last payload byte is still caught
      if (packed.length > 64) {
        const bad = packed.slice();
        bad[bad.length - 1] ^= 0x10;
        expect([ErrorCodes.CORRUPT, ErrorCodes.CHECKSUM_MISMATCH]).toContain((await parleErrorOf(engine.decompress(bad))).code);
      }
    });
  }
});

describe('inspect', () => {
  it("reports version 3, the level and each chunk's pipeline", async () => {
    const input = makeData('u16', 3000, 'runs', caseSeed('codec inspect'));
    for (const codec of ['delta+shuffle+rle+huffman', 'rle', 'stored', 'shuffle+huffman']) {
      const packed = await engine.compress(input, { codec, chunkBytes: 2048 });
      const report = inspectContainer(readAtBytes(packed), packed.length);
      expect(report.version).toBe(4);
      expect(report.level).toBe(5);
      expect(report.chunkCount).toBe(3);
      const walked = walk(packed);
      report.chunks.forEach((c, i) => {
        expect(c.encoding).toBe(nameOf(walked.chunks[i].stages));
        expect(c.streamCount).toBe(walked.chunks[i].streamCount);
        expect(c.payloadBytes).toBe(walked.chunks[i].payload.length);
      });
      expect(report.chunks[0].encoding).toBe(codec);
    }
  });
});

describe('invalid codec options', () => {
  const BAD: [string, unknown, ElementType][] = [
    ['an unknown codec', 'zip', 'u16'],
    ['stages out of order', 'huffman+delta', 'u16'],
    ['shuffle on u8', 'shuffle', 'u8'],
    ['shuffle+rle on u8', 'shuffle+rle', 'u8'],
    ['a repeated stage', 'delta+delta', 'u32'],
    ['a number', 42, 'u16'],
    ['an empty string', '', 'u16'],
    ['a trailing +', 'delta+', 'u16'],
    ['capitals', 'Delta', 'u16'],
    ['auto as a stage', 'auto+rle', 'u16'],
  ];
  for (const [what, codec, type] of BAD) {
    it(`${what} (${JSON.stringify(codec)}) is INVALID_OPTION for compress, createCompressor and explainCodec`, async () => {
      const input = makeArray(type, 10);
      const options = { codec } as unknown as { codec: string };
      expect((await parleErrorOf(engine.compress(input, options))).code).toBe(ErrorCodes.INVALID_OPTION);
      expect((await parleErrorOf(() => engine.createCompressor(type, 10, options))).code).toBe(ErrorCodes.INVALID_OPTION);
      expect((await parleErrorOf(engine.explainCodec(input, options))).code).toBe(ErrorCodes.INVALID_OPTION);
    });
  }

  it('shuffle is fine on 2- and 4-byte types', async () => {
    for (const type of ['u16', 'u32', 'i32', 'f32'] as const) {
      const input = makeData(type, 100, 'runs', 1);
      expectSameArray(await engine.decompress(await engine.compress(input, { codec: 'shuffle' })), input, type);
    }
  });
});

// ---------------------------------------------------------------------------------------------
// Hostile version-2 input
// ---------------------------------------------------------------------------------------------

const FAILURES: readonly ErrorCode[] = [
  ErrorCodes.CORRUPT,
  ErrorCodes.CHECKSUM_MISMATCH,
  ErrorCodes.NOT_PARLE,
  ErrorCodes.UNSUPPORTED_VERSION,
  ErrorCodes.TRUNCATED,
];

/** u16 runs over a small alphabet: every pipeline below codes it (none falls back to stored). */
function smallInput(n: number, seed: number): Uint16Array {
  const rng = new Rng(seed);
  const out = new Uint16Array(n);
  for (let i = 0; i < n;) {
    const v = [0, 1, 2, 0x0300, 0x0101][rng.nextU32() % 5];
    const len = rng.intBetween(1, 12);
    out.fill(v, i, Math.min(n, i + len));
    i += len;
  }
  return out;
}

const HOSTILE_PIPELINES = [
  'rle',
  'huffman',
  'delta+shuffle+rle+huffman',
  'shuffle+huffman',
  'delta+rle',
  'stored',
  'delta+pack',
  'delta+shuffle+rle+pack',
];

describe('hostile version-2 input: a ParleError, never a crash or a hang', () => {
  for (const codec of HOSTILE_PIPELINES) {
    it(`every single bit flipped, ${codec}`, async () => {
      const input = smallInput(600, caseSeed(`codec flips ${codec}`));
      const packed = await engine.compress(input, { codec, chunkBytes: 1024 });
      const walked = walk(packed);
      expect(walked.chunks.map((c) => nameOf(c.stages))).toEqual([codec, codec]);
      const seen = new Set<string>();
      for (let bit = 0; bit < packed.length * 8; bit++) {
        const bad = packed.slice();
        bad[bit >> 3] ^= 1 << (bit & 7);
        const error = await parleErrorOf(engine.decompress(bad));
        expect(FAILURES, `bit ${bit}: ${error.message}`).toContain(error.code);
        seen.add(error.code);
        if (codec === 'delta+shuffle+rle+huffman') {
          const reader = engine.createDecompressor();
          const streamed = await parleErrorOf(reader.write(bad).then(() => reader.end()));
          expect(FAILURES, `streaming, bit ${bit}: ${streamed.message}`).toContain(streamed.code);
        }
      }
      expect([...seen]).toEqual(expect.arrayContaining([ErrorCodes.CORRUPT, ErrorCodes.CHECKSUM_MISMATCH]));
    });
  }

  for (const codec of HOSTILE_PIPELINES.filter((c) => c !== 'stored')) {
    it(`every payload bit flipped with the hashes recomputed, ${codec}: the structure checks or the elements' hash catch it, as the reference would`, async () => {
      const seed = caseSeed(`codec resealed flips ${codec}`);
      const input = smallInput(500, seed);
      const packed = await engine.compress(input, { codec });
      const [chunk] = walk(packed).chunks;
      expect(nameOf(chunk.stages)).toBe(codec);
      const payloadAt = chunk.entryAt + ENTRY_BYTES;
      const seen = new Set<string>();
      let accepted = 0;
      for (let bit = 0; bit < chunk.payload.length * 8; bit++) {
        const bad = packed.slice();
        bad[payloadAt + (bit >> 3)] ^= 1 << (bit & 7);
        resealPayload(bad, chunk.entryAt);
        let reference: Uint8Array | Error;
        try {
          reference = ref.decodePayload(chunk.stages, bad.subarray(payloadAt, payloadAt + chunk.payload.length), 2, input.length);
        } catch (e) {
          reference = e as Error;
        }
        const context = `payload bit ${bit} ${describeSeed(seed)}`;
        const outcome = await engine.decompress(bad).then(
          (back) => back,
          (e: unknown) => e,
        );
        if (outcome instanceof ParleError) {
          expect([ErrorCodes.CORRUPT, ErrorCodes.CHECKSUM_MISMATCH], `${context}: ${outcome.message}`).toContain(outcome.code);
          seen.add(outcome.code);
        } else if (outcome instanceof Uint16Array) {
          // only bits that do not matter (padding, unused nibbles) may pass: then the elements are right
          accepted++;
          expectSameArray(outcome, input, context);
          expect(
            reference instanceof Error ? reference.message : sameBytes(reference, bytesOf(input)),
            `${context}: the reference disagrees`,
          ).toBe(true);
        } else {
          expect.fail(`${context}: not a ParleError: ${outcome instanceof Error ? outcome.stack : String(outcome)}`);
        }
      }
      expect(seen.has(ErrorCodes.CORRUPT), `${codec}: some flip was caught by a structure check`).toBe(true);
      expect(accepted).toBeLessThan(chunk.payload.length);
    });
  }

  it('every bit of a version-2 entry flipped, its checksum recomputed', async () => {
    for (const codec of ['delta+shuffle+rle+huffman', 'rle', 'stored']) {
      const input = smallInput(500, caseSeed(`codec entry flips ${codec}`));
      const packed = await engine.compress(input, { codec });
      for (let bit = 0; bit < 28 * 8; bit++) {
        const bad = packed.slice();
        bad[HEADER_BYTES + (bit >> 3)] ^= 1 << (bit & 7);
        resealEntry(bad, HEADER_BYTES);
        const error = await parleErrorOf(engine.decompress(bad));
        expect(
          [ErrorCodes.CORRUPT, ErrorCodes.CHECKSUM_MISMATCH, ErrorCodes.TRUNCATED],
          `${codec} entry bit ${bit}: ${error.message}`,
        ).toContain(error.code);
      }
    }
  });

  /** An engine container of one chunk, its payload as a copy, and a rebuild with a new payload (hashes recomputed). */
  async function oneChunk(input: ParleArray, codec: string) {
    const packed = await engine.compress(input, { codec });
    const walked = walk(packed);
    expect(walked.chunks.length).toBe(1);
    const [chunk] = walked.chunks;
    expect(nameOf(chunk.stages)).toBe(codec);
    const rebuild = (payload: Uint8Array, stages = chunk.stages): Uint8Array =>
      buildContainer(walked.type, bytesOf(input), walked.chunkLength, () => ({ stages, payload }));
    // the rebuild of the unchanged payload is the engine's own container
    expect(sameBytes(rebuild(chunk.payload), packed)).toBe(true);
    return { packed, chunk, payload: chunk.payload.slice(), rebuild };
  }

  async function expectCorrupt(bytes: Uint8Array, message?: RegExp): Promise<void> {
    const error = await parleErrorOf(engine.decompress(bytes));
    expect(error.code, error.message).toBe(ErrorCodes.CORRUPT);
    if (message) expect(error.message).toMatch(message);
    const reader = engine.createDecompressor();
    const streamed = await parleErrorOf(reader.write(bytes).then(() => reader.end()));
    expect(streamed.code, `streaming: ${streamed.message}`).toBe(ErrorCodes.CORRUPT);
  }

  /** 32 x 5 then 32 x 7 (u8), coded 'rle': directory [2, 2, 2, 2], values [5, 7], lengths [31, 31]. */
  const twoRuns = () => new Uint8Array(64).map((_, i) => (i < 32 ? 5 : 7));

  it('rle: run lengths that do not sum to the chunk', async () => {
    const { payload, rebuild } = await oneChunk(twoRuns(), 'rle');
    expect(Array.from(payload)).toEqual([2, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 5, 7, 31, 31]);
    payload[19] = 32;
    await expectCorrupt(rebuild(payload), /sum/);
    payload[19] = 30;
    await expectCorrupt(rebuild(payload), /sum/);
  });

  it('rle: overlong LEB128 (unterminated, and six bytes long), and the wrong number of lengths', async () => {
    const { payload, rebuild } = await oneChunk(twoRuns(), 'rle');
    const unterminated = payload.slice();
    unterminated[19] = 0x83;
    await expectCorrupt(rebuild(unterminated));
    const six = payloadOfStreams([
      { decoded: 2, stored: Uint8Array.of(5, 7) },
      { decoded: 7, stored: Uint8Array.of(31, 0x80 | 31, 0x80, 0x80, 0x80, 0x80, 0x00) },
    ]);
    await expectCorrupt(rebuild(six));
    const three = payloadOfStreams([
      { decoded: 2, stored: Uint8Array.of(5, 7) },
      { decoded: 3, stored: Uint8Array.of(30, 0, 31) },
    ]);
    await expectCorrupt(rebuild(three));
  });

  it('a directory whose decoded sizes exceed the chunk, or whose encoded sizes do not add up', async () => {
    const rng = new Rng(caseSeed('codec directory'));
    const skewed = new Uint8Array(4000).map(() => (rng.nextFloat() < 0.7 ? 0 : rng.nextU32() % 16));
    const huffman = await oneChunk(skewed, 'huffman');
    for (const D of [4001, 3999, 0xffffffff, 0]) {
      const bad = huffman.payload.slice();
      new DataView(bad.buffer).setUint32(0, D, true);
      await expectCorrupt(huffman.rebuild(bad));
    }
    const E = new DataView(huffman.payload.buffer).getUint32(4, true);
    for (const badE of [E - 1, E + 1, 0]) {
      const bad = huffman.payload.slice();
      new DataView(bad.buffer).setUint32(4, badE, true);
      await expectCorrupt(huffman.rebuild(bad));
    }
    const rle = await oneChunk(twoRuns(), 'rle');
    for (const [j, D] of [
      [0, 65], // more run values than elements
      [0, 0], // no runs
      [2, 11], // more than 5 bytes a run
      [2, 0xffffffff],
    ]) {
      const bad = rle.payload.slice();
      new DataView(bad.buffer).setUint32(4 * j, D, true);
      await expectCorrupt(rle.rebuild(bad));
    }
  });

  describe('Huffman streams', () => {
    /** 40000 skewed u8 coded 'huffman': one stream of K >= 3 segments (K = 40 at the 2^10 symbols the engine writes today). */
    async function multiSegment() {
      const n = 40_000;
      const rng = new Rng(caseSeed('codec huffman segments'));
      const input = new Uint8Array(n).map(() => {
        let s = 0;
        while (s < 40 && rng.nextFloat() < 0.55) s++;
        return s;
      });
      const one = await oneChunk(input, 'huffman');
      const stream = one.payload.subarray(8);
      expect(stream[0]).toBe(2);
      const g = stream[1];
      const K = Math.ceil(n / 2 ** g);
      expect(K).toBeGreaterThanOrEqual(3);
      const last = stream[2];
      const offsetsAt = 8 + 3 + Math.ceil((last + 1) / 2);
      const bitsAt = offsetsAt + 4 * K;
      const view = new DataView(one.payload.buffer);
      const ends = Array.from({ length: K }, (_, k) => view.getUint32(offsetsAt + 4 * k, true));
      expect(ends[K - 1]).toBe(one.payload.length - bitsAt);
      return { ...one, n, K, last, offsetsAt, bitsAt, ends };
    }

    it('offsets decreasing, or not ending at the stream end', async () => {
      const s = await multiSegment();
      const K = s.K;
      for (const [k, value] of [
        [0, s.ends[1] + 1],
        [1, s.ends[0] - 1],
        [K - 1, s.ends[K - 1] - 1],
        [K - 1, s.ends[K - 1] + 1],
        [K - 2, 0],
        [0, 0xffffffff],
      ]) {
        const bad = s.payload.slice();
        new DataView(bad.buffer).setUint32(s.offsetsAt + 4 * k, value, true);
        await expectCorrupt(s.rebuild(bad));
      }
    });

    it('a code made incomplete or over-full, a length over 11, fewer than two symbols', async () => {
      const s = await multiSegment();
      const nibble = (p: Uint8Array, sym: number) => (p[11 + (sym >> 1)] >> ((sym & 1) * 4)) & 15;
      const setNibble = (p: Uint8Array, sym: number, v: number) => {
        const at = 11 + (sym >> 1);
        p[at] = (p[at] & ((sym & 1) === 0 ? 0xf0 : 0x0f)) | (v << ((sym & 1) * 4));
      };
      const lengths = Array.from({ length: s.last + 1 }, (_, sym) => nibble(s.payload, sym));
      const shortCode = lengths.findIndex((l) => l > 0 && l < 11);
      const longCode = lengths.indexOf(Math.max(...lengths));
      const variants: [string, (p: Uint8Array) => void][] = [
        ['a code lengthened (incomplete)', (p) => setNibble(p, shortCode, lengths[shortCode] + 1)],
        ['a symbol dropped (incomplete)', (p) => setNibble(p, shortCode, 0)],
        ['a code shortened (over-full)', (p) => setNibble(p, longCode, lengths[longCode] - 1)],
        ['a length of 12', (p) => setNibble(p, longCode, 12)],
        ['a length of 15', (p) => setNibble(p, shortCode, 15)],
        ['one symbol left', (p) => lengths.forEach((_, sym) => setNibble(p, sym, sym === shortCode ? 1 : 0))],
        ['no symbols', (p) => lengths.forEach((_, sym) => setNibble(p, sym, 0))],
      ];
      for (const [what, mutate] of variants) {
        const bad = s.payload.slice();
        mutate(bad);
        await expectCorrupt(s.rebuild(bad));
        expect(() => ref.huffmanDecodeStream(bad.subarray(8), s.n), what).toThrow(/corrupt/);
      }
    });

    it('a segment truncated: its last byte removed, or its end moved one byte early', async () => {
      const s = await multiSegment();
      for (const k of [0, 1, s.K - 1]) {
        // remove the last byte of segment k: later offsets, E and P shrink by one
        const cut = s.bitsAt + s.ends[k] - 1;
        const bad = Buffer.concat([s.payload.subarray(0, cut), s.payload.subarray(cut + 1)]);
        const view = new DataView(bad.buffer, bad.byteOffset, bad.length);
        view.setUint32(4, view.getUint32(4, true) - 1, true);
        for (let j = k; j < s.K; j++) view.setUint32(s.offsetsAt + 4 * j, s.ends[j] - 1, true);
        expect(() => ref.huffmanDecodeStream(bad.subarray(8), s.n)).toThrow(/past its end/);
        await expectCorrupt(s.rebuild(bad));
      }
      for (const k of [0, 1]) {
        const bad = s.payload.slice();
        new DataView(bad.buffer).setUint32(s.offsetsAt + 4 * k, s.ends[k] - 1, true);
        await expectCorrupt(s.rebuild(bad));
      }
    });

    it('an unknown mode, a segment size out of range, raw and one-symbol streams of the wrong length', async () => {
      const s = await multiSegment();
      for (const [at, value] of [
        [8, 3],
        [8, 255],
        [9, 9],
        [9, 21],
        [9, 0],
      ]) {
        const bad = s.payload.slice();
        bad[at] = value;
        await expectCorrupt(s.rebuild(bad));
      }
      // delta+shuffle+rle+huffman of u16 runs: its streams include short ones; make stream 0 mode 1 of 3 bytes, mode 0 of the wrong length
      const input = smallInput(2000, caseSeed('codec modes'));
      const small = await oneChunk(input, 'shuffle+huffman');
      const E0 = new DataView(small.payload.buffer).getUint32(4, true);
      const E1 = new DataView(small.payload.buffer).getUint32(12, true);
      const stream1 = small.payload.subarray(16 + E0, 16 + E0 + E1);
      for (const replacement of [
        Uint8Array.of(1, 0, 0),
        Uint8Array.of(1),
        Buffer.concat([Uint8Array.of(0), new Uint8Array(1999)]),
        Uint8Array.of(0),
      ]) {
        const streams = [
          { decoded: 2000, stored: small.payload.subarray(16, 16 + E0) },
          { decoded: 2000, stored: replacement },
        ];
        expect(stream1.length).toBeGreaterThan(0);
        await expectCorrupt(small.rebuild(payloadOfStreams(streams)));
      }
    });
  });

  it('an entry with stage id 9, stages out of order or repeated, shuffle on u8, a stage after the end, the wrong stream count or reserved bytes set', async () => {
    const u16 = await engine.compress(smallInput(500, caseSeed('codec entry')), { codec: 'delta+rle+huffman' });
    const u8 = await engine.compress(twoRuns(), { codec: 'rle' });
    const at = HEADER_BYTES;
    const cases: [string, Uint8Array, (e: Uint8Array) => void][] = [
      ['stage id 9', u16, (e) => (e[5] = 9)],
      ['stage id 9 first', u16, (e) => (e[4] = 9)],
      ['stage id 5', u16, (e) => (e[6] = 5)],
      ['huffman before rle', u16, (e) => ([e[5], e[6]] = [e[6], e[5]])],
      ['rle before delta', u16, (e) => ([e[4], e[5]] = [e[5], e[4]])],
      ['rle twice', u16, (e) => (e[6] = 3)],
      ['a stage after the end', u16, (e) => (e[7] = 4)],
      ['a stage after a 0 in the middle', u16, (e) => ([e[5], e[6], e[7]] = [0, 4, 0])],
      ['shuffle on u8', u8, (e) => ([e[4], e[5]] = [2, 3])],
      ['stream count + 1', u16, (e) => (e[8] += 1)],
      ['stream count 0', u16, (e) => (e[8] = 0)],
      ['reserved bytes', u16, (e) => (e[25] = 1)],
      ['huffman then pack', u16, (e) => (e[7] = 6)],
      ['pack then huffman', u16, (e) => ([e[6], e[7]] = [6, 4])],
    ];
    for (const [what, good, mutate] of cases) {
      const bad = good.slice();
      mutate(bad.subarray(at, at + ENTRY_BYTES));
      resealEntry(bad, at);
      const error = await parleErrorOf(engine.decompress(bad));
      expect(error.code, `${what}: ${error.message}`).toBe(ErrorCodes.CORRUPT);
    }
  });

  it('a pack chunk in a version-2 container (pack came with version 3)', async () => {
    const good = await engine.compress(smallInput(500, caseSeed('codec pack v2')), { codec: 'delta+pack' });
    expect(walk(good).chunks.map((c) => nameOf(c.stages))).toEqual(['delta+pack']);
    const bad = good.slice();
    bad[8] = 2;
    bad[10] = 0; // version 2's flags: 0
    new DataView(bad.buffer).setUint32(28, Number(xxh64(bad.subarray(0, 28)) & 0xffffffffn), true);
    const error = await parleErrorOf(engine.decompress(bad));
    expect(error.code, error.message).toBe(ErrorCodes.CORRUPT);
    expect(error.message).toMatch(/pack stage in a version-2 container/);
  });

  it('a piped payload not smaller than its elements, a stored payload of the wrong size (hashes recomputed)', async () => {
    const input = smallInput(100, caseSeed('codec payload sizes'));
    const raw = bytesOf(input);
    const asStored = buildContainer('u16', raw, 100, () => ({ stages: [], payload: raw.subarray(0, raw.length - 2) }));
    expect((await parleErrorOf(engine.decompress(asStored))).code).toBe(ErrorCodes.CORRUPT);
    // an rle payload padded with zeros to the elements' size (P = count x size)
    const rle = ref.encodePayload([3], raw, 2);
    expect(rle.length).toBeLessThan(raw.length);
    const padded = Buffer.concat([rle, new Uint8Array(raw.length - rle.length)]);
    const tooBig = buildContainer('u16', raw, 100, () => ({ stages: [3], payload: padded }));
    expect((await parleErrorOf(engine.decompress(tooBig))).code).toBe(ErrorCodes.CORRUPT);
    // 20 bytes cannot hold the 4-stream directory of shuffle+rle
    const tiny = buildContainer('u16', raw, 100, () => ({ stages: [2, 3], payload: new Uint8Array(20) }));
    expect((await parleErrorOf(engine.decompress(tiny))).code).toBe(ErrorCodes.CORRUPT);
  });
});
