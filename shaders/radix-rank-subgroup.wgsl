// Digit ranking within a subgroup (OneSweep's warp-level multi-split, Adinets and Merrill 2022),
// for radix-sort.wgsl's onesweep kernel (each subgroup ranks the keys of its region of the
// tile): 8 ballots, one per digit bit, AND-ed (or AND-NOT-ed) together give the lanes holding
// the same digit; the rank is the count of such lanes below this one, plus the subgroup's
// running count of that digit, which the lowest such lane (the leader) advances.
// Subgroups of up to 128 lanes (vec4 ballots).

const RANK_COUNTERS: u32 = (SORT_WG / MIN_SG) * 256u;
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

/** Rank of this key among earlier keys of the same digit in this subgroup's region; all lanes call it. */
fn rankKey(d: u32, valid: bool, tid: u32, lane: u32, sg: u32) -> u32 {
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
