// Chained-scan look-back with decoupled fallback. Shared piece: composed into the single-pass
// kernels (scan, RLE encode) by ts/gpu/compose.ts.
//
// Sources: Merrill and Garland 2016, "Single-pass Parallel Prefix Scan with Decoupled
// Look-back"; Smith, Levien and Owens, SPAA 2025, "Decoupled Fallback": WebGPU gives no
// forward-progress guarantee between workgroups, so a workgroup that waits on a predecessor
// whose status does not change within LB_MAX_SPIN reads computes that predecessor's
// reduction itself (`tileReduce`, defined by the kernel) and goes on looking back from there.
//
// The kernel declares `lb_spine: array<atomic<u32>>` (zeroed before each dispatch):
//   [0]                 tile counter: tiles are numbered in the order workgroups start, so a
//                       tile's predecessors have all started (no deadlock on a scheduler that
//                       runs workgroups in any order);
//   [LB_BASE + 2 t + h] tile t's status, half h: flag in the top 2 bits, 16 bits of value.
// WGSL has no 64-bit atomics, so a 32-bit T (u32 bits or f32 bits) is published as two 16-bit
// halves, each word tagged with the flag. A reader accepts a pair only when both words carry the
// same flag; a pair seen mid-update (one half READY, the other INCLUSIVE) counts as not ready.
// Only a tile's owner ever writes its status (READY once, then INCLUSIVE once), so two words
// with the same flag always come from the same store pair.
//
// The walk itself (`lbWalk`) comes from lookback-walk-subgroup.wgsl (a subgroup reads up to 32
// predecessors' status words at once, as CUB's warp-wide look-back: a one-tile-per-round-trip
// walk serialised the H200 beyond ~16k tiles) or lookback-walk-thread.wgsl (one invocation).

const LB_BASE: u32 = 4u;
const LB_READY: u32 = 0x40000000u;
const LB_INCLUSIVE: u32 = 0x80000000u;
const LB_FLAG_MASK: u32 = 0xC0000000u;
override LB_MAX_SPIN: u32 = 64u; // 0 forces the fallback at every step (tests)

var<workgroup> lb_tile: u32;
var<workgroup> lb_done: u32;
var<workgroup> lb_id: u32;
var<workgroup> lb_acc: T;

/** Reads the status pair of `tile`: (flag, value bits); flag 0 when not ready or mid-update. */
fn lbRead(tile: u32) -> vec2<u32> {
  let lo = atomicLoad(&lb_spine[LB_BASE + 2u * tile]);
  let hi = atomicLoad(&lb_spine[LB_BASE + 2u * tile + 1u]);
  let flag = lo & LB_FLAG_MASK;
  return vec2<u32>(select(0u, flag, flag == (hi & LB_FLAG_MASK)), (lo & 0xFFFFu) | ((hi & 0xFFFFu) << 16u));
}

/** Numbers this workgroup's tile in start order; uniform result. */
fn lbAcquireTile(tid: u32) -> u32 {
  if (tid == 0u) { lb_tile = atomicAdd(&lb_spine[0], 1u); }
  return workgroupUniformLoad(&lb_tile);
}

fn lbPublish(tile: u32, v: T, flag: u32) {
  let b = bitcast<u32>(v);
  atomicStore(&lb_spine[LB_BASE + 2u * tile], (b & 0xFFFFu) | flag);
  atomicStore(&lb_spine[LB_BASE + 2u * tile + 1u], (b >> 16u) | flag);
}

/**
 * Publishes `tile`'s reduction `aggregate`: READY (tile 0: INCLUSIVE, its own prefix). A kernel
 * that knows its aggregate before the rest of its tile's work publishes it then, and looks back
 * later with {@link lookbackPublished}; successors see it sooner.
 */
fn lbPublishAggregate(tile: u32, aggregate: T, tid: u32) {
  if (tid == 0u) { lbPublish(tile, aggregate, select(LB_READY, LB_INCLUSIVE, tile == 0u)); }
}

/**
 * The sum of all tiles before `tile` (exclusive prefix); publishes `tile`'s inclusive prefix.
 * `aggregate` is this tile's reduction. Every invocation calls it (uniform control flow).
 */
fn lookback(tile: u32, aggregate: T, tid: u32, lane: u32, sg: u32) -> T {
  lbPublishAggregate(tile, aggregate, tid);
  return lookbackPublished(tile, aggregate, tid, lane, sg);
}

/** {@link lookback} after lbPublishAggregate(tile, aggregate): the same result. */
fn lookbackPublished(tile: u32, aggregate: T, tid: u32, lane: u32, sg: u32) -> T {
  if (tile == 0u) { return T(0); }
  if (tid == 0u) {
    lb_done = 0u;
    lb_id = tile - 1u;
    lb_acc = T(0);
  }
  loop {
    workgroupBarrier(); // lb_* written by invocation 0 are visible
    lbWalk(tile, aggregate, tid, lane, sg);
    if (workgroupUniformLoad(&lb_done) == 1u) { break; }
    // Fallback: the predecessor lb_id has not published; reduce its tile here.
    let fid = workgroupUniformLoad(&lb_id);
    let red = tileReduce(fid, tid, lane, sg);
    if (tid == 0u) {
      lb_acc += red;
      if (fid == 0u) {
        lb_done = 1u;
        lbPublish(tile, lb_acc + aggregate, LB_INCLUSIVE);
      } else {
        lb_id = fid - 1u;
      }
    }
    if (workgroupUniformLoad(&lb_done) == 1u) { break; }
  }
  return workgroupUniformLoad(&lb_acc);
}
