// The inverse of stage 7, predict (docs/format.md, "Stage 7: predict"), of many predicted chunks
// at once: each chunk's field planes of zigzagged residuals (W-byte words, decoded by their
// pipelines into `resid`) become its elements in `out`. The CPU's twin is assembly/predict.ts
// (predictDecodeAxes, joinFields, floatOrderDecode).
//
// The linear predictors (left, up, 2-D and 3-D Lorenzo after SZ) take the neighbours outside the
// chunk as 0, so their inverse is a prefix sum along each axis the predictor spans, and sums
// along one axis commute with those along another (assembly/predict.ts predictEncodeAxes): each
// axis is a pass over every chunk's planes, in a u32 work array `wide` (one word a residual,
// unzigzagged; sums wrap mod 2^32, and the W-byte result is their low bits):
//   widen   one invocation a word: resid -> wide, unzigzagged
//   rows    one invocation a row of a field plane: the running sum along the row (short rows);
//           long rows: a workgroup a row, a tile of WG cells at a time scanned in workgroup
//           memory with the carry of the tiles before
//   columns one invocation a column of a field plane (of a plane of Y rows for lorenzo3): the
//           running sum down the column; long columns (few cells a row, many rows: an RGB
//           array's rows of 3 cells) a workgroup a column, tiles as for long rows, strided
//   planes  lorenzo3: one invocation a (row, cell) place of a field: the running sum over planes
//   med     LOCO-I's median edge detector, whose prediction is not linear: a workgroup a field
//           plane, by wavefronts (invocation t takes row t of each band of WG rows, cell s - t
//           at step s: its left, upper and upper-left neighbours were decoded at steps s - 1
//           and s - 2), the W-byte values masked at every cell as the CPU decoder keeps them
//   join    one invocation an output word: cells' fields interleaved, the value map undone
// A chunk is a job; an invocation finds its job by binary search over the jobs' first items of
// its pass (a job without items in a pass has as many as the job before it). Composed by
// ts/gpu/compose.ts (`const WG` = 256, `const W` word bytes, `const MASK` its bits).

struct Params {
  jobs: u32,
  items: u32, // invocations that work in this pass (all jobs)
  which: u32, // which of a job's `first` this pass numbers its items by
  pad: u32,
}

struct PredictJob {
  resid: u32,      // word offset of field plane 0's residuals in `resid`
  planeWords: u32, // words from one field plane's residuals to the next
  wide: u32,       // word offset of the chunk's planes in `wide` (plane k at wide + k x cells)
  cells: u32,      // cells (words a field)
  fields: u32,
  rowCells: u32,   // X: cells a row
  planeRows: u32,  // Y: rows a plane
  rows: u32,       // R: rows of the chunk (cells / X)
  predictor: u32,  // 0 none, 1 left, 2 up, 3 lorenzo2, 4 lorenzo3
  map: u32,        // 0 bits, 1 float order, 2 decimal (W = 4); of 8-byte elements (W = 4: fields 2f, 2f + 1 an element's low and high words) 3 float order, 4 decimal
  out: u32,        // word offset of the chunk's elements in `out`
  count: u32,      // elements (cells x fields)
  first: array<u32, 8>, // the job's first item in each pass: widen, rows, columns, planes, join, long rows, long columns, med planes
  exponents: u32,  // decimal map: word offset of its fields' exponents in `decimal`
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> jobs: array<PredictJob>;
@group(0) @binding(2) var<storage, read> resid: array<u32>;
@group(0) @binding(3) var<storage, read_write> wide: array<u32>;
@group(0) @binding(4) var<storage, read_write> out: array<u32>;
// the decimal map: words 0..56 the factors F[e] = 10^-e as f64 (e = 0..18: mantissa with its
// leading 1 (high 21 bits, low 32 bits) and the power of two of its last bit), words 57..94 the
// integers 10^e (low, high), then each job's exponents, a word an element field
@group(0) @binding(5) var<storage, read> decimal: array<u32>;
// exceptions: pairs of (output word, the element's bits), written over the decoded elements
@group(0) @binding(6) var<storage, read> exceptions: array<vec2<u32>>;

// The job whose items of this pass hold item g: the last with first[pass] <= g.
fn jobOf(g: u32) -> u32 {
  var lo = 0u;
  var hi = params.jobs;
  while (hi - lo > 1u) {
    let mid = (lo + hi) / 2u;
    if (jobs[mid].first[params.which] <= g) { lo = mid; } else { hi = mid; }
  }
  return lo;
}

fn itemOf(tid: u32, wid: vec3<u32>, nwg: vec3<u32>) -> u32 {
  return groupOf(wid, nwg) * WG + tid;
}

// The item of a pass whose items are workgroups (long rows, long columns, med planes).
fn groupOf(wid: vec3<u32>, nwg: vec3<u32>) -> u32 {
  return wid.y * nwg.x + wid.x;
}

@compute @workgroup_size(WG)
fn predictWiden(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wid: vec3<u32>,
         @builtin(num_workgroups) nwg: vec3<u32>) {
  let g = itemOf(tid, wid, nwg);
  if (g >= params.items) { return; }
  let job = jobs[jobOf(g)];
  let e = g - job.first[0];
  let k = e / job.cells;
  let c = e - k * job.cells;
  let byte = (job.resid + k * job.planeWords) * 4u + c * W;
  let r = (resid[byte / 4u] >> ((byte % 4u) * 8u)) & MASK;
  wide[job.wide + e] = (r >> 1u) ^ (0u - (r & 1u));
}

@compute @workgroup_size(WG)
fn predictRows(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>) {
  let g = itemOf(tid, wid, nwg);
  if (g >= params.items) { return; }
  let job = jobs[jobOf(g)];
  let e = g - job.first[1];
  let k = e / job.rows;
  let i = e - k * job.rows;
  let base = job.wide + k * job.cells + i * job.rowCells;
  var sum = wide[base];
  for (var c = 1u; c < job.rowCells; c += 1u) {
    sum += wide[base + c];
    wide[base + c] = sum;
  }
}

var<workgroup> rowTile: array<u32, WG>;
var<workgroup> lineAt: u32;
var<workgroup> lineLength: u32;
var<workgroup> lineStride: u32;

// The running sum of the line of lineLength words from lineAt, lineStride apart, by the whole
// workgroup: WG cells at a time (a Hillis-Steele scan in workgroup memory), each tile adding the
// carry of the tiles before. Called in uniform control flow, after invocation 0 set the line.
fn scanLine(tid: u32) {
  let base = workgroupUniformLoad(&lineAt);
  let n = workgroupUniformLoad(&lineLength);
  let stride = workgroupUniformLoad(&lineStride);
  var carry = 0u;
  for (var t0 = 0u; t0 < n; t0 += WG) {
    let c = t0 + tid;
    var v = 0u;
    if (c < n) { v = wide[base + c * stride]; }
    rowTile[tid] = v;
    workgroupBarrier();
    for (var d = 1u; d < WG; d <<= 1u) {
      var add = 0u;
      if (tid >= d) { add = rowTile[tid - d]; }
      workgroupBarrier();
      rowTile[tid] += add;
      workgroupBarrier();
    }
    if (c < n) { wide[base + c * stride] = rowTile[tid] + carry; }
    carry += rowTile[WG - 1u];
    workgroupBarrier();
  }
}

// A long row a workgroup (item = workgroup): its running sum (scanLine).
@compute @workgroup_size(WG)
fn predictRowsLong(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wid: vec3<u32>,
                   @builtin(num_workgroups) nwg: vec3<u32>) {
  let g = groupOf(wid, nwg);
  if (g >= params.items) { return; }
  if (tid == 0u) {
    let job = jobs[jobOf(g)];
    let e = g - job.first[5];
    let k = e / job.rows;
    lineAt = job.wide + k * job.cells + (e - k * job.rows) * job.rowCells;
    lineLength = job.rowCells;
    lineStride = 1u;
  }
  scanLine(tid);
}

// The column of item e of a job's columns pass (one of predictColumns, predictColumnsLong): its
// first word in `wide` and its length; lorenzo3's columns stop at each plane, up's and
// lorenzo2's run down the chunk.
fn columnOf(job: PredictJob, e: u32) -> vec2<u32> {
  let x = job.rowCells;
  let len = select(job.rows, job.planeRows, job.predictor == 4u);
  let segments = job.rows / len;
  let k = e / (segments * x);
  let rest = e - k * segments * x;
  let s = rest / x;
  return vec2<u32>(job.wide + k * job.cells + s * len * x + (rest - s * x), len);
}

// A long column a workgroup (item = workgroup): its running sum (scanLine, the row's cells apart).
@compute @workgroup_size(WG)
fn predictColumnsLong(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wid: vec3<u32>,
                      @builtin(num_workgroups) nwg: vec3<u32>) {
  let g = groupOf(wid, nwg);
  if (g >= params.items) { return; }
  if (tid == 0u) {
    let job = jobs[jobOf(g)];
    let column = columnOf(job, g - job.first[6]);
    lineAt = column.x;
    lineLength = column.y;
    lineStride = job.rowCells;
  }
  scanLine(tid);
}

@compute @workgroup_size(WG)
fn predictColumns(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wid: vec3<u32>,
           @builtin(num_workgroups) nwg: vec3<u32>) {
  let g = itemOf(tid, wid, nwg);
  if (g >= params.items) { return; }
  let job = jobs[jobOf(g)];
  let x = job.rowCells;
  let column = columnOf(job, g - job.first[2]);
  let base = column.x;
  let len = column.y;
  var sum = wide[base];
  for (var i = 1u; i < len; i += 1u) {
    sum += wide[base + i * x];
    wide[base + i * x] = sum;
  }
}

// med: the last value each invocation decoded, at the step before (ping-pong by step parity)
var<workgroup> medLast: array<array<u32, WG>, 2>;
var<workgroup> medPlane: vec4<u32>; // the plane's first word in `wide`, cells a row, rows

// medPredict: shaders/predict-med.wgsl, composed before this file.

// A field plane of a med chunk a workgroup (item = workgroup): rows in bands of WG, a band by
// wavefronts; row 0 predicts from the left only, each row's first cell from above only.
@compute @workgroup_size(WG)
fn predictMed(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wid: vec3<u32>,
              @builtin(num_workgroups) nwg: vec3<u32>) {
  let g = groupOf(wid, nwg);
  if (g >= params.items) { return; }
  if (tid == 0u) {
    let job = jobs[jobOf(g)];
    medPlane = vec4<u32>(job.wide + (g - job.first[7]) * job.cells, job.rowCells, job.rows, 0u);
  }
  let plane = workgroupUniformLoad(&medPlane);
  let base = plane.x;
  let x = plane.y;
  let rows = plane.z;
  for (var band = 0u; band < rows; band += WG) {
    let r = band + tid;
    let live = r < rows;
    let rowAt = base + r * x;
    var a = 0u;  // left: this row's cell decoded at the step before
    var ab = 0u; // upper-left: the up value read at the step before
    for (var s = 0u; s < x + WG - 1u; s++) {
      var value = 0u;
      var wrote = false;
      if (live && s >= tid && s - tid < x) {
        let c = s - tid;
        var b = 0u;
        if (r > 0u) {
          // the row above: the invocation before decoded it at the step before; the band's first
          // row reads the last band's last row, decoded before this band began
          if (tid > 0u) { b = medLast[(s + 1u) & 1u][tid - 1u]; } else { b = wide[rowAt - x + c] & MASK; }
        }
        var pred = 0u;
        if (c == 0u) {
          pred = b;
        } else if (r == 0u) {
          pred = a;
        } else {
          pred = medPredict(a, b, ab);
        }
        value = (wide[rowAt + c] + pred) & MASK;
        wide[rowAt + c] = value;
        a = value;
        ab = b;
        wrote = true;
      }
      if (wrote) { medLast[s & 1u][tid] = value; }
      workgroupBarrier();
    }
    storageBarrier();
    workgroupBarrier();
  }
}

@compute @workgroup_size(WG)
fn predictPlanes(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wid: vec3<u32>,
          @builtin(num_workgroups) nwg: vec3<u32>) {
  let g = itemOf(tid, wid, nwg);
  if (g >= params.items) { return; }
  let job = jobs[jobOf(g)];
  let e = g - job.first[3];
  let area = job.planeRows * job.rowCells;
  let k = e / area;
  let base = job.wide + k * job.cells + (e - k * area);
  let count = job.rows / job.planeRows;
  var sum = wide[base];
  for (var p = 1u; p < count; p += 1u) {
    sum += wide[base + p * area];
    wide[base + p * area] = sum;
  }
}

@compute @workgroup_size(WG)
fn predictJoin(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>) {
  let g = itemOf(tid, wid, nwg);
  if (g >= params.items) { return; }
  let job = jobs[jobOf(g)];
  let q = g - job.first[4];
  if (job.map == 4u) {
    // an f64 element's decimal map (assembly/predict.ts decimalDecodeF64): the invocation of its
    // low word writes both of its words
    let c = q / job.fields;
    let k = q - c * job.fields;
    if ((k & 1u) == 1u) { return; }
    let bits = decimalBits64(wide[job.wide + k * job.cells + c], wide[job.wide + (k + 1u) * job.cells + c], decimal[job.exponents + k / 2u]);
    out[job.out + q] = bits.x;
    out[job.out + q + 1u] = bits.y;
    return;
  }
  let perWord = 4u / W;
  var word = 0u;
  for (var t = 0u; t < perWord; t += 1u) {
    let el = q * perWord + t;
    if (el >= job.count) { break; }
    let c = el / job.fields;
    let k = el - c * job.fields;
    var v = wide[job.wide + k * job.cells + c] & MASK;
    // fpzip's order-preserving map undone (assembly/predict.ts floatOrderDecode)
    if (job.map == 1u) { v = select(~v, v ^ 0x80000000u, (v >> 31u) != 0u); }
    if (job.map == 2u) { v = decimalBits(v, decimal[job.exponents + k]); }
    // the 8-byte map (assembly/predict.ts floatOrderDecode64): the element's high word decides
    if (job.map == 3u) {
      let high = (k & 1u) == 1u;
      let top = select(wide[job.wide + (k + 1u) * job.cells + c], v, high);
      v = select(~v, v ^ select(0u, 0x80000000u, high), (top >> 31u) != 0u);
    }
    word |= v << (t * W * 8u);
  }
  out[job.out + q] = word;
}

// decimalBits (the decimal map's f32 of an i32 value at exponent e): shaders/decimal-f32.wgsl;
// decimalBits64 (its f64 of an i64): shaders/decimal-f64.wgsl; both composed before this file.

@compute @workgroup_size(WG)
fn predictExceptions(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wid: vec3<u32>,
                     @builtin(num_workgroups) nwg: vec3<u32>) {
  let g = itemOf(tid, wid, nwg);
  if (g >= params.items) { return; }
  let x = exceptions[g];
  out[x.x] = x.y;
}
