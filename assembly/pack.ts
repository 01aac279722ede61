// The `pack` stage (docs/format.md, "Pack streams"): frame of reference with patched exceptions,
// after Lemire & Boytsov's SIMD-BP128 and PFOR ("Decoding billions of integers per second
// through vectorization", 2015). A stream of n elements of w bytes (w = 1, 2 or 4) is cut into
// blocks of 256 elements (the last shorter); each block is
//
//   u8  b | zigzag << 7   bit width b (0..8w; bit 6 = 0); zigzag: the values are read as
//                          w-byte two's complement and zigzagged ((s << 1) ^ (s >> 31)) first
//   u8  e                  exceptions (0..min(255, block length))
//   u8  h                  only when e > 0: bits of each exception's high part (1..8w - b)
//   w   reference          the block's minimum (of the zigzagged values when zigzag), little-endian
//   16 ceil(m b / 32)      the values less the reference, low b bits each, in 4 lanes of u32
//                          words (SIMD-BP128's vertical layout): element i is lane i mod 4,
//                          slot i div 4; lane j's slots are a bit stream (least significant bit
//                          first) whose word k lies at byte 16 k + 4 j; m = ceil(length / 4)
//   e                      exception positions in the block, strictly increasing
//   ceil(e h / 8)          exceptions' high parts ((value - reference) >> b), h bits each, LSB first
//
// so a decoder unpacks 4 elements with one v128 load, shift, mask and add (elements 4i..4i+3
// are slot i of the four lanes), patches the exceptions, and narrows to w bytes. The encoder
// picks, per block, the zigzag flag and b that make the block smallest (exceptions included).
// Kernels allocate nothing: `scratchPtr` is PACK_SCRATCH_BYTES (8192) of scratch.

/** Elements a block holds (the last block of a stream may hold fewer). */
const BLOCK: u32 = 256;

// the plan of the block last passed to planBlock (globals are per instance: per worker)
let planB: u32 = 0;
let planZz: u32 = 0;
let planE: u32 = 0;
let planH: u32 = 0;
let planRef: u32 = 0;
let planBytes: u32 = 0;

/** Zigzag of a w-byte two's complement value (v holds it in its low 8w bits). */
// @ts-ignore: decorator
@inline function zigzag(v: u32, width: u32): u32 {
  const shift = 32 - 8 * width;
  const s = <i32>(v << shift) >> shift;
  return <u32>((s << 1) ^ (s >> 31));
}

// @ts-ignore: decorator
@inline function bitLength(x: u32): u32 {
  return 32 - clz<u32>(x);
}

// @ts-ignore: decorator
@inline function lowMask(b: u32): u32 {
  return b >= 32 ? 0xffffffff : (<u32>1 << b) - 1;
}

/** Bytes of a block of `c` elements at bit width b with e exceptions of h bits. */
// @ts-ignore: decorator
@inline function blockBytes(c: u32, width: u32, b: u32, e: u32, h: u32): u32 {
  const m = (c + 3) >> 2;
  const packed = 16 * ((m * b + 31) >> 5);
  return 2 + width + packed + (e > 0 ? 1 + e + ((e * h + 7) >> 3) : 0);
}

/** Bytes of scratch {@link planBlock} needs for its histograms: 4 interleaved copies of 2 x 33 u32. */
const HIST_BYTES: usize = 4 * 2 * 33 * 4;

/**
 * Plans the block of `c` values (u32, low 8w bits, at `vals`): the domain (plain or zigzag),
 * reference, b, exceptions and bytes, into the plan globals. `hist`: {@link HIST_BYTES} of
 * scratch (four copies of the bit-length histograms, element i counted in copy i mod 4, so that
 * equal lengths in a row do not wait on one counter's store).
 */
function planBlock(vals: usize, c: u32, width: u32, hist: usize): void {
  let min0: u32 = 0xffffffff;
  let min1: u32 = 0xffffffff;
  let i: u32 = 0;
  if (ASC_FEATURE_SIMD) {
    const shift = 32 - 8 * width;
    let m0 = i32x4.splat(-1);
    let m1 = i32x4.splat(-1);
    for (; i + 4 <= c; i += 4) {
      const v = v128.load(vals + 4 * i);
      const s = i32x4.shr_s(i32x4.shl(v, shift), shift);
      m0 = i32x4.min_u(m0, v);
      m1 = i32x4.min_u(m1, v128.xor(i32x4.shl(s, 1), i32x4.shr_s(s, 31)));
    }
    min0 = min<u32>(min<u32>(i32x4.extract_lane(m0, 0), i32x4.extract_lane(m0, 1)), min<u32>(i32x4.extract_lane(m0, 2), i32x4.extract_lane(m0, 3)));
    min1 = min<u32>(min<u32>(i32x4.extract_lane(m1, 0), i32x4.extract_lane(m1, 1)), min<u32>(i32x4.extract_lane(m1, 2), i32x4.extract_lane(m1, 3)));
  }
  for (; i < c; i++) {
    const v = load<u32>(vals + 4 * i);
    const z = zigzag(v, width);
    min0 = v < min0 ? v : min0;
    min1 = z < min1 ? z : min1;
  }
  memory.fill(hist, 0, HIST_BYTES);
  for (i = 0; i < c; i++) {
    const v = load<u32>(vals + 4 * i);
    const z = zigzag(v, width);
    const h = hist + 264 * (i & 3);
    const k0 = h + 4 * bitLength(v - min0);
    const k1 = h + 132 + 4 * bitLength(z - min1);
    store<u32>(k0, load<u32>(k0) + 1);
    store<u32>(k1, load<u32>(k1) + 1);
  }
  for (let k: usize = 0; k < 66; k++) {
    const at = hist + 4 * k;
    store<u32>(at, load<u32>(at) + load<u32>(at + 264) + load<u32>(at + 528) + load<u32>(at + 792));
  }
  planBytes = 0xffffffff;
  for (let d: u32 = 0; d < 2; d++) {
    const H = hist + 132 * d;
    let maxBits: u32 = 0;
    for (let k: u32 = 1; k <= 32; k++) if (load<u32>(H + 4 * k) != 0) maxBits = k;
    // b from maxBits down: exceptions (values of more than b bits) only grow
    let e: u32 = 0;
    for (let b: i32 = <i32>maxBits; b >= 0; b--) {
      if (b < <i32>maxBits) e += load<u32>(H + 4 * (b + 1));
      if (e > 255) break;
      const h = maxBits - <u32>b;
      const bytes = blockBytes(c, width, <u32>b, e, h);
      if (bytes < planBytes) {
        planBytes = bytes;
        planB = <u32>b;
        planZz = d;
        planE = e;
        planH = e > 0 ? h : 0;
        planRef = d == 0 ? min0 : min1;
      }
    }
  }
}

/** Reads `c` elements of `width` bytes at `src` into u32 at `vals`. */
// @ts-ignore: decorator
@inline function loadBlock(src: usize, c: u32, width: u32, vals: usize): void {
  if (width == 1) for (let i: u32 = 0; i < c; i++) store<u32>(vals + 4 * i, <u32>load<u8>(src + i));
  else if (width == 2) for (let i: u32 = 0; i < c; i++) store<u32>(vals + 4 * i, <u32>load<u16>(src + 2 * i));
  else memory.copy(vals, src, 4 * c);
}

/**
 * Packs `n` elements of `width` bytes at `inPtr` into a pack stream at `outPtr`, writing at most
 * `capacity` bytes. Returns the stream's bytes, or -1 when it would not fit in `capacity`
 * (nothing is written past outPtr + capacity).
 */
export function packEncode(inPtr: usize, n: u32, width: u32, outPtr: usize, capacity: f64, scratchPtr: usize): f64 {
  const vals = scratchPtr;
  const hist = scratchPtr + 1024;
  let at: f64 = 0;
  for (let start: u32 = 0; start < n; start += BLOCK) {
    const c = min<u32>(BLOCK, n - start);
    loadBlock(inPtr + <usize>start * width, c, width, vals);
    planBlock(vals, c, width, hist);
    if (at + <f64>planBytes > capacity) return -1;
    let p = outPtr + <usize>at;
    at += <f64>planBytes;
    const b = planB;
    const e = planE;
    const h = planH;
    const ref = planRef;
    if (planZz != 0) for (let i: u32 = 0; i < c; i++) store<u32>(vals + 4 * i, zigzag(load<u32>(vals + 4 * i), width));
    store<u8>(p, <u8>(b | (planZz << 7)));
    store<u8>(p + 1, <u8>e);
    p += 2;
    if (e > 0) store<u8>(p++, <u8>h);
    if (width == 1) store<u8>(p, <u8>ref);
    else if (width == 2) store<u16>(p, <u16>ref);
    else store<u32>(p, ref);
    p += width;
    const mask = lowMask(b);
    const m = (c + 3) >> 2;
    const words = (m * b + 31) >> 5;
    if (b > 0) {
      if (ASC_FEATURE_SIMD) {
        // slots past c hold the reference: they pack as 0
        for (let i: u32 = c; i < 4 * m; i++) store<u32>(vals + 4 * i, ref);
        const mv = i32x4.splat(mask);
        const rv = i32x4.splat(ref);
        let acc = i32x4.splat(0);
        let bits: u32 = 0;
        let k: u32 = 0;
        for (let i: u32 = 0; i < m; i++) {
          const u = v128.and(i32x4.sub(v128.load(vals + 16 * i), rv), mv);
          acc = v128.or(acc, i32x4.shl(u, bits));
          bits += b;
          if (bits >= 32) {
            v128.store(p + 16 * k, acc);
            k++;
            bits -= 32;
            // the high bits of u that did not fit (b - bits of them went into the word)
            acc = bits > 0 ? i32x4.shr_u(u, b - bits) : i32x4.splat(0);
          }
        }
        if (bits > 0) v128.store(p + 16 * k, acc);
      } else {
        for (let j: u32 = 0; j < 4; j++) {
          let acc: u64 = 0;
          let bits: u32 = 0;
          let k: u32 = 0;
          for (let i: u32 = 0; i < m; i++) {
            const idx: u32 = 4 * i + j;
            const u = idx < c ? (load<u32>(vals + 4 * idx) - ref) & mask : 0;
            acc |= <u64>u << bits;
            bits += b;
            if (bits >= 32) {
              store<u32>(p + 16 * k + 4 * j, <u32>acc);
              acc >>= 32;
              bits -= 32;
              k++;
            }
          }
          if (bits > 0) store<u32>(p + 16 * k + 4 * j, <u32>acc);
        }
      }
    }
    p += 16 * words;
    if (e > 0) {
      const highs = p + e;
      let acc: u64 = 0;
      let bits: u32 = 0;
      let q = highs;
      for (let i: u32 = 0; i < c; i++) {
        const high = (load<u32>(vals + 4 * i) - ref) >>> b; // b < 32 when there are exceptions
        if (high != 0) {
          store<u8>(p++, <u8>i);
          acc |= <u64>high << bits;
          bits += h;
          while (bits >= 8) {
            store<u8>(q++, <u8>acc);
            acc >>= 8;
            bits -= 8;
          }
        }
      }
      if (bits > 0) store<u8>(q, <u8>acc);
    }
  }
  return at;
}

/** Bytes {@link packEncode} would write for these elements (exact). */
export function packBytes(inPtr: usize, n: u32, width: u32, scratchPtr: usize): f64 {
  let total: f64 = 0;
  for (let start: u32 = 0; start < n; start += BLOCK) {
    const c = min<u32>(BLOCK, n - start);
    loadBlock(inPtr + <usize>start * width, c, width, scratchPtr);
    planBlock(scratchPtr, c, width, scratchPtr + 1024);
    total += <f64>planBytes;
  }
  return total;
}

/**
 * The chooser's pack sizes of `n` elements of `width` bytes, added to `outPtr` (2 f64): pack
 * bytes of the elements, then of their deltas (d[0] = x[0] within this call), exact but for a
 * floor: a block of one value (b = 0) counts as if b were 1, as the Huffman estimate counts a
 * sample of one symbol at 1 bit a symbol (the sample is of ranges: a label volume's chunk whose
 * ranges held only background estimated 2 KiB and packed to 30-78 KB). (Byte planes
 * are not sized: shuffle+pack is a fixed codec only, which the chooser's sample would cost w
 * times as much to size and which rarely beat both.)
 */
export function packStats(inPtr: usize, n: u32, width: u32, outPtr: usize, scratchPtr: usize): void {
  const vals = scratchPtr;
  const deltas = scratchPtr + 1024;
  const hist = scratchPtr + 2048; // .. 2048 + HIST_BYTES
  const wmask = lowMask(8 * width);
  let prev: u32 = 0;
  for (let start: u32 = 0; start < n; start += BLOCK) {
    const c = min<u32>(BLOCK, n - start);
    loadBlock(inPtr + <usize>start * width, c, width, vals);
    for (let i: u32 = 0; i < c; i++) {
      const v = load<u32>(vals + 4 * i);
      store<u32>(deltas + 4 * i, (v - prev) & wmask);
      prev = v;
    }
    const floor = blockBytes(c, width, 1, 0, 0);
    planBlock(vals, c, width, hist);
    store<f64>(outPtr, load<f64>(outPtr) + <f64>max<u32>(planBytes, floor));
    planBlock(deltas, c, width, hist);
    store<f64>(outPtr + 8, load<f64>(outPtr + 8) + <f64>max<u32>(planBytes, floor));
  }
}

/** Unpacks `m` slots of the four lanes at `src` (b bits each) plus `ref` into u32 at `vals`. */
// @ts-ignore: decorator
@inline function unpackLanes(src: usize, m: u32, b: u32, ref: u32, vals: usize): void {
  const mask = lowMask(b);
  if (b == 0) {
    if (ASC_FEATURE_SIMD) {
      const r = i32x4.splat(ref);
      for (let i: u32 = 0; i < m; i++) v128.store(vals + 16 * i, r);
    } else {
      for (let i: u32 = 0; i < 4 * m; i++) store<u32>(vals + 4 * i, ref);
    }
    return;
  }
  if (ASC_FEATURE_SIMD) {
    const mv = i32x4.splat(mask);
    const rv = i32x4.splat(ref);
    let bit: u32 = 0;
    for (let i: u32 = 0; i < m; i++) {
      const w = src + 16 * (bit >>> 5);
      const off = bit & 31;
      let v = i32x4.shr_u(v128.load(w), off);
      if (off + b > 32) v = v128.or(v, i32x4.shl(v128.load(w + 16), 32 - off));
      v128.store(vals + 16 * i, i32x4.add(v128.and(v, mv), rv));
      bit += b;
    }
  } else {
    for (let j: u32 = 0; j < 4; j++) {
      let bit: u32 = 0;
      for (let i: u32 = 0; i < m; i++) {
        const w = src + 16 * (bit >>> 5) + 4 * j;
        const off = bit & 31;
        let v = load<u32>(w) >>> off;
        if (off + b > 32) v |= load<u32>(w + 16) << (32 - off);
        store<u32>(vals + 16 * i + 4 * j, (v & mask) + ref);
        bit += b;
      }
    }
  }
}

/** Slot i of the four lanes at `src` (b bits each, 0 < b <= 32): masked by `mv`, plus `rv`, unzigzagged when `zz`. */
// @ts-ignore: decorator
@inline function slot4(src: usize, i: u32, b: u32, mv: v128, rv: v128, zz: bool): v128 {
  const bit = i * b;
  const w = src + 16 * (bit >>> 5);
  const off = bit & 31;
  let v = i32x4.shr_u(v128.load(w), off);
  if (off + b > 32) v = v128.or(v, i32x4.shl(v128.load(w + 16), 32 - off));
  v = i32x4.add(v128.and(v, mv), rv);
  if (zz) v = v128.xor(i32x4.shr_u(v, 1), i32x4.neg(v128.and(v, i32x4.splat(1))));
  return v;
}

/**
 * A full block without exceptions straight to its 256 elements at `dst` (SIMD build): slots
 * unpacked, unzigzagged and narrowed in registers, 16 bytes a store, no scratch.
 */
// @ts-ignore: decorator
@inline function unpackFullBlock(src: usize, b: u32, ref: u32, zz: bool, width: u32, dst: usize): void {
  const mv = i32x4.splat(lowMask(b));
  const rv = i32x4.splat(ref);
  if (width == 4) {
    for (let i: u32 = 0; i < 64; i++) v128.store(dst + 16 * i, slot4(src, i, b, mv, rv, zz));
  } else if (width == 2) {
    const mw = i32x4.splat(0xffff);
    for (let i: u32 = 0; i < 64; i += 2) {
      const a = v128.and(slot4(src, i, b, mv, rv, zz), mw);
      const c = v128.and(slot4(src, i + 1, b, mv, rv, zz), mw);
      v128.store(dst + 8 * i, i16x8.narrow_i32x4_u(a, c));
    }
  } else {
    const mw = i32x4.splat(0xff);
    for (let i: u32 = 0; i < 64; i += 4) {
      const a = v128.and(slot4(src, i, b, mv, rv, zz), mw);
      const c = v128.and(slot4(src, i + 1, b, mv, rv, zz), mw);
      const d = v128.and(slot4(src, i + 2, b, mv, rv, zz), mw);
      const f = v128.and(slot4(src, i + 3, b, mv, rv, zz), mw);
      v128.store(dst + 4 * i, i8x16.narrow_i16x8_u(i16x8.narrow_i32x4_u(a, c), i16x8.narrow_i32x4_u(d, f)));
    }
  }
}

/** Undoes the zigzag (when `zz`) of `c` u32 at `vals` and stores their low `width` bytes at `dst`. */
// @ts-ignore: decorator
@inline function storeBlock(vals: usize, c: u32, width: u32, zz: bool, dst: usize): void {
  let i: u32 = 0;
  if (ASC_FEATURE_SIMD) {
    const one = i32x4.splat(1);
    if (width == 4) {
      for (; i + 4 <= c; i += 4) {
        let v = v128.load(vals + 4 * i);
        if (zz) v = v128.xor(i32x4.shr_u(v, 1), i32x4.neg(v128.and(v, one)));
        v128.store(dst + 4 * i, v);
      }
    } else if (width == 2) {
      const mw = i32x4.splat(0xffff);
      for (; i + 8 <= c; i += 8) {
        let a = v128.load(vals + 4 * i);
        let b = v128.load(vals + 4 * i + 16);
        if (zz) {
          a = v128.xor(i32x4.shr_u(a, 1), i32x4.neg(v128.and(a, one)));
          b = v128.xor(i32x4.shr_u(b, 1), i32x4.neg(v128.and(b, one)));
        }
        v128.store(dst + 2 * i, i16x8.narrow_i32x4_u(v128.and(a, mw), v128.and(b, mw)));
      }
    } else {
      const mw = i32x4.splat(0xff);
      for (; i + 16 <= c; i += 16) {
        let a = v128.load(vals + 4 * i);
        let b = v128.load(vals + 4 * i + 16);
        let c0 = v128.load(vals + 4 * i + 32);
        let d = v128.load(vals + 4 * i + 48);
        if (zz) {
          a = v128.xor(i32x4.shr_u(a, 1), i32x4.neg(v128.and(a, one)));
          b = v128.xor(i32x4.shr_u(b, 1), i32x4.neg(v128.and(b, one)));
          c0 = v128.xor(i32x4.shr_u(c0, 1), i32x4.neg(v128.and(c0, one)));
          d = v128.xor(i32x4.shr_u(d, 1), i32x4.neg(v128.and(d, one)));
        }
        const lo = i16x8.narrow_i32x4_u(v128.and(a, mw), v128.and(b, mw));
        const hi = i16x8.narrow_i32x4_u(v128.and(c0, mw), v128.and(d, mw));
        v128.store(dst + i, i8x16.narrow_i16x8_u(lo, hi));
      }
    }
  }
  for (; i < c; i++) {
    let v = load<u32>(vals + 4 * i);
    if (zz) v = (v >>> 1) ^ (0 - (v & 1));
    if (width == 1) store<u8>(dst + i, <u8>v);
    else if (width == 2) store<u16>(dst + 2 * i, <u16>v);
    else store<u32>(dst + 4 * i, v);
  }
}

/**
 * Decodes the pack stream of `srcBytes` bytes at `srcPtr` into exactly `n` elements of `width`
 * bytes at `outPtr` (nothing written past them). Returns the bytes the stream's blocks took
 * (the caller checks that it is srcBytes), or -1 when a header field is out of range (b over
 * 8 width, bit 6 of the first byte set, more exceptions than elements, h of 0 or b + h over
 * 8 width, exceptions with b = 8 width, positions not increasing or past the block) or a block
 * runs past the stream's end. Never reads past srcPtr + srcBytes.
 */
export function packDecode(srcPtr: usize, srcBytes: f64, n: u32, width: u32, outPtr: usize, scratchPtr: usize): f64 {
  const vals = scratchPtr;
  const maxBits: u32 = 8 * width;
  const end = srcPtr + <usize>srcBytes;
  let p = srcPtr;
  for (let start: u32 = 0; start < n; start += BLOCK) {
    const c = min<u32>(BLOCK, n - start);
    if (end - p < 2 + <usize>width) return -1;
    const head = <u32>load<u8>(p);
    const e = <u32>load<u8>(p + 1);
    const b = head & 0x3f;
    const zz = (head & 0x80) != 0;
    if ((head & 0x40) != 0 || b > maxBits || e > c) return -1;
    p += 2;
    let h: u32 = 0;
    if (e > 0) {
      if (b >= maxBits || end - p < 1 + <usize>width) return -1;
      h = <u32>load<u8>(p++);
      if (h == 0 || b + h > maxBits) return -1;
    }
    const ref: u32 = width == 1 ? <u32>load<u8>(p) : width == 2 ? <u32>load<u16>(p) : load<u32>(p);
    p += width;
    const m = (c + 3) >> 2;
    const packed = <usize>(16 * ((m * b + 31) >> 5));
    if (end - p < packed) return -1;
    if (ASC_FEATURE_SIMD) {
      // the common case: a full block without exceptions, in registers
      if (e == 0 && c == BLOCK && b > 0) {
        unpackFullBlock(p, b, ref, zz, width, outPtr + <usize>start * width);
        p += packed;
        continue;
      }
    }
    unpackLanes(p, m, b, ref, vals);
    p += packed;
    if (e > 0) {
      const highBytes = <usize>((e * h + 7) >> 3);
      if (end - p < <usize>e + highBytes) return -1;
      const highs = p + e;
      let last: i32 = -1;
      let acc: u64 = 0;
      let bits: u32 = 0;
      let q = highs;
      const hmask = lowMask(h);
      for (let x: u32 = 0; x < e; x++) {
        const pos = <i32>load<u8>(p + x);
        if (pos <= last || pos >= <i32>c) return -1;
        last = pos;
        while (bits < h) {
          acc |= <u64>load<u8>(q++) << bits;
          bits += 8;
        }
        const high = <u32>acc & hmask;
        acc >>= h;
        bits -= h;
        const at = vals + 4 * <usize>pos;
        store<u32>(at, load<u32>(at) + (high << b));
      }
      p = highs + highBytes;
    }
    storeBlock(vals, c, width, zz, outPtr + <usize>start * width);
  }
  return <f64>(p - srcPtr);
}
