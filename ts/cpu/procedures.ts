/**
 * The procedures a thread runs on the kernels' memory: one kernel call, the decoding of one
 * version-1 .parle chunk (the kernels, then XXH64 of the payload and of the elements, so
 * checksums are computed in parallel too), or the encoding and decoding of a version-2 chunk
 * (ts/codec/cpu/pipeline.ts). The engine's thread runs them for small inputs;
 * workers run them otherwise (ts/cpu/worker-entry.ts). Plain functions of pointers: they
 * allocate nothing in the kernels' memory.
 */
import { ErrorCodes, ParleError } from '../errors.js';
import { xxh64 } from '../format/checksum.js';
import { Encoding } from '../format/layout.js';
import type { DecodeLegacyChunkParams, KernelParams, Outcome, ProcName, Procedures } from './protocol.js';
import type { Kernels } from './wasm.js';
import { decodeChunkAt, decodeRunsAt, encodeChunkAt } from '../codec/cpu/pipeline.js';
import { decodeChunksAt, encodeChunksAt } from '../codec/cpu/batch.js';

/** The kernels and the memory they work on. */
export interface KernelContext {
  kernels: Kernels;
  memory: WebAssembly.Memory;
}

function bytesAt(ctx: KernelContext, ptr: number, length: number): Uint8Array {
  return new Uint8Array(ctx.memory.buffer, ptr, length);
}

function callKernel(ctx: KernelContext, { kernel, args }: KernelParams): number {
  const fn = ctx.kernels[kernel] as (...a: number[]) => number | undefined;
  return fn(...args) ?? 0;
}

/**
 * Decodes one chunk whose entry passed `readEntry`, checking the payload's and the elements'
 * checksums and the run lengths' structure.
 * @throws ParleError CHECKSUM_MISMATCH, CORRUPT
 */
export function decodeLegacyChunkAt(ctx: KernelContext, p: DecodeLegacyChunkParams): null {
  const { kernels } = ctx;
  const { entry, index } = p;
  if (xxh64(bytesAt(ctx, p.payloadPtr, entry.payloadBytes)) !== entry.payloadChecksum) {
    throw new ParleError(ErrorCodes.CHECKSUM_MISMATCH, `chunk ${index}: payload checksum mismatch`);
  }
  const outBytes = entry.elementCount * p.elementSize;
  if (entry.encoding === Encoding.Stored) {
    if (p.runsOnly === true) return null;
    kernels.copyBytes(p.outPtr, p.payloadPtr, outBytes);
  } else {
    const valueBytes = entry.runCount * p.elementSize;
    const varintBytes = entry.payloadBytes - valueBytes;
    const consumed = kernels.varintDecodeLengths(p.payloadPtr + valueBytes, varintBytes, p.lengthsPtr, entry.runCount);
    if (consumed !== varintBytes) {
      throw new ParleError(
        ErrorCodes.CORRUPT,
        consumed < 0
          ? `chunk ${index}: run lengths are not valid LEB128`
          : `chunk ${index}: ${varintBytes - consumed} stray bytes after the run lengths`,
      );
    }
    const total = kernels.sumLengths(p.lengthsPtr, entry.runCount);
    if (total !== entry.elementCount) {
      throw new ParleError(ErrorCodes.CORRUPT, `chunk ${index}: run lengths sum to ${total}, expected ${entry.elementCount}`);
    }
    if (p.runsOnly === true) return null;
    const decode = p.elementSize === 1 ? kernels.rleDecode8 : p.elementSize === 2 ? kernels.rleDecode16 : kernels.rleDecode32;
    decode(p.payloadPtr, p.lengthsPtr, entry.runCount, p.outPtr);
  }
  if (xxh64(bytesAt(ctx, p.outPtr, outBytes)) !== entry.elementsChecksum) {
    throw new ParleError(ErrorCodes.CHECKSUM_MISMATCH, `chunk ${index}: decoded elements checksum mismatch`);
  }
  return null;
}

const procedures: { [P in ProcName]: (ctx: KernelContext, params: Procedures[P]['params']) => Procedures[P]['result'] } = {
  kernel: callKernel,
  decodeLegacyChunk: decodeLegacyChunkAt,
  encodeChunk: encodeChunkAt,
  decodeChunk: decodeChunkAt,
  decodeRuns: decodeRunsAt,
  encodeChunks: encodeChunksAt,
  decodeChunks: decodeChunksAt,
};

/** The pointer a region names: a key of the params, or `args.N` for a kernel call's argument N. */
export function regionPointer(params: Record<string, unknown>, key: string): number {
  if (key.startsWith('args.')) return (params.args as number[])[Number(key.slice(5))];
  return params[key] as number;
}

/** Sets the pointer a region names (a worker that owns its memory moves the region). */
export function setRegionPointer(params: Record<string, unknown>, key: string, value: number): void {
  if (key.startsWith('args.')) (params.args as number[])[Number(key.slice(5))] = value;
  else params[key] = value;
}

/** Runs a procedure; a ParleError becomes an error outcome (its code survives postMessage). */
export function runProcedure<P extends ProcName>(
  ctx: KernelContext,
  proc: P,
  params: Procedures[P]['params'],
): Outcome<Procedures[P]['result']> {
  try {
    return { ok: true, value: procedures[proc](ctx, params) };
  } catch (e) {
    if (e instanceof ParleError) return { ok: false, code: e.code, message: e.message };
    throw e;
  }
}
