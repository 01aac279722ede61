// Stage 5 of docs/format.md (quantize): the WGSL twin of assembly/quantize.ts, the same bytes.
//   quantize    one invocation per f32 element: its u32 code and its reconstruction
//   dequantize  one invocation per code: the f32 element (0 for an exception); aux[0] set to 1
//               when a code is neither quantized nor reserved (a corrupt payload); counts[0]
//               counts the exception codes
//   scatter     one invocation per exception: writes its bits over the output, where its index
//               is in range, above the one before, and at an exception code (else counts[1])
// Codes and elements may lie at word offsets of their buffers (srcBase, dstBase, codesBase), so
// a chunk's codes and elements can sit anywhere in a container-wide buffer.
//
// Same bytes as the CPU: specials are told apart by their bits (integer compares, never a float
// op on NaN or Infinity, which WGSL leaves undefined), magnitudes past `limBits` are not
// multiplied (no overflow), and every float op is one f32 *, - or round() of WGSL, correctly
// rounded (ties to even), on normal numbers: the bound is >= 2^-120, so a subnormal input, which
// a GPU may flush to zero, always has q = 0 and |x - 0| < tol on both paths. Products are passed
// through bitcast so no fused multiply-add can skip their rounding.

struct Params {
  n: u32,          // elements (or exceptions, for scatter)
  step: f32,
  inv: f32,
  tol: f32,
  limBits: u32,    // quantize: bits of f32(step x 2^23); scatter: the elements
  srcBase: u32,    // first word of `src` (dequantize: the codes)
  dstBase: u32,    // first word of `dst` (dequantize, scatter: the elements)
  codesBase: u32,  // first word of `codes` (scatter)
}

// The reserved codes and the bindings: codec-quantize-common.wgsl, composed before this file.
const CODE_MAX: u32 = 0x2000000u;
const CANONICAL_NAN: u32 = 0x7fc00000u;

fn specialCode(b: u32) -> u32 {
  let a = b & 0x7fffffffu;
  if (b == CANONICAL_NAN) { return CODE_NAN; }
  if (a == 0x7f800000u) { return select(CODE_POS_INF, CODE_NEG_INF, (b >> 31u) != 0u); }
  if (b == 0x80000000u) { return CODE_NEG_ZERO; }
  return CODE_EXCEPTION;
}

fn specialBits(c: u32) -> u32 {
  if (c == CODE_NAN) { return CANONICAL_NAN; }
  if (c == CODE_POS_INF) { return 0x7f800000u; }
  if (c == CODE_NEG_INF) { return 0xff800000u; }
  if (c == CODE_NEG_ZERO) { return 0x80000000u; }
  return 0u;
}

// f32(q) * step, rounded to f32 (the bitcast round trip pins the rounding)
fn recon(q: i32) -> f32 {
  return bitcast<f32>(bitcast<u32>(f32(q) * params.step));
}

// src: the elements' bits; dst: codes; aux: reconstructions' bits
@compute @workgroup_size(256)
fn quantize(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let i = gid.x + gid.y * groups.x * 256u;
  if (i >= params.n) { return; }
  let b = src[i];
  if ((b & 0x7fffffffu) > params.limBits || b == 0x80000000u) {
    dst[i] = specialCode(b);
    aux[i] = b;
    return;
  }
  let x = bitcast<f32>(b);
  var q = i32(round(bitcast<f32>(bitcast<u32>(x * params.inv))));
  var r = recon(q);
  if (abs(x - r) >= params.tol) {
    q += select(-1, 1, x > r);
    r = recon(q);
    if (abs(x - r) >= params.tol) {
      dst[i] = CODE_EXCEPTION;
      aux[i] = b;
      return;
    }
  }
  dst[i] = u32((q << 1u) ^ (q >> 31u));
  aux[i] = bitcast<u32>(r);
}

// src: codes; dst: the elements' bits; aux[0] = 1 on an invalid code (every writer stores 1)
@compute @workgroup_size(256)
fn dequantize(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let i = gid.x + gid.y * groups.x * 256u;
  if (i >= params.n) { return; }
  let c = src[params.srcBase + i];
  let o = params.dstBase + i;
  if (c <= CODE_MAX) {
    let q = i32((c >> 1u) ^ (0u - (c & 1u)));
    dst[o] = bitcast<u32>(recon(q));
    return;
  }
  if (c < CODE_NEG_ZERO) {
    aux[0] = 1u;
    dst[o] = 0u;
    return;
  }
  if (c == CODE_EXCEPTION) { atomicAdd(&counts[0], 1u); }
  dst[o] = specialBits(c);
}

// src: from srcBase, exception indices (n of them) then their bits; dst: the elements' bits; codes: the codes
@compute @workgroup_size(256)
fn scatter(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let j = gid.x + gid.y * groups.x * 256u;
  if (j >= params.n) { return; }
  let at = exceptionTarget(j, params.limBits);
  if (at == 0xFFFFFFFFu) { return; }
  dst[params.dstBase + at] = src[params.srcBase + params.n + j];
}
