/**
 * Encoding and decoding of one .parle chunk with the CPU kernels. A chunk is independent of
 * every other, so these are the units the worker pool runs in parallel.
 */
import type { CpuPath } from '../cpu/cpu-path.js';
import { DECODE_SLACK_BYTES } from '../cpu/wasm.js';
import { ErrorCodes, ParleError } from '../errors.js';
import type { ElementType } from '../types.js';
import { elementSize } from '../types.js';
import { xxh64 } from './checksum.js';
import { Encoding, type ChunkEntry } from './layout.js';

/** An encoded chunk: its table entry and its payload. */
export interface EncodedChunk {
  entry: ChunkEntry;
  payload: Uint8Array;
}

/**
 * Encodes one chunk of elements, given as their little-endian bytes, choosing RLE only when
 * its payload is strictly smaller than the raw bytes.
 */
export function encodeChunk(cpu: CpuPath, type: ElementType, elementBytes: Uint8Array): EncodedChunk {
  const size = elementSize(type);
  const count = elementBytes.length / size;
  const rawBytes = elementBytes.length;
  const elementsChecksum = xxh64(elementBytes);
  const stored = (): EncodedChunk => ({
    entry: {
      elementCount: count,
      encoding: Encoding.Stored,
      runCount: 0,
      payloadBytes: rawBytes,
      payloadChecksum: elementsChecksum,
      elementsChecksum,
    },
    payload: elementBytes,
  });
  if (count === 0) return stored();
  const { kernels, heap } = cpu;
  const encode = size === 1 ? kernels.rleEncode8 : size === 2 ? kernels.rleEncode16 : kernels.rleEncode32;
  return heap.with([rawBytes, rawBytes, count * 4, count * 5], (inBlock, valuesBlock, lengthsBlock, varintBlock) => {
    heap.bytes(inBlock.ptr, rawBytes).set(elementBytes);
    const runCount = encode(inBlock.ptr, count, valuesBlock.ptr, lengthsBlock.ptr);
    const valueBytes = runCount * size;
    // Each length takes at least one byte: skip the varint pass when RLE cannot win.
    if (valueBytes + runCount >= rawBytes) return stored();
    const varintBytes = kernels.varintEncodeLengths(lengthsBlock.ptr, runCount, varintBlock.ptr);
    const payloadBytes = valueBytes + varintBytes;
    if (payloadBytes >= rawBytes) return stored();
    const payload = new Uint8Array(payloadBytes);
    payload.set(heap.bytes(valuesBlock.ptr, valueBytes), 0);
    payload.set(heap.bytes(varintBlock.ptr, varintBytes), valueBytes);
    return {
      entry: {
        elementCount: count,
        encoding: Encoding.Rle,
        runCount,
        payloadBytes,
        payloadChecksum: xxh64(payload),
        elementsChecksum,
      },
      payload,
    };
  });
}

/**
 * Decodes chunk `index` into `out` (the chunk's elements as bytes, `entry.elementCount` x
 * element size long), checking the payload and the decoded elements against their checksums.
 * `entry` must have passed `readEntry`. `payload` and `out` must not overlap.
 * @throws ParleError CHECKSUM_MISMATCH, CORRUPT
 */
export function decodeChunk(
  cpu: CpuPath,
  type: ElementType,
  entry: ChunkEntry,
  payload: Uint8Array,
  out: Uint8Array,
  index: number,
): void {
  if (xxh64(payload) !== entry.payloadChecksum) {
    throw new ParleError(ErrorCodes.CHECKSUM_MISMATCH, `chunk ${index}: payload checksum mismatch`);
  }
  if (entry.encoding === Encoding.Stored) {
    out.set(payload);
  } else {
    const size = elementSize(type);
    const { kernels, heap } = cpu;
    const runCount = entry.runCount;
    const valueBytes = runCount * size;
    const varintBytes = payload.length - valueBytes;
    const decode = size === 1 ? kernels.rleDecode8 : size === 2 ? kernels.rleDecode16 : kernels.rleDecode32;
    heap.with([payload.length, runCount * 4, out.length + DECODE_SLACK_BYTES], (payloadBlock, lengthsBlock, outBlock) => {
      heap.bytes(payloadBlock.ptr, payload.length).set(payload);
      const consumed = kernels.varintDecodeLengths(payloadBlock.ptr + valueBytes, varintBytes, lengthsBlock.ptr, runCount);
      if (consumed !== varintBytes) {
        throw new ParleError(
          ErrorCodes.CORRUPT,
          consumed < 0 ? `chunk ${index}: run lengths are not valid LEB128` : `chunk ${index}: ${varintBytes - consumed} stray bytes after the run lengths`,
        );
      }
      const total = kernels.sumLengths(lengthsBlock.ptr, runCount);
      if (total !== entry.elementCount) {
        throw new ParleError(ErrorCodes.CORRUPT, `chunk ${index}: run lengths sum to ${total}, expected ${entry.elementCount}`);
      }
      decode(payloadBlock.ptr, lengthsBlock.ptr, runCount, outBlock.ptr);
      out.set(heap.bytes(outBlock.ptr, out.length));
    });
  }
  if (xxh64(out) !== entry.elementsChecksum) {
    throw new ParleError(ErrorCodes.CHECKSUM_MISMATCH, `chunk ${index}: decoded elements checksum mismatch`);
  }
}
