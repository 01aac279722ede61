// Canonical Huffman coding of byte streams, mode 2 of the version-2 codec (docs/format.md,
// "Huffman streams"): canonical codes from code lengths (assigned as in DEFLATE), the decode
// tables (after zstd's Huff0: multi-symbol entries, HUF_decompress4X2 taken to four symbols),
// and encode and decode of independent segments (the layout of PAVLE, Balevic 2009, with
// Haugen's offset table). The code lengths themselves and the stream header are TypeScript
// (ts/codec/huffman.ts); mode 3, interleaved lanes, is in assembly/huffman-lanes.ts. These
// kernels allocate nothing and take pointers.
//
// Scalar code, the same in both builds (build/parle.wasm and build/parle-scalar.wasm); tests
// compare both with the plain reference in test/support/codec-reference.ts.

/** Longest code, in bits: the decode tables have 2^11 entries. */
const MAX_CODE_BITS: u32 = 11;
const TABLE_SIZE: u32 = 1 << MAX_CODE_BITS;

/**
 * Canonical codes from 256 code lengths (u8 at `lengthsPtr`, 0 = absent, 1..11) into 256 u32 at
 * `codesPtr`: the code bit-reversed (the stream is read least significant bit first) in the low
 * 16 bits, its length in the high 16. Codes are assigned by (length, symbol) as in DEFLATE.
 * Returns the Kraft sum scaled by 2^11 (2048 for a complete code), or -1 for a length over 11.
 */
export function huffmanBuildCodes(lengthsPtr: usize, codesPtr: usize): i32 {
  let kraft: u32 = 0;
  for (let s: usize = 0; s < 256; s++) {
    const len = <u32>load<u8>(lengthsPtr + s);
    if (len > MAX_CODE_BITS) return -1;
    store<u32>(codesPtr + (s << 2), 0);
    if (len > 0) kraft += TABLE_SIZE >> len;
  }
  // canonical order: by length, then symbol; the code of the next length starts at (code << 1)
  let code: u32 = 0;
  for (let len: u32 = 1; len <= MAX_CODE_BITS; len++) {
    for (let s: usize = 0; s < 256; s++) {
      if (<u32>load<u8>(lengthsPtr + s) != len) continue;
      let r: u32 = 0;
      for (let b: u32 = 0; b < len; b++) r |= ((code >> b) & 1) << (len - 1 - b);
      store<u32>(codesPtr + (s << 2), r | (len << 16));
      code++;
    }
    code <<= 1;
  }
  return <i32>kraft;
}

/** Streams shorter than this (symbols) get single-symbol decode tables (see {@link huffmanBuildTable}). */
const MULTI_SYMBOL_MIN: u32 = 8192;

/**
 * Fills the entries of every code (those whose low `len` bits are the code) and returns the count
 * of symbols present. `final`: the decode tables with one symbol an entry (see
 * {@link huffmanBuildTable}: the symbol in the u32 half, len | len << 8 in the u16 half); else the
 * single-symbol table the multi-symbol pass reads (symbol | len << 8 in the u16 half only).
 */
function fillEntries(codesPtr: usize, tablePtr: usize, final: bool): i32 {
  const info = tablePtr + TABLE_INFO;
  let present = 0;
  for (let s: usize = 0; s < 256; s++) {
    const c = load<u32>(codesPtr + (s << 2));
    const len = c >> 16;
    if (len == 0) continue;
    present++;
    const entry = <u16>((final ? len : <u32>s) | (len << 8));
    for (let j: u32 = c & 0xffff; j < TABLE_SIZE; j += 1 << len) {
      if (final) store<u32>(tablePtr + (<usize>j << 2), <u32>s);
      store<u16>(info + (<usize>j << 1), entry);
    }
  }
  return present;
}

/** Bytes of the decode tables at `tablePtr` (what callers allocate): 2048 u32 of symbols, then 2048 u16 of lengths. */
const TABLES_BYTES: usize = 8192 + 4096;
/** Offset of the u16 half of the decode tables (lengths and counts of each entry); assembly/huffman-lanes.ts reads it too. */
export const TABLE_INFO: usize = 8192;

/**
 * The decode tables of a complete code given as 256 lengths at `lengthsPtr` (`codesPtr`: 1 KiB of
 * scratch), at `tablePtr` ({@link TABLES_BYTES} = 12 KiB). Both halves are indexed by the next
 * 11 bits of a segment and describe the codes that lie wholly in those bits, greedily, up to four
 * (Huff0's double-symbol table, HUF_decompress4X2, taken to four symbols: short codes decode
 * several symbols a lookup):
 *   - 2048 u32 at tablePtr: their symbols, the first in the low byte (bytes past the last are 0);
 *   - 2048 u16 at tablePtr + 8192: bits 0..3 the sum of their lengths (1..11), bits 6..7 their
 *     count - 1, bits 8..11 the length of the first code (the entry of the first symbol alone).
 * Built from the single-symbol table (symbol | length << 8), which the u16 half holds meanwhile.
 * A stream of fewer than {@link MULTI_SYMBOL_MIN} symbols (`symbols`) gets one symbol an entry
 * (count 1, same layout): the multi-symbol pass costs about as much as decoding 8K symbols.
 * Returns 0, or -1 when a length exceeds 11, fewer than two symbols are present or the code is
 * not complete.
 */
export function huffmanBuildTable(lengthsPtr: usize, codesPtr: usize, tablePtr: usize, symbols: u32): i32 {
  const kraft = huffmanBuildCodes(lengthsPtr, codesPtr);
  if (kraft != <i32>TABLE_SIZE) return -1;
  const info = tablePtr + TABLE_INFO;
  const single = symbols < MULTI_SYMBOL_MIN;
  if (fillEntries(codesPtr, tablePtr, single) < 2) return -1;
  if (single) return 0;
  // entry j reads the single entries j, j >> l0, j >> (l0 + l1), ..., none above j: top down, each
  // is read before its own entry replaces it
  for (let j = <i32>TABLE_SIZE - 1; j >= 0; j--) {
    const first = <u32>load<u16>(info + (<usize>j << 1));
    const len0 = first >> 8;
    let symbols = first & 0xff;
    let bits = len0;
    let count: u32 = 1;
    while (count < 4) {
      const next = <u32>load<u16>(info + (<usize>(<u32>j >> bits) << 1));
      const len = next >> 8;
      // the code at bit `bits` is whole when it ends within the 11 bits of the index
      if (bits + len > MAX_CODE_BITS) break;
      symbols |= (next & 0xff) << (count << 3);
      bits += len;
      count++;
    }
    store<u32>(tablePtr + (<usize>j << 2), symbols);
    store<u16>(info + (<usize>j << 1), <u16>(bits | ((count - 1) << 6) | (len0 << 8)));
  }
  return 0;
}

/**
 * Huffman-encodes `n` bytes at `srcPtr` with the codes at `codesPtr` (from
 * {@link huffmanBuildCodes}) in segments of 2^segLog2 symbols, each written from a byte boundary
 * at `outPtr` (zero-padded to a whole byte); segment k's end offset in bytes goes to
 * offsetsPtr[k] (u32). The output needs the exact size (sum of code lengths, segments rounded
 * up to bytes) plus 8 bytes of slack (the bit writer stores 8 bytes at a time). Returns the
 * bytes written. Every symbol of the input must have a code.
 *
 * PAVLE (Balevic 2009) finds each segment's place by a scan of the code lengths; on one thread
 * the place is simply where the previous segment ended.
 */
export function huffmanEncode(srcPtr: usize, n: usize, codesPtr: usize, segLog2: u32, outPtr: usize, offsetsPtr: usize): f64 {
  const seg: usize = <usize>1 << segLog2;
  let out = outPtr;
  let k: usize = 0;
  for (let start: usize = 0; start < n; start += seg, k++) {
    out = encodeSegment(srcPtr + start, srcPtr + min<usize>(n, start + seg), codesPtr, out);
    store<u32>(offsetsPtr + (k << 2), <u32>(out - outPtr));
  }
  return <f64>(out - outPtr);
}

/**
 * The codes of the bytes [p, end) written from `out` on, the last byte zero-padded; returns where
 * they end. A code is read as two loads (u16 code, u8 length) of its u32 in `codesPtr`. The bit
 * buffer holds at most 7 bits after a flush, so 5 codes of up to 11 bits fit before the next one
 * (7 + 55 <= 64); a flush stores 8 bytes and keeps the bits of the last, partial byte. The main
 * loop codes 20 bytes (4 flushes) an iteration, written out.
 */
function encodeSegment(p: usize, end: usize, codesPtr: usize, out: usize): usize {
  let buf: u64 = 0;
  let bits: u64 = 0;
  let c: usize;
  for (; p + 20 <= end; p += 20) {
    c = codesPtr + (<usize>load<u8>(p) << 2);
    buf |= <u64>load<u16>(c) << bits;
    bits += <u64>load<u8>(c, 2);
    c = codesPtr + (<usize>load<u8>(p, 1) << 2);
    buf |= <u64>load<u16>(c) << bits;
    bits += <u64>load<u8>(c, 2);
    c = codesPtr + (<usize>load<u8>(p, 2) << 2);
    buf |= <u64>load<u16>(c) << bits;
    bits += <u64>load<u8>(c, 2);
    c = codesPtr + (<usize>load<u8>(p, 3) << 2);
    buf |= <u64>load<u16>(c) << bits;
    bits += <u64>load<u8>(c, 2);
    c = codesPtr + (<usize>load<u8>(p, 4) << 2);
    buf |= <u64>load<u16>(c) << bits;
    bits += <u64>load<u8>(c, 2);
    store<u64>(out, buf);
    out += <usize>(bits >> 3);
    buf >>= bits & 56;
    bits &= 7;
    c = codesPtr + (<usize>load<u8>(p, 5) << 2);
    buf |= <u64>load<u16>(c) << bits;
    bits += <u64>load<u8>(c, 2);
    c = codesPtr + (<usize>load<u8>(p, 6) << 2);
    buf |= <u64>load<u16>(c) << bits;
    bits += <u64>load<u8>(c, 2);
    c = codesPtr + (<usize>load<u8>(p, 7) << 2);
    buf |= <u64>load<u16>(c) << bits;
    bits += <u64>load<u8>(c, 2);
    c = codesPtr + (<usize>load<u8>(p, 8) << 2);
    buf |= <u64>load<u16>(c) << bits;
    bits += <u64>load<u8>(c, 2);
    c = codesPtr + (<usize>load<u8>(p, 9) << 2);
    buf |= <u64>load<u16>(c) << bits;
    bits += <u64>load<u8>(c, 2);
    store<u64>(out, buf);
    out += <usize>(bits >> 3);
    buf >>= bits & 56;
    bits &= 7;
    c = codesPtr + (<usize>load<u8>(p, 10) << 2);
    buf |= <u64>load<u16>(c) << bits;
    bits += <u64>load<u8>(c, 2);
    c = codesPtr + (<usize>load<u8>(p, 11) << 2);
    buf |= <u64>load<u16>(c) << bits;
    bits += <u64>load<u8>(c, 2);
    c = codesPtr + (<usize>load<u8>(p, 12) << 2);
    buf |= <u64>load<u16>(c) << bits;
    bits += <u64>load<u8>(c, 2);
    c = codesPtr + (<usize>load<u8>(p, 13) << 2);
    buf |= <u64>load<u16>(c) << bits;
    bits += <u64>load<u8>(c, 2);
    c = codesPtr + (<usize>load<u8>(p, 14) << 2);
    buf |= <u64>load<u16>(c) << bits;
    bits += <u64>load<u8>(c, 2);
    store<u64>(out, buf);
    out += <usize>(bits >> 3);
    buf >>= bits & 56;
    bits &= 7;
    c = codesPtr + (<usize>load<u8>(p, 15) << 2);
    buf |= <u64>load<u16>(c) << bits;
    bits += <u64>load<u8>(c, 2);
    c = codesPtr + (<usize>load<u8>(p, 16) << 2);
    buf |= <u64>load<u16>(c) << bits;
    bits += <u64>load<u8>(c, 2);
    c = codesPtr + (<usize>load<u8>(p, 17) << 2);
    buf |= <u64>load<u16>(c) << bits;
    bits += <u64>load<u8>(c, 2);
    c = codesPtr + (<usize>load<u8>(p, 18) << 2);
    buf |= <u64>load<u16>(c) << bits;
    bits += <u64>load<u8>(c, 2);
    c = codesPtr + (<usize>load<u8>(p, 19) << 2);
    buf |= <u64>load<u16>(c) << bits;
    bits += <u64>load<u8>(c, 2);
    store<u64>(out, buf);
    out += <usize>(bits >> 3);
    buf >>= bits & 56;
    bits &= 7;
  }
  for (; p + 5 <= end; p += 5) {
    c = codesPtr + (<usize>load<u8>(p) << 2);
    buf |= <u64>load<u16>(c) << bits;
    bits += <u64>load<u8>(c, 2);
    c = codesPtr + (<usize>load<u8>(p, 1) << 2);
    buf |= <u64>load<u16>(c) << bits;
    bits += <u64>load<u8>(c, 2);
    c = codesPtr + (<usize>load<u8>(p, 2) << 2);
    buf |= <u64>load<u16>(c) << bits;
    bits += <u64>load<u8>(c, 2);
    c = codesPtr + (<usize>load<u8>(p, 3) << 2);
    buf |= <u64>load<u16>(c) << bits;
    bits += <u64>load<u8>(c, 2);
    c = codesPtr + (<usize>load<u8>(p, 4) << 2);
    buf |= <u64>load<u16>(c) << bits;
    bits += <u64>load<u8>(c, 2);
    store<u64>(out, buf);
    out += <usize>(bits >> 3);
    buf >>= bits & 56;
    bits &= 7;
  }
  for (; p < end; p++) {
    c = codesPtr + (<usize>load<u8>(p) << 2);
    buf |= <u64>load<u16>(c) << bits;
    bits += <u64>load<u8>(c, 2);
    store<u64>(out, buf);
    out += <usize>(bits >> 3);
    buf >>= bits & 56;
    bits &= 7;
  }
  if (bits > 0) {
    store<u8>(out, <u8>buf);
    out++;
  }
  return out;
}

/**
 * A bit buffer is refilled as the 8 bytes at p with bit 63 set (this sentinel) and shifted right
 * by the bits already used of the first byte: it then holds 56 or more bits below the sentinel,
 * enough for a round of 5 lookups (5 x 11), and the sentinel's leading zeros afterwards count the
 * bits used from p on (Huff0 keeps the same mark). A round uses at most 7 + 55 bits: p moves on by
 * at most 7 bytes.
 */
const SENTINEL: u64 = 0x8000000000000000;
/** Output bytes a round may touch: 5 lookups of up to 4 symbols, each stored as a u32. */
const ROUND_OUT: usize = 20;

/**
 * Decodes `n` symbols from segments of 2^segLog2 symbols at `srcPtr` (the bitstreams, `srcBytes`
 * long, segment k ending at offsetsPtr[k] bytes) with the tables at `tablePtr`
 * ({@link huffmanBuildTable}, 12 KiB) into `outPtr` (n bytes; nothing past them is written). The
 * memory must hold 8 readable bytes past srcPtr + srcBytes, and nothing further is read.
 * Segments are independent (Haugen's offset table; Huff0 decodes its four streams the same way):
 * whole segments go through three lanes decoded in one loop, so that their table lookups overlap
 * ({@link decodeLanes}); the last, partial one is decoded alone.
 * Returns 0, or -1 when a segment needs bits past its end, or the offsets decrease or point past
 * the bitstreams (corrupt input).
 */
export function huffmanDecode(srcPtr: usize, srcBytes: usize, offsetsPtr: usize, segLog2: u32, n: usize, tablePtr: usize, outPtr: usize): i32 {
  const seg: usize = <usize>1 << segLog2;
  const segments = (n + seg - 1) >> segLog2;
  // offsets in order and within the bitstreams: then every segment starts at or below srcEnd
  let last: usize = 0;
  for (let k: usize = 0; k < segments; k++) {
    const end = <usize>load<u32>(offsetsPtr + (k << 2));
    if (end < last || end > srcBytes) return -1;
    last = end;
  }
  const whole = n >> segLog2;
  let k: usize = 0;
  if (whole >= 3 && seg > ROUND_OUT) {
    if (!decodeLanes(srcPtr, srcPtr + srcBytes, offsetsPtr, whole, seg, tablePtr, outPtr)) return -1;
    k = whole;
  }
  for (; k < segments; k++) {
    const start = k == 0 ? srcPtr : srcPtr + <usize>load<u32>(offsetsPtr + ((k - 1) << 2));
    const end = srcPtr + <usize>load<u32>(offsetsPtr + (k << 2));
    if (!finishSegment(start, 0, end, outPtr + k * seg, outPtr + min<usize>(n, (k + 1) * seg), tablePtr)) return -1;
  }
  return 0;
}

/** The symbols of the table entry of the next 11 bits of `b`. */
// @ts-ignore: decorator
@inline function symbolsAt(tablePtr: usize, b: u64): u32 {
  return load<u32>(tablePtr + ((<usize>b & 0x7ff) << 2));
}

/**
 * The low byte of the entry's info: a shift by it (taken mod 64 by i64.shr_u) drops the entry's
 * bits; its bits 6..7 are the count of symbols - 1.
 */
// @ts-ignore: decorator
@inline function infoAt(tablePtr: usize, b: u64): u64 {
  return <u64>load<u8>(tablePtr + TABLE_INFO + ((<usize>b & 0x7ff) << 1));
}

/**
 * Segments 0 .. segments-1 (each of `seg` symbols) in three lanes: each lane decodes one segment
 * (bits from byte p, bit u on, ending at byte l; output from o up to e) and takes the next segment
 * when it is done, so the lanes stay busy whatever their segments' code lengths. A round refills
 * each lane's buffer and makes 5 lookups in each, interleaved. Rounds run while every lane has
 * ROUND_OUT bytes of its segment's output left (o <= m) and its next refill reads below
 * srcEnd + 8 (p <= srcEnd), with no other check: bits read past a segment's end only make it fail
 * at its end (p only grows). A lane that stops them finishes its segment alone
 * ({@link finishSegment}: near its end, or corrupt) and takes the next one; once none is left,
 * every lane finishes its own.
 */
function decodeLanes(src: usize, srcEnd: usize, offsetsPtr: usize, segments: usize, seg: usize, tablePtr: usize, out: usize): bool {
  let p0 = src, l0 = src + <usize>load<u32>(offsetsPtr), o0 = out, e0 = out + seg, m0 = e0 - ROUND_OUT, u0: u64 = 0;
  let p1 = l0, l1 = src + <usize>load<u32>(offsetsPtr, 4), o1 = e0, e1 = e0 + seg, m1 = e1 - ROUND_OUT, u1: u64 = 0;
  let p2 = l1, l2 = src + <usize>load<u32>(offsetsPtr, 8), o2 = e1, e2 = e1 + seg, m2 = e2 - ROUND_OUT, u2: u64 = 0;
  let next: usize = 3;
  while (true) {
    while (
      <i32>(o0 <= m0) & <i32>(p0 <= srcEnd) & <i32>(o1 <= m1) & <i32>(p1 <= srcEnd) & <i32>(o2 <= m2) & <i32>(p2 <= srcEnd)
    ) {
      let b0 = (load<u64>(p0) | SENTINEL) >> u0;
      let b1 = (load<u64>(p1) | SENTINEL) >> u1;
      let b2 = (load<u64>(p2) | SENTINEL) >> u2;
      // 5 lookups a lane, written out (Binaryen does not unroll the loop)
      let x: u32;
      let m: u64;
      x = symbolsAt(tablePtr, b0);
      m = infoAt(tablePtr, b0);
      store<u32>(o0, x);
      o0 += <usize>(m >> 6) + 1;
      b0 >>= m;
      x = symbolsAt(tablePtr, b1);
      m = infoAt(tablePtr, b1);
      store<u32>(o1, x);
      o1 += <usize>(m >> 6) + 1;
      b1 >>= m;
      x = symbolsAt(tablePtr, b2);
      m = infoAt(tablePtr, b2);
      store<u32>(o2, x);
      o2 += <usize>(m >> 6) + 1;
      b2 >>= m;
      x = symbolsAt(tablePtr, b0);
      m = infoAt(tablePtr, b0);
      store<u32>(o0, x);
      o0 += <usize>(m >> 6) + 1;
      b0 >>= m;
      x = symbolsAt(tablePtr, b1);
      m = infoAt(tablePtr, b1);
      store<u32>(o1, x);
      o1 += <usize>(m >> 6) + 1;
      b1 >>= m;
      x = symbolsAt(tablePtr, b2);
      m = infoAt(tablePtr, b2);
      store<u32>(o2, x);
      o2 += <usize>(m >> 6) + 1;
      b2 >>= m;
      x = symbolsAt(tablePtr, b0);
      m = infoAt(tablePtr, b0);
      store<u32>(o0, x);
      o0 += <usize>(m >> 6) + 1;
      b0 >>= m;
      x = symbolsAt(tablePtr, b1);
      m = infoAt(tablePtr, b1);
      store<u32>(o1, x);
      o1 += <usize>(m >> 6) + 1;
      b1 >>= m;
      x = symbolsAt(tablePtr, b2);
      m = infoAt(tablePtr, b2);
      store<u32>(o2, x);
      o2 += <usize>(m >> 6) + 1;
      b2 >>= m;
      x = symbolsAt(tablePtr, b0);
      m = infoAt(tablePtr, b0);
      store<u32>(o0, x);
      o0 += <usize>(m >> 6) + 1;
      b0 >>= m;
      x = symbolsAt(tablePtr, b1);
      m = infoAt(tablePtr, b1);
      store<u32>(o1, x);
      o1 += <usize>(m >> 6) + 1;
      b1 >>= m;
      x = symbolsAt(tablePtr, b2);
      m = infoAt(tablePtr, b2);
      store<u32>(o2, x);
      o2 += <usize>(m >> 6) + 1;
      b2 >>= m;
      x = symbolsAt(tablePtr, b0);
      m = infoAt(tablePtr, b0);
      store<u32>(o0, x);
      o0 += <usize>(m >> 6) + 1;
      b0 >>= m;
      x = symbolsAt(tablePtr, b1);
      m = infoAt(tablePtr, b1);
      store<u32>(o1, x);
      o1 += <usize>(m >> 6) + 1;
      b1 >>= m;
      x = symbolsAt(tablePtr, b2);
      m = infoAt(tablePtr, b2);
      store<u32>(o2, x);
      o2 += <usize>(m >> 6) + 1;
      b2 >>= m;
      let c = clz(b0);
      p0 += <usize>(c >> 3);
      u0 = c & 7;
      c = clz(b1);
      p1 += <usize>(c >> 3);
      u1 = c & 7;
      c = clz(b2);
      p2 += <usize>(c >> 3);
      u2 = c & 7;
    }
    let drained = false;
    if (o0 > m0 || p0 > srcEnd) {
      if (!finishSegment(p0, u0, l0, o0, e0, tablePtr)) return false;
      if (next < segments) {
        p0 = src + <usize>load<u32>(offsetsPtr + ((next - 1) << 2));
        l0 = src + <usize>load<u32>(offsetsPtr + (next << 2));
        o0 = out + next * seg;
        e0 = o0 + seg;
        m0 = e0 - ROUND_OUT;
        u0 = 0;
        next++;
      } else {
        // none left: the lane stays at its segment's end
        drained = true;
        p0 = l0;
        u0 = 0;
        o0 = e0;
      }
    }
    if (o1 > m1 || p1 > srcEnd) {
      if (!finishSegment(p1, u1, l1, o1, e1, tablePtr)) return false;
      if (next < segments) {
        p1 = src + <usize>load<u32>(offsetsPtr + ((next - 1) << 2));
        l1 = src + <usize>load<u32>(offsetsPtr + (next << 2));
        o1 = out + next * seg;
        e1 = o1 + seg;
        m1 = e1 - ROUND_OUT;
        u1 = 0;
        next++;
      } else {
        // none left: the lane stays at its segment's end
        drained = true;
        p1 = l1;
        u1 = 0;
        o1 = e1;
      }
    }
    if (o2 > m2 || p2 > srcEnd) {
      if (!finishSegment(p2, u2, l2, o2, e2, tablePtr)) return false;
      if (next < segments) {
        p2 = src + <usize>load<u32>(offsetsPtr + ((next - 1) << 2));
        l2 = src + <usize>load<u32>(offsetsPtr + (next << 2));
        o2 = out + next * seg;
        e2 = o2 + seg;
        m2 = e2 - ROUND_OUT;
        u2 = 0;
        next++;
      } else {
        // none left: the lane stays at its segment's end
        drained = true;
        p2 = l2;
        u2 = 0;
        o2 = e2;
      }
    }
    if (drained) break;
  }
  // a drained lane sits at its segment's end; the others finish theirs
  return (
    finishSegment(p0, u0, l0, o0, e0, tablePtr) &&
    finishSegment(p1, u1, l1, o1, e1, tablePtr) &&
    finishSegment(p2, u2, l2, o2, e2, tablePtr)
  );
}

/**
 * The rest of a segment, alone: its output from o to outEnd, its bits from byte p, bit u on, to
 * `limit` (its end). Rounds of 5 lookups while 20 or more symbols remain, then one lookup a
 * refill: whole entries while 4 or more remain, then the first symbol of an entry alone. Every
 * refill first checks that p has not passed `limit` (so reads stay below limit + 8). Returns true
 * when the symbols ended within the segment's bits.
 */
function finishSegment(p: usize, u: u64, limit: usize, o: usize, outEnd: usize, tablePtr: usize): bool {
  while (outEnd - o >= ROUND_OUT) {
    if (p > limit) return false;
    let b = (load<u64>(p) | SENTINEL) >> u;
    let m: u64;
    m = infoAt(tablePtr, b);
    store<u32>(o, symbolsAt(tablePtr, b));
    o += <usize>(m >> 6) + 1;
    b >>= m;
    m = infoAt(tablePtr, b);
    store<u32>(o, symbolsAt(tablePtr, b));
    o += <usize>(m >> 6) + 1;
    b >>= m;
    m = infoAt(tablePtr, b);
    store<u32>(o, symbolsAt(tablePtr, b));
    o += <usize>(m >> 6) + 1;
    b >>= m;
    m = infoAt(tablePtr, b);
    store<u32>(o, symbolsAt(tablePtr, b));
    o += <usize>(m >> 6) + 1;
    b >>= m;
    m = infoAt(tablePtr, b);
    store<u32>(o, symbolsAt(tablePtr, b));
    o += <usize>(m >> 6) + 1;
    b >>= m;
    const c = clz(b);
    p += <usize>(c >> 3);
    u = c & 7;
  }
  while (o < outEnd) {
    if (p > limit) return false;
    const b = load<u64>(p) >> u;
    const info = <u32>load<u16>(tablePtr + ((<usize>b & 0x7ff) << 1), TABLE_INFO);
    if (outEnd - o >= 4) {
      store<u32>(o, symbolsAt(tablePtr, b));
      o += <usize>((info >> 6) & 3) + 1;
      u += <u64>(info & 63);
    } else {
      store<u8>(o, <u8>symbolsAt(tablePtr, b));
      o++;
      u += <u64>(info >> 8);
    }
    p += <usize>(u >> 3);
    u &= 7;
  }
  // bit position p * 8 + u at most the segment's end, limit * 8
  return p < limit || (p == limit && u == 0);
}
