// Prefix scan (inclusive or exclusive) of u32 (also i32: two's complement wraps the same way)
// or f32, in one pass: chained scan with decoupled look-back and decoupled fallback
// (lookback.wgsl). Composed by ts/gpu/compose.ts: `alias T` (u32 | f32), `const WG` (256, 512 or
// 1024: GpuTuning.scanWorkgroupSize), a workgroup scan (wg-scan-*.wgsl) and lookback.wgsl are
// prepended; `/*IDS*/` and `/*LANES*/` become the entry point's builtins.
//
// Tile: WG invocations x VPT vec4 (VPT composed: 2, 4 or 8; 1024 x 4 vec4 = 16384 elements by
// default). The tile's groups (subgroups; without subgroups the whole workgroup, sg = WG) each
// own sg * VPT consecutive vec4, and load k of lane l is the group's vec4 k * sg + l, so every
// load and store of a subgroup covers consecutive addresses (a layout of 16 consecutive
// elements per invocation spread each load instruction over 4x the cache lines: 1.16 ms of GPU
// time at 2^28 on the H200 against 1.03). Per load k: a group scan of the lanes' vec4 sums, its
// total carried to load k + 1; a workgroup scan of the groups' totals gives each group's offset
// in the tile, the look-back the tile's offset. The tile's sum (tileAggregate) is published
// before those scans and the look-back walks after them: at 1024 invocations the SM holds one
// workgroup, which the walk's round trips to L2 stall; its predecessors are then mostly done
// (on the H200: 1.02 windows read a tile against 1.8, no spins against 0.3; a 2^28 pass 0.86 ms
// against 0.94; scan-phases.mjs, in git history). Buffers are padded to 16 bytes (a vec4);
// elements at or past n read as zero and outputs past n are not written beyond the padded vec4.

struct Params {
  n: u32,          // elements
  numTiles: u32,   // ceil(n / TILE)
  inclusive: u32,  // 1: inclusive, 0: exclusive
  pad: u32,
}

const VPT: u32 = SCAN_VPT;          // vec4 per invocation
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

/** Index of this invocation's first vec4 in `tile` (its later ones follow sg apart). */
fn firstVec(tile: u32, tid: u32, lane: u32) -> u32 {
  return tile * TILE_VECS + (tid - lane) * VPT + lane;
}

/** Loads this invocation's VPT vec4 of `tile` into `v` (all in flight at once). */
fn loadTile(tile: u32, tid: u32, lane: u32, sg: u32, v: ptr<function, array<vec4<T>, VPT>>) {
  let base = firstVec(tile, tid, lane);
  for (var k = 0u; k < VPT; k += 1u) { (*v)[k] = loadMasked(base + k * sg); }
}

/**
 * The sum of the tile loaded in `v`: main publishes it before its scans, the look-back's
 * fallback (tileReduce) computes it the same way, so an f32 tile's sum is the same either way.
 */
fn tileAggregate(tid: u32, lane: u32, sg: u32, v: ptr<function, array<vec4<T>, VPT>>) -> T {
  var mine = T(0);
  for (var k = 0u; k < VPT; k += 1u) { let x = (*v)[k]; mine += (x.x + x.y) + (x.z + x.w); }
  var sum = T(0);
  _ = wgExclusiveScan(mine, tid, lane, sg, &sum);
  return sum;
}

/**
 * The scan of the tile loaded in `v`: `prefix[k]` gets the sum of the tile's elements before
 * v[k]. Per load k: a group scan of the lanes' vec4 sums, its total carried to load k + 1; then
 * a workgroup scan of the groups' totals.
 */
fn tileScan(tid: u32, lane: u32, sg: u32, v: ptr<function, array<vec4<T>, VPT>>, prefix: ptr<function, array<T, VPT>>) {
  var run = T(0); // the group's sum before load k
  for (var k = 0u; k < VPT; k += 1u) {
    let x = (*v)[k];
    var loadTotal = T(0);
    let ex = groupExclusiveScan(x.x + x.y + x.z + x.w, tid, lane, sg, &loadTotal);
    (*prefix)[k] = run + ex;
    run += loadTotal;
  }
  var tileSum = T(0);
  // the group's total on its last lane only: every lane of group g gets the totals of groups < g
  let groupPrefix = wgExclusiveScan(select(T(0), run, lane == sg - 1u), tid, lane, sg, &tileSum);
  for (var k = 0u; k < VPT; k += 1u) { (*prefix)[k] += groupPrefix; }
}

fn tileReduce(tile: u32, tid: u32, lane: u32, sg: u32) -> T {
  var v: array<vec4<T>, VPT>;
  loadTile(tile, tid, lane, sg, &v);
  return tileAggregate(tid, lane, sg, &v);
}

@compute @workgroup_size(WG)
fn main(/*IDS*/) {
  /*LANES*/
  let tile = lbAcquireTile(tid);
  if (tile >= params.numTiles) { return; }
  var v: array<vec4<T>, VPT>;
  loadTile(tile, tid, lane, sg, &v);
  // the tile's sum goes out before its scan: the look-back's round trips to L2, which stall this
  // workgroup (the only one on its SM at 1024 invocations), then find more predecessors done
  let tileSum = tileAggregate(tid, lane, sg, &v);
  lbPublishAggregate(tile, tileSum, tid);
  var prefix: array<T, VPT>;
  tileScan(tid, lane, sg, &v, &prefix);
  let tilePrefix = lookbackPublished(tile, tileSum, tid, lane, sg);
  let carry = bitcast<T>(carryIn[0]);
  let base = firstVec(tile, tid, lane);
  let nVecs = (params.n + 3u) / 4u;
  let inclusive = params.inclusive != 0u;
  for (var k = 0u; k < VPT; k += 1u) {
    let x = v[k];
    var run = carry + tilePrefix + prefix[k];
    var o: vec4<T>;
    if (inclusive) {
      run += x.x; o.x = run; run += x.y; o.y = run; run += x.z; o.z = run; run += x.w; o.w = run;
    } else {
      o.x = run; run += x.x; o.y = run; run += x.y; o.z = run; run += x.z; o.w = run;
    }
    let vi = base + k * sg;
    if (vi < nVecs) { dst[vi] = bitcast<vec4<u32>>(o); }
  }
  if (tile == params.numTiles - 1u && tid == 0u) { total[0] = bitcast<u32>(carry + tilePrefix + tileSum); }
}
