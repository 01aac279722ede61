// Run lengths as unsigned LEB128 (the .parle container's length stream) and their sum.

/** A value needs at most 5 LEB128 bytes (35 bits >= 32). */
const MAX_VARINT_BYTES: u32 = 5;

/**
 * Writes (length - 1) of each of `runCount` u32 run lengths (all >= 1) at `lengthsPtr` as
 * unsigned LEB128 to `outPtr`, which needs room for 5 bytes a run. Returns the bytes written.
 *
 * Example: lengths [1, 128, 129, 16385] -> values [0, 127, 128, 16384] -> bytes
 * [0x00, 0x7f, 0x80 0x01, 0x80 0x80 0x01], returns 7.
 * Overlap: the output must not overlap the lengths. A length of 0 (not allowed) would be
 * written as 2^32 - 1, which the decoder rejects.
 *
 * Algorithm: plain LEB128, 7 bits a byte, low bits first, high bit set on all but the last
 * byte; one byte and one well-predicted branch for lengths up to 128, the common case.
 */
export function varintEncodeLengths(lengthsPtr: usize, runCount: usize, outPtr: usize): f64 {
  let out = outPtr;
  let r: usize = 0;
  while (r < runCount) {
    if (ASC_FEATURE_SIMD && r + 16 <= runCount) {
      // 16 lengths of 1..128 (one byte each, the common case of short runs): (length - 1)
      // narrowed to bytes in one store; else these 16 one at a time
      const p = lengthsPtr + (r << 2);
      const one = i32x4.splat(1);
      const a = i32x4.sub(v128.load(p), one);
      const b = i32x4.sub(v128.load(p, 16), one);
      const c = i32x4.sub(v128.load(p, 32), one);
      const d = i32x4.sub(v128.load(p, 48), one);
      const limit = i32x4.splat(0x80);
      const small = v128.and(v128.and(i32x4.lt_u(a, limit), i32x4.lt_u(b, limit)), v128.and(i32x4.lt_u(c, limit), i32x4.lt_u(d, limit)));
      if (i32x4.all_true(small)) {
        v128.store(out, i8x16.narrow_i16x8_u(i16x8.narrow_i32x4_u(a, b), i16x8.narrow_i32x4_u(c, d)));
        out += 16;
        r += 16;
        continue;
      }
    }
    const end = min<usize>(runCount, r + 16);
    for (; r < end; r++) {
      let v = load<u32>(lengthsPtr + (r << 2)) - 1;
      while (v >= 0x80) {
        store<u8>(out, (v & 0x7f) | 0x80);
        out++;
        v >>= 7;
      }
      store<u8>(out, v);
      out++;
    }
  }
  return <f64>(out - outPtr);
}

/**
 * Reads exactly `runCount` unsigned LEB128 values from the `inBytes` bytes at `inPtr` and
 * stores value + 1 as u32 run lengths at `lengthsPtr`. Returns the bytes consumed, or -1 when
 * the input ends before the last value does, or a value does not fit: a fifth byte with its
 * continuation bit set (more than 5 bytes), or value + 1 > 2^32 - 1. Never reads at or past
 * inPtr + inBytes, and stops after at most inBytes bytes, so hostile input cannot hang it.
 * Encodings that are longer than needed but within 5 bytes (0x80 0x00 for 0) are accepted.
 *
 * Example: bytes [0x00, 0x7f, 0x80 0x01], runCount 3 -> lengths [1, 128, 129], returns 4;
 * bytes [0x80], runCount 1 -> -1 (truncated); [0xff 0xff 0xff 0xff 0x0f] -> -1 (2^32 - 1 + 1
 * does not fit in u32). Overlap: the lengths must not overlap the input. On -1, lengths before
 * the failing one have been written.
 */
export function varintDecodeLengths(inPtr: usize, inBytes: usize, lengthsPtr: usize, runCount: usize): f64 {
  let pos: usize = 0;
  let r: usize = 0;
  while (r < runCount) {
    if (ASC_FEATURE_SIMD) {
      // 16 one-byte values at a time (no continuation bit among the next 16 bytes, all inside
      // the input), widened to u32 + 1 in four stores; a long value among them: 16 values one at
      // a time below, then back here
      const one = i32x4.splat(1);
      while (r + 16 <= runCount && pos + 16 <= inBytes) {
        const v = v128.load(inPtr + pos);
        if (i8x16.bitmask(v) != 0) break;
        const lo = i16x8.extend_low_i8x16_u(v);
        const hi = i16x8.extend_high_i8x16_u(v);
        const q = lengthsPtr + (r << 2);
        v128.store(q, i32x4.add(i32x4.extend_low_i16x8_u(lo), one));
        v128.store(q, i32x4.add(i32x4.extend_high_i16x8_u(lo), one), 16);
        v128.store(q, i32x4.add(i32x4.extend_low_i16x8_u(hi), one), 32);
        v128.store(q, i32x4.add(i32x4.extend_high_i16x8_u(hi), one), 48);
        pos += 16;
        r += 16;
      }
    }
    const end = min<usize>(runCount, r + 16);
    for (; r < end; r++) {
      if (pos >= inBytes) return -1;
      let b = <u32>load<u8>(inPtr + pos);
      pos++;
      if (b < 0x80) {
        store<u32>(lengthsPtr + (r << 2), b + 1);
        continue;
      }
      let value = <u64>(b & 0x7f);
      let shift: u32 = 7;
      while (true) {
        if (pos >= inBytes) return -1;
        b = <u32>load<u8>(inPtr + pos);
        pos++;
        value |= <u64>(b & 0x7f) << shift;
        if (b < 0x80) break;
        shift += 7;
        if (shift >= 7 * MAX_VARINT_BYTES) return -1;
      }
      if (value >= 0xffffffff) return -1;
      store<u32>(lengthsPtr + (r << 2), <u32>value + 1);
    }
  }
  return <f64>pos;
}

/**
 * Sum of `runCount` u32 lengths at `lengthsPtr` as a float64 (exact: a u64 accumulator,
 * converted once; exact as a number below 2^53). Example: [1, 2, 4294967295] -> 4294967298.
 * Algorithm: SIMD build widens 4 lanes to two i64x2 accumulators; scalar build, a u64 loop.
 */
export function sumLengths(lengthsPtr: usize, runCount: usize): f64 {
  let i: usize = 0;
  let sum: u64 = 0;
  if (ASC_FEATURE_SIMD) {
    let low = i64x2.splat(0);
    let high = i64x2.splat(0);
    for (; i + 4 <= runCount; i += 4) {
      const v = v128.load(lengthsPtr + (i << 2));
      low = i64x2.add(low, i64x2.extend_low_i32x4_u(v));
      high = i64x2.add(high, i64x2.extend_high_i32x4_u(v));
    }
    const both = i64x2.add(low, high);
    sum = <u64>i64x2.extract_lane(both, 0) + <u64>i64x2.extract_lane(both, 1);
  }
  for (; i < runCount; i++) sum += <u64>load<u32>(lengthsPtr + (i << 2));
  return <f64>sum;
}
