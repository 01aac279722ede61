import { radixSort32, radixSort64 } from './radix-sort';

// Kernels the worker pool needs to split work across threads (ts/cpu/cpu-path.ts): segment
// reductions for the scan, merge-path splitting and stable merging for the sort (sort segments,
// then merge; 32- and 64-bit keys), and a bulk copy. Same rules as the other kernels: no
// allocation, pointers in.

/** Order-preserving u32 of a 32-bit key: 0 u32, 1 i32 (flip sign), 2 f32 (IEEE totalOrder). */
// @ts-ignore: decorator
@inline function orderKey(bits: u32, kind: i32): u32 {
  if (kind == 1) return bits ^ 0x80000000;
  if (kind == 2) return bits ^ (<u32>(<i32>bits >> 31) | 0x80000000);
  return bits;
}

/**
 * Wrapping sum of `n` u32 (or i32) at `inPtr`. [1, 2, 0xffffffff] -> 2.
 * The reduce step of a reduce-then-scan across segments.
 */
export function reduceU32(inPtr: usize, n: usize): u32 {
  let i: usize = 0;
  let sum: u32 = 0;
  if (ASC_FEATURE_SIMD) {
    let acc = i32x4.splat(0);
    for (; i + 4 <= n; i += 4) acc = i32x4.add(acc, v128.load(inPtr + (i << 2)));
    sum = i32x4.extract_lane(acc, 0) + i32x4.extract_lane(acc, 1) + i32x4.extract_lane(acc, 2) + i32x4.extract_lane(acc, 3);
  }
  for (; i < n; i++) sum += load<u32>(inPtr + (i << 2));
  return sum;
}

/** Sum of `n` f32 at `inPtr`, in float32 (four lanes, then the lanes, then the tail). */
export function reduceF32(inPtr: usize, n: usize): f32 {
  let i: usize = 0;
  let sum: f32 = 0;
  if (ASC_FEATURE_SIMD) {
    let acc = f32x4.splat(0);
    for (; i + 4 <= n; i += 4) acc = f32x4.add(acc, v128.load(inPtr + (i << 2)));
    sum = f32x4.extract_lane(acc, 0) + f32x4.extract_lane(acc, 1) + f32x4.extract_lane(acc, 2) + f32x4.extract_lane(acc, 3);
  }
  for (; i < n; i++) sum += load<f32>(inPtr + (i << 2));
  return sum;
}

/**
 * Merge path (Odeh, Green et al., "Merge Path - Parallel Merging Made Simple", 2012): how many
 * of the first `diag` outputs of a stable merge of sorted A and B come from A. Keys compare by
 * `kind` order; on ties A comes first. A = [1,3,5], B = [2,3,4], diag 3 -> 2 (outputs 1,2,3a).
 */
export function mergePathSplit32(aPtr: usize, aLen: usize, bPtr: usize, bLen: usize, diag: usize, kind: i32): f64 {
  let lo: usize = diag > bLen ? diag - bLen : 0;
  let hi: usize = diag < aLen ? diag : aLen;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    const a = orderKey(load<u32>(aPtr + (mid << 2)), kind);
    const b = orderKey(load<u32>(bPtr + ((diag - 1 - mid) << 2)), kind);
    if (a <= b) lo = mid + 1;
    else hi = mid;
  }
  return <f64>lo;
}

/**
 * Stable merge of sorted A (aLen keys) and B (bLen keys) into out (aLen + bLen keys); when
 * `aValsPtr` is not 0 the u32 values move with their keys. Ties take A first. Outputs must not
 * overlap the inputs. A = [1,3], B = [2,3] -> [1,2,3a,3b].
 */
export function mergeRuns32(
  aKeysPtr: usize, aValsPtr: usize, aLen: usize,
  bKeysPtr: usize, bValsPtr: usize, bLen: usize,
  outKeysPtr: usize, outValsPtr: usize, kind: i32,
): void {
  let i: usize = 0;
  let j: usize = 0;
  let o: usize = 0;
  const withValues = aValsPtr != 0;
  // Branch-free: both candidates are loaded, `select` picks one and the indices advance by the
  // comparison's 0 or 1, so random keys cost no mispredicted branch.
  while (i < aLen && j < bLen) {
    const aBits = load<u32>(aKeysPtr + (i << 2));
    const bBits = load<u32>(bKeysPtr + (j << 2));
    const takeB = orderKey(bBits, kind) < orderKey(aBits, kind);
    store<u32>(outKeysPtr + (o << 2), select<u32>(bBits, aBits, takeB));
    if (withValues) {
      const aVal = load<u32>(aValsPtr + (i << 2));
      const bVal = load<u32>(bValsPtr + (j << 2));
      store<u32>(outValsPtr + (o << 2), select<u32>(bVal, aVal, takeB));
    }
    j += <usize>takeB;
    i += <usize>!takeB;
    o++;
  }
  if (i < aLen) {
    memory.copy(outKeysPtr + (o << 2), aKeysPtr + (i << 2), (aLen - i) << 2);
    if (withValues) memory.copy(outValsPtr + (o << 2), aValsPtr + (i << 2), (aLen - i) << 2);
  }
  if (j < bLen) {
    memory.copy(outKeysPtr + (o << 2), bKeysPtr + (j << 2), (bLen - j) << 2);
    if (withValues) memory.copy(outValsPtr + (o << 2), bValsPtr + (j << 2), (bLen - j) << 2);
  }
}

/** memmove of `n` bytes from `srcPtr` to `dstPtr` (overlap allowed): wasm's memory.copy. */
export function copyBytes(dstPtr: usize, srcPtr: usize, n: usize): void {
  memory.copy(dstPtr, srcPtr, n);
}

/** memmove of `n` ranges, in order, listed at `listPtr` as u32 triples (destination, source, bytes). */
export function copyRanges(listPtr: usize, n: usize): void {
  for (let i: usize = 0; i < n; i++) {
    const e = listPtr + i * 12;
    memory.copy(<usize>load<u32>(e), <usize>load<u32>(e, 4), <usize>load<u32>(e, 8));
  }
}

// ---- parallel MSD split for the sort ------------------------------------------------------
// The pool sorts many keys as: every worker counts the digits of its segment
// (radixHistograms32), the engine picks the most significant digit that varies and turns the
// counts into per-worker bucket offsets, every worker scatters its segment stably into the
// buckets (radixScatter32), and every worker sorts a range of buckets (radixSortBuckets32),
// each small enough to stay in cache. Stable throughout: segments scatter in order.


/**
 * Counts the four 8-bit digits of the order keys of `n` keys into 4 x 256 u32 at `histPtr`
 * (digit 0, the least significant, first). Overwrites the counts.
 */
export function radixHistograms32(keysPtr: usize, n: usize, kind: i32, histPtr: usize): void {
  memory.fill(histPtr, 0, 4 * 256 * 4);
  for (let i: usize = 0; i < n; i++) {
    const k = orderKey(load<u32>(keysPtr + (i << 2)), kind);
    const h0 = histPtr + ((k & 0xff) << 2);
    const h1 = histPtr + 1024 + (((k >> 8) & 0xff) << 2);
    const h2 = histPtr + 2048 + (((k >> 16) & 0xff) << 2);
    const h3 = histPtr + 3072 + ((k >> 24) << 2);
    store<u32>(h0, load<u32>(h0) + 1);
    store<u32>(h1, load<u32>(h1) + 1);
    store<u32>(h2, load<u32>(h2) + 1);
    store<u32>(h3, load<u32>(h3) + 1);
  }
}

/**
 * Stable scatter of `n` keys (and u32 values when `srcValsPtr` is not 0) by the 8-bit digit at
 * bit `shift` of their order keys: key i goes to dst[offsets[digit]++]. `offsetsPtr` holds 256
 * u32 element offsets into dst, advanced in place. Keys keep their bits.
 */
export function radixScatter32(
  srcKeysPtr: usize, srcValsPtr: usize, dstKeysPtr: usize, dstValsPtr: usize,
  n: usize, kind: i32, shift: u32, offsetsPtr: usize,
): void {
  const withValues = srcValsPtr != 0;
  for (let i: usize = 0; i < n; i++) {
    const bits = load<u32>(srcKeysPtr + (i << 2));
    const slot = offsetsPtr + (((orderKey(bits, kind) >> shift) & 0xff) << 2);
    const at = <usize>load<u32>(slot);
    store<u32>(slot, <u32>at + 1);
    store<u32>(dstKeysPtr + (at << 2), bits);
    if (withValues) store<u32>(dstValsPtr + (at << 2), load<u32>(srcValsPtr + (i << 2)));
  }
}

/**
 * Sorts buckets `first` .. `last` - 1 of keys (and values) in place: bucket b holds elements
 * bounds[b] .. bounds[b + 1] - 1 (`boundsPtr`: u32 element offsets). `tmpKeysPtr` /
 * `tmpValsPtr` are scratch of the same layout; `scratchPtr` is 4096 bytes.
 */
export function radixSortBuckets32(
  keysPtr: usize, tmpKeysPtr: usize, valsPtr: usize, tmpValsPtr: usize,
  boundsPtr: usize, first: u32, last: u32, kind: i32, scratchPtr: usize,
): void {
  for (let b = first; b < last; b++) {
    const start = <usize>load<u32>(boundsPtr + (<usize>b << 2));
    const len = <usize>load<u32>(boundsPtr + ((<usize>b + 1) << 2)) - start;
    if (len <= 1) continue;
    const o = start << 2;
    const inTmp = radixSort32(keysPtr + o, tmpKeysPtr + o, valsPtr != 0 ? valsPtr + o : 0, valsPtr != 0 ? tmpValsPtr + o : 0, len, kind, scratchPtr);
    if (inTmp == 1) {
      memory.copy(keysPtr + o, tmpKeysPtr + o, len << 2);
      if (valsPtr != 0) memory.copy(valsPtr + o, tmpValsPtr + o, len << 2);
    }
  }
}

// ---- the same for 64-bit keys (u64 3, i64 4, f64 5; values stay u32) -----------------------

/** Order-preserving u64 of a 64-bit key: 3 u64, 4 i64 (flip sign), 5 f64 (IEEE totalOrder). */
// @ts-ignore: decorator
@inline function orderKey64(bits: u64, kind: i32): u64 {
  if (kind == 4) return bits ^ 0x8000000000000000;
  if (kind == 5) return bits ^ (<u64>(<i64>bits >> 63) | 0x8000000000000000);
  return bits;
}

/** {@link mergePathSplit32} on 64-bit keys (`kind` 3, 4 or 5). */
export function mergePathSplit64(aPtr: usize, aLen: usize, bPtr: usize, bLen: usize, diag: usize, kind: i32): f64 {
  let lo: usize = diag > bLen ? diag - bLen : 0;
  let hi: usize = diag < aLen ? diag : aLen;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    const a = orderKey64(load<u64>(aPtr + (mid << 3)), kind);
    const b = orderKey64(load<u64>(bPtr + ((diag - 1 - mid) << 3)), kind);
    if (a <= b) lo = mid + 1;
    else hi = mid;
  }
  return <f64>lo;
}

/** {@link mergeRuns32} on 64-bit keys (8 bytes each) with u32 values (4 bytes each). */
export function mergeRuns64(
  aKeysPtr: usize, aValsPtr: usize, aLen: usize,
  bKeysPtr: usize, bValsPtr: usize, bLen: usize,
  outKeysPtr: usize, outValsPtr: usize, kind: i32,
): void {
  let i: usize = 0;
  let j: usize = 0;
  let o: usize = 0;
  const withValues = aValsPtr != 0;
  while (i < aLen && j < bLen) {
    const aBits = load<u64>(aKeysPtr + (i << 3));
    const bBits = load<u64>(bKeysPtr + (j << 3));
    const takeB = orderKey64(bBits, kind) < orderKey64(aBits, kind);
    store<u64>(outKeysPtr + (o << 3), select<u64>(bBits, aBits, takeB));
    if (withValues) {
      const aVal = load<u32>(aValsPtr + (i << 2));
      const bVal = load<u32>(bValsPtr + (j << 2));
      store<u32>(outValsPtr + (o << 2), select<u32>(bVal, aVal, takeB));
    }
    j += <usize>takeB;
    i += <usize>!takeB;
    o++;
  }
  if (i < aLen) {
    memory.copy(outKeysPtr + (o << 3), aKeysPtr + (i << 3), (aLen - i) << 3);
    if (withValues) memory.copy(outValsPtr + (o << 2), aValsPtr + (i << 2), (aLen - i) << 2);
  }
  if (j < bLen) {
    memory.copy(outKeysPtr + (o << 3), bKeysPtr + (j << 3), (bLen - j) << 3);
    if (withValues) memory.copy(outValsPtr + (o << 2), bValsPtr + (j << 2), (bLen - j) << 2);
  }
}

/**
 * Counts the eight 8-bit digits of the order keys of `n` 64-bit keys into 8 x 256 u32 at
 * `histPtr` (digit 0, the least significant, first). Overwrites the counts.
 */
export function radixHistograms64(keysPtr: usize, n: usize, kind: i32, histPtr: usize): void {
  memory.fill(histPtr, 0, 8 * 256 * 4);
  for (let i: usize = 0; i < n; i++) {
    const k = orderKey64(load<u64>(keysPtr + (i << 3)), kind);
    const lo = <u32>k;
    const hi = <u32>(k >> 32);
    const h0 = histPtr + ((lo & 0xff) << 2);
    const h1 = histPtr + 1024 + (((lo >> 8) & 0xff) << 2);
    const h2 = histPtr + 2048 + (((lo >> 16) & 0xff) << 2);
    const h3 = histPtr + 3072 + ((lo >> 24) << 2);
    const h4 = histPtr + 4096 + ((hi & 0xff) << 2);
    const h5 = histPtr + 5120 + (((hi >> 8) & 0xff) << 2);
    const h6 = histPtr + 6144 + (((hi >> 16) & 0xff) << 2);
    const h7 = histPtr + 7168 + ((hi >> 24) << 2);
    store<u32>(h0, load<u32>(h0) + 1);
    store<u32>(h1, load<u32>(h1) + 1);
    store<u32>(h2, load<u32>(h2) + 1);
    store<u32>(h3, load<u32>(h3) + 1);
    store<u32>(h4, load<u32>(h4) + 1);
    store<u32>(h5, load<u32>(h5) + 1);
    store<u32>(h6, load<u32>(h6) + 1);
    store<u32>(h7, load<u32>(h7) + 1);
  }
}

/** {@link radixScatter32} on 64-bit keys: `shift` 0..56 of their order keys; u32 values. */
export function radixScatter64(
  srcKeysPtr: usize, srcValsPtr: usize, dstKeysPtr: usize, dstValsPtr: usize,
  n: usize, kind: i32, shift: u32, offsetsPtr: usize,
): void {
  const withValues = srcValsPtr != 0;
  const s = <u64>shift;
  for (let i: usize = 0; i < n; i++) {
    const bits = load<u64>(srcKeysPtr + (i << 3));
    const slot = offsetsPtr + (<usize>((orderKey64(bits, kind) >> s) & 0xff) << 2);
    const at = <usize>load<u32>(slot);
    store<u32>(slot, <u32>at + 1);
    store<u64>(dstKeysPtr + (at << 3), bits);
    if (withValues) store<u32>(dstValsPtr + (at << 2), load<u32>(srcValsPtr + (i << 2)));
  }
}

/** {@link radixSortBuckets32} on 64-bit keys (radixSort64 per bucket); `scratchPtr` is 8192 bytes. */
export function radixSortBuckets64(
  keysPtr: usize, tmpKeysPtr: usize, valsPtr: usize, tmpValsPtr: usize,
  boundsPtr: usize, first: u32, last: u32, kind: i32, scratchPtr: usize,
): void {
  for (let b = first; b < last; b++) {
    const start = <usize>load<u32>(boundsPtr + (<usize>b << 2));
    const len = <usize>load<u32>(boundsPtr + ((<usize>b + 1) << 2)) - start;
    if (len <= 1) continue;
    const k = start << 3;
    const v = start << 2;
    const inTmp = radixSort64(keysPtr + k, tmpKeysPtr + k, valsPtr != 0 ? valsPtr + v : 0, valsPtr != 0 ? tmpValsPtr + v : 0, len, kind, scratchPtr);
    if (inTmp == 1) {
      memory.copy(keysPtr + k, tmpKeysPtr + k, len << 3);
      if (valsPtr != 0) memory.copy(valsPtr + v, tmpValsPtr + v, len << 2);
    }
  }
}
