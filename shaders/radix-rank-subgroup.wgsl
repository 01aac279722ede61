// Digit ranking within a subgroup (OneSweep's warp-level multi-split, Adinets and Merrill 2022),
// for radix-sort.wgsl's onesweep kernel (each subgroup ranks the keys of its region of the
// tile): 8 ballots, one per digit bit, AND-ed (or AND-NOT-ed) together give the lanes holding
// the same digit; a key's rank is the count of such lanes below its lane, plus the subgroup's
// running count of that digit in rankCount.
// Subgroups of up to 32 lanes (NVIDIA's warps, SwiftShader's 4): every item's ballots first (no
// item waits on another's), then one pass over the items in order: each lane reads its digit's
// count, and the digit's highest lane stores the count plus the digit's lanes. On the H200 this
// took a OneSweep pass from 4.52 to 3.81 ms at 2^28 keys (sort-rank-nvidia-h200.log in git history),
// against 4.03 for the ballots first with the lowest lane's atomicAdd and a shuffle per item.
// Item k + 1's reads must see item k's store of another lane: this relies on a subgroup's lanes
// running the counter loop in lockstep (no subgroup operation in it, the store a single
// predicated instruction), as on NVIDIA, AMD, Intel and Apple GPUs and SwiftShader; the sort
// tests (SwiftShader) and sort-rank.mjs (in git history: a stable key-value sort checked
// element by element) check it.
// Wider subgroups (up to 128 lanes, vec4 ballots): per item, the lowest lane of each digit adds
// to the count with atomicAdd and a shuffle hands the old count to the digit's other lanes.
// Also the tile's exclusive scan over digits (scanDigits), with subgroup scans.

const RANK_GROUPS: u32 = SORT_WG / MIN_SG; // most subgroups in a workgroup
const RANK_COUNTERS: u32 = RANK_GROUPS * 256u;
var<workgroup> rankCount: array<atomic<u32>, RANK_COUNTERS>; // [group][digit]

fn lanesBelow(lane: u32) -> vec4<u32> {
  var m = vec4<u32>(0u);
  for (var w = 0u; w < 4u; w += 1u) {
    let lo = w * 32u;
    if (lane >= lo + 32u) { m[w] = 0xFFFFFFFFu; } else if (lane > lo) { m[w] = (1u << (lane - lo)) - 1u; }
  }
  return m;
}

fn popcount4(v: vec4<u32>) -> u32 {
  let c = countOneBits(v);
  return c.x + c.y + c.z + c.w;
}

fn lowestLane(v: vec4<u32>) -> u32 {
  for (var w = 0u; w < 4u; w += 1u) {
    if (v[w] != 0u) { return w * 32u + countTrailingZeros(v[w]); }
  }
  return 0u;
}

/** Rank of this key among earlier keys of the same digit in this subgroup's region (subgroups of more than 32 lanes); all lanes call it. */
fn rankKeyWide(d: u32, valid: bool, tid: u32, lane: u32, sg: u32) -> u32 {
  var same = subgroupBallot(valid);
  for (var b = 0u; b < 8u; b += 1u) {
    let bit = ((d >> b) & 1u) == 1u;
    let ballot = subgroupBallot(bit);
    same &= select(~ballot, ballot, bit);
  }
  let below = popcount4(same & lanesBelow(lane));
  var old = 0u;
  if (valid && below == 0u) { old = atomicAdd(&rankCount[(tid / sg) * 256u + d], popcount4(same)); }
  old = subgroupShuffle(old, lowestLane(same));
  return old + below;
}

/**
 * Ranks this lane's ITEMS keys (item k: key region + k * sg + lane, valid below params.n; keys
 * already mapped to sortable u32, invalid ones 0): ranks[k] = the count of keys of the same
 * digit before it in the subgroup's region ((item, lane) order); rankCount[group][d] ends as the
 * region's count of digit d (zero before). All lanes call it.
 */
fn rankTile(keys: ptr<function, array<u32, ITEMS>>, ranks: ptr<function, array<u32, ITEMS>>, region: u32, tid: u32,
            lane: u32, sg: u32) {
  let counts = (tid / sg) * 256u;
  if (MAX_SG > 32u) {
    for (var k = 0u; k < ITEMS; k += 1u) {
      let valid = region + k * sg + lane < params.n;
      (*ranks)[k] = rankKeyWide(((*keys)[k] >> params.shift) & 0xFFu, valid, tid, lane, sg);
    }
    return;
  }
  // lanes of each item holding this lane's digit (0 for an invalid key)
  var same: array<u32, ITEMS>;
  for (var k = 0u; k < ITEMS; k += 1u) {
    let valid = region + k * sg + lane < params.n;
    let d = ((*keys)[k] >> params.shift) & 0xFFu;
    var m = subgroupBallot(valid).x;
    for (var b = 0u; b < 8u; b += 1u) {
      let bit = ((d >> b) & 1u) == 1u;
      let ballot = subgroupBallot(bit).x;
      m &= select(~ballot, ballot, bit);
    }
    same[k] = select(0u, m, valid);
  }
  let below = (1u << lane) - 1u;
  for (var k = 0u; k < ITEMS; k += 1u) {
    let m = same[k];
    let at = counts + (((*keys)[k] >> params.shift) & 0xFFu);
    let c = atomicLoad(&rankCount[at]);
    (*ranks)[k] = c + countOneBits(m & below);
    // the digit's highest lane (m >> lane == 1: no higher lane holds it)
    if (m != 0u && (m >> lane) == 1u) { atomicStore(&rankCount[at], c + countOneBits(m)); }
  }
}

// consecutive digits per invocation in scanDigits (1, 2 or 4; with 512 invocations, 1 for the
// first 256 and none for the rest)
const SCAN_PER: u32 = max(256u / SORT_WG, 1u);
var<workgroup> digitPart: array<u32, RANK_GROUPS>; // each subgroup's total

/**
 * tileStart (per-digit counts) -> its exclusive scan, handed to digitScanned per digit.
 * Invocation t takes digits SCAN_PER t ..; a subgroup exclusive scan of their sums, then each
 * invocation adds the totals of the subgroups before its own (fewer than RANK_GROUPS). The
 * caller has passed a barrier since tileStart was written; all invocations call it.
 */
fn scanDigits(tid: u32, lane: u32, sg: u32) {
  let d0 = tid * SCAN_PER;
  let mine = d0 < 256u;
  var v: array<u32, SCAN_PER>;
  var s = 0u;
  for (var i = 0u; i < SCAN_PER; i += 1u) {
    v[i] = select(0u, tileStart[min(d0 + i, 255u)], mine);
    s += v[i];
  }
  let ex = subgroupExclusiveAdd(s);
  if (lane == sg - 1u) { digitPart[tid / sg] = ex + s; }
  workgroupBarrier();
  var run = ex;
  for (var g = 0u; g < tid / sg; g += 1u) { run += digitPart[g]; }
  if (!mine) { return; }
  for (var i = 0u; i < SCAN_PER; i += 1u) {
    digitScanned(d0 + i, run);
    run += v[i];
  }
}
