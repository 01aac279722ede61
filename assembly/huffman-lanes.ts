// Canonical Huffman coding of byte streams, mode 3 (docs/format.md, "Mode 3: interleaved
// lanes"): each segment's symbols split over 32 lanes whose 16-bit units share one stream, in
// the order a decoder that steps the lanes in lockstep (a GPU subgroup) reads them, after
// DietGPU's interleaved rANS lanes (Johnson, facebookresearch/dietgpu, 2021). The codes and the
// decode tables are mode 2's (assembly/huffman.ts); the stream header is TypeScript
// (ts/codec/huffman.ts). These kernels allocate nothing and take pointers.
//
// Quad q of a segment (symbols 4q .. 4q + 3) belongs to lane q mod 32; lane l's t-th symbol is
// symbol 128 (t >> 2) + 4 l + (t & 3). Each lane's codes are cut into 16-bit units, stored in the
// order a decoder that steps the 32 lanes in lockstep reads them: at step t, lanes in ascending
// order, a lane reads its next unit only when its next code runs past the bits it holds.
//
// Scalar code, the same in both builds (build/parle.wasm and build/parle-scalar.wasm); tests
// (test/huffman-lanes.test.ts) compare both with the plain reference in
// test/support/codec-reference.ts.

import { TABLE_INFO } from './huffman';

/** Steps of a mode-3 segment of c symbols: lane 0's symbol count (4 a group of 128, then the rest's first quad). */
// @ts-ignore: decorator
@inline function laneSteps(c: usize): usize {
  return ((c >> 7) << 2) + min<usize>(4, c & 127);
}

/**
 * Huffman-encodes `n` bytes at `srcPtr` as mode-3 segments of 2^segLog2 symbols with the codes at
 * `codesPtr` ({@link huffmanBuildCodes}) at `outPtr`: each segment's units (u16 little-endian) in
 * the order the lanes read them, segment k ending at offsetsPtr[k] (u32, bytes from outPtr).
 * Writes exactly the returned bytes (every byte of each segment, no slack past them).
 * `scratchPtr`: 3 x 2^segLog2 / 2 + 640 bytes ({@link lanesScratchBytes}; 6784 at g = 12),
 * 8-byte aligned: each step's mask of the lanes that read a unit, each lane's bits. Every symbol must have a code. Returns the bytes written: a segment of B bits
 * takes at most ceil(B / 8) + 64.
 */
export function huffmanEncodeLanes(srcPtr: usize, n: usize, codesPtr: usize, segLog2: u32, outPtr: usize, offsetsPtr: usize, scratchPtr: usize): f64 {
  const seg: usize = <usize>1 << segLog2;
  let out = outPtr;
  let k: usize = 0;
  for (let start: usize = 0; start < n; start += seg, k++) {
    out = encodeLaneSegment(srcPtr + start, min<usize>(n - start, seg), codesPtr, out, scratchPtr, laneBytes(segLog2));
    store<u32>(offsetsPtr + (k << 2), <u32>(out - outPtr));
  }
  return <f64>(out - outPtr);
}

/**
 * The bytes {@link huffmanEncodeLanes} writes for the `n` bytes at `srcPtr` with the codes at
 * `codesPtr`, without writing them: per segment of 2^segLog2 symbols, 2 bytes for each of its
 * lanes' ceil(B / 16) units (B: the lane's code bits). One pass of lookups; what a caller asks
 * before coding into a room that the worst case (64 bytes a segment) may pass.
 */
export function huffmanLanesBytes(srcPtr: usize, n: usize, codesPtr: usize, segLog2: u32): f64 {
  const seg: usize = <usize>1 << segLog2;
  let total: u64 = 0;
  for (let start: usize = 0; start < n; start += seg) {
    const c = min<usize>(n - start, seg);
    for (let l: usize = 0; l < 32; l++) {
      let bits: u32 = 0;
      for (let q = l << 2; q < c; q += 128) {
        const end = min<usize>(q + 4, c);
        for (let i = q; i < end; i++) bits += load<u32>(codesPtr + (<usize>load<u8>(srcPtr + start + i) << 2)) >> 16;
      }
      total += <u64>((bits + 15) >> 4) << 1;
    }
  }
  return <f64>total;
}

/** Bytes of one lane's bits in the encoder's scratch: 2^segLog2 / 32 codes of up to 11 bits, and 16 bytes for the 8-byte stores. */
// @ts-ignore: decorator
@inline function laneBytes(segLog2: u32): usize {
  return ((<usize>11 << segLog2) >> 8) + 16;
}

/** Bytes of scratch {@link huffmanEncodeLanes} needs for segments of 2^segLog2 symbols (ts/cpu/wasm.ts has its twin). */
// @ts-ignore: decorator
@inline function lanesScratchBytes(segLog2: u32): usize {
  return (laneSteps(<usize>1 << segLog2) << 2) + 128 + 32 * laneBytes(segLog2);
}

/**
 * One mode-3 segment of the c symbols at `src`, written at `out`; returns its end. One pass over
 * each lane's symbols runs its count of held bits a (the decoder reads a unit when a code's
 * length exceeds a), marks the lane in the masks of the steps that read, and writes the lane's
 * bits (its codes concatenated, a 64-bit writer flushed each quad) to its place in the scratch.
 * Then the steps in order, the lanes of each step's mask in ascending order, each take the next
 * 16 bits of its lane's bits: the units in the order the lanes read them.
 */
function encodeLaneSegment(src: usize, c: usize, codesPtr: usize, out: usize, scratch: usize, laneSize: usize): usize {
  const steps = laneSteps(c);
  const masks = scratch;
  // each lane's next unit to write, then the lanes' bits
  const next = scratch + (steps << 2);
  const lanes = next + 128;
  memory.fill(masks, 0, steps << 2);
  for (let l: u32 = 0; l < 32; l++) {
    let a: u32 = 0;
    let buf: u64 = 0;
    let bits: u64 = 0;
    let w = lanes + <usize>l * laneSize;
    store<u32>(next + (<usize>l << 2), <u32>w);
    for (let q = <usize>l << 2, m = masks; q < c; q += 128, m += 16) {
      const end = min<usize>(q + 4, c);
      const quad = end - q == 4 ? load<u32>(src + q) : 0;
      for (let i = q, mi = m; i < end; i++, mi += 4) {
        const symbol = end - q == 4 ? (quad >> (<u32>(i - q) << 3)) & 255 : <u32>load<u8>(src + i);
        const code = load<u32>(codesPtr + (<usize>symbol << 2));
        const len = code >> 16;
        const need = <u32>(len > a);
        store<u32>(mi, load<u32>(mi) | (need << l));
        a += (need << 4) - len;
        buf |= <u64>(code & 0xffff) << bits;
        bits += <u64>len;
      }
      store<u64>(w, buf);
      w += <usize>(bits >> 3);
      buf >>= bits & 56;
      bits &= 7;
    }
    // the last byte's bits and zeros: a lane's last unit is zero-padded
    store<u64>(w, buf);
  }
  let o = out;
  for (let t: usize = 0; t < steps; t++) {
    let m = load<u32>(masks + (t << 2));
    while (m != 0) {
      const r = next + (<usize>ctz<u32>(m) << 2);
      m &= m - 1;
      const p = <usize>load<u32>(r);
      store<u16>(o, load<u16>(p));
      store<u32>(r, <u32>(p + 2));
      o += 2;
    }
  }
  return o;
}

/**
 * Decodes `n` symbols of mode-3 segments of 2^segLog2 symbols at `srcPtr` (`srcBytes` long,
 * segment k ending at offsetsPtr[k] bytes, u32) with the tables at `tablePtr`
 * ({@link huffmanBuildTable}, either kind: it reads only the first symbol of an entry and its
 * length) into `outPtr`: exactly n bytes, nothing past them. Reads nothing outside the segments
 * (no slack needed past srcPtr + srcBytes) whatever the input. Returns 0, or -1 for corrupt
 * input: offsets decreasing or past srcBytes, a segment of an odd byte length, a segment that
 * reads past its units or leaves units unread.
 */
export function huffmanDecodeLanes(srcPtr: usize, srcBytes: usize, offsetsPtr: usize, segLog2: u32, n: usize, tablePtr: usize, outPtr: usize): i32 {
  const seg: usize = <usize>1 << segLog2;
  const segments = (n + seg - 1) >> segLog2;
  let last: usize = 0;
  for (let k: usize = 0; k < segments; k++) {
    const end = <usize>load<u32>(offsetsPtr + (k << 2));
    if (end < last || end > srcBytes || ((end - last) & 1) != 0) return -1;
    last = end;
  }
  let start: usize = 0;
  for (let k: usize = 0; k < segments; k++) {
    const end = <usize>load<u32>(offsetsPtr + (k << 2));
    const from = k << segLog2;
    if (!decodeLaneSegment(srcPtr + start, srcPtr + end, min<usize>(n - from, seg), tablePtr, outPtr + from)) return -1;
    start = end;
  }
  return 0;
}

/** The place of the next unit in the segment {@link decodeLaneSegment} decodes (its lanes share it). */
let lanesAt: usize = 0;
/** The place of that segment's last unit. */
let lanesLast: usize = 0;

/**
 * One step of one lane of {@link decodeLaneSegment}: the lane's state `s` (its held bits below a
 * sentinel bit at position a, the count held; 1 = none) looked up (the sentinel and zeros above
 * the held bits change no code that fits in them); a unit read at {@link lanesAt} when that code
 * is longer than a (x = s + (unit + 0xffff) << a: the unit above the held bits, the sentinel moved
 * 16 up); the symbol from the lookup of x, stored at `o`; returns the lane's next state. The unit
 * is loaded from min(lanesAt, lanesLast): a corrupt segment that runs past its end reads its last
 * unit again (in bounds) and fails at the end, where lanesAt must be exactly its end.
 */
// @ts-ignore: decorator
@inline function laneStep(s: u32, tablePtr: usize, info: usize, o: usize): u32 {
  const need = ((<u32>load<u16>(info + (<usize>(s & 0x7ff) << 1)) >> 8) & 15) + clz(s) > 31;
  const x = select<u32>(s + ((<u32>load<u16>(min<usize>(lanesAt, lanesLast)) + 0xffff) << (31 - clz(s))), s, need);
  lanesAt += <usize>need << 1;
  const j = <usize>(x & 0x7ff);
  store<u8>(o, load<u8>(tablePtr + (j << 2)));
  return x >> ((<u32>load<u16>(info + (j << 1)) >> 8) & 15);
}

/**
 * One mode-3 segment of c symbols from the units in [p, end) to `out`, each of the 32 lanes'
 * state in one local (locals cannot be indexed, so the 32 lanes of a step are written out, a
 * {@link laneStep} each). Whether a lane reads a unit is decided from its held bits alone, so the
 * units' place, the one thing the lanes share, advances by an add a lane and the lanes' lookups
 * overlap.
 */
function decodeLaneSegment(p: usize, end: usize, c: usize, tablePtr: usize, out: usize): bool {
  // a segment of c >= 1 symbols reads at least one unit (lane 0's first code)
  if (p >= end) return false;
  lanesAt = p;
  lanesLast = end - 2;
  const info = tablePtr + TABLE_INFO;
  let s0: u32 = 1, s1: u32 = 1, s2: u32 = 1, s3: u32 = 1, s4: u32 = 1, s5: u32 = 1, s6: u32 = 1, s7: u32 = 1;
  let s8: u32 = 1, s9: u32 = 1, s10: u32 = 1, s11: u32 = 1, s12: u32 = 1, s13: u32 = 1, s14: u32 = 1, s15: u32 = 1;
  let s16: u32 = 1, s17: u32 = 1, s18: u32 = 1, s19: u32 = 1, s20: u32 = 1, s21: u32 = 1, s22: u32 = 1, s23: u32 = 1;
  let s24: u32 = 1, s25: u32 = 1, s26: u32 = 1, s27: u32 = 1, s28: u32 = 1, s29: u32 = 1, s30: u32 = 1, s31: u32 = 1;
  // step t: symbol t & 3 of quad group t >> 2 (lane l's quad is group x 32 + l); every step
  // decodes lane 0, lane l only while 4 l < rem (every lane but in the last group of a short segment)
  const steps = laneSteps(c);
  for (let t: usize = 0; t < steps; t++) {
    const base = ((t >> 2) << 7) + (t & 3);
    const rem = c - base;
    const o = out + base;
    s0 = laneStep(s0, tablePtr, info, o);
    if (rem > 4) s1 = laneStep(s1, tablePtr, info, o + 4);
    if (rem > 8) s2 = laneStep(s2, tablePtr, info, o + 8);
    if (rem > 12) s3 = laneStep(s3, tablePtr, info, o + 12);
    if (rem > 16) s4 = laneStep(s4, tablePtr, info, o + 16);
    if (rem > 20) s5 = laneStep(s5, tablePtr, info, o + 20);
    if (rem > 24) s6 = laneStep(s6, tablePtr, info, o + 24);
    if (rem > 28) s7 = laneStep(s7, tablePtr, info, o + 28);
    if (rem > 32) s8 = laneStep(s8, tablePtr, info, o + 32);
    if (rem > 36) s9 = laneStep(s9, tablePtr, info, o + 36);
    if (rem > 40) s10 = laneStep(s10, tablePtr, info, o + 40);
    if (rem > 44) s11 = laneStep(s11, tablePtr, info, o + 44);
    if (rem > 48) s12 = laneStep(s12, tablePtr, info, o + 48);
    if (rem > 52) s13 = laneStep(s13, tablePtr, info, o + 52);
    if (rem > 56) s14 = laneStep(s14, tablePtr, info, o + 56);
    if (rem > 60) s15 = laneStep(s15, tablePtr, info, o + 60);
    if (rem > 64) s16 = laneStep(s16, tablePtr, info, o + 64);
    if (rem > 68) s17 = laneStep(s17, tablePtr, info, o + 68);
    if (rem > 72) s18 = laneStep(s18, tablePtr, info, o + 72);
    if (rem > 76) s19 = laneStep(s19, tablePtr, info, o + 76);
    if (rem > 80) s20 = laneStep(s20, tablePtr, info, o + 80);
    if (rem > 84) s21 = laneStep(s21, tablePtr, info, o + 84);
    if (rem > 88) s22 = laneStep(s22, tablePtr, info, o + 88);
    if (rem > 92) s23 = laneStep(s23, tablePtr, info, o + 92);
    if (rem > 96) s24 = laneStep(s24, tablePtr, info, o + 96);
    if (rem > 100) s25 = laneStep(s25, tablePtr, info, o + 100);
    if (rem > 104) s26 = laneStep(s26, tablePtr, info, o + 104);
    if (rem > 108) s27 = laneStep(s27, tablePtr, info, o + 108);
    if (rem > 112) s28 = laneStep(s28, tablePtr, info, o + 112);
    if (rem > 116) s29 = laneStep(s29, tablePtr, info, o + 116);
    if (rem > 120) s30 = laneStep(s30, tablePtr, info, o + 120);
    if (rem > 124) s31 = laneStep(s31, tablePtr, info, o + 124);
  }
  return lanesAt == end;
}
