/**
 * The Engine: one object that owns the CPU path (WebAssembly kernels on a pool of workers), the
 * GPU context (WebGPU) and the cost model, and picks a path for every call. Every operation
 * validates its input up front and throws {@link ParleError} with a stable code (ts/errors.ts).
 *
 * Where data lives decides a lot: host arrays (typed arrays) in give host results, device
 * arrays ({@link DeviceArray}, data in a GPUBuffer) in give device results, and `{ to }`
 * overrides. `path: 'auto'` (the default) asks the cost model (ts/cost/model.ts), which weighs
 * the transfers a path needs against its calibrated kernel rates; `explain` shows its reasoning.
 *
 * The facade dispatches and does no codec work: the options and their checks are in
 * ts/options.ts, the codec's routes in ts/codec/ (a compress: ts/codec/compress.ts), the
 * primitives in ts/cpu/ and ts/gpu/, the calibration probe in ts/probe.ts.
 */
import { CpuPath } from './cpu/cpu-path.js';
import { rleDecode as rleDecodeOnCpu, rleEncode as rleEncodeOnCpu, type Runs } from './cpu/rle.js';
import { scan as scanOnCpu } from './cpu/scan.js';
import { sort as sortOnCpu } from './cpu/sort.js';
import { abortError } from './cpu/pool.js';
import type { KernelVariant } from './cpu/wasm.js';
import { fetchResponse } from './cpu/fetch.js';
import { responseOf, type FetchedResponse } from './cpu/pool.js';
import type { WorkerRequestInit } from './cpu/protocol.js';
import { calibrate, CALIBRATION_FORMAT, calibrationKey, type CalibrationProbe, type CalibrationRecord } from './cost/calibration.js';
import { CostModel, defaultRates, type CallShape, type CostOp, type Location } from './cost/model.js';
import { ErrorCodes, ParleError, isParleError } from './errors.js';
import {
  checkOut,
  compressArrayReport,
  decompressBytes,
  decompressFetched,
  decompressList,
  decompressPlacedHere,
  mapLimited,
} from './codec/arrays.js';
import type { ChunkReport } from './codec/cpu/chunks.js';
import { decompressListToDevice, decompressToDevice } from './codec/gpu/decompress.js';
import { decompressDeviceContainer } from './codec/gpu/device-container.js';
import { compressOn, compressRoute } from './codec/compress.js';
import { compressBound, HEADER_BYTES, readHeader, shapeBlockBytes } from './format/layout.js';
import { ContainerReader, ContainerWriter } from './codec/stream.js';
import { createGpuContext, DeviceArray, gpuUnavailableReason, type GpuContext } from './gpu/index.js';
import { cpuDescription, debug, hardwareConcurrency, loadStored, saveStored } from './platform/node.js';
import type { ArrayOf, ElementType, ParleArray, SortKeys } from './types.js';
import {
  bytesOf,
  checkArray,
  ELEMENT_TYPES,
  elementSize,
  isElementType,
  GPU_CODEC_TYPES,
  isGpuCodecType,
  isKernelType,
  SORT_KEY_TYPES,
} from './types.js';
import { chunkLengthOf, makeCompressPlan, predictPlanOf, type CompressPlan } from './codec/settings.js';
import type { Placement } from './codec/place.js';
import { inspectContainer, readAtBytes, type ContainerReport } from './format/container.js';
import { radixSort as sortOnGpu } from './gpu/radix-sort.js';
import { rleDecode as rleDecodeOnGpu, rleEncode as rleEncodeOnGpu } from './gpu/rle.js';
import { scan as scanOnGpu } from './gpu/scan.js';
import { PROCEDURES } from './codec/cpu/procedures.js';

import { makeProbe } from './probe.js';
import {
  GPU_OPS,
  OPS,
  checkChoice,
  checkData,
  checkInteger,
  checkOptions,
  checkOutOption,
  checkSignal,
  compressSettings,
  elementTypeOfData,
  plannedSettings,
  type CalibrateOptions,
  type CompressOptions,
  type CompressorOptions,
  type CompressToDeviceOptions,
  type Data,
  type DecompressOptions,
  type DecompressorOptions,
  type DeviceRuns,
  type DownloadOptions,
  type EngineOptions,
  type ExplainCodecOptions,
  type ExplainOptions,
  type Explanation,
  type OpName,
  type OpOptions,
  type RleDecodeOptions,
  type ScanOptions,
  type SortOptions,
} from './options.js';

export { DeviceArray } from './gpu/index.js';

/** The package version, part of the calibration key. */
export const VERSION = '0.1.0';

/** The path of one call, where its data is and is wanted, and whether `auto` chose it. */
interface Route {
  op: CostOp;
  path: 'cpu' | 'gpu';
  from: Location;
  to: Location;
  /** The model's size of the call: input bytes (decoded bytes for decompress). */
  bytes: number;
  /** Bytes the kernel lines scale with when not `bytes` (rleDecode: the decoded size). */
  workBytes?: number;
  /** Round trips the GPU path makes beyond its line's (see ModelSizes.roundTrips). */
  roundTrips?: number;
  signal?: AbortSignal;
  auto: boolean;
}

/** What the cost model needs of a call beyond its input bytes (rleDecode: see rleDecodeSizes). */
interface ModelSizes {
  /** Bytes the kernel lines scale with when not the input's (rleDecode: the decoded size). */
  workBytes?: number;
  /** Milliseconds of host work before either path runs that the GPU's line does not hold (CallShape.gpuHostMs). */
  sumMs?: number;
  /** Readback round trips the GPU path waits for beyond its line's (CallShape.gpuRoundTrips). */
  roundTrips?: number;
}

const DEFAULT_MAX_ELEMENTS = 2 ** 32 - 1;

/**
 * True when the GPU path takes `op` on elements of `type` at `from`: a compress every type on the
 * device (its route keeps what the GPU does not write on the CPU path: ts/codec/compress.ts
 * compressRoute) and those of 1, 2 or 4 bytes on the host (an 8-byte array there stays on the CPU
 * path unless `path: 'gpu'`: its upload and GPU compress are not measured against the CPU path's
 * from the host); the run-length ops every
 * type of 1, 2 or 4 bytes ({@link GPU_CODEC_TYPES}); scan and sort the kernel types (their own
 * checks narrow them further).
 */
function gpuTakes(op: string, type: ElementType, from: Location): boolean {
  if (op === 'compress') return from === 'device' || isGpuCodecType(type);
  return op === 'rleEncode' || op === 'rleDecode' ? isGpuCodecType(type) : isKernelType(type);
}

/**
 * Checks the keys of a request's init (what a worker's request can carry: ts/cpu/protocol.ts WorkerRequestInit).
 * @throws ParleError INVALID_OPTION naming a key `call` does not take (`option`: init.KEY)
 */
function checkRequestInit(init: object, call: string, keys: readonly string[]): void {
  for (const key of Object.keys(init)) {
    if (!keys.includes(key))
      throw new ParleError(ErrorCodes.INVALID_OPTION, `${call}'s init has no key '${key}' (${keys.join(', ')}, signal)`, {
        option: `init.${key}`,
      });
  }
}

/**
 * Creates an engine: compiles the kernels, starts the workers and opens the GPU.
 *
 *     const engine = await createEngine({ workers: 4, gpu: 'off' });
 *
 * Every options object of the engine's calls is checked strictly: a key the call does not take
 * (`{ levle: 9 }`) is INVALID_OPTION ("options.levle is not an option of compress (did you mean
 * level?)"), with {@link ParleError.option} naming it as written; a key set to undefined means
 * its default.
 * @throws ParleError INVALID_OPTION (an unknown key or a bad value; `option` names it),
 *   PATH_UNAVAILABLE (`gpu: 'require'` without an adapter)
 */
export async function createEngine(options: EngineOptions = {}): Promise<Engine> {
  const opts = checkOptions(options, 'createEngine');
  const workers = opts.workers === undefined ? hardwareConcurrency() : checkInteger(opts.workers, 'options.workers', 0, 1024);
  const gpu = checkChoice(opts.gpu, 'options.gpu', ['auto', 'off', 'require'] as const, 'auto');
  const calibration = checkChoice(opts.calibration, 'options.calibration', ['auto', 'skip', 'force'] as const, 'auto');
  const kernels = checkChoice(opts.kernels, 'options.kernels', ['simd', 'scalar'] as const, 'simd') as KernelVariant;
  const maxElements =
    opts.maxElements === undefined
      ? DEFAULT_MAX_ELEMENTS
      : checkInteger(opts.maxElements, 'options.maxElements', 0, Number.MAX_SAFE_INTEGER);
  const maxQueue = opts.maxQueue === undefined ? 1024 : checkInteger(opts.maxQueue, 'options.maxQueue', 1, 2 ** 31);
  const inlineBytes =
    opts.inlineBytes === undefined ? undefined : checkInteger(opts.inlineBytes, 'options.inlineBytes', 0, Number.MAX_SAFE_INTEGER);
  if (opts.sharedMemory !== undefined && typeof opts.sharedMemory !== 'boolean') {
    throw new ParleError(ErrorCodes.INVALID_OPTION, `options.sharedMemory must be a boolean; got ${String(opts.sharedMemory)}`);
  }
  const gpuPoolBytes =
    opts.gpuPoolBytes === undefined ? undefined : checkInteger(opts.gpuPoolBytes, 'options.gpuPoolBytes', 0, Number.MAX_SAFE_INTEGER);
  const context = gpu === 'off' ? null : await createGpuContext({ poolBytes: gpuPoolBytes });
  if (gpu === 'require' && context === null) {
    throw new ParleError(ErrorCodes.PATH_UNAVAILABLE, `options.gpu is 'require', but there is no GPU: ${gpuUnavailableReason()}`);
  }
  let cpu: CpuPath;
  try {
    cpu = await CpuPath.create({
      procedures: PROCEDURES,
      variant: kernels as 'simd' | 'scalar',
      workers,
      shareMemory: opts.sharedMemory as boolean | undefined,
      inlineBytes,
      maxMemoryBytes:
        opts.maxMemoryBytes === undefined ? undefined : checkInteger(opts.maxMemoryBytes, 'options.maxMemoryBytes', 1 << 20, 2 ** 32),
    });
  } catch (e) {
    context?.destroy();
    throw e;
  }
  const engine = new Engine(cpu, context, { maxElements, maxQueue, calibration, gpuPoolBytes, gpuOff: gpu === 'off' });
  if (calibration === 'force') await engine.calibrate({ force: true });
  return engine;
}

export class Engine {
  private readonly maxElements: number;
  private readonly maxQueue: number;
  private readonly calibrationMode: 'auto' | 'skip' | 'force';
  private cpuPath: CpuPath | undefined;
  private gpuContext: GpuContext | null;
  private pendingOps = 0;
  private calibrating: Promise<void> | undefined;
  /** The promise in {@link calibrating} has settled: `auto` decides without awaiting it. */
  private calibrated = false;
  private readonly gpuPoolBytes: number | undefined;
  /** Why {@link gpuContext} is null, for errors and explain (e.g. the `webgpu` package is not installed). */
  private noGpuReason = gpuUnavailableReason();
  /** Milliseconds of the last calibration this engine ran (measurements; GPU warm-up), or null. */
  lastCalibration: { tookMs: number; warmUpMs: number } | null = null;
  /** @internal The cost model; its rates are the defaults until {@link calibrate} ran. */
  readonly model: CostModel;
  /** Observed output / input ratio of RLE encode (the size of a result not known in advance). */
  private rleRatio = 0.25;

  /** @internal Use {@link createEngine}. */
  constructor(
    cpu: CpuPath,
    gpu: GpuContext | null,
    settings: { maxElements: number; maxQueue: number; calibration?: 'auto' | 'skip' | 'force'; gpuPoolBytes?: number; gpuOff?: boolean },
  ) {
    this.cpuPath = cpu;
    this.gpuPoolBytes = settings.gpuPoolBytes;
    this.gpuContext = gpu;
    if (settings.gpuOff) this.noGpuReason = "options.gpu is 'off'";
    this.maxElements = settings.maxElements;
    this.maxQueue = settings.maxQueue;
    this.calibrationMode = settings.calibration ?? 'auto';
    this.model = new CostModel(defaultRates(gpu !== null));
  }

  /** Worker threads of the CPU path (0: everything runs on the calling thread). */
  get workers(): number {
    return this.cpuPath?.pool?.concurrency ?? 0;
  }

  /**
   * True when the workers share the engine's memory (a SharedArrayBuffer: Node, or a
   * cross-origin-isolated page). Then a decompress into a host `out` over a SharedArrayBuffer is
   * written by the workers as they decode, the calling thread copying nothing out
   * (parle-codec/zarr decodes each chunk so).
   */
  get sharedMemory(): boolean {
    return this.cpuPath?.shared ?? false;
  }

  /** Operations pending now (running or waiting). */
  get pending(): number {
    return this.pendingOps;
  }

  /** Workers replaced since the engine started (after crashes or aborts). */
  get workerRestarts(): number {
    return this.cpuPath?.pool?.restarts ?? 0;
  }

  /** The GPU's identity, or null without a usable GPU. */
  get adapter(): { vendor: string; architecture: string; device: string; description: string } | null {
    return this.gpuContext && !this.gpuContext.isLost ? this.gpuContext.adapterInfo : null;
  }

  /** The CPU path; throws DESTROYED after {@link destroy}. */
  private get cpu(): CpuPath {
    if (!this.cpuPath) throw new ParleError(ErrorCodes.DESTROYED, 'the engine was destroyed');
    return this.cpuPath;
  }

  /** The GPU context; throws PATH_UNAVAILABLE without one, DEVICE_LOST after a loss. */
  private get gpu(): GpuContext {
    void this.cpu;
    if (!this.gpuContext) throw new ParleError(ErrorCodes.PATH_UNAVAILABLE, `this engine has no GPU: ${this.noGpuReason}`);
    if (this.gpuContext.isLost) {
      throw new ParleError(ErrorCodes.DEVICE_LOST, 'the GPU device was lost; call engine.resetGpu() to open a new one');
    }
    return this.gpuContext;
  }

  /**
   * Opens a new GPU device after a loss (or the first time, for an engine made with gpu: 'off').
   * Device arrays of the old device cannot be used with the new one.
   * @returns whether a GPU is available now
   */
  async resetGpu(): Promise<boolean> {
    void this.cpu;
    this.gpuContext?.destroy();
    this.gpuContext = await createGpuContext({ poolBytes: this.gpuPoolBytes });
    this.noGpuReason = gpuUnavailableReason();
    this.model.rates = defaultRates(this.gpuContext !== null);
    this.calibrating = undefined;
    this.calibrated = false;
    return this.gpuContext !== null;
  }

  /**
   * Admits an operation into the bounded queue and runs it.
   * @throws ParleError QUEUE_FULL, ABORTED
   */
  private async admit<R>(signal: AbortSignal | undefined, work: () => Promise<R>): Promise<R> {
    if (this.pendingOps >= this.maxQueue) {
      throw new ParleError(
        ErrorCodes.QUEUE_FULL,
        `${this.pendingOps} operations are pending, the limit (options.maxQueue) is ${this.maxQueue}`,
      );
    }
    if (signal?.aborted) throw abortError(signal);
    this.pendingOps++;
    try {
      return await work();
    } finally {
      this.pendingOps--;
    }
  }

  // ---- memory and transfers -------------------------------------------------------------

  /**
   * A zero-filled typed array of `length` elements of `type` that lives in the CPU path's
   * shared memory: pass it to any op without a copy; results of ops on it live there too.
   * Release it with {@link free} (or let it be garbage-collected). Where memory is not shared
   * it is a plain typed array.
   * @throws ParleError INVALID_OPTION, TOO_LARGE (beyond the 4 GiB wasm32 memory)
   */
  alloc<T extends ElementType>(type: T, length: number): ArrayOf[T] {
    if (!isElementType(type))
      throw new ParleError(ErrorCodes.INVALID_OPTION, `type must be one of ${ELEMENT_TYPES.join(', ')}; got ${String(type)}`);
    checkInteger(length, 'length', 0, 2 ** 32 - 1);
    return this.cpu.alloc(type, length) as ArrayOf[T];
  }

  /** Releases an array made by {@link alloc}; other arrays are ignored. Do not use it afterwards. */
  free(array: ParleArray): void {
    this.cpuPath?.free(array);
  }

  /**
   * Copies a host array to the GPU (reusable MAP_WRITE staging buffers, overlapped with their
   * copies). The DeviceArray is owned: `destroy()` it when done. Arrays of every type: the GPU
   * codec compresses and decodes them all (8-byte ones with the chooser's predicted chunks, f64's
   * in the lossy mode too), the GPU's rle takes those of 1, 2 or 4 bytes
   * ({@link GPU_CODEC_TYPES}), its scan and sort their 32-bit ones.
   * @throws ParleError INVALID_ARGUMENT, DETACHED_BUFFER, PATH_UNAVAILABLE, DEVICE_LOST
   */
  async upload<T extends ParleArray>(array: T): Promise<DeviceArray> {
    checkArray(array, 'array');
    return this.gpu.upload(array);
  }

  /**
   * Reads a DeviceArray back into a new host typed array of its type and length, or, with
   * `options.into` (a typed array of the same element type with at least `array.length`
   * elements), into that array, which is returned (its first `array.length` elements written).
   * A reused `into` skips the page faults of a fresh allocation, the largest cost of a large
   * readback in Node (H200 host, 256 MiB: 1.9 GB/s into a new array, 7.3 GB/s into a reused one).
   * @returns `options.into` when given (typed as it), else a new array typed as the union {@link ParleArray}.
   * @throws ParleError INVALID_ARGUMENT (a destroyed array, `into` of another type or too short),
   *   INVALID_OPTION, PATH_UNAVAILABLE, DEVICE_LOST
   */
  async download<T extends ParleArray>(array: DeviceArray, options: DownloadOptions<T> & { into: T }): Promise<T>;
  async download(array: DeviceArray, options?: DownloadOptions & { into?: undefined }): Promise<ParleArray>;
  async download(array: DeviceArray, options?: DownloadOptions): Promise<ParleArray>;
  async download(array: DeviceArray, options?: DownloadOptions): Promise<ParleArray> {
    const opts = checkOptions(options, 'download') as DownloadOptions;
    checkData(array, 'array');
    return this.gpu.download(array, opts);
  }

  /**
   * Zero-copy readback: returns a typed array (the DeviceArray's element type and length) over
   * mapped GPU memory, valid until `release()` is called; then it is detached (length 0) and its
   * buffer kept for the next call of the same size. No copy into JavaScript memory and no fresh
   * pages: on the H200 host a 256 MiB readback ran at 47 GB/s this way against 7.3 GB/s into a
   * reused array. Read the array (or copy what you keep) before releasing it; its ArrayBuffer
   * belongs to WebGPU and cannot be transferred to a worker. Call `release()` exactly when done:
   * until then the mapping holds host memory of the array's size.
   * @throws ParleError INVALID_ARGUMENT, TOO_LARGE (beyond the adapter's maxBufferSize),
   *   PATH_UNAVAILABLE, DEVICE_LOST
   */
  async downloadMapped(array: DeviceArray): Promise<{ array: ParleArray; release(): void }> {
    checkData(array, 'array');
    return this.gpu.downloadMapped(array);
  }

  /**
   * Wraps an application's GPUBuffer (STORAGE usage; COPY_SRC to download) as a DeviceArray of
   * `length` elements of `type`, without copying. Ops read it and never write it.
   * @throws ParleError INVALID_ARGUMENT, UNSUPPORTED_TYPE, INVALID_OPTION, PATH_UNAVAILABLE
   */
  wrap(buffer: GPUBuffer, type: ElementType, length: number): DeviceArray {
    return this.gpu.wrap(buffer, type, length);
  }

  private async toHost<T extends ParleArray>(data: Data): Promise<T> {
    return (data instanceof DeviceArray ? await this.gpu.download(data) : data) as T;
  }

  private async toDevice(data: Data): Promise<DeviceArray> {
    return data instanceof DeviceArray ? data : this.gpu.upload(data);
  }

  /** Moves a result to `to`, destroying device arrays that were only intermediate. */
  /** {@link deliver}, into a caller's `out` when given (a host result; the CPU path wrote it already). */
  private async deliverInto(result: Data, to: Location, out: ParleArray | undefined, inputs: readonly Data[] = []): Promise<Data> {
    if (out === undefined || result === out) return this.deliver(result, to);
    if (result instanceof DeviceArray) {
      try {
        return await this.gpu.download(result, { into: out });
      } finally {
        result.destroy();
      }
    }
    bytesOf(out).set(bytesOf(result));
    // a resident result copied out is not handed to anyone: give its memory back now
    if (this.cpu.isResident(result) && !inputs.includes(result)) this.cpu.free(result);
    return out;
  }

  private async deliver<R extends Data>(result: R, to: Location): Promise<Data> {
    if (to === 'host' && result instanceof DeviceArray) {
      try {
        return await this.gpu.download(result);
      } finally {
        result.destroy();
      }
    }
    if (to === 'device' && !(result instanceof DeviceArray)) return this.gpu.upload(result);
    return result;
  }

  // ---- the choice of path -----------------------------------------------------------------

  /**
   * Measures this machine's rates for the cost model (<= about 500 ms of measurements after a
   * warm-up: ts/cost/calibration.ts), or loads the ones stored
   * for this machine, adapter and parle version. Runs by itself at the first call that has a
   * choice to make; call it to do that earlier (the CLI shows progress). Without a GPU there is
   * nothing to choose and nothing is measured.
   * @throws ParleError INVALID_OPTION (as a rejection), DESTROYED
   */
  calibrate(options?: CalibrateOptions): Promise<void> {
    try {
      options = checkOptions(options, 'calibrate') as CalibrateOptions;
      if (options.onProgress !== undefined && typeof options.onProgress !== 'function') {
        throw new ParleError(ErrorCodes.INVALID_OPTION, 'options.onProgress must be a function');
      }
    } catch (e) {
      return Promise.reject(e);
    }
    if (options.force) {
      this.calibrating = undefined;
      this.calibrated = false;
    }
    if (this.calibrating === undefined) {
      const calibrating = this.runCalibration(options.force === true, options.onProgress);
      this.calibrating = calibrating;
      // settled, and still the current run: later calls skip the await (a microtask hop a call)
      void calibrating.then(
        () => (this.calibrated = this.calibrating === calibrating),
        () => undefined,
      );
    }
    return this.calibrating;
  }

  /** The calibration's measurements on this engine (ts/probe.ts); a method so tests can stand in for it. */
  private probe(gpu: GpuContext): CalibrationProbe {
    return makeProbe(this, this.cpu, gpu);
  }

  private async runCalibration(force: boolean, onProgress?: (done: number, total: number) => void): Promise<void> {
    const gpu = this.gpuContext && !this.gpuContext.isLost ? this.gpuContext : null;
    if (!gpu || (this.calibrationMode === 'skip' && !force)) return;
    const info = gpu.adapterInfo;
    const key = calibrationKey({
      parle: VERSION,
      cpu: cpuDescription(),
      workers: this.workers,
      adapter: `${info.vendor} ${info.architecture} ${info.device} ${info.description}`,
    });
    if (!force) {
      const stored = await loadStored<CalibrationRecord>(key);
      if (stored?.format === CALIBRATION_FORMAT && stored.key === key) {
        this.model.rates = stored.rates;
        return;
      }
    }
    // the probes' rleEncode calls would move the run-length ratio that predictions of result
    // sizes use: it stays what the caller's own calls made it
    const rleRatio = this.rleRatio;
    const { rates, tookMs, warmUpMs } = await calibrate(this.probe(gpu), { onProgress }).finally(() => (this.rleRatio = rleRatio));
    // the staging pieces and pooled buffers of the probes' largest inputs (64 MiB) go back
    if (!gpu.isLost) await gpu.releaseStaging();
    this.model.rates = rates;
    this.lastCalibration = { tookMs, warmUpMs };
    await saveStored(key, {
      format: CALIBRATION_FORMAT,
      key,
      measuredAt: new Date().toISOString(),
      tookMs,
      warmUpMs,
      rates,
    } satisfies CalibrationRecord);
  }

  /** Bytes a result is expected to take, for the cost of moving it. */
  private resultBytes(op: CostOp, inputBytes: number, workBytes?: number): number {
    if (op === 'rleEncode' || op === 'compress') return Math.ceil(inputBytes * this.rleRatio);
    if (op === 'rleDecode') return workBytes ?? Math.ceil(inputBytes / this.rleRatio);
    return inputBytes; // decompress: inputBytes is already the decoded size
  }

  /**
   * The model's sizes of an rleDecode call: the runs' bytes (what moves) and the decoded bytes
   * (what the kernels' lines scale with): exact from host lengths (and `elements`, their sum) and
   * from device lengths whose sum parle noted (rleEncode's results), else estimated from the
   * run-length ratio of earlier rleEncode calls. The GPU path of device lengths whose sum is not
   * known reads it back before it sizes its output: one round trip more than calibration's runs
   * (rleEncode's, sum known) paid (`roundTrips`; on an H100 a 4 KiB decode of uploaded device runs
   * took 0.87-0.89 ms against 0.56 predicted without it).
   */
  private rleDecodeSizes(values: Data, lengths?: Data): ModelSizes & { bytes: number; workBytes: number; elements?: number } {
    const size = elementSize(elementTypeOfData(values));
    const bytes = values.byteLength + (lengths?.byteLength ?? (values.byteLength / size) * 4);
    if (lengths !== undefined && !(lengths instanceof DeviceArray)) {
      // exact (the CPU path sizes its output by it), by the SIMD kernel: a JavaScript loop over
      // 16.8 M lengths took 30-45 ms, paid before either path ran (on the H200 a 256 MiB decode
      // of host runs on the GPU path measured 60 ms against 15 predicted). Its time goes into the
      // GPU path's prediction (sumMs: the CPU's line holds it already).
      const t0 = performance.now();
      const total = this.cpu.sumLengths(lengths as Uint32Array);
      return { bytes, workBytes: total * size, elements: total, sumMs: performance.now() - t0 };
    }
    if (lengths instanceof DeviceArray) {
      // (a hint, not `elements`: the array may have been written since; the GPU checks it)
      const noted = this.gpuContext?.lengthSumOf(lengths);
      if (noted !== undefined) return { bytes, workBytes: noted * size };
      return { bytes, workBytes: Math.ceil(bytes / this.rleRatio), roundTrips: 1 };
    }
    return { bytes, workBytes: Math.ceil(bytes / this.rleRatio) };
  }

  /** The cost model's shape of a call (CallShape). */
  private callShape(op: CostOp, inputBytes: number, inputLocation: Location, resultLocation: Location, sizes: ModelSizes): CallShape {
    const { workBytes } = sizes;
    return {
      op,
      inputBytes,
      workBytes,
      resultBytes: this.resultBytes(op, inputBytes, workBytes),
      inputLocation,
      resultLocation,
      gpuHostMs: sizes.sumMs,
      gpuRoundTrips: sizes.roundTrips,
    };
  }

  /** The model's view of a call: explain() and auto's choice share it. */
  private predictFor(
    op: CostOp,
    inputBytes: number,
    inputLocation: Location,
    resultLocation: Location,
    withReason = true,
    sizes: ModelSizes = {},
  ): Explanation {
    const gpuUsable = this.gpuContext !== null && !this.gpuContext.isLost && GPU_OPS.has(op);
    const prediction = this.model.predict(this.callShape(op, inputBytes, inputLocation, resultLocation, sizes), withReason);
    if (!gpuUsable) {
      const why =
        this.gpuContext === null
          ? `this engine has no GPU (${this.noGpuReason})`
          : this.gpuContext.isLost
            ? 'this engine has no GPU (the device was lost)'
            : `${op} has no GPU kernel`;
      return {
        path: 'cpu',
        predictedMs: { cpu: prediction.predictedMs.cpu, gpu: null },
        inputLocation,
        resultLocation,
        reason: `${why}, so the CPU path runs`,
      };
    }
    return { path: prediction.path, predictedMs: prediction.predictedMs, inputLocation, resultLocation, reason: prediction.reason };
  }

  /**
   * Validates the common options and picks the path of one call.
   * @throws ParleError INVALID_OPTION, PATH_UNAVAILABLE, DEVICE_LOST, DESTROYED
   */
  private async route(op: CostOp, input: Data, opts: Record<string, unknown>, sizes?: ModelSizes & { bytes: number }): Promise<Route> {
    void this.cpu;
    const bytes = sizes?.bytes ?? this.modelBytes(op, input);
    const workBytes = sizes?.workBytes;
    const roundTrips = sizes?.roundTrips;
    const requested = checkChoice(opts.path, 'options.path', ['auto', 'cpu', 'gpu'] as const, 'auto');
    const from: Location = input instanceof DeviceArray ? 'device' : 'host';
    const to = checkChoice(opts.to, 'options.to', ['host', 'device'] as const, from);
    const signal = checkSignal(opts.signal);
    if (from === 'device' || to === 'device') void this.gpu; // transfers need the GPU
    // elements of a type the GPU path does not take (the primitives' 8-byte types; scan's and
    // sort's i8, i16, f16; a compress of a host array of 8-byte ones), on the host or on the
    // device: the CPU's
    const dataType = op !== 'decompress' ? elementTypeOfData(input) : undefined;
    const cpuOnly = dataType !== undefined && !gpuTakes(op, dataType, from);
    if (requested === 'gpu' && cpuOnly && op !== 'compress')
      throw new ParleError(ErrorCodes.UNSUPPORTED_TYPE, `${op} of ${dataType} elements has no GPU kernel; use path 'cpu' or 'auto'`);
    if (requested === 'gpu') {
      void this.gpu;
      if (!GPU_OPS.has(op)) throw new ParleError(ErrorCodes.PATH_UNAVAILABLE, `${op} has no GPU kernel yet; use path 'cpu' or 'auto'`);
      return { op, path: 'gpu', to, signal, auto: false, from, bytes, workBytes, roundTrips };
    }
    if (requested === 'cpu' || cpuOnly || this.gpuContext === null || this.gpuContext.isLost || !GPU_OPS.has(op))
      return { op, path: 'cpu', to, signal, auto: requested === 'auto', from, bytes, workBytes, roundTrips };
    if (this.calibrationMode !== 'skip' && !this.calibrated) await this.calibrate();
    const path = this.model.choose(this.callShape(op, bytes, from, to, sizes ?? {}));
    debug(() => {
      const now = this.predictFor(op, bytes, from, to, false, sizes).predictedMs;
      return `${op} ${bytes} B ${from} -> ${to}: auto chose ${path} (predicted now: cpu ${now.cpu.toFixed(3)} ms, gpu ${now.gpu?.toFixed(3) ?? '-'} ms)`;
    });
    return { op, path, to, signal, auto: true, from, bytes, workBytes, roundTrips };
  }

  /**
   * The size the cost model works with: the input's bytes, except for decompress, whose cost
   * follows the decoded size (read from the container's header; the input's size when the
   * header is not valid, the decode then reports why).
   */
  private modelBytes(op: CostOp, input: Data): number {
    if (op !== 'decompress' || input instanceof DeviceArray) return input.byteLength;
    try {
      const bytes = new Uint8Array(input.buffer, input.byteOffset, Math.min(input.byteLength, HEADER_BYTES));
      const header = readHeader(bytes);
      return header.elementCount * elementSize(header.type);
    } catch {
      return input.byteLength;
    }
  }

  /**
   * Runs `work` on the routed path. When `auto` chose the GPU and the op fails there with
   * TOO_LARGE (an array beyond one storage binding that the kernel cannot split), OUT_OF_MEMORY
   * (the device could not allocate a buffer), or with DEVICE_LOST for host data wanted on the
   * host, the op runs again on the CPU instead of failing.
   */
  private async withFallback<R>(route: Route, work: (path: 'cpu' | 'gpu') => Promise<R>): Promise<R> {
    const t0 = performance.now();
    let result: R;
    try {
      result = await work(route.path);
    } catch (e) {
      const hostOnly = route.from === 'host' && route.to === 'host';
      if (route.path === 'gpu' && route.auto && hostOnly && isParleError(e, ErrorCodes.DEVICE_LOST)) return work('cpu');
      // beyond what the GPU kernels bind (RLE encode's and sort's inputs, a decode's run list),
      // or beyond the memory the device has left
      if (route.path === 'gpu' && route.auto && (isParleError(e, ErrorCodes.TOO_LARGE) || isParleError(e, ErrorCodes.OUT_OF_MEMORY))) {
        return work('cpu');
      }
      throw e;
    }
    // the whole call's time, moves included, for the model's call-level history
    const { op, bytes, workBytes, roundTrips, from, to } = route;
    const ms = performance.now() - t0;
    this.model.observeCall(this.callShape(op, bytes, from, to, { workBytes, roundTrips }), route.path, ms);
    debug(() => `${op} ${bytes} B ${from} -> ${to} on the ${route.path}: ${ms.toFixed(3)} ms`);
    return result;
  }

  // ---- operations -----------------------------------------------------------------------

  /**
   * Run-length encoding (RLE): each maximal run of equal consecutive elements becomes one value
   * and its length. in [0,2,2,9,5,5,5,8] -> values [0,2,9,5,8], lengths [1,2,1,3,1].
   * Elements compare as bit patterns, so f32 NaN payloads and -0 are runs of their own kind.
   *
   * @param input any element type, n elements (n may be 0), on the host or the GPU (the GPU path
   *   takes every type of 1, 2 or 4 bytes; f64, i64 and u64 run on the CPU, read back first from
   *   the GPU, and `path: 'gpu'` with them is UNSUPPORTED_TYPE).
   * @returns values: same type as the input, one per run; lengths: u32, each >= 1, summing to n.
   *   New arrays (on the host or the GPU, see `to`); the input is not modified.
   * @throws ParleError INVALID_ARGUMENT, UNSUPPORTED_TYPE, DETACHED_BUFFER, INVALID_OPTION, PATH_UNAVAILABLE,
   *   DEVICE_LOST, ABORTED, QUEUE_FULL, WORKER_FAILED, DESTROYED
   *
   * CPU: 32 elements compared at a time against the input shifted by one (SIMD bitmask), one
   * segment a worker, runs crossing a boundary merged (Rutter's stitch). GPU: PARLE (Balevic).
   */
  async rleEncode<T extends ParleArray>(input: T, options?: OpOptions & { to?: 'host' }): Promise<Runs<T>>;
  async rleEncode(input: DeviceArray, options?: OpOptions & { to?: 'device' }): Promise<DeviceRuns>;
  async rleEncode(input: Data, options?: OpOptions): Promise<Runs | DeviceRuns>;
  async rleEncode(input: Data, options?: OpOptions): Promise<Runs | DeviceRuns> {
    checkData(input, 'input');
    const route = await this.route('rleEncode', input, checkOptions(options, 'rleEncode'));
    const { to, signal } = route;
    const bytes = input.byteLength;
    return this.admit(signal, () =>
      this.withFallback(route, async (path) => {
        let runs: { values: Data; lengths: Data };
        if (path === 'cpu') {
          const host = await this.toHost(input);
          runs = await rleEncodeOnCpu(this.cpu, host, signal);
        } else {
          const device = await this.toDevice(input);
          try {
            runs = await rleEncodeOnGpu(this.gpu, device);
          } finally {
            if (device !== input) device.destroy();
          }
        }
        const outBytes = runs.values.byteLength + runs.lengths.byteLength;
        if (bytes > 0) this.rleRatio = 0.8 * this.rleRatio + 0.2 * Math.min(2, outBytes / bytes);
        return { values: await this.deliver(runs.values, to), lengths: await this.deliver(runs.lengths, to) } as Runs | DeviceRuns;
      }),
    );
  }

  /**
   * Expands runs: values[i] repeated lengths[i] times, in order. The inverse of
   * {@link rleEncode}; values [0,2,9], lengths [1,2,3] -> [0,2,2,9,9,9]. Zero lengths are
   * allowed and contribute nothing.
   *
   * @param runs values: any element type, r elements; lengths: u32, r run lengths; both on the
   *   host or both on the GPU.
   * @returns a new array of the values' type, sum(lengths) elements.
   * @throws ParleError INVALID_ARGUMENT, DETACHED_BUFFER, LENGTH_MISMATCH, TOO_LARGE (sum over
   *   2^32 - 1 elements), INVALID_OPTION, PATH_UNAVAILABLE, DEVICE_LOST, ABORTED, DESTROYED
   */
  async rleDecode<O extends ParleArray>(runs: Runs, options: RleDecodeOptions & { out: O; to?: 'host' }): Promise<O>;
  async rleDecode<T extends ParleArray>(runs: Runs<T>, options?: RleDecodeOptions & { out?: undefined; to?: 'host' }): Promise<T>;
  async rleDecode(runs: DeviceRuns, options?: RleDecodeOptions & { out?: undefined; to?: 'device' }): Promise<DeviceArray>;
  async rleDecode(runs: Runs | DeviceRuns, options?: RleDecodeOptions): Promise<Data>;
  async rleDecode(runs: Runs | DeviceRuns, options?: RleDecodeOptions): Promise<Data> {
    if (runs === null || typeof runs !== 'object') {
      throw new ParleError(ErrorCodes.INVALID_ARGUMENT, 'runs must be an object { values, lengths }');
    }
    checkData(runs.values, 'runs.values');
    checkData(runs.lengths, 'runs.lengths', ['u32']);
    if (runs.values instanceof DeviceArray !== runs.lengths instanceof DeviceArray) {
      throw new ParleError(ErrorCodes.INVALID_ARGUMENT, 'runs.values and runs.lengths must both be on the host or both on the GPU');
    }
    if (runs.values.length !== runs.lengths.length) {
      throw new ParleError(
        ErrorCodes.LENGTH_MISMATCH,
        `runs.values has ${runs.values.length} elements but runs.lengths has ${runs.lengths.length}`,
      );
    }
    const opts = checkOptions(options, 'rleDecode');
    const out = checkOutOption(opts, elementTypeOfData(runs.values), undefined, [runs.values, runs.lengths]);
    const sizes = this.rleDecodeSizes(runs.values, runs.lengths);
    const route = await this.route('rleDecode', runs.values, opts, sizes);
    const { to, signal } = route;
    return this.admit(signal, () =>
      this.withFallback(route, async (path) => {
        let result: Data;
        if (path === 'cpu') {
          const values = await this.toHost(runs.values);
          const lengths = await this.toHost<Uint32Array>(runs.lengths);
          // host lengths were summed for the route; lengths read back from the GPU are summed here
          const total = sizes.elements ?? this.cpu.sumLengths(lengths);
          if (total > DEFAULT_MAX_ELEMENTS) {
            throw new ParleError(ErrorCodes.TOO_LARGE, `the runs expand to ${total} elements, more than 2^32 - 1`);
          }
          if (out !== undefined && out.length !== total) {
            throw new ParleError(ErrorCodes.LENGTH_MISMATCH, `options.out holds ${out.length} elements; the runs expand to ${total}`);
          }
          result = await rleDecodeOnCpu(this.cpu, values, lengths, total, signal, out as typeof values | undefined);
        } else {
          const values = await this.toDevice(runs.values);
          const lengths = await this.toDevice(runs.lengths);
          // host lengths were summed for the route: the decode sizes its output without reading
          // the sum back (one submission, as for rleEncode's runs)
          if (lengths !== runs.lengths && sizes.elements !== undefined) this.gpu.noteLengthSum(lengths, sizes.elements);
          try {
            result = await rleDecodeOnGpu(this.gpu, values, lengths);
          } finally {
            if (values !== runs.values) values.destroy();
            if (lengths !== runs.lengths) lengths.destroy();
          }
        }
        return this.deliverInto(result, to, out);
      }),
    );
  }

  /**
   * Stable LSD radix sort, ascending, 8-bit digits. f32 and f64 keys sort in IEEE 754
   * totalOrder: -NaN < -Infinity < ... < -0 < +0 < ... < +Infinity < +NaN (the NaN that
   * arithmetic makes is +NaN, so it sorts last); i32 and i64 as signed integers; bit patterns
   * are kept. keys [2, -0, NaN, -1, 0] with values [0,1,2,3,4] -> keys [-1, -0, 0, 2, NaN],
   * values [3,1,4,0,2].
   *
   * @param keys n keys: Uint32Array, Int32Array or Float32Array (either path, or a DeviceArray
   *   of them), or BigUint64Array, BigInt64Array or Float64Array (u64, i64, f64: the CPU path
   *   only; `path: 'auto'` runs them there and `path: 'gpu'` is UNSUPPORTED_TYPE).
   * @param options.values optional u32 values carried with their keys (4 bytes each, also with
   *   64-bit keys); equal keys keep their input order.
   * @returns `keys` alone as a new sorted array, or `{ keys, values }` when values were given.
   * @throws ParleError INVALID_ARGUMENT, UNSUPPORTED_TYPE (keys of i8, u8, i16, u16, f16; u64,
   *   i64, f64 with `path: 'gpu'`), DETACHED_BUFFER, LENGTH_MISMATCH, TOO_LARGE (keys and
   *   scratch beyond 4 GiB of wasm memory), INVALID_OPTION, PATH_UNAVAILABLE
   *
   * CPU: each worker sorts a segment (LSD, all digit histograms in one pass, passes whose digit
   * is equal in every key skipped; 64-bit keys: eight digits, assembly/radix-sort.ts
   * radixSort64), then sorted segments are merged (merge path); large inputs on several workers
   * split by their top varying digit first. GPU: one OneSweep pass per 8-bit digit after one
   * histogram of all four (Adinets and Merrill 2022; ts/gpu/radix-sort.ts).
   */
  async sort<O extends SortKeys>(keys: SortKeys, options: SortOptions & { values?: undefined; out: O; to?: 'host' }): Promise<O>;
  async sort<K extends SortKeys>(keys: K, options?: SortOptions & { values?: undefined; out?: undefined; to?: 'host' }): Promise<K>;
  async sort<K extends SortKeys>(
    keys: K,
    options: SortOptions & { values: Uint32Array; to?: 'host' },
  ): Promise<{ keys: K; values: Uint32Array }>;
  async sort(
    keys: DeviceArray,
    options?: SortOptions & { values?: undefined; out?: undefined; outValues?: undefined; to?: 'device' },
  ): Promise<DeviceArray>;
  async sort(
    keys: DeviceArray,
    options: SortOptions & { values: DeviceArray; out?: undefined; outValues?: undefined; to?: 'device' },
  ): Promise<{ keys: DeviceArray; values: DeviceArray }>;
  async sort(keys: Data, options?: SortOptions): Promise<Data | { keys: Data; values: Data }>;
  async sort(keys: Data, options?: SortOptions): Promise<Data | { keys: Data; values: Data }> {
    checkData(keys, 'keys', SORT_KEY_TYPES);
    const opts = checkOptions(options, 'sort');
    const values = opts.values as Uint32Array | DeviceArray | undefined;
    if (values !== undefined) {
      checkData(values, 'options.values', ['u32']);
      if (values.length !== keys.length) {
        throw new ParleError(ErrorCodes.LENGTH_MISMATCH, `options.values has ${values.length} elements but keys has ${keys.length}`);
      }
    }
    const keysOut = checkOutOption(opts, elementTypeOfData(keys), keys.length, values ? [keys, values] : [keys], true);
    const valuesOut = values ? checkOutOption(opts, 'u32', keys.length, [values, keys], true, 'outValues') : undefined;
    const route = await this.route('sort', keys, opts);
    const { to, signal } = route;
    return this.admit(signal, () =>
      this.withFallback(route, async (path) => {
        let sorted: { keys: Data; values?: Data };
        if (path === 'cpu') {
          const hostKeys = await this.toHost<SortKeys>(keys);
          const hostValues = values && (await this.toHost<Uint32Array>(values));
          sorted = await sortOnCpu(this.cpu, hostKeys, hostValues, signal);
        } else {
          const deviceKeys = await this.toDevice(keys);
          const deviceValues = values && (await this.toDevice(values));
          try {
            sorted = await sortOnGpu(this.gpu, deviceKeys, deviceValues);
          } finally {
            if (deviceKeys !== keys) deviceKeys.destroy();
            if (deviceValues && deviceValues !== values) deviceValues.destroy();
          }
        }
        // (the sorted arrays are copied into caller-owned ones: the sort needs its own scratch)
        const inputs = values ? [keys, values] : [keys];
        const outKeys = await this.deliverInto(sorted.keys, to, keysOut, inputs);
        if (!values) return outKeys;
        return { keys: outKeys, values: await this.deliverInto(sorted.values as Data, to, valuesOut, inputs) };
      }),
    );
  }

  /**
   * Prefix sum. Exclusive: out[i] = in[0] + ... + in[i-1] (out[0] = 0); inclusive: out[i] =
   * in[0] + ... + in[i]. in [3,1,4,1,5] -> exclusive [0,3,4,8,9], inclusive [3,4,8,9,14].
   * u32 and i32 wrap modulo 2^32. f32 sums in float32, associated per segment (CPU) or per tile
   * (GPU), so results may differ from a sequential loop in the last bits.
   *
   * @param input Uint32Array, Int32Array or Float32Array of n elements (or a DeviceArray).
   * @returns a new array of the same type and length.
   * @throws ParleError INVALID_ARGUMENT, UNSUPPORTED_TYPE, DETACHED_BUFFER, INVALID_OPTION,
   *   PATH_UNAVAILABLE, DEVICE_LOST, ABORTED, QUEUE_FULL, DESTROYED
   *
   * CPU: reduce each segment, scan the segment sums, scan each segment from its carry. GPU:
   * single-pass chained scan with decoupled look-back and fallback (Smith, Levien, Owens 2025).
   */
  async scan<O extends Uint32Array | Int32Array | Float32Array>(
    input: Uint32Array | Int32Array | Float32Array,
    options: ScanOptions & { out: O; to?: 'host' },
  ): Promise<O>;
  async scan<T extends Uint32Array | Int32Array | Float32Array>(
    input: T,
    options?: ScanOptions & { out?: undefined; to?: 'host' },
  ): Promise<T>;
  async scan(input: DeviceArray, options?: ScanOptions & { out?: undefined; to?: 'device' }): Promise<DeviceArray>;
  async scan(input: Data, options?: ScanOptions): Promise<Data>;
  async scan(input: Data, options?: ScanOptions): Promise<Data> {
    checkData(input, 'input', ['u32', 'i32', 'f32']);
    const opts = checkOptions(options, 'scan');
    if (opts.inclusive !== undefined && typeof opts.inclusive !== 'boolean') {
      throw new ParleError(ErrorCodes.INVALID_OPTION, `options.inclusive must be a boolean; got ${String(opts.inclusive)}`);
    }
    const inclusive = opts.inclusive === true;
    // the input itself may be the out (in place); other overlap is refused
    const out = checkOutOption(opts, elementTypeOfData(input), input.length, [input], true);
    const route = await this.route('scan', input, opts);
    const { to, signal } = route;
    return this.admit(signal, () =>
      this.withFallback(route, async (path) => {
        let result: Data;
        if (path === 'cpu') {
          const host = await this.toHost<Uint32Array>(input);
          result = await scanOnCpu(this.cpu, host, inclusive, signal, out as Uint32Array | undefined);
        } else {
          const device = await this.toDevice(input);
          try {
            result = await scanOnGpu(this.gpu, device, { inclusive });
          } finally {
            if (device !== input) device.destroy();
          }
        }
        return this.deliverInto(result, to, out);
      }),
    );
  }

  /**
   * Compresses an array into a version-3 .parle container (docs/format.md): chunks of
   * `chunkBytes`, each coded by a pipeline of delta, byte-plane shuffle, RLE and Huffman stages
   * that the chooser picks per chunk at `level` (`codec: 'auto'`) or `codec` fixes, or stored raw
   * when nothing is smaller, with tree-hash (XXH32) checksums; chunks in parallel on the workers
   * (every worker takes chunks from one job table: ts/codec/cpu/batch.ts). The
   * result is at most the input's bytes + 32 + 32 per chunk. Two paths: the CPU (a DeviceArray
   * input is read back first; a resident input is read in place), or the GPU (Rutter's case: data
   * on the GPU, the container wanted on the host): checksums, deltas, byte planes, histograms,
   * rle streams, Huffman streams and the payloads' layout and checksums on the GPU, and the
   * container read back once (ts/codec/gpu/encode.ts). Its candidates are huffman and rle (with
   * or without huffman) after each transform (none, delta, shuffle, delta+shuffle), pack and
   * delta+pack (elements of 2 or 4 bytes), and stage 7 with the linear predictors and every map of
   * f32 and f64 (the shape's plan, or a flat array's record stride), each sized exactly and the
   * smallest taken, so `auto` may pick another pipeline than the CPU path; a fixed one of them
   * writes the CPU path's bytes (other pipelines: the runs are read back and coded on the workers,
   * ts/codec/gpu/compress.ts). A shaped array on the host goes to the CPU path unless
   * `path: 'gpu'`.
   *
   * The container is wanted on the host unless `to: 'device'` (the default is `'host'` even for
   * a DeviceArray input): then it is a u8 DeviceArray of the same bytes, which the GPU path
   * builds in place (only the payloads' checksums are read back, the header and chunk entries
   * written on the GPU: ts/codec/gpu/encode.ts compressToDevice) and the other ways upload;
   * decompress takes it as it is.
   *
   * @returns a new Uint8Array on the host, or a view of `options.out`; with `to: 'device'` a new
   *   DeviceArray (type u8, length the container's bytes).
   * @throws ParleError INVALID_ARGUMENT (also `out` overlapping the input), LENGTH_MISMATCH
   *   (`out` shorter than compressBound), DETACHED_BUFFER, INVALID_OPTION (also `out` with `to:
   *   'device'`), PATH_UNAVAILABLE, TOO_LARGE (path 'gpu': beyond what RLE encode binds),
   *   DEVICE_LOST, ABORTED, QUEUE_FULL, WORKER_FAILED, DESTROYED
   */
  async compress(input: Data, options: CompressToDeviceOptions): Promise<DeviceArray>;
  async compress(input: Data, options?: CompressOptions): Promise<Uint8Array>;
  async compress(input: Data, options?: CompressOptions | CompressToDeviceOptions): Promise<Uint8Array | DeviceArray> {
    const given = checkData(input, 'input');
    const opts = checkOptions(options, 'compress');
    const settings = opts.plan !== undefined ? plannedSettings(opts, given, input.length) : compressSettings(opts, given, input.length);
    const type = settings.type ?? given;
    const to = checkChoice(opts.to, 'options.to', ['host', 'device'] as const, 'host');
    if (to === 'device' && opts.out !== undefined) {
      throw new ParleError(ErrorCodes.INVALID_OPTION, "options.out is a host array: not with to: 'device'");
    }
    const out = checkOutOption(opts, 'u8', undefined, [input]) as Uint8Array | undefined;
    if (out !== undefined) {
      const bound =
        compressBound(input.length, type, chunkLengthOf(settings, type) * elementSize(type)) + shapeBlockBytes(settings.shape?.length ?? 0);
      if (out.length < bound) {
        throw new ParleError(
          ErrorCodes.LENGTH_MISMATCH,
          `options.out holds ${out.length} bytes; the container may take up to ${bound} (compressBound)`,
        );
      }
    }
    const route = await this.route('compress', input, { ...opts, to });
    return this.admit(route.signal, () =>
      this.withFallback(route, async (path) => {
        // the route on this path: chosen by the codec (ts/codec/compress.ts), the transfers here
        // (a shaped array on the host that the cost model sent to the GPU stays on the CPU
        // path: the GPU's writer is there for arrays that live on it, or a caller who asks for it)
        const hostShaped = !(input instanceof DeviceArray) && opts.path !== 'gpu' && settings.shape !== undefined;
        const chosen = hostShaped ? 'cpu' : compressRoute(path, to, settings, { type, length: input.length });
        if (chosen === 'cpu') {
          const container = await compressOn(chosen, this.cpu, null, await this.toHost(input), settings, out);
          return (await this.deliver(container, to)) as Uint8Array | DeviceArray;
        }
        const device = await this.toDevice(input);
        try {
          // 'gpu-to-device' and 'gpu-lossy-to-device' build the container in place on the GPU:
          // nothing to deliver
          const container = await compressOn(chosen, this.cpu, this.gpu, device, settings, out);
          return container instanceof DeviceArray ? container : ((await this.deliver(container, to)) as Uint8Array | DeviceArray);
        } finally {
          if (device !== input) device.destroy();
        }
      }),
    );
  }

  /**
   * Decompresses a .parle container into a new typed array of the type it was compressed from,
   * or, with `to: 'device'`, a DeviceArray. Two paths: the CPU decodes every chunk on the worker
   * pool and checks both of its checksums (payload and decoded elements), then uploads when the
   * result is wanted on the GPU; the GPU path (Haugen's case: a file on the host, its elements
   * wanted on the GPU) uploads the container (the compressed size crosses the bus) and decodes
   * every chunk on the GPU in one submission, both checksums checked there
   * (ts/codec/gpu/decode.ts; a version-1 container: its run lengths decoded on the CPU and
   * expanded on the GPU, the decoded elements' checksums not checked, ts/codec/gpu/decompress.ts).
   * `auto` picks by the cost model. Nothing of the claimed size is allocated before the whole
   * chunk table was found in `bytes`.
   *
   * A container that lives on the GPU (a u8 DeviceArray, e.g. `engine.upload(packed)` or
   * `engine.wrap(buffer, 'u8', bytes)`) decodes there by default (`path: 'auto'` and `'gpu'`;
   * `auto` reads it back and decodes it on the CPU where the GPU fails with TOO_LARGE or OUT_OF_MEMORY):
   * only the chunk table, the stream directories and the streams' first bytes are read back to
   * plan the decode (ts/codec/gpu/device-container.ts), and the result is a DeviceArray unless
   * `to: 'host'`; `path: 'cpu'` reads the container back and decodes it on the CPU.
   *
   * A list of containers in host memory (`decompress([c1, c2, ...], { to: 'device' })`, all of
   * one element type) decodes to one array of their elements one after another: on the GPU path
   * every chunk of every container in one decode (a viewer's hundreds of small Zarr chunks or
   * volume bricks at the cost of one container), on the CPU each container into its place.
   * Without `out` and `place`; `maxElements` bounds the total; chunk numbers in errors count
   * through the list.
   *
   * @param bytes the container: a Uint8Array (other views are read as their bytes) or a u8
   *   DeviceArray (not modified; it must stay alive until the promise settles); or a list of
   *   Uint8Array containers.
   * @returns `options.out` when given (typed as it: `decompress(c, { out: f32 })` is a
   *   Float32Array); else a new array typed as the union {@link ParleArray}, whose element type
   *   the container's header holds (check it with `instanceof`), or a DeviceArray with `to: 'device'`.
   * @throws ParleError INVALID_OPTION (an unknown key, a bad value: `option` names it), NOT_PARLE,
   *   UNSUPPORTED_VERSION, TRUNCATED, CORRUPT, CHECKSUM_MISMATCH, LIMIT_EXCEEDED (more elements
   *   than `maxElements`), INVALID_ARGUMENT, DETACHED_BUFFER,
   *   PATH_UNAVAILABLE, TOO_LARGE (path gpu: runs beyond one storage binding), DEVICE_LOST, ABORTED,
   *   QUEUE_FULL, DESTROYED
   */
  async decompress<O extends ParleArray>(bytes: Uint8Array | DeviceArray, options: DecompressOptions & { out: O; to?: 'host' }): Promise<O>;
  async decompress(bytes: DeviceArray, options?: DecompressOptions & { out?: undefined; to?: 'device' }): Promise<DeviceArray>;
  async decompress(bytes: Uint8Array | DeviceArray, options: DecompressOptions & { out?: undefined; to: 'host' }): Promise<ParleArray>;
  async decompress(bytes: Uint8Array, options?: DecompressOptions & { out?: undefined; to?: 'host' }): Promise<ParleArray>;
  async decompress(bytes: Uint8Array | DeviceArray, options: DecompressOptions & { out?: undefined; to: 'device' }): Promise<DeviceArray>;
  async decompress(bytes: Uint8Array | DeviceArray, options?: DecompressOptions): Promise<Data>;
  async decompress(list: readonly Uint8Array[], options: DecompressOptions & { out?: undefined; to: 'device' }): Promise<DeviceArray>;
  async decompress(list: readonly Uint8Array[], options?: DecompressOptions & { out?: undefined; to?: 'host' }): Promise<ParleArray>;
  async decompress(input: Uint8Array | DeviceArray | readonly Uint8Array[], options?: DecompressOptions): Promise<Data> {
    if (Array.isArray(input)) return this.decompressList(input, options);
    const bytes = input as Uint8Array | DeviceArray;
    if (!(bytes instanceof DeviceArray)) checkArray(bytes, 'bytes');
    else this.gpu.checkInput(bytes, 'bytes', ['u8']);
    const opts = checkOptions(options, 'decompress');
    const maxElements =
      opts.maxElements === undefined ? this.maxElements : checkInteger(opts.maxElements, 'options.maxElements', 0, Number.MAX_SAFE_INTEGER);
    const out = opts.out as ParleArray | undefined;
    if (out !== undefined) {
      checkArray(out, 'options.out');
      if (opts.to === 'device') throw new ParleError(ErrorCodes.INVALID_OPTION, "options.out is a host array: not with to: 'device'");
    }
    const place = opts.place as Placement | undefined;
    if (place !== undefined && (out === undefined || bytes instanceof DeviceArray))
      throw new ParleError(ErrorCodes.INVALID_OPTION, 'options.place needs options.out and a container on the host', { option: 'place' });
    if (bytes instanceof DeviceArray) return this.decompressDevice(bytes, opts, maxElements, out);
    // a placement decodes on the CPU
    const route = await this.route('decompress', bytes, place === undefined ? opts : { ...opts, path: 'cpu' });
    const { to, signal } = route;
    const view = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const bytesResident = this.cpu.isResident(bytes);
    return this.admit(signal, () =>
      this.withFallback(route, async (path) => {
        // (chunks the GPU does not decode go through the CPU there: ts/codec/gpu/decompress.ts)
        if (path === 'gpu') {
          const onDevice = await decompressToDevice(this.cpu, this.gpu, view, maxElements, signal);
          return this.deliverDecoded(onDevice, to, out, view, bytesResident);
        }
        const result = await decompressBytes(this.cpu, view, maxElements, signal, {
          out,
          bytesResident,
          ...(place !== undefined ? { place } : {}),
        });
        return this.deliver(result, to);
      }),
    );
  }

  /**
   * {@link decompress} of a list of containers in host memory: their elements one after another
   * in one array (all of one element type), a DeviceArray with `to: 'device'`, where one decode
   * takes every chunk of every container (ts/codec/gpu/decompress.ts decompressListToDevice: a
   * viewer's hundreds of small chunks at the cost of one container); else a host array, each
   * container decoded on the CPU into its place. Options as for one container but `out` and
   * `place`; `maxElements` bounds the list's total.
   */
  private async decompressList(list: readonly Uint8Array[], options?: DecompressOptions): Promise<Data> {
    list.forEach((b, i) => checkArray(b, `bytes[${i}]`));
    if (list.length === 0) throw new ParleError(ErrorCodes.INVALID_ARGUMENT, 'decompress of a list needs at least one container');
    const opts = checkOptions(options, 'decompress');
    if (opts.out !== undefined || opts.place !== undefined)
      throw new ParleError(ErrorCodes.INVALID_OPTION, 'options.out and options.place take one container, not a list', {
        option: opts.out !== undefined ? 'out' : 'place',
      });
    const maxElements =
      opts.maxElements === undefined ? this.maxElements : checkInteger(opts.maxElements, 'options.maxElements', 0, Number.MAX_SAFE_INTEGER);
    const decoded = list.reduce((sum, b) => sum + this.modelBytes('decompress', b), 0);
    const route = await this.route('decompress', list[0], opts, { bytes: decoded });
    const { to, signal } = route;
    const views = list.map((b) => new Uint8Array(b.buffer, b.byteOffset, b.byteLength));
    return this.admit(signal, () =>
      this.withFallback(route, async (path) => {
        if (path === 'gpu') return this.deliver(await decompressListToDevice(this.cpu, this.gpu, views, maxElements, signal), to);
        const out = await decompressList(this.cpu, views, maxElements, signal);
        return this.deliver(out, to);
      }),
    );
  }

  /**
   * A GPU decode's result where the call wants it: into `out` (checked against the result's type
   * and length and against the `input` it must not overlap; the DeviceArray destroyed), else
   * where `to` says.
   */
  private async deliverDecoded(
    onDevice: DeviceArray,
    to: Location,
    out: ParleArray | undefined,
    input: Uint8Array,
    inputResident: boolean,
  ): Promise<Data> {
    if (out === undefined) return this.deliver(onDevice, to);
    try {
      checkOut(this.cpu, out, onDevice.type, onDevice.length, input, inputResident);
      return await this.gpu.download(onDevice, { into: out });
    } finally {
      onDevice.destroy();
    }
  }

  /** {@link decompress} of a container in a u8 DeviceArray, its options checked. */
  private async decompressDevice(
    container: DeviceArray,
    opts: DecompressOptions,
    maxElements: number,
    out: ParleArray | undefined,
  ): Promise<Data> {
    const gpu = this.gpu;
    // the data lives on the GPU: it is decoded there unless the CPU is asked for (auto falls back
    // to the CPU where the GPU cannot take it: TOO_LARGE, OUT_OF_MEMORY)
    const requested = checkChoice(opts.path, 'options.path', ['auto', 'cpu', 'gpu'] as const, 'auto');
    const routed = await this.route('decompress', container, { ...opts, path: requested === 'cpu' ? 'cpu' : 'gpu' });
    const route: Route = { ...routed, auto: requested === 'auto' };
    const { to, signal } = route;
    return this.admit(signal, () =>
      this.withFallback(route, async (path) => {
        if (path === 'gpu') {
          const onDevice = await decompressDeviceContainer(this.cpu, gpu, container, maxElements, signal);
          return this.deliverDecoded(onDevice, to, out, new Uint8Array(0), false);
        }
        const bytes = (await gpu.download(container)) as Uint8Array;
        const result = await decompressBytes(this.cpu, bytes, maxElements, signal, { out });
        return this.deliver(result, to);
      }),
    );
  }

  /**
   * A streaming compressor for `elementCount` elements of `type`, fed with their little-endian
   * bytes in pieces of any size; memory stays bounded by two batches of chunks of about 4 MiB
   * (see ts/codec/stream.ts). Options ({@link CompressorOptions}): `chunkBytes`, `codec`,
   * `level`, `errorBound`, `decoder` (as {@link compress}), `explain` (the chooser's reasons in
   * the writer's reports), `signal` (aborts the chunks in flight and later calls: ABORTED). Each
   * `write` and `end` goes through the engine's queue (QUEUE_FULL, DESTROYED).
   * @param type the elements' type, `'u8'` to `'f32'`.
   * @param elementCount elements in all (the header records it), 0 to 2^53 - 1.
   * @throws ParleError INVALID_OPTION (an unknown key or a bad value, `option` naming it; also a
   *   bad `type` or `elementCount`), DESTROYED
   */
  createCompressor(type: ElementType, elementCount: number, options?: CompressorOptions): ContainerWriter {
    const opts = checkOptions(options, 'createCompressor') as CompressorOptions;
    if (!isElementType(type))
      throw new ParleError(ErrorCodes.INVALID_OPTION, `type must be one of ${ELEMENT_TYPES.join(', ')}; got ${String(type)}`);
    checkInteger(elementCount, 'elementCount', 0, Number.MAX_SAFE_INTEGER);
    const settings = compressSettings(opts as Record<string, unknown>, type, elementCount);
    if (opts.explain !== undefined && typeof opts.explain !== 'boolean') {
      throw new ParleError(ErrorCodes.INVALID_OPTION, `options.explain must be a boolean; got ${String(opts.explain)}`);
    }
    return new ContainerWriter(this.cpu, type, elementCount, { ...settings, explain: opts.explain === true }, (work) =>
      this.admit(settings.signal, work),
    );
  }

  /**
   * A streaming decompressor: container bytes in, checked element bytes out, chunk by chunk.
   * Options ({@link DecompressorOptions}): `maxElements`; `out`, a caller-owned array for the whole result (the container's
   * type and element count, checked when the header arrives: the pieces handed out are then views
   * of it, decoded in place when it lives in the engine's memory); `signal` (ABORTED). Each
   * `write` and `end` goes through the engine's queue (QUEUE_FULL, DESTROYED).
   * @throws ParleError INVALID_ARGUMENT, INVALID_OPTION, DESTROYED
   */
  createDecompressor(options?: DecompressorOptions): ContainerReader {
    const opts = checkOptions(options, 'createDecompressor') as DecompressorOptions;
    const maxElements =
      opts.maxElements === undefined
        ? Number.MAX_SAFE_INTEGER
        : checkInteger(opts.maxElements, 'options.maxElements', 0, Number.MAX_SAFE_INTEGER);
    if (opts.out !== undefined) checkArray(opts.out, 'options.out');
    const signal = checkSignal(opts.signal);
    return new ContainerReader(this.cpu, {
      maxElements,
      out: opts.out,
      signal,
      admit: (work) => this.admit(signal, work),
    });
  }

  /**
   * Which path `auto` would take for `op` on `input`, the predicted milliseconds of each path
   * (transfers included) and why. `input` is the data, or its shape: `{ byteLength, location }`
   * (e.g. a file not yet read). For rleDecode, pass the runs (`{ values, lengths }`: the decoded
   * size is then exact), their values alone, or the runs' shape (decoded size estimated from
   * earlier rleEncode calls). Uses the rates calibrated so far (defaults before the first
   * calibration; `await engine.calibrate()` first to see the calibrated choice). explain predicts
   * afresh; `auto` reuses a shape's choice for up to 8 calls of the same byte counts, sooner
   * predicting again when that shape's call history moves (CostModel.choose), so right after a
   * change in the history the two may differ for a few calls.
   * @throws ParleError INVALID_ARGUMENT (unknown op or input), INVALID_OPTION
   */
  explain(
    op: OpName,
    input: Data | Runs | DeviceRuns | { byteLength: number; location?: Location },
    options?: ExplainOptions,
  ): Explanation {
    const opts = checkOptions(options, 'explain') as ExplainOptions;
    if (!OPS.includes(op)) {
      throw new ParleError(ErrorCodes.INVALID_ARGUMENT, `op must be one of ${OPS.join(', ')}; got ${String(op)}`);
    }
    void this.cpu;
    const isRuns = (x: unknown): x is Runs | DeviceRuns =>
      x !== null && typeof x === 'object' && !ArrayBuffer.isView(x) && !(x instanceof DeviceArray) && 'values' in x && 'lengths' in x;
    if (op === 'rleDecode' && isRuns(input)) {
      checkData(input.values, 'input.values');
      checkData(input.lengths, 'input.lengths', ['u32']);
      const from: Location = input.values instanceof DeviceArray ? 'device' : 'host';
      const to = checkChoice(opts.to, 'options.to', ['host', 'device'] as const, from);
      const sizes = this.rleDecodeSizes(input.values, input.lengths);
      return this.predictFor(op, sizes.bytes, from, to, true, sizes);
    }
    if (isRuns(input)) {
      throw new ParleError(ErrorCodes.INVALID_ARGUMENT, `runs ({ values, lengths }) describe an rleDecode input, not a ${op} input`);
    }
    let from: Location;
    if (input instanceof DeviceArray || ArrayBuffer.isView(input)) {
      checkData(input, 'input');
      from = input instanceof DeviceArray ? 'device' : 'host';
    } else if (input !== null && typeof input === 'object' && Number.isSafeInteger(input.byteLength) && input.byteLength >= 0) {
      from = checkChoice(input.location, 'input.location', ['host', 'device'] as const, 'host');
    } else {
      throw new ParleError(ErrorCodes.INVALID_ARGUMENT, 'input must be a typed array, a DeviceArray or { byteLength, location }');
    }
    const to = checkChoice(opts.to, 'options.to', ['host', 'device'] as const, op === 'compress' ? 'host' : from);
    if (op === 'rleDecode') {
      const sizes =
        input instanceof DeviceArray || ArrayBuffer.isView(input)
          ? this.rleDecodeSizes(input as Data)
          : { bytes: input.byteLength, workBytes: Math.ceil(input.byteLength / this.rleRatio) };
      return this.predictFor(op, sizes.bytes, from, to, true, sizes);
    }
    const bytes =
      input instanceof DeviceArray || ArrayBuffer.isView(input)
        ? this.modelBytes(op, input as Data)
        : op === 'decompress'
          ? Math.ceil(input.byteLength / this.rleRatio)
          : input.byteLength;
    const explanation = this.predictFor(op, bytes, from, to);
    // elements of a type the GPU's kernels do not take run on the CPU, as route() sends them
    const dataType =
      (ArrayBuffer.isView(input) || input instanceof DeviceArray) && op !== 'decompress' ? elementTypeOfData(input as Data) : undefined;
    if (dataType !== undefined && !gpuTakes(op, dataType, from)) {
      return {
        ...explanation,
        path: 'cpu',
        predictedMs: { cpu: explanation.predictedMs.cpu, gpu: null },
        reason:
          op === 'compress'
            ? `compress of ${dataType} elements on the host runs on the CPU path (from a DeviceArray, or with path: 'gpu', the GPU writes them)`
            : `${op} of ${dataType} elements has no GPU kernel, so the CPU path runs`,
      };
    }
    // decompress takes a container on the GPU there without asking the model (decompressDevice)
    if (op === 'decompress' && from === 'device' && this.gpuContext !== null && !this.gpuContext.isLost) {
      return {
        ...explanation,
        path: 'gpu',
        reason: "the container lives on the GPU: it is decoded there (path 'cpu' reads it back first)",
      };
    }
    return explanation;
  }

  /**
   * Decides once what `compress` decides for every call before coding chunks: the settings of
   * `options` (as compress's) and the predict stage over `sample`'s shape or record stride
   * (predictor, value map, fields: docs/format.md "Stage 7"). Pass the plan as
   * `compress(input, { plan })` for arrays of `sample`'s type and length whose values are of the
   * same kind (the chunks of one Zarr array: parle-codec/zarr plans on its first chunk): they skip
   * planning, which reads every element on the calling thread. Synchronous; `sample` is read,
   * not kept.
   * @throws ParleError INVALID_ARGUMENT, DETACHED_BUFFER, INVALID_OPTION
   */
  planCompress(sample: ParleArray, options?: ExplainCodecOptions): CompressPlan {
    const opts = checkOptions(options, 'planCompress');
    const given = checkArray(sample, 'sample');
    const settings = compressSettings(opts, given, sample.length);
    const type = settings.type ?? given;
    const bytes = new Uint8Array(sample.buffer, sample.byteOffset, sample.byteLength);
    return makeCompressPlan(settings, type, sample.length, predictPlanOf(settings, type, bytes));
  }

  /**
   * What `compress` codes each chunk of `input` with, and why: the chooser's size estimates of
   * the candidate pipelines (from one pass of statistics: byte histograms of each byte plane of
   * the elements and of their deltas, run counts), the candidates it encoded and their payload
   * sizes, and the pipeline kept. It compresses `input` on the CPU path to find out (same cost
   * as `compress`). Host arrays only.
   * @returns one report a chunk, in order.
   * @throws ParleError INVALID_ARGUMENT, DETACHED_BUFFER, INVALID_OPTION, ABORTED, DESTROYED
   */
  async explainCodec(input: ParleArray, options?: ExplainCodecOptions): Promise<ChunkReport[]> {
    const opts = checkOptions(options, 'explainCodec') as ExplainCodecOptions;
    const type = checkArray(input, 'input');
    const settings = compressSettings(opts as Record<string, unknown>, type, input.length);
    return this.admit(settings.signal, async () => (await compressArrayReport(this.cpu, input, { ...settings, explain: true })).reports);
  }

  /**
   * The header and chunk table of a container in memory, without decoding it (what `parle
   * inspect` prints): version, level, element type and count, the shape when the writer recorded
   * one (version 4), and each chunk's pipeline, sizes and checksums. Synchronous; reads only
   * the header and the entries.
   * @param bytes the container (a Uint8Array; not modified).
   * @throws ParleError INVALID_ARGUMENT, NOT_PARLE, UNSUPPORTED_VERSION, TRUNCATED, CORRUPT
   */
  inspect(bytes: Uint8Array): ContainerReport {
    checkArray(bytes, 'bytes');
    const view = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    return inspectContainer(readAtBytes(view), view.length);
  }

  /**
   * Makes an HTTP request (GET, or HEAD) and reads the response's body on one of the engine's
   * workers, which transfers it here: this thread (a page's main thread) then does not read the
   * network, and receives each body as one message. The worker with the fewest requests in
   * flight takes it, between its tasks. Without workers the request is made on this thread.
   * parle-codec/zarr's WorkerFetchStore reads a Zarr array's chunks through it. A status is not
   * an error: the caller reads `status` (a 404's body and a HEAD's are not read: empty). In Node
   * a `file:` URL is read from the file system as a server would answer it (200, 206 for a
   * `Range: bytes=a-b` or `bytes=-n` header, 404 for a missing file, 416 for a range it cannot
   * give; `content-length`).
   * @param url an absolute URL (a string or a URL): a worker would resolve a relative one
   *   against its own script, not the page
   * @param init `method` ('GET' default, 'HEAD'), `headers` (a record), `credentials`, `cache`,
   *   `redirect` (as fetch's RequestInit: what can be posted to a worker), `signal` (ABORTED;
   *   the worker's request is aborted too)
   * @returns the status, the headers (lower-case names) and the body's bytes
   * @throws ParleError INVALID_ARGUMENT (a relative URL), INVALID_OPTION (a key of `init` it does not take), IO_ERROR
   *   (fetch failed: a network error, CORS, a refused scheme; the message says which), ABORTED,
   *   WORKER_FAILED, DESTROYED
   */
  async fetchBytes(url: string | URL, init: WorkerRequestInit & { signal?: AbortSignal } = {}): Promise<FetchedResponse> {
    let href: string;
    try {
      href = new URL(url).href;
    } catch {
      throw new ParleError(ErrorCodes.INVALID_ARGUMENT, `fetchBytes needs an absolute URL; got ${String(url)}`);
    }
    const { signal, ...request } = init;
    checkRequestInit(request, 'fetchBytes', ['method', 'headers', 'credentials', 'cache', 'redirect']);
    const cpu = this.cpu;
    if (cpu.pool !== undefined) return cpu.pool.fetch(href, request, signal);
    if (signal?.aborted) throw abortError(signal);
    return responseOf(await fetchResponse(href, request, signal), href, signal);
  }

  /**
   * Fetches containers and decodes each into its place in `out`, on the workers: where they share
   * the engine's memory and `out` lies over a SharedArrayBuffer, the worker that fetched a
   * container decodes it and writes its elements to their place, and this thread sends one
   * message a worker and reads one answer for the whole list (ts/codec/cpu/fetched.ts): a
   * page's main thread does next to nothing while a Zarr array of hundreds of chunks is read
   * (parle-codec/zarr's createGet with a WorkerFetchStore). Elsewhere each container is fetched
   * with {@link fetchBytes} and decoded with `decompress(bytes, { out, place })`. Every request
   * runs to its end before an error is thrown (the first failed one's in the list's order): no
   * write into `out` follows the call. Six requests are in flight a worker.
   * @param requests each `{ url, place, headers? }`: an absolute URL of a container, where its
   *   elements go in `out` (as decompress's `place`: `place.shape` is the container's shape), and
   *   headers of that request (a record; added to `options.init.headers`)
   * @param options `out` (a host typed array of the containers' element type, not in the
   *   engine's memory; written at the places only), `init` (the requests' method-less
   *   RequestInit as {@link fetchBytes} takes it), `signal` (ABORTED)
   * @returns the indices of the requests the server answered 404, in order (their places are
   *   left as they were: a Zarr reader fills them)
   * @throws ParleError INVALID_ARGUMENT (a relative URL, `out`), INVALID_OPTION (a key of `init` it does not take; a placement), LENGTH_MISMATCH
   *   (a placement), IO_ERROR (a failed fetch, a status other than 200, 206 and 404), the reader's
   *   codes (NOT_PARLE, TRUNCATED, CORRUPT: also a container of another type, CHECKSUM_MISMATCH,
   *   ...), ABORTED, QUEUE_FULL, WORKER_FAILED, DESTROYED
   */
  async fetchAndDecompress(
    requests: readonly { url: string | URL; place: Placement; headers?: Record<string, string> }[],
    options: { out: ParleArray; init?: Omit<WorkerRequestInit, 'method'>; signal?: AbortSignal },
  ): Promise<number[]> {
    const { out, init = {}, signal } = options;
    checkArray(out, 'options.out');
    checkRequestInit(init, 'fetchAndDecompress', ['headers', 'credentials', 'cache', 'redirect']);
    if (this.cpu.isResident(out))
      throw new ParleError(ErrorCodes.INVALID_ARGUMENT, "options.out must be a host array, not in the engine's memory");
    const list = requests.map((r, i) => {
      let url: string;
      try {
        url = new URL(r.url).href;
      } catch {
        throw new ParleError(ErrorCodes.INVALID_ARGUMENT, `request ${i}: fetchAndDecompress needs an absolute URL; got ${String(r.url)}`);
      }
      const headers = { ...init.headers, ...r.headers };
      return { url, place: r.place, init: { ...init, method: 'GET' as const, headers } };
    });
    const onWorkers = this.cpu.pool !== undefined && this.cpu.shared && out.buffer instanceof SharedArrayBuffer;
    return this.admit(signal, async () => {
      if (onWorkers) return decompressFetched(this.cpu, list, out, signal);
      // six requests in flight a worker (or six), each decoded as it arrives; every one runs
      // (its error kept, not thrown: mapLimited would stop starting the rest)
      const missing: number[] = [];
      const errors: { index: number; error: unknown }[] = [];
      await mapLimited(list.length, 6 * Math.max(1, this.workers), async (i) => {
        const { url, init: request, place } = list[i];
        try {
          const response = await this.fetchBytes(url, { ...request, ...(signal ? { signal } : {}) });
          if (response.status === 404) missing.push(i);
          else if (response.status !== 200 && response.status !== 206)
            throw new ParleError(ErrorCodes.IO_ERROR, `${url}: unexpected response status ${response.status} ${response.statusText}`);
          else await decompressPlacedHere(this.cpu, response.body, place, out, signal);
        } catch (error) {
          errors.push({ index: i, error });
        }
      });
      if (errors.length > 0) throw errors.sort((a, b) => a.index - b.index)[0].error;
      return missing.sort((a, b) => a - b);
    });
  }

  /** Stops the workers, releases the engine's memory and its GPU device; later calls throw DESTROYED. Safe to call twice. */
  async destroy(): Promise<void> {
    const cpu = this.cpuPath;
    this.cpuPath = undefined;
    this.gpuContext?.destroy();
    this.gpuContext = null;
    await cpu?.destroy();
  }
}
