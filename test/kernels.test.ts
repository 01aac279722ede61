/**
 * The wasm kernels (assembly/) in both builds, build/parle.wasm (SIMD) and
 * build/parle-scalar.wasm, against the plain references in test/support/reference.ts, on
 * seeded random data. Every case's seed is in its failure message; PARLE_SEED=<n> reruns the
 * suite from another base seed. Both builds get identical inputs (the seed ignores the build),
 * so agreeing with the reference means agreeing with each other.
 */
import { beforeAll, describe, expect, test } from 'vitest';
import { DECODE_SLACK_BYTES, KeyKind, SORT_SCRATCH_BYTES } from '../ts/cpu/wasm.js';
import { KernelHarness, loadBothBuilds, type TestedVariant } from './support/kernels.js';
import * as reference from './support/reference.js';
import {
  Rng,
  SPECIAL_F32_BITS,
  caseSeed,
  describeSeed,
  fillRuns,
  randomF32Bits,
  randomLengths,
  randomWords,
  shapeName,
  type RunShape,
  type WordArray,
  type WordArrayConstructor,
} from './support/random.js';

const VARIANTS: readonly TestedVariant[] = ['simd', 'scalar'];
/** Both sides of every SIMD block size and of 2^8 and 2^16, and one large input. */
const SIZES = [0, 1, 2, 15, 16, 17, 255, 256, 257, 65535, 65536, 65537, 3_000_000];
/**
 * Up to 2^21 keys the sort is compared with the reference (it packs (key, index) in a float64);
 * 3.5 M keys take the kernel's MSD-first path (from 3 * 2^20) and are checked by
 * {@link expectStableSort}. Smaller sizes take the plain LSD path.
 */
const SORT_SIZES = [...SIZES.slice(0, -1), 3_500_001];
const WIDTHS = [
  { bits: 8, ctor: Uint8Array },
  { bits: 16, ctor: Uint16Array },
  { bits: 32, ctor: Uint32Array },
] as const;
const SENTINEL = 0xa5;
/** Bytes past each output that must keep the sentinel (beyond the allowed slack). */
const GUARD_BYTES = 64;

let builds: Record<TestedVariant, KernelHarness>;
beforeAll(async () => {
  builds = await loadBothBuilds();
});

/** Fails with the first differing index; far cheaper than toEqual on millions of elements. */
function expectSameElements(actual: ArrayLike<number>, expected: ArrayLike<number>, context: string): void {
  if (actual.length !== expected.length) expect.fail(`${context}: length ${actual.length}, expected ${expected.length}`);
  for (let i = 0; i < expected.length; i++) {
    if (actual[i] !== expected[i]) expect.fail(`${context}: first difference at [${i}]: got ${actual[i]}, expected ${expected[i]}`);
  }
}

/** Fails unless every byte in [ptr, ptr + length) is `fill`. */
function expectUntouched(h: KernelHarness, ptr: number, length: number, fill: number, context: string): void {
  const bytes = h.bytes(ptr, length);
  const at = bytes.findIndex((b) => b !== fill);
  if (at >= 0) expect.fail(`${context}: byte ${at} past the allowed region was written`);
}

/** Copies `data` so that it ends exactly at the end of the memory: a read past it traps. */
function placeAtMemoryEnd(h: KernelHarness, data: WordArray | Float32Array | Int32Array): number {
  const start = h.alloc(0);
  h.ensure(start + data.byteLength);
  const ptr = h.byteLength - data.byteLength;
  h.bytes(ptr, data.byteLength).set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
  h.alloc(h.byteLength - start);
  return ptr;
}

/** [0, 1, ..., n - 1]: values that tell where each key came from. */
function iota(n: number): Uint32Array {
  const out = new Uint32Array(n);
  for (let i = 0; i < n; i++) out[i] = i;
  return out;
}

/** Memoizes reference results per case name, shared by both builds. */
const memo = new Map<string, unknown>();
function once<T>(key: string, make: () => T): T {
  if (!memo.has(key)) memo.set(key, make());
  return memo.get(key) as T;
}

// -------------------------------------------------------------------------------------------
// RLE

type EncodeName = 'rleEncode8' | 'rleEncode16' | 'rleEncode32';
type DecodeName = 'rleDecode8' | 'rleDecode16' | 'rleDecode32';

const RUN_SHAPES: RunShape[] = [
  { kind: 'equal' },
  { kind: 'unique' },
  { kind: 'uniform', maxRun: 4 },
  { kind: 'uniform', maxRun: 40 },
  { kind: 'long' },
  { kind: 'noise', bits: 1 },
];

describe.each(VARIANTS)('rle encode + decode round trip (%s)', (variant) => {
  for (const { bits, ctor } of WIDTHS) {
    for (const shape of RUN_SHAPES) {
      for (const n of SIZES) {
        const name = `u${bits} ${shapeName(shape)} n=${n}`;
        test(name, () => {
          const h = builds[variant];
          h.reset();
          const seed = caseSeed(`rle ${name}`);
          const context = `${variant} ${name} ${describeSeed(seed)}`;
          const { input, expected } = once(`rle ${name}`, () => {
            const input = fillRuns(new Rng(seed), new (ctor as WordArrayConstructor)(n), shape);
            return { input, expected: reference.rleEncode(input) };
          });
          const size = ctor.BYTES_PER_ELEMENT;
          const valuesPtr = h.allocFilled(n * size + GUARD_BYTES, SENTINEL);
          const lengthsPtr = h.allocFilled(n * 4 + GUARD_BYTES, SENTINEL);
          const inPtr = placeAtMemoryEnd(h, input);

          const runs = h.kernels[`rleEncode${bits}` as EncodeName](inPtr, n, valuesPtr, lengthsPtr);
          expect(runs, context).toBe(expected.values.length);
          expectSameElements(h.copyOut(ctor, valuesPtr, runs), expected.values, `${context} values`);
          expectSameElements(h.copyOut(Uint32Array, lengthsPtr, runs), expected.lengths, `${context} lengths`);
          expectUntouched(h, valuesPtr + n * size, GUARD_BYTES, SENTINEL, `${context} values`);
          expectUntouched(h, lengthsPtr + n * 4, GUARD_BYTES, SENTINEL, `${context} lengths`);
          expectSameElements(h.copyOut(ctor, inPtr, n), input, `${context} input changed`);

          const outPtr = h.allocFilled(n * size + DECODE_SLACK_BYTES + GUARD_BYTES, SENTINEL);
          const written = h.kernels[`rleDecode${bits}` as DecodeName](valuesPtr, lengthsPtr, runs, outPtr);
          expect(written, context).toBe(n);
          expectSameElements(h.copyOut(ctor, outPtr, n), input, `${context} decoded`);
          expectUntouched(h, outPtr + n * size + DECODE_SLACK_BYTES, GUARD_BYTES, SENTINEL, `${context} decode slack`);
        });
      }
    }
  }

  test('f32 bit patterns through rleEncode32: NaN payloads and -0 survive', () => {
    const h = builds[variant];
    h.reset();
    const specials = Uint32Array.from(SPECIAL_F32_BITS.flatMap((bits, i) => Array(1 + (i % 3)).fill(bits)));
    // -0 next to +0 and two different NaNs next to each other are distinct runs.
    const input = Uint32Array.from([0x80000000, 0, 0, 0x7fc00000, 0x7fc00001, 0x7fc00001, ...specials]);
    const expected = reference.rleEncode(input);
    const inPtr = h.copyIn(input);
    const valuesPtr = h.alloc(input.byteLength);
    const lengthsPtr = h.alloc(input.length * 4);
    const runs = h.kernels.rleEncode32(inPtr, input.length, valuesPtr, lengthsPtr);
    expectSameElements(h.copyOut(Uint32Array, valuesPtr, runs), expected.values, variant);
    expectSameElements(h.copyOut(Uint32Array, lengthsPtr, runs), expected.lengths, variant);
    expect(Array.from(expected.lengths.slice(0, 4))).toEqual([1, 2, 1, 2]);
    const outPtr = h.alloc(input.byteLength + DECODE_SLACK_BYTES);
    h.kernels.rleDecode32(valuesPtr, lengthsPtr, runs, outPtr);
    expectSameElements(h.copyOut(Uint32Array, outPtr, input.length), input, variant);
  });

  test('i32 through rleEncode32', () => {
    const h = builds[variant];
    h.reset();
    const input = Int32Array.from([-1, -1, 0, -2147483648, -2147483648, 2147483647]);
    const inPtr = h.copyIn(input);
    const valuesPtr = h.alloc(input.byteLength);
    const lengthsPtr = h.alloc(input.length * 4);
    const runs = h.kernels.rleEncode32(inPtr, input.length, valuesPtr, lengthsPtr);
    expect(Array.from(h.copyOut(Int32Array, valuesPtr, runs))).toEqual([-1, 0, -2147483648, 2147483647]);
    expect(Array.from(h.copyOut(Uint32Array, lengthsPtr, runs))).toEqual([2, 1, 2, 1]);
  });

  test('the documented example', () => {
    const h = builds[variant];
    h.reset();
    const inPtr = h.copyIn(Uint8Array.from([0, 2, 2, 9, 5, 5, 5, 8]));
    const valuesPtr = h.alloc(8);
    const lengthsPtr = h.alloc(32);
    expect(h.kernels.rleEncode8(inPtr, 8, valuesPtr, lengthsPtr)).toBe(5);
    expect(Array.from(h.copyOut(Uint8Array, valuesPtr, 5))).toEqual([0, 2, 9, 5, 8]);
    expect(Array.from(h.copyOut(Uint32Array, lengthsPtr, 5))).toEqual([1, 2, 1, 3, 1]);
  });
});

describe.each(VARIANTS)('rle decode of given runs (%s)', (variant) => {
  const runShapes = [
    { name: 'lengths 0..3 (zeros write nothing)', min: 0, max: 3 },
    { name: 'lengths 1..40 (both sides of 32 bytes)', min: 1, max: 40 },
    { name: 'lengths 0..300', min: 0, max: 300 },
    { name: 'lengths 65537..70000 (longer than 2^16)', min: 65537, max: 70000 },
  ];
  const runCounts = [0, 1, 2, 15, 16, 17, 255, 256, 257, 5000];
  for (const { bits, ctor } of WIDTHS) {
    for (const shape of runShapes) {
      for (const runCount of runCounts) {
        if (shape.min > 60000 && runCount > 17) continue;
        const name = `u${bits} ${shape.name} runs=${runCount}`;
        test(name, () => {
          const h = builds[variant];
          h.reset();
          const seed = caseSeed(`decode ${name}`);
          const context = `${variant} ${name} ${describeSeed(seed)}`;
          const { values, lengths, expected } = once(`decode ${name}`, () => {
            const rng = new Rng(seed);
            const values = randomWords(rng, ctor as WordArrayConstructor, runCount);
            const lengths = randomLengths(rng, runCount, shape.min, shape.max);
            return { values, lengths, expected: reference.rleDecode(values, lengths) };
          });
          const size = ctor.BYTES_PER_ELEMENT;
          const total = expected.length;
          const valuesPtr = h.copyIn(values);
          const outPtr = h.allocFilled(total * size + DECODE_SLACK_BYTES + GUARD_BYTES, SENTINEL);
          const lengthsPtr = placeAtMemoryEnd(h, lengths);
          const written = h.kernels[`rleDecode${bits}` as DecodeName](valuesPtr, lengthsPtr, runCount, outPtr);
          expect(written, context).toBe(total);
          expectSameElements(h.copyOut(ctor, outPtr, total), expected, context);
          expectUntouched(h, outPtr + total * size + DECODE_SLACK_BYTES, GUARD_BYTES, SENTINEL, context);
        });
      }
    }
  }
});

// -------------------------------------------------------------------------------------------
// Scan

type ScanType = 'u32' | 'i32' | 'f32';
const SCAN_CTORS = { u32: Uint32Array, i32: Int32Array, f32: Float32Array } as const;

/** Inputs whose every partial sum is exact in f32 (small integers, sums below 2^24). */
function exactF32Input(rng: Rng, n: number): Float32Array {
  const max = n > 0 ? Math.max(1, Math.min(255, Math.floor((2 ** 24 - 1024) / n))) : 1;
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = rng.intBetween(-max, max);
  return out;
}

describe.each(VARIANTS)('scan (%s)', (variant) => {
  for (const type of ['u32', 'i32', 'f32'] as ScanType[]) {
    for (const inclusive of [true, false]) {
      for (const inPlace of [false, true]) {
        for (const n of SIZES) {
          const name = `${type} ${inclusive ? 'inclusive' : 'exclusive'}${inPlace ? ' in place' : ''} n=${n}`;
          test(name, () => {
            const h = builds[variant];
            h.reset();
            const seed = caseSeed(`scan ${type} ${n}`);
            const context = `${variant} ${name} ${describeSeed(seed)}`;
            const { input, carryIn } = once(`scan input ${type} ${n}`, () => {
              const rng = new Rng(seed);
              // f32: exactly representable sums, so the SIMD order must match bit for bit.
              const input = type === 'f32' ? exactF32Input(rng, n) : new SCAN_CTORS[type](randomWords(rng, Uint32Array, n).buffer);
              const carryIn = type === 'f32' ? rng.intBetween(-1000, 1000) : type === 'i32' ? rng.nextU32() | 0 : rng.nextU32();
              return { input, carryIn };
            });
            const expected = once(`scan ${name}`, () => reference.scan(input, { inclusive, carryIn }));
            const separateOutPtr = inPlace ? 0 : h.allocFilled(input.byteLength + GUARD_BYTES, SENTINEL);
            const inPtr = placeAtMemoryEnd(h, input);
            const outPtr = inPlace ? inPtr : separateOutPtr;
            const scan = type === 'f32' ? h.kernels.scanF32 : h.kernels.scanU32;
            const carryOut = scan(inPtr, outPtr, n, inclusive ? 1 : 0, carryIn);
            const ctor = SCAN_CTORS[type];
            expectSameElements(new Uint32Array(h.copyOut(ctor, outPtr, n).buffer), new Uint32Array(expected.out.buffer), context);
            if (type === 'f32') expect(carryOut, context).toBe(expected.carryOut);
            else expect(type === 'i32' ? carryOut | 0 : carryOut >>> 0, context).toBe(expected.carryOut);
            if (!inPlace) {
              expectUntouched(h, outPtr + input.byteLength, GUARD_BYTES, SENTINEL, context);
              expectSameElements(h.copyOut(ctor, inPtr, n), input, `${context} input changed`);
            }
          });
        }
      }
    }
  }

  test('documented example: carryIn 10', () => {
    const h = builds[variant];
    h.reset();
    const inPtr = h.copyIn(Uint32Array.from([3, 1, 7, 0, 4]));
    const outPtr = h.alloc(20);
    expect(h.kernels.scanU32(inPtr, outPtr, 5, 1, 10) >>> 0).toBe(25);
    expect(Array.from(h.copyOut(Uint32Array, outPtr, 5))).toEqual([13, 14, 21, 21, 25]);
    expect(h.kernels.scanU32(inPtr, outPtr, 5, 0, 10) >>> 0).toBe(25);
    expect(Array.from(h.copyOut(Uint32Array, outPtr, 5))).toEqual([10, 13, 14, 21, 21]);
  });

  test('u32 wraps: carry out as a bit pattern', () => {
    const h = builds[variant];
    h.reset();
    const input = new Uint32Array(37).fill(0xffffffff);
    const inPtr = h.copyIn(input);
    const carry = h.kernels.scanU32(inPtr, inPtr, 37, 1, 0x80000000);
    expect(carry >>> 0).toBe((0x80000000 - 37) >>> 0);
    expectSameElements(h.copyOut(Uint32Array, inPtr, 37), reference.scan(input, { inclusive: true, carryIn: 0x80000000 }).out, variant);
  });

  test('f32: -0 sums stay -0', () => {
    const h = builds[variant];
    h.reset();
    const input = new Float32Array(40).fill(-0);
    const inPtr = h.copyIn(input);
    const outPtr = h.alloc(input.byteLength);
    expect(Object.is(h.kernels.scanF32(inPtr, outPtr, 40, 1, -0), -0)).toBe(true);
    expect(h.copyOut(Float32Array, outPtr, 40).every((x) => Object.is(x, -0))).toBe(true);
  });

  for (const n of [17, 65537, 3_000_000]) {
    test(`f32 random floats within rounding tolerance n=${n}`, () => {
      const h = builds[variant];
      h.reset();
      const seed = caseSeed(`scan f32 random ${n}`);
      const rng = new Rng(seed);
      const input = new Float32Array(n);
      for (let i = 0; i < n; i++) input[i] = (rng.nextFloat() - 0.3) * 100;
      const expected = reference.scan(input, { inclusive: true, carryIn: 1.5 }).out;
      const inPtr = h.copyIn(input);
      h.kernels.scanF32(inPtr, inPtr, n, 1, 1.5);
      const got = h.copyOut(Float32Array, inPtr, n);
      // Each order's error is at most (i + 1) * 2^-24 * (|carry| + sum |x|) (recursive summation
      // bound); two orders differ by at most twice that. The scalar build matches exactly.
      let absPrefix = 1.5;
      for (let i = 0; i < n; i++) {
        absPrefix += Math.abs(input[i]);
        const bound = variant === 'scalar' ? 0 : 2 * (i + 2) * 2 ** -24 * absPrefix;
        if (!(Math.abs(got[i] - expected[i]) <= bound)) expect.fail(`${variant} [${i}]: ${got[i]} vs ${expected[i]} (bound ${bound}) ${describeSeed(seed)}`);
      }
    });
  }
});

// -------------------------------------------------------------------------------------------
// Radix sort

const KEY_KINDS: { kind: reference.SortKeyKind; keyKind: KeyKind }[] = [
  { kind: 'u32', keyKind: KeyKind.U32 },
  { kind: 'i32', keyKind: KeyKind.I32 },
  { kind: 'f32', keyKind: KeyKind.F32 },
];

/** Runs radixSort32 on copies of keyBits (and values); returns the sorted data and which buffer held it. */
function runSort(h: KernelHarness, keyBits: Uint32Array, keyKind: KeyKind, values?: Uint32Array) {
  const n = keyBits.length;
  h.reset();
  const keysPtr = h.copyIn(keyBits);
  const keysTmpPtr = h.allocFilled(n * 4, SENTINEL);
  const valuesPtr = values ? h.copyIn(values) : 0;
  const valuesTmpPtr = values ? h.allocFilled(n * 4, SENTINEL) : 0;
  const scratchPtr = h.allocFilled(SORT_SCRATCH_BYTES + GUARD_BYTES, SENTINEL);
  const inTmp = h.kernels.radixSort32(keysPtr, keysTmpPtr, valuesPtr, valuesTmpPtr, n, keyKind, scratchPtr);
  expectUntouched(h, scratchPtr + SORT_SCRATCH_BYTES, GUARD_BYTES, SENTINEL, 'scratch');
  return {
    inTmp,
    keys: h.copyOut(Uint32Array, inTmp ? keysTmpPtr : keysPtr, n),
    values: values ? h.copyOut(Uint32Array, inTmp ? valuesTmpPtr : valuesPtr, n) : undefined,
  };
}

/**
 * Checks a stable sort without a reference sort of pairs: the keys are the input's keys in
 * order (V8's sort of the order-preserving u32s, mapped back: the map is a bijection); with
 * values = 0..n-1, every value is a distinct input index holding the same key, and equal keys
 * keep ascending values.
 */
function expectStableSort(input: Uint32Array, kind: reference.SortKeyKind, got: { keys: Uint32Array; values?: Uint32Array }, context: string, memoKey: string): void {
  const n = input.length;
  const expectedKeys = once(`sorted keys ${memoKey} ${kind}`, () => {
    const sorted = new Uint32Array(n);
    for (let i = 0; i < n; i++) sorted[i] = reference.orderKey(input[i], kind);
    sorted.sort();
    for (let i = 0; i < n; i++) sorted[i] = fromOrderKey(sorted[i], kind);
    return sorted;
  });
  expectSameElements(got.keys, expectedKeys, `${context} keys`);
  if (!got.values) return;
  const seen = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    const v: number = got.values[i];
    if (v >= n || seen[v] || input[v] !== got.keys[i]) expect.fail(`${context}: value ${v} at [${i}] is not a distinct index of key ${got.keys[i]}`);
    seen[v] = 1;
    if (i > 0 && got.keys[i] === got.keys[i - 1] && got.values[i - 1] > v) expect.fail(`${context}: unstable at [${i}]`);
  }
}

function fromOrderKey(key: number, kind: reference.SortKeyKind): number {
  if (kind === 'u32') return key;
  if (kind === 'i32') return (key ^ 0x80000000) >>> 0;
  return (key & 0x80000000 ? key ^ 0x80000000 : ~key) >>> 0;
}

function sortInput(kind: reference.SortKeyKind, rng: Rng, n: number): Uint32Array {
  return kind === 'f32' ? randomF32Bits(rng, n) : randomWords(rng, Uint32Array, n);
}

describe.each(VARIANTS)('radix sort (%s)', (variant) => {
  for (const { kind, keyKind } of KEY_KINDS) {
    for (const withValues of [false, true]) {
      for (const n of SORT_SIZES) {
        // The MSD-first path's u32 and i32 cases are the shapes below; random keys here for f32.
        if (n > 2 ** 21 && kind !== 'f32') continue;
        const name = `${kind}${withValues ? ' key-value' : ''} n=${n}`;
        test(name, () => {
          const seed = caseSeed(`sort ${kind} ${n}`);
          const context = `${variant} ${name} ${describeSeed(seed)}`;
          const { keys, values, expected } = once(`sort ${name}`, () => {
            const rng = new Rng(seed);
            const keys = sortInput(kind, rng, n);
            const values = withValues ? iota(n) : undefined;
            return { keys, values, expected: n <= 2 ** 21 ? reference.stableSort(keys, kind, values) : undefined };
          });
          const got = runSort(builds[variant], keys, keyKind, values);
          if (!expected) return expectStableSort(keys, kind, got, context, `${kind} ${n}`);
          expectSameElements(got.keys, expected.keys, `${context} keys`);
          if (values) expectSameElements(got.values!, expected.values!, `${context} values`);
        });
      }
    }
  }

  test('stability: 2^18 keys from 16 values keep their values in order', () => {
    const seed = caseSeed('sort stability');
    const rng = new Rng(seed);
    const n = 1 << 18;
    for (const { kind, keyKind } of KEY_KINDS) {
      const keys = Uint32Array.from({ length: n }, () => (kind === 'f32' ? SPECIAL_F32_BITS[rng.nextU32() % 16] : rng.nextU32() % 16) * (kind === 'f32' ? 1 : 0x01010101));
      const values = iota(n);
      const got = runSort(builds[variant], keys, keyKind, values);
      const expected = reference.stableSort(keys, kind, values);
      expectSameElements(got.keys, expected.keys, `${variant} ${kind} keys ${describeSeed(seed)}`);
      expectSameElements(got.values!, expected.values!, `${variant} ${kind} values ${describeSeed(seed)}`);
    }
  });

  test('f32 totalOrder of the special values', () => {
    const f = (bits: number) => bits >>> 0;
    const input = Uint32Array.from([0x7fc00000, 0xff800000, 0x3f800000, 0x80000000, 0x00000000, 0xffc00000, 0x00000001, 0x80000001, 0x7f800000, 0xbf800000, 0x7f800001, 0xffffffff]);
    const got = runSort(builds[variant], input, KeyKind.F32);
    expect(Array.from(got.keys).map(f)).toEqual(
      [
        0xffffffff, // -NaN with the largest payload
        0xffc00000, // -NaN
        0xff800000, // -Inf
        0xbf800000, // -1
        0x80000001, // negative denormal
        0x80000000, // -0
        0x00000000, // +0
        0x00000001, // denormal
        0x3f800000, // 1
        0x7f800000, // +Inf
        0x7f800001, // sNaN
        0x7fc00000, // NaN
      ].map(f),
    );
  });

  test('i32 order: negative before positive', () => {
    const input = new Uint32Array(Int32Array.from([5, -1, 2147483647, -2147483648, 0, -7]).buffer);
    const got = runSort(builds[variant], input, KeyKind.I32);
    expect(Array.from(new Int32Array(got.keys.buffer))).toEqual([-2147483648, -7, -1, 0, 5, 2147483647]);
  });

  // Passes whose digit is the same in every key are skipped: the result's buffer says how many ran.
  const skipCases = [
    { name: 'one varying byte (byte 1): one pass, result in tmp', make: (r: number) => 0x12340056 | ((r & 0xff) << 8), inTmp: { u32: 1, i32: 1, f32: 1 } },
    // f32: negative keys become ~x, so their low bytes differ from the positive ones': 4 passes.
    { name: 'one varying byte (byte 3)', make: (r: number) => 0x00abcdef | ((r & 0xff) << 24), inTmp: { u32: 1, i32: 1, f32: 0 } },
    { name: 'two varying bytes: two passes, result in keys', make: (r: number) => 0x12000000 | (r & 0xff00ff), inTmp: { u32: 0, i32: 0, f32: 0 } },
    { name: 'all equal: no pass', make: () => 0xdeadbeef, inTmp: { u32: 0, i32: 0, f32: 0 } },
  ];
  for (const c of skipCases) {
    test(`skip passes: ${c.name}`, () => {
      const seed = caseSeed(`sort skip ${c.name}`);
      const rng = new Rng(seed);
      const n = 100_003;
      const keys = Uint32Array.from({ length: n }, () => c.make(rng.nextU32()) >>> 0);
      const values = iota(n);
      for (const { kind, keyKind } of KEY_KINDS) {
        const got = runSort(builds[variant], keys, keyKind, values);
        const expected = reference.stableSort(keys, kind, values);
        expect(got.inTmp, `${variant} ${kind} ${describeSeed(seed)}`).toBe(c.inTmp[kind]);
        expectSameElements(got.keys, expected.keys, `${variant} ${kind} ${describeSeed(seed)}`);
        expectSameElements(got.values!, expected.values!, `${variant} ${kind} values ${describeSeed(seed)}`);
      }
    });
  }

  // Shapes for the MSD-first path (n >= 3 * 2^20): few huge buckets (larger than the cache),
  // digits that vary only in some buckets, per-bucket pass counts of 0, 1, 2 and 3.
  const msdShapes: { name: string; make: (r: number, s: number) => number; inTmp?: number }[] = [
    { name: 'top byte 0 or 1, low 24 bits random', make: (r: number, s: number) => ((s & 1) << 24) | (r & 0xffffff) },
    { name: 'bytes 3 and 0 vary', make: (r: number) => (r & 0xff0000ff) | 0x00345600 },
    { name: 'bytes 3 and 2 vary, byte 0 only in odd buckets', make: (r: number, s: number) => (r & 0xffff0000) | (r & 0x01000000 ? s & 0xff : 0x42) },
    { name: 'bytes 2 and 1 vary (top byte constant)', make: (r: number) => 0x7f0000ab | (r & 0x00ffff00) },
    { name: 'top byte 0 or 1, byte 2 constant (a split level skipped)', make: (r: number, s: number) => ((s & 1) << 24) | 0x00330000 | (r & 0xffff) },
    { name: 'only byte 1 varies: one pass, result in tmp', make: (r: number) => 0x12340056 | (r & 0xff00), inTmp: 1 },
    { name: 'all equal: no pass', make: () => 0xdeadbeef, inTmp: 0 },
  ];
  for (const [index, shape] of msdShapes.entries()) {
    // u32 for every shape; i32 and f32 (other digits vary after their transforms) for one each.
    const kinds = [KEY_KINDS[0], KEY_KINDS[1 + (index % 2)]];
    test(`MSD-first path: ${shape.name}`, () => {
      const seed = caseSeed(`sort msd ${shape.name}`);
      const n = 3_300_007;
      const { keys, values } = once(`msd input ${shape.name}`, () => {
        const rng = new Rng(seed);
        const keys = new Uint32Array(n);
        for (let i = 0; i < n; i++) keys[i] = shape.make(rng.nextU32(), rng.nextU32());
        return { keys, values: iota(n) };
      });
      for (const { kind, keyKind } of kinds) {
        const got = runSort(builds[variant], keys, keyKind, values);
        expectStableSort(keys, kind, got, `${variant} ${kind} ${describeSeed(seed)}`, `msd ${shape.name}`);
        if (shape.inTmp !== undefined) expect(got.inTmp, `${variant} ${kind}`).toBe(shape.inTmp);
      }
    });
  }

  test('sorted and reverse-sorted input', () => {
    const n = 70_000;
    const ascending = Uint32Array.from({ length: n }, (_, i) => i * 61);
    const descending = ascending.slice().reverse();
    expectSameElements(runSort(builds[variant], ascending, KeyKind.U32).keys, ascending, `${variant} ascending`);
    expectSameElements(runSort(builds[variant], descending, KeyKind.U32).keys, ascending, `${variant} descending`);
  });
});

// -------------------------------------------------------------------------------------------
// varint run lengths and sumLengths

const EDGE_LENGTHS = [1, 2, 127, 128, 129, 130, 16384, 16385, 16386, 2 ** 21, 2 ** 21 + 1, 2 ** 28, 2 ** 28 + 1, 2 ** 32 - 2, 2 ** 32 - 1];

/** Decodes `bytes` placed at the very end of the memory, so a read past them would trap. */
function decodeAtEnd(h: KernelHarness, bytes: Uint8Array, runCount: number) {
  h.reset();
  const lengthsPtr = h.allocFilled(runCount * 4 + GUARD_BYTES, SENTINEL);
  const inPtr = placeAtMemoryEnd(h, bytes);
  const consumed = h.kernels.varintDecodeLengths(inPtr, bytes.length, lengthsPtr, runCount);
  expectUntouched(h, lengthsPtr + runCount * 4, GUARD_BYTES, SENTINEL, 'lengths');
  return { consumed, lengths: h.copyOut(Uint32Array, lengthsPtr, runCount) };
}

/**
 * Encodes `lengths` with the kernel (bytes equal to the reference's, nothing written past them),
 * decodes them back from the end of the memory (every byte consumed, the same lengths); returns
 * the encoded bytes.
 */
function roundTripLengths(h: KernelHarness, lengths: Uint32Array, context: string): Uint8Array {
  const runCount = lengths.length;
  const expectedBytes = reference.varintEncodeLengths(lengths);
  const lengthsPtr = h.copyIn(lengths);
  const outPtr = h.allocFilled(runCount * 5 + GUARD_BYTES, SENTINEL);
  const written = h.kernels.varintEncodeLengths(lengthsPtr, runCount, outPtr);
  expectSameElements(h.copyOut(Uint8Array, outPtr, written), expectedBytes, context);
  expectUntouched(h, outPtr + written, GUARD_BYTES, SENTINEL, context);
  const back = decodeAtEnd(h, expectedBytes, runCount);
  expect(back.consumed, context).toBe(expectedBytes.length);
  expectSameElements(back.lengths, lengths, context);
  return expectedBytes;
}

describe.each(VARIANTS)('varint lengths (%s)', (variant) => {
  for (const runCount of [0, 1, 17, 1000, 100_000]) {
    test(`round trip, runs=${runCount}`, () => {
      const h = builds[variant];
      h.reset();
      const seed = caseSeed(`varint ${runCount}`);
      const rng = new Rng(seed);
      const lengths = Uint32Array.from({ length: runCount }, (_, i) =>
        i < EDGE_LENGTHS.length ? EDGE_LENGTHS[i] : Math.max(1, rng.nextU32() >>> rng.intBetween(0, 31)),
      );
      const expectedBytes = roundTripLengths(h, lengths, `${variant} ${describeSeed(seed)}`);
    });
  }

  // the SIMD paths take 16 one-byte values at a time: short runs with a long one now and then,
  // on both sides of every multiple of 16, and every cut of such a stream
  for (const runCount of [15, 16, 17, 31, 32, 33, 48, 1000]) {
    test(`mostly short runs (16 at a time), runs=${runCount}`, () => {
      const h = builds[variant];
      h.reset();
      const seed = caseSeed(`varint short ${runCount}`);
      const rng = new Rng(seed);
      const lengths = Uint32Array.from({ length: runCount }, () =>
        rng.nextU32() % 23 === 0 ? rng.intBetween(129, 1_000_000) : rng.intBetween(1, 128),
      );
      const expectedBytes = roundTripLengths(h, lengths, `${variant} ${describeSeed(seed)}`);
      if (runCount <= 48) {
        for (let cut = 0; cut < expectedBytes.length; cut++) {
          expect(decodeAtEnd(h, expectedBytes.subarray(0, cut), runCount).consumed, `cut at ${cut} ${describeSeed(seed)}`).toBe(-1);
        }
      }
    });
  }

  test('documented example', () => {
    const bytes = Uint8Array.from([0x00, 0x7f, 0x80, 0x01, 0x80, 0x80, 0x01]);
    const got = decodeAtEnd(builds[variant], bytes, 4);
    expect(got.consumed).toBe(7);
    expect(Array.from(got.lengths)).toEqual([1, 128, 129, 16385]);
  });

  test('every truncation of a valid stream returns -1 without reading past it', () => {
    const lengths = Uint32Array.from([300, 1, 2 ** 32 - 1, 70000, 5, 2 ** 28 + 3]);
    const bytes = reference.varintEncodeLengths(lengths);
    for (let cut = 0; cut < bytes.length; cut++) {
      expect(decodeAtEnd(builds[variant], bytes.subarray(0, cut), lengths.length).consumed, `cut at ${cut}`).toBe(-1);
    }
    expect(decodeAtEnd(builds[variant], bytes, lengths.length).consumed).toBe(bytes.length);
  });

  test('a guard page of continuation bytes after the input is never read', () => {
    const h = builds[variant];
    h.reset();
    const bytes = Uint8Array.from([0x05, 0x80, 0x80]); // the second value is cut off
    const inPtr = h.copyIn(bytes, 65536);
    h.bytes(inPtr + bytes.length, 65536).fill(0x80); // a reader that overran would keep going...
    h.bytes(inPtr + bytes.length + 2, 1).fill(0x01); // ...and find a valid end here
    const lengthsPtr = h.alloc(8);
    expect(h.kernels.varintDecodeLengths(inPtr, bytes.length, lengthsPtr, 2)).toBe(-1);
    expect(h.kernels.varintDecodeLengths(inPtr, 1, lengthsPtr, 1)).toBe(1);
    expect(h.kernels.varintDecodeLengths(inPtr, bytes.length, lengthsPtr, 0)).toBe(0);
  });

  const hostile: { name: string; bytes: number[]; consumed: number; first?: number }[] = [
    { name: 'six bytes (overlong)', bytes: [0x80, 0x80, 0x80, 0x80, 0x80, 0x00], consumed: -1 },
    { name: 'five bytes with the continuation bit on the fifth', bytes: [0xff, 0xff, 0xff, 0xff, 0xff, 0x01], consumed: -1 },
    { name: '2^32 - 1 (+1 does not fit)', bytes: [0xff, 0xff, 0xff, 0xff, 0x0f], consumed: -1 },
    { name: 'value >= 2^32', bytes: [0x80, 0x80, 0x80, 0x80, 0x10], consumed: -1 },
    { name: 'largest fitting value 2^32 - 2', bytes: [0xfe, 0xff, 0xff, 0xff, 0x0f], consumed: 5, first: 2 ** 32 - 1 },
    { name: 'non-minimal 0 within 5 bytes is accepted', bytes: [0x80, 0x80, 0x00], consumed: 3, first: 1 },
  ];
  for (const c of hostile) {
    test(`hostile: ${c.name}`, () => {
      const got = decodeAtEnd(builds[variant], Uint8Array.from(c.bytes), 1);
      expect(got.consumed).toBe(c.consumed);
      if (c.first !== undefined) expect(got.lengths[0]).toBe(c.first);
    });
  }

  test('random bytes agree with the reference decoder', () => {
    const seed = caseSeed('varint fuzz');
    const rng = new Rng(seed);
    for (let trial = 0; trial < 2000; trial++) {
      const n = rng.intBetween(0, 40);
      // Mostly continuation-heavy bytes so that long and overflowing values occur.
      const bytes = Uint8Array.from({ length: n }, () => (rng.nextFloat() < 0.6 ? 0x80 | rng.nextU32() : rng.nextU32()) & 0xff);
      const runCount = rng.intBetween(0, 12);
      const expected = reference.varintDecodeLengths(bytes, runCount);
      const got = decodeAtEnd(builds[variant], bytes, runCount);
      const context = `${variant} trial ${trial} ${describeSeed(seed)}`;
      expect(got.consumed, context).toBe(expected.consumed);
      if (expected.consumed >= 0) expectSameElements(got.lengths, expected.lengths, context);
    }
  });

  for (const runCount of [0, 1, 3, 4, 5, 1001, 1 << 20]) {
    test(`sumLengths runs=${runCount}`, () => {
      const h = builds[variant];
      h.reset();
      const seed = caseSeed(`sum ${runCount}`);
      const lengths = randomWords(new Rng(seed), Uint32Array, runCount);
      if (runCount > 2) lengths[1] = 2 ** 32 - 1;
      const expected = lengths.reduce((sum, x) => sum + x, 0);
      expect(h.kernels.sumLengths(placeAtMemoryEnd(h, lengths), runCount), describeSeed(seed)).toBe(expected);
    });
  }
});

// -------------------------------------------------------------------------------------------
// The two builds against each other, where the references leave room (float rounding).

describe('simd and scalar builds agree', () => {
  test('simdEnabled tells the builds apart', () => {
    expect(builds.simd.kernels.simdEnabled()).toBe(1);
    expect(builds.scalar.kernels.simdEnabled()).toBe(0);
  });

  test('rle encode, scan u32 and sort: identical outputs on the same input', () => {
    const seed = caseSeed('agree');
    const rng = new Rng(seed);
    const n = 200_001;
    const runs = fillRuns(rng, new Uint16Array(n), { kind: 'uniform', maxRun: 20 });
    const keys = randomF32Bits(rng, n);
    const outputs = VARIANTS.map((variant) => {
      const h = builds[variant];
      h.reset();
      const inPtr = h.copyIn(runs);
      const valuesPtr = h.alloc(n * 2);
      const lengthsPtr = h.alloc(n * 4);
      const count = h.kernels.rleEncode16(inPtr, n, valuesPtr, lengthsPtr);
      const scanPtr = h.copyIn(keys);
      const carry = h.kernels.scanU32(scanPtr, scanPtr, n, 0, 7) >>> 0;
      const sorted = runSort(h, keys, KeyKind.F32).keys;
      return { count, values: h.copyOut(Uint16Array, valuesPtr, count), lengths: h.copyOut(Uint32Array, lengthsPtr, count), carry, sorted };
    });
    const [a, b] = outputs;
    expect(a.count).toBe(b.count);
    expectSameElements(a.values, b.values, `values ${describeSeed(seed)}`);
    expectSameElements(a.lengths, b.lengths, `lengths ${describeSeed(seed)}`);
    expect(a.carry).toBe(b.carry);
    expectSameElements(a.sorted, b.sorted, `sorted ${describeSeed(seed)}`);
  });

  test('build/parle-unshared.wasm (the SIMD source over an unshared memory) matches the SIMD build', async () => {
    const unshared = await KernelHarness.create('simd-unshared');
    expect(unshared.memory.buffer instanceof SharedArrayBuffer).toBe(false);
    const seed = caseSeed('agree unshared');
    const rng = new Rng(seed);
    const n = 100_003;
    const runs = fillRuns(rng, new Uint8Array(n), { kind: 'uniform', maxRun: 30 });
    const keys = randomF32Bits(rng, n);
    const [a, b] = [builds.simd, unshared].map((h) => {
      h.reset();
      const inPtr = h.copyIn(runs);
      const valuesPtr = h.alloc(n);
      const lengthsPtr = h.alloc(n * 4);
      const count = h.kernels.rleEncode8(inPtr, n, valuesPtr, lengthsPtr);
      const outPtr = h.alloc(n + DECODE_SLACK_BYTES);
      h.kernels.rleDecode8(valuesPtr, lengthsPtr, count, outPtr);
      const scanPtr = h.copyIn(keys);
      const carry = h.kernels.scanU32(scanPtr, scanPtr, n, 1, 0) >>> 0;
      return { count, lengths: h.copyOut(Uint32Array, lengthsPtr, count), decoded: h.copyOut(Uint8Array, outPtr, n), carry, sorted: runSort(h, keys, KeyKind.F32).keys };
    });
    expect(b.count).toBe(a.count);
    expectSameElements(b.lengths, a.lengths, describeSeed(seed));
    expectSameElements(b.decoded, runs, describeSeed(seed));
    expect(b.carry).toBe(a.carry);
    expectSameElements(b.sorted, a.sorted, describeSeed(seed));
  });

  test('scan f32: SIMD within rounding of scalar on random floats', () => {
    const seed = caseSeed('agree f32');
    const rng = new Rng(seed);
    const n = 1_000_003;
    const input = Float32Array.from({ length: n }, () => (rng.nextFloat() - 0.5) * 2 ** rng.intBetween(-8, 8));
    const [simd, scalar] = VARIANTS.map((variant) => {
      const h = builds[variant];
      h.reset();
      const inPtr = h.copyIn(input);
      const outPtr = h.alloc(input.byteLength);
      const carry = h.kernels.scanF32(inPtr, outPtr, n, 0, 0);
      return { carry, out: h.copyOut(Float32Array, outPtr, n) };
    });
    let absPrefix = 0;
    for (let i = 0; i < n; i++) {
      // exclusive: element i sums inputs before i
      const bound = 2 * (i + 2) * 2 ** -24 * absPrefix;
      if (!(Math.abs(simd.out[i] - scalar.out[i]) <= bound)) expect.fail(`[${i}] ${simd.out[i]} vs ${scalar.out[i]} ${describeSeed(seed)}`);
      absPrefix += Math.abs(input[i]);
    }
    expect(Math.abs(simd.carry - scalar.carry)).toBeLessThanOrEqual(2 * (n + 2) * 2 ** -24 * absPrefix);
  });
});
