// Decode tables of canonical Huffman codes (docs/format.md, "Huffman streams"), built on the GPU
// from the streams' code lengths, so that the host sends 256 bytes a stream instead of the
// table's 8 KiB (and does not build it). One workgroup a table, one invocation a symbol:
//   1. code lengths to workgroup memory, the count of codes of each length (atomics);
//   2. each present symbol's canonical code: the first code of its length (deflate's rule:
//      code = (code + count[bits - 1]) << 1 for bits = 1..L) plus the number of symbols below
//      it of the same length;
//   3. its entries: the code bit-reversed (first bit lowest) = r, entries r + k 2^L for k <
//      2^(11 - L), each symbol | L << 8 (the layout of buildHuffmanDecodeTable in
//      ts/codec/gpu/stages.ts, which the decode kernels read).
// The lengths were checked on the host (at most 11 bits, at least two symbols, a complete code:
// the Kraft sum is exactly 1), so the entries cover the table exactly once.

struct Params {
  tables: u32,
  pad0: u32,
  pad1: u32,
  pad2: u32,
}

const TABLE_BITS: u32 = 11u;
const TABLE_ENTRIES: u32 = 2048u;

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> lengths: array<u32>;      // 64 words (256 lengths, a byte each) a table
@group(0) @binding(2) var<storage, read_write> tables: array<u32>; // 2048 entries a table

var<workgroup> lens: array<u32, 256>;
var<workgroup> counts: array<atomic<u32>, 16>;

@compute @workgroup_size(256)
fn build(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wid: vec3<u32>,
         @builtin(num_workgroups) nwg: vec3<u32>) {
  let t = wid.y * nwg.x + wid.x;
  if (t >= params.tables) { return; } // uniform: the whole workgroup leaves
  if (tid < 16u) { atomicStore(&counts[tid], 0u); }
  let len = min((lengths[t * 64u + tid / 4u] >> ((tid % 4u) * 8u)) & 0xFFu, 15u);
  lens[tid] = len;
  workgroupBarrier();
  if (len > 0u) { atomicAdd(&counts[len], 1u); }
  workgroupBarrier();
  if (len == 0u || len > TABLE_BITS) { return; }
  var code = 0u;
  for (var b = 1u; b <= len; b += 1u) { code = (code + atomicLoad(&counts[b - 1u])) << 1u; }
  for (var s = 0u; s < tid; s += 1u) {
    if (lens[s] == len) { code += 1u; }
  }
  let reversed = reverseBits(code) >> (32u - len);
  let entry = tid | (len << 8u);
  let base = t * TABLE_ENTRIES;
  for (var w = reversed; w < TABLE_ENTRIES; w += 1u << len) { tables[base + w] = entry; }
}
