/**
 * parle: run-length encoding, LSD radix sort and prefix scan for JavaScript runtimes, on
 * WebAssembly SIMD workers and WebGPU, with the .parle container format.
 *
 *     import { createEngine } from 'parle-codec';
 *     const engine = await createEngine();
 *     const runs = await engine.rleEncode(bytes);   // { values, lengths }
 *     const packed = await engine.compress(bytes);  // .parle container
 *     await engine.destroy();
 *
 * Re-exports only; start reading at ts/engine.ts.
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
  Runs,
  ScanOptions,
  SortOptions,
} from './engine.js';
export { ErrorCodes, ParleError, isParleError } from './errors.js';
export type { ErrorCode } from './errors.js';
export type { ArrayOf, ElementType, ParleArray, SortKeys } from './types.js';
export type { Location } from './cost/model.js';
export { ELEMENT_TYPES, elementSize } from './types.js';
export { ContainerReader, ContainerWriter } from './format/stream.js';
export type { Header } from './format/layout.js';
export type { ContainerReport } from './format/container.js';
export type { ChunkReport } from './codec/cpu/chunks.js';
export {
  compressBound,
  DEFAULT_CHUNK_BYTES,
  DEFAULT_LEVEL,
  defaultChunkBytes,
  MAX_CHUNK_BYTES,
  MAX_LEVEL,
  MIN_LEVEL,
} from './format/layout.js';
