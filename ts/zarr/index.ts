/**
 * parle as a Zarr v3 codec for zarrita.js (`parle-codec/zarr`; docs/zarr.md): an `array_to_bytes`
 * codec named `parle` that takes the place of Zarr's `bytes` codec, so it receives each chunk's
 * typed array and shape and writes one .parle container a chunk (docs/format.md), the chunk's
 * shape recorded and predicted along. Chunks are coded on one engine (its worker pool), the
 * caller's or one made on first use.
 *
 *     import * as zarr from 'zarrita';
 *     import { register } from 'parle-codec/zarr';
 *     register(zarr.registry);                                   // then codecs: [{ name: 'parle' }]
 *
 * Sits above the engine (ts/engine.ts); nothing below imports it.
 */
import type { CompressPlan } from '../codec/settings.js';
import { createEngine, type Engine } from '../engine.js';
import { ErrorCodes, ParleError, isParleError } from '../errors.js';
import { arrayConstructor, elementSize, holdsType, type ElementType, type ParleArray } from '../types.js';

/** The codec's name in a Zarr array's metadata (`codecs: [{ name: 'parle', configuration: { ... } }]`). */
export const ZARR_CODEC_NAME = 'parle';

/** Zarr v3 data types (core spec names) and the element types parle codes them as. */
export const ZARR_DATA_TYPES: Readonly<Record<string, ElementType>> = {
  int8: 'i8',
  int16: 'i16',
  int32: 'i32',
  int64: 'i64',
  uint8: 'u8',
  uint16: 'u16',
  uint32: 'u32',
  uint64: 'u64',
  float16: 'f16',
  float32: 'f32',
  float64: 'f64',
};

/**
 * The codec's configuration in the array's metadata. Unknown keys are refused (INVALID_OPTION
 * naming them), as everywhere in parle.
 */
export interface ZarrCodecConfiguration {
  /** 1 fastest ... 9 smallest (default 5), as `compress`'s `level`. */
  level?: number;
  /** float32 and float64 only: lossy within `abs` on every element, as `compress`'s `errorBound`. */
  errorBound?: { abs: number };
}

/** A chunk as zarrita passes it: a typed array of the chunk's elements, its shape and C-order strides (elements). */
export interface ZarrChunk {
  data: ParleArray;
  shape: number[];
  stride: number[];
}

/** What zarrita passes `fromConfig` about the array's chunks. */
export interface ZarrChunkMetadata {
  /** The Zarr data type (`float32`, `int16`, ...). */
  dataType: string;
  /** The shape of every chunk (edge chunks are padded to it). */
  shape: number[];
}

/** How the codec gets its engine: the caller's, or one made on first use and shared by every codec made without one. */
export interface ZarrCodecOptions {
  engine?: Engine | Promise<Engine>;
}

let sharedEngine: Promise<Engine> | undefined;

/** C-order strides (elements) of `shape`. */
function stridesOf(shape: readonly number[]): number[] {
  const strides = new Array<number>(shape.length);
  for (let d = shape.length - 1, step = 1; d >= 0; d--) {
    strides[d] = step;
    step *= shape[d];
  }
  return strides;
}

/**
 * One `parle` codec of an array: encodes a chunk to a .parle container and decodes it back. Made
 * by zarrita through {@link zarrCodec}'s `fromConfig`.
 */
export class ParleZarrCodec {
  readonly kind = 'array_to_bytes' as const;
  readonly #type: ElementType;
  readonly #shape: number[];
  readonly #options: { level?: number; errorBound?: { abs: number } };
  readonly #engine: () => Promise<Engine>;
  /** The compress plan of the array's chunks (made on the first chunk whose plan predicts), and how many chunks planned none. */
  #plan: CompressPlan | undefined;
  #plannedNone = 0;

  /**
   * @throws ParleError INVALID_OPTION (a configuration key parle does not know, or a bad value's
   *   type), UNSUPPORTED_TYPE (a data type parle does not code: bool, complex, strings)
   */
  constructor(configuration: unknown, meta: ZarrChunkMetadata, engine: () => Promise<Engine>) {
    const config = (configuration ?? {}) as Record<string, unknown>;
    if (typeof config !== 'object' || Array.isArray(config))
      throw new ParleError(ErrorCodes.INVALID_OPTION, `the parle codec's configuration must be an object; got ${typeof configuration}`);
    for (const key of Object.keys(config)) {
      if (key !== 'level' && key !== 'errorBound')
        throw new ParleError(ErrorCodes.INVALID_OPTION, `the parle codec's configuration has no key '${key}' (level, errorBound)`, {
          option: key,
        });
    }
    const type = ZARR_DATA_TYPES[meta.dataType];
    if (type === undefined) {
      throw new ParleError(
        ErrorCodes.UNSUPPORTED_TYPE,
        `the parle codec codes ${Object.keys(ZARR_DATA_TYPES).join(', ')}; the array's data type is ${meta.dataType}`,
      );
    }
    this.#type = type;
    this.#shape = [...meta.shape];
    this.#options = {
      ...(config.level !== undefined ? { level: config.level as number } : {}),
      ...(config.errorBound !== undefined ? { errorBound: config.errorBound as { abs: number } } : {}),
    };
    this.#engine = engine;
  }

  /**
   * The chunk's container: its elements (C order, as zarrita lays them out) with the chunk's shape.
   * @throws ParleError as `compress` (INVALID_OPTION for a bad level or bound, ...), INVALID_ARGUMENT
   *   (a chunk whose data is not of the array's type or size)
   */
  async encode(chunk: ZarrChunk): Promise<Uint8Array> {
    const engine = await this.#engine();
    const count = this.#shape.reduce((a, d) => a * d, 1);
    if (chunk.data.length !== count || !holdsType(chunk.data, this.#type)) {
      throw new ParleError(
        ErrorCodes.INVALID_ARGUMENT,
        `a chunk of ${chunk.data.length} ${chunk.data.constructor.name} elements; the array's chunks hold ${count} ${this.#type}`,
      );
    }
    // one plan an array (the predictor over the chunk's shape, planned on the calling thread): a
    // chunk that plans none (a constant one, say) is not kept for the others, up to 8 such
    let plan = this.#plan;
    if (plan === undefined) {
      const shape = this.#shape.length >= 1 && this.#shape.length <= 8 ? { shape: this.#shape } : {};
      const type = this.#type === 'f16' ? { type: 'f16' as const } : {};
      plan = engine.planCompress(chunk.data, { ...this.#options, ...shape, ...type });
      if (plan.predictor !== 'none' || ++this.#plannedNone >= 8) this.#plan = plan;
    }
    return engine.compress(chunk.data, { plan });
  }

  /**
   * The chunk of a container.
   * @throws ParleError as `decompress` (CORRUPT, CHECKSUM_MISMATCH, ...); CORRUPT for a container of
   *   another type or element count than the array's chunks
   */
  async decode(bytes: Uint8Array): Promise<ZarrChunk> {
    const engine = await this.#engine();
    const count = this.#shape.reduce((a, d) => a * d, 1);
    let data: ParleArray;
    if (engine.sharedMemory && engine.workers > 0 && this.#type !== 'f16' && typeof SharedArrayBuffer !== 'undefined') {
      // the workers write the chunk into the array zarrita receives, as they decode it
      const out = new (arrayConstructor(this.#type))(new SharedArrayBuffer(count * elementSize(this.#type)));
      try {
        data = await engine.decompress(bytes, { maxElements: count, out });
      } catch (error) {
        // a container of another type or element count than the array's chunks
        if (isParleError(error) && (error.code === ErrorCodes.LENGTH_MISMATCH || error.code === ErrorCodes.INVALID_ARGUMENT))
          throw new ParleError(ErrorCodes.CORRUPT, `not a chunk of this array: ${error.message}`);
        throw error;
      }
      return { data, shape: [...this.#shape], stride: stridesOf(this.#shape) };
    }
    data = (await engine.decompress(bytes, { maxElements: count })) as ParleArray;
    if (data.length !== count || !holdsType(data, this.#type)) {
      throw new ParleError(
        ErrorCodes.CORRUPT,
        `a chunk of ${data.length} ${data.constructor.name} elements; the array's chunks hold ${count} ${this.#type}`,
      );
    }
    return { data, shape: [...this.#shape], stride: stridesOf(this.#shape) };
  }
}

/**
 * The codec's registry entry for zarrita (`registry.set('parle', async () => zarrCodec())`): what
 * `register` adds. Chunks are coded on `options.engine`, or on one engine made on first use
 * (default options: every core's worker, the GPU where there is one).
 */
export function zarrCodec(options: ZarrCodecOptions = {}): {
  kind: 'array_to_bytes';
  fromConfig(configuration: unknown, meta: ZarrChunkMetadata): ParleZarrCodec;
} {
  const given = options.engine;
  const engine = () => (given !== undefined ? Promise.resolve(given) : (sharedEngine ??= createEngine()));
  return { kind: 'array_to_bytes', fromConfig: (configuration, meta) => new ParleZarrCodec(configuration, meta, engine) };
}

/**
 * Adds the `parle` codec to zarrita's codec registry (`import { registry } from 'zarrita'`), so
 * arrays whose metadata name it read and write through parle.
 *
 *     register(zarr.registry);                        // a shared engine, made on first use
 *     register(zarr.registry, { engine });            // this engine's workers
 */
export function register(registry: Map<string, () => Promise<unknown>>, options: ZarrCodecOptions = {}): void {
  const entry = zarrCodec(options);
  registry.set(ZARR_CODEC_NAME, async () => entry);
}
