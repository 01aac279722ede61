// Prefix scan (inclusive or exclusive) of u32 (also i32: two's complement wraps the same way)
// or f32, in one pass: chained scan with decoupled look-back and decoupled fallback
// (lookback.wgsl). Composed by ts/gpu/compose.ts: `alias T` (u32 | f32), `const WG` (256), a
// workgroup scan (wg-scan-*.wgsl) and lookback.wgsl are prepended; `/*IDS*/` and `/*LANES*/`
// become the entry point's builtins.
//
// Tile: WG invocations x VPT vec4 loads (16 elements each) = 4096 elements. Invocation t owns
// the 16 consecutive elements at tile * 4096 + 16 t: it sums them serially, a workgroup scan
// gives its offset in the tile, the look-back gives the tile's offset, then it writes its 16
// outputs as 4 vec4 stores. Buffers are padded to 16 bytes (a vec4); elements at or past n read
// as zero and outputs past n are not written beyond the padded vec4.

struct Params {
  n: u32,          // elements
  numTiles: u32,   // ceil(n / TILE)
  inclusive: u32,  // 1: inclusive, 0: exclusive
  pad: u32,
}

const VPT: u32 = 4u;                // vec4 per invocation
const TILE_VECS: u32 = WG * VPT;    // vec4 per tile
const TILE: u32 = TILE_VECS * 4u;   // elements per tile

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> src: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read_write> dst: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read_write> lb_spine: array<atomic<u32>>;
@group(0) @binding(4) var<storage, read_write> total: array<u32>; // [0]: carry + sum of all elements
// [0]: added to every output (the sum of the windows before this one, when an array beyond one
// storage binding is scanned window by window; 0 otherwise)
@group(0) @binding(5) var<storage, read> carryIn: array<u32>;

fn loadMasked(vi: u32) -> vec4<T> {
  let v = bitcast<vec4<T>>(src[vi]);
  let e = vi * 4u;
  return select(vec4<T>(T(0)), v, vec4<u32>(e, e + 1u, e + 2u, e + 3u) < vec4<u32>(params.n));
}

fn threadSum(base: u32) -> T {
  var s = T(0);
  for (var k = 0u; k < VPT; k += 1u) {
    let v = loadMasked(base + k);
    s += v.x; s += v.y; s += v.z; s += v.w;
  }
  return s;
}

fn tileReduce(tile: u32, tid: u32, lane: u32, sg: u32) -> T {
  var sum = T(0);
  _ = wgExclusiveScan(threadSum(tile * TILE_VECS + tid * VPT), tid, lane, sg, &sum);
  return sum;
}

@compute @workgroup_size(WG)
fn main(/*IDS*/) {
  /*LANES*/
  let tile = lbAcquireTile(tid);
  if (tile >= params.numTiles) { return; }
  let base = tile * TILE_VECS + tid * VPT;
  var v: array<vec4<T>, VPT>;
  var s = T(0);
  for (var k = 0u; k < VPT; k += 1u) {
    v[k] = loadMasked(base + k);
    s += v[k].x; s += v[k].y; s += v[k].z; s += v[k].w;
  }
  var tileSum = T(0);
  let threadPrefix = wgExclusiveScan(s, tid, lane, sg, &tileSum);
  let tilePrefix = lookback(tile, tileSum, tid, lane, sg);
  let carry = bitcast<T>(carryIn[0]);
  var run = carry + tilePrefix + threadPrefix;
  let nVecs = (params.n + 3u) / 4u;
  let inclusive = params.inclusive != 0u;
  for (var k = 0u; k < VPT; k += 1u) {
    let x = v[k];
    var o: vec4<T>;
    if (inclusive) {
      run += x.x; o.x = run; run += x.y; o.y = run; run += x.z; o.z = run; run += x.w; o.w = run;
    } else {
      o.x = run; run += x.x; o.y = run; run += x.y; o.z = run; run += x.z; o.w = run; run += x.w;
    }
    if (base + k < nVecs) { dst[base + k] = bitcast<vec4<u32>>(o); }
  }
  if (tile == params.numTiles - 1u && tid == 0u) { total[0] = bitcast<u32>(carry + tilePrefix + tileSum); }
}
