/**
 * parle: a typed-array codec for JavaScript runtimes. It compresses arrays into the chunked,
 * checksummed .parle container, each chunk by the pipeline that suits it (delta, byte-plane
 * shuffle, run-length encoding, then canonical Huffman or bit-packing; an error-bounded lossy
 * mode for f32), on WebAssembly SIMD workers or WebGPU, a cost model picking the path of every
 * call; its primitives (run-length encoding, LSD radix sort, prefix scan) are public too.
 *
 *     import { createEngine } from 'parle-codec';
 *     const engine = await createEngine();
 *     const packed = await engine.compress(f32);    // Uint8Array: a .parle container
 *     const back = await engine.decompress(packed); // Float32Array equal to f32
 *     const runs = await engine.rleEncode(bytes);   // { values, lengths }
 *     await engine.destroy();
 *
 * Re-exports only; start reading at ts/engine.ts (the facade) and ts/options.ts (every option).
 * The layers below: ts/codec/ (the pipelines of both paths), ts/format/ (the container's bytes),
 * ts/cpu/ and ts/gpu/ (the runtimes and their primitives), ts/cost/ (the cost model).
 *
 * @module parle
 */
export { createEngine, DeviceArray, Engine, VERSION } from './engine.js';
export type {
  CalibrateOptions,
  CompressOptions,
  CompressToDeviceOptions,
  CompressorOptions,
  Data,
  DecompressOptions,
  DecompressorOptions,
  DeviceRuns,
  DownloadOptions,
  EngineOptions,
  ErrorBound,
  ExplainCodecOptions,
  ExplainOptions,
  Explanation,
  OpName,
  OpOptions,
  PathChoice,
  RleDecodeOptions,
  ScanOptions,
  SortOptions,
} from './options.js';
export type { Runs } from './cpu/rle.js';
export type { FetchedResponse } from './cpu/pool.js';
export type { WorkerRequestInit } from './cpu/protocol.js';
export { ErrorCodes, ParleError, isParleError } from './errors.js';
export type { ErrorCode } from './errors.js';
export type { ArrayOf, ElementType, GpuCodecType, KernelType, ParleArray, SortKeys } from './types.js';
export type { Location } from './cost/model.js';
export { ELEMENT_TYPES, GPU_CODEC_TYPES, KERNEL_TYPES, elementSize } from './types.js';
export { ContainerReader, ContainerWriter } from './codec/stream.js';
export type { Header } from './format/layout.js';
export type { ContainerReport } from './format/container.js';
export type { ChunkReport } from './codec/cpu/chunks.js';
export { CompressPlan } from './codec/settings.js';
export type { Placement } from './codec/place.js';
export {
  compressBound,
  DEFAULT_CHUNK_BYTES,
  DEFAULT_LEVEL,
  defaultChunkBytes,
  MAX_CHUNK_BYTES,
  MAX_LEVEL,
  MIN_LEVEL,
} from './format/layout.js';

// The Zarr v3 codec for zarrita.js (also `parle-codec/zarr`, whose `register` is registerZarrCodec)
export {
  register as registerZarrCodec,
  createGet as createZarrGet,
  zarrCodec,
  ParleZarrCodec,
  ZARR_CODEC_NAME,
  ZARR_DATA_TYPES,
  type ZarrChunk,
  type ZarrChunkMetadata,
  type ZarrCodecConfiguration,
  type ZarrCodecOptions,
  type ZarritaModule,
  WorkerFetchStore,
  type WorkerFetchStoreOptions,
  type StoreRequestOptions,
  type RangeQuery,
} from './zarr/index.js';
