// Prefix sums (scans) of u32 (also i32: wrapping addition is the same bits) and f32.
//
// SIMD: each v128 of 4 lanes gets its own prefix in registers (two shifted adds, Hillis-Steele
// within the vector), then the running total, splatted to all lanes, is added. Four vectors are
// done per step so that only one add per 16 elements sits on the carry's dependency chain.

/**
 * [z, a0, a1, a2]: the lanes shifted up by one, the additive identity `z` in (0 for u32, -0.0
 * for f32, since x + -0 is x for every x, -0 included, while -0 + 0 is +0).
 */
// @ts-ignore: decorator
@inline function shiftLanes1(a: v128, z: v128): v128 {
  return i8x16.shuffle(z, a, 0, 1, 2, 3, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27);
}

/** [z, z, a0, a1] */
// @ts-ignore: decorator
@inline function shiftLanes2(a: v128, z: v128): v128 {
  return i8x16.shuffle(z, a, 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23);
}

/** [a3, a3, a3, a3] */
// @ts-ignore: decorator
@inline function splatLast(a: v128): v128 {
  return i32x4.shuffle(a, a, 3, 3, 3, 3);
}

/** [carry3, a0, a1, a2]: the exclusive scan of a vector whose inclusive scan is `a`. */
// @ts-ignore: decorator
@inline function exclusiveOf(carry: v128, a: v128): v128 {
  return i32x4.shuffle(carry, a, 3, 4, 5, 6);
}

/** In-register inclusive prefix of 4 lanes, u32 (isFloat false) or f32 lanes. */
// @ts-ignore: decorator
@inline function prefix4(a: v128, isFloat: bool): v128 {
  if (isFloat) {
    const z = f32x4.splat(-0.0);
    a = f32x4.add(a, shiftLanes1(a, z));
    return f32x4.add(a, shiftLanes2(a, z));
  }
  const z = i32x4.splat(0);
  a = i32x4.add(a, shiftLanes1(a, z));
  return i32x4.add(a, shiftLanes2(a, z));
}

// @ts-ignore: decorator
@inline function add4(a: v128, b: v128, isFloat: bool): v128 {
  return isFloat ? f32x4.add(a, b) : i32x4.add(a, b);
}

/**
 * The SIMD body: 16 elements a step, then 4, returning the carry splatted. `inclusive` and
 * `isFloat` are constants at every call, so each instance is a separate straight loop.
 */
// @ts-ignore: decorator
@inline function scanVectors(inPtr: usize, outPtr: usize, n: usize, inclusive: bool, isFloat: bool, carry: v128): v128 {
  let i: usize = 0;
  for (; i + 16 <= n; i += 16) {
    const p = inPtr + (i << 2);
    const q = outPtr + (i << 2);
    // Local prefixes are independent of each other and of the carry.
    const a = prefix4(v128.load(p), isFloat);
    const b = prefix4(v128.load(p, 16), isFloat);
    const c = prefix4(v128.load(p, 32), isFloat);
    const d = prefix4(v128.load(p, 48), isFloat);
    const ca = add4(carry, a, isFloat);
    const cb = add4(splatLast(ca), b, isFloat);
    const cc = add4(splatLast(cb), c, isFloat);
    const cd = add4(splatLast(cc), d, isFloat);
    if (inclusive) {
      v128.store(q, ca);
      v128.store(q, cb, 16);
      v128.store(q, cc, 32);
      v128.store(q, cd, 48);
    } else {
      v128.store(q, exclusiveOf(carry, ca));
      v128.store(q, exclusiveOf(ca, cb), 16);
      v128.store(q, exclusiveOf(cb, cc), 32);
      v128.store(q, exclusiveOf(cc, cd), 48);
    }
    carry = splatLast(cd);
  }
  for (; i + 4 <= n; i += 4) {
    const a = add4(carry, prefix4(v128.load(inPtr + (i << 2)), isFloat), isFloat);
    v128.store(outPtr + (i << 2), inclusive ? a : exclusiveOf(carry, a));
    carry = splatLast(a);
  }
  return carry;
}

/**
 * Prefix sum of `n` u32 from `inPtr` to `outPtr`, starting from `carryIn`; inclusive when
 * `inclusive` is 1, exclusive when 0. Returns carryIn + sum (wrapping), the carry for the next
 * chunk; JS reads the u32 back as an i32, so use `>>> 0`. Also serves i32 (same bits).
 *
 * Example: in [3,1,7,0,4], carryIn 10 -> inclusive [13,14,21,21,25], exclusive
 * [10,13,14,21,21]; returns 25 either way.
 * Overlap: in place (`inPtr === outPtr`) is allowed, other overlap is not.
 *
 * Algorithm (CPU, this file): in-register Hillis-Steele prefix of each v128 (two lane shifts
 * by i8x16.shuffle and adds), carry splatted to all lanes and added; four vectors a step, so the
 * carry chain costs one add and one shuffle per 4 elements. The scalar twin is the plain loop.
 */
export function scanU32(inPtr: usize, outPtr: usize, n: usize, inclusive: i32, carryIn: u32): u32 {
  let i: usize = 0;
  let carry = carryIn;
  if (ASC_FEATURE_SIMD) {
    const c = inclusive
      ? scanVectors(inPtr, outPtr, n, true, false, i32x4.splat(carry))
      : scanVectors(inPtr, outPtr, n, false, false, i32x4.splat(carry));
    carry = <u32>i32x4.extract_lane(c, 0);
    i = n & ~(<usize>3);
  }
  if (inclusive) {
    for (; i < n; i++) {
      carry += load<u32>(inPtr + (i << 2));
      store<u32>(outPtr + (i << 2), carry);
    }
  } else {
    for (; i < n; i++) {
      const x = load<u32>(inPtr + (i << 2));
      store<u32>(outPtr + (i << 2), carry);
      carry += x;
    }
  }
  return carry;
}

/**
 * As {@link scanU32} for f32: returns carryIn + sum as an f32 (widened to a JS number).
 * The SIMD build adds in a different order than the scalar one (within each group of four it
 * adds pairs first), so results differ by rounding: both are within n * eps * sum(|x|) of the
 * exact sum. Example: in [1,2,3,4], carryIn 0.5 -> inclusive [1.5,3.5,6.5,10.5], exclusive
 * [0.5,1.5,3.5,6.5]; returns 10.5.
 */
export function scanF32(inPtr: usize, outPtr: usize, n: usize, inclusive: i32, carryIn: f32): f32 {
  let i: usize = 0;
  let carry = carryIn;
  if (ASC_FEATURE_SIMD) {
    const c = inclusive
      ? scanVectors(inPtr, outPtr, n, true, true, f32x4.splat(carry))
      : scanVectors(inPtr, outPtr, n, false, true, f32x4.splat(carry));
    carry = f32x4.extract_lane(c, 0);
    i = n & ~(<usize>3);
  }
  if (inclusive) {
    for (; i < n; i++) {
      carry += load<f32>(inPtr + (i << 2));
      store<f32>(outPtr + (i << 2), carry);
    }
  } else {
    for (; i < n; i++) {
      const x = load<f32>(inPtr + (i << 2));
      store<f32>(outPtr + (i << 2), carry);
      carry += x;
    }
  }
  return carry;
}
