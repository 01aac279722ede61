/// <reference types="@webgpu/types" />
/**
 * DeviceArray: an array of one element type that lives in a GPUBuffer.
 */
import { ErrorCodes, ParleError } from '../errors.js';
import { elementSize, type ElementType } from '../types.js';

/** Rounds `n` up to a multiple of `m` (a power of two). */
export function roundUp(n: number, m: number): number {
  return Math.ceil(n / m) * m;
}

/**
 * Bytes a parle buffer of `byteLength` occupies: rounded up to 16 (kernels read and write whole
 * vec4<u32>; u8 and u16 elements are packed four or two to a u32 word), at least 16.
 */
export function paddedSize(byteLength: number): number {
  return Math.max(16, roundUp(byteLength, 16));
}

/**
 * `length` elements of `type` in `buffer`, from byte 0. u8 and u16 elements are packed little
 * endian in u32 words, as in host memory, so a buffer's bytes equal the typed array's bytes.
 *
 * Buffers that parle creates are padded to a multiple of 16 bytes (`paddedSize` in ts/gpu/device-array.ts) and may
 * be larger than needed (an RLE encode allocates for the worst case, one run per element); the
 * contents past `byteLength` are unspecified. A DeviceArray from `GpuContext.wrap` may be
 * unpadded; ops copy such an input to a padded scratch buffer first.
 *
 * Ownership: `owned` arrays (made by parle) give their buffer up in {@link destroy}: back to the
 * context's buffer pool for reuse by later ops (see buffer-pool.ts), or destroyed; wrapped ones
 * leave the caller's buffer alone.
 */
export class DeviceArray {
  /** Element type. */
  readonly type: ElementType;
  /** Length in elements. */
  readonly length: number;
  /** The buffer; elements start at byte 0. */
  readonly buffer: GPUBuffer;
  /** True when parle created the buffer and {@link destroy} destroys it. */
  readonly owned: boolean;
  #destroyed = false;
  readonly #release: ((buffer: GPUBuffer) => void) | undefined;

  /**
   * @internal DeviceArrays come from the engine (`upload`, `wrap`, results of ops on the GPU).
   * `release`, for owned arrays: what destroy() does with the buffer (default: destroy it).
   */
  constructor(buffer: GPUBuffer, type: ElementType, length: number, owned: boolean, release?: (buffer: GPUBuffer) => void) {
    this.buffer = buffer;
    this.type = type;
    this.length = length;
    this.owned = owned;
    this.#release = release;
  }

  /** Length in bytes: `length * elementSize(type)` (not rounded). */
  get byteLength(): number {
    return this.length * elementSize(this.type);
  }

  /** True after {@link destroy}. */
  get destroyed(): boolean {
    return this.#destroyed;
  }

  /**
   * Releases the buffer when owned (to the pool, where a later op may reuse it: keep no other
   * reference to `buffer`); the array cannot be used afterwards. Idempotent.
   */
  destroy(): void {
    if (this.#destroyed) return;
    this.#destroyed = true;
    if (!this.owned) return;
    if (this.#release !== undefined) this.#release(this.buffer);
    else this.buffer.destroy();
  }

  /** @internal @throws ParleError INVALID_ARGUMENT when destroyed. */
  assertLive(name: string): void {
    if (this.#destroyed) throw new ParleError(ErrorCodes.INVALID_ARGUMENT, `${name} was destroyed`);
  }
}
