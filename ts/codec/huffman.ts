/**
 * Canonical Huffman over bytes, the host side: length-limited code lengths from a histogram,
 * size estimates for the chooser, and the stream header of docs/format.md ("Huffman streams").
 * The bit-level work (codes, tables, encode, decode) is in assembly/huffman.ts and
 * shaders/codec-*.wgsl.
 *
 * Sources: Huffman's algorithm on sorted leaves with two queues (van Leeuwen 1976); the
 * length limit as zstd's Huff0 applies it (lengthen the deepest codes, then complete the code
 * greedily); the parallel segment layout after Balevic 2009 (PAVLE) and Haugen 2009.
 */

/** Longest code in bits: a 2^11-entry decode table (4 KiB) stays in L1. */
export const MAX_CODE_BITS = 11;
/**
 * Default segment size, log2 symbols: 1 Ki symbols a segment, 4 bytes of offset table each (0.4 %
 * of the stream's symbols in bytes). Small segments are what a GPU decodes in parallel (one
 * invocation a segment: on an H200, 2^14-symbol segments decoded at 9.6 GB/s); the CPU decodes
 * four at a time and is as fast with 2^10 as with 2^14 (measured: 1.15 vs 0.99 GB/s).
 */
export const DEFAULT_SEGMENT_LOG2 = 10;
export const MIN_SEGMENT_LOG2 = 10;
export const MAX_SEGMENT_LOG2 = 20;

/** Stream modes (first byte of a Huffman stream). */
export const enum HuffmanMode {
  Raw = 0,
  OneSymbol = 1,
  Huffman = 2,
  /** Version 3: segments of 32 interleaved lanes (docs/format.md, "Mode 3: interleaved lanes"). */
  Lanes = 3,
}

/** Lanes of a mode-3 segment: quad q of a segment (symbols 4q .. 4q + 3) belongs to lane q mod 32. */
export const LANES = 32;
/** Bits of a mode-3 unit: each lane's bits are read 16 at a time. */
export const LANE_UNIT_BITS = 16;
/**
 * Segment size log2 of the mode-3 streams parle writes: 4096 symbols, 128 a lane. A lane's last
 * unit is half padding on average, 32 lanes x 8 bits = 32 bytes a segment: about 0.5 % of a
 * stream over mode 2 at g = 10, against 4 % at g = 10 in mode 3.
 */
export const LANES_SEGMENT_LOG2 = 12;

/** Working arrays of codeLengths (synchronous, so one set serves every call). */
const scratch = {
  keys: new Uint32Array(256),
  big: new Float64Array(256),
  symbols: new Uint8Array(256),
  weight: new Float64Array(512),
  parent: new Int32Array(512),
  depth: new Int32Array(512),
  len: new Uint8Array(256),
};

/**
 * Optimal code lengths for the byte histogram `hist` (256 counts), limited to `maxBits`, as a
 * complete code (Kraft sum exactly 1). Needs at least two present symbols; absent symbols get 0.
 * in hist {a: 5, b: 2, c: 1, d: 1} -> lengths {a: 1, b: 2, c: 3, d: 3}.
 */
export function codeLengths(hist: ArrayLike<number>, maxBits = MAX_CODE_BITS): Uint8Array {
  const lengths = new Uint8Array(256);
  // present symbols by weight, then symbol, from sorted keys weight x 256 + symbol: one native
  // sort (a comparator function cost more than the rest together) of the keys of weights below
  // 2^22 in a Uint32Array (a call took 7.4 us against 11.1 with every key in a Float64Array, on
  // this machine with a sparse volume's histograms); the few heavier keys (at most 16 in a
  // 64 MiB chunk) by insertion after them, in doubles (exact for weights below 2^44)
  const { keys, big, symbols, weight, parent, depth, len } = scratch;
  let small = 0;
  let large = 0;
  for (let s = 0; s < 256; s++) {
    const count = hist[s];
    if (!(count > 0)) continue; // absent, or past the end of a shorter array
    if (count < 2 ** 22) keys[small++] = count * 256 + s;
    else {
      const key = count * 256 + s;
      let i = large++;
      for (; i > 0 && big[i - 1] > key; i--) big[i] = big[i - 1];
      big[i] = key;
    }
  }
  const m = small + large;
  if (m < 2) throw new Error('codeLengths needs two symbols');
  const sorted = keys.subarray(0, small).sort();
  for (let i = 0; i < small; i++) symbols[i] = sorted[i] & 255;
  for (let i = 0; i < large; i++) symbols[small + i] = big[i] % 256;
  // Two-queue Huffman: leaves sorted by weight, internal nodes created in weight order; each
  // step takes the lighter of the next leaf and the next node (a leaf on ties), twice.
  for (let i = 0; i < m; i++) weight[i] = hist[symbols[i]];
  let leaf = 0;
  let node = m;
  let next = m;
  while (next < 2 * m - 1) {
    const a = leaf < m && (node >= next || weight[leaf] <= weight[node]) ? leaf++ : node++;
    const b = leaf < m && (node >= next || weight[leaf] <= weight[node]) ? leaf++ : node++;
    weight[next] = weight[a] + weight[b];
    parent[a] = next;
    parent[b] = next;
    next++;
  }
  depth[2 * m - 2] = 0; // the root
  for (let i = 2 * m - 3; i >= 0; i--) depth[i] = depth[parent[i]] + 1;
  // len[i]: the code length of symbols[i]
  let kraft = 0;
  const full = 1 << maxBits;
  for (let i = 0; i < m; i++) {
    len[i] = Math.min(depth[i], maxBits);
    kraft += full >> len[i];
  }
  if (kraft > full) {
    // over-full after clamping: lengthen the rarest codes that can still grow
    while (kraft > full) {
      for (let i = 0; i < m && kraft > full; i++) {
        if (len[i] < maxBits) {
          len[i]++;
          kraft -= full >> len[i];
        }
      }
    }
  }
  // under-full: shorten the longest codes (their share divides the deficit), most frequent first
  while (kraft < full) {
    let best = -1;
    for (let i = m - 1; i >= 0; i--) if (len[i] > 1 && (best < 0 || len[i] > len[best])) best = i;
    if (best < 0) break;
    const gain = full >> len[best];
    if (kraft + gain > full) break; // cannot happen for power-of-two shares; guards the loop
    len[best]--;
    kraft += gain;
  }
  for (let i = 0; i < m; i++) lengths[symbols[i]] = len[i];
  return lengths;
}

/** Bits of the symbols of `hist` coded with `lengths`. */
export function codedBits(hist: ArrayLike<number>, lengths: Uint8Array): number {
  let bits = 0;
  for (let s = 0; s < 256; s++) bits += hist[s] * lengths[s];
  return bits;
}

/** Symbols present in `hist`, up to 2 (enough to pick a mode). */
export function presentSymbols(hist: ArrayLike<number>): { count: number; first: number } {
  let count = 0;
  let first = -1;
  for (let s = 0; s < 256 && count < 2; s++) {
    if (hist[s] > 0) {
      if (first < 0) first = s;
      count++;
    }
  }
  return { count, first };
}

/** Segments of a stream of `n` symbols. */
export function segmentCount(n: number, segmentLog2: number): number {
  return Math.ceil(n / 2 ** segmentLog2);
}

/** Bytes of a mode-2 or mode-3 header before the offset table: mode, g, m, the nibble table. */
export function headerBytes(lengths: Uint8Array): number {
  let last = 255;
  while (last > 0 && lengths[last] === 0) last--;
  return 3 + ((last + 2) >> 1);
}

/** Writes a mode-2 (or `mode` 3) header (mode, g, last symbol, nibbles) into `out` at `at`; returns its length. */
export function writeHeader(
  out: Uint8Array,
  at: number,
  lengths: Uint8Array,
  segmentLog2: number,
  mode: HuffmanMode.Huffman | HuffmanMode.Lanes = HuffmanMode.Huffman,
): number {
  let last = 255;
  while (last > 0 && lengths[last] === 0) last--;
  out[at] = mode;
  out[at + 1] = segmentLog2;
  out[at + 2] = last;
  for (let s = 0; s <= last; s += 2) out[at + 3 + (s >> 1)] = lengths[s] | ((s + 1 <= last ? lengths[s + 1] : 0) << 4);
  return 3 + ((last + 2) >> 1);
}

/** Where the parts of a mode-2 stream lie (its header's fixed fields, read in O(1)). */
export interface HuffmanLayout {
  segmentLog2: number;
  /** The last symbol with a code length: the nibble table holds symbols 0..last. */
  last: number;
  segments: number;
  /** Offset of the segment end table from the stream's start. */
  offsetsAt: number;
  /** Offset of the bitstreams from the stream's start. */
  bitsAt: number;
}

/** A parsed mode-2 header. */
export interface HuffmanHeader extends HuffmanLayout {
  lengths: Uint8Array;
}

/**
 * The layout of the mode-2 stream `stream` (`encodedBytes` bytes, of which `stream` holds at
 * least the first 3 when there are that many; decoding to `decodedBytes`) with the checks that
 * need no more than the fixed fields: g in range, the header and the segment end table inside
 * the stream. Returns a message instead of throwing so that callers add the chunk and stream.
 */
export function readLayout(stream: Uint8Array, decodedBytes: number, encodedBytes = stream.length): HuffmanLayout | string {
  if (encodedBytes < 3 || stream.length < 3) return 'Huffman header truncated';
  const segmentLog2 = stream[1];
  if (segmentLog2 < MIN_SEGMENT_LOG2 || segmentLog2 > MAX_SEGMENT_LOG2) return `segment size 2^${segmentLog2} out of range`;
  const last = stream[2];
  const offsetsAt = 3 + ((last + 2) >> 1);
  const segments = segmentCount(decodedBytes, segmentLog2);
  const bitsAt = offsetsAt + 4 * segments;
  if (bitsAt > encodedBytes) return 'Huffman header truncated';
  return { segmentLog2, last, segments, offsetsAt, bitsAt };
}

/**
 * Parses the mode-2 header of a Huffman stream of `stream.length` bytes decoding to
 * `decodedBytes` ({@link readLayout}, then the code lengths, each at most 11) and checks the
 * segment end table (non-decreasing, ending at the stream's end). Returns a message instead of
 * throwing so that callers add the chunk and stream.
 */
export function readHeader(stream: Uint8Array, decodedBytes: number): HuffmanHeader | string {
  const layout = readLayout(stream, decodedBytes);
  if (typeof layout === 'string') return layout;
  const { last, segments, offsetsAt, bitsAt } = layout;
  const lengths = new Uint8Array(256);
  for (let s = 0; s <= last; s++) {
    const len = (stream[3 + (s >> 1)] >> ((s & 1) * 4)) & 15;
    if (len > MAX_CODE_BITS) return `code length ${len} over ${MAX_CODE_BITS}`;
    lengths[s] = len;
  }
  // little-endian u32s read byte by byte: a DataView a stream cost more than the loop
  let prev = 0;
  for (let k = 0, at = offsetsAt; k < segments; k++, at += 4) {
    const end = (stream[at] | (stream[at + 1] << 8) | (stream[at + 2] << 16) | (stream[at + 3] << 24)) >>> 0;
    if (end < prev) return 'segment offsets decrease';
    prev = end;
  }
  if (prev !== stream.length - bitsAt) return 'segment offsets do not end at the stream end';
  return { ...layout, lengths };
}

/**
 * The encoder's table of a canonical code (docs/format.md, "Huffman streams"): for each of the
 * 256 symbols, its code bit-reversed (first bit lowest, as the stream stores it) in bits 0..15
 * and its length in bits 16..31; 0 for a symbol of length 0. Codes are assigned in (length,
 * symbol) order, the first code of each length the previous length's last code + 1, shifted
 * left: the same words as assembly/huffman.ts huffmanBuildCodes writes. Does not check the
 * lengths (callers check completeness and the 11-bit limit).
 * Example: lengths {0: 1, 1: 2, 2: 2} -> codes 0, 10, 11 -> entries 0 | 1 << 16,
 * 0b01 | 2 << 16, 0b11 | 2 << 16.
 */
export function canonicalCodeTable(lengths: ArrayLike<number>): Uint32Array {
  const table = new Uint32Array(256);
  // the first code of each length: the codes of the lengths below it, in order, then a shift
  const first = new Uint32Array(16);
  for (let s = 0; s < 256; s++) if (lengths[s] >= 1 && lengths[s] <= 15) first[lengths[s]]++;
  let code = 0;
  for (let len = 1; len <= 15; len++) {
    const count = first[len];
    first[len] = code;
    code = (code + count) << 1;
  }
  for (let s = 0; s < 256; s++) {
    const len = lengths[s];
    if (len < 1 || len > 15) continue;
    const c = first[len]++;
    // c's low len bits reversed: its 15 bits reversed by the table, shifted down
    table[s] = (REVERSED_15[c & 0x7fff] >> (15 - len)) | (len << 16);
  }
  return table;
}

/**
 * Each 15-bit value with its bits reversed (bit 0 to bit 14): a GPU compress of 64 MiB in 256 KiB
 * chunks builds a code table for each of about 1000 streams, where reversing bit by bit had cost
 * 2-4 ms of the main thread on the H200's host.
 */
const REVERSED_15 = (() => {
  const t = new Uint16Array(1 << 15);
  for (let v = 1; v < t.length; v++) t[v] = (t[v >> 1] >> 1) | ((v & 1) << 14);
  return t;
})();
