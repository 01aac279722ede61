// Run-length decode, after an exclusive scan of the lengths (scan.wgsl) has given each run's
// first output index (`offsets`) and the total.
//
// `checkOffsets`: flags a run whose end wraps past 2^32 (the lengths sum to 2^32 or more); the
//   first such run is always caught, since every offset before it is exact.
// `expand`: load-balanced over the OUTPUT: every invocation writes WPT u32 words (a multiple of 4) (EPW elements
//   each), finds the run holding its first element by binary search in `offsets` (the last run
//   r with offsets[r] <= i, which skips zero-length runs) and walks forward. A run longer than a
//   workgroup's tile is written by as many invocations as it spans; none serialises it. An output
//   beyond one storage binding is expanded in windows, dst bound at each window's first element
//   (params.base).
//
// Composed by ts/gpu/compose.ts with `alias T = u32`, EPW / BITS / EMASK per element type.

struct Params {
  n: u32,     // output elements (expand: the end of this window, exclusive)
  runs: u32,  // runs (offsets and values)
  base: u32,  // expand: the first output element of this window (dst is bound at it), a multiple of 4 x EPW
  pad1: u32,
}

// WPT (u32 words per invocation: 4, 8 or 16) is composed in (tuning.decodeWordsPerInvocation).
const EPT: u32 = WPT * EPW;    // elements per invocation

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> offsets: array<u32>;
@group(0) @binding(2) var<storage, read> values: array<u32>;
@group(0) @binding(3) var<storage, read_write> dst: array<vec4<u32>>;

fn valueAt(r: u32) -> u32 {
  return (values[r / EPW] >> ((r % EPW) * BITS)) & EMASK;
}

fn runEnd(r: u32) -> u32 {
  if (r + 1u < params.runs) { return offsets[r + 1u]; }
  return params.n;
}

@compute @workgroup_size(WG)
fn expand(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wid: vec3<u32>,
          @builtin(num_workgroups) nwg: vec3<u32>) {
  let g = (wid.y * nwg.x + wid.x) * WG + tid;
  let n = params.n;
  let first = params.base + g * EPT;
  if (first >= n) { return; }
  var lo = 0u;
  var hi = params.runs - 1u;
  while (lo < hi) {
    let mid = lo + (hi - lo + 1u) / 2u;
    if (offsets[mid] <= first) { lo = mid; } else { hi = mid - 1u; }
  }
  var r = lo;
  var next = runEnd(r);
  var v = valueAt(r);
  let nVecs = ((n - params.base + EPW - 1u) / EPW + 3u) / 4u;
  for (var q = 0u; q < WPT / 4u; q += 1u) {
    var o = vec4<u32>(0u);
    for (var c = 0u; c < 4u; c += 1u) {
      var word = 0u;
      for (var j = 0u; j < EPW; j += 1u) {
        let i = first + (q * 4u + c) * EPW + j;
        if (i < n) {
          while (i >= next) {
            r += 1u;
            next = runEnd(r);
            v = valueAt(r);
          }
          word |= v << (j * BITS);
        }
      }
      o[c] = word;
    }
    let vi = g * (WPT / 4u) + q;
    if (vi < nVecs) { dst[vi] = o; }
  }
}

@group(0) @binding(4) var<uniform> checkParams: Params;
@group(0) @binding(5) var<storage, read> checkOffsetsIn: array<u32>;
@group(0) @binding(6) var<storage, read> checkLengthsIn: array<u32>;
@group(0) @binding(7) var<storage, read_write> status: array<atomic<u32>>; // [0] total, [1] wrapped

@compute @workgroup_size(WG)
fn checkOffsets(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wid: vec3<u32>,
                @builtin(num_workgroups) nwg: vec3<u32>) {
  let r = (wid.y * nwg.x + wid.x) * WG + tid;
  if (r >= checkParams.runs) { return; }
  if (checkLengthsIn[r] > 0xFFFFFFFFu - checkOffsetsIn[r]) { atomicOr(&status[1], 1u); }
}
