/**
 * The chooser: a pipeline per chunk from statistics of one pass over the elements (byte
 * histograms of each byte plane of the elements and of their deltas, element runs and byte
 * runs of each plane; assembly/statistics.ts `codecStats*`). Each candidate's size is estimated from
 * them: Huffman sizes from the histograms' entropies, RLE sizes from the run counts
 * (run values assumed distributed as the elements, run lengths geometric), pack sizes exactly
 * from the sample's blocks (assembly/pack.ts `packStats`). A pack candidate is preferred to a
 * smaller Huffman one when it comes within {@link packTolerance} of it: it decodes faster. The encoder then
 * encodes the best few and keeps the smallest (ts/codec/cpu/encode.ts), so an estimate only
 * ranks; it never decides the bytes.
 */
import { DEFAULT_SEGMENT_LOG2, segmentCount } from './huffman.js';
import { pipelineName, StageId, type Pipeline } from '../format/stages.js';

/** The statistics of one pass over `sampled` elements of a chunk of `count` (all of them, or a sample). */
export interface ChunkStats {
  /** Elements in the chunk. */
  count: number;
  /** Elements the statistics were gathered over (at most count). */
  sampled: number;
  /** Element size in bytes. */
  width: 1 | 2 | 4;
  /** hist[t][k]: byte histogram (256 counts) of plane k of the elements (t = 0) or of their deltas (t = 1). */
  hist: ArrayLike<number>[][];
  /** Element runs of the elements (t = 0) and of the deltas (t = 1). */
  runs: [number, number];
  /** planeRuns[t][k]: byte runs of plane k. */
  planeRuns: number[][];
  /**
   * Exact pack bytes of the sample (assembly/pack.ts `packStats`): [elements, deltas]; absent: no
   * pack candidates (1-byte elements: Huffman decodes bytes about as fast, bench/corpus's photos
   * and MRI decoded no faster packed, and the pack encoder is slowest there).
   */
  pack?: ArrayLike<number>;
}

/**
 * How much larger than the best other candidate a pack candidate may be and still be taken, by
 * level: 10 % at levels 1-4 (they favour speed), 3 % above. The pack kernel decodes 2-7 GB/s a
 * worker on the corpus; a whole f32 decode (hashes, delta) ran 1.3-1.7x Huffman's (bench/corpus
 * data: hst_acs_sci.f32 at ~830 MB/s against ~590), so a few per cent of size buys that.
 */
export function packTolerance(level: number): number {
  return level <= 4 ? 0.1 : 0.03;
}

/**
 * The size `bytes` of `pipeline` competes with against a candidate of pipeline `other`: only
 * pack against huffman is weighed, pack's size divided by 1 + tolerance (huffman's multiplied);
 * every other pair compares sizes (so no chunk is larger than rle makes it, where rle is tried).
 */
export function competingBytes(pipeline: Pipeline, bytes: number, other: Pipeline, tolerance: number): number {
  const mine = pipeline[pipeline.length - 1];
  const theirs = other[other.length - 1];
  if (mine === StageId.Pack && theirs === StageId.Huffman) return bytes / (1 + tolerance);
  if (mine === StageId.Huffman && theirs === StageId.Pack) return bytes * (1 + tolerance);
  return bytes;
}

/** Working arrays (the chooser runs once a chunk, synchronously: one set serves every call). */
const scratch = { whole: new Float64Array(256) };

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
function bitsPerSymbol(hist: ArrayLike<number>, total: number, sampled = false): number {
  if (total === 0) return 0;
  // sum of -c log2(c / total) = total log2(total) - sum of c log2(c): one table lookup a symbol
  let present = 0;
  let sum = 0;
  for (let s = 0; s < 256; s++) {
    const c = hist[s];
    if (c > 0) {
      present++;
      sum += nLog2n(c);
    }
  }
  // one symbol in a sample: the rest of the chunk may hold rare others, and then every symbol
  // costs a bit (a volume's chunk of 64 Ki voxels with 28 nonzero ones: a sample of zeros
  // estimated 2 bytes, Huffman took 17 KB where rle+huffman took 100 bytes)
  if (present < 2) return sampled ? 1 : 0;
  // Huffman's redundancy is largest for skewed sources: add a little of it back
  return Math.max(1, (nLog2n(total) - sum) / total + 0.03);
}

/** n log2 n for n below this comes from a table (the sample's counts are below it). */
const NLOG2N_TABLE = 1 << 17;
let nLog2nTable: Float64Array | undefined;

/**
 * n log2 n (0 for 0), from a table for whole n < 2^17 (a sample's counts: the chooser evaluates
 * 10-20 histograms a chunk, and Math.log2 a symbol was a fifth of a 128 KiB chunk's time), else
 * computed; fractional n is rounded (the estimate's own error is far larger).
 */
function nLog2n(n: number): number {
  const k = Math.round(n);
  if (k < NLOG2N_TABLE) {
    if (nLog2nTable === undefined) {
      nLog2nTable = new Float64Array(NLOG2N_TABLE);
      for (let i = 2; i < NLOG2N_TABLE; i++) nLog2nTable[i] = i * Math.log2(i);
    }
    return nLog2nTable[k];
  }
  return n * Math.log2(n);
}

/**
 * Bits a run value costs under Huffman coding: the symbols of `hist` (`total` of them, in `runs`
 * runs) less the repeats the RLE stage removes. Which symbols repeat is not in a histogram;
 * under independent symbols a repeat of s has probability p(s)^2, so s loses
 * (total - runs) p(s)^2 / sum p^2 of its count. Without this the run values were costed as the
 * elements and rle+huffman estimated 25 % under its size on a photograph's deltas, where most
 * repeats are of the one common delta (bench/corpus.mjs, camera.u8).
 */
function runValueBits(hist: ArrayLike<number>, total: number, runs: number): number {
  const removed = total - runs;
  if (removed <= 0 || runs <= 0) return bitsPerSymbol(hist, total);
  let sumSq = 0;
  for (let s = 0; s < 256; s++) sumSq += hist[s] * hist[s];
  // the adjusted counts' entropy in the same pass (as bitsPerSymbol of them; an array of them
  // and a second pass cost 6 us a histogram, a tenth of an f32 chunk's chooser)
  const lose = removed / sumSq;
  let left = 0;
  let sum = 0;
  let present = 0;
  for (let s = 0; s < 256; s++) {
    const c = hist[s];
    if (c > 0) {
      const adjusted = Math.max(c - lose * c * c, 1);
      left += adjusted;
      sum += nLog2n(adjusted);
      present++;
    }
  }
  if (present < 2) return 0;
  return Math.max(1, (nLog2n(left) - sum) / left + 0.03);
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

/** The sum of byte histograms (into scratch: valid until the next call). */
function sumHist(planes: ArrayLike<number>[]): Float64Array {
  const out = scratch.whole.fill(0);
  for (const p of planes) for (let s = 0; s < 256; s++) out[s] += p[s];
  return out;
}

/**
 * Estimates every candidate pipeline's payload size for a chunk with these statistics, smallest
 * first, except that the best pack candidate goes first where only huffman candidates within
 * 1 + `tolerance` of it are ahead ({@link competingBytes}).
 * Candidates: with or without delta, with or without shuffle (2- and 4-byte elements), with or
 * without RLE, with or without Huffman; with pack statistics, also pack and delta+pack (not
 * shuffle+pack or rle+pack: sizing planes costs w times as much a sample, and run streams are not
 * in it; both stay fixed codecs); stored is not listed (the encoder always has it).
 */
export function estimateCandidates(stats: ChunkStats, tolerance = 0): Estimate[] {
  const { count: n, width: w, sampled } = stats;
  // histograms and runs are of the sample: entropies are ratios, sizes scale to the chunk
  const scale = n / Math.max(1, sampled);
  const out: Estimate[] = [];
  const segments = segmentCount(n * w, DEFAULT_SEGMENT_LOG2);
  const planeSegments = segmentCount(n, DEFAULT_SEGMENT_LOG2);
  for (const t of [0, 1] as const) {
    const delta: StageId[] = t === 1 ? [StageId.Delta] : [];
    const planes = stats.hist[t];
    // each histogram's cost a symbol, computed once
    const partial = sampled < n;
    const planeBits = planes.map((p) => bitsPerSymbol(p, sampled, partial));
    const whole = w === 1 ? planes[0] : sumHist(planes);
    const wholeBits = w === 1 ? planeBits[0] : bitsPerSymbol(whole, sampled * w, partial);
    const sampleRuns = Math.max(1, stats.runs[t]);
    const R = Math.max(1, sampleRuns * scale);
    out.push({ pipeline: [...delta, StageId.Huffman], bytes: 8 + huffmanBytes(wholeBits, n * w, segments) });
    out.push({ pipeline: [...delta, StageId.Rle], bytes: 16 + R * w + R * varintBytes(n / R) });
    // bits a run value costs: its w bytes, coded with the elements' bytes less the repeats'
    const valueBits = runValueBits(whole, sampled * w, sampleRuns * w);
    out.push({
      pipeline: [...delta, StageId.Rle, StageId.Huffman],
      bytes: 16 + 2 * (3 + 128) + (R * (valueBits * w + runLengthBits(n / R))) / 8,
    });
    if (w > 1) {
      let shufHuff = 8 * w;
      let shufRleHuff = 16 * w;
      let shufRle = 16 * w;
      for (let k = 0; k < w; k++) {
        shufHuff += huffmanBytes(planeBits[k], n, planeSegments);
        const sampleRunsK = Math.max(1, stats.planeRuns[t][k]);
        const Rk = Math.max(1, sampleRunsK * scale);
        shufRleHuff += 2 * (3 + 128) + (Rk * (runValueBits(planes[k], sampled, sampleRunsK) + runLengthBits(n / Rk))) / 8;
        shufRle += Rk + Rk * varintBytes(n / Rk);
      }
      out.push({ pipeline: [...delta, StageId.Shuffle, StageId.Huffman], bytes: shufHuff });
      out.push({ pipeline: [...delta, StageId.Shuffle, StageId.Rle, StageId.Huffman], bytes: shufRleHuff });
      out.push({ pipeline: [...delta, StageId.Shuffle, StageId.Rle], bytes: shufRle });
    }
    if (stats.pack !== undefined) {
      // exact sizes of the sample's blocks, scaled to the chunk
      out.push({ pipeline: [...delta, StageId.Pack], bytes: 8 + stats.pack[t] * scale });
    }
  }
  out.sort((a, b) => a.bytes - b.bytes);
  // the best pack candidate goes first when only huffman candidates without rle are ahead of it,
  // each less than 1 + tolerance times smaller (rle's estimates from run counts can be far off:
  // on a label volume rle+huffman came to a third of its estimate, and pack put first cost a
  // quarter of the ratio)
  const p = out.findIndex((e) => e.pipeline[e.pipeline.length - 1] === StageId.Pack);
  const plainHuffman = (e: Estimate) => e.pipeline[e.pipeline.length - 1] === StageId.Huffman && !e.pipeline.includes(StageId.Rle);
  if (
    p > 0 &&
    out.slice(0, p).every((e) => plainHuffman(e) && competingBytes(out[p].pipeline, out[p].bytes, e.pipeline, tolerance) < e.bytes)
  ) {
    out.unshift(...out.splice(p, 1));
  }
  return out;
}

/** A readable summary of the best estimates: `delta+huffman ~153 KiB, huffman ~201 KiB, ...`. */
export function describeEstimates(estimates: readonly Estimate[], top = 3): string {
  return estimates
    .slice(0, top)
    .map((e) => `${pipelineName(e.pipeline)} ~${(e.bytes / 1024).toFixed(1)} KiB`)
    .join(', ');
}
