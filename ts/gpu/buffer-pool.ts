/// <reference types="@webgpu/types" />
/**
 * A caching allocator for storage buffers: buffers that ops release (their temporaries, and
 * the outputs an application destroys) are kept and handed out again instead of being
 * destroyed, in the manner of PyTorch's CUDA caching allocator.
 *
 * Why: on an H200 through Dawn, `createBuffer` of 1 GiB took 18 ms and its first use up to
 * 40 ms more (Dawn clears a new buffer before its first use), against 1.5 ms for a scan of
 * 2^28 u32 (figures in bench/results/nvidia-h200/gpu-layer.json). A reused buffer costs neither.
 *
 * Sizes are rounded up to a size class (powers of two up to 1 MiB, then steps of an eighth of
 * the power of two below: at most 12.5 % slack), so that sizes that differ a little share
 * buffers. Contents of a buffer handed out are unspecified (never rely on zeros: clear).
 * At most `limitBytes` are kept; the oldest go first. `trim()` destroys what is kept; an idle
 * timer calls it `idleMs` after the last release.
 *
 * The kept buffers are found by size class and usage in a Map, with their size and usage held
 * in JavaScript: `GPUBuffer.size` and `.usage` are native getters (Dawn through N-API), which a
 * scan of the kept list asked of every kept buffer at every acquisition (a compress from the
 * device makes some 40). On the H200 host this made no measurable difference with ~100 kept
 * buffers; it keeps an acquisition's cost independent of how many are kept.
 *
 * A size class hands out the oldest of its kept buffers first (the first made), not the last
 * released: a call's acquisitions then get the same buffers as the same call made before, whatever
 * order the buffers came back in, and its dispatches find their bind groups kept
 * (ts/gpu/bind-groups.ts; a compress from the device had reused 7 of its 34, the last released
 * first).
 *
 * A buffer the device could not make (out of memory, or a validation error: WebGPU reports them
 * through error scopes, not by throwing) is never kept: release() destroys it, and the pool
 * trims what it keeps so that the next allocation may succeed. takeFailure() tells the
 * context's error check that such a failure happened (ts/gpu/gpu-errors.ts).
 */
import { paddedSize } from './device-array.js';
import { createBufferChecked, type CaughtGpuError } from './gpu-errors.js';

/** The size class of a request of `bytes` (>= 16): what the pool allocates for it. */
export function sizeClass(bytes: number): number {
  const padded = paddedSize(bytes);
  if (padded <= 1 << 20) return Math.max(256, 2 ** Math.ceil(Math.log2(padded)));
  const step = 2 ** (Math.floor(Math.log2(padded)) - 3);
  return Math.ceil(padded / step) * step;
}

/**
 * Puts `item` into `list`, kept youngest first (by `age`, larger is younger), so that `pop()`
 * takes the oldest: the order in which the pools hand out what they keep.
 */
export function keepByAge<T>(list: T[], item: T, age: (t: T) => number): void {
  const a = age(item);
  let at = list.length;
  while (at > 0 && age(list[at - 1]) < a) at--;
  list.splice(at, 0, item);
}

/** A kept buffer with its size and usage as numbers (read once from the native object). */
interface Kept {
  buffer: GPUBuffer;
  size: number;
  key: string;
  /** When the pool made it (its order among the pool's buffers; released buffers it did not make come after). */
  age: number;
}

export class BufferPool {
  /** Bytes kept at most. */
  readonly limitBytes: number;
  readonly #device: GPUDevice;
  readonly #idleMs: number;
  /** Kept buffers, oldest first. */
  #free: Kept[] = [];
  /** The same buffers by `${size} ${usage}`, most recently released last. */
  #byClass = new Map<string, Kept[]>();
  #freeBytes = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #closed = false;
  /** Counters, for tests and benchmarks. */
  readonly stats = { created: 0, reused: 0, failed: 0 };
  /** When each buffer was made, in buffers made before it (Kept.age). */
  readonly #ages = new WeakMap<GPUBuffer, number>();
  #made = 0;
  /** Buffers whose creation failed. */
  readonly #failed = new WeakSet<GPUBuffer>();
  /** Creation checks not settled yet. */
  readonly #checks = new Set<Promise<unknown>>();
  /** The last failed creation not yet taken by takeFailure() (its message names the buffer). */
  #failure: CaughtGpuError | null = null;

  constructor(device: GPUDevice, limitBytes: number, idleMs = 5000) {
    this.#device = device;
    this.limitBytes = limitBytes;
    this.#idleMs = idleMs;
  }

  /** Bytes kept now. */
  get keptBytes(): number {
    return this.#freeBytes;
  }

  /**
   * A buffer of at least paddedSize(`bytes`) with exactly `usage`: a kept one of the request's
   * size class, else a new one of that class (of the padded size itself when the class would
   * pass `maxBytes`).
   */
  acquire(bytes: number, usage: number, label: string, maxBytes: number): GPUBuffer {
    let size = sizeClass(bytes);
    if (size > maxBytes) size = paddedSize(bytes);
    const kept = this.#byClass.get(`${size} ${usage}`)?.pop();
    if (kept !== undefined) {
      this.#free.splice(this.#free.indexOf(kept), 1);
      this.#freeBytes -= kept.size;
      kept.buffer.label = label;
      this.stats.reused++;
      return kept.buffer;
    }
    this.stats.created++;
    const [buffer, caught] = createBufferChecked(this.#device, { label, size, usage });
    this.#ages.set(buffer, this.#made++);
    const check = caught.then((error) => {
      this.#checks.delete(check);
      if (error === null) return;
      this.stats.failed++;
      this.#failed.add(buffer);
      this.#failure = { outOfMemory: error.outOfMemory, message: `${label}, ${size} bytes: ${error.message}` };
      this.trim(); // what is kept may be what the device is short of
    });
    this.#checks.add(check);
    return buffer;
  }

  /** True while a creation check is pending or a failure is not taken: takeFailure() has something to wait for. */
  get unsettled(): boolean {
    return this.#checks.size > 0 || this.#failure !== null;
  }

  /**
   * Waits for the creation checks made so far and returns the last failure not taken before (its
   * message "label, bytes: WebGPU's message"), or null; the next call returns only later ones.
   */
  async takeFailure(): Promise<CaughtGpuError | null> {
    await Promise.all([...this.#checks]);
    const failure = this.#failure;
    this.#failure = null;
    return failure;
  }

  /** Takes `buffer` back (no pending use may write it after later ops read it: queue order holds). */
  release(buffer: GPUBuffer): void {
    const size = buffer.size;
    if (this.#closed || size > this.limitBytes || buffer.mapState !== 'unmapped' || this.#failed.has(buffer)) {
      buffer.destroy();
      return;
    }
    let age = this.#ages.get(buffer);
    if (age === undefined) this.#ages.set(buffer, (age = this.#made++));
    const kept: Kept = { buffer, size, key: `${size} ${buffer.usage}`, age };
    this.#free.push(kept);
    let same = this.#byClass.get(kept.key);
    if (same === undefined) this.#byClass.set(kept.key, (same = []));
    keepByAge(same, kept, (k) => k.age);
    this.#freeBytes += size;
    while (this.#freeBytes > this.limitBytes) {
      const old = this.#free.shift()!;
      const list = this.#byClass.get(old.key)!;
      list.splice(list.indexOf(old), 1);
      this.#freeBytes -= old.size;
      old.buffer.destroy();
    }
    if (this.#idleMs > 0) {
      if (this.#timer !== undefined) clearTimeout(this.#timer);
      this.#timer = setTimeout(() => this.trim(), this.#idleMs);
      (this.#timer as { unref?: () => void }).unref?.();
    }
  }

  /** Destroys every kept buffer. */
  trim(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    for (const k of this.#free) k.buffer.destroy();
    this.#free = [];
    this.#byClass.clear();
    this.#freeBytes = 0;
  }

  /** Trims, and destroys every buffer released from now on (device lost or destroyed). */
  close(): void {
    this.#closed = true;
    this.trim();
  }
}
