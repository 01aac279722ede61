// Checksums of the version-2 container: XXH32 and the tree hash built on it (docs/format.md,
// "Tree hash"). XXH32 is Yann Collet's 32-bit xxHash as its specification gives it (xxHash,
// its xxhash_spec.md): four accumulators over 16-byte stripes, then the tail and the avalanche.
// The tree is XXH32 of each 4096-byte block, level after level, so that a GPU (WGSL has no
// 64-bit integers) and a pool of threads can compute it in parallel. The container code that
// calls them is TypeScript (ts/codec/cpu/arena.ts treeHashAt); these kernels allocate nothing
// and take pointers.
//
// One source, two builds: `if (ASC_FEATURE_SIMD)` picks the v128 bodies for build/parle.wasm
// and the scalar twins for build/parle-scalar.wasm; tests compare both with the plain reference
// in test/support/codec-reference.ts.

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
