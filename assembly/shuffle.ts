// Byte-plane shuffle stage of the version-2 codec (docs/format.md, "The stages", stage 2):
// Blosc's shuffle, plane k holding byte k of every 2- or 4-byte element, and its inverse. The
// pipeline that applies it is TypeScript (ts/codec/cpu/encode.ts, ts/codec/cpu/decode.ts); these
// kernels allocate nothing and take pointers.
//
// One source, two builds: `if (ASC_FEATURE_SIMD)` picks the v128 bodies (byte shuffles of whole
// vectors) for build/parle.wasm and the scalar twins for build/parle-scalar.wasm; tests compare
// both with the plain reference in test/support/codec-reference.ts.

/**
 * Byte-plane shuffle of `n` 2-byte elements: plane k (n bytes at outPtr + k n) holds byte k of
 * every element. in (u16) [0x0201, 0x0403] -> planes [01 03] [02 04]. No overlap allowed.
 */
export function shuffle16(inPtr: usize, outPtr: usize, n: usize): void {
  const p1 = outPtr + n;
  let i: usize = 0;
  if (ASC_FEATURE_SIMD) {
    for (; i + 16 <= n; i += 16) {
      const a = v128.load(inPtr + (i << 1));
      const b = v128.load(inPtr + (i << 1), 16);
      v128.store(outPtr + i, i8x16.shuffle(a, b, 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30));
      v128.store(p1 + i, i8x16.shuffle(a, b, 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31));
    }
  }
  for (; i < n; i++) {
    const v = load<u16>(inPtr + (i << 1));
    store<u8>(outPtr + i, <u8>v);
    store<u8>(p1 + i, <u8>(v >> 8));
  }
}

/** Byte-plane shuffle of `n` 4-byte elements into 4 planes of n bytes at outPtr; see {@link shuffle16}. */
export function shuffle32(inPtr: usize, outPtr: usize, n: usize): void {
  let i: usize = 0;
  if (ASC_FEATURE_SIMD) {
    for (; i + 16 <= n; i += 16) {
      const p = inPtr + (i << 2);
      const a = v128.load(p);
      const b = v128.load(p, 16);
      const c = v128.load(p, 32);
      const d = v128.load(p, 48);
      // planes 0 and 1 (8 bytes each) of a, b; of c, d; then planes 2 and 3
      const ab01 = i8x16.shuffle(a, b, 0, 4, 8, 12, 16, 20, 24, 28, 1, 5, 9, 13, 17, 21, 25, 29);
      const cd01 = i8x16.shuffle(c, d, 0, 4, 8, 12, 16, 20, 24, 28, 1, 5, 9, 13, 17, 21, 25, 29);
      const ab23 = i8x16.shuffle(a, b, 2, 6, 10, 14, 18, 22, 26, 30, 3, 7, 11, 15, 19, 23, 27, 31);
      const cd23 = i8x16.shuffle(c, d, 2, 6, 10, 14, 18, 22, 26, 30, 3, 7, 11, 15, 19, 23, 27, 31);
      v128.store(outPtr + i, i8x16.shuffle(ab01, cd01, 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23));
      v128.store(outPtr + n + i, i8x16.shuffle(ab01, cd01, 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31));
      v128.store(outPtr + 2 * n + i, i8x16.shuffle(ab23, cd23, 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23));
      v128.store(outPtr + 3 * n + i, i8x16.shuffle(ab23, cd23, 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31));
    }
  }
  for (; i < n; i++) {
    const v = load<u32>(inPtr + (i << 2));
    store<u8>(outPtr + i, <u8>v);
    store<u8>(outPtr + n + i, <u8>(v >> 8));
    store<u8>(outPtr + 2 * n + i, <u8>(v >> 16));
    store<u8>(outPtr + 3 * n + i, <u8>(v >> 24));
  }
}

/** Inverse of {@link shuffle16}: 2 planes of n bytes at inPtr -> n 2-byte elements. No overlap. */
export function unshuffle16(inPtr: usize, outPtr: usize, n: usize): void {
  const p1 = inPtr + n;
  let i: usize = 0;
  if (ASC_FEATURE_SIMD) {
    for (; i + 16 <= n; i += 16) {
      const lo = v128.load(inPtr + i);
      const hi = v128.load(p1 + i);
      v128.store(outPtr + (i << 1), i8x16.shuffle(lo, hi, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23));
      v128.store(outPtr + (i << 1), i8x16.shuffle(lo, hi, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31), 16);
    }
  }
  for (; i < n; i++) {
    store<u16>(outPtr + (i << 1), <u16>load<u8>(inPtr + i) | (<u16>load<u8>(p1 + i) << 8));
  }
}

/** Inverse of {@link shuffle32}: 4 planes of n bytes at inPtr -> n 4-byte elements. No overlap. */
export function unshuffle32(inPtr: usize, outPtr: usize, n: usize): void {
  let i: usize = 0;
  if (ASC_FEATURE_SIMD) {
    for (; i + 16 <= n; i += 16) {
      const b0 = v128.load(inPtr + i);
      const b1 = v128.load(inPtr + n + i);
      const b2 = v128.load(inPtr + 2 * n + i);
      const b3 = v128.load(inPtr + 3 * n + i);
      const q01lo = i8x16.shuffle(b0, b1, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
      const q01hi = i8x16.shuffle(b0, b1, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
      const q23lo = i8x16.shuffle(b2, b3, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
      const q23hi = i8x16.shuffle(b2, b3, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
      const o = outPtr + (i << 2);
      v128.store(o, i8x16.shuffle(q01lo, q23lo, 0, 1, 16, 17, 2, 3, 18, 19, 4, 5, 20, 21, 6, 7, 22, 23));
      v128.store(o, i8x16.shuffle(q01lo, q23lo, 8, 9, 24, 25, 10, 11, 26, 27, 12, 13, 28, 29, 14, 15, 30, 31), 16);
      v128.store(o, i8x16.shuffle(q01hi, q23hi, 0, 1, 16, 17, 2, 3, 18, 19, 4, 5, 20, 21, 6, 7, 22, 23), 32);
      v128.store(o, i8x16.shuffle(q01hi, q23hi, 8, 9, 24, 25, 10, 11, 26, 27, 12, 13, 28, 29, 14, 15, 30, 31), 48);
    }
  }
  for (; i < n; i++) {
    store<u32>(
      outPtr + (i << 2),
      <u32>load<u8>(inPtr + i) | (<u32>load<u8>(inPtr + n + i) << 8) | (<u32>load<u8>(inPtr + 2 * n + i) << 16) | (<u32>load<u8>(inPtr + 3 * n + i) << 24),
    );
  }
}
