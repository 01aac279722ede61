/**
 * The plain reference of docs/format.md, "Version 2: the codec pipeline": XXH32 and the tree
 * hash, the stages (delta, shuffle, rle, huffman, pack), Huffman streams (modes 0, 1, 2, 3), pack streams (decode only) and a
 * chunk's payload (stream directory + streams). Tests use it as an oracle to check the
 * WebAssembly and WGSL kernels and the TypeScript codec.
 *
 * Written to be read, not to be fast: plain loops, one byte or one bit at a time, no tables
 * where a Map or a search is clearer, no wasm. Every decoder throws `Error('corrupt: ...')` on
 * input the spec rejects.
 *
 * Choices where the spec leaves room (the codec must agree with these for byte-exact tests):
 * - Stream order with rle: values_0, lengths_0, values_1, lengths_1, ... (one pair per plane).
 * - Huffman code lengths: package-merge (optimal under the 11-bit limit). Leaves are sorted by
 *   (count, symbol); at equal weight a leaf sorts before a package. Optimal lengths are not
 *   unique on ties, so another encoder may choose other lengths of the same total size.
 * - Huffman encoder: mode 0 only for an empty stream, mode 1 for one distinct symbol, else
 *   mode 2 even when it is larger than raw.
 * - Huffman decoder: it rejects exactly the listed violations, plus a stream whose length
 *   disagrees with its mode (mode 0: 1 + D bytes, mode 1: 2 bytes, mode 2: shorter than its
 *   header). It does not check the unused high nibble of the lengths table, the padding bits
 *   after a segment's last code, or whole unused bytes at a segment's end, and it accepts a
 *   last symbol m whose length is 0.
 * - LEB128: non-minimal encodings (0x80 0x00) are accepted; values over u32 are rejected.
 */

/** Stage ids, as stored in a chunk table entry (bytes 4..7). */
export const STAGE = { delta: 1, shuffle: 2, rle: 3, huffman: 4, pack: 6 } as const;

function corrupt(what: string): never {
  throw new Error(`corrupt: ${what}`);
}

// ---------------------------------------------------------------------------------------------
// XXH32 and the tree hash
// ---------------------------------------------------------------------------------------------

const PRIME32_1 = 0x9e3779b1;
const PRIME32_2 = 0x85ebca77;
const PRIME32_3 = 0xc2b2ae3d;
const PRIME32_4 = 0x27d4eb2f;
const PRIME32_5 = 0x165667b1;

function rotl32(x: number, r: number): number {
  return ((x << r) | (x >>> (32 - r))) >>> 0;
}

/** The little-endian u32 at `at`. */
export function readU32(bytes: Uint8Array, at: number): number {
  return (bytes[at] | (bytes[at + 1] << 8) | (bytes[at + 2] << 16) | (bytes[at + 3] << 24)) >>> 0;
}

/** Writes `value` as a little-endian u32 at `at`. */
export function writeU32(bytes: Uint8Array, at: number, value: number): void {
  bytes[at] = value & 0xff;
  bytes[at + 1] = (value >>> 8) & 0xff;
  bytes[at + 2] = (value >>> 16) & 0xff;
  bytes[at + 3] = (value >>> 24) & 0xff;
}

/** One XXH32 round: acc = rotl(acc + lane * PRIME2, 13) * PRIME1. */
function xxh32Round(acc: number, lane: number): number {
  acc = (acc + Math.imul(lane, PRIME32_2)) >>> 0;
  return Math.imul(rotl32(acc, 13), PRIME32_1) >>> 0;
}

/** XXH32 of `bytes` (Yann Collet's xxHash, 32-bit variant), as a u32. XXH32([]) = 0x02CC5D05. */
export function xxh32(bytes: Uint8Array, seed = 0): number {
  seed >>>= 0;
  const n = bytes.length;
  let at = 0;
  let acc: number;
  if (n >= 16) {
    let v1 = (seed + PRIME32_1 + PRIME32_2) >>> 0;
    let v2 = (seed + PRIME32_2) >>> 0;
    let v3 = seed;
    let v4 = (seed - PRIME32_1) >>> 0;
    while (at + 16 <= n) {
      v1 = xxh32Round(v1, readU32(bytes, at));
      v2 = xxh32Round(v2, readU32(bytes, at + 4));
      v3 = xxh32Round(v3, readU32(bytes, at + 8));
      v4 = xxh32Round(v4, readU32(bytes, at + 12));
      at += 16;
    }
    acc = (rotl32(v1, 1) + rotl32(v2, 7) + rotl32(v3, 12) + rotl32(v4, 18)) >>> 0;
  } else {
    acc = (seed + PRIME32_5) >>> 0;
  }
  acc = (acc + n) >>> 0;
  while (at + 4 <= n) {
    acc = (acc + Math.imul(readU32(bytes, at), PRIME32_3)) >>> 0;
    acc = Math.imul(rotl32(acc, 17), PRIME32_4) >>> 0;
    at += 4;
  }
  while (at < n) {
    acc = (acc + Math.imul(bytes[at], PRIME32_5)) >>> 0;
    acc = Math.imul(rotl32(acc, 11), PRIME32_1) >>> 0;
    at += 1;
  }
  acc ^= acc >>> 15;
  acc = Math.imul(acc, PRIME32_2) >>> 0;
  acc ^= acc >>> 13;
  acc = Math.imul(acc, PRIME32_3) >>> 0;
  acc ^= acc >>> 16;
  return acc >>> 0;
}

/** Leaf size of the tree hash. */
export const TREE_HASH_BLOCK = 4096;

/**
 * The spec's tree hash: while the level is longer than 4096 bytes, replace it by the XXH32 (seed
 * 0) of each 4096-byte block (the last one shorter) as u32 little-endian; then XXH32 of the level.
 * 4096 bytes -> XXH32(bytes); 4097 bytes -> XXH32(le32(XXH32(first 4096)) ++ le32(XXH32(last 1))).
 */
export function treeHash(bytes: Uint8Array): number {
  let level = bytes;
  while (level.length > TREE_HASH_BLOCK) {
    const blocks = Math.ceil(level.length / TREE_HASH_BLOCK);
    const next = new Uint8Array(blocks * 4);
    for (let b = 0; b < blocks; b++) {
      const block = level.subarray(b * TREE_HASH_BLOCK, Math.min(level.length, (b + 1) * TREE_HASH_BLOCK));
      writeU32(next, b * 4, xxh32(block, 0));
    }
    level = next;
  }
  return xxh32(level, 0);
}

// ---------------------------------------------------------------------------------------------
// Elements as little-endian bytes
// ---------------------------------------------------------------------------------------------

function readElement(bytes: Uint8Array, index: number, width: number): number {
  let value = 0;
  for (let k = width - 1; k >= 0; k--) value = value * 256 + bytes[index * width + k];
  return value;
}

function writeElement(bytes: Uint8Array, index: number, width: number, value: number): void {
  for (let k = 0; k < width; k++) {
    bytes[index * width + k] = value % 256;
    value = Math.floor(value / 256);
  }
}

function checkWholeElements(bytes: Uint8Array, width: number): number {
  if (bytes.length % width !== 0) throw new Error(`${bytes.length} bytes is not a whole number of ${width}-byte elements`);
  return bytes.length / width;
}

// ---------------------------------------------------------------------------------------------
// Stage 1: delta
// ---------------------------------------------------------------------------------------------

/** d[0] = x[0], d[i] = x[i] - x[i-1] mod 2^(8 width). Width 1: [5, 7, 6] -> [5, 2, 255]. */
export function deltaEncode(bytes: Uint8Array, width: 1 | 2 | 4): Uint8Array {
  const count = checkWholeElements(bytes, width);
  const modulus = 2 ** (8 * width);
  const out = new Uint8Array(bytes.length);
  let previous = 0;
  for (let i = 0; i < count; i++) {
    const x = readElement(bytes, i, width);
    writeElement(out, i, width, (x - previous + modulus) % modulus);
    previous = x;
  }
  return out;
}

/** The inverse of {@link deltaEncode}: x[i] = x[i-1] + d[i] mod 2^(8 width). */
export function deltaDecode(bytes: Uint8Array, width: 1 | 2 | 4): Uint8Array {
  const count = checkWholeElements(bytes, width);
  const modulus = 2 ** (8 * width);
  const out = new Uint8Array(bytes.length);
  let previous = 0;
  for (let i = 0; i < count; i++) {
    const x = (previous + readElement(bytes, i, width)) % modulus;
    writeElement(out, i, width, x);
    previous = x;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Stage 2: shuffle
// ---------------------------------------------------------------------------------------------

/** Byte planes: plane k holds byte k of every element. Width 2: [01 02 03 04] -> [01 03], [02 04]. */
export function shuffle(bytes: Uint8Array, width: 2 | 4): Uint8Array[] {
  const count = checkWholeElements(bytes, width);
  const planes: Uint8Array[] = [];
  for (let k = 0; k < width; k++) {
    const plane = new Uint8Array(count);
    for (let i = 0; i < count; i++) plane[i] = bytes[i * width + k];
    planes.push(plane);
  }
  return planes;
}

/** The inverse of {@link shuffle}; the planes must have equal lengths. */
export function unshuffle(planes: Uint8Array[], width: 2 | 4): Uint8Array {
  if (planes.length !== width) throw new Error(`expected ${width} planes, got ${planes.length}`);
  const count = planes[0].length;
  for (const plane of planes) if (plane.length !== count) throw new Error('planes of different lengths');
  const out = new Uint8Array(count * width);
  for (let i = 0; i < count; i++) for (let k = 0; k < width; k++) out[i * width + k] = planes[k][i];
  return out;
}

// ---------------------------------------------------------------------------------------------
// Stage 3: rle
// ---------------------------------------------------------------------------------------------

function elementsEqual(bytes: Uint8Array, i: number, j: number, width: number): boolean {
  for (let k = 0; k < width; k++) if (bytes[i * width + k] !== bytes[j * width + k]) return false;
  return true;
}

function writeLeb128(out: number[], value: number): void {
  while (value >= 128) {
    out.push((value % 128) | 128);
    value = Math.floor(value / 128);
  }
  out.push(value);
}

/**
 * Maximal runs of equal elements: values (one raw element per run) and lengths ((length - 1) as
 * unsigned LEB128). Width 1: [0,2,2,9,5,5,5,8] -> values [0,2,9,5,8], lengths [0,1,0,2,0].
 */
export function rleStreams(bytes: Uint8Array, width: 1 | 2 | 4): { values: Uint8Array; lengths: Uint8Array } {
  const count = checkWholeElements(bytes, width);
  const values: number[] = [];
  const lengths: number[] = [];
  let start = 0;
  for (let i = 1; i <= count; i++) {
    if (i === count || !elementsEqual(bytes, i, start, width)) {
      for (let k = 0; k < width; k++) values.push(bytes[start * width + k]);
      writeLeb128(lengths, i - start - 1);
      start = i;
    }
  }
  return { values: Uint8Array.from(values), lengths: Uint8Array.from(lengths) };
}

/**
 * The inverse of {@link rleStreams}: `count` elements. Throws `corrupt` when the lengths are not
 * valid LEB128 (unterminated, or a value over u32), are not exactly R = values / width of them,
 * or do not sum to `count`.
 */
export function rleExpand(values: Uint8Array, lengths: Uint8Array, width: 1 | 2 | 4, count: number): Uint8Array {
  if (values.length % width !== 0) corrupt(`rle values of ${values.length} bytes are not whole ${width}-byte elements`);
  const runs = values.length / width;
  const runLengths: number[] = [];
  let at = 0;
  while (at < lengths.length) {
    let value = 0;
    let scale = 1;
    for (;;) {
      if (at >= lengths.length) corrupt('rle length: LEB128 runs past the end of the lengths stream');
      const byte = lengths[at++];
      value += (byte & 127) * scale;
      scale *= 128;
      if (value > 0xffffffff) corrupt('rle length: LEB128 value over u32');
      if ((byte & 128) === 0) break;
    }
    runLengths.push(value + 1);
  }
  if (runLengths.length !== runs) corrupt(`rle: ${runLengths.length} lengths for ${runs} values`);
  let total = 0;
  for (const length of runLengths) total += length;
  if (total !== count) corrupt(`rle: lengths sum to ${total}, expected ${count}`);
  const out = new Uint8Array(count * width);
  let i = 0;
  for (let r = 0; r < runs; r++) {
    for (let n = 0; n < runLengths[r]; n++, i++) {
      for (let k = 0; k < width; k++) out[i * width + k] = values[r * width + k];
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Stage 4: Huffman
// ---------------------------------------------------------------------------------------------

/** Longest code length of a mode-2 stream. */
export const HUFFMAN_MAX_LENGTH = 11;
/** Default segment size of the encoder: 2^14 symbols. */
export const HUFFMAN_DEFAULT_SEGMENT_LOG2 = 14;
export const HUFFMAN_MIN_SEGMENT_LOG2 = 10;
export const HUFFMAN_MAX_SEGMENT_LOG2 = 20;

/** A package-merge item: its weight and the leaves (symbols) it contains, with repeats. */
interface MergeItem {
  weight: number;
  symbols: number[];
}

/**
 * Optimal code lengths limited to `maxLength` bits, by package-merge (Larmore and Hirschberg):
 * 256 entries, 0 for absent symbols (count 0). Needs at least two present symbols and at most
 * 2^maxLength. Counts [1, 1, 2, 4] -> lengths [3, 3, 2, 1].
 *
 * Leaves are sorted by (count, symbol); packages are pairs of neighbours in the list below;
 * leaves and packages are merged by weight, a leaf first at equal weight. The first 2(n - 1)
 * items of the top list are kept; a symbol's length is how many of them contain it.
 */
export function huffmanCodeLengths(histogram: ArrayLike<number>, maxLength = HUFFMAN_MAX_LENGTH): Uint8Array {
  if (histogram.length > 256) throw new Error(`histogram of ${histogram.length} symbols (at most 256)`);
  const leaves: MergeItem[] = [];
  for (let s = 0; s < histogram.length; s++) if (histogram[s] > 0) leaves.push({ weight: histogram[s], symbols: [s] });
  const n = leaves.length;
  if (n < 2) throw new Error(`Huffman code needs at least 2 present symbols, got ${n}`);
  if (n > 2 ** maxLength) throw new Error(`${n} symbols do not fit in codes of ${maxLength} bits`);
  leaves.sort((a, b) => a.weight - b.weight || a.symbols[0] - b.symbols[0]);

  // list = the items at depth maxLength; each step up packages neighbours and merges in the leaves.
  let list = leaves;
  for (let depth = maxLength; depth > 1; depth--) {
    const packages: MergeItem[] = [];
    for (let i = 0; i + 1 < list.length; i += 2) {
      packages.push({ weight: list[i].weight + list[i + 1].weight, symbols: [...list[i].symbols, ...list[i + 1].symbols] });
    }
    const merged: MergeItem[] = [];
    let li = 0;
    let pi = 0;
    while (li < leaves.length || pi < packages.length) {
      if (pi >= packages.length || (li < leaves.length && leaves[li].weight <= packages[pi].weight)) merged.push(leaves[li++]);
      else merged.push(packages[pi++]);
    }
    list = merged;
  }

  const lengths = new Uint8Array(256);
  for (let i = 0; i < 2 * (n - 1); i++) for (const s of list[i].symbols) lengths[s]++;
  return lengths;
}

/**
 * Canonical codes of a set of lengths (256 entries, 0 = absent): symbols sorted by (length,
 * symbol); the first gets code 0, each next one (previous code + 1) << (its length - previous
 * length). Values are MSB-first, not bit-reversed. Lengths [2, 1, 3, 3] -> codes [2, 0, 6, 7].
 */
export function canonicalCodes(lengths: Uint8Array): Uint32Array {
  const order: number[] = [];
  for (let s = 0; s < lengths.length; s++) if (lengths[s] > 0) order.push(s);
  order.sort((a, b) => lengths[a] - lengths[b] || a - b);
  const codes = new Uint32Array(256);
  let code = 0;
  let previousLength = 0;
  for (let i = 0; i < order.length; i++) {
    const s = order[i];
    if (i > 0) code = (code + 1) * 2 ** (lengths[s] - previousLength);
    codes[s] = code;
    previousLength = lengths[s];
  }
  return codes;
}

/** The low `length` bits of `code`, reversed: the first (most significant) bit becomes bit 0. */
export function reverseBits(code: number, length: number): number {
  let out = 0;
  for (let b = 0; b < length; b++) out |= ((code >>> b) & 1) << (length - 1 - b);
  return out;
}

/** Appends bits least significant first into a byte array. */
class BitWriter {
  readonly bytes: number[] = [];
  private bitCount = 0;

  /** Writes the low `count` bits of `bits`, bit 0 first. */
  write(bits: number, count: number): void {
    for (let b = 0; b < count; b++) {
      if (this.bitCount % 8 === 0) this.bytes.push(0);
      this.bytes[this.bytes.length - 1] |= ((bits >>> b) & 1) << (this.bitCount % 8);
      this.bitCount++;
    }
  }
}

/** Mode, g, last symbol m and the 4-bit lengths of symbols 0..m: the start of a mode-2 or mode-3 stream. */
function huffmanHeader(mode: 2 | 3, segmentLog2: number, lengths: Uint8Array): number[] {
  let lastSymbol = 255;
  while (lengths[lastSymbol] === 0) lastSymbol--;
  const out: number[] = [mode, segmentLog2, lastSymbol];
  for (let i = 0; i < Math.ceil((lastSymbol + 1) / 2); i++) {
    const low = lengths[2 * i];
    const high = 2 * i + 1 <= lastSymbol ? lengths[2 * i + 1] : 0;
    out.push(low | (high << 4));
  }
  return out;
}

/**
 * One Huffman stream of `bytes` in `mode` 2 or 3: [0] when empty; [1, symbol] when every byte is
 * the same symbol; otherwise the mode's header (mode, g, m, 4-bit lengths of 0..m), the K segment
 * end offsets (u32) and the segments, each of `segment(start, end, lengths, codes)`'s bytes for
 * the symbols [start, end) (codes as canonicalCodes gives them, not reversed).
 */
function huffmanStream(
  bytes: Uint8Array,
  segmentLog2: number,
  mode: 2 | 3,
  segment: (start: number, end: number, lengths: Uint8Array, codes: Uint32Array) => number[],
): Uint8Array {
  if (!(segmentLog2 >= HUFFMAN_MIN_SEGMENT_LOG2 && segmentLog2 <= HUFFMAN_MAX_SEGMENT_LOG2))
    throw new Error(`segmentLog2 ${segmentLog2} outside 10..20`);
  if (bytes.length === 0) return Uint8Array.of(0);
  const histogram = new Array<number>(256).fill(0);
  for (const b of bytes) histogram[b]++;
  let distinct = 0;
  for (const c of histogram) if (c > 0) distinct++;
  if (distinct === 1) return Uint8Array.of(1, bytes[0]);

  const lengths = huffmanCodeLengths(histogram, HUFFMAN_MAX_LENGTH);
  const codes = canonicalCodes(lengths);
  const out = huffmanHeader(mode, segmentLog2, lengths);
  const segmentSize = 2 ** segmentLog2;
  const segments = Math.ceil(bytes.length / segmentSize);
  const body: number[] = [];
  const endOffsets: number[] = [];
  for (let k = 0; k < segments; k++) {
    for (const b of segment(k * segmentSize, Math.min(bytes.length, (k + 1) * segmentSize), lengths, codes)) body.push(b);
    endOffsets.push(body.length);
  }
  for (const offset of endOffsets) out.push(offset & 0xff, (offset >>> 8) & 0xff, (offset >>> 16) & 0xff, (offset >>> 24) & 0xff);
  for (const b of body) out.push(b);
  return Uint8Array.from(out);
}

/**
 * One Huffman stream of `bytes`: [0] when empty; [1, symbol] when every byte is the same symbol;
 * otherwise mode 2 (even when larger than raw) with 2^segmentLog2-symbol segments:
 * mode, g, m, 4-bit lengths of 0..m, K end offsets (u32), the segments' bitstreams.
 */
export function huffmanEncodeStream(bytes: Uint8Array, segmentLog2 = HUFFMAN_DEFAULT_SEGMENT_LOG2): Uint8Array {
  return huffmanStream(bytes, segmentLog2, 2, (start, end, lengths, codes) => {
    const writer = new BitWriter();
    for (let i = start; i < end; i++) writer.write(reverseBits(codes[bytes[i]], lengths[bytes[i]]), lengths[bytes[i]]);
    return writer.bytes;
  });
}

/** Lanes of a mode-3 segment (docs/format.md, "Mode 3: interleaved lanes"). */
export const HUFFMAN_LANES = 32;
/** Bits of a mode-3 unit. */
export const HUFFMAN_LANE_UNIT_BITS = 16;
/** Segment size of the mode-3 streams parle writes. */
export const HUFFMAN_LANES_SEGMENT_LOG2 = 12;

/** Index in its segment of lane `lane`'s `t`-th symbol: quad lane + 32 floor(t / 4), symbol t mod 4 of it. */
export function laneSymbolIndex(lane: number, t: number): number {
  return 4 * (lane + HUFFMAN_LANES * Math.floor(t / 4)) + (t % 4);
}

/**
 * One mode-3 Huffman stream of `bytes` (docs/format.md, "Mode 3: interleaved lanes"): [0] when
 * empty, [1, symbol] for one distinct symbol (as {@link huffmanEncodeStream}), otherwise mode 3:
 * mode 2's header with mode = 3 and the same code lengths, then each segment's units in the
 * order the spec's decoder reads them. Per segment and lane: the lane's symbols' codes
 * concatenated (its bits), cut into 16-bit units; unit k is read at the step t of the lane's
 * symbol whose code covers bit 16k (the decoder refills only when a code runs past the bits it
 * has). The reads, sorted by (step, lane), are the segment's units in order.
 */
export function huffmanEncodeLanesStream(bytes: Uint8Array, segmentLog2 = HUFFMAN_LANES_SEGMENT_LOG2): Uint8Array {
  return huffmanStream(bytes, segmentLog2, 3, (start, end, lengths, codes) => {
    const c = end - start;
    const reads: { step: number; lane: number; unit: number }[] = [];
    const laneBits: number[][] = [];
    for (let lane = 0; lane < HUFFMAN_LANES; lane++) {
      const bits: number[] = [];
      for (let t = 0; laneSymbolIndex(lane, t) < c; t++) {
        const symbol = bytes[start + laneSymbolIndex(lane, t)];
        const code = reverseBits(codes[symbol], lengths[symbol]);
        const from = bits.length;
        for (let b = 0; b < lengths[symbol]; b++) bits.push((code >>> b) & 1);
        // the units whose first bit this code covers are read at this step
        for (let u = Math.ceil(from / HUFFMAN_LANE_UNIT_BITS); u * HUFFMAN_LANE_UNIT_BITS < bits.length; u++)
          reads.push({ step: t, lane, unit: u });
      }
      laneBits.push(bits);
    }
    reads.sort((a, b) => a.step - b.step || a.lane - b.lane);
    const out: number[] = [];
    for (const r of reads) {
      let unit = 0;
      for (let b = 0; b < HUFFMAN_LANE_UNIT_BITS; b++) unit |= (laneBits[r.lane][r.unit * HUFFMAN_LANE_UNIT_BITS + b] ?? 0) << b;
      out.push(unit & 0xff, unit >>> 8);
    }
    return out;
  });
}

/**
 * Decodes one Huffman stream (modes 0-3) to exactly `decodedBytes` bytes. Throws `corrupt` on: an
 * unknown mode; a stream shorter or longer than its mode implies; g outside 10..20; a code length
 * over 11; fewer than two symbols; an incomplete or over-full code; segment offsets decreasing or
 * not ending at the end of the stream; a segment that needs bits past its end (mode 3: a segment
 * of an odd byte length, one that reads past its units or leaves units unread).
 */
export function huffmanDecodeStream(stream: Uint8Array, decodedBytes: number): Uint8Array {
  const n = decodedBytes;
  if (stream.length < 1) corrupt('empty Huffman stream');
  const mode = stream[0];
  if (mode === 0) {
    if (stream.length !== 1 + n) corrupt(`raw stream of ${stream.length} bytes for ${n} bytes`);
    return stream.slice(1);
  }
  if (mode === 1) {
    if (stream.length !== 2) corrupt(`one-symbol stream of ${stream.length} bytes`);
    return new Uint8Array(n).fill(stream[1]);
  }
  if (mode !== 2 && mode !== 3) corrupt(`unknown Huffman mode ${mode}`);

  if (stream.length < 3) corrupt('Huffman header truncated');
  const g = stream[1];
  if (g < HUFFMAN_MIN_SEGMENT_LOG2 || g > HUFFMAN_MAX_SEGMENT_LOG2) corrupt(`segment size log2 ${g} outside 10..20`);
  const lastSymbol = stream[2];
  const tableBytes = Math.ceil((lastSymbol + 1) / 2);
  if (stream.length < 3 + tableBytes) corrupt('Huffman code lengths truncated');
  const lengths = new Uint8Array(256);
  for (let s = 0; s <= lastSymbol; s++) {
    const byte = stream[3 + (s >> 1)];
    lengths[s] = s % 2 === 0 ? byte & 15 : byte >> 4;
    if (lengths[s] > HUFFMAN_MAX_LENGTH) corrupt(`code length ${lengths[s]} of symbol ${s} over 11`);
  }

  // Kraft sum in units of 2^-11: exactly 2^11 for a complete code.
  let symbols = 0;
  let kraft = 0;
  for (let s = 0; s < 256; s++) {
    if (lengths[s] === 0) continue;
    symbols++;
    kraft += 2 ** (HUFFMAN_MAX_LENGTH - lengths[s]);
  }
  if (symbols < 2) corrupt(`${symbols} symbols in a Huffman code (at least 2)`);
  if (kraft !== 2 ** HUFFMAN_MAX_LENGTH)
    corrupt(`code is ${kraft < 2 ** HUFFMAN_MAX_LENGTH ? 'incomplete' : 'over-full'} (Kraft sum ${kraft}/2048)`);

  const segmentSize = 2 ** g;
  const segments = Math.ceil(n / segmentSize);
  const offsetsAt = 3 + tableBytes;
  const bitsAt = offsetsAt + 4 * segments;
  if (stream.length < bitsAt) corrupt('Huffman segment offsets truncated');
  const bitstreamsLength = stream.length - bitsAt;
  const ends: number[] = [];
  for (let k = 0; k < segments; k++) {
    const end = readU32(stream, offsetsAt + 4 * k);
    if (end < (k > 0 ? ends[k - 1] : 0)) corrupt(`segment ${k} ends at ${end}, before the previous segment's end`);
    ends.push(end);
  }
  const lastEnd = segments > 0 ? ends[segments - 1] : 0;
  if (lastEnd !== bitstreamsLength) corrupt(`segments end at ${lastEnd}, bitstreams are ${bitstreamsLength} bytes`);

  // (length, canonical code) -> symbol; a decoder reads one bit at a time until it finds a code.
  const codes = canonicalCodes(lengths);
  const symbolOf = new Map<number, number>();
  for (let s = 0; s < 256; s++) if (lengths[s] > 0) symbolOf.set(lengths[s] * 2 ** 16 + codes[s], s);

  const out = new Uint8Array(n);
  if (mode === 3) {
    for (let k = 0; k < segments; k++) {
      const from = bitsAt + (k > 0 ? ends[k - 1] : 0);
      const segmentBytes = bitsAt + ends[k] - from;
      if (segmentBytes % 2 !== 0) corrupt(`segment ${k} is ${segmentBytes} bytes, not whole 16-bit units`);
      const c = Math.min(n, (k + 1) * segmentSize) - k * segmentSize;
      const decoded = decodeLanesSegment(stream.subarray(from, from + segmentBytes), c, lengths, symbolOf, k);
      out.set(decoded, k * segmentSize);
    }
    return out;
  }
  for (let k = 0; k < segments; k++) {
    const startBit = (bitsAt + (k > 0 ? ends[k - 1] : 0)) * 8;
    const endBit = (bitsAt + ends[k]) * 8;
    let bit = startBit;
    const end = Math.min(n, (k + 1) * segmentSize);
    for (let i = k * segmentSize; i < end; i++) {
      let code = 0;
      let symbol = -1;
      for (let length = 1; length <= HUFFMAN_MAX_LENGTH && symbol < 0; length++) {
        if (bit >= endBit) corrupt(`segment ${k} needs bits past its end`);
        code = code * 2 + ((stream[bit >> 3] >> (bit & 7)) & 1);
        bit++;
        const found = symbolOf.get(length * 2 ** 16 + code);
        if (found !== undefined) symbol = found;
      }
      // Unreachable for a complete code: every 11-bit string starts with a code.
      if (symbol < 0) corrupt(`segment ${k}: no code matches`);
      out[i] = symbol;
    }
  }
  return out;
}

/**
 * One mode-3 segment of `c` symbols from its `units` bytes, by the spec's decoder as written: a
 * step t decodes the t-th symbol of each lane that has one, lanes in ascending order; a lane
 * whose next code runs past the bits it holds first reads the segment's next unit. Throws
 * `corrupt` when a read runs past the units or units are left unread.
 */
function decodeLanesSegment(units: Uint8Array, c: number, lengths: Uint8Array, symbolOf: Map<number, number>, k: number): Uint8Array {
  const U = units.length / 2;
  const out = new Uint8Array(c);
  const buffer = new Array<number>(HUFFMAN_LANES).fill(0);
  const held = new Array<number>(HUFFMAN_LANES).fill(0);
  /** (symbol, length) of the code that the low bits of `b` begin with. */
  const lookup = (b: number): [number, number] => {
    let code = 0;
    for (let length = 1; length <= HUFFMAN_MAX_LENGTH; length++) {
      code = code * 2 + ((b >>> (length - 1)) & 1);
      const found = symbolOf.get(length * 2 ** 16 + code);
      if (found !== undefined) return [found, lengths[found]];
    }
    return corrupt(`segment ${k}: no code matches`); // unreachable for a complete code
  };
  let p = 0;
  for (let t = 0; laneSymbolIndex(0, t) < c; t++) {
    for (let lane = 0; lane < HUFFMAN_LANES; lane++) {
      const i = laneSymbolIndex(lane, t);
      if (i >= c) continue;
      let [symbol, L] = lookup(buffer[lane]);
      if (L > held[lane]) {
        if (p >= U) corrupt(`segment ${k} reads past its ${U} units`);
        buffer[lane] += (units[2 * p] | (units[2 * p + 1] << 8)) * 2 ** held[lane];
        held[lane] += HUFFMAN_LANE_UNIT_BITS;
        p++;
        [symbol, L] = lookup(buffer[lane]);
      }
      out[i] = symbol;
      buffer[lane] = Math.floor(buffer[lane] / 2 ** L);
      held[lane] -= L;
    }
  }
  if (p !== U) corrupt(`segment ${k} leaves ${U - p} of its ${U} units unread`);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Stage 6: pack (decode only)
// ---------------------------------------------------------------------------------------------

/**
 * Decodes one pack stream to exactly `decodedBytes` bytes of `width`-byte elements (docs/format.md,
 * "Pack streams"), bit by bit. Throws `corrupt` on every field the spec bounds, on a block past the
 * stream's end, and on bytes after the last block.
 */
export function packDecodeStream(s: Uint8Array, decodedBytes: number, width: 1 | 2 | 4): Uint8Array {
  if (decodedBytes % width !== 0) corrupt(`pack stream of ${decodedBytes} bytes of ${width}-byte elements`);
  const n = decodedBytes / width;
  const out = new Uint8Array(decodedBytes);
  const bitsMax = 8 * width;
  let p = 0;
  for (let start = 0; start < n; start += 256) {
    const c = Math.min(256, n - start);
    if (p + 2 + width > s.length) corrupt('pack block header truncated');
    const b = s[p] & 0x3f;
    const zz = (s[p] & 0x80) !== 0;
    if ((s[p] & 0x40) !== 0) corrupt('pack block: bit 6 set');
    if (b > bitsMax) corrupt(`pack block: bit width ${b}`);
    const e = s[p + 1];
    if (e > c) corrupt(`pack block: ${e} exceptions in ${c} elements`);
    p += 2;
    let h = 0;
    if (e > 0) {
      if (b >= bitsMax) corrupt('pack block: exceptions at full width');
      if (p + 1 + width > s.length) corrupt('pack block header truncated');
      h = s[p++];
      if (h === 0 || b + h > bitsMax) corrupt(`pack block: exception width ${h}`);
    }
    let reference = 0n;
    for (let k = 0; k < width; k++) reference |= BigInt(s[p + k]) << BigInt(8 * k);
    p += width;
    const m = Math.ceil(c / 4);
    const words = Math.ceil((m * b) / 32);
    if (p + 16 * words > s.length) corrupt('pack block values truncated');
    const vals: bigint[] = [];
    for (let i = 0; i < c; i++) {
      const lane = i % 4;
      const slot = Math.floor(i / 4);
      let u = 0n;
      for (let t = 0; t < b; t++) {
        const bit = slot * b + t;
        const byte = s[p + 16 * Math.floor(bit / 32) + 4 * lane + ((bit % 32) >> 3)];
        if ((byte >> (bit % 8)) & 1) u |= 1n << BigInt(t);
      }
      vals.push(u);
    }
    p += 16 * words;
    if (e > 0) {
      if (p + e + Math.ceil((e * h) / 8) > s.length) corrupt('pack block exceptions truncated');
      let last = -1;
      for (let x = 0; x < e; x++) {
        const pos = s[p + x];
        if (pos <= last || pos >= c) corrupt(`pack block: exception position ${pos} after ${last} in ${c} elements`);
        last = pos;
        let high = 0n;
        for (let t = 0; t < h; t++) {
          const bit = x * h + t;
          if ((s[p + e + (bit >> 3)] >> (bit % 8)) & 1) high |= 1n << BigInt(t);
        }
        vals[pos] |= high << BigInt(b);
      }
      p += e + Math.ceil((e * h) / 8);
    }
    const mod = 1n << BigInt(bitsMax);
    for (let i = 0; i < c; i++) {
      let v = (vals[i] + reference) % mod;
      if (zz) v = (v >> 1n) ^ (v & 1n ? mod - 1n : 0n);
      for (let k = 0; k < width; k++) out[(start + i) * width + k] = Number((v >> BigInt(8 * k)) & 0xffn);
    }
  }
  if (p !== s.length) corrupt(`pack stream: ${s.length - p} bytes after its last block`);
  return out;
}

// ---------------------------------------------------------------------------------------------
// The payload of a version-2 chunk
// ---------------------------------------------------------------------------------------------

/** Throws unless `stages` is a valid pipeline for `width`: a subsequence of [1, 2, 3, 4], no shuffle at width 1. */
function checkPipeline(stages: readonly number[], width: number): void {
  let previous = 0;
  for (const stage of stages) {
    if (stage < STAGE.delta || (stage > STAGE.huffman && stage !== STAGE.pack) || !Number.isInteger(stage))
      corrupt(`unknown stage id ${stage}`);
    if (stage <= previous) corrupt(`stage ${stage} out of order or repeated`);
    if (stage === STAGE.pack && previous === STAGE.huffman) corrupt('huffman and pack in one pipeline');
    if (stage === STAGE.shuffle && width === 1) corrupt('shuffle on a 1-byte type');
    previous = stage;
  }
}

/** Streams a pipeline produces: (shuffle ? width : 1) x (rle ? 2 : 1). */
export function streamCount(stages: readonly number[], width: 1 | 2 | 4): number {
  return (stages.includes(STAGE.shuffle) ? width : 1) * (stages.includes(STAGE.rle) ? 2 : 1);
}

/**
 * A chunk's non-stored payload: the stream directory (per stream u32 decoded bytes D, u32 encoded
 * bytes E), then the streams. Streams in order: with shuffle, planes 0..w-1; with rle, each
 * stream j becomes values_j, lengths_j (so values_0, lengths_0, values_1, ...). Stages = [] gives
 * one raw stream behind a one-entry directory.
 */
export function encodePayload(stages: readonly number[], elementBytes: Uint8Array, width: 1 | 2 | 4): Uint8Array {
  checkPipeline(stages, width);
  checkWholeElements(elementBytes, width);
  let streams: Uint8Array[] = [elementBytes];
  let streamWidth: 1 | 2 | 4 = width;
  if (stages.includes(STAGE.delta)) streams = [deltaEncode(elementBytes, width)];
  if (stages.includes(STAGE.shuffle)) {
    streams = shuffle(streams[0], width as 2 | 4);
    streamWidth = 1;
  }
  if (stages.includes(STAGE.rle)) {
    const pairs: Uint8Array[] = [];
    for (const stream of streams) {
      const { values, lengths } = rleStreams(stream, streamWidth);
      pairs.push(values, lengths);
    }
    streams = pairs;
  }
  const decodedSizes = streams.map((stream) => stream.length);
  if (stages.includes(STAGE.huffman)) streams = streams.map((stream) => huffmanEncodeStream(stream));

  let total = 8 * streams.length;
  for (const stream of streams) total += stream.length;
  const out = new Uint8Array(total);
  let at = 8 * streams.length;
  for (let j = 0; j < streams.length; j++) {
    writeU32(out, 8 * j, decodedSizes[j]);
    writeU32(out, 8 * j + 4, streams[j].length);
    out.set(streams[j], at);
    at += streams[j].length;
  }
  return out;
}

/**
 * The inverse of {@link encodePayload}: the `count` elements' little-endian bytes. Checks the
 * pipeline, the directory (fits in the payload, encoded sizes sum to P - 8 S, every decoded size
 * within its bounds, E = D without huffman) before decoding any stream; then every stream.
 * Throws `corrupt` on any violation. It does not check P against count x width (the entry's job).
 */
export function decodePayload(stages: readonly number[], payload: Uint8Array, width: 1 | 2 | 4, count: number): Uint8Array {
  checkPipeline(stages, width);
  const hasShuffle = stages.includes(STAGE.shuffle);
  const hasRle = stages.includes(STAGE.rle);
  const hasHuffman = stages.includes(STAGE.huffman);
  const hasPack = stages.includes(STAGE.pack);
  const streams = streamCount(stages, width);
  const streamWidth = hasShuffle ? 1 : width;
  if (payload.length < 8 * streams) corrupt(`payload of ${payload.length} bytes shorter than its ${streams}-stream directory`);

  const decodedSizes: number[] = [];
  const encodedSizes: number[] = [];
  let encodedTotal = 0;
  for (let j = 0; j < streams; j++) {
    decodedSizes.push(readU32(payload, 8 * j));
    encodedSizes.push(readU32(payload, 8 * j + 4));
    encodedTotal += encodedSizes[j];
  }
  if (encodedTotal !== payload.length - 8 * streams)
    corrupt(`encoded sizes sum to ${encodedTotal}, payload holds ${payload.length - 8 * streams}`);

  // Bounds of each decoded size, checked before anything is decoded.
  for (let j = 0; j < streams; j++) {
    const d = decodedSizes[j];
    if (!hasRle) {
      if (d !== count * streamWidth) corrupt(`stream ${j} decodes to ${d} bytes, expected ${count * streamWidth}`);
    } else if (j % 2 === 0) {
      const runs = d / streamWidth;
      if (d % streamWidth !== 0 || runs < 1 || runs > count) corrupt(`rle values stream ${j} of ${d} bytes: not 1..${count} elements`);
    } else {
      const runs = decodedSizes[j - 1] / streamWidth;
      if (d > 5 * runs) corrupt(`rle lengths stream ${j} of ${d} bytes for ${runs} runs`);
    }
    if (!hasHuffman && !hasPack && encodedSizes[j] !== d) corrupt(`raw stream ${j}: encoded ${encodedSizes[j]} bytes, decoded ${d}`);
  }

  let decoded: Uint8Array[] = [];
  let at = 8 * streams;
  for (let j = 0; j < streams; j++) {
    const stored = payload.subarray(at, at + encodedSizes[j]);
    at += encodedSizes[j];
    // pack: run lengths (odd streams with rle) are bytes, the rest at the stream's width
    const packWidth = hasRle && j % 2 === 1 ? 1 : streamWidth;
    decoded.push(
      hasHuffman
        ? huffmanDecodeStream(stored, decodedSizes[j])
        : hasPack
          ? packDecodeStream(stored, decodedSizes[j], packWidth)
          : stored.slice(),
    );
  }
  if (hasRle) {
    const expanded: Uint8Array[] = [];
    for (let j = 0; j < streams; j += 2) expanded.push(rleExpand(decoded[j], decoded[j + 1], streamWidth, count));
    decoded = expanded;
  }
  let bytes = hasShuffle ? unshuffle(decoded, width as 2 | 4) : decoded[0];
  if (stages.includes(STAGE.delta)) bytes = deltaDecode(bytes, width);
  return bytes;
}
