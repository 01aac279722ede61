/**
 * Seeded random data for the kernel tests. Every generator takes an {@link Rng}; a failing test
 * prints its seed (see {@link caseSeed} and {@link describeSeed}), and `PARLE_SEED=<n>` reruns
 * the whole suite from another base seed.
 */

/**
 * A base seed from the environment variable `name`: unset (or empty), `fallback`, so that every
 * run sees the same data and a failure reproduces; an integer (decimal or 0x hex, below 2^32),
 * that seed; `random`, a seed drawn now and printed (a fuzz run: rerun a failure with the
 * printed value). Anything else throws, rather than quietly running with seed 0.
 */
export function seedFromEnv(name: string, fallback: number): number {
  const text = process.env[name]?.trim();
  if (text === undefined || text === '') return fallback >>> 0;
  if (text.toLowerCase() === 'random') {
    const seed = crypto.getRandomValues(new Uint32Array(1))[0];
    console.info(`${name}=random drew seed ${seed} (0x${seed.toString(16)}): rerun with ${name}=${seed}`);
    return seed;
  }
  const value = Number(text);
  if (!Number.isInteger(value) || value < 0 || value >= 2 ** 32) {
    throw new Error(`${name}=${JSON.stringify(text)}: expected an integer in [0, 2^32) or 'random'`);
  }
  return value;
}

/** Base seed of the suite: `PARLE_SEED` (see {@link seedFromEnv}), by default a fixed one. */
export const BASE_SEED = seedFromEnv('PARLE_SEED', 0x9e3779b9);

/** A mulberry32 generator: 32-bit state, period 2^32, good enough for test data. */
export class Rng {
  private state: number;

  constructor(readonly seed: number) {
    this.state = seed >>> 0;
  }

  /** Uniform u32. */
  nextU32(): number {
    let t = (this.state = (this.state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  }

  /** Uniform in [0, 1). */
  nextFloat(): number {
    return this.nextU32() / 4294967296;
  }

  /** Uniform integer in [lo, hi] (inclusive, hi - lo < 2^32). */
  intBetween(lo: number, hi: number): number {
    return lo + Math.floor(this.nextFloat() * (hi - lo + 1));
  }
}

/** FNV-1a of a string: folds a test case's name into the base seed. */
function hashString(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** The seed of one named case: stable across runs, changes with PARLE_SEED. */
export function caseSeed(name: string): number {
  return (BASE_SEED ^ hashString(name)) >>> 0;
}

/** "seed=0x1234abcd (PARLE_SEED=...)": put it in assertion messages. */
export function describeSeed(seed: number): string {
  return `seed=0x${seed.toString(16)} (base PARLE_SEED=${BASE_SEED})`;
}

export type WordArray = Uint8Array | Uint16Array | Uint32Array;
export type WordArrayConstructor = Uint8ArrayConstructor | Uint16ArrayConstructor | Uint32ArrayConstructor;

/** Fills `out` with uniform random words of its width. */
export function fillRandom(rng: Rng, out: WordArray): WordArray {
  for (let i = 0; i < out.length; i++) out[i] = rng.nextU32();
  return out;
}

/** `n` uniform random words of the width of `ctor`. */
export function randomWords<C extends WordArrayConstructor>(rng: Rng, ctor: C, n: number): InstanceType<C> {
  return fillRandom(rng, new ctor(n)) as InstanceType<C>;
}

/** Shapes of run-structured data. */
export type RunShape =
  | { kind: 'equal' } // one run
  | { kind: 'unique' } // every element differs from its predecessor
  | { kind: 'uniform'; maxRun: number } // run lengths uniform in 1..maxRun
  | { kind: 'long' } // run lengths uniform in 2^16+1 .. 2^17 (longer than a u16 could count)
  | { kind: 'noise'; bits: number }; // independent values of `bits` random bits: runs by chance

export function shapeName(shape: RunShape): string {
  switch (shape.kind) {
    case 'uniform':
      return `runs 1..${shape.maxRun}`;
    case 'noise':
      return `noise ${shape.bits} bits`;
    default:
      return shape.kind;
  }
}

/** A random word of the width of `out` that differs from `previous`. */
function nextValue(rng: Rng, out: WordArray, previous: number): number {
  const mask = out.BYTES_PER_ELEMENT === 4 ? 0xffffffff : (1 << (8 * out.BYTES_PER_ELEMENT)) - 1;
  let v = rng.nextU32() & mask;
  if (v === previous) v = (v + 1) & mask;
  return v >>> 0;
}

/** Fills `out` with runs of the given shape. Values of neighbouring runs always differ. */
export function fillRuns(rng: Rng, out: WordArray, shape: RunShape): WordArray {
  const n = out.length;
  if (shape.kind === 'noise') {
    const mask = 2 ** shape.bits - 1;
    for (let i = 0; i < n; i++) out[i] = rng.nextU32() & mask;
    return out;
  }
  let i = 0;
  let value = -1;
  while (i < n) {
    let len: number;
    switch (shape.kind) {
      case 'equal':
        len = n;
        break;
      case 'unique':
        len = 1;
        break;
      case 'uniform':
        len = rng.intBetween(1, shape.maxRun);
        break;
      case 'long':
        len = rng.intBetween(65537, 131072);
        break;
    }
    value = nextValue(rng, out, value);
    out.fill(value, i, Math.min(n, i + len));
    i += len;
  }
  return out;
}

/** Random run lengths in [minLength, maxLength] (0 allowed for decode tests). */
export function randomLengths(rng: Rng, runCount: number, minLength: number, maxLength: number): Uint32Array {
  const out = new Uint32Array(runCount);
  for (let i = 0; i < runCount; i++) out[i] = rng.intBetween(minLength, maxLength);
  return out;
}

/** Bit patterns of special f32 values: NaNs of both signs and several payloads, +-0, +-Inf, denormals. */
export const SPECIAL_F32_BITS: readonly number[] = [
  0x7fc00000, // NaN (canonical quiet)
  0xffc00000, // -NaN
  0x7f800001, // signalling NaN, smallest payload
  0x7fbfffff, // signalling NaN, largest payload
  0xffffffff, // -NaN, all payload bits
  0xff800001, // -sNaN
  0x7fc12345, // quiet NaN with a payload
  0x00000000, // +0
  0x80000000, // -0
  0x7f800000, // +Inf
  0xff800000, // -Inf
  0x00000001, // smallest positive denormal
  0x007fffff, // largest denormal
  0x80000001, // smallest negative denormal
  0x807fffff, // most negative denormal
  0x00800000, // smallest normal
  0x7f7fffff, // largest finite
  0xff7fffff, // most negative finite
  0x3f800000, // 1
  0xbf800000, // -1
];

/** f32 bit patterns: a mix of random bit patterns (any class), ordinary values and specials. */
export function randomF32Bits(rng: Rng, n: number, specialShare = 0.1): Uint32Array {
  const out = new Uint32Array(n);
  const f = new Float32Array(out.buffer);
  for (let i = 0; i < n; i++) {
    const r = rng.nextFloat();
    if (r < specialShare) out[i] = SPECIAL_F32_BITS[rng.nextU32() % SPECIAL_F32_BITS.length];
    else if (r < 0.5) out[i] = rng.nextU32();
    else f[i] = (rng.nextFloat() - 0.5) * 2 ** rng.intBetween(-20, 20);
  }
  return out;
}
