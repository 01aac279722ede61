// Tree hash of docs/format.md ("Tree hash"): XXH32 (seed 0) of every 4096-byte block of one or
// many byte ranges, one invocation per block. ts/gpu/codec.ts plans every level on the host
// (the lengths of all levels follow from the ranges' byte lengths) and dispatches this entry
// point once per level: level 1 reads the caller's buffer (`input`), later levels read the
// hashes of the level before, kept in `scratch`. A range of at most one block is a final level:
// its host-assigned `dst` is the chunk's result word.
//
// XXH32 reads 16-byte stripes (four lanes), then 4-byte words, then single bytes; bytes are at
// any byte offset of the bound buffer, so 4-byte reads of an unaligned offset join two words.
// Composed by ts/gpu/compose.ts (`const WG` = 256 prepended).

struct Params {
  blocks: u32,       // blocks of this level, over all ranges (invocations that work)
  ranges: u32,       // entries of `ranges`
  fromScratch: u32,  // 1: the level's bytes are in `scratch`; 0: in `input`
  pad: u32,
}

struct Range {
  src: u32,         // byte offset of the range in the bound source (input or scratch)
  bytes: u32,       // byte length of the range at this level
  firstBlock: u32,  // global index of the range's first block (ranges in ascending order)
  dst: u32,         // word of `scratch` that receives the hash of the range's first block
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> ranges: array<Range>;
@group(0) @binding(2) var<storage, read> input: array<u32>;
@group(0) @binding(3) var<storage, read_write> scratch: array<u32>;

const PRIME1: u32 = 0x9E3779B1u;
const PRIME2: u32 = 0x85EBCA77u;
const PRIME3: u32 = 0xC2B2AE3Du;
const PRIME4: u32 = 0x27D4EB2Fu;
const PRIME5: u32 = 0x165667B1u;
const BLOCK: u32 = 4096u;

fn word(i: u32) -> u32 {
  if (params.fromScratch != 0u) { return scratch[i]; }
  return input[i];
}

// Little-endian u32 at byte p (p + 3 inside the range, so both words are in the binding).
fn read32(p: u32) -> u32 {
  let s = (p & 3u) * 8u;
  let lo = word(p >> 2u);
  if (s == 0u) { return lo; }
  return (lo >> s) | (word((p >> 2u) + 1u) << (32u - s));
}

fn read8(p: u32) -> u32 {
  return (word(p >> 2u) >> ((p & 3u) * 8u)) & 0xFFu;
}

fn rotl(x: u32, r: u32) -> u32 {
  return (x << r) | (x >> (32u - r));
}

fn xxRound(acc: u32, lane: u32) -> u32 {
  return rotl(acc + lane * PRIME2, 13u) * PRIME1;
}

// XXH32 (seed 0) of the n bytes at byte p0 of the source.
fn xxh32(p0: u32, n: u32) -> u32 {
  var p = p0;
  let end = p0 + n;
  var acc: u32;
  if (n >= 16u) {
    var v1 = PRIME1 + PRIME2;
    var v2 = PRIME2;
    var v3 = 0u;
    var v4 = 0u - PRIME1;
    let limit = end - 16u;
    loop {
      if (p > limit) { break; }
      v1 = xxRound(v1, read32(p));
      v2 = xxRound(v2, read32(p + 4u));
      v3 = xxRound(v3, read32(p + 8u));
      v4 = xxRound(v4, read32(p + 12u));
      p += 16u;
    }
    acc = rotl(v1, 1u) + rotl(v2, 7u) + rotl(v3, 12u) + rotl(v4, 18u);
  } else {
    acc = PRIME5;
  }
  acc += n;
  loop {
    if (p + 4u > end) { break; }
    acc = rotl(acc + read32(p) * PRIME3, 17u) * PRIME4;
    p += 4u;
  }
  loop {
    if (p >= end) { break; }
    acc = rotl(acc + read8(p) * PRIME5, 11u) * PRIME1;
    p += 1u;
  }
  acc ^= acc >> 15u;
  acc *= PRIME2;
  acc ^= acc >> 13u;
  acc *= PRIME3;
  acc ^= acc >> 16u;
  return acc;
}

@compute @workgroup_size(WG)
fn hashBlocks(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wid: vec3<u32>,
              @builtin(num_workgroups) nwg: vec3<u32>) {
  let g = (wid.y * nwg.x + wid.x) * WG + tid;
  if (g >= params.blocks) { return; }
  // the last range whose first block is at or before g
  var lo = 0u;
  var hi = params.ranges - 1u;
  while (lo < hi) {
    let mid = lo + (hi - lo + 1u) / 2u;
    if (ranges[mid].firstBlock <= g) { lo = mid; } else { hi = mid - 1u; }
  }
  let r = ranges[lo];
  let b = g - r.firstBlock;
  let offset = b * BLOCK;
  let n = min(BLOCK, r.bytes - offset); // an empty range has one block of 0 bytes
  scratch[r.dst + b] = xxh32(r.src + offset, n);
}
