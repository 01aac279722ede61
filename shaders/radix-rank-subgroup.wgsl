// Digit ranking within a subgroup (OneSweep's warp-level multi-split, Adinets and Merrill 2022),
// for radix-sort.wgsl's onesweep kernel (each subgroup ranks the keys of its region of the
// tile): 8 ballots, one per digit bit, AND-ed (or AND-NOT-ed) together give the lanes holding
// the same digit; the rank is the count of such lanes below this one, plus the subgroup's
// running count of that digit, which the lowest such lane (the leader) advances.
// Subgroups of up to 128 lanes (vec4 ballots); subgroups of up to 32 lanes (NVIDIA's warps) use
// only the ballots' first word.
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

/** rankKey for subgroups of at most 32 lanes: a ballot's lanes are all in its first word. */
fn rankKey32(d: u32, valid: bool, tid: u32, lane: u32, sg: u32) -> u32 {
  var same = subgroupBallot(valid).x;
  for (var b = 0u; b < 8u; b += 1u) {
    let bit = ((d >> b) & 1u) == 1u;
    let ballot = subgroupBallot(bit).x;
    same &= select(~ballot, ballot, bit);
  }
  let below = countOneBits(same & ((1u << lane) - 1u));
  var old = 0u;
  if (valid && below == 0u) { old = atomicAdd(&rankCount[(tid / sg) * 256u + d], countOneBits(same)); }
  // same == 0 (an invalid key's lane): any lane; its rank is not used
  old = subgroupShuffle(old, countTrailingZeros(same) & (sg - 1u));
  return old + below;
}

/** Rank of this key among earlier keys of the same digit in this subgroup's region; all lanes call it. */
fn rankKey(d: u32, valid: bool, tid: u32, lane: u32, sg: u32) -> u32 {
  if (sg <= 32u) { return rankKey32(d, valid, tid, lane, sg); }
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
