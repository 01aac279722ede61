/**
 * Encoding of one version-2 chunk on the CPU kernels (assembly/: hash.ts, delta.ts, shuffle.ts,
 * statistics.ts, huffman.ts, huffman-lanes.ts, pack.ts, quantize.ts and the RLE / LEB128
 * kernels), run by one thread (a worker, or the engine's thread for small inputs) on the
 * kernels' memory: the chooser's statistics, the candidate pipelines, the payload and both tree
 * hashes. It writes what docs/format.md specifies in "Pipelines and stages", "Payloads" (the
 * stream directory and the streams: "RLE streams (stage 3)", "Huffman streams", "Mode 3:
 * interleaved lanes", "Pack streams"), "Stage 5: quantize" and "Tree hash", and picks pipelines
 * as "The chooser" describes. Plain functions of pointers: all scratch comes from one arena the
 * caller allocates ({@link encodeArenaBytes}; ./arena.ts).
 */
import { DEFAULT_LEVEL, Encoding, type ChunkEntry } from '../../format/layout.js';
import { lanesScratchBytes, PACK_SCRATCH_BYTES } from '../../cpu/wasm.js';
import { competingBytes, describeEstimates, estimateCandidates, packTolerance, type ChunkStats, type Estimate } from '../chooser.js';
import {
  codeLengths,
  codedBits,
  DEFAULT_SEGMENT_LOG2,
  headerBytes,
  HuffmanMode,
  LANES_SEGMENT_LOG2,
  presentSymbols,
  segmentCount,
  writeHeader,
} from '../huffman.js';
import { entropyStage, pipelineName, StageId, streamCount, type Pipeline } from '../../format/stages.js';
import { quantizeHeaderBytes, writeQuantizeHeader } from '../../format/quantize.js';
import { quantizeParams, quantizeParamsF64 } from '../quantize.js';
import { Arena, decimalTablesAt, exponentsAt, SLACK, SMALL_SCRATCH, treeHashAt, u32, u8, type CodecContext } from './arena.js';
import { chooseExponents, PLAIN_ENOUGH, WORD_PLANES_PLAN, type PredictPlan } from '../predict.js';
import {
  elementFields,
  exceptionBytes,
  FIELD_BLOCK_HEADER_BYTES,
  predictName,
  predictWords,
  predictPrefixBytes,
  ValueMap,
  writePredictHeader,
  type PredictParams,
} from '../../format/predict.js';

/**
 * Bytes sampled for the chooser's statistics at most, by level (in ranges spread over the chunk,
 * each at most {@link SAMPLE_RANGE_BYTES}): the statistics pass runs at 0.35-0.6 GB/s, a third of
 * the entropy coder's speed, so the fast levels look at less. Index: level 1..9.
 */
const SAMPLE_BYTES = [0, 4 << 10, 8 << 10, 12 << 10, 16 << 10, 16 << 10, 32 << 10, 64 << 10, 64 << 10, 64 << 10];
const SAMPLE_RANGE_BYTES = 1 << 10;
/** Ranges a sample is cut into, at least (so a small sample still sees the chunk's start, middle and end). */
const SAMPLE_RANGES = 4;
/**
 * Ranges of a sample that pack sizes are taken from, at most, per this many bytes of the chunk
 * (spread over the sample's ranges; at least 4): a block's width is its largest value's, so a
 * sample of 4 ranges missed the outliers of a grid's 1 MiB residual planes (pack estimated at
 * 138 KiB coded to 347 KiB) that 16 found.
 */
const PACK_SAMPLE_RANGE_EVERY = 64 << 10;
/**
 * A chunk whose best estimate is above this share of its raw size is stored without encoding a
 * candidate (levels below 9; estimates run a few per cent low, so nothing smaller is lost that
 * an encode would have found, and random data goes at copy speed).
 */
const STORE_ABOVE = 0.97;

/**
 * Arena bytes {@link encodeChunkAt} needs for a chunk of `count` elements of `width` bytes
 * (`quantize`: with an error bound, which adds codes, reconstructions and exception lists).
 */
export function encodeArenaBytes(count: number, width: number, quantize = false, predict = false): number {
  const raw = count * width;
  if (quantize) return encodeArenaBytes(count, width, false, predict) + 3 * raw + 8 * SLACK;
  // predict: values, residuals, planes, the payload, exception lists (count / 64 at most)
  if (predict)
    return encodeArenaBytes(count, width) + 3 * (raw + SLACK) + payloadRoomBytes(raw) + Math.ceil(count / 64) * (4 + width) + 4 * SLACK;
  // delta, shuffle, rle values, LEB128 lengths (<= runs + 4 n / 129), u32 lengths, two payloads, hash scratch
  return (
    SMALL_SCRATCH +
    2 * (raw + SLACK) +
    (raw + SLACK) +
    Math.ceil(raw * 1.04) +
    8 * width +
    SLACK +
    4 * count +
    SLACK +
    2 * (raw + 4096 + SLACK) +
    Math.ceil(raw / 4096) * 4 +
    SLACK
  );
}

/** A byte stream in the kernels' memory and the width of its elements. */
interface Stream {
  ptr: number;
  bytes: number;
  width: 1 | 2 | 4;
}

/** The entry of a stored chunk of `count` elements (`raw` bytes) whose bytes hash to `elementsHash`. */
export function storedEntry(count: number, raw: number, elementsHash: number): ChunkEntry {
  return {
    elementCount: count,
    encoding: Encoding.Stored,
    runCount: 0,
    payloadBytes: raw,
    payloadChecksum: BigInt(elementsHash),
    elementsChecksum: BigInt(elementsHash),
    stages: [],
    streamCount: 0,
  };
}

/** Parameters of {@link encodeChunkAt}. */
export interface EncodeChunkParams {
  elementSize: 1 | 2 | 4 | 8;
  count: number;
  /** The chunk's elements (count x elementSize bytes, plus 32 bytes of slack when runs are given). */
  inPtr: number;
  arenaPtr: number;
  arenaBytes: number;
  /** A fixed pipeline (stage ids), or undefined for the chooser. */
  pipeline?: number[];
  /**
   * The chooser's effort, 1..9 (default 5): level 1 encodes the best estimate only (one pass),
   * 2-6 the second-best too where it promises a tenth less than the first came to, 7-8 the best
   * two, 9 the best two and version 1's RLE guard (version 2's chooser); the sample of statistics
   * grows with the level ({@link SAMPLE_BYTES}).
   */
  level?: number;
  /** Build the chooser's reason string (explainCodec, NODE_DEBUG); off, the hot path builds no strings. */
  explain?: boolean;
  /**
   * Write the Huffman streams as mode 3, 32 interleaved lanes a segment for a GPU's decoder
   * (docs/format.md, "Mode 3: interleaved lanes"; compress's `decoder: 'gpu'`), else mode 2.
   */
  huffmanLanes?: boolean;
  /**
   * Where the first candidate is encoded (the caller's place for the payload: {@link
   * payloadRoomBytes} of the chunk), instead of the arena: a payload that lands there is not
   * copied again (EncodeChunkResult.inPlace).
   */
  payloadPtr?: number;
  /** The chunk's runs, when known (a GPU encode): expanded into inPtr first. */
  runCount?: number;
  runValuesPtr?: number;
  runLengthsPtr?: number;
  /**
   * With runs and a fixed pipeline of rle (and huffman): the elements' tree hash, computed
   * elsewhere (the GPU). The payload is then built from the runs, not from expanded elements;
   * the runs are expanded only if the chunk ends up stored.
   */
  elementsHash?: number;
  /**
   * f32 and f64 only (elementSize 4 or 8): quantize within this absolute error bound first
   * (ts/codec/quantize.ts); the arena then needs {@link encodeArenaBytes}(count, size, true).
   */
  errorBound?: number;
  /**
   * Predict the chunk with this plan (stage 7, ts/codec/predict.ts; a lossless chunk without a
   * fixed pipeline): the arena then needs {@link encodeArenaBytes}(count, size, false, true).
   */
  predict?: PredictPlan;
}

/** What {@link encodeChunkAt} returns: the entry, where the payload lies, and why this pipeline. */
export interface EncodeChunkResult {
  entry: ChunkEntry;
  /**
   * Where the payload lies: its byte offset in the arena, or -1 for a stored chunk (the payload
   * is the input). An offset, not a pointer, so that it holds in a worker that owns its memory.
   */
  payloadOffset: number;
  /** The chooser's reasoning, for `explain` and `inspect`. */
  reason: string;
  /**
   * The payload lies at the params' payloadPtr (payloadOffset is then payloadPtr - arenaPtr, which
   * may be negative: tell a stored chunk by its entry's encoding).
   */
  inPlace?: boolean;
}

/** Bytes a caller's place for a payload (EncodeChunkParams.payloadPtr) needs for `raw` bytes of elements. */
export function payloadRoomBytes(raw: number): number {
  return raw + 4096 + SLACK;
}

/** The ranges a sample of at most `sampleBytes` reads: [first element, elements] each, spread over the chunk (all of it when small). */
function sampleRanges(count: number, width: number, sampleBytes: number): [number, number][] {
  if (count * width <= sampleBytes) return [[0, count]];
  const ranges = Math.max(SAMPLE_RANGES, Math.ceil(sampleBytes / SAMPLE_RANGE_BYTES));
  const rangeElems = Math.floor(sampleBytes / ranges / width);
  const stride = Math.floor((count - rangeElems) / (ranges - 1));
  return Array.from({ length: ranges }, (_, r) => [r * stride, rangeElems]);
}

/** Gathers the chooser's statistics (no pack sizes: {@link gatherPackStats}) over at most `sampleBytes`, sampling ranges spread over a large chunk. */
function gatherStats(ctx: CodecContext, arena: Arena, inPtr: number, count: number, width: 1 | 2 | 4, sampleBytes: number): ChunkStats {
  const { kernels } = ctx;
  const histPtr = arena.alloc(2 * width * 1024);
  const runsPtr = arena.alloc(4 * (2 + 2 * width));
  u8(ctx, histPtr, 2 * width * 1024).fill(0);
  u8(ctx, runsPtr, 4 * (2 + 2 * width)).fill(0);
  const codecStats = width === 1 ? kernels.codecStats8 : width === 2 ? kernels.codecStats16 : kernels.codecStats32;
  let sampled = 0;
  for (const [first, n] of sampleRanges(count, width, sampleBytes)) {
    codecStats(inPtr + first * width, n, histPtr, runsPtr);
    sampled += n;
  }
  // views of the counts in the arena: the caller estimates before it reuses the arena
  const hist: Uint32Array[][] = [0, 1].map((t) => Array.from({ length: width }, (_, k) => u32(ctx, histPtr + 1024 * (t * width + k), 256)));
  const runsAll = u32(ctx, runsPtr, 2 + 2 * width);
  const planeRuns = [0, 1].map((t) => Array.from({ length: width }, (_, k) => runsAll[2 + t * width + k]));
  return { count, sampled, width, hist, runs: [runsAll[0], runsAll[1]], planeRuns };
}

/**
 * The pack sizes of the elements and of their deltas over the same sample as {@link gatherStats},
 * scaled to its element count: from every k-th of its ranges only, at most one a
 * {@link PACK_SAMPLE_RANGE_EVERY} bytes of the chunk and at least 4 (a block's plan costs more a
 * byte than the histograms: on a chunk of labels that codes at 1.7 GB/s every range of the
 * sample doubled the chunk's time).
 */
function gatherPackStats(ctx: CodecContext, arena: Arena, inPtr: number, count: number, width: 1 | 2 | 4, sampleBytes: number): number[] {
  const packPtr = arena.alloc(16);
  const scratch = arena.alloc(PACK_SCRATCH_BYTES);
  const sizes = new Float64Array(ctx.memory.buffer, packPtr, 2);
  sizes.fill(0);
  const ranges = sampleRanges(count, width, sampleBytes);
  const every = Math.ceil(ranges.length / Math.max(4, Math.floor((count * width) / PACK_SAMPLE_RANGE_EVERY)));
  let sampled = 0;
  let packSampled = 0;
  for (let r = 0; r < ranges.length; r++) {
    const [first, n] = ranges[r];
    sampled += n;
    if (r % every !== 0) continue;
    ctx.kernels.packStats(inPtr + first * width, n, width, packPtr, scratch);
    packSampled += n;
  }
  return [(sizes[0] * sampled) / packSampled, (sizes[1] * sampled) / packSampled];
}

/**
 * Bytes below which no pack estimate of `count` elements of `width` bytes falls: packStats
 * counts a block at 1 bit an element at least, 2 + w + 32 bytes a full block.
 */
function packFloorBytes(count: number, width: number): number {
  return (count / 256) * (2 + width + 32);
}

/**
 * Encodes a Huffman stream of `src` at `out` (capacity `room` bytes past `out`, plus slack):
 * mode 2, or with `lanes` mode 3 (docs/format.md, "Mode 3: interleaved lanes": segments of
 * 2^{@link LANES_SEGMENT_LOG2} symbols, at most 64 bytes a segment over the codes' bytes).
 * Returns the bytes written, or -1 when it does not fit.
 */
function encodeHuffmanStream(ctx: CodecContext, arena: Arena, src: Stream, out: number, room: number, lanes = false): number {
  const { kernels } = ctx;
  const mark = arena.mark();
  try {
    const scratch = arena.alloc(4096);
    const histPtr = arena.alloc(1024);
    kernels.histogram8(src.ptr, src.bytes, histPtr, scratch);
    const hist = u32(ctx, histPtr, 256);
    const { count, first } = presentSymbols(hist);
    const mem = () => u8(ctx, out, Math.min(room, 1 + src.bytes));
    if (count === 1) {
      if (room < 2) return -1;
      const m = mem();
      m[0] = HuffmanMode.OneSymbol;
      m[1] = first;
      return 2;
    }
    const rawStream = (): number => {
      if (room < 1 + src.bytes) return -1;
      u8(ctx, out, 1)[0] = HuffmanMode.Raw;
      kernels.copyBytes(out + 1, src.ptr, src.bytes);
      return 1 + src.bytes;
    };
    if (count === 0) return rawStream();
    const lengths = codeLengths(hist);
    const g = lanes ? LANES_SEGMENT_LOG2 : DEFAULT_SEGMENT_LOG2;
    const segments = segmentCount(src.bytes, g);
    const head = headerBytes(lengths) + 4 * segments;
    const codeBytes = Math.ceil(codedBits(hist, lengths) / 8);
    // mode 2: a byte's padding a segment at most; mode 3: 32 lanes' last units, 32 bytes a
    // segment on average (what decides against raw), 64 at most (what must fit)
    const bound = head + codeBytes + (lanes ? 64 : 1) * segments;
    const likely = lanes ? head + codeBytes + 32 * segments : bound;
    if (likely >= 1 + src.bytes) return rawStream();
    if (bound > room && !lanes) return room >= 1 + src.bytes ? rawStream() : -1;
    const lengthsPtr = arena.alloc(256);
    const codesPtr = arena.alloc(1024);
    u8(ctx, lengthsPtr, 256).set(lengths);
    kernels.huffmanBuildCodes(lengthsPtr, codesPtr);
    if (bound > room) {
      // mode 3's worst case past the room: its exact size decides, as on the GPU path (coded when
      // the likely size is below raw, kept when the actual one is), so both write the same bytes
      const total = head + kernels.huffmanLanesBytes(src.ptr, src.bytes, codesPtr, g);
      if (total >= 1 + src.bytes) return rawStream();
      if (total > room) return -1;
    }
    const headerLen = writeHeader(u8(ctx, out, head), 0, lengths, g, lanes ? HuffmanMode.Lanes : HuffmanMode.Huffman);
    const bits = lanes
      ? kernels.huffmanEncodeLanes(src.ptr, src.bytes, codesPtr, g, out + head, out + headerLen, arena.alloc(lanesScratchBytes(g)))
      : kernels.huffmanEncode(src.ptr, src.bytes, codesPtr, g, out + head, out + headerLen);
    const total = head + bits;
    if (total >= 1 + src.bytes) return rawStream();
    return total;
  } finally {
    arena.reset(mark);
  }
}

/**
 * Runs `pipeline` over the elements at `inPtr` and writes the payload (directory and streams) at
 * `out`, which has room for `room` bytes. Returns the payload length, or -1 when it would not be
 * smaller than `room`.
 */
function encodePipeline(
  ctx: CodecContext,
  arena: Arena,
  pipeline: Pipeline,
  inPtr: number,
  count: number,
  width: 1 | 2 | 4,
  out: number,
  room: number,
  runs?: { count: number; valuesPtr: number; lengthsPtr: number },
  exactSizes?: Map<string, number>,
  lanes = false,
): number {
  const { kernels } = ctx;
  const mark = arena.mark();
  try {
    const raw = count * width;
    let streams: Stream[] = [{ ptr: inPtr, bytes: raw, width }];
    if (runs !== undefined) {
      // the chunk's runs are the rle stage's output (pipeline: rle, then maybe huffman)
      // LEB128: one byte a run, and at most 4 more for each run of 129 elements or more
      const varint = arena.alloc(runs.count + Math.ceil((4 * count) / 129) + 8 + SLACK);
      const lebBytes = kernels.varintEncodeLengths(runs.lengthsPtr, runs.count, varint);
      streams = [
        { ptr: runs.valuesPtr, bytes: runs.count * width, width },
        { ptr: varint, bytes: lebBytes, width: 1 },
      ];
      pipeline = pipeline.filter((s) => s === StageId.Huffman);
    }
    if (pipeline.includes(StageId.Delta)) {
      const d = arena.alloc(raw + SLACK);
      (width === 1 ? kernels.deltaEncode8 : width === 2 ? kernels.deltaEncode16 : kernels.deltaEncode32)(inPtr, d, count);
      streams = [{ ptr: d, bytes: raw, width }];
    }
    if (pipeline.includes(StageId.Shuffle)) {
      const s = arena.alloc(raw + SLACK);
      (width === 2 ? kernels.shuffle16 : kernels.shuffle32)(streams[0].ptr, s, count);
      streams = Array.from({ length: width }, (_, k) => ({ ptr: s + k * count, bytes: count, width: 1 as const }));
    }
    if (pipeline.includes(StageId.Rle)) {
      const values = arena.alloc(raw + SLACK);
      const varint = arena.alloc(Math.ceil(raw * 1.04) + 8 * width + SLACK);
      const lengths = arena.alloc(4 * count + SLACK);
      const next: Stream[] = [];
      let v = values;
      let l = varint;
      for (const s of streams) {
        const n = s.bytes / s.width;
        const encode = s.width === 1 ? kernels.rleEncode8 : s.width === 2 ? kernels.rleEncode16 : kernels.rleEncode32;
        const runs = encode(s.ptr, n, v, lengths);
        const lebBytes = kernels.varintEncodeLengths(lengths, runs, l);
        next.push({ ptr: v, bytes: runs * s.width, width: s.width }, { ptr: l, bytes: lebBytes, width: 1 });
        v += runs * s.width;
        l += lebBytes;
      }
      streams = next;
    }
    const S = streams.length;
    const entropy = entropyStage(pipeline);
    if (exactSizes !== undefined && entropy !== undefined) {
      // the same pipeline without huffman / pack would store these streams raw: its exact size, for free
      exactSizes.set(pipelineName(pipeline.filter((id) => id !== entropy)), 8 * S + streams.reduce((a, x) => a + x.bytes, 0));
    }
    const dir = new DataView(ctx.memory.buffer, out, 8 * S);
    let at = 8 * S;
    if (at >= room) return -1;
    const packScratch = entropy === StageId.Pack ? arena.alloc(PACK_SCRATCH_BYTES) : 0;
    for (let j = 0; j < S; j++) {
      const s = streams[j];
      let written: number;
      if (entropy === StageId.Huffman) {
        written = encodeHuffmanStream(ctx, arena, s, out + at, room - at, lanes);
      } else if (entropy === StageId.Pack) {
        // each stream alone, at its own element width (planes and run lengths: 1)
        written = kernels.packEncode(s.ptr, s.bytes / s.width, s.width, out + at, room - at, packScratch);
      } else {
        written = at + s.bytes <= room ? s.bytes : -1;
        if (written >= 0) kernels.copyBytes(out + at, s.ptr, s.bytes);
      }
      if (written < 0) return -1;
      dir.setUint32(8 * j, s.bytes, true);
      dir.setUint32(8 * j + 4, written, true);
      at += written;
      if (at >= room) return -1;
    }
    return at;
  } finally {
    arena.reset(mark);
  }
}

/**
 * Encodes one chunk as version 2: a fixed pipeline, or the chooser's (estimates of every
 * candidate, the best two encoded, the smallest kept; stored when none is smaller than the raw
 * elements). Payload and elements are hashed with the tree hash.
 */
export function encodeChunkAt(ctx: CodecContext, p: EncodeChunkParams): EncodeChunkResult {
  const { kernels } = ctx;
  const width = p.elementSize;
  const raw = p.count * width;
  const arena = new Arena(p.arenaPtr, p.arenaPtr + p.arenaBytes);
  if (width === 8) {
    // f64 with a bound: quantized (the u32 codes through a pipeline at width 4) where it pays
    let lossy = '';
    if (p.errorBound !== undefined && p.count > 0) {
      const quantized = encodeQuantized(ctx, arena, p, p.errorBound);
      if (typeof quantized !== 'string') return quantized;
      lossy = `${quantized}; coded losslessly: `;
    }
    // 8-byte elements have no pipeline of their own: predicted (their words in planes, a fixed
    // codec's pipeline on each) or stored
    const elementsHash = treeHashAt(ctx, arena, p.inPtr, raw);
    const predicted = p.count === 0 ? 'empty chunk' : encodePredicted(ctx, arena, p, p.predict ?? WORD_PLANES_PLAN, elementsHash);
    if (typeof predicted !== 'string') return lossy === '' ? predicted : { ...predicted, reason: `${lossy}${predicted.reason}` };
    return {
      entry: storedEntry(p.count, raw, elementsHash),
      payloadOffset: -1,
      reason: p.explain === true ? `${lossy}${predicted}: stored` : '',
    };
  }
  const expand = () => {
    const decode = width === 1 ? kernels.rleDecode8 : width === 2 ? kernels.rleDecode16 : kernels.rleDecode32;
    decode(p.runValuesPtr ?? 0, p.runLengthsPtr ?? 0, p.runCount ?? 0, p.inPtr);
  };
  // runs of a GPU encode with their elements' hash: a payload of rle (+ huffman) from the runs
  const fromRuns =
    p.runCount !== undefined &&
    p.elementsHash !== undefined &&
    p.pipeline !== undefined &&
    p.pipeline[0] === StageId.Rle &&
    p.pipeline.every((s) => s === StageId.Rle || s === StageId.Huffman);
  /** Why a chunk with an error bound is coded losslessly (a prefix of the reason). */
  let lossless = '';
  if (fromRuns && p.count > 0) {
    const payloadPtr = arena.alloc(raw + 4096 + SLACK);
    const runs = { count: p.runCount!, valuesPtr: p.runValuesPtr ?? 0, lengthsPtr: p.runLengthsPtr ?? 0 };
    const bytes = encodePipeline(
      ctx,
      arena,
      p.pipeline as Pipeline,
      p.inPtr,
      p.count,
      width,
      payloadPtr,
      raw,
      runs,
      undefined,
      p.huffmanLanes === true,
    );
    if (bytes >= 0) {
      return {
        entry: {
          elementCount: p.count,
          encoding: Encoding.Pipeline,
          runCount: 0,
          payloadBytes: bytes,
          payloadChecksum: BigInt(treeHashAt(ctx, arena, payloadPtr, bytes)),
          elementsChecksum: BigInt(p.elementsHash!),
          stages: [...(p.pipeline as Pipeline)],
          streamCount: streamCount(p.pipeline as Pipeline, width),
        },
        payloadOffset: payloadPtr - p.arenaPtr,
        reason: `codec ${pipelineName(p.pipeline as Pipeline)} from the GPU's runs: ${bytes} B`,
      };
    }
    arena.reset(payloadPtr);
  }
  if (p.runCount !== undefined && p.count > 0) expand();
  if (p.errorBound !== undefined && width === 4 && p.count > 0) {
    const quantized = encodeQuantized(ctx, arena, p, p.errorBound);
    if (typeof quantized !== 'string') return quantized;
    lossless = `${quantized}; coded losslessly: `;
  }
  const elementsHash = treeHashAt(ctx, arena, p.inPtr, raw);
  const stored = (reason: string): EncodeChunkResult => ({
    entry: storedEntry(p.count, raw, elementsHash),
    payloadOffset: -1,
    reason,
  });
  if (p.count === 0) return stored('empty chunk');
  if (p.predict !== undefined && p.pipeline === undefined && lossless === '') {
    // the plan was ranked on a sample's entropy and runs: a chunk the plain pipelines already
    // code to a twelfth (runs of a label volume, a background) is coded plainly, where the
    // estimates of run lengths are least sure and prediction only costs time; a predicted chunk
    // whose plain estimate is not a tenth larger (a fifth at levels 7-9) is encoded both ways,
    // the smaller kept (on the corpus at level 5 a tenth cost MRI 0.17 % of its ratio and no
    // other array a byte, and took a fifth off MRI's write: its plain encodes seldom won)
    const level = effortOf(p).level;
    const plainMargin = level <= 6 ? 1.1 : 1.2;
    const plain = chooserEstimates(ctx, arena, p.inPtr, p.count, width, level)[0].bytes;
    if (plain * PLAIN_ENOUGH > raw) {
      const predicted = encodePredicted(ctx, arena, p, p.predict, elementsHash);
      if (typeof predicted !== 'string') {
        // (estimates run 5-20 % low: within the margin of the predicted size, the plain one is encoded too)
        if (plain >= plainMargin * predicted.entry.payloadBytes) return predicted;
        const coded = encodeBest(ctx, arena, p.inPtr, p.count, width, undefined, 0, effortOf(p));
        if (coded.ptr < 0 || coded.bytes >= predicted.entry.payloadBytes) return predicted;
        lossless = p.explain === true ? `${predicted.reason}: ${predicted.entry.payloadBytes} B, plain smaller; ` : '';
      } else {
        lossless = `${predicted}; `;
      }
    } else {
      lossless = p.explain === true ? `plain estimate ${Math.round(plain)} B, a twelfth of the chunk or less: not predicted; ` : '';
    }
  }
  const coded = encodeBest(ctx, arena, p.inPtr, p.count, width, p.pipeline, 0, effortOf(p), p.payloadPtr);
  if (coded.ptr < 0) return stored(p.explain === true ? `${lossless}${coded.why}: stored` : '');
  return {
    entry: {
      elementCount: p.count,
      encoding: Encoding.Pipeline,
      runCount: 0,
      payloadBytes: coded.bytes,
      payloadChecksum: BigInt(treeHashAt(ctx, arena, coded.ptr, coded.bytes)),
      elementsChecksum: BigInt(elementsHash),
      stages: [...coded.pipeline],
      streamCount: streamCount(coded.pipeline, width),
    },
    payloadOffset: coded.ptr - p.arenaPtr,
    reason: p.explain === true ? `${lossless}${coded.why}: ${pipelineName(coded.pipeline)}` : '',
    ...(coded.ptr === p.payloadPtr ? { inPlace: true } : {}),
  };
}

/** The chooser's effort for a chunk: its level (default 5) and whether to explain; and the Huffman streams' mode. */
interface Effort {
  level: number;
  explain: boolean;
  /** Write Huffman streams as mode 3 ({@link EncodeChunkParams.huffmanLanes}). */
  lanes: boolean;
  /** Encode the best estimate only (the quantized codes, whose estimates rank well). */
  single?: boolean;
}

function effortOf(p: EncodeChunkParams): Effort {
  return { level: p.level ?? DEFAULT_LEVEL, explain: p.explain === true, lanes: p.huffmanLanes === true };
}

/**
 * Encodes an f32 or f64 chunk (`p.elementSize` 4 or 8) quantized within `abs` (docs/format.md,
 * "Stage 5: quantize"): the u32 codes and the reconstructions (assembly/quantize.ts), the
 * chooser's pipeline over the codes (width 4), and the payload: quantize header, exception
 * indices, exception values (the elements' bits), then the codes' payload. The elements' hash is
 * the reconstructions'. Returns why not when the chunk is better (or only) coded losslessly: a
 * bound below MIN_BOUND (f64: MIN_BOUND_F64), exceptions past count / 2, or no payload smaller
 * than the raw elements (count x 4, or count x 8).
 */
function encodeQuantized(ctx: CodecContext, arena: Arena, p: EncodeChunkParams, abs: number): EncodeChunkResult | string {
  const width = p.elementSize === 8 ? 8 : 4;
  const q32 = width === 4 ? quantizeParams(abs) : undefined;
  const q64 = width === 8 ? quantizeParamsF64(abs) : undefined;
  const step = q32?.step ?? q64?.step;
  if (step === undefined) return `bound ${abs} below ${width === 8 ? '2^-960' : '2^-120'}`;
  const { kernels } = ctx;
  const count = p.count;
  const raw = width * count;
  const headerBytes = quantizeHeaderBytes(width);
  const mark = arena.mark();
  const codes = arena.alloc(4 * count + SLACK);
  const recon = arena.alloc(raw + SLACK);
  // a payload with E exceptions holds (4 + w) E bytes of them: past count / 2 it cannot beat raw
  const cap = Math.floor(count / 2);
  const excIndex = arena.alloc(4 * cap + SLACK);
  const excValue = arena.alloc(width * cap + SLACK);
  const exceptions =
    q64 !== undefined
      ? kernels.quantizeF64(p.inPtr, count, q64.step, q64.inv, q64.abs, q64.lim, codes, recon, excIndex, excValue, cap)
      : kernels.quantizeF32(p.inPtr, count, q32!.step, q32!.inv, q32!.tol, q32!.limBits, codes, recon, excIndex, excValue, cap);
  const prefix = headerBytes + (4 + width) * exceptions;
  const why = `quantize (abs ${abs}, step ${step}, ${exceptions} exceptions)`;
  if (exceptions > cap || prefix >= raw) {
    arena.reset(mark);
    return `${why}: too many exceptions`;
  }
  // the codes' estimates rank their pipelines well: only the best is encoded, which halves the
  // time for a few tenths of a percent of size (bench/lossy.mjs); the payload must stay below
  // the elements' raw size (an f64 chunk's: twice the codes')
  const coded = encodeBest(ctx, arena, codes, count, 4, p.pipeline, prefix, { ...effortOf(p), single: true }, p.payloadPtr, raw);
  if (coded.ptr < 0) {
    arena.reset(mark);
    return `${why}: not smaller (${coded.why})`;
  }
  writeQuantizeHeader(u8(ctx, coded.ptr, headerBytes), abs, step, exceptions, width);
  kernels.copyBytes(coded.ptr + headerBytes, excIndex, 4 * exceptions);
  kernels.copyBytes(coded.ptr + headerBytes + 4 * exceptions, excValue, width * exceptions);
  return {
    entry: {
      elementCount: count,
      encoding: Encoding.Pipeline,
      runCount: 0,
      payloadBytes: coded.bytes,
      payloadChecksum: BigInt(treeHashAt(ctx, arena, coded.ptr, coded.bytes)),
      elementsChecksum: BigInt(treeHashAt(ctx, arena, recon, raw)),
      stages: [...coded.pipeline],
      streamCount: streamCount(coded.pipeline, 4),
      quantize: true,
    },
    payloadOffset: coded.ptr - p.arenaPtr,
    reason: `${why}; ${coded.why}: ${pipelineName(coded.pipeline, true)}`,
    ...(coded.ptr === p.payloadPtr ? { inPlace: true } : {}),
  };
}

/** A candidate that codes to more than this times its estimate lets {@link encodeBest} try one more. */
const ESTIMATE_MISS = 1.5;

/**
 * The chooser's pipeline (or `fixed`) over `count` elements at `inPtr`, encoded: estimates of
 * every candidate from a sample's statistics, then by `effort.level`: 1 the best estimate
 * encoded once, 2-6 also the second where it promises a tenth less than the first came to, 7-8
 * the best two, 9 the best two and version 1's RLE guard; one more where a candidate came to
 * more than {@link ESTIMATE_MISS} times its estimate; the smallest kept (`single`: the best
 * only, and one more on such a miss). Below 9 a chunk whose best estimate is near its raw size is stored without an encode. The payload lies at `ptr` in the arena after `prefix` bytes left free for the
 * caller (a quantize header), and prefix + bytes is below `limit` (default: the elements' raw
 * size; an f64 chunk's codes: the chunk's raw size, twice theirs); `ptr` is -1 when no pipeline
 * gets there. The payload's place (`payloadPtr`) has room for payloadRoomBytes(limit).
 */
function encodeBest(
  ctx: CodecContext,
  arena: Arena,
  inPtr: number,
  count: number,
  width: 1 | 2 | 4,
  fixed: number[] | undefined,
  prefix: number,
  effort: Effort,
  payloadPtr?: number,
  limit = count * width,
): { ptr: number; bytes: number; pipeline: Pipeline; why: string } {
  const { level, explain } = effort;
  const tries = effort.single === true || level <= 1 ? 1 : 2;
  // levels 2-6 encode the second-best estimate only when it promises a tenth less than the first
  // came to (estimates from a sample run 5-20 % low, and RLE's from run counts alone can be off
  // either way: a volume's long background runs); 7-9 whenever it promises less
  const margin = level <= 6 ? 0.9 : 1;
  // pack competes at its size / (1 + tolerance): within a few per cent of Huffman it wins
  const tolerance = packTolerance(level);
  let candidates: Pipeline[];
  /**
   * Each candidate's estimated payload bytes (none for a fixed codec; the first is tried whatever
   * its estimate); and the estimates not tried, best first.
   */
  let estimateOf: number[] = [];
  let untried: Estimate[] = [];
  let reason: string;
  if (fixed !== undefined) {
    candidates = fixed.length === 0 ? [] : [fixed as Pipeline];
    reason = `codec ${pipelineName(fixed as Pipeline)} requested`;
  } else {
    const estimates = chooserEstimates(ctx, arena, inPtr, count, width, level);
    reason = explain ? `level ${level}, estimates: ${describeEstimates(estimates)}` : '';
    if (level < 9 && prefix + estimates[0].bytes > STORE_ABOVE * limit) {
      // incompressible by the estimates: stored at copy speed
      return { ptr: -1, bytes: 0, pipeline: [], why: explain ? `${reason}; none below ${STORE_ABOVE * 100} % of raw` : '' };
    }
    const tried = estimates.slice(0, tries);
    // level 9: version 1's RLE is tried when it could win, so no chunk is larger than it would have been
    const rle = estimates.find((e) => e.pipeline.length === 1 && e.pipeline[0] === StageId.Rle);
    if (level >= 9 && rle && rle.bytes < 2 * limit && !tried.includes(rle) && effort.single !== true) tried.push(rle);
    candidates = tried.map((e) => e.pipeline);
    estimateOf = tried.map((e) => e.bytes);
    untried = estimates.filter((e) => !tried.includes(e));
  }
  // the first candidate goes to the caller's place when there is one; a second one that wins
  // lies in the arena (and is copied by the caller)
  const payloads = [payloadPtr ?? arena.alloc(payloadRoomBytes(limit)), arena.alloc(payloadRoomBytes(limit))];
  let best = -1;
  let bestBytes = limit - prefix;
  let bestPipeline: Pipeline = [];
  /** A candidate's bytes as they compete with the best so far (pack against huffman: {@link competingBytes}). */
  const against = (pipeline: Pipeline, bytes: number) => competingBytes(pipeline, bytes, bestPipeline, tolerance);
  const tried: string[] = [];
  /** Exact payload sizes learnt while encoding other candidates (x+huffman gives x's). */
  const exactSizes = new Map<string, number>();
  for (const [i, pipeline] of candidates.entries()) {
    const exact = exactSizes.get(pipelineName(pipeline));
    if (exact !== undefined && best >= 0 && bestBytes <= exact) {
      if (explain) tried.push(`${pipelineName(pipeline)} skipped (exactly ${exact} B)`);
      continue;
    }
    // the estimates run low (run values are assumed to cost what elements cost): a candidate
    // whose estimate is not below what is already in hand would not win, so it is not encoded
    // (the rle guard only when its estimate is twice what is in hand: its sizes are nearly exact,
    // and it is what keeps a chunk no larger than version 1 would have made it)
    const estimate = i === 0 ? undefined : estimateOf[i];
    const guard = pipeline.length === 1 && pipeline[0] === StageId.Rle;
    // an rle candidate behind a pack payload is always encoded: pack's estimate is exact, rle's
    // from run counts can be three times its size (a label volume's chunks lost a quarter of
    // their ratio to pack where rle+huffman was never encoded)
    const rleAfterPack = bestPipeline[bestPipeline.length - 1] === StageId.Pack && pipeline.includes(StageId.Rle);
    if (
      estimate !== undefined &&
      best >= 0 &&
      !rleAfterPack &&
      (guard ? 2 * bestBytes <= estimate : margin * bestBytes <= against(pipeline, estimate))
    ) {
      if (explain) tried.push(`${pipelineName(pipeline)} skipped (estimate ${Math.round(estimate)} B)`);
      continue;
    }
    const slot = best === 0 ? 1 : 0;
    // room: what would still win (pack against huffman: up to 1 + tolerance times it), never the limit (raw size)
    const room = Math.min(limit - prefix, Math.ceil(bestBytes / against(pipeline, 1)));
    const bytes = encodePipeline(
      ctx,
      arena,
      pipeline,
      inPtr,
      count,
      width,
      payloads[slot] + prefix,
      room,
      undefined,
      exactSizes,
      effort.lanes,
    );
    if (explain) tried.push(`${pipelineName(pipeline)} ${bytes < 0 ? 'not smaller' : bytes + ' B'}`);
    // an estimate off by half or more (pack's from a sample's blocks missed a dem chunk's
    // outliers: 138 KiB estimated, 347 KiB coded) says little of the others: the best one not
    // tried is tried too, once a call (a candidate not smaller than `room` came to at least that)
    const own = estimateOf[i];
    if (own !== undefined && (bytes < 0 ? room : bytes) > ESTIMATE_MISS * own && untried.length > 0) {
      const next = untried.shift() as Estimate;
      untried = [];
      candidates.push(next.pipeline);
      estimateOf.push(next.bytes);
    }
    if (bytes >= 0 && against(pipeline, bytes) < bestBytes) {
      best = slot;
      bestBytes = bytes;
      bestPipeline = pipeline;
    }
  }
  const why = explain ? `${reason}; tried ${tried.join(', ') || 'nothing'}` : '';
  if (best < 0) return { ptr: -1, bytes: 0, pipeline: [], why };
  return { ptr: payloads[best], bytes: prefix + bestBytes, pipeline: bestPipeline, why };
}

/**
 * The chooser's estimates of every candidate pipeline for `count` elements at `inPtr`, best
 * first, from a sample's statistics at `level` (the arena is left as it was).
 */
function chooserEstimates(ctx: CodecContext, arena: Arena, inPtr: number, count: number, width: 1 | 2 | 4, level: number): Estimate[] {
  const mark = arena.mark();
  const tolerance = packTolerance(level);
  const stats = gatherStats(ctx, arena, inPtr, count, width, SAMPLE_BYTES[level]);
  let estimates = estimateCandidates(stats, tolerance);
  // pack candidates for 2- and 4-byte types (1-byte ones decoded no faster packed), sized only
  // where pack could come first: its estimate is never below packFloorBytes (labels whose rle
  // estimates are far below it skip the pack pass)
  if (width > 1 && estimates[0].bytes * (1 + tolerance) > packFloorBytes(count, width)) {
    estimates = estimateCandidates({ ...stats, pack: gatherPackStats(ctx, arena, inPtr, count, width, SAMPLE_BYTES[level]) }, tolerance);
  }
  arena.reset(mark);
  return estimates;
}

/**
 * Encodes a chunk predicted by `plan` (docs/format.md, "Stage 7: predict"; assembly/predict.ts):
 * its values under the plan's map (a decimal map's exponents from a sample of the chunk, the
 * float-order map where a field is not decimal or exceptions pass 1 in 64 elements), the
 * predictor's zigzagged residuals, split into a plane a field, and each plane coded by the
 * chooser on its own (its own pipeline and Huffman tables). Returns why not when the chunk's
 * geometry does not fit the plan or the payload is not smaller than the elements.
 */
function encodePredicted(
  ctx: CodecContext,
  arena: Arena,
  p: EncodeChunkParams,
  plan: PredictPlan,
  elementsHash: number,
): EncodeChunkResult | string {
  const { kernels } = ctx;
  const width = p.elementSize;
  const count = p.count;
  const raw = count * width;
  // the predictor's words: the elements, or an 8-byte element's two u32 halves
  const { words, wordWidth } = predictWords(count, width);
  const fields = plan.fields;
  const cells = words / fields;
  const rowCells = plan.rowCells === 0 ? cells : plan.rowCells;
  const rows = cells / rowCells;
  if (!Number.isInteger(cells) || !Number.isInteger(rows) || rows % plan.planeRows !== 0)
    return `chunk of ${count} elements not whole rows of the plan`;
  const mark = arena.mark();
  const params: PredictParams = { ...plan, rowCells };
  // 1. the values under the map
  let values = p.inPtr;
  let exceptions = 0;
  let excIndex = 0;
  let excValue = 0;
  if (params.map === ValueMap.Decimal) {
    const ef = elementFields(fields, width);
    // (a view needs the elements aligned to their width; an unaligned chunk is copied)
    const Floats = width === 8 ? Float64Array : Float32Array;
    const floats = p.inPtr % width === 0 ? new Floats(ctx.memory.buffer, p.inPtr, count) : new Floats(u8(ctx, p.inPtr, raw).slice().buffer);
    const exps = chooseExponents(floats, count, ef);
    // an exception costs 4 + width bytes where a value costs one or two: past 1 in 64 the float-order map codes better
    const cap = Math.floor(count / 64);
    if (exps !== undefined) {
      values = arena.alloc(raw + SLACK);
      excIndex = arena.alloc(4 * cap + SLACK);
      excValue = arena.alloc(width * cap + SLACK);
      if (width === 8) {
        exceptions = kernels.decimalEncodeF64(p.inPtr, values, count, ef, exponentsAt(ctx, arena, exps), excIndex, excValue, cap);
      } else {
        const { expPtr, factorPtr } = decimalTablesAt(ctx, arena, exps);
        exceptions = kernels.decimalEncodeF32(p.inPtr, values, count, ef, expPtr, factorPtr, excIndex, excValue, cap);
      }
      if (exceptions <= cap) params.exponents = exps;
    }
    if (params.exponents === undefined) {
      params.map = ValueMap.FloatOrder;
      exceptions = 0;
    }
  }
  if (params.map === ValueMap.FloatOrder) {
    values = arena.alloc(raw + SLACK);
    (width === 8 ? kernels.floatOrderEncode64 : kernels.floatOrderEncode)(p.inPtr, values, count);
  }
  // 2. residuals, 3. a plane a field
  const residuals = arena.alloc(raw + SLACK);
  const predict = wordWidth === 1 ? kernels.predictEncode8 : wordWidth === 2 ? kernels.predictEncode16 : kernels.predictEncode32;
  predict(values, residuals, rowCells * fields, params.planeRows, fields, params.predictor, 0, rows);
  let planes = residuals;
  if (fields > 1) {
    planes = arena.alloc(raw + SLACK);
    (wordWidth === 1 ? kernels.splitFields8 : wordWidth === 2 ? kernels.splitFields16 : kernels.splitFields32)(
      residuals,
      planes,
      fields,
      cells,
    );
  }
  // 4. the payload: header, exceptions, then each field's block
  const payload = arena.alloc(payloadRoomBytes(raw));
  let at = writePredictHeader(u8(ctx, payload, predictPrefixBytes(params, 0, width)), params, exceptions);
  kernels.copyBytes(payload + at, excIndex, 4 * exceptions);
  kernels.copyBytes(payload + at + 4 * exceptions, excValue, width * exceptions);
  at += exceptionBytes(width) * exceptions;
  const name = predictName(params);
  const why: string[] = [];
  const planeBytes = cells * wordWidth;
  // (a fixed codec reaches here only for 8-byte elements: its pipeline codes each plane)
  const pipeline = width === 8 ? p.pipeline : undefined;
  for (let k = 0; k < fields && at < raw; k++) {
    if (at + FIELD_BLOCK_HEADER_BYTES + 1 >= raw) {
      at = raw;
      break;
    }
    const fieldMark = arena.mark();
    const plane = planes + k * planeBytes;
    const coded = encodeBest(ctx, arena, plane, cells, wordWidth, pipeline, 0, effortOf(p));
    const head = new DataView(ctx.memory.buffer, payload + at, FIELD_BLOCK_HEADER_BYTES);
    const bytes = coded.ptr < 0 ? planeBytes : coded.bytes;
    for (let i = 0; i < 4; i++) head.setUint8(i, coded.ptr < 0 ? 0 : (coded.pipeline[i] ?? 0));
    head.setUint32(4, bytes, true);
    if (at + FIELD_BLOCK_HEADER_BYTES + bytes < raw)
      kernels.copyBytes(payload + at + FIELD_BLOCK_HEADER_BYTES, coded.ptr < 0 ? plane : coded.ptr, bytes);
    at += FIELD_BLOCK_HEADER_BYTES + bytes;
    if (p.explain === true) why.push(`field ${k}: ${coded.ptr < 0 ? 'stored' : pipelineName(coded.pipeline)} ${bytes} B`);
    arena.reset(fieldMark);
  }
  if (at >= raw) {
    arena.reset(mark);
    return `${name}: not smaller`;
  }
  return {
    entry: {
      elementCount: count,
      encoding: Encoding.Predicted,
      runCount: 0,
      payloadBytes: at,
      payloadChecksum: BigInt(treeHashAt(ctx, arena, payload, at)),
      elementsChecksum: BigInt(elementsHash),
      stages: [],
      streamCount: 0,
      predict: true,
    },
    payloadOffset: payload - p.arenaPtr,
    reason: p.explain === true ? `${name}${exceptions > 0 ? ` (${exceptions} exceptions)` : ''}; ${why.join(', ')}` : '',
  };
}
