// Mode-3 Huffman lanes with subgroups of 32, 64 or 128 invocations: shared piece appended to
// codec-huffman.wgsl by ts/codec/gpu/huffman-decode.ts where every subgroup of the adapter is a multiple
// of 32 wide (`lane` is the subgroup invocation id). Each 32 consecutive invocations of a
// subgroup decode one segment.
//
// The units come from a window of the segment's next 64 units held in the lanes' registers (lane
// l holds units base + l and base + 32 + l, loaded 32 at a time: 64 consecutive bytes), handed to
// the lanes that need them by subgroupShuffle: a step's units are consecutive, so they lie in the
// window, and the window slides 32 units as soon as the lanes have taken 32, its next 32 loaded
// then, steps before they are needed. Without it each unit was a load on the step's chain.

var<workgroup> laneGroups: atomic<u32>;

// This invocation's 32-lane group within the workgroup (0 .. LANE_SEGMENTS - 1): the group's
// first lane takes the next one (workgroup memory starts zeroed) and the group shares it.
fn laneGroup(tid: u32, lane: u32) -> u32 {
  var g = 0u;
  if ((lane & 31u) == 0u) { g = atomicAdd(&laneGroups, 1u); }
  return subgroupShuffle(g, lane & ~31u);
}

// The lanes of this invocation's 32-lane group that pass `need`, bit i for lane i: one ballot.
fn stepMask(need: bool, lane: u32, lane32: u32, groupSlot: u32, t: u32) -> u32 {
  let m = subgroupBallot(need);
  return m[lane >> 5u];
}

var<private> windowLow: u32;   // unit windowBase + lane32
var<private> windowHigh: u32;  // unit windowBase + 32 + lane32
var<private> windowBase: u32;

// A segment's first 64 units into the window (units past the segment are read but never taken).
fn lanesBegin(at: u32, lane32: u32) {
  windowBase = 0u;
  windowLow = read16(at + 2u * lane32);
  windowHigh = read16(at + 2u * (32u + lane32));
}

// Unit `pos` of the segment (pos - windowBase < 64, as a step takes at most 32 units and the
// window slides once 32 are taken); called by every invocation (a shuffle), meaningful where `need`.
fn lanesUnit(at: u32, pos: u32, need: bool, lane: u32) -> u32 {
  let i = min(pos - windowBase, 63u);
  let src32 = (lane & ~31u) + (i & 31u);
  let low = subgroupShuffle(windowLow, src32);
  let high = subgroupShuffle(windowHigh, src32);
  return select(low, high, i >= 32u);
}

// Slides the window by 32 units once the lanes have taken `p` >= windowBase + 32 (the same in all
// 32 lanes of the segment).
fn lanesAdvance(at: u32, p: u32, lane32: u32) {
  if (p >= windowBase + 32u) {
    windowBase += 32u;
    windowLow = windowHigh;
    windowHigh = read16(at + 2u * (windowBase + 32u + lane32));
  }
}
