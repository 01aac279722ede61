// Digit ranking for radix-sort.wgsl's onesweep kernel without subgroups (context option
// `subgroups: 'off'`, or adapters without them): the whole workgroup acts as one group of
// SORT_WG lanes, and the 9 ballots (valid + 8 digit bits) are built in shared memory with
// atomicOr, one 32-bit word per 32 invocations. Slower than the subgroup variant (4 barriers
// and 72 shared reads per key), same result.
// Also the tile's exclusive scan over digits (scanDigits), raking in shared memory.

const RANK_GROUPS: u32 = 1u;
const RANK_COUNTERS: u32 = 256u;
const BALLOT_WORDS: u32 = SORT_WG / 32u;
var<workgroup> rankCount: array<atomic<u32>, RANK_COUNTERS>;
var<workgroup> ballots: array<atomic<u32>, 9u * BALLOT_WORDS>; // plane 8: valid
var<workgroup> leaderCount: array<u32, 256>;

fn rankKey(d: u32, valid: bool, tid: u32, lane: u32, sg: u32) -> u32 {
  workgroupBarrier();
  if (tid < 9u * BALLOT_WORDS) { atomicStore(&ballots[tid], 0u); }
  workgroupBarrier();
  let word = tid / 32u;
  let bit = 1u << (tid % 32u);
  if (valid) {
    atomicOr(&ballots[8u * BALLOT_WORDS + word], bit);
    for (var b = 0u; b < 8u; b += 1u) {
      if (((d >> b) & 1u) == 1u) { atomicOr(&ballots[b * BALLOT_WORDS + word], bit); }
    }
  }
  workgroupBarrier();
  var below = 0u;
  var count = 0u;
  if (valid) {
    for (var w = 0u; w < BALLOT_WORDS; w += 1u) {
      var m = atomicLoad(&ballots[8u * BALLOT_WORDS + w]);
      for (var b = 0u; b < 8u; b += 1u) {
        let p = atomicLoad(&ballots[b * BALLOT_WORDS + w]);
        m &= select(~p, p, ((d >> b) & 1u) == 1u);
      }
      count += countOneBits(m);
      if (w < word) { below += countOneBits(m); } else if (w == word) { below += countOneBits(m & (bit - 1u)); }
    }
    if (below == 0u) { leaderCount[d] = atomicAdd(&rankCount[d], count); }
  }
  workgroupBarrier();
  var old = 0u;
  if (valid) { old = leaderCount[d]; }
  return old + below;
}

/**
 * Ranks this invocation's ITEMS keys (item k: key region + k * SORT_WG + tid, valid below
 * params.n; keys already mapped to sortable u32): ranks[k] = the count of keys of the same digit
 * before it in the tile; rankCount[d] ends as the tile's count of digit d. All invocations call it.
 */
fn rankTile(keys: ptr<function, array<u32, ITEMS>>, ranks: ptr<function, array<u32, ITEMS>>, region: u32, tid: u32,
            lane: u32, sg: u32) {
  for (var k = 0u; k < ITEMS; k += 1u) {
    let valid = region + k * sg + lane < params.n;
    (*ranks)[k] = rankKey(((*keys)[k] >> params.shift) & 0xFFu, valid, tid, lane, sg);
  }
}

var<workgroup> digitPart: array<u32, 16>;

/**
 * tileStart (per-digit counts) -> its exclusive scan, handed to digitScanned per digit. Raking:
 * 16 invocations x 16 digits, then one invocation scans the 16 partial sums. The caller has
 * passed a barrier since tileStart was written; all invocations call it.
 */
fn scanDigits(tid: u32, lane: u32, sg: u32) {
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
  for (var d = tid; d < 256u; d += SORT_WG) { digitScanned(d, tileStart[d] + digitPart[d / 16u]); }
}
