/**
 * The Engine: one object that owns the CPU path (WebAssembly kernels), later the worker pool and
 * the GPU context, and picks a path for every call. Every operation validates its input up front
 * and throws {@link ParleError} with a stable code (ts/errors.ts).
 *
 * Paths: `cpu` runs the AssemblyScript SIMD kernels (assembly/) on the calling thread; `gpu` is
 * not built into this engine yet, so `path: 'gpu'` and `gpu: 'require'` fail with
 * PATH_UNAVAILABLE and `auto` always picks `cpu` (with the reason in {@link Engine.explain}).
 */
import { CpuPath, type Runs } from './cpu/cpu-path.js';
import { abortError } from './cpu/pool.js';
import type { KernelVariant } from './cpu/wasm.js';
import { ErrorCodes, ParleError } from './errors.js';
import { compressArray, decompressBytes } from './format/container.js';
import { DEFAULT_CHUNK_BYTES, MAX_CHUNK_BYTES } from './format/layout.js';
import { ContainerReader, ContainerWriter } from './format/stream.js';
import { hardwareConcurrency } from './platform/node.js';
import type { ArrayOf, ElementType, ParleArray, SortKeys } from './types.js';
import { checkArray, isElementType } from './types.js';

export type { Runs } from './cpu/cpu-path.js';

/** Where an operation runs. `auto` asks the engine (cost model). */
export type PathChoice = 'auto' | 'cpu' | 'gpu';

/** Options every operation takes. */
export interface OpOptions {
  /** Which path runs the operation (default `auto`). */
  path?: PathChoice;
  /**
   * Aborts the operation: queued work is dropped, running work stops at its next segment (a
   * worker in the middle of a long kernel is terminated and replaced); the promise rejects
   * with ABORTED.
   */
  signal?: AbortSignal;
}

/** Options of {@link createEngine}. */
export interface EngineOptions {
  /**
   * Worker threads of the CPU path (default: the machine's available parallelism). Inputs under
   * 256 KiB run on the calling thread: a worker round trip costs more than they take.
   */
  workers?: number;
  /**
   * Inputs under this many bytes run on the calling thread instead of a worker (default
   * 256 KiB, where a worker's round trip starts to pay here: bench/pool.mjs measures it).
   */
  inlineBytes?: number;
  /**
   * Operations that may be pending at once (running or waiting); one more rejects with
   * QUEUE_FULL (default 1024).
   */
  maxQueue?: number;
  /**
   * Share one WebAssembly.Memory with the workers (default: when SharedArrayBuffer is
   * available). `false` transfers each segment to a worker and back instead: slower, same
   * results; browsers without cross-origin isolation get it automatically.
   */
  sharedMemory?: boolean;
  /** `auto` uses a GPU when one is found, `off` never, `require` fails without one (default `auto`). */
  gpu?: 'auto' | 'off' | 'require';
  /** The CPU kernels: `simd` (default) or their `scalar` twins (for comparison). */
  kernels?: KernelVariant;
  /** Largest element count `decompress` accepts from a container's header (default 2^32 - 1). */
  maxElements?: number;
}

/** Options of {@link Engine.scan}. */
export interface ScanOptions extends OpOptions {
  /** Inclusive (element i includes input i) or exclusive (default: exclusive). */
  inclusive?: boolean;
}

/** Options of {@link Engine.sort}. */
export interface SortOptions extends OpOptions {
  /** u32 values carried along with their keys (key-value sort); same length as the keys. */
  values?: Uint32Array;
}

/** Options of {@link Engine.compress}. */
export interface CompressOptions extends OpOptions {
  /** Bytes of decoded elements per chunk: 1 KiB to 64 MiB (default 4 MiB). */
  chunkBytes?: number;
}

/** Options of {@link Engine.decompress}. */
export interface DecompressOptions extends OpOptions {
  /** Refuse containers whose header claims more elements than this (default: the engine's). */
  maxElements?: number;
}

/** The operations {@link Engine.explain} can explain. */
export type OpName = 'rleEncode' | 'rleDecode' | 'sort' | 'scan' | 'compress' | 'decompress';

/** What {@link Engine.explain} returns. */
export interface Explanation {
  /** The path `auto` takes. */
  path: 'cpu' | 'gpu';
  /** Predicted milliseconds per path; null where a path is unavailable. */
  predictedMs: { cpu: number; gpu: number | null };
  /** Where the input lives now. */
  inputLocation: 'host' | 'device';
  /** Where the result will be. */
  resultLocation: 'host' | 'device';
  /** One sentence a person can read. */
  reason: string;
}

/**
 * Rough single-thread CPU rates (bytes of input per ms) used by {@link Engine.explain} until the
 * calibrated cost model lands: measured here (bench/results/cpu-kernels.json), rounded down.
 */
const CPU_BYTES_PER_MS: Record<OpName, number> = {
  rleEncode: 2.5e6,
  rleDecode: 4e6,
  sort: 0.4e6,
  scan: 4e6,
  compress: 1.5e6,
  decompress: 1.5e6,
};

const DEFAULT_MAX_ELEMENTS = 2 ** 32 - 1;

function checkOptions(options: unknown, name: string): Record<string, unknown> {
  if (options === undefined) return {};
  if (options === null || typeof options !== 'object') {
    throw new ParleError(ErrorCodes.INVALID_OPTION, `${name} must be an object`);
  }
  return options as Record<string, unknown>;
}

function checkPath(options: Record<string, unknown>): PathChoice {
  const path = options.path ?? 'auto';
  if (path !== 'auto' && path !== 'cpu' && path !== 'gpu') {
    throw new ParleError(ErrorCodes.INVALID_OPTION, `options.path must be 'auto', 'cpu' or 'gpu'; got ${String(path)}`);
  }
  return path;
}

function checkInteger(value: unknown, name: string, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new ParleError(ErrorCodes.INVALID_OPTION, `${name} must be an integer from ${min} to ${max}; got ${String(value)}`);
  }
  return value;
}

/**
 * Creates an engine.
 * @throws ParleError INVALID_OPTION (names the option), PATH_UNAVAILABLE (`gpu: 'require'`)
 */
export async function createEngine(options: EngineOptions = {}): Promise<Engine> {
  const opts = checkOptions(options, 'options');
  const workers = opts.workers === undefined ? hardwareConcurrency() : checkInteger(opts.workers, 'options.workers', 1, 1024);
  const gpu = opts.gpu ?? 'auto';
  if (gpu !== 'auto' && gpu !== 'off' && gpu !== 'require') {
    throw new ParleError(ErrorCodes.INVALID_OPTION, `options.gpu must be 'auto', 'off' or 'require'; got ${String(gpu)}`);
  }
  if (gpu === 'require') {
    throw new ParleError(ErrorCodes.PATH_UNAVAILABLE, 'options.gpu is require, but this engine has no GPU path yet');
  }
  const kernels = opts.kernels ?? 'simd';
  if (kernels !== 'simd' && kernels !== 'scalar') {
    throw new ParleError(ErrorCodes.INVALID_OPTION, `options.kernels must be 'simd' or 'scalar'; got ${String(kernels)}`);
  }
  const maxElements =
    opts.maxElements === undefined
      ? DEFAULT_MAX_ELEMENTS
      : checkInteger(opts.maxElements, 'options.maxElements', 0, Number.MAX_SAFE_INTEGER);
  const maxQueue = opts.maxQueue === undefined ? 1024 : checkInteger(opts.maxQueue, 'options.maxQueue', 1, 2 ** 31);
  if (opts.sharedMemory !== undefined && typeof opts.sharedMemory !== 'boolean') {
    throw new ParleError(ErrorCodes.INVALID_OPTION, `options.sharedMemory must be a boolean; got ${String(opts.sharedMemory)}`);
  }
  const inlineBytes = opts.inlineBytes === undefined ? undefined : checkInteger(opts.inlineBytes, 'options.inlineBytes', 0, Number.MAX_SAFE_INTEGER);
  const cpu = await CpuPath.create({ variant: kernels, workers, shareMemory: opts.sharedMemory as boolean | undefined, inlineBytes });
  return new Engine(cpu, { maxElements, maxQueue });
}

export class Engine {
  private readonly maxElements: number;
  private readonly maxQueue: number;
  private cpuPath: CpuPath | undefined;
  private pendingOps = 0;

  /** Use {@link createEngine}. */
  constructor(cpu: CpuPath, settings: { maxElements: number; maxQueue: number }) {
    this.cpuPath = cpu;
    this.maxElements = settings.maxElements;
    this.maxQueue = settings.maxQueue;
  }

  /** Worker threads of the CPU path (0: everything runs on the calling thread). */
  get workers(): number {
    return this.cpuPath?.pool?.concurrency ?? 0;
  }

  /** Operations pending now (running or waiting). */
  get pending(): number {
    return this.pendingOps;
  }

  /** Workers replaced since the engine started (after crashes or aborts). */
  get workerRestarts(): number {
    return this.cpuPath?.pool?.restarts ?? 0;
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

  /**
   * A zero-filled typed array of `length` elements of `type` that lives in the CPU path's
   * shared memory: pass it to any op without a copy; results of ops on it live there too.
   * Release it with {@link free} (or let it be garbage-collected). Where memory is not shared
   * it is a plain typed array.
   * @throws ParleError INVALID_OPTION, TOO_LARGE (beyond the 4 GiB wasm32 memory)
   */
  alloc<T extends ElementType>(type: T, length: number): ArrayOf[T] {
    if (!isElementType(type)) throw new ParleError(ErrorCodes.INVALID_OPTION, `type must be u8, u16, u32, i32 or f32; got ${String(type)}`);
    checkInteger(length, 'length', 0, 2 ** 32 - 1);
    return this.cpu.alloc(type, length) as ArrayOf[T];
  }

  /** Releases an array made by {@link alloc}; other arrays are ignored. Do not use it afterwards. */
  free(array: ParleArray): void {
    this.cpuPath?.free(array);
  }

  /** The CPU path; throws DESTROYED after {@link destroy}. */
  private get cpu(): CpuPath {
    if (!this.cpuPath) throw new ParleError(ErrorCodes.DESTROYED, 'the engine was destroyed');
    return this.cpuPath;
  }

  /** Validates `opts.path` and `opts.signal`; returns the path that runs and the signal. */
  private choosePath(opts: Record<string, unknown>): { path: 'cpu'; signal: AbortSignal | undefined } {
    const path = checkPath(opts);
    if (path === 'gpu') throw new ParleError(ErrorCodes.PATH_UNAVAILABLE, "options.path is 'gpu', but this engine has no GPU path yet");
    const signal = opts.signal;
    if (signal !== undefined && !(signal instanceof AbortSignal)) {
      throw new ParleError(ErrorCodes.INVALID_OPTION, 'options.signal must be an AbortSignal');
    }
    void this.cpu;
    return { path: 'cpu', signal };
  }

  /**
   * Run-length encoding (RLE): each maximal run of equal consecutive elements becomes one value
   * and its length. in [0,2,2,9,5,5,5,8] -> values [0,2,9,5,8], lengths [1,2,1,3,1].
   * Elements compare as bit patterns, so f32 NaN payloads and -0 are runs of their own kind.
   *
   * @param input any element type, n elements (n may be 0).
   * @returns values: same type as the input, one per run; lengths: u32, each >= 1, summing to n.
   *   New arrays; the input is not modified.
   * @throws ParleError INVALID_ARGUMENT, DETACHED_BUFFER, INVALID_OPTION, PATH_UNAVAILABLE, DESTROYED
   *
   * CPU: 16 bytes compared at a time against the input shifted by one element (SIMD bitmask);
   * segments of 16 MiB, runs crossing a segment boundary merged (Rutter's stitch).
   */
  async rleEncode<T extends ParleArray>(input: T, options?: OpOptions): Promise<Runs<T>> {
    checkArray(input, 'input');
    const { signal } = this.choosePath(checkOptions(options, 'options'));
    return this.admit(signal, () => this.cpu.rleEncode(input, signal));
  }

  /**
   * Expands runs: values[i] repeated lengths[i] times, in order. The inverse of
   * {@link rleEncode}; values [0,2,9], lengths [1,2,3] -> [0,2,2,9,9,9]. Zero lengths are
   * allowed and contribute nothing.
   *
   * @param runs values: any element type, r elements; lengths: Uint32Array of r run lengths.
   * @returns a new array of the values' type, sum(lengths) elements.
   * @throws ParleError INVALID_ARGUMENT, DETACHED_BUFFER, LENGTH_MISMATCH, TOO_LARGE (sum over
   *   2^32 - 1 elements), INVALID_OPTION, PATH_UNAVAILABLE, DESTROYED
   */
  async rleDecode<T extends ParleArray>(runs: Runs<T>, options?: OpOptions): Promise<T> {
    if (runs === null || typeof runs !== 'object') {
      throw new ParleError(ErrorCodes.INVALID_ARGUMENT, 'runs must be an object { values, lengths }');
    }
    checkArray(runs.values, 'runs.values');
    checkArray(runs.lengths, 'runs.lengths', ['u32']);
    if (runs.values.length !== runs.lengths.length) {
      throw new ParleError(
        ErrorCodes.LENGTH_MISMATCH,
        `runs.values has ${runs.values.length} elements but runs.lengths has ${runs.lengths.length}`,
      );
    }
    const { signal } = this.choosePath(checkOptions(options, 'options'));
    let total = 0;
    for (let i = 0; i < runs.lengths.length; i++) total += runs.lengths[i];
    if (total > DEFAULT_MAX_ELEMENTS) {
      throw new ParleError(ErrorCodes.TOO_LARGE, `the runs expand to ${total} elements, more than 2^32 - 1`);
    }
    return this.admit(signal, () => this.cpu.rleDecode(runs.values, runs.lengths, total, signal));
  }

  /**
   * Stable LSD radix sort, ascending, 8-bit digits. f32 keys sort in IEEE 754 totalOrder:
   * -NaN < -Infinity < ... < -0 < +0 < ... < +Infinity < +NaN (the NaN that arithmetic makes is
   * +NaN, so it sorts last); bit patterns are kept.
   *
   * @param keys Uint32Array, Int32Array or Float32Array of n keys.
   * @param options.values optional Uint32Array of n values carried with their keys; equal keys
   *   keep their input order.
   * @returns `keys` alone as a new sorted array, or `{ keys, values }` when values were given.
   * @throws ParleError INVALID_ARGUMENT, UNSUPPORTED_TYPE, DETACHED_BUFFER, LENGTH_MISMATCH,
   *   TOO_LARGE (keys and scratch beyond 4 GiB of wasm memory), INVALID_OPTION, PATH_UNAVAILABLE
   *
   * Source: LSD radix sort with all digit histograms in one pass (as in Gruber's CPU sort and
   * OneSweep's upsweep); a pass whose digit is equal in every key is skipped.
   */
  async sort<K extends SortKeys>(keys: K, options?: OpOptions): Promise<K>;
  async sort<K extends SortKeys>(keys: K, options: SortOptions & { values: Uint32Array }): Promise<{ keys: K; values: Uint32Array }>;
  async sort<K extends SortKeys>(keys: K, options?: SortOptions): Promise<K | { keys: K; values: Uint32Array }> {
    checkArray(keys, 'keys', ['u32', 'i32', 'f32']);
    const opts = checkOptions(options, 'options');
    const values = opts.values as Uint32Array | undefined;
    if (values !== undefined) {
      checkArray(values, 'options.values', ['u32']);
      if (values.length !== keys.length) {
        throw new ParleError(ErrorCodes.LENGTH_MISMATCH, `options.values has ${values.length} elements but keys has ${keys.length}`);
      }
    }
    const { signal } = this.choosePath(opts);
    const sorted = await this.admit(signal, () => this.cpu.sort(keys, values, signal));
    return values ? { keys: sorted.keys, values: sorted.values as Uint32Array } : sorted.keys;
  }

  /**
   * Prefix sum. Exclusive: out[i] = in[0] + ... + in[i-1] (out[0] = 0); inclusive: out[i] =
   * in[0] + ... + in[i]. in [3,1,4,1,5] -> exclusive [0,3,4,8,9], inclusive [3,4,8,9,14].
   * u32 and i32 wrap modulo 2^32. f32 sums in float32; the SIMD kernel adds in a different order
   * than a sequential loop, so results may differ from one in the last bits.
   *
   * @param input Uint32Array, Int32Array or Float32Array of n elements.
   * @returns a new array of the same type and length.
   * @throws ParleError INVALID_ARGUMENT, UNSUPPORTED_TYPE, DETACHED_BUFFER, INVALID_OPTION, PATH_UNAVAILABLE
   */
  async scan<T extends Uint32Array | Int32Array | Float32Array>(input: T, options?: ScanOptions): Promise<T> {
    checkArray(input, 'input', ['u32', 'i32', 'f32']);
    const opts = checkOptions(options, 'options');
    if (opts.inclusive !== undefined && typeof opts.inclusive !== 'boolean') {
      throw new ParleError(ErrorCodes.INVALID_OPTION, `options.inclusive must be a boolean; got ${String(opts.inclusive)}`);
    }
    const { signal } = this.choosePath(opts);
    return this.admit(signal, () => this.cpu.scan(input, opts.inclusive === true, signal));
  }

  /**
   * Compresses an array into a .parle container (docs/format.md): chunks of `chunkBytes`, each
   * RLE-coded or stored raw, whichever is smaller, with XXH64 checksums. The result is at most
   * the input's bytes + 32 + 32 per chunk.
   *
   * @param input any element type, n elements.
   * @returns a new Uint8Array.
   * @throws ParleError INVALID_ARGUMENT, DETACHED_BUFFER, INVALID_OPTION, PATH_UNAVAILABLE
   */
  async compress(input: ParleArray, options?: CompressOptions): Promise<Uint8Array> {
    checkArray(input, 'input');
    const opts = checkOptions(options, 'options');
    const chunkBytes =
      opts.chunkBytes === undefined ? DEFAULT_CHUNK_BYTES : checkInteger(opts.chunkBytes, 'options.chunkBytes', 1024, MAX_CHUNK_BYTES);
    const { signal } = this.choosePath(opts);
    return this.admit(signal, () => compressArray(this.cpu, input, chunkBytes, signal));
  }

  /**
   * Decompresses a .parle container into a new typed array of the type it was compressed from.
   * Every chunk is checked against its checksums; nothing of the claimed size is allocated
   * before the whole chunk table was found in `bytes`.
   *
   * @param bytes the container (a Uint8Array; other views are read as their bytes).
   * @throws ParleError NOT_PARLE, UNSUPPORTED_VERSION, TRUNCATED, CORRUPT, CHECKSUM_MISMATCH,
   *   LIMIT_EXCEEDED (more elements than `maxElements`), INVALID_ARGUMENT, DETACHED_BUFFER
   */
  async decompress(bytes: Uint8Array, options?: DecompressOptions): Promise<ParleArray> {
    checkArray(bytes, 'bytes');
    const opts = checkOptions(options, 'options');
    const maxElements =
      opts.maxElements === undefined ? this.maxElements : checkInteger(opts.maxElements, 'options.maxElements', 0, Number.MAX_SAFE_INTEGER);
    const { signal } = this.choosePath(opts);
    const view = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    return this.admit(signal, () => decompressBytes(this.cpu, view, maxElements, signal));
  }

  /**
   * A streaming compressor for `elementCount` elements of `type`, fed with their little-endian
   * bytes in pieces of any size; memory stays bounded by one chunk (see ts/format/stream.ts).
   * @throws ParleError INVALID_OPTION, DESTROYED
   */
  createCompressor(type: ElementType, elementCount: number, options: { chunkBytes?: number } = {}): ContainerWriter {
    if (!isElementType(type)) throw new ParleError(ErrorCodes.INVALID_OPTION, `type must be u8, u16, u32, i32 or f32; got ${String(type)}`);
    checkInteger(elementCount, 'elementCount', 0, Number.MAX_SAFE_INTEGER);
    const chunkBytes =
      options.chunkBytes === undefined
        ? DEFAULT_CHUNK_BYTES
        : checkInteger(options.chunkBytes, 'options.chunkBytes', 1024, MAX_CHUNK_BYTES);
    return new ContainerWriter(this.cpu, type, elementCount, chunkBytes);
  }

  /**
   * A streaming decompressor: container bytes in, checked element bytes out, chunk by chunk.
   * @throws ParleError INVALID_OPTION, DESTROYED
   */
  createDecompressor(options: { maxElements?: number } = {}): ContainerReader {
    const maxElements =
      options.maxElements === undefined
        ? Number.MAX_SAFE_INTEGER
        : checkInteger(options.maxElements, 'options.maxElements', 0, Number.MAX_SAFE_INTEGER);
    return new ContainerReader(this.cpu, { maxElements });
  }

  /**
   * Which path `auto` would take for `op` on `input`, and why. Until the calibrated cost model
   * lands the CPU figure comes from fixed single-thread rates measured on the development
   * machine, and the GPU is reported unavailable.
   * @throws ParleError INVALID_ARGUMENT (unknown op or input)
   */
  explain(op: OpName, input: ParleArray): Explanation {
    if (!(op in CPU_BYTES_PER_MS)) {
      throw new ParleError(ErrorCodes.INVALID_ARGUMENT, `op must be one of ${Object.keys(CPU_BYTES_PER_MS).join(', ')}; got ${String(op)}`);
    }
    checkArray(input, 'input');
    void this.cpu;
    return {
      path: 'cpu',
      predictedMs: { cpu: input.byteLength / CPU_BYTES_PER_MS[op], gpu: null },
      inputLocation: 'host',
      resultLocation: 'host',
      reason: 'the GPU path is not available in this engine, so the CPU path runs',
    };
  }

  /** Stops the workers and releases the engine's memory; later calls throw DESTROYED. Safe to call twice. */
  async destroy(): Promise<void> {
    const cpu = this.cpuPath;
    this.cpuPath = undefined;
    await cpu?.destroy();
  }
}
