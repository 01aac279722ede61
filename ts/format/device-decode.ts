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
import type { CpuPath } from '../cpu/cpu-path.js';
import { ErrorCodes, ParleError } from '../errors.js';
import type { DeviceArray } from '../gpu/device-array.js';
import type { GpuContext } from '../gpu/context.js';
import { arrayConstructor, elementSize } from '../types.js';
import { decodeChunkRuns } from './chunk-codec.js';
import { mapLimited, readAtBytes, walkChunks } from './container.js';
import { Encoding } from './layout.js';

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
  const { header, chunks } = walkChunks(readAtBytes(bytes), bytes.length, maxElements);
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
  const Ctor = arrayConstructor(header.type);
  const values = new Ctor(runs);
  const valueBytes = new Uint8Array(values.buffer, 0, runs * size);
  const lengths = new Uint32Array(runs);
  await mapLimited(chunks.length, cpu.chunkConcurrency, async (i) => {
    const c = chunks[i];
    const payload = bytes.subarray(c.payloadOffset, c.payloadOffset + c.payloadBytes);
    const first = runStart[i];
    if (c.encoding === Encoding.Stored) {
      await decodeChunkRuns(cpu, header.type, c, payload, lengths, i, signal); // the payload checksum
      valueBytes.set(payload, first * size);
      lengths.fill(1, first, first + c.elementCount);
    } else {
      await decodeChunkRuns(cpu, header.type, c, payload, lengths.subarray(first, first + c.runCount), i, signal);
      valueBytes.set(payload.subarray(0, c.runCount * size), first * size);
    }
  });
  if (signal?.aborted) throw new ParleError(ErrorCodes.ABORTED, 'the operation was aborted', { cause: signal.reason });
  const dValues = await gpu.upload(values);
  let dLengths: DeviceArray | undefined;
  try {
    dLengths = await gpu.upload(lengths);
    const out = await gpu.rleDecode(dValues, dLengths);
    if (out.length !== header.elementCount) {
      out.destroy();
      throw new ParleError(ErrorCodes.CORRUPT, `the runs expand to ${out.length} elements, the header says ${header.elementCount}`);
    }
    return out;
  } finally {
    dValues.destroy();
    dLengths?.destroy();
  }
}
