/**
 * The error-bounded lossy mode for f64 (docs/format.md, "Stage 5: quantize", f64): the f64
 * kernels of both builds against the plain reference (test/support/quantize-reference.ts), the
 * bound on every element of seeded inputs (smooth fields, decimals, huge and tiny magnitudes,
 * NaN, Infinity, -0, subnormals; bounds from 1e-9 to 1e3 of the range), the engine's containers
 * against the reference's byte for byte (pipelines without Huffman, whose code lengths the spec
 * leaves open) and read by it, the reference's containers read by the engine, the streaming
 * writer and the command line, the options' errors and hostile payloads: CORRUPT or
 * CHECKSUM_MISMATCH, never a crash. Seeded: failures print the seed.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile as readFileAsync, rm, writeFile as writeFileAsync } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { xxh64 } from '../ts/format/checksum.js';
import { createEngine, type Engine } from '../ts/engine.js';
import type { DeviceArray } from '../ts/gpu/device-array.js';
import { ErrorCodes, ParleError, type ErrorCode } from '../ts/errors.js';
import { stepForF64 } from '../ts/format/quantize.js';
import { quantizeParamsF64, type QuantizeParamsF64 } from '../ts/codec/quantize.js';
import { ENTRY_BYTES, HEADER_BYTES, readEntry, readHeader } from '../ts/format/layout.js';
import * as ref from './support/codec-reference.js';
import { refParamsF64, refQuantizeF64 } from './support/quantize-reference.js';
import { decodeContainer, encodeContainer, encodeEntry, encodeHeader, QUANTIZE_STAGE, TYPE_CODE } from './support/predict-reference.js';
import { loadBothBuilds, type KernelHarness } from './support/kernels.js';
import { Rng, caseSeed, describeSeed } from './support/random.js';
import { describeGpu } from './gpu/support.js';
import { expectPayloadFlips, rewritePayload } from './support/fuzz.js';

let engine: Engine;
let engine2: Engine;
let builds: Record<'simd' | 'scalar', KernelHarness>;
beforeAll(async () => {
  [engine, engine2, builds] = await Promise.all([
    createEngine({ workers: 1, gpu: 'off' }),
    createEngine({ workers: 2, gpu: 'off' }),
    loadBothBuilds(),
  ]);
});
afterAll(async () => {
  await Promise.all([engine.destroy(), engine2.destroy()]);
});

// ---------------------------------------------------------------------------------------------
// Data
// ---------------------------------------------------------------------------------------------

const SPECIAL_BITS: readonly bigint[] = [
  0x7ff8000000000000n, // NaN (canonical): a reserved code
  0xfff8000000000000n, // -NaN: an exception
  0x7ff0000000000001n, // signalling NaN with a payload
  0x7ff8000000012345n, // quiet NaN with a payload
  0x7ff0000000000000n, // +Infinity
  0xfff0000000000000n, // -Infinity
  0x8000000000000000n, // -0
  0x0000000000000000n, // +0
  0x0000000000000001n, // smallest subnormal
  0x800fffffffffffffn, // largest negative subnormal
  0x0008000000000000n, // a subnormal
  0x0010000000000000n, // smallest normal
  0x7fefffffffffffffn, // largest finite
  0xffefffffffffffffn, // most negative finite
  0x7e37e43c8800759cn, // 1e300
];

/** Bits of `n` f64 of a noisy signal of amplitude `scale`, with specials sprinkled at `specialRate`. */
function signal(rng: Rng, n: number, scale: number, specialRate: number): BigUint64Array {
  const bits = new BigUint64Array(n);
  const f = new Float64Array(bits.buffer);
  let phase = rng.nextFloat() * 6;
  for (let i = 0; i < n; i++) {
    phase += 0.05 + 0.02 * rng.nextFloat();
    f[i] = scale * (Math.sin(phase) + 0.3 * (rng.nextFloat() - 0.5));
    if (rng.nextFloat() < specialRate) bits[i] = SPECIAL_BITS[rng.intBetween(0, SPECIAL_BITS.length - 1)];
  }
  return bits;
}

/** A smooth 2-D field (rows x cols), as simulation output looks: a few waves and a gradient. */
function smoothField(rows: number, cols: number, scale: number): Float64Array {
  return new Float64Array(rows * cols).map((_, k) => {
    const i = Math.floor(k / cols);
    const j = k % cols;
    return scale * (Math.sin(i / 17) * Math.cos(j / 23) + 0.001 * i + 0.3 * Math.sin((i + 2 * j) / 5));
  });
}

/** Decimals of `places` places (prices, sensor readings), a random walk. */
function decimals(rng: Rng, n: number, places: number): Float64Array {
  let v = 100;
  const f = 10 ** places;
  return new Float64Array(n).map(() => ((v += (rng.nextFloat() - 0.5) * 0.5), Math.round(v * f) / f));
}

/** The range (max - min) of the finite elements below `cap` in magnitude. */
function rangeOf(values: Float64Array, cap = Infinity): number {
  let lo = Infinity;
  let hi = -Infinity;
  for (const v of values) {
    if (Number.isFinite(v) && Math.abs(v) < cap) {
      lo = Math.min(lo, v);
      hi = Math.max(hi, v);
    }
  }
  return hi > lo ? hi - lo : 1;
}

/** Checks the bound on every element: |x - y| <= abs for finite x other than -0, the same bits otherwise. */
function expectWithinBound(x: Float64Array, y: Float64Array, abs: number, what: string): void {
  expect(y, what).toBeInstanceOf(Float64Array);
  expect(y.length, what).toBe(x.length);
  const xb = new BigUint64Array(x.buffer, x.byteOffset, x.length);
  const yb = new BigUint64Array(y.buffer, y.byteOffset, y.length);
  for (let i = 0; i < x.length; i++) {
    const ok = Number.isFinite(x[i]) && xb[i] !== 0x8000000000000000n ? Math.abs(x[i] - y[i]) <= abs : xb[i] === yb[i];
    if (!ok) {
      throw new Error(
        `${what}: element ${i}: ${x[i]} (0x${xb[i].toString(16)}) decoded as ${y[i]} (0x${yb[i].toString(16)}), bound ${abs}`,
      );
    }
  }
}

async function expectCode(p: Promise<unknown>, codes: ErrorCode[], what: string): Promise<void> {
  try {
    await p;
  } catch (e) {
    if (!(e instanceof ParleError)) throw new Error(`${what}: threw a non-ParleError: ${String(e)}`);
    expect(codes, `${what}: ${e.code} ${e.message}`).toContain(e.code);
    return;
  }
  throw new Error(`${what}: did not throw`);
}

const bytesOf = (a: Float64Array | BigUint64Array) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);

// ---------------------------------------------------------------------------------------------
// Kernels: both builds against the reference
// ---------------------------------------------------------------------------------------------

const SIZES = [0, 1, 2, 3, 4, 5, 7, 8, 15, 16, 17, 255, 256, 257, 4099];
const RELATIVE_BOUNDS = [1e-9, 1e-6, 1e-4, 1e-2, 1, 1e3];

function runQuantize(h: KernelHarness, bits: BigUint64Array, p: QuantizeParamsF64) {
  h.reset();
  const n = bits.length;
  const inPtr = h.copyIn(bits, 64);
  const codesPtr = h.allocFilled(4 * n + 64, 0xab);
  const reconPtr = h.allocFilled(8 * n + 64, 0xab);
  const idxPtr = h.allocFilled(4 * n + 64, 0xab);
  const valPtr = h.allocFilled(8 * n + 64, 0xab);
  const e = h.kernels.quantizeF64(inPtr, n, p.step, p.inv, p.abs, p.lim, codesPtr, reconPtr, idxPtr, valPtr, n);
  const codes = h.copyOut(Uint32Array, codesPtr, n);
  const recon = h.copyOut(BigUint64Array, reconPtr, n);
  const indices = Array.from(h.copyOut(Uint32Array, idxPtr, e));
  const values = h.copyOut(BigUint64Array, valPtr, e);
  // nothing written past the outputs
  expect(Array.from(h.bytes(codesPtr + 4 * n, 16))).toEqual(new Array(16).fill(0xab));
  expect(Array.from(h.bytes(reconPtr + 8 * n, 16))).toEqual(new Array(16).fill(0xab));
  // dequantize (into a sentinel-filled output), then the exceptions
  const outPtr = h.allocFilled(8 * n + 64, 0xcd);
  const found = h.kernels.dequantizeF64(codesPtr, n, p.step, outPtr);
  const scatter = h.kernels.scatterExceptions64(codesPtr, n, idxPtr, valPtr, e, outPtr);
  const out = h.copyOut(BigUint64Array, outPtr, n);
  expect(Array.from(h.bytes(outPtr + 8 * n, 16))).toEqual(new Array(16).fill(0xcd));
  return { e, codes, recon, indices, values, found, scatter, out };
}

describe('f64 quantize kernels (SIMD and scalar builds) against the reference', () => {
  it('the parameters are the format text', () => {
    for (const abs of [1e-300, 2 ** -960, 1e-6, 0.25, 1, 1e10, 1e300, Number.MAX_VALUE]) {
      expect(quantizeParamsF64(abs), `abs ${abs}`).toEqual(refParamsF64(abs));
    }
    expect(quantizeParamsF64(2 ** -961)).toBeUndefined();
    expect(stepForF64(0.25)).toBe(0.484375);
    expect(stepForF64(1e300)).toBe(2 ** 960);
  });

  for (const rel of RELATIVE_BOUNDS) {
    it(`bound ${rel} of the range, sizes ${SIZES.join(', ')}`, () => {
      for (const n of SIZES) {
        const seed = caseSeed(`f64 kernels ${rel} ${n}`);
        const rng = new Rng(seed);
        const bits = signal(rng, n, 10 ** rng.intBetween(-6, 6), 0.05);
        const x = new Float64Array(bits.buffer);
        const abs = rel * rangeOf(x, 1e200);
        const p = quantizeParamsF64(abs)!;
        const want = refQuantizeF64(bits, p);
        for (const variant of ['simd', 'scalar'] as const) {
          const what = `${variant} n=${n} rel=${rel} ${describeSeed(seed)}`;
          const got = runQuantize(builds[variant], bits, p);
          expect(Array.from(got.codes), what).toEqual(Array.from(want.codes));
          expect(Array.from(got.recon), what).toEqual(Array.from(want.recon));
          expect(got.indices, what).toEqual(want.exceptions);
          expect(Array.from(got.values), what).toEqual(want.exceptions.map((i) => bits[i]));
          expect(got.found, what).toBe(want.exceptions.length);
          expect(got.scatter, what).toBe(0);
          // dequantize gives back the reconstructions, bit for bit (exceptions exactly)
          expect(Array.from(got.out), what).toEqual(Array.from(want.recon));
          expectWithinBound(x, new Float64Array(got.out.buffer), abs, what);
        }
      }
    });
  }

  it('specials, subnormals and huge magnitudes: reserved codes, exceptions, exact reconstructions', () => {
    const bits = new BigUint64Array(SPECIAL_BITS);
    for (const variant of ['simd', 'scalar'] as const) {
      const got = runQuantize(builds[variant], bits, quantizeParamsF64(1e-3)!);
      const codeOf = (b: bigint) => got.codes[SPECIAL_BITS.indexOf(b)];
      expect(codeOf(0x7ff8000000000000n), variant).toBe(0xfffffffe);
      expect(codeOf(0x7ff0000000000000n), variant).toBe(0xfffffffd);
      expect(codeOf(0xfff0000000000000n), variant).toBe(0xfffffffc);
      expect(codeOf(0x8000000000000000n), variant).toBe(0xfffffffb);
      expect(codeOf(0n), variant).toBe(0);
      expect(codeOf(1n), variant).toBe(0); // subnormals quantize to 0
      expect(codeOf(0x800fffffffffffffn), variant).toBe(0); // and a negative one to +0
      for (const b of [
        0xfff8000000000000n,
        0x7ff0000000000001n,
        0x7ff8000000012345n,
        0x7fefffffffffffffn,
        0xffefffffffffffffn,
        0x7e37e43c8800759cn,
      ]) {
        expect(codeOf(b), `${variant} 0x${b.toString(16)}`).toBe(0xffffffff);
      }
      // tiny magnitudes (subnormals, the smallest normal) come back as +0; the rest exactly
      const want = SPECIAL_BITS.map((b) => ((b & 0x7fffffffffffffffn) <= 0x0010000000000000n && b !== 0x8000000000000000n ? 0n : b));
      expect(Array.from(got.out), variant).toEqual(want);
    }
  });

  it('worked example: [0, 0.26, -0.74, NaN, -0, 1e300] with step 0.5', () => {
    const x = new Float64Array([0, 0.26, -0.74, NaN, -0, 1e300]);
    const p = { abs: 0.26, step: 0.5, inv: 2, lim: 2 ** 29 };
    for (const variant of ['simd', 'scalar'] as const) {
      const got = runQuantize(builds[variant], new BigUint64Array(x.buffer), p);
      expect(Array.from(got.codes), variant).toEqual([0, 2, 1, 0xfffffffe, 0xfffffffb, 0xffffffff]);
      expect(Array.from(new Float64Array(got.out.buffer)), variant).toEqual([0, 0.5, -0.5, NaN, -0, 1e300]);
      expect(got.indices, variant).toEqual([5]);
    }
  });

  it('the limit: |q| up to 2^30 is quantized (codes up to 2^31), past it an exception', () => {
    const p = quantizeParamsF64(0.5)!; // step 0.96875
    const x = new Float64Array([p.lim, -p.lim, p.lim * (1 + 2 ** -52), -p.lim * (1 + 2 ** -52), p.lim - p.step / 2]);
    for (const variant of ['simd', 'scalar'] as const) {
      const got = runQuantize(builds[variant], new BigUint64Array(x.buffer), p);
      expect(Array.from(got.codes).slice(0, 4), variant).toEqual([2 ** 31, 2 ** 31 - 1, 0xffffffff, 0xffffffff]);
      expect(got.codes[4], variant).toBeLessThanOrEqual(2 ** 31);
      const y = new Float64Array(got.out.buffer);
      expect(Array.from(y.subarray(0, 4)), variant).toEqual(Array.from(x.subarray(0, 4)));
      expect(Math.abs(y[4] - x[4]), variant).toBeLessThan(p.abs);
    }
  });

  it('dequantize rejects codes that are neither quantized nor reserved; scatter rejects bad indices', () => {
    for (const bad of [2 ** 31 + 1, 0xc0000000, 0xfffffffa]) {
      for (const variant of ['simd', 'scalar'] as const) {
        const k = builds[variant];
        k.reset();
        const codes = new Uint32Array([0, 2, 4, bad, 6, 8, 10, 12, 14]);
        const ptr = k.copyIn(codes, 64);
        const out = k.alloc(8 * codes.length + 64);
        expect(k.kernels.dequantizeF64(ptr, codes.length, 0.5, out), `${variant} code 0x${bad.toString(16)}`).toBe(-1);
      }
    }
    const h = builds.simd;
    h.reset();
    const codes = new Uint32Array([0xffffffff, 0, 0xffffffff, 0]);
    const cPtr = h.copyIn(codes, 64);
    const out = h.alloc(64);
    const vals = h.copyIn(new BigUint64Array([1n, 2n]), 64);
    for (const [indices, want] of [
      [[0, 2], 0],
      [[2, 0], -1], // out of order
      [[0, 0], -1], // repeated
      [[0, 1], -1], // not an exception code
      [[0, 4], -1], // out of range
    ] as const) {
      const idx = h.copyIn(new Uint32Array(indices), 64);
      expect(h.kernels.scatterExceptions64(cPtr, 4, idx, vals, 2, out), `indices ${indices}`).toBe(want);
    }
  });
});

// ---------------------------------------------------------------------------------------------
// The engine: the bound on every element
// ---------------------------------------------------------------------------------------------

describe('compress f64 with errorBound: the bound holds on every element', () => {
  const cases: { name: string; data: () => Float64Array; cap?: number }[] = [
    {
      name: 'noisy sine with specials',
      data: () => new Float64Array(signal(new Rng(caseSeed('f64 sine')), 70_001, 1, 0.01).buffer),
      cap: 1e200,
    },
    { name: 'smooth field 300x240', data: () => smoothField(300, 240, 50) },
    { name: 'decimals (2 places)', data: () => decimals(new Rng(caseSeed('f64 decimals')), 50_000, 2) },
    {
      name: 'huge magnitudes (1e200)',
      data: () => new Float64Array(signal(new Rng(caseSeed('f64 huge')), 40_000, 1e200, 0.01).buffer),
      cap: 1e250,
    },
    {
      name: 'tiny magnitudes (1e-280) with subnormals',
      data: () => new Float64Array(signal(new Rng(caseSeed('f64 tiny')), 40_000, 1e-280, 0.02).buffer),
      cap: 1e200,
    },
  ];
  for (const c of cases) {
    it(`${c.name}, bounds 1e-9 .. 1e3 of the range`, async () => {
      const x = c.data();
      const range = rangeOf(x, c.cap);
      for (const rel of RELATIVE_BOUNDS) {
        const abs = rel * range;
        const what = `${c.name} rel=${rel} abs=${abs}`;
        const packed = await engine.compress(x, { errorBound: { abs }, chunkBytes: 128 << 10 });
        expectWithinBound(x, (await engine.decompress(packed)) as Float64Array, abs, what);
        // the workers give the same bytes
        expect(
          Buffer.from(await engine2.compress(x, { errorBound: { abs }, chunkBytes: 128 << 10 })).equals(Buffer.from(packed)),
          what,
        ).toBe(true);
        // the reference reads the engine's container to the same elements
        const decoded = decodeContainer(packed);
        const y = (await engine.decompress(packed)) as Float64Array;
        expect(Buffer.from(decoded.elements).equals(Buffer.from(bytesOf(y))), what).toBe(true);
      }
    });
  }

  it('quantized chunks are far smaller than lossless ones, and inspect names the stage', async () => {
    const x = smoothField(400, 500, 10);
    const lossless = await engine.compress(x);
    const lossy = await engine.compress(x, { errorBound: { abs: 1e-4 } });
    expect(lossy.length * 2).toBeLessThan(lossless.length);
    const report = engine.inspect(lossy);
    expect(report.version).toBe(4);
    expect(report.chunks.every((c) => c.encoding.startsWith('quantize+'))).toBe(true);
    const explained = await engine.explainCodec(x, { errorBound: { abs: 1e-4 } });
    expect(explained[0].pipeline.startsWith('quantize+')).toBe(true);
    expect(explained[0].reason).toMatch(/quantize \(abs 0.0001/);
  });

  it('edge sizes, a fixed codec, all equal, all specials, huge bounds, a bound below 2^-960 (lossless)', async () => {
    for (const n of [0, 1, 2, 3, 4, 5, 17, 1025]) {
      const x = new Float64Array(n).map((_, i) => Math.sin(i) * 3);
      const y = (await engine.decompress(await engine.compress(x, { errorBound: { abs: 0.01 } }))) as Float64Array;
      expectWithinBound(x, y, 0.01, `n=${n}`);
    }
    const equal = new Float64Array(5000).fill(1.2345);
    const e2 = (await engine.decompress(await engine.compress(equal, { errorBound: { abs: 1e-4 }, codec: 'rle+huffman' }))) as Float64Array;
    expectWithinBound(equal, e2, 1e-4, 'all equal, rle+huffman');
    const specials = new Float64Array(new BigUint64Array(4096).map((_, i) => SPECIAL_BITS[i % SPECIAL_BITS.length]).buffer);
    const s2 = (await engine.decompress(await engine.compress(specials, { errorBound: { abs: 1 } }))) as Float64Array;
    expectWithinBound(specials, s2, 1, 'specials');
    for (const abs of [1e300, Number.MAX_VALUE]) {
      const big = new Float64Array(signal(new Rng(11), 3000, 1e295, 0.05).buffer);
      const b2 = (await engine.decompress(await engine.compress(big, { errorBound: { abs } }))) as Float64Array;
      expectWithinBound(big, b2, abs, `abs ${abs}`);
    }
    const tiny = new Float64Array(signal(new Rng(7), 3000, 1, 0.05).buffer);
    const t2 = (await engine.decompress(await engine.compress(tiny, { errorBound: { abs: 2 ** -970 } }))) as Float64Array;
    expect(Buffer.from(bytesOf(t2)).equals(Buffer.from(bytesOf(tiny)))).toBe(true);
  });

  it('chunks quantizing does not shrink are coded losslessly (past 2^30 steps; random bits within the bound)', async () => {
    // uniform in +-1e6 at a bound of 1e-6: 10^12 steps, past 2^30: every element an exception
    const rng = new Rng(caseSeed('f64 uniform'));
    const uniform = new Float64Array(16_384).map(() => (rng.nextFloat() - 0.5) * 2e6);
    const packed = await engine.compress(uniform, { errorBound: { abs: 1e-6 } });
    expect(engine.inspect(packed).chunks.every((c) => !c.encoding.startsWith('quantize'))).toBe(true);
    expect(Buffer.from(bytesOf((await engine.decompress(packed)) as Float64Array)).equals(Buffer.from(bytesOf(uniform)))).toBe(true);
    // a smooth field of 1e6 at a bound of 1e-9 likewise
    const wide = smoothField(100, 100, 1e6);
    const w2 = await engine.compress(wide, { errorBound: { abs: 1e-9 } });
    expect(engine.inspect(w2).chunks.every((c) => !c.encoding.startsWith('quantize'))).toBe(true);
    expect(Buffer.from(bytesOf((await engine.decompress(w2)) as Float64Array)).equals(Buffer.from(bytesOf(wide)))).toBe(true);
    // random bits (half of them below the bound, half huge): within the bound, however coded
    const random = new Float64Array(new Uint32Array(2 * 8192).map(() => rng.nextU32()).buffer);
    expectWithinBound(
      random,
      (await engine.decompress(await engine.compress(random, { errorBound: { abs: 1e-3 } }))) as Float64Array,
      1e-3,
      'random bits',
    );
  });

  it('with a shape: the shape is recorded, the chunks quantized (nothing predicted), as for f32', async () => {
    const x = smoothField(120, 90, 3);
    const packed = await engine.compress(x, { errorBound: { abs: 1e-3 }, shape: [120, 90] });
    const report = engine.inspect(packed);
    expect(report.shape).toEqual([120, 90]);
    expect(report.chunks.every((c) => c.encoding.startsWith('quantize+'))).toBe(true);
    expectWithinBound(x, (await engine.decompress(packed)) as Float64Array, 1e-3, 'shape');
  });

  it('the streaming compressor gives the same bytes', async () => {
    const x = new Float64Array(signal(new Rng(caseSeed('f64 stream')), 50_000, 2, 0.01).buffer);
    const whole = await engine.compress(x, { errorBound: { abs: 0.002 }, chunkBytes: 64 << 10 });
    const writer = engine.createCompressor('f64', x.length, { errorBound: { abs: 0.002 }, chunkBytes: 64 << 10 });
    const bytes = bytesOf(x);
    const parts: Uint8Array[] = [];
    for (let at = 0; at < bytes.length; at += 10_008) parts.push(...(await writer.write(bytes.subarray(at, at + 10_008))));
    parts.push(...(await writer.end()));
    expect(Buffer.concat(parts).equals(Buffer.from(whole))).toBe(true);
  });
});

// ---------------------------------------------------------------------------------------------
// The reference's containers
// ---------------------------------------------------------------------------------------------

describe("f64 quantized containers: the engine's and the reference's", () => {
  // pipelines without Huffman: their bytes are fixed by the spec (code lengths are the writer's choice)
  for (const codec of ['delta+shuffle', 'shuffle+rle', 'delta', 'delta+shuffle+rle']) {
    it(`codec ${codec}: the engine writes the reference's container byte for byte`, async () => {
      const seed = caseSeed(`f64 reference ${codec}`);
      const x = new Float64Array(signal(new Rng(seed), 20_000, 5, 0.01).buffer);
      const stages = codec.split('+').map((s) => ref.STAGE[s as keyof typeof ref.STAGE]);
      for (const abs of [1e-6, 1e-3, 0.5]) {
        const what = `${codec} abs=${abs} ${describeSeed(seed)}`;
        const packed = await engine.compress(x, { errorBound: { abs }, codec, chunkBytes: 32 << 10 });
        const want = encodeContainer(bytesOf(x), {
          type: TYPE_CODE.f64,
          chunkLength: (32 << 10) / 8,
          chunks: [{ kind: 'quantized', abs, stages }],
        });
        expect(Buffer.from(packed).equals(Buffer.from(want)), what).toBe(true);
        // and the engine reads it back within the bound
        expectWithinBound(x, (await engine.decompress(want)) as Float64Array, abs, what);
      }
    });
  }

  it("the engine decodes the reference's Huffman-coded containers (the reference's code lengths and segments)", async () => {
    const seed = caseSeed('f64 reference huffman');
    const x = new Float64Array(signal(new Rng(seed), 9000, 1, 0.02).buffer);
    for (const codec of ['huffman', 'delta+shuffle+huffman', 'shuffle+rle+huffman']) {
      const stages = codec.split('+').map((s) => ref.STAGE[s as keyof typeof ref.STAGE]);
      const container = encodeContainer(bytesOf(x), {
        type: TYPE_CODE.f64,
        chunkLength: 4096,
        chunks: [{ kind: 'quantized', abs: 1e-4, stages }],
      });
      const y = (await engine.decompress(container)) as Float64Array;
      expectWithinBound(x, y, 1e-4, `${codec} ${describeSeed(seed)}`);
      expect(Buffer.from(bytesOf(y)).equals(Buffer.from(decodeContainer(container).elements)), codec).toBe(true);
    }
  });
});

// ---------------------------------------------------------------------------------------------
// Options
// ---------------------------------------------------------------------------------------------

describe('errorBound on f64 and on the other types', () => {
  const x = new Float64Array(100);
  for (const abs of [0, -1, -0, NaN, Infinity, -Infinity, '0.1', null, undefined]) {
    it(`f64, abs = ${String(abs)}: INVALID_OPTION`, async () => {
      await expectCode(engine.compress(x, { errorBound: { abs } as never }), [ErrorCodes.INVALID_OPTION], `abs ${String(abs)}`);
    });
  }
  it('{ rel } on f64: INVALID_OPTION naming errorBound.rel', async () => {
    await expectCode(engine.compress(x, { errorBound: { rel: 0.1 } as never }), [ErrorCodes.INVALID_OPTION], 'rel');
  });
  for (const array of [new Int32Array(10), new BigInt64Array(10), new BigUint64Array(10), new Int16Array(10), new Int8Array(10)]) {
    it(`on ${array.constructor.name}: INVALID_OPTION naming the type and f32 and f64`, async () => {
      try {
        await engine.compress(array, { errorBound: { abs: 1 } });
        throw new Error('did not throw');
      } catch (e) {
        expect(e).toBeInstanceOf(ParleError);
        expect((e as ParleError).code).toBe(ErrorCodes.INVALID_OPTION);
        expect((e as ParleError).message).toMatch(/f32 and f64/);
        expect((e as ParleError).message).toMatch(/i32|i64|u64|i16|i8/);
      }
    });
  }
  it("f16 (a Uint16Array of half bits): INVALID_OPTION; createCompressor('i64') likewise", async () => {
    await expectCode(engine.compress(new Uint16Array(10), { type: 'f16', errorBound: { abs: 1 } }), [ErrorCodes.INVALID_OPTION], 'f16');
    expect(() => engine.createCompressor('i64', 10, { errorBound: { abs: 1 } })).toThrow(/i64/);
    expect(() => engine.createCompressor('f64', 10, { errorBound: { abs: 1 } })).not.toThrow();
  });
});

// ---------------------------------------------------------------------------------------------
// Hostile payloads
// ---------------------------------------------------------------------------------------------

const xxh64Low = (bytes: Uint8Array) => Number(xxh64(bytes) & 0xffffffffn);

/** A one-chunk f64 container of `count` elements around a hand-made quantized payload (elements hash `elementsHash`). */
function handMade(count: number, payload: Uint8Array, stages: number[], elementsHash = 0): Uint8Array {
  const header = encodeHeader(TYPE_CODE.f64, 5, count, count);
  const entry = encodeEntry({
    count,
    stages,
    S: ref.streamCount(stages, 4),
    P: payload.length,
    payloadHash: ref.treeHash(payload),
    elementsHash,
    byte24: QUANTIZE_STAGE,
  });
  return new Uint8Array(Buffer.concat([header, entry, payload]));
}

/**
 * The hostile-payload cases against one decoder (`decoderOf()`, called in each test): the CPU
 * path, or (describeGpu below) the GPU path decoding to the device.
 */
function hostileCases(decoderOf: () => (bytes: Uint8Array) => Promise<unknown>): void {
  let packed: Uint8Array;
  let exceptions: number;
  const N = 20_000;
  beforeAll(async () => {
    const x = new Float64Array(N).map((_, i) => Math.sin(i / 30) * 4);
    const b = new BigUint64Array(x.buffer);
    b[10] = 0x7fefffffffffffffn; // exceptions: huge magnitudes and a NaN payload
    b[500] = 0xc300000000000000n;
    b[7000] = 0x7ff8000000000001n;
    packed = await engine.compress(x, { errorBound: { abs: 1e-3 }, chunkBytes: 8 * N });
    const entry = readEntry(packed.subarray(HEADER_BYTES), readHeader(packed), 0);
    expect(entry.quantize).toBe(true);
    exceptions = new DataView(packed.buffer, HEADER_BYTES + ENTRY_BYTES + 16, 4).getUint32(0, true);
    expect(exceptions).toBe(3);
  });
  const setU32 = (at: number, v: number) => (p: Uint8Array) => (new DataView(p.buffer, p.byteOffset).setUint32(at, v, true), p);
  const setF64 = (at: number, v: number) => (p: Uint8Array) => (new DataView(p.buffer, p.byteOffset).setFloat64(at, v, true), p);
  const decode = (bytes: Uint8Array) => decoderOf()(bytes);

  it('an untouched container decodes (the rewrite helper is sound)', async () => {
    await decode(rewritePayload(packed, (p) => p));
  });
  it('exception counts: larger than the chunk, than the payload, off by one either way', async () => {
    for (const count of [0xffffffff, N + 1, 1_000_000, 4, 2, 0]) {
      await expectCode(decode(rewritePayload(packed, setU32(16, count))), [ErrorCodes.CORRUPT], `count ${count}`);
    }
    // one more exception, its 12 bytes inserted (the layout stays readable): the codes disagree
    const e = exceptions;
    await expectCode(
      decode(
        rewritePayload(packed, (p) => {
          const q = new Uint8Array(p.length + 12);
          q.set(p.subarray(0, 24 + 4 * e));
          new DataView(q.buffer).setUint32(24 + 4 * e, N - 1, true);
          q.set(p.subarray(24 + 4 * e), 24 + 4 * e + 4);
          new DataView(q.buffer).setUint32(16, e + 1, true);
          // (values shifted by 4: one more value slot after them)
          const values = p.subarray(24 + 4 * e, 24 + 12 * e);
          q.set(values, 24 + 4 * (e + 1));
          q.set(new Uint8Array(8), 24 + 4 * (e + 1) + 8 * e);
          q.set(p.subarray(24 + 12 * e), 24 + 12 * (e + 1));
          return q;
        }),
      ),
      [ErrorCodes.CORRUPT],
      'inserted exception',
    );
    // one fewer, its bytes removed
    await expectCode(
      decode(
        rewritePayload(packed, (p) => {
          const q = new Uint8Array(p.length - 12);
          q.set(p.subarray(0, 24 + 4 * (e - 1)));
          q.set(p.subarray(24 + 4 * e, 24 + 4 * e + 8 * (e - 1)), 24 + 4 * (e - 1));
          q.set(p.subarray(24 + 12 * e), 24 + 12 * (e - 1));
          new DataView(q.buffer).setUint32(16, e - 1, true);
          return q;
        }),
      ),
      [ErrorCodes.CORRUPT],
      'removed exception',
    );
  });
  it('exception indices out of order, repeated, out of range, or not at an exception code', async () => {
    for (const [j, v] of [
      [0, 600], // after index 1 (500): out of order
      [1, 10], // repeats index 0
      [2, N],
      [2, 0xffffffff],
      [1, 501], // a quantized element's code
    ]) {
      await expectCode(decode(rewritePayload(packed, setU32(24 + 4 * j, v))), [ErrorCodes.CORRUPT], `index ${j} = ${v}`);
    }
  });
  it("lying bounds and steps: not finite, not positive, below 2^-960, a step that is not the bound's, reserved bytes", async () => {
    for (const abs of [NaN, Infinity, -1, 0, 2 ** -961, 1e-300 * 1e-300, 2e-3, 1.5e-3]) {
      await expectCode(decode(rewritePayload(packed, setF64(0, abs))), [ErrorCodes.CORRUPT], `abs ${abs}`);
    }
    const step = stepForF64(1e-3);
    for (const bad of [step * (1 + 2 ** -52), step / 2, NaN, Infinity, 0, -step]) {
      await expectCode(decode(rewritePayload(packed, setF64(8, bad))), [ErrorCodes.CORRUPT], `step ${bad}`);
    }
    await expectCode(decode(rewritePayload(packed, setU32(20, 1))), [ErrorCodes.CORRUPT], 'reserved 20..23');
    // a bound and step that agree but lie: the elements' hash catches the other values
    await expectCode(
      decode(rewritePayload(packed, (p) => (setF64(0, 2e-3)(p), setF64(8, stepForF64(2e-3))(p)))),
      [ErrorCodes.CHECKSUM_MISMATCH],
      'consistent lie',
    );
  });
  it('payloads too short for the header, the exceptions or the directory; P not below count x 8', async () => {
    for (const length of [0, 8, 23, 24, 24 + 12 * exceptions, 24 + 12 * exceptions + 4]) {
      await expectCode(decode(rewritePayload(packed, (p) => p.slice(0, length))), [ErrorCodes.CORRUPT], `payload of ${length} bytes`);
    }
    await expectCode(
      decode(rewritePayload(packed, setU32(24 + 12 * exceptions, 0))), // the directory's first decoded size lies
      [ErrorCodes.CORRUPT],
      'directory',
    );
    // P = count x 8 exactly (a payload padded up to it)
    const small = new Float64Array(64).map((_, i) => i / 8);
    const c = await engine.compress(small, { errorBound: { abs: 0.01 }, codec: 'delta+shuffle' });
    expect(readEntry(c.subarray(HEADER_BYTES), readHeader(c), 0).quantize).toBe(true);
    await expectCode(
      decode(rewritePayload(c, (p) => Uint8Array.from({ length: 8 * 64 }, (_, i) => (i < p.length ? p[i] : 0)))),
      [ErrorCodes.CORRUPT],
      'P = count x 8',
    );
  });
  it('entry: quantize without a pipeline, S not the codes pipeline’s, byte 24 = 5 on i64 and u64', async () => {
    await expectCode(
      decode(
        rewritePayload(
          packed,
          (p) => p,
          (e) => e.fill(0, 4, 12),
        ),
      ),
      [ErrorCodes.CORRUPT],
      'no pipeline',
    );
    await expectCode(
      decode(
        rewritePayload(
          packed,
          (p) => p,
          (e) => {
            const view = new DataView(e.buffer, e.byteOffset);
            view.setUint32(8, view.getUint32(8, true) + 1, true);
          },
        ),
      ),
      [ErrorCodes.CORRUPT],
      'S + 1',
    );
    for (const type of [TYPE_CODE.i64, TYPE_CODE.u64]) {
      const bad = packed.slice();
      bad[9] = type;
      new DataView(bad.buffer).setUint32(28, xxh64Low(bad.subarray(0, 28)), true);
      await expectCode(decode(bad), [ErrorCodes.CORRUPT], `type ${type}`);
      expect(() => decodeContainer(bad), `reference, type ${type}`).toThrow(/CORRUPT/);
    }
  });
  it('codes over 2^31 that are not reserved (a hand-made container)', async () => {
    const n = 4096;
    for (const badCode of [2 ** 31 + 1, 2 ** 31 + 2, 0xfffffffa]) {
      const codes = new Uint32Array(n).map((_, i) => (i % 5) * 2);
      codes[100] = badCode;
      const codesPayload = ref.encodePayload([ref.STAGE.huffman], new Uint8Array(codes.buffer), 4);
      const payload = new Uint8Array(24 + codesPayload.length);
      const view = new DataView(payload.buffer);
      view.setFloat64(0, 0.5, true);
      view.setFloat64(8, stepForF64(0.5), true);
      payload.set(codesPayload, 24);
      const container = handMade(n, payload, [ref.STAGE.huffman]);
      await expectCode(decode(container), [ErrorCodes.CORRUPT], `code 0x${badCode.toString(16)}`);
      expect(() => decodeContainer(container)).toThrow(/CORRUPT/);
    }
    // code 2^31 itself is valid (q = 2^30): it decodes (to the elements whose hash the entry gives)
    const codes = new Uint32Array(n).fill(2 ** 31);
    const codesPayload = ref.encodePayload([ref.STAGE.huffman], new Uint8Array(codes.buffer), 4);
    const payload = new Uint8Array(24 + codesPayload.length);
    new DataView(payload.buffer).setFloat64(0, 0.5, true);
    new DataView(payload.buffer).setFloat64(8, stepForF64(0.5), true);
    payload.set(codesPayload, 24);
    const want = new Float64Array(n).fill(2 ** 30 * stepForF64(0.5));
    const y = (await decode(handMade(n, payload, [ref.STAGE.huffman], ref.treeHash(bytesOf(want))))) as Float64Array;
    expect(Array.from(y)).toEqual(Array.from(want));
  });
  it('random byte flips in the payload (hashes made right again): CORRUPT or CHECKSUM_MISMATCH, or the same elements', async () => {
    await expectPayloadFlips(packed, decode, caseSeed('f64 flips'), 150, 72);
  });
}

describe('hostile f64 quantized payloads: CORRUPT or CHECKSUM_MISMATCH, never a crash', () => {
  hostileCases(() => (bytes) => engine.decompress(bytes));
});

describeGpu("f64 with a bound on the GPU path: quantized and decoded there, the CPU path's bits", () => {
  let gpuEngine: Engine;
  beforeAll(async () => {
    gpuEngine = await createEngine({ workers: 1, gpu: 'require', calibration: 'skip' });
  });
  afterAll(async () => {
    await gpuEngine?.destroy();
  });
  /** Decodes on the GPU path to the device; the result is read back (and its buffer freed). */
  const onGpu = async (bytes: Uint8Array): Promise<Float64Array> => {
    const d = (await gpuEngine.decompress(bytes, { to: 'device', path: 'gpu' })) as unknown as DeviceArray;
    try {
      return (await gpuEngine.download(d)) as Float64Array;
    } finally {
      d.destroy();
    }
  };
  const sameBits = (a: Float64Array, b: Float64Array) => Buffer.from(bytesOf(a)).equals(Buffer.from(bytesOf(b)));
  // specials, and chunk 3 (of 16 KiB chunks: 2048 elements) of huge magnitudes, each an
  // exception: coded losslessly on both paths
  const input = (() => {
    const x = new Float64Array(signal(new Rng(caseSeed('f64 gpu')), 20_001, 2, 0.01).buffer);
    for (let i = 3 * 2048; i < 4 * 2048; i++) x[i] = 1e300 * (1 + i / 1e4);
    return x;
  })();
  for (const [codec, abs] of [
    ['auto', 1e-4],
    ['huffman', 1e-3],
    ['delta+huffman', 0.05],
    ['rle+huffman', 0.5],
    ['delta+pack', 1e-6],
    ['auto', 2 ** -970],
  ] as const) {
    it(`compress from the device (${codec}, abs ${abs}): the CPU path's decoded bits, decoded on both paths`, async () => {
      const what = `${codec} abs ${abs}`;
      const opts = { errorBound: { abs }, codec, chunkBytes: 16 << 10 };
      const device = await gpuEngine.upload(input);
      try {
        const viaGpu = await gpuEngine.compress(device, { ...opts, path: 'gpu' });
        // left on the device: the same bytes
        const toDevice = await gpuEngine.compress(device, { ...opts, path: 'gpu', to: 'device' });
        expect(Buffer.from((await gpuEngine.download(toDevice)) as Uint8Array).equals(Buffer.from(viaGpu)), `${what}: to the device`).toBe(
          true,
        );
        toDevice.destroy();
        const viaCpu = await engine.compress(input, opts);
        const fromCpu = (await engine.decompress(viaCpu)) as Float64Array;
        expect(sameBits((await engine.decompress(viaGpu)) as Float64Array, fromCpu), `${what}: the GPU's container`).toBe(true);
        const chunks = engine.inspect(viaGpu).chunks;
        const quantized = chunks.filter((c) => c.encoding.startsWith('quantize')).length;
        if (abs >= 2 ** -960) {
          expect(quantized, what).toBe(chunks.length - 1); // all but the chunk of huge magnitudes
          expect(chunks[3].encoding.startsWith('quantize'), what).toBe(false);
          expect(viaGpu.length, what).toBeLessThan(1.05 * viaCpu.length);
        } else expect(quantized, what).toBe(0); // below 2^-960: lossless, as on the CPU path
        // both containers decoded on the GPU path, to the device, and from a device container
        expect(sameBits(await onGpu(viaGpu), fromCpu), `${what}: the GPU's container, GPU decode`).toBe(true);
        expect(sameBits(await onGpu(viaCpu), fromCpu), `${what}: the CPU's container, GPU decode`).toBe(true);
        const resident = await gpuEngine.upload(viaCpu);
        const back = await gpuEngine.decompress(resident, { to: 'device' });
        expect(sameBits((await gpuEngine.download(back)) as Float64Array, fromCpu), `${what}: a device container`).toBe(true);
        resident.destroy();
        back.destroy();
      } finally {
        device.destroy();
      }
    });
  }
  it("with a shape, f64 and f32: the shape recorded, chunks of whole rows quantized (nothing predicted), the CPU path's bits", async () => {
    const x = smoothField(300, 70, 3);
    for (const array of [x, Float32Array.from(x)]) {
      const what = array.constructor.name;
      const opts = { errorBound: { abs: 1e-3 }, shape: [300, 70], chunkBytes: 40 * 70 * array.BYTES_PER_ELEMENT + 5 };
      const device = await gpuEngine.upload(array);
      try {
        const viaGpu = await gpuEngine.compress(device, { ...opts, path: 'gpu' });
        const report = engine.inspect(viaGpu);
        expect(report.shape, what).toEqual([300, 70]);
        expect(report.chunkLength, what).toBe(40 * 70);
        expect(
          report.chunks.every((c) => c.encoding.startsWith('quantize+')),
          what,
        ).toBe(true);
        const fromCpu = await engine.decompress(await engine.compress(array, opts));
        const fromGpu = await engine.decompress(viaGpu);
        expect(Buffer.compare(Buffer.from(fromGpu.buffer), Buffer.from(fromCpu.buffer)), what).toBe(0);
      } finally {
        device.destroy();
      }
    }
  });
  describe('hostile payloads refused as on the CPU path', () => {
    hostileCases(() => onGpu);
  });
});

// ---------------------------------------------------------------------------------------------
// The command line
// ---------------------------------------------------------------------------------------------

const BIN = fileURLToPath(new URL('../bin/parle.mjs', import.meta.url));

function cli(...args: string[]): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], (error, _stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stderr }));
  });
}

describe('parle compress --error-bound-abs on f64', () => {
  it('round trips --type f64 and a .f64 file within the bound; rejects i64 (exit 1)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'parle-lossy64-'));
    try {
      const x = new Float64Array(signal(new Rng(caseSeed('f64 cli')), 30_000, 3, 0.01).buffer);
      const raw = join(dir, 'in.f64');
      await writeFileAsync(raw, bytesOf(x));
      expect((await cli('compress', raw, join(dir, 'a.parle'), '--type', 'f64', '--error-bound-abs', '0.01')).code).toBe(0);
      expect((await cli('compress', raw, join(dir, 'b.parle'), '--error-bound-abs', '0.01')).code).toBe(0);
      for (const name of ['a', 'b']) {
        expect((await cli('decompress', join(dir, `${name}.parle`), join(dir, `${name}.back`))).code).toBe(0);
        const back = new Float64Array(new Uint8Array(await readFileAsync(join(dir, `${name}.back`))).buffer);
        expectWithinBound(x, back, 0.01, `cli ${name}`);
      }
      expect((await readFileAsync(join(dir, 'a.parle'))).length * 3).toBeLessThan(x.byteLength);
      const i64 = await cli('compress', raw, join(dir, 'c.parle'), '--type', 'i64', '--error-bound-abs', '0.01');
      expect(i64.code).toBe(1);
      expect(i64.stderr).toMatch(/INVALID_OPTION/);
      expect(i64.stderr).toMatch(/i64/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
