// Tree hash of docs/format.md ("Tree hash"): XXH32 (seed 0) of every 4096-byte block of one or
// many byte ranges. ts/codec/gpu/hash.ts plans every level on the host (the lengths of all levels
// follow from the ranges' byte lengths) and dispatches `hashTiles` once per level: level 1
// reads the caller's buffer (`input`), later levels read the hashes of the level before, kept in
// `scratch`. A range of at most one block is a final level: its host-assigned `dst` is the
// chunk's result word.
//
// XXH32 reads 16-byte stripes (four lanes), then 4-byte words, then single bytes; bytes are at
// any byte offset of the bound buffer, so 4-byte reads of an unaligned offset join two words.
//
// A workgroup hashes HB = WG / 4 consecutive blocks of the level, four invocations a block, one
// XXH32 lane each. It walks its blocks in tiles of TILE_STRIPES stripes: the whole workgroup
// stages the tile's bytes of all HB blocks in workgroup memory (32 consecutive invocations read
// one block's 128 consecutive bytes: coalesced, where one invocation a block reading its own
// 4 KiB would read 4 KiB apart from its neighbours), then each invocation advances its lane over
// the tile's stripes. After the last tile one invocation a block joins the lanes and hashes the
// block's tail (the bytes past its last whole stripe: only a range's last block has one) from
// the source. On an H200 (Dawn), tiles of 8 stripes measured faster than tiles of 16.
// Composed by ts/gpu/compose.ts (`const WG` = 256 prepended).

struct Params {
  blocks: u32,       // blocks of this level, over all ranges
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

// The end of XXH32 of n bytes ending at byte `end` of the source: `acc0` holds the joined lanes
// (n >= 16) or PRIME5, p0 is the byte after the last whole stripe; adds n, hashes the 4-byte
// words and the bytes left, and avalanches.
fn xxFinish(acc0: u32, n: u32, p0: u32, end: u32) -> u32 {
  var acc = acc0 + n;
  var p = p0;
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

// The range of global block g: the last range whose first block is at or before g.
fn rangeOf(g: u32) -> u32 {
  var lo = 0u;
  var hi = params.ranges - 1u;
  while (lo < hi) {
    let mid = lo + (hi - lo + 1u) / 2u;
    if (ranges[mid].firstBlock <= g) { lo = mid; } else { hi = mid - 1u; }
  }
  return lo;
}

const HB: u32 = WG / 4u;                        // blocks a workgroup
const TILE_STRIPES: u32 = 8u;                   // stripes of each block a tile (128 bytes)
const TILE_WORDS: u32 = TILE_STRIPES * 4u;      // words of one block in a tile
const ROW: u32 = TILE_WORDS + 4u;               // padded: the HB rows start 4 banks apart
const TILES: u32 = BLOCK / (TILE_STRIPES * 16u);
const NO_BLOCK: u32 = 0xFFFFFFFFu;

var<workgroup> tile: array<u32, HB * ROW>;
var<workgroup> blockSrc: array<u32, HB>;   // byte of the block's first byte in the source
var<workgroup> blockBytes: array<u32, HB>; // bytes of the block (0 past the level's blocks)
var<workgroup> blockDst: array<u32, HB>;   // word of `scratch` for its hash, or NO_BLOCK

@compute @workgroup_size(WG)
fn hashTiles(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wid: vec3<u32>,
             @builtin(num_workgroups) nwg: vec3<u32>) {
  let first = (wid.y * nwg.x + wid.x) * HB;
  if (first >= params.blocks) { return; } // the whole workgroup: past the grid's end
  if (tid < HB) {
    let g = first + tid;
    var src = 0u;
    var n = 0u;
    var dst = NO_BLOCK;
    if (g < params.blocks) {
      let r = ranges[rangeOf(g)];
      let b = g - r.firstBlock;
      src = r.src + b * BLOCK;
      n = min(BLOCK, r.bytes - b * BLOCK); // an empty range has one block of 0 bytes
      dst = r.dst + b;
    }
    blockSrc[tid] = src;
    blockBytes[tid] = n;
    blockDst[tid] = dst;
  }
  workgroupBarrier();

  let mine = tid >> 2u; // this invocation's block, lane `lane` of it
  let lane = tid & 3u;
  let stripes = blockBytes[mine] >> 4u;
  var init = array<u32, 4>(0x24234428u, PRIME2, 0u, 0x61C8864Fu); // PRIME1 + PRIME2, PRIME2, 0, -PRIME1
  var v = init[lane];
  for (var t = 0u; t < TILES; t++) {
    let tileByte = t * TILE_STRIPES * 16u;
    // stage: word w of block k's tile at tile[k * ROW + w]; 32 consecutive invocations read
    // the 32 words of one block. Words past a block's end (a range's last block) stay unread:
    // no whole stripe holds them.
    for (var i = tid; i < HB * TILE_WORDS; i += WG) {
      let k = i / TILE_WORDS;
      let w = i % TILE_WORDS;
      let p = tileByte + w * 4u;
      var x = 0u;
      if (p + 4u <= blockBytes[k]) { x = read32(blockSrc[k] + p); }
      tile[k * ROW + w] = x;
    }
    workgroupBarrier();
    let s0 = t * TILE_STRIPES;
    if (s0 + TILE_STRIPES <= stripes) {
      for (var s = 0u; s < TILE_STRIPES; s++) { v = xxRound(v, tile[mine * ROW + s * 4u + lane]); }
    } else if (s0 < stripes) {
      for (var s = 0u; s < stripes - s0; s++) { v = xxRound(v, tile[mine * ROW + s * 4u + lane]); }
    }
    workgroupBarrier();
  }

  // join the lanes, then the tail of the block from the source
  tile[tid] = v;
  workgroupBarrier();
  let dst = blockDst[mine];
  if (lane == 0u && dst != NO_BLOCK) {
    let n = blockBytes[mine];
    let src = blockSrc[mine];
    var acc = PRIME5;
    if (n >= 16u) {
      acc = rotl(tile[tid], 1u) + rotl(tile[tid + 1u], 7u) + rotl(tile[tid + 2u], 12u) + rotl(tile[tid + 3u], 18u);
    }
    scratch[dst] = xxFinish(acc, n, src + stripes * 16u, src + n);
  }
}
