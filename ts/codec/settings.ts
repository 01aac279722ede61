/**
 * The settings of one compress call, built once from the call's options (ts/options.ts
 * compressSettings) and passed down whichever route it takes (ts/codec/compress.ts) instead of
 * positional arguments.
 */
import { chunkLengthFor, DEFAULT_LEVEL, defaultChunkBytes, MAX_CHUNK_BYTES } from '../format/layout.js';
import { elementSize, type ElementType } from '../types.js';
import type { ChunkCodec } from './cpu/chunks.js';
import { predictName } from '../format/predict.js';
import { planFlat, planPredict, planRecord, WORD_PLANES_PLAN, type PlanBytes, type PredictPlan } from './predict.js';

/** The settings of one compress call (every entry point of the codec's compress takes them). */
export interface CompressSettings {
  /** Bytes of elements a chunk on the CPU path: `chunkBytes`, or the level's default (ts/format/layout.ts defaultChunkBytes). */
  readonly chunkBytes: number;
  /**
   * Bytes of elements a chunk on the GPU path: `chunkBytes` when the caller gave it (the same
   * bytes on both paths), else at least {@link GPU_DEFAULT_CHUNK_BYTES}.
   */
  readonly gpuChunkBytes: number;
  /** A fixed pipeline (stage ids, ts/format/stages.ts), or undefined: the chooser picks each chunk's. */
  readonly codec: number[] | undefined;
  /** The lossy mode's absolute bound (f32 and f64 only), or undefined: lossless. */
  readonly errorBound: number | undefined;
  /** 1 fastest ... 9 smallest; recorded in the header. */
  readonly level: number;
  /** The decoder the Huffman streams are laid out for: 'cpu' mode 2, 'gpu' mode 3 (docs/format.md). */
  readonly decoder: 'cpu' | 'gpu';
  /** Aborts the call (ABORTED). */
  readonly signal?: AbortSignal;
  /** Keep the chooser's reasons for each chunk (default: when NODE_DEBUG=parle logs them). */
  readonly explain?: boolean;
  /**
   * The array's shape (C order; the product is the element count): recorded in the container,
   * chunks cut into whole slabs along the first axis, and the predict stage planned from it.
   */
  readonly shape?: readonly number[];
  /** The element type recorded where the input's own is not it: 'f16' for a Uint16Array of half-precision bits. */
  readonly type?: ElementType;
  /**
   * The predict plan, decided already (a {@link CompressPlan}'s): null for none; undefined plans
   * it from the call's elements ({@link predictPlanOf}).
   */
  readonly predict?: PredictPlan | null;
}

/** The settings and predict plan of each {@link CompressPlan} made by {@link makeCompressPlan}. */
const PLAN_SETTINGS = new WeakMap<CompressPlan, CompressSettings>();

/**
 * A compress call's settings with the predict stage decided once (predictor, value map and
 * fields over the array's shape or record stride: docs/format.md "Stage 7"), to reuse on arrays
 * of the same type, length and shape whose values are of the same kind: the chunks of one Zarr
 * array, the frames of a series. Deciding it reads the whole array on the calling thread; a
 * compress with the plan skips that and codes as a compress of the sample would (each chunk's
 * pipeline is still chosen from its own statistics): a 66 MiB grid written through zarrita in
 * 1 MiB chunks on the 2-core VM, 109 MB/s planning every chunk, 219 MB/s with one plan. Made by `Engine.planCompress`;
 * passed as `compress(input, { plan })`. Immutable; a plan made by one engine serves any.
 */
export class CompressPlan {
  /** The element type of the arrays it compresses. */
  readonly type: ElementType;
  /** Elements of the arrays it compresses. */
  readonly length: number;
  /** The shape each container records, when planned with one. */
  readonly shape: readonly number[] | undefined;
  /** The level (1..9). */
  readonly level: number;
  /** The predict stage as `parle inspect` names it (`'predict(lorenzo2, decimal, 1 field)'`), or `'none'`. */
  readonly predictor: string;

  /** Not for callers: a plan not made by `Engine.planCompress` is refused by compress (INVALID_OPTION). */
  constructor(type: ElementType, length: number, shape: readonly number[] | undefined, level: number, predictor: string) {
    this.type = type;
    this.length = length;
    this.shape = shape === undefined ? undefined : Object.freeze([...shape]);
    this.level = level;
    this.predictor = predictor;
    Object.freeze(this);
  }
}

/** A {@link CompressPlan} of `settings` (checked, without a signal) for `length` elements of `type`, its predict plan `predict`. */
export function makeCompressPlan(
  settings: CompressSettings,
  type: ElementType,
  length: number,
  predict: PredictPlan | undefined,
): CompressPlan {
  const plan = new CompressPlan(type, length, settings.shape, settings.level, predict === undefined ? 'none' : predictName(predict));
  const { signal: _signal, explain: _explain, ...kept } = settings;
  PLAN_SETTINGS.set(plan, Object.freeze({ ...kept, predict: predict ?? null }));
  return plan;
}

/** The settings a {@link CompressPlan} was made with (its predict plan decided), or undefined for an object not made by makeCompressPlan. */
export function settingsOfPlan(plan: unknown): CompressSettings | undefined {
  return typeof plan === 'object' && plan !== null ? PLAN_SETTINGS.get(plan as CompressPlan) : undefined;
}

/**
 * Chunk bytes of the GPU path by default: it lays out and dispatches per chunk, and with 128 KiB
 * chunks it ran 2-5x slower on an H200 (bench/results/nvidia-h200/gpu-corpus.json).
 */
export const GPU_DEFAULT_CHUNK_BYTES = 4 << 20;

/**
 * Settings with the library's defaults for what `given` leaves out: level 5, the level's chunk
 * size (and at least 4 MiB on the GPU unless `chunkBytes` is given), the chooser, lossless, the
 * CPU's Huffman layout.
 *   compressSettingsWith({ level: 9 })  ->  { level: 9, chunkBytes: 1 MiB, gpuChunkBytes: 4 MiB, codec: undefined, ... }
 */
export function compressSettingsWith(given: Partial<CompressSettings> = {}): CompressSettings {
  const level = given.level ?? DEFAULT_LEVEL;
  const chunkBytes = given.chunkBytes ?? defaultChunkBytes(level);
  const gpuChunkBytes =
    given.gpuChunkBytes ?? (given.chunkBytes !== undefined ? chunkBytes : Math.max(chunkBytes, GPU_DEFAULT_CHUNK_BYTES));
  return { codec: undefined, errorBound: undefined, decoder: 'cpu', ...given, level, chunkBytes, gpuChunkBytes };
}

/**
 * Elements a chunk of `type` holds under `settings`: `chunkBytes` worth, cut down to whole slabs
 * along a shape's first axis (one slab at least, unless a slab is over 64 MiB).
 */
export function chunkLengthOf(settings: CompressSettings, type: ElementType, chunkBytes = settings.chunkBytes): number {
  const length = chunkLengthFor(type, chunkBytes);
  const shape = settings.shape;
  if (shape === undefined || shape.length < 2) return length;
  const slab = shape.slice(1).reduce((a, d) => a * d, 1);
  if (slab * elementSize(type) > MAX_CHUNK_BYTES) return length;
  return Math.max(1, Math.floor(length / slab)) * slab;
}

/**
 * The predict plan of a call (ts/codec/predict.ts) over the elements' `bytes`: with a shape, the
 * chooser's pipelines and no error bound; a flat array's (no shape, or one axis) when it has a
 * record stride and `strides` (a writer that fixed its chunk length before seeing data passes
 * false); else undefined. 8-byte types always have one (their chunks are predicted or stored):
 * planned over the shape, the record stride or the sequence of elements, or the word planes
 * under a fixed codec or an error bound.
 */
export function predictPlanOf(
  settings: CompressSettings,
  type: ElementType,
  bytes: PlanBytes,
  { strides = true }: { strides?: boolean } = {},
): PredictPlan | undefined {
  if (settings.predict !== undefined && strides) return settings.predict ?? undefined;
  const flat = settings.shape === undefined || settings.shape.length < 2;
  if (elementSize(type) === 8) {
    // a fixed codec, or the lossy mode (which, as for f32, predicts nothing: the plan is only
    // the lossless fallback of a chunk quantizing does not shrink), plans nothing
    if (settings.codec !== undefined || settings.errorBound !== undefined) return WORD_PLANES_PLAN;
    const strided = flat && strides ? planFlat(bytes, type, settings.level) : undefined;
    return strided ?? planPredict(bytes, type, settings.shape ?? [bytes.length / 8], settings.level);
  }
  if (settings.codec !== undefined || settings.errorBound !== undefined) return undefined;
  if (flat) return strides ? planFlat(bytes, type, settings.level) : undefined;
  return planPredict(bytes, type, settings.shape!, settings.level);
}

/**
 * The chunk length and plan of a call on `length` elements whose chunks would hold `chunkLength`:
 * a flat array's plan needs chunks of whole records (of more than one element: a record stride),
 * so the length is cut down to a multiple of the record where that leaves the chunk count as it
 * is (a container stays within compressBound), else rounded up to one (fewer chunks, each up to
 * a record less one element over `chunkLength`: a 1024 x 1024 RGB image in 256 KiB chunks, 12
 * chunks cut down, 13, had lost its plan and a third of its ratio). Only where that is over
 * {@link MAX_CHUNK_BYTES} is the plan dropped (8-byte types: their plan of the sequence of elements).
 * Records of u8 and u16 are counted in whole words (RGB u8: 12 elements), so that every chunk
 * starts on a word. A single chunk that ends in a partial record drops the plan (it could not be
 * predicted); of 8-byte elements (whose partial last chunk is stored) the chunks before the last
 * are made as long as leaves it fewer elements than their count of records.
 */
export function chunkingOf(
  settings: CompressSettings,
  type: ElementType,
  length: number,
  chunkLength: number,
  plan: PredictPlan | undefined,
  bytes: PlanBytes,
): { chunkLength: number; plan: PredictPlan | undefined } {
  const flat = settings.shape === undefined || settings.shape.length < 2;
  if (plan === undefined || !flat) return { chunkLength, plan };
  const records = planRecord(plan, type);
  if (records <= 1) return { chunkLength, plan };
  // one chunk of a partial record is not predicted (a predicted chunk holds whole rows): the plan
  // would only cost its time (the GPU path's sample readback and residuals)
  const plain = () => ({ chunkLength, plan: predictPlanOf(settings, type, bytes, { strides: false }) });
  const keep = (aligned: number) => (length <= aligned && length % records !== 0 ? plain() : { chunkLength: aligned, plan });
  // whole records that end on whole words (u8 and u16): the GPU path copies chunks that start
  // off a word to words of their own first (a pass and a round trip)
  const wordElements = Math.max(1, 4 / elementSize(type));
  const record = (records * wordElements) / gcd(records, wordElements);
  const aligned = Math.floor(chunkLength / record) * record;
  if (length <= aligned) return keep(aligned);
  // 8-byte elements whose last record is partial: their last chunk has no plain pipeline and no
  // geometry, so it is stored; the chunks before it of whole records, as many as chunkLength
  // gives less one, as long as the array allows, leave it fewer elements than that count of records
  // (the same chunk count: within compressBound)
  if (elementSize(type) === 8 && length % record !== 0) {
    const before = Math.ceil(length / chunkLength) - 1;
    const even = before > 0 ? Math.floor(length / (before * record)) * record : 0;
    if (even > 0 && even * elementSize(type) <= MAX_CHUNK_BYTES && Math.ceil(length / even) === before + 1)
      return { chunkLength: even, plan };
  }
  if (aligned > 0 && Math.ceil(length / aligned) === Math.ceil(length / chunkLength)) return keep(aligned);
  const up = Math.ceil(chunkLength / record) * record;
  if (up * elementSize(type) <= MAX_CHUNK_BYTES) return keep(up);
  return plain();
}

/** The greatest common divisor of two positive integers. */
const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));

/** The chunk codec of `settings` on the CPU path: the pipeline, quantized first in the lossy mode. */
export function chunkCodecOf({ codec, errorBound }: CompressSettings): ChunkCodec {
  return errorBound === undefined ? codec : { pipeline: codec, errorBound: { abs: errorBound } };
}
