// Huffman code lengths of byte histograms, on the GPU: the same lengths as the host's
// `codeLengths` (ts/codec/huffman.ts: two-queue Huffman on the leaves sorted by (count, symbol),
// van Leeuwen 1976; clamped to MAX_BITS, then made complete as Huff0 does), and the bits the
// histogram's symbols take with them. The compress from the device sizes every candidate stream
// of every chunk from these (ts/codec/gpu/encode.ts) instead of computing 100+ codes on the
// host (2 ms of a sparse volume's compress on the H200 host).
//
// One workgroup per histogram. Its 256 invocations rank the present symbols (an invocation
// counts the symbols before its own: O(256) reads of workgroup memory each, no sort network);
// invocation 0 then builds the tree and fixes the lengths alone (2m - 1 steps for m present
// symbols, plus the over-full clamp's loop, as on the host), the workgroup takes the under-full
// steps (each step's pick by an atomicMax), and the workgroup writes the lengths back
// packed (four a word, symbol s in byte s % 4 of word s / 4: a little-endian Uint8Array on the
// host) and sums the coded bits.
//
// `words` holds, for `params.hists` histograms h: counts at [256 h, 256 h + 256) (written by
// codec-histogram.wgsl), lengths at params.lengthsAt + 64 h (64 words), coded bits at
// params.bitsAt + h. A histogram of fewer than two present symbols gets lengths 0 and 0 bits.
// Ranges are below 2^28 bytes (ts/codec/gpu/histogram.ts checks), so every tree weight (at most the
// range's length) and the coded bits (at most 11 x the length) fit in u32.
// Composed by ts/gpu/compose.ts (`const WG` = 256 prepended).

struct Params {
  hists: u32,      // histograms (workgroups that work)
  lengthsAt: u32,  // first word of the packed lengths
  bitsAt: u32,     // first word of the coded bits
  pad: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read_write> words: array<u32>;

const_assert WG == 256u; // one symbol an invocation
const MAX_BITS: u32 = 11u;
const NONE: u32 = 0xFFFFFFFFu;

var<workgroup> counts: array<u32, 256>;
var<workgroup> symbols: array<u32, 256>;   // present symbols by (count, symbol)
var<workgroup> weight: array<u32, 512>;    // leaves then internal nodes; later their depths
var<workgroup> parent: array<u32, 512>;
var<workgroup> len: array<u32, 256>;       // the code length of symbols[i]
var<workgroup> lenOf: array<u32, 256>;     // the code length of symbol s
var<workgroup> present: atomic<u32>;
var<workgroup> presentCount: u32;
var<workgroup> bits: atomic<u32>;
var<workgroup> kraftNow: u32;            // the Kraft sum (of 2^MAX_BITS) while the lengths are fixed
var<workgroup> longest: atomic<u32>;     // the under-full step's pick: len << 16 | (index + 1)
var<workgroup> longestKey: u32;          // the same, read with workgroupUniformLoad

/** The next of the two queues to take from: the leaf on a tie (as the host's `codeLengths`). */
fn lighter(leaf: u32, node: u32, next: u32, m: u32) -> bool {
  return leaf < m && (node >= next || weight[leaf] <= weight[node]);
}

@compute @workgroup_size(WG)
fn codeLengths(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wid: vec3<u32>,
               @builtin(num_workgroups) nwg: vec3<u32>) {
  let h = wid.y * nwg.x + wid.x;
  if (h >= params.hists) { return; } // uniform: the whole workgroup leaves
  let c = words[256u * h + tid];
  counts[tid] = c;
  lenOf[tid] = 0u;
  if (tid == 0u) {
    atomicStore(&present, 0u);
    atomicStore(&bits, 0u);
  }
  workgroupBarrier();
  if (c > 0u) {
    atomicAdd(&present, 1u);
    var rank = 0u;
    for (var j = 0u; j < 256u; j += 1u) {
      let d = counts[j];
      if (d > 0u && (d < c || (d == c && j < tid))) { rank += 1u; }
    }
    symbols[rank] = tid;
    weight[rank] = c;
  }
  workgroupBarrier();
  if (tid == 0u) {
    let m = atomicLoad(&present);
    presentCount = m;
    if (m >= 2u) {
      // two-queue Huffman: leaves 0..m-1 by weight, internal nodes m.. in the order made
      var leaf = 0u;
      var node = m;
      var next = m;
      while (next < 2u * m - 1u) {
        var a = node;
        if (lighter(leaf, node, next, m)) { a = leaf; leaf += 1u; } else { node += 1u; }
        var b = node;
        if (lighter(leaf, node, next, m)) { b = leaf; leaf += 1u; } else { node += 1u; }
        weight[next] = weight[a] + weight[b];
        parent[a] = next;
        parent[b] = next;
        next += 1u;
      }
      // depths, root first (a parent is made after its children): into `weight`, now unused
      weight[2u * m - 2u] = 0u;
      for (var i = i32(2u * m) - 3; i >= 0; i -= 1) { weight[i] = weight[parent[i]] + 1u; }
      let full = 1u << MAX_BITS;
      var kraft = 0u;
      for (var i = 0u; i < m; i += 1u) {
        len[i] = min(weight[i], MAX_BITS);
        kraft += full >> len[i];
      }
      // over-full after clamping: lengthen the rarest codes that can still grow
      while (kraft > full) {
        for (var i = 0u; i < m && kraft > full; i += 1u) {
          if (len[i] < MAX_BITS) {
            len[i] += 1u;
            kraft -= full >> len[i];
          }
        }
      }
      kraftNow = kraft;
    }
  }
  let m = workgroupUniformLoad(&presentCount);
  // under-full: shorten the longest codes, most frequent first (the host's loop: the highest
  // index among the longest codes over 1 bit, while its share fits the deficit), a step at a
  // time, each step's pick found by the whole workgroup (one atomicMax of len << 16 | index + 1)
  // where invocation 0 alone had scanned the m codes each step (up to 40 steps a histogram of
  // long-tailed counts; the whole compress from the device measured 0.81-0.93 of its time
  // before on an H200 for the retina image and the label volume, unchanged for the others)
  let full = 1u << MAX_BITS;
  if (m >= 2u) {
    loop {
      let kraft = workgroupUniformLoad(&kraftNow);
      if (kraft >= full) { break; }
      if (tid == 0u) { atomicStore(&longest, 0u); }
      workgroupBarrier();
      if (tid < m && len[tid] > 1u) { atomicMax(&longest, (len[tid] << 16u) | (tid + 1u)); }
      workgroupBarrier();
      if (tid == 0u) { longestKey = atomicLoad(&longest); }
      let key = workgroupUniformLoad(&longestKey);
      if (key == 0u) { break; }
      let gain = full >> (key >> 16u);
      if (kraft + gain > full) { break; } // cannot happen for power-of-two shares; guards the loop
      if (tid == 0u) {
        len[(key & 0xFFFFu) - 1u] = (key >> 16u) - 1u;
        kraftNow = kraft + gain;
      }
    }
  }
  if (m >= 2u && tid < m) { lenOf[symbols[tid]] = len[tid]; }
  workgroupBarrier();
  atomicAdd(&bits, c * lenOf[tid]);
  workgroupBarrier();
  if (tid < 64u) {
    let s = 4u * tid;
    words[params.lengthsAt + 64u * h + tid] = lenOf[s] | (lenOf[s + 1u] << 8u) | (lenOf[s + 2u] << 16u) | (lenOf[s + 3u] << 24u);
  }
  if (tid == 0u) { words[params.bitsAt + h] = atomicLoad(&bits); }
}
