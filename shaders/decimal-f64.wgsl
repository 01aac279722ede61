// The decimal map's decode of one f64 (docs/format.md, "Stage 7: predict", map 2 of 8-byte
// elements), for codec-predict.wgsl and for codec-predict-encode.wgsl's exactness check: it
// reads 10^e from the including shader's `decimal` buffer (words POW10_AT + 2e, + 2e + 1: the
// integer's low and high words, e = 0..18; ts/codec/gpu/predict.ts DECIMAL_POWERS).

// The CPU decodes an f64 element as f64(v) / 10^e (assembly/predict.ts decimalDecodeF64): v, an
// i64, rounded to f64 (exact below 2^53, where every valid element lies), then the quotient of
// two exact values rounded, both to nearest even. WGSL has no f64 and no 64-bit integers, so the
// quotient is found by long division in u32 words: 54 or 55 bits of it and the remainder, from
// which the 53-bit mantissa is rounded as the division would.

const POW10_AT = 57u;

// Bits in the u64 (high, low) (0 for 0).
fn bitLength64(high: u32, low: u32) -> u32 {
  return select(32u - countLeadingZeros(low), 64u - countLeadingZeros(high), high != 0u);
}

// The f64 bits (low, high) of f64(v) / 10^e, v the element's i64 as its (low, high) words.
fn decimalBits64(low: u32, high: u32, e: u32) -> vec2<u32> {
  let negative = (high >> 31u) != 0u;
  // |v| (2^63 for the least i64: as a u64 it is right)
  var ml = low;
  var mh = high;
  if (negative) {
    ml = ~low + 1u;
    mh = ~high + select(0u, 1u, ml == 0u);
  }
  if ((mh | ml) == 0u) { return vec2<u32>(0u, 0u); }
  // f64(v): |v| of more than 53 bits rounded to 53, to nearest even (its power of two in `s`)
  var s = 0u;
  let bits = bitLength64(mh, ml);
  if (bits > 53u) {
    s = bits - 53u; // 1..11
    let below = ml & ((1u << (s - 1u)) - 1u);
    let half = (ml >> (s - 1u)) & 1u;
    ml = (ml >> s) | (mh << (32u - s));
    mh = mh >> s;
    if (half != 0u && (below != 0u || (ml & 1u) != 0u)) {
      ml += 1u;
      if (ml == 0u) { mh += 1u; }
      if (mh == 0x200000u) { // 2^53: one bit more
        mh = 0x100000u;
        s += 1u;
      }
    }
  }
  let dl = decimal[POW10_AT + 2u * e];
  let dh = decimal[POW10_AT + 2u * e + 1u];
  // q = floor(m 2^t / 10^e) with t such that q lies in [2^53, 2^55); r the remainder (< 10^e < 2^60)
  let bm = bitLength64(mh, ml);
  let t = 54u + bitLength64(dh, dl) - bm;
  var rl = 0u;
  var rh = 0u;
  var ql = 0u;
  var qh = 0u;
  for (var i = 0u; i < bm + t; i += 1u) {
    var bit = 0u;
    if (i < bm) {
      let p = bm - 1u - i;
      if (p >= 32u) { bit = (mh >> (p - 32u)) & 1u; } else { bit = (ml >> p) & 1u; }
    }
    rh = (rh << 1u) | (rl >> 31u);
    rl = (rl << 1u) | bit;
    qh = (qh << 1u) | (ql >> 31u);
    ql = ql << 1u;
    if (rh > dh || (rh == dh && rl >= dl)) {
      let borrow = select(0u, 1u, rl < dl);
      rl -= dl;
      rh = rh - dh - borrow;
      ql |= 1u;
    }
  }
  // the 53-bit mantissa, the first bit below it and whether any bit further down is set
  var drop = 1u;
  if (qh >= 0x400000u) { drop = 2u; } // q >= 2^54
  let half = (ql >> (drop - 1u)) & 1u;
  let sticky = (rl | rh) != 0u || (drop == 2u && (ql & 1u) != 0u);
  var fl = (ql >> drop) | (qh << (32u - drop));
  var fh = qh >> drop;
  // value = mantissa x 2^x, x = s - t + drop (as an i32)
  var x = i32(s) - i32(t) + i32(drop);
  if (half != 0u && (sticky || (fl & 1u) != 0u)) {
    fl += 1u;
    if (fl == 0u) { fh += 1u; }
    if (fh == 0x200000u) {
      fh = 0x100000u;
      x += 1;
    }
  }
  // a normal f64 (1e-18 <= |value| < 2^64): biased exponent 1023 + 52 + x
  let biased = u32(1075 + x);
  let signBit = select(0u, 0x80000000u, negative);
  return vec2<u32>(fl, signBit | (biased << 20u) | (fh & 0xFFFFFu));
}
