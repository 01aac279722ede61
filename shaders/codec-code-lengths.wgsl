// Huffman code lengths of byte histograms, on the GPU: the same lengths as the host's
// `codeLengths` (ts/codec/huffman.ts: two-queue Huffman on the leaves sorted by (count, symbol),
// van Leeuwen 1976; clamped to MAX_BITS, then made complete as Huff0 does), and the bits the
// histogram's symbols take with them. The compress from the device sizes every candidate stream
// of every chunk from these (ts/codec/gpu/encode.ts) instead of computing 100+ codes on the
// host (2 ms of a sparse volume's compress on the H200 host).
//
// One workgroup per histogram. Its 256 invocations rank the present symbols (an invocation
// counts the symbols before its own: O(256) reads of workgroup memory each, no sort network);
// invocation 0 then builds the tree alone (m - 1 merges of the two queues for m present
// symbols), the workgroup finds every node's depth by pointer jumping and the Kraft sum of the
// clamped lengths, invocation 0 runs the over-full clamp's loop (as on the host), the workgroup
// takes the under-full steps (each step's pick by an atomicMax), and the workgroup writes the lengths back
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
var<workgroup> weight: array<u32, 512>;    // leaves then internal nodes; later distances to ancestors, then depths
var<workgroup> parent: array<u32, 512>;    // later ancestors (pointer jumping)
var<workgroup> len: array<u32, 256>;       // the code length of symbols[i]
var<workgroup> lenOf: array<u32, 256>;     // the code length of symbol s
var<workgroup> present: atomic<u32>;
var<workgroup> presentCount: u32;
var<workgroup> bits: atomic<u32>;
var<workgroup> kraftSum: atomic<u32>;    // the clamped lengths' Kraft sum (of 2^MAX_BITS), summed by all
var<workgroup> kraftNow: u32;            // the Kraft sum (of 2^MAX_BITS) while the lengths are fixed
var<workgroup> longest: atomic<u32>;     // the under-full step's pick: len << 16 | (index + 1)
var<workgroup> longestKey: u32;          // the same, read with workgroupUniformLoad

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
  // the two-queue merge, one invocation (each step depends on the last): the queues' heads'
  // weights kept in registers, so a step reads one weight (the head that moved) where it had
  // read four
  if (tid == 0u) {
    let m = atomicLoad(&present);
    presentCount = m;
    if (m >= 2u) {
      // leaves 0..m-1 by weight, internal nodes m.. in the order made
      var leaf = 0u;
      var node = m;
      var next = m;
      var leafWeight = weight[0];
      var nodeWeight = 0u; // weight[node] while node < next
      while (next < 2u * m - 1u) {
        var pick = array<u32, 2>(0u, 0u);
        var sum = 0u;
        for (var k = 0u; k < 2u; k += 1u) {
          // the leaf on a tie (as the host's `codeLengths`)
          if (leaf < m && (node >= next || leafWeight <= nodeWeight)) {
            pick[k] = leaf;
            sum += leafWeight;
            leaf += 1u;
            if (leaf < m) { leafWeight = weight[leaf]; }
          } else {
            pick[k] = node;
            sum += nodeWeight;
            node += 1u;
            if (node < next) { nodeWeight = weight[node]; }
          }
        }
        weight[next] = sum;
        if (node == next) { nodeWeight = sum; }
        parent[pick[0]] = next;
        parent[pick[1]] = next;
        next += 1u;
      }
      parent[2u * m - 2u] = 2u * m - 2u; // the root is its own ancestor
    }
  }
  let m = workgroupUniformLoad(&presentCount);
  let full = 1u << MAX_BITS;
  if (m >= 2u) {
    // depths by pointer jumping, every node at once (a node's depth is its parent's + 1: a loop
    // from the root down had taken 2m - 2 dependent steps): node i's distance to its ancestor
    // parent[i] in `weight` (now unused), doubled each round; ceil(log2(2m - 1)) rounds
    let nodes = 2u * m - 1u;
    for (var i = tid; i < nodes; i += WG) { weight[i] = select(1u, 0u, i == nodes - 1u); }
    workgroupBarrier();
    for (var span = 1u; span < nodes; span *= 2u) {
      let i0 = tid;
      let i1 = tid + WG;
      var d0 = 0u;
      var a0 = 0u;
      var d1 = 0u;
      var a1 = 0u;
      if (i0 < nodes) { a0 = parent[i0]; d0 = weight[i0] + weight[a0]; a0 = parent[a0]; }
      if (i1 < nodes) { a1 = parent[i1]; d1 = weight[i1] + weight[a1]; a1 = parent[a1]; }
      workgroupBarrier();
      if (i0 < nodes) { weight[i0] = d0; parent[i0] = a0; }
      if (i1 < nodes) { weight[i1] = d1; parent[i1] = a1; }
      workgroupBarrier();
    }
    // the leaves' lengths, clamped, and their Kraft sum
    if (tid == 0u) { atomicStore(&kraftSum, 0u); }
    workgroupBarrier();
    if (tid < m) {
      len[tid] = min(weight[tid], MAX_BITS);
      atomicAdd(&kraftSum, full >> len[tid]);
    }
    workgroupBarrier();
    if (tid == 0u) {
      var kraft = atomicLoad(&kraftSum);
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
  // under-full: shorten the longest codes, most frequent first (the host's loop: the highest
  // index among the longest codes over 1 bit, while its share fits the deficit), a step at a
  // time, each step's pick found by the whole workgroup (one atomicMax of len << 16 | index + 1)
  // where invocation 0 alone had scanned the m codes each step (up to 40 steps a histogram of
  // long-tailed counts; the whole compress from the device measured 0.81-0.93 of its time
  // before on an H200 for the retina image and the label volume, unchanged for the others)
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
