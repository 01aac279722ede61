/**
 * The options of the engine's calls, their types and their checks: every options object is
 * checked strictly before a call does anything (an unknown key or a bad value is INVALID_OPTION
 * naming the option as written, ts/errors.ts checkKeys). The engine (ts/engine.ts) and its
 * callers share these checks.
 */
import type { CostOp, Location } from './cost/model.js';
import { checkKeys, ErrorCodes, ParleError } from './errors.js';
import { DEFAULT_LEVEL, MAX_CHUNK_BYTES, MAX_LEVEL, MAX_RANK, MIN_LEVEL } from './format/layout.js';
import { checkErrorBound } from './codec/quantize.js';
import { compressSettingsWith, settingsOfPlan, type CompressPlan, type CompressSettings } from './codec/settings.js';
import { parseCodec } from './format/stages.js';
import type { Placement } from './codec/place.js';
import { DeviceArray } from './gpu/device-array.js';
import type { ElementType, ParleArray, SortKeys } from './types.js';
import { checkArray, elementSize, elementTypeOf } from './types.js';

/** Where an operation runs. `auto` asks the cost model. */
export type PathChoice = 'auto' | 'cpu' | 'gpu';

/** A typed array on the host or a {@link DeviceArray} on the GPU. */
export type Data = ParleArray | DeviceArray;

/** Runs that live on the GPU. */
export interface DeviceRuns {
  values: DeviceArray;
  lengths: DeviceArray;
}

/** Options every operation takes. */
export interface OpOptions {
  /** Which path runs the operation (default `auto`: the cost model chooses). */
  path?: PathChoice;
  /**
   * Where the result is wanted: `host` (typed arrays) or `device` (DeviceArrays). Default: where
   * the input is.
   */
  to?: Location;
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
   * Worker threads of the CPU path (default: the machine's available parallelism; 0 runs
   * everything on the calling thread).
   */
  workers?: number;
  /** `auto` uses a GPU when one is found, `off` never, `require` fails without one (default `auto`). */
  gpu?: 'auto' | 'off' | 'require';
  /**
   * `auto` (default): measure this machine's rates at the first call that has a choice to make
   * (<= about 300 ms), or reuse the ones stored for it; `skip`: conservative defaults, no
   * measuring; `force`: measure again now.
   */
  calibration?: 'auto' | 'skip' | 'force';
  /** The CPU kernels: `simd` (default) or their `scalar` twins (for comparison). */
  kernels?: 'simd' | 'scalar';
  /** Largest element count `decompress` accepts from a container's header (default 2^32 - 1). */
  maxElements?: number;
  /**
   * Inputs under this many bytes run on the calling thread instead of a worker (default 4 MiB:
   * below it a worker's round trip and the copy of a host array cost more than they save here;
   * see INLINE_BYTES in ts/cpu/cpu-path.ts).
   */
  inlineBytes?: number;
  /**
   * Operations that may be pending at once (running or waiting); one more rejects with
   * QUEUE_FULL (default 1024).
   */
  maxQueue?: number;
  /**
   * Bytes the CPU path's WebAssembly memory may grow to (default and most: 4 GiB, the wasm32
   * address space). Operations that do not fit in it now wait, first in first out, until earlier
   * ones release memory; one that can never fit rejects with TOO_LARGE and the sizes.
   */
  maxMemoryBytes?: number;
  /**
   * Share one WebAssembly.Memory with the workers (default: when SharedArrayBuffer is
   * available). `false` transfers each segment to a worker and back instead: slower, same
   * results; browsers without cross-origin isolation get it automatically.
   */
  sharedMemory?: boolean;
  /**
   * Bytes of GPU buffers kept for reuse after ops release them and after DeviceArrays are
   * destroyed (creating a large buffer costs more than most kernels on it); default: twice the
   * storage binding limit, clamped to [256 MiB, 4 GiB]; 0 keeps none. Freed after 5 s unused.
   */
  gpuPoolBytes?: number;
}

/** Options of {@link Engine.scan}. */
export interface ScanOptions extends OpOptions {
  /** Inclusive (element i includes input i) or exclusive (default: exclusive). */
  inclusive?: boolean;
  /**
   * A caller-owned result: the input's type and length, host or `engine.alloc`ed, the input
   * itself (in place) or not overlapping it. Repeated calls then allocate nothing; one in the
   * engine's memory is written by the workers in place. Not with `to: 'device'`.
   */
  out?: Uint32Array | Int32Array | Float32Array;
}

/** Options of {@link Engine.rleDecode}. */
export interface RleDecodeOptions extends OpOptions {
  /**
   * A caller-owned result: the values' type, as many elements as the runs expand to, host or
   * `engine.alloc`ed, not overlapping the runs (LENGTH_MISMATCH otherwise). Not with `to: 'device'`.
   */
  out?: ParleArray;
}

/** Options of {@link Engine.sort}. */
export interface SortOptions extends OpOptions {
  /** u32 values carried along with their keys (key-value sort); same length and location as the keys. */
  values?: Uint32Array | DeviceArray;
  /**
   * A caller-owned array for the sorted keys: the keys' type and length, host or
   * `engine.alloc`ed, the keys themselves (in place) or not overlapping them. Not with `to: 'device'`.
   */
  out?: SortKeys;
  /** As `out`, for the values of a key-value sort (u32; the values themselves, or not overlapping). */
  outValues?: Uint32Array;
}

/** Options of {@link Engine.compress}: the container on the host (see {@link CompressToDeviceOptions}). */
export interface CompressOptions extends Omit<OpOptions, 'to'> {
  /** Where the container is wanted: `'host'` (the default, whatever the input) gives a Uint8Array. */
  to?: 'host';
  /**
   * Bytes of decoded elements per chunk: 1 KiB to 64 MiB (default 256 KiB; 512 KiB at level 8,
   * 1 MiB at 9; 4 MiB on the GPU path, which dispatches per chunk). A chunk is the unit of
   * parallel work: an input of at least 2 chunks is spread over every worker (of two or more). Both paths write the same bytes for the same chunkBytes, pipeline and `decoder`.
   */
  chunkBytes?: number;
  /**
   * Effort of the chooser, 1..9 as zstd's and Blosc2's levels (default 5): level 1 encodes each
   * chunk once, with the pipeline its statistics estimate smallest (from a 4 KiB sample); 2-6
   * likewise (samples of 8-32 KiB), and encode the second-best estimate too where it promises a
   * tenth less than the first came to; 7-8 encode the best two and keep the smaller; 9 adds version
   * 1's RLE as a third (version 2's chooser). At every level a candidate that codes to more than
   * 1.5x its estimate has the best one not yet encoded tried too. Below 9 a chunk whose best estimate is above 97 % of
   * its size is stored at copy speed. Levels 8 and 9 default to larger chunks (512 KiB, 1 MiB).
   * Recorded in the header (`parle inspect`); a fixed `codec` ignores it. See docs/format.md,
   * "Version 3".
   */
  level?: number;
  /**
   * The codec pipeline of every chunk: `'auto'` (default: the chooser picks per chunk from one
   * pass of statistics), `'stored'`, or stage names joined by `+` in the order delta, shuffle,
   * rle, then huffman or pack (`'delta+shuffle+huffman'`, `'delta+pack'`; shuffle only for 2- and
   * 4-byte types; pack: bit packing, a little larger than huffman, decoding faster). A fixed
   * pipeline still falls back to stored for a chunk it would not shrink. See docs/format.md.
   */
  codec?: string;
  /**
   * The decoder the Huffman streams are laid out for (docs/format.md, "Huffman streams"):
   * `'cpu'` (default, on both paths) writes mode 2, which the CPU decodes fastest; `'gpu'` writes
   * mode 3, segments of 32 interleaved lanes that a GPU subgroup decodes in lockstep, about 0.5 %
   * of the input larger. Either decodes on either path. Compress with `'gpu'` what a GPU will
   * decompress (`to: 'device'`): measured on an H200 (docs/benchmarks.md), its Huffman decode
   * kernel ran 1.15-1.35x faster at 64 MiB and 3.5-4.1x at 4 MiB, a whole decompress to the device
   * up to 1.4x faster at 4 MiB and 1.2x at 64 MiB; the CPU decodes it at about half its mode-2
   * speed.
   */
  decoder?: 'cpu' | 'gpu';
  /**
   * f32 and f64 only (INVALID_OPTION for other types): lossy compression within a pointwise
   * bound, `{ abs }` (a finite number > 0): every finite element decompresses within `abs` of its
   * original; NaN, +-Infinity and -0 come back exactly. Each chunk is quantized (Haugen's
   * dead-zone quantizer, step just under 2 abs; f32 arithmetic for f32, f64 for f64) and its
   * integer codes coded by the pipeline (`codec`, or the chooser); a chunk that would not shrink
   * is coded losslessly. The array's shape is still recorded, but nothing is predicted (stage 7):
   * the codes are what is coded (an f64 chunk coded losslessly gets the word planes). On the GPU
   * path the GPU quantizes f32 and codes the codes (ts/codec/gpu/encode-lossy.ts; a codes
   * pipeline it does not code goes through the CPU path), and decompress to the device
   * dequantizes on the GPU; f64 is quantized and dequantized on the CPU. See docs/format.md,
   * "Stage 5: quantize".
   */
  errorBound?: ErrorBound;
  /**
   * The array's shape, C order (the last axis varies fastest): `[720, 1440]` for a grid,
   * `[h, w, 4]` for an RGBA image as u8, `[n, fields]` for records; positive integers, 1 to 8
   * axes, whose product is the element count (INVALID_OPTION naming `shape` otherwise). The
   * container records it (`engine.inspect`), chunks are whole slabs along the first axis, and
   * the chooser predicts each value from its neighbours along the axes (left, up, 2-D and 3-D
   * Lorenzo, LOCO-I's median predictor for integer images), codes channels and record fields as
   * planes of their own, and f32 decimals as integers (docs/format.md, "Stage 7: predict"). Not
   * with `codec` or `errorBound` (they then apply as without a shape, which is still recorded).
   * Compress with a shape on the CPU path (a GPU compress of a shaped array runs there).
   */
  shape?: readonly number[];
  /**
   * The element type, where the array's own does not say it: `'f16'` for a Uint16Array of IEEE
   * half-precision bits (a runtime without Float16Array; with one, pass the Float16Array). The
   * container records it and decompress returns that type's array. Any other value must be the
   * array's own type (INVALID_OPTION naming `type` otherwise).
   */
  type?: ElementType;
  /**
   * A caller-owned Uint8Array to write the container into, from its start, instead of a new
   * array: at least `compressBound(input.length, type, chunkBytes)` bytes (LENGTH_MISMATCH
   * otherwise), not overlapping a host input (INVALID_ARGUMENT). The promise resolves to the
   * view of its first bytes that holds the container. Reused across calls, it saves the page
   * faults of a fresh result: on the H200's host a fresh 128 MiB array fills at about 1.5 GB/s,
   * a reused one at the bus's speed.
   */
  out?: Uint8Array;
  /**
   * Settings and predict stage decided once by {@link Engine.planCompress} on an array like this
   * one: the call takes its type, shape, level, codec, error bound, chunk bytes and decoder from
   * the plan (INVALID_OPTION when it gives any of them too) and skips planning the predictor
   * over its elements. The input must hold the plan's type (INVALID_ARGUMENT) and length
   * (LENGTH_MISMATCH).
   */
  plan?: CompressPlan;
}

/**
 * Options of {@link Engine.compress} for a container that lives on the GPU: those of
 * {@link CompressOptions} but `out`, with `to: 'device'`.
 */
export interface CompressToDeviceOptions extends Omit<CompressOptions, 'to' | 'out'> {
  /** The container is wanted on the GPU: a u8 DeviceArray of its bytes. */
  to: 'device';
}

/** Options of {@link Engine.decompress}. */
export interface DecompressOptions extends OpOptions {
  /** Refuse containers whose header claims more elements than this (default: the engine's). */
  maxElements?: number;
  /**
   * A caller-owned result (fflate's `out`, TextEncoder.encodeInto): a typed array of the
   * container's type and element count, host or `engine.alloc`ed, not overlapping `bytes`.
   * Repeated calls then allocate nothing; one in the engine's memory is decoded into in place by
   * the workers. The promise resolves to it. Not with `to: 'device'`.
   */
  out?: ParleArray;
  /**
   * Writes only a block of the container's elements into `out`, at its place there (a Zarr
   * chunk into the array a read returns): the elements as an array of `place.shape`, the block
   * `[start, start + count)` of it, written at `out[outOffset]` with `out`'s `outStrides`
   * (elements). `out` (required) is then any host array of the container's type the block fits;
   * over a SharedArrayBuffer, the workers write each decoded chunk's part of the block there
   * themselves. Decodes on the CPU. INVALID_OPTION for a block outside the shape or a write past
   * `out`, LENGTH_MISMATCH for a shape of another element count. `out` outside the block is not
   * touched.
   */
  place?: Placement;
}

/**
 * A pointwise error bound of the lossy mode (f32 and f64 only; see {@link CompressOptions.errorBound}).
 * Only absolute bounds exist: `{ rel }` is refused (INVALID_OPTION).
 */
export interface ErrorBound {
  /** Largest difference, in the data's units, between a finite element and its decompressed value: a finite number > 0. */
  abs: number;
}

/** Options of {@link Engine.createCompressor}. */
export interface CompressorOptions {
  /** Bytes of decoded elements per chunk, 1 KiB to 64 MiB, as {@link CompressOptions.chunkBytes} (default: by level, 256 KiB at 5). */
  chunkBytes?: number;
  /** The codec pipeline, as {@link CompressOptions.codec} (default `'auto'`). */
  codec?: string;
  /** f32 and f64 only: lossy within a pointwise bound, as {@link CompressOptions.errorBound}. */
  errorBound?: ErrorBound;
  /** Effort of the chooser, 1..9, as {@link CompressOptions.level} (default 5). */
  level?: number;
  /**
   * The decoder the Huffman streams are laid out for, as {@link CompressOptions.decoder}: `'cpu'`
   * (default: mode 2) or `'gpu'` (mode 3). The writer writes `compress`'s bytes for the same
   * chunkBytes, codec, level and decoder.
   */
  decoder?: 'cpu' | 'gpu';
  /** Keep the chooser's reasons in the writer's `reports` (as {@link Engine.explainCodec}); default false. */
  explain?: boolean;
  /** The array's shape, as {@link CompressOptions.shape}: its product must be the writer's element count. */
  shape?: readonly number[];
  /** Aborts the chunks in flight and later calls (ABORTED). */
  signal?: AbortSignal;
}

/** Options of {@link Engine.createDecompressor}. */
export interface DecompressorOptions {
  /** Refuse containers whose header claims more elements than this (default 2^53 - 1). */
  maxElements?: number;
  /**
   * A caller-owned array for the whole result: the container's type and element count, checked
   * when the header arrives; the pieces handed out are then views of it (decoded in place when it
   * lives in the engine's memory).
   */
  out?: ParleArray;
  /** Aborts the chunks in flight and later calls (ABORTED). */
  signal?: AbortSignal;
}

/** Options of {@link Engine.explain}. */
export interface ExplainOptions {
  /** Where the result would be wanted (default: where the input is; `host` for compress). */
  to?: Location;
}

/** Options of {@link Engine.explainCodec}. */
export interface ExplainCodecOptions {
  /** As {@link CompressOptions.chunkBytes}. */
  chunkBytes?: number;
  /** As {@link CompressOptions.codec}. */
  codec?: string;
  /** As {@link CompressOptions.errorBound}. */
  errorBound?: ErrorBound;
  /** As {@link CompressOptions.level}. */
  level?: number;
  /** As {@link CompressOptions.decoder} (default `'cpu'`): the payload sizes reported are those of its Huffman streams. */
  decoder?: 'cpu' | 'gpu';
  /** As {@link CompressOptions.shape}. */
  shape?: readonly number[];
  /** As {@link CompressOptions.type}. */
  type?: ElementType;
  /** Aborts the call (ABORTED). */
  signal?: AbortSignal;
}

/** Options of {@link Engine.calibrate}. */
export interface CalibrateOptions {
  /** Measure again even when rates are stored for this machine (default false). */
  force?: boolean;
  /** Called as measurements finish: `done` of `total` steps. */
  onProgress?: (done: number, total: number) => void;
}

/** Options of {@link Engine.download}. */
export interface DownloadOptions<T extends ParleArray = ParleArray> {
  /**
   * A caller-owned array to read into: the DeviceArray's element type, at least its length; it
   * is what the call resolves to (its first `array.length` elements written).
   */
  into?: T;
}

/** The operations {@link Engine.explain} can explain. */
export type OpName = CostOp;

/** What {@link Engine.explain} returns. */
export interface Explanation {
  /** The path `auto` takes. */
  path: 'cpu' | 'gpu';
  /** Predicted milliseconds per path, transfers included; null where a path is unavailable. */
  predictedMs: { cpu: number; gpu: number | null };
  /** Where the input lives now. */
  inputLocation: Location;
  /** Where the result will be. */
  resultLocation: Location;
  /** One sentence a person can read. */
  reason: string;
}

/**
 * The keys of an options type, listed once: the compiler checks the list against the type (a
 * key added to the interface and not here, or the reverse, fails the typecheck).
 */
export function keysOf<T>(keys: { readonly [K in keyof Required<T>]: true }): readonly string[] {
  return Object.keys(keys);
}

export const OP_KEYS = { path: true, to: true, signal: true } as const;

/** The options of explainCodec and planCompress: compress's settings, no destination. */
const CODEC_OPTION_KEYS = keysOf<ExplainCodecOptions>({
  chunkBytes: true,
  codec: true,
  errorBound: true,
  level: true,
  decoder: true,
  shape: true,
  type: true,
  signal: true,
});

/** The options each public call takes; {@link checkOptions} refuses any other key. */
export const OPTION_KEYS = {
  createEngine: keysOf<EngineOptions>({
    workers: true,
    gpu: true,
    calibration: true,
    kernels: true,
    maxElements: true,
    inlineBytes: true,
    maxQueue: true,
    maxMemoryBytes: true,
    sharedMemory: true,
    gpuPoolBytes: true,
  }),
  rleEncode: keysOf<OpOptions>(OP_KEYS),
  rleDecode: keysOf<RleDecodeOptions>({ ...OP_KEYS, out: true }),
  sort: keysOf<SortOptions>({ ...OP_KEYS, values: true, out: true, outValues: true }),
  scan: keysOf<ScanOptions>({ ...OP_KEYS, inclusive: true, out: true }),
  compress: keysOf<CompressOptions>({
    ...OP_KEYS,
    chunkBytes: true,
    level: true,
    codec: true,
    decoder: true,
    errorBound: true,
    shape: true,
    type: true,
    out: true,
    plan: true,
  }),
  planCompress: CODEC_OPTION_KEYS,
  decompress: keysOf<DecompressOptions>({ ...OP_KEYS, maxElements: true, out: true, place: true }),
  createCompressor: keysOf<CompressorOptions>({
    chunkBytes: true,
    codec: true,
    errorBound: true,
    level: true,
    decoder: true,
    explain: true,
    shape: true,
    signal: true,
  }),
  createDecompressor: keysOf<DecompressorOptions>({ maxElements: true, out: true, signal: true }),
  explain: keysOf<ExplainOptions>({ to: true }),
  explainCodec: CODEC_OPTION_KEYS,
  calibrate: keysOf<CalibrateOptions>({ force: true, onProgress: true }),
  download: keysOf<DownloadOptions>({ into: true }),
};

/**
 * The options object of public call `call`: undefined reads as `{}`; anything but an object, or
 * an object with a key the call does not take, is refused.
 * @throws ParleError INVALID_OPTION (for a key: "options.levle is not an option of compress (did
 *   you mean level?)", `option` the key)
 */
export function checkOptions(options: unknown, call: keyof typeof OPTION_KEYS): Record<string, unknown> {
  if (options === undefined) return {};
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new ParleError(
      ErrorCodes.INVALID_OPTION,
      `options of ${call} must be an object; got ${options === null ? 'null' : typeof options}`,
    );
  }
  checkKeys(options, OPTION_KEYS[call], call);
  return options as Record<string, unknown>;
}

/** A signal option: undefined or an AbortSignal. @throws ParleError INVALID_OPTION */
export function checkSignal(value: unknown, name = 'options.signal'): AbortSignal | undefined {
  if (value !== undefined && !(value instanceof AbortSignal)) {
    throw new ParleError(ErrorCodes.INVALID_OPTION, `${name} must be an AbortSignal`);
  }
  return value;
}

export function checkInteger(value: unknown, name: string, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new ParleError(ErrorCodes.INVALID_OPTION, `${name} must be an integer from ${min} to ${max}; got ${String(value)}`);
  }
  return value;
}

/**
 * The `shape` option for an array of `length` elements: undefined, or 1 to 8 positive safe
 * integers whose product is `length`; returns a copy.
 * @throws ParleError INVALID_OPTION naming `options.shape`
 */
export function checkShape(value: unknown, length: number): number[] | undefined {
  if (value === undefined) return undefined;
  const bad = (why: string) => new ParleError(ErrorCodes.INVALID_OPTION, `options.shape ${why}`, { option: 'shape' });
  if (!Array.isArray(value) || value.length < 1 || value.length > MAX_RANK)
    throw bad(`must be an array of 1 to ${MAX_RANK} dims; got ${String(value)}`);
  const shape = value.map((d) => {
    if (!Number.isSafeInteger(d) || (d as number) < 1) throw bad(`dims must be positive integers; got [${value.join(', ')}]`);
    return d as number;
  });
  const product = shape.reduce((a, d) => a * d, 1);
  if (product !== length) throw bad(`[${shape.join(', ')}] holds ${product} elements; the array has ${length}`);
  return shape;
}

/** The `level` option: 1..9, default {@link DEFAULT_LEVEL}. @throws ParleError INVALID_OPTION */
export function checkLevel(value: unknown): number {
  return value === undefined ? DEFAULT_LEVEL : checkInteger(value, 'options.level', MIN_LEVEL, MAX_LEVEL);
}

export function checkChoice<T extends string>(value: unknown, name: string, choices: readonly T[], fallback: T): T {
  if (value === undefined) return fallback;
  if (!choices.includes(value as T)) {
    throw new ParleError(ErrorCodes.INVALID_OPTION, `${name} must be ${choices.map((c) => `'${c}'`).join(', ')}; got ${String(value)}`);
  }
  return value as T;
}

/**
 * Checks `options.codec` for elements of `type`: the stage ids of a fixed pipeline, or undefined
 * for the chooser. @throws ParleError INVALID_OPTION
 */
export function checkCodec(value: unknown, type: ElementType): number[] | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw new ParleError(ErrorCodes.INVALID_OPTION, `options.codec must be a string; got ${typeof value}`);
  // (8-byte elements: the pipeline codes each of their u32 word planes)
  const pipeline = parseCodec(value, Math.min(elementSize(type), 4));
  return pipeline === undefined ? undefined : [...pipeline];
}

/** The element type of a host array or DeviceArray. */
export function elementTypeOfData(value: Data): ElementType {
  return value instanceof DeviceArray ? value.type : (elementTypeOf(value) as ElementType);
}

/**
 * Checks `options.out` of an op whose result has `type` and (when known now) `length`
 * elements: a host typed array, not detached, not with `to: 'device'`, not overlapping the
 * host `inputs` (with `inPlace`, being the first input itself is allowed).
 * @throws ParleError INVALID_ARGUMENT, INVALID_OPTION, LENGTH_MISMATCH, DETACHED_BUFFER
 */
export function checkOutOption(
  opts: Record<string, unknown>,
  type: ElementType,
  length: number | undefined,
  inputs: readonly Data[],
  inPlace = false,
  key = 'out',
): ParleArray | undefined {
  const out = opts[key];
  const name = `options.${key}`;
  if (out === undefined) return undefined;
  const outType = checkArray(out, name);
  const array = out as ParleArray;
  if (opts.to === 'device') throw new ParleError(ErrorCodes.INVALID_OPTION, `${name} is a host array: not with to: 'device'`);
  if (outType !== type) throw new ParleError(ErrorCodes.INVALID_ARGUMENT, `${name} must hold ${type} elements; got ${outType}`);
  if (length !== undefined && array.length !== length) {
    throw new ParleError(ErrorCodes.LENGTH_MISMATCH, `${name} holds ${array.length} elements; the result has ${length}`);
  }
  inputs.forEach((input, i) => {
    if (input instanceof DeviceArray || input.buffer !== array.buffer) return;
    if (inPlace && i === 0 && input.byteOffset === array.byteOffset && input.byteLength === array.byteLength) return;
    if (
      array.byteOffset < input.byteOffset + input.byteLength &&
      input.byteOffset < array.byteOffset + array.byteLength &&
      array.byteLength > 0
    ) {
      throw new ParleError(ErrorCodes.INVALID_ARGUMENT, `${name} overlaps an input`);
    }
  });
  return array;
}

/** Checks a host or device input; returns its element type. */
export function checkData(value: unknown, name: string, allowed?: readonly ElementType[]): ElementType {
  if (value instanceof DeviceArray) {
    value.assertLive(name);
    if (allowed && !allowed.includes(value.type)) {
      throw new ParleError(ErrorCodes.UNSUPPORTED_TYPE, `${name} must be of type ${allowed.join(', ')}; got ${value.type}`);
    }
    return value.type;
  }
  return checkArray(value, name, allowed);
}

/**
 * The `type` option of an input whose array holds `given` elements: undefined or `given` itself,
 * or 'f16' for a Uint16Array's bits.
 * @throws ParleError INVALID_OPTION naming `options.type`
 */
export function checkTypeOption(value: unknown, given: ElementType): ElementType {
  if (value === undefined || value === given) return given;
  if (value === 'f16' && given === 'u16') return 'f16';
  throw new ParleError(
    ErrorCodes.INVALID_OPTION,
    `options.type must be the array's own type (${given})${given === 'u16' ? " or 'f16'" : ''}; got ${String(value)}`,
    { option: 'type' },
  );
}

/**
 * The settings of a compress (and of `explainCodec`, `createCompressor`) from its options object,
 * built once and passed down every route (ts/codec/settings.ts): the level, the chunk sizes of
 * both paths, the codec, the error bound, the Huffman layout and the signal.
 *   compressSettings({ level: 9 }, 'u8')  ->  { level: 9, chunkBytes: 1 MiB, gpuChunkBytes: 4 MiB, codec: undefined, errorBound: undefined, decoder: 'cpu' }
 * @throws ParleError INVALID_OPTION naming the option (codec, errorBound, level, decoder, chunkBytes, shape, signal)
 */
export function compressSettings(opts: Record<string, unknown>, given: ElementType, length: number): CompressSettings {
  const type = checkTypeOption(opts.type, given);
  const codec = checkCodec(opts.codec, type);
  const errorBound = checkErrorBound(opts.errorBound, type);
  const level = checkLevel(opts.level);
  const decoder = checkChoice(opts.decoder, 'options.decoder', ['cpu', 'gpu'] as const, 'cpu');
  const chunkBytes = opts.chunkBytes === undefined ? undefined : checkInteger(opts.chunkBytes, 'options.chunkBytes', 1024, MAX_CHUNK_BYTES);
  const signal = checkSignal(opts.signal);
  const shape = checkShape(opts.shape, length);
  return compressSettingsWith({
    ...(shape !== undefined ? { shape } : {}),
    ...(type !== given ? { type } : {}),
    codec,
    errorBound,
    level,
    decoder,
    ...(chunkBytes !== undefined ? { chunkBytes } : {}),
    ...(signal !== undefined ? { signal } : {}),
  });
}

/** The options a {@link CompressPlan} fixes: a compress with `plan` gives none of them. */
const PLANNED_KEYS = ['chunkBytes', 'level', 'codec', 'decoder', 'errorBound', 'shape', 'type'] as const;

/**
 * The settings of a compress with `opts.plan`: the plan's, with the call's signal.
 * @throws ParleError INVALID_OPTION (not a plan made by planCompress; an option the plan fixes),
 *   INVALID_ARGUMENT (an input of another element type), LENGTH_MISMATCH (another length)
 */
export function plannedSettings(opts: Record<string, unknown>, given: ElementType, length: number): CompressSettings {
  const settings = settingsOfPlan(opts.plan);
  if (settings === undefined)
    throw new ParleError(ErrorCodes.INVALID_OPTION, 'options.plan must be a CompressPlan made by engine.planCompress', { option: 'plan' });
  const plan = opts.plan as CompressPlan;
  for (const key of PLANNED_KEYS) {
    if (opts[key] !== undefined)
      throw new ParleError(ErrorCodes.INVALID_OPTION, `options.${key} is the plan's: not with options.plan`, { option: key });
  }
  if (given !== plan.type && !(plan.type === 'f16' && given === 'u16'))
    throw new ParleError(ErrorCodes.INVALID_ARGUMENT, `the plan compresses ${plan.type} elements; the input holds ${given}`);
  if (length !== plan.length)
    throw new ParleError(ErrorCodes.LENGTH_MISMATCH, `the plan compresses ${plan.length} elements; the input holds ${length}`);
  const signal = checkSignal(opts.signal);
  return signal === undefined ? settings : { ...settings, signal };
}

/**
 * Ops with a GPU path: the kernels, and compress / decompress with their RLE on the GPU and the
 * container's checks on the CPU (ts/codec/gpu/compress.ts, ts/codec/gpu/decompress.ts).
 */
export const GPU_OPS: ReadonlySet<CostOp> = new Set(['rleEncode', 'rleDecode', 'scan', 'sort', 'compress', 'decompress']);
export const OPS: readonly CostOp[] = ['rleEncode', 'rleDecode', 'scan', 'sort', 'compress', 'decompress'];
