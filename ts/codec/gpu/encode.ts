/**
 * Compression of a DeviceArray into a container with the codec's work on the GPU (Rutter's case:
 * data on the GPU, the container wanted on the host or left there), so that the elements are
 * never read back or expanded on the host:
 *
 *   0. the chunk length and the predict plan (stage 7: a linear predictor over the shape's rows
 *      and planes or a flat array's records, the bits, float-order or decimal map), planned on the
 *      host from a sample read back (./predict-encode.ts planOnDevice), as the CPU path plans;
 *      with a plan, every chunk's field planes of residuals made in one dispatch (at the start
 *      of step 1's submission for them; a decimal map's in one of its own, its exceptions read
 *      back); chunks that do not start on whole words copied to whole words. The chunks, and the
 *      field planes, are the units steps 1-2 size, each on its own;
 *   1. one submission a set of units: every chunk's elements' tree hash; the units' deltas and
 *      byte planes (the candidates' streams) into scratch buffers; byte histograms of every
 *      candidate stream; the pack stage's plan of every unit and of its deltas (elements of 2
 *      or 4 bytes, as the CPU path's candidates: ./pack-encode.ts), each stream's exact bytes;
 *   2. on the host, from the histograms and their Huffman codes (made on the GPU in the same
 *      submission: codec-code-lengths.wgsl), each candidate's exact size (huffman,
 *      delta+huffman, shuffle+huffman, delta+shuffle+huffman, pack, delta+pack); where the runs
 *      of a transform's output (counted in the histogram pass) could beat that, the rle stage's
 *      streams of every unit, or of its byte planes, are built on the GPU (runs cut at the units,
 *      lengths as LEB128: rleChunkStreams) and their histograms size rle after that transform (rle,
 *      delta+rle, shuffle+rle, delta+shuffle+rle), each with huffman or without: one
 *      submission and one round trip a transform (its buffers sized from the runs step 1 counted);
 *   3. per chunk the smallest: predicted (each field plane's smallest, or stored) or plain;
 *      Huffman streams encoded on the GPU (PAVLE, ts/codec/gpu/huffman-encode.ts) and left
 *      there (huffmanEncodeOnDevice: only their sizes are read back), pack streams written
 *      there back to back (their sizes known: no readback); a chunk that nothing shrinks is
 *      stored;
 *   4. the container laid out on the host from those sizes, then built on the GPU in one
 *      submission: each payload gathered from its pieces (stream bytes, the elements of a stored
 *      chunk, and the directories, predict headers and Huffman headers the host writes, uploaded
 *      together; codec-gather.wgsl), and the payloads' tree hashes. The container is read back
 *      once, into the array returned; the host writes the header and the chunk entries into it.
 *      Only the container crosses the bus, and the host copies no payload byte.
 * The chooser takes the smallest candidate (the CPU path's takes pack within a few per cent of
 * Huffman, for its decode speed, and estimates from a sample), so the chosen pipeline may
 * differ from the CPU path's, and the bytes with it; the format is the same; a fixed pipeline
 * writes the CPU path's bytes. 8-byte elements are units of their u32 halves (two word
 * fields an element field, as the format predicts them), their chunks predicted (the bits or
 * float-order map, and f64's decimal map: its exact product in u32 words) or stored.
 */
import { abortError } from '../../cpu/pool.js';
import { storedEntry } from '../cpu/encode.js';
import { DEFAULT_SEGMENT_LOG2, headerBytes, HuffmanMode, LANES, LANES_SEGMENT_LOG2, presentSymbols, segmentCount } from '../huffman.js';
import { pipelineName, StageId, streamCount, type Pipeline } from '../../format/stages.js';
import { encodeDelta } from './delta.js';
import { encodeGather, type GatherJob } from './gather.js';
import { encodeTreeHashes } from './hash.js';
import { encodeHistogramCodes, type HistogramCode, type HistogramSource } from './histogram.js';
import { huffmanEncodeOnDevice, type HuffmanEncodeJob } from './huffman-encode.js';
import { rleChunkStreams } from './rle-streams.js';
import { encodePackSizes, encodePackWrite, PACK_BLOCK, paddedBytes, type PackSizing } from './pack-encode.js';
import { encodeShuffle, encodeShuffleChunks } from './shuffle.js';
import { encodePredictResiduals, planOnDevice, type DecimalEncode } from './predict-encode.js';
import { chooseExponents, exponentSampleStep } from '../predict.js';
import { readRanges, roundUp4 } from './common.js';
import {
  FIELD_BLOCK_HEADER_BYTES,
  predictName,
  predictPrefixBytes,
  ValueMap,
  writePredictHeader,
  type PredictParams,
} from '../../format/predict.js';
import type { GpuContext, Submission } from '../../gpu/context.js';
import type { DeviceArray } from '../../gpu/device-array.js';
import { debug } from '../../platform/node.js';
import { elementSize, type ElementType } from '../../types.js';
import type { CompressSettings } from '../settings.js';
import type { EncodedChunk } from '../cpu/chunks.js';
import { ErrorCodes, ParleError } from '../../errors.js';
import {
  ENTRY_BYTES,
  Encoding,
  firstEntryOffset,
  makeHeader,
  writeEntry,
  writeHeader,
  indexBytes,
  writeIndex,
  type ChunkEntry,
  type Header,
} from '../../format/layout.js';

/** The share of the best candidates' bytes that rle+huffman's estimate must come under for the rle streams to be built. */
const RLE_MARGIN = 0.97;
/** The rle streams of a transform are built only where the bytes they could save reach this share of the most another transform's could. */
const RLE_SHARE = 0.5;
/** The least a transform's rle streams must be able to save to be built, as a share of the units' best candidates' bytes. */
const RLE_LEAST_SAVING = 0.002;

/** The unsigned type of `width`-byte elements (units compared by their bits). */
const uTypeOf = (width: 1 | 2 | 4): ElementType => (width === 1 ? 'u8' : width === 2 ? 'u16' : 'u32');

/** The pipelines this path codes on the GPU; others go through the runs path (ts/codec/gpu/compress.ts). */
export function gpuCodablePipeline(pipeline: readonly number[]): boolean {
  const names = pipelineName(pipeline as Pipeline);
  return [
    ...['huffman', 'delta+huffman', 'shuffle+huffman', 'delta+shuffle+huffman'],
    ...['rle', 'delta+rle', 'shuffle+rle', 'delta+shuffle+rle'].flatMap((t) => [t, `${t}+huffman`]),
    ...['pack', 'delta+pack'],
  ].includes(names);
}

/**
 * One stream of a candidate: its bytes (a range of a GPU buffer), histogram and code; `plain`:
 * stored as it is (rle without huffman); `pack`: coded by the pack stage, stream `stream` of the
 * plan `sizing`, E bytes.
 */
interface StreamPlan {
  buffer: GPUBuffer;
  byteOffset: number;
  byteLength: number;
  code: HistogramCode;
  plain?: boolean;
  pack?: { sizing: PackSizing; stream: number; bytes: number };
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
  /** The chosen pipeline, [] for a predicted chunk; undefined: stored. */
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
 * True when {@link compressOnDevice} takes an array with `codec` (undefined: the GPU's chooser;
 * else one of {@link gpuCodablePipeline}); any chunk length (chunks that do not start on whole
 * words are copied to whole words first).
 */
export function canCompressOnDevice(codec?: readonly number[]): boolean {
  return codec === undefined || gpuCodablePipeline(codec);
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
 * Elements coded as chunks are (a pipeline's streams, sized and chosen each on its own), `stride`
 * elements apart in `buffer` from its start: the input's chunks, or every predicted chunk's field
 * planes (./predict-encode.ts). Unit u starts at byte u x stride x width and holds counts[u]
 * elements; past them up to the stride (the last chunk's units) its last element repeats.
 */
interface UnitSet {
  /** The elements (its buffer the units'), typed for the run-length encoder, which compares them. */
  array: DeviceArray;
  /** Element bytes: 1, 2 or 4. */
  width: 1 | 2 | 4;
  stride: number;
  counts: number[];
  /** Elements of a unit before `shortFrom` (all but the last chunk's), for the rle stage's cuts. */
  cells: number;
  /** The last chunk's first unit: units from it on hold counts[last] elements. */
  shortFrom: number;
}

/**
 * A transform's output whose rle streams {@link sizeUnits} may build: `per` parts a unit (the
 * unit, or its byte planes) `stride` elements apart in `array`, its pipelines' `names` (rle
 * without and with huffman) and the bytes they could save (estimated) over the units' best candidates.
 */
interface RleSource {
  /** The buffer of the statistics (its parts' histograms and runs). */
  buffer: GPUBuffer;
  array: () => DeviceArray;
  stride: number;
  per: number;
  prefix: Pipeline;
  names: string[];
  saving: number;
}

/** Scratch buffers and releases of one compress, given back at its end. */
interface Scratch {
  acquire(bytes: number, label: string): GPUBuffer;
  onRelease(release: () => void): void;
}

/**
 * Steps 1 and 2 above for one set of units: the candidates of each unit (the pipelines `allow`
 * lets in), sized from histograms made on the GPU; with `hash`, the units' tree hashes (the
 * chunks' elements checksums) from the same submission. `before` records what makes the units
 * (the predicted chunks' residuals) at the start of that submission.
 */
async function sizeUnits(
  gpu: GpuContext,
  set: UnitSet,
  decoder: HuffmanDecoder,
  allow: (name: string) => boolean,
  fixed: boolean,
  scratch: Scratch,
  hash: boolean,
  before?: (s: Submission) => void,
): Promise<{ candidates: Candidate[][]; hashes: Uint32Array; rleBuilt: string[] }> {
  const w = set.width;
  const units = set.counts.map((count, index) => ({ index, count, at: index * set.stride * w }));
  // pack and delta+pack for elements of 2 or 4 bytes (the CPU path's candidates: for bytes Huffman
  // decodes about as fast), or where fixed; pack sizes every block, so the source is bound whole
  const length = set.array.length;
  const totalBytes = length * w;
  const binding = gpu.limits.maxStorageBufferBindingSize;
  /** The units' elements (and their deltas) fit one storage binding. */
  const wholeFits = roundUp4(totalBytes) <= binding;
  const usePack = (name: string) => allow(name) && (w > 1 || fixed) && wholeFits;
  const useDelta =
    ['delta', 'delta+shuffle'].some((t) => [`${t}+huffman`, `${t}+rle`, `${t}+rle+huffman`].some(allow)) || usePack('delta+pack');
  const useShuffle = w > 1 && ['shuffle', 'delta+shuffle'].some((t) => [`${t}+huffman`, `${t}+rle`, `${t}+rle+huffman`].some(allow));
  // plane k of unit u at (u w + k) P: every plane P bytes apart, a stride the rle stage cuts its
  // runs at (bytes of a plane past its count are padding, written or not)
  const P = roundUp4(set.stride);
  const planeBytes = units.length * w * P;
  const planeOffsets = (c: { index: number }) => Array.from({ length: w }, (_, k) => (c.index * w + k) * P);
  const raw = set.array.buffer;
  const delta = useDelta ? scratch.acquire(totalBytes, 'compress deltas') : undefined;
  const planes = useShuffle ? scratch.acquire(planeBytes, 'compress planes') : undefined;
  const deltaPlanes = useShuffle && useDelta ? scratch.acquire(planeBytes, 'compress delta planes') : undefined;
  const ranges = { whole: [] as { byteOffset: number; byteLength: number }[], planes: [] as { byteOffset: number; byteLength: number }[] };
  for (const c of units) {
    ranges.whole.push({ byteOffset: c.at, byteLength: c.count * w });
    for (const at of planeOffsets(c)) ranges.planes.push({ byteOffset: at, byteLength: c.count });
  }
  let readHashes: () => Promise<Uint32Array> = async () => new Uint32Array(0);
  let readCodes: () => Promise<HistogramCode[][]> = async () => [];
  let buffers: GPUBuffer[] = [];
  /** The pack stage's sources (the elements, their deltas), and their plans once recorded. */
  const packSources: { prefix: Pipeline; buffer: GPUBuffer }[] = [];
  if (usePack('pack')) packSources.push({ prefix: [], buffer: raw });
  if (usePack('delta+pack')) packSources.push({ prefix: [StageId.Delta], buffer: delta! });
  const packs: { prefix: Pipeline; sizing: PackSizing; read: () => Promise<Uint32Array> }[] = [];
  const packed = units.filter((c) => c.count > 0);
  // the deltas of every unit in one dispatch where the input fits one binding (a dispatch
  // costs the host more than the GPU: 64 of them were 2-3 ms of a sparse volume's compress);
  // units after the first start at whole words
  const deltaAtOnce = delta !== undefined && wholeFits;
  // the planes of every unit likewise (256 KiB chunks: a dispatch a chunk was 10-12 ms of GPU
  // time at 64 MiB on the H200)
  const shuffleAtOnce = planes !== undefined && wholeFits && roundUp4(planeBytes) <= binding;
  await gpu.submit('compress statistics', (s) => {
    before?.(s);
    if (hash) readHashes = encodeTreeHashes(gpu, s, raw, ranges.whole);
    if (deltaAtOnce && length > 0) {
      const chunkLength = units.length > 1 ? set.stride : 0;
      encodeDelta(gpu, s, 'encode', { src: raw, dst: delta!, width: w, count: length, chunkLength });
    }
    for (const c of units) {
      if (c.count === 0) continue;
      if (delta && !deltaAtOnce)
        encodeDelta(gpu, s, 'encode', { src: raw, srcByteOffset: c.at, dst: delta, dstByteOffset: c.at, width: w, count: c.count });
      if (shuffleAtOnce) continue;
      const offsets = planeOffsets(c);
      const shuffle = (elements: GPUBuffer, into: GPUBuffer) =>
        encodeShuffle(gpu, s, 'shuffle', {
          elements,
          elementsByteOffset: c.at,
          planes: into,
          planeByteOffsets: offsets,
          width: w as 2 | 4,
          count: c.count,
        });
      if (planes) shuffle(raw, planes);
      if (deltaPlanes) shuffle(delta!, deltaPlanes);
    }
    if (shuffleAtOnce) {
      const jobs = units.map((c) => ({ elementsByteOffset: c.at, planeByteOffsets: planeOffsets(c), count: c.count }));
      if (planes) encodeShuffleChunks(gpu, s, 'shuffle', raw, planes, w as 2 | 4, jobs);
      if (deltaPlanes) encodeShuffleChunks(gpu, s, 'shuffle', delta!, deltaPlanes, w as 2 | 4, jobs);
    }
    if (units.length > 0) {
      // every candidate stream's histogram and code at once (and each stream's runs, which size
      // the rle stage before its streams are built)
      const sources: HistogramSource[] = [{ buffer: raw, ranges: ranges.whole, runWidth: w }];
      if (delta) sources.push({ buffer: delta, ranges: ranges.whole, runWidth: w });
      if (planes) sources.push({ buffer: planes, ranges: ranges.planes, runWidth: 1 });
      if (deltaPlanes) sources.push({ buffer: deltaPlanes, ranges: ranges.planes, runWidth: 1 });
      readCodes = encodeHistogramCodes(gpu, s, sources);
      buffers = sources.map((x) => x.buffer);
      // every unit's pack stream, and its deltas', sized exactly
      const streams = packed.map((c) => ({ srcByteOffset: c.at, count: c.count, width: w }));
      const blocks = streams.reduce((a, x) => a + Math.ceil(x.count / PACK_BLOCK), 0);
      for (const { prefix, buffer } of packSources)
        packs.push({ prefix, ...encodePackSizes(gpu, s, buffer, streams, scratch.acquire(paddedBytes(blocks), 'compress pack sizes')) });
    }
  });
  // every readback mapped at once (one after another they had been a round trip each)
  const [hashes, read, ...packBytes] = await Promise.all([readHashes(), readCodes(), ...packs.map((p) => p.read())]);
  const codes = new Map<GPUBuffer, HistogramCode[]>(buffers.map((b, i) => [b, read[i]]));
  const codeOf = (buffer: GPUBuffer, r: number) => codes.get(buffer)![r];
  // 2. candidates without rle, sized exactly from the histograms and their codes
  const candidates: Candidate[][] = units.map((c) => {
    const list: Candidate[] = [];
    if (c.count === 0) return list;
    const whole = (buffer: GPUBuffer, pipeline: Pipeline) => {
      const code = codeOf(buffer, c.index);
      list.push({
        pipeline,
        bytes: 8 + huffmanStreamBytes(code, c.count * w, decoder).bytes,
        streams: [{ buffer, byteOffset: c.at, byteLength: c.count * w, code }],
      });
    };
    const byPlanes = (buffer: GPUBuffer, pipeline: Pipeline) => {
      const streams: StreamPlan[] = [];
      let bytes = 8 * w;
      for (let k = 0; k < w; k++) {
        const code = codeOf(buffer, c.index * w + k);
        bytes += huffmanStreamBytes(code, c.count, decoder).bytes;
        streams.push({ buffer, byteOffset: (c.index * w + k) * P, byteLength: c.count, code });
      }
      list.push({ pipeline, bytes, streams });
    };
    if (allow('huffman')) whole(raw, [StageId.Huffman]);
    if (delta && allow('delta+huffman')) whole(delta, [StageId.Delta, StageId.Huffman]);
    if (planes && allow('shuffle+huffman')) byPlanes(planes, [StageId.Shuffle, StageId.Huffman]);
    if (deltaPlanes && allow('delta+shuffle+huffman')) byPlanes(deltaPlanes, [StageId.Delta, StageId.Shuffle, StageId.Huffman]);
    return list;
  });
  packed.forEach((c, i) =>
    packs.forEach(({ prefix, sizing }, k) => {
      const bytes = packBytes[k][i];
      candidates[c.index].push({
        pipeline: [...prefix, StageId.Pack],
        bytes: 8 + bytes,
        streams: [
          {
            buffer: sizing.src,
            byteOffset: c.at,
            byteLength: c.count * w,
            code: codeOf(sizing.src, c.index),
            pack: { sizing, stream: i, bytes },
          },
        ],
      });
    }),
  );
  const best = (c: { index: number; count: number }) => Math.min(c.count * w, ...candidates[c.index].map((x) => x.bytes));
  const promised = units.reduce((a, c) => a + best(c), 0);
  const last = units.length - 1;
  /**
   * The rle stage's candidates of every unit from `source`: the rle streams of its `per` parts
   * (the unit, or its w byte planes) `stride` elements apart in the source's buffer, built on the
   * GPU (a run cut at its part's end), with their histograms' codes; `prefix` the stages before
   * rle.
   */
  const addRle = async (source: RleSource) => {
    const { buffer, per, prefix } = source;
    const vw = per === 1 ? w : 1;
    const shortCells = set.counts[last];
    // each part's runs as the statistics counted them, where it counted all the part's cells
    // (a unit of no elements: a chunk not predicted, whose part is not counted), so the streams
    // and their codes are made in one round trip
    const counted = Array.from({ length: units.length * per }, (_, p) => {
      const u = Math.floor(p / per);
      const cells = p >= set.shortFrom * per ? shortCells : set.cells;
      return units[u].count === cells && cells > 0 ? codeOf(buffer, p).runs : undefined;
    });
    const rle = await rleChunkStreams(
      gpu,
      source.array(),
      source.stride,
      units.length * per,
      { cells: set.cells, shortFrom: set.shortFrom * per, shortCells },
      counted,
    );
    scratch.onRelease(() => rle.release());
    const valueRange = (p: number) => ({ byteOffset: rle.firstRun[p] * vw, byteLength: (rle.endRun[p] - rle.firstRun[p]) * vw });
    const lengthRange = (p: number) => ({ byteOffset: rle.lebStart[p], byteLength: rle.lebStart[p + 1] - rle.lebStart[p] });
    const { values: valueCodes, lengths: lengthCodes } = rle.codes!;
    for (const c of units) {
      if (c.count === 0) continue;
      const own = Array.from({ length: per }, (_, k) => c.index * per + k);
      // each part's values, then its lengths (the format's stream order)
      const plan = (plain: boolean): StreamPlan[] =>
        own.flatMap((p) => [
          { buffer: rle.values.buffer, ...valueRange(p), code: valueCodes[p], plain },
          { buffer: rle.leb, ...lengthRange(p), code: lengthCodes[p], plain },
        ]);
      const streams = plan(false);
      if (allow(source.names[0]))
        candidates[c.index].push({
          pipeline: [...prefix, StageId.Rle],
          bytes: 8 * streams.length + streams.reduce((a, x) => a + x.byteLength, 0),
          streams: plan(true),
        });
      if (allow(source.names[1]))
        candidates[c.index].push({
          pipeline: [...prefix, StageId.Rle, StageId.Huffman],
          bytes: 8 * streams.length + streams.reduce((a, x) => a + huffmanStreamBytes(x.code, x.byteLength, decoder).bytes, 0),
          streams,
        });
    }
  };
  // The rle stage after each transform (rle, delta+rle, shuffle+rle, delta+shuffle+rle), sized
  // from the runs the histogram pass counted before any of its streams is built: R runs of a
  // part of n elements of v bytes cost at least R (v + 1) bytes as rle; as rle+huffman, their
  // values about the bits the part's own Huffman code spends on R of its elements, their lengths
  // a bit each at least (a residual plane's runs of a few zeros: under a byte a run). Built
  // (for noise the streams are as large as the input, five times over for the lengths) where
  // the units whose estimate comes under their best candidate's bytes could save enough in all,
  // and only for the transforms that could save at least half what the best of them could: each
  // build costs a few round trips and R-sized buffers.
  const sources: RleSource[] = [];
  const source = (buffer: GPUBuffer | undefined, per: number, prefix: Pipeline, array: () => DeviceArray, stride: number) => {
    const names = [pipelineName([...prefix, StageId.Rle]), pipelineName([...prefix, StageId.Rle, StageId.Huffman])];
    if (buffer === undefined || length === 0 || !names.some(allow)) return;
    const v = per === 1 ? w : 1;
    let saving = 0;
    for (const c of units) {
      if (c.count === 0) continue;
      let rle = 0;
      let huffman = 0;
      for (let k = 0; k < per; k++) {
        const code = codeOf(buffer, c.index * per + k);
        const runs = code.runs!;
        rle += runs * (v + 1);
        // (the part's bytes' code spends codedBits / count bits an element: a byte of a plane, w of a unit)
        huffman += (runs * (code.codedBits / c.count + 1)) / 8;
      }
      const estimate = Math.min(allow(names[0]) ? rle : Infinity, allow(names[1]) ? huffman : Infinity);
      saving += Math.max(0, RLE_MARGIN * best(c) - estimate);
    }
    sources.push({ buffer, array, stride, per, prefix, names, saving });
  };
  source(raw, 1, [], () => set.array, set.stride);
  source(delta, 1, [StageId.Delta], () => gpu.wrap(delta!, uTypeOf(w), length), set.stride);
  if (w > 1) {
    source(planes, w, [StageId.Shuffle], () => gpu.wrap(planes!, 'u8', planeBytes), P);
    source(deltaPlanes, w, [StageId.Delta, StageId.Shuffle], () => gpu.wrap(deltaPlanes!, 'u8', planeBytes), P);
  }
  const most = Math.max(0, ...sources.map((x) => x.saving));
  const built = sources.filter((x) => fixed || (x.saving > RLE_LEAST_SAVING * promised && x.saving >= RLE_SHARE * most));
  // (all settled before a failure of one is thrown: their buffers are released with the scratch)
  for (const r of await Promise.allSettled(built.map(addRle))) if (r.status === 'rejected') throw r.reason;
  return { candidates, hashes, rleBuilt: built.map((x) => x.names[0]) };
}

/** The smallest of `list` (a fixed pipeline: its only candidate), or undefined when none is below `raw` bytes and the pipeline is not fixed. */
function smallest(list: readonly Candidate[], raw: number, fixed: boolean): Candidate | undefined {
  const kept = list.filter((x) => fixed || x.bytes < raw);
  kept.sort((a, b) => a.bytes - b.bytes);
  return kept[0];
}

/**
 * Each chunk's decimal exponents, from a sample of its cells read back (the cells the CPU path's
 * chooseExponents reads: every step-th of the chunk's cells, 64 to 127 of them), chosen as the
 * CPU path chooses them; undefined for a chunk no exponent fits. `C` elements a chunk, `fields`
 * elements a cell, `size` 4 (f32) or 8 (f64).
 */
async function chunkExponents(
  gpu: GpuContext,
  input: DeviceArray,
  C: number,
  fields: number,
  size: 4 | 8,
): Promise<(number[] | undefined)[]> {
  const Floats = size === 8 ? Float64Array : Float32Array;
  const chunks = Math.ceil(input.length / C);
  const plans = Array.from({ length: chunks }, (_, c) => {
    const count = Math.min(C, input.length - c * C);
    const cells = Math.floor(count / fields);
    const step = exponentSampleStep(cells);
    const sampled = cells === 0 ? [] : Array.from({ length: Math.ceil(cells / step) }, (_, i) => i * step);
    return { base: c * C, sampled };
  });
  const ranges = plans.flatMap((p) =>
    p.sampled.map((cell) => ({ buffer: input.buffer, offset: size * (p.base + cell * fields), length: size * fields })),
  );
  const parts = await readRanges(gpu, ranges);
  let at = 0;
  return plans.map((p) => {
    const values = new Floats(p.sampled.length * fields);
    p.sampled.forEach((_, i) => values.set(new Floats(parts[at++].slice().buffer), i * fields));
    return values.length === 0 ? undefined : chooseExponents(values, values.length, fields);
  });
}

/**
 * Each chunk's exceptions of the decimal map, read back and sorted by index (`bits`: a word
 * each, of 8-byte elements (`pairs`) two: low, high); undefined for a chunk without exponents or
 * with more than count / 64 exceptions (the kernel gave it the float-order map).
 */
async function chunkExceptions(
  gpu: GpuContext,
  decimal: DecimalEncode,
  chunks: readonly { index: number; count: number }[],
  pairs: boolean,
): Promise<({ exponents: number[]; indices: Uint32Array; bits: Uint32Array } | undefined)[]> {
  /** u32 words of the list an exception takes. */
  const slot = pairs ? 4 : 2;
  const counts = new Uint32Array(
    (await readRanges(gpu, [{ buffer: decimal.counts, offset: 0, length: 4 * chunks.length }]))[0].slice().buffer,
  );
  const kept = chunks.map((c) => decimal.exponents[c.index] !== undefined && counts[c.index] <= Math.floor(c.count / 64));
  const lists = await readRanges(
    gpu,
    chunks.map((c) => ({
      buffer: decimal.list,
      offset: 4 * slot * c.index * decimal.listStride,
      length: kept[c.index] ? 4 * slot * counts[c.index] : 0,
    })),
  );
  return chunks.map((c) => {
    if (!kept[c.index]) return undefined;
    const list = new Uint32Array(lists[c.index].slice().buffer);
    const order = Array.from({ length: list.length / slot }, (_, j) => j).sort((a, b) => list[slot * a] - list[slot * b]);
    return {
      exponents: [...decimal.exponents[c.index]!],
      indices: Uint32Array.from(order, (j) => list[slot * j]),
      bits: pairs
        ? Uint32Array.from(order.flatMap((j) => [list[slot * j + 1], list[slot * j + 2]]))
        : Uint32Array.from(order, (j) => list[slot * j + 1]),
    };
  });
}

/**
 * Checks that a container of `containerBytes` bytes, laid out in one GPU buffer, fits this device.
 * @throws ParleError TOO_LARGE (past maxBufferSize: the CPU path writes it)
 */
export function checkContainerFits(gpu: GpuContext, containerBytes: number): void {
  if (roundUp4(containerBytes) > gpu.limits.maxBufferSize) {
    throw new ParleError(
      ErrorCodes.TOO_LARGE,
      `the container (${containerBytes} bytes) would exceed this device's maxBufferSize (${gpu.limits.maxBufferSize}): compress on the CPU path`,
    );
  }
}

/**
 * Writes a container's chunk table into `layout`, the container's buffer on the GPU, whose
 * payloads lie in their places and whose other bytes are still zero: the header's bytes `head` at
 * 0, each entry at its byte offset `entryAt[i]` and the chunk index's bytes `index` at `indexAt`
 * (entries start anywhere: one upload and one gather, shaders/codec-gather.wgsl).
 * @throws ParleError DEVICE_LOST
 */
export async function placeChunkTable(
  gpu: GpuContext,
  layout: GPUBuffer,
  table: { head: Uint8Array; entries: readonly ChunkEntry[]; entryAt: readonly number[]; index: Uint8Array; indexAt: number },
): Promise<void> {
  const { head, entries, entryAt, index, indexAt } = table;
  const tableBytes = head.length + ENTRY_BYTES * entries.length;
  const bytes = new Uint8Array(roundUp4(tableBytes + index.length));
  bytes.set(head, 0);
  entries.forEach((entry, i) => writeEntry(entry, bytes, head.length + ENTRY_BYTES * i));
  bytes.set(index, tableBytes);
  const tableBuf = gpu.acquireStorage(bytes.length, 'compress chunk table');
  try {
    gpu.device.queue.writeBuffer(tableBuf, 0, bytes);
    const jobs: GatherJob[] = [{ srcByteOffset: 0, dstByteOffset: 0, byteLength: head.length }];
    entryAt.forEach((at, i) => jobs.push({ srcByteOffset: head.length + ENTRY_BYTES * i, dstByteOffset: at, byteLength: ENTRY_BYTES }));
    if (index.length > 0) jobs.push({ srcByteOffset: tableBytes, dstByteOffset: indexAt, byteLength: index.length });
    await gpu.submit('compress chunk table', (s) => encodeGather(gpu, s, tableBuf, layout, jobs));
  } finally {
    gpu.releaseStorage(tableBuf);
  }
}

/**
 * {@link compressOnDevice} with the container's parts: its header and each chunk's entry and
 * payload (a view into `container`), for a caller that rewrites chunks (the lossy mode,
 * ./encode-lossy.ts). With `target` (at least the container's length) the container is
 * read back into its start and `container` is a view of it. `resident`: the container is not
 * read back but returned as `device` ({@link compressToDevice}; `container` is then empty, each
 * chunk's payload is empty and its byte offset in `device` is in `payloadOffsets`).
 * @throws as compressOnDevice
 */
export async function encodeChunksOnDevice(
  gpu: GpuContext,
  input: DeviceArray,
  settings: CompressSettings,
  { target, resident = false }: { target?: Uint8Array; resident?: boolean } = {},
): Promise<{ header: Header; container: Uint8Array; encoded: EncodedChunk[]; device?: DeviceArray; payloadOffsets?: number[] }> {
  const { signal, codec, level, decoder } = settings;
  const t0 = performance.now();
  // the type recorded: the input's, or f16 for a u16 array of half-precision bits
  const type = settings.type ?? input.type;
  const size = elementSize(type);
  // 8-byte elements as their u32 halves (as the format predicts them: two word fields an element
  // field): the sets' units count words, `per` an element; their chunks are predicted or stored
  const per = size === 8 ? 2 : 1;
  const w = (size === 8 ? 4 : size) as 1 | 2 | 4;
  // the chunk length and the predict plan, from a sample read back (the shape's, or a flat
  // array's record stride; none with a fixed codec or an error bound)
  const { chunkLength, plan } = await planOnDevice(gpu, input, settings);
  // the level is recorded, and decides the plan; the GPU's chooser does not depend on it
  const header = makeHeader(type, input.length, chunkLength, level, settings.shape);
  const C = header.chunkLength;
  const chunks = Array.from({ length: header.chunkCount }, (_, i) => ({ index: i, count: Math.min(C, header.elementCount - i * C) }));
  const wanted = codec === undefined ? undefined : pipelineName(codec as Pipeline);
  const allow = (name: string) => wanted === undefined || wanted === name;
  /** The plain chunks' pipelines: none of 8-byte elements (the format has none: stored or predicted). */
  const allowPlain = per === 2 ? () => false : allow;
  const fixed = wanted !== undefined;
  const acquired: GPUBuffer[] = [];
  const releases: (() => void)[] = [];
  const scratch: Scratch = {
    acquire: (bytes, label) => {
      const b = gpu.acquireStorage(Math.max(4, roundUp4(bytes)), label);
      acquired.push(b);
      return b;
    },
    onRelease: (release) => releases.push(release),
  };
  const wordElements = 4 / w;
  const alignedStride = (n: number) => Math.ceil(n / wordElements) * wordElements;
  const last = chunks.length - 1;
  try {
    // the chunks as units: the input itself where every chunk starts on a whole word, else
    // copied to whole words apart
    let plainSet: UnitSet;
    const counts = chunks.map((c) => c.count * per);
    if (chunks.length <= 1 || (C * size) % 4 === 0) {
      const array = per === 2 ? gpu.wrap(input.buffer, 'u32', input.length * per) : input;
      plainSet = { array, width: w, stride: C * per, counts, cells: C * per, shortFrom: last };
    } else {
      const stride = alignedStride(C);
      const copy = scratch.acquire(chunks.length * stride * w, 'compress chunks at whole words');
      await gpu.submit('compress chunks at whole words', (s) =>
        encodePredictResiduals(gpu, s, {
          input: input.buffer,
          count: input.length,
          width: w,
          chunkLength: C,
          plan: undefined,
          stride,
          units: chunks.length,
          resid: copy,
        }),
      );
      const array = gpu.wrap(copy, uTypeOf(w), chunks.length * stride);
      plainSet = { array, width: w, stride, counts, cells: C, shortFrom: last };
    }
    // the predicted chunks' field planes (a chunk of whole rows of the plan; the others plain)
    const fields = plan?.fields ?? 1;
    const geometry = (count: number) => {
      if (plan === undefined || count % fields !== 0) return undefined;
      const cells = count / fields;
      const rowCells = plan.rowCells === 0 ? cells : plan.rowCells;
      const rows = cells / rowCells;
      return cells > 0 && Number.isInteger(rows) && rows % plan.planeRows === 0 ? { cells, rowCells } : undefined;
    };
    let predictedSet: UnitSet | undefined;
    /** Records the predicted chunks' residuals, where the sizing's first submission makes them. */
    let makeResiduals: ((s: Submission) => void) | undefined;
    // the decimal map's: per chunk its exponents and exceptions (sorted), or undefined: float order
    let decimals: ({ exponents: number[]; indices: Uint32Array; bits: Uint32Array } | undefined)[] = [];
    if (plan !== undefined && chunks.some((c) => geometry(c.count * per) !== undefined)) {
      const cells = Math.floor((C * per) / fields);
      const stride = alignedStride(cells);
      const units = chunks.length * fields;
      const resid = scratch.acquire(units * stride * w, 'compress residuals');
      let decimal: DecimalEncode | undefined;
      if (plan.map === ValueMap.Decimal) {
        const listStride = Math.max(1, Math.floor(C / 64));
        // (the plan's fields are word fields: an 8-byte element's two halves are two)
        decimal = {
          exponents: await chunkExponents(gpu, input, C, fields / per, size as 4 | 8),
          counts: scratch.acquire(4 * chunks.length, 'compress exception counts'),
          list: scratch.acquire(8 * per * listStride * chunks.length, 'compress exceptions'),
          listStride,
        };
      }
      const recordResiduals = (s: Submission) =>
        encodePredictResiduals(gpu, s, {
          input: input.buffer,
          count: input.length * per,
          width: w,
          pairs: per === 2,
          chunkLength: C * per,
          plan,
          stride,
          units,
          resid,
          decimal,
        });
      // a decimal map's exceptions are read back before the sizing; else the residuals are made
      // in the sizing's first submission (a round trip of their own before)
      if (decimal !== undefined) {
        await gpu.submit('compress residuals', recordResiduals);
        decimals = await chunkExceptions(gpu, decimal, chunks, per === 2);
      } else makeResiduals = recordResiduals;
      const unitCounts = chunks.flatMap((c) => Array.from({ length: fields }, () => geometry(c.count * per)?.cells ?? 0));
      const array = gpu.wrap(resid, uTypeOf(w), units * stride);
      predictedSet = { array, width: w, stride, counts: unitCounts, cells, shortFrom: last * fields };
    }
    // 1.-2. both sets sized at once (their round trips overlap; both settled before a failure
    // of either gives their scratch buffers back)
    const sizing = [
      sizeUnits(gpu, plainSet, decoder, allowPlain, fixed, scratch, true),
      // (8-byte elements' planes under a fixed codec: its pipeline, as the CPU path codes them)
      predictedSet === undefined
        ? undefined
        : sizeUnits(gpu, predictedSet, decoder, per === 2 ? allow : () => true, per === 2 && fixed, scratch, false, makeResiduals),
    ] as const;
    await Promise.allSettled(sizing);
    const plain = await sizing[0];
    const predicted = await sizing[1];
    const hashes = plain.hashes;
    const t1 = performance.now();
    // 3. per chunk the smallest: predicted (each field's best, or stored) or plain
    // (a fixed pipeline is always encoded, and stored only if its payload comes out no smaller:
    // the CPU path's rule, so both write the same bytes; 8-byte elements' planes take it where
    // it is smaller than the plane, else are stored, as on the CPU path)
    type Choice = { plain: Candidate | undefined } | { fields: (Candidate | undefined)[]; bytes: number; params: PredictParams };
    const choice: Choice[] = chunks.map((c) => {
      const raw = c.count * size;
      const plainBest = smallest(plain.candidates[c.index], raw, fixed);
      const g = geometry(c.count * per);
      if (predicted === undefined || g === undefined || (fixed && per === 1)) return { plain: plainBest };
      const dec = decimals[c.index];
      const params: PredictParams = {
        ...plan!,
        rowCells: g.rowCells,
        ...(plan!.map === ValueMap.Decimal ? (dec === undefined ? { map: ValueMap.FloatOrder } : { exponents: dec.exponents }) : {}),
      };
      let bytes = predictPrefixBytes(params, dec?.indices.length ?? 0, size);
      const best = Array.from({ length: fields }, (_, k) => {
        const x = smallest(predicted.candidates[c.index * fields + k], g.cells * w, false);
        bytes += FIELD_BLOCK_HEADER_BYTES + (x?.bytes ?? g.cells * w);
        return x;
      });
      return bytes < Math.min(raw, plainBest?.bytes ?? raw) ? { fields: best, bytes, params } : { plain: plainBest };
    });
    // Huffman streams of the chosen pipelines, encoded on the GPU and left there, grouped by buffer
    const pieces = new Map<StreamPlan, Piece[]>();
    const range = (plan: StreamPlan): Piece => ({ buffer: plan.buffer, offset: plan.byteOffset, length: plan.byteLength });
    const rawStream = (plan: StreamPlan): Piece[] => [{ host: new Uint8Array([HuffmanMode.Raw]) }, range(plan)];
    const jobs = new Map<GPUBuffer, { plan: StreamPlan; job: HuffmanEncodeJob }[]>();
    const chosen = choice.flatMap((x) => ('plain' in x ? [x.plain] : x.fields));
    /** The pack streams chosen, by plan. */
    const packWrites = new Map<PackSizing, StreamPlan[]>();
    for (const x of chosen) {
      for (const plan of x?.streams ?? []) {
        if (plan.plain) {
          pieces.set(plan, [range(plan)]);
          continue;
        }
        if (plan.pack !== undefined) {
          if (!packWrites.has(plan.pack.sizing)) packWrites.set(plan.pack.sizing, []);
          packWrites.get(plan.pack.sizing)!.push(plan);
          continue;
        }
        const { count, first } = presentSymbols(plan.code.counts);
        const sized = huffmanStreamBytes(plan.code, plan.byteLength, decoder);
        if (count === 1) pieces.set(plan, [{ host: new Uint8Array([HuffmanMode.OneSymbol, first]) }]);
        else if (sized.lengths === undefined) pieces.set(plan, rawStream(plan));
        else {
          if (!jobs.has(plan.buffer)) jobs.set(plan.buffer, []);
          jobs.get(plan.buffer)!.push({
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
    }
    // the pack streams written back to back, a buffer a plan, in one submission of their own
    // (no readback: their bytes are known)
    const packWritten =
      packWrites.size === 0
        ? undefined
        : gpu.submit('compress pack streams', (s) => {
            for (const [sizing, list] of packWrites) {
              let end = 0;
              const writes = list.map((plan) => {
                const x = { stream: plan.pack!.stream, dstByteOffset: end, byteLength: plan.pack!.bytes };
                end += x.byteLength;
                return x;
              });
              const out = scratch.acquire(end, 'compress pack streams');
              encodePackWrite(gpu, s, sizing, writes, out);
              list.forEach((plan, i) => pieces.set(plan, [{ buffer: out, offset: writes[i].dstByteOffset, length: writes[i].byteLength }]));
            }
          });
    // every buffer's encode at once: their round trips overlap
    const settled = await Promise.allSettled([
      ...(packWritten === undefined ? [] : [packWritten]),
      ...[...jobs].map(async ([buffer, list]) => {
        const done = await huffmanEncodeOnDevice(
          gpu,
          buffer,
          list.map((j) => j.job),
        );
        releases.push(() => done.release());
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
    ]);
    for (const r of settled) if (r.status === 'rejected') throw r.reason;
    if (signal?.aborted) throw abortError(signal);
    const t2 = performance.now();

    // 4. the container laid out on the GPU: each payload's pieces gathered into place, the
    // payloads' tree hashes taken there, and the whole read back once into its final array
    /** A candidate's payload as laid out: its stream directory and streams. */
    const payloadOf = (x: Candidate): { pieces: Piece[]; bytes: number } => {
      const streams = x.streams!.map((plan) => pieces.get(plan)!);
      const sizes = streams.map((list) => list.reduce((a, q) => a + ('host' in q ? q.host.length : q.length), 0));
      const bytes = 8 * streams.length + sizes.reduce((a, b) => a + b, 0);
      const dir = new Uint8Array(8 * streams.length);
      const view = new DataView(dir.buffer);
      sizes.forEach((size, j) => {
        view.setUint32(8 * j, x.streams![j].byteLength, true);
        view.setUint32(8 * j + 4, size, true);
      });
      return { pieces: [{ host: dir }, ...streams.flat()], bytes };
    };
    const unitRange = (set: UnitSet, u: number): Piece => ({
      buffer: set.array.buffer,
      offset: u * set.stride * w,
      length: set.counts[u] * w,
    });
    const laid: LaidChunk[] = [];
    let at = firstEntryOffset(header);
    for (const c of chunks) {
      const x = choice[c.index];
      const raw = c.count * size;
      const stored = (why: string): LaidChunk => ({ entryAt: at, pieces: [unitRange(plainSet, c.index)], payloadBytes: raw, reason: why });
      const sizes = () => plain.candidates[c.index].map((y) => `${pipelineName(y.pipeline)} ${y.bytes} B`).join(', ');
      let chunk: LaidChunk;
      if ('fields' in x) {
        // the predict header, then each field's block: its stage ids and length, then its payload or residuals
        // (the decimal map's exponents, exception count and lists after the header)
        const dec = x.params.map === ValueMap.Decimal ? decimals[c.index]! : undefined;
        const E = dec?.indices.length ?? 0;
        const head = new Uint8Array(predictPrefixBytes(x.params, E, size));
        const listsAt = writePredictHeader(head, x.params, E);
        if (dec !== undefined) {
          head.set(new Uint8Array(dec.indices.buffer, dec.indices.byteOffset, 4 * E), listsAt);
          head.set(new Uint8Array(dec.bits.buffer, dec.bits.byteOffset, size * E), listsAt + 4 * E);
        }
        const list: Piece[] = [{ host: head }];
        let bytes = head.length;
        const why: string[] = [];
        x.fields.forEach((f, k) => {
          const u = c.index * fields + k;
          const coded = f === undefined ? undefined : payloadOf(f);
          // (a field coded to its residuals' bytes or more is stored)
          const payload = coded !== undefined && coded.bytes < predictedSet!.counts[u] * w ? coded : undefined;
          const block = new Uint8Array(FIELD_BLOCK_HEADER_BYTES);
          const body = payload?.pieces ?? [unitRange(predictedSet!, u)];
          const length = payload?.bytes ?? predictedSet!.counts[u] * w;
          if (payload !== undefined) block.set(f!.pipeline, 0);
          new DataView(block.buffer).setUint32(4, length, true);
          list.push({ host: block }, ...body);
          bytes += FIELD_BLOCK_HEADER_BYTES + length;
          why.push(`field ${k}: ${payload === undefined ? 'stored' : pipelineName(f!.pipeline)} ${length} B`);
        });
        if (bytes < raw)
          chunk = {
            entryAt: at,
            pieces: list,
            payloadBytes: bytes,
            pipeline: [],
            reason: `GPU: ${predictName(x.params)}; ${why.join(', ')}`,
          };
        else chunk = stored(`GPU: ${predictName(x.params)} came to ${bytes} B: stored`);
      } else if (x.plain === undefined) chunk = stored('GPU: no candidate smaller than the elements: stored');
      else {
        const payload = payloadOf(x.plain);
        if (payload.bytes >= raw) chunk = stored(`GPU: ${pipelineName(x.plain.pipeline)} came to ${payload.bytes} B: stored`);
        else
          chunk = {
            entryAt: at,
            pieces: payload.pieces,
            payloadBytes: payload.bytes,
            pipeline: x.plain.pipeline,
            reason: `GPU: ${sizes()}: ${pipelineName(x.plain.pipeline)}`,
          };
      }
      laid.push(chunk);
      at += ENTRY_BYTES + chunk.payloadBytes;
    }
    // the chunk index (its bytes come with the header and entries)
    const indexAt = at;
    const index = indexBytes(header) > 0 ? writeIndex(laid.map((chunk) => chunk.entryAt)) : new Uint8Array(0);
    const containerBytes = at + index.length;
    checkContainerFits(gpu, containerBytes);
    // host pieces (directories, Huffman headers, mode bytes) packed into one upload
    let hostBytes = 0;
    for (const chunk of laid) for (const q of chunk.pieces) if ('host' in q) hostBytes += q.host.length;
    const hostPatch = new Uint8Array(roundUp4(Math.max(4, hostBytes)));
    const gathers = new Map<GPUBuffer, GatherJob[]>();
    const patch = scratch.acquire(hostPatch.length, 'compress payload pieces');
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
    const layout = scratch.acquire(containerBytes, 'compress container');
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
        if (chunk.pipeline === undefined) return storedEntry(c.count, c.count * size, hashes[i]);
        const predicted = chunk.pipeline.length === 0;
        return {
          elementCount: c.count,
          encoding: predicted ? Encoding.Predicted : Encoding.Pipeline,
          runCount: 0,
          payloadBytes: chunk.payloadBytes,
          payloadChecksum: BigInt(payloadHashes[k++]),
          elementsChecksum: BigInt(hashes[i]),
          stages: [...chunk.pipeline],
          streamCount: predicted ? 0 : streamCount(chunk.pipeline, w),
          ...(predicted ? { predict: true } : {}),
        };
      });
    };
    const report = () =>
      debug(
        () =>
          `compress on the GPU: ${chunks.length} chunks, ${containerBytes} B; rle streams built: ` +
          `${[...plain.rleBuilt, ...(predicted?.rleBuilt.map((x) => `${x} of residuals`) ?? [])].join(', ') || 'none'}; hashes, transforms and histograms ` +
          `${(t1 - t0).toFixed(2)} ms, runs and Huffman streams ${(t2 - t1).toFixed(2)} ms, ` +
          `payloads laid out and read back ${(performance.now() - t2).toFixed(2)} ms; ` +
          `chunks: ${[...tally(laid.map((chunk) => (chunk.pipeline === undefined ? 'stored' : chunk.pipeline.length === 0 ? 'predicted' : pipelineName(chunk.pipeline))))].map(([k, n]) => `${n} ${k}`).join(', ')}; ` +
          `first chunk: ${laid[0]?.reason ?? 'none'}`,
      );
    if (resident) {
      const entries = entriesOf(await readHashes());
      await placeChunkTable(gpu, layout, {
        head: writeHeader(header),
        entries,
        entryAt: laid.map((chunk) => chunk.entryAt),
        index,
        indexAt,
      });
      // the container's buffer is the result's: not given back with the scratch buffers
      acquired.splice(acquired.indexOf(layout), 1);
      const device = gpu.owned(layout, 'u8', containerBytes);
      report();
      const encoded = laid.map((chunk, i): EncodedChunk => ({ entry: entries[i], payload: new Uint8Array(0), reason: chunk.reason }));
      return { header, container: new Uint8Array(0), encoded, device, payloadOffsets: laid.map((chunk) => chunk.entryAt + ENTRY_BYTES) };
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
    for (const release of releases) release();
    for (const b of acquired) gpu.releaseStorage(b);
  }
}
