/// <reference types="@webgpu/types" />
/**
 * The quantize stage's WGSL kernels (shaders/codec-quantize.wgsl, codec-quantize-f64.wgsl,
 * ts/codec/gpu/quantize.ts) against the CPU kernels of build/parle.wasm and the plain reference:
 * the same codes, the same reconstructions and the same decoded bytes, on inputs with NaN
 * (payloads too), +-Infinity, -0, subnormals and huge magnitudes, for bounds from 1e-6 to 1e3 of
 * the data's range; f64 also on ties of x / step and at the magnitude limit; and GPU quantize ->
 * CPU dequantize, CPU quantize -> GPU dequantize.
 */
import { expect } from 'vitest';
import { quantizeParams, quantizeParamsF64, type QuantizeParams } from '../../ts/codec/quantize.js';
import { dequantizeOnGpu, quantizeOnGpu } from '../../ts/codec/gpu/quantize.js';
import { KernelHarness } from '../support/kernels.js';
import { refQuantize } from '../support/quantize-reference.js';
import { describeGpu, gpuTest, type Rng } from './support.js';

const SPECIALS = [
  0x7fc00000, 0xffc00000, 0x7f800001, 0x7f800000, 0xff800000, 0x80000000, 0, 1, 0x807fffff, 0x00800000, 0x7f7fffff, 0xff7fffff, 0x7149f2ca,
];

function input(rng: Rng, n: number, scale: number): Uint32Array {
  const bits = new Uint32Array(n);
  const f = new Float32Array(bits.buffer);
  let phase = 0;
  for (let i = 0; i < n; i++) {
    phase += 0.03 + 0.05 * (rng.u32() / 2 ** 32);
    f[i] = scale * (Math.sin(phase) + 0.2 * (rng.u32() / 2 ** 32 - 0.5));
    if (rng.u32() / 2 ** 32 < 0.03) bits[i] = SPECIALS[Math.floor((rng.u32() / 2 ** 32) * SPECIALS.length)];
  }
  return bits;
}

/**
 * The CPU kernels' quantize, dequantize and scatter of `words` (the elements' bits: a word an f32,
 * two an f64, low first) within `abs`: codes, reconstructions, the exception lists and the decoded
 * bits, u32 words each.
 */
function cpuQuantize(h: KernelHarness, words: Uint32Array, abs: number, width: 4 | 8 = 4) {
  const f64 = width === 8;
  const p = f64 ? quantizeParamsF64(abs)! : quantizeParams(abs)!;
  h.reset();
  const per = width / 4;
  const n = words.length / per;
  const inPtr = h.copyIn(words, 64);
  const codes = h.alloc(4 * n + 64);
  const recon = h.alloc(width * n + 64);
  const idx = h.alloc(4 * n + 64);
  const val = h.alloc(width * n + 64);
  const e =
    'limBits' in p
      ? h.kernels.quantizeF32(inPtr, n, p.step, p.inv, p.tol, p.limBits, codes, recon, idx, val, n)
      : h.kernels.quantizeF64(inPtr, n, p.step, p.inv, p.abs, p.lim, codes, recon, idx, val, n);
  const out = h.alloc(width * n + 64);
  (f64 ? h.kernels.dequantizeF64 : h.kernels.dequantizeF32)(codes, n, p.step, out);
  (f64 ? h.kernels.scatterExceptions64 : h.kernels.scatterExceptions)(codes, n, idx, val, e, out);
  return {
    p,
    codes: h.copyOut(Uint32Array, codes, n),
    recon: h.copyOut(Uint32Array, recon, per * n),
    indices: h.copyOut(Uint32Array, idx, e),
    values: h.copyOut(Uint32Array, val, per * e),
    out: h.copyOut(Uint32Array, out, per * n),
  };
}

describeGpu('quantize kernels on the GPU (shaders/codec-quantize.wgsl)', () => {
  let cpu: KernelHarness | undefined;
  const harness = async () => (cpu ??= await KernelHarness.create('simd'));
  for (const rel of [1e-6, 1e-4, 1e-3, 1e-2, 1, 1e3]) {
    gpuTest(`same codes, reconstructions and decoded bytes as the CPU: bound ${rel} of the range`, async (ctx, rng) => {
      for (const [n, scale] of [
        [1, 1],
        [257, 1e-3],
        [70_001, 1],
        [5000, 1e30],
      ] as const) {
        const bits = input(rng, n, scale);
        const abs = rel * 2.4 * scale;
        const want = cpuQuantize(await harness(), bits, abs);
        const ref = refQuantize(bits, want.p as QuantizeParams);
        expect(Array.from(want.codes)).toEqual(Array.from(ref.codes));
        const got = await quantizeOnGpu(ctx, new Float32Array(bits.buffer), want.p);
        expect(Array.from(got.codes), `codes n=${n} scale=${scale}`).toEqual(Array.from(want.codes));
        expect(Array.from(got.recon), `recon n=${n} scale=${scale}`).toEqual(Array.from(want.recon));
        // CPU quantize -> GPU dequantize: the CPU's decoded bytes
        const back = await dequantizeOnGpu(ctx, want.codes, want.p.step, { indices: want.indices, values: want.values });
        expect(back.invalid).toBe(false);
        expect(Array.from(back.elements), `dequantize n=${n} scale=${scale}`).toEqual(Array.from(want.out));
        expect(Array.from(back.elements)).toEqual(Array.from(want.recon));
      }
    });
  }
  gpuTest('dequantize flags invalid codes', async (ctx) => {
    const back = await dequantizeOnGpu(ctx, new Uint32Array([0, 2, 0x80000000, 4]), 0.5);
    expect(back.invalid).toBe(true);
    const ok = await dequantizeOnGpu(ctx, new Uint32Array([0, 2, 0xfffffffe, 3]), 0.5);
    expect(ok.invalid).toBe(false);
    expect(Array.from(new Float32Array(ok.elements.buffer))).toEqual([0, 0.5, NaN, -1]);
  });
});

/** f64 specials and edges: NaNs (canonical, others), +-Infinity, -0, +0, subnormals, the largest finite, 1e300. */
const SPECIALS_F64 = [
  NaN,
  new Float64Array(new BigUint64Array([0x7ff0000000000001n]).buffer)[0],
  new Float64Array(new BigUint64Array([0xfff8000000000000n]).buffer)[0],
  Infinity,
  -Infinity,
  -0,
  0,
  5e-324,
  -2.2250738585072e-308,
  2.2250738585072014e-308,
  Number.MAX_VALUE,
  -1e300,
];

/** f64 elements around a smooth signal of `scale`, with specials, exact ties (k + 1/2) x step, and magnitudes at step x 2^30. */
function input64(rng: Rng, n: number, scale: number, step: number): Float64Array {
  const f = new Float64Array(n);
  let phase = 0;
  const r = () => rng.u32() / 2 ** 32;
  for (let i = 0; i < n; i++) {
    phase += 0.03 + 0.05 * r();
    f[i] = scale * (Math.sin(phase) + 0.2 * (r() - 0.5));
    const pick = r();
    if (pick < 0.03) f[i] = SPECIALS_F64[Math.floor(r() * SPECIALS_F64.length)];
    else if (pick < 0.06) f[i] = (Math.floor((r() - 0.5) * 2000) + 0.5) * step;
    else if (pick < 0.08) f[i] = (r() < 0.5 ? -1 : 1) * step * 2 ** 30 * (1 + (Math.floor(r() * 5) - 2) * 2 ** -52);
    else if (pick < 0.09) f[i] = f[i] * 2 ** -1000;
  }
  return f;
}

describeGpu('f64 quantize kernels on the GPU (shaders/codec-quantize-f64.wgsl)', () => {
  let cpu: KernelHarness | undefined;
  const harness = async () => (cpu ??= await KernelHarness.create('simd'));
  for (const rel of [1e-9, 1e-6, 1e-3, 1, 1e3]) {
    gpuTest(`same codes, reconstructions and decoded bytes as the CPU: bound ${rel} of the range`, async (ctx, rng) => {
      for (const [n, scale] of [
        [1, 1],
        [257, 1e-3],
        [40_001, 1],
        [3000, 1e300],
        [3000, 1e-280],
      ] as const) {
        const abs = rel * 2.4 * scale;
        const f = input64(rng, n, scale, quantizeParamsF64(abs)!.step);
        const want = cpuQuantize(await harness(), new Uint32Array(f.buffer), abs, 8);
        const got = await quantizeOnGpu(ctx, f, want.p);
        expect(Array.from(got.codes), `codes n=${n} scale=${scale}`).toEqual(Array.from(want.codes));
        expect(Array.from(got.recon), `recon n=${n} scale=${scale}`).toEqual(Array.from(want.recon));
        const back = await dequantizeOnGpu(ctx, want.codes, want.p.step, { indices: want.indices, values: want.values }, 8);
        expect(back.invalid).toBe(false);
        expect(Array.from(back.elements), `dequantize n=${n} scale=${scale}`).toEqual(Array.from(want.out));
        expect(Array.from(back.elements)).toEqual(Array.from(want.recon));
      }
    });
  }
  gpuTest('f64 dequantize flags invalid codes and decodes the reserved ones', async (ctx) => {
    const back = await dequantizeOnGpu(ctx, new Uint32Array([0, 2, 0x80000001, 4]), 0.5, undefined, 8);
    expect(back.invalid).toBe(true);
    const ok = await dequantizeOnGpu(ctx, new Uint32Array([0, 2, 0xfffffffe, 3, 0xfffffffb, 0x80000000, 0x7fffffff]), 0.5, undefined, 8);
    expect(ok.invalid).toBe(false);
    expect(Array.from(new Float64Array(ok.elements.buffer))).toEqual([0, 0.5, NaN, -1, -0, 2 ** 29, -(2 ** 29)]);
  });
});
