/**
 * Mutated version-3 containers for the fuzz tests (test/fuzz.test.ts on the CPU path,
 * test/engine-gpu.test.ts on the GPU path): samples of every pipeline, and mutations as stored
 * (bit flips, random bytes, cuts, inserted and deleted bytes) and as a liar would make them
 * (fields changed, then every checksum recomputed).
 */
import { expect } from 'vitest';
import type { Engine } from '../../ts/engine.js';
import { ErrorCodes, ParleError, type ErrorCode } from '../../ts/errors.js';
import { xxh64 } from '../../ts/format/checksum.js';
import { ENTRY_BYTES, HEADER_BYTES, readEntry, readHeader, writeEntry } from '../../ts/format/layout.js';
import { type ParleArray } from '../../ts/types.js';
import { treeHash } from './codec-reference.js';
import { Rng, caseSeed, describeSeed, fillRuns, randomF32Bits } from './random.js';

/** The codes a reader may fail a mutated container with. */
export const FUZZ_FAILURES: readonly ErrorCode[] = [
  ErrorCodes.CORRUPT,
  ErrorCodes.CHECKSUM_MISMATCH,
  ErrorCodes.NOT_PARLE,
  ErrorCodes.UNSUPPORTED_VERSION,
  ErrorCodes.TRUNCATED,
  ErrorCodes.LIMIT_EXCEEDED,
];

/**
 * FUZZ_FAILURES of a decode to the device: also UNSUPPORTED_TYPE, where a resealed header names a
 * type of version 4 (i16, f64, ...) that no DeviceArray holds.
 */
export const DEVICE_FUZZ_FAILURES: readonly ErrorCode[] = [...FUZZ_FAILURES, ErrorCodes.UNSUPPORTED_TYPE];

export interface Sample {
  name: string;
  input: ParleArray;
  packed: Uint8Array;
  /**
   * What `packed` decodes to: `input` itself, or for a lossy sample its reconstruction. A
   * mutated container that decodes must decode to exactly this (the entries hash the decoded
   * elements: docs/format.md).
   */
  decoded: ParleArray;
  /** Byte offsets of each chunk's entry. */
  entries: number[];
}

/** The entries' offsets, walking the interleaved table. */
function entryOffsets(packed: Uint8Array): number[] {
  const view = new DataView(packed.buffer, packed.byteOffset, packed.length);
  const chunks = view.getUint32(24, true);
  const out: number[] = [];
  // version 4: a shape block of 8 bytes a dim and a checksum after the header
  const rank = packed[11] & 0x0f; // bits 0..3; bit 4 is the chunk index flag
  let at = HEADER_BYTES + (rank > 0 ? 8 * rank + 4 : 0);
  for (let i = 0; i < chunks; i++) {
    out.push(at);
    at += ENTRY_BYTES + view.getUint32(at + 12, true);
  }
  return out;
}

/**
 * Streams of the chunks at `entries` whose first byte is 3 (Huffman mode 3), counted in the
 * chunks with a huffman stage (id 4): the stream count S is the one of 1, 2, 4, 8 whose directory
 * sizes add up to the payload (P - 8 S).
 */
function modeThreeStreams(packed: Uint8Array, entries: number[]): number {
  const view = new DataView(packed.buffer, packed.byteOffset, packed.length);
  let count = 0;
  for (const at of entries) {
    if (!packed.subarray(at + 4, at + 8).includes(4)) continue;
    const P = view.getUint32(at + 12, true);
    const payload = at + ENTRY_BYTES;
    for (const S of [1, 2, 4, 8]) {
      let sum = 0;
      for (let j = 0; j < S; j++) sum += view.getUint32(payload + 8 * j + 4, true);
      if (sum !== P - 8 * S) continue;
      for (let j = 0, stream = payload + 8 * S; j < S; stream += view.getUint32(payload + 8 * j + 4, true), j++) {
        if (packed[stream] === 3) count++;
      }
      break;
    }
  }
  return count;
}

/** Recomputes a chunk's payload tree hash and its entry checksum (a liar's container passes both). */
export function reseal(bytes: Uint8Array, entryAt: number): void {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
  const P = view.getUint32(entryAt + 12, true);
  const end = Math.min(bytes.length, entryAt + ENTRY_BYTES + P);
  if (entryAt + ENTRY_BYTES <= end) view.setUint32(entryAt + 16, treeHash(bytes.subarray(entryAt + ENTRY_BYTES, end)), true);
  view.setUint32(entryAt + 28, Number(xxh64(bytes.subarray(entryAt, entryAt + 28)) & 0xffffffffn), true);
}

/** Recomputes the header checksum. */
function resealHeader(bytes: Uint8Array): void {
  new DataView(bytes.buffer, bytes.byteOffset).setUint32(28, Number(xxh64(bytes.subarray(0, 28)) & 0xffffffffn), true);
}

/** The samples: every element type (a DeviceArray holds each, so the GPU path's tests take them all). */
export async function makeSamples(engine: Engine): Promise<Sample[]> {
  const rng = new Rng(caseSeed('fuzz v3 samples'));
  const u8 = fillRuns(rng, new Uint8Array(6000), { kind: 'uniform', maxRun: 6 }) as Uint8Array;
  for (let i = 0; i < u8.length; i++) u8[i] %= 40; // a small alphabet: Huffman codes it
  const u16 = fillRuns(rng, new Uint16Array(5000), { kind: 'uniform', maxRun: 12 }) as Uint16Array;
  for (let i = 0; i < u16.length; i++) u16[i] %= 300;
  const i32 = new Int32Array(3000).map((_, i) => 1000 * Math.floor(i / 37) - 70_000 + (i % 5));
  const f32 = new Float32Array(randomF32Bits(rng, 2500, 0.05).buffer);
  const smooth = new Float32Array(4000).map((_, i) => Math.sin(i / 40) * 100);
  const image = new Uint8Array(40 * 50 * 3).map(
    (_, i) => (Math.floor(i / 150) * 3 + ((i / 3) % 50) * 2 + (i % 3) * 40 + (rng.nextU32() % 4)) & 255,
  );
  const volume = new Uint16Array(6 * 20 * 30).map(
    (_, i) => 3000 + Math.round(900 * Math.sin(Math.floor(i / 600) / 2) * Math.cos((Math.floor(i / 30) % 20) / 4) * Math.sin((i % 30) / 5)),
  );
  const grid = new Float32Array(50 * 60).map((_, i) => Math.sin(Math.floor(i / 60) / 9) * Math.cos((i % 60) / 7) * 50);
  // decimals with 2, 3 and 1 places, a few NaN and -0 exceptions
  const records = new Float32Array(600 * 3).map((_, i) =>
    i % 97 === 5
      ? NaN
      : i % 131 === 7
        ? -0
        : Math.round((Math.sin(i / 30) * 40 + (i % 3)) * [100, 1000, 10][i % 3]) / [100, 1000, 10][i % 3],
  );
  // version 4's element types: f64 decimals with exceptions (the decimal map's 12-byte
  // exceptions), an f64 grid (float order), i64 stamps (word planes), i16 and f16 shaped
  const f64Records = new Float64Array(400 * 2).map((_, i) =>
    i % 89 === 3 ? NaN : Math.round((Math.cos(i / 25) * 300 + (i % 2)) * [1000, 10][i % 2]) / [1000, 10][i % 2],
  );
  const f64Grid = new Float64Array(30 * 40).map((_, i) => Math.sin(Math.floor(i / 40) / 7) * Math.cos((i % 40) / 5) * 1e4);
  const stamps = new BigInt64Array(1500).map((_, i) => 1_700_000_000_000n + BigInt(1000 * i + (i % 3)));
  // the f64 lossy mode: its 24-byte quantize header, 12-byte exceptions (NaN payloads, huge
  // magnitudes) and the codes' pipeline at width 4 on an f64 chunk
  const f64Smooth = new Float64Array(3000).map((_, i) =>
    i % 211 === 9 ? 1e300 : i % 157 === 4 ? -Infinity : Math.sin(i / 35) * 80 + i / 1000,
  );
  new BigUint64Array(f64Smooth.buffer)[1234] = 0x7ff8000000000abcn;
  const dem = new Int16Array(40 * 50).map((_, i) => Math.round(-500 + 800 * Math.sin(Math.floor(i / 50) / 6) * Math.cos((i % 50) / 8)));
  const specs: [string, ParleArray, Record<string, unknown>][] = [
    ['u8 auto', u8, { chunkBytes: 2048 }],
    ['u8 delta+huffman', u8, { codec: 'delta+huffman', chunkBytes: 2048 }],
    ['u8 rle+huffman', u8, { codec: 'rle+huffman', chunkBytes: 2048 }],
    ['u16 shuffle+rle+huffman', u16, { codec: 'shuffle+rle+huffman', chunkBytes: 4096 }],
    ['u16 delta+shuffle+huffman', u16, { codec: 'delta+shuffle+huffman', chunkBytes: 4096 }],
    ['i32 delta+rle', i32, { codec: 'delta+rle', chunkBytes: 4096 }],
    ['i32 level 9', i32, { level: 9, chunkBytes: 4096 }],
    ['f32 stored', f32, { codec: 'stored', chunkBytes: 4096 }],
    ['f32 huffman', f32, { codec: 'huffman', chunkBytes: 4096 }],
    ['f32 lossy', smooth, { errorBound: { abs: 0.01 }, chunkBytes: 4096 }],
    // pack streams: the payload lies (cases 7-10) land in their block headers (bit width,
    // exception count and width, reference), exception positions and packed lanes
    ['u16 delta+pack', u16, { codec: 'delta+pack', chunkBytes: 4096 }],
    ['i32 delta+shuffle+pack', i32, { codec: 'delta+shuffle+pack', chunkBytes: 4096 }],
    ['f32 delta+shuffle+rle+pack', smooth, { codec: 'delta+shuffle+rle+pack', chunkBytes: 4096 }],
    ['u8 rle+pack', u8, { codec: 'rle+pack', chunkBytes: 2048 }],
    // Huffman mode 3 (32 interleaved lanes a segment): the payload lies land in its header and
    // segment ends (units read past a segment, left unread, odd lengths), flips in its units
    ['u8 delta+huffman, mode 3', u8, { codec: 'delta+huffman', chunkBytes: 2048, decoder: 'gpu' }],
    ['u16 shuffle+rle+huffman, mode 3', u16, { codec: 'shuffle+rle+huffman', chunkBytes: 4096, decoder: 'gpu' }],
    ['f32 delta+shuffle+huffman, mode 3', smooth, { codec: 'delta+shuffle+huffman', chunkBytes: 8192, decoder: 'gpu' }],
    // version 4's predict stage (stage 7): the lies land in its header (map, predictor, fields,
    // geometry, exponents, exceptions) and its field blocks; the shape block in the header
    ['u8 image, shape', image, { shape: [40, 50, 3], chunkBytes: 2048 }],
    ['u16 volume, shape', volume, { shape: [6, 20, 30], chunkBytes: 4096 }],
    ['f32 grid, shape', grid, { shape: [50, 60], chunkBytes: 4096 }],
    ['f32 decimal records, shape', records, { shape: [600, 3], chunkBytes: 4096 }],
    ['f64 decimal records, shape', f64Records, { shape: [400, 2], chunkBytes: 4096 }],
    ['f64 grid, shape', f64Grid, { shape: [30, 40], chunkBytes: 4096 }],
    ['i64 stamps, shape', stamps, { shape: [1500], chunkBytes: 4096 }],
    ['i16 elevation, shape', dem, { shape: [40, 50], chunkBytes: 2000 }],
    ['f16 image, shape', volume, { shape: [6, 20, 30], chunkBytes: 4096, type: 'f16' }],
    ['f64 lossy', f64Smooth, { errorBound: { abs: 1e-3 }, chunkBytes: 8192 }],
  ];
  const out: Sample[] = [];
  for (const [name, input, options] of specs) {
    const packed = await engine.compress(input, options);
    expect(packed[8], name).toBe(4);
    const decoded = await engine.decompress(packed, { path: 'cpu' });
    const bytes = (a: ParleArray) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);
    expect(decoded.constructor, name).toBe(input.constructor);
    if (!('errorBound' in options)) expect(bytes(decoded).equals(bytes(input)), `${name}: lossless`).toBe(true);
    const entries = entryOffsets(packed);
    // the pack samples hold pack chunks (stage id 6), not only stored fallbacks
    if (name.includes('pack'))
      expect(
        entries.some((at) => packed.subarray(at + 4, at + 8).includes(6)),
        name,
      ).toBe(true);
    // the mode-3 samples hold mode-3 streams: a Huffman stream's first byte 3 after a directory
    if (name.includes('mode 3')) expect(modeThreeStreams(packed, entries), name).toBeGreaterThan(0);
    // the lossy samples hold quantized chunks (entry byte 24 = 5)
    if (name.includes('lossy'))
      expect(
        entries.every((at) => packed[at + 24] === 5),
        name,
      ).toBe(true);
    // the shaped samples hold predicted chunks (entry byte 24 = 7)
    if (name.includes('shape'))
      expect(
        entries.some((at) => packed[at + 24] === 7),
        name,
      ).toBe(true);
    out.push({ name, input, packed, decoded, entries });
  }
  return out;
}

/** One mutation of `s.packed`, by kind; returns the mutated copy and what was done. */
export function mutate(rng: Rng, s: Sample): { bytes: Uint8Array; what: string } {
  const src = s.packed;
  const pick = rng.nextU32() % 13;
  const at = rng.intBetween(0, src.length - 1);
  const entryAt = s.entries[rng.nextU32() % s.entries.length];
  const payloadAt = entryAt + ENTRY_BYTES;
  const P = new DataView(src.buffer, src.byteOffset).getUint32(entryAt + 12, true);
  const copy = () => src.slice();
  switch (pick) {
    case 0: {
      const b = copy();
      const flips = rng.intBetween(1, 4);
      for (let i = 0; i < flips; i++) {
        const bit = rng.intBetween(0, b.length * 8 - 1);
        b[bit >> 3] ^= 1 << (bit & 7);
      }
      return { bytes: b, what: `${flips} bit flips` };
    }
    case 1: {
      const b = copy();
      b[at] = rng.nextU32() & 255;
      return { bytes: b, what: `byte ${at} set` };
    }
    case 2:
      return { bytes: src.slice(0, at), what: `cut at ${at}` };
    case 3: {
      const b = new Uint8Array(src.length + 1);
      b.set(src.subarray(0, at));
      b[at] = rng.nextU32() & 255;
      b.set(src.subarray(at), at + 1);
      return { bytes: b, what: `byte inserted at ${at}` };
    }
    case 4: {
      const b = new Uint8Array(src.length - 1);
      b.set(src.subarray(0, at));
      b.set(src.subarray(at + 1), at);
      return { bytes: b, what: `byte ${at} deleted` };
    }
    case 5: {
      // a lying entry: any of its fields (count, stages, streams, payload length, quantize byte)
      const b = copy();
      const field = [0, 4, 5, 6, 7, 8, 12, 13, 24, 25][rng.nextU32() % 10];
      b[entryAt + field] = rng.nextU32() % 4 === 0 ? 0 : rng.nextU32() & 255;
      reseal(b, entryAt);
      return { bytes: b, what: `entry at ${entryAt} byte ${field}, resealed` };
    }
    case 6: {
      // a lying payload length: off by a little, checksums recomputed
      const b = copy();
      const view = new DataView(b.buffer);
      view.setUint32(entryAt + 12, Math.max(0, P + rng.intBetween(-40, 40)), true);
      reseal(b, entryAt);
      return { bytes: b, what: `payload length of entry ${entryAt} changed, resealed` };
    }
    case 7:
    case 8:
    case 9: {
      // a lie in the first 96 bytes of a payload (stream directory, quantize header, Huffman
      // mode, segment size, code lengths, segment offsets), the hashes recomputed
      const b = copy();
      if (P === 0) return { bytes: b, what: 'unchanged' };
      const where = payloadAt + rng.intBetween(0, Math.min(P, 96) - 1);
      const how = rng.nextU32() % 3;
      if (how === 0) b[where] = rng.nextU32() & 255;
      else if (how === 1) b[where] ^= 1 << rng.intBetween(0, 7);
      else b[where] = rng.nextU32() % 2 === 0 ? 0 : 255;
      reseal(b, entryAt);
      return { bytes: b, what: `payload byte ${where - payloadAt} of entry ${entryAt}, resealed` };
    }
    case 10: {
      // anywhere in a payload (bitstreams, run lengths, exceptions), hashes recomputed
      const b = copy();
      if (P === 0) return { bytes: b, what: 'unchanged' };
      const where = payloadAt + rng.intBetween(0, P - 1);
      b[where] = rng.nextU32() & 255;
      reseal(b, entryAt);
      return { bytes: b, what: `payload byte ${where - payloadAt} of entry ${entryAt}, resealed` };
    }
    case 11: {
      // version 4's byte 11 (rank and index flag), its shape block or its chunk index, the
      // checksums recomputed
      const b = copy();
      const rank = b[11] & 0x0f;
      const chunks = new DataView(b.buffer).getUint32(24, true);
      if ((b[11] & 0x10) !== 0 && rng.nextU32() % 3 === 0) {
        // an entry offset of the chunk index (the container's last 8 K + 4 bytes)
        const indexAt = b.length - (8 * chunks + 4);
        const where = indexAt + rng.intBetween(0, 8 * chunks - 1);
        b[where] = rng.nextU32() % 2 === 0 ? rng.nextU32() & 255 : b[where] ^ (1 << rng.intBetween(0, 7));
        const view = new DataView(b.buffer);
        view.setUint32(b.length - 4, Number(xxh64(b.subarray(indexAt, indexAt + 8 * chunks)) & 0xffffffffn), true);
        return { bytes: b, what: `chunk index byte ${where - indexAt}, resealed` };
      }
      if (rank === 0 || rng.nextU32() % 4 === 0) {
        b[11] = rng.nextU32() % 4 === 0 ? rng.nextU32() & 255 : (b[11] & 0x10) | rng.intBetween(0, 9);
        resealHeader(b);
        return { bytes: b, what: `byte 11 = ${b[11]}, resealed` };
      }
      const dim = HEADER_BYTES + 8 * rng.intBetween(0, rank - 1) + rng.intBetween(0, 7);
      b[dim] = rng.nextU32() & 255;
      const view = new DataView(b.buffer);
      view.setUint32(HEADER_BYTES + 8 * rank, Number(xxh64(b.subarray(HEADER_BYTES, HEADER_BYTES + 8 * rank)) & 0xffffffffn), true);
      return { bytes: b, what: `shape byte ${dim - HEADER_BYTES}, resealed` };
    }
    default: {
      // a lying header: element count, chunk length, chunk count, level, type
      const b = copy();
      const field = [9, 10, 12, 13, 14, 16, 17, 18, 24][rng.nextU32() % 9];
      b[field] = rng.nextU32() & 255;
      resealHeader(b);
      return { bytes: b, what: `header byte ${field}, resealed` };
    }
  }
}

/**
 * A one-chunk container with its payload rewritten by `edit` (which may change its length), the
 * payload hash and entry checksum made right again, so that the structure checks must catch it;
 * `entryEdit` may change the entry's bytes too (its checksum is made right after).
 */
export function rewritePayload(
  container: Uint8Array,
  edit: (payload: Uint8Array) => Uint8Array,
  entryEdit?: (bytes: Uint8Array) => void,
): Uint8Array {
  const header = readHeader(container);
  const entry = readEntry(container.subarray(HEADER_BYTES), header, 0);
  const payload = edit(container.slice(HEADER_BYTES + ENTRY_BYTES, HEADER_BYTES + ENTRY_BYTES + entry.payloadBytes));
  const out = new Uint8Array(HEADER_BYTES + ENTRY_BYTES + payload.length);
  out.set(container.subarray(0, HEADER_BYTES));
  writeEntry({ ...entry, payloadBytes: payload.length, payloadChecksum: BigInt(treeHash(payload)) }, out, HEADER_BYTES);
  out.set(payload, HEADER_BYTES + ENTRY_BYTES);
  if (entryEdit) {
    entryEdit(out.subarray(HEADER_BYTES, HEADER_BYTES + ENTRY_BYTES));
    const checksum = Number(xxh64(out.subarray(HEADER_BYTES, HEADER_BYTES + 28)) & 0xffffffffn);
    new DataView(out.buffer, HEADER_BYTES, ENTRY_BYTES).setUint32(28, checksum, true);
  }
  return out;
}

/**
 * `count` copies of the one-chunk container `packed` with 1 to 3 random bit flips in its payload
 * (every other copy within its first `headBytes` bytes: the headers), hashes made right again
 * ({@link rewritePayload}), each decoded by `decode`: it must fail with CORRUPT or
 * CHECKSUM_MISMATCH, or give exactly the untouched container's elements (a flip that changes no
 * decoded value, e.g. a low bit of a bound whose step is the same, is not an error); fewer than a
 * quarter of them may decode. `seed` seeds the flips and is named in every failure.
 */
export async function expectPayloadFlips(
  packed: Uint8Array,
  decode: (bytes: Uint8Array) => Promise<unknown>,
  seed: number,
  count: number,
  headBytes: number,
): Promise<void> {
  const rng = new Rng(seed);
  const untouched = (await decode(rewritePayload(packed, (p) => p))) as ParleArray;
  const want = new Uint8Array(untouched.buffer, untouched.byteOffset, untouched.byteLength);
  let decoded = 0;
  for (let t = 0; t < count; t++) {
    const flips = rng.intBetween(1, 3);
    const at: number[] = [];
    const bad = rewritePayload(packed, (p) => {
      for (let k = 0; k < flips; k++) {
        const i = t % 2 === 0 ? rng.intBetween(0, Math.min(p.length, headBytes) - 1) : rng.intBetween(0, p.length - 1);
        p[i] ^= 1 << rng.intBetween(0, 7);
        at.push(i);
      }
      return p;
    });
    let got: unknown;
    try {
      got = await decode(bad);
    } catch (e) {
      if (!(e instanceof ParleError)) throw new Error(`flips at ${at}: ${String(e)} ${describeSeed(seed)}`);
      expect([ErrorCodes.CORRUPT, ErrorCodes.CHECKSUM_MISMATCH], `flips at ${at}: ${e.message} ${describeSeed(seed)}`).toContain(e.code);
      continue;
    }
    decoded++;
    expect(got, `flips at ${at}: decoded to a ${Object.prototype.toString.call(got)}`).toBeInstanceOf(untouched.constructor);
    const array = got as ParleArray;
    const bytes = new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
    expect(bytes.length, `flips at ${at} ${describeSeed(seed)}`).toBe(want.length);
    const i = bytes.findIndex((b, k) => b !== want[k]);
    if (i >= 0) {
      throw new Error(
        `flips at ${at} decoded without an error to other elements: byte ${i} 0x${bytes[i].toString(16)}, ` +
          `untouched 0x${want[i].toString(16)} ${describeSeed(seed)}`,
      );
    }
  }
  expect(decoded, `most flips are caught ${describeSeed(seed)}`).toBeLessThan(count / 4);
}
