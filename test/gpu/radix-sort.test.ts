import { expect } from 'vitest';
import { createGpuContext, type GpuContext, type GpuContextOptions } from '../../ts/gpu/index.js';
import { sortWorkgroupSize, radixSort } from '../../ts/gpu/radix-sort.js';
import { assertSameBits, describeGpu, F32_SPECIAL_BITS, gpuIt, gpuTest, randomArray, refSort, Rng } from './support.js';

type KeyType = 'u32' | 'i32' | 'f32';
type Keys = Uint32Array | Int32Array | Float32Array;

async function checkSort(ctx: GpuContext, keys: Keys, withValues: boolean, what: string): Promise<void> {
  const values = withValues ? Uint32Array.from({ length: keys.length }, (_, i) => i) : undefined;
  const want = refSort(keys, values);
  const dk = await ctx.upload(keys);
  const dv = values === undefined ? undefined : await ctx.upload(values);
  const got = await radixSort(ctx, dk, dv);
  expect(got.keys.type).toBe(dk.type);
  expect(got.keys.length).toBe(keys.length);
  assertSameBits(await ctx.download(got.keys), want.keys, `${what} keys`);
  if (values !== undefined) {
    expect(got.values?.length).toBe(keys.length);
    assertSameBits(await ctx.download(got.values!), want.values!, `${what} values (stability)`);
  } else {
    expect(got.values).toBeUndefined();
  }
  // the input is left alone
  assertSameBits(await ctx.download(dk), keys, `${what} input unchanged`);
}

/** Keys with few distinct values (many ties: stability shows) or all bit patterns. */
function keysOf(type: KeyType, n: number, rng: Rng, distinct?: number): Keys {
  const a = randomArray(type, n, rng) as Keys;
  if (distinct !== undefined) {
    const pool = randomArray(type, distinct, rng) as Keys;
    const bits = new Uint32Array(a.buffer);
    const poolBits = new Uint32Array(pool.buffer);
    for (let i = 0; i < n; i++) bits[i] = poolBits[rng.below(distinct)];
  }
  return a;
}

const variants: [string, GpuContextOptions][] = [
  ['default (subgroup ranking when present)', { stagingChunkBytes: 64 << 10 }],
  ['shared memory (no subgroups)', { subgroups: 'off' }],
];

for (const [variant, opts] of variants) {
  describeGpu(`GPU radix sort: ${variant}`, () => {
    for (const type of ['u32', 'i32', 'f32'] as const) {
      for (const withValues of [false, true]) {
        gpuTest(
          `${type} ${withValues ? 'key-value' : 'keys'}: equals a stable reference sort`,
          async (ctx, rng) => {
            const tile = sortWorkgroupSize(ctx) * ctx.tuning.sortItemsPerInvocation;
            for (const n of [0, 1, 2, 3, 255, 256, 257, tile - 1, tile, tile + 1, 5 * tile + 3]) {
              await checkSort(ctx, keysOf(type, n, rng), withValues, `${type} n=${n}`);
            }
            await checkSort(ctx, keysOf(type, 3 * tile + 1, rng, 5), withValues, `${type} 5 distinct keys`);
            await checkSort(ctx, keysOf(type, 3 * tile + 1, rng, 1), withValues, `${type} all equal`);
            if (withValues) await checkSort(ctx, keysOf(type, 60_003, rng, 1000), withValues, `${type} n=60003`);
            else await checkSort(ctx, keysOf(type, 100_001, rng), withValues, `${type} n=100001`);
          },
          opts,
        );
      }
    }
  });
}

// Subgroups of more than 32 lanes rank with vec4 ballots, an atomicAdd and a shuffle per key
// (rankKeyWide) instead of one ballot word per item and the load/store counters; the sort's
// module picks the path from the adapter's largest subgroup size (MAX_SG). SwiftShader's
// subgroups have 4 lanes, so this context claims up to 128 before its first sort to run the wide
// path on them (rankKeyWide is correct for any size up to 128).
describeGpu('GPU radix sort: the ranking for subgroups of more than 32 lanes', () => {
  gpuIt('u32 key-value and f32 keys, ties and tile edges', async () => {
    const ctx = await createGpuContext();
    if (ctx === null) throw new Error('no adapter for a context');
    try {
      if (!ctx.hasSubgroups) throw new Error('this test needs an adapter with subgroups');
      Object.defineProperty(ctx, 'subgroupMaxSize', { value: 128 });
      const rng = new Rng(0x5eed);
      const tile = sortWorkgroupSize(ctx) * ctx.tuning.sortItemsPerInvocation;
      for (const n of [1, tile - 1, tile + 1, 9 * tile + 5]) {
        await checkSort(ctx, keysOf('u32', n, rng, 300), true, `u32 n=${n}`);
        await checkSort(ctx, keysOf('f32', n, rng), false, `f32 n=${n}`);
      }
    } finally {
      ctx.destroy();
    }
  });
});

for (const items of [12, 16] as const) {
  describeGpu(`GPU radix sort: ${items} keys per invocation (tuning)`, () => {
    gpuTest(
      'u32 and f32 key-value, odd sizes',
      async (ctx, rng) => {
        expect(ctx.tuning.sortItemsPerInvocation).toBe(items);
        const tile = sortWorkgroupSize(ctx) * items;
        for (const type of ['u32', 'f32'] as const) {
          for (const n of [1, tile - 1, tile, tile + 1, 30_001]) await checkSort(ctx, keysOf(type, n, rng, 300), true, `${type} n=${n}`);
        }
        await checkSort(ctx, keysOf('i32', 3 * tile + 7, rng), false, 'i32 keys');
      },
      { tuning: { sortItemsPerInvocation: items } },
    );
  });
}

// OneSweep's look-back with the decoupled fallback: lookbackSpin 0 makes every tile recount each
// predecessor tile's digit histogram from its keys instead of reading its status words; 1 mixes
// reads and recounts wherever a predecessor is late.
const lookbackVariants: [string, GpuContextOptions][] = [
  ['subgroups when present, lookbackSpin 0 (fallback at every step)', { lookbackSpin: 0 }],
  ['no subgroups, lookbackSpin 0', { subgroups: 'off', lookbackSpin: 0 }],
  ['lookbackSpin 1', { lookbackSpin: 1 }],
  ['16 keys per invocation, lookbackSpin 0', { lookbackSpin: 0, tuning: { sortItemsPerInvocation: 16 } }],
];

for (const [variant, opts] of lookbackVariants) {
  describeGpu(`GPU radix sort look-back: ${variant}`, () => {
    for (const type of ['u32', 'i32', 'f32'] as const) {
      for (const withValues of [false, true]) {
        gpuTest(
          `${type} ${withValues ? 'key-value' : 'keys'}: tile edges, several tiles, one digit`,
          async (ctx, rng) => {
            const tile = sortWorkgroupSize(ctx) * ctx.tuning.sortItemsPerInvocation;
            for (const n of [1, 5, tile - 1, tile, tile + 1, 2 * tile, 7 * tile + 5]) {
              await checkSort(ctx, keysOf(type, n, rng), withValues, `${type} n=${n}`);
            }
            // all keys equal: one digit per pass takes every key of every tile
            await checkSort(ctx, keysOf(type, 4 * tile + 3, rng, 1), withValues, `${type} all equal`);
            await checkSort(ctx, keysOf(type, 6 * tile + 11, rng, 3), withValues, `${type} 3 distinct keys`);
            await checkSort(ctx, keysOf(type, 20 * tile - 1, rng, 700), withValues, `${type} 20 tiles`);
          },
          opts,
        );
      }
    }
  });
}

// The look-back window (tuning.sortLookbackWindow): predecessors whose status words a digit's
// walk reads per round. 1 is the one-tile walk; the others take READY runs of up to that many
// tiles per round and stop at a status not yet published; lookbackSpin 1 mixes window rounds with
// recounts wherever a predecessor is late.
const windowVariants: [string, GpuContextOptions][] = [
  ['window 1', { tuning: { sortLookbackWindow: 1 } }],
  ['window 4, lookbackSpin 1', { lookbackSpin: 1, tuning: { sortLookbackWindow: 4 } }],
  ['window 32', { tuning: { sortLookbackWindow: 32 } }],
  ['window 32, no subgroups, lookbackSpin 1', { subgroups: 'off', lookbackSpin: 1, tuning: { sortLookbackWindow: 32 } }],
];

for (const [variant, opts] of windowVariants) {
  describeGpu(`GPU radix sort look-back window: ${variant}`, () => {
    // (two tests on SwiftShader: the one they were, 20 s, had passed the 120 s timeout
    // when the machine's two cores ran four jobs)
    gpuTest(
      'u32 key-value and f32 keys: fewer tiles than the window',
      async (ctx, rng) => {
        expect(ctx.tuning.sortLookbackWindow).toBe(opts.tuning?.sortLookbackWindow);
        const tile = sortWorkgroupSize(ctx) * ctx.tuning.sortItemsPerInvocation;
        for (const n of [tile + 1, 3 * tile, 33 * tile + 7]) {
          await checkSort(ctx, keysOf('u32', n, rng, 500), true, `u32 n=${n}`);
          await checkSort(ctx, keysOf('f32', n, rng), false, `f32 n=${n}`);
        }
      },
      opts,
    );
    gpuTest(
      'u32 key-value, f32 and i32 keys: more tiles than the window',
      async (ctx, rng) => {
        const tile = sortWorkgroupSize(ctx) * ctx.tuning.sortItemsPerInvocation;
        const n = 70 * tile - 1;
        await checkSort(ctx, keysOf('u32', n, rng, 500), true, `u32 n=${n}`);
        await checkSort(ctx, keysOf('f32', n, rng), false, `f32 n=${n}`);
        await checkSort(ctx, keysOf('i32', 40 * tile + 3, rng, 1), true, 'i32 all equal');
        await checkSort(ctx, keysOf('i32', 40 * tile + 3, rng, 2), false, 'i32 2 distinct keys');
      },
      opts,
    );
  });
}

describeGpu('GPU radix sort: options', () => {
  gpuTest('tuning.sortWorkgroupSize: 512 only within 16 subgroups and the device limits', async (ctx) => {
    expect(ctx.tuning.sortWorkgroupSize).toBe(256);
    const limits = { ...ctx.limits, maxComputeInvocationsPerWorkgroup: 1024, maxComputeWorkgroupSizeX: 1024, maxComputeWorkgroupStorageSize: 48 << 10 };
    const like = (o: { sub: boolean; min: number; wg: 256 | 512; items?: 8 | 12 | 16; limits?: Partial<typeof limits> }) =>
      sortWorkgroupSize({
        hasSubgroups: o.sub,
        subgroupMinSize: o.min,
        limits: { ...limits, ...o.limits },
        tuning: { ...ctx.tuning, sortWorkgroupSize: o.wg, sortItemsPerInvocation: o.items ?? 8 },
      } as unknown as typeof ctx);
    expect(like({ sub: true, min: 32, wg: 512 })).toBe(512); // NVIDIA: 16 warps, 39 KiB
    expect(like({ sub: true, min: 32, wg: 256 })).toBe(256);
    expect(like({ sub: true, min: 4, wg: 512 })).toBe(64); // SwiftShader: 16 subgroups of 4
    expect(like({ sub: false, min: 32, wg: 512 })).toBe(256);
    expect(like({ sub: true, min: 32, wg: 512, limits: { maxComputeInvocationsPerWorkgroup: 256 } })).toBe(256);
    expect(like({ sub: true, min: 32, wg: 512, limits: { maxComputeWorkgroupStorageSize: 32 << 10 } })).toBe(256);
    expect(like({ sub: true, min: 32, wg: 512, items: 16 })).toBe(256); // 16 keys: a 32 KiB stage alone
    for (const w of [128, 1024, 300]) {
      await expect(createGpuContext({ tuning: { sortWorkgroupSize: w as 256 } })).rejects.toMatchObject({ code: 'INVALID_OPTION' });
    }
    await expect(createGpuContext({ tuning: { sortItemsPerInvocation: 10 as 8 } })).rejects.toMatchObject({ code: 'INVALID_OPTION' });
  });
  gpuTest('tuning.sortLookbackWindow must be 1, 4, 8, 16 or 32 (INVALID_OPTION)', async (ctx) => {
    expect(ctx.tuning.sortLookbackWindow).toBe(8);
    for (const w of [0, 2, 3, 64, 1.5]) {
      await expect(createGpuContext({ tuning: { sortLookbackWindow: w as 16 } })).rejects.toMatchObject({ code: 'INVALID_OPTION' });
    }
  });
});

describeGpu('GPU radix sort: digit layouts', () => {
  gpuTest('2-D grid (as beyond 65535 tiles): tiles come from the counter, extra workgroups exit', async (ctx, rng) => {
    const grid = ctx.grid;
    // two rows, one workgroup too many for odd counts
    ctx.grid = (count: number): [number, number] => (count < 2 ? [count, 1] : [Math.ceil(count / 2), 2]);
    try {
      const tile = sortWorkgroupSize(ctx) * ctx.tuning.sortItemsPerInvocation;
      for (const n of [tile + 1, 5 * tile - 3, 9 * tile]) {
        await checkSort(ctx, keysOf('f32', n, rng), true, `f32 n=${n}`);
        await checkSort(ctx, keysOf('i32', n, rng, 40), false, `i32 n=${n}`);
      }
    } finally {
      ctx.grid = grid;
    }
  });
  gpuTest('keys differing in one byte only, and in the top byte only', async (ctx, rng) => {
    const n = 9000;
    for (const shift of [0, 8, 16, 24]) {
      const keys = Uint32Array.from({ length: n }, () => ((rng.below(256) << shift) | 0x01020304) >>> 0);
      await checkSort(ctx, keys, true, `byte ${shift / 8}`);
    }
    // every key the same but the last: all tiles but one have a single digit
    const keys = new Uint32Array(n).fill(0xdeadbeef);
    keys[n - 1] = 0;
    await checkSort(ctx, keys, true, 'one different key');
  });
});

describeGpu('GPU radix sort: edges', () => {
  gpuTest('f32 totalOrder: -NaN < -Inf < -max < -denormal < -0 < +0 < denormal < max < +Inf < +NaN', async (ctx) => {
    const bits = new Uint32Array([
      0x7fc00000, 0x3f800000, 0x80000000, 0x00000000, 0xff800000, 0x7f800000, 0xffc00000, 0x00000001, 0x80000001, 0xff7fffff, 0x7f7fffff,
    ]);
    const got = await radixSort(ctx, await ctx.upload(new Float32Array(bits.buffer)));
    const out = new Uint32Array(((await ctx.download(got.keys)) as Float32Array).buffer, 0, bits.length);
    expect(Array.from(out, (b) => b.toString(16))).toEqual(
      [
        0xffc00000, 0xff800000, 0xff7fffff, 0x80000001, 0x80000000, 0x00000000, 0x00000001, 0x3f800000, 0x7f7fffff, 0x7f800000, 0x7fc00000,
      ].map((b) => b.toString(16)),
    );
  });
  gpuTest('f32 specials mixed in, key-value', async (ctx, rng) => {
    const bits = Uint32Array.from({ length: 20_000 }, () => F32_SPECIAL_BITS[rng.below(F32_SPECIAL_BITS.length)]);
    await checkSort(ctx, new Float32Array(bits.buffer), true, 'f32 specials');
  });
  gpuTest('sorted and reverse-sorted input', async (ctx) => {
    const up = Uint32Array.from({ length: 70_000 }, (_, i) => i * 977);
    await checkSort(ctx, up, true, 'ascending');
    await checkSort(ctx, up.slice().reverse(), true, 'descending');
  });
  gpuTest('rejects mismatched values (LENGTH_MISMATCH) and u8 keys (UNSUPPORTED_TYPE)', async (ctx) => {
    const k = await ctx.upload(new Uint32Array(4));
    await expect(radixSort(ctx, k, await ctx.upload(new Uint32Array(3)))).rejects.toMatchObject({ code: 'LENGTH_MISMATCH' });
    await expect(radixSort(ctx, await ctx.upload(new Uint8Array(4)))).rejects.toMatchObject({ code: 'UNSUPPORTED_TYPE' });
    await expect(radixSort(ctx, k, await ctx.upload(new Float32Array(4)))).rejects.toMatchObject({ code: 'UNSUPPORTED_TYPE' });
  });
});
