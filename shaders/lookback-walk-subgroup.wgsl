// Look-back walk by the first subgroup (lookback.wgsl): lane l reads the status of tile
// lb_id - l, for a window of W = min(sg, 32) predecessors per round trip (CUB's warp-wide
// look-back). Ballots find the nearest INCLUSIVE and the nearest not-ready tile; the READY
// aggregates before them are summed with subgroupAdd. Ends with lb_done = 1 (and this tile
// published INCLUSIVE) or after LB_MAX_SPIN windows without progress (the caller falls back).

@diagnostic(off, subgroup_uniformity)
fn lbWalkSubgroup(tile: u32, aggregate: T, lane: u32, sg: u32) {
  let window = min(sg, 32u);
  var id = lb_id;
  var acc = lb_acc;
  var spin = 0u;
  var done = false;
  while (spin < LB_MAX_SPIN) {
    var status = vec2<u32>(0u, 0u);
    if (lane < window && lane <= id) { status = lbRead(id - lane); }
    let inWindow = lane < window;
    let inclusive = subgroupBallot(inWindow && status.x == LB_INCLUSIVE).x;
    let notReady = subgroupBallot(inWindow && status.x == 0u).x;
    let k = min(countTrailingZeros(inclusive), window); // nearest INCLUSIVE (window: none)
    let m = min(countTrailingZeros(notReady), window);  // nearest not ready (window: none)
    if (k < m) {
      acc += subgroupAdd(select(T(0), bitcast<T>(status.y), lane <= k));
      done = true;
      break;
    }
    if (m > 0u) {
      acc += subgroupAdd(select(T(0), bitcast<T>(status.y), lane < m));
      id -= m; // tiles id .. id - m + 1 were READY; tile 0 is never READY, so id >= m
      spin = 0u;
    } else {
      spin += 1u;
    }
  }
  if (lane == 0u) {
    lb_id = id;
    lb_acc = acc;
    if (done) {
      lb_done = 1u;
      lbPublish(tile, acc + aggregate, LB_INCLUSIVE);
    }
  }
}

fn lbWalk(tile: u32, aggregate: T, tid: u32, lane: u32, sg: u32) {
  if (tid < sg) { lbWalkSubgroup(tile, aggregate, lane, sg); }
}
