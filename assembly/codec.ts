// Kernels of the version-2 codec (docs/format.md, "Version 2"): the tree hash (XXH32), delta,
// byte-plane shuffle, byte histograms and one-pass statistics for the chooser, and canonical
// Huffman coding of byte streams. The pipeline that strings them together is TypeScript
// (ts/codec/cpu-codec.ts); these kernels allocate nothing and take pointers.
//
// One source, two builds: `if (ASC_FEATURE_SIMD)` picks the v128 bodies for build/parle.wasm
// and the scalar twins for build/parle-scalar.wasm; tests compare both with the plain reference
// in test/support/codec-reference.ts.

// ---------------------------------------------------------------------------------------------
// XXH32 and the tree hash

const P1: u32 = 2654435761;
const P2: u32 = 2246822519;
const P3: u32 = 3266489917;
const P4: u32 = 668265263;
const P5: u32 = 374761393;

/** Leaf size of the tree hash in bytes. */
const HASH_BLOCK: usize = 4096;

// @ts-ignore: decorator
@inline function round32(acc: u32, input: u32): u32 {
  return rotl<u32>(acc + input * P2, 13) * P1;
}

// @ts-ignore: decorator
@inline function rotlLanes(v: v128, r: i32): v128 {
  return v128.or(i32x4.shl(v, r), i32x4.shr_u(v, 32 - r));
}

/** XXH32's finish: the tail after the stripes and the avalanche. */
// @ts-ignore: decorator
@inline function finish32(h: u32, p: usize, end: usize): u32 {
  while (p + 4 <= end) {
    h = rotl<u32>(h + load<u32>(p) * P3, 17) * P4;
    p += 4;
  }
  while (p < end) {
    h = rotl<u32>(h + <u32>load<u8>(p) * P5, 11) * P1;
    p++;
  }
  h ^= h >> 15;
  h *= P2;
  h ^= h >> 13;
  h *= P3;
  h ^= h >> 16;
  return h;
}

// @ts-ignore: decorator
@inline function mergeLanes(v1: u32, v2: u32, v3: u32, v4: u32): u32 {
  return rotl<u32>(v1, 1) + rotl<u32>(v2, 7) + rotl<u32>(v3, 12) + rotl<u32>(v4, 18);
}

/**
 * XXH32 (Collet, xxHash spec) of `len` bytes at `ptr` with `seed`. The four accumulators are the
 * four lanes of one v128 in the SIMD build.
 */
export function xxh32(ptr: usize, len: usize, seed: u32): u32 {
  const end = ptr + len;
  let p = ptr;
  let h: u32;
  if (len >= 16) {
    if (ASC_FEATURE_SIMD) {
      let acc = i32x4(<i32>(seed + P1 + P2), <i32>(seed + P2), <i32>seed, <i32>(seed - P1));
      const p1 = i32x4.splat(<i32>P1);
      const p2 = i32x4.splat(<i32>P2);
      for (; p + 16 <= end; p += 16) {
        acc = i32x4.mul(rotlLanes(i32x4.add(acc, i32x4.mul(v128.load(p), p2)), 13), p1);
      }
      h = mergeLanes(<u32>i32x4.extract_lane(acc, 0), <u32>i32x4.extract_lane(acc, 1), <u32>i32x4.extract_lane(acc, 2), <u32>i32x4.extract_lane(acc, 3));
    } else {
      let v1 = seed + P1 + P2;
      let v2 = seed + P2;
      let v3 = seed;
      let v4 = seed - P1;
      for (; p + 16 <= end; p += 16) {
        v1 = round32(v1, load<u32>(p));
        v2 = round32(v2, load<u32>(p, 4));
        v3 = round32(v3, load<u32>(p, 8));
        v4 = round32(v4, load<u32>(p, 12));
      }
      h = mergeLanes(v1, v2, v3, v4);
    }
  } else {
    h = seed + P5;
  }
  h += <u32>len;
  return finish32(h, p, end);
}

/**
 * XXH32 (seed 0) of four whole 4096-byte blocks at once, the blocks at p, p + 4096, ...: four
 * independent dependency chains hide the latency of the multiplies. Hashes go to out[0..3].
 */
function xxh32Blocks4(p: usize, out: usize): void {
  if (ASC_FEATURE_SIMD) {
    let a = i32x4(<i32>(P1 + P2), <i32>P2, 0, <i32>(0 - P1));
    let b = a;
    let c = a;
    let d = a;
    const p1 = i32x4.splat(<i32>P1);
    const p2 = i32x4.splat(<i32>P2);
    for (let o: usize = 0; o < HASH_BLOCK; o += 16) {
      const q = p + o;
      a = i32x4.mul(rotlLanes(i32x4.add(a, i32x4.mul(v128.load(q), p2)), 13), p1);
      b = i32x4.mul(rotlLanes(i32x4.add(b, i32x4.mul(v128.load(q + HASH_BLOCK), p2)), 13), p1);
      c = i32x4.mul(rotlLanes(i32x4.add(c, i32x4.mul(v128.load(q + 2 * HASH_BLOCK), p2)), 13), p1);
      d = i32x4.mul(rotlLanes(i32x4.add(d, i32x4.mul(v128.load(q + 3 * HASH_BLOCK), p2)), 13), p1);
    }
    const len = <u32>HASH_BLOCK;
    store<u32>(out, finish32(mergeLanes(<u32>i32x4.extract_lane(a, 0), <u32>i32x4.extract_lane(a, 1), <u32>i32x4.extract_lane(a, 2), <u32>i32x4.extract_lane(a, 3)) + len, 0, 0));
    store<u32>(out, finish32(mergeLanes(<u32>i32x4.extract_lane(b, 0), <u32>i32x4.extract_lane(b, 1), <u32>i32x4.extract_lane(b, 2), <u32>i32x4.extract_lane(b, 3)) + len, 0, 0), 4);
    store<u32>(out, finish32(mergeLanes(<u32>i32x4.extract_lane(c, 0), <u32>i32x4.extract_lane(c, 1), <u32>i32x4.extract_lane(c, 2), <u32>i32x4.extract_lane(c, 3)) + len, 0, 0), 8);
    store<u32>(out, finish32(mergeLanes(<u32>i32x4.extract_lane(d, 0), <u32>i32x4.extract_lane(d, 1), <u32>i32x4.extract_lane(d, 2), <u32>i32x4.extract_lane(d, 3)) + len, 0, 0), 12);
  } else {
    for (let k: usize = 0; k < 4; k++) store<u32>(out + (k << 2), xxh32(p + k * HASH_BLOCK, HASH_BLOCK, 0));
  }
}

/**
 * The container's tree hash of `len` bytes at `ptr` (docs/format.md, "Tree hash"): XXH32 of
 * each 4096-byte block, the hashes concatenated, again, until at most 4096 bytes remain, then
 * XXH32 of those. `scratchPtr` needs ceil(len / 4096) x 4 bytes and must not overlap the input;
 * each level is written over the previous one in place (block i's hash lands at 4 i, before
 * any unread block). Returns the hash as a u32.
 */
export function treeHash(ptr: usize, len: usize, scratchPtr: usize): u32 {
  let src = ptr;
  let n = len;
  while (n > HASH_BLOCK) {
    const blocks = (n + HASH_BLOCK - 1) / HASH_BLOCK;
    const whole = n / HASH_BLOCK;
    let b: usize = 0;
    for (; b + 4 <= whole; b += 4) xxh32Blocks4(src + b * HASH_BLOCK, scratchPtr + (b << 2));
    for (; b < blocks; b++) {
      const start = b * HASH_BLOCK;
      const size = min<usize>(HASH_BLOCK, n - start);
      store<u32>(scratchPtr + (b << 2), xxh32(src + start, size, 0));
    }
    src = scratchPtr;
    n = blocks << 2;
  }
  return xxh32(src, n, 0);
}

// ---------------------------------------------------------------------------------------------
// Delta

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
@inline function deltaDecode<T>(inPtr: usize, outPtr: usize, n: usize): void {
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

// ---------------------------------------------------------------------------------------------
// Byte-plane shuffle (Blosc's shuffle)

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

// ---------------------------------------------------------------------------------------------
// Histograms and the chooser's statistics

/** Bytes counted into the u16 sub-histograms before they are added up: each counter then holds at most 65534. */
const HIST_BLOCK: usize = 16 * 32767;

/**
 * Byte histogram of `n` bytes at `ptr` into 256 u32 at `histPtr` (overwritten). Byte i is counted
 * in the u16 sub-histogram i mod 8 of `scratchPtr` (8 x 256 u16, 4096 bytes), so that a run of
 * equal bytes spreads over eight counters instead of serialising on one counter's
 * store-to-load forwarding; the sub-histograms are added into `histPtr` after every
 * {@link HIST_BLOCK} bytes (a counter sees at most an eighth of them) and at the end.
 */
export function histogram8(ptr: usize, n: usize, histPtr: usize, scratchPtr: usize): void {
  memory.fill(histPtr, 0, 1024);
  const whole = n & ~(<usize>15);
  let i: usize = 0;
  if (whole > 0) memory.fill(scratchPtr, 0, 4096);
  while (i < whole) {
    const blockEnd = min<usize>(whole, i + HIST_BLOCK);
    for (; i < blockEnd; i += 16) {
      const p = ptr + i;
      count16(scratchPtr, <usize>load<u8>(p));
      count16(scratchPtr + 512, <usize>load<u8>(p, 1));
      count16(scratchPtr + 1024, <usize>load<u8>(p, 2));
      count16(scratchPtr + 1536, <usize>load<u8>(p, 3));
      count16(scratchPtr + 2048, <usize>load<u8>(p, 4));
      count16(scratchPtr + 2560, <usize>load<u8>(p, 5));
      count16(scratchPtr + 3072, <usize>load<u8>(p, 6));
      count16(scratchPtr + 3584, <usize>load<u8>(p, 7));
      count16(scratchPtr, <usize>load<u8>(p, 8));
      count16(scratchPtr + 512, <usize>load<u8>(p, 9));
      count16(scratchPtr + 1024, <usize>load<u8>(p, 10));
      count16(scratchPtr + 1536, <usize>load<u8>(p, 11));
      count16(scratchPtr + 2048, <usize>load<u8>(p, 12));
      count16(scratchPtr + 2560, <usize>load<u8>(p, 13));
      count16(scratchPtr + 3072, <usize>load<u8>(p, 14));
      count16(scratchPtr + 3584, <usize>load<u8>(p, 15));
    }
    addSubHistograms(histPtr, scratchPtr);
  }
  for (; i < n; i++) {
    const a = histPtr + (<usize>load<u8>(ptr + i) << 2);
    store<u32>(a, load<u32>(a) + 1);
  }
}

// @ts-ignore: decorator
@inline function count16(sub: usize, byte: usize): void {
  const a = sub + (byte << 1);
  store<u16>(a, load<u16>(a) + 1);
}

/** Adds the eight u16 sub-histograms at `scratchPtr` into the u32 histogram at `histPtr` and zeroes them. */
function addSubHistograms(histPtr: usize, scratchPtr: usize): void {
  for (let s: usize = 0; s < 256; s++) {
    const q = scratchPtr + (s << 1);
    const sum =
      <u32>load<u16>(q) + <u32>load<u16>(q, 512) + <u32>load<u16>(q, 1024) + <u32>load<u16>(q, 1536) +
      <u32>load<u16>(q, 2048) + <u32>load<u16>(q, 2560) + <u32>load<u16>(q, 3072) + <u32>load<u16>(q, 3584);
    const h = histPtr + (s << 2);
    store<u32>(h, load<u32>(h) + sum);
  }
  memory.fill(scratchPtr, 0, 4096);
}

/**
 * One pass of statistics over `n` elements of width sizeof<T> for the chooser, added to what the
 * buffers hold (call it on several ranges of a chunk to sample it):
 *   histPtr: 2 x width x 256 u32: byte histograms of each byte plane of the elements (plane k
 *            of the elements at k x 256), then of their deltas (at (width + k) x 256);
 *   runsPtr: 2 + 2 x width u32: element runs of the elements and of the deltas, then byte runs
 *            of each plane of the elements (2 + k) and of the deltas (2 + width + k).
 * The first element of the range counts as a run start and its delta is taken from 0.
 */
// @ts-ignore: decorator
@inline function codecStats<T>(inPtr: usize, n: usize, histPtr: usize, runsPtr: usize): void {
  const W: usize = sizeof<T>();
  let prev: u32 = 0;
  let prevDelta: u32 = 0;
  let runs: u32 = 0;
  let deltaRuns: u32 = 0;
  let planeRuns: u32 = 0; // per-plane counters packed when W == 1; else counted below
  const hd = histPtr + W * 1024;
  if (n == 0) return;
  // the first element starts a run of every kind
  {
    const x = <u32>load<T>(inPtr);
    for (let k: usize = 0; k < W; k++) {
      const a = histPtr + (k << 10) + (((x >> (<u32>k << 3)) & 0xff) << 2);
      store<u32>(a, load<u32>(a) + 1);
      const b = hd + (k << 10) + (((x >> (<u32>k << 3)) & 0xff) << 2);
      store<u32>(b, load<u32>(b) + 1);
      store<u32>(runsPtr + ((2 + k) << 2), load<u32>(runsPtr + ((2 + k) << 2)) + 1);
      store<u32>(runsPtr + ((2 + W + k) << 2), load<u32>(runsPtr + ((2 + W + k) << 2)) + 1);
    }
    prev = x;
    prevDelta = x;
    runs = 1;
    deltaRuns = 1;
  }
  for (let i: usize = 1; i < n; i++) {
    const x = <u32>load<T>(inPtr + i * W);
    const d = sizeof<T>() == 4 ? x - prev : (x - prev) & (sizeof<T>() == 1 ? 0xff : 0xffff);
    runs += <u32>(x != prev);
    deltaRuns += <u32>(d != prevDelta);
    if (W == 1) {
      const a = histPtr + (x << 2);
      store<u32>(a, load<u32>(a) + 1);
      const b = hd + (d << 2);
      store<u32>(b, load<u32>(b) + 1);
    } else {
      const xd = x ^ prev;
      const dd = d ^ prevDelta;
      for (let k: usize = 0; k < W; k++) {
        const s = <u32>k << 3;
        const a = histPtr + (k << 10) + (((x >> s) & 0xff) << 2);
        store<u32>(a, load<u32>(a) + 1);
        const b = hd + (k << 10) + (((d >> s) & 0xff) << 2);
        store<u32>(b, load<u32>(b) + 1);
        const ra = runsPtr + ((2 + k) << 2);
        store<u32>(ra, load<u32>(ra) + <u32>(((xd >> s) & 0xff) != 0));
        const rb = runsPtr + ((2 + W + k) << 2);
        store<u32>(rb, load<u32>(rb) + <u32>(((dd >> s) & 0xff) != 0));
      }
    }
    prev = x;
    prevDelta = d;
  }
  store<u32>(runsPtr, load<u32>(runsPtr) + runs);
  store<u32>(runsPtr + 4, load<u32>(runsPtr + 4) + deltaRuns);
  if (W == 1) {
    // one plane: its byte runs are the element runs (the first element was counted above)
    planeRuns = runs - 1;
    store<u32>(runsPtr + 8, load<u32>(runsPtr + 8) + planeRuns);
    store<u32>(runsPtr + 12, load<u32>(runsPtr + 12) + deltaRuns - 1);
  }
}

export function codecStats8(inPtr: usize, n: usize, histPtr: usize, runsPtr: usize): void { codecStats<u8>(inPtr, n, histPtr, runsPtr); }
export function codecStats16(inPtr: usize, n: usize, histPtr: usize, runsPtr: usize): void { codecStats<u16>(inPtr, n, histPtr, runsPtr); }
export function codecStats32(inPtr: usize, n: usize, histPtr: usize, runsPtr: usize): void { codecStats<u32>(inPtr, n, histPtr, runsPtr); }

// ---------------------------------------------------------------------------------------------
// Canonical Huffman coding of bytes

/** Longest code, in bits: the decode tables have 2^11 entries. */
const MAX_CODE_BITS: u32 = 11;
const TABLE_SIZE: u32 = 1 << MAX_CODE_BITS;

/**
 * Canonical codes from 256 code lengths (u8 at `lengthsPtr`, 0 = absent, 1..11) into 256 u32 at
 * `codesPtr`: the code bit-reversed (the stream is read least significant bit first) in the low
 * 16 bits, its length in the high 16. Codes are assigned by (length, symbol) as in DEFLATE.
 * Returns the Kraft sum scaled by 2^11 (2048 for a complete code), or -1 for a length over 11.
 */
export function huffmanBuildCodes(lengthsPtr: usize, codesPtr: usize): i32 {
  let kraft: u32 = 0;
  for (let s: usize = 0; s < 256; s++) {
    const len = <u32>load<u8>(lengthsPtr + s);
    if (len > MAX_CODE_BITS) return -1;
    store<u32>(codesPtr + (s << 2), 0);
    if (len > 0) kraft += TABLE_SIZE >> len;
  }
  // canonical order: by length, then symbol; the code of the next length starts at (code << 1)
  let code: u32 = 0;
  for (let len: u32 = 1; len <= MAX_CODE_BITS; len++) {
    for (let s: usize = 0; s < 256; s++) {
      if (<u32>load<u8>(lengthsPtr + s) != len) continue;
      let r: u32 = 0;
      for (let b: u32 = 0; b < len; b++) r |= ((code >> b) & 1) << (len - 1 - b);
      store<u32>(codesPtr + (s << 2), r | (len << 16));
      code++;
    }
    code <<= 1;
  }
  return <i32>kraft;
}

/** Streams shorter than this (symbols) get single-symbol decode tables (see {@link huffmanBuildTable}). */
const MULTI_SYMBOL_MIN: u32 = 8192;

/**
 * Fills the entries of every code (those whose low `len` bits are the code) and returns the count
 * of symbols present. `final`: the decode tables with one symbol an entry (see
 * {@link huffmanBuildTable}: the symbol in the u32 half, len | len << 8 in the u16 half); else the
 * single-symbol table the multi-symbol pass reads (symbol | len << 8 in the u16 half only).
 */
function fillEntries(codesPtr: usize, tablePtr: usize, final: bool): i32 {
  const info = tablePtr + TABLE_INFO;
  let present = 0;
  for (let s: usize = 0; s < 256; s++) {
    const c = load<u32>(codesPtr + (s << 2));
    const len = c >> 16;
    if (len == 0) continue;
    present++;
    const entry = <u16>((final ? len : <u32>s) | (len << 8));
    for (let j: u32 = c & 0xffff; j < TABLE_SIZE; j += 1 << len) {
      if (final) store<u32>(tablePtr + (<usize>j << 2), <u32>s);
      store<u16>(info + (<usize>j << 1), entry);
    }
  }
  return present;
}

/** Bytes of the decode tables at `tablePtr` (what callers allocate): 2048 u32 of symbols, then 2048 u16 of lengths. */
const TABLES_BYTES: usize = 8192 + 4096;
/** Offset of the u16 half of the decode tables (lengths and counts of each entry). */
const TABLE_INFO: usize = 8192;

/**
 * The decode tables of a complete code given as 256 lengths at `lengthsPtr` (`codesPtr`: 1 KiB of
 * scratch), at `tablePtr` ({@link TABLES_BYTES} = 12 KiB). Both halves are indexed by the next
 * 11 bits of a segment and describe the codes that lie wholly in those bits, greedily, up to four
 * (Huff0's double-symbol table, HUF_decompress4X2, taken to four symbols: short codes decode
 * several symbols a lookup):
 *   - 2048 u32 at tablePtr: their symbols, the first in the low byte (bytes past the last are 0);
 *   - 2048 u16 at tablePtr + 8192: bits 0..3 the sum of their lengths (1..11), bits 6..7 their
 *     count - 1, bits 8..11 the length of the first code (the entry of the first symbol alone).
 * Built from the single-symbol table (symbol | length << 8), which the u16 half holds meanwhile.
 * A stream of fewer than {@link MULTI_SYMBOL_MIN} symbols (`symbols`) gets one symbol an entry
 * (count 1, same layout): the multi-symbol pass costs about as much as decoding 8K symbols.
 * Returns 0, or -1 when a length exceeds 11, fewer than two symbols are present or the code is
 * not complete.
 */
export function huffmanBuildTable(lengthsPtr: usize, codesPtr: usize, tablePtr: usize, symbols: u32): i32 {
  const kraft = huffmanBuildCodes(lengthsPtr, codesPtr);
  if (kraft != <i32>TABLE_SIZE) return -1;
  const info = tablePtr + TABLE_INFO;
  const single = symbols < MULTI_SYMBOL_MIN;
  if (fillEntries(codesPtr, tablePtr, single) < 2) return -1;
  if (single) return 0;
  // entry j reads the single entries j, j >> l0, j >> (l0 + l1), ..., none above j: top down, each
  // is read before its own entry replaces it
  for (let j = <i32>TABLE_SIZE - 1; j >= 0; j--) {
    const first = <u32>load<u16>(info + (<usize>j << 1));
    const len0 = first >> 8;
    let symbols = first & 0xff;
    let bits = len0;
    let count: u32 = 1;
    while (count < 4) {
      const next = <u32>load<u16>(info + (<usize>(<u32>j >> bits) << 1));
      const len = next >> 8;
      // the code at bit `bits` is whole when it ends within the 11 bits of the index
      if (bits + len > MAX_CODE_BITS) break;
      symbols |= (next & 0xff) << (count << 3);
      bits += len;
      count++;
    }
    store<u32>(tablePtr + (<usize>j << 2), symbols);
    store<u16>(info + (<usize>j << 1), <u16>(bits | ((count - 1) << 6) | (len0 << 8)));
  }
  return 0;
}

/**
 * Huffman-encodes `n` bytes at `srcPtr` with the codes at `codesPtr` (from
 * {@link huffmanBuildCodes}) in segments of 2^segLog2 symbols, each written from a byte boundary
 * at `outPtr` (zero-padded to a whole byte); segment k's end offset in bytes goes to
 * offsetsPtr[k] (u32). The output needs the exact size (sum of code lengths, segments rounded
 * up to bytes) plus 8 bytes of slack (the bit writer stores 8 bytes at a time). Returns the
 * bytes written. Every symbol of the input must have a code.
 *
 * PAVLE (Balevic 2009) finds each segment's place by a scan of the code lengths; on one thread
 * the place is simply where the previous segment ended.
 */
export function huffmanEncode(srcPtr: usize, n: usize, codesPtr: usize, segLog2: u32, outPtr: usize, offsetsPtr: usize): f64 {
  const seg: usize = <usize>1 << segLog2;
  let out = outPtr;
  let k: usize = 0;
  for (let start: usize = 0; start < n; start += seg, k++) {
    out = encodeSegment(srcPtr + start, srcPtr + min<usize>(n, start + seg), codesPtr, out);
    store<u32>(offsetsPtr + (k << 2), <u32>(out - outPtr));
  }
  return <f64>(out - outPtr);
}

/**
 * The codes of the bytes [p, end) written from `out` on, the last byte zero-padded; returns where
 * they end. A code is read as two loads (u16 code, u8 length) of its u32 in `codesPtr`. The bit
 * buffer holds at most 7 bits after a flush, so 5 codes of up to 11 bits fit before the next one
 * (7 + 55 <= 64); a flush stores 8 bytes and keeps the bits of the last, partial byte. The main
 * loop codes 20 bytes (4 flushes) an iteration, written out.
 */
function encodeSegment(p: usize, end: usize, codesPtr: usize, out: usize): usize {
  let buf: u64 = 0;
  let bits: u64 = 0;
  let c: usize;
  for (; p + 20 <= end; p += 20) {
    c = codesPtr + (<usize>load<u8>(p) << 2);
    buf |= <u64>load<u16>(c) << bits;
    bits += <u64>load<u8>(c, 2);
    c = codesPtr + (<usize>load<u8>(p, 1) << 2);
    buf |= <u64>load<u16>(c) << bits;
    bits += <u64>load<u8>(c, 2);
    c = codesPtr + (<usize>load<u8>(p, 2) << 2);
    buf |= <u64>load<u16>(c) << bits;
    bits += <u64>load<u8>(c, 2);
    c = codesPtr + (<usize>load<u8>(p, 3) << 2);
    buf |= <u64>load<u16>(c) << bits;
    bits += <u64>load<u8>(c, 2);
    c = codesPtr + (<usize>load<u8>(p, 4) << 2);
    buf |= <u64>load<u16>(c) << bits;
    bits += <u64>load<u8>(c, 2);
    store<u64>(out, buf);
    out += <usize>(bits >> 3);
    buf >>= bits & 56;
    bits &= 7;
    c = codesPtr + (<usize>load<u8>(p, 5) << 2);
    buf |= <u64>load<u16>(c) << bits;
    bits += <u64>load<u8>(c, 2);
    c = codesPtr + (<usize>load<u8>(p, 6) << 2);
    buf |= <u64>load<u16>(c) << bits;
    bits += <u64>load<u8>(c, 2);
    c = codesPtr + (<usize>load<u8>(p, 7) << 2);
    buf |= <u64>load<u16>(c) << bits;
    bits += <u64>load<u8>(c, 2);
    c = codesPtr + (<usize>load<u8>(p, 8) << 2);
    buf |= <u64>load<u16>(c) << bits;
    bits += <u64>load<u8>(c, 2);
    c = codesPtr + (<usize>load<u8>(p, 9) << 2);
    buf |= <u64>load<u16>(c) << bits;
    bits += <u64>load<u8>(c, 2);
    store<u64>(out, buf);
    out += <usize>(bits >> 3);
    buf >>= bits & 56;
    bits &= 7;
    c = codesPtr + (<usize>load<u8>(p, 10) << 2);
    buf |= <u64>load<u16>(c) << bits;
    bits += <u64>load<u8>(c, 2);
    c = codesPtr + (<usize>load<u8>(p, 11) << 2);
    buf |= <u64>load<u16>(c) << bits;
    bits += <u64>load<u8>(c, 2);
    c = codesPtr + (<usize>load<u8>(p, 12) << 2);
    buf |= <u64>load<u16>(c) << bits;
    bits += <u64>load<u8>(c, 2);
    c = codesPtr + (<usize>load<u8>(p, 13) << 2);
    buf |= <u64>load<u16>(c) << bits;
    bits += <u64>load<u8>(c, 2);
    c = codesPtr + (<usize>load<u8>(p, 14) << 2);
    buf |= <u64>load<u16>(c) << bits;
    bits += <u64>load<u8>(c, 2);
    store<u64>(out, buf);
    out += <usize>(bits >> 3);
    buf >>= bits & 56;
    bits &= 7;
    c = codesPtr + (<usize>load<u8>(p, 15) << 2);
    buf |= <u64>load<u16>(c) << bits;
    bits += <u64>load<u8>(c, 2);
    c = codesPtr + (<usize>load<u8>(p, 16) << 2);
    buf |= <u64>load<u16>(c) << bits;
    bits += <u64>load<u8>(c, 2);
    c = codesPtr + (<usize>load<u8>(p, 17) << 2);
    buf |= <u64>load<u16>(c) << bits;
    bits += <u64>load<u8>(c, 2);
    c = codesPtr + (<usize>load<u8>(p, 18) << 2);
    buf |= <u64>load<u16>(c) << bits;
    bits += <u64>load<u8>(c, 2);
    c = codesPtr + (<usize>load<u8>(p, 19) << 2);
    buf |= <u64>load<u16>(c) << bits;
    bits += <u64>load<u8>(c, 2);
    store<u64>(out, buf);
    out += <usize>(bits >> 3);
    buf >>= bits & 56;
    bits &= 7;
  }
  for (; p + 5 <= end; p += 5) {
    c = codesPtr + (<usize>load<u8>(p) << 2);
    buf |= <u64>load<u16>(c) << bits;
    bits += <u64>load<u8>(c, 2);
    c = codesPtr + (<usize>load<u8>(p, 1) << 2);
    buf |= <u64>load<u16>(c) << bits;
    bits += <u64>load<u8>(c, 2);
    c = codesPtr + (<usize>load<u8>(p, 2) << 2);
    buf |= <u64>load<u16>(c) << bits;
    bits += <u64>load<u8>(c, 2);
    c = codesPtr + (<usize>load<u8>(p, 3) << 2);
    buf |= <u64>load<u16>(c) << bits;
    bits += <u64>load<u8>(c, 2);
    c = codesPtr + (<usize>load<u8>(p, 4) << 2);
    buf |= <u64>load<u16>(c) << bits;
    bits += <u64>load<u8>(c, 2);
    store<u64>(out, buf);
    out += <usize>(bits >> 3);
    buf >>= bits & 56;
    bits &= 7;
  }
  for (; p < end; p++) {
    c = codesPtr + (<usize>load<u8>(p) << 2);
    buf |= <u64>load<u16>(c) << bits;
    bits += <u64>load<u8>(c, 2);
    store<u64>(out, buf);
    out += <usize>(bits >> 3);
    buf >>= bits & 56;
    bits &= 7;
  }
  if (bits > 0) {
    store<u8>(out, <u8>buf);
    out++;
  }
  return out;
}

/**
 * A bit buffer is refilled as the 8 bytes at p with bit 63 set (this sentinel) and shifted right
 * by the bits already used of the first byte: it then holds 56 or more bits below the sentinel,
 * enough for a round of 5 lookups (5 x 11), and the sentinel's leading zeros afterwards count the
 * bits used from p on (Huff0 keeps the same mark). A round uses at most 7 + 55 bits: p moves on by
 * at most 7 bytes.
 */
const SENTINEL: u64 = 0x8000000000000000;
/** Output bytes a round may touch: 5 lookups of up to 4 symbols, each stored as a u32. */
const ROUND_OUT: usize = 20;

/**
 * Decodes `n` symbols from segments of 2^segLog2 symbols at `srcPtr` (the bitstreams, `srcBytes`
 * long, segment k ending at offsetsPtr[k] bytes) with the tables at `tablePtr`
 * ({@link huffmanBuildTable}, 12 KiB) into `outPtr` (n bytes; nothing past them is written). The
 * memory must hold 8 readable bytes past srcPtr + srcBytes, and nothing further is read.
 * Segments are independent (Haugen's offset table; Huff0 decodes its four streams the same way):
 * whole segments go through three lanes decoded in one loop, so that their table lookups overlap
 * ({@link decodeLanes}); the last, partial one is decoded alone.
 * Returns 0, or -1 when a segment needs bits past its end, or the offsets decrease or point past
 * the bitstreams (corrupt input).
 */
export function huffmanDecode(srcPtr: usize, srcBytes: usize, offsetsPtr: usize, segLog2: u32, n: usize, tablePtr: usize, outPtr: usize): i32 {
  const seg: usize = <usize>1 << segLog2;
  const segments = (n + seg - 1) >> segLog2;
  // offsets in order and within the bitstreams: then every segment starts at or below srcEnd
  let last: usize = 0;
  for (let k: usize = 0; k < segments; k++) {
    const end = <usize>load<u32>(offsetsPtr + (k << 2));
    if (end < last || end > srcBytes) return -1;
    last = end;
  }
  const whole = n >> segLog2;
  let k: usize = 0;
  if (whole >= 3 && seg > ROUND_OUT) {
    if (!decodeLanes(srcPtr, srcPtr + srcBytes, offsetsPtr, whole, seg, tablePtr, outPtr)) return -1;
    k = whole;
  }
  for (; k < segments; k++) {
    const start = k == 0 ? srcPtr : srcPtr + <usize>load<u32>(offsetsPtr + ((k - 1) << 2));
    const end = srcPtr + <usize>load<u32>(offsetsPtr + (k << 2));
    if (!finishSegment(start, 0, end, outPtr + k * seg, outPtr + min<usize>(n, (k + 1) * seg), tablePtr)) return -1;
  }
  return 0;
}

/** The symbols of the table entry of the next 11 bits of `b`. */
// @ts-ignore: decorator
@inline function symbolsAt(tablePtr: usize, b: u64): u32 {
  return load<u32>(tablePtr + ((<usize>b & 0x7ff) << 2));
}

/**
 * The low byte of the entry's info: a shift by it (taken mod 64 by i64.shr_u) drops the entry's
 * bits; its bits 6..7 are the count of symbols - 1.
 */
// @ts-ignore: decorator
@inline function infoAt(tablePtr: usize, b: u64): u64 {
  return <u64>load<u8>(tablePtr + TABLE_INFO + ((<usize>b & 0x7ff) << 1));
}

/**
 * Segments 0 .. segments-1 (each of `seg` symbols) in three lanes: each lane decodes one segment
 * (bits from byte p, bit u on, ending at byte l; output from o up to e) and takes the next segment
 * when it is done, so the lanes stay busy whatever their segments' code lengths. A round refills
 * each lane's buffer and makes 5 lookups in each, interleaved. Rounds run while every lane has
 * ROUND_OUT bytes of its segment's output left (o <= m) and its next refill reads below
 * srcEnd + 8 (p <= srcEnd), with no other check: bits read past a segment's end only make it fail
 * at its end (p only grows). A lane that stops them finishes its segment alone
 * ({@link finishSegment}: near its end, or corrupt) and takes the next one; once none is left,
 * every lane finishes its own.
 */
function decodeLanes(src: usize, srcEnd: usize, offsetsPtr: usize, segments: usize, seg: usize, tablePtr: usize, out: usize): bool {
  let p0 = src, l0 = src + <usize>load<u32>(offsetsPtr), o0 = out, e0 = out + seg, m0 = e0 - ROUND_OUT, u0: u64 = 0;
  let p1 = l0, l1 = src + <usize>load<u32>(offsetsPtr, 4), o1 = e0, e1 = e0 + seg, m1 = e1 - ROUND_OUT, u1: u64 = 0;
  let p2 = l1, l2 = src + <usize>load<u32>(offsetsPtr, 8), o2 = e1, e2 = e1 + seg, m2 = e2 - ROUND_OUT, u2: u64 = 0;
  let next: usize = 3;
  while (true) {
    while (
      <i32>(o0 <= m0) & <i32>(p0 <= srcEnd) & <i32>(o1 <= m1) & <i32>(p1 <= srcEnd) & <i32>(o2 <= m2) & <i32>(p2 <= srcEnd)
    ) {
      let b0 = (load<u64>(p0) | SENTINEL) >> u0;
      let b1 = (load<u64>(p1) | SENTINEL) >> u1;
      let b2 = (load<u64>(p2) | SENTINEL) >> u2;
      // 5 lookups a lane, written out (Binaryen does not unroll the loop)
      let x: u32;
      let m: u64;
      x = symbolsAt(tablePtr, b0);
      m = infoAt(tablePtr, b0);
      store<u32>(o0, x);
      o0 += <usize>(m >> 6) + 1;
      b0 >>= m;
      x = symbolsAt(tablePtr, b1);
      m = infoAt(tablePtr, b1);
      store<u32>(o1, x);
      o1 += <usize>(m >> 6) + 1;
      b1 >>= m;
      x = symbolsAt(tablePtr, b2);
      m = infoAt(tablePtr, b2);
      store<u32>(o2, x);
      o2 += <usize>(m >> 6) + 1;
      b2 >>= m;
      x = symbolsAt(tablePtr, b0);
      m = infoAt(tablePtr, b0);
      store<u32>(o0, x);
      o0 += <usize>(m >> 6) + 1;
      b0 >>= m;
      x = symbolsAt(tablePtr, b1);
      m = infoAt(tablePtr, b1);
      store<u32>(o1, x);
      o1 += <usize>(m >> 6) + 1;
      b1 >>= m;
      x = symbolsAt(tablePtr, b2);
      m = infoAt(tablePtr, b2);
      store<u32>(o2, x);
      o2 += <usize>(m >> 6) + 1;
      b2 >>= m;
      x = symbolsAt(tablePtr, b0);
      m = infoAt(tablePtr, b0);
      store<u32>(o0, x);
      o0 += <usize>(m >> 6) + 1;
      b0 >>= m;
      x = symbolsAt(tablePtr, b1);
      m = infoAt(tablePtr, b1);
      store<u32>(o1, x);
      o1 += <usize>(m >> 6) + 1;
      b1 >>= m;
      x = symbolsAt(tablePtr, b2);
      m = infoAt(tablePtr, b2);
      store<u32>(o2, x);
      o2 += <usize>(m >> 6) + 1;
      b2 >>= m;
      x = symbolsAt(tablePtr, b0);
      m = infoAt(tablePtr, b0);
      store<u32>(o0, x);
      o0 += <usize>(m >> 6) + 1;
      b0 >>= m;
      x = symbolsAt(tablePtr, b1);
      m = infoAt(tablePtr, b1);
      store<u32>(o1, x);
      o1 += <usize>(m >> 6) + 1;
      b1 >>= m;
      x = symbolsAt(tablePtr, b2);
      m = infoAt(tablePtr, b2);
      store<u32>(o2, x);
      o2 += <usize>(m >> 6) + 1;
      b2 >>= m;
      x = symbolsAt(tablePtr, b0);
      m = infoAt(tablePtr, b0);
      store<u32>(o0, x);
      o0 += <usize>(m >> 6) + 1;
      b0 >>= m;
      x = symbolsAt(tablePtr, b1);
      m = infoAt(tablePtr, b1);
      store<u32>(o1, x);
      o1 += <usize>(m >> 6) + 1;
      b1 >>= m;
      x = symbolsAt(tablePtr, b2);
      m = infoAt(tablePtr, b2);
      store<u32>(o2, x);
      o2 += <usize>(m >> 6) + 1;
      b2 >>= m;
      let c = clz(b0);
      p0 += <usize>(c >> 3);
      u0 = c & 7;
      c = clz(b1);
      p1 += <usize>(c >> 3);
      u1 = c & 7;
      c = clz(b2);
      p2 += <usize>(c >> 3);
      u2 = c & 7;
    }
    let drained = false;
    if (o0 > m0 || p0 > srcEnd) {
      if (!finishSegment(p0, u0, l0, o0, e0, tablePtr)) return false;
      if (next < segments) {
        p0 = src + <usize>load<u32>(offsetsPtr + ((next - 1) << 2));
        l0 = src + <usize>load<u32>(offsetsPtr + (next << 2));
        o0 = out + next * seg;
        e0 = o0 + seg;
        m0 = e0 - ROUND_OUT;
        u0 = 0;
        next++;
      } else {
        // none left: the lane stays at its segment's end
        drained = true;
        p0 = l0;
        u0 = 0;
        o0 = e0;
      }
    }
    if (o1 > m1 || p1 > srcEnd) {
      if (!finishSegment(p1, u1, l1, o1, e1, tablePtr)) return false;
      if (next < segments) {
        p1 = src + <usize>load<u32>(offsetsPtr + ((next - 1) << 2));
        l1 = src + <usize>load<u32>(offsetsPtr + (next << 2));
        o1 = out + next * seg;
        e1 = o1 + seg;
        m1 = e1 - ROUND_OUT;
        u1 = 0;
        next++;
      } else {
        // none left: the lane stays at its segment's end
        drained = true;
        p1 = l1;
        u1 = 0;
        o1 = e1;
      }
    }
    if (o2 > m2 || p2 > srcEnd) {
      if (!finishSegment(p2, u2, l2, o2, e2, tablePtr)) return false;
      if (next < segments) {
        p2 = src + <usize>load<u32>(offsetsPtr + ((next - 1) << 2));
        l2 = src + <usize>load<u32>(offsetsPtr + (next << 2));
        o2 = out + next * seg;
        e2 = o2 + seg;
        m2 = e2 - ROUND_OUT;
        u2 = 0;
        next++;
      } else {
        // none left: the lane stays at its segment's end
        drained = true;
        p2 = l2;
        u2 = 0;
        o2 = e2;
      }
    }
    if (drained) break;
  }
  // a drained lane sits at its segment's end; the others finish theirs
  return (
    finishSegment(p0, u0, l0, o0, e0, tablePtr) &&
    finishSegment(p1, u1, l1, o1, e1, tablePtr) &&
    finishSegment(p2, u2, l2, o2, e2, tablePtr)
  );
}

/**
 * The rest of a segment, alone: its output from o to outEnd, its bits from byte p, bit u on, to
 * `limit` (its end). Rounds of 5 lookups while 20 or more symbols remain, then one lookup a
 * refill: whole entries while 4 or more remain, then the first symbol of an entry alone. Every
 * refill first checks that p has not passed `limit` (so reads stay below limit + 8). Returns true
 * when the symbols ended within the segment's bits.
 */
function finishSegment(p: usize, u: u64, limit: usize, o: usize, outEnd: usize, tablePtr: usize): bool {
  while (outEnd - o >= ROUND_OUT) {
    if (p > limit) return false;
    let b = (load<u64>(p) | SENTINEL) >> u;
    let m: u64;
    m = infoAt(tablePtr, b);
    store<u32>(o, symbolsAt(tablePtr, b));
    o += <usize>(m >> 6) + 1;
    b >>= m;
    m = infoAt(tablePtr, b);
    store<u32>(o, symbolsAt(tablePtr, b));
    o += <usize>(m >> 6) + 1;
    b >>= m;
    m = infoAt(tablePtr, b);
    store<u32>(o, symbolsAt(tablePtr, b));
    o += <usize>(m >> 6) + 1;
    b >>= m;
    m = infoAt(tablePtr, b);
    store<u32>(o, symbolsAt(tablePtr, b));
    o += <usize>(m >> 6) + 1;
    b >>= m;
    m = infoAt(tablePtr, b);
    store<u32>(o, symbolsAt(tablePtr, b));
    o += <usize>(m >> 6) + 1;
    b >>= m;
    const c = clz(b);
    p += <usize>(c >> 3);
    u = c & 7;
  }
  while (o < outEnd) {
    if (p > limit) return false;
    const b = load<u64>(p) >> u;
    const info = <u32>load<u16>(tablePtr + ((<usize>b & 0x7ff) << 1), TABLE_INFO);
    if (outEnd - o >= 4) {
      store<u32>(o, symbolsAt(tablePtr, b));
      o += <usize>((info >> 6) & 3) + 1;
      u += <u64>(info & 63);
    } else {
      store<u8>(o, <u8>symbolsAt(tablePtr, b));
      o++;
      u += <u64>(info >> 8);
    }
    p += <usize>(u >> 3);
    u &= 7;
  }
  // bit position p * 8 + u at most the segment's end, limit * 8
  return p < limit || (p == limit && u == 0);
}

// ---------------------------------------------------------------------------------------------
// Mode 3: segments of 32 interleaved lanes (docs/format.md, "Mode 3: interleaved lanes")
//
// Quad q of a segment (symbols 4q .. 4q + 3) belongs to lane q mod 32; lane l's t-th symbol is
// symbol 128 (t >> 2) + 4 l + (t & 3). Each lane's codes are cut into 16-bit units, stored in the
// order a decoder that steps the 32 lanes in lockstep reads them: at step t, lanes in ascending
// order, a lane reads its next unit only when its next code runs past the bits it holds.

/** Steps of a mode-3 segment of c symbols: lane 0's symbol count (4 a group of 128, then the rest's first quad). */
// @ts-ignore: decorator
@inline function laneSteps(c: usize): usize {
  return ((c >> 7) << 2) + min<usize>(4, c & 127);
}

/**
 * Huffman-encodes `n` bytes at `srcPtr` as mode-3 segments of 2^segLog2 symbols with the codes at
 * `codesPtr` ({@link huffmanBuildCodes}) at `outPtr`: each segment's units (u16 little-endian) in
 * the order the lanes read them, segment k ending at offsetsPtr[k] (u32, bytes from outPtr).
 * Writes exactly the returned bytes (every byte of each segment, no slack past them).
 * `scratchPtr`: 3 x 2^segLog2 / 2 + 640 bytes ({@link lanesScratchBytes}; 6784 at g = 12),
 * 8-byte aligned: each step's mask of the lanes that read a unit, each lane's bits. Every symbol must have a code. Returns the bytes written: a segment of B bits
 * takes at most ceil(B / 8) + 64.
 */
export function huffmanEncodeLanes(srcPtr: usize, n: usize, codesPtr: usize, segLog2: u32, outPtr: usize, offsetsPtr: usize, scratchPtr: usize): f64 {
  const seg: usize = <usize>1 << segLog2;
  let out = outPtr;
  let k: usize = 0;
  for (let start: usize = 0; start < n; start += seg, k++) {
    out = encodeLaneSegment(srcPtr + start, min<usize>(n - start, seg), codesPtr, out, scratchPtr, laneBytes(segLog2));
    store<u32>(offsetsPtr + (k << 2), <u32>(out - outPtr));
  }
  return <f64>(out - outPtr);
}

/**
 * The bytes {@link huffmanEncodeLanes} writes for the `n` bytes at `srcPtr` with the codes at
 * `codesPtr`, without writing them: per segment of 2^segLog2 symbols, 2 bytes for each of its
 * lanes' ceil(B / 16) units (B: the lane's code bits). One pass of lookups; what a caller asks
 * before coding into a room that the worst case (64 bytes a segment) may pass.
 */
export function huffmanLanesBytes(srcPtr: usize, n: usize, codesPtr: usize, segLog2: u32): f64 {
  const seg: usize = <usize>1 << segLog2;
  let total: u64 = 0;
  for (let start: usize = 0; start < n; start += seg) {
    const c = min<usize>(n - start, seg);
    for (let l: usize = 0; l < 32; l++) {
      let bits: u32 = 0;
      for (let q = l << 2; q < c; q += 128) {
        const end = min<usize>(q + 4, c);
        for (let i = q; i < end; i++) bits += load<u32>(codesPtr + (<usize>load<u8>(srcPtr + start + i) << 2)) >> 16;
      }
      total += <u64>((bits + 15) >> 4) << 1;
    }
  }
  return <f64>total;
}

/** Bytes of one lane's bits in the encoder's scratch: 2^segLog2 / 32 codes of up to 11 bits, and 16 bytes for the 8-byte stores. */
// @ts-ignore: decorator
@inline function laneBytes(segLog2: u32): usize {
  return ((<usize>11 << segLog2) >> 8) + 16;
}

/** Bytes of scratch {@link huffmanEncodeLanes} needs for segments of 2^segLog2 symbols (ts/cpu/wasm.ts has its twin). */
// @ts-ignore: decorator
@inline function lanesScratchBytes(segLog2: u32): usize {
  return (laneSteps(<usize>1 << segLog2) << 2) + 128 + 32 * laneBytes(segLog2);
}

/**
 * One mode-3 segment of the c symbols at `src`, written at `out`; returns its end. One pass over
 * each lane's symbols runs its count of held bits a (the decoder reads a unit when a code's
 * length exceeds a), marks the lane in the masks of the steps that read, and writes the lane's
 * bits (its codes concatenated, a 64-bit writer flushed each quad) to its place in the scratch.
 * Then the steps in order, the lanes of each step's mask in ascending order, each take the next
 * 16 bits of its lane's bits: the units in the order the lanes read them.
 */
function encodeLaneSegment(src: usize, c: usize, codesPtr: usize, out: usize, scratch: usize, laneSize: usize): usize {
  const steps = laneSteps(c);
  const masks = scratch;
  // each lane's next unit to write, then the lanes' bits
  const next = scratch + (steps << 2);
  const lanes = next + 128;
  memory.fill(masks, 0, steps << 2);
  for (let l: u32 = 0; l < 32; l++) {
    let a: u32 = 0;
    let buf: u64 = 0;
    let bits: u64 = 0;
    let w = lanes + <usize>l * laneSize;
    store<u32>(next + (<usize>l << 2), <u32>w);
    for (let q = <usize>l << 2, m = masks; q < c; q += 128, m += 16) {
      const end = min<usize>(q + 4, c);
      const quad = end - q == 4 ? load<u32>(src + q) : 0;
      for (let i = q, mi = m; i < end; i++, mi += 4) {
        const symbol = end - q == 4 ? (quad >> (<u32>(i - q) << 3)) & 255 : <u32>load<u8>(src + i);
        const code = load<u32>(codesPtr + (<usize>symbol << 2));
        const len = code >> 16;
        const need = <u32>(len > a);
        store<u32>(mi, load<u32>(mi) | (need << l));
        a += (need << 4) - len;
        buf |= <u64>(code & 0xffff) << bits;
        bits += <u64>len;
      }
      store<u64>(w, buf);
      w += <usize>(bits >> 3);
      buf >>= bits & 56;
      bits &= 7;
    }
    // the last byte's bits and zeros: a lane's last unit is zero-padded
    store<u64>(w, buf);
  }
  let o = out;
  for (let t: usize = 0; t < steps; t++) {
    let m = load<u32>(masks + (t << 2));
    while (m != 0) {
      const r = next + (<usize>ctz<u32>(m) << 2);
      m &= m - 1;
      const p = <usize>load<u32>(r);
      store<u16>(o, load<u16>(p));
      store<u32>(r, <u32>(p + 2));
      o += 2;
    }
  }
  return o;
}

/**
 * Decodes `n` symbols of mode-3 segments of 2^segLog2 symbols at `srcPtr` (`srcBytes` long,
 * segment k ending at offsetsPtr[k] bytes, u32) with the tables at `tablePtr`
 * ({@link huffmanBuildTable}, either kind: it reads only the first symbol of an entry and its
 * length) into `outPtr`: exactly n bytes, nothing past them. Reads nothing outside the segments
 * (no slack needed past srcPtr + srcBytes) whatever the input. Returns 0, or -1 for corrupt
 * input: offsets decreasing or past srcBytes, a segment of an odd byte length, a segment that
 * reads past its units or leaves units unread.
 */
export function huffmanDecodeLanes(srcPtr: usize, srcBytes: usize, offsetsPtr: usize, segLog2: u32, n: usize, tablePtr: usize, outPtr: usize): i32 {
  const seg: usize = <usize>1 << segLog2;
  const segments = (n + seg - 1) >> segLog2;
  let last: usize = 0;
  for (let k: usize = 0; k < segments; k++) {
    const end = <usize>load<u32>(offsetsPtr + (k << 2));
    if (end < last || end > srcBytes || ((end - last) & 1) != 0) return -1;
    last = end;
  }
  let start: usize = 0;
  for (let k: usize = 0; k < segments; k++) {
    const end = <usize>load<u32>(offsetsPtr + (k << 2));
    const from = k << segLog2;
    if (!decodeLaneSegment(srcPtr + start, srcPtr + end, min<usize>(n - from, seg), tablePtr, outPtr + from)) return -1;
    start = end;
  }
  return 0;
}

/** The place of the next unit in the segment {@link decodeLaneSegment} decodes (its lanes share it). */
let lanesAt: usize = 0;
/** The place of that segment's last unit. */
let lanesLast: usize = 0;

/**
 * One step of one lane of {@link decodeLaneSegment}: the lane's state `s` (its held bits below a
 * sentinel bit at position a, the count held; 1 = none) looked up (the sentinel and zeros above
 * the held bits change no code that fits in them); a unit read at {@link lanesAt} when that code
 * is longer than a (x = s + (unit + 0xffff) << a: the unit above the held bits, the sentinel moved
 * 16 up); the symbol from the lookup of x, stored at `o`; returns the lane's next state. The unit
 * is loaded from min(lanesAt, lanesLast): a corrupt segment that runs past its end reads its last
 * unit again (in bounds) and fails at the end, where lanesAt must be exactly its end.
 */
// @ts-ignore: decorator
@inline function laneStep(s: u32, tablePtr: usize, info: usize, o: usize): u32 {
  const need = ((<u32>load<u16>(info + (<usize>(s & 0x7ff) << 1)) >> 8) & 15) + clz(s) > 31;
  const x = select<u32>(s + ((<u32>load<u16>(min<usize>(lanesAt, lanesLast)) + 0xffff) << (31 - clz(s))), s, need);
  lanesAt += <usize>need << 1;
  const j = <usize>(x & 0x7ff);
  store<u8>(o, load<u8>(tablePtr + (j << 2)));
  return x >> ((<u32>load<u16>(info + (j << 1)) >> 8) & 15);
}

/**
 * One mode-3 segment of c symbols from the units in [p, end) to `out`, each of the 32 lanes'
 * state in one local (locals cannot be indexed, so the 32 lanes of a step are written out, a
 * {@link laneStep} each). Whether a lane reads a unit is decided from its held bits alone, so the
 * units' place, the one thing the lanes share, advances by an add a lane and the lanes' lookups
 * overlap.
 */
function decodeLaneSegment(p: usize, end: usize, c: usize, tablePtr: usize, out: usize): bool {
  // a segment of c >= 1 symbols reads at least one unit (lane 0's first code)
  if (p >= end) return false;
  lanesAt = p;
  lanesLast = end - 2;
  const info = tablePtr + TABLE_INFO;
  let s0: u32 = 1, s1: u32 = 1, s2: u32 = 1, s3: u32 = 1, s4: u32 = 1, s5: u32 = 1, s6: u32 = 1, s7: u32 = 1;
  let s8: u32 = 1, s9: u32 = 1, s10: u32 = 1, s11: u32 = 1, s12: u32 = 1, s13: u32 = 1, s14: u32 = 1, s15: u32 = 1;
  let s16: u32 = 1, s17: u32 = 1, s18: u32 = 1, s19: u32 = 1, s20: u32 = 1, s21: u32 = 1, s22: u32 = 1, s23: u32 = 1;
  let s24: u32 = 1, s25: u32 = 1, s26: u32 = 1, s27: u32 = 1, s28: u32 = 1, s29: u32 = 1, s30: u32 = 1, s31: u32 = 1;
  // step t: symbol t & 3 of quad group t >> 2 (lane l's quad is group x 32 + l); every step
  // decodes lane 0, lane l only while 4 l < rem (every lane but in the last group of a short segment)
  const steps = laneSteps(c);
  for (let t: usize = 0; t < steps; t++) {
    const base = ((t >> 2) << 7) + (t & 3);
    const rem = c - base;
    const o = out + base;
    s0 = laneStep(s0, tablePtr, info, o);
    if (rem > 4) s1 = laneStep(s1, tablePtr, info, o + 4);
    if (rem > 8) s2 = laneStep(s2, tablePtr, info, o + 8);
    if (rem > 12) s3 = laneStep(s3, tablePtr, info, o + 12);
    if (rem > 16) s4 = laneStep(s4, tablePtr, info, o + 16);
    if (rem > 20) s5 = laneStep(s5, tablePtr, info, o + 20);
    if (rem > 24) s6 = laneStep(s6, tablePtr, info, o + 24);
    if (rem > 28) s7 = laneStep(s7, tablePtr, info, o + 28);
    if (rem > 32) s8 = laneStep(s8, tablePtr, info, o + 32);
    if (rem > 36) s9 = laneStep(s9, tablePtr, info, o + 36);
    if (rem > 40) s10 = laneStep(s10, tablePtr, info, o + 40);
    if (rem > 44) s11 = laneStep(s11, tablePtr, info, o + 44);
    if (rem > 48) s12 = laneStep(s12, tablePtr, info, o + 48);
    if (rem > 52) s13 = laneStep(s13, tablePtr, info, o + 52);
    if (rem > 56) s14 = laneStep(s14, tablePtr, info, o + 56);
    if (rem > 60) s15 = laneStep(s15, tablePtr, info, o + 60);
    if (rem > 64) s16 = laneStep(s16, tablePtr, info, o + 64);
    if (rem > 68) s17 = laneStep(s17, tablePtr, info, o + 68);
    if (rem > 72) s18 = laneStep(s18, tablePtr, info, o + 72);
    if (rem > 76) s19 = laneStep(s19, tablePtr, info, o + 76);
    if (rem > 80) s20 = laneStep(s20, tablePtr, info, o + 80);
    if (rem > 84) s21 = laneStep(s21, tablePtr, info, o + 84);
    if (rem > 88) s22 = laneStep(s22, tablePtr, info, o + 88);
    if (rem > 92) s23 = laneStep(s23, tablePtr, info, o + 92);
    if (rem > 96) s24 = laneStep(s24, tablePtr, info, o + 96);
    if (rem > 100) s25 = laneStep(s25, tablePtr, info, o + 100);
    if (rem > 104) s26 = laneStep(s26, tablePtr, info, o + 104);
    if (rem > 108) s27 = laneStep(s27, tablePtr, info, o + 108);
    if (rem > 112) s28 = laneStep(s28, tablePtr, info, o + 112);
    if (rem > 116) s29 = laneStep(s29, tablePtr, info, o + 116);
    if (rem > 120) s30 = laneStep(s30, tablePtr, info, o + 120);
    if (rem > 124) s31 = laneStep(s31, tablePtr, info, o + 124);
  }
  return lanesAt == end;
}
