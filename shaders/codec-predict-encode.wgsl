// Stage 7, predict (docs/format.md, "Stage 7: predict"), written on the GPU: every chunk of an
// array of W-byte elements into its field planes of zigzagged residuals, one plane a field
// ("unit": chunk c's field k is unit c x fields + k), the units side by side `stride` elements
// apart in `resid`, each padded to its stride with its last residual (so that the rle stage's runs
// of a unit end in one run, which ts/codec/gpu/rle-streams.ts cuts at the unit's end). The CPU's
// twin is assembly/predict.ts (predictEncodeAxes, splitFields, floatOrderEncode); the inverse is
// codec-predict.wgsl.
//
// Every residual depends only on the input, so one invocation writes one output word (4 / W
// residuals of a unit) reading its neighbours (a cell, a row and a plane back) from the input:
// left, up, lorenzo2 and lorenzo3 with neighbours outside the chunk 0; the bits or the
// float-order map. With `zigzag` 0 (predictor none, one field, the bits) the residuals are the
// elements themselves: the chunks copied to whole words at the stride, for a chunk length that
// does not end on one. Composed by ts/codec/gpu/predict-encode.ts (`const WG` = 256, `const W`
// element bytes, `const MASK` their bits).

struct Params {
  count: u32,     // elements of the array
  chunk: u32,     // C: elements a chunk (the last may hold fewer)
  fields: u32,    // f: elements a cell
  rowCells: u32,  // X: cells a row; 0: a row is the chunk's cells
  planeRows: u32, // Y: rows a plane
  predictor: u32, // 0 none, 1 left, 2 up, 3 lorenzo2, 4 lorenzo3
  map: u32,       // 0 bits, 1 float order (W = 4)
  stride: u32,    // elements from one unit's residuals to the next (whole words)
  words: u32,     // output words in all (units x stride x W / 4)
  zigzag: u32,    // 1: residuals zigzagged; 0: the values as they are
  pad0: u32,
  pad1: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> input: array<u32>;
@group(0) @binding(2) var<storage, read_write> resid: array<u32>;

const PER: u32 = 4u / W;

// Element i's value under the map.
fn valueAt(i: u32) -> u32 {
  var b: u32;
  if (W == 4u) {
    b = input[i];
  } else {
    b = (input[i / PER] >> ((i % PER) * 8u * W)) & MASK;
  }
  if (params.map == 1u) {
    return select(~b, b ^ 0x80000000u, (b >> 31u) == 0u);
  }
  return b;
}

// The residual of cell `cell` of field `k` of the chunk whose first element is `base`, rows of `X` cells.
fn residual(base: u32, X: u32, k: u32, cell: u32) -> u32 {
  let f = params.fields;
  let e = base + cell * f + k;
  let u = valueAt(e);
  let p = params.predictor;
  var pred = 0u;
  if (p != 0u) {
    let i = cell / X;
    let j = cell % X;
    let Y = params.planeRows;
    let row = X * f;
    var a = 0u;
    if (j > 0u) { a = valueAt(e - f); }
    pred = a;
    if (p >= 2u) {
      var up = i > 0u;
      if (p == 4u) { up = i % Y != 0u; }
      var b = 0u;
      var ab = 0u;
      if (up) {
        b = valueAt(e - row);
        if (j > 0u) { ab = valueAt(e - row - f); }
      }
      if (p == 2u) {
        pred = b;
      } else {
        pred = a + b - ab;
        if (p == 4u && i >= Y) {
          let plane = row * Y;
          let z = valueAt(e - plane);
          var az = 0u;
          var bz = 0u;
          var abz = 0u;
          if (j > 0u) { az = valueAt(e - plane - f); }
          if (up) {
            bz = valueAt(e - plane - row);
            if (j > 0u) { abz = valueAt(e - plane - row - f); }
          }
          pred = a + b + z - ab - az - bz + abz;
        }
      }
    }
  }
  let d = (u - pred) & MASK;
  if (params.zigzag == 0u) { return d; }
  return ((d << 1u) ^ (0u - (d >> (8u * W - 1u)))) & MASK;
}

@compute @workgroup_size(WG)
fn predictEncode(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wid: vec3<u32>,
                 @builtin(num_workgroups) nwg: vec3<u32>) {
  let g = (wid.y * nwg.x + wid.x) * WG + tid;
  if (g >= params.words) { return; }
  let unitWords = params.stride / PER;
  let unit = g / unitWords;
  let q = g % unitWords;
  let f = params.fields;
  let c = unit / f;
  let k = unit % f;
  let base = c * params.chunk;
  let count = min(params.chunk, params.count - base);
  let cells = count / f;
  if (cells == 0u) {
    resid[g] = 0u;
    return;
  }
  var X = params.rowCells;
  if (X == 0u) { X = cells; }
  var word = 0u;
  for (var t = 0u; t < PER; t++) {
    let cell = min(q * PER + t, cells - 1u);
    word |= residual(base, X, k, cell) << (t * 8u * W);
  }
  resid[g] = word;
}
