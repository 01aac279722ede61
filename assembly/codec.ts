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

/**
 * Byte histogram of `n` bytes at `ptr` into 256 u32 at `histPtr` (overwritten). Counts go to four
 * sub-histograms in `scratchPtr` (4096 bytes) by position, so a run of equal bytes does not
 * serialise on one counter's store-to-load forwarding, then are summed.
 */
export function histogram8(ptr: usize, n: usize, histPtr: usize, scratchPtr: usize): void {
  memory.fill(scratchPtr, 0, 4096);
  let i: usize = 0;
  for (; i + 4 <= n; i += 4) {
    const w = load<u32>(ptr + i);
    const a = scratchPtr + ((w & 0xff) << 2);
    store<u32>(a, load<u32>(a) + 1);
    const b = scratchPtr + 1024 + (((w >> 8) & 0xff) << 2);
    store<u32>(b, load<u32>(b) + 1);
    const c = scratchPtr + 2048 + (((w >> 16) & 0xff) << 2);
    store<u32>(c, load<u32>(c) + 1);
    const d = scratchPtr + 3072 + ((w >> 24) << 2);
    store<u32>(d, load<u32>(d) + 1);
  }
  for (; i < n; i++) {
    const a = scratchPtr + (<usize>load<u8>(ptr + i) << 2);
    store<u32>(a, load<u32>(a) + 1);
  }
  for (let s: usize = 0; s < 256; s++) {
    const q = scratchPtr + (s << 2);
    store<u32>(histPtr + (s << 2), load<u32>(q) + load<u32>(q, 1024) + load<u32>(q, 2048) + load<u32>(q, 3072));
  }
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

/** Longest code, in bits: the decode table has 2^11 entries (4 KiB of u16). */
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

/** Bytes of the decode tables at `tablePtr`: 2048 u16 single-symbol entries, then 2048 u32 pair entries. */
const TABLES_BYTES: usize = 4096 + 8192;

/**
 * The decode tables of a complete code given as 256 lengths at `lengthsPtr` (`codesPtr`: 1 KiB of
 * scratch), at `tablePtr` ({@link TABLES_BYTES} = 12 KiB):
 *   - 2048 u16, indexed by the next 11 bits: symbol | length << 8;
 *   - 2048 u32, indexed the same way: up to two symbols whose codes both lie in those 11 bits,
 *     sym0 | sym1 << 8 | count << 16 | bits << 24 (Huff0's double-symbol table, HUF_decompress4X2,
 *     built here from the single table: the second code is valid when it fits the bits left).
 * Returns 0, or -1 when a length exceeds 11, fewer than two symbols are present or the code is
 * not complete.
 */
export function huffmanBuildTable(lengthsPtr: usize, codesPtr: usize, tablePtr: usize): i32 {
  const kraft = huffmanBuildCodes(lengthsPtr, codesPtr);
  if (kraft != <i32>TABLE_SIZE) return -1;
  let present = 0;
  for (let s: usize = 0; s < 256; s++) {
    const c = load<u32>(codesPtr + (s << 2));
    const len = c >> 16;
    if (len == 0) continue;
    present++;
    const entry = <u16>(<u32>s | (len << 8));
    for (let j: u32 = c & 0xffff; j < TABLE_SIZE; j += 1 << len) store<u16>(tablePtr + (j << 1), entry);
  }
  if (present < 2) return -1;
  const pairs = tablePtr + 4096;
  for (let j: u32 = 0; j < TABLE_SIZE; j++) {
    const e0 = <u32>load<u16>(tablePtr + (j << 1));
    const l0 = e0 >> 8;
    const e1 = <u32>load<u16>(tablePtr + ((j >> l0) << 1));
    const l1 = e1 >> 8;
    store<u32>(pairs + (j << 2), l0 + l1 <= MAX_CODE_BITS ? (e0 & 0xff) | ((e1 & 0xff) << 8) | (2 << 16) | ((l0 + l1) << 24) : (e0 & 0xff) | (1 << 16) | (l0 << 24));
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
    const end = min<usize>(n, start + seg);
    let buf: u64 = 0;
    let bits: u64 = 0;
    let i = start;
    // after a flush at most 7 bits remain, so 4 codes (44 bits) fit before the next one
    for (; i + 4 <= end; i += 4) {
      const w = load<u32>(srcPtr + i);
      const c0 = load<u32>(codesPtr + ((w & 0xff) << 2));
      const c1 = load<u32>(codesPtr + (((w >> 8) & 0xff) << 2));
      const c2 = load<u32>(codesPtr + (((w >> 16) & 0xff) << 2));
      const c3 = load<u32>(codesPtr + ((w >> 24) << 2));
      buf |= <u64>(c0 & 0xffff) << bits;
      bits += c0 >> 16;
      buf |= <u64>(c1 & 0xffff) << bits;
      bits += c1 >> 16;
      buf |= <u64>(c2 & 0xffff) << bits;
      bits += c2 >> 16;
      buf |= <u64>(c3 & 0xffff) << bits;
      bits += c3 >> 16;
      store<u64>(out, buf);
      out += <usize>(bits >> 3);
      buf = (bits & ~7) == 64 ? 0 : buf >> (bits & ~7);
      bits &= 7;
    }
    for (; i < end; i++) {
      const c = load<u32>(codesPtr + (<usize>load<u8>(srcPtr + i) << 2));
      buf |= <u64>(c & 0xffff) << bits;
      bits += c >> 16;
      store<u64>(out, buf);
      out += <usize>(bits >> 3);
      buf = (bits & ~7) == 64 ? 0 : buf >> (bits & ~7);
      bits &= 7;
    }
    if (bits > 0) {
      store<u8>(out, <u8>buf);
      out++;
    }
    store<u32>(offsetsPtr + (k << 2), <u32>(out - outPtr));
  }
  return <f64>(out - outPtr);
}

/**
 * Decodes the symbols of one segment into [out, outEnd) from its bits at [p, limit): pair
 * lookups (two symbols when both codes fit in 11 bits) while more than 10 symbols remain, 8 bytes
 * refilled after every 5 lookups (5 x 11 bits <= 57), then one symbol a lookup. Returns true when
 * the segment's symbols fit in its bytes. Reads at most 8 bytes past `limit`.
 */
function decodeSegment(p: usize, limit: usize, out: usize, outEnd: usize, tablePtr: usize): bool {
  return finishSegment(p, 0, p, limit, out, outEnd, tablePtr);
}

/**
 * Decodes `n` symbols from segments of 2^segLog2 symbols at `srcPtr` (the bitstreams, `srcBytes`
 * long, segment k ending at offsetsPtr[k] bytes: validated by the caller as non-decreasing and
 * ending at srcBytes) with the tables at `tablePtr` ({@link huffmanBuildTable}, 12 KiB) into
 * `outPtr` (n bytes). The memory must hold 8 readable bytes past srcPtr + srcBytes. Segments are
 * independent (Haugen's offset table; Huff0 decodes its four streams the same way); here four
 * are decoded in one loop so that their table lookups overlap.
 * Returns 0, or -1 when a segment needs bits past its end (corrupt input).
 */
export function huffmanDecode(srcPtr: usize, srcBytes: usize, offsetsPtr: usize, segLog2: u32, n: usize, tablePtr: usize, outPtr: usize): i32 {
  const seg: usize = <usize>1 << segLog2;
  const segments = (n + seg - 1) >> segLog2;
  let k: usize = 0;
  // four whole segments at a time, interleaved
  for (; k + 4 <= segments && (k + 4) * seg <= n; k += 4) {
    const s0 = k == 0 ? srcPtr : srcPtr + <usize>load<u32>(offsetsPtr + ((k - 1) << 2));
    const e0 = srcPtr + <usize>load<u32>(offsetsPtr + (k << 2));
    const e1 = srcPtr + <usize>load<u32>(offsetsPtr + ((k + 1) << 2));
    const e2 = srcPtr + <usize>load<u32>(offsetsPtr + ((k + 2) << 2));
    const e3 = srcPtr + <usize>load<u32>(offsetsPtr + ((k + 3) << 2));
    if (!decode4(s0, e0, e1, e2, e3, seg, tablePtr, outPtr + k * seg)) return -1;
  }
  for (; k < segments; k++) {
    const s = k == 0 ? srcPtr : srcPtr + <usize>load<u32>(offsetsPtr + ((k - 1) << 2));
    const e = srcPtr + <usize>load<u32>(offsetsPtr + (k << 2));
    const end = outPtr + min<usize>(n, (k + 1) * seg);
    if (!decodeSegment(s, e, outPtr + k * seg, end, tablePtr)) return -1;
  }
  return 0;
}

// @ts-ignore: decorator
@inline function lookup(tablePtr: usize, buf: u64): u64 {
  return <u64>load<u16>(tablePtr + ((<usize>buf & 0x7ff) << 1));
}

/**
 * Four consecutive segments of `seg` symbols each (bits [s0, e0), [e0, e1), [e1, e2), [e2, e3)),
 * interleaved lookup by lookup while each has more than 10 symbols to go; then each finishes
 * alone. See {@link decodeSegment}.
 */
function decode4(s0: usize, e0: usize, e1: usize, e2: usize, e3: usize, seg: usize, tablePtr: usize, out: usize): bool {
  const pairs = tablePtr + 4096;
  let p0 = s0, p1 = e0, p2 = e1, p3 = e2;
  let u0: u64 = 0, u1: u64 = 0, u2: u64 = 0, u3: u64 = 0;
  let o0 = out, o1 = out + seg, o2 = out + 2 * seg, o3 = out + 3 * seg;
  const m0 = o1 - 10, m1 = o2 - 10, m2 = o3 - 10, m3 = out + 4 * seg - 10;
  while (o0 <= m0 && o1 <= m1 && o2 <= m2 && o3 <= m3) {
    // 57 or more valid bits in each buffer; u counts the bits used since the refill
    const b0 = load<u64>(p0);
    const b1 = load<u64>(p1);
    const b2 = load<u64>(p2);
    const b3 = load<u64>(p3);
    for (let j = 0; j < 5; j++) {
      const x0 = load<u32>(pairs + ((<usize>(b0 >> u0) & 0x7ff) << 2));
      const x1 = load<u32>(pairs + ((<usize>(b1 >> u1) & 0x7ff) << 2));
      const x2 = load<u32>(pairs + ((<usize>(b2 >> u2) & 0x7ff) << 2));
      const x3 = load<u32>(pairs + ((<usize>(b3 >> u3) & 0x7ff) << 2));
      store<u16>(o0, <u16>x0);
      store<u16>(o1, <u16>x1);
      store<u16>(o2, <u16>x2);
      store<u16>(o3, <u16>x3);
      o0 += (x0 >> 16) & 3;
      o1 += (x1 >> 16) & 3;
      o2 += (x2 >> 16) & 3;
      o3 += (x3 >> 16) & 3;
      u0 += <u64>(x0 >> 24);
      u1 += <u64>(x1 >> 24);
      u2 += <u64>(x2 >> 24);
      u3 += <u64>(x3 >> 24);
    }
    p0 += <usize>(u0 >> 3); u0 &= 7;
    p1 += <usize>(u1 >> 3); u1 &= 7;
    p2 += <usize>(u2 >> 3); u2 &= 7;
    p3 += <usize>(u3 >> 3); u3 &= 7;
    if (p0 > e0 || p1 > e1 || p2 > e2 || p3 > e3) return false;
  }
  // each segment's remaining symbols alone (pairs, then singles), from where it stopped
  return (
    finishSegment(p0, u0, s0, e0, o0, out + seg, tablePtr) &&
    finishSegment(p1, u1, e0, e1, o1, out + 2 * seg, tablePtr) &&
    finishSegment(p2, u2, e1, e2, o2, out + 3 * seg, tablePtr) &&
    finishSegment(p3, u3, e2, e3, o3, out + 4 * seg, tablePtr)
  );
}

/** {@link decodeSegment} resumed at byte p, bit `used`, output o; `start` is the segment's first byte. */
function finishSegment(p: usize, used: u64, start: usize, limit: usize, o: usize, outEnd: usize, tablePtr: usize): bool {
  const pairs = tablePtr + 4096;
  while (o + 10 <= outEnd) {
    let buf = load<u64>(p) >> used;
    for (let j = 0; j < 5; j++) {
      const e = load<u32>(pairs + ((<usize>buf & 0x7ff) << 2));
      store<u16>(o, <u16>e);
      o += (e >> 16) & 3;
      buf >>= <u64>(e >> 24);
      used += <u64>(e >> 24);
    }
    p += <usize>(used >> 3);
    used &= 7;
    if (p > limit) return false;
  }
  return decodeTail(p, used, start, limit, outEnd - o, tablePtr, o);
}

/** The last `count` (< 10) symbols of a segment from byte p, bit `used`; checks the segment's end. */
function decodeTail(p: usize, used: u64, start: usize, limit: usize, count: usize, tablePtr: usize, out: usize): bool {
  let buf = load<u64>(p) >> used;
  for (let i: usize = 0; i < count; i++) {
    if (i == 5) {
      // 5 codes of up to 11 bits used at most 55 of the 57 or more bits: refill once
      p += <usize>(used >> 3);
      used &= 7;
      if (p > limit) return false;
      buf = load<u64>(p) >> used;
    }
    const e = lookup(tablePtr, buf);
    store<u8>(out + i, <u8>e);
    buf >>= e >> 8;
    used += e >> 8;
  }
  return (<u64>(p - start) << 3) + used <= (<u64>(limit - start) << 3);
}
