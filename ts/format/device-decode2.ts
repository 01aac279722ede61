/**
 * Decompression of a version-2 container in host memory into a DeviceArray, with the work on
 * the GPU (Haugen's case: a compressed file on the host, its elements wanted on the GPU):
 *
 *   1. the CPU walks the chunk table, each chunk's stream directory and its Huffman headers;
 *   2. the container is uploaded as it is (the compressed size crosses the bus) and the GPU
 *      checks every payload's tree hash;
 *   3. chunks without an rle stage: every Huffman (or raw) stream of every chunk is decoded on
 *      the GPU at once, one invocation per segment (ts/gpu/codec.ts);
 *      chunks with an rle stage: the workers decode their streams down to runs (run values and
 *      u32 lengths: the GPU has no LEB128 decoder), the runs are uploaded (about the runs' size)
 *      and the GPU's RLE decode expands them, one dispatch for all chunks of a value width;
 *   4. the GPU unshuffles planes and sums deltas into the output, then computes every chunk's
 *      elements' tree hash. Only hashes, status words and run totals come back.
 *
 * Needs every chunk's output to start on a 4-byte boundary (chunk length x element size a
 * multiple of 4, true of the default chunk size); {@link canDecodeV2OnDevice} says.
 */
import { readDirectory, runsLayout, type RunsSlot } from '../codec/cpu-codec.js';
import { StageId, type Pipeline } from '../codec/stages.js';
import type { CpuPath } from '../cpu/cpu-path.js';
import type { HeapBlock } from '../cpu/memory.js';
import { abortError } from '../cpu/pool.js';
import { ErrorCodes, ParleError } from '../errors.js';
import {
  encodeDelta,
  encodeShuffle,
  huffmanDecode,
  parseHuffmanStream,
  treeHashes,
  type HuffmanDecodeJob,
  type HuffmanStreamInfo,
} from '../gpu/codec.js';
import type { GpuContext } from '../gpu/context.js';
import type { DeviceArray } from '../gpu/device-array.js';
import { debug } from '../platform/node.js';
import { elementSize } from '../types.js';
import { decodeChunk2Runs } from './chunk-codec.js';
import { mapLimited } from './container.js';
import type { Header, LocatedChunk } from './layout.js';

/** `n` rounded up to a multiple of 4 (arithmetic: sizes pass 2^31, past 32-bit bitwise operators). */
const roundUp4 = (n: number) => Math.ceil(n / 4) * 4;

/** A raw stream of `bytes`, as a mode-0 job (the kernel skips one mode byte before the data). */
function rawStream(bytes: number): HuffmanStreamInfo {
  return {
    mode: 0,
    decodedBytes: bytes,
    encodedBytes: bytes + 1,
    segmentLog2: 0,
    segments: 0,
    symbol: 0,
    lengths: new Uint8Array(256),
    table: new Uint32Array(0),
    offsetsAt: 0,
    bitsAt: 1,
  };
}

/** True when this container's chunks can be decoded by {@link decompressV2ToDevice}. */
export function canDecodeV2OnDevice(header: Header): boolean {
  return (header.chunkLength * elementSize(header.type)) % 4 === 0 || header.chunkCount <= 1;
}

/** Where a decoded stream goes: the output or the work buffer, at a byte offset. */
interface Target {
  out: boolean;
  at: number;
}

/** The stages after the streams of one chunk: unshuffle and / or delta decode. */
interface StagePlan {
  chunk: LocatedChunk;
  stages: Pipeline;
  /** Work-buffer offsets of the decoded streams (planes at roundUp4(count) each). */
  streams: number[];
}

/** An rle chunk's runs: its slots in its value width's blocks, and where each expansion goes. */
interface RunsPlan {
  chunk: LocatedChunk;
  width: 1 | 2 | 4;
  slots: RunsSlot[];
  /** Offsets of the chunk's values (bytes) and lengths (runs) in its width's blocks. */
  valuesAt: number;
  runsAt: number;
  targets: Target[];
}

/**
 * Decodes the version-2 container `bytes` (already walked: `header`, `chunks`) into a new
 * DeviceArray as described above. `bytes` is not modified.
 * @throws ParleError CORRUPT, CHECKSUM_MISMATCH, TOO_LARGE (beyond one storage binding), DEVICE_LOST, ABORTED
 */
export async function decompressV2ToDevice(
  cpu: CpuPath,
  gpu: GpuContext,
  bytes: Uint8Array,
  header: Header,
  chunks: readonly LocatedChunk[],
  signal?: AbortSignal,
): Promise<DeviceArray> {
  const t0 = performance.now();
  const size = elementSize(header.type);
  const outBytes = header.elementCount * size;
  gpu.checkBindable(roundUp4(Math.max(outBytes, 4)), 'decompress output');
  const jobs: (HuffmanDecodeJob & { target: Target })[] = [];
  const stagePlans: StagePlan[] = [];
  const runsPlans: RunsPlan[] = [];
  const groups = new Map<number, { valueBytes: number; runs: number; expandedBytes: number }>();
  let work = 0;
  let tempBytes = 0;
  for (const c of chunks) {
    const stages = (c.stages ?? []) as Pipeline;
    const count = c.elementCount;
    const raw = count * size;
    const outAt = c.elementOffset * size;
    if (count === 0) continue;
    if (stages.length === 0) {
      jobs.push({ stream: rawStream(raw), srcByteOffset: c.payloadOffset - 1, dstByteOffset: 0, target: { out: true, at: outAt } });
      continue;
    }
    const payload = bytes.subarray(c.payloadOffset, c.payloadOffset + c.payloadBytes);
    const dir = readDirectory(payload, payload.length, stages, size, count, c.index);
    const shuffle = stages.includes(StageId.Shuffle);
    const delta = stages.includes(StageId.Delta);
    const direct = !shuffle && !delta;
    // where the decoded (or expanded) streams go: the output itself, or the work buffer
    const targets: Target[] = [];
    const streams: number[] = [];
    const streamBytes = (shuffle ? 1 : size) * count;
    for (let k = 0; k < (shuffle ? size : 1); k++) {
      if (direct) {
        targets.push({ out: true, at: outAt });
      } else {
        targets.push({ out: false, at: work });
        streams.push(work);
        work += roundUp4(streamBytes);
      }
    }
    if (stages.includes(StageId.Rle)) {
      const layout = runsLayout(dir, stages, size, count);
      const width = layout.slots[0].width;
      const group = groups.get(width) ?? { valueBytes: 0, runs: 0, expandedBytes: 0 };
      runsPlans.push({ chunk: c, width, slots: layout.slots, valuesAt: group.valueBytes, runsAt: group.runs, targets });
      group.valueBytes += layout.valueBytes;
      group.runs += layout.runs;
      group.expandedBytes += layout.slots.length * roundUp4(streamBytes);
      groups.set(width, group);
    } else {
      const huffman = stages.includes(StageId.Huffman);
      for (let j = 0; j < dir.decoded.length; j++) {
        let stream: HuffmanStreamInfo;
        let src = c.payloadOffset + dir.at[j];
        if (huffman) {
          try {
            stream = parseHuffmanStream(payload.subarray(dir.at[j], dir.at[j] + dir.encoded[j]), dir.decoded[j]);
          } catch (e) {
            if (e instanceof ParleError) throw new ParleError(e.code, `chunk ${c.index}, stream ${j}: ${e.message}`);
            throw e;
          }
        } else {
          stream = rawStream(dir.decoded[j]);
          src -= 1;
        }
        jobs.push({ stream, srcByteOffset: src, dstByteOffset: 0, target: targets[j] });
      }
    }
    // one temp buffer serves every chunk in turn: the dispatches of a submission run in order
    if (shuffle && delta) tempBytes = Math.max(tempBytes, roundUp4(raw));
    if (!direct) stagePlans.push({ chunk: c, stages, streams });
  }
  gpu.checkBindable(roundUp4(Math.max(work, 4)), 'decompress streams');
  const container = await gpu.upload(bytes);
  const outBuf = gpu.acquireStorage(roundUp4(Math.max(outBytes, 4)), 'decompress output');
  const workBuf = gpu.acquireStorage(roundUp4(Math.max(work, 4)), 'decompress streams');
  const tempBuf = tempBytes > 0 ? gpu.acquireStorage(tempBytes, 'decompress unshuffled') : undefined;
  let out: DeviceArray | undefined = gpu.owned(outBuf, header.type, header.elementCount);
  const blocks: HeapBlock[] = [];
  const expanded: DeviceArray[] = [];
  try {
    const payloadHashes = await treeHashes(
      gpu,
      container.buffer,
      chunks.map((c) => ({ byteOffset: c.payloadOffset, byteLength: c.payloadBytes })),
    );
    for (const c of chunks) {
      if (payloadHashes[c.index] !== Number(c.payloadChecksum)) {
        throw new ParleError(ErrorCodes.CHECKSUM_MISMATCH, `chunk ${c.index}: payload checksum mismatch`);
      }
    }
    const t1 = performance.now();
    // streams of chunks without rle, on the GPU
    for (const toOut of [true, false]) {
      const some = jobs
        .filter((j) => j.target.out === toOut)
        .map(({ stream, srcByteOffset, target }) => ({ stream, srcByteOffset, dstByteOffset: target.at }));
      if (some.length > 0) await huffmanDecode(gpu, container.buffer, toOut ? outBuf : workBuf, some);
    }
    // chunks with rle: runs on the CPU, expanded on the GPU, one RLE decode a value width
    for (const [width, group] of groups) {
      const plans = runsPlans.filter((p) => p.width === width);
      const valuesBlock = cpu.heap.alloc(group.valueBytes);
      const lengthsBlock = cpu.heap.alloc(group.runs * 4);
      blocks.push(valuesBlock, lengthsBlock);
      await mapLimited(plans.length, cpu.chunkConcurrency, (i) => {
        const p = plans[i];
        const c = p.chunk;
        const last = p.slots[p.slots.length - 1];
        const runs = last.lengthsAt + last.runs + (last.pad > 0 ? 1 : 0);
        const valueBytes = last.valuesAt + (last.runs + (last.pad > 0 ? 1 : 0)) * width;
        return decodeChunk2Runs(
          cpu,
          header.type,
          c,
          bytes.subarray(c.payloadOffset, c.payloadOffset + c.payloadBytes),
          c.index,
          valuesBlock.ptr + p.valuesAt,
          valueBytes,
          lengthsBlock.ptr + 4 * p.runsAt,
          runs,
          signal,
        );
      });
      if (signal?.aborted) throw abortError(signal);
      const Values = width === 1 ? Uint8Array : width === 2 ? Uint16Array : Uint32Array;
      const dValues = await gpu.upload(new Values(cpu.heap.memory.buffer, valuesBlock.ptr, group.valueBytes / width));
      expanded.push(dValues);
      const dLengths = await gpu.upload(new Uint32Array(cpu.heap.memory.buffer, lengthsBlock.ptr, group.runs));
      expanded.push(dLengths);
      const streamsOut = await gpu.rleDecode(dValues, dLengths);
      expanded.push(streamsOut);
      if (streamsOut.length * width !== group.expandedBytes) {
        throw new ParleError(ErrorCodes.CORRUPT, `the runs expand to ${streamsOut.length * width} bytes, expected ${group.expandedBytes}`);
      }
      // each stream's expansion (padded to 4 bytes by its pad run) to its target
      await gpu.submit('decompress runs to targets', (s) => {
        let from = 0;
        for (const p of plans) {
          const streamBytes = roundUp4(p.chunk.elementCount * width);
          for (const target of p.targets) {
            s.encoder.copyBufferToBuffer(streamsOut.buffer, from, target.out ? outBuf : workBuf, target.at, streamBytes);
            from += streamBytes;
          }
        }
      });
    }
    if (signal?.aborted) throw abortError(signal);
    // planes and deltas
    if (stagePlans.length > 0) {
      await gpu.submit('decompress stages', (s) => {
        for (const p of stagePlans) {
          const count = p.chunk.elementCount;
          const outAt = p.chunk.elementOffset * size;
          const shuffle = p.stages.includes(StageId.Shuffle);
          const delta = p.stages.includes(StageId.Delta);
          if (shuffle) {
            encodeShuffle(gpu, s, 'unshuffle', {
              elements: delta ? tempBuf! : outBuf,
              elementsByteOffset: delta ? 0 : outAt,
              planes: workBuf,
              planeByteOffsets: p.streams,
              width: size as 2 | 4,
              count,
            });
          }
          if (delta) {
            encodeDelta(gpu, s, 'decode', {
              src: shuffle ? tempBuf! : workBuf,
              srcByteOffset: shuffle ? 0 : p.streams[0],
              dst: outBuf,
              dstByteOffset: outAt,
              width: size,
              count,
            });
          }
        }
      });
    }
    const t2 = performance.now();
    const elementHashes = await treeHashes(
      gpu,
      outBuf,
      chunks.map((c) => ({ byteOffset: c.elementOffset * size, byteLength: c.elementCount * size })),
    );
    for (const c of chunks) {
      if (elementHashes[c.index] !== Number(c.elementsChecksum)) {
        throw new ParleError(ErrorCodes.CHECKSUM_MISMATCH, `chunk ${c.index}: decoded elements checksum mismatch`);
      }
    }
    debug(
      () =>
        `decompress v2 to the GPU: ${chunks.length} chunks (${runsPlans.length} with rle); upload + payload hashes ${(t1 - t0).toFixed(2)} ms, ` +
        `decode ${(t2 - t1).toFixed(2)} ms, element hashes ${(performance.now() - t2).toFixed(2)} ms`,
    );
    const result = out;
    out = undefined;
    return result;
  } finally {
    container.destroy();
    for (const d of expanded) d.destroy();
    for (const b of blocks) cpu.heap.release(b);
    gpu.releaseStorage(workBuf);
    if (tempBuf) gpu.releaseStorage(tempBuf);
    out?.destroy();
  }
}
