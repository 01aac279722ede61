/**
 * The chooser: a pipeline per chunk from statistics of one pass over the elements (byte
 * histograms of each byte plane of the elements and of their deltas, element runs and byte
 * runs of each plane; assembly/codec.ts `codecStats*`). Each candidate's size is estimated from
 * them: Huffman sizes from the histograms' entropies, RLE sizes from the run counts
 * (run values assumed distributed as the elements, run lengths geometric). The encoder then
 * encodes the best few and keeps the smallest (ts/codec/cpu-codec.ts), so an estimate only
 * ranks; it never decides the bytes.
 */
import { DEFAULT_SEGMENT_LOG2, presentSymbols, segmentCount } from './huffman.js';
import { pipelineName, StageId, type Pipeline } from './stages.js';

/** The statistics of one pass, scaled to the whole chunk. */
export interface ChunkStats {
  /** Elements in the chunk. */
  count: number;
  /** Element size in bytes. */
  width: 1 | 2 | 4;
  /** hist[t][k]: byte histogram of plane k of the elements (t = 0) or of their deltas (t = 1). */
  hist: Float64Array[][];
  /** Element runs of the elements (t = 0) and of the deltas (t = 1). */
  runs: [number, number];
  /** planeRuns[t][k]: byte runs of plane k. */
  planeRuns: number[][];
}

/** One candidate and its estimated payload size in bytes. */
export interface Estimate {
  pipeline: Pipeline;
  bytes: number;
}

/**
 * Bits a symbol of `hist` costs on average under Huffman coding, estimated from the order-0
 * entropy (Huffman is within 1 bit of it and never below 1 bit a symbol; 0 for one symbol).
 * The entropy, not the code itself, keeps the estimate cheap: a few candidates x planes each chunk.
 */
function bitsPerSymbol(hist: ArrayLike<number>, total: number): number {
  const { count } = presentSymbols(hist);
  if (count < 2 || total === 0) return 0;
  let bits = 0;
  for (let s = 0; s < 256; s++) {
    const c = hist[s];
    if (c > 0) bits -= c * Math.log2(c / total);
  }
  // Huffman's redundancy is largest for skewed sources: add a little of it back
  return Math.max(1, bits / total + 0.03);
}

/** Bytes of a Huffman stream of `total` symbols at `bits` a symbol (an estimate; see {@link bitsPerSymbol}). */
function huffmanBytes(bits: number, total: number, segments: number): number {
  if (total === 0) return 1;
  if (bits === 0) return 2;
  return Math.min(1 + total, 3 + 128 + 5 * segments + (total * bits) / 8);
}

/** Binary entropy-based bits of a geometric run length of mean `mean` >= 1, at least 1 bit under Huffman. */
function runLengthBits(mean: number): number {
  if (mean <= 1.001) return 0;
  const p = 1 / mean;
  const h = (-(1 - p) * Math.log2(1 - p) - p * Math.log2(p)) / p;
  return Math.max(1, h);
}

/** LEB128 bytes of (length - 1) for runs of mean length `mean`. */
function varintBytes(mean: number): number {
  return mean < 129 ? 1 : Math.ceil(Math.log2(mean) / 7);
}

function sumHist(planes: Float64Array[]): Float64Array {
  const out = new Float64Array(256);
  for (const p of planes) for (let s = 0; s < 256; s++) out[s] += p[s];
  return out;
}

/**
 * Estimates every candidate pipeline's payload size for a chunk with these statistics, smallest
 * first. Candidates: with or without delta, with or without shuffle (2- and 4-byte elements),
 * with or without RLE, with or without Huffman; stored is not listed (the encoder always has it).
 */
export function estimateCandidates(stats: ChunkStats): Estimate[] {
  const { count: n, width: w } = stats;
  const out: Estimate[] = [];
  const segments = segmentCount(n * w, DEFAULT_SEGMENT_LOG2);
  const planeSegments = segmentCount(n, DEFAULT_SEGMENT_LOG2);
  for (const t of [0, 1] as const) {
    const delta: StageId[] = t === 1 ? [StageId.Delta] : [];
    const planes = stats.hist[t];
    // each histogram's cost a symbol, computed once
    const planeBits = planes.map((p) => bitsPerSymbol(p, n));
    const whole = w === 1 ? planes[0] : sumHist(planes);
    const wholeBits = w === 1 ? planeBits[0] : bitsPerSymbol(whole, n * w);
    const R = Math.max(1, stats.runs[t]);
    out.push({ pipeline: [...delta, StageId.Huffman], bytes: 8 + huffmanBytes(wholeBits, n * w, segments) });
    out.push({ pipeline: [...delta, StageId.Rle], bytes: 16 + R * w + R * varintBytes(n / R) });
    out.push({
      pipeline: [...delta, StageId.Rle, StageId.Huffman],
      bytes: 16 + 2 * (3 + 128) + (R * (wholeBits * w + runLengthBits(n / R))) / 8,
    });
    if (w > 1) {
      let shufHuff = 8 * w;
      let shufRleHuff = 16 * w;
      let shufRle = 16 * w;
      for (let k = 0; k < w; k++) {
        shufHuff += huffmanBytes(planeBits[k], n, planeSegments);
        const Rk = Math.max(1, stats.planeRuns[t][k]);
        shufRleHuff += 2 * (3 + 128) + (Rk * (planeBits[k] + runLengthBits(n / Rk))) / 8;
        shufRle += Rk + Rk * varintBytes(n / Rk);
      }
      out.push({ pipeline: [...delta, StageId.Shuffle, StageId.Huffman], bytes: shufHuff });
      out.push({ pipeline: [...delta, StageId.Shuffle, StageId.Rle, StageId.Huffman], bytes: shufRleHuff });
      out.push({ pipeline: [...delta, StageId.Shuffle, StageId.Rle], bytes: shufRle });
    }
  }
  return out.sort((a, b) => a.bytes - b.bytes);
}

/** A readable summary of the best estimates: `delta+huffman ~153 KiB, huffman ~201 KiB, ...`. */
export function describeEstimates(estimates: readonly Estimate[], top = 3): string {
  return estimates
    .slice(0, top)
    .map((e) => `${pipelineName(e.pipeline)} ~${(e.bytes / 1024).toFixed(1)} KiB`)
    .join(', ');
}
