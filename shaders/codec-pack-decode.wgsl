// Decode of pack streams (docs/format.md "Pack streams": PFOR in SIMD-BP128's vertical layout,
// Lemire and Boytsov 2015), one workgroup a block of 256 elements. The host walked each stream's
// block headers (their sizes chain the blocks), checked every field a reader checks there, and
// lists each block: where its header starts in `src`, the word of `dst` its elements start at,
// its element count c and the stream's element width w. Here, per block:
//   1. invocation k < e reads exception k's position and high part (h bits at bit k h of the
//      high parts, least significant bit first) and puts high << b at its position in
//      workgroup memory; a position not above the previous one or not below c is counted in
//      `status` (the CPU decoder's check);
//   2. invocation t writes output word t of the block: for each of its 4 / w elements i (lane i
//      mod 4, slot i div 4: bits slot b .. slot b + b - 1 of the lane, whose word k lies at byte
//      16 k + 4 lane of the packed bits), value = r + low + high, unzigzagged when z is set, the
//      low 8 w bits packed into the word. Bytes past the block's last element are written as 0.
// Every read of `src` is bounded (0 past its end), every write lies in the block's words.

struct Params {
  blocks: u32,
  pad0: u32,
  pad1: u32,
  pad2: u32,
}

struct Block {
  src: u32,   // byte offset of the block's first header byte in `src`
  dst: u32,   // word offset of its first element in `dst`
  shape: u32, // c | w << 16
  pad: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> blocks: array<Block>;
@group(0) @binding(2) var<storage, read> src: array<u32>;
@group(0) @binding(3) var<storage, read_write> dst: array<u32>;
@group(0) @binding(4) var<storage, read_write> status: array<atomic<u32>, 2>;

var<workgroup> high: array<u32, 256>;

// srcWord, read8, read32: shaders/read-src.wgsl (appended)

fn lowMask(bits: u32) -> u32 {
  return select((1u << bits) - 1u, 0xFFFFFFFFu, bits >= 32u);
}

@compute @workgroup_size(256)
fn decode(@builtin(local_invocation_index) t: u32, @builtin(workgroup_id) wid: vec3<u32>,
          @builtin(num_workgroups) nwg: vec3<u32>) {
  let index = wid.y * nwg.x + wid.x;
  if (index >= params.blocks) { return; } // uniform: the whole workgroup leaves
  let blk = blocks[index];
  let c = min(blk.shape & 0xFFFFu, 256u);
  let w = blk.shape >> 16u;
  let head = read8(blk.src);
  let e = read8(blk.src + 1u);
  let b = min(head & 0x3Fu, 32u);
  let zz = (head & 0x80u) != 0u;
  var p = blk.src + 2u;
  var h = 0u;
  if (e > 0u) {
    h = min(read8(p), 32u);
    p += 1u;
  }
  let reference = read32(p) & lowMask(8u * w);
  p += w;
  let bitsAt = p;
  let m = (c + 3u) / 4u;
  let excAt = bitsAt + 16u * ((m * b + 31u) / 32u);
  let highAt = excAt + e;

  high[t] = 0u;
  workgroupBarrier();
  if (t < e) {
    let pos = read8(excAt + t);
    if (pos >= c || (t > 0u && pos <= read8(excAt + t - 1u))) {
      atomicAdd(&status[0], 1u);
    } else {
      let bit = t * h;
      let at = highAt + bit / 8u;
      let off = bit % 8u;
      var v = read32(at) >> off;
      if (off + h > 32u) { v |= read8(at + 4u) << (32u - off); }
      high[pos] = (v & lowMask(h)) << b; // b < 8 w <= 32 where there are exceptions
    }
  }
  workgroupBarrier();

  let epw = 4u / w;
  let words = (c * w + 3u) / 4u;
  if (t >= words) { return; }
  let mask = lowMask(b);
  var word = 0u;
  for (var k = 0u; k < epw; k += 1u) {
    let i = t * epw + k;
    if (i >= c) { break; }
    let lane = i % 4u;
    let bit = (i / 4u) * b;
    let off = bit % 32u;
    let at = bitsAt + 16u * (bit / 32u) + 4u * lane;
    var low = 0u;
    if (b > 0u) {
      low = read32(at) >> off;
      if (off + b > 32u) { low |= read32(at + 16u) << (32u - off); }
    }
    var v = (low & mask) + reference + high[i];
    if (zz) { v = (v >> 1u) ^ (0u - (v & 1u)); }
    word |= (v & lowMask(8u * w)) << (k * 8u * w);
  }
  dst[blk.dst + t] = word;
}
