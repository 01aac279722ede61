import { expect } from 'vitest';
import type { GpuContextOptions } from '../../ts/gpu/index.js';
import { assertSameBits, describeGpu, gpuTest, refRleEncode, refScan, runsArray, type Rng } from './support.js';
import { rleDecode, rleEncode } from '../../ts/gpu/rle.js';
import { scan } from '../../ts/gpu/scan.js';

const TILE = 4096;
const SIZES = [0, 1, 3, 4, 5, 255, 256, 257, TILE - 1, TILE, TILE + 1, 2 * TILE - 1, 2 * TILE + 1, 3 * TILE + 7, 300_001];

function input(type: 'u32' | 'i32' | 'f32', n: number, rng: Rng): Uint32Array | Int32Array | Float32Array {
  if (type === 'f32') return Float32Array.from({ length: n }, () => rng.below(201) - 100); // exact sums
  const a = type === 'u32' ? new Uint32Array(n) : new Int32Array(n);
  for (let i = 0; i < n; i++) a[i] = rng.u32(); // wraps
  return a;
}

const variants: [string, GpuContextOptions][] = [
  ['default (subgroups when present)', { stagingChunkBytes: 64 << 10 }],
  ['shared memory (no subgroups)', { subgroups: 'off' }],
  ['forced decoupled fallback (spin 0)', { lookbackSpin: 0 }],
  ['8 vec4 per invocation (8192-element tiles)', { tuning: { scanVecsPerInvocation: 8 } }],
  ['2 vec4 per invocation (2048-element tiles)', { tuning: { scanVecsPerInvocation: 2 } }],
  // 1024 invocations where the adapter allows them (SwiftShader: 256, its limit)
  ['workgroups of 1024 where allowed', { tuning: { scanWorkgroupSize: 1024 } }],
  ['8 vec4 per invocation, no subgroups, spin 0', { subgroups: 'off', lookbackSpin: 0, tuning: { scanVecsPerInvocation: 8 } }],
];

for (const [variant, opts] of variants) {
  describeGpu(`GPU scan: ${variant}`, () => {
    for (const type of ['u32', 'i32', 'f32'] as const) {
      for (const inclusive of [true, false]) {
        const sizes = opts.lookbackSpin === 0 ? SIZES.filter((n) => n <= 40 * TILE) : SIZES;
        gpuTest(`${type} ${inclusive ? 'inclusive' : 'exclusive'}, sizes ${sizes.join(', ')}`, async (ctx, rng) => {
          for (const n of sizes) {
            const a = input(type, n, rng);
            const d = await ctx.upload(a);
            const out = await scan(ctx, d, { inclusive });
            expect(out.type).toBe(type);
            expect(out.length).toBe(n);
            assertSameBits(await ctx.download(out), refScan(a, inclusive), `${type} n=${n}`);
          }
        }, opts);
      }
    }
  });
}

describeGpu('GPU scan: f32 rounding and specials', () => {
  gpuTest('random reals within rounding of a serial sum', async (ctx, rng) => {
    const n = 50_000;
    const a = Float32Array.from({ length: n }, () => (rng.u32() / 2 ** 32) * 2 - 0.5);
    const out = (await ctx.download(await scan(ctx, await ctx.upload(a), { inclusive: true }))) as Float32Array;
    const want = refScan(a, true);
    let absSum = 0;
    for (let i = 0; i < n; i++) {
      absSum += Math.abs(a[i]);
      if (Math.abs(out[i] - want[i]) > 1e-5 * absSum + 1e-6) throw new Error(`i=${i}: got ${out[i]}, want ${want[i]}`);
    }
  });
  gpuTest('NaN and Infinity propagate', async (ctx) => {
    const a = new Float32Array([1, 2, Infinity, 3, NaN, 4]);
    const out = (await ctx.download(await scan(ctx, await ctx.upload(a), { inclusive: true }))) as Float32Array;
    expect(Array.from(out)).toEqual([1, 3, Infinity, Infinity, NaN, NaN]);
  });
  gpuTest('rejects u8 with UNSUPPORTED_TYPE', async (ctx) => {
    const d = await ctx.upload(new Uint8Array(4));
    await expect(scan(ctx, d, { inclusive: true })).rejects.toMatchObject({ code: 'UNSUPPORTED_TYPE' });
  });
});

describeGpu('GPU scan and RLE decode beyond one storage binding (binding capped at 64 KiB)', () => {
  gpuTest('scan in windows equals the reference: u32, i32, f32, inclusive and exclusive', async (ctx, rng) => {
    for (const type of ['u32', 'i32', 'f32'] as const) {
      for (const n of [16384, 16385, 50_001, 3 * 16384 + 4096]) {
        const a = input(type, n, rng);
        const d = await ctx.upload(a);
        for (const inclusive of [true, false]) {
          const out = await scan(ctx, d, { inclusive });
          assertSameBits(await ctx.download(out), refScan(a, inclusive), `${type} n=${n} inclusive=${inclusive}`);
          out.destroy();
        }
        d.destroy();
      }
    }
  }, { maxStorageBindingBytes: 64 << 10 });

  gpuTest('RLE decode into an output of several windows; encode refuses with TOO_LARGE', async (ctx, rng) => {
    for (const type of ['u8', 'u16', 'u32'] as const) {
      const a = runsArray(type, 70_001, 300, rng); // 70 KB to 280 KB of output: 2 to 5 windows
      const want = refRleEncode(a);
      const [values, lengths] = await Promise.all([ctx.upload(want.values), ctx.upload(want.lengths)]);
      const out = await rleDecode(ctx, values, lengths);
      assertSameBits(await ctx.download(out), a, `${type} decode`);
      if (type === 'u32') await expect(rleEncode(ctx, out)).rejects.toMatchObject({ code: 'TOO_LARGE' });
      out.destroy();
      values.destroy();
      lengths.destroy();
    }
  }, { maxStorageBindingBytes: 64 << 10 });
});
