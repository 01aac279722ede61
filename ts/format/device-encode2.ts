/**
 * Compression of a DeviceArray into a version-2 container with the codec's work on the GPU
 * (Rutter's case: data on the GPU, the container wanted on the host), so that the elements are
 * never read back or expanded on the host:
 *
 *   1. one submission: every chunk's elements' tree hash; its deltas and byte planes (the
 *      candidates' streams) into scratch buffers; byte histograms of every candidate stream;
 *   2. on the host, from the histograms: each candidate's exact Huffman code and size (huffman,
 *      delta+huffman, shuffle+huffman, delta+shuffle+huffman); if the GPU's RLE finds few enough
 *      runs, the rle stage's streams of every chunk are built on the GPU (runs cut at the chunks,
 *      lengths as LEB128: rleChunkStreams) and their histograms size rle and rle+huffman;
 *   3. per chunk the smallest: Huffman streams encoded on the GPU (PAVLE, ts/gpu/codec.ts) and
 *      only their bytes read back, plain rle streams read back as they are; a chunk that nothing
 *      shrinks is read back raw (stored). Only payload bytes cross the bus;
 *   4. the payloads' tree hashes on the workers, the container assembled.
 * Candidates here are those the GPU codes without the host: rle after delta or shuffle is not
 * among them (compress on the CPU path to have it), so the chosen pipeline may differ from the
 * CPU path's, and the bytes with it; the format is the same.
 */
import type { CpuPath } from '../cpu/cpu-path.js';
import { storedEntry } from '../codec/cpu-codec.js';
import { codedBits, codeLengths, DEFAULT_SEGMENT_LOG2, headerBytes, HuffmanMode, presentSymbols, segmentCount } from '../codec/huffman.js';
import { pipelineName, StageId, streamCount, type Pipeline } from '../codec/stages.js';
import {
  encodeDelta,
  encodeHistograms8,
  encodeShuffle,
  encodeTreeHashes,
  huffmanEncodeStreams,
  rleChunkStreams,
  type HuffmanEncodeJob,
  type RleChunkStreams,
} from '../gpu/codec.js';
import type { GpuContext } from '../gpu/context.js';
import type { DeviceArray } from '../gpu/device-array.js';
import { debug } from '../platform/node.js';
import { elementSize } from '../types.js';
import type { EncodedChunk } from './chunk-codec.js';
import { assembleContainer, mapLimited } from './container.js';
import { Encoding, chunkLengthFor, makeHeader, type ChunkEntry, type Header } from './layout.js';

/** `n` rounded up to a multiple of 4 (arithmetic: sizes pass 2^31). */
const roundUp4 = (n: number) => Math.ceil(n / 4) * 4;

/** The pipelines this path codes on the GPU; others go through the runs path (device-encode.ts). */
export function gpuCodablePipeline(pipeline: readonly number[]): boolean {
  const names = pipelineName(pipeline as Pipeline);
  return ['huffman', 'delta+huffman', 'shuffle+huffman', 'delta+shuffle+huffman', 'rle', 'rle+huffman'].includes(names);
}

/** Which source a candidate stream is read from (run values and LEB128 lengths: the rle stage's). */
type Source = 'raw' | 'delta' | 'planes' | 'deltaPlanes' | 'runValues' | 'runLengths';

/** One stream of a candidate: its source buffer, range and histogram; `plain`: stored as it is (rle without huffman). */
interface StreamPlan {
  source: Source;
  byteOffset: number;
  byteLength: number;
  hist: Uint32Array;
  plain?: boolean;
}

/** A candidate of a chunk with its exact (or, for Huffman padding, bounded) payload size. */
interface Candidate {
  pipeline: Pipeline;
  bytes: number;
  streams?: StreamPlan[];
}

/** The size of a Huffman stream of `hist`'s `n` symbols, as the CPU encoder would write it (padding bounded). */
function huffmanStreamBytes(hist: Uint32Array, n: number): { bytes: number; lengths?: Uint8Array } {
  const { count } = presentSymbols(hist);
  if (count === 0) return { bytes: 1 + n };
  if (count === 1) return { bytes: 2 };
  const lengths = codeLengths(hist);
  const K = segmentCount(n, DEFAULT_SEGMENT_LOG2);
  const bound = headerBytes(lengths) + 4 * K + Math.ceil(codedBits(hist, lengths) / 8) + K;
  return bound >= 1 + n ? { bytes: 1 + n } : { bytes: bound, lengths };
}

/** Reads `length` bytes at `offset` of `buffer` (any alignment) back to the host. */
async function readRange(gpu: GpuContext, buffer: GPUBuffer, offset: number, length: number): Promise<Uint8Array> {
  return (await readRanges(gpu, [{ buffer, offset, length }]))[0];
}

/**
 * Reads byte ranges of GPU buffers (any alignment) back to the host in one submission and one
 * mapping: gathered into one scratch buffer at 4-byte-aligned places, then cut apart.
 */
export async function readRanges(
  gpu: GpuContext,
  ranges: readonly { buffer: GPUBuffer; offset: number; length: number }[],
): Promise<Uint8Array[]> {
  const spans = ranges.map((r) => {
    const start = Math.floor(r.offset / 4) * 4;
    return { start, span: roundUp4(r.offset + r.length) - start };
  });
  const total = spans.reduce((a, s) => a + s.span, 0);
  if (total === 0) return ranges.map(() => new Uint8Array(0));
  const temp = gpu.acquireStorage(total, 'compress readback');
  try {
    await gpu.submit('compress readback', (s) => {
      let at = 0;
      ranges.forEach((r, i) => {
        if (spans[i].span > 0) s.encoder.copyBufferToBuffer(r.buffer, spans[i].start, temp, at, spans[i].span);
        at += spans[i].span;
      });
    });
    const bytes = await gpu.readBytes(temp, total);
    let at = 0;
    return ranges.map((r, i) => {
      const from = at + (r.offset - spans[i].start);
      at += spans[i].span;
      return bytes.slice(from, from + r.length);
    });
  } finally {
    gpu.releaseStorage(temp);
  }
}

/** True when {@link compressV2OnDevice} takes this array in chunks of `chunkBytes`. */
export function canCompressV2OnDevice(input: DeviceArray, chunkBytes: number): boolean {
  const size = elementSize(input.type);
  const C = chunkLengthFor(input.type, chunkBytes);
  return (C * size) % 4 === 0 || input.length <= C;
}

/**
 * Compresses `input` (on `gpu`) into a version-2 container on the host as described above;
 * `codec` fixes the pipeline (one of {@link gpuCodablePipeline}) or undefined lets the GPU's
 * chooser pick per chunk.
 * @throws ParleError TOO_LARGE (beyond one storage binding), DEVICE_LOST, ABORTED, WORKER_FAILED
 */
export async function compressV2OnDevice(
  cpu: CpuPath,
  gpu: GpuContext,
  input: DeviceArray,
  chunkBytes: number,
  signal?: AbortSignal,
  codec?: number[],
): Promise<Uint8Array> {
  const { header, encoded } = await encodeChunksV2OnDevice(cpu, gpu, input, chunkBytes, signal, codec);
  return assembleContainer(header, encoded);
}

/**
 * {@link compressV2OnDevice} without the last step: the container's header and each chunk's
 * entry and payload, for a caller that rewrites chunks (the lossy mode, device-encode-lossy.ts).
 * @throws as compressV2OnDevice
 */
export async function encodeChunksV2OnDevice(
  cpu: CpuPath,
  gpu: GpuContext,
  input: DeviceArray,
  chunkBytes: number,
  signal?: AbortSignal,
  codec?: number[],
): Promise<{ header: Header; encoded: EncodedChunk[] }> {
  const t0 = performance.now();
  const type = input.type;
  const w = elementSize(type);
  const header = makeHeader(type, input.length, chunkLengthFor(type, chunkBytes));
  const C = header.chunkLength;
  const chunks = Array.from({ length: header.chunkCount }, (_, i) => ({
    index: i,
    count: Math.min(C, header.elementCount - i * C),
    at: i * C * w,
  }));
  const wanted = codec === undefined ? undefined : pipelineName(codec as Pipeline);
  const allow = (name: string) => wanted === undefined || wanted === name;
  const useDelta = allow('delta+huffman') || allow('delta+shuffle+huffman');
  const useShuffle = w > 1 && (allow('shuffle+huffman') || allow('delta+shuffle+huffman'));
  const useRle = allow('rle') || allow('rle+huffman');
  const totalBytes = input.length * w;
  // planes of chunk c at planeAt[c] + k x roundUp4(count)
  const planeAt: number[] = [];
  let planeBytes = 0;
  for (const c of chunks) {
    planeAt.push(planeBytes);
    planeBytes += w * roundUp4(c.count);
  }
  const buffers: Partial<Record<Source, GPUBuffer>> = { raw: input.buffer };
  const acquired: GPUBuffer[] = [];
  let rle: RleChunkStreams | undefined;
  const acquire = (bytes: number, label: string) => {
    const b = gpu.acquireStorage(Math.max(4, roundUp4(bytes)), label);
    acquired.push(b);
    return b;
  };
  try {
    if (useDelta) buffers.delta = acquire(totalBytes, 'compress deltas');
    if (useShuffle) buffers.planes = acquire(planeBytes, 'compress planes');
    if (useShuffle && useDelta) buffers.deltaPlanes = acquire(planeBytes, 'compress delta planes');
    // 1. hashes, transforms and histograms in one submission
    const ranges: Record<'raw' | 'delta' | 'planes' | 'deltaPlanes', { byteOffset: number; byteLength: number }[]> = {
      raw: [],
      delta: [],
      planes: [],
      deltaPlanes: [],
    };
    for (const c of chunks) {
      ranges.raw.push({ byteOffset: c.at, byteLength: c.count * w });
      ranges.delta.push({ byteOffset: c.at, byteLength: c.count * w });
      for (let k = 0; k < w; k++) {
        const at = planeAt[c.index] + k * roundUp4(c.count);
        ranges.planes.push({ byteOffset: at, byteLength: c.count });
        ranges.deltaPlanes.push({ byteOffset: at, byteLength: c.count });
      }
    }
    const readers: Partial<Record<Source | 'hashes', () => Promise<Uint32Array>>> = {};
    await gpu.submit('compress statistics', (s) => {
      readers.hashes = encodeTreeHashes(gpu, s, input.buffer, ranges.raw);
      for (const c of chunks) {
        if (c.count === 0) continue;
        if (buffers.delta)
          encodeDelta(gpu, s, 'encode', {
            src: input.buffer,
            srcByteOffset: c.at,
            dst: buffers.delta,
            dstByteOffset: c.at,
            width: w,
            count: c.count,
          });
        const offsets = Array.from({ length: w }, (_, k) => planeAt[c.index] + k * roundUp4(c.count));
        if (buffers.planes)
          encodeShuffle(gpu, s, 'shuffle', {
            elements: input.buffer,
            elementsByteOffset: c.at,
            planes: buffers.planes,
            planeByteOffsets: offsets,
            width: w as 2 | 4,
            count: c.count,
          });
        if (buffers.deltaPlanes) {
          encodeShuffle(gpu, s, 'shuffle', {
            elements: buffers.delta!,
            elementsByteOffset: c.at,
            planes: buffers.deltaPlanes,
            planeByteOffsets: offsets,
            width: w as 2 | 4,
            count: c.count,
          });
        }
      }
      for (const source of ['raw', 'delta', 'planes', 'deltaPlanes'] as const) {
        if (buffers[source] && ranges[source].length > 0) readers[source] = encodeHistograms8(gpu, s, buffers[source]!, ranges[source]);
      }
    });
    const hashes = await readers.hashes!();
    const hists: Partial<Record<Source, Uint32Array>> = {};
    for (const source of ['raw', 'delta', 'planes', 'deltaPlanes'] as const) if (readers[source]) hists[source] = await readers[source]!();
    const histOf = (source: Source, r: number) => hists[source]!.subarray(256 * r, 256 * r + 256);
    const t1 = performance.now();
    // 2. candidates without rle, sized exactly from the histograms
    const candidates: Candidate[][] = chunks.map((c) => {
      const list: Candidate[] = [];
      const whole = (source: Source, pipeline: Pipeline) => {
        const hist = histOf(source, c.index);
        list.push({
          pipeline,
          bytes: 8 + huffmanStreamBytes(hist, c.count * w).bytes,
          streams: [{ source, byteOffset: c.at, byteLength: c.count * w, hist }],
        });
      };
      const planes = (source: Source, pipeline: Pipeline) => {
        const streams: StreamPlan[] = [];
        let bytes = 8 * w;
        for (let k = 0; k < w; k++) {
          const hist = histOf(source, c.index * w + k);
          bytes += huffmanStreamBytes(hist, c.count).bytes;
          streams.push({ source, byteOffset: planeAt[c.index] + k * roundUp4(c.count), byteLength: c.count, hist });
        }
        list.push({ pipeline, bytes, streams });
      };
      if (allow('huffman')) whole('raw', [StageId.Huffman]);
      if (useDelta && allow('delta+huffman')) whole('delta', [StageId.Delta, StageId.Huffman]);
      if (useShuffle && allow('shuffle+huffman')) planes('planes', [StageId.Shuffle, StageId.Huffman]);
      if (useShuffle && useDelta && allow('delta+shuffle+huffman'))
        planes('deltaPlanes', [StageId.Delta, StageId.Shuffle, StageId.Huffman]);
      return list;
    });
    const best = (c: { index: number; count: number }) => Math.min(c.count * w, ...candidates[c.index].map((x) => x.bytes));
    // rle candidates: the rle stage's streams built on the GPU, when the runs could beat what
    // the histograms promise (R runs cost at least R (w + 1) bytes)
    if (useRle && input.length > 0) {
      rle = await rleChunkStreams(gpu, input, C, chunks.length);
      const promised = chunks.reduce((a, c) => a + best(c), 0);
      if (wanted !== undefined || rle.runs * (w + 1) < promised) {
        const { firstRun, lebStart } = rle;
        buffers.runValues = rle.values.buffer;
        buffers.runLengths = rle.leb;
        const valueRange = (c: number) => ({ byteOffset: firstRun[c] * w, byteLength: (firstRun[c + 1] - firstRun[c]) * w });
        const lengthRange = (c: number) => ({ byteOffset: lebStart[c], byteLength: lebStart[c + 1] - lebStart[c] });
        let readValues: () => Promise<Uint32Array> = async () => new Uint32Array(0);
        let readLengths: () => Promise<Uint32Array> = async () => new Uint32Array(0);
        await gpu.submit('compress rle histograms', (s) => {
          readValues = encodeHistograms8(
            gpu,
            s,
            rle!.values.buffer,
            chunks.map((c) => valueRange(c.index)),
          );
          readLengths = encodeHistograms8(
            gpu,
            s,
            rle!.leb,
            chunks.map((c) => lengthRange(c.index)),
          );
        });
        const valueHists = await readValues();
        const lengthHists = await readLengths();
        for (const c of chunks) {
          const v = valueRange(c.index);
          const l = lengthRange(c.index);
          const vh = valueHists.subarray(256 * c.index, 256 * c.index + 256);
          const lh = lengthHists.subarray(256 * c.index, 256 * c.index + 256);
          const plan = (plain: boolean): StreamPlan[] => [
            { source: 'runValues', ...v, hist: vh, plain },
            { source: 'runLengths', ...l, hist: lh, plain },
          ];
          if (allow('rle'))
            candidates[c.index].push({ pipeline: [StageId.Rle], bytes: 16 + v.byteLength + l.byteLength, streams: plan(true) });
          if (allow('rle+huffman')) {
            const bytes = 16 + huffmanStreamBytes(vh, v.byteLength).bytes + huffmanStreamBytes(lh, l.byteLength).bytes;
            candidates[c.index].push({ pipeline: [StageId.Rle, StageId.Huffman], bytes, streams: plan(false) });
          }
        }
      }
    }
    // 3. per chunk the smallest
    // (a fixed pipeline is always encoded, and stored only if its payload comes out no smaller:
    // the CPU path's rule, so both write the same bytes)
    const choice = chunks.map((c) => {
      const list = candidates[c.index].filter((x) => wanted !== undefined || x.bytes < c.count * w);
      list.sort((a, b) => a.bytes - b.bytes);
      return list[0];
    });
    // Huffman streams of the chosen non-rle pipelines, encoded on the GPU, grouped by source buffer
    const streamBytes = new Map<StreamPlan, Uint8Array>();
    const jobs: Partial<Record<Source, { plan: StreamPlan; job: HuffmanEncodeJob }[]>> = {};
    const rawReads: StreamPlan[] = [];
    const plainReads: StreamPlan[] = [];
    for (const x of choice) {
      for (const plan of x?.streams ?? []) {
        if (plan.plain) {
          plainReads.push(plan);
          continue;
        }
        const { count, first } = presentSymbols(plan.hist);
        const sized = huffmanStreamBytes(plan.hist, plan.byteLength);
        if (count === 1) streamBytes.set(plan, new Uint8Array([HuffmanMode.OneSymbol, first]));
        else if (sized.lengths === undefined) rawReads.push(plan);
        else
          (jobs[plan.source] ??= []).push({
            plan,
            job: { srcByteOffset: plan.byteOffset, byteLength: plan.byteLength, lengths: sized.lengths, segmentLog2: DEFAULT_SEGMENT_LOG2 },
          });
      }
    }
    // raw Huffman streams (a mode byte, then the bytes) and plain rle streams, read back in one go
    const readRaw = async (reads: readonly StreamPlan[]): Promise<void> => {
      const readBytes = await readRanges(
        gpu,
        reads.map((plan) => ({ buffer: buffers[plan.source]!, offset: plan.byteOffset, length: plan.byteLength })),
      );
      reads.forEach((plan, i) => {
        if (plan.plain) return streamBytes.set(plan, readBytes[i]);
        const stream = new Uint8Array(1 + readBytes[i].length);
        stream[0] = HuffmanMode.Raw;
        stream.set(readBytes[i], 1);
        streamBytes.set(plan, stream);
      });
    };
    // every source's Huffman encode and the raw readback at once: their round trips overlap
    // (each waits for the GPU twice; one after the other they added up)
    const encodings = (Object.keys(jobs) as Source[]).map(async (source) => {
      const list = jobs[source]!;
      const out = await huffmanEncodeStreams(
        gpu,
        buffers[source]!,
        list.map((j) => j.job),
      );
      // a coded stream no smaller than raw is stored raw, as the CPU encoder does
      const raw: StreamPlan[] = [];
      list.forEach((j, i) => {
        if (out[i].length >= 1 + j.plan.byteLength) raw.push(j.plan);
        else streamBytes.set(j.plan, out[i]);
      });
      return raw;
    });
    const firstReads = readRaw([...rawReads, ...plainReads]);
    firstReads.catch(() => undefined); // awaited below; not unhandled if an encode fails first
    const lateReads = (await Promise.all(encodings)).flat();
    await firstReads;
    if (lateReads.length > 0) await readRaw(lateReads);
    const t2 = performance.now();
    // 4. payloads and their hashes
    const encoded = await mapLimited(chunks.length, cpu.chunkConcurrency, async (i): Promise<EncodedChunk> => {
      const c = chunks[i];
      const x = choice[i];
      const raw = c.count * w;
      const elementsHash = hashes[i];
      const storedChunk = async (why: string): Promise<EncodedChunk> => {
        const payload = await readRange(gpu, input.buffer, c.at, raw);
        return { entry: storedEntry(c.count, raw, elementsHash), payload, reason: why };
      };
      if (x === undefined) return storedChunk('GPU: no candidate smaller than the elements: stored');
      const streams = x.streams!.map((plan) => streamBytes.get(plan)!);
      const total = 8 * streams.length + streams.reduce((a, s) => a + s.length, 0);
      if (total >= raw) return storedChunk(`GPU: ${pipelineName(x.pipeline)} came to ${total} B: stored`);
      const payload = new Uint8Array(total);
      const dir = new DataView(payload.buffer);
      let at = 8 * streams.length;
      streams.forEach((s, j) => {
        dir.setUint32(8 * j, x.streams![j].byteLength, true);
        dir.setUint32(8 * j + 4, s.length, true);
        payload.set(s, at);
        at += s.length;
      });
      const entry: ChunkEntry = {
        elementCount: c.count,
        encoding: Encoding.Pipeline,
        runCount: 0,
        payloadBytes: total,
        payloadChecksum: BigInt(await cpu.treeHash(payload, signal, true)),
        elementsChecksum: BigInt(elementsHash),
        stages: [...x.pipeline],
        streamCount: streamCount(x.pipeline, w),
      };
      return {
        entry,
        payload,
        reason: `GPU: ${candidates[i].map((y) => `${pipelineName(y.pipeline)} ${y.bytes} B`).join(', ')}: ${pipelineName(x.pipeline)}`,
      };
    });
    debug(
      () =>
        `compress on the GPU (v2): ${chunks.length} chunks; hashes, transforms and histograms ${(t1 - t0).toFixed(2)} ms, ` +
        `runs and Huffman streams ${(t2 - t1).toFixed(2)} ms, payloads ${(performance.now() - t2).toFixed(2)} ms; ` +
        encoded.map((e, i) => `chunk ${i}: ${e.reason}`).join('; '),
    );
    return { header, encoded };
  } finally {
    rle?.release();
    for (const b of acquired) gpu.releaseStorage(b);
  }
}
