// The .parle container: round trips of every element type, the size bound, streaming equal to
// in-memory, and hostile input (truncated, bit-flipped, empty, foreign, lying headers), in
// version 2 (what writers write) and, on the fixtures of test/fixtures/v1/, version 1.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine, type Engine } from '../ts/engine.js';
import { ErrorCodes, ParleError } from '../ts/errors.js';
import { xxh64 } from '../ts/format/checksum.js';
import { inspectContainer, readAtBytes } from '../ts/format/container.js';
import { ENTRY_BYTES, HEADER_BYTES, MAGIC, readHeader, readIndex } from '../ts/format/layout.js';
import { bytesOf, type ParleArray } from '../ts/types.js';
import { treeHash } from './support/codec-reference.js';
import { Rng, caseSeed, describeSeed, fillRuns, randomF32Bits } from './support/random.js';

let engine: Engine;
beforeAll(async () => {
  engine = await createEngine({ workers: 1, gpu: 'off' });
});
afterAll(() => engine.destroy());

const MAKERS = {
  u8: (n: number) => new Uint8Array(n),
  u16: (n: number) => new Uint16Array(n),
  u32: (n: number) => new Uint32Array(n),
  i32: (n: number) => new Int32Array(n),
  f32: (n: number) => new Float32Array(n),
};

function runsOf(type: keyof typeof MAKERS, n: number, seed: number, maxRun = 20): ParleArray {
  const array = MAKERS[type](n);
  const b = bytesOf(array);
  const words = array.BYTES_PER_ELEMENT === 1 ? b : array.BYTES_PER_ELEMENT === 2 ? new Uint16Array(b.buffer) : new Uint32Array(b.buffer);
  fillRuns(new Rng(seed), words, { kind: 'uniform', maxRun });
  return array;
}

/** Resolves to the ParleError a promise rejects with (fails if it resolves or throws anything else). */
async function parleErrorOf(promise: Promise<unknown>): Promise<ParleError> {
  const result = await promise.then(
    () => 'resolved',
    (e: unknown) => e,
  );
  if (!(result instanceof ParleError)) throw new Error(`expected a ParleError, got ${String(result)}`);
  return result;
}

describe('round trips', () => {
  for (const type of Object.keys(MAKERS) as (keyof typeof MAKERS)[]) {
    for (const n of [0, 1, 17, 1000, 100_003]) {
      it(`${type} n=${n}, chunks of 1 KiB and of the default size`, async () => {
        const seed = caseSeed(`format ${type} ${n}`);
        const input = runsOf(type, n, seed);
        for (const chunkBytes of [1024, undefined]) {
          const packed = await engine.compress(input, { chunkBytes });
          const back = await engine.decompress(packed);
          expect(back.constructor, describeSeed(seed)).toBe(input.constructor);
          expect(Buffer.compare(bytesOf(back), bytesOf(input)), describeSeed(seed)).toBe(0);
        }
      });
    }
  }

  it('f32 NaN payloads, -0 and denormals survive', async () => {
    const bitsIn = randomF32Bits(new Rng(caseSeed('format f32 specials')), 5000, 0.5);
    const input = new Float32Array(bitsIn.buffer);
    const back = await engine.decompress(await engine.compress(input, { chunkBytes: 1024 }));
    expect(Array.from(new Uint32Array(back.buffer))).toEqual(Array.from(bitsIn));
  });

  it('codes runs and stores noise, and never exceeds input + 32 + 32 per chunk + the chunk index', async () => {
    const rng = new Rng(caseSeed('format noise'));
    const noise = new Uint8Array(50_000).map(() => rng.nextU32());
    const packed = await engine.compress(noise, { chunkBytes: 4096 });
    const report = inspectContainer(readAtBytes(packed), packed.length);
    expect(report.version).toBe(4);
    expect(report.chunks.every((c) => c.encoding === 'stored')).toBe(true);
    expect(report.chunkCount).toBeGreaterThanOrEqual(2);
    expect(packed.length).toBe(noise.length + HEADER_BYTES + ENTRY_BYTES * report.chunkCount + 8 * report.chunkCount + 4);

    // version 2: the chooser's pipeline for each chunk (rle, or rle+huffman, ...), never stored here
    const runs = runsOf('u8', 50_000, caseSeed('format runs'), 40);
    const packedRuns = await engine.compress(runs, { chunkBytes: 4096 });
    const reportRuns = inspectContainer(readAtBytes(packedRuns), packedRuns.length);
    expect(reportRuns.chunks.every((c) => c.encoding !== 'stored')).toBe(true);
    expect(packedRuns.length).toBeLessThan(runs.length / 5);
  });

  it('a streaming writer fed odd pieces writes the same bytes; a streaming reader fed odd pieces reads them back', async () => {
    const seed = caseSeed('format streaming');
    const rng = new Rng(seed);
    const input = runsOf('u16', 30_001, seed);
    const inputBytes = bytesOf(input);
    const whole = await engine.compress(input, { chunkBytes: 2048 });
    const writer = engine.createCompressor('u16', input.length, { chunkBytes: 2048 });
    const parts: Uint8Array[] = [];
    for (let at = 0; at < inputBytes.length;) {
      const step = rng.intBetween(1, 5000);
      parts.push(...(await writer.write(inputBytes.subarray(at, at + step))));
      at += step;
    }
    parts.push(...(await writer.end()));
    expect(Buffer.compare(Buffer.concat(parts), whole), describeSeed(seed)).toBe(0);

    const reader = engine.createDecompressor();
    const decoded: Uint8Array[] = [];
    for (let at = 0; at < whole.length;) {
      const step = rng.intBetween(1, 3000);
      decoded.push(...(await reader.write(whole.subarray(at, at + step))));
      at += step;
    }
    decoded.push(...(await reader.end()));
    expect(reader.header?.type).toBe('u16');
    expect(Buffer.compare(Buffer.concat(decoded), inputBytes), describeSeed(seed)).toBe(0);
  });

  it("decoder 'gpu': a streaming writer over several batches writes compress's mode-3 bytes; they differ from 'cpu' and read back", async () => {
    const seed = caseSeed('format streaming decoder gpu');
    const rng = new Rng(seed);
    // skewed bytes (the chooser codes them with huffman), 5 MB: two batches of 64 KiB chunks
    const input = new Uint8Array(5_000_003);
    for (let i = 0; i < input.length; i++) {
      let s = 0;
      while (s < 255 && rng.nextFloat() < 0.6) s++;
      input[i] = s;
    }
    const streamed = async (decoder: 'cpu' | 'gpu' | undefined) => {
      const writer = engine.createCompressor('u8', input.length, { chunkBytes: 65_536, ...(decoder ? { decoder } : {}) });
      const parts: Uint8Array[] = [];
      for (let at = 0; at < input.length;) {
        const step = rng.intBetween(1, 700_000);
        parts.push(...(await writer.write(input.subarray(at, at + step))));
        at += step;
      }
      parts.push(...(await writer.end()));
      return Buffer.concat(parts);
    };
    const gpu = await streamed('gpu');
    const cpu = await streamed('cpu');
    expect(Buffer.compare(gpu, await engine.compress(input, { chunkBytes: 65_536, decoder: 'gpu' })), describeSeed(seed)).toBe(0);
    expect(Buffer.compare(cpu, await engine.compress(input, { chunkBytes: 65_536, decoder: 'cpu' })), describeSeed(seed)).toBe(0);
    expect(Buffer.compare(await streamed(undefined), cpu), 'the default is decoder cpu').toBe(0);
    expect(Buffer.compare(gpu, cpu)).not.toBe(0);
    expect(gpu.length).toBeGreaterThan(cpu.length);
    expect(gpu.length / cpu.length).toBeLessThan(1.02);
    expect(Buffer.compare(bytesOf(await engine.decompress(gpu)), input), describeSeed(seed)).toBe(0);
    expect(inspectContainer(readAtBytes(gpu), gpu.length).chunks.some((c) => c.encoding.includes('huffman'))).toBe(true);
  });

  it("createCompressor's decoder is checked as compress's: INVALID_OPTION", async () => {
    for (const bad of ['GPU', 'wasm', '', 3, null]) {
      expect(() => engine.createCompressor('u8', 10, { decoder: bad as never }), String(bad)).toThrow(
        expect.objectContaining({
          code: ErrorCodes.INVALID_OPTION,
          message: expect.stringMatching(/^options\.decoder must be 'cpu', 'gpu'/),
        }),
      );
    }
  });

  it('a writer refuses more or fewer bytes than announced', async () => {
    const writer = engine.createCompressor('u32', 2);
    await expect(writer.write(new Uint8Array(12))).rejects.toThrow(ParleError);
    const short = engine.createCompressor('u32', 2);
    await short.write(new Uint8Array(6));
    await expect(short.end()).rejects.toMatchObject({ code: ErrorCodes.UNALIGNED_LENGTH });
  });
});

describe("the chunk index (version 4): each entry's offset after the last payload", () => {
  /** Little-endian u64 at `at` as a number. */
  const u64 = (bytes: Uint8Array, at: number) => Number(new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(at, true));
  /** A copy of `bytes` with its index's checksum recomputed (so only the offsets' own checks can fail). */
  const resealed = (bytes: Uint8Array, chunks: number) => {
    const out = bytes.slice();
    const at = out.length - (8 * chunks + 4);
    new DataView(out.buffer).setUint32(out.length - 4, Number(xxh64(out.subarray(at, at + 8 * chunks)) & 0xffffffffn), true);
    return out;
  };
  /** The header's byte 11 set to `value`, its checksum recomputed. */
  const withByte11 = (bytes: Uint8Array, value: number) => {
    const out = bytes.slice();
    out[11] = value;
    new DataView(out.buffer).setUint32(28, Number(xxh64(out.subarray(0, 28)) & 0xffffffffn), true);
    return out;
  };
  /** The error code of decoding `bytes` in memory and streaming in pieces of 100 bytes (both must agree). */
  const codesOf = async (bytes: Uint8Array) => {
    const inMemory = (await parleErrorOf(engine.decompress(bytes))).code;
    const reader = engine.createDecompressor();
    const streamed = (
      await parleErrorOf(
        (async () => {
          for (let at = 0; at < bytes.length; at += 100) await reader.write(bytes.subarray(at, at + 100));
          await reader.end();
        })(),
      )
    ).code;
    return [inMemory, streamed];
  };

  let packed: Uint8Array;
  const chunks = 3;
  beforeAll(async () => {
    packed = await engine.compress(runsOf('u16', 1500, caseSeed('chunk index')), { chunkBytes: 1024 });
  });

  it('lists each entry; the flag is bit 4 of byte 11; one chunk has none', async () => {
    expect(packed[11]).toBe(0x10);
    const report = inspectContainer(readAtBytes(packed), packed.length);
    expect(report.chunkCount).toBe(chunks);
    expect(report.indexBytes).toBe(8 * chunks + 4);
    const indexAt = packed.length - (8 * chunks + 4);
    report.chunks.forEach((c, i) => expect(u64(packed, indexAt + 8 * i), `chunk ${i}`).toBe(c.payloadOffset - ENTRY_BYTES));
    const last = report.chunks[chunks - 1];
    expect(last.payloadOffset + last.payloadBytes).toBe(indexAt);
    expect(new DataView(packed.buffer, packed.byteOffset).getUint32(packed.length - 4, true)).toBe(
      Number(xxh64(packed.subarray(indexAt, indexAt + 8 * chunks)) & 0xffffffffn),
    );
    // random access: the index alone finds a chunk's entry
    const offsets = readIndex(packed.subarray(indexAt), readHeader(packed), indexAt);
    expect(Array.from(offsets)).toEqual(report.chunks.map((c) => c.payloadOffset - ENTRY_BYTES));
    const one = await engine.compress(runsOf('u16', 400, caseSeed('chunk index one')), { chunkBytes: 1024 });
    expect(one[11]).toBe(0);
    expect(inspectContainer(readAtBytes(one), one.length).indexBytes).toBeUndefined();
    const only = inspectContainer(readAtBytes(one), one.length).chunks[0];
    expect(only.payloadOffset + only.payloadBytes).toBe(one.length);
  });

  it('a flipped index byte, offsets that are not the entries, a missing or unflagged index: CORRUPT or TRUNCATED', async () => {
    const indexAt = packed.length - (8 * chunks + 4);
    const flipped = packed.slice();
    flipped[indexAt + 9] ^= 0x04;
    expect(await codesOf(flipped)).toEqual([ErrorCodes.CORRUPT, ErrorCodes.CORRUPT]);
    // chunk 1 listed 32 bytes later (the checksum resealed)
    const moved = packed.slice();
    new DataView(moved.buffer).setBigUint64(indexAt + 8, BigInt(u64(packed, indexAt + 8) + 32), true);
    expect(await codesOf(resealed(moved, chunks))).toEqual([ErrorCodes.CORRUPT, ErrorCodes.CORRUPT]);
    expect(() => readIndex(resealed(moved, chunks).subarray(indexAt), readHeader(packed), indexAt)).not.toThrow();
    // chunk 1 listed before chunk 0's end: readIndex itself refuses
    const early = packed.slice();
    new DataView(early.buffer).setBigUint64(indexAt + 8, BigInt(u64(packed, indexAt) + 31), true);
    expect(() => readIndex(resealed(early, chunks).subarray(indexAt), readHeader(packed), indexAt)).toThrow(
      expect.objectContaining({ code: ErrorCodes.CORRUPT }),
    );
    // the flag without the index, the index without the flag, reserved bits
    expect(await codesOf(packed.subarray(0, indexAt))).toEqual([ErrorCodes.TRUNCATED, ErrorCodes.TRUNCATED]);
    expect(await codesOf(withByte11(packed, 0))).toEqual([ErrorCodes.CORRUPT, ErrorCodes.CORRUPT]);
    expect(await codesOf(withByte11(packed, 0x30))).toEqual([ErrorCodes.UNSUPPORTED_VERSION, ErrorCodes.UNSUPPORTED_VERSION]);
    const longer = new Uint8Array(packed.length + 1);
    longer.set(packed);
    expect(await codesOf(longer)).toEqual([ErrorCodes.CORRUPT, ErrorCodes.CORRUPT]);
  });
});

describe('hostile input: a ParleError with a code, never a crash, a hang or a huge allocation', () => {
  let packed: Uint8Array;
  beforeAll(async () => {
    packed = await engine.compress(runsOf('u16', 3000, caseSeed('hostile base')), { chunkBytes: 1024 });
  });

  it('empty input', async () => {
    expect((await parleErrorOf(engine.decompress(new Uint8Array(0)))).code).toBe(ErrorCodes.NOT_PARLE);
    await expect(engine.createDecompressor().end()).rejects.toMatchObject({ code: ErrorCodes.NOT_PARLE });
  });

  it('not a .parle file', async () => {
    const text = new TextEncoder().encode('hello, this is not a parle container at all');
    expect((await parleErrorOf(engine.decompress(text))).code).toBe(ErrorCodes.NOT_PARLE);
    // The streaming reader notices at the first byte.
    await expect(engine.createDecompressor().write(text.subarray(0, 1))).rejects.toMatchObject({ code: ErrorCodes.NOT_PARLE });
  });

  it('truncated at every length', async () => {
    for (let length = 1; length < packed.length; length++) {
      const error = await parleErrorOf(engine.decompress(packed.subarray(0, length)));
      expect([ErrorCodes.TRUNCATED], `length ${length}`).toContain(error.code);
      const reader = engine.createDecompressor();
      const streamed = await parleErrorOf(reader.write(packed.subarray(0, length)).then(() => reader.end()));
      expect(streamed.code, `streaming, length ${length}`).toBe(ErrorCodes.TRUNCATED);
    }
  });

  it('trailing bytes', async () => {
    const longer = new Uint8Array(packed.length + 3);
    longer.set(packed);
    expect((await parleErrorOf(engine.decompress(longer))).code).toBe(ErrorCodes.CORRUPT);
  });

  it('every single bit flipped', async () => {
    const seen = new Set<string>();
    for (let bit = 0; bit < packed.length * 8; bit++) {
      const bad = packed.slice();
      bad[bit >> 3] ^= 1 << (bit & 7);
      const error = await parleErrorOf(engine.decompress(bad));
      seen.add(error.code);
      const reader = engine.createDecompressor();
      await parleErrorOf(reader.write(bad).then(() => reader.end()));
    }
    // Magic, header checksum, entries and payload checksums all catch something.
    expect([...seen].sort()).toEqual(
      expect.arrayContaining([ErrorCodes.NOT_PARLE, ErrorCodes.UNSUPPORTED_VERSION, ErrorCodes.CORRUPT, ErrorCodes.CHECKSUM_MISMATCH]),
    );
  });

  /** A header of `version` claiming `elementCount` u8 elements in chunks of `chunkLength`, with a valid checksum. */
  function lyingHeader(elementCount: bigint, chunkLength: number, chunkCount: number, version: 1 | 2 | 3 = 1): Uint8Array {
    const header = new Uint8Array(HEADER_BYTES);
    const view = new DataView(header.buffer);
    header.set(MAGIC);
    view.setUint8(8, version);
    view.setUint8(9, 0);
    if (version === 3) view.setUint8(10, 5); // the level
    view.setUint32(12, chunkLength, true);
    view.setBigUint64(16, elementCount, true);
    view.setUint32(24, chunkCount, true);
    view.setUint32(28, Number(xxh64(header.subarray(0, 28)) & 0xffffffffn), true);
    return header;
  }

  for (const version of [1, 2, 3] as const) {
    it(`a version-${version} header claiming 2^50 elements is refused before anything of that size is allocated`, async () => {
      const bytes = lyingHeader(2n ** 50n, 1 << 26, 2 ** 24, version);
      const before = process.memoryUsage().arrayBuffers;
      const error = await parleErrorOf(engine.decompress(bytes, { maxElements: Number.MAX_SAFE_INTEGER }));
      expect(error.code).toBe(ErrorCodes.TRUNCATED);
      expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(64 << 20);
      // And with the default limit it is refused up front.
      expect((await parleErrorOf(engine.decompress(bytes))).code).toBe(ErrorCodes.LIMIT_EXCEEDED);
      // The streaming reader holds one chunk at a time (no limit by default): the file is short.
      const reader = engine.createDecompressor();
      expect((await parleErrorOf(reader.write(bytes).then(() => reader.end()))).code).toBe(ErrorCodes.TRUNCATED);
    });
  }

  it('a header of version 5, a version-2 header with flags set or a version-3 header with byte 11 set is UNSUPPORTED_VERSION; a version-3 level outside 1..9 is CORRUPT', async () => {
    const reseal = (h: Uint8Array) => new DataView(h.buffer).setUint32(28, Number(xxh64(h.subarray(0, 28)) & 0xffffffffn), true);
    const v5 = lyingHeader(0n, 1, 0, 3);
    v5[8] = 5;
    reseal(v5);
    expect((await parleErrorOf(engine.decompress(v5))).code).toBe(ErrorCodes.UNSUPPORTED_VERSION);
    const flagged = lyingHeader(0n, 1, 0, 2);
    flagged[10] = 1;
    reseal(flagged);
    expect((await parleErrorOf(engine.decompress(flagged))).code).toBe(ErrorCodes.UNSUPPORTED_VERSION);
    const reserved = lyingHeader(0n, 1, 0, 3);
    reserved[11] = 1;
    reseal(reserved);
    expect((await parleErrorOf(engine.decompress(reserved))).code).toBe(ErrorCodes.UNSUPPORTED_VERSION);
    for (const level of [0, 10, 255]) {
      const h = lyingHeader(0n, 1, 0, 3);
      h[10] = level;
      reseal(h);
      expect((await parleErrorOf(engine.decompress(h))).code, `level ${level}`).toBe(ErrorCodes.CORRUPT);
    }
    // the honest empty headers of every version decode to nothing
    for (const version of [1, 2, 3] as const) expect((await engine.decompress(lyingHeader(0n, 1, 0, version))).length).toBe(0);
  });

  it('a header claiming more elements than maxElements', async () => {
    const error = await parleErrorOf(engine.decompress(packed, { maxElements: 10 }));
    expect(error.code).toBe(ErrorCodes.LIMIT_EXCEEDED);
    await expect(engine.createDecompressor({ maxElements: 10 }).write(packed)).rejects.toMatchObject({ code: ErrorCodes.LIMIT_EXCEEDED });
  });

  it('an entry claiming a payload longer than the file', async () => {
    const bad = packed.slice();
    new DataView(bad.buffer).setUint32(HEADER_BYTES + 12, 1000, true);
    const error = await parleErrorOf(engine.decompress(bad));
    expect([ErrorCodes.TRUNCATED, ErrorCodes.CORRUPT]).toContain(error.code);
  });

  /**
   * Version 2, codec 'rle', one chunk of 32 x 5 then 32 x 7 (u8): payload = directory [D0 2, E0 2,
   * D1 2, E1 2] (values, lengths), values [5, 7], LEB128 lengths - 1 [31, 31]. Returns the
   * container and a function that recomputes the payload's tree hash (entry + 16) and the entry
   * checksum (entry + 28: low 32 bits of XXH64 of entry bytes 0..27).
   */
  async function v2Rle(): Promise<{ bytes: Uint8Array; payloadAt: number; reseal: () => void }> {
    const bytes = await engine.compress(
      new Uint8Array(64).map((_, i) => (i < 32 ? 5 : 7)),
      { codec: 'rle' },
    );
    const payloadAt = HEADER_BYTES + ENTRY_BYTES;
    expect(bytes[8]).toBe(4);
    expect(Array.from(bytes.subarray(HEADER_BYTES + 4, HEADER_BYTES + 8))).toEqual([3, 0, 0, 0]);
    expect(Array.from(bytes.subarray(payloadAt))).toEqual([2, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 5, 7, 31, 31]);
    const reseal = () => {
      const view = new DataView(bytes.buffer, bytes.byteOffset);
      view.setUint32(HEADER_BYTES + 16, treeHash(bytes.subarray(payloadAt)), true);
      view.setUint32(HEADER_BYTES + 28, Number(xxh64(bytes.subarray(HEADER_BYTES, HEADER_BYTES + 28)) & 0xffffffffn), true);
    };
    return { bytes, payloadAt, reseal };
  }

  /**
   * Version 1: test/fixtures/v1/u8-runs.parle (5000 u8, RLE in chunks of 1024). Its first entry's
   * payload is R run values then R LEB128 lengths - 1; `reseal` recomputes the payload's XXH64 at
   * entry + 16 (version 1 entries have no entry checksum).
   */
  function v1Rle(): { bytes: Uint8Array; lengthsAt: number; runs: number; reseal: () => void } {
    const bytes = new Uint8Array(readFileSync(new URL('./fixtures/v1/u8-runs.parle', import.meta.url)));
    const view = new DataView(bytes.buffer);
    expect(bytes[8]).toBe(1);
    expect(bytes[HEADER_BYTES + 4]).toBe(1); // rle
    const runs = view.getUint32(HEADER_BYTES + 8, true);
    const payloadBytes = view.getUint32(HEADER_BYTES + 12, true);
    const payloadAt = HEADER_BYTES + ENTRY_BYTES;
    const reseal = () => view.setBigUint64(HEADER_BYTES + 16, xxh64(bytes.subarray(payloadAt, payloadAt + payloadBytes)), true);
    // the fixture's lengths are one byte each (R bytes after R values): the tests below rely on it
    expect(payloadBytes).toBe(2 * runs);
    return { bytes, lengthsAt: payloadAt + runs, runs, reseal };
  }

  it('rle lengths that do not sum to the chunk, with recomputed checksums (version 2)', async () => {
    for (const last of [32, 30]) {
      const { bytes, payloadAt, reseal } = await v2Rle();
      bytes[payloadAt + 19] = last; // the second run: 33 or 31 elements instead of 32
      reseal();
      const error = await parleErrorOf(engine.decompress(bytes));
      expect(error.code).toBe(ErrorCodes.CORRUPT);
      expect(error.message).toMatch(/sum/);
    }
  });

  it('rle lengths that do not sum to the chunk, with recomputed checksums (version 1)', async () => {
    const { bytes, lengthsAt, reseal } = v1Rle();
    expect(bytes[lengthsAt]).toBeLessThan(127);
    bytes[lengthsAt] += 1;
    reseal();
    const error = await parleErrorOf(engine.decompress(bytes));
    expect(error.code).toBe(ErrorCodes.CORRUPT);
    expect(error.message).toMatch(/sum/);
  });

  it('overlong LEB128 run lengths, with recomputed checksums (version 2)', async () => {
    const { bytes, payloadAt, reseal } = await v2Rle();
    bytes[payloadAt + 19] = 0x83; // continuation bit with nothing after it
    reseal();
    expect((await parleErrorOf(engine.decompress(bytes))).code).toBe(ErrorCodes.CORRUPT);
  });

  it('overlong LEB128 run lengths, with recomputed checksums (version 1)', async () => {
    const { bytes, lengthsAt, runs, reseal } = v1Rle();
    bytes[lengthsAt + runs - 1] |= 0x80; // the last length continues past the payload
    reseal();
    expect((await parleErrorOf(engine.decompress(bytes))).code).toBe(ErrorCodes.CORRUPT);
  });

  it('the recomputed checksums alone are accepted (the helpers above change nothing else)', async () => {
    const two = await v2Rle();
    two.reseal();
    expect(Array.from(await engine.decompress(two.bytes))).toEqual(Array.from(new Uint8Array(64).map((_, i) => (i < 32 ? 5 : 7))));
    const one = v1Rle();
    one.reseal();
    const raw = new Uint8Array(readFileSync(new URL('./fixtures/v1/u8-runs.raw', import.meta.url)));
    expect(Buffer.compare(bytesOf(await engine.decompress(one.bytes)), raw)).toBe(0);
  });
});
