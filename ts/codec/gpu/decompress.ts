/**
 * Decompression of a .parle container in host memory into a DeviceArray, with the expansion on
 * the GPU: Haugen's case (a compressed file on the host, its elements wanted on the GPU), where
 * CPU decode + upload moves the decoded size over the bus and this moves about the compressed
 * size.
 *
 *   1. the CPU walks the chunk table (every check of the in-memory reader), then, chunks in
 *      parallel on the worker pool, checks each payload's XXH64 and decodes its LEB128 run
 *      lengths to u32 (checking that they sum to the chunk's element count);
 *   2. the run values (raw in each rle payload) and the u32 lengths of all chunks are gathered
 *      into one run list; a stored chunk's elements enter it as runs of length 1;
 *   3. values and lengths are uploaded, and the GPU's RLE decode (scan of the lengths, then the
 *      load-balanced expand) writes the elements.
 *
 * What is not checked: the XXH64 of the decoded elements (computing it needs the elements on the
 * host, which is what this path avoids). The payload checksums cover the bytes that were read;
 * decode on the CPU (`path: 'cpu'`) to check the elements' checksums as well.
 */
import type { CpuPath } from '../../cpu/cpu-path.js';
import { abortError } from '../../cpu/pool.js';
import type { DeviceArray } from '../../gpu/device-array.js';
import type { GpuContext } from '../../gpu/context.js';
import { rleDecode } from '../../gpu/rle.js';
import { debug } from '../../platform/node.js';
import { arrayConstructor, elementSize, type ElementType } from '../../types.js';
import { ErrorCodes, ParleError } from '../../errors.js';
import { decodeLegacyChunkRuns } from '../legacy/chunk.js';
import { chunksOnDevice, decodeContainerOnDevice } from './decode.js';
import { decompressBytes, decompressList, mapLimited } from '../arrays.js';
import { readAtBytes, walkChunks, type ReadAt } from '../../format/container.js';
import { Encoding, type Header, type LocatedChunk } from '../../format/layout.js';

/** `n` rounded up to a multiple of 4. */
const roundUp4 = (n: number) => Math.ceil(n / 4) * 4;

/**
 * Decodes `bytes` (a whole container) into a new DeviceArray on `gpu` as described above.
 * `bytes` is not modified.
 * @throws ParleError NOT_PARLE, UNSUPPORTED_VERSION, TRUNCATED, CORRUPT, LIMIT_EXCEEDED,
 *   CHECKSUM_MISMATCH (payload), TOO_LARGE (beyond one storage binding), DEVICE_LOST, ABORTED
 */
export async function decompressToDevice(
  cpu: CpuPath,
  gpu: GpuContext,
  bytes: Uint8Array,
  maxElements: number,
  signal?: AbortSignal,
): Promise<DeviceArray> {
  const t0 = performance.now();
  const { header, chunks } = walkChunks(readAtBytes(bytes), bytes.length, maxElements);
  if (header.version !== 1) {
    if (chunksOnDevice(readAtBytes(bytes), header, chunks)) {
      // uploaded first, then planned: the plan runs while the copy crosses the bus (an output
      // beyond one binding refused before)
      gpu.checkBindable(roundUp4(header.elementCount * elementSize(header.type)), 'decompress output');
      const uploaded = await gpu.upload(bytes);
      try {
        if (signal?.aborted) throw abortError(signal);
        return await decodeContainerOnDevice(gpu, { buffer: uploaded.buffer, readAt: readAtBytes(bytes) }, header, chunks, signal);
      } finally {
        uploaded.destroy();
      }
    }
    // chunks the GPU does not plan (a predict header that does not read): decoded on the CPU,
    // which reports the error in its own order
    const host = await decompressBytes(cpu, bytes, maxElements, signal);
    if (signal?.aborted) throw abortError(signal);
    return gpu.upload(host);
  }
  const size = elementSize(header.type);
  // runs of each chunk, and where they start in the run list
  const runStart: number[] = [];
  let runs = 0;
  for (const c of chunks) {
    runStart.push(runs);
    runs += c.encoding === Encoding.Stored ? c.elementCount : c.runCount;
  }
  gpu.checkBindable(runs * 4, 'decompress run lengths');
  gpu.checkBindable(header.elementCount * size, 'decompress output');
  // The run list lives in the CPU path's memory: workers write the lengths there directly, and
  // memory that earlier calls paged in is not faulted in again (fresh arrays of this size cost
  // more than the decode on the H200 host).
  const heap = cpu.heap;
  const valuesBlock = runs > 0 ? heap.alloc(runs * size) : undefined;
  const lengthsBlock = runs > 0 ? heap.alloc(runs * 4) : undefined;
  try {
    await mapLimited(chunks.length, cpu.chunkConcurrency, async (i) => {
      const c = chunks[i];
      const payload = bytes.subarray(c.payloadOffset, c.payloadOffset + c.payloadBytes);
      const first = runStart[i];
      const lengthsPtr = lengthsBlock!.ptr + first * 4;
      await decodeLegacyChunkRuns(cpu, header.type, c, payload, lengthsPtr, i, signal);
      const valuesAt = heap.bytes(valuesBlock!.ptr + first * size, (c.encoding === Encoding.Stored ? c.elementCount : c.runCount) * size);
      if (c.encoding === Encoding.Stored) {
        valuesAt.set(payload);
        new Uint32Array(heap.memory.buffer, lengthsPtr, c.elementCount).fill(1);
      } else {
        valuesAt.set(payload.subarray(0, c.runCount * size));
      }
    });
    if (signal?.aborted) throw abortError(signal);
    const Ctor = arrayConstructor(header.type);
    const values = new Ctor(heap.memory.buffer, valuesBlock?.ptr ?? 0, runs);
    const lengths = new Uint32Array(heap.memory.buffer, lengthsBlock?.ptr ?? 0, runs);
    const t1 = performance.now();
    const dValues = await gpu.upload(values);
    let dLengths: DeviceArray | undefined;
    try {
      dLengths = await gpu.upload(lengths);
      const t2 = performance.now();
      // the header's element count sizes the output up front (one submission, checked on the GPU)
      const out = await rleDecode(gpu, dValues, dLengths, header.elementCount);
      const t3 = performance.now();
      debug(
        () =>
          `decompress to the GPU: ${chunks.length} chunks, ${runs} runs; runs on the CPU ${(t1 - t0).toFixed(2)} ms, ` +
          `upload ${(t2 - t1).toFixed(2)} ms, GPU expand ${(t3 - t2).toFixed(2)} ms`,
      );
      return out;
    } finally {
      dValues.destroy();
      dLengths?.destroy();
    }
  } finally {
    if (valuesBlock) heap.release(valuesBlock);
    if (lengthsBlock) heap.release(lengthsBlock);
  }
}

/**
 * A reader of byte arrays laid side by side, `parts[i]` from byte `starts[i]` (ascending): each
 * read lies within one part (a chunk's bytes within its container); a read outside every part
 * gives the bytes of the part it starts in that exist (the readers check lengths).
 */
function readAtParts(parts: readonly Uint8Array[], starts: readonly number[]): ReadAt {
  return (offset, length) => {
    // the last part that starts at or before `offset`
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid] <= offset) lo = mid;
      else hi = mid - 1;
    }
    const from = offset - starts[lo];
    return parts[lo].subarray(from, from + length);
  };
}

/**
 * Decodes a list of containers (each a whole container in host memory; not modified; any may be
 * empty of elements) into one new DeviceArray of their elements one after another: a viewer's
 * case, hundreds of small chunks (Zarr chunks, volume bricks) wanted on the GPU. Every chunk of
 * every container is planned into one decode (./decode.ts: the containers copied side by side
 * into one device buffer, each straight from its array, then one submission), so a list of 256
 * containers costs about what one container of their chunks does. Lists the one decode does not take (version 1, predicted chunks it does not
 * decode) are decoded on the CPU into one host array, then uploaded. Chunk numbers in errors
 * count through the list. `maxElements` bounds the list's total.
 * @throws ParleError INVALID_ARGUMENT (an empty list; containers of different element types),
 *   the reader's codes (NOT_PARLE, UNSUPPORTED_VERSION,
 *   TRUNCATED, CORRUPT, CHECKSUM_MISMATCH, LIMIT_EXCEEDED), TOO_LARGE, DEVICE_LOST, ABORTED
 */
export async function decompressListToDevice(
  cpu: CpuPath,
  gpu: GpuContext,
  list: readonly Uint8Array[],
  maxElements: number,
  signal?: AbortSignal,
): Promise<DeviceArray> {
  if (list.length === 0) throw new ParleError(ErrorCodes.INVALID_ARGUMENT, 'decompress of a list needs at least one container');
  if (list.length === 1) return decompressToDevice(cpu, gpu, list[0], maxElements, signal);
  let elements = 0;
  let bytes = 0;
  let walkedType: ElementType | undefined;
  const walked = list.map((container, i) => {
    const w = walkChunks(readAtBytes(container), container.length, maxElements - elements);
    if (i > 0 && w.header.type !== walkedType)
      throw new ParleError(ErrorCodes.INVALID_ARGUMENT, `container ${i} holds ${w.header.type} elements, container 0 ${walkedType}`);
    walkedType = w.header.type;
    const at = { elements, bytes };
    elements += w.header.elementCount;
    bytes += roundUp4(container.length);
    return { ...w, at };
  });
  const oneDecode = walked.every((w, i) => w.header.version !== 1 && chunksOnDevice(readAtBytes(list[i]), w.header, w.chunks));
  if (!oneDecode) {
    const host = await decompressList(cpu, list, maxElements, signal);
    if (signal?.aborted) throw abortError(signal);
    return gpu.upload(host);
  }
  // the containers side by side on the device (each from a 4-byte boundary, uploaded straight
  // from the list: no host array of them all), their chunks renumbered through the list
  const chunks: LocatedChunk[] = [];
  walked.forEach((w) => {
    for (const c of w.chunks) {
      chunks.push({
        ...c,
        index: chunks.length,
        entryOffset: c.entryOffset + w.at.bytes,
        payloadOffset: c.payloadOffset + w.at.bytes,
        elementOffset: c.elementOffset + w.at.elements,
      });
    }
  });
  const starts = walked.map((w) => w.at.bytes);
  const header: Header = { ...walked[0].header, elementCount: elements, chunkCount: chunks.length };
  const joined = await gpu.uploadParts(list, starts, bytes);
  try {
    if (signal?.aborted) throw abortError(signal);
    return await decodeContainerOnDevice(gpu, { buffer: joined.buffer, readAt: readAtParts(list, starts) }, header, chunks, signal);
  } finally {
    joined.destroy();
  }
}
