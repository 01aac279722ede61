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
import { arrayConstructor, bytesOf, elementSize, holdsType, type ElementType, type ParleArray } from '../types.js';
import { placeBytes, type Placement } from '../codec/place.js';
import { fileUrlOf } from '../platform/node.js';

/**
 * Bytes of a Zarr chunk that one `.parle` chunk holds at most: a Zarr chunk up to this size is
 * one, a larger one spreads over the workers in parts of this size (whole slabs of its shape).
 * On the corpus arrays of bench/zarr.mjs (1 MiB Zarr chunks) one chunk against 256 KiB parts:
 * ratio -0.4 to +1.8 %, decode up to a third faster a thread (the label volume; a grid a fifth).
 */
const ZARR_CHUNK_MAX_BYTES = 4 << 20;

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
      // a chunk of up to ZARR_CHUNK_MAX_BYTES is one .parle chunk: no chunk index in its
      // container, one set of Huffman tables (zarrita's concurrent chunks spread over the workers)
      const chunkBytes = Math.min(ZARR_CHUNK_MAX_BYTES, Math.max(1024, count * elementSize(this.#type)));
      plan = engine.planCompress(chunk.data, { chunkBytes, ...this.#options, ...shape, ...type });
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
      data = await engine.decompress(bytes, { maxElements: count, out }).catch(notThisArraysChunk);
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

// ---- a store whose requests the workers make ----------------------------------------------

/** A byte range of a key, as zarrita's stores take it: `length` bytes from `offset`, or the last `suffixLength` bytes. */
export type RangeQuery = { offset: number; length: number } | { suffixLength: number };

/** What {@link WorkerFetchStore}'s `get` and `getRange` take of a request (zarrita passes the `opts` of a read). */
export interface StoreRequestOptions {
  signal?: AbortSignal;
  /** Added to the store's headers (a record). */
  headers?: Record<string, string>;
  credentials?: 'omit' | 'same-origin' | 'include';
  cache?: 'default' | 'no-store' | 'reload' | 'no-cache' | 'force-cache' | 'only-if-cached';
  redirect?: 'follow' | 'error' | 'manual';
}

/** Options of {@link WorkerFetchStore}. */
export interface WorkerFetchStoreOptions extends ZarrCodecOptions, Omit<StoreRequestOptions, 'signal'> {
  /** Ask for a suffix range with `Range: bytes=-N` (one request) instead of a HEAD then a range, as FetchStore's option (default false). */
  useSuffixRequest?: boolean;
}

const REQUEST_KEYS = ['signal', 'headers', 'credentials', 'cache', 'redirect'];

/**
 * A read-only zarrita store over HTTP whose requests the engine's workers make and whose
 * response bodies they read, so the calling thread (a page's main thread) receives each chunk
 * as one transferred buffer instead of reading it from the network: @zarrita/storage's
 * FetchStore with the reading moved off the thread (its responses the same: 404 a missing key,
 * 200 and 206 the bytes, other statuses an error). Works with `zarr.get` and with
 * {@link createGet}, any codec; the requests are the engine's {@link Engine.fetchBytes}, so a
 * custom fetch (FetchStore's `fetch` option: presigned URLs) cannot be given; headers can.
 * createGet's reads of an array of parle chunks (not sharded) in this store go further where the
 * workers share memory: zarrita maps every chunk without fetching it, then each worker fetches,
 * decodes and places its share of the chunks (Engine.fetchAndDecompress), one message a worker
 * for the whole read.
 *
 * In Node a `file:` URL names a store on local disk (`pathToFileURL(dir)`), read by the workers.
 *
 *     const store = new WorkerFetchStore('https://example.org/volume.zarr', { engine });
 *     const arr = await zarr.open.v3(store, { kind: 'array' });
 *     const { data } = await get(arr, [z, null, null]);      // get = createGet(zarr, { engine })
 *
 * @throws ParleError INVALID_ARGUMENT from the constructor (a URL that is not absolute outside a
 *   page); from get/getRange IO_ERROR (a status other than 200, 206, 404; a failed fetch),
 *   ABORTED, INVALID_OPTION (a request option this store does not take)
 */
export class WorkerFetchStore {
  /** The store's root, absolute (a relative URL is resolved against the page's location). */
  readonly url: URL;
  readonly #engine: () => Promise<Engine>;
  readonly #init: Omit<StoreRequestOptions, 'signal'>;
  readonly #useSuffixRequest: boolean;

  constructor(url: string | URL, options: WorkerFetchStoreOptions = {}) {
    const base = (globalThis as { location?: { href: string } }).location?.href;
    try {
      this.url = new URL(url, base);
    } catch {
      throw new ParleError(ErrorCodes.INVALID_ARGUMENT, `WorkerFetchStore needs an absolute URL outside a page; got ${String(url)}`);
    }
    const { engine, useSuffixRequest, ...init } = options;
    for (const key of Object.keys(init)) {
      if (!REQUEST_KEYS.includes(key) || key === 'signal')
        throw new ParleError(
          ErrorCodes.INVALID_OPTION,
          `WorkerFetchStore has no option '${key}' (engine, headers, credentials, cache, redirect, useSuffixRequest)`,
          {
            option: key,
          },
        );
    }
    this.#engine = () => (engine !== undefined ? Promise.resolve(engine) : (sharedEngine ??= createEngine()));
    this.#init = init;
    this.#useSuffixRequest = useSuffixRequest === true;
  }

  /** The URL of `key` (zarrita's absolute paths, `/zarr.json`): under the root, with the root's query. */
  #resolve(key: string): string {
    const base = new URL(this.url);
    if (!base.pathname.endsWith('/')) base.pathname += '/';
    const resolved = new URL(key.replace(/^\//, ''), base);
    resolved.search = base.search;
    return resolved.href;
  }

  /**
   * The URL and request options this store fetches `key` with (a path from the root): what
   * createGet hands the workers to fetch and decode a chunk where they are.
   */
  requestOf(key: string): { url: string; init: Omit<StoreRequestOptions, 'signal'> & { headers: Record<string, string> } } {
    return { url: this.#resolve(key), init: { ...this.#init, headers: { ...this.#init.headers } } };
  }

  async #request(key: string, options: StoreRequestOptions | undefined, method: 'GET' | 'HEAD', range?: string) {
    const { signal, headers, ...rest } = options ?? {};
    for (const key of Object.keys(rest)) {
      if (!REQUEST_KEYS.includes(key))
        throw new ParleError(
          ErrorCodes.INVALID_OPTION,
          `WorkerFetchStore's requests take no option '${key}' (${REQUEST_KEYS.join(', ')})`,
          { option: key },
        );
    }
    const engine = await this.#engine();
    const url = this.#resolve(key);
    return engine.fetchBytes(url, {
      ...this.#init,
      ...rest,
      method,
      headers: { ...this.#init.headers, ...headers, ...(range !== undefined ? { Range: range } : {}) },
      ...(signal !== undefined ? { signal } : {}),
    });
  }

  /** FetchStore's reading of a response: 404 none, 200 and 206 the bytes. */
  #bytesOf(key: string, response: { status: number; statusText: string; body: Uint8Array }): Uint8Array | undefined {
    if (response.status === 404) return undefined;
    if (response.status === 200 || response.status === 206) return response.body;
    throw new ParleError(
      ErrorCodes.IO_ERROR,
      `${this.#resolve(key)}: unexpected response status ${response.status} ${response.statusText}`,
    );
  }

  /** The bytes of `key` (a path from the root, `/c/0/0`), or undefined when the server answers 404. */
  async get(key: string, options?: StoreRequestOptions): Promise<Uint8Array | undefined> {
    return this.#bytesOf(key, await this.#request(key, options, 'GET'));
  }

  /** A byte range of `key` (for sharded arrays), or undefined when the server answers 404. */
  async getRange(key: string, range: RangeQuery, options?: StoreRequestOptions): Promise<Uint8Array | undefined> {
    if ('suffixLength' in range) {
      if (this.#useSuffixRequest) return this.#bytesOf(key, await this.#request(key, options, 'GET', `bytes=-${range.suffixLength}`));
      const head = await this.#request(key, options, 'HEAD');
      if (head.status < 200 || head.status > 299) return this.#bytesOf(key, head);
      const length = Number(head.headers['content-length']);
      if (!Number.isSafeInteger(length) || length < range.suffixLength)
        throw new ParleError(
          ErrorCodes.IO_ERROR,
          `${this.#resolve(key)}: no usable Content-Length for a suffix of ${range.suffixLength} bytes`,
        );
      return this.#bytesOf(key, await this.#request(key, options, 'GET', `bytes=${length - range.suffixLength}-${length - 1}`));
    }
    return this.#bytesOf(key, await this.#request(key, options, 'GET', `bytes=${range.offset}-${range.offset + range.length - 1}`));
  }
}

// ---- reads whose chunks the workers place ---------------------------------------------------

/** What {@link createGet} needs of the zarrita module: its `get`, and the get that takes a setter (zarrita's export for @zarrita/ndarray). */
export interface ZarritaModule {
  get: (arr: never, selection?: never, opts?: never) => Promise<unknown>;
  _zarrita_internal_get?: (arr: unknown, selection: unknown, opts: unknown, setter: unknown) => Promise<unknown>;
}

/** A chunk's container, fetched and not decoded yet: decoded by a worker into its place. */
class FetchedChunk {
  constructor(readonly bytes: Uint8Array) {}
}

/**
 * Rethrows a decode's error into an array's result: a container of another type or element
 * count than the array's chunks (LENGTH_MISMATCH, INVALID_ARGUMENT) is CORRUPT, not a chunk of
 * this array.
 */
function notThisArraysChunk(error: unknown): never {
  if (isParleError(error) && (error.code === ErrorCodes.LENGTH_MISMATCH || error.code === ErrorCodes.INVALID_ARGUMENT))
    throw new ParleError(ErrorCodes.CORRUPT, `not a chunk of this array: ${error.message}`);
  throw error;
}

/** Chunks a worker, at least, that createGet hands the workers to read themselves (fewer: fetched on the calling thread). */
const DEFERRED_MIN_PER_WORKER = 2;

/** A chunk not fetched yet (an array in a WorkerFetchStore): a worker fetches it, decodes it and places it, after zarrita's get has mapped every chunk. */
class DeferredChunk {
  constructor(readonly coords: number[]) {}
}

/** One axis of zarrita's mapping from a chunk to the result: a slice `[start, stop, step]` of each, or an index of the chunk and no axis of the result. */
interface AxisMapping {
  from: number | [number, number, number];
  to: [number, number, number] | null;
}

/**
 * The placement of a chunk of `shape` into a result of `strides` by zarrita's `mapping`, or
 * undefined for steps other than 1 (placed on the calling thread then, element by element).
 */
function placementOf(mapping: readonly AxisMapping[], shape: readonly number[], strides: readonly number[]): Placement | undefined {
  const start: number[] = [];
  const count: number[] = [];
  const outStrides: number[] = [];
  let outOffset = 0;
  let axis = 0;
  for (const { from, to } of mapping) {
    if (typeof from === 'number') {
      if (to !== null) return undefined;
      start.push(from);
      count.push(1);
      outStrides.push(0);
      continue;
    }
    if (to === null || from[2] !== 1 || to[2] !== 1) return undefined;
    start.push(from[0]);
    count.push(Math.max(0, from[1] - from[0]));
    outStrides.push(strides[axis]);
    outOffset += to[0] * strides[axis];
    axis++;
  }
  return { shape, start, count, outOffset, outStrides };
}

/** Whether an array's chunks are parle containers only (its codecs, or a shard's inner codecs, are `[parle]`), read from its metadata once. */
const parleOnly = new WeakMap<object, Promise<boolean>>();

interface ZarritaArray {
  shape: number[];
  chunks: number[];
  dtype: string;
  store: { get(key: string, options?: unknown): Promise<Uint8Array | undefined> };
  resolve(path: string): { path: string };
  getChunk(coords: number[], options?: unknown): Promise<unknown>;
}

/**
 * The requests a worker makes for the keys of `store`, where the workers can read it themselves:
 * a {@link WorkerFetchStore}'s, or in Node the file: URLs of @zarrita/storage's FileSystemStore
 * (its `root` folder); undefined for any other store.
 */
function workerRequests(
  store: unknown,
): ((key: string) => { url: string; init: Omit<StoreRequestOptions, 'signal'> & { headers: Record<string, string> } }) | undefined {
  if (store instanceof WorkerFetchStore) return (key) => store.requestOf(key);
  const root = (store as { root?: unknown }).root;
  if (store?.constructor?.name !== 'FileSystemStore' || typeof root !== 'string') return undefined;
  if (fileUrlOf(root, '') === undefined) return undefined;
  return (key) => ({ url: fileUrlOf(root, key)!, init: { headers: {} } });
}

function chunksAreParle(arr: ZarritaArray): Promise<boolean> {
  let known = parleOnly.get(arr);
  if (known === undefined) {
    known = arr.store.get(arr.resolve('zarr.json').path).then(
      (bytes) => {
        if (bytes === undefined) return false;
        const codecs =
          (JSON.parse(new TextDecoder().decode(bytes)) as { codecs?: { name: string; configuration?: { codecs?: { name: string }[] } }[] })
            .codecs ?? [];
        const only = (list: readonly { name: string }[] | undefined) => list?.length === 1 && list[0].name === ZARR_CODEC_NAME;
        return only(codecs) || (codecs.length === 1 && codecs[0].name === 'sharding_indexed' && only(codecs[0].configuration?.codecs));
      },
      () => false,
    );
    parleOnly.set(arr, known);
  }
  return known;
}

/**
 * zarrita's `get` whose chunks the engine's workers decode straight into the array it returns
 * (a SharedArrayBuffer-backed one where memory is shared): the calling thread fetches each
 * chunk's container and hands it to a worker, and copies nothing itself (zarrita's `get` copies
 * every decoded chunk into its result on the calling thread, and touches the result's fresh
 * pages there: most of a whole read's main-thread time). As @fideus-labs/fizarrita's
 * `getWorker` does for numcodecs' codecs. Where the workers can read the store themselves (a
 * {@link WorkerFetchStore}; in Node @zarrita/storage's FileSystemStore, by its files' file:
 * URLs) and share memory, an array that is not sharded goes further: zarrita maps every chunk
 * of the selection without fetching it, then each worker reads, decodes and places a share of
 * them ({@link Engine.fetchAndDecompress}), one message a worker for the whole read.
 *
 *     import * as zarr from 'zarrita';
 *     import { register, createGet } from 'parle-codec/zarr';
 *     register(zarr.registry, { engine });
 *     const get = createGet(zarr, { engine });
 *     const { data, shape } = await get(arr, [z, null, null]);   // as zarr.get(arr, [z, null, null])
 *
 * Arrays whose chunks are not parle containers alone (other codecs, or a shard whose inner
 * codecs are not `[parle]`), 0-D arrays, selections of single elements, and a zarrita without
 * `_zarrita_internal_get` go through `zarr.get` as they are; steps other than 1 are placed on
 * the calling thread. The result is zarr.get's: `{ data, shape, stride }`, C order.
 * @throws ParleError of a chunk's decode (CORRUPT, CHECKSUM_MISMATCH, ...), where zarr.get
 *   throws its CodecPipelineError; zarrita's errors of the selection and the store
 */
export function createGet(
  zarr: ZarritaModule,
  options: ZarrCodecOptions = {},
): (arr: unknown, selection?: unknown, opts?: Record<string, unknown>) => Promise<unknown> {
  const given = options.engine;
  const engineOf = () => (given !== undefined ? Promise.resolve(given) : (sharedEngine ??= createEngine()));
  const plainGet = zarr.get as (arr: unknown, selection?: unknown, opts?: unknown) => Promise<unknown>;
  return async (array, selection = null, opts = {}) => {
    const arr = array as ZarritaArray;
    const internal = zarr._zarrita_internal_get;
    const type = ZARR_DATA_TYPES[arr.dtype];
    const points = Array.isArray(selection) && selection.every((s) => typeof s === 'number');
    const marker = Object.getOwnPropertySymbols(arr).find((s) => s.description === 'zarrita.context');
    if (internal === undefined || marker === undefined || type === undefined || type === 'f16' || arr.shape.length === 0 || points)
      return plainGet(arr, selection, opts);
    const [engine, parle] = await Promise.all([engineOf(), chunksAreParle(arr)]);
    if (!parle) return plainGet(arr, selection, opts);
    const context = (arr as unknown as Record<symbol, ChunkContext>)[marker];
    const size = elementSize(type);
    // An array in a WorkerFetchStore, or (Node) @zarrita/storage's FileSystemStore, not sharded,
    // on workers that share memory: zarrita's get maps every chunk without fetching it, then the
    // workers read, decode and place them all, one message a worker for the whole read
    // (engine.fetchAndDecompress; a FileSystemStore's files by their file: URLs)
    const requestOf = workerRequests(arr.store);
    const deferring =
      requestOf !== undefined &&
      context.kind === 'regular' &&
      engine.sharedMemory &&
      typeof SharedArrayBuffer !== 'undefined' &&
      engine.workers > 0 &&
      context.encodeChunkKey !== undefined;
    const deferred: { coords: number[]; place: Placement; dest: { data: ParleArray; stride: number[] } }[] = [];
    /** A chunk's container decoded into its place in the result; without one (none stored), zarrita's chunk of the fill value placed. */
    const placeChunk = async (coords: number[], bytes: Uint8Array | undefined, place: Placement, dest: { data: ParleArray }) => {
      if (bytes === undefined) {
        const chunk = (await arr.getChunk(coords)) as { data: ParleArray };
        placeBytes(place, bytesOf(chunk.data), 0, bytesOf(dest.data), size);
      } else
        await engine
          .decompress(bytes, { out: dest.data, place, maxElements: place.shape.reduce((a, d) => a * d, 1) })
          .catch(notThisArraysChunk);
    };
    const fetchDeferred = async () => {
      const dest = deferred[0].dest;
      if (deferred.length < DEFERRED_MIN_PER_WORKER * engine.workers) {
        // a few chunks (a region, a slice): fetched here and decoded one a task, as without a
        // store the workers read (a task a worker and its scratch cost more than they save)
        // (every one settles before the read does: no write into the result after it)
        const settled = await Promise.allSettled(
          deferred.map(async ({ coords, place }) =>
            placeChunk(coords, await context.getChunkBytes(coords, (opts as { opts?: unknown }).opts), place, dest),
          ),
        );
        const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
        if (failed) throw failed.reason;
        return;
      }
      const requests = deferred.map(({ coords, place }) => {
        const { url, init } = requestOf!(arr.resolve(context.encodeChunkKey!(coords)).path);
        return { url, place, headers: init.headers };
      });
      const { headers: _, ...init } = requestOf!('/').init;
      const signal = (opts as { opts?: { signal?: AbortSignal } }).opts?.signal;
      const missing = await engine.fetchAndDecompress(requests, { out: dest.data, init, ...(signal ? { signal } : {}) });
      // chunks never written: the fill value
      for (const i of missing) await placeChunk(deferred[i].coords, undefined, deferred[i].place, dest);
    };
    const pending: Promise<unknown>[] = [];
    // A decode is observed when it starts: zarrita calls setFromChunk as each fetch ends and
    // awaits the others before returning, so a decode that fails while another chunk is still
    // being fetched would otherwise reject unhandled (Node's unhandledRejection; vitest counted
    // it as an error of a run whose tests all passed), though the allSettled below reports it.
    const track = (decode: Promise<unknown>) => {
      decode.catch(() => undefined);
      pending.push(decode);
    };
    // the array as get sees it: its chunks fetched, not decoded (a missing one: zarrita's fill)
    const fetching = {
      shape: arr.shape,
      chunks: arr.chunks,
      [marker]: context,
      getChunk: async (coords: number[], chunkOptions?: unknown) => {
        if (deferring) return { data: new DeferredChunk(coords), shape: context.chunkShape, stride: stridesOf(context.chunkShape) };
        const bytes = await context.getChunkBytes(coords, chunkOptions);
        if (bytes === undefined) return arr.getChunk(coords, chunkOptions);
        return { data: new FetchedChunk(bytes), shape: context.chunkShape, stride: stridesOf(context.chunkShape) };
      },
    };
    const setter = {
      prepare: (data: unknown, shape: number[], stride: number[]) => ({ data, shape, stride }),
      setScalar: () => {
        throw new ParleError(ErrorCodes.INVALID_ARGUMENT, 'createGet reads; it sets nothing');
      },
      setFromChunk: (
        dest: { data: ParleArray; stride: number[] },
        src: { data: ParleArray | FetchedChunk; shape: number[] },
        mapping: AxisMapping[],
      ) => {
        const place = placementOf(mapping, src.shape, dest.stride);
        const count = src.shape.reduce((a, d) => a * d, 1);
        if (src.data instanceof DeferredChunk) {
          const { coords } = src.data;
          if (place !== undefined) {
            deferred.push({ coords, place, dest });
            return;
          }
          // steps other than 1: zarrita's chunk (decoded by the codec; the fill value where missing), placed here
          track(arr.getChunk(coords).then((chunk) => placeStepped((chunk as { data: ParleArray }).data, dest, mapping, src.shape, size)));
          return;
        }
        if (src.data instanceof FetchedChunk) {
          const bytes = src.data.bytes;
          if (place !== undefined) {
            track(engine.decompress(bytes, { out: dest.data, place, maxElements: count }));
            return;
          }
          // steps other than 1: decoded, then placed element by element here
          track(
            engine
              .decompress(bytes, { maxElements: count })
              .then((decoded) => placeStepped(decoded as ParleArray, dest, mapping, src.shape, size)),
          );
          return;
        }
        if (place !== undefined) {
          placeBytes(
            place,
            new Uint8Array(src.data.buffer, src.data.byteOffset, src.data.byteLength),
            0,
            new Uint8Array(dest.data.buffer, dest.data.byteOffset, dest.data.byteLength),
            size,
          );
        } else placeStepped(src.data, dest, mapping, src.shape, size);
      },
    };
    const shared = engine.sharedMemory && typeof SharedArrayBuffer !== 'undefined';
    let result: unknown;
    let failure: { error: unknown } | undefined;
    try {
      result = await internal(fetching, selection, { ...opts, useSharedArrayBuffer: shared }, setter);
      if (deferred.length > 0) track(fetchDeferred());
    } catch (error) {
      failure = { error };
    }
    // every decode started settles before the call does (a failure is thrown from here)
    const settled = await Promise.allSettled(pending);
    if (failure) throw failure.error;
    const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed) throw failed.reason;
    return result;
  };
}

/** What createGet uses of zarrita's array context (zarrita.context). */
interface ChunkContext {
  kind?: 'regular' | 'sharded';
  /** The key of a chunk from its coordinates (`c/0/1`). */
  encodeChunkKey?: (coords: number[]) => string;
  chunkShape: number[];
  getChunkBytes(coords: number[], options?: unknown): Promise<Uint8Array | undefined>;
}

/** Places `chunk` (of `shape`) into `dest` by zarrita's `mapping`, element by element (any steps). */
function placeStepped(
  chunk: ParleArray,
  dest: { data: ParleArray; stride: number[] },
  mapping: readonly AxisMapping[],
  shape: readonly number[],
  size: number,
): void {
  const from = new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  const to = new Uint8Array(dest.data.buffer, dest.data.byteOffset, dest.data.byteLength);
  const strides = stridesOf(shape);
  const axes = mapping.map(({ from: f, to: t }) => {
    if (typeof f === 'number') return { at: [f], out: [] as number[] };
    const n = Math.max(0, Math.ceil((f[1] - f[0]) / f[2]));
    const at = Array.from({ length: n }, (_, k) => f[0] + k * f[2]);
    const out = t === null ? [] : Array.from({ length: n }, (_, k) => t[0] + k * t[2]);
    return { at, out };
  });
  const walk = (d: number, src: number, dst: number, outAxis: number) => {
    if (d === axes.length) {
      to.set(from.subarray(src * size, (src + 1) * size), dst * size);
      return;
    }
    const { at, out } = axes[d];
    for (let k = 0; k < at.length; k++)
      walk(
        d + 1,
        src + at[k] * strides[d],
        out.length === 0 ? dst : dst + out[k] * dest.stride[outAxis],
        out.length === 0 ? outAxis : outAxis + 1,
      );
  };
  walk(0, 0, 0, 0);
}
