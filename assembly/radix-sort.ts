// Stable radix sort of 32-bit keys (u32, i32, f32 in IEEE 754 totalOrder; radixSort32) and of
// 64-bit keys (u64, i64, f64; radixSort64), 8-bit digits, with optional u32 values moving
// alongside: LSD passes while keys and tmp fit in the last-level cache, an MSD split first
// above that (each bucket then sorted by LSD passes in cache).

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

/** One stable counting-sort pass over keys [from, to) on the digit at `shift`. */
// @ts-ignore: decorator
@inline function scatterRange(src: usize, dst: usize, srcValues: usize, dstValues: usize, from: usize, to: usize, shift: u32, offsets: usize, withValues: bool): void {
  let i = from;
  for (; i + 4 <= to; i += 4) {
    scatterOne(src, dst, srcValues, dstValues, i, shift, offsets, withValues);
    scatterOne(src, dst, srcValues, dstValues, i + 1, shift, offsets, withValues);
    scatterOne(src, dst, srcValues, dstValues, i + 2, shift, offsets, withValues);
    scatterOne(src, dst, srcValues, dstValues, i + 3, shift, offsets, withValues);
  }
  for (; i < to; i++) scatterOne(src, dst, srcValues, dstValues, i, shift, offsets, withValues);
}

/** A pass per constant digit: constant shifts, and no dead operands, keep the loop in registers. */
// @ts-ignore: decorator
@inline function scatterPass(src: usize, dst: usize, srcValues: usize, dstValues: usize, n: usize, digit: u32, offsets: usize): void {
  if (srcValues != 0) {
    if (digit == 0) scatterRange(src, dst, srcValues, dstValues, 0, n, 0, offsets, true);
    else if (digit == 1) scatterRange(src, dst, srcValues, dstValues, 0, n, 8, offsets, true);
    else if (digit == 2) scatterRange(src, dst, srcValues, dstValues, 0, n, 16, offsets, true);
    else scatterRange(src, dst, srcValues, dstValues, 0, n, 24, offsets, true);
  } else {
    if (digit == 0) scatterRange(src, dst, 0, 0, 0, n, 0, offsets, false);
    else if (digit == 1) scatterRange(src, dst, 0, 0, 0, n, 8, offsets, false);
    else if (digit == 2) scatterRange(src, dst, 0, 0, 0, n, 16, offsets, false);
    else scatterRange(src, dst, 0, 0, 0, n, 24, offsets, false);
  }
}

/**
 * LSD passes over digits [0, digits) of `n` keys at `keys` (and `values`), ping-ponging with
 * `tmp`; `histograms` holds their counts (table d for digit d). A digit equal in every key
 * (its count is n) is skipped. Returns 1 when the result ended in `tmp`, else 0.
 */
// @ts-ignore: decorator
@inline function lsdPasses(keys: usize, tmp: usize, values: usize, valuesTmp: usize, n: usize, digits: u32, histograms: usize): i32 {
  const first = load<u32>(keys);
  let src = keys;
  let dst = tmp;
  let srcValues = values;
  let dstValues = valuesTmp;
  let inTmp: i32 = 0;
  for (let digit: u32 = 0; digit < digits; digit++) {
    const h = histograms + <usize>digit * HISTOGRAM_BYTES;
    if (<usize>load<u32>(h + (((first >> (digit << 3)) & 0xff) << 2)) == n) continue;
    histogramToOffsets(h);
    scatterPass(src, dst, srcValues, dstValues, n, digit, h);
    const t = src; src = dst; dst = t;
    const tv = srcValues; srcValues = dstValues; dstValues = tv;
    inTmp ^= 1;
  }
  return inTmp;
}

/** Counts digits [0, digits) of the keys (already transformed) into their tables. */
// @ts-ignore: decorator
@inline function countLowDigits(keys: usize, n: usize, digits: u32, histograms: usize): void {
  for (let i: usize = 0; i < n; i++) {
    const k = load<u32>(keys + (i << 2));
    const a = histograms + ((k & 0xff) << 2);
    store<u32>(a, load<u32>(a) + 1);
    if (digits > 1) {
      const b = histograms + HISTOGRAM_BYTES + ((k >> 6) & 0x3fc);
      store<u32>(b, load<u32>(b) + 1);
    }
    if (digits > 2) {
      const c = histograms + 2 * HISTOGRAM_BYTES + ((k >> 14) & 0x3fc);
      store<u32>(c, load<u32>(c) + 1);
    }
  }
}

/**
 * From this many keys on, the first pass splits by the most significant varying digit (MSD) and
 * each bucket is then sorted on its own by LSD passes while it sits in cache. A plain LSD pass
 * over data larger than the cache scatters to 256 places far apart in memory and ran at less
 * than half its in-cache speed (3.6 vs 1.4 ns a key for 2^24 keys here): the stores wait on
 * cache misses. The extra per-bucket counting pass costs more than it saves while keys and tmp
 * fit in the last-level cache (2^21 keys: 16 MiB of a 32 MiB L3 here). Buckets of 2^24 random
 * keys hold 2^16 keys: 256 KiB, twice that with tmp, in L2.
 */
const MSD_MIN_KEYS: usize = 3 << 20;

/**
 * A bucket this small is sorted by LSD passes on all its remaining digits: with its tmp it fits
 * in L2 (256 + 256 KiB). A larger one (few distinct top digits, as with floats of a narrow
 * range of exponents) is split again by its next digit first.
 */
const LEAF_MAX_KEYS: usize = 1 << 17;

/**
 * Sorts `count` keys at `src` (with their values) by digits 0..digit; the result ends in `src`
 * when `wantSrc`, else in `other`, which is scratch of the same size. Table d of `scratchPtr` is
 * used at digit d, so the callers' bucket ends (tables above `digit`) survive.
 */
function sortRange(src: usize, other: usize, srcValues: usize, otherValues: usize, count: usize, digit: u32, wantSrc: bool, scratchPtr: usize): void {
  if (count <= LEAF_MAX_KEYS || digit == 0) {
    memory.fill(scratchPtr, 0, <usize>(digit + 1) * HISTOGRAM_BYTES);
    if (digit == 0) countLowDigits(src, count, 1, scratchPtr);
    else if (digit == 1) countLowDigits(src, count, 2, scratchPtr);
    else countLowDigits(src, count, 3, scratchPtr);
    const inOther = lsdPasses(src, other, srcValues, otherValues, count, digit + 1, scratchPtr) != 0;
    if (inOther == wantSrc) {
      // An even number of passes where an odd one was wanted, or the other way round.
      const from = inOther ? other : src;
      const to = inOther ? src : other;
      memory.copy(to, from, count << 2);
      if (srcValues != 0) memory.copy(inOther ? srcValues : otherValues, inOther ? otherValues : srcValues, count << 2);
    }
    return;
  }
  const h = scratchPtr + <usize>digit * HISTOGRAM_BYTES;
  memory.fill(h, 0, HISTOGRAM_BYTES);
  if (digit == 1) countDigit(src, count, 1, h);
  else countDigit(src, count, 2, h);
  if (<usize>load<u32>(h + (((load<u32>(src) >> (digit << 3)) & 0xff) << 2)) == count) {
    sortRange(src, other, srcValues, otherValues, count, digit - 1, wantSrc, scratchPtr);
    return;
  }
  histogramToOffsets(h);
  scatterPass(src, other, srcValues, otherValues, count, digit, h);
  // Now in `other`, bucket by bucket: each sorts on the digits below and ends where wanted.
  let start: usize = 0;
  for (let bucket: usize = 0; bucket < 256; bucket++) {
    const end = <usize>load<u32>(h + (bucket << 2));
    if (end > start) {
      const at = start << 2;
      sortRange(other + at, src + at, srcValues != 0 ? otherValues + at : 0, srcValues != 0 ? srcValues + at : 0, end - start, digit - 1, !wantSrc, scratchPtr);
    }
    start = end;
  }
}

/**
 * The MSD-first path: `top` (1..3) is the most significant digit that varies and its table
 * holds its counts. Its pass moves the keys to `keysTmpPtr` by that digit; then each bucket is
 * sorted on the digits below (sortRange), ending in `keysPtr`, and its transform undone while
 * it is still in cache.
 */
// @ts-ignore: decorator
@inline function msdThenLsd(keysPtr: usize, keysTmpPtr: usize, valuesPtr: usize, valuesTmpPtr: usize, n: usize, keyKind: i32, scratchPtr: usize, top: u32): void {
  const bucketEnds = scratchPtr + <usize>top * HISTOGRAM_BYTES; // offsets after the pass: bucket ends
  histogramToOffsets(bucketEnds);
  scatterPass(keysPtr, keysTmpPtr, valuesPtr, valuesTmpPtr, n, top, bucketEnds);
  let start: usize = 0;
  for (let bucket: usize = 0; bucket < 256; bucket++) {
    const end = <usize>load<u32>(bucketEnds + (bucket << 2));
    if (end > start) {
      const at = start << 2;
      sortRange(keysTmpPtr + at, keysPtr + at, valuesPtr != 0 ? valuesTmpPtr + at : 0, valuesPtr != 0 ? valuesPtr + at : 0, end - start, top - 1, false, scratchPtr);
      if (keyKind == KIND_F32) untransformKeys(keysPtr + at, end - start, KIND_F32);
      else if (keyKind == KIND_I32) untransformKeys(keysPtr + at, end - start, KIND_I32);
    }
    start = end;
  }
}

/**
 * The first pass of a large sort: transforms the keys in place, counts the top digit (digit 3)
 * into the table at `top`, and returns the bits in which some key differs from the first: a
 * digit varies where its byte is not 0 (a v128 OR of XORs, nearly free). Only the top digit is
 * counted: the MSD-first path counts the other digits per bucket, in cache, anyway. Each v128
 * lane counts into its own table (`lanes`, four tables, summed into `top` at the end), so runs
 * of equal top digits do not serialise on one counter's store-to-load forwarding.
 */
// @ts-ignore: decorator
@inline function transformAndCountTop(keysPtr: usize, n: usize, kind: i32, lanes: usize, top: usize): u32 {
  const first = transformKey(load<u32>(keysPtr), kind);
  let differs: u32 = 0;
  let i: usize = 0;
  if (ASC_FEATURE_SIMD) {
    const firstLanes = i32x4.splat(first);
    // Byte address of lane j's table: lanes + j * 1024.
    let laneTables = i32x4.splat(<i32>lanes);
    laneTables = i32x4.replace_lane(laneTables, 1, <i32>(lanes + HISTOGRAM_BYTES));
    laneTables = i32x4.replace_lane(laneTables, 2, <i32>(lanes + 2 * HISTOGRAM_BYTES));
    laneTables = i32x4.replace_lane(laneTables, 3, <i32>(lanes + 3 * HISTOGRAM_BYTES));
    let acc = i32x4.splat(0);
    for (; i + 4 <= n; i += 4) {
      const p = keysPtr + (i << 2);
      const k = transformKeys4(v128.load(p), kind);
      if (kind != KIND_U32) v128.store(p, k);
      acc = v128.or(acc, v128.xor(k, firstLanes));
      const slots = i32x4.add(i32x4.shl(i32x4.shr_u(k, 24), 2), laneTables);
      const a = <usize>i32x4.extract_lane(slots, 0);
      const b = <usize>i32x4.extract_lane(slots, 1);
      const c = <usize>i32x4.extract_lane(slots, 2);
      const d = <usize>i32x4.extract_lane(slots, 3);
      store<u32>(a, load<u32>(a) + 1);
      store<u32>(b, load<u32>(b) + 1);
      store<u32>(c, load<u32>(c) + 1);
      store<u32>(d, load<u32>(d) + 1);
    }
    differs = <u32>(i32x4.extract_lane(acc, 0) | i32x4.extract_lane(acc, 1) | i32x4.extract_lane(acc, 2) | i32x4.extract_lane(acc, 3));
  }
  for (; i < n; i++) {
    const p = keysPtr + (i << 2);
    const k = transformKey(load<u32>(p), kind);
    if (kind != KIND_U32) store<u32>(p, k);
    differs |= k ^ first;
    const a = lanes + <usize>(i & 3) * HISTOGRAM_BYTES + ((k >> 22) & 0x3fc);
    store<u32>(a, load<u32>(a) + 1);
  }
  for (let b: usize = 0; b < HISTOGRAM_BYTES; b += 4) {
    store<u32>(top + b, load<u32>(lanes + b) + load<u32>(lanes + HISTOGRAM_BYTES + b) + load<u32>(lanes + 2 * HISTOGRAM_BYTES + b) + load<u32>(lanes + 3 * HISTOGRAM_BYTES + b));
  }
  return differs;
}

/** Counts one digit (0..3) of the transformed keys into the (zeroed) table at `h`. */
// @ts-ignore: decorator
@inline function countDigit(keysPtr: usize, n: usize, digit: u32, h: usize): void {
  const shift = digit << 3;
  for (let i: usize = 0; i < n; i++) {
    const a = h + (((load<u32>(keysPtr + (i << 2)) >> shift) & 0xff) << 2);
    store<u32>(a, load<u32>(a) + 1);
  }
}

/** Sorts n >= MSD_MIN_KEYS keys; same contract as radixSort32. */
// @ts-ignore: decorator
@inline function sortLarge(keysPtr: usize, keysTmpPtr: usize, valuesPtr: usize, valuesTmpPtr: usize, n: usize, keyKind: i32, scratchPtr: usize): i32 {
  const topTable = scratchPtr + 3 * HISTOGRAM_BYTES;
  // The four lane tables need 4 KiB: the scratch is the lane tables, summed into table 3 last.
  memory.fill(scratchPtr, 0, 4 * HISTOGRAM_BYTES);
  let differs: u32;
  if (keyKind == KIND_F32) differs = transformAndCountTop(keysPtr, n, KIND_F32, scratchPtr, topTable);
  else if (keyKind == KIND_I32) differs = transformAndCountTop(keysPtr, n, KIND_I32, scratchPtr, topTable);
  else differs = transformAndCountTop(keysPtr, n, KIND_U32, scratchPtr, topTable);
  if (differs == 0) {
    // All keys equal: nothing moves.
    if (keyKind == KIND_F32) untransformKeys(keysPtr, n, KIND_F32);
    else if (keyKind == KIND_I32) untransformKeys(keysPtr, n, KIND_I32);
    return 0;
  }
  const top = <u32>(31 - clz(differs)) >> 3; // the most significant digit that varies
  const h = scratchPtr + <usize>top * HISTOGRAM_BYTES;
  if (top != 3) {
    memory.fill(h, 0, HISTOGRAM_BYTES);
    if (top == 0) countDigit(keysPtr, n, 0, h);
    else if (top == 1) countDigit(keysPtr, n, 1, h);
    else countDigit(keysPtr, n, 2, h);
  }
  if ((differs & ((<u32>1 << (top << 3)) - 1)) == 0) {
    // Only one digit varies: one pass, the result in tmp.
    histogramToOffsets(h);
    scatterPass(keysPtr, keysTmpPtr, valuesPtr, valuesTmpPtr, n, top, h);
    if (keyKind == KIND_F32) untransformKeys(keysTmpPtr, n, KIND_F32);
    else if (keyKind == KIND_I32) untransformKeys(keysTmpPtr, n, KIND_I32);
    return 1;
  }
  msdThenLsd(keysPtr, keysTmpPtr, valuesPtr, valuesTmpPtr, n, keyKind, scratchPtr, top);
  return 0;
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
 * Algorithm (CPU, this file). Below 3 * 2^20 keys, plain LSD: one pass transforms the keys in
 * place to order-preserving u32 (v128) and counts all four 8-bit digit histograms at once (four
 * 256-entry tables); a digit equal in every key (its bucket holds n) is skipped; every other
 * digit is an exclusive prefix sum of its histogram and a stable scatter, ping-ponging between
 * the keys and tmp buffers; a last v128 pass undoes the transform in the buffer holding the
 * result. Counting every digit's histogram up front in one read of the keys is OneSweep's
 * (Adinets and Merrill 2022); one core needs no per-block histograms (Gruber), so each pass is
 * a plain sequential scatter.
 * From 3 * 2^20 keys, where LSD passes scatter far beyond the cache and stall on misses, the
 * first pass transforms, counts only the top digit and finds which digits vary (a v128 OR of
 * XORs with the first key); the most significant varying digit is one stable MSD scatter to
 * tmp; each of its buckets (2^16 keys for 2^24 random keys) is then sorted by the LSD passes
 * above on the lower digits, skipping digits equal in the bucket, while it sits in L2, and is
 * split once more by its next digit first when it holds more than 2^17 keys. The result is
 * then always in keysPtr (returns 0), except when a single digit varies (one pass: returns 1).
 * Stable throughout: every pass is a stable counting sort and buckets are independent.
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
  if (valuesPtr == 0) valuesTmpPtr = 0; // "no values" is tested on both pointers of a pass
  if (n >= MSD_MIN_KEYS) return sortLarge(keysPtr, keysTmpPtr, valuesPtr, valuesTmpPtr, n, keyKind, scratchPtr);

  memory.fill(scratchPtr, 0, 4 * HISTOGRAM_BYTES);
  if (keyKind == KIND_F32) transformAndCount(keysPtr, n, KIND_F32, scratchPtr);
  else if (keyKind == KIND_I32) transformAndCount(keysPtr, n, KIND_I32, scratchPtr);
  else transformAndCount(keysPtr, n, KIND_U32, scratchPtr);
  const inTmp = lsdPasses(keysPtr, keysTmpPtr, valuesPtr, valuesTmpPtr, n, 4, scratchPtr);
  const src = inTmp ? keysTmpPtr : keysPtr;
  if (keyKind == KIND_F32) untransformKeys(src, n, KIND_F32);
  else if (keyKind == KIND_I32) untransformKeys(src, n, KIND_I32);
  return inTmp;
}

// ---- 64-bit keys ----------------------------------------------------------------------------
// The same design for u64, i64 and f64 keys: eight 8-bit digits, eight histograms counted in the
// first pass, constant digits skipped; an MSD split first for inputs beyond the cache. Values
// stay u32 (4 bytes an element beside 8-byte keys).

/** Key kinds of 64-bit keys, as KeyKind in ts/cpu/wasm.ts. */
const KIND_U64: i32 = 3;
const KIND_I64: i32 = 4;
const KIND_F64: i32 = 5;

const SIGN64: u64 = 0x8000000000000000;

/**
 * Maps a 64-bit key to a u64 whose unsigned order is the key's order: as transformKey, on 64
 * bits. i64: flip the sign bit. f64 (totalOrder): negative -> ~x, otherwise x ^ 2^63. Bijective.
 */
// @ts-ignore: decorator
@inline function transformKey64(k: u64, kind: i32): u64 {
  if (kind == KIND_I64) return k ^ SIGN64;
  if (kind == KIND_F64) return k ^ (<u64>(<i64>k >> 63) | SIGN64);
  return k;
}

/** The inverse of {@link transformKey64}. */
// @ts-ignore: decorator
@inline function untransformKey64(k: u64, kind: i32): u64 {
  if (kind == KIND_I64) return k ^ SIGN64;
  if (kind == KIND_F64) return k ^ (~<u64>(<i64>k >> 63) | SIGN64);
  return k;
}

// @ts-ignore: decorator
@inline function transformKeys2(k: v128, kind: i32): v128 {
  const sign = i64x2.splat(<i64>SIGN64);
  if (kind == KIND_I64) return v128.xor(k, sign);
  if (kind == KIND_F64) return v128.xor(k, v128.or(i64x2.shr_s(k, 63), sign));
  return k;
}

// @ts-ignore: decorator
@inline function untransformKeys2(k: v128, kind: i32): v128 {
  const sign = i64x2.splat(<i64>SIGN64);
  if (kind == KIND_I64) return v128.xor(k, sign);
  if (kind == KIND_F64) return v128.xor(k, v128.or(v128.not(i64x2.shr_s(k, 63)), sign));
  return k;
}

/** Counts the eight digits of transformed key `k` in the eight histograms at `histograms`. */
// @ts-ignore: decorator
@inline function countDigits64(histograms: usize, k: u64): void {
  const lo = <u32>k;
  const hi = <u32>(k >> 32);
  const a = histograms + ((lo & 0xff) << 2);
  const b = histograms + HISTOGRAM_BYTES + ((lo >> 6) & 0x3fc);
  const c = histograms + 2 * HISTOGRAM_BYTES + ((lo >> 14) & 0x3fc);
  const d = histograms + 3 * HISTOGRAM_BYTES + ((lo >> 22) & 0x3fc);
  const e = histograms + 4 * HISTOGRAM_BYTES + ((hi & 0xff) << 2);
  const f = histograms + 5 * HISTOGRAM_BYTES + ((hi >> 6) & 0x3fc);
  const g = histograms + 6 * HISTOGRAM_BYTES + ((hi >> 14) & 0x3fc);
  const h = histograms + 7 * HISTOGRAM_BYTES + ((hi >> 22) & 0x3fc);
  store<u32>(a, load<u32>(a) + 1);
  store<u32>(b, load<u32>(b) + 1);
  store<u32>(c, load<u32>(c) + 1);
  store<u32>(d, load<u32>(d) + 1);
  store<u32>(e, load<u32>(e) + 1);
  store<u32>(f, load<u32>(f) + 1);
  store<u32>(g, load<u32>(g) + 1);
  store<u32>(h, load<u32>(h) + 1);
}

/** One pass: transforms the keys in place (v128, two a vector) and counts all eight digits. */
// @ts-ignore: decorator
@inline function transformAndCount64(keysPtr: usize, n: usize, kind: i32, histograms: usize): void {
  let i: usize = 0;
  if (ASC_FEATURE_SIMD) {
    for (; i + 2 <= n; i += 2) {
      const p = keysPtr + (i << 3);
      const k = transformKeys2(v128.load(p), kind);
      if (kind != KIND_U64) v128.store(p, k);
      countDigits64(histograms, <u64>i64x2.extract_lane(k, 0));
      countDigits64(histograms, <u64>i64x2.extract_lane(k, 1));
    }
  }
  for (; i < n; i++) {
    const p = keysPtr + (i << 3);
    const k = transformKey64(load<u64>(p), kind);
    if (kind != KIND_U64) store<u64>(p, k);
    countDigits64(histograms, k);
  }
}

// @ts-ignore: decorator
@inline function untransformKeys64(keysPtr: usize, n: usize, kind: i32): void {
  let i: usize = 0;
  if (ASC_FEATURE_SIMD) {
    for (; i + 2 <= n; i += 2) {
      const p = keysPtr + (i << 3);
      v128.store(p, untransformKeys2(v128.load(p), kind));
    }
  }
  for (; i < n; i++) {
    const p = keysPtr + (i << 3);
    store<u64>(p, untransformKey64(load<u64>(p), kind));
  }
}

/** Undoes the transform of `n` keys for the kind of `keyKind` (constant in each branch). */
// @ts-ignore: decorator
@inline function untransformAny64(keysPtr: usize, n: usize, keyKind: i32): void {
  if (keyKind == KIND_F64) untransformKeys64(keysPtr, n, KIND_F64);
  else if (keyKind == KIND_I64) untransformKeys64(keysPtr, n, KIND_I64);
}

/** Moves key i (8 bytes) and value i (4 bytes) of `src` to its digit's next slot in `dst`. */
// @ts-ignore: decorator
@inline function scatterOne64(src: usize, dst: usize, srcValues: usize, dstValues: usize, i: usize, shift: u64, offsets: usize, withValues: bool): void {
  const k = load<u64>(src + (i << 3));
  const slot = offsets + (<usize>((k >> shift) & 0xff) << 2);
  const p = <usize>load<u32>(slot);
  store<u32>(slot, <u32>p + 1);
  store<u64>(dst + (p << 3), k);
  if (withValues) store<u32>(dstValues + (p << 2), load<u32>(srcValues + (i << 2)));
}

/** One stable counting-sort pass over keys [0, n) on the digit at `shift`. */
// @ts-ignore: decorator
@inline function scatterRange64(src: usize, dst: usize, srcValues: usize, dstValues: usize, n: usize, shift: u64, offsets: usize, withValues: bool): void {
  let i: usize = 0;
  for (; i + 4 <= n; i += 4) {
    scatterOne64(src, dst, srcValues, dstValues, i, shift, offsets, withValues);
    scatterOne64(src, dst, srcValues, dstValues, i + 1, shift, offsets, withValues);
    scatterOne64(src, dst, srcValues, dstValues, i + 2, shift, offsets, withValues);
    scatterOne64(src, dst, srcValues, dstValues, i + 3, shift, offsets, withValues);
  }
  for (; i < n; i++) scatterOne64(src, dst, srcValues, dstValues, i, shift, offsets, withValues);
}

/** The pass of one digit (0..7), with or without values; constant shifts as in scatterPass. */
// @ts-ignore: decorator
@inline function scatterDigit64(src: usize, dst: usize, srcValues: usize, dstValues: usize, n: usize, digit: u32, offsets: usize, withValues: bool): void {
  if (digit == 0) scatterRange64(src, dst, srcValues, dstValues, n, 0, offsets, withValues);
  else if (digit == 1) scatterRange64(src, dst, srcValues, dstValues, n, 8, offsets, withValues);
  else if (digit == 2) scatterRange64(src, dst, srcValues, dstValues, n, 16, offsets, withValues);
  else if (digit == 3) scatterRange64(src, dst, srcValues, dstValues, n, 24, offsets, withValues);
  else if (digit == 4) scatterRange64(src, dst, srcValues, dstValues, n, 32, offsets, withValues);
  else if (digit == 5) scatterRange64(src, dst, srcValues, dstValues, n, 40, offsets, withValues);
  else if (digit == 6) scatterRange64(src, dst, srcValues, dstValues, n, 48, offsets, withValues);
  else scatterRange64(src, dst, srcValues, dstValues, n, 56, offsets, withValues);
}

function scatterPass64(src: usize, dst: usize, srcValues: usize, dstValues: usize, n: usize, digit: u32, offsets: usize): void {
  if (srcValues != 0) scatterDigit64(src, dst, srcValues, dstValues, n, digit, offsets, true);
  else scatterDigit64(src, dst, 0, 0, n, digit, offsets, false);
}

/** Digit `digit` (0..7) of a transformed key. */
// @ts-ignore: decorator
@inline function digitOf64(k: u64, digit: u32): usize {
  return <usize>((k >> (<u64>digit << 3)) & 0xff);
}

/** As lsdPasses, on 64-bit keys: digits [0, digits). Returns 1 when the result is in `tmp`. */
function lsdPasses64(keys: usize, tmp: usize, values: usize, valuesTmp: usize, n: usize, digits: u32, histograms: usize): i32 {
  const first = load<u64>(keys);
  let src = keys;
  let dst = tmp;
  let srcValues = values;
  let dstValues = valuesTmp;
  let inTmp: i32 = 0;
  for (let digit: u32 = 0; digit < digits; digit++) {
    const h = histograms + <usize>digit * HISTOGRAM_BYTES;
    if (<usize>load<u32>(h + (digitOf64(first, digit) << 2)) == n) continue;
    histogramToOffsets(h);
    scatterPass64(src, dst, srcValues, dstValues, n, digit, h);
    const t = src; src = dst; dst = t;
    const tv = srcValues; srcValues = dstValues; dstValues = tv;
    inTmp ^= 1;
  }
  return inTmp;
}

/** Counts digits [0, digits) (1..8) of the transformed keys into their (zeroed) tables. */
function countLowDigits64(keys: usize, n: usize, digits: u32, histograms: usize): void {
  for (let i: usize = 0; i < n; i++) {
    const k = load<u64>(keys + (i << 3));
    for (let d: u32 = 0; d < digits; d++) {
      const a = histograms + <usize>d * HISTOGRAM_BYTES + (digitOf64(k, d) << 2);
      store<u32>(a, load<u32>(a) + 1);
    }
  }
}

/** Counts one digit (0..7) of the transformed keys into the (zeroed) table at `h`. */
function countDigit64(keysPtr: usize, n: usize, digit: u32, h: usize): void {
  const shift = <u64>digit << 3;
  for (let i: usize = 0; i < n; i++) {
    const a = h + (<usize>((load<u64>(keysPtr + (i << 3)) >> shift) & 0xff) << 2);
    store<u32>(a, load<u32>(a) + 1);
  }
}

/**
 * From this many 64-bit keys on, the MSD split first (as MSD_MIN_KEYS: the same bytes, 12 MiB of
 * keys, 24 MiB with tmp in a 32 MiB L3).
 */
const MSD_MIN_KEYS_64: usize = 3 << 19;

/** A bucket this small is sorted by LSD passes (as LEAF_MAX_KEYS: 512 KiB of keys). */
const LEAF_MAX_KEYS_64: usize = 1 << 16;

/** As sortRange, on 64-bit keys (digits 0..digit, digit <= 6) and u32 values. */
function sortRange64(src: usize, other: usize, srcValues: usize, otherValues: usize, count: usize, digit: u32, wantSrc: bool, scratchPtr: usize): void {
  if (count <= LEAF_MAX_KEYS_64 || digit == 0) {
    memory.fill(scratchPtr, 0, <usize>(digit + 1) * HISTOGRAM_BYTES);
    countLowDigits64(src, count, digit + 1, scratchPtr);
    const inOther = lsdPasses64(src, other, srcValues, otherValues, count, digit + 1, scratchPtr) != 0;
    if (inOther == wantSrc) {
      // An even number of passes where an odd one was wanted, or the other way round.
      memory.copy(inOther ? src : other, inOther ? other : src, count << 3);
      if (srcValues != 0) memory.copy(inOther ? srcValues : otherValues, inOther ? otherValues : srcValues, count << 2);
    }
    return;
  }
  const h = scratchPtr + <usize>digit * HISTOGRAM_BYTES;
  memory.fill(h, 0, HISTOGRAM_BYTES);
  countDigit64(src, count, digit, h);
  if (<usize>load<u32>(h + (digitOf64(load<u64>(src), digit) << 2)) == count) {
    sortRange64(src, other, srcValues, otherValues, count, digit - 1, wantSrc, scratchPtr);
    return;
  }
  histogramToOffsets(h);
  scatterPass64(src, other, srcValues, otherValues, count, digit, h);
  // Now in `other`, bucket by bucket: each sorts on the digits below and ends where wanted.
  let start: usize = 0;
  for (let bucket: usize = 0; bucket < 256; bucket++) {
    const end = <usize>load<u32>(h + (bucket << 2));
    if (end > start) {
      const k = start << 3;
      const v = start << 2;
      sortRange64(other + k, src + k, srcValues != 0 ? otherValues + v : 0, srcValues != 0 ? srcValues + v : 0, end - start, digit - 1, !wantSrc, scratchPtr);
    }
    start = end;
  }
}

/**
 * As transformAndCountTop, on 64-bit keys: transforms in place, counts the top digit (7) into
 * the table at `top` (through four lane tables at `lanes`, key i into table i & 3), and returns
 * the bits in which some key differs from the first.
 */
// @ts-ignore: decorator
@inline function transformAndCountTop64(keysPtr: usize, n: usize, kind: i32, lanes: usize, top: usize): u64 {
  const first = transformKey64(load<u64>(keysPtr), kind);
  let differs: u64 = 0;
  let i: usize = 0;
  if (ASC_FEATURE_SIMD) {
    const firstLanes = i64x2.splat(<i64>first);
    let acc = i64x2.splat(0);
    for (; i + 4 <= n; i += 4) {
      const p = keysPtr + (i << 3);
      const k0 = transformKeys2(v128.load(p), kind);
      const k1 = transformKeys2(v128.load(p, 16), kind);
      if (kind != KIND_U64) {
        v128.store(p, k0);
        v128.store(p, k1, 16);
      }
      acc = v128.or(acc, v128.or(v128.xor(k0, firstLanes), v128.xor(k1, firstLanes)));
      const a = lanes + (<usize>(<u64>i64x2.extract_lane(k0, 0) >> 56) << 2);
      const b = lanes + HISTOGRAM_BYTES + (<usize>(<u64>i64x2.extract_lane(k0, 1) >> 56) << 2);
      const c = lanes + 2 * HISTOGRAM_BYTES + (<usize>(<u64>i64x2.extract_lane(k1, 0) >> 56) << 2);
      const d = lanes + 3 * HISTOGRAM_BYTES + (<usize>(<u64>i64x2.extract_lane(k1, 1) >> 56) << 2);
      store<u32>(a, load<u32>(a) + 1);
      store<u32>(b, load<u32>(b) + 1);
      store<u32>(c, load<u32>(c) + 1);
      store<u32>(d, load<u32>(d) + 1);
    }
    differs = <u64>(i64x2.extract_lane(acc, 0) | i64x2.extract_lane(acc, 1));
  }
  for (; i < n; i++) {
    const p = keysPtr + (i << 3);
    const k = transformKey64(load<u64>(p), kind);
    if (kind != KIND_U64) store<u64>(p, k);
    differs |= k ^ first;
    const a = lanes + <usize>(i & 3) * HISTOGRAM_BYTES + (<usize>(k >> 56) << 2);
    store<u32>(a, load<u32>(a) + 1);
  }
  for (let b: usize = 0; b < HISTOGRAM_BYTES; b += 4) {
    store<u32>(top + b, load<u32>(lanes + b) + load<u32>(lanes + HISTOGRAM_BYTES + b) + load<u32>(lanes + 2 * HISTOGRAM_BYTES + b) + load<u32>(lanes + 3 * HISTOGRAM_BYTES + b));
  }
  return differs;
}

/** Sorts n >= MSD_MIN_KEYS_64 keys; same contract as radixSort64. */
function sortLarge64(keysPtr: usize, keysTmpPtr: usize, valuesPtr: usize, valuesTmpPtr: usize, n: usize, keyKind: i32, scratchPtr: usize): i32 {
  const topTable = scratchPtr + 7 * HISTOGRAM_BYTES;
  memory.fill(scratchPtr, 0, 4 * HISTOGRAM_BYTES); // the four lane tables, summed into table 7
  let differs: u64;
  if (keyKind == KIND_F64) differs = transformAndCountTop64(keysPtr, n, KIND_F64, scratchPtr, topTable);
  else if (keyKind == KIND_I64) differs = transformAndCountTop64(keysPtr, n, KIND_I64, scratchPtr, topTable);
  else differs = transformAndCountTop64(keysPtr, n, KIND_U64, scratchPtr, topTable);
  if (differs == 0) {
    // All keys equal: nothing moves.
    untransformAny64(keysPtr, n, keyKind);
    return 0;
  }
  const top = <u32>(63 - clz(differs)) >> 3; // the most significant digit that varies
  const h = scratchPtr + <usize>top * HISTOGRAM_BYTES;
  if (top != 7) {
    memory.fill(h, 0, HISTOGRAM_BYTES);
    countDigit64(keysPtr, n, top, h);
  }
  histogramToOffsets(h);
  scatterPass64(keysPtr, keysTmpPtr, valuesPtr, valuesTmpPtr, n, top, h);
  if ((differs & ((<u64>1 << (<u64>top << 3)) - 1)) == 0) {
    // Only one digit varies: that pass was the sort, the result in tmp.
    untransformAny64(keysTmpPtr, n, keyKind);
    return 1;
  }
  // The offsets are now the bucket ends; each bucket sorts on the digits below into keysPtr
  // and its transform is undone while it is still in cache.
  let start: usize = 0;
  for (let bucket: usize = 0; bucket < 256; bucket++) {
    const end = <usize>load<u32>(h + (bucket << 2));
    if (end > start) {
      const k = start << 3;
      const v = start << 2;
      sortRange64(keysTmpPtr + k, keysPtr + k, valuesPtr != 0 ? valuesTmpPtr + v : 0, valuesPtr != 0 ? valuesPtr + v : 0, end - start, top - 1, false, scratchPtr);
      untransformAny64(keysPtr + k, end - start, keyKind);
    }
    start = end;
  }
  return 0;
}

/**
 * Stable radix sort of `n` 64-bit keys at `keysPtr`, ascending: u64 (keyKind 3), i64 (4), or
 * f64 (5) in IEEE 754 totalOrder (-NaN < -Inf < -1 < -0 < +0 < denormals < +Inf < +NaN; bit
 * patterns are kept, NaN payloads included). When `valuesPtr` is not 0, `n` u32 values (4 bytes
 * each) move with their keys, and equal keys keep their values' input order. `keysTmpPtr` (and
 * `valuesTmpPtr` with values) are scratch of the same size; `scratchPtr` is 8192 bytes
 * (SORT64_SCRATCH_BYTES: eight histograms). Returns 0 when the sorted result is in
 * keysPtr/valuesPtr, 1 when it is in keysTmpPtr/valuesTmpPtr. No buffer may overlap another.
 *
 * Example: f64 keys [2, -0, NaN, -1, 0], values [0,1,2,3,4] -> keys [-1, -0, 0, 2, NaN],
 * values [3,1,4,0,2].
 *
 * Algorithm: radixSort32's on eight 8-bit digits. Below 3 * 2^19 keys (12 MiB), LSD: one pass
 * transforms the keys in place to order-preserving u64 (v128, two keys a vector) and counts all
 * eight digit histograms; each digit that is not equal in every key is a stable scatter between
 * keys and tmp; the transform is undone in the buffer holding the result. Keys of a narrow range
 * (small integers in i64, floats of few exponents) skip their constant digits. From 3 * 2^19
 * keys, one MSD scatter on the most significant digit that varies, then each bucket sorted by
 * LSD passes on the digits below while it sits in cache (split again above 2^16 keys).
 */
export function radixSort64(
  keysPtr: usize,
  keysTmpPtr: usize,
  valuesPtr: usize,
  valuesTmpPtr: usize,
  n: usize,
  keyKind: i32,
  scratchPtr: usize,
): i32 {
  if (n == 0) return 0;
  if (valuesPtr == 0) valuesTmpPtr = 0; // "no values" is tested on both pointers of a pass
  if (n >= MSD_MIN_KEYS_64) return sortLarge64(keysPtr, keysTmpPtr, valuesPtr, valuesTmpPtr, n, keyKind, scratchPtr);

  memory.fill(scratchPtr, 0, 8 * HISTOGRAM_BYTES);
  if (keyKind == KIND_F64) transformAndCount64(keysPtr, n, KIND_F64, scratchPtr);
  else if (keyKind == KIND_I64) transformAndCount64(keysPtr, n, KIND_I64, scratchPtr);
  else transformAndCount64(keysPtr, n, KIND_U64, scratchPtr);
  const inTmp = lsdPasses64(keysPtr, keysTmpPtr, valuesPtr, valuesTmpPtr, n, 8, scratchPtr);
  untransformAny64(inTmp ? keysTmpPtr : keysPtr, n, keyKind);
  return inTmp;
}
