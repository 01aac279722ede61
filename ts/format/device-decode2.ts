/**
 * Decompression of a version-2 container in host memory into a DeviceArray, with the work on
 * the GPU (Haugen's case: a compressed file on the host, its elements wanted on the GPU):
 *
 *   1. the CPU walks the chunk table and each chunk's stream directory and Huffman headers (every
 *      check of the in-memory reader that needs no decoding);
 *   2. the container is uploaded as it is (the compressed size crosses the bus);
 *   3. on the GPU, in few submissions: the payloads' tree hashes; every Huffman (or raw) stream of
 *      every chunk decoded at once, one invocation per segment (ts/gpu/codec.ts); the planes
 *      unshuffled and the deltas summed into the output; the elements' tree hashes. Only the
 *      hashes and a status word come back.
 * Chunks whose pipeline has an rle stage are decoded on the CPU (both hashes checked there) and
 * their elements uploaded into place: the GPU has no LEB128 decoder yet. Their elements' hashes
 * are checked on the GPU too.
 *
 * Needs every chunk's output to start on a 4-byte boundary (chunk length x element size a
 * multiple of 4, true of the default chunk size); otherwise the caller decodes on the CPU.
 */
import type { CpuPath } from '../cpu/cpu-path.js';
import { readDirectory } from '../codec/cpu-codec.js';
import { StageId, type Pipeline } from '../codec/stages.js';
import { ErrorCodes, ParleError } from '../errors.js';
import type { GpuContext } from '../gpu/context.js';
import type { DeviceArray } from '../gpu/device-array.js';
import {
  encodeDelta,
  encodeShuffle,
  huffmanDecode,
  parseHuffmanStream,
  treeHashes,
  type HuffmanDecodeJob,
  type HuffmanStreamInfo,
} from '../gpu/codec.js';
import { abortError } from '../cpu/pool.js';
import { debug } from '../platform/node.js';
import { elementSize } from '../types.js';
import { decodeChunk2 } from './chunk-codec.js';
import { mapLimited } from './container.js';
import type { Header, LocatedChunk } from './layout.js';

const roundUp4 = (n: number) => (n + 3) & ~3;

/** A raw stream of `bytes` at `at` in the container, as a mode-0 job source (the kernel skips one mode byte). */
function rawStream(bytes: number): HuffmanStreamInfo {
  return { mode: 0, decodedBytes: bytes, encodedBytes: bytes + 1, segmentLog2: 0, segments: 0, symbol: 0, lengths: new Uint8Array(256), table: new Uint32Array(0), offsetsAt: 0, bitsAt: 1 };
}

/** True when this container's chunks can be decoded by {@link decompressV2ToDevice}. */
export function canDecodeV2OnDevice(header: Header): boolean {
  return (header.chunkLength * elementSize(header.type)) % 4 === 0 || header.chunkCount <= 1;
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
  // plan: where each chunk's streams and temporaries go in one work buffer
  const jobs: HuffmanDecodeJob[] = [];
  const onCpu: number[] = [];
  interface Plan {
    chunk: LocatedChunk;
    stages: Pipeline;
    /** Work-buffer offsets of the decoded streams (planes contiguous at roundUp4(count) each). */
    streams: number[];
    /** True when delta follows a shuffle: the unshuffled elements go to the temp buffer first. */
    temp: boolean;
  }
  const plans: Plan[] = [];
  let work = 0;
  let tempBytes = 0;
  for (const c of chunks) {
    const stages = (c.stages ?? []) as Pipeline;
    const count = c.elementCount;
    const raw = count * size;
    const outAt = c.elementOffset * size;
    if (count === 0) continue;
    if (stages.includes(StageId.Rle)) {
      onCpu.push(c.index);
      continue;
    }
    if (stages.length === 0) {
      jobs.push({ stream: rawStream(raw), srcByteOffset: c.payloadOffset - 1, dstByteOffset: -1 - outAt });
      plans.push({ chunk: c, stages, streams: [], temp: false });
      continue;
    }
    const payload = bytes.subarray(c.payloadOffset, c.payloadOffset + c.payloadBytes);
    const dir = readDirectory(payload, payload.length, stages, size as 1 | 2 | 4, count, c.index);
    const shuffle = stages.includes(StageId.Shuffle);
    const delta = stages.includes(StageId.Delta);
    const huffman = stages.includes(StageId.Huffman);
    const streams: number[] = [];
    for (let j = 0; j < dir.decoded.length; j++) {
      const D = dir.decoded[j];
      let stream: HuffmanStreamInfo;
      let src = c.payloadOffset + dir.at[j];
      if (huffman) {
        try {
          stream = parseHuffmanStream(payload.subarray(dir.at[j], dir.at[j] + dir.encoded[j]), D);
        } catch (e) {
          if (e instanceof ParleError) throw new ParleError(e.code, `chunk ${c.index}, stream ${j}: ${e.message}`);
          throw e;
        }
      } else {
        stream = rawStream(D);
        src -= 1;
      }
      // without shuffle or delta the one stream is the output itself
      const direct = !shuffle && !delta;
      const dst = direct ? -1 - outAt : work;
      if (!direct) {
        streams.push(work);
        work += roundUp4(D);
      }
      jobs.push({ stream, srcByteOffset: src, dstByteOffset: dst });
    }
    // one temp buffer serves every chunk in turn: dispatches of a submission run in order
    if (shuffle && delta) tempBytes = Math.max(tempBytes, roundUp4(raw));
    plans.push({ chunk: c, stages, streams, temp: shuffle && delta });
  }
  gpu.checkBindable(roundUp4(Math.max(work, 4)), 'decompress streams');
  const container = await gpu.upload(bytes);
  const outBuf = gpu.acquireStorage(roundUp4(Math.max(outBytes, 4)), 'decompress output');
  const workBuf = gpu.acquireStorage(roundUp4(Math.max(work, 4)), 'decompress streams');
  const tempBuf = tempBytes > 0 ? gpu.acquireStorage(tempBytes, 'decompress unshuffled') : undefined;
  let out: DeviceArray | undefined = gpu.owned(outBuf, header.type, header.elementCount);
  try {
    // payload hashes
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
    // streams: into the work buffer, or (negative offsets) straight into the output
    const toWork = jobs.filter((j) => j.dstByteOffset >= 0);
    const toOut = jobs.filter((j) => j.dstByteOffset < 0).map((j) => ({ ...j, dstByteOffset: -1 - j.dstByteOffset }));
    if (toWork.length > 0) await huffmanDecode(gpu, container.buffer, workBuf, toWork);
    if (toOut.length > 0) await huffmanDecode(gpu, container.buffer, outBuf, toOut);
    if (signal?.aborted) throw abortError(signal);
    // planes and deltas
    const staged = plans.filter((p) => p.stages.includes(StageId.Shuffle) || p.stages.includes(StageId.Delta));
    if (staged.length > 0) {
      await gpu.submit('decompress stages', (s) => {
        for (const p of staged) {
          const count = p.chunk.elementCount;
          const outAt = p.chunk.elementOffset * size;
          const shuffle = p.stages.includes(StageId.Shuffle);
          const delta = p.stages.includes(StageId.Delta);
          if (shuffle) {
            const dst = delta ? { buf: tempBuf!, at: 0 } : { buf: outBuf, at: outAt };
            encodeShuffle(gpu, s, 'unshuffle', {
              elements: dst.buf,
              elementsByteOffset: dst.at,
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
    // chunks with rle: on the CPU, then into place
    await mapLimited(onCpu.length, cpu.chunkConcurrency, async (i) => {
      const c = chunks[onCpu[i]];
      const host = new Uint8Array(roundUp4(c.elementCount * size));
      await decodeChunk2(cpu, header.type, c, bytes.subarray(c.payloadOffset, c.payloadOffset + c.payloadBytes), host.subarray(0, c.elementCount * size), c.index, signal);
      gpu.device.queue.writeBuffer(outBuf, c.elementOffset * size, host);
    });
    const t2 = performance.now();
    // the elements' hashes, on the GPU
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
        `decompress v2 to the GPU: ${chunks.length} chunks (${onCpu.length} with rle on the CPU); upload + payload hashes ${(t1 - t0).toFixed(2)} ms, ` +
        `decode ${(t2 - t1).toFixed(2)} ms, element hashes ${(performance.now() - t2).toFixed(2)} ms`,
    );
    const result = out;
    out = undefined;
    return result;
  } finally {
    container.destroy();
    gpu.releaseStorage(workBuf);
    if (tempBuf) gpu.releaseStorage(tempBuf);
    out?.destroy();
  }
}

