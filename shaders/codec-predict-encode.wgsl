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
// left, up, lorenzo2, lorenzo3 and med (LOCO-I's median edge detector: from the input's values, so
// no less parallel than the others) with neighbours outside the chunk 0; the bits, the
// float-order map, or the decimal map (ALP) at each chunk's exponents: an element whose i32 value
// v = round(x 10^e) (or v -+ 1) does not decode to its bits exactly (decimal-f32.wgsl, the CPU's
// f32(f64(v) x F[e])) is an exception, its value 0 in the planes; `predictExceptions` lists each
// chunk's (atomically, in any order: the host sorts them), and a chunk with more than count / 64
// of them, or without exponents, takes the float-order map (as the CPU path's writer does).
// f64's decimal map (map 4, W = 4, an element's pair of words): v = round(x 10^e) as an i64 from
// the exact product of x's mantissa and 5^e (u32 words), an exception unless |v| < 2^52 and
// f64(v) / 10^e has x's bits (decimal-f64.wgsl decimalBits64, the decoder's long division);
// an exception's v in the planes is that product's all the same (the decoder puts the listed
// bits over whatever its v decodes to). With `zigzag` 0 (predictor none, one field, the bits)
// the residuals are the elements themselves: the chunks copied to whole words at the stride, for
// a chunk length that does not end on one. Composed by ts/codec/gpu/predict-encode.ts
// (`const WG` = 256, `const W` element bytes, `const MASK` their bits).

struct Params {
  count: u32,     // elements of the array
  chunk: u32,     // C: elements a chunk (the last may hold fewer)
  fields: u32,    // f: elements a cell
  rowCells: u32,  // X: cells a row; 0: a row is the chunk's cells
  planeRows: u32, // Y: rows a plane
  predictor: u32, // 0 none, 1 left, 2 up, 3 lorenzo2, 4 lorenzo3, 5 med
  map: u32,       // 0 bits, 1 float order (W = 4), 2 decimal (f32), 3 float order and 4 decimal of 8-byte elements (W = 4: words 2j, 2j + 1 an element's low and high)
  stride: u32,    // elements from one unit's residuals to the next (whole words)
  words: u32,     // output words in all (units x stride x W / 4)
  zigzag: u32,    // 1: residuals zigzagged; 0: the values as they are
  listStride: u32, // decimal map: exceptions a chunk's list holds (C / 64 of its elements; of 8-byte ones two entries each)
  elements: u32,   // predictExceptions: invocations (the array's elements)
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> input: array<u32>;
@group(0) @binding(2) var<storage, read_write> resid: array<u32>;
// the decimal map: words 0..56 the factors (decimal-f32.wgsl), 57..94 the powers 10^e
// (decimal-f64.wgsl), then chunk c's exponents at 95 + c x fields, a word a field (0xFFFFFFFF in
// its first: the chunk has none; of 8-byte elements each element field's twice, a word field each)
@group(0) @binding(3) var<storage, read> decimal: array<u32>;
// per chunk: its exceptions (counted past the list's room too)
@group(0) @binding(4) var<storage, read_write> exceptionCount: array<atomic<u32>>;
// chunk c's exceptions at c x listStride: (element index in the chunk, its bits); of 8-byte
// elements two entries each, (index, low word) then (high word, 0)
@group(0) @binding(5) var<storage, read_write> exceptionList: array<vec2<u32>>;

const PER: u32 = 4u / W;
const EXPONENTS_AT: u32 = 95u;

// 10^e as f32 (e = 0..18): the scale of round(x 10^e), checked exactly after.
fn pow10(e: u32) -> f32 {
  var p = 1.0;
  for (var i = 0u; i < e; i++) { p *= 10.0; }
  return p;
}

// The decimal map of element bits `b` at exponent `e`: (v, 1), or (0, 0) for an exception.
fn decimalOf(b: u32, e: u32) -> vec2<u32> {
  // -0, infinities and NaN: exceptions (+0 is v = 0)
  if (b == 0x80000000u || ((b >> 23u) & 0xFFu) == 0xFFu) { return vec2<u32>(0u, 0u); }
  if (b == 0u) { return vec2<u32>(0u, 1u); }
  let s = bitcast<f32>(b) * pow10(e);
  if (abs(s) >= 2147483520.0) { return vec2<u32>(0u, 0u); }
  let r = i32(round(s));
  for (var d = 0; d < 3; d++) {
    let v = r + select(select(1, -1, d == 1), 0, d == 0);
    if (v != 0 && decimalBits(bitcast<u32>(v), e) == b) { return vec2<u32>(bitcast<u32>(v), 1u); }
  }
  return vec2<u32>(0u, 0u);
}

// f64's decimal candidate of the element (low, high) at exponent e: v = round(|x| 10^e), half
// up, signed as x, as an i64's (low, high) words; (0, 0) for a zero, an infinity or a NaN (they
// are exceptions or decode to +0) and where |v| would reach 2^63 (an exception: |v| >= 2^52).
fn decimalCandidate64(low: u32, high: u32, e: u32) -> vec2<u32> {
  let biased = (high >> 20u) & 0x7FFu;
  if (biased == 0x7FFu) { return vec2<u32>(0u, 0u); }
  // x = m 2^q, m < 2^53
  var mh = high & 0xFFFFFu;
  var q = -1074;
  if (biased != 0u) {
    mh |= 0x100000u;
    q = i32(biased) - 1075;
  }
  if ((mh | low) == 0u) { return vec2<u32>(0u, 0u); }
  // 10^e = 5^e 2^e: 5^e (< 2^42) is the table's 10^e (decimal-f64.wgsl's words) shifted down by
  // e, in (pl, ph); then P = m 5^e (< 2^95) in words (p0, p1, p2) (soft-float64.wgsl's product
  // of two significands: both high words below 2^21)
  let tl = decimal[POW10_AT + 2u * e];
  let th = decimal[POW10_AT + 2u * e + 1u];
  var pl = tl;
  var ph = th;
  if (e > 0u) {
    pl = (tl >> e) | (th << (32u - e));
    ph = th >> e;
  }
  let p = multiplySignificands(vec3<u32>(low, mh, 0u), vec3<u32>(pl, ph, 0u));
  let p0 = p.x;
  let p1 = p.y;
  let p2 = p.z;
  let negative = (high >> 31u) != 0u;
  // v = P 2^(q + e), rounded half up where q + e < 0
  let sh = q + i32(e);
  if (sh >= 0) {
    if (sh >= 32 || p2 != 0u) { return vec2<u32>(0u, 0u); }
    let k = u32(sh);
    if (k == 0u) { return signed64(p0, p1, negative); }
    if ((p1 >> (32u - k)) != 0u) { return vec2<u32>(0u, 0u); }
    return signed64(p0 << k, (p1 << k) | (p0 >> (32u - k)), negative);
  }
  let t = u32(-sh);
  if (t > 96u) { return vec2<u32>(0u, 0u); }
  // R = P + 2^(t - 1) (< 2^96), then R >> t
  let half = t - 1u;
  let hb = 1u << (half & 31u);
  var r = array<u32, 6>(p0, p1, p2, 0u, 0u, 0u);
  let hw = half >> 5u;
  let added = r[hw] + hb;
  var carry = select(0u, 1u, added < hb);
  r[hw] = added;
  for (var w = hw + 1u; w < 3u; w += 1u) {
    let x = r[w] + carry;
    carry = select(0u, 1u, x < carry);
    r[w] = x;
  }
  let tw = t >> 5u;
  let tb = t & 31u;
  var vl = r[tw];
  var vh = r[tw + 1u];
  var over = r[tw + 2u];
  if (tb != 0u) {
    vl = (vl >> tb) | (vh << (32u - tb));
    vh = (vh >> tb) | (over << (32u - tb));
    over = over >> tb;
  }
  if (over != 0u || (vh >> 31u) != 0u) { return vec2<u32>(0u, 0u); }
  return signed64(vl, vh, negative);
}

// The i64 words of -|v| where `negative` (|v| < 2^63), else |v|.
fn signed64(low: u32, high: u32, negative: bool) -> vec2<u32> {
  if (!negative) { return vec2<u32>(low, high); }
  let l = ~low + 1u;
  return vec2<u32>(l, ~high + select(0u, 1u, l == 0u));
}

// True when f64's element (low, high) is its decimal candidate's exactly at exponent e: |v| < 2^52
// and f64(v) / 10^e has its bits (-0 never: the candidate of -0 is 0, which decodes to +0).
fn decimalExact64(low: u32, high: u32, e: u32) -> bool {
  let v = decimalCandidate64(low, high, e);
  // |v|: the two's complement of a negative v
  if (signed64(v.x, v.y, (v.y >> 31u) != 0u).y >= 0x100000u) { return false; }
  let bits = decimalBits64(v.x, v.y, e);
  return bits.x == low && bits.y == high;
}

// True when chunk c takes the decimal map: it has exponents, and its exceptions are within count / 64.
fn chunkDecimal(c: u32) -> bool {
  if ((params.map != 2u && params.map != 4u) || decimal[EXPONENTS_AT + c * params.fields] == 0xFFFFFFFFu) { return false; }
  var count = min(params.chunk, params.count - c * params.chunk);
  if (params.map == 4u) { count /= 2u; } // elements, two words each
  return atomicLoad(&exceptionCount[c]) <= count / 64u;
}

// Element i's value under the map (`decimal`: its chunk takes the decimal map).
fn valueAt(i: u32, decimalChunk: bool) -> u32 {
  var b: u32;
  if (W == 4u) {
    b = input[i];
  } else {
    b = (input[i / PER] >> ((i % PER) * 8u * W)) & MASK;
  }
  if (decimalChunk) {
    let c = i / params.chunk;
    let k = (i - c * params.chunk) % params.fields;
    let e = decimal[EXPONENTS_AT + c * params.fields + k];
    if (params.map == 4u) {
      let v = decimalCandidate64(input[i & ~1u], input[i | 1u], e);
      return select(v.x, v.y, (i & 1u) == 1u);
    }
    return decimalOf(b, e).x;
  }
  if (params.map == 3u || params.map == 4u) {
    // an 8-byte element's float order (assembly/predict.ts floatOrderEncode64): its high word
    // decides both (map 4: a chunk the decimal map does not take)
    let top = input[i | 1u] >> 31u;
    return select(b ^ select(0u, 0x80000000u, (i & 1u) == 1u), ~b, top != 0u);
  }
  if (params.map != 0u) {
    return select(~b, b ^ 0x80000000u, (b >> 31u) == 0u);
  }
  return b;
}

// The residual of cell `cell` of field `k` of the chunk whose first element is `base`, rows of `X` cells.
fn residual(base: u32, X: u32, k: u32, cell: u32, dec: bool) -> u32 {
  let f = params.fields;
  let e = base + cell * f + k;
  let u = valueAt(e, dec);
  let p = params.predictor;
  var pred = 0u;
  if (p != 0u) {
    let i = cell / X;
    let j = cell % X;
    let Y = params.planeRows;
    let row = X * f;
    var a = 0u;
    if (j > 0u) { a = valueAt(e - f, dec); }
    pred = a;
    if (p >= 2u) {
      var up = i > 0u;
      if (p == 4u) { up = i % Y != 0u; }
      var b = 0u;
      var ab = 0u;
      if (up) {
        b = valueAt(e - row, dec);
        if (j > 0u) { ab = valueAt(e - row - f, dec); }
      }
      if (p == 2u) {
        pred = b;
      } else if (p == 5u) {
        pred = medPredict(a, b, ab); // shaders/predict-med.wgsl, composed before this file
      } else {
        pred = a + b - ab;
        if (p == 4u && i >= Y) {
          let plane = row * Y;
          let z = valueAt(e - plane, dec);
          var az = 0u;
          var bz = 0u;
          var abz = 0u;
          if (j > 0u) { az = valueAt(e - plane - f, dec); }
          if (up) {
            bz = valueAt(e - plane - row, dec);
            if (j > 0u) { abz = valueAt(e - plane - row - f, dec); }
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
  let dec = chunkDecimal(c);
  var word = 0u;
  for (var t = 0u; t < PER; t++) {
    let cell = min(q * PER + t, cells - 1u);
    word |= residual(base, X, k, cell, dec) << (t * 8u * W);
  }
  resid[g] = word;
}

// The decimal map's exceptions: one invocation an element of a chunk with exponents (W = 4; of
// 8-byte elements an invocation an element, its words 2i and 2i + 1).
@compute @workgroup_size(WG)
fn predictExceptions(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wid: vec3<u32>,
                     @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = (wid.y * nwg.x + wid.x) * WG + tid;
  if (i >= params.elements) { return; }
  if (params.map == 4u) {
    let word = 2u * i;
    let c = word / params.chunk;
    if (decimal[EXPONENTS_AT + c * params.fields] == 0xFFFFFFFFu) { return; }
    let k = (word - c * params.chunk) % params.fields;
    let low = input[word];
    let high = input[word + 1u];
    if (decimalExact64(low, high, decimal[EXPONENTS_AT + c * params.fields + k])) { return; }
    let at = atomicAdd(&exceptionCount[c], 1u);
    if (at < params.listStride) {
      let slot = c * 2u * params.listStride + 2u * at;
      exceptionList[slot] = vec2<u32>((word - c * params.chunk) / 2u, low);
      exceptionList[slot + 1u] = vec2<u32>(high, 0u);
    }
    return;
  }
  let c = i / params.chunk;
  let k = (i - c * params.chunk) % params.fields;
  let e = decimal[EXPONENTS_AT + c * params.fields + k];
  if (decimal[EXPONENTS_AT + c * params.fields] == 0xFFFFFFFFu) { return; }
  let b = input[i];
  if (decimalOf(b, e).y == 1u) { return; }
  let at = atomicAdd(&exceptionCount[c], 1u);
  if (at < params.listStride) { exceptionList[c * params.listStride + at] = vec2<u32>(i - c * params.chunk, b); }
}
