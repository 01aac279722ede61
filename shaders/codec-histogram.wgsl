// Byte histograms (256 u32 counts) of byte ranges of one bound buffer, for the codec's chooser
// and for Huffman code lengths (docs/format.md, "The chooser" and "Huffman streams"). One
// workgroup per tile of TILE_BYTES bytes of a range: the workgroup counts its tile into a
// histogram in workgroup memory (atomicAdd; a word of four equal bytes is one add of 4, which
// keeps long runs of one byte from serialising on one counter), then adds its nonzero counts to
// the range's histogram in `hist` (atomicAdd: the tiles of a range share it). Privatised
// histograms as in Podlozhnyuk, "Histogram calculation in CUDA" (NVIDIA, 2007) and Gómez-Luna
// et al. 2013, with hardware shared-memory atomics in place of their tagged counters.
//
// Ranges start at any byte: a tile reads the words that cover its bytes (coalesced, one word an
// invocation a step) and masks the bytes outside it. ts/codec/gpu/histogram.ts clears `hist` first and
// binds the source at an aligned offset (`src` offsets are relative to it).
// Composed by ts/gpu/compose.ts (`const WG` = 256 and `const TILE_BYTES` prepended).

struct Params {
  tiles: u32,   // tiles over all ranges of this dispatch (workgroups that work)
  ranges: u32,  // entries of `ranges`
  pad0: u32,
  pad1: u32,
}

struct Range {
  src: u32,        // byte offset of the range in the bound source
  bytes: u32,      // byte length (> 0)
  firstTile: u32,  // global index of the range's first tile (ranges in ascending order)
  hist: u32,       // first word of the range's 256 counts in `hist`
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> ranges: array<Range>;
@group(0) @binding(2) var<storage, read> src: array<u32>;
@group(0) @binding(3) var<storage, read_write> hist: array<atomic<u32>>;

const_assert WG == 256u; // one counter an invocation

var<workgroup> local: array<atomic<u32>, 256>;

@compute @workgroup_size(WG)
fn histogram(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wid: vec3<u32>,
             @builtin(num_workgroups) nwg: vec3<u32>) {
  let t = wid.y * nwg.x + wid.x;
  if (t >= params.tiles) { return; } // uniform: the whole workgroup leaves
  atomicStore(&local[tid], 0u);
  // the last range whose first tile is at or before t
  var lo = 0u;
  var hi = params.ranges - 1u;
  while (lo < hi) {
    let mid = lo + (hi - lo + 1u) / 2u;
    if (ranges[mid].firstTile <= t) { lo = mid; } else { hi = mid - 1u; }
  }
  let r = ranges[lo];
  let a = r.src + (t - r.firstTile) * TILE_BYTES;     // the tile's bytes [a, b) of `src`
  let b = r.src + min(r.bytes, (t - r.firstTile + 1u) * TILE_BYTES);
  workgroupBarrier();
  let end = (b + 3u) >> 2u;
  for (var w = (a >> 2u) + tid; w < end; w += WG) {
    let x = src[w];
    let p = w * 4u;
    if (p >= a && p + 4u <= b) {
      if (x == (x & 0xFFu) * 0x01010101u) {
        atomicAdd(&local[x & 0xFFu], 4u);
      } else {
        atomicAdd(&local[x & 0xFFu], 1u);
        atomicAdd(&local[(x >> 8u) & 0xFFu], 1u);
        atomicAdd(&local[(x >> 16u) & 0xFFu], 1u);
        atomicAdd(&local[x >> 24u], 1u);
      }
    } else {
      for (var k = 0u; k < 4u; k += 1u) {
        if (p + k >= a && p + k < b) { atomicAdd(&local[(x >> (k * 8u)) & 0xFFu], 1u); }
      }
    }
  }
  workgroupBarrier();
  let c = atomicLoad(&local[tid]);
  if (c != 0u) { atomicAdd(&hist[r.hist + tid], c); }
}
