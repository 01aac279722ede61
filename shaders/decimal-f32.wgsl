// The decimal map's decode of one f32 (docs/format.md, "Stage 7: predict", map 2), shared by
// codec-predict.wgsl (decode) and codec-predict-encode.wgsl (the encoder's exactness check): it
// reads the factors' table from the including shader's `decimal` buffer (words 0..56: for e =
// 0..18 the f64 nearest 10^-e as its 53-bit mantissa, high 21 bits with the leading 1 then low 32
// bits, and the power of two of its last bit; ts/codec/gpu/predict.ts decimalFactors).

// The CPU decodes an f32 element as f32(f64(v) x F[e]) (assembly/predict.ts decimalDecodeF32):
// the product rounded to f64, then to f32, both to nearest even. WGSL has no f64, so the exact
// product |v| x M (M the factor's 53-bit mantissa) is formed in three u32 words and rounded the
// same two ways (mul32: soft-float64.wgsl, composed before this file). |v| <= 2^31 and F >= 1e-18:
// no overflow, no subnormal result.

// The f32 bits of f32(f64(v) x F[e]), v the element's i32 bits.
fn decimalBits(v: u32, e: u32) -> u32 {
  let sign = v & 0x80000000u;
  let m = select(v, 0u - v, sign != 0u);
  if (m == 0u) { return 0u; }
  let mhi = decimal[3u * e];
  let mlo = decimal[3u * e + 1u];
  let lastBit = bitcast<i32>(decimal[3u * e + 2u]);
  // the 96-bit product (w2, w1, w0)
  let lo = mul32(m, mlo);
  let hi = mul32(m, mhi);
  let w0 = lo.y;
  let w1 = lo.x + hi.y;
  let w2 = hi.x + select(0u, 1u, w1 < lo.x);
  // its top bit h, then the product shifted up so that bit is bit 95 of (n2, n1, n0)
  var h: u32;
  var n2 = w2;
  var n1 = w1;
  var n0 = w0;
  if (w2 != 0u) { h = 95u - countLeadingZeros(w2); }
  else if (w1 != 0u) { h = 63u - countLeadingZeros(w1); n2 = w1; n1 = w0; n0 = 0u; }
  else { h = 31u - countLeadingZeros(w0); n2 = w0; n1 = 0u; n0 = 0u; }
  let s = countLeadingZeros(n2);
  if (s != 0u) {
    n2 = (n2 << s) | (n1 >> (32u - s));
    n1 = (n1 << s) | (n0 >> (32u - s));
    n0 = n0 << s;
  }
  var exponent = i32(h) + lastBit;
  // to f64: 53 bits (n2 and n1's top 21), to nearest even
  var qHi = n2;
  var qLo = n1 >> 11u;
  let round1 = ((n1 >> 10u) & 1u) != 0u;
  let sticky1 = (n1 & 0x3FFu) != 0u || n0 != 0u;
  if (round1 && (sticky1 || (qLo & 1u) != 0u)) {
    qLo += 1u;
    if (qLo == 0x200000u) {
      qLo = 0u;
      qHi += 1u;
      if (qHi == 0u) { qHi = 0x80000000u; exponent += 1; }
    }
  }
  // to f32: 24 bits, to nearest even
  var mant = qHi >> 8u;
  let round2 = ((qHi >> 7u) & 1u) != 0u;
  let sticky2 = (qHi & 0x7Fu) != 0u || qLo != 0u;
  if (round2 && (sticky2 || (mant & 1u) != 0u)) {
    mant += 1u;
    if (mant == 0x1000000u) { mant = 0x800000u; exponent += 1; }
  }
  return sign | (u32(exponent + 127) << 23u) | (mant & 0x7FFFFFu);
}

