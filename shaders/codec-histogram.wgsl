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
// binds the source at an aligned offset (`src` offsets are relative to it). A range's place and
// length (`spans`) may have been written by an earlier kernel of the submission: its tiles are
// then an upper bound, and tiles past its end count nothing.
//
// With `runWidth` (1, 2 or 4; 0: none) the tiles also count the range's repeats: its elements of
// that many bytes equal to the element before them in the range (elements start at the range's
// start, a multiple of the width, as its length is), added to `repeats[range]` (cleared first):
// a range of n elements has n - repeats maximal runs, which the rle stage's chooser weighs
// before it builds them.
// Composed by ts/gpu/compose.ts (`const WG` = 256 and `const TILE_BYTES` prepended).

struct Params {
  tiles: u32,     // tiles over all ranges of this dispatch (workgroups that work)
  ranges: u32,    // entries of `ranges`
  runWidth: u32,  // element bytes of the repeats counted (1, 2, 4), 0: none
  pad1: u32,
}

struct Range {
  firstTile: u32,  // global index of the range's first tile (ranges in ascending order)
  hist: u32,       // first word of the range's 256 counts in `hist`
}

struct Span {
  src: u32,        // byte offset of the range in the bound source
  bytes: u32,      // byte length
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> ranges: array<Range>;
@group(0) @binding(2) var<storage, read> src: array<u32>;
@group(0) @binding(3) var<storage, read_write> hist: array<atomic<u32>>;
@group(0) @binding(4) var<storage, read_write> repeats: array<atomic<u32>>;
@group(0) @binding(5) var<storage, read> spans: array<Span>;

const_assert WG == 256u; // one counter an invocation

var<workgroup> local: array<atomic<u32>, 256>;
var<workgroup> repeated: atomic<u32>;

// Repeats among the elements of `runWidth` bytes that start in word x (at byte p, the word
// before it `before`) and in [a, b), not counting the range's first element (at byte `start`).
fn repeatsInWord(x: u32, before: u32, p: u32, a: u32, b: u32, start: u32) -> u32 {
  let W = params.runWidth;
  let mask = select(0xFFFFFFFFu, (1u << (8u * W)) - 1u, W < 4u);
  var n = 0u;
  for (var q = 0u; q < 4u; q += W) {
    let e = p + q;
    if (e >= a && e + W <= b && e >= start + W) {
      // (shift amounts are taken mod 32: the unused arm of a select may shift by more)
      let prev = select((x >> (8u * (q - W))) & mask, (before >> (32u - 8u * W)) & mask, q == 0u);
      n += select(0u, 1u, ((x >> (8u * q)) & mask) == prev);
    }
  }
  return n;
}

@compute @workgroup_size(WG)
fn histogram(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wid: vec3<u32>,
             @builtin(num_workgroups) nwg: vec3<u32>) {
  let t = wid.y * nwg.x + wid.x;
  if (t >= params.tiles) { return; } // uniform: the whole workgroup leaves
  atomicStore(&local[tid], 0u);
  if (tid == 0u) { atomicStore(&repeated, 0u); }
  // the last range whose first tile is at or before t
  var lo = 0u;
  var hi = params.ranges - 1u;
  while (lo < hi) {
    let mid = lo + (hi - lo + 1u) / 2u;
    if (ranges[mid].firstTile <= t) { lo = mid; } else { hi = mid - 1u; }
  }
  let r = ranges[lo];
  let span = spans[lo];
  // the tile's bytes [a, b) of `src` (b <= a: a tile past the range's end)
  let a = span.src + (t - r.firstTile) * TILE_BYTES;
  let b = span.src + min(span.bytes, (t - r.firstTile + 1u) * TILE_BYTES);
  workgroupBarrier();
  let end = (b + 3u) >> 2u;
  var mine = 0u;
  for (var w = (a >> 2u) + tid; w < end; w += WG) {
    let x = src[w];
    let p = w * 4u;
    if (params.runWidth != 0u) { mine += repeatsInWord(x, src[max(w, 1u) - 1u], p, a, b, span.src); }
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
  if (mine != 0u) { atomicAdd(&repeated, mine); }
  workgroupBarrier();
  let c = atomicLoad(&local[tid]);
  if (c != 0u) { atomicAdd(&hist[r.hist + tid], c); }
  if (tid == 0u && params.runWidth != 0u) {
    let n = atomicLoad(&repeated);
    if (n != 0u) { atomicAdd(&repeats[r.hist / 256u], n); }
  }
}
