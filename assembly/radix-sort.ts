// Stable LSD radix sort of 32-bit keys (u32, i32, f32 in IEEE 754 totalOrder), 8-bit digits,
// with optional u32 values moving alongside.

/** Key kinds, as KeyKind in ts/cpu/wasm.ts. */
const KIND_U32: i32 = 0;
const KIND_I32: i32 = 1;
const KIND_F32: i32 = 2;

/** One histogram: 256 u32 counters. The scratch holds four, one per digit (4096 bytes). */
const HISTOGRAM_BYTES: usize = 1024;

/**
 * Maps a key to a u32 whose unsigned order is the key's order. i32: flip the sign bit.
 * f32 (totalOrder): negative (sign set) -> ~x, otherwise x ^ 0x80000000; so -NaN < -Inf < ... <
 * -0 < +0 < ... < +Inf < +NaN, and NaN payloads order among themselves. Bijective.
 */
// @ts-ignore: decorator
@inline function transformKey(k: u32, kind: i32): u32 {
  if (kind == KIND_I32) return k ^ 0x80000000;
  if (kind == KIND_F32) return k ^ (<u32>(<i32>k >> 31) | 0x80000000);
  return k;
}

/** The inverse of {@link transformKey}. */
// @ts-ignore: decorator
@inline function untransformKey(k: u32, kind: i32): u32 {
  if (kind == KIND_I32) return k ^ 0x80000000;
  if (kind == KIND_F32) return k ^ (~<u32>(<i32>k >> 31) | 0x80000000);
  return k;
}

// @ts-ignore: decorator
@inline function transformKeys4(k: v128, kind: i32): v128 {
  const sign = i32x4.splat(0x80000000);
  if (kind == KIND_I32) return v128.xor(k, sign);
  if (kind == KIND_F32) return v128.xor(k, v128.or(i32x4.shr_s(k, 31), sign));
  return k;
}

// @ts-ignore: decorator
@inline function untransformKeys4(k: v128, kind: i32): v128 {
  const sign = i32x4.splat(0x80000000);
  if (kind == KIND_I32) return v128.xor(k, sign);
  if (kind == KIND_F32) return v128.xor(k, v128.or(v128.not(i32x4.shr_s(k, 31)), sign));
  return k;
}

/** Counts the four digits of transformed key `k` in the four histograms at `histograms`. */
// @ts-ignore: decorator
@inline function countDigits(histograms: usize, k: u32): void {
  const a = histograms + ((k & 0xff) << 2);
  const b = histograms + HISTOGRAM_BYTES + ((k >> 6) & 0x3fc);
  const c = histograms + 2 * HISTOGRAM_BYTES + ((k >> 14) & 0x3fc);
  const d = histograms + 3 * HISTOGRAM_BYTES + ((k >> 22) & 0x3fc);
  store<u32>(a, load<u32>(a) + 1);
  store<u32>(b, load<u32>(b) + 1);
  store<u32>(c, load<u32>(c) + 1);
  store<u32>(d, load<u32>(d) + 1);
}

/**
 * One pass over the keys: transform them in place (nothing to store for u32) and count all four
 * digit histograms. `kind` is a constant at each call.
 */
// @ts-ignore: decorator
@inline function transformAndCount(keysPtr: usize, n: usize, kind: i32, histograms: usize): void {
  let i: usize = 0;
  if (ASC_FEATURE_SIMD) {
    for (; i + 4 <= n; i += 4) {
      const p = keysPtr + (i << 2);
      const k = transformKeys4(v128.load(p), kind);
      if (kind != KIND_U32) v128.store(p, k);
      countDigits(histograms, <u32>i32x4.extract_lane(k, 0));
      countDigits(histograms, <u32>i32x4.extract_lane(k, 1));
      countDigits(histograms, <u32>i32x4.extract_lane(k, 2));
      countDigits(histograms, <u32>i32x4.extract_lane(k, 3));
    }
  }
  for (; i < n; i++) {
    const p = keysPtr + (i << 2);
    const k = transformKey(load<u32>(p), kind);
    if (kind != KIND_U32) store<u32>(p, k);
    countDigits(histograms, k);
  }
}

// @ts-ignore: decorator
@inline function untransformKeys(keysPtr: usize, n: usize, kind: i32): void {
  let i: usize = 0;
  if (ASC_FEATURE_SIMD) {
    for (; i + 4 <= n; i += 4) {
      const p = keysPtr + (i << 2);
      v128.store(p, untransformKeys4(v128.load(p), kind));
    }
  }
  for (; i < n; i++) {
    const p = keysPtr + (i << 2);
    store<u32>(p, untransformKey(load<u32>(p), kind));
  }
}

/** Turns a histogram into exclusive prefix sums in place: each digit's first output slot. */
// @ts-ignore: decorator
@inline function histogramToOffsets(h: usize): void {
  let sum: u32 = 0;
  for (let b: usize = 0; b < HISTOGRAM_BYTES; b += 4) {
    const c = load<u32>(h + b);
    store<u32>(h + b, sum);
    sum += c;
  }
}

/** Moves key i (and value i) of `src` to its digit's next slot in `dst`. */
// @ts-ignore: decorator
@inline function scatterOne(src: usize, dst: usize, srcValues: usize, dstValues: usize, i: usize, shift: u32, offsets: usize, withValues: bool): void {
  const k = load<u32>(src + (i << 2));
  const slot = offsets + (((k >> shift) & 0xff) << 2);
  const p = <usize>load<u32>(slot);
  store<u32>(slot, <u32>p + 1);
  store<u32>(dst + (p << 2), k);
  if (withValues) store<u32>(dstValues + (p << 2), load<u32>(srcValues + (i << 2)));
}

/** One stable counting-sort pass on the digit at `shift`. */
// @ts-ignore: decorator
@inline function scatterPass(src: usize, dst: usize, srcValues: usize, dstValues: usize, n: usize, shift: u32, offsets: usize, withValues: bool): void {
  let i: usize = 0;
  for (; i + 4 <= n; i += 4) {
    scatterOne(src, dst, srcValues, dstValues, i, shift, offsets, withValues);
    scatterOne(src, dst, srcValues, dstValues, i + 1, shift, offsets, withValues);
    scatterOne(src, dst, srcValues, dstValues, i + 2, shift, offsets, withValues);
    scatterOne(src, dst, srcValues, dstValues, i + 3, shift, offsets, withValues);
  }
  for (; i < n; i++) scatterOne(src, dst, srcValues, dstValues, i, shift, offsets, withValues);
}

/**
 * Stable LSD radix sort of `n` 32-bit keys at `keysPtr`, ascending: u32 (keyKind 0), i32 (1),
 * or f32 (2) in IEEE 754 totalOrder (-NaN < -Inf < -1 < -0 < +0 < denormals < +Inf < +NaN; bit
 * patterns are kept, NaN payloads included). When `valuesPtr` is not 0, `n` u32 values move
 * with their keys, and equal keys keep their values' input order. `keysTmpPtr` (and
 * `valuesTmpPtr` with values) are scratch of the same size; `scratchPtr` is 4096 bytes
 * (SORT_SCRATCH_BYTES). Returns 0 when the sorted result is in keysPtr/valuesPtr, 1 when it is
 * in keysTmpPtr/valuesTmpPtr; the other pair then holds scratch. No buffer may overlap another.
 *
 * Example: f32 keys [2, -0, NaN, -1, 0], values [0,1,2,3,4] -> keys [-1, -0, 0, 2, NaN],
 * values [3,1,4,0,2].
 *
 * Algorithm (CPU, this file): one pass transforms the keys in place to order-preserving u32
 * (v128) and counts all four 8-bit digit histograms at once (four 256-entry tables); a digit
 * equal in every key (its bucket holds n) is skipped; every other digit is an exclusive prefix
 * sum of its histogram and a stable scatter, ping-ponging between the keys and tmp buffers; a
 * last v128 pass undoes the transform in the buffer holding the result. Counting every digit's
 * histogram up front in one read of the keys is OneSweep's (Adinets and Merrill 2022); one core
 * needs no per-block histograms (Gruber), so each pass is a plain sequential scatter.
 */
export function radixSort32(
  keysPtr: usize,
  keysTmpPtr: usize,
  valuesPtr: usize,
  valuesTmpPtr: usize,
  n: usize,
  keyKind: i32,
  scratchPtr: usize,
): i32 {
  if (n == 0) return 0;
  memory.fill(scratchPtr, 0, 4 * HISTOGRAM_BYTES);
  if (keyKind == KIND_F32) transformAndCount(keysPtr, n, KIND_F32, scratchPtr);
  else if (keyKind == KIND_I32) transformAndCount(keysPtr, n, KIND_I32, scratchPtr);
  else transformAndCount(keysPtr, n, KIND_U32, scratchPtr);

  const first = load<u32>(keysPtr);
  let src = keysPtr;
  let dst = keysTmpPtr;
  let srcValues = valuesPtr;
  let dstValues = valuesTmpPtr;
  let inTmp: i32 = 0;
  for (let digit: u32 = 0; digit < 4; digit++) {
    const shift = digit << 3;
    const h = scratchPtr + <usize>digit * HISTOGRAM_BYTES;
    // Every key has the same digit here: the pass would copy the keys unchanged.
    if (<usize>load<u32>(h + (((first >> shift) & 0xff) << 2)) == n) continue;
    histogramToOffsets(h);
    if (valuesPtr != 0) scatterPass(src, dst, srcValues, dstValues, n, shift, h, true);
    else scatterPass(src, dst, 0, 0, n, shift, h, false);
    const t = src; src = dst; dst = t;
    const tv = srcValues; srcValues = dstValues; dstValues = tv;
    inTmp ^= 1;
  }

  if (keyKind == KIND_F32) untransformKeys(src, n, KIND_F32);
  else if (keyKind == KIND_I32) untransformKeys(src, n, KIND_I32);
  return inTmp;
}
