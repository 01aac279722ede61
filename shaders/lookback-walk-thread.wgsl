// Look-back walk by one invocation (lookback.wgsl), for adapters without subgroups: reads one
// predecessor's status per round trip. Ends with lb_done = 1 (and this tile published
// INCLUSIVE) or after LB_MAX_SPIN reads without progress (the caller falls back).

fn lbWalk(tile: u32, aggregate: T, tid: u32, lane: u32, sg: u32) {
  if (tid != 0u) { return; }
  var id = lb_id;
  var acc = lb_acc;
  var spin = 0u;
  while (spin < LB_MAX_SPIN) {
    let status = lbRead(id);
    if (status.x != 0u) {
      acc += bitcast<T>(status.y);
      if (status.x == LB_INCLUSIVE) {
        lb_done = 1u;
        break;
      }
      id -= 1u; // id > 0: tile 0 only ever publishes INCLUSIVE
      spin = 0u;
    } else {
      spin += 1u;
    }
  }
  lb_id = id;
  lb_acc = acc;
  if (lb_done == 1u) { lbPublish(tile, acc + aggregate, LB_INCLUSIVE); }
}
