/**
 * The codec kernels (assembly/hash.ts, delta.ts, shuffle.ts, statistics.ts, huffman.ts) in both builds, build/parle.wasm (SIMD) and
 * build/parle-scalar.wasm, against the plain reference of docs/format.md
 * (test/support/codec-reference.ts): XXH32 and the tree hash, delta, byte-plane shuffle, byte
 * histograms and the chooser's statistics, canonical codes and decode tables, Huffman encode
 * (read back by the reference decoder) and decode (of reference-encoded streams), and decode of
 * corrupt bitstreams placed at the very end of the memory, so that a read past the 8 bytes of
 * slack the contract grants traps. Outputs are pre-filled with a sentinel and followed by a
 * guard, so an unwritten or overwritten byte shows. Seeded: every failure prints its seed.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { codeLengths } from '../ts/codec/huffman.js';
import type { Kernels } from '../ts/cpu/wasm.js';
import * as ref from './support/codec-reference.js';
import * as ref2 from './support/predict-reference.js';
import { concat, expectSameBytes, expectUntouched, le32, placeAtMemoryEnd, randomBytes, SENTINEL, skewedBytes } from './support/bytes.js';
import { KernelHarness, loadBothBuilds, type TestedVariant } from './support/kernels.js';
import { Rng, caseSeed, describeSeed } from './support/random.js';

const VARIANTS: readonly TestedVariant[] = ['simd', 'scalar'];
/** Bytes after each output that must keep the sentinel. */
const GUARD = 64;
/** Readable bytes a Huffman kernel may touch past its bitstreams (read) or its output (write). */
const BIT_SLACK = 8;
/** Both sides of the 16-byte stripe, of the 4096-byte leaf, of four leaves (the 4-block loop) and of a second level. */
const HASH_SIZES = [0, 1, 3, 4, 15, 16, 17, 4095, 4096, 4097, 4 * 4096, 4 * 4096 + 1, 17 * 4096 + 5, 4096 * 1025 + 3];
const DELTA_SIZES = [0, 1, 15, 16, 17, 33, 1000];
const SHUFFLE_SIZES = [0, 1, 15, 16, 17, 1000];

type Width = 1 | 2 | 4;

let builds: Record<TestedVariant, KernelHarness>;
beforeAll(async () => {
  builds = await loadBothBuilds();
});

// ---------------------------------------------------------------------------------------------
// Data and checks
// ---------------------------------------------------------------------------------------------

/** Runs of 1..maxRun equal elements of `width` bytes (`count` elements). */
function runBytes(rng: Rng, count: number, width: Width, maxRun: number): Uint8Array {
  const out = new Uint8Array(count * width);
  for (let i = 0; i < count;) {
    const len = rng.intBetween(1, maxRun);
    const value = randomBytes(rng, width);
    for (let k = 0; k < len && i < count; k++, i++) out.set(value, i * width);
  }
  return out;
}

/** A histogram whose unlimited Huffman code is 20 deep: Fibonacci counts over 21 symbols (the 11-bit limit binds). */
function fibonacciHistogram(): number[] {
  const hist = new Array<number>(256).fill(0);
  let a = 1;
  let b = 1;
  for (let s = 0; s < 21; s++) {
    hist[3 * s + 1] = a;
    [a, b] = [b, a + b];
  }
  return hist;
}

function histogramOf(bytes: Uint8Array): number[] {
  const hist = new Array<number>(256).fill(0);
  for (const b of bytes) hist[b]++;
  return hist;
}

/** Fails at the first differing byte: far cheaper and clearer than toEqual on large arrays. */
/** histogram8 of `input` equals the reference, and nothing is written past the histogram or the scratch. */
function checkHistogram8(h: KernelHarness, input: Uint8Array, context: string): void {
  h.reset();
  const ptr = h.copyIn(input, 0, 1);
  const histPtr = h.allocFilled(1024 + GUARD, SENTINEL);
  const scratch = h.allocFilled(4096 + GUARD, SENTINEL);
  h.kernels.histogram8(ptr, input.length, histPtr, scratch);
  expect(Array.from(h.view(Uint32Array, histPtr, 256)), context).toEqual(histogramOf(input));
  expectUntouched(h, histPtr + 1024, GUARD, context);
  expectUntouched(h, scratch + 4096, GUARD, `scratch, ${context}`);
}

// ---------------------------------------------------------------------------------------------
// Huffman helpers: the spec's segment layout, written out once more for the encoder's expected bytes
// ---------------------------------------------------------------------------------------------

/** The spec's bitstreams of `data` coded with `lengths` in segments of 2^g symbols, and each segment's end offset. */
function expectedSegments(data: Uint8Array, lengths: Uint8Array, g: number): { bits: Uint8Array; ends: number[] } {
  const codes = ref.canonicalCodes(lengths);
  const out: number[] = [];
  const ends: number[] = [];
  const seg = 2 ** g;
  for (let start = 0; start < data.length; start += seg) {
    let acc = 0;
    let used = 0;
    for (let i = start; i < Math.min(data.length, start + seg); i++) {
      const s = data[i];
      const bits = ref.reverseBits(codes[s], lengths[s]);
      for (let b = 0; b < lengths[s]; b++) {
        acc |= ((bits >>> b) & 1) << used;
        if (++used === 8) {
          out.push(acc);
          acc = 0;
          used = 0;
        }
      }
    }
    if (used > 0) out.push(acc);
    ends.push(out.length);
  }
  return { bits: Uint8Array.from(out), ends };
}

/** A mode-2 Huffman stream: header of `lengths` and `g`, the end offsets, the bitstreams. */
function modeTwoStream(lengths: Uint8Array, g: number, ends: ArrayLike<number>, bits: Uint8Array): Uint8Array {
  let last = 255;
  while (last > 0 && lengths[last] === 0) last--;
  const table = new Uint8Array(Math.ceil((last + 1) / 2));
  for (let s = 0; s <= last; s++) table[s >> 1] |= lengths[s] << ((s & 1) * 4);
  return concat([Uint8Array.of(2, g, last), table, le32(ends), bits]);
}

/** The parts of a mode-2 stream (docs/format.md, "Huffman streams"). */
function parseModeTwo(stream: Uint8Array, n: number): { g: number; lengths: Uint8Array; ends: Uint32Array; bits: Uint8Array } {
  expect(stream[0]).toBe(2);
  const g = stream[1];
  const last = stream[2];
  const lengths = new Uint8Array(256);
  for (let s = 0; s <= last; s++) lengths[s] = (stream[3 + (s >> 1)] >> ((s & 1) * 4)) & 15;
  const offsetsAt = 3 + Math.ceil((last + 1) / 2);
  const segments = Math.ceil(n / 2 ** g);
  const view = new DataView(stream.buffer, stream.byteOffset);
  const ends = new Uint32Array(segments);
  for (let k = 0; k < segments; k++) ends[k] = view.getUint32(offsetsAt + 4 * k, true);
  return { g, lengths, ends, bits: stream.slice(offsetsAt + 4 * segments) };
}

/** The reference decoder's verdict: the bytes, or the error it threw. */
function referenceDecode(stream: Uint8Array, n: number): Uint8Array | Error {
  try {
    return ref.huffmanDecodeStream(stream, n);
  } catch (e) {
    return e as Error;
  }
}

/** Kernel-side Huffman decode of `n` symbols; the bitstreams end exactly BIT_SLACK bytes before the end of the memory. */
function kernelDecode(
  h: KernelHarness,
  lengths: Uint8Array,
  g: number,
  ends: ArrayLike<number>,
  bits: Uint8Array,
  n: number,
  slackFill = 0xff,
): { result: number; out: Uint8Array } {
  h.reset();
  const lengthsPtr = h.copyIn(lengths);
  const codesPtr = h.alloc(1024);
  const tablePtr = h.alloc(12 << 10);
  // the stream's symbol count picks single- or multi-symbol tables: both decode the same
  expect(h.kernels.huffmanBuildTable(lengthsPtr, codesPtr, tablePtr, n)).toBe(0);
  const offsetsPtr = h.copyIn(le32(ends));
  const outPtr = h.allocFilled(n + GUARD, SENTINEL);
  const srcPtr = placeAtMemoryEnd(h, bits, BIT_SLACK, slackFill);
  const result = h.kernels.huffmanDecode(srcPtr, bits.length, offsetsPtr, g, n, tablePtr, outPtr);
  expectUntouched(h, outPtr + n, GUARD, 'huffmanDecode output');
  return { result, out: h.bytes(outPtr, n).slice() };
}

// ---------------------------------------------------------------------------------------------
// The tests, once per build
// ---------------------------------------------------------------------------------------------

describe.each(VARIANTS)('%s build', (variant) => {
  let h: KernelHarness;
  let k: Kernels;
  beforeAll(() => {
    h = builds[variant];
    k = h.kernels;
    expect(k.simdEnabled() !== 0).toBe(variant === 'simd');
  });

  describe('xxh32 and treeHash', () => {
    it('xxh32 equals the reference at every size, several seeds, aligned and not', () => {
      const seed = caseSeed('kernels xxh32');
      const rng = new Rng(seed);
      for (const n of HASH_SIZES) {
        const bytes = randomBytes(rng, n);
        for (const offset of [0, 3]) {
          h.reset();
          const ptr = h.alloc(n + offset) + offset;
          h.bytes(ptr, n).set(bytes);
          const seeds = n <= 70_000 ? [0, 1, 0x9e3779b1, 0xffffffff] : [0];
          for (const hashSeed of seeds) {
            expect(k.xxh32(ptr, n, hashSeed) >>> 0, `n=${n} offset=${offset} hashSeed=${hashSeed} ${describeSeed(seed)}`).toBe(
              ref.xxh32(bytes, hashSeed),
            );
          }
        }
      }
      h.reset();
      expect(k.xxh32(h.alloc(0), 0, 0) >>> 0).toBe(0x02cc5d05);
    });

    it('treeHash equals the reference at every size, writes only its scratch and leaves the input alone', () => {
      const seed = caseSeed('kernels treeHash');
      const rng = new Rng(seed);
      for (const n of HASH_SIZES) {
        const bytes = randomBytes(rng, n);
        for (const offset of [0, 1]) {
          h.reset();
          const ptr = h.alloc(n + offset) + offset;
          h.bytes(ptr, n).set(bytes);
          const scratchBytes = Math.ceil(n / 4096) * 4;
          const scratch = h.allocFilled(scratchBytes + GUARD, SENTINEL);
          const context = `n=${n} offset=${offset} ${describeSeed(seed)}`;
          expect(k.treeHash(ptr, n, scratch) >>> 0, context).toBe(ref.treeHash(bytes));
          expectUntouched(h, scratch + scratchBytes, GUARD, context);
          expectSameBytes(h.bytes(ptr, n), bytes, `input, ${context}`);
        }
      }
    });

    it('treeHash of equal leaves and of zeros (identical hashes in a level)', () => {
      for (const n of [4096 * 8, 4096 * 1025 + 3]) {
        h.reset();
        const ptr = h.allocFilled(n, 0);
        const scratch = h.alloc(Math.ceil(n / 4096) * 4);
        expect(k.treeHash(ptr, n, scratch) >>> 0, `zeros n=${n}`).toBe(ref.treeHash(new Uint8Array(n)));
      }
    });
  });

  describe('delta', () => {
    const encoders = (w: Width) => (w === 1 ? k.deltaEncode8 : w === 2 ? k.deltaEncode16 : k.deltaEncode32);
    const decoders = (w: Width) => (w === 1 ? k.deltaDecode8 : w === 2 ? k.deltaDecode16 : k.deltaDecode32);

    for (const w of [1, 2, 4] as const) {
      it(`encode, decode and decode in place, width ${w}`, () => {
        const seed = caseSeed(`kernels delta ${w}`);
        const rng = new Rng(seed);
        for (const n of DELTA_SIZES) {
          const context = `width ${w} n=${n} ${describeSeed(seed)}`;
          for (const input of [randomBytes(rng, n * w), runBytes(rng, n, w, 4)]) {
            h.reset();
            // encode
            const inPtr = h.copyIn(input);
            const outPtr = h.allocFilled(n * w + GUARD, SENTINEL);
            encoders(w)(inPtr, outPtr, n);
            const expected = ref.deltaEncode(input, w);
            expectSameBytes(h.bytes(outPtr, n * w), expected, `encode, ${context}`);
            expectUntouched(h, outPtr + n * w, GUARD, `encode, ${context}`);
            expectSameBytes(h.bytes(inPtr, n * w), input, `encode input, ${context}`);
            // decode out of place: the deltas back to the input
            const backPtr = h.allocFilled(n * w + GUARD, SENTINEL);
            decoders(w)(outPtr, backPtr, n);
            expectSameBytes(h.bytes(backPtr, n * w), input, `decode, ${context}`);
            expectUntouched(h, backPtr + n * w, GUARD, `decode, ${context}`);
            // decode of arbitrary deltas, in place
            const deltas = randomBytes(rng, n * w);
            const inPlace = h.copyIn(deltas, GUARD);
            h.bytes(inPlace + n * w, GUARD).fill(SENTINEL);
            decoders(w)(inPlace, inPlace, n);
            expectSameBytes(h.bytes(inPlace, n * w), ref.deltaDecode(deltas, w), `decode in place, ${context}`);
            expectUntouched(h, inPlace + n * w, GUARD, `decode in place, ${context}`);
          }
        }
      });
    }
  });

  describe('shuffle', () => {
    for (const w of [2, 4] as const) {
      it(`shuffle and unshuffle, width ${w}`, () => {
        const seed = caseSeed(`kernels shuffle ${w}`);
        const rng = new Rng(seed);
        const shuffle = w === 2 ? k.shuffle16 : k.shuffle32;
        const unshuffle = w === 2 ? k.unshuffle16 : k.unshuffle32;
        for (const n of SHUFFLE_SIZES) {
          const context = `width ${w} n=${n} ${describeSeed(seed)}`;
          h.reset();
          const input = randomBytes(rng, n * w);
          const inPtr = h.copyIn(input);
          const planesPtr = h.allocFilled(n * w + GUARD, SENTINEL);
          shuffle(inPtr, planesPtr, n);
          expectSameBytes(h.bytes(planesPtr, n * w), concat(ref.shuffle(input, w)), `shuffle, ${context}`);
          expectUntouched(h, planesPtr + n * w, GUARD, `shuffle, ${context}`);
          expectSameBytes(h.bytes(inPtr, n * w), input, `shuffle input, ${context}`);

          const planes = randomBytes(rng, n * w);
          const planesIn = h.copyIn(planes);
          const outPtr = h.allocFilled(n * w + GUARD, SENTINEL);
          unshuffle(planesIn, outPtr, n);
          const split = Array.from({ length: w }, (_, p) => planes.subarray(p * n, (p + 1) * n));
          expectSameBytes(h.bytes(outPtr, n * w), ref.unshuffle(split, w), `unshuffle, ${context}`);
          expectUntouched(h, outPtr + n * w, GUARD, `unshuffle, ${context}`);
          expectSameBytes(h.bytes(planesIn, n * w), planes, `unshuffle input, ${context}`);
        }
      });
    }
  });

  describe('histograms and statistics', () => {
    it('histogram8 overwrites the histogram with the byte counts', () => {
      const seed = caseSeed('kernels histogram8');
      const rng = new Rng(seed);
      // both sides of the 16-byte loop and of a few of its iterations
      for (const n of [0, 1, 3, 4, 5, 15, 16, 17, 31, 32, 33, 1000, 65_537]) {
        for (const [shape, input] of [
          ['random', randomBytes(rng, n)],
          ['one byte value', new Uint8Array(n).fill(255)],
          ['skewed', skewedBytes(rng, n, 5)],
        ] as const) {
          checkHistogram8(h, input, `${shape} n=${n} ${describeSeed(seed)}`);
        }
      }
    });

    it('histogram8 adds its u16 sub-histograms up before they overflow: one value, or one value every 8th byte, past 8 x 65535 bytes', () => {
      const seed = caseSeed('kernels histogram8 blocks');
      const rng = new Rng(seed);
      // the sub-histograms are added up every 16 x 32767 bytes; a sub-histogram counts every 8th byte
      const block = 16 * 32767;
      for (const n of [block - 1, block, block + 1, block + 16, 8 * 65536 + 3, 2 * block + 21]) {
        const oneValue = new Uint8Array(n).fill(200);
        const everyEighth = randomBytes(rng, n).map((b, i) => (i % 8 === 3 ? 9 : b === 9 ? 10 : b));
        for (const [shape, input] of [
          ['one value', oneValue],
          ['9 at every 8th byte', everyEighth],
          ['skewed', skewedBytes(rng, n, 3)],
        ] as const) {
          checkHistogram8(h, input, `${shape} n=${n} ${describeSeed(seed)}`);
        }
      }
    });

    /** The chooser's statistics as assembly/statistics.ts documents them, one range at a time. */
    function statsReference(bytes: Uint8Array, w: Width): { hist: number[]; runs: number[] } {
      const n = bytes.length / w;
      const modulus = 2 ** (8 * w);
      const element = (i: number) => {
        let v = 0;
        for (let b = w - 1; b >= 0; b--) v = v * 256 + bytes[i * w + b];
        return v;
      };
      const byteOf = (v: number, b: number) => Math.floor(v / 2 ** (8 * b)) % 256;
      const hist = new Array<number>(2 * w * 256).fill(0);
      const runs = new Array<number>(2 + 2 * w).fill(0);
      let prevX = 0;
      let prevD = 0;
      for (let i = 0; i < n; i++) {
        const x = element(i);
        const d = (x - prevX + modulus) % modulus;
        if (i === 0 || x !== prevX) runs[0]++;
        if (i === 0 || d !== prevD) runs[1]++;
        for (let b = 0; b < w; b++) {
          hist[b * 256 + byteOf(x, b)]++;
          hist[(w + b) * 256 + byteOf(d, b)]++;
          if (i === 0 || byteOf(x, b) !== byteOf(prevX, b)) runs[2 + b]++;
          if (i === 0 || byteOf(d, b) !== byteOf(prevD, b)) runs[2 + w + b]++;
        }
        prevX = x;
        prevD = d;
      }
      return { hist, runs };
    }

    for (const w of [1, 2, 4] as const) {
      it(`codecStats${8 * w} adds the histograms and run counts of each range`, () => {
        const seed = caseSeed(`kernels codecStats ${w}`);
        const rng = new Rng(seed);
        const stats = w === 1 ? k.codecStats8 : w === 2 ? k.codecStats16 : k.codecStats32;
        for (const n of [0, 1, 2, 15, 16, 17, 1000]) {
          for (const input of [randomBytes(rng, n * w), runBytes(rng, n, w, 6)]) {
            const context = `width ${w} n=${n} ${describeSeed(seed)}`;
            h.reset();
            const ptr = h.copyIn(input);
            const base = Array.from({ length: 2 * w * 256 + 2 + 2 * w }, () => rng.intBetween(0, 1000));
            const histPtr = h.alloc(2 * w * 1024 + GUARD);
            const runsPtr = h.alloc(4 * (2 + 2 * w) + GUARD);
            h.view(Uint32Array, histPtr, 2 * w * 256).set(base.slice(0, 2 * w * 256));
            h.view(Uint32Array, runsPtr, 2 + 2 * w).set(base.slice(2 * w * 256));
            h.bytes(histPtr + 2 * w * 1024, GUARD).fill(SENTINEL);
            h.bytes(runsPtr + 4 * (2 + 2 * w), GUARD).fill(SENTINEL);
            // two ranges, as the chooser samples: each range's first element starts every run
            const split = Math.floor(n / 3);
            stats(ptr, split, histPtr, runsPtr);
            stats(ptr + split * w, n - split, histPtr, runsPtr);
            const a = statsReference(input.subarray(0, split * w), w);
            const b = statsReference(input.subarray(split * w), w);
            const hist = Array.from(h.view(Uint32Array, histPtr, 2 * w * 256));
            const runs = Array.from(h.view(Uint32Array, runsPtr, 2 + 2 * w));
            expect(hist, `histograms, ${context}`).toEqual(a.hist.map((c, i) => c + b.hist[i] + base[i]));
            expect(runs, `runs, ${context}`).toEqual(a.runs.map((c, i) => c + b.runs[i] + base[2 * w * 256 + i]));
            expectUntouched(h, histPtr + 2 * w * 1024, GUARD, context);
            expectUntouched(h, runsPtr + 4 * (2 + 2 * w), GUARD, context);
          }
        }
      });
    }
  });

  describe('Huffman codes and tables', () => {
    /** Writes `lengths` (256 u8) and runs huffmanBuildCodes; returns its result and the 256 codes. */
    function buildCodes(lengths: Uint8Array): { kraft: number; codes: Uint32Array } {
      h.reset();
      const lengthsPtr = h.copyIn(lengths);
      const codesPtr = h.allocFilled(1024 + GUARD, SENTINEL);
      const kraft = k.huffmanBuildCodes(lengthsPtr, codesPtr);
      expectUntouched(h, codesPtr + 1024, GUARD, 'huffmanBuildCodes');
      return { kraft, codes: h.copyOut(Uint32Array, codesPtr, 256) };
    }

    function lengthsOf(entries: Record<number, number>): Uint8Array {
      const lengths = new Uint8Array(256);
      for (const [s, l] of Object.entries(entries)) lengths[Number(s)] = l;
      return lengths;
    }

    function kraftOf(lengths: Uint8Array): number {
      let sum = 0;
      for (const l of lengths) if (l > 0) sum += 2 ** (11 - l);
      return sum;
    }

    it('huffmanBuildCodes gives the canonical codes, bit-reversed, with their lengths, and returns 2048 for a complete code', () => {
      const seed = caseSeed('kernels huffmanBuildCodes');
      const rng = new Rng(seed);
      const uniform = new Array<number>(256).fill(1);
      const histograms: [string, ArrayLike<number>][] = [
        ['two symbols', histogramOf(Uint8Array.of(0, 255, 255))],
        ['skewed', histogramOf(skewedBytes(rng, 5000))],
        ['all 256 equally', uniform],
        ['Fibonacci (11-bit limit)', fibonacciHistogram()],
        ['random counts', Array.from({ length: 256 }, () => (rng.nextFloat() < 0.3 ? 0 : rng.intBetween(1, 100_000)))],
      ];
      for (const [name, hist] of histograms) {
        for (const lengths of [ref.huffmanCodeLengths(hist), codeLengths(hist)]) {
          const { kraft, codes } = buildCodes(lengths);
          const canonical = ref.canonicalCodes(lengths);
          expect(kraft, name).toBe(2048);
          const expected = Array.from(lengths, (l, s) => (l === 0 ? 0 : ref.reverseBits(canonical[s], l) | (l << 16)));
          expect(Array.from(codes), `${name} ${describeSeed(seed)}`).toEqual(expected);
        }
      }
    });

    it('huffmanBuildCodes returns the Kraft sum x 2^11 of any lengths, and -1 for a length over 11', () => {
      const seed = caseSeed('kernels kraft');
      const rng = new Rng(seed);
      expect(buildCodes(new Uint8Array(256)).kraft).toBe(0);
      expect(buildCodes(lengthsOf({ 7: 1 })).kraft).toBe(1024);
      expect(buildCodes(lengthsOf({ 0: 1, 1: 2 })).kraft).toBe(1536); // incomplete
      expect(buildCodes(lengthsOf({ 0: 1, 1: 1, 2: 1 })).kraft).toBe(3072); // over-full
      expect(buildCodes(new Uint8Array(256).fill(8)).kraft).toBe(2048);
      expect(buildCodes(new Uint8Array(256).fill(1)).kraft).toBe(256 * 1024);
      for (let t = 0; t < 50; t++) {
        const lengths = Uint8Array.from({ length: 256 }, () => (rng.nextFloat() < 0.5 ? 0 : rng.intBetween(1, 11)));
        expect(buildCodes(lengths).kraft, describeSeed(seed)).toBe(kraftOf(lengths));
      }
      for (const tooLong of [12, 13, 15]) {
        const lengths = ref.huffmanCodeLengths(histogramOf(skewedBytes(rng, 1000, 20)));
        lengths[200] = tooLong;
        expect(buildCodes(lengths).kraft, `length ${tooLong}`).toBe(-1);
      }
    });

    /** What the 11 bits of `index` (first bit lowest) decode to under `lengths`: symbols and their lengths, greedily. */
    function decodeIndex(lengths: Uint8Array, index: number): { symbol: number; length: number }[] {
      const canonical = ref.canonicalCodes(lengths);
      const symbolOf = new Map<number, number>();
      for (let s = 0; s < 256; s++) if (lengths[s] > 0) symbolOf.set((lengths[s] << 16) | canonical[s], s);
      const found: { symbol: number; length: number }[] = [];
      let bit = 0;
      while (bit < 11) {
        let code = 0;
        let hit: { symbol: number; length: number } | undefined;
        for (let len = 1; bit + len <= 11 && !hit; len++) {
          code = code * 2 + ((index >> (bit + len - 1)) & 1);
          const s = symbolOf.get((len << 16) | code);
          if (s !== undefined) hit = { symbol: s, length: len };
        }
        if (!hit) break;
        found.push(hit);
        bit += hit.length;
      }
      return found;
    }

    it('huffmanBuildTable: every entry holds the first (up to four) codes that lie in the 11 bits it is indexed by', () => {
      const seed = caseSeed('kernels huffmanBuildTable');
      const rng = new Rng(seed);
      const cases: [string, Uint8Array][] = [
        ['two symbols', lengthsOf({ 3: 1, 250: 1 })],
        ['skewed', ref.huffmanCodeLengths(histogramOf(skewedBytes(rng, 3000, 40)))],
        ['Fibonacci (11-bit limit)', ref.huffmanCodeLengths(fibonacciHistogram())],
        ['all 256 of 8 bits', new Uint8Array(256).fill(8)],
        [
          '90% zeros (a 1-bit code: up to eleven fit)',
          codeLengths(histogramOf(Uint8Array.from({ length: 5000 }, (_, i) => (i % 10 === 0 ? 1 + (i % 255) : 0)))),
        ],
        ['codes of 1 to 5 bits, then 64 of 11', Uint8Array.from({ length: 256 }, (_, s) => (s < 5 ? s + 1 : s < 69 ? 11 : 0))],
      ];
      // streams of 8192 symbols or more get up to four symbols an entry, shorter ones one
      for (const [[name, lengths], multi] of cases.flatMap(
        (c) =>
          [
            [c, true],
            [c, false],
          ] as const,
      )) {
        expect(
          lengths.reduce((a, l) => a + (l ? 2 ** (11 - l) : 0), 0),
          `${name}: a complete code`,
        ).toBe(2048);
        h.reset();
        const lengthsPtr = h.copyIn(lengths);
        const codesPtr = h.alloc(1024);
        const tablePtr = h.allocFilled((12 << 10) + GUARD, SENTINEL);
        expect(k.huffmanBuildTable(lengthsPtr, codesPtr, tablePtr, multi ? 8192 : 8191), name).toBe(0);
        expectUntouched(h, tablePtr + (12 << 10), GUARD, name);
        const symbols = h.copyOut(Uint32Array, tablePtr, 2048);
        const info = h.copyOut(Uint16Array, tablePtr + 8192, 2048);
        let counts = 0;
        for (let j = 0; j < 2048; j++) {
          const found = decodeIndex(lengths, j).slice(0, multi ? 4 : 1);
          const bits = found.reduce((a, f) => a + f.length, 0);
          const expectedSymbols = found.reduce((a, f, i) => a + f.symbol * 2 ** (8 * i), 0);
          const expectedInfo = bits | ((found.length - 1) << 6) | (found[0].length << 8);
          counts += found.length;
          if (symbols[j] >>> 0 !== expectedSymbols || info[j] !== expectedInfo) {
            expect.fail(
              `${name}: entry ${j} is 0x${symbols[j].toString(16)} / 0x${info[j].toString(16)}, expected 0x${expectedSymbols.toString(16)} / 0x${expectedInfo.toString(16)} ${describeSeed(seed)}`,
            );
          }
        }
        // the table does hold several symbols an entry where codes are short
        if (multi && Math.min(...Array.from(lengths).filter((l) => l > 0)) <= 2) expect(counts / 2048, name).toBeGreaterThan(2);
        if (!multi) expect(counts, name).toBe(2048);
      }
    });

    it('huffmanBuildTable rejects incomplete, over-full and single-symbol codes and lengths over 11', () => {
      const seed = caseSeed('kernels huffmanBuildTable rejects');
      const rng = new Rng(seed);
      const valid = ref.huffmanCodeLengths(histogramOf(skewedBytes(rng, 3000, 30)));
      const longest = valid.indexOf(Math.max(...valid));
      const shortest = valid.indexOf(Math.min(...Array.from(valid).filter((l) => l > 0)));
      const absent = valid.indexOf(0);
      const bad: [string, Uint8Array][] = [
        ['all absent', new Uint8Array(256)],
        ['one symbol of 1 bit', lengthsOf({ 9: 1 })],
        ['one symbol of 11 bits', lengthsOf({ 9: 11 })],
        ['incomplete: a longest code lengthened', Uint8Array.from(valid, (l, s) => (s === longest ? l + 1 : l))],
        ['incomplete: a symbol dropped', Uint8Array.from(valid, (l, s) => (s === shortest ? 0 : l))],
        ['over-full: a code shortened', Uint8Array.from(valid, (l, s) => (s === longest ? l - 1 : l))],
        ['over-full: a symbol added', Uint8Array.from(valid, (l, s) => (s === absent ? 11 : l))],
        ['three codes of 1 bit', lengthsOf({ 0: 1, 1: 1, 2: 1 })],
        ['length 12 on an absent symbol', Uint8Array.from(valid, (l, s) => (s === absent ? 12 : l))],
        ['length 15 replacing a code', Uint8Array.from(valid, (l, s) => (s === longest ? 15 : l))],
        ['two codes of 12 bits completing a code of 11', Uint8Array.from(valid, (l, s) => (s === longest ? 12 : s === absent ? 12 : l))],
      ];
      expect(valid[longest]).toBeGreaterThan(1);
      for (const [name, lengths] of bad) {
        h.reset();
        const lengthsPtr = h.copyIn(lengths);
        const codesPtr = h.alloc(1024);
        const tablePtr = h.alloc(12 << 10);
        for (const symbols of [100, 1 << 20]) {
          expect(k.huffmanBuildTable(lengthsPtr, codesPtr, tablePtr, symbols), `${name} ${describeSeed(seed)}`).toBe(-1);
        }
      }
    });
  });

  describe('huffmanEncode', () => {
    const CASES: { n: number; g: number }[] = [
      { n: 0, g: 10 },
      { n: 1, g: 10 },
      { n: 2, g: 10 },
      { n: 3, g: 10 },
      { n: 4, g: 10 },
      { n: 5, g: 10 },
      // both sides of the 5- and 20-symbol loops
      { n: 6, g: 10 },
      { n: 9, g: 10 },
      { n: 10, g: 10 },
      { n: 11, g: 10 },
      { n: 19, g: 10 },
      { n: 20, g: 10 },
      { n: 21, g: 10 },
      { n: 24, g: 10 },
      { n: 25, g: 10 },
      { n: 1000, g: 10 },
      { n: 1023, g: 10 },
      { n: 1024, g: 10 },
      { n: 1025, g: 10 },
      { n: 5000, g: 10 },
      { n: 4 * 1024 + 1, g: 10 },
      { n: 2 * 1024 + 19, g: 10 },
      { n: 70_000, g: 14 },
      { n: 3000, g: 20 },
    ];

    /** Codes (bit-reversed | length << 16) of `lengths`, computed here, written into the memory. */
    function writeCodes(lengths: Uint8Array): number {
      const canonical = ref.canonicalCodes(lengths);
      const codes = Uint32Array.from(lengths, (l, s) => (l === 0 ? 0 : ref.reverseBits(canonical[s], l) | (l << 16)));
      return h.copyIn(codes);
    }

    function encode(data: Uint8Array, lengths: Uint8Array, g: number, context: string): { bits: Uint8Array; ends: number[] } {
      h.reset();
      const expected = expectedSegments(data, lengths, g);
      const segments = Math.ceil(data.length / 2 ** g);
      const srcPtr = h.copyIn(data, 0, 1);
      const codesPtr = writeCodes(lengths);
      const outBytes = expected.bits.length;
      const outPtr = h.allocFilled(outBytes + BIT_SLACK + GUARD, SENTINEL);
      const offsetsPtr = h.allocFilled(4 * segments + GUARD, SENTINEL);
      const written = k.huffmanEncode(srcPtr, data.length, codesPtr, g, outPtr, offsetsPtr);
      expect(written, `bytes written, ${context}`).toBe(outBytes);
      expectUntouched(h, outPtr + outBytes + BIT_SLACK, GUARD, `output (past the 8 bytes of slack), ${context}`);
      expectUntouched(h, offsetsPtr + 4 * segments, GUARD, `offsets, ${context}`);
      const ends = Array.from(h.view(Uint32Array, offsetsPtr, segments));
      const bits = h.bytes(outPtr, outBytes).slice();
      expect(ends, `end offsets, ${context}`).toEqual(expected.ends);
      expectSameBytes(bits, expected.bits, `bitstreams, ${context}`);
      return { bits, ends };
    }

    it("writes the spec's bitstreams; the reference decodes them, and they equal the reference encoder's", () => {
      const seed = caseSeed('kernels huffmanEncode');
      const rng = new Rng(seed);
      for (const { n, g } of CASES) {
        const shapes: [string, Uint8Array][] = [
          ['skewed', skewedBytes(rng, n)],
          ['random', randomBytes(rng, n)],
          ['two symbols', Uint8Array.from({ length: n }, () => (rng.nextFloat() < 0.9 ? 17 : 200))],
        ];
        for (const [shape, data] of shapes) {
          const context = `${shape} n=${n} g=${g} ${describeSeed(seed)}`;
          const hist = histogramOf(data);
          // a code needs two symbols: give one more a count (a code may cover absent symbols)
          for (let s = 0; hist.filter((c) => c > 0).length < 2; s++) if (hist[s] === 0) hist[s] = 1;
          const lengths = ref.huffmanCodeLengths(hist);
          const { bits, ends } = encode(data, lengths, g, context);
          const stream = modeTwoStream(lengths, g, ends, bits);
          expectSameBytes(ref.huffmanDecodeStream(stream, n), data, `reference decode, ${context}`);
          if (new Set(data).size >= 2) expectSameBytes(stream, ref.huffmanEncodeStream(data, g), `against huffmanEncodeStream, ${context}`);
        }
      }
    });

    it("codes of 11 bits back to back (4 x 11 bits a flush), with the engine's and the reference's lengths", () => {
      const seed = caseSeed('kernels huffmanEncode long codes');
      const rng = new Rng(seed);
      for (const lengths of [ref.huffmanCodeLengths(fibonacciHistogram()), codeLengths(fibonacciHistogram())]) {
        expect(Math.max(...lengths)).toBe(11);
        const longest = Array.from(lengths.keys()).filter((s) => lengths[s] === 11);
        const present = Array.from(lengths.keys()).filter((s) => lengths[s] > 0);
        for (const n of [1, 7, 1000, 5000]) {
          // mostly the longest codes, some of the others
          const data = Uint8Array.from({ length: n }, () =>
            rng.nextFloat() < 0.8 ? longest[rng.nextU32() % longest.length] : present[rng.nextU32() % present.length],
          );
          const context = `n=${n} ${describeSeed(seed)}`;
          const { bits, ends } = encode(data, lengths, 10, context);
          expectSameBytes(ref.huffmanDecodeStream(modeTwoStream(lengths, 10, ends, bits), n), data, `reference decode, ${context}`);
        }
      }
    });
  });

  describe('huffmanDecode', () => {
    /**
     * Segment sizes 2^10: 1..64 segments (fewer than the three lanes, exactly three, a partial last
     * one, segments that lanes take in turn, and those near the bitstreams' end decoded alone), the
     * thresholds of the per-segment decode (rounds of 20 symbols, whole entries of up to 4, single
     * symbols), and segments of 2^12, 2^14 and 2^20.
     */
    const CASES: { n: number; g: number }[] = [
      { n: 1, g: 10 },
      { n: 2, g: 10 },
      { n: 3, g: 10 },
      { n: 4, g: 10 },
      { n: 5, g: 10 },
      { n: 9, g: 10 },
      { n: 10, g: 10 },
      { n: 11, g: 10 },
      { n: 19, g: 10 },
      { n: 20, g: 10 },
      { n: 21, g: 10 },
      { n: 1023, g: 10 },
      { n: 1024, g: 10 },
      { n: 1025, g: 10 },
      { n: 3 * 1024 - 1, g: 10 },
      { n: 3 * 1024, g: 10 },
      { n: 3 * 1024 + 5, g: 10 },
      { n: 4 * 1024, g: 10 },
      { n: 4 * 1024 + 1, g: 10 },
      { n: 5000, g: 10 },
      { n: 7 * 1024 + 3, g: 10 },
      { n: 9 * 1024, g: 10 },
      { n: 40 * 1024 + 7, g: 10 },
      { n: 64 * 1024, g: 10 },
      { n: 20 * 4096 + 5, g: 12 },
      { n: 100_000, g: 14 },
      { n: 50_000, g: 20 },
    ];

    /** Segments of different entropy: the interleaved decoder's four segments finish at different times. */
    function unevenBytes(rng: Rng, n: number, g: number): Uint8Array {
      const out = new Uint8Array(n);
      for (let i = 0; i < n; i++) {
        const segment = Math.floor(i / 2 ** g);
        out[i] =
          segment % 3 === 0
            ? rng.nextFloat() < 0.97
              ? 0
              : 1 + (rng.nextU32() % 30)
            : segment % 3 === 1
              ? rng.nextU32() & 0xff
              : rng.nextU32() % 30;
      }
      return out;
    }

    it('decodes reference-encoded streams exactly, whatever the 8 bytes after them hold', () => {
      const seed = caseSeed('kernels huffmanDecode');
      const rng = new Rng(seed);
      for (const { n, g } of CASES) {
        const shapes: [string, Uint8Array][] = [
          ['skewed', skewedBytes(rng, n)],
          ['random', randomBytes(rng, n)],
          ['two symbols', Uint8Array.from({ length: n }, (_, i) => (i === 0 ? 1 : rng.nextFloat() < 0.8 ? 0 : 1))],
          ['uneven segments', unevenBytes(rng, n, g)],
          // a 1-bit code: up to four symbols a table entry
          ['90% zeros', Uint8Array.from({ length: n }, () => (rng.nextFloat() < 0.9 ? 0 : rng.nextU32() & 0xff))],
        ];
        if (n >= 2000) {
          const hist = fibonacciHistogram();
          const present = Array.from(hist.keys()).filter((s) => hist[s] > 0);
          shapes.push([
            'mostly rare symbols of a Fibonacci histogram',
            Uint8Array.from({ length: n }, (_, i) => present[i < present.length ? i : rng.nextU32() % present.length]),
          ]);
        }
        for (const [shape, data] of shapes) {
          if (new Set(data).size < 2) continue;
          const context = `${shape} n=${n} g=${g} ${describeSeed(seed)}`;
          const { lengths, ends, bits } = parseModeTwo(ref.huffmanEncodeStream(data, g), n);
          for (const slackFill of [0x00, 0xff]) {
            const { result, out } = kernelDecode(h, lengths, g, ends, bits, n, slackFill);
            expect(result, context).toBe(0);
            expectSameBytes(out, data, context);
          }
        }
      }
    });

    it("decodes the engine's code lengths when the 11-bit limit binds", () => {
      const seed = caseSeed('kernels huffmanDecode engine lengths');
      const rng = new Rng(seed);
      const hist = fibonacciHistogram();
      const present = Array.from(hist.keys()).filter((s) => hist[s] > 0);
      const lengths = codeLengths(hist);
      const data = Uint8Array.from({ length: 6000 }, () => present[rng.nextU32() % present.length]);
      const { bits, ends } = expectedSegments(data, lengths, 10);
      // the reference reads the same stream
      expectSameBytes(ref.huffmanDecodeStream(modeTwoStream(lengths, 10, ends, bits), data.length), data, 'reference');
      const { result, out } = kernelDecode(h, lengths, 10, ends, bits, data.length);
      expect(result).toBe(0);
      expectSameBytes(out, data, describeSeed(seed));
    });

    it('a segment cut short by one byte returns -1, in every position of a 5-, a 9- and a 40-segment stream', () => {
      const seed = caseSeed('kernels huffmanDecode truncated');
      const rng = new Rng(seed);
      for (const n of [5000, 9 * 1024, 40 * 1024 - 3]) {
        const data = skewedBytes(rng, n);
        const { lengths, ends, bits } = parseModeTwo(ref.huffmanEncodeStream(data, 10), n);
        for (let cut = 0; cut < ends.length; cut++) {
          // drop the last byte of segment `cut`: its end and every later offset move back by one
          const at = ends[cut] - 1;
          const shorter = concat([bits.subarray(0, at), bits.subarray(at + 1)]);
          const shorterEnds = Array.from(ends, (e, j) => (j >= cut ? e - 1 : e));
          const context = `n=${n} segment ${cut} of ${ends.length} ${describeSeed(seed)}`;
          expect(referenceDecode(modeTwoStream(lengths, 10, shorterEnds, shorter), n), context).toBeInstanceOf(Error);
          expect(kernelDecode(h, lengths, 10, shorterEnds, shorter, n).result, context).toBe(-1);
        }
      }
    });

    it('empty or all-zero-offset bitstreams return -1 without reading past the 8 bytes after them', () => {
      const lengths = lengthsOfCode();
      for (const n of [1, 10, 1024, 5000]) {
        const segments = Math.ceil(n / 1024);
        expect(kernelDecode(h, lengths, 10, new Array<number>(segments).fill(0), new Uint8Array(0), n).result, `n=${n}`).toBe(-1);
      }
    });

    it('n = 0 returns 0 and writes nothing', () => {
      const { result } = kernelDecode(h, lengthsOfCode(), 10, [], new Uint8Array(0), 0);
      expect(result).toBe(0);
    });

    it('offsets that decrease or point past the bitstreams return -1, reading nothing past the 8 bytes after them', () => {
      const seed = caseSeed('kernels huffmanDecode offsets');
      const rng = new Rng(seed);
      for (const n of [1000, 5000, 40 * 1024 + 9]) {
        const data = skewedBytes(rng, n);
        const { lengths, ends, bits } = parseModeTwo(ref.huffmanEncodeStream(data, 10), n);
        expect(kernelDecode(h, lengths, 10, ends, bits, n).result, `n=${n} as encoded`).toBe(0);
        for (let k = 0; k < ends.length; k++) {
          const context = `n=${n} segment ${k} of ${ends.length} ${describeSeed(seed)}`;
          // segment k and every later one end past the bitstreams (still in order)
          const past = Array.from(ends, (e, j) => (j >= k ? bits.length + 1 + (j - k) * 1000 : e));
          expect(kernelDecode(h, lengths, 10, past, bits, n).result, `past the end, ${context}`).toBe(-1);
          // far past: 2^31
          const far = Array.from(ends, (e, j) => (j >= k ? 2 ** 31 + j : e));
          expect(kernelDecode(h, lengths, 10, far, bits, n).result, `far past the end, ${context}`).toBe(-1);
          if (k > 0) {
            // segment k ends before segment k - 1
            const back = Array.from(ends, (e, j) => (j === k ? ends[k - 1] - 1 : e));
            if (back[k] >= 0) expect(kernelDecode(h, lengths, 10, back, bits, n).result, `decreasing, ${context}`).toBe(-1);
          }
        }
        // every segment empty but the last, which holds all the bits
        const lastOnly = Array.from(ends, (_, j) => (j === ends.length - 1 ? bits.length : 0));
        expect(kernelDecode(h, lengths, 10, lastOnly, bits, n).result, `n=${n} all bits in the last segment`).toBe(
          referenceDecode(modeTwoStream(lengths, 10, lastOnly, bits), n) instanceof Error ? -1 : 0,
        );
      }
    });

    it('bitstreams of all ones (the longest codes) under short segments: the lanes read nothing past the 8 bytes after them', () => {
      // every segment claims `spacing` bytes but its 1024 codes need far more: each lane runs through
      // the segments after its own, up to 7 bytes a round, unchecked while far enough from the end
      for (const lengths of [
        ref.huffmanCodeLengths(fibonacciHistogram()),
        new Uint8Array(256).fill(8),
        codeLengths(fibonacciHistogram()),
      ]) {
        for (const spacing of [10, 50, 100, 300, 700]) {
          const segments = 40;
          const bits = new Uint8Array(segments * spacing).fill(0xff);
          const ends = Array.from({ length: segments }, (_, k) => (k + 1) * spacing);
          const n = segments * 1024;
          const context = `longest code ${Math.max(...lengths)} bits, segments of ${spacing} bytes`;
          expect(referenceDecode(modeTwoStream(lengths, 10, ends, bits), n), context).toBeInstanceOf(Error);
          for (const slackFill of [0x00, 0xff]) expect(kernelDecode(h, lengths, 10, ends, bits, n, slackFill).result, context).toBe(-1);
        }
      }
    });

    it('a corrupt segment near the end behind faster segments: no lane reads past the 8 bytes after the bitstreams, whichever lane takes it', () => {
      // of segments 0..2 one decodes 20 symbols a round (1-bit codes), the two others five (11-bit
      // codes): the lane that finishes the fast one first takes segment 3, all ones (11-bit codes
      // again) but only `claimed` bytes long, and runs on through its end while the others finish
      // theirs (150 rounds of up to 7 bytes): it must stop at the end of the bitstreams
      // symbols 0..11 of 1, 2, ..., 10, 11 and 11 bits: all ones is the last code of 11 bits
      const lengths = Uint8Array.from({ length: 256 }, (_, s) => (s < 11 ? s + 1 : s === 11 ? 11 : 0));
      const longest = [10, 11];
      const seed = caseSeed('kernels huffmanDecode corrupt near the end');
      const rng = new Rng(seed);
      const slow = () => Uint8Array.from({ length: 1024 }, () => longest[rng.nextU32() % longest.length]);
      for (const fast of [0, 1, 2]) {
        const valid = concat([0, 1, 2].map((k) => (k === fast ? new Uint8Array(1024) : slow())));
        const { bits, ends } = expectedSegments(valid, lengths, 10);
        for (const claimed of [1, 20, 300, 700, 1000, 1030, 1300, 1407]) {
          const all = concat([bits, new Uint8Array(claimed).fill(0xff)]);
          const allEnds = [...ends, all.length];
          const context = `fast segment ${fast}, segment 3 of ${claimed} bytes ${describeSeed(seed)}`;
          expect(referenceDecode(modeTwoStream(lengths, 10, allEnds, all), 4096), context).toBeInstanceOf(Error);
          for (const slackFill of [0x00, 0xff])
            expect(kernelDecode(h, lengths, 10, allEnds, all, 4096, slackFill).result, context).toBe(-1);
        }
        // and the same segments valid
        const whole = concat([valid, slow()]);
        const good = expectedSegments(whole, lengths, 10);
        const { result, out } = kernelDecode(h, lengths, 10, good.ends, good.bits, 4096);
        expect(result, `fast segment ${fast}`).toBe(0);
        expectSameBytes(out, whole, `fast segment ${fast} ${describeSeed(seed)}`);
      }
    });

    function lengthsOfCode(): Uint8Array {
      const lengths = new Uint8Array(256);
      lengths[0] = 1;
      lengths[1] = 2;
      lengths[2] = 3;
      lengths[3] = 3;
      return lengths;
    }

    it("flipped bits in the bitstreams: -1 exactly when the reference rejects, else the reference's bytes", () => {
      const seed = caseSeed('kernels huffmanDecode flips');
      const rng = new Rng(seed);
      let rejected = 0;
      let trials = 0;
      for (const { n, g } of [
        { n: 40, g: 10 },
        { n: 5000, g: 10 },
        { n: 9 * 1024 + 7, g: 10 },
        { n: 30 * 1024 + 7, g: 10 },
      ]) {
        for (const data of [skewedBytes(rng, n), skewedBytes(rng, n, 3)]) {
          const { lengths, ends, bits } = parseModeTwo(ref.huffmanEncodeStream(data, g), n);
          for (let t = 0; t < 40; t++) {
            const bad = bits.slice();
            for (let f = rng.intBetween(1, 3); f > 0; f--) {
              const bit = rng.nextU32() % (bad.length * 8);
              bad[bit >> 3] ^= 1 << (bit & 7);
            }
            const context = `n=${n} g=${g} trial ${t} ${describeSeed(seed)}`;
            const expected = referenceDecode(modeTwoStream(lengths, g, ends, bad), n);
            const { result, out } = kernelDecode(h, lengths, g, ends, bad, n);
            trials++;
            if (expected instanceof Error) {
              rejected++;
              expect(result, `${context}: the reference says ${expected.message}`).toBe(-1);
            } else {
              expect(result, context).toBe(0);
              expectSameBytes(out, expected, context);
            }
          }
        }
      }
      // both outcomes were exercised
      expect(rejected).toBeGreaterThan(0);
      expect(rejected).toBeLessThan(trials);
    });

    it("random bitstreams under random segment layouts: never a trap, never a write past the output, the reference's verdict", () => {
      const seed = caseSeed('kernels huffmanDecode garbage');
      const rng = new Rng(seed);
      const codes = [lengthsOfCode(), ref.huffmanCodeLengths(fibonacciHistogram()), new Uint8Array(256).fill(8)];
      for (let t = 0; t < 90; t++) {
        const lengths = codes[t % codes.length];
        // a third of the trials with enough segments for the lanes
        const n = t % 3 === 2 ? rng.intBetween(6000, 60_000) : rng.intBetween(1, 6000);
        const segments = Math.ceil(n / 1024);
        const ends: number[] = [];
        let end = 0;
        for (let s = 0; s < segments; s++) ends.push((end += rng.intBetween(0, 1500)));
        const bits = randomBytes(rng, end);
        const context = `trial ${t} n=${n} ${describeSeed(seed)}`;
        const expected = referenceDecode(modeTwoStream(lengths, 10, ends, bits), n);
        const { result, out } = kernelDecode(h, lengths, 10, ends, bits, n);
        if (expected instanceof Error) expect(result, context).toBe(-1);
        else {
          expect(result, context).toBe(0);
          expectSameBytes(out, expected, context);
        }
      }
    });
  });
});

// ---------------------------------------------------------------------------------------------
// Stage 7, predict (assembly/predict.ts), against test/support/predict-reference.ts
// ---------------------------------------------------------------------------------------------

describe.each(VARIANTS)('%s build: predict', (variant) => {
  const typed = (w: Width, n: number) => (w === 1 ? new Uint8Array(n) : w === 2 ? new Uint16Array(n) : new Uint32Array(n));
  for (const w of [1, 2, 4] as const) {
    it(`every predictor, width ${w}: residuals split into fields are the reference's, decode inverts them (in place), the SIMD body and its edges`, () => {
      const h = builds[variant];
      const k = h.kernels;
      const encode = w === 1 ? k.predictEncode8 : w === 2 ? k.predictEncode16 : k.predictEncode32;
      const decode = w === 1 ? k.predictDecode8 : w === 2 ? k.predictDecode16 : k.predictDecode32;
      const split = w === 1 ? k.splitFields8 : w === 2 ? k.splitFields16 : k.splitFields32;
      const join = w === 1 ? k.joinFields8 : w === 2 ? k.joinFields16 : k.joinFields32;
      const seed = caseSeed(`kernels predict ${w}`);
      const rng = new Rng(seed);
      const mask = w === 4 ? 0xffffffff : (1 << (8 * w)) - 1;
      for (let trial = 0; trial < 40; trial++) {
        const fields = rng.intBetween(1, 5);
        const X = rng.intBetween(1, 70); // rows of 1 to 70 cells: past and below a vector
        const Y = rng.intBetween(1, 4);
        const rows = Y * rng.intBetween(1, 4);
        const n = fields * X * rows;
        const smooth = trial % 2 === 0;
        const u = typed(w, n).map((_, i) => (smooth ? Math.round(1000 * Math.sin(i / 17)) + (rng.nextU32() % 5) : rng.nextU32()) & mask);
        for (let p = 0; p <= 5; p++) {
          const context = `predictor ${p}, ${fields} fields, X ${X}, Y ${Y}, ${rows} rows, ${smooth ? 'smooth' : 'noise'}, ${describeSeed(seed)}`;
          h.reset();
          const uPtr = h.copyIn(u);
          const resPtr = h.allocFilled(n * w + GUARD, SENTINEL);
          encode(uPtr, resPtr, X * fields, Y, fields, p, 0, rows);
          expectUntouched(h, resPtr + n * w, GUARD, `encode, ${context}`);
          const planesPtr = h.allocFilled(n * w + GUARD, SENTINEL);
          split(resPtr, planesPtr, fields, n / fields);
          const planes = ref2.predictResiduals(u, w, fields, X, Y, p);
          const got = h.copyOut(w === 1 ? Uint8Array : w === 2 ? Uint16Array : Uint32Array, planesPtr, n);
          expect(Array.from(got), `encode, ${context}`).toEqual(planes.flatMap((plane) => Array.from(plane)));
          // rows encoded apart (a sample's rows: neighbours read before `first`) are the same residuals
          if (rows > 1) {
            const partPtr = h.allocFilled(n * w, 0);
            const first = rng.intBetween(1, rows - 1);
            encode(uPtr, partPtr, X * fields, Y, fields, p, first, rows - first);
            expectSameBytes(
              h.bytes(partPtr, (rows - first) * X * fields * w),
              h.bytes(resPtr + first * X * fields * w, (rows - first) * X * fields * w),
              `rows from ${first}, ${context}`,
            );
          }
          // decode: join the planes back and undo the predictor in place
          const backPtr = h.allocFilled(n * w + GUARD, SENTINEL);
          join(planesPtr, backPtr, fields, n / fields);
          decode(backPtr, backPtr, X * fields, Y, fields, p, rows);
          expectSameBytes(h.bytes(backPtr, n * w), h.bytes(uPtr, n * w), `decode, ${context}`);
          expectUntouched(h, backPtr + n * w, GUARD, `decode, ${context}`);
        }
      }
    });
  }

  it('float order and decimal maps: the reference values, exceptions in element order, the inverse', () => {
    const h = builds[variant];
    const k = h.kernels;
    const rng = new Rng(caseSeed('kernels predict maps'));
    const n = 3 * 500;
    const x = new Float32Array(n).map((_, i) =>
      i % 101 === 4 ? NaN : i % 77 === 3 ? -0 : i % 59 === 2 ? 1 / 3 : Math.round((rng.nextFloat() - 0.5) * 1e5) / [100, 1000, 10][i % 3],
    );
    const bytes = new Uint8Array(x.buffer);
    h.reset();
    const inPtr = h.copyIn(x);
    const outPtr = h.alloc(4 * n);
    k.floatOrderEncode(inPtr, outPtr, n);
    expect(Array.from(h.copyOut(Uint32Array, outPtr, n))).toEqual(Array.from(ref2.mapEncode(bytes, 4, 1, 3).values));
    k.floatOrderDecode(outPtr, outPtr, n);
    expectSameBytes(h.bytes(outPtr, 4 * n), bytes, 'float order inverse');
    const exps = [2, 3, 1];
    const expPtr = h.copyIn(new Uint8Array(exps));
    const factorPtr = h.copyIn(
      Float64Array.from({ length: 19 }, (_, e) => Number(`1e-${e}`)),
      0,
      8,
    );
    const idx = h.alloc(4 * n);
    const val = h.alloc(4 * n);
    const e = k.decimalEncodeF32(inPtr, outPtr, n, 3, expPtr, factorPtr, idx, val, n);
    const expected = ref2.mapEncode(bytes, 4, 2, 3, exps);
    expect(e).toBe(expected.exceptions.indices.length);
    expect(Array.from(h.copyOut(Uint32Array, idx, e))).toEqual(expected.exceptions.indices);
    expect(Array.from(h.copyOut(Uint32Array, val, e))).toEqual(expected.exceptions.values);
    // the values at exceptions are the writer's choice: compare the others
    const got = h.copyOut(Uint32Array, outPtr, n);
    const exc = new Set(expected.exceptions.indices);
    for (let i = 0; i < n; i++) if (!exc.has(i)) expect(got[i], `element ${i}`).toBe(expected.values[i]);
    k.decimalDecodeF32(outPtr, outPtr, n, 3, expPtr, factorPtr);
    expect(k.scatterBits32(outPtr, n, idx, val, e)).toBe(0);
    expectSameBytes(h.bytes(outPtr, 4 * n), bytes, 'decimal inverse with its exceptions');
    // exception lists out of order or out of range are refused
    if (e >= 2) {
      h.view(Uint32Array, idx, e).reverse();
      expect(k.scatterBits32(outPtr, n, idx, val, e)).toBe(1);
    }
    h.view(Uint32Array, idx, 1)[0] = n;
    expect(k.scatterBits32(outPtr, n, idx, val, 1)).toBe(1);
  });
});
