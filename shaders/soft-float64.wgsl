// Software arithmetic in u32 words for what WGSL lacks: 32 x 32-bit products, and the f64
// operations of the lossy mode's f64 kernels (codec-quantize-f64.wgsl), each rounded to nearest,
// ties to even, as IEEE 754 binary64 rounds them (so the GPU writes the CPU's bits:
// assembly/quantize.ts quantizeF64 and dequantizeF64 in wasm's f64). Composed before the
// shaders that use it (decimal-f32.wgsl's mul32 too, and codec-predict-encode.wgsl's product of
// f64's mantissa and 5^e).
//
// An f64 is its bits as vec2<u32>(low word, high word); a significand with its scale is
// vec3<u32>(low word, high word, biased exponent): the value (high:low) x 2^(exponent - 1075),
// high < 2^21. A wide integer is vec4<u32>, least significant word first.

// a x b as (high, low) words.
fn mul32(a: u32, b: u32) -> vec2<u32> {
  let a0 = a & 0xFFFFu;
  let a1 = a >> 16u;
  let b0 = b & 0xFFFFu;
  let b1 = b >> 16u;
  let p00 = a0 * b0;
  let p01 = a0 * b1;
  let p10 = a1 * b0;
  let mid = (p00 >> 16u) + (p01 & 0xFFFFu) + (p10 & 0xFFFFu);
  let low = (mid << 16u) | (p00 & 0xFFFFu);
  let high = a1 * b1 + (p01 >> 16u) + (p10 >> 16u) + (mid >> 16u);
  return vec2<u32>(high, low);
}

// The significand and scale of a finite f64 magnitude (the sign ignored): a normal one's with its
// leading 1, a subnormal's (or zero's) as exponent 1.
fn significandOf(b: vec2<u32>) -> vec3<u32> {
  let field = (b.y >> 20u) & 0x7FFu;
  let high = b.y & 0xFFFFFu;
  if (field == 0u) { return vec3<u32>(b.x, high, 1u); }
  return vec3<u32>(b.x, high | 0x100000u, field);
}

// v << s, s in [0, 127].
fn shiftLeft128(v: vec4<u32>, s: u32) -> vec4<u32> {
  var w = v;
  var k = s;
  if (k >= 64u) { w = vec4<u32>(0u, 0u, w.x, w.y); k -= 64u; }
  if (k >= 32u) { w = vec4<u32>(0u, w.x, w.y, w.z); k -= 32u; }
  if (k == 0u) { return w; }
  let r = 32u - k;
  return vec4<u32>(w.x << k, (w.y << k) | (w.x >> r), (w.z << k) | (w.y >> r), (w.w << k) | (w.z >> r));
}

// a < b, unsigned.
fn less128(a: vec4<u32>, b: vec4<u32>) -> bool {
  if (a.w != b.w) { return a.w < b.w; }
  if (a.z != b.z) { return a.z < b.z; }
  if (a.y != b.y) { return a.y < b.y; }
  return a.x < b.x;
}

// a - b for a >= b.
fn subtract128(a: vec4<u32>, b: vec4<u32>) -> vec4<u32> {
  var r: vec4<u32>;
  var borrow = 0u;
  for (var i = 0u; i < 4u; i++) {
    let d = a[i] - b[i];
    r[i] = d - borrow;
    borrow = select(0u, 1u, a[i] < b[i] || d < borrow);
  }
  return r;
}

// a + b (no carry out of the top word).
fn add128(a: vec4<u32>, b: vec4<u32>) -> vec4<u32> {
  var r: vec4<u32>;
  var carry = 0u;
  for (var i = 0u; i < 4u; i++) {
    let s = a[i] + b[i];
    r[i] = s + carry;
    carry = select(0u, 1u, s < a[i] || r[i] < carry);
  }
  return r;
}

// The bits of the f64 nearest n x 2^(e - 1075) (ties to even), n > 0; 0 for n = 0 and for a
// result below the normal range (callers compare those with a normal bound, or never make one).
// The result is not checked for overflow: every caller's is below 2^1000.
fn roundToF64(n: vec4<u32>, e: i32) -> vec2<u32> {
  var top: i32;
  if (n.w != 0u) { top = 127 - i32(countLeadingZeros(n.w)); }
  else if (n.z != 0u) { top = 95 - i32(countLeadingZeros(n.z)); }
  else if (n.y != 0u) { top = 63 - i32(countLeadingZeros(n.y)); }
  else if (n.x != 0u) { top = 31 - i32(countLeadingZeros(n.x)); }
  else { return vec2<u32>(0u, 0u); }
  // the top bit to bit 127: the significand is word 3 and word 2's top 21 bits
  let m = shiftLeft128(n, u32(127 - top));
  var exponent = e + top - 52;
  var high = m.w;
  var low = m.z >> 11u;
  let half = ((m.z >> 10u) & 1u) != 0u;
  let sticky = (m.z & 0x3FFu) != 0u || m.y != 0u || m.x != 0u;
  if (half && (sticky || (low & 1u) != 0u)) {
    low += 1u;
    if (low == 0x200000u) {
      low = 0u;
      high += 1u;
      if (high == 0u) {
        high = 0x80000000u;
        exponent += 1;
      }
    }
  }
  if (exponent < 1) { return vec2<u32>(0u, 0u); }
  return vec2<u32>((high << 21u) | low, (u32(exponent) << 20u) | ((high >> 11u) & 0xFFFFFu));
}

// The exact product of two significands (vec3 as significandOf gives), as a wide integer.
fn multiplySignificands(a: vec3<u32>, b: vec3<u32>) -> vec4<u32> {
  let ll = mul32(a.x, b.x);
  let lh = mul32(a.x, b.y);
  let hl = mul32(a.y, b.x);
  let hh = mul32(a.y, b.y);
  var w1 = ll.x + lh.y;
  var carry = select(0u, 1u, w1 < lh.y);
  w1 += hl.y;
  carry += select(0u, 1u, w1 < hl.y);
  // lh.x, hl.x < 2^21: no overflow
  var w2 = lh.x + hl.x + carry;
  w2 += hh.y;
  let w3 = hh.x + select(0u, 1u, w2 < hh.y);
  return vec4<u32>(ll.y, w1, w2, w3);
}

// The bits of f64(q) x s rounded (q an integer of magnitude below 2^31, s a normal positive f64
// as significandOf gives it): +0 for q = 0, else q's sign.
fn timesInteger(q: i32, s: vec3<u32>) -> vec2<u32> {
  if (q == 0) { return vec2<u32>(0u, 0u); }
  let a = u32(abs(q));
  let lo = mul32(a, s.x);
  let hi = mul32(a, s.y);
  let w1 = lo.x + hi.y;
  let n = vec4<u32>(lo.y, w1, hi.x + select(0u, 1u, w1 < hi.y), 0u);
  let r = roundToF64(n, i32(s.z));
  return vec2<u32>(r.x, r.y | select(0u, 0x80000000u, q < 0));
}

// The bits of the f64 nearest |a - b| (finite a and b): the difference of the magnitudes where
// the signs agree or one is zero, their sum where they differ. Results below the normal range
// are 0 (roundToF64).
fn absDifference(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
  var x = significandOf(a);
  var y = significandOf(b);
  let xZero = (a.y & 0x7FFFFFFFu) == 0u && a.x == 0u;
  let yZero = (b.y & 0x7FFFFFFFu) == 0u && b.x == 0u;
  let apart = !xZero && !yZero && ((a.y ^ b.y) >> 31u) != 0u;
  if (y.z > x.z) {
    let t = x;
    x = y;
    y = t;
  }
  let s = x.z - y.z;
  // y is below a 2^-21 ulp of x: the nearest f64 to x +- y is x (the magnitudes' significands
  // are at most 53 bits; x is whole, the difference rounds back to it)
  if (s > 74u) { return vec2<u32>(x.x, ((x.z << 20u) | (x.y & 0xFFFFFu)) & 0x7FFFFFFFu); }
  let big = shiftLeft128(vec4<u32>(x.x, x.y, 0u, 0u), s);
  let small = vec4<u32>(y.x, y.y, 0u, 0u);
  var n: vec4<u32>;
  if (apart) { n = add128(big, small); }
  else if (less128(big, small)) { n = subtract128(small, big); }
  else { n = subtract128(big, small); }
  return roundToF64(n, i32(y.z));
}

// a < b for f64 magnitudes' bits (sign bits clear).
fn lessMagnitude(a: vec2<u32>, b: vec2<u32>) -> bool {
  return a.y < b.y || (a.y == b.y && a.x < b.x);
}

// a > b for finite f64s (not both zero of opposite signs): the order of the bits with negative
// values' bits reversed.
fn greaterF64(a: vec2<u32>, b: vec2<u32>) -> bool {
  let an = (a.y >> 31u) != 0u;
  let bn = (b.y >> 31u) != 0u;
  if (an != bn) { return bn; }
  let m = vec2<u32>(a.x, a.y & 0x7FFFFFFFu);
  let n = vec2<u32>(b.x, b.y & 0x7FFFFFFFu);
  if (an) { return lessMagnitude(m, n); }
  return lessMagnitude(n, m);
}

// The magnitude of the integer nearest (ties to even) to the f64 magnitude of `b`'s bits, for
// magnitudes below 2^31 (larger ones give 2^31; callers bound them).
fn roundToInteger(b: vec2<u32>) -> u32 {
  let s = significandOf(b);
  // value = (s.y:s.x) x 2^-k
  let k = 1075 - i32(s.z);
  if (k < 22) { return 0x80000000u; }
  if (k >= 54) { return 0u; }
  let ku = u32(k);
  var whole: u32;
  var restHigh = 0u;
  var restLow: u32;
  var halfHigh = 0u;
  var halfLow = 0u;
  if (ku < 32u) {
    whole = (s.x >> ku) | (s.y << (32u - ku));
    restLow = s.x & ((1u << ku) - 1u);
    halfLow = 1u << (ku - 1u);
  } else if (ku == 32u) {
    whole = s.y;
    restLow = s.x;
    halfLow = 0x80000000u;
  } else {
    let j = ku - 32u;
    whole = s.y >> j;
    restHigh = s.y & ((1u << j) - 1u);
    restLow = s.x;
    halfHigh = 1u << (j - 1u);
  }
  let above = restHigh > halfHigh || (restHigh == halfHigh && restLow > halfLow);
  let tie = restHigh == halfHigh && restLow == halfLow;
  if (above || (tie && (whole & 1u) != 0u)) { whole += 1u; }
  return whole;
}
