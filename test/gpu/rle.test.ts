import { expect, vi } from 'vitest';
import { rleDecode, rleEncode } from '../../ts/gpu/rle.js';
import type { GpuContext, GpuContextOptions } from '../../ts/gpu/index.js';
import type { ElementType, ParleArray } from '../../ts/types.js';
import { assertSameBits, describeGpu, F32_SPECIAL_BITS, gpuTest, randomArray, refRleDecode, refRleEncode, runsArray, type Rng } from './support.js';

const TYPES: ElementType[] = ['u8', 'u16', 'u32', 'i32', 'f32'];
/** Elements per encode tile: 256 invocations x 16 words x elements per word. */
const tileOf = (t: ElementType) => 256 * 16 * (t === 'u8' ? 4 : t === 'u16' ? 2 : 1);

async function roundTrip(ctx: GpuContext, a: ParleArray, what: string): Promise<void> {
  const want = refRleEncode(a);
  const d = await ctx.upload(a);
  const runs = await rleEncode(ctx, d);
  expect(runs.values.type).toBe(d.type);
  expect(runs.lengths.type).toBe('u32');
  assertSameBits(await ctx.download(runs.values), want.values, `${what} values`);
  assertSameBits(await ctx.download(runs.lengths), want.lengths, `${what} lengths`);
  // GPU encode -> GPU decode, and reference encode -> GPU decode
  assertSameBits(await ctx.download(await rleDecode(ctx, runs.values, runs.lengths)), a, `${what} decode`);
  const hostRuns = await Promise.all([ctx.upload(want.values), ctx.upload(want.lengths)]);
  assertSameBits(await ctx.download(await rleDecode(ctx, hostRuns[0], hostRuns[1])), a, `${what} decode of reference runs`);
}

function cases(type: ElementType, rng: Rng): [string, ParleArray][] {
  const tile = tileOf(type);
  const out: [string, ParleArray][] = [];
  for (const n of [0, 1, 2, 3, 5, 255, 256, 257, tile - 1, tile, tile + 1, 2 * tile + 3]) {
    out.push([`random n=${n}`, randomArray(type, n, rng)]);
    out.push([`runs~4 n=${n}`, runsArray(type, n, 4, rng)]);
  }
  out.push(['runs~16 n=200003', runsArray(type, 200_003, 16, rng)]);
  out.push([`runs~${tile} (longer than a tile)`, runsArray(type, 5 * tile + 17, tile, rng)]);
  const one = new (randomArray(type, 0, rng).constructor as { new (n: number): ParleArray })(3 * tile + 5);
  one.fill(type === 'u8' ? 0xab : 7);
  out.push(['one run spanning everything', one]);
  return out;
}

const variants: [string, GpuContextOptions][] = [
  ['default', { stagingChunkBytes: 64 << 10 }],
  ['shared memory (no subgroups)', { subgroups: 'off' }],
  ['forced decoupled fallback (spin 0)', { lookbackSpin: 0 }],
];

for (const [variant, opts] of variants) {
  describeGpu(`GPU RLE: ${variant}`, () => {
    for (const type of TYPES) {
      gpuTest(`${type}: encode equals the reference, decode inverts it`, async (ctx, rng) => {
        for (const [what, a] of cases(type, rng)) {
          if (opts.lookbackSpin === 0 && a.length > 40 * tileOf(type)) continue;
          await roundTrip(ctx, a, `${type} ${what}`);
        }
      }, opts);
    }
  });
}

describeGpu('GPU RLE: decode shapes (tuning.decodeWordsPerInvocation 4 and 8)', () => {
  for (const words of [4, 8] as const) {
    gpuTest(`${words} words per invocation: all types, odd sizes`, async (ctx, rng) => {
      for (const type of TYPES) {
        for (const n of [1, 255, 4097, 70_001]) await roundTrip(ctx, runsArray(type, n, 5, rng), `${type} n=${n}`);
      }
    }, { tuning: { decodeWordsPerInvocation: words } });
  }
});

describeGpu('GPU RLE: edges', () => {
  gpuTest('f32 compares bit patterns: NaN payloads, -0 and +0 are distinct runs', async (ctx) => {
    const bits = new Uint32Array([0x7fc00000, 0x7fc00000, 0x7fc00001, 0x80000000, 0x00000000, 0x00000000, 0xffc00000]);
    const a = new Float32Array(bits.buffer);
    await roundTrip(ctx, a, 'f32 specials');
    const runs = await rleEncode(ctx, await ctx.upload(a));
    expect(runs.lengths.length).toBe(5);
  });
  gpuTest('f32 specials at random', async (ctx, rng) => {
    const a = new Float32Array(new Uint32Array(Array.from({ length: 5000 }, () => F32_SPECIAL_BITS[rng.below(4)])).buffer);
    await roundTrip(ctx, a, 'f32 special mix');
  });
  gpuTest('decode: zero-length runs, and a worked example', async (ctx) => {
    const values = await ctx.upload(new Uint8Array([0, 2, 9, 5, 8, 7]));
    const lengths = await ctx.upload(new Uint32Array([1, 2, 0, 3, 0, 1]));
    expect(Array.from(await ctx.download(await rleDecode(ctx, values, lengths)))).toEqual([0, 2, 2, 5, 5, 5, 7]);
    const enc = await rleEncode(ctx, await ctx.upload(new Uint8Array([0, 2, 2, 9, 5, 5, 5, 8])));
    expect(Array.from(await ctx.download(enc.values))).toEqual([0, 2, 9, 5, 8]);
    expect(Array.from(await ctx.download(enc.lengths))).toEqual([1, 2, 1, 3, 1]);
  });
  gpuTest('decode: all lengths zero gives an empty array', async (ctx) => {
    const out = await rleDecode(ctx, await ctx.upload(new Uint16Array([1, 2])), await ctx.upload(new Uint32Array([0, 0])));
    expect(out.length).toBe(0);
    expect(out.type).toBe('u16');
  });
  gpuTest('decode: lengths summing to 2^32 throw TOO_LARGE', async (ctx) => {
    const values = await ctx.upload(new Uint32Array([1, 2, 3]));
    const lengths = await ctx.upload(new Uint32Array([0x80000000, 0x7fffffff, 1]));
    await expect(rleDecode(ctx, values, lengths)).rejects.toMatchObject({ code: 'TOO_LARGE' });
  });
  gpuTest('decode: mismatched lengths throw LENGTH_MISMATCH, non-u32 lengths UNSUPPORTED_TYPE', async (ctx) => {
    const v = await ctx.upload(new Uint32Array([1, 2, 3]));
    await expect(rleDecode(ctx, v, await ctx.upload(new Uint32Array([1, 2])))).rejects.toMatchObject({ code: 'LENGTH_MISMATCH' });
    await expect(rleDecode(ctx, v, await ctx.upload(new Int32Array([1, 2, 3])))).rejects.toMatchObject({ code: 'UNSUPPORTED_TYPE' });
  });
  gpuTest('decode of rleEncode\'s runs takes one submission; changed lengths are still decoded right', async (ctx, rng) => {
    const a = runsArray('u8', 70_001, 6, rng) as Uint8Array;
    const runs = await rleEncode(ctx, await ctx.upload(a));
    const r = runs.lengths.length;
    const values = await ctx.download(runs.values);
    const decode = async (): Promise<{ out: ParleArray; submissions: string[] }> => {
      const submit = vi.spyOn(ctx, 'submit');
      try {
        const d = await rleDecode(ctx, runs.values, runs.lengths);
        return { out: await ctx.download(d), submissions: submit.mock.calls.map((c) => c[0]).filter((l) => l !== 'download') };
      } finally {
        submit.mockRestore();
      }
    };
    const first = await decode();
    assertSameBits(first.out, a, 'decode of the encode');
    expect(first.submissions).toEqual(['rle-decode']);
    // the lengths' contents replaced behind parle's back: longer, then shorter, then wrapping past 2^32
    for (const change of [(l: Uint32Array) => { l[0] += 3; l[r - 1] += 1000; }, (l: Uint32Array) => { l[1] = 0; l[r - 2] = 1; }]) {
      const lengths = (await ctx.download(runs.lengths)) as Uint32Array;
      change(lengths);
      ctx.device.queue.writeBuffer(runs.lengths.buffer, 0, lengths);
      const again = await decode();
      assertSameBits(again.out, refRleDecode(values, lengths), 'changed lengths');
      expect(again.submissions).toEqual(['rle-decode', 'rle-decode-expand']);
    }
    const wrapping = new Uint32Array(r).fill(1);
    wrapping[0] = 0xffffffff;
    ctx.device.queue.writeBuffer(runs.lengths.buffer, 0, wrapping);
    await expect(rleDecode(ctx, runs.values, runs.lengths)).rejects.toMatchObject({ code: 'TOO_LARGE' });
  });
  gpuTest('decode with an expected total: one submission; a wrong total is CORRUPT and holds nothing back', async (ctx, rng) => {
    const a = runsArray('u16', 9_999, 4, rng) as Uint16Array;
    const want = refRleEncode(a);
    const values = await ctx.upload(want.values);
    const lengths = await ctx.upload(want.lengths);
    const submit = vi.spyOn(ctx, 'submit');
    let d;
    try {
      d = await rleDecode(ctx, values, lengths, a.length);
      expect(submit.mock.calls.map((c) => c[0])).toEqual(['rle-decode']);
    } finally {
      submit.mockRestore();
    }
    assertSameBits(await ctx.download(d), a, 'expected total');
    for (const wrong of [a.length - 1, a.length + 1, 2 ** 32 - 1]) {
      await expect(rleDecode(ctx, values, lengths, wrong)).rejects.toMatchObject({ code: 'CORRUPT' });
      // the second failure reuses what the first gave back to the pool, and gives it back again
      const kept = ctx.poolStats.keptBytes;
      await expect(rleDecode(ctx, values, lengths, wrong)).rejects.toMatchObject({ code: 'CORRUPT' });
      expect(ctx.poolStats.keptBytes, `wrong total ${wrong}`).toBe(kept);
    }
    assertSameBits(await ctx.download(await rleDecode(ctx, values, lengths)), a, 'after the failures');
  });
  gpuTest('encode of a wrapped, unpadded u8 buffer', async (ctx, rng) => {
    const a = runsArray('u8', 1001, 3, rng) as Uint8Array;
    const buffer = ctx.device.createBuffer({ size: 1004, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC });
    const padded = new Uint8Array(1004);
    padded.set(a);
    ctx.device.queue.writeBuffer(buffer, 0, padded);
    const runs = await rleEncode(ctx, ctx.wrap(buffer, 'u8', 1001));
    const want = refRleEncode(a);
    assertSameBits(await ctx.download(runs.values), want.values, 'values');
    assertSameBits(await ctx.download(runs.lengths), want.lengths, 'lengths');
  });
});
