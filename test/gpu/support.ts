/// <reference types="@webgpu/types" />
/**
 * GPU test support: contexts, a tracked run around every test (validation error scope, every
 * buffer created is destroyed at the end), no silent skip, a seeded PRNG and plain TypeScript
 * references of every GPU op.
 */
import { afterAll, describe, it } from 'vitest';
import { createGpuContext, type GpuContext, type GpuContextOptions } from '../../ts/gpu/index.js';
import type { ElementType, ParleArray } from '../../ts/types.js';
import { arrayConstructor } from '../../ts/types.js';
import { seedFromEnv } from '../support/random.js';

const requireGpu = process.env.PARLE_REQUIRE_GPU === '1';

/**
 * Base seed of every PRNG in the GPU tests, named in every failure: fixed by default, so a
 * data-dependent GPU bug fails every run instead of one run in many; PARLE_TEST_SEED=<n> picks
 * another, PARLE_TEST_SEED=random draws one and prints it (a fuzz run; see seedFromEnv).
 */
export const baseSeed = seedFromEnv('PARLE_TEST_SEED', 0x5eed6a11);

const contexts = new Map<string, Promise<GpuContext | null>>();

/** One context per option set per test file (created on first use, destroyed after the file). */
export function context(opts: GpuContextOptions = {}): Promise<GpuContext | null> {
  const key = JSON.stringify(opts);
  let p = contexts.get(key);
  if (p === undefined) {
    p = createGpuContext(opts);
    contexts.set(key, p);
  }
  return p;
}

/** The default context, probed at import (top-level await) so suites can be skipped or failed. */
export const mainContext = await context({ stagingChunkBytes: 64 << 10 });

let skipped = 0;
afterAll(async () => {
  for (const p of contexts.values()) (await p)?.destroy();
});

/**
 * A suite of GPU tests. Without an adapter: with PARLE_REQUIRE_GPU=1 the suite holds one failing
 * test; without, its tests are skipped, counted and reported (never counted as passes).
 */
export function describeGpu(name: string, body: () => void): void {
  if (mainContext !== null) {
    describe(name, body);
    return;
  }
  if (requireGpu) {
    describe(name, () => {
      it('needs a WebGPU adapter (PARLE_REQUIRE_GPU=1)', () => {
        throw new Error('no WebGPU adapter found and PARLE_REQUIRE_GPU=1: GPU tests cannot run');
      });
    });
    return;
  }
  describe.skipIf(true)(name, () => {
    const before = skipped;
    body();
    console.warn(
      `*** ${skipped - before} GPU tests in "${name}" were SKIPPED: no WebGPU adapter. They did not pass. ` +
        `(SwiftShader: VK_ICD_FILENAMES=/usr/lib/chromium/vk_swiftshader_icd.json; ` +
        `PARLE_REQUIRE_GPU=1 turns this into a failure.) ***`,
    );
  });
}

/**
 * A GPU test: runs `fn` inside a validation error scope on `ctx`'s device, records every buffer
 * created meanwhile and destroys them at the end; fails on any validation error. The failure
 * message names the seed.
 */
export function gpuTest(
  name: string,
  fn: (ctx: GpuContext, rng: Rng) => Promise<void>,
  opts: GpuContextOptions = { stagingChunkBytes: 64 << 10 },
): void {
  if (mainContext === null) {
    skipped++;
    it.skip(name, () => undefined);
    return;
  }
  it(name, async () => {
    const ctx = await context(opts);
    if (ctx === null) throw new Error('no adapter for a second context');
    const seed = (baseSeed ^ hashString(name)) >>> 0;
    await tracked(ctx, () => fn(ctx, new Rng(seed)), `seed ${seed} (PARLE_TEST_SEED=${baseSeed})`);
  });
}

/** A GPU test that manages its own contexts (no tracking); counted like gpuTest when skipped. */
export function gpuIt(name: string, fn: () => Promise<void> | void): void {
  if (mainContext === null) {
    skipped++;
    it.skip(name, () => undefined);
    return;
  }
  it(name, fn);
}

/**
 * Makes `device`'s buffers labelled `label` with `size` bytes instead of the size asked for (past
 * maxBufferSize: never valid; 1 GiB: more than SwiftShader can allocate), for the GPU error
 * tests. Returns the function that puts createBuffer back.
 */
export function remakeBuffers(device: GPUDevice, label: string, size: number): () => void {
  const original = device.createBuffer;
  device.createBuffer = function (this: GPUDevice, desc: GPUBufferDescriptor): GPUBuffer {
    return original.call(device, desc.label === label ? { ...desc, size } : desc);
  };
  return () => {
    device.createBuffer = original;
  };
}

/** Runs `fn` with buffer tracking and a validation error scope (see gpuTest). */
export async function tracked(ctx: GpuContext, fn: () => Promise<void>, note = ''): Promise<void> {
  const device = ctx.device;
  const created: GPUBuffer[] = [];
  const original = device.createBuffer;
  device.createBuffer = function (this: GPUDevice, desc: GPUBufferDescriptor): GPUBuffer {
    const b = original.call(device, desc);
    created.push(b);
    return b;
  };
  device.pushErrorScope('validation');
  let failure: unknown;
  try {
    await fn();
  } catch (e) {
    failure = e;
  }
  device.createBuffer = original;
  if (!ctx.isLost) await ctx.releaseStaging();
  const error = ctx.isLost ? null : await device.popErrorScope();
  for (const b of created) b.destroy();
  if (failure !== undefined) {
    if (failure instanceof Error) failure.message += ` [${note}]`;
    throw failure;
  }
  if (error !== null) throw new Error(`WebGPU validation error: ${error.message} [${note}]`);
}

function hashString(s: string): number {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return h >>> 0;
}

/** Seeded PRNG (mulberry32). */
export class Rng {
  #state: number;
  constructor(readonly seed: number) {
    this.#state = seed >>> 0;
  }
  /** A uniform u32. */
  u32(): number {
    let t = (this.#state = (this.#state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  }
  /** An integer in [0, n). */
  below(n: number): number {
    return Math.floor((this.u32() / 2 ** 32) * n);
  }
}

/** Bit patterns of f32 edge values: NaNs (both signs, payloads), +-0, +-Inf, denormals, extremes. */
export const F32_SPECIAL_BITS = [
  0x7fc00000, 0xffc00000, 0x7f800001, 0xff800001, 0x7fffffff, 0xffffffff, 0x7fa00000, 0x00000000, 0x80000000,
  0x7f800000, 0xff800000, 0x00000001, 0x80000001, 0x007fffff, 0x807fffff, 0x7f7fffff, 0xff7fffff, 0x3f800000,
  0xbf800000, 0x00800000, 0x80800000,
];

/** `n` random elements of `type` (all bit patterns; f32 mixes in the special values). */
export function randomArray(type: ElementType, n: number, rng: Rng): ParleArray {
  const out = new (arrayConstructor(type))(n);
  const bits = new Uint32Array(n);
  for (let i = 0; i < n; i++) bits[i] = rng.u32();
  if (type === 'f32') {
    for (let i = 0; i < n; i++) if (rng.below(8) === 0) bits[i] = F32_SPECIAL_BITS[rng.below(F32_SPECIAL_BITS.length)];
    new Uint32Array(out.buffer).set(bits);
  } else if (type === 'u32' || type === 'i32') {
    new Uint32Array(out.buffer).set(bits);
  } else {
    for (let i = 0; i < n; i++) out[i] = bits[i];
  }
  return out;
}

/**
 * `n` elements of `type` in runs of random length 1..2*meanRun-1 (mean about meanRun), each run a
 * random value different from the previous one's bits.
 */
export function runsArray(type: ElementType, n: number, meanRun: number, rng: Rng): ParleArray {
  const source = randomArray(type, Math.max(1, n), rng);
  const out = new (arrayConstructor(type))(n);
  const outBits = type === 'u8' || type === 'u16' ? out : new Uint32Array(out.buffer);
  const srcBits = type === 'u8' || type === 'u16' ? source : new Uint32Array(source.buffer);
  let i = 0;
  let r = 0;
  while (i < n) {
    const len = 1 + rng.below(2 * meanRun - 1);
    const v = srcBits[r++ % srcBits.length];
    for (let k = 0; k < len && i < n; k++) outBits[i++] = v;
  }
  return out;
}

/** Bit patterns of 32-bit arrays (and values of u8/u16), for exact comparisons (NaN, -0). */
export function bitsOf(a: ParleArray): Uint8Array | Uint16Array | Uint32Array {
  if (a instanceof Uint8Array || a instanceof Uint16Array) return a;
  return new Uint32Array(a.buffer, a.byteOffset, a.length);
}

/** Index of the first difference of bit patterns, or -1 when equal (lengths must match too). */
export function firstDifference(a: ParleArray, b: ParleArray): number {
  if (a.length !== b.length) return Math.min(a.length, b.length);
  const x = bitsOf(a);
  const y = bitsOf(b);
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return i;
  return -1;
}

/** Throws unless `got` and `want` have equal types, lengths and bit patterns. */
export function assertSameBits(got: ParleArray, want: ParleArray, what: string): void {
  if (got.constructor !== want.constructor) throw new Error(`${what}: got ${got.constructor.name}, want ${want.constructor.name}`);
  const i = firstDifference(got, want);
  if (i >= 0) {
    const g = bitsOf(got)[i];
    const w = bitsOf(want)[i];
    throw new Error(`${what}: lengths ${got.length}/${want.length}, first difference at ${i}: got ${g}, want ${w}`);
  }
}

// ---- references ------------------------------------------------------------------------------

/** Inclusive or exclusive prefix sum; u32/i32 wrap; f32 in f32 arithmetic, serially. */
export function refScan(a: Uint32Array | Int32Array | Float32Array, inclusive: boolean): Uint32Array | Int32Array | Float32Array {
  const out = new (a.constructor as { new (n: number): typeof a })(a.length);
  if (a instanceof Float32Array) {
    let acc = 0;
    for (let i = 0; i < a.length; i++) {
      if (!inclusive) out[i] = acc;
      acc = Math.fround(acc + a[i]);
      if (inclusive) out[i] = acc;
    }
  } else {
    let acc = 0;
    for (let i = 0; i < a.length; i++) {
      if (!inclusive) out[i] = acc;
      acc = (acc + a[i]) | 0;
      if (inclusive) out[i] = acc;
    }
  }
  return out;
}

/** Run-length encode comparing bit patterns. */
export function refRleEncode(a: ParleArray): { values: ParleArray; lengths: Uint32Array } {
  const bits = bitsOf(a);
  const starts: number[] = [];
  for (let i = 0; i < bits.length; i++) if (i === 0 || bits[i] !== bits[i - 1]) starts.push(i);
  const values = new (a.constructor as { new (n: number): ParleArray })(starts.length);
  const vbits = bitsOf(values);
  const lengths = new Uint32Array(starts.length);
  for (let r = 0; r < starts.length; r++) {
    vbits[r] = bits[starts[r]];
    lengths[r] = (r + 1 < starts.length ? starts[r + 1] : bits.length) - starts[r];
  }
  return { values, lengths };
}

/** Run-length decode. */
export function refRleDecode(values: ParleArray, lengths: Uint32Array): ParleArray {
  let n = 0;
  for (const l of lengths) n += l;
  const out = new (values.constructor as { new (n: number): ParleArray })(n);
  const ob = bitsOf(out);
  const vb = bitsOf(values);
  let i = 0;
  for (let r = 0; r < lengths.length; r++) for (let k = 0; k < lengths[r]; k++) ob[i++] = vb[r];
  return out;
}

/** The u32 whose unsigned order is the key order (i32: signed; f32: IEEE totalOrder). */
export function sortableBits(type: 'u32' | 'i32' | 'f32', bits: number): number {
  if (type === 'u32') return bits >>> 0;
  if (type === 'i32') return (bits ^ 0x80000000) >>> 0;
  return (bits & 0x80000000 ? ~bits : bits | 0x80000000) >>> 0;
}

/** Stable sort of keys (by sortableBits) with optional u32 values. */
export function refSort(
  keys: Uint32Array | Int32Array | Float32Array,
  values?: Uint32Array,
): { keys: Uint32Array | Int32Array | Float32Array; values?: Uint32Array } {
  const type = keys instanceof Uint32Array ? 'u32' : keys instanceof Int32Array ? 'i32' : 'f32';
  const kb = bitsOf(keys) as Uint32Array;
  const order = Array.from({ length: keys.length }, (_, i) => i);
  const sk = Array.from(kb, (b) => sortableBits(type, b));
  order.sort((a, b) => sk[a] - sk[b] || a - b);
  const outKeys = new (keys.constructor as { new (n: number): typeof keys })(keys.length);
  const ob = bitsOf(outKeys) as Uint32Array;
  order.forEach((src, i) => (ob[i] = kb[src]));
  if (values === undefined) return { keys: outKeys };
  return { keys: outKeys, values: Uint32Array.from(order, (src) => values[src]) };
}
