// Mode-3 Huffman lanes with subgroups of 32, 64 or 128 invocations: shared piece appended to
// codec-huffman.wgsl by ts/codec/gpu/stages.ts where every subgroup of the adapter is a multiple
// of 32 wide (`lane` is the subgroup invocation id). Each 32 consecutive invocations of a
// subgroup decode one segment.

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
