/// <reference types="@webgpu/types" />
/**
 * GpuContext: one WebGPU adapter and device, the staging rings, and the GPU ops the engine calls.
 *
 * Opening the adapter and the device, the options and the tuning: ts/gpu/device.ts; the staging
 * buffers of uploads and downloads: ts/gpu/transfer.ts.
 */
import { ErrorCodes, ParleError } from '../errors.js';
import { arrayConstructor, bytesOf, checkArray, ELEMENT_TYPES, elementSize, type ElementType, type ParleArray } from '../types.js';
import { DeviceArray, paddedSize } from './device-array.js';
import {
  DEFAULT_TUNING,
  dawnContextEnded,
  dawnContextOpened,
  openDevice,
  type ContextSettings,
  type GpuAdapterInfo,
  type GpuContextOptions,
  type GpuTuning,
} from './device.js';
import { bytesSource, partsSource, StagingRing, UploadPieces } from './transfer.js';
import { BufferPool, keepByAge } from './buffer-pool.js';
import { GpuErrorLog } from './gpu-errors.js';
import { bindGroupLayout } from './pipelines.js';
import { BindGroupCache } from './bind-groups.js';

/** How long a rejected GPU wait waits for device.lost before it counts as a failure of its own (ms). */
const LOSS_WAIT_MS = 5000;

/** The limits parle requested (the adapter's own) and relies on. */
export interface GpuLimits {
  maxStorageBufferBindingSize: number;
  maxBufferSize: number;
  maxComputeWorkgroupStorageSize: number;
  maxComputeWorkgroupsPerDimension: number;
  maxStorageBuffersPerShaderStage: number;
  maxComputeInvocationsPerWorkgroup: number;
  maxComputeWorkgroupSizeX: number;
  /** Bytes a storage binding's offset is a multiple of (read once: Dawn's `device.limits` makes a new object a read). */
  minStorageBufferOffsetAlignment: number;
}

/** Why the device went away. */
export interface GpuLostInfo {
  reason: string;
  message: string;
}

/**
 * Optional hooks around every op's command encoder (benchmarks put timestamp passes there).
 * Called synchronously while encoding; `end` runs after the op's last pass.
 */
export interface EncoderHooks {
  begin(encoder: GPUCommandEncoder): void;
  end(encoder: GPUCommandEncoder): void;
  /** Timestamp writes for one compute pass of the op (profiling), or undefined. */
  pass?(label: string): GPUComputePassTimestampWrites | undefined;
}

/** Uploads of at least this many bytes use one whole-size staging buffer, smaller ones the ring. */
const WHOLE_UPLOAD_BYTES = 32 << 20;

/**
 * Opens an adapter and a device with the adapter's own limits (storage binding and buffer size,
 * workgroup storage) and its `subgroups` and `timestamp-query` features when present.
 * Resolves to null when there is no WebGPU or no adapter (the engine then stays on the CPU).
 * A context whose device was lost stays lost: create another one.
 * @throws ParleError INVALID_OPTION for a bad option.
 */
export async function createGpuContext(opts: GpuContextOptions = {}): Promise<GpuContext | null> {
  const opened = await openDevice(opts);
  return opened === null ? null : new GpuContext(opened.device, opened.adapterInfo, opened.settings);
}

/** A readback of an op: its MAP_READ buffer, the bytes read, and its map once asked for. */
interface PendingRead {
  buffer: GPUBuffer;
  size: number;
  mapped?: Promise<undefined>;
}

/**
 * Buffers taken during one op: temporaries go back to the pool after it, outputs on failure;
 * uniforms go back to the context's uniform pool after it.
 */
export class Submission {
  #encoder: GPUCommandEncoder;
  /**
   * The compute pass the op's dispatches go into, open until the encoder is asked for (a copy,
   * a clear, a flush) or the op ends: one pass for a run of dispatches, not a pass each (a pass
   * cost 4-9 µs of host time on the H200's host, timed alone on 2026-11-29). WebGPU orders the
   * dispatches of a pass as it does passes: each sees what the ones before it wrote.
   */
  #pass: GPUComputePassEncoder | null = null;
  readonly temps: GPUBuffer[] = [];
  readonly outputs: GPUBuffer[] = [];
  readonly uniforms: GPUBuffer[] = [];
  /** Buffers (not from the pool) that the op keeps past the submit, destroyed if it fails. */
  readonly onFailure: GPUBuffer[] = [];
  /** The op's readbacks, mapped once it is submitted ({@link startReads}). */
  readonly #reads: PendingRead[] = [];
  readonly #ctx: GpuContext;

  constructor(ctx: GpuContext, encoder: GPUCommandEncoder) {
    this.#ctx = ctx;
    this.#encoder = encoder;
  }

  /**
   * The command encoder the op records into now (a new one after each {@link flush}); asking for
   * it ends the open compute pass, so what the caller records comes after the dispatches before.
   */
  get encoder(): GPUCommandEncoder {
    this.#endPass();
    return this.#encoder;
  }

  #endPass(): void {
    if (this.#pass === null) return;
    this.#pass.end();
    this.#pass = null;
  }

  /**
   * Submits what the op recorded so far and goes on in a new command encoder, so the GPU starts
   * on those passes while the host records the rest (the decode's hashes and stream decodes run
   * while its later stages are encoded). Temporaries, uniforms and outputs stay the op's until
   * its last submission is done, and its errors are checked after that, as one op's.
   */
  flush(): void {
    this.#endPass();
    const label = this.#encoder.label;
    this.#ctx.encoderHooks?.end(this.#encoder);
    this.#ctx.device.queue.submit([this.#encoder.finish()]);
    this.#encoder = this.#ctx.device.createCommandEncoder({ label });
    this.#ctx.encoderHooks?.begin(this.#encoder);
  }

  /**
   * A scratch storage buffer of at least `byteLength` bytes (padded; contents unspecified),
   * back to the pool after the op.
   */
  temp(byteLength: number, label: string, extraUsage = 0): GPUBuffer {
    const b = this.#ctx.acquireStorage(byteLength, label, extraUsage);
    this.temps.push(b);
    return b;
  }

  /**
   * An output storage buffer from the pool (contents unspecified; released if the op fails).
   * `large`: may exceed one storage binding (for kernels that bind it in windows).
   */
  output(byteLength: number, label: string, extraUsage = 0, large = false): GPUBuffer {
    const b = this.#ctx.acquireStorage(byteLength, label, extraUsage, large);
    this.outputs.push(b);
    return b;
  }

  /**
   * A uniform buffer holding `words` (u32), given back after the op: one of the context's kept
   * buffers of that size, filled by queue.writeBuffer (ordered before this op's submit). Made
   * anew per dispatch (mapped at creation, destroyed after the op), uniform and readback buffers
   * had cost an RLE encode of 2^24 on the H200 about 1.5 ms of its 2.2 ms of wall clock (0.7 ms
   * now); a codec op over 64 chunks records hundreds of dispatches.
   */
  uniform(words: readonly number[]): GPUBuffer {
    const size = Math.max(16, Math.ceil(words.length / 4) * 16);
    const b = this.#ctx.takeUniform(size);
    const data = new Uint32Array(size / 4);
    data.set(words);
    this.#ctx.device.queue.writeBuffer(b, 0, data);
    this.uniforms.push(b);
    return b;
  }

  /**
   * Reads `size` bytes (a multiple of 4) at the start of `src` back after what this op recorded so
   * far, into a MAP_READ buffer kept by the context for reuse (see {@link uniform} for why). The
   * returned function, called after the submit, maps it, copies the words out and gives the
   * buffer back (on a failed submit it is destroyed with the outputs).
   */
  readAfter(src: GPUBuffer, size: number): () => Promise<Uint32Array> {
    const rb = this.#ctx.takeReadback(size);
    this.onFailure.push(rb);
    this.encoder.copyBufferToBuffer(src, 0, rb, 0, size);
    const entry: PendingRead = { buffer: rb, size };
    this.#reads.push(entry);
    return async () => {
      let read = false;
      try {
        await this.#ctx.guard(entry.mapped ?? rb.mapAsync(GPUMapMode.READ, 0, size));
        const words = new Uint32Array(rb.getMappedRange(0, size).slice(0));
        rb.unmap();
        read = true;
        return words;
      } finally {
        if (read) this.#ctx.giveReadback(rb);
        else rb.destroy();
      }
    };
  }

  /**
   * @internal Maps the op's readbacks, called once its last part is submitted: the maps wait on
   * the GPU beside the op's own wait for its work, where a map asked for after that wait had been
   * one more round trip a readback round (0.05-0.1 ms each on the H200). A map that fails (the
   * op failed and its readbacks were destroyed) is reported by the read, if it is called.
   */
  startReads(): void {
    for (const r of this.#reads) {
      r.mapped ??= r.buffer.mapAsync(GPUMapMode.READ, 0, r.size);
      r.mapped.catch(() => undefined);
    }
  }

  /**
   * Dispatches `count` workgroups of `pipeline` as a 1-D or 2-D grid (x <= the per-dimension
   * limit), in the op's open compute pass; with the context's per-pass hooks (profiling), in a
   * pass of its own named `label`. The bind group of `entries` may be one made before for the
   * same buffers ({@link BindGroupCache}).
   */
  dispatch(pipeline: GPUComputePipeline, entries: GPUBindGroupEntry[], count: number, label: string): void {
    if (count === 0) return;
    const timed = this.#ctx.encoderHooks?.pass;
    const pass =
      timed !== undefined
        ? this.encoder.beginComputePass({ label, timestampWrites: timed(label) })
        : (this.#pass ??= this.#encoder.beginComputePass({ label: this.#encoder.label }));
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, this.#ctx.bindGroups.get(bindGroupLayout(pipeline), entries));
    const [x, y] = this.#ctx.grid(count);
    pass.dispatchWorkgroups(x, y);
    if (timed !== undefined) pass.end();
  }
}

/**
 * A WebGPU device and the GPU ops on it. Device in -> device out: ops take and return
 * {@link DeviceArray}s and read nothing back, except a 4-byte count where the result's length is
 * only known on the GPU (RLE encode's run count, RLE decode's total length), documented per op.
 * Ops on one context may be called concurrently; each submits its own command buffer, and the
 * queue runs them in call order. Every op resolves once its GPU work has completed.
 *
 * Errors: ParleError DEVICE_LOST (the device was lost before or while the op ran; pending ops
 * fail too), DESTROYED (after {@link destroy}), UNSUPPORTED_TYPE, LENGTH_MISMATCH,
 * INVALID_ARGUMENT, TOO_LARGE (beyond one storage binding, `limits`, for the ops that need one:
 * RLE encode's input x 4 bytes, sort's keys, RLE decode's run list; scan and RLE decode's output
 * are split into windows of one binding each, up to the largest buffer).
 */
export class GpuContext {
  /** The device; parle's kernels and buffers live here. */
  readonly device: GPUDevice;
  /** The adapter's identity. */
  readonly adapterInfo: GpuAdapterInfo;
  /** The limits requested from the adapter (its own). */
  readonly limits: GpuLimits;
  /** True when kernels use subgroup operations. */
  readonly hasSubgroups: boolean;
  /** Smallest subgroup size the adapter may use (4 when it does not say). */
  readonly subgroupMinSize: number;
  /** Largest subgroup size the adapter may use (128 when it does not say). */
  readonly subgroupMaxSize: number;
  /** True when the device has `timestamp-query`. */
  readonly hasTimestamps: boolean;
  /** Resolves when the device is lost (also after {@link destroy}); never rejects. */
  readonly lost: Promise<GpuLostInfo>;
  /** Look-back spin count of the chained kernels (see GpuContextOptions.lookbackSpin). */
  readonly lookbackSpin: number;
  /** Kernel shapes in use. */
  readonly tuning: GpuTuning;
  /** Hooks around every op's encoder, for benchmarks; null by default. */
  encoderHooks: EncoderHooks | null = null;

  #lostInfo: GpuLostInfo | null = null;
  #destroyed = false;
  #ring: StagingRing;
  /** Staging pieces of large uploads, kept for reuse (see UploadPieces in ts/gpu/transfer.ts). */
  readonly #uploadPieces: UploadPieces;
  /** Released storage buffers kept for reuse. */
  readonly #pool: BufferPool;
  /** @internal The dispatches' bind groups, kept while their buffers live (ts/gpu/bind-groups.ts). */
  readonly bindGroups: BindGroupCache;
  /** Released buffers of downloadMapped, kept for reuse (at most 2). */
  #mappedPool: GPUBuffer[] = [];

  constructor(device: GPUDevice, adapterInfo: GpuAdapterInfo, opts: ContextSettings) {
    this.device = device;
    this.adapterInfo = adapterInfo;
    const l = device.limits;
    this.limits = {
      maxStorageBufferBindingSize: Math.min(l.maxStorageBufferBindingSize, opts.maxBinding ?? Infinity),
      maxBufferSize: l.maxBufferSize,
      maxComputeWorkgroupStorageSize: l.maxComputeWorkgroupStorageSize,
      maxComputeWorkgroupsPerDimension: l.maxComputeWorkgroupsPerDimension,
      maxStorageBuffersPerShaderStage: l.maxStorageBuffersPerShaderStage,
      maxComputeInvocationsPerWorkgroup: l.maxComputeInvocationsPerWorkgroup,
      maxComputeWorkgroupSizeX: l.maxComputeWorkgroupSizeX,
      minStorageBufferOffsetAlignment: l.minStorageBufferOffsetAlignment,
    };
    this.hasSubgroups = opts.subgroups;
    this.subgroupMinSize = opts.sgMin;
    this.subgroupMaxSize = opts.sgMax;
    this.hasTimestamps = device.features.has('timestamp-query');
    this.lookbackSpin = opts.lookbackSpin;
    this.tuning = opts.tuning ?? DEFAULT_TUNING;
    if (opts.onDawn === true) dawnContextOpened();
    const poolBytes = opts.poolBytes ?? Math.min(4 * 2 ** 30, Math.max(256 * 2 ** 20, 2 * this.limits.maxStorageBufferBindingSize));
    this.#pool = new BufferPool(device, poolBytes);
    this.bindGroups = new BindGroupCache(device);
    this.lost = device.lost.then((info) => {
      this.#lostInfo = { reason: String(info.reason), message: info.message };
      this.#pool.close();
      if (opts.onDawn === true) dawnContextEnded(); // the last one lets Node exit
      return this.#lostInfo;
    });
    this.#errors = new GpuErrorLog(device);
    this.#ring = new StagingRing(device, this.guard, { mark: () => this.errorMark, check: this.checkErrors }, opts.chunk, opts.slots);
    this.#uploadPieces = new UploadPieces(device, this.guard, { mark: () => this.errorMark, check: this.checkErrors }, () => this.isLost);
  }

  /** True once the device is lost or the context destroyed. */
  get isLost(): boolean {
    return this.#lostInfo !== null || this.#destroyed;
  }

  /** @internal Throws DESTROYED / DEVICE_LOST when the context cannot run ops. */
  checkUsable(): void {
    if (this.#destroyed) throw new ParleError(ErrorCodes.DESTROYED, 'the GPU context was destroyed');
    if (this.#lostInfo !== null) {
      throw new ParleError(ErrorCodes.DEVICE_LOST, `the GPU device was lost (${this.#lostInfo.reason}): ${this.#lostInfo.message}`);
    }
  }

  #lossError(cause?: unknown): ParleError {
    if (this.#destroyed) return new ParleError(ErrorCodes.DESTROYED, 'the GPU context was destroyed', { cause });
    const why = this.#lostInfo === null ? '' : ` (${this.#lostInfo.reason}): ${this.#lostInfo.message}`;
    return new ParleError(ErrorCodes.DEVICE_LOST, `the GPU device was lost${why}`, { cause });
  }

  /** The device's uncaptured errors (ts/gpu/gpu-errors.ts). */
  #errors: GpuErrorLog;

  /** @internal A mark for {@link checkErrors}: the errors logged so far. */
  get errorMark(): number {
    return this.#errors.count;
  }

  /**
   * @internal Throws if the GPU reported an error since `mark` (taken before the op's WebGPU
   * calls; ts/gpu/gpu-errors.ts): ParleError OUT_OF_MEMORY when an allocation failed (logged, or
   * one of the pool's buffers, whose failure fails every command that uses it), else GPU_ERROR;
   * DEVICE_LOST when the device was lost. Resolves at once when nothing was logged and the pool
   * has no check pending (the common case: no await of the device). `what` names the op. A pool
   * failure goes to the first op that checks after it (inside an application's error scope the
   * log sees nothing, and the failure is the only sign): an op that completes beside the one whose
   * buffer could not be made may fail with OUT_OF_MEMORY too.
   */
  readonly checkErrors = async (mark: number, what: string): Promise<void> => {
    if (this.#errors.count === mark && !this.#pool.unsettled) return;
    const pool = await this.#pool.takeFailure();
    const logged = this.#errors.since(mark);
    const failure = logged.find((e) => e.outOfMemory) ?? pool ?? logged[0];
    if (failure === undefined || failure === null) return;
    if (this.isLost) throw this.#lossError();
    if (failure.outOfMemory) {
      this.#pool.trim(); // what the pool keeps may be what the device is short of
      throw new ParleError(
        ErrorCodes.OUT_OF_MEMORY,
        `${what}: the GPU is out of memory (${failure.message}); destroy DeviceArrays no longer needed or use the CPU path`,
      );
    }
    throw new ParleError(ErrorCodes.GPU_ERROR, `${what}: WebGPU rejected parle's commands (${failure.message})`);
  };

  /** @internal Awaits `p`; device loss (before or during) rejects with ParleError DEVICE_LOST. */
  readonly guard = async <T>(p: Promise<T>): Promise<T> => {
    // observed before checkUsable may throw: a mapAsync of a lost device rejects later
    p.catch(() => undefined);
    this.checkUsable();
    const lostFirst = this.lost.then(() => {
      throw this.#lossError();
    });
    lostFirst.catch(() => undefined);
    try {
      return await Promise.race([p, lostFirst]);
    } catch (e) {
      if (e instanceof ParleError) throw e;
      if (this.isLost) throw this.#lossError(e);
      // mapAsync and onSubmittedWorkDone reject (OperationError, AbortError) when the device is
      // lost, in an order against device.lost that Dawn does not fix (on SwiftShader seconds
      // apart): such a rejection waits for the loss, bounded; a TypeError or RangeError is a bug
      // in the call and is thrown at once
      if (!(e instanceof TypeError) && !(e instanceof RangeError)) {
        let timer: ReturnType<typeof setTimeout> | undefined;
        await Promise.race([this.lost, new Promise((r) => (timer = setTimeout(r, LOSS_WAIT_MS)))]);
        clearTimeout(timer);
      }
      if (this.isLost) throw this.#lossError(e);
      throw e;
    }
  };

  /**
   * @internal [x, y] workgroups covering `count` with the fewest extra (x <= the per-dimension
   * limit; kernels linearise wid.y * nwg.x + wid.x and skip ids >= count).
   */
  grid(count: number): [number, number] {
    const maxX = this.limits.maxComputeWorkgroupsPerDimension;
    const y = Math.ceil(count / maxX);
    if (y > maxX) throw new ParleError(ErrorCodes.TOO_LARGE, `${count} workgroups exceed a 2-D dispatch`);
    return [Math.ceil(count / y), y];
  }

  /**
   * @internal A storage buffer of at least paddedSize(byteLength) bytes from the pool (contents
   * unspecified); give it back with releaseStorage(). @throws TOO_LARGE beyond one binding.
   */
  acquireStorage(byteLength: number, label: string, extraUsage = 0, large = false): GPUBuffer {
    const binding = Math.min(this.limits.maxStorageBufferBindingSize, this.limits.maxBufferSize);
    // only a buffer that cannot fit one binding may pass it (its size class too: others are bound whole)
    const max = large && paddedSize(byteLength) > binding ? this.limits.maxBufferSize : binding;
    this.checkBindable(paddedSize(byteLength), label, large);
    const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST | extraUsage;
    return this.#pool.acquire(byteLength, usage, `parle:${label}`, max);
  }

  /** @internal Gives a buffer of acquireStorage() back to the pool. */
  releaseStorage = (buffer: GPUBuffer): void => {
    if (this.isLost) buffer.destroy();
    else this.#pool.release(buffer);
  };

  /** Sums of run lengths known on the host, by lengths array (see {@link noteLengthSum}). */
  readonly #lengthSums = new WeakMap<DeviceArray, number>();

  /**
   * @internal Notes that the elements of `lengths` (u32 run lengths) sum to `total`, as rleEncode
   * knows of its result (its input's length): rleDecode of those runs then sizes its output
   * without reading the sum back. A hint only: rleDecode checks it on the GPU and recovers when
   * the array's contents were changed since.
   */
  noteLengthSum(lengths: DeviceArray, total: number): void {
    this.#lengthSums.set(lengths, total);
  }

  /** @internal The sum noted for `lengths` by {@link noteLengthSum}, if any. */
  lengthSumOf(lengths: DeviceArray): number | undefined {
    return this.#lengthSums.get(lengths);
  }

  /** @internal An owned DeviceArray over a pooled `buffer`: destroy() gives the buffer back. */
  owned(buffer: GPUBuffer, type: ElementType, length: number): DeviceArray {
    return new DeviceArray(buffer, type, length, true, this.releaseStorage);
  }

  /** Bytes of storage buffers the pool keeps for reuse now, and its counters (for tests, benchmarks). */
  get poolStats(): { keptBytes: number; limitBytes: number; created: number; reused: number; failed: number } {
    return { keptBytes: this.#pool.keptBytes, limitBytes: this.#pool.limitBytes, ...this.#pool.stats };
  }

  /**
   * @internal @throws ParleError TOO_LARGE when `size` bytes exceed one storage binding (with
   * `large`: the largest buffer, for the ops that bind arrays in windows: scan, RLE decode's output).
   */
  checkBindable(size: number, what: string, large = false): void {
    if (large) {
      if (size > this.limits.maxBufferSize) {
        throw new ParleError(
          ErrorCodes.TOO_LARGE,
          `${what}: ${size} bytes exceed this device's largest buffer, ${this.limits.maxBufferSize} bytes`,
        );
      }
      return;
    }
    const max = Math.min(this.limits.maxStorageBufferBindingSize, this.limits.maxBufferSize);
    if (size > max) {
      throw new ParleError(
        ErrorCodes.TOO_LARGE,
        `${what}: ${size} bytes exceed this device's storage binding limit of ${max} bytes (scan and RLE decode split arrays ` +
          'across bindings; RLE encode and sort do not)',
      );
    }
  }

  /**
   * @internal Runs one op: `encode` records passes into a fresh encoder (between the encoder
   * hooks); the command buffer is submitted and awaited; temporaries are destroyed; on failure
   * the outputs are destroyed too.
   */
  async submit<R>(label: string, encode: (s: Submission) => R): Promise<R> {
    this.checkUsable();
    const mark = this.errorMark;
    const s = new Submission(this, this.device.createCommandEncoder({ label: `parle:${label}` }));
    try {
      this.encoderHooks?.begin(s.encoder);
      const result = encode(s);
      this.encoderHooks?.end(s.encoder);
      this.device.queue.submit([s.encoder.finish()]);
      s.startReads();
      await this.guard(this.device.queue.onSubmittedWorkDone());
      // a command buffer that failed validation did not run: its outputs hold what they held
      await this.checkErrors(mark, label);
      return result;
    } catch (e) {
      for (const b of s.outputs) this.releaseStorage(b);
      for (const b of s.onFailure) b.destroy();
      throw e;
    } finally {
      for (const b of s.temps) this.releaseStorage(b);
      for (const b of s.uniforms) this.giveUniform(b);
    }
  }

  /** Kept small MAP_READ buffers (unmapped), by size class. */
  #readbackPool = new Map<number, GPUBuffer[]>();
  /**
   * Readback buffers up to this size are kept for reuse (bytes): a new MAP_READ buffer of 100-200
   * KiB (the walks of a device container's plan) cost 0.3 ms a call on the H200 host.
   */
  static readonly #READBACK_KEPT_BYTES = 4 << 20;
  /** Kept buffers of a size class at most: 64 up to 64 KiB, 2 above (4 MiB classes: 8 MiB). */
  static #readbacksKept(size: number): number {
    return size <= 64 << 10 ? 64 : 2;
  }

  /** @internal A MAP_READ | COPY_DST buffer of at least `size` bytes: a kept one, or a new one. */
  takeReadback(size: number): GPUBuffer {
    const cls = size <= GpuContext.#READBACK_KEPT_BYTES ? Math.max(256, 2 ** Math.ceil(Math.log2(Math.max(1, size)))) : size;
    const kept = this.#readbackPool.get(cls)?.pop();
    return (
      kept ?? this.device.createBuffer({ label: 'parle:readback', size: cls, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST })
    );
  }

  /** @internal Takes back an unmapped buffer of {@link takeReadback}. */
  giveReadback(b: GPUBuffer): void {
    const list = this.#readbackPool.get(b.size) ?? [];
    if (
      this.isLost ||
      b.size > GpuContext.#READBACK_KEPT_BYTES ||
      list.length >= GpuContext.#readbacksKept(b.size) ||
      b.mapState !== 'unmapped'
    )
      return b.destroy();
    list.push(b);
    this.#readbackPool.set(b.size, list);
  }

  /**
   * Kept uniform buffers (UNIFORM | COPY_DST), by size, the oldest handed out first (as the
   * storage pool does, so an op's dispatches find their bind groups kept: ts/gpu/buffer-pool.ts).
   */
  #uniformPool = new Map<number, GPUBuffer[]>();
  /** When each uniform buffer was made, in uniform buffers made before it. */
  #uniformAges = new WeakMap<GPUBuffer, number>();
  #uniformsMade = 0;
  /** Uniform buffers kept at most, of each size. */
  static readonly #UNIFORMS_KEPT = 256;

  /** @internal A uniform buffer of `size` bytes (a multiple of 16): a kept one, or a new one. */
  takeUniform(size: number): GPUBuffer {
    const kept = this.#uniformPool.get(size)?.pop();
    if (kept !== undefined) return kept;
    const b = this.device.createBuffer({ label: 'parle:params', size, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
    this.#uniformAges.set(b, this.#uniformsMade++);
    return b;
  }

  /** @internal Takes back a uniform buffer of {@link takeUniform} once its op has completed. */
  giveUniform(b: GPUBuffer): void {
    const list = this.#uniformPool.get(b.size) ?? [];
    if (this.isLost || list.length >= GpuContext.#UNIFORMS_KEPT) return b.destroy();
    keepByAge(list, b, (u) => this.#uniformAges.get(u) ?? Infinity);
    this.#uniformPool.set(b.size, list);
  }

  /** Time spent waiting on staging buffers since the context was made (ms), for benchmarks. */
  get stagingWaitMs(): { upload: number; download: number } {
    return { ...this.#ring.waitMs };
  }

  /** @internal Reads `byteLength` bytes of `buffer` (after all submitted work). */
  readBytes(buffer: GPUBuffer, byteLength: number): Promise<Uint8Array> {
    this.checkUsable();
    return this.#ring.download(buffer, 0, byteLength);
  }

  /** @internal Validates an input DeviceArray of this context. */
  checkInput(d: unknown, name: string, types: readonly ElementType[]): DeviceArray {
    if (!(d instanceof DeviceArray)) throw new ParleError(ErrorCodes.INVALID_ARGUMENT, `${name} must be a DeviceArray`);
    d.assertLive(name);
    if (!types.includes(d.type)) {
      throw new ParleError(ErrorCodes.UNSUPPORTED_TYPE, `${name} must be of type ${types.join(' | ')}; got ${d.type}`);
    }
    return d;
  }

  /**
   * @internal A GPUBuffer holding `d`'s elements with kernel padding (paddedSize): `d.buffer`
   * itself, or, for a wrapped buffer that is too small, a padded copy made in `s`.
   */
  paddedBuffer(s: Submission, d: DeviceArray, large = false): GPUBuffer {
    const need = paddedSize(d.byteLength);
    this.checkBindable(need, 'input', large && d.buffer.size >= need);
    if (d.buffer.size >= need) return d.buffer;
    const copy = s.temp(d.byteLength, 'padded-input');
    // wrap() ensures buffer.size >= byteLength rounded up to 4
    const bytes = Math.ceil(d.byteLength / 4) * 4;
    if (bytes > 0) s.encoder.copyBufferToBuffer(d.buffer, 0, copy, 0, bytes);
    return copy;
  }

  /**
   * Copies a host array to a new DeviceArray of the same element type and length (owned).
   * Arrays under 1 MiB go through queue.writeBuffer, up to 32 MiB through the staging ring
   * (chunks filled while mapped, overlapped with their copies), larger ones through staging
   * pieces of up to 256 MiB kept mapped for reuse (faster on the H200 host; they cost the largest
   * upload's size in mappable memory until releaseStaging()). The host array may be changed once
   * the promise resolves. The new array's buffer comes from the pool. Arrays of every type.
   * @throws ParleError INVALID_ARGUMENT, DETACHED_BUFFER, TOO_LARGE, DEVICE_LOST
   */
  async upload(array: ParleArray): Promise<DeviceArray> {
    const type = checkArray(array, 'array');
    this.checkUsable();
    // any size up to the largest buffer: ops that need one binding check for themselves
    const buffer = this.acquireStorage(array.byteLength, `upload-${type}`, 0, true);
    try {
      if (array.byteLength >= WHOLE_UPLOAD_BYTES)
        await this.#uploadPieces.upload(buffer, bytesSource(bytesOf(array)), this.tuning.uploadPieceBytes);
      else await this.#ring.upload(buffer, 0, bytesOf(array));
    } catch (e) {
      this.releaseStorage(buffer);
      throw e;
    }
    return this.owned(buffer, type, array.length);
  }

  /**
   * Copies byte arrays into one new u8 DeviceArray of `byteLength` bytes (owned), `parts[i]` from
   * byte `offsets[i]` (ascending multiples of 4; parts must not overlap and must fit, each
   * rounded up to 4 bytes); bytes no part covers are unspecified. The parts are copied straight
   * into the staging pieces of large uploads (see {@link upload}), one memcpy each, and cross in
   * one copy a piece: no host array of the whole is made (a list of containers joined on the host
   * had cost a fresh array's page faults, 28 ms for 36 MB on the H200 host) and no WebGPU call is
   * made a part. The parts may be changed once the promise resolves.
   * @throws ParleError INVALID_ARGUMENT (an offset off 4 bytes or out of order, a part past the
   *   end), TOO_LARGE, DEVICE_LOST
   */
  async uploadParts(parts: readonly Uint8Array[], offsets: readonly number[], byteLength: number): Promise<DeviceArray> {
    this.checkUsable();
    let end = 0;
    parts.forEach((part, i) => {
      const at = offsets[i];
      if (!Number.isInteger(at) || at < end || at % 4 !== 0 || at + Math.ceil(part.byteLength / 4) * 4 > Math.ceil(byteLength / 4) * 4) {
        throw new ParleError(
          ErrorCodes.INVALID_ARGUMENT,
          `part ${i} (${part.byteLength} bytes at ${at}) is off 4 bytes, out of order or past ${byteLength}`,
        );
      }
      end = at + part.byteLength;
    });
    const buffer = this.acquireStorage(byteLength, 'upload-parts', 0, true);
    try {
      if (byteLength > 0) await this.#uploadPieces.upload(buffer, partsSource(parts, offsets, byteLength), this.tuning.uploadPieceBytes);
    } catch (e) {
      this.releaseStorage(buffer);
      throw e;
    }
    return this.owned(buffer, 'u8', byteLength);
  }

  /**
   * Copies a DeviceArray back into a new host typed array of its type and length, through
   * MAP_READ staging buffers with several chunks in flight. Sees all earlier ops. With `into`
   * (a typed array of the same type, at least `length` long), fills and returns that array
   * instead: a reused array skips the page faults of a fresh allocation, the largest cost of a
   * large readback in Node.
   * @throws ParleError INVALID_ARGUMENT (destroyed, a wrapped buffer without COPY_SRC, `into` of
   *   another type or too short), DEVICE_LOST
   */
  async download(d: DeviceArray, opts: { into?: ParleArray } = {}): Promise<ParleArray> {
    this.checkInput(d, 'array', ELEMENT_TYPES);
    if ((d.buffer.usage & GPUBufferUsage.COPY_SRC) === 0) {
      throw new ParleError(ErrorCodes.INVALID_ARGUMENT, 'array.buffer needs GPUBufferUsage.COPY_SRC to be read back');
    }
    const into = opts.into;
    if (into !== undefined) {
      const type = checkArray(into, 'options.into');
      // f16 elements: a Float16Array, or a Uint16Array of their bits
      if ((type !== d.type && !(d.type === 'f16' && type === 'u16')) || into.length < d.length) {
        throw new ParleError(ErrorCodes.INVALID_ARGUMENT, `options.into must be a ${d.type} array of at least ${d.length} elements`);
      }
      this.checkUsable();
      await this.#ring.download(d.buffer, 0, d.byteLength, bytesOf(into).subarray(0, d.byteLength));
      return into;
    }
    // wrap() ensures buffer.size >= byteLength rounded up to 4
    const bytes = await this.readBytes(d.buffer, d.byteLength);
    const Ctor = arrayConstructor(d.type);
    return new Ctor(bytes.buffer, 0, d.length);
  }

  /**
   * Zero-copy readback: copies `d` into one MAP_READ buffer and returns a typed array over its
   * mapped memory (no copy into JavaScript memory: about as fast as the bus). The array stays
   * valid until `release()`, which unmaps the buffer (the array is then detached, length 0) and
   * keeps it for the next call of the same size (releaseStaging() frees it). Its ArrayBuffer
   * belongs to WebGPU: it cannot be transferred to a worker.
   * @throws ParleError INVALID_ARGUMENT, TOO_LARGE (beyond maxBufferSize), DEVICE_LOST
   */
  async downloadMapped(d: DeviceArray): Promise<{ array: ParleArray; release(): void }> {
    this.checkInput(d, 'array', ELEMENT_TYPES);
    if ((d.buffer.usage & GPUBufferUsage.COPY_SRC) === 0) {
      throw new ParleError(ErrorCodes.INVALID_ARGUMENT, 'array.buffer needs GPUBufferUsage.COPY_SRC to be read back');
    }
    this.checkUsable();
    const size = Math.max(4, Math.ceil(d.byteLength / 4) * 4);
    if (size > this.limits.maxBufferSize) throw new ParleError(ErrorCodes.TOO_LARGE, `${size} bytes exceed maxBufferSize`);
    // A released buffer of the same size is reused: making and pinning a new 256 MiB MAP_READ
    // buffer costs more than the copy itself (H200: 55 ms vs 5 ms).
    const pooled = this.#mappedPool.findIndex((b) => b.size === size);
    const mark = this.errorMark;
    const buffer =
      pooled >= 0
        ? this.#mappedPool.splice(pooled, 1)[0]
        : this.device.createBuffer({ label: 'parle:mapped-download', size, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
    try {
      const encoder = this.device.createCommandEncoder({ label: 'parle:mapped-download' });
      if (d.byteLength > 0) encoder.copyBufferToBuffer(d.buffer, 0, buffer, 0, size);
      this.device.queue.submit([encoder.finish()]);
      // checked before the map (of a buffer that may not have been allocated)
      await this.checkErrors(mark, 'downloadMapped');
      await this.guard(buffer.mapAsync(GPUMapMode.READ));
    } catch (e) {
      buffer.destroy();
      throw e;
    }
    const Ctor = arrayConstructor(d.type);
    const array = new Ctor(buffer.getMappedRange(), 0, d.length);
    let released = false;
    const release = (): void => {
      if (released) return;
      released = true;
      if (this.isLost) return buffer.destroy();
      buffer.unmap();
      this.#mappedPool.push(buffer);
      while (this.#mappedPool.length > 2) this.#mappedPool.shift()!.destroy();
    };
    return { array, release };
  }

  /**
   * Wraps an application's GPUBuffer as a DeviceArray (not owned: destroy() leaves it alone).
   * The buffer needs STORAGE usage (COPY_SRC to download) and at least `length * elementSize`
   * bytes, rounded up to 4; it is read, never written, by ops.
   * @throws ParleError INVALID_ARGUMENT (not a buffer, too small, no STORAGE), UNSUPPORTED_TYPE,
   *   INVALID_OPTION (length not a non-negative integer)
   */
  wrap(buffer: GPUBuffer, type: ElementType, length: number): DeviceArray {
    if (!(ELEMENT_TYPES as readonly string[]).includes(type)) {
      throw new ParleError(ErrorCodes.UNSUPPORTED_TYPE, `type must be ${ELEMENT_TYPES.join(' | ')}; got ${String(type)}`);
    }
    if (!Number.isSafeInteger(length) || length < 0) {
      throw new ParleError(ErrorCodes.INVALID_OPTION, 'length must be a non-negative integer');
    }
    if (typeof buffer !== 'object' || buffer === null || typeof (buffer as GPUBuffer).size !== 'number') {
      throw new ParleError(ErrorCodes.INVALID_ARGUMENT, 'buffer must be a GPUBuffer');
    }
    if ((buffer.usage & GPUBufferUsage.STORAGE) === 0) {
      throw new ParleError(ErrorCodes.INVALID_ARGUMENT, 'buffer needs GPUBufferUsage.STORAGE');
    }
    const need = Math.ceil((length * elementSize(type)) / 4) * 4;
    if (buffer.size < need) {
      throw new ParleError(ErrorCodes.INVALID_ARGUMENT, `buffer holds ${buffer.size} bytes; ${length} ${type} elements need ${need}`);
    }
    return new DeviceArray(buffer, type, length, false);
  }

  /**
   * Destroys the staging buffers (made again on the next transfer) and the storage buffers the
   * pool keeps; for tests and idle engines.
   */
  releaseStaging(): Promise<void> {
    this.#pool.trim();
    for (const pool of [this.#uniformPool, this.#readbackPool]) {
      for (const list of pool.values()) for (const b of list) b.destroy();
      pool.clear();
    }
    for (const b of this.#mappedPool) b.destroy();
    this.#mappedPool = [];
    this.#uploadPieces.release();
    return this.#ring.release();
  }

  /** Destroys the device; pending and later ops fail with ParleError DESTROYED. Idempotent. */
  destroy(): void {
    if (this.#destroyed) return;
    this.#destroyed = true;
    this.#pool.close();
    this.device.destroy();
  }
}
