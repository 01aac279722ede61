/**
 * Reading container version 1 (docs/format.md, appendix "Versions 1 and 2"), kept in one place
 * as zstd keeps lib/legacy/: a version-1 chunk is stored or rle (values, then LEB128 run
 * lengths) with XXH64 checksums of its payload and of its elements. Nothing writes it any more.
 *
 * `decodeLegacyChunkAt` is the procedure a thread runs (ts/codec/cpu/procedures.ts): the
 * kernels, then XXH64 of the payload and of the elements, so checksums are computed in parallel
 * too. `decodeLegacyChunk` and `decodeLegacyChunkRuns` run it for a chunk from the engine's thread.
 */
import type { CpuPath } from '../../cpu/cpu-path.js';
import { bytesAt, type KernelContext } from '../../cpu/procedures.js';
import { ErrorCodes, ParleError } from '../../errors.js';
import { xxh64 } from '../../format/checksum.js';
import { Encoding, type ChunkEntry } from '../../format/layout.js';
import { kernelSize, type ElementType } from '../../types.js';
import { DECODE_SLACK_BYTES } from '../../cpu/wasm.js';

/** Parameters of `decodeLegacyChunk`. */
export interface DecodeLegacyChunkParams {
  elementSize: 1 | 2 | 4;
  entry: ChunkEntry;
  index: number;
  payloadPtr: number;
  /** Room for entry.runCount u32. */
  lengthsPtr: number;
  /** Room for entry.elementCount elements plus DECODE_SLACK_BYTES (unused with runsOnly). */
  outPtr: number;
  /**
   * Check the payload and decode only the run lengths (rle chunks) into lengthsPtr, for a decode
   * that expands the runs elsewhere (the GPU); the elements' checksum is then not checked.
   */
  runsOnly?: boolean;
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

/**
 * Decodes chunk `index` into `out` (its elements' bytes, `entry.elementCount` x element size
 * long), checking the payload and the decoded elements against their checksums. `entry` must
 * have passed `readEntry`. `payload` and `out` must not overlap.
 * @throws ParleError CHECKSUM_MISMATCH, CORRUPT
 */
export function decodeLegacyChunk(
  cpu: CpuPath,
  type: ElementType,
  entry: ChunkEntry,
  payload: Uint8Array,
  out: Uint8Array,
  index: number,
  signal?: AbortSignal,
): Promise<void> {
  const size = kernelSize(type);
  const outBytes = entry.elementCount * size;
  return cpu.runChunk(
    'decodeLegacyChunk',
    outBytes,
    [payload.length + 8, entry.runCount * 4, outBytes + DECODE_SLACK_BYTES],
    ([payloadPtr, lengthsPtr, outPtr]) => ({
      params: { elementSize: size, entry, index, payloadPtr, lengthsPtr, outPtr },
      regions: [
        { param: 'payloadPtr', bytes: payload.length, access: 'in' },
        { param: 'lengthsPtr', bytes: entry.runCount * 4, access: 'out' },
        { param: 'outPtr', bytes: outBytes + DECODE_SLACK_BYTES, access: 'out' },
      ],
      fill: () => cpu.writeBytes(payloadPtr, payload),
    }),
    (_result, [, , outPtr]) => {
      cpu.readBytes(outPtr, outBytes, out);
    },
    signal,
  );
}

/**
 * Checks chunk `index`'s payload checksum and, for an rle chunk, decodes its run lengths (LEB128)
 * into the CPU path's memory at `lengthsPtr` (room for entry.runCount u32, allocated by the
 * caller from `cpu.heap`) and checks that they sum to the chunk's element count. A stored chunk's
 * payload is its elements; nothing is decoded. The decoded elements' checksum is not checked here
 * (the elements are expanded elsewhere: see ts/codec/gpu/decompress.ts).
 * @throws ParleError CHECKSUM_MISMATCH (payload), CORRUPT
 */
export function decodeLegacyChunkRuns(
  cpu: CpuPath,
  type: ElementType,
  entry: ChunkEntry,
  payload: Uint8Array,
  lengthsPtr: number,
  index: number,
  signal?: AbortSignal,
): Promise<void> {
  const size = kernelSize(type);
  const lengthBytes = entry.encoding === Encoding.Stored ? 0 : entry.runCount * 4;
  // the decoded size picks a worker over the inline executor, as for decodeLegacyChunk: the LEB128
  // decode scales with the runs, and small payloads of large chunks are common
  return cpu.runChunk(
    'decodeLegacyChunk',
    entry.elementCount * size,
    [payload.length + 8],
    ([payloadPtr]) => ({
      params: { elementSize: size, entry, index, payloadPtr, lengthsPtr, outPtr: 0, runsOnly: true },
      regions: [
        { param: 'payloadPtr', bytes: payload.length, access: 'in' },
        { param: 'lengthsPtr', bytes: lengthBytes, access: 'out' },
      ],
      fill: () => cpu.writeBytes(payloadPtr, payload),
    }),
    () => undefined,
    signal,
  );
}
