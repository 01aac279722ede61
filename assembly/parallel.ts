// Kernels the worker pool needs to split work across threads (ts/cpu/parallel.ts): segment
// reductions for the scan, merge-path splitting and stable merging for the sort (sort segments,
// then merge), and a bulk copy. Same rules as the other kernels: no allocation, pointers in.

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
