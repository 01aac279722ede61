// Kernels of the error-bounded lossy mode (docs/format.md, "Stage 5: quantize"): Haugen's
// mid-tread uniform threshold quantizer of f32 elements to integer codes, and its inverse. The
// parameters (step, its reciprocal, the tolerance, the magnitude limit) are derived from the
// bound in TypeScript (ts/codec/quantize.ts); these kernels allocate nothing and take pointers.
//
// A code is a u32: zigzag(q) = (q << 1) ^ (q >> 31) for a quantized element (|q| <= 2^23 + 2,
// so q is exact in f32), or one of five reserved codes at the top of the u32 range. Every float
// operation is one IEEE f32 operation with round-to-nearest-even (wasm's semantics, and WGSL's
// for *, -, round and the i32 <-> f32 conversions of these magnitudes), so the WGSL twin in
// shaders/codec-quantize.wgsl produces the same bytes.
//
// One source, two builds: `if (ASC_FEATURE_SIMD)` picks the v128 bodies; the scalar loop is
// both the tail of the SIMD build and the whole scalar twin.

/** Reserved codes (ts/codec/quantize.ts `Code` mirrors them). */
const CODE_EXCEPTION: u32 = 0xffffffff;
const CODE_NAN: u32 = 0xfffffffe;
const CODE_POS_INF: u32 = 0xfffffffd;
const CODE_NEG_INF: u32 = 0xfffffffc;
const CODE_NEG_ZERO: u32 = 0xfffffffb;
/** Largest code of a quantized element: zigzag(2^24) (the reader's bound; the writer stays below). */
const CODE_MAX: u32 = 1 << 25;
const CANONICAL_NAN: u32 = 0x7fc00000;

/** The reserved code of a special or unquantizable element (bits `b`), CODE_EXCEPTION if none fits. */
// @ts-ignore: decorator
@inline function specialCode(b: u32): u32 {
  const a = b & 0x7fffffff;
  if (b == CANONICAL_NAN) return CODE_NAN;
  if (a == 0x7f800000) return b >> 31 ? CODE_NEG_INF : CODE_POS_INF;
  if (b == 0x80000000) return CODE_NEG_ZERO;
  return CODE_EXCEPTION;
}

/** The value of a reserved code other than CODE_EXCEPTION (its bits); 0 for CODE_EXCEPTION. */
// @ts-ignore: decorator
@inline function specialBits(c: u32): u32 {
  if (c == CODE_NAN) return CANONICAL_NAN;
  if (c == CODE_POS_INF) return 0x7f800000;
  if (c == CODE_NEG_INF) return 0xff800000;
  if (c == CODE_NEG_ZERO) return 0x80000000;
  return 0;
}

/**
 * Quantizes one element (bits `b`); returns its code and writes its reconstruction's bits to
 * `reconPtr`. The rule (both builds, and the WGSL twin):
 *   specials (NaN, +-Infinity, -0) and |x| > lim (bits compared): a reserved code, recon = x;
 *   q = i32(round(x * inv)); x' = f32(q) * step; accepted when |x - x'| < tol;
 *   else the neighbour q + sign(x - x') likewise; else CODE_EXCEPTION, recon = x.
 */
// @ts-ignore: decorator
@inline function quantizeOne(b: u32, step: f32, inv: f32, tol: f32, limBits: u32, reconPtr: usize): u32 {
  if ((b & 0x7fffffff) > limBits || b == 0x80000000) {
    store<u32>(reconPtr, b);
    return specialCode(b);
  }
  const x = reinterpret<f32>(b);
  let q = <i32>nearest<f32>(x * inv);
  let r = <f32>q * step;
  if (abs<f32>(x - r) >= tol) {
    q += x > r ? 1 : -1;
    r = <f32>q * step;
    if (abs<f32>(x - r) >= tol) {
      store<u32>(reconPtr, b);
      return CODE_EXCEPTION;
    }
  }
  store<f32>(reconPtr, r);
  return <u32>((q << 1) ^ (q >> 31));
}

/**
 * Quantizes `n` f32 elements at `inPtr` into u32 codes at `codesPtr` and their reconstructions
 * (what {@link dequantizeF32} will give back, bits for bits) at `reconPtr`. Elements coded
 * CODE_EXCEPTION are listed: index at `excIndexPtr`, bits at `excValuePtr`, the first `cap` of
 * them. Returns how many there are (which may exceed `cap`: the caller then gives up).
 * in [0.0, 0.26, -0.74, NaN, -0.0, 3e38] with step 0.5, inv 2, tol 0.26 -> q [0, 1, -1, -, -, -]
 * -> codes [0, 2, 1, CODE_NAN, CODE_NEG_ZERO, CODE_EXCEPTION], recon [0, 0.5, -0.5, NaN, -0, 3e38],
 * one exception (index 5, the bits of 3e38).
 * No overlap between the inputs and the outputs.
 */
export function quantizeF32(
  inPtr: usize, n: usize, step: f32, inv: f32, tol: f32, limBits: u32,
  codesPtr: usize, reconPtr: usize, excIndexPtr: usize, excValuePtr: usize, cap: usize,
): f64 {
  let i: usize = 0;
  let exceptions: usize = 0;
  if (ASC_FEATURE_SIMD) {
    const stepV = f32x4.splat(step);
    const invV = f32x4.splat(inv);
    const tolV = f32x4.splat(tol);
    const limV = i32x4.splat(<i32>limBits);
    const absMask = i32x4.splat(0x7fffffff);
    const negZero = i32x4.splat(<i32>0x80000000);
    const one = i32x4.splat(1);
    for (; i + 4 <= n; i += 4) {
      const b = v128.load(inPtr + (i << 2));
      // lanes the arithmetic cannot take: specials and magnitudes past the limit
      const skip = v128.or(i32x4.gt_u(v128.and(b, absMask), limV), i32x4.eq(b, negZero));
      const q1 = i32x4.trunc_sat_f32x4_s(f32x4.nearest(f32x4.mul(b, invV)));
      const r1 = f32x4.mul(f32x4.convert_i32x4_s(q1), stepV);
      const ok1 = f32x4.lt(f32x4.abs(f32x4.sub(b, r1)), tolV);
      // the neighbour towards x: q1 - (-1) where x > r1 (gt gives all ones), else q1 - 1
      const q2 = i32x4.sub(q1, v128.or(f32x4.gt(b, r1), one));
      const r2 = f32x4.mul(f32x4.convert_i32x4_s(q2), stepV);
      const ok2 = f32x4.lt(f32x4.abs(f32x4.sub(b, r2)), tolV);
      const q = v128.bitselect(q1, q2, ok1);
      const r = v128.bitselect(r1, r2, ok1);
      const ok = v128.andnot(v128.or(ok1, ok2), skip);
      v128.store(codesPtr + (i << 2), v128.xor(i32x4.shl(q, 1), i32x4.shr_s(q, 31)));
      v128.store(reconPtr + (i << 2), r);
      if (!i32x4.all_true(ok)) {
        // rare: redo the lanes that failed one by one (the scalar rule gives the same codes)
        for (let k: usize = 0; k < 4; k++) {
          const at = i + k;
          const c = quantizeOne(load<u32>(inPtr + (at << 2)), step, inv, tol, limBits, reconPtr + (at << 2));
          store<u32>(codesPtr + (at << 2), c);
          if (c == CODE_EXCEPTION) {
            if (exceptions < cap) {
              store<u32>(excIndexPtr + (exceptions << 2), <u32>at);
              store<u32>(excValuePtr + (exceptions << 2), load<u32>(inPtr + (at << 2)));
            }
            exceptions++;
          }
        }
      }
    }
  }
  for (; i < n; i++) {
    const b = load<u32>(inPtr + (i << 2));
    const c = quantizeOne(b, step, inv, tol, limBits, reconPtr + (i << 2));
    store<u32>(codesPtr + (i << 2), c);
    if (c == CODE_EXCEPTION) {
      if (exceptions < cap) {
        store<u32>(excIndexPtr + (exceptions << 2), <u32>i);
        store<u32>(excValuePtr + (exceptions << 2), b);
      }
      exceptions++;
    }
  }
  return <f64>exceptions;
}

/** The bits of f32(q) * step for a code zigzag(q) <= CODE_MAX. */
// @ts-ignore: decorator
@inline function dequantizeOne(c: u32, step: f32): u32 {
  const q = <i32>((c >> 1) ^ (0 - (c & 1)));
  return reinterpret<u32>(<f32>q * step);
}

/**
 * Dequantizes `n` codes at `codesPtr` into f32 elements at `outPtr`: f32(q) * step for
 * zigzag(q) <= 2^25, the value of a reserved code, 0 for CODE_EXCEPTION (the caller scatters the
 * exceptions' values over them). Returns the number of CODE_EXCEPTION codes, or -1 when a code
 * is neither (a corrupt payload). Writes exactly n elements (nothing past them). In place
 * (codesPtr == outPtr) is allowed.
 */
export function dequantizeF32(codesPtr: usize, n: usize, step: f32, outPtr: usize): f64 {
  let i: usize = 0;
  let exceptions: usize = 0;
  if (ASC_FEATURE_SIMD) {
    const stepV = f32x4.splat(step);
    const maxV = i32x4.splat(<i32>CODE_MAX);
    const one = i32x4.splat(1);
    for (; i + 4 <= n; i += 4) {
      const c = v128.load(codesPtr + (i << 2));
      const q = v128.xor(i32x4.shr_u(c, 1), i32x4.sub(i32x4.splat(0), v128.and(c, one)));
      const r = f32x4.mul(f32x4.convert_i32x4_s(q), stepV);
      if (v128.any_true(i32x4.gt_u(c, maxV))) {
        for (let k: usize = 0; k < 4; k++) {
          const ck = load<u32>(codesPtr + ((i + k) << 2));
          let bits: u32;
          if (ck <= CODE_MAX) bits = dequantizeOne(ck, step);
          else if (ck >= CODE_NEG_ZERO) {
            if (ck == CODE_EXCEPTION) exceptions++;
            bits = specialBits(ck);
          } else return -1;
          store<u32>(outPtr + ((i + k) << 2), bits);
        }
      } else {
        v128.store(outPtr + (i << 2), r);
      }
    }
  }
  for (; i < n; i++) {
    const c = load<u32>(codesPtr + (i << 2));
    let bits: u32;
    if (c <= CODE_MAX) bits = dequantizeOne(c, step);
    else if (c >= CODE_NEG_ZERO) {
      if (c == CODE_EXCEPTION) exceptions++;
      bits = specialBits(c);
    } else return -1;
    store<u32>(outPtr + (i << 2), bits);
  }
  return <f64>exceptions;
}

/**
 * Writes `e` exceptions (u32 indices at `excIndexPtr`, strictly increasing and below `n`; u32
 * bits at `excValuePtr`) over the dequantized elements at `outPtr`, checking that the code at
 * each index (`codesPtr`) is CODE_EXCEPTION. Returns 0, or -1 when an index is out of order, out
 * of range or does not point at CODE_EXCEPTION. `codesPtr` must not be `outPtr`.
 */
export function scatterExceptions(codesPtr: usize, n: usize, excIndexPtr: usize, excValuePtr: usize, e: usize, outPtr: usize): i32 {
  let last: i64 = -1;
  for (let j: usize = 0; j < e; j++) {
    const at = load<u32>(excIndexPtr + (j << 2));
    if (<i64>at <= last || <usize>at >= n) return -1;
    if (load<u32>(codesPtr + (<usize>at << 2)) != CODE_EXCEPTION) return -1;
    store<u32>(outPtr + (<usize>at << 2), load<u32>(excValuePtr + (j << 2)));
    last = <i64>at;
  }
  return 0;
}

// ---------------------------------------------------------------------------------------------
// f64 (docs/format.md, "Stage 5: quantize", f64): the same rule in f64 arithmetic. The codes
// are the same u32 codes (zigzag(q) with |q| <= 2^30, the same reserved codes); the canonical
// NaN is 0x7FF8000000000000. Every float operation is one IEEE f64 operation rounding to
// nearest even; the tolerance is the bound itself (an f64), so f64(|x - x'|) < abs means the
// exact |x - x'| < abs. No GPU twin: f64 is a CPU type.
// ---------------------------------------------------------------------------------------------

/** Largest code of a quantized f64 element: zigzag(2^30) (the writer's |q| never passes 2^30). */
const CODE_MAX_F64: u32 = 0x80000000;
const CANONICAL_NAN_F64: u64 = 0x7ff8000000000000;
const ABS_MASK_F64: u64 = 0x7fffffffffffffff;
const INFINITY_F64: u64 = 0x7ff0000000000000;
const NEG_ZERO_F64: u64 = 0x8000000000000000;

/** The reserved code of a special or unquantizable f64 element (bits `b`), CODE_EXCEPTION if none fits. */
// @ts-ignore: decorator
@inline function specialCode64(b: u64): u32 {
  if (b == CANONICAL_NAN_F64) return CODE_NAN;
  if ((b & ABS_MASK_F64) == INFINITY_F64) return <u32>(b >> 63) ? CODE_NEG_INF : CODE_POS_INF;
  if (b == NEG_ZERO_F64) return CODE_NEG_ZERO;
  return CODE_EXCEPTION;
}

/** The f64 bits of a reserved code other than CODE_EXCEPTION; 0 for CODE_EXCEPTION. */
// @ts-ignore: decorator
@inline function specialBits64(c: u32): u64 {
  if (c == CODE_NAN) return CANONICAL_NAN_F64;
  if (c == CODE_POS_INF) return INFINITY_F64;
  if (c == CODE_NEG_INF) return INFINITY_F64 | NEG_ZERO_F64;
  if (c == CODE_NEG_ZERO) return NEG_ZERO_F64;
  return 0;
}

/**
 * Quantizes one f64 element (bits `b`); returns its code and writes its reconstruction's bits to
 * `reconPtr`. The rule of {@link quantizeOne} in f64: specials and |x| > lim (bits compared) get
 * a reserved code (recon = x); q = round(x * inv), x' = f64(q) * step, accepted when
 * |x - x'| < tol; else the neighbour q + sign(x - x'); else CODE_EXCEPTION.
 */
// @ts-ignore: decorator
@inline function quantizeOne64(b: u64, step: f64, inv: f64, tol: f64, limBits: u64, reconPtr: usize): u32 {
  if ((b & ABS_MASK_F64) > limBits || b == NEG_ZERO_F64) {
    store<u64>(reconPtr, b);
    return specialCode64(b);
  }
  const x = reinterpret<f64>(b);
  // (+ 0.0: a -0 from rounding a small negative is q = 0, whose reconstruction is +0)
  let y = nearest<f64>(x * inv) + 0.0;
  let r = y * step;
  if (abs<f64>(x - r) >= tol) {
    y += x > r ? 1.0 : -1.0;
    r = y * step;
    if (abs<f64>(x - r) >= tol) {
      store<u64>(reconPtr, b);
      return CODE_EXCEPTION;
    }
  }
  store<f64>(reconPtr, r);
  const q = <i32>y;
  return <u32>((q << 1) ^ (q >> 31));
}

/**
 * Quantizes `n` f64 elements at `inPtr` into u32 codes at `codesPtr` and their reconstructions
 * (what {@link dequantizeF64} gives back, bits for bits) at `reconPtr`. Parameters: `step`,
 * `inv` = 1 / step, `tol` = the bound, `lim` = step x 2^30 (magnitudes above it, NaN and
 * Infinity are not quantized: compared by bits). Elements coded CODE_EXCEPTION are listed: u32
 * index at `excIndexPtr`, u64 bits at `excValuePtr`, the first `cap` of them. Returns how many
 * there are (which may exceed `cap`: the caller then gives up).
 * in [0.0, 0.26, -0.74, NaN, -0.0, 1e300] with step 0.5, inv 2, tol 0.26, lim 2^29
 * -> codes [0, 2, 1, CODE_NAN, CODE_NEG_ZERO, CODE_EXCEPTION], recon [0, 0.5, -0.5, NaN, -0, 1e300],
 * one exception (index 5, the bits of 1e300).
 * The SIMD build runs two elements a v128 (f64x2), four a step; both builds write the same bytes.
 * No overlap between the inputs and the outputs.
 */
export function quantizeF64(
  inPtr: usize, n: usize, step: f64, inv: f64, tol: f64, lim: f64,
  codesPtr: usize, reconPtr: usize, excIndexPtr: usize, excValuePtr: usize, cap: usize,
): f64 {
  const limBits = reinterpret<u64>(lim);
  let i: usize = 0;
  let exceptions: usize = 0;
  if (ASC_FEATURE_SIMD) {
    const stepV = f64x2.splat(step);
    const invV = f64x2.splat(inv);
    const tolV = f64x2.splat(tol);
    const limV = i64x2.splat(<i64>limBits);
    const absMask = i64x2.splat(<i64>ABS_MASK_F64);
    const negZero = i64x2.splat(<i64>NEG_ZERO_F64);
    const zero = f64x2.splat(0.0);
    const one = f64x2.splat(1.0);
    const minusOne = f64x2.splat(-1.0);
    for (; i + 4 <= n; i += 4) {
      const b0 = v128.load(inPtr + (i << 3));
      const b1 = v128.load(inPtr + (i << 3), 16);
      // lanes the arithmetic cannot take: specials and magnitudes past the limit (|x| bits are
      // below 2^63, so the signed compare is the unsigned one)
      const skip0 = v128.or(i64x2.gt_s(v128.and(b0, absMask), limV), i64x2.eq(b0, negZero));
      const skip1 = v128.or(i64x2.gt_s(v128.and(b1, absMask), limV), i64x2.eq(b1, negZero));
      // q stays a (whole) f64 until the codes: |q| <= 2^30 + 1, so q +- 1 is exact; + 0 turns
      // a -0 (a small negative rounded) into q = +0, whose reconstruction is +0
      const y10 = f64x2.add(f64x2.nearest(f64x2.mul(b0, invV)), zero);
      const y11 = f64x2.add(f64x2.nearest(f64x2.mul(b1, invV)), zero);
      const r10 = f64x2.mul(y10, stepV);
      const r11 = f64x2.mul(y11, stepV);
      const ok10 = f64x2.lt(f64x2.abs(f64x2.sub(b0, r10)), tolV);
      const ok11 = f64x2.lt(f64x2.abs(f64x2.sub(b1, r11)), tolV);
      const y20 = f64x2.add(y10, v128.bitselect(one, minusOne, f64x2.gt(b0, r10)));
      const y21 = f64x2.add(y11, v128.bitselect(one, minusOne, f64x2.gt(b1, r11)));
      const r20 = f64x2.mul(y20, stepV);
      const r21 = f64x2.mul(y21, stepV);
      const ok20 = f64x2.lt(f64x2.abs(f64x2.sub(b0, r20)), tolV);
      const ok21 = f64x2.lt(f64x2.abs(f64x2.sub(b1, r21)), tolV);
      const y0 = v128.bitselect(y10, y20, ok10);
      const y1 = v128.bitselect(y11, y21, ok11);
      v128.store(reconPtr + (i << 3), v128.bitselect(r10, r20, ok10));
      v128.store(reconPtr + (i << 3), v128.bitselect(r11, r21, ok11), 16);
      // the four q as i32 lanes (skipped lanes saturate: redone below), zigzagged
      const q = i8x16.shuffle(
        i32x4.trunc_sat_f64x2_s_zero(y0),
        i32x4.trunc_sat_f64x2_s_zero(y1),
        0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23,
      );
      v128.store(codesPtr + (i << 2), v128.xor(i32x4.shl(q, 1), i32x4.shr_s(q, 31)));
      const ok0 = v128.andnot(v128.or(ok10, ok20), skip0);
      const ok1 = v128.andnot(v128.or(ok11, ok21), skip1);
      if (!i64x2.all_true(v128.and(ok0, ok1))) {
        // rare: redo the four lanes one by one (the scalar rule gives the same codes)
        for (let k: usize = 0; k < 4; k++) {
          const at = i + k;
          const bk = load<u64>(inPtr + (at << 3));
          const c = quantizeOne64(bk, step, inv, tol, limBits, reconPtr + (at << 3));
          store<u32>(codesPtr + (at << 2), c);
          if (c == CODE_EXCEPTION) {
            if (exceptions < cap) {
              store<u32>(excIndexPtr + (exceptions << 2), <u32>at);
              store<u64>(excValuePtr + (exceptions << 3), bk);
            }
            exceptions++;
          }
        }
      }
    }
  }
  for (; i < n; i++) {
    const b = load<u64>(inPtr + (i << 3));
    const c = quantizeOne64(b, step, inv, tol, limBits, reconPtr + (i << 3));
    store<u32>(codesPtr + (i << 2), c);
    if (c == CODE_EXCEPTION) {
      if (exceptions < cap) {
        store<u32>(excIndexPtr + (exceptions << 2), <u32>i);
        store<u64>(excValuePtr + (exceptions << 3), b);
      }
      exceptions++;
    }
  }
  return <f64>exceptions;
}

/** The f64 of a code zigzag(q) <= CODE_MAX_F64: f64(q) * step. */
// @ts-ignore: decorator
@inline function dequantizeOne64(c: u32, step: f64): u64 {
  const q = <i32>((c >> 1) ^ (0 - (c & 1)));
  return reinterpret<u64>(<f64>q * step);
}

/**
 * Dequantizes `n` codes at `codesPtr` into f64 elements at `outPtr`: f64(q) * step for
 * zigzag(q) <= 2^31, the value of a reserved code, 0 for CODE_EXCEPTION (the caller scatters the
 * exceptions' values over them: {@link scatterExceptions64}). Returns the number of
 * CODE_EXCEPTION codes, or -1 when a code is neither (a corrupt payload; the output is then
 * partly written). Writes exactly n elements. No overlap (the output is twice the codes' bytes).
 * codes [0, 2, 1, 0xfffffffe] with step 0.5 -> [0, 0.5, -0.5, NaN], returns 0.
 */
export function dequantizeF64(codesPtr: usize, n: usize, step: f64, outPtr: usize): f64 {
  let i: usize = 0;
  let exceptions: usize = 0;
  if (ASC_FEATURE_SIMD) {
    const stepV = f64x2.splat(step);
    const maxV = i32x4.splat(<i32>CODE_MAX_F64);
    const one = i32x4.splat(1);
    for (; i + 4 <= n; i += 4) {
      const c = v128.load(codesPtr + (i << 2));
      if (v128.any_true(i32x4.gt_u(c, maxV))) {
        for (let k: usize = 0; k < 4; k++) {
          const ck = load<u32>(codesPtr + ((i + k) << 2));
          let bits: u64;
          if (ck <= CODE_MAX_F64) bits = dequantizeOne64(ck, step);
          else if (ck >= CODE_NEG_ZERO) {
            if (ck == CODE_EXCEPTION) exceptions++;
            bits = specialBits64(ck);
          } else return -1;
          store<u64>(outPtr + ((i + k) << 3), bits);
        }
      } else {
        const q = v128.xor(i32x4.shr_u(c, 1), i32x4.sub(i32x4.splat(0), v128.and(c, one)));
        const high = i8x16.shuffle(q, q, 8, 9, 10, 11, 12, 13, 14, 15, 8, 9, 10, 11, 12, 13, 14, 15);
        v128.store(outPtr + (i << 3), f64x2.mul(f64x2.convert_low_i32x4_s(q), stepV));
        v128.store(outPtr + (i << 3), f64x2.mul(f64x2.convert_low_i32x4_s(high), stepV), 16);
      }
    }
  }
  for (; i < n; i++) {
    const c = load<u32>(codesPtr + (i << 2));
    let bits: u64;
    if (c <= CODE_MAX_F64) bits = dequantizeOne64(c, step);
    else if (c >= CODE_NEG_ZERO) {
      if (c == CODE_EXCEPTION) exceptions++;
      bits = specialBits64(c);
    } else return -1;
    store<u64>(outPtr + (i << 3), bits);
  }
  return <f64>exceptions;
}

/**
 * {@link scatterExceptions} for f64 elements: `e` exceptions (u32 indices at `excIndexPtr`,
 * strictly increasing and below `n`; u64 bits at `excValuePtr`, any alignment) written over
 * the dequantized elements at `outPtr`, each at a CODE_EXCEPTION code (`codesPtr`). Returns 0,
 * or -1 when an index is out of order, out of range or not at CODE_EXCEPTION.
 */
export function scatterExceptions64(codesPtr: usize, n: usize, excIndexPtr: usize, excValuePtr: usize, e: usize, outPtr: usize): i32 {
  let last: i64 = -1;
  for (let j: usize = 0; j < e; j++) {
    const at = load<u32>(excIndexPtr + (j << 2));
    if (<i64>at <= last || <usize>at >= n) return -1;
    if (load<u32>(codesPtr + (<usize>at << 2)) != CODE_EXCEPTION) return -1;
    store<u64>(outPtr + (<usize>at << 3), load<u64>(excValuePtr + (j << 3)));
    last = <i64>at;
  }
  return 0;
}
