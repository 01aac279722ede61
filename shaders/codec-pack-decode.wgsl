// Decode of pack streams (docs/format.md "Pack streams": PFOR in SIMD-BP128's vertical layout,
// Lemire and Boytsov 2015) in two dispatches:
//   walk    one invocation a stream walks its block headers (a block's size is known only from
//           its header, so the walk is a chain of dependent reads), with every check a reader
//           makes there (bit 6 set, b over 8 w, more exceptions than elements, h of 0 or b + h
//           over 8 w, exceptions with b = 8 w, a block past the stream's end, bytes after the
//           last block, D not a multiple of w), and lists each block in `walked`: where its header
//           starts in `src`, the word of `dst` its elements start at, its element count c and
//           the stream's element width w. A stream that fails is counted in status[2] (the
//           lowest such stream in status[3] as 0xFFFFFFFF - index) and its blocks from the
//           failure on are listed with c = 0 (decode writes nothing for them). On the host this
//           walk had cost 37-164 ns a block (10 ms of a 64 MiB f32 decode on the H200's host).
//   decode  one workgroup a block of 256 elements; per block:
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
  blocks: u32,   // decode: entries of `blocks`
  streams: u32,  // walk: entries of `streams`
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
// [0]: exception positions out of order or past their block (decode); [2]: streams the walk
// rejected; [3]: 0xFFFFFFFF - the lowest of them
@group(0) @binding(4) var<storage, read_write> status: array<atomic<u32>, 4>;

struct Stream {
  src: u32,         // byte offset of its first block in `src`
  end: u32,         // byte offset of its end (src + E)
  elements: u32,    // n = D / w
  width: u32,       // w; 0: D is not a multiple of w (the walk rejects the stream)
  dst: u32,         // word offset of its first element in `dst`
  firstBlock: u32,  // its first entry in `walked`
  pad0: u32,
  pad1: u32,
}

@group(0) @binding(5) var<storage, read> streams: array<Stream>;
@group(0) @binding(6) var<storage, read_write> walked: array<Block>;

var<workgroup> high: array<u32, 256>;

// srcWord, read8, read32: shaders/read-src.wgsl (appended)

fn lowMask(bits: u32) -> u32 {
  return select((1u << bits) - 1u, 0xFFFFFFFFu, bits >= 32u);
}

// The end of the block whose header starts at p (c elements of w bytes), or 0xFFFFFFFF when a
// header field is one a reader rejects.
fn blockEnd(p: u32, c: u32, w: u32) -> u32 {
  let head = read8(p);
  let e = read8(p + 1u);
  let b = head & 0x3Fu;
  let maxBits = 8u * w;
  if ((head & 0x40u) != 0u || b > maxBits || e > c) { return 0xFFFFFFFFu; }
  var q = p + 2u;
  var h = 0u;
  if (e > 0u) {
    h = read8(q);
    q += 1u;
    if (b >= maxBits || h == 0u || b + h > maxBits) { return 0xFFFFFFFFu; }
  }
  return q + w + 16u * ((((c + 3u) / 4u) * b + 31u) / 32u) + e + (e * h + 7u) / 8u;
}

@compute @workgroup_size(64)
fn walk(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = gid.y * nwg.x * 64u + gid.x;
  if (i >= params.streams) { return; }
  let st = streams[i];
  let w = max(st.width, 1u);
  let blocks = (st.elements + 255u) / 256u;
  var ok = st.width != 0u;
  var p = st.src;
  for (var k = 0u; k < blocks; k += 1u) {
    let c = min(256u, st.elements - k * 256u);
    var at = 0u;
    if (ok) {
      let q = blockEnd(p, c, w);
      // q < p: the header was rejected (0xFFFFFFFF) or the sum wrapped
      if (q > st.end || q < p) { ok = false; } else { at = p; p = q; }
    }
    walked[st.firstBlock + k] = Block(at, st.dst + k * 64u * w, select(0u, c, ok) | (w << 16u), 0u);
  }
  if (!ok || p != st.end) {
    atomicAdd(&status[2], 1u);
    atomicMax(&status[3], 0xFFFFFFFFu - i);
  }
}

@compute @workgroup_size(256)
fn decode(@builtin(local_invocation_index) t: u32, @builtin(workgroup_id) wid: vec3<u32>,
          @builtin(num_workgroups) nwg: vec3<u32>) {
  let index = wid.y * nwg.x + wid.x;
  if (index >= params.blocks) { return; } // uniform: the whole workgroup leaves
  let blk = blocks[index];
  let c = min(blk.shape & 0xFFFFu, 256u);
  if (c == 0u) { return; } // uniform: a block of a stream the walk rejected
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
