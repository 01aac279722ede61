// Workgroup-wide exclusive scan of one T per invocation, built on subgroup scans.
// Shared piece: composed into kernels by ts/gpu/compose.ts (which prepends `enable subgroups;`,
// `alias T` and `const WG`). Every invocation of the workgroup must call it (uniform control flow).
// Two steps: a subgroup scan, then a scan of the subgroup totals ("spine"): by one more subgroup
// scan when the spine fits one subgroup (WG / sg <= sg, e.g. NVIDIA's 32 lanes), else by a
// Hillis-Steele scan in shared memory (small subgroups, e.g. SwiftShader's 4 lanes).

var<workgroup> wgs_spine: array<T, WG / 4u>; // one entry per subgroup: WG / smallest subgroup (4)

fn wgExclusiveScan(x: T, tid: u32, lane: u32, sg: u32, total: ptr<function, T>) -> T {
  let ex = subgroupExclusiveAdd(x);
  let sid = tid / sg;
  let nsub = WG / sg;
  workgroupBarrier(); // readers of wgs_spine in an earlier call are done
  if (lane == sg - 1u) { wgs_spine[sid] = ex + x; }
  workgroupBarrier();
  var prefix = T(0);
  if (nsub <= sg) {
    let s = select(T(0), wgs_spine[min(lane, nsub - 1u)], lane < nsub);
    let sEx = subgroupExclusiveAdd(s);
    prefix = subgroupShuffle(sEx, sid);
    *total = subgroupAdd(s);
  } else {
    for (var off = 1u; off < nsub; off <<= 1u) {
      var v = T(0);
      let inRange = tid < nsub && tid >= off;
      if (inRange) { v = wgs_spine[tid - off]; }
      workgroupBarrier();
      if (inRange) { wgs_spine[tid] += v; }
      workgroupBarrier();
    }
    prefix = select(T(0), wgs_spine[max(sid, 1u) - 1u], sid > 0u);
    *total = wgs_spine[nsub - 1u];
  }
  return prefix + ex;
}

/**
 * Exclusive scan of one T per invocation within its subgroup (a scan "group"); `total` gets the
 * subgroup's sum (its last lane's inclusive value). All lanes of the subgroup call it.
 */
fn groupExclusiveScan(x: T, tid: u32, lane: u32, sg: u32, total: ptr<function, T>) -> T {
  let ex = subgroupExclusiveAdd(x);
  *total = subgroupShuffle(ex + x, sg - 1u);
  return ex;
}
