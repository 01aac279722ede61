import { expect, it } from 'vitest';
import { createGpuContext, DeviceArray } from '../../ts/gpu/index.js';
import type { ElementType, ParleArray } from '../../ts/types.js';
import { sizeClass } from '../../ts/gpu/buffer-pool.js';
import {
  assertSameBits,
  baseSeed,
  describeGpu,
  gpuIt,
  gpuTest,
  mainContext,
  randomArray,
  refRleEncode,
  remakeBuffers,
  Rng,
  runsArray,
  tracked,
} from './support.js';
import { within } from '../support/wait.js';
import { radixSort } from '../../ts/gpu/radix-sort.js';
import { rleDecode, rleEncode } from '../../ts/gpu/rle.js';
import { scan } from '../../ts/gpu/scan.js';

const TYPES: ElementType[] = ['u8', 'u16', 'u32', 'i32', 'f32'];

describeGpu('GPU context', () => {
  gpuIt('reports the adapter, limits and features', () => {
    const ctx = mainContext!;
    expect(typeof ctx.adapterInfo.vendor).toBe('string');
    expect(ctx.limits.maxStorageBufferBindingSize).toBeGreaterThanOrEqual(128 << 20);
    expect(ctx.limits.maxComputeWorkgroupsPerDimension).toBeGreaterThanOrEqual(65535);
    expect(typeof ctx.hasSubgroups).toBe('boolean');
  });

  gpuTest('an op run again takes the bind groups of the first run, and its result is right', async (ctx, rng) => {
    const a = randomArray('u32', 100_003, rng) as Uint32Array;
    const expected = new Uint32Array(a.length);
    for (let i = 0, sum = 0; i < a.length; i++) expected[i] = sum = (sum + a[i]) >>> 0;
    const input = await ctx.upload(a);
    const first = await scan(ctx, input, { inclusive: true });
    assertSameBits(await ctx.download(first), expected, 'scan');
    first.destroy(); // its buffer back to the pool, for the next run's output
    const before = { ...ctx.bindGroups.stats };
    const again = await scan(ctx, input, { inclusive: true });
    expect(ctx.bindGroups.stats.made).toBe(before.made);
    expect(ctx.bindGroups.stats.reused).toBeGreaterThan(before.reused);
    assertSameBits(await ctx.download(again), expected, 'scan run again');
    // a different input: new groups, the right sums
    const b = await ctx.upload(a.subarray(1));
    const other = await scan(ctx, b, { inclusive: true });
    expect(ctx.bindGroups.stats.made).toBeGreaterThan(before.made);
    const shifted = (await ctx.download(other)) as Uint32Array;
    for (const i of [0, 1, 77_777, a.length - 2]) expect(shifted[i]).toBe((expected[i + 1] - a[0]) >>> 0);
    for (const d of [input, again, b, other]) d.destroy();
  });

  for (const type of TYPES) {
    gpuTest(`${type}: upload then download returns the same bits (writeBuffer and staging-ring sizes)`, async (ctx, rng) => {
      // the test contexts use 64 KiB staging chunks: 600 KB crosses several chunks, the ring wraps
      for (const bytes of [0, 1, 2, 3, 5, 4096, 65535, (1 << 20) + 3, 600_000 * 3 + 1]) {
        const n = Math.floor(bytes / (type === 'u8' ? 1 : type === 'u16' ? 2 : 4));
        const a = randomArray(type, n, rng);
        const d = await ctx.upload(a);
        expect(d).toBeInstanceOf(DeviceArray);
        expect([d.type, d.length, d.owned]).toEqual([type, n, true]);
        expect(d.buffer.size % 16).toBe(0);
        const back = await ctx.download(d);
        assertSameBits(back, a, `${type} n=${n}`);
        d.destroy();
        expect(d.destroyed).toBe(true);
      }
    });
  }

  gpuTest(
    'uploads of 32 MiB and more go through staging pieces, reused by the next upload',
    async (ctx, rng) => {
      for (let round = 0; round < 2; round++) {
        const a = randomArray('u8', (32 << 20) + 4 * 1024 * 1024 + 3, rng); // 9 pieces of 4 MiB, the last short
        const d = await ctx.upload(a);
        assertSameBits(await ctx.download(d), a, `round ${round}`);
        d.destroy();
      }
    },
    { tuning: { uploadPieceBytes: 4 << 20 } },
  );

  it('sizeClass: powers of two to 1 MiB, then eighths of the power of two below', () => {
    expect([sizeClass(1), sizeClass(300), sizeClass(1 << 20)]).toEqual([256, 512, 1 << 20]);
    expect(sizeClass((1 << 20) + 1)).toBe((1 << 20) + (1 << 17));
    expect(sizeClass(3 << 28)).toBe(3 << 28);
    for (const n of [5000, 123_457, 9_999_999, 2 ** 31 - 5]) {
      expect(sizeClass(n)).toBeGreaterThanOrEqual(n);
      expect(sizeClass(n)).toBeLessThanOrEqual(n <= 1 << 20 ? Math.max(256, 2 * n) : n * 1.125 + 16);
    }
  });

  gpuTest("an op's flush() submits what it recorded so far; what it records after reads it", async (ctx) => {
    const src = await ctx.upload(new Uint32Array(4096).map((_, i) => i * 7));
    const submitted: number[] = [];
    const submit = ctx.device.queue.submit;
    ctx.device.queue.submit = function (buffers: Iterable<GPUCommandBuffer>) {
      submitted.push([...buffers].length);
      return submit.call(this, buffers);
    };
    try {
      const read = await ctx.submit('test: flush', (s) => {
        const middle = s.temp(src.byteLength, 'test middle');
        const last = s.temp(src.byteLength, 'test last');
        s.encoder.copyBufferToBuffer(src.buffer, 0, middle, 0, src.byteLength);
        s.flush();
        s.encoder.copyBufferToBuffer(middle, 0, last, 0, src.byteLength);
        return s.readAfter(last, src.byteLength);
      });
      const words = await read();
      expect(words[4095]).toBe(4095 * 7);
      expect(submitted).toEqual([1, 1]);
    } finally {
      ctx.device.queue.submit = submit;
      src.destroy();
    }
  });

  gpuTest('readbacks of up to 4 MiB reuse their MAP_READ buffers, at most 2 a size class above 64 KiB', async (ctx) => {
    const src = await ctx.upload(new Uint32Array(300_000).map((_, i) => i));
    const made: number[] = [];
    const create = ctx.device.createBuffer;
    ctx.device.createBuffer = function (desc: GPUBufferDescriptor) {
      if ((desc.usage & GPUBufferUsage.MAP_READ) !== 0) made.push(desc.size);
      return create.call(this, desc);
    };
    try {
      /** Reads `bytes` of src back in each of `count` submissions at once; checks their words. */
      const readBack = async (bytes: number, count: number) => {
        const reads = await Promise.all(
          Array.from({ length: count }, () => ctx.submit('test: readback', (s) => s.readAfter(src.buffer, bytes))),
        );
        for (const words of await Promise.all(reads.map((read) => read()))) {
          expect(words.length).toBe(bytes / 4);
          expect(words[words.length - 1]).toBe(bytes / 4 - 1);
        }
      };
      await readBack(150_000, 1);
      const first = made.length;
      await readBack(150_000, 1); // the 256 KiB class kept: no new buffer
      expect(made.length).toBe(first);
      await readBack(150_000, 3); // three at once: two more made; two of the three kept after
      expect(made.length).toBe(first + 2);
      await readBack(150_000, 3); // two kept, one more made
      expect(made.length).toBe(first + 3);
    } finally {
      ctx.device.createBuffer = create;
      src.destroy();
    }
  });

  gpuTest('the buffer pool hands released buffers out again; dirty buffers give the same results', async (ctx, rng) => {
    const before = ctx.poolStats;
    // fill pooled buffers with ones: a scan's output and its spine go back to the pool
    const ones = await ctx.upload(new Uint32Array(300_001).fill(0xffffffff));
    (await scan(ctx, ones, { inclusive: true })).destroy();
    ones.destroy();
    expect(ctx.poolStats.keptBytes).toBeGreaterThan(before.keptBytes);
    for (const n of [300_001, 1_200_003, 17]) {
      const a = runsArray('u8', n, 5, rng);
      const want = refRleEncode(a);
      const d = await ctx.upload(a);
      const runs = await rleEncode(ctx, d);
      assertSameBits(await ctx.download(runs.values), want.values, `values n=${n}`);
      assertSameBits(await ctx.download(runs.lengths), want.lengths, `lengths n=${n}`);
      assertSameBits(await ctx.download(await rleDecode(ctx, runs.values, runs.lengths)), a, `decode n=${n}`);
      // the results are sized to the run count, not the worst case
      expect(runs.lengths.buffer.size).toBeLessThanOrEqual(sizeClass(want.lengths.byteLength));
      runs.values.destroy();
      runs.lengths.destroy();
      d.destroy();
    }
    expect(ctx.poolStats.reused).toBeGreaterThan(before.reused);
    expect(ctx.poolStats.keptBytes).toBeLessThanOrEqual(ctx.poolStats.limitBytes);
    await ctx.releaseStaging();
    expect(ctx.poolStats.keptBytes).toBe(0);
  });

  gpuTest(
    'poolBytes 0 keeps nothing',
    async (ctx, rng) => {
      const a = randomArray('u32', 5000, rng);
      const out = await ctx.download(await scan(ctx, await ctx.upload(a), { inclusive: false }));
      expect(out[1]).toBe(a[0]);
      expect(ctx.poolStats.keptBytes).toBe(0);
    },
    { poolBytes: 0 },
  );

  gpuTest('download into a reused array, and zero-copy mapped download', async (ctx, rng) => {
    const a = randomArray('u16', 300_001, rng) as Uint16Array;
    const d = await ctx.upload(a);
    const into = new Uint16Array(300_005).fill(0xdead);
    expect(await ctx.download(d, { into })).toBe(into);
    assertSameBits(into.subarray(0, a.length), a, 'into');
    expect(into[300_004]).toBe(0xdead);
    await expect(ctx.download(d, { into: new Uint16Array(10) })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    await expect(ctx.download(d, { into: new Uint32Array(300_001) })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    const mapped = await ctx.downloadMapped(d);
    assertSameBits(mapped.array, a, 'mapped');
    mapped.release();
    const empty = await ctx.downloadMapped(await ctx.upload(new Float32Array(0)));
    expect(empty.array.length).toBe(0);
    empty.release();
  });

  gpuTest('uploads from views with an offset, and concurrent transfers', async (ctx, rng) => {
    const big = randomArray('u8', (3 << 20) + 11, rng) as Uint8Array;
    const view = big.subarray(7, (2 << 20) + 9);
    const many = await Promise.all([ctx.upload(view), ctx.upload(big), ctx.upload(view.slice(0, 1000))]);
    const back = await Promise.all(many.map((d) => ctx.download(d)));
    assertSameBits(back[0], view, 'view');
    assertSameBits(back[1], big, 'big');
    assertSameBits(back[2], view.slice(0, 1000), 'small');
    // 33 MiB: the whole-size staging buffer, made, then reused
    const large = randomArray('u32', (33 << 20) / 4 + 1, rng);
    for (let r = 0; r < 2; r++) {
      large[r] ^= 1;
      assertSameBits(await ctx.download(await ctx.upload(large)), large, `large ${r}`);
    }
  });

  gpuTest(
    'uploadParts: arrays side by side in one buffer, each at its offset, across staging pieces',
    async (ctx, rng) => {
      // a part of an odd length, an empty one, one across a piece's end (pieces of 4 MiB here), a
      // view with an offset, and one that ends at the buffer's last byte
      const parts = [
        randomArray('u8', 13, rng) as Uint8Array,
        new Uint8Array(0),
        randomArray('u8', (5 << 20) + 6, rng) as Uint8Array,
        (randomArray('u8', 300, rng) as Uint8Array).subarray(3, 203),
        randomArray('u8', 9, rng) as Uint8Array,
      ];
      const offsets: number[] = [];
      let at = 0;
      for (const p of parts) {
        offsets.push(at);
        at += Math.ceil(p.length / 4) * 4 + 8; // gaps between them
      }
      const byteLength = offsets[4] + parts[4].length;
      const d = await ctx.uploadParts(parts, offsets, byteLength);
      expect(d.type).toBe('u8');
      expect(d.length).toBe(byteLength);
      const back = (await ctx.download(d)) as Uint8Array;
      parts.forEach((p, i) => assertSameBits(back.subarray(offsets[i], offsets[i] + p.length), p, `part ${i}`));
      d.destroy();
      // an offset off 4 bytes, a part past the end, parts out of order or overlapping: refused
      // before anything is made
      await expect(ctx.uploadParts([parts[0]], [2], 64)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
      await expect(ctx.uploadParts([parts[0]], [0], 12)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
      await expect(ctx.uploadParts([parts[0], parts[4]], [32, 0], 64)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
      await expect(ctx.uploadParts([parts[0], parts[4]], [0, 12], 64)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    },
    { tuning: { uploadPieceBytes: 4 << 20 } },
  );

  gpuTest('wrap: an application buffer, not owned, used as input', async (ctx) => {
    const data = new Uint32Array([5, 1, 4, 1, 3]);
    const buffer = ctx.device.createBuffer({ size: 20, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST });
    ctx.device.queue.writeBuffer(buffer, 0, data);
    const d = ctx.wrap(buffer, 'u32', 5);
    expect(d.owned).toBe(false);
    assertSameBits(await ctx.download(d), data, 'download of wrapped');
    assertSameBits(await ctx.download(await scan(ctx, d, { inclusive: true })), new Uint32Array([5, 6, 10, 11, 14]), 'scan');
    assertSameBits(await ctx.download((await radixSort(ctx, d)).keys), new Uint32Array([1, 1, 3, 4, 5]), 'sort');
    d.destroy(); // leaves the buffer alone
    assertSameBits(await ctx.download(ctx.wrap(buffer, 'u32', 5)), data, 'still there');
  });

  gpuTest('wrap: validates its arguments with codes', async (ctx) => {
    const noStorage = ctx.device.createBuffer({ size: 16, usage: GPUBufferUsage.COPY_DST });
    const small = ctx.device.createBuffer({ size: 16, usage: GPUBufferUsage.STORAGE });
    const code = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        return (e as { code?: string }).code;
      }
      return 'none';
    };
    expect(code(() => ctx.wrap(noStorage, 'u32', 1))).toBe('INVALID_ARGUMENT');
    expect(code(() => ctx.wrap(small, 'u32', 5))).toBe('INVALID_ARGUMENT');
    expect(code(() => ctx.wrap(small, 'u128' as ElementType, 1))).toBe('UNSUPPORTED_TYPE');
    expect(code(() => ctx.wrap(small, 'u64', 3))).toBe('INVALID_ARGUMENT'); // 8 bytes an element: 24 of 16
    expect(code(() => ctx.wrap(small, 'u32', -1))).toBe('INVALID_OPTION');
    await expect(ctx.download(ctx.wrap(small, 'u32', 4))).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    await expect(ctx.upload([1, 2] as unknown as ParleArray)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
  });

  gpuTest('a destroyed DeviceArray is refused', async (ctx) => {
    const d = await ctx.upload(new Uint32Array(8));
    d.destroy();
    await expect(scan(ctx, d, { inclusive: true })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
  });

  gpuTest('sizes beyond 65535 workgroups dispatch as a 2-D grid', async (ctx) => {
    // 65536 * 256 invocations of the decode expand (16 words each) would need 2^28 words; use
    // the grid helper directly and a scan of 300k elements (73 tiles) for the kernels instead.
    expect(ctx.grid(65535)).toEqual([65535, 1]);
    expect(ctx.grid(65536)).toEqual([32768, 2]);
    expect(ctx.grid(3 * 65535 + 1)).toEqual([49152, 4]);
  });

  gpuIt('createGpuContext validates options with INVALID_OPTION', async () => {
    await expect(createGpuContext({ lookbackSpin: -1 })).rejects.toMatchObject({ code: 'INVALID_OPTION' });
    await expect(createGpuContext({ stagingChunkBytes: 5 })).rejects.toMatchObject({ code: 'INVALID_OPTION' });
    await expect(createGpuContext({ subgroups: 'maybe' as 'off' })).rejects.toMatchObject({ code: 'INVALID_OPTION' });
    await expect(createGpuContext({ poolBytes: -1 })).rejects.toMatchObject({ code: 'INVALID_OPTION' });
    await expect(createGpuContext({ tuning: { uploadPieceBytes: 1000 } })).rejects.toMatchObject({ code: 'INVALID_OPTION' });
    await expect(createGpuContext({ tuning: { scanVecsPerInvocation: 3 as 8 } })).rejects.toMatchObject({ code: 'INVALID_OPTION' });
    await expect(createGpuContext({ tuning: { scanWorkgroupSize: 384 as 512 } })).rejects.toMatchObject({ code: 'INVALID_OPTION' });
  });

  // The waits below are on the events themselves (the op's promise, device.lost), each bounded
  // by a generous limit so that a missing event fails with its name instead of the test's
  // timeout: on SwiftShader device.lost resolves seconds after destroy(), once the work queued
  // before it (the sort's pipelines) is done.
  gpuIt('device loss: pending and later ops fail with DEVICE_LOST; a new context works', async () => {
    const ctx = (await createGpuContext())!;
    try {
      const d = await ctx.upload(new Uint32Array(100_000).fill(7));
      const pending = radixSort(ctx, d);
      pending.catch(() => undefined); // (awaited below, after the loss)
      ctx.device.destroy(); // what a driver reset looks like to the API: device.lost resolves
      const info = await within(ctx.lost, 60_000, 'ctx.lost did not resolve after device.destroy()');
      expect(typeof info.reason).toBe('string');
      expect(ctx.isLost).toBe(true);
      await expect(within(pending, 60_000, 'the sort pending at the loss did not settle')).rejects.toMatchObject({ code: 'DEVICE_LOST' });
      await expect(scan(ctx, d, { inclusive: true })).rejects.toMatchObject({ code: 'DEVICE_LOST' });
      await expect(ctx.upload(new Uint8Array(4))).rejects.toMatchObject({ code: 'DEVICE_LOST' });
    } finally {
      ctx.destroy();
    }
    const again = (await createGpuContext())!;
    try {
      await tracked(again, async () => {
        const out = await again.download(await scan(again, await again.upload(new Uint32Array([1, 2, 3])), { inclusive: false }));
        expect(Array.from(out)).toEqual([0, 1, 3]);
      });
    } finally {
      again.destroy();
    }
  });

  // WebGPU reports a buffer it cannot make, and every command that uses it, as errors, not by
  // throwing, and a command buffer that fails validation does not run: without the context's
  // checks these calls resolved with the outputs' stale contents (a 256 MiB rleEncode out of
  // memory on SwiftShader returned the runs of the call before it). Untracked (gpuIt): the
  // tracked tests' validation scope would take the errors the context looks for.
  gpuIt('a buffer the device cannot make fails the op (GPU_ERROR, OUT_OF_MEMORY), never stale outputs', async () => {
    // poolBytes 0: nothing kept, every buffer made anew (a kept one would be handed out instead)
    const ctx = (await createGpuContext({ poolBytes: 0, stagingChunkBytes: 64 << 10 }))!;
    const rng = new Rng(baseSeed); // (PARLE_TEST_SEED reruns it)
    const device = ctx.device;
    let restore: () => void = () => {};
    const a = runsArray('u8', 100_003, 7, rng);
    const want = refRleEncode(a);
    const d = await ctx.upload(a);
    const check = async (what: string) => {
      const runs = await rleEncode(ctx, d);
      assertSameBits(await ctx.download(runs.values), want.values, `${what}: values`);
      assertSameBits(await ctx.download(runs.lengths), want.lengths, `${what}: lengths`);
      runs.values.destroy();
      runs.lengths.destroy();
    };
    try {
      await check('before');
      // past maxBufferSize: a validation error where the pool makes it, and in the submission
      restore = remakeBuffers(device, 'parle:rle-ends', ctx.limits.maxBufferSize + 256);
      await expect(rleEncode(ctx, d)).rejects.toMatchObject({ code: 'GPU_ERROR', message: expect.stringMatching(/rle-encode/) });
      restore();
      await check('after a GPU_ERROR');
      // 1 GiB: SwiftShader cannot allocate it (VK_ERROR_OUT_OF_DEVICE_MEMORY); a larger GPU can
      const swiftShader = /swiftshader/i.test(JSON.stringify(ctx.adapterInfo));
      const gib = Math.min(1 << 30, ctx.limits.maxBufferSize);
      restore = remakeBuffers(device, 'parle:rle-ends', gib);
      if (swiftShader) await expect(rleEncode(ctx, d)).rejects.toMatchObject({ code: 'OUT_OF_MEMORY' });
      else await check('with a 1 GiB scratch buffer');
      restore();
      // uploads through the staging ring (1.2 MB) and through writeBuffer (4 KB)
      restore = remakeBuffers(device, 'parle:upload-u32', gib);
      for (const n of [300_001, 1000]) {
        const upload = ctx.upload(new Uint32Array(n).fill(7));
        if (swiftShader) await expect(upload).rejects.toMatchObject({ code: 'OUT_OF_MEMORY', message: expect.stringMatching(/upload/) });
        else assertSameBits(await ctx.download(await upload), new Uint32Array(n).fill(7), `upload of ${n} into 1 GiB`);
      }
      restore();
      await check('after');
      // a download of a buffer that was never made fails, and leaves the caller's array alone
      device.pushErrorScope('validation');
      const invalid = device.createBuffer({
        size: ctx.limits.maxBufferSize + 256,
        usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC,
      });
      expect(await device.popErrorScope()).not.toBeNull();
      const into = new Uint32Array(300_001).fill(0xdead);
      await expect(ctx.download(ctx.wrap(invalid, 'u32', into.length), { into })).rejects.toMatchObject({ code: 'GPU_ERROR' });
      expect(into.every((x) => x === 0xdead)).toBe(true);
      await expect(ctx.downloadMapped(ctx.wrap(invalid, 'u32', 4))).rejects.toMatchObject({ code: 'GPU_ERROR' });
      await check('after the downloads');
    } finally {
      restore();
      ctx.destroy();
    }
  });

  gpuIt('destroy: later ops fail with DESTROYED', async () => {
    const ctx = (await createGpuContext())!;
    const d = await ctx.upload(new Uint32Array(4));
    ctx.destroy();
    ctx.destroy();
    await expect(scan(ctx, d, { inclusive: true })).rejects.toMatchObject({ code: 'DESTROYED' });
  });
});
