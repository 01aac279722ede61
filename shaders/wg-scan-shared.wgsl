// Workgroup-wide exclusive scan of one T per invocation in shared memory, for adapters without
// the `subgroups` feature. Shared piece: composed into kernels by ts/gpu/compose.ts (`alias T`,
// `const WG` = 256 prepended). Raking scan (Gruber's "recursive block scan" on one level):
// 16 raking invocations each scan 16 entries serially, one invocation scans the 16 partials.
// `lane` and `sg` are unused here; they keep the signature of the subgroup variant.

var<workgroup> wgs_data: array<T, 256>;
var<workgroup> wgs_part: array<T, 17>;

fn wgExclusiveScan(x: T, tid: u32, lane: u32, sg: u32, total: ptr<function, T>) -> T {
  workgroupBarrier(); // readers of wgs_data in an earlier call are done
  wgs_data[tid] = x;
  workgroupBarrier();
  if (tid < 16u) {
    var s = T(0);
    for (var i = 0u; i < 16u; i += 1u) {
      let v = wgs_data[tid * 16u + i];
      wgs_data[tid * 16u + i] = s;
      s += v;
    }
    wgs_part[tid] = s;
  }
  workgroupBarrier();
  if (tid == 0u) {
    var s = T(0);
    for (var i = 0u; i < 16u; i += 1u) {
      let v = wgs_part[i];
      wgs_part[i] = s;
      s += v;
    }
    wgs_part[16] = s;
  }
  workgroupBarrier();
  *total = wgs_part[16];
  return wgs_part[tid / 16u] + wgs_data[tid];
}

/** Without subgroups a scan "group" is the whole workgroup (sg = WG): wgExclusiveScan. */
fn groupExclusiveScan(x: T, tid: u32, lane: u32, sg: u32, total: ptr<function, T>) -> T {
  return wgExclusiveScan(x, tid, lane, sg, total);
}
