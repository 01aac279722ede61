/**
 * The codec's procedures: what the CPU path's threads run for it, by name (ts/cpu/procedures.ts
 * runs them). The table goes to the engine's CpuPath (its calling thread) and into the workers'
 * script (./worker.ts); the procedures' parameter and result types join the CPU runtime's
 * {@link Procedures} by declaration merging, so tasks stay typed end to end while the runtime
 * imports nothing of the codec.
 */
import { callKernel, type ProcedureTable } from '../../cpu/procedures.js';
import { decodeLegacyChunkAt, type DecodeLegacyChunkParams } from '../legacy/chunk.js';
import { encodeChunkAt, type EncodeChunkParams, type EncodeChunkResult } from './encode.js';
import { decodeChunkAt, decodeRunsAt, type DecodeChunkParams, type DecodeRunsParams } from './decode.js';
import { decodeFetchedAt, type DecodeFetchedParams } from './fetched.js';
import { decodeChunksAt, encodeChunksAt, type DecodeChunksParams, type EncodeChunksParams, type EncodeChunksResult } from './batch.js';

declare module '../../cpu/protocol.js' {
  interface Procedures {
    /** A version-1 chunk (../legacy/chunk.ts). */
    decodeLegacyChunk: { params: DecodeLegacyChunkParams; result: null };
    /** One chunk of the current version (./encode.ts, ./decode.ts). */
    encodeChunk: { params: EncodeChunkParams; result: EncodeChunkResult };
    decodeChunk: { params: DecodeChunkParams; result: null };
    decodeRuns: { params: DecodeRunsParams; result: null };
    /** Many chunks, taken from a job table in the kernels' memory (./batch.ts). */
    encodeChunks: { params: EncodeChunksParams; result: EncodeChunksResult };
    decodeChunks: { params: DecodeChunksParams; result: null };
    /** A fetched container, decoded by the worker that fetched it (./fetched.ts). */
    decodeFetched: { params: DecodeFetchedParams; result: boolean };
  }
}

/** Every procedure the codec's CPU path runs, and the runtime's kernel calls. */
export const PROCEDURES: ProcedureTable = {
  kernel: callKernel,
  decodeLegacyChunk: decodeLegacyChunkAt,
  encodeChunk: encodeChunkAt,
  decodeChunk: decodeChunkAt,
  decodeRuns: decodeRunsAt,
  encodeChunks: encodeChunksAt,
  decodeChunks: decodeChunksAt,
  decodeFetched: decodeFetchedAt,
};
