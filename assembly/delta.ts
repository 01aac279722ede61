// Delta stage of the version-2 codec (docs/format.md, "The stages", stage 1): d[0] = x[0],
// d[i] = x[i] - x[i-1] over 8-, 16- or 32-bit elements, wrapping (floats by their bit patterns),
// and its inverse, a wrapping prefix sum. The pipeline that applies it is TypeScript
// (ts/codec/cpu/encode.ts, ts/codec/cpu/decode.ts); these kernels allocate nothing and take
// pointers.
//
// One source, two builds: `if (ASC_FEATURE_SIMD)` picks the v128 bodies for build/parle.wasm
// and the scalar twins for build/parle-scalar.wasm; tests compare both with the plain reference
// in test/support/codec-reference.ts.

/**
 * Delta encode of `n` elements of width sizeof<T>: out[0] = in[0], out[i] = in[i] - in[i-1],
 * wrapping. in [5, 7, 7, 3] (u8) -> [5, 2, 0, 252]. `in` and `out` must not overlap.
 */
// @ts-ignore: decorator
@inline function deltaEncode<T>(inPtr: usize, outPtr: usize, n: usize): void {
  if (n == 0) return;
  store<T>(outPtr, load<T>(inPtr));
  let i: usize = 1;
  if (ASC_FEATURE_SIMD) {
    const lanes: usize = 16 / sizeof<T>();
    for (; i + lanes <= n; i += lanes) {
      const p = inPtr + i * sizeof<T>();
      const cur = v128.load(p);
      const prev = v128.load(p - sizeof<T>());
      let d: v128;
      if (sizeof<T>() == 1) d = i8x16.sub(cur, prev);
      else if (sizeof<T>() == 2) d = i16x8.sub(cur, prev);
      else d = i32x4.sub(cur, prev);
      v128.store(outPtr + i * sizeof<T>(), d);
    }
  }
  for (; i < n; i++) {
    const p = inPtr + i * sizeof<T>();
    store<T>(outPtr + i * sizeof<T>(), <T>(load<T>(p) - load<T>(p - sizeof<T>())));
  }
}

/**
 * Delta decode (a wrapping inclusive prefix sum) of `n` elements of width sizeof<T>; the inverse
 * of {@link deltaEncode}. In the SIMD build each v128 is summed in log2(lanes) shift-and-add
 * steps, then the previous vector's last element is added to every lane. Overlap: in place
 * (inPtr == outPtr) is allowed; other overlap is not.
 */
// @ts-ignore: decorator
@inline export function deltaDecode<T>(inPtr: usize, outPtr: usize, n: usize): void {
  let i: usize = 0;
  let carry: T = 0;
  if (ASC_FEATURE_SIMD) {
    const zero = i32x4.splat(0);
    let carryV = zero;
    const lanes: usize = 16 / sizeof<T>();
    for (; i + lanes <= n; i += lanes) {
      let v = v128.load(inPtr + i * sizeof<T>());
      if (sizeof<T>() == 1) {
        v = i8x16.add(v, i8x16.shuffle(zero, v, 0, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30));
        v = i8x16.add(v, i8x16.shuffle(zero, v, 0, 1, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29));
        v = i8x16.add(v, i8x16.shuffle(zero, v, 0, 1, 2, 3, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27));
        v = i8x16.add(v, i8x16.shuffle(zero, v, 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23));
        v = i8x16.add(v, carryV);
        carryV = i8x16.shuffle(v, v, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15);
      } else if (sizeof<T>() == 2) {
        v = i16x8.add(v, i8x16.shuffle(zero, v, 0, 1, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29));
        v = i16x8.add(v, i8x16.shuffle(zero, v, 0, 1, 2, 3, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27));
        v = i16x8.add(v, i8x16.shuffle(zero, v, 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23));
        v = i16x8.add(v, carryV);
        carryV = i8x16.shuffle(v, v, 14, 15, 14, 15, 14, 15, 14, 15, 14, 15, 14, 15, 14, 15, 14, 15);
      } else {
        v = i32x4.add(v, i8x16.shuffle(zero, v, 0, 1, 2, 3, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27));
        v = i32x4.add(v, i8x16.shuffle(zero, v, 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23));
        v = i32x4.add(v, carryV);
        carryV = i8x16.shuffle(v, v, 12, 13, 14, 15, 12, 13, 14, 15, 12, 13, 14, 15, 12, 13, 14, 15);
      }
      v128.store(outPtr + i * sizeof<T>(), v);
    }
    if (i > 0) carry = load<T>(outPtr + (i - 1) * sizeof<T>());
  }
  for (; i < n; i++) {
    carry = <T>(carry + load<T>(inPtr + i * sizeof<T>()));
    store<T>(outPtr + i * sizeof<T>(), carry);
  }
}

export function deltaEncode8(inPtr: usize, outPtr: usize, n: usize): void { deltaEncode<u8>(inPtr, outPtr, n); }
export function deltaEncode16(inPtr: usize, outPtr: usize, n: usize): void { deltaEncode<u16>(inPtr, outPtr, n); }
export function deltaEncode32(inPtr: usize, outPtr: usize, n: usize): void { deltaEncode<u32>(inPtr, outPtr, n); }
export function deltaDecode8(inPtr: usize, outPtr: usize, n: usize): void { deltaDecode<u8>(inPtr, outPtr, n); }
export function deltaDecode16(inPtr: usize, outPtr: usize, n: usize): void { deltaDecode<u16>(inPtr, outPtr, n); }
export function deltaDecode32(inPtr: usize, outPtr: usize, n: usize): void { deltaDecode<u32>(inPtr, outPtr, n); }
