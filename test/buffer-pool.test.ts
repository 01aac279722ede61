/**
 * BufferPool (ts/gpu/buffer-pool.ts) against a stand-in device whose buffers count how often
 * their native getters are read: reuse by size class and usage, eviction of the oldest, trim,
 * and acquisitions that never ask the kept buffers for their size or usage.
 */
import { describe, expect, it } from 'vitest';
import { BufferPool, sizeClass } from '../ts/gpu/buffer-pool.js';

const STORAGE = 0x80;
const COPY_SRC = 0x04;

/** A stand-in GPUBuffer: size and usage behind getters that count their reads. */
class FakeBuffer {
  static reads = 0;
  destroyed = false;
  label: string;
  readonly #size: number;
  readonly #usage: number;
  constructor(size: number, usage: number, label: string) {
    this.#size = size;
    this.#usage = usage;
    this.label = label;
  }
  get size(): number {
    FakeBuffer.reads++;
    return this.#size;
  }
  get usage(): number {
    FakeBuffer.reads++;
    return this.#usage;
  }
  get mapState(): string {
    return 'unmapped';
  }
  destroy(): void {
    this.destroyed = true;
  }
}

/**
 * A stand-in device; buffers of `failSize` bytes fail to allocate (their out-of-memory scope
 * resolves to an error, as WebGPU reports it).
 */
function fakeDevice(failSize = -1): { device: GPUDevice; created: FakeBuffer[] } {
  const created: FakeBuffer[] = [];
  let error: { message: string } | null = null;
  const device = {
    createBuffer: ({ size, usage, label }: { size: number; usage: number; label: string }) => {
      const b = new FakeBuffer(size, usage, label);
      created.push(b);
      if (size === failSize) error = { message: 'out of memory' };
      return b;
    },
    pushErrorScope: () => {
      error = null;
    },
    popErrorScope: () => Promise.resolve(error),
  } as unknown as GPUDevice;
  return { device, created };
}

const take = (pool: BufferPool, bytes: number, usage = STORAGE) => pool.acquire(bytes, usage, 'test', 2 ** 40) as unknown as FakeBuffer;

describe('BufferPool', () => {
  it('hands a released buffer out again for a request of its size class and usage only', () => {
    const { device, created } = fakeDevice();
    const pool = new BufferPool(device, 1 << 30, 0);
    const a = take(pool, 1000);
    pool.release(a as unknown as GPUBuffer);
    expect(take(pool, 900, COPY_SRC)).not.toBe(a); // another usage: a new buffer
    expect(take(pool, 5000)).not.toBe(a); // another size class
    expect(take(pool, 1024)).toBe(a); // 1000 and 1024 share the class
    expect(a.label).toBe('test');
    expect(created).toHaveLength(3);
    expect(pool.stats).toEqual({ created: 3, reused: 1, failed: 0 });
    expect(sizeClass(1000)).toBe(1024);
  });

  it('evicts the oldest kept buffers past its limit, and trim destroys the rest', () => {
    const { device } = fakeDevice();
    const pool = new BufferPool(device, 3 << 20, 0);
    const bufs = [take(pool, 1 << 20), take(pool, 1 << 20), take(pool, 1 << 20), take(pool, 2 << 20)];
    for (const b of bufs) pool.release(b as unknown as GPUBuffer);
    // 5 MiB released into 3 MiB: the two oldest go
    expect(bufs.map((b) => b.destroyed)).toEqual([true, true, false, false]);
    expect(pool.keptBytes).toBe(3 << 20);
    expect(take(pool, 1 << 20)).toBe(bufs[2]);
    expect(take(pool, 1 << 20)).not.toBe(bufs[0]); // destroyed ones are not handed out
    pool.trim();
    expect(bufs[3].destroyed).toBe(true);
    expect(pool.keptBytes).toBe(0);
  });

  it('finds a kept buffer without reading the native size or usage of any kept one', () => {
    const { device } = fakeDevice();
    const pool = new BufferPool(device, 2 ** 40, 0);
    // 300 kept buffers of other classes, then the one asked for
    for (let i = 0; i < 300; i++) pool.release(take(pool, 4096 * (i + 2)) as unknown as GPUBuffer);
    const wanted = take(pool, 1000);
    pool.release(wanted as unknown as GPUBuffer);
    FakeBuffer.reads = 0;
    for (let i = 0; i < 50; i++) {
      const b = take(pool, 1000);
      expect(b).toBe(wanted);
      pool.release(b as unknown as GPUBuffer);
    }
    // release reads the released buffer's size and usage once each; acquire reads nothing
    expect(FakeBuffer.reads).toBe(2 * 50);
  });

  it('never keeps a buffer whose allocation failed, trims what it keeps, and reports the failure once', async () => {
    const { device } = fakeDevice(4 << 20);
    const pool = new BufferPool(device, 1 << 30, 0);
    const kept = take(pool, 1 << 20);
    pool.release(kept as unknown as GPUBuffer);
    expect(await pool.takeFailure()).toBeNull();
    const failed = take(pool, 4 << 20);
    expect(await pool.takeFailure()).toEqual({ outOfMemory: true, message: 'test, 4194304 bytes: out of memory' });
    expect(await pool.takeFailure()).toBeNull(); // taken once
    expect(kept.destroyed).toBe(true); // trimmed on the failure
    pool.release(failed as unknown as GPUBuffer);
    expect(failed.destroyed).toBe(true);
    expect(take(pool, 4 << 20)).not.toBe(failed);
    expect(pool.stats.failed).toBe(1);
  });
});
