/**
 * Compression of a DeviceArray into a .parle container on the GPU path where the GPU cannot code
 * the chunks itself (a fixed pipeline it does not have, or chunks that do not start on 4-byte
 * boundaries; ts/codec/compress.ts chooses; otherwise ts/codec/gpu/encode.ts, where the elements
 * never come to the host): Rutter's case (a volume on the GPU, compressed bytes wanted on the
 * host) the runs way, whose container is byte for byte the CPU path's:
 *
 *   1. the GPU encodes the whole array (PARLE) and the runs are read back;
 *   2. the runs are cut at chunk boundaries (a run across one becomes two);
 *   3. chunks in parallel on the worker pool: each chunk's runs are expanded into the CPU path's
 *      memory, and the chunk is coded there (the chooser's pipeline and both tree
 *      hashes, ts/codec/cpu/encode.ts).
 */
import type { CpuPath } from '../../cpu/cpu-path.js';
import type { DeviceArray } from '../../gpu/device-array.js';
import type { GpuContext } from '../../gpu/context.js';
import { bytesOf, elementSize } from '../../types.js';
import { encodeChunk } from '../cpu/chunks.js';
import type { CompressSettings } from '../settings.js';
import { assembleContainer } from '../../format/container.js';
import { mapLimited } from '../arrays.js';
import { chunkLengthFor, makeHeader } from '../../format/layout.js';
import { rleEncode } from '../../gpu/rle.js';

/**
 * Compresses `input` (on `gpu`) into a container on the host the runs way above, chunks of
 * `settings.gpuChunkBytes` (../compress.ts chooses this route where the GPU cannot code the
 * chunks itself).
 * @throws ParleError TOO_LARGE (beyond what RLE encode binds), DEVICE_LOST, ABORTED, WORKER_FAILED
 */
export async function compressRunsFromDevice(
  cpu: CpuPath,
  gpu: GpuContext,
  input: DeviceArray,
  settings: CompressSettings,
  target?: Uint8Array,
): Promise<Uint8Array> {
  const { gpuChunkBytes: chunkBytes, signal, codec, level, decoder } = settings;
  const type = settings.type ?? input.type;
  const size = elementSize(type);
  const header = makeHeader(type, input.length, chunkLengthFor(type, chunkBytes), level);
  const runs = await rleEncode(gpu, input);
  let valueBytes: Uint8Array;
  let lengths: Uint32Array;
  try {
    valueBytes = bytesOf(await gpu.download(runs.values));
    lengths = (await gpu.download(runs.lengths)) as Uint32Array;
  } finally {
    runs.values.destroy();
    runs.lengths.destroy();
  }
  // each chunk's first run, and how much of it lies before the chunk (runs cut at chunk edges)
  const C = header.chunkLength;
  const firstRun: number[] = [];
  const skip: number[] = [];
  for (let r = 0, start = 0, chunk = 0; chunk < header.chunkCount; chunk++) {
    const chunkStart = chunk * C;
    while (start + lengths[r] <= chunkStart) start += lengths[r++];
    firstRun.push(r);
    skip.push(chunkStart - start);
  }
  const chunks = await mapLimited(header.chunkCount, cpu.chunkConcurrency, (chunk) => {
    const count = Math.min(C, header.elementCount - chunk * C);
    const r0 = firstRun[chunk];
    // the chunk's runs: from r0 until `count` elements are covered, the first and last trimmed
    let r = r0;
    let covered = lengths[r0] - skip[chunk];
    while (covered < count) covered += lengths[++r];
    const chunkLengths = lengths.slice(r0, r + 1);
    chunkLengths[0] -= skip[chunk];
    chunkLengths[chunkLengths.length - 1] -= covered - count;
    const values = valueBytes.subarray(r0 * size, (r + 1) * size);
    return encodeChunk(cpu, type, { count, values, lengths: chunkLengths }, { codec, signal, level, huffmanLanes: decoder === 'gpu' });
  });
  return assembleContainer(header, chunks, target);
}
