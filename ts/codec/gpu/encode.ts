/**
 * Compression of a DeviceArray into a version-2 container with the codec's work on the GPU
 * (Rutter's case: data on the GPU, the container wanted on the host), so that the elements are
 * never read back or expanded on the host:
 *
 *   1. one submission: every chunk's elements' tree hash; its deltas and byte planes (the
 *      candidates' streams) into scratch buffers; byte histograms of every candidate stream;
 *   2. on the host, from the histograms and their Huffman codes (made on the GPU in the same
 *      submission: codec-code-lengths.wgsl), each candidate's exact size (huffman,
 *      delta+huffman, shuffle+huffman, delta+shuffle+huffman); if the runs could beat that (a
 *      lower bound on them comes from the deltas' zero bytes) the rle stage's streams of every
 *      chunk are built on the GPU (runs cut at the chunks, lengths as LEB128: rleChunkStreams)
 *      and their histograms size rle and rle+huffman;
 *   3. per chunk the smallest: Huffman streams encoded on the GPU (PAVLE, ts/codec/gpu/huffman-encode.ts) and
 *      left there (huffmanEncodeOnDevice: only their sizes are read back); a chunk that nothing
 *      shrinks is stored;
 *   4. the container laid out on the host from those sizes, then built on the GPU in one
 *      submission: each payload gathered from its pieces (stream bytes, the elements of a stored
 *      chunk, and the directories and Huffman headers the host writes, uploaded together;
 *      codec-gather.wgsl), and the payloads' tree hashes. The container is read back once, into
 *      the array returned; the host writes the header and the chunk entries into it. Only the
 *      container crosses the bus, and the host copies no payload byte.
 * Candidates here are those the GPU codes without the host: rle after delta or shuffle is not
 * among them (compress on the CPU path to have it), so the chosen pipeline may differ from the
 * CPU path's, and the bytes with it; the format is the same.
 */
import { abortError } from '../../cpu/pool.js';
import { storedEntry } from '../cpu/encode.js';
import { DEFAULT_SEGMENT_LOG2, headerBytes, HuffmanMode, LANES, LANES_SEGMENT_LOG2, presentSymbols, segmentCount } from '../huffman.js';
import { pipelineName, StageId, streamCount, type Pipeline } from '../../format/stages.js';
import { encodeDelta } from './delta.js';
import { encodeGather, type GatherJob } from './gather.js';
import { encodeTreeHashes } from './hash.js';
import { encodeHistogramCodes8, type HistogramCode } from './histogram.js';
import { huffmanEncodeOnDevice, type HuffmanEncodeJob } from './huffman-encode.js';
import { rleChunkStreams, type RleChunkStreams } from './rle-streams.js';
import { encodeShuffle, encodeShuffleChunks } from './shuffle.js';
import type { GpuContext } from '../../gpu/context.js';
import type { DeviceArray } from '../../gpu/device-array.js';
import { debug } from '../../platform/node.js';
import { elementSize, kernelSize, type ElementType } from '../../types.js';
import type { CompressSettings } from '../settings.js';
import type { EncodedChunk } from '../cpu/chunks.js';
import { ErrorCodes, ParleError } from '../../errors.js';
import {
  ENTRY_BYTES,
  Encoding,
  HEADER_BYTES,
  chunkLengthFor,
  makeHeader,
  writeEntry,
  writeHeader,
  indexBytes,
  writeIndex,
  type ChunkEntry,
  type Header,
} from '../../format/layout.js';

/** `n` rounded up to a multiple of 4 (arithmetic: sizes pass 2^31). */
const roundUp4 = (n: number) => Math.ceil(n / 4) * 4;

/** The pipelines this path codes on the GPU; others go through the runs path (ts/codec/gpu/compress.ts). */
export function gpuCodablePipeline(pipeline: readonly number[]): boolean {
  const names = pipelineName(pipeline as Pipeline);
  return ['huffman', 'delta+huffman', 'shuffle+huffman', 'delta+shuffle+huffman', 'rle', 'rle+huffman'].includes(names);
}

/** Which source a candidate stream is read from (run values and LEB128 lengths: the rle stage's). */
type Source = 'raw' | 'delta' | 'planes' | 'deltaPlanes' | 'runValues' | 'runLengths';

/** One stream of a candidate: its source buffer, range, histogram and code; `plain`: stored as it is (rle without huffman). */
interface StreamPlan {
  source: Source;
  byteOffset: number;
  byteLength: number;
  code: HistogramCode;
  plain?: boolean;
}

/** How often each value occurs, in order of first occurrence. */
function tally(values: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  return counts;
}

/** Bytes of a payload: written by the host, or a range of a GPU buffer. */
type Piece = { host: Uint8Array } | { buffer: GPUBuffer; offset: number; length: number };

/** A chunk placed in the container: its entry at byte `entryAt`, its payload right after it. */
interface LaidChunk {
  entryAt: number;
  /** The payload's bytes in order. */
  pieces: Piece[];
  payloadBytes: number;
  /** The chosen pipeline; undefined: stored. */
  pipeline?: Pipeline;
  reason: string;
}

/** A candidate of a chunk with its exact (or, for Huffman padding, bounded) payload size. */
interface Candidate {
  pipeline: Pipeline;
  bytes: number;
  streams?: StreamPlan[];
}

/**
 * The decoder a container's Huffman streams are laid out for (CompressOptions.decoder): 'gpu'
 * writes mode 3 (32 interleaved lanes a segment of 2^12 symbols), 'cpu' mode 2 (2^10-symbol
 * segments); docs/format.md, "Huffman streams".
 */
export type HuffmanDecoder = 'cpu' | 'gpu';

/** The segment size log2 of the Huffman streams written for `decoder`. */
const segmentLog2For = (decoder: HuffmanDecoder) => (decoder === 'gpu' ? LANES_SEGMENT_LOG2 : DEFAULT_SEGMENT_LOG2);

/**
 * The size of a Huffman stream of the `n` bytes counted in `code` (its code made on the GPU), as
 * the CPU encoder (ts/codec/cpu/encode.ts encodeHuffmanStream) sizes it for `decoder` before
 * coding: mode 2 with a byte of padding a segment (a bound), mode 3 with 32 lanes' last units
 * half padding (32 bytes a segment: the likely size); `lengths` when it is coded (not raw): the
 * same decision as the CPU's, so that both write the same bytes.
 */
function huffmanStreamBytes(code: HistogramCode, n: number, decoder: HuffmanDecoder): { bytes: number; lengths?: Uint8Array } {
  const { count } = presentSymbols(code.counts);
  if (count === 0) return { bytes: 1 + n };
  if (count === 1) return { bytes: 2 };
  const K = segmentCount(n, segmentLog2For(decoder));
  const padding = decoder === 'gpu' ? LANES : 1;
  const bound = headerBytes(code.lengths) + 4 * K + Math.ceil(code.codedBits / 8) + padding * K;
  return bound >= 1 + n ? { bytes: 1 + n } : { bytes: bound, lengths: code.lengths };
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

/**
 * True when {@link compressOnDevice} takes this array in chunks of `chunkBytes` with `codec`
 * (undefined: the GPU's chooser; else one of {@link gpuCodablePipeline}).
 */
export function canCompressOnDevice(
  input: { readonly type: ElementType; readonly length: number },
  chunkBytes: number,
  codec?: readonly number[],
): boolean {
  const size = elementSize(input.type);
  const C = chunkLengthFor(input.type, chunkBytes);
  return ((C * size) % 4 === 0 || input.length <= C) && (codec === undefined || gpuCodablePipeline(codec));
}

/**
 * Compresses `input` (on `gpu`) into a container on the host as described above, chunks of
 * `settings.gpuChunkBytes`;
 * `codec` fixes the pipeline (one of {@link gpuCodablePipeline}) or undefined lets the GPU's
 * chooser pick per chunk. With `target` (at least the container's length: compressBound) the
 * container is read back into its start and a view of it returned, else into a new array.
 * @throws ParleError TOO_LARGE (the input beyond one storage binding, the container beyond
 *   maxBufferSize), DEVICE_LOST, ABORTED
 */
export async function compressOnDevice(
  gpu: GpuContext,
  input: DeviceArray,
  settings: CompressSettings,
  target?: Uint8Array,
): Promise<Uint8Array> {
  return (await encodeChunksOnDevice(gpu, input, settings, { target })).container;
}

/**
 * {@link compressOnDevice} with the container left on the GPU: a u8 DeviceArray of its bytes,
 * the same bytes as compressOnDevice's. Instead of the container only the payloads' tree
 * hashes are read back; the header and the chunk entries the host makes of them are written
 * into the container's buffer on the GPU (one upload and one gather).
 * @throws as compressOnDevice
 */
export async function compressToDevice(gpu: GpuContext, input: DeviceArray, settings: CompressSettings): Promise<DeviceArray> {
  return (await encodeChunksOnDevice(gpu, input, settings, { resident: true })).device!;
}

/**
 * {@link compressOnDevice} with the container's parts: its header and each chunk's entry and
 * payload (a view into `container`), for a caller that rewrites chunks (the lossy mode,
 * ./encode-lossy.ts). With `target` (at least the container's length) the container is
 * read back into its start and `container` is a view of it. `resident`: the container is not
 * read back but returned as `device` ({@link compressToDevice}; `container` is then empty and
 * the payloads are not given).
 * @throws as compressOnDevice
 */
export async function encodeChunksOnDevice(
  gpu: GpuContext,
  input: DeviceArray,
  settings: CompressSettings,
  { target, resident = false }: { target?: Uint8Array; resident?: boolean } = {},
): Promise<{ header: Header; container: Uint8Array; encoded: EncodedChunk[]; device?: DeviceArray }> {
  const { gpuChunkBytes: chunkBytes, signal, codec, level, decoder } = settings;
  const t0 = performance.now();
  const type = input.type;
  const w = kernelSize(type);
  // the level is recorded; the GPU's chooser does not depend on it (its candidates are fixed)
  const header = makeHeader(type, input.length, chunkLengthFor(type, chunkBytes), level);
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
  const planeOffsets = (c: { index: number; count: number }) =>
    Array.from({ length: w }, (_, k) => planeAt[c.index] + k * roundUp4(c.count));
  const buffers: Partial<Record<Source, GPUBuffer>> = { raw: input.buffer };
  const acquired: GPUBuffer[] = [];
  let rle: RleChunkStreams | undefined;
  const huffmanOutputs: { release(): void }[] = [];
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
      for (const at of planeOffsets(c)) {
        ranges.planes.push({ byteOffset: at, byteLength: c.count });
        ranges.deltaPlanes.push({ byteOffset: at, byteLength: c.count });
      }
    }
    let readElementHashes: () => Promise<Uint32Array> = async () => new Uint32Array(0);
    const readers: Partial<Record<Source, () => Promise<HistogramCode[]>>> = {};
    // the deltas of every chunk in one dispatch where the input fits one binding (a dispatch
    // costs the host more than the GPU: 64 of them were 2-3 ms of a sparse volume's compress);
    // chunks after the first start at whole words (canCompressOnDevice)
    const binding = gpu.limits.maxStorageBufferBindingSize;
    const deltaAtOnce = buffers.delta !== undefined && roundUp4(totalBytes) <= binding;
    // the planes of every chunk likewise (256 KiB chunks: a dispatch a chunk was 10-12 ms of GPU
    // time at 64 MiB on the H200)
    const shuffleAtOnce = buffers.planes !== undefined && roundUp4(totalBytes) <= binding && roundUp4(planeBytes) <= binding;
    await gpu.submit('compress statistics', (s) => {
      readElementHashes = encodeTreeHashes(gpu, s, input.buffer, ranges.raw);
      if (deltaAtOnce && input.length > 0) {
        const chunkLength = chunks.length > 1 ? C : 0;
        encodeDelta(gpu, s, 'encode', { src: input.buffer, dst: buffers.delta!, width: w, count: input.length, chunkLength });
      }
      for (const c of chunks) {
        if (c.count === 0) continue;
        if (buffers.delta && !deltaAtOnce)
          encodeDelta(gpu, s, 'encode', {
            src: input.buffer,
            srcByteOffset: c.at,
            dst: buffers.delta,
            dstByteOffset: c.at,
            width: w,
            count: c.count,
          });
        if (shuffleAtOnce) continue;
        const offsets = planeOffsets(c);
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
      if (shuffleAtOnce) {
        const jobs = chunks.map((c) => ({ elementsByteOffset: c.at, planeByteOffsets: planeOffsets(c), count: c.count }));
        if (buffers.planes) encodeShuffleChunks(gpu, s, 'shuffle', input.buffer, buffers.planes, w as 2 | 4, jobs);
        if (buffers.deltaPlanes) encodeShuffleChunks(gpu, s, 'shuffle', buffers.delta!, buffers.deltaPlanes, w as 2 | 4, jobs);
      }
      for (const source of ['raw', 'delta', 'planes', 'deltaPlanes'] as const) {
        if (buffers[source] && ranges[source].length > 0) readers[source] = encodeHistogramCodes8(gpu, s, buffers[source]!, ranges[source]);
      }
    });
    const hashes = await readElementHashes();
    const codes: Partial<Record<Source, HistogramCode[]>> = {};
    for (const source of ['raw', 'delta', 'planes', 'deltaPlanes'] as const) if (readers[source]) codes[source] = await readers[source]!();
    const codeOf = (source: Source, r: number) => codes[source]![r];
    const t1 = performance.now();
    // 2. candidates without rle, sized exactly from the histograms and their codes
    const candidates: Candidate[][] = chunks.map((c) => {
      const list: Candidate[] = [];
      const whole = (source: Source, pipeline: Pipeline) => {
        const code = codeOf(source, c.index);
        list.push({
          pipeline,
          bytes: 8 + huffmanStreamBytes(code, c.count * w, decoder).bytes,
          streams: [{ source, byteOffset: c.at, byteLength: c.count * w, code }],
        });
      };
      const planes = (source: Source, pipeline: Pipeline) => {
        const streams: StreamPlan[] = [];
        let bytes = 8 * w;
        for (let k = 0; k < w; k++) {
          const code = codeOf(source, c.index * w + k);
          bytes += huffmanStreamBytes(code, c.count, decoder).bytes;
          streams.push({ source, byteOffset: planeAt[c.index] + k * roundUp4(c.count), byteLength: c.count, code });
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
    // A lower bound on the runs comes free with the deltas: an element equal to the one before
    // it has a delta of w zero bytes, so a chunk has at least count - (zero delta bytes) / w runs.
    // Where even that many runs cannot win, the rle streams are not built (for noise they are
    // as large as the input, five times over for the lengths).
    const promised = chunks.reduce((a, c) => a + best(c), 0);
    const fewestRuns = codes.delta
      ? chunks.reduce((a, c) => a + (c.count === 0 ? 0 : Math.max(1, c.count - Math.floor(codeOf('delta', c.index).counts[0] / w))), 0)
      : 0;
    if (useRle && input.length > 0 && (wanted !== undefined || fewestRuns * (w + 1) < promised)) {
      rle = await rleChunkStreams(gpu, input, C, chunks.length);
      if (wanted !== undefined || rle.runs * (w + 1) < promised) {
        const { firstRun, lebStart } = rle;
        buffers.runValues = rle.values.buffer;
        buffers.runLengths = rle.leb;
        const valueRange = (c: number) => ({ byteOffset: firstRun[c] * w, byteLength: (firstRun[c + 1] - firstRun[c]) * w });
        const lengthRange = (c: number) => ({ byteOffset: lebStart[c], byteLength: lebStart[c + 1] - lebStart[c] });
        let readValues: () => Promise<HistogramCode[]> = async () => [];
        let readLengths: () => Promise<HistogramCode[]> = async () => [];
        await gpu.submit('compress rle histograms', (s) => {
          readValues = encodeHistogramCodes8(
            gpu,
            s,
            rle!.values.buffer,
            chunks.map((c) => valueRange(c.index)),
          );
          readLengths = encodeHistogramCodes8(
            gpu,
            s,
            rle!.leb,
            chunks.map((c) => lengthRange(c.index)),
          );
        });
        const valueCodes = await readValues();
        const lengthCodes = await readLengths();
        for (const c of chunks) {
          const v = valueRange(c.index);
          const l = lengthRange(c.index);
          const vc = valueCodes[c.index];
          const lc = lengthCodes[c.index];
          const plan = (plain: boolean): StreamPlan[] => [
            { source: 'runValues', ...v, code: vc, plain },
            { source: 'runLengths', ...l, code: lc, plain },
          ];
          if (allow('rle'))
            candidates[c.index].push({ pipeline: [StageId.Rle], bytes: 16 + v.byteLength + l.byteLength, streams: plan(true) });
          if (allow('rle+huffman')) {
            const bytes = 16 + huffmanStreamBytes(vc, v.byteLength, decoder).bytes + huffmanStreamBytes(lc, l.byteLength, decoder).bytes;
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
    // Huffman streams of the chosen pipelines, encoded on the GPU and left there, grouped by source
    const pieces = new Map<StreamPlan, Piece[]>();
    const range = (plan: StreamPlan): Piece => ({ buffer: buffers[plan.source]!, offset: plan.byteOffset, length: plan.byteLength });
    const rawStream = (plan: StreamPlan): Piece[] => [{ host: new Uint8Array([HuffmanMode.Raw]) }, range(plan)];
    const jobs: Partial<Record<Source, { plan: StreamPlan; job: HuffmanEncodeJob }[]>> = {};
    for (const x of choice) {
      for (const plan of x?.streams ?? []) {
        if (plan.plain) {
          pieces.set(plan, [range(plan)]);
          continue;
        }
        const { count, first } = presentSymbols(plan.code.counts);
        const sized = huffmanStreamBytes(plan.code, plan.byteLength, decoder);
        if (count === 1) pieces.set(plan, [{ host: new Uint8Array([HuffmanMode.OneSymbol, first]) }]);
        else if (sized.lengths === undefined) pieces.set(plan, rawStream(plan));
        else
          (jobs[plan.source] ??= []).push({
            plan,
            job: {
              srcByteOffset: plan.byteOffset,
              byteLength: plan.byteLength,
              lengths: sized.lengths,
              segmentLog2: segmentLog2For(decoder),
              mode: decoder === 'gpu' ? 3 : 2,
            },
          });
      }
    }
    // every source's encode at once: their round trips overlap
    const settled = await Promise.allSettled(
      (Object.keys(jobs) as Source[]).map(async (source) => {
        const list = jobs[source]!;
        const done = await huffmanEncodeOnDevice(
          gpu,
          buffers[source]!,
          list.map((j) => j.job),
        );
        huffmanOutputs.push(done);
        list.forEach((j, i) => {
          const { header, body } = done.streams[i];
          // a coded stream no smaller than raw is stored raw, as the CPU encoder does
          if (header.length + (body?.byteLength ?? 0) >= 1 + j.plan.byteLength) pieces.set(j.plan, rawStream(j.plan));
          else
            pieces.set(
              j.plan,
              body === null
                ? [{ host: header }]
                : [{ host: header }, { buffer: body.buffer, offset: body.byteOffset, length: body.byteLength }],
            );
        });
      }),
    );
    for (const r of settled) if (r.status === 'rejected') throw r.reason;
    if (signal?.aborted) throw abortError(signal);
    const t2 = performance.now();

    // 4. the container laid out on the GPU: each payload's pieces gathered into place, the
    // payloads' tree hashes taken there, and the whole read back once into its final array
    const laid: LaidChunk[] = [];
    let at = HEADER_BYTES;
    for (const c of chunks) {
      const x = choice[c.index];
      const raw = c.count * w;
      const stored = (why: string): LaidChunk => ({
        entryAt: at,
        pieces: [{ buffer: input.buffer, offset: c.at, length: raw }],
        payloadBytes: raw,
        reason: why,
      });
      let chunk: LaidChunk;
      if (x === undefined) chunk = stored('GPU: no candidate smaller than the elements: stored');
      else {
        const streams = x.streams!.map((plan) => pieces.get(plan)!);
        const sizes = streams.map((list) => list.reduce((a, q) => a + ('host' in q ? q.host.length : q.length), 0));
        const total = 8 * streams.length + sizes.reduce((a, b) => a + b, 0);
        if (total >= raw) chunk = stored(`GPU: ${pipelineName(x.pipeline)} came to ${total} B: stored`);
        else {
          const dir = new Uint8Array(8 * streams.length);
          const view = new DataView(dir.buffer);
          sizes.forEach((size, j) => {
            view.setUint32(8 * j, x.streams![j].byteLength, true);
            view.setUint32(8 * j + 4, size, true);
          });
          chunk = {
            entryAt: at,
            pieces: [{ host: dir }, ...streams.flat()],
            payloadBytes: total,
            pipeline: x.pipeline,
            reason: `GPU: ${candidates[c.index].map((y) => `${pipelineName(y.pipeline)} ${y.bytes} B`).join(', ')}: ${pipelineName(x.pipeline)}`,
          };
        }
      }
      laid.push(chunk);
      at += ENTRY_BYTES + chunk.payloadBytes;
    }
    // the chunk index (its bytes come with the header and entries)
    const indexAt = at;
    const index = indexBytes(header) > 0 ? writeIndex(laid.map((chunk) => chunk.entryAt)) : new Uint8Array(0);
    const containerBytes = at + index.length;
    if (roundUp4(containerBytes) > gpu.limits.maxBufferSize) {
      throw new ParleError(
        ErrorCodes.TOO_LARGE,
        `the container (${containerBytes} bytes) would exceed this device's maxBufferSize (${gpu.limits.maxBufferSize}): compress on the CPU path`,
      );
    }
    // host pieces (directories, Huffman headers, mode bytes) packed into one upload
    let hostBytes = 0;
    for (const chunk of laid) for (const q of chunk.pieces) if ('host' in q) hostBytes += q.host.length;
    const hostPatch = new Uint8Array(roundUp4(Math.max(4, hostBytes)));
    const gathers = new Map<GPUBuffer, GatherJob[]>();
    const patch = acquire(hostPatch.length, 'compress payload pieces');
    let patchAt = 0;
    for (const chunk of laid) {
      let dst = chunk.entryAt + ENTRY_BYTES;
      for (const q of chunk.pieces) {
        const job =
          'host' in q
            ? { srcByteOffset: patchAt, dstByteOffset: dst, byteLength: q.host.length }
            : { srcByteOffset: q.offset, dstByteOffset: dst, byteLength: q.length };
        if ('host' in q) {
          hostPatch.set(q.host, patchAt);
          patchAt += q.host.length;
        }
        const src = 'host' in q ? patch : q.buffer;
        if (!gathers.has(src)) gathers.set(src, []);
        gathers.get(src)!.push(job);
        dst += job.byteLength;
      }
    }
    gpu.device.queue.writeBuffer(patch, 0, hostPatch);
    const layout = acquire(containerBytes, 'compress container');
    const coded = laid.filter((chunk) => chunk.pipeline !== undefined);
    let readHashes: () => Promise<Uint32Array> = async () => new Uint32Array(0);
    await gpu.submit('compress payloads', (s) => {
      s.encoder.clearBuffer(layout);
      for (const [src, list] of gathers) encodeGather(gpu, s, src, layout, list);
      readHashes = encodeTreeHashes(
        gpu,
        s,
        layout,
        coded.map((chunk) => ({ byteOffset: chunk.entryAt + ENTRY_BYTES, byteLength: chunk.payloadBytes })),
      );
    });
    /** The chunks' entries, from the payloads' tree hashes. */
    const entriesOf = (payloadHashes: Uint32Array): ChunkEntry[] => {
      let k = 0;
      return laid.map((chunk, i): ChunkEntry => {
        const c = chunks[i];
        return chunk.pipeline === undefined
          ? storedEntry(c.count, c.count * w, hashes[i])
          : {
              elementCount: c.count,
              encoding: Encoding.Pipeline,
              runCount: 0,
              payloadBytes: chunk.payloadBytes,
              payloadChecksum: BigInt(payloadHashes[k++]),
              elementsChecksum: BigInt(hashes[i]),
              stages: [...chunk.pipeline],
              streamCount: streamCount(chunk.pipeline, w),
            };
      });
    };
    const report = () =>
      debug(
        () =>
          `compress on the GPU (v2): ${chunks.length} chunks, ${containerBytes} B; hashes, transforms and histograms ` +
          `${(t1 - t0).toFixed(2)} ms, runs and Huffman streams ${(t2 - t1).toFixed(2)} ms, ` +
          `payloads laid out and read back ${(performance.now() - t2).toFixed(2)} ms; ` +
          `chunks: ${[...tally(laid.map((chunk) => (chunk.pipeline === undefined ? 'stored' : pipelineName(chunk.pipeline))))].map(([k, n]) => `${n} ${k}`).join(', ')}; ` +
          `first chunk: ${laid[0]?.reason ?? 'none'}`,
      );
    if (resident) {
      // the header and the entries into their places in the container's buffer (entries start
      // anywhere: one gather; their bytes are still the clear's zeros)
      const entries = entriesOf(await readHashes());
      const tableBytes = HEADER_BYTES + ENTRY_BYTES * laid.length;
      const table = new Uint8Array(roundUp4(tableBytes + index.length));
      table.set(writeHeader(header), 0);
      entries.forEach((entry, i) => writeEntry(entry, table, HEADER_BYTES + ENTRY_BYTES * i));
      table.set(index, tableBytes);
      const tableBuf = acquire(table.length, 'compress chunk table');
      gpu.device.queue.writeBuffer(tableBuf, 0, table);
      const jobs: GatherJob[] = [{ srcByteOffset: 0, dstByteOffset: 0, byteLength: HEADER_BYTES }];
      laid.forEach((chunk, i) =>
        jobs.push({ srcByteOffset: HEADER_BYTES + ENTRY_BYTES * i, dstByteOffset: chunk.entryAt, byteLength: ENTRY_BYTES }),
      );
      if (index.length > 0) jobs.push({ srcByteOffset: tableBytes, dstByteOffset: indexAt, byteLength: index.length });
      await gpu.submit('compress chunk table', (s) => encodeGather(gpu, s, tableBuf, layout, jobs));
      // the container's buffer is the result's: not given back with the scratch buffers
      acquired.splice(acquired.indexOf(layout), 1);
      const device = gpu.owned(layout, 'u8', containerBytes);
      report();
      return { header, container: new Uint8Array(0), encoded: [], device };
    }
    const container = target === undefined ? new Uint8Array(containerBytes) : target.subarray(0, containerBytes);
    const [payloadHashes] = await Promise.all([readHashes(), gpu.download(gpu.wrap(layout, 'u8', containerBytes), { into: container })]);
    container.set(writeHeader(header), 0);
    container.set(index, indexAt);
    const entries = entriesOf(payloadHashes);
    const encoded = laid.map((chunk, i): EncodedChunk => {
      const entry = entries[i];
      writeEntry(entry, container, chunk.entryAt);
      const from = chunk.entryAt + ENTRY_BYTES;
      return { entry, payload: container.subarray(from, from + chunk.payloadBytes), reason: chunk.reason };
    });
    report();
    return { header, container, encoded };
  } finally {
    for (const h of huffmanOutputs) h.release();
    rle?.release();
    for (const b of acquired) gpu.releaseStorage(b);
  }
}
