// LSD radix sort, 8-bit digits, reduce-then-scan per pass (Gruber 2013 ch. "radix sort": per-
// block histograms, a scan of them, a stable scatter; digit ranking as in OneSweep's warp-level
// multi-split, Adinets and Merrill 2022):
//   upsweep:   each tile counts its keys per digit -> hist[digit * numTiles + tile]
//   (scan.wgsl: exclusive scan of hist, digit-major, = each (digit, tile)'s first output index)
//   downsweep: each tile ranks its keys per digit, stably, and scatters keys (and u32 values).
// Keys are mapped to u32 whose unsigned order is the key order (i32: flip the sign bit; f32:
// IEEE totalOrder, negative -> all bits flipped, positive -> sign bit set) when pass 0 loads
// them, and mapped back when the last pass stores them.
//
// Composed by ts/gpu/radix-sort.ts: SORT_WG (invocations), ITEMS (keys per invocation), the
// ranking piece (`rankKey`, radix-rank-subgroup.wgsl or radix-rank-shared.wgsl) and, for
// key-only sorts, every line marked `// values` removed.
//
// Tile layout: the workgroup's "groups" (subgroups, or the whole workgroup without subgroups)
// each own a contiguous region of GROUP * ITEMS keys; item k of lane l is key
// region + k * GROUP + l (coalesced loads; (k, l) order = key order, so ranks are stable).

struct Params {
  n: u32,          // keys
  numTiles: u32,   // ceil(n / TILE)
  shift: u32,      // digit = (key >> shift) & 0xFF
  flags: u32,      // bit 0: map keys to sortable on load; bit 1: map back on store; bits 8..9: 0 u32, 1 i32, 2 f32
}

const TILE: u32 = SORT_WG * ITEMS;
const RADIX: u32 = 256u;

fn toSortable(k: u32, kind: u32) -> u32 {
  if (kind == 1u) { return k ^ 0x80000000u; }
  if (kind == 2u) { return k ^ select(0x80000000u, 0xFFFFFFFFu, (k & 0x80000000u) != 0u); }
  return k;
}

fn fromSortable(k: u32, kind: u32) -> u32 {
  if (kind == 1u) { return k ^ 0x80000000u; }
  if (kind == 2u) { return k ^ select(0xFFFFFFFFu, 0x80000000u, (k & 0x80000000u) != 0u); }
  return k;
}

fn linearTile(wid: vec3<u32>, nwg: vec3<u32>) -> u32 {
  return wid.y * nwg.x + wid.x;
}

// ---- upsweep ----------------------------------------------------------------------------------

@group(0) @binding(0) var<uniform> upParams: Params;
@group(0) @binding(1) var<storage, read> upKeys: array<u32>;
@group(0) @binding(2) var<storage, read_write> hist: array<u32>;

var<workgroup> upCount: array<atomic<u32>, RADIX>;

@compute @workgroup_size(SORT_WG)
fn upsweep(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wid: vec3<u32>,
           @builtin(num_workgroups) nwg: vec3<u32>) {
  let tile = linearTile(wid, nwg);
  if (tile >= upParams.numTiles) { return; }
  for (var d = tid; d < RADIX; d += SORT_WG) { atomicStore(&upCount[d], 0u); }
  workgroupBarrier();
  let kind = (upParams.flags >> 8u) & 3u;
  let mapIn = (upParams.flags & 1u) != 0u;
  for (var k = 0u; k < ITEMS; k += 1u) {
    let i = tile * TILE + k * SORT_WG + tid;
    if (i < upParams.n) {
      var key = upKeys[i];
      if (mapIn) { key = toSortable(key, kind); }
      atomicAdd(&upCount[(key >> upParams.shift) & 0xFFu], 1u);
    }
  }
  workgroupBarrier();
  for (var d = tid; d < RADIX; d += SORT_WG) { hist[d * upParams.numTiles + tile] = atomicLoad(&upCount[d]); }
}

// ---- downsweep --------------------------------------------------------------------------------
// Ranks the tile's keys (rankKey), orders them by digit in shared memory (`stage`), then writes
// them out in that order: consecutive invocations write consecutive addresses of a digit's
// output segment, so the scatter is coalesced per digit segment (OneSweep's staging). Values
// follow through the same stage in a second round.

@group(0) @binding(3) var<uniform> params: Params;
@group(0) @binding(4) var<storage, read> keysIn: array<u32>;
@group(0) @binding(5) var<storage, read> offsets: array<u32>;   // scanned hist
@group(0) @binding(6) var<storage, read_write> keysOut: array<u32>;
@group(0) @binding(7) var<storage, read> valuesIn: array<u32>;         // values
@group(0) @binding(8) var<storage, read_write> valuesOut: array<u32>;  // values

var<workgroup> digitBase: array<u32, RADIX>;   // first output index of (digit, this tile)
var<workgroup> tileStart: array<u32, RADIX>;   // first stage index of each digit in this tile
var<workgroup> digitPart: array<u32, 16>;
var<workgroup> stage: array<u32, TILE>;

/** tileStart (per-digit counts) -> its exclusive scan. Raking: 16 invocations x 16 digits. */
fn scanDigits(tid: u32) {
  if (tid < 16u) {
    var s = 0u;
    for (var i = 0u; i < 16u; i += 1u) {
      let v = tileStart[tid * 16u + i];
      tileStart[tid * 16u + i] = s;
      s += v;
    }
    digitPart[tid] = s;
  }
  workgroupBarrier();
  if (tid == 0u) {
    var s = 0u;
    for (var i = 0u; i < 16u; i += 1u) {
      let v = digitPart[i];
      digitPart[i] = s;
      s += v;
    }
  }
  workgroupBarrier();
  for (var d = tid; d < RADIX; d += SORT_WG) { tileStart[d] += digitPart[d / 16u]; }
}

@compute @workgroup_size(SORT_WG)
fn downsweep(/*IDS*/) {
  /*LANES*/
  let tile = linearTile(wid, nwg);
  if (tile >= params.numTiles) { return; }
  let group = tid / sg;
  let groups = SORT_WG / sg;
  for (var c = tid; c < RANK_COUNTERS; c += SORT_WG) { atomicStore(&rankCount[c], 0u); }
  for (var d = tid; d < RADIX; d += SORT_WG) { digitBase[d] = offsets[d * params.numTiles + tile]; }
  workgroupBarrier();
  let kind = (params.flags >> 8u) & 3u;
  let mapIn = (params.flags & 1u) != 0u;
  let mapOut = (params.flags & 2u) != 0u;
  let region = tile * TILE + group * sg * ITEMS;
  // Load every key first (independent loads in flight together), then rank.
  var keys: array<u32, ITEMS>;
  var ranks: array<u32, ITEMS>;
  var vals: array<u32, ITEMS>; // values
  for (var k = 0u; k < ITEMS; k += 1u) {
    let i = region + k * sg + lane;
    if (i < params.n) {
      keys[k] = keysIn[i];
      vals[k] = valuesIn[i]; // values
    }
  }
  for (var k = 0u; k < ITEMS; k += 1u) {
    let valid = region + k * sg + lane < params.n;
    var key = 0u;
    if (valid) {
      key = keys[k];
      if (mapIn) { key = toSortable(key, kind); }
    }
    keys[k] = key;
    ranks[k] = rankKey((key >> params.shift) & 0xFFu, valid, tid, lane, sg);
  }
  workgroupBarrier();
  // rankCount[g * 256 + d]: group g's count of digit d -> exclusive prefix over groups;
  // tileStart[d]: the tile's count of digit d, then (scanDigits) its exclusive prefix over digits
  for (var d = tid; d < RADIX; d += SORT_WG) {
    var sum = 0u;
    for (var g = 0u; g < groups; g += 1u) {
      let c = atomicLoad(&rankCount[g * RADIX + d]);
      atomicStore(&rankCount[g * RADIX + d], sum);
      sum += c;
    }
    tileStart[d] = sum;
  }
  workgroupBarrier();
  scanDigits(tid);
  workgroupBarrier();
  for (var k = 0u; k < ITEMS; k += 1u) {
    let i = region + k * sg + lane;
    if (i < params.n) {
      let d = (keys[k] >> params.shift) & 0xFFu;
      let local = tileStart[d] + atomicLoad(&rankCount[group * RADIX + d]) + ranks[k];
      stage[local] = keys[k];
      ranks[k] = local;
    }
  }
  workgroupBarrier();
  let tileN = min(TILE, params.n - tile * TILE);
  var pos: array<u32, ITEMS>; // values
  for (var j = 0u; j < ITEMS; j += 1u) {
    let i = j * SORT_WG + tid;
    if (i < tileN) {
      let key = stage[i];
      let d = (key >> params.shift) & 0xFFu;
      let p = digitBase[d] + i - tileStart[d];
      keysOut[p] = select(key, fromSortable(key, kind), mapOut);
      pos[j] = p; // values
    }
  }
  workgroupBarrier(); // values
  for (var k = 0u; k < ITEMS; k += 1u) { // values
    if (region + k * sg + lane < params.n) { stage[ranks[k]] = vals[k]; } // values
  } // values
  workgroupBarrier(); // values
  for (var j = 0u; j < ITEMS; j += 1u) { // values
    let i = j * SORT_WG + tid; // values
    if (i < tileN) { valuesOut[pos[j]] = stage[i]; } // values
  } // values
}
