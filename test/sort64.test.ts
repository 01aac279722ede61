// Sort of 64-bit keys (u64, i64, f64): the kernels (radixSort64, mergePathSplit64, mergeRuns64)
// in both builds, and engine.sort on one thread and on pools of workers (shared memory: the
// top-digit split or sort-and-merge; unshared: sort-and-merge), against a plain reference
// (test/support/reference.ts stableSort64: Array.prototype.sort of the indices with a comparator
// on the order keys, ties by index).
// Keys are handled as bit patterns (BigUint64Array), so NaN payloads and -0 are compared exactly.
import { afterAll, beforeAll, describe, expect, it, test, vi } from 'vitest';
import { CpuPath, type CpuPathOptions } from '../ts/cpu/cpu-path.js';
import { KeyKind, SORT64_SCRATCH_BYTES } from '../ts/cpu/wasm.js';
import { Engine } from '../ts/engine.js';
import { ErrorCodes, ParleError } from '../ts/errors.js';
import type { GpuContext } from '../ts/gpu/index.js';
import type { ParleArray } from '../ts/types.js';
import { PROCEDURES } from '../ts/codec/cpu/procedures.js';
import { KernelHarness, loadBothBuilds, type TestedVariant } from './support/kernels.js';
import { Rng, caseSeed, describeSeed } from './support/random.js';
import { stableSort64, type SortKey64Kind } from './support/reference.js';

const KINDS: { kind: SortKey64Kind; keyKind: KeyKind }[] = [
  { kind: 'u64', keyKind: KeyKind.U64 },
  { kind: 'i64', keyKind: KeyKind.I64 },
  { kind: 'f64', keyKind: KeyKind.F64 },
];
const SENTINEL = 0xa5;
const GUARD_BYTES = 64;
const I64_MIN = 1n << 63n; // as a bit pattern
const I64_MAX = (1n << 63n) - 1n;
const U64_MAX = (1n << 64n) - 1n;

/** Bit patterns of special f64 values, in IEEE 754 totalOrder. */
const F64_TOTAL_ORDER: readonly bigint[] = [
  0xffffffffffffffffn, // -NaN, every payload bit
  0xfff8000000000000n, // -NaN (quiet)
  0xfff0000000000001n, // -sNaN
  0xfff0000000000000n, // -Infinity
  0xffefffffffffffffn, // most negative finite
  0xbff0000000000000n, // -1
  0x800fffffffffffffn, // most negative subnormal
  0x8000000000000001n, // smallest negative subnormal
  0x8000000000000000n, // -0
  0x0000000000000000n, // +0
  0x0000000000000001n, // smallest subnormal
  0x000fffffffffffffn, // largest subnormal
  0x0010000000000000n, // smallest normal
  0x3ff0000000000000n, // 1
  0x7fefffffffffffffn, // largest finite
  0x7ff0000000000000n, // +Infinity
  0x7ff0000000000001n, // signalling NaN, smallest payload
  0x7ff7ffffffffffffn, // signalling NaN, largest payload
  0x7ff8000000000000n, // NaN (quiet, what arithmetic makes)
  0x7ff8000000012345n, // quiet NaN with a payload
];

/** [0, 1, ..., n - 1]: values that tell where each key came from. */
function iota(n: number): Uint32Array {
  return Uint32Array.from({ length: n }, (_, i) => i);
}

function random64(rng: Rng): bigint {
  return (BigInt(rng.nextU32()) << 32n) | BigInt(rng.nextU32());
}

/** f64 bit patterns: specials, random bit patterns (any class) and ordinary values of mixed sign and scale. */
function randomF64Bits(rng: Rng, n: number, specialShare = 0.1): BigUint64Array {
  const out = new BigUint64Array(n);
  const f = new Float64Array(out.buffer);
  for (let i = 0; i < n; i++) {
    const r = rng.nextFloat();
    if (r < specialShare) out[i] = F64_TOTAL_ORDER[rng.nextU32() % F64_TOTAL_ORDER.length];
    else if (r < 0.4) out[i] = random64(rng);
    else f[i] = (rng.nextFloat() - 0.5) * 2 ** rng.intBetween(-30, 30);
  }
  return out;
}

/** Keys of one kind: full-range bit patterns, with a few of the kind's extremes mixed in. */
function randomKeys(kind: SortKey64Kind, rng: Rng, n: number): BigUint64Array {
  if (kind === 'f64') return randomF64Bits(rng, n);
  const extremes = kind === 'i64' ? [I64_MIN, I64_MAX, 0n, U64_MAX /* -1 */] : [0n, 1n, I64_MIN, U64_MAX];
  return BigUint64Array.from({ length: n }, () => (rng.nextU32() % 50 === 0 ? extremes[rng.nextU32() % 4] : random64(rng)));
}

/** Few distinct keys (so stability shows), of the kind's whole range. */
function fewDistinct(kind: SortKey64Kind, rng: Rng, n: number, distinct = 40): BigUint64Array {
  const pool = randomKeys(kind, rng, distinct);
  return BigUint64Array.from({ length: n }, () => pool[rng.nextU32() % distinct]);
}

/** The first index where two bit-pattern arrays differ, in a failure message; far cheaper than toEqual. */
function expectSame(actual: ArrayLike<bigint | number>, expected: ArrayLike<bigint | number>, context: string): void {
  if (actual.length !== expected.length) expect.fail(`${context}: length ${actual.length}, expected ${expected.length}`);
  for (let i = 0; i < expected.length; i++) {
    if (actual[i] !== expected[i]) expect.fail(`${context}: first difference at [${i}]: got ${actual[i]}, expected ${expected[i]}`);
  }
}

/**
 * Maps bit patterns to order keys (or back, `inverse`) in place, on their 32-bit halves: as
 * orderKey64, without a BigInt an element (millions of keys).
 */
function mapOrderWords(bits: BigUint64Array, kind: SortKey64Kind, inverse: boolean): void {
  if (kind === 'u64') return;
  const words = new Uint32Array(bits.buffer, bits.byteOffset, 2 * bits.length);
  for (let i = 1; i < words.length; i += 2) {
    const hi = words[i];
    // f64: negative keys (sign set before the map, clear after it) flip every bit
    const negative = kind === 'f64' && (inverse ? !(hi & 0x80000000) : hi & 0x80000000);
    if (negative) {
      words[i] = ~hi;
      words[i - 1] = ~words[i - 1];
    } else words[i] = hi ^ 0x80000000;
  }
}

/**
 * A stable sort checked without a reference sort of pairs (for millions of keys): the keys are
 * the input's keys in order (V8's sort of the order keys, mapped back: the map is a bijection);
 * every value is a distinct input index holding the same key; equal keys keep ascending values.
 */
function expectStableSort(
  input: BigUint64Array,
  kind: SortKey64Kind,
  got: { keys: BigUint64Array; values?: Uint32Array },
  context: string,
): void {
  const n = input.length;
  const expectedKeys = once(`sorted keys ${kind} ${context}`, () => {
    const order = input.slice();
    mapOrderWords(order, kind, false);
    order.sort();
    mapOrderWords(order, kind, true);
    return order;
  });
  expectSame(got.keys, expectedKeys, `${context} keys`);
  if (!got.values) return;
  const seen = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    const v: number = got.values[i];
    if (v >= n || seen[v] || input[v] !== got.keys[i])
      expect.fail(`${context}: value ${v} at [${i}] is not a distinct index of key ${got.keys[i]}`);
    seen[v] = 1;
    if (i > 0 && got.keys[i] === got.keys[i - 1] && got.values[i - 1] > v) expect.fail(`${context}: unstable at [${i}]`);
  }
}

const memo = new Map<string, unknown>();
/** Builds a case's data (and its reference result) once for both builds and every engine. */
function once<T>(key: string, make: () => T): T {
  if (!memo.has(key)) memo.set(key, make());
  return memo.get(key) as T;
}

// ---- the kernels ------------------------------------------------------------------------------

let builds: Record<TestedVariant, KernelHarness>;
beforeAll(async () => {
  builds = await loadBothBuilds();
});

/** Fails unless every byte in [ptr, ptr + length) is the sentinel. */
function expectUntouched(h: KernelHarness, ptr: number, length: number, context: string): void {
  const at = h.bytes(ptr, length).findIndex((b) => b !== SENTINEL);
  if (at >= 0) expect.fail(`${context}: byte ${at} past the buffer was written`);
}

/** Runs radixSort64 on copies of the keys (and values), every buffer followed by a guard. */
function runSort(h: KernelHarness, keys: BigUint64Array, keyKind: KeyKind, values?: Uint32Array) {
  const n = keys.length;
  h.reset();
  const guarded = (bytes: number) => h.allocFilled(bytes + GUARD_BYTES, SENTINEL);
  const keysPtr = guarded(n * 8);
  h.bytes(keysPtr, n * 8).set(new Uint8Array(keys.buffer, keys.byteOffset, n * 8));
  const keysTmpPtr = guarded(n * 8);
  const valuesPtr = values ? guarded(n * 4) : 0;
  if (values) h.bytes(valuesPtr, n * 4).set(new Uint8Array(values.buffer, values.byteOffset, n * 4));
  const valuesTmpPtr = values ? guarded(n * 4) : 0;
  const scratchPtr = guarded(SORT64_SCRATCH_BYTES);
  const inTmp = h.kernels.radixSort64(keysPtr, keysTmpPtr, valuesPtr, valuesTmpPtr, n, keyKind, scratchPtr);
  expectUntouched(h, keysPtr + n * 8, GUARD_BYTES, 'keys');
  expectUntouched(h, keysTmpPtr + n * 8, GUARD_BYTES, 'keys tmp');
  if (values) expectUntouched(h, valuesPtr + n * 4, GUARD_BYTES, 'values');
  if (values) expectUntouched(h, valuesTmpPtr + n * 4, GUARD_BYTES, 'values tmp');
  expectUntouched(h, scratchPtr + SORT64_SCRATCH_BYTES, GUARD_BYTES, 'scratch');
  return {
    inTmp,
    keys: new BigUint64Array(h.copyOut(Uint32Array, inTmp ? keysTmpPtr : keysPtr, 2 * n).buffer),
    values: values ? h.copyOut(Uint32Array, inTmp ? valuesTmpPtr : valuesPtr, n) : undefined,
  };
}

describe.each(['simd', 'scalar'] as const)('radixSort64 (%s)', (variant) => {
  // Both sides of the v128 block (2 keys) and of the unrolled scatter (4), of 2^8 and 2^16.
  const sizes = [0, 1, 2, 3, 4, 5, 15, 16, 17, 255, 256, 257, 65535, 65536, 65537];
  for (const { kind, keyKind } of KINDS) {
    for (const n of sizes) {
      test(`${kind} n=${n}, keys alone and key-value`, () => {
        const seed = caseSeed(`sort64 kernel ${kind} ${n}`);
        const { keys, expected } = once(`kernel ${kind} ${n}`, () => {
          const rng = new Rng(seed);
          // half full-range keys, half few distinct ones (stability shows)
          const keys = randomKeys(kind, rng, n);
          keys.set(fewDistinct(kind, rng, n >> 1), n - (n >> 1));
          return { keys, expected: stableSort64(keys, kind, iota(n)) };
        });
        const context = `${variant} ${kind} n=${n} ${describeSeed(seed)}`;
        expectSame(runSort(builds[variant], keys, keyKind).keys, expected.keys, `${context} keys`);
        const pairs = runSort(builds[variant], keys, keyKind, iota(n));
        expectSame(pairs.keys, expected.keys, `${context} key-value keys`);
        expectSame(pairs.values!, expected.values!, `${context} values`);
      });
    }
  }

  test('f64 totalOrder: -NaN < -Inf < -1 < -subnormal < -0 < +0 < subnormal < 1 < +Inf < sNaN < NaN', () => {
    const rng = new Rng(caseSeed('sort64 f64 order'));
    const shuffled = F64_TOTAL_ORDER.slice();
    for (let i = shuffled.length - 1; i > 0; i--) {
      const j = rng.nextU32() % (i + 1);
      [shuffled[i], shuffled[j]] = [shuffled[j], shuffled[i]];
    }
    const got = runSort(builds[variant], BigUint64Array.from(shuffled), KeyKind.F64);
    expect(Array.from(got.keys)).toEqual(F64_TOTAL_ORDER);
  });

  test('i64 and u64 extremes', () => {
    const i64 = BigInt64Array.from([5n, -1n, I64_MAX, -I64_MIN, 0n, -7n, 1n << 40n, -(1n << 40n)]);
    const gotI = runSort(builds[variant], new BigUint64Array(i64.buffer), KeyKind.I64);
    expect(Array.from(new BigInt64Array(gotI.keys.buffer))).toEqual([-I64_MIN, -(1n << 40n), -7n, -1n, 0n, 5n, 1n << 40n, I64_MAX]);
    const u64 = BigUint64Array.from([U64_MAX, 0n, I64_MIN, I64_MAX, 1n, U64_MAX - 1n]);
    expect(Array.from(runSort(builds[variant], u64, KeyKind.U64).keys)).toEqual([0n, 1n, I64_MAX, I64_MIN, U64_MAX - 1n, U64_MAX]);
  });

  // Passes whose digit is the same in every key are skipped: the result's buffer says how many ran.
  const skipCases = [
    {
      name: 'one varying byte (byte 5): one pass, result in tmp',
      make: (r: bigint) => 0x1234_0000_5678_9abcn | ((r & 0xffn) << 40n),
      inTmp: 1,
    },
    {
      name: 'one varying byte (byte 7): one pass, result in tmp',
      make: (r: bigint) => 0x0034_5678_9abc_def0n | ((r & 0xffn) << 56n),
      inTmp: 1,
    },
    {
      name: 'bytes 0 and 6 vary: two passes, result in keys',
      make: (r: bigint) => 0x1200_3456_789a_bc00n | (r & 0x00ff_0000_0000_00ffn),
      inTmp: 0,
    },
    { name: 'all equal: no pass', make: () => 0xdead_beef_0bad_f00dn, inTmp: 0 },
  ];
  for (const c of skipCases) {
    test(`skip passes: ${c.name}`, () => {
      const seed = caseSeed(`sort64 skip ${c.name}`);
      const rng = new Rng(seed);
      const n = 100_003;
      const keys = BigUint64Array.from({ length: n }, () => c.make(random64(rng)));
      const expected = once(`skip ${c.name}`, () => stableSort64(keys, 'u64', iota(n)));
      // i64 flips the sign bit only: the same digits vary
      for (const { kind, keyKind } of KINDS.slice(0, 2)) {
        const got = runSort(builds[variant], keys, keyKind, iota(n));
        const context = `${kind} ${describeSeed(seed)}`;
        expect(got.inTmp, `${variant} ${context}`).toBe(c.inTmp);
        if (kind === 'u64') {
          expectSame(got.keys, expected.keys, `${context} keys`);
          expectSame(got.values!, expected.values!, `${context} values`);
        } else expectStableSort(keys, kind, got, context);
      }
    });
  }

  // From 3 * 2^19 keys: the MSD split first. Buckets above 2^16 keys split again; constant
  // digits skipped at every level.
  const n = 1_600_003;
  const msdShapes: { name: string; kind: SortKey64Kind; make: (rng: Rng) => bigint; inTmp?: number }[] = [
    { name: 'random u64', kind: 'u64', make: random64 },
    {
      name: 'top byte 0..2, the rest random (buckets split again)',
      kind: 'u64',
      make: (rng) => (BigInt(rng.nextU32() % 3) << 56n) | (random64(rng) >> 8n),
    },
    {
      name: 'byte 6 is 0 or 1, bytes 0..2 random, bytes 3..5 constant (levels skipped)',
      kind: 'u64',
      make: (rng) => (BigInt(rng.nextU32() & 1) << 48n) | 0x0000_abcd_ef00_0000n | BigInt(rng.nextU32() & 0xffffff),
    },
    {
      name: 'only byte 3 varies: one pass, result in tmp',
      kind: 'u64',
      make: (rng) => 0x1122_3344_0055_6677n | (BigInt(rng.nextU32() & 0xff) << 24n),
      inTmp: 1,
    },
    { name: 'all equal: no pass', kind: 'i64', make: () => 0x8000_0000_0000_0005n, inTmp: 0 },
    { name: 'small signed i64', kind: 'i64', make: (rng) => BigInt.asUintN(64, BigInt(rng.intBetween(-100_000, 100_000))) },
    { name: 'f64 of mixed sign, scale and specials', kind: 'f64', make: (rng) => randomF64Bits(rng, 1, 0.05)[0] },
  ];
  for (const shape of msdShapes) {
    test(`MSD-first path, ${n} keys: ${shape.name}`, () => {
      const seed = caseSeed(`sort64 msd ${shape.name}`);
      const keys = once(`msd ${shape.name}`, () => {
        const rng = new Rng(seed);
        return BigUint64Array.from({ length: n }, () => shape.make(rng));
      });
      const keyKind = KINDS.find((k) => k.kind === shape.kind)!.keyKind;
      const got = runSort(builds[variant], keys, keyKind, iota(n));
      expectStableSort(keys, shape.kind, got, `${shape.name} ${describeSeed(seed)}`);
      if (shape.inTmp !== undefined) expect(got.inTmp).toBe(shape.inTmp);
    });
  }

  test('mergePathSplit64 and mergeRuns64: every diagonal, ties take A first', () => {
    const h = builds[variant];
    const seed = caseSeed('sort64 merge');
    const rng = new Rng(seed);
    for (const { kind, keyKind } of KINDS) {
      // two sorted runs sharing keys, so ties cross the runs
      const pool = fewDistinct(kind, rng, 9, 9);
      const a = stableSort64(
        BigUint64Array.from({ length: 37 }, () => pool[rng.nextU32() % 9]),
        kind,
      ).keys;
      const b = stableSort64(
        BigUint64Array.from({ length: 23 }, () => pool[rng.nextU32() % 9]),
        kind,
      ).keys;
      const all = new BigUint64Array([...a, ...b]);
      const expected = stableSort64(all, kind, iota(60)); // stable: A's (indices < 37) first on ties
      h.reset();
      const aPtr = h.copyIn(new Uint32Array(a.buffer));
      const bPtr = h.copyIn(new Uint32Array(b.buffer));
      const aVals = h.copyIn(iota(37));
      const bVals = h.copyIn(iota(23).map((i) => i + 37));
      const outKeys = h.allocFilled(60 * 8 + GUARD_BYTES, SENTINEL);
      const outVals = h.allocFilled(60 * 4 + GUARD_BYTES, SENTINEL);
      for (let diag = 0; diag <= 60; diag++) {
        const fromA = expected.values!.subarray(0, diag).filter((v) => v < 37).length;
        expect(h.kernels.mergePathSplit64(aPtr, 37, bPtr, 23, diag, keyKind), `${variant} ${kind} diag ${diag} ${describeSeed(seed)}`).toBe(
          fromA,
        );
      }
      h.kernels.mergeRuns64(aPtr, aVals, 37, bPtr, bVals, 23, outKeys, outVals, keyKind);
      const context = `${variant} ${kind} ${describeSeed(seed)}`;
      expectSame(new BigUint64Array(h.copyOut(Uint32Array, outKeys, 120).buffer), expected.keys, `${context} merged keys`);
      expectSame(h.copyOut(Uint32Array, outVals, 60), expected.values!, `${context} merged values`);
      expectUntouched(h, outKeys + 60 * 8, GUARD_BYTES, 'merged keys');
      expectUntouched(h, outVals + 60 * 4, GUARD_BYTES, 'merged values');
    }
  });
});

// ---- engine.sort ------------------------------------------------------------------------------

type Keys64 = BigUint64Array | BigInt64Array | Float64Array;

/** The keys' bit patterns as an array of `kind`'s type (a copy). */
function asKind(bits: BigUint64Array, kind: SortKey64Kind): Keys64 {
  const copy = bits.slice();
  return kind === 'u64' ? copy : kind === 'i64' ? new BigInt64Array(copy.buffer) : new Float64Array(copy.buffer);
}

function bitsOf(array: ParleArray): BigUint64Array {
  return new BigUint64Array(array.buffer, array.byteOffset, array.length);
}

const CONSTRUCTORS = { u64: BigUint64Array, i64: BigInt64Array, f64: Float64Array } as const;

async function engineWith(options: CpuPathOptions): Promise<{ engine: Engine; cpu: CpuPath }> {
  const cpu = await CpuPath.create({ procedures: PROCEDURES, ...options });
  return { engine: new Engine(cpu, null, { maxElements: 2 ** 32 - 1, maxQueue: 1024 }), cpu };
}

/** The kernels the tasks of the engine's CPU path ran, by name, while `fn` ran. */
async function kernelsRun(cpu: CpuPath, fn: () => Promise<unknown>): Promise<Set<string>> {
  const names = new Set<string>();
  const original = cpu.runAll.bind(cpu);
  const spy = vi.spyOn(cpu, 'runAll').mockImplementation(((...args: Parameters<CpuPath['runAll']>) => {
    for (const task of args[1]) if (task.proc === 'kernel') names.add((task.params as { kernel: string }).kernel);
    return original(...args);
  }) as CpuPath['runAll']);
  try {
    await fn();
  } finally {
    spy.mockRestore();
  }
  return names;
}

describe('engine.sort of 64-bit keys', () => {
  const engines: Record<string, { engine: Engine; cpu: CpuPath }> = {};
  beforeAll(async () => {
    engines.single = await engineWith({ workers: 0 });
    engines['2 workers'] = await engineWith({ workers: 2, inlineBytes: 0 });
    engines['3 workers'] = await engineWith({ workers: 3, inlineBytes: 0 });
    engines['2 workers, unshared memory'] = await engineWith({ workers: 2, inlineBytes: 0, shareMemory: false });
  });
  afterAll(async () => {
    for (const { engine } of Object.values(engines)) await engine.destroy();
  });

  /** Sorts `bits` as `kind` keys alone and with index values on `engine`; compares with the reference. */
  async function check(engine: Engine, bits: BigUint64Array, kind: SortKey64Kind, context: string, memoKey: string): Promise<void> {
    const n = bits.length;
    const expected = once(`engine ${memoKey}`, () => stableSort64(bits, kind, iota(n)));
    const keys = asKind(bits, kind);
    const sorted = await engine.sort(keys);
    expect(sorted.constructor, context).toBe(CONSTRUCTORS[kind]);
    expectSame(bitsOf(sorted), expected.keys, `${context} keys`);
    const pairs = await engine.sort(keys, { values: iota(n) });
    expectSame(bitsOf(pairs.keys), expected.keys, `${context} key-value keys`);
    expectSame(pairs.values, expected.values!, `${context} values`);
    expectSame(bitsOf(keys), bits, `${context}: the input is untouched`);
  }

  for (const { kind } of KINDS) {
    for (const n of [0, 1, 2, 3, 17, 256, 257, 5000]) {
      it(`${kind} n=${n} on one thread`, async () => {
        const seed = caseSeed(`sort64 engine ${kind} ${n}`);
        const bits = once(`engine input ${kind} ${n}`, () => fewDistinct(kind, new Rng(seed), n, 100));
        await check(engines.single.engine, bits, kind, `${kind} n=${n} ${describeSeed(seed)}`, `${kind} ${n}`);
      });
    }
  }

  it('all keys equal, and all equal but one', async () => {
    for (const { kind } of KINDS) {
      const equal = new BigUint64Array(70_000).fill(kind === 'f64' ? 0x7ff8000000000000n : I64_MIN);
      await check(engines.single.engine, equal, kind, `${kind} equal`, `${kind} equal`);
      const allButOne = equal.slice();
      allButOne[12_345] = 3n;
      await check(engines['2 workers'].engine, allButOne, kind, `${kind} all but one`, `${kind} all but one`);
    }
  });

  it('f64 special values in totalOrder, in the engine', async () => {
    const reversed = Float64Array.from(new Float64Array(BigUint64Array.from(F64_TOTAL_ORDER).buffer)).reverse();
    const sorted = await engines.single.engine.sort(reversed);
    expect(Array.from(bitsOf(sorted))).toEqual(F64_TOTAL_ORDER);
    // Float64Array.prototype.sort agrees on every value but the NaNs (it keeps one class of NaN, last)
    const finite = new Float64Array(BigUint64Array.from(F64_TOTAL_ORDER.slice(3, 16)).buffer);
    expect(Array.from(bitsOf(await engines.single.engine.sort(finite.slice().reverse())))).toEqual(
      Array.from(bitsOf(finite.slice().sort())),
    );
  });

  // Pools: a sorted segment a worker, then merges (merge path) or the top-digit split; sizes
  // around the segments' minimum of 2^16 keys (3 workers: three runs, one copied at the first merge).
  const poolSizes = [65_535, 65_536, 131_071, 131_072, 131_073, 196_608, 200_003];
  const poolShapes: { name: string; make: (kind: SortKey64Kind, rng: Rng, n: number) => BigUint64Array }[] = [
    { name: 'full range', make: randomKeys },
    // most keys in one top-digit bucket: too many for the split, so sort-and-merge
    {
      name: 'skewed',
      make: (kind, rng, n) =>
        BigUint64Array.from({ length: n }, () =>
          rng.nextU32() % 10 === 0 ? random64(rng) : 0x4000_0000_0000_0000n | BigInt(rng.nextU32()),
        ),
    },
    { name: 'few distinct', make: (kind, rng, n) => fewDistinct(kind, rng, n, 30) },
  ];
  for (const label of ['2 workers', '3 workers', '2 workers, unshared memory']) {
    for (const { kind } of KINDS) {
      for (const shape of poolShapes) {
        it(`${label}: ${kind} ${shape.name}, n around 2^16 and 2^17`, async () => {
          for (const n of poolSizes) {
            const seed = caseSeed(`sort64 pool ${kind} ${shape.name} ${n}`);
            const bits = once(`pool input ${kind} ${shape.name} ${n}`, () => shape.make(kind, new Rng(seed), n));
            await check(
              engines[label].engine,
              bits,
              kind,
              `${label} ${kind} ${shape.name} n=${n} ${describeSeed(seed)}`,
              `pool ${kind} ${shape.name} ${n}`,
            );
          }
        });
      }
    }
  }

  it('the pool takes both routes: the top-digit split (full-range keys), sort-and-merge (skewed keys, unshared memory)', async () => {
    const rng = new Rng(caseSeed('sort64 routes'));
    const n = 200_003;
    const full = asKind(randomKeys('u64', rng, n), 'u64');
    const skewed = asKind(poolShapes[1].make('f64', rng, n), 'f64');
    const { engine, cpu } = engines['2 workers'];
    const split = await kernelsRun(cpu, () => engine.sort(full, { values: iota(n) }));
    expect([...split].sort()).toEqual(['radixHistograms64', 'radixScatter64', 'radixSortBuckets64']);
    const merged = await kernelsRun(cpu, () => engine.sort(skewed, { values: iota(n) }));
    expect(merged.has('radixSort64') && merged.has('mergeRuns64')).toBe(true);
    const unshared = engines['2 workers, unshared memory'];
    const transfer = await kernelsRun(unshared.cpu, () => unshared.engine.sort(full));
    expect(transfer.has('radixSort64') && transfer.has('mergeRuns64')).toBe(true);
  });

  it('resident keys and values (engine.alloc) sort into resident results; the inputs stay', async () => {
    const { engine } = engines['2 workers'];
    const n = 150_001;
    const seed = caseSeed('sort64 resident');
    const bits = randomF64Bits(new Rng(seed), n);
    const expected = stableSort64(bits, 'f64', iota(n));
    const keys = engine.alloc('f64', n);
    bitsOf(keys).set(bits);
    const values = engine.alloc('u32', n);
    values.set(iota(n));
    const pairs = await engine.sort(keys, { values });
    expectSame(bitsOf(pairs.keys), expected.keys, `resident keys ${describeSeed(seed)}`);
    expectSame(pairs.values, expected.values!, `resident values ${describeSeed(seed)}`);
    expectSame(bitsOf(keys), bits, 'the resident input is untouched');
    for (const a of [keys, values, pairs.keys, pairs.values]) engine.free(a);
  });

  it('into a caller-owned out (and outValues), and in place', async () => {
    const { engine } = engines['2 workers'];
    const n = 140_000;
    const seed = caseSeed('sort64 out');
    const bits = randomKeys('i64', new Rng(seed), n);
    const expected = stableSort64(bits, 'i64', iota(n));
    const keys = asKind(bits, 'i64') as BigInt64Array;
    const out = new BigInt64Array(n).fill(-5n); // a sentinel: an unwritten element shows
    const outValues = new Uint32Array(n).fill(0xffffffff);
    const r = await engine.sort(keys, { values: iota(n), out, outValues });
    expect(r.keys).toBe(out);
    expect(r.values).toBe(outValues);
    expectSame(bitsOf(out), expected.keys, `out ${describeSeed(seed)}`);
    expectSame(outValues, expected.values!, `outValues ${describeSeed(seed)}`);
    const inPlace = await engine.sort(keys, { out: keys });
    expect(inPlace).toBe(keys);
    expectSame(bitsOf(keys), expected.keys, `in place ${describeSeed(seed)}`);
  });

  describe('refusals', () => {
    /** A GPU context that must not be used: every member but isLost and destroy throws. */
    const untouchableGpu = new Proxy({} as GpuContext, {
      get(_, key) {
        if (key === 'isLost') return false;
        if (key === 'destroy') return () => undefined;
        if (key === 'then') return undefined;
        throw new Error(`the GPU context was used (${String(key)})`);
      },
    });
    let withGpu: Engine;
    beforeAll(async () => {
      withGpu = new Engine(await CpuPath.create({ procedures: PROCEDURES, workers: 0 }), untouchableGpu, {
        maxElements: 2 ** 32 - 1,
        maxQueue: 16,
        calibration: 'skip',
      });
    });
    afterAll(() => withGpu.destroy());

    async function errorOf(call: () => Promise<unknown>): Promise<ParleError> {
      const error = await call().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(ParleError);
      return error as ParleError;
    }

    it("path 'gpu' with u64, i64 or f64 keys: UNSUPPORTED_TYPE (no GPU kernel), with and without a GPU", async () => {
      for (const keys of [new BigUint64Array(4), new BigInt64Array(4), new Float64Array(4)]) {
        for (const engine of [engines.single.engine, withGpu]) {
          const e = await errorOf(() => engine.sort(keys, { path: 'gpu' }));
          expect(e.code).toBe(ErrorCodes.UNSUPPORTED_TYPE);
          expect(e.message).toMatch(/no GPU kernel/);
        }
      }
    });

    it("'auto' and 'cpu' sort them on the CPU of an engine that has a GPU; explain says so", async () => {
      const bits = randomF64Bits(new Rng(caseSeed('sort64 auto')), 3000);
      const expected = stableSort64(bits, 'f64', iota(3000));
      for (const path of [undefined, 'auto', 'cpu'] as const) {
        const r = await withGpu.sort(asKind(bits, 'f64') as Float64Array, { values: iota(3000), path });
        expectSame(bitsOf(r.keys), expected.keys, `path ${path}`);
        expectSame(r.values, expected.values!, `path ${path} values`);
      }
      const why = withGpu.explain('sort', new BigInt64Array(1 << 20));
      expect(why.path).toBe('cpu');
      expect(why.predictedMs.gpu).toBeNull();
      expect(why.reason).toMatch(/i64 elements has no GPU kernel/);
    });

    const cases: [string, () => Promise<unknown>, string, RegExp][] = [
      ['i8 keys', () => engines.single.engine.sort(new Int8Array(3) as unknown as Float64Array), ErrorCodes.UNSUPPORTED_TYPE, /keys/],
      ['i16 keys', () => engines.single.engine.sort(new Int16Array(3) as unknown as Float64Array), ErrorCodes.UNSUPPORTED_TYPE, /keys/],
      ['u16 keys', () => engines.single.engine.sort(new Uint16Array(3) as unknown as Float64Array), ErrorCodes.UNSUPPORTED_TYPE, /keys/],
      [
        'u64 values',
        () => engines.single.engine.sort(new Float64Array(3), { values: new BigUint64Array(3) as unknown as Uint32Array }),
        ErrorCodes.UNSUPPORTED_TYPE,
        /options\.values/,
      ],
      [
        'values of another length',
        () => engines.single.engine.sort(new BigInt64Array(3), { values: new Uint32Array(2) }),
        ErrorCodes.LENGTH_MISMATCH,
        /options\.values/,
      ],
      [
        'out of another type',
        () => engines.single.engine.sort(new BigInt64Array(3), { out: new BigUint64Array(3) }),
        ErrorCodes.INVALID_ARGUMENT,
        /options\.out/,
      ],
      [
        'out of another length',
        () => engines.single.engine.sort(new Float64Array(3), { out: new Float64Array(4) }),
        ErrorCodes.LENGTH_MISMATCH,
        /options\.out/,
      ],
    ];
    for (const [label, call, code, message] of cases) {
      it(label, async () => {
        const e = await errorOf(call);
        expect(e.code).toBe(code);
        expect(e.message).toMatch(message);
      });
    }
  });
});
