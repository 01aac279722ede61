// Mode-3 Huffman lanes without subgroups of 32 (none, or narrower ones): shared piece appended to
// codec-huffman.wgsl by ts/codec/gpu/huffman-decode.ts. Invocations tid .. tid + 31 (tid a multiple of
// 32) decode one segment; each step the lanes OR their bit into a mask in workgroup memory and
// meet at a barrier. Three masks a segment rotate: step t's is read after the step's barrier,
// and the one of step t - 1 (read before it) is cleared for step t + 2, whose writes come after
// the next barrier.

var<workgroup> masks: array<atomic<u32>, 3u * LANE_SEGMENTS>;

fn laneGroup(tid: u32, lane: u32) -> u32 {
  return tid >> 5u;
}

// The lanes of this segment that pass `need`, bit i for lane i. Called by every invocation of
// the workgroup at every step (a barrier).
fn stepMask(need: bool, lane: u32, lane32: u32, groupSlot: u32, t: u32) -> u32 {
  let k = groupSlot * 3u;
  if (need) { atomicOr(&masks[k + t % 3u], 1u << lane32); }
  workgroupBarrier();
  let m = atomicLoad(&masks[k + t % 3u]);
  if (lane32 == 0u) { atomicStore(&masks[k + (t + 2u) % 3u], 0u); }
  return m;
}

fn lanesBegin(at: u32, lane32: u32) {}

// Unit `pos` of the segment, read where this lane needs it.
fn lanesUnit(at: u32, pos: u32, need: bool, lane: u32) -> u32 {
  if (!need) { return 0u; }
  return read16(at + 2u * pos);
}

fn lanesAdvance(at: u32, p: u32, lane32: u32) {}
