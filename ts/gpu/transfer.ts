/// <reference types="@webgpu/types" />
/**
 * Host <-> device transfers through rings of reusable staging buffers.
 *
 * Why not `queue.writeBuffer` for large data: Dawn allocates and clears a fresh staging buffer
 * for every write over 4 MiB (3 GB/s for 256 MiB on an H200). Here a ring of `MAP_WRITE |
 * COPY_SRC` buffers is filled while mapped; each chunk's `copyBufferToBuffer` is submitted at
 * once and the buffer re-mapped (`mapAsync` resolves when that copy is done), so filling chunk
 * i+1 overlaps the copy of chunk i. Readback likewise: up to `slots` chunks are copied into
 * `MAP_READ | COPY_DST` buffers and mapped ahead of the one being copied out.
 *
 * One transfer at a time per ring (a promise chain serialises them): the ring's buffers are
 * shared. Memory: 2 rings x `slots` x `chunkBytes` (default 4 x 8 MiB each: 64 MiB).
 *
 * Large uploads (GpuContext.upload, 32 MiB or more) go through {@link UploadPieces} instead:
 * whole-size staging pieces kept mapped between uploads.
 */
import { roundUp } from './device-array.js';

/** Wraps a GPU promise so that device loss turns into ParleError DEVICE_LOST. */
export type Guard = <T>(p: Promise<T>) => Promise<T>;

/**
 * The context's GPU error checks (ts/gpu/gpu-errors.ts): `mark()` before a transfer's WebGPU
 * calls, `check(mark, what)` once they are done (throws OUT_OF_MEMORY or GPU_ERROR if the GPU
 * reported an error since; `what` names the transfer).
 */
export interface ErrorChecks {
  mark(): number;
  check(mark: number, what: string): Promise<void>;
}

/**
 * Bytes to upload that need not lie in one array: `byteLength` of them; `copyTo(view, from)`
 * writes bytes [from, from + view.length) into `view` (any it does not have are left as they
 * are). An array's bytes ({@link bytesSource}), or arrays side by side ({@link partsSource}).
 */
export interface ByteSource {
  readonly byteLength: number;
  copyTo(view: Uint8Array, from: number): void;
}

/** The bytes of one array as a {@link ByteSource}. */
export function bytesSource(bytes: Uint8Array): ByteSource {
  return {
    byteLength: bytes.byteLength,
    copyTo: (view, from) => view.set(bytes.subarray(from, from + view.length)),
  };
}

/**
 * Arrays side by side as one {@link ByteSource} of `byteLength` bytes: `parts[i]` from byte
 * `offsets[i]` (ascending, not overlapping); bytes between them are left as the view had them.
 */
export function partsSource(parts: readonly Uint8Array[], offsets: readonly number[], byteLength: number): ByteSource {
  return {
    byteLength,
    copyTo: (view, from) => {
      const to = from + view.length;
      for (let i = 0; i < parts.length; i++) {
        const at = offsets[i];
        if (at >= to) break;
        const end = at + parts[i].byteLength;
        if (end <= from) continue;
        const lo = Math.max(at, from);
        view.set(parts[i].subarray(lo - at, Math.min(end, to) - at), lo - from);
      }
    },
  };
}

/**
 * Fills the mapped MAP_WRITE `staging` buffer with bytes [from, from + size) of `source` (`size`
 * a multiple of 4; bytes the source does not have are unspecified), unmaps it, submits its copy
 * into `dst` at `dstOffset`, and maps it again. Resolves when `staging` is writable again (after
 * the copy); a rejection (device loss) is left to the caller that awaits it.
 */
export function fillAndSubmit(
  device: GPUDevice,
  staging: GPUBuffer,
  source: ByteSource,
  from: number,
  size: number,
  dst: GPUBuffer,
  dstOffset: number,
): Promise<void> {
  source.copyTo(new Uint8Array(staging.getMappedRange(0, size)), from);
  staging.unmap();
  const encoder = device.createCommandEncoder({ label: 'parle:upload' });
  encoder.copyBufferToBuffer(staging, 0, dst, dstOffset, size);
  device.queue.submit([encoder.finish()]);
  const ready = staging.mapAsync(GPUMapMode.WRITE);
  ready.catch(() => undefined); // observed by whoever awaits it next
  return ready;
}

/** Transfers below this many bytes use queue.writeBuffer (fast for small data, no ring round trip). */
export const SMALL_UPLOAD_BYTES = 1 << 20;

interface UploadSlot {
  buffer: GPUBuffer;
  /** Resolves when the buffer is mapped for writing again. */
  ready: Promise<void>;
}

/** Rings of staging buffers for one device. */
export class StagingRing {
  readonly chunkBytes: number;
  readonly slots: number;
  #device: GPUDevice;
  #guard: Guard;
  #errors: ErrorChecks;
  #up: UploadSlot[] = [];
  #down: GPUBuffer[] = [];
  #chain: Promise<unknown> = Promise.resolve();
  /** Milliseconds spent waiting for staging buffers to map (uploads, downloads), for benchmarks. */
  readonly waitMs = { upload: 0, download: 0 };

  constructor(device: GPUDevice, guard: Guard, errors: ErrorChecks, chunkBytes = 8 << 20, slots = 4) {
    this.#device = device;
    this.#guard = guard;
    this.#errors = errors;
    this.chunkBytes = chunkBytes;
    this.slots = slots;
  }

  #serial<T>(task: () => Promise<T>): Promise<T> {
    const run = this.#chain.then(task, task);
    this.#chain = run.catch(() => undefined);
    return run;
  }

  /**
   * Copies `bytes` into `dst` at byte `dstOffset` (a multiple of 4). Resolves once every copy is
   * submitted: later submits on the queue see the data. `dst` needs COPY_DST and room for
   * `bytes.byteLength` rounded up to 4 (the pad bytes are unspecified).
   * @throws what the error checks throw for errors the copies raised (OUT_OF_MEMORY, GPU_ERROR)
   */
  upload(dst: GPUBuffer, dstOffset: number, bytes: Uint8Array): Promise<void> {
    return this.#serial(async () => {
      const device = this.#device;
      const mark = this.#errors.mark();
      if (bytes.byteLength < SMALL_UPLOAD_BYTES) {
        const whole = bytes.byteLength & ~3;
        // a view of a SharedArrayBuffer (wasm shared memory) is copied first
        const src = (bytes.buffer instanceof ArrayBuffer ? bytes : bytes.slice()) as Uint8Array<ArrayBuffer>;
        if (whole > 0) device.queue.writeBuffer(dst, dstOffset, src, 0, whole);
        if (whole < bytes.byteLength) {
          const tail = new Uint8Array(4);
          tail.set(bytes.subarray(whole));
          device.queue.writeBuffer(dst, dstOffset + whole, tail);
        }
        return this.#errors.check(mark, 'upload');
      }
      const source = bytesSource(bytes);
      while (this.#up.length < this.slots) {
        const buffer = device.createBuffer({
          label: 'parle:staging-up',
          size: this.chunkBytes,
          usage: GPUBufferUsage.MAP_WRITE | GPUBufferUsage.COPY_SRC,
          mappedAtCreation: true,
        });
        this.#up.push({ buffer, ready: Promise.resolve() });
      }
      let chunk = 0;
      for (let offset = 0; offset < bytes.byteLength; offset += this.chunkBytes, chunk++) {
        const size = Math.min(this.chunkBytes, bytes.byteLength - offset);
        const copySize = roundUp(size, 4);
        const slot = this.#up[chunk % this.slots];
        const t0 = performance.now();
        await this.#guard(slot.ready);
        this.waitMs.upload += performance.now() - t0;
        slot.ready = fillAndSubmit(device, slot.buffer, source, offset, copySize, dst, dstOffset + offset);
      }
      await this.#errors.check(mark, 'upload');
    });
  }

  /**
   * Reads `byteLength` bytes of `src` from byte `srcOffset` (a multiple of 4). Resolves to a
   * Uint8Array of exactly `byteLength` over an ArrayBuffer of `byteLength` rounded up to 4, or to
   * `into` (at least `byteLength` bytes) when given: writing into memory that is already paged in
   * avoids the page faults of a fresh allocation (150 ms per 256 MiB on the H200 host).
   * `src` needs COPY_SRC and room for the rounded length. Work submitted earlier is seen.
   * @throws what the error checks throw for errors the copies raised (a `src` that was never
   *   allocated: checked before `into` is written)
   */
  download(src: GPUBuffer, srcOffset: number, byteLength: number, into?: Uint8Array): Promise<Uint8Array> {
    return this.#serial(async () => {
      const device = this.#device;
      const out = into ?? new Uint8Array(new ArrayBuffer(roundUp(byteLength, 4)), 0, byteLength);
      if (byteLength === 0) return out;
      const chunkBytes = this.chunkBytes;
      const count = Math.ceil(byteLength / chunkBytes);
      const slots = Math.min(this.slots, count);
      while (this.#down.length < slots) {
        this.#down.push(
          device.createBuffer({
            label: 'parle:staging-down',
            size: chunkBytes,
            usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST,
          }),
        );
      }
      const pending: Promise<void>[] = [];
      const mark = this.#errors.mark();
      const issue = (chunk: number): void => {
        const offset = chunk * chunkBytes;
        const copySize = roundUp(Math.min(chunkBytes, byteLength - offset), 4);
        const buffer = this.#down[chunk % slots];
        const encoder = device.createCommandEncoder({ label: 'parle:download' });
        encoder.copyBufferToBuffer(src, srcOffset + offset, buffer, 0, copySize);
        device.queue.submit([encoder.finish()]);
        const mapped = buffer.mapAsync(GPUMapMode.READ, 0, copySize);
        mapped.catch(() => undefined);
        pending[chunk] = mapped;
      };
      for (let chunk = 0; chunk < slots; chunk++) issue(chunk);
      for (let chunk = 0; chunk < count; chunk++) {
        const t0 = performance.now();
        await this.#guard(pending[chunk]);
        this.waitMs.download += performance.now() - t0;
        const offset = chunk * chunkBytes;
        const size = Math.min(chunkBytes, byteLength - offset);
        const copySize = roundUp(size, 4);
        const buffer = this.#down[chunk % slots];
        // a copy that failed validation did not run: its staging buffer holds an earlier chunk
        // (checked before `into`, a caller's array, is written); the ring's buffers, some still
        // mapped, are made anew by the next download
        await this.#errors.check(mark, 'download').catch((e: unknown) => {
          for (const b of this.#down) b.destroy();
          this.#down = [];
          throw e;
        });
        out.set(new Uint8Array(buffer.getMappedRange(0, copySize), 0, size), offset);
        buffer.unmap();
        if (chunk + slots < count) issue(chunk + slots);
      }
      return out;
    });
  }

  /** Destroys the staging buffers (they are made again on the next transfer). */
  release(): Promise<void> {
    return this.#serial(async () => {
      for (const slot of this.#up) slot.buffer.destroy();
      for (const buffer of this.#down) buffer.destroy();
      this.#up = [];
      this.#down = [];
    });
  }
}

/** A MAP_WRITE staging buffer of a large upload and the promise of its next mapping. */
interface UploadPiece {
  buffer: GPUBuffer;
  ready: Promise<void>;
}

/**
 * Large uploads: staging buffers of `tuning.uploadPieceBytes` (pieces), kept mapped between
 * uploads. Each piece is filled in one memcpy, unmapped, its copy submitted, and mapped again
 * in the background (ready for the next upload), so the GPU copy of piece i overlaps the fill
 * of piece i+1 and no upload waits for a map. On the H200 host a memcpy into mapped memory ran
 * at 10-12 GB/s, as fast as one between two JavaScript arrays (bench/results/nvidia-h200/gpu-layer.json);
 * the pieces are kept for the next upload (as many as the largest upload needed; releaseStaging()
 * frees them).
 */
export class UploadPieces {
  #device: GPUDevice;
  #guard: Guard;
  #errors: ErrorChecks;
  /** True once the context's device is lost or the context destroyed (pieces are then not kept). */
  #isLost: () => boolean;
  /** Staging pieces of large uploads, kept for reuse. */
  #kept: UploadPiece[] = [];

  constructor(device: GPUDevice, guard: Guard, errors: ErrorChecks, isLost: () => boolean) {
    this.#device = device;
    this.#guard = guard;
    this.#errors = errors;
    this.#isLost = isLost;
  }

  /**
   * Copies the bytes of `source` into `dst` from its start through pieces of `piece` bytes (a
   * multiple of 4 MiB: the context's `tuning.uploadPieceBytes`), each filled straight from the
   * source. Resolves once every copy is submitted.
   * @throws what the error checks throw for errors the copies raised (OUT_OF_MEMORY, GPU_ERROR)
   */
  async upload(dst: GPUBuffer, source: ByteSource, piece: number): Promise<void> {
    const total = Math.ceil(source.byteLength / 4) * 4;
    const kept = this.#kept;
    this.#kept = []; // a concurrent upload makes its own
    const used: UploadPiece[] = [];
    const mark = this.#errors.mark();
    try {
      for (let offset = 0; offset < total; offset += piece) {
        const size = Math.min(piece, total - offset);
        // a kept piece large enough, else a new one (of at most `piece`, in steps of 4 MiB)
        const k = kept.findIndex((q) => q.buffer.size >= size);
        const p =
          k >= 0
            ? kept.splice(k, 1)[0]
            : {
                buffer: this.#device.createBuffer({
                  label: 'parle:staging-piece',
                  size: Math.min(piece, Math.ceil(size / (4 << 20)) * (4 << 20)),
                  usage: GPUBufferUsage.MAP_WRITE | GPUBufferUsage.COPY_SRC,
                  mappedAtCreation: true,
                }),
                ready: Promise.resolve(),
              };
        used.push(p);
        await this.#guard(p.ready);
        p.ready = fillAndSubmit(this.#device, p.buffer, source, offset, size, dst, offset);
      }
      await this.#errors.check(mark, 'upload');
    } catch (e) {
      for (const p of [...used, ...kept]) p.buffer.destroy();
      throw e;
    }
    if (this.#kept.length === 0 && !this.#isLost()) this.#kept = [...used, ...kept];
    else for (const p of [...used, ...kept]) p.buffer.destroy();
  }

  /** Destroys the kept pieces (made again by the next large upload). */
  release(): void {
    for (const p of this.#kept) p.buffer.destroy();
    this.#kept = [];
  }
}
