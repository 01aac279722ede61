/**
 * Decompression of a .parle container that lives on the GPU (a u8 DeviceArray) into a
 * DeviceArray: nvCOMP's case, compressed data kept in GPU memory and decoded where it is used.
 * Nothing crosses the bus but what the host needs to plan the decode, read back in two or three
 * small pieces:
 *
 *   1. the chunk table: a GPU walk of the entries (shaders/codec-container-walk.wgsl) reads back
 *      the header, each chunk's entry and the first 96 bytes of its payload (its stream
 *      directory, a quantized chunk's header); up to 4096 chunks a readback;
 *   2. what the directories point at: the first 3 bytes of each Huffman stream (its mode,
 *      segment size and last symbol: parseHuffmanStream's fields) and a quantized chunk's
 *      exceptions and directory, gathered on the GPU (codec-gather.wgsl) into one readback; the
 *      Huffman streams of quantized chunks need a third;
 *   3. the decode itself: ts/codec/gpu/decode.ts on the container's own buffer, with every check
 *      it makes on an uploaded container (both tree hashes, every stream's).
 *
 * The host keeps these bytes at their offsets in a sparse copy of the container (an untouched
 * ArrayBuffer of its length costs no memory where nothing is written) and walks the chunk table
 * again from it with every check of the in-memory reader, so the GPU's walk is trusted for
 * nothing: a walk that went astray reads zeros, which the entries' checksums reject.
 * Containers that decode.ts does not take (version 1, chunks that do not start on 4-byte
 * boundaries) are read back whole and decoded as host containers are (ts/codec/gpu/decompress.ts).
 */
import type { CpuPath } from '../../cpu/cpu-path.js';
import { abortError } from '../../cpu/pool.js';
import type { DeviceArray } from '../../gpu/device-array.js';
import type { GpuContext } from '../../gpu/context.js';
import { getPipeline } from '../../gpu/pipelines.js';
import { readAtBytes, walkChunks } from '../../format/container.js';
import { ENTRY_BYTES, HEADER_BYTES, readHeader, type LocatedChunk } from '../../format/layout.js';
import { elementSize } from '../../types.js';
import { readDirectory } from '../cpu/pipeline.js';
import { QUANTIZE_HEADER_BYTES, readQuantizeHeader } from '../quantize.js';
import { StageId, streamCount, type Pipeline } from '../stages.js';
import { canDecodeV2OnDevice, decompressV2ToDevice } from './decode.js';
import { decompressToDevice } from './decompress.js';
import { encodeGather, type GatherJob } from './stages.js';
import walkSource from '../../../shaders/codec-container-walk.wgsl';
import readSrcSource from '../../../shaders/read-src.wgsl';

/** Payload bytes read back with each entry (codec-container-walk.wgsl PREFIX): 8 streams' directory, a quantize header. */
const PREFIX = 96;
/** Words of a chunk's slot: its entry and PREFIX payload bytes. */
const SLOT_WORDS = (ENTRY_BYTES + PREFIX) / 4;
/** Words of the walk's output before the offsets (header, stop word, padding). */
const OFFSETS_AT = 12;
/** Chunks walked a readback at most (512 KiB of slots). */
const WALK_CHUNKS = 4096;
/** Bytes of a Huffman stream's header that the plan reads (mode, segment size log2, last symbol). */
const STREAM_HEAD_BYTES = 3;
const NONE = 0xffffffff;

const walkCode = `${walkSource}\n${readSrcSource}`;

function walkPipeline(gpu: GpuContext, entryPoint: 'walk' | 'copy'): GPUComputePipeline {
  return getPipeline(gpu.device, `codec-container-walk:${entryPoint}`, () => ({ code: walkCode, entryPoint }));
}

/**
 * Walks up to `chunks` entries from chunk `first` (its entry at byte `start`) on the GPU and
 * copies each entry and its payload's first PREFIX bytes into `shadow` at their offsets.
 * Returns the header's bytes, the chunks reached and where the next entry would start (NONE
 * after a payload that runs past the container's end).
 */
async function walkTable(
  gpu: GpuContext,
  container: GPUBuffer,
  shadow: Uint8Array,
  first: number,
  start: number,
  chunks: number,
): Promise<{ reached: number; stop: number }> {
  const slotsAt = OFFSETS_AT + Math.ceil(chunks / 4) * 4;
  const outBytes = 4 * (slotsAt + chunks * SLOT_WORDS);
  const read = await gpu.submit('decompress: chunk table', (s) => {
    const out = s.temp(outBytes, 'chunk table walk');
    const params = { buffer: s.uniform([shadow.length, first, start, chunks]) };
    const src = { buffer: container, size: Math.ceil(shadow.length / 4) * 4 };
    s.dispatch(
      walkPipeline(gpu, 'walk'),
      [
        { binding: 0, resource: params },
        { binding: 1, resource: src },
        { binding: 2, resource: { buffer: out } },
      ],
      1,
      'parle:table-walk',
    );
    s.dispatch(
      walkPipeline(gpu, 'copy'),
      [
        { binding: 0, resource: params },
        { binding: 1, resource: src },
        { binding: 2, resource: { buffer: out } },
      ],
      chunks,
      'parle:table-copy',
    );
    return s.readAfter(out, outBytes);
  });
  const words = await read();
  const bytes = new Uint8Array(words.buffer);
  if (first === 0) shadow.set(bytes.subarray(0, Math.min(HEADER_BYTES, shadow.length)));
  let reached = 0;
  for (; reached < chunks; reached++) {
    const at = words[OFFSETS_AT + reached];
    if (at === NONE) break;
    const slot = bytes.subarray(4 * (slotsAt + reached * SLOT_WORDS), 4 * (slotsAt + (reached + 1) * SLOT_WORDS));
    const payloadBytes = new DataView(slot.buffer, slot.byteOffset + 12, 4).getUint32(0, true);
    shadow.set(slot.subarray(0, Math.min(ENTRY_BYTES + Math.min(payloadBytes, PREFIX), shadow.length - at)), at);
  }
  return { reached, stop: words[8] };
}

/** Copies the byte ranges `regions` ([offset, length], inside the container) of `container` into `shadow` at their offsets. */
async function fetchRegions(
  gpu: GpuContext,
  container: GPUBuffer,
  shadow: Uint8Array,
  regions: readonly [number, number][],
): Promise<void> {
  const jobs: GatherJob[] = [];
  let bytes = 0;
  for (const [offset, length] of regions) {
    if (length <= 0) continue;
    jobs.push({ srcByteOffset: offset, dstByteOffset: bytes, byteLength: length });
    bytes += Math.ceil(length / 4) * 4;
  }
  if (jobs.length === 0) return;
  const read = await gpu.submit('decompress: stream heads', (s) => {
    const dst = s.temp(bytes, 'stream heads');
    s.encoder.clearBuffer(dst);
    encodeGather(gpu, s, container, dst, jobs);
    return s.readAfter(dst, bytes);
  });
  const got = new Uint8Array((await read()).buffer);
  for (const j of jobs) shadow.set(got.subarray(j.dstByteOffset, j.dstByteOffset + j.byteLength), j.srcByteOffset);
}

/** Where chunk `c`'s codes payload (its directory, then its streams) starts: after a quantized chunk's header and exceptions. */
function codesOffset(c: LocatedChunk, shadow: Uint8Array): number {
  if (c.quantize !== true) return c.payloadOffset;
  const whole = shadow.subarray(c.payloadOffset, c.payloadOffset + c.payloadBytes);
  const stages = (c.stages ?? []) as Pipeline;
  return c.payloadOffset + readQuantizeHeader(whole, whole.length, c.elementCount, 8 * streamCount(stages, 4), c.index).codesAt;
}

/** The first bytes of each Huffman stream of chunk `c`, whose directory is in `shadow`. */
function streamHeads(c: LocatedChunk, shadow: Uint8Array, width: 1 | 2 | 4): [number, number][] {
  const stages = (c.stages ?? []) as Pipeline;
  if (!stages.includes(StageId.Huffman) || c.elementCount === 0) return [];
  const at = codesOffset(c, shadow);
  const payload = shadow.subarray(at, c.payloadOffset + c.payloadBytes);
  const dir = readDirectory(payload, payload.length, stages, width, c.elementCount, c.index);
  return dir.at.map((offset, j): [number, number] => [at + offset, Math.min(STREAM_HEAD_BYTES, dir.encoded[j])]);
}

/**
 * Decodes the container held by `container` (u8; its length is the container's) into a new
 * DeviceArray on `gpu` as described above. `container` is not modified and must stay alive
 * until the promise settles. `tableChunks`: chunks walked a readback (default 4096; tests make
 * it small to take a table in several).
 * @throws ParleError UNSUPPORTED_TYPE (not u8), NOT_PARLE, UNSUPPORTED_VERSION, TRUNCATED,
 *   CORRUPT, LIMIT_EXCEEDED, CHECKSUM_MISMATCH, TOO_LARGE (beyond one storage binding),
 *   DEVICE_LOST, ABORTED
 */
export async function decompressDeviceContainer(
  cpu: CpuPath,
  gpu: GpuContext,
  container: DeviceArray,
  maxElements: number,
  signal?: AbortSignal,
  tableChunks = WALK_CHUNKS,
): Promise<DeviceArray> {
  gpu.checkInput(container, 'container', ['u8']);
  const length = container.byteLength;
  gpu.checkBindable(Math.ceil(Math.max(length, 4) / 4) * 4, 'decompress container');
  // the reader's own errors (truncated header, not a container) for what cannot hold a chunk table
  if (length < HEADER_BYTES + ENTRY_BYTES)
    return decompressToDevice(cpu, gpu, (await gpu.download(container)) as Uint8Array, maxElements, signal);
  const shadow = new Uint8Array(length);
  let first = 0;
  let start = HEADER_BYTES;
  for (;;) {
    const slots = Math.max(1, Math.min(tableChunks, Math.floor((length - start) / ENTRY_BYTES)));
    const { reached, stop } = await walkTable(gpu, container.buffer, shadow, first, start, slots);
    if (first === 0) {
      const header = readHeader(shadow.subarray(0, HEADER_BYTES), maxElements);
      if (header.version === 1 || !canDecodeV2OnDevice(header)) {
        return decompressToDevice(cpu, gpu, (await gpu.download(container)) as Uint8Array, maxElements, signal);
      }
    }
    if (signal?.aborted) throw abortError(signal);
    first += reached;
    // the walk stopped short (the table's end, a truncated container): the host's walk says which
    if (reached < slots || stop === NONE || stop >= length) break;
    start = stop;
  }
  const { header, chunks } = walkChunks(readAtBytes(shadow), length, maxElements);
  const width = elementSize(header.type);
  const coded = chunks.filter((c) => (c.stages ?? []).length > 0 && c.elementCount > 0);
  // a quantized chunk's exceptions and directory come with the other chunks' stream heads,
  // its own stream heads after them
  const quantized = coded.filter((c) => c.quantize === true);
  const regions: [number, number][] = [];
  for (const c of coded) {
    if (c.quantize !== true) regions.push(...streamHeads(c, shadow, width));
    else {
      const end = Math.min(codesOffset(c, shadow) + 8 * streamCount(c.stages as Pipeline, width), c.payloadOffset + c.payloadBytes);
      regions.push([c.payloadOffset + QUANTIZE_HEADER_BYTES, end - c.payloadOffset - QUANTIZE_HEADER_BYTES]);
    }
  }
  await fetchRegions(gpu, container.buffer, shadow, regions);
  if (quantized.length > 0) {
    await fetchRegions(
      gpu,
      container.buffer,
      shadow,
      quantized.flatMap((c) => streamHeads(c, shadow, width)),
    );
  }
  if (signal?.aborted) throw abortError(signal);
  return decompressV2ToDevice(gpu, shadow, header, chunks, signal, container.buffer);
}
