// Stage 5 of docs/format.md (quantize) for f64 elements: the WGSL twin of assembly/quantize.ts
// quantizeF64 / dequantizeF64 / scatterExceptions64, the same codes and bits. WGSL has no f64:
// every f64 operation is soft-float64.wgsl's (composed before this file), exact then rounded to
// nearest even once, as the CPU's f64 * and - round. The entry points and bindings are those of
// codec-quantize.wgsl (the f32 kernels), an element two words (low, high):
//   quantize    one invocation per element: its u32 code and its reconstruction's bits
//   dequantize  one invocation per code: the element's bits (0 for an exception); aux[0] set to 1
//               when a code is neither quantized nor reserved (a corrupt payload); counts[0]
//               counts the exception codes
//   scatter     one invocation per exception: writes its bits over the output, where its index
//               is in range, above the one before, and at an exception code (else counts[1])
// The quantizer (assembly/quantize.ts quantizeOne64): specials and magnitudes past `lim` (bits
// compared) get a reserved code; else y = roundEven(x * inv), x' = y * step, accepted when
// |x - x'| < tol; else y + sign(x - x'); else an exception. A subnormal or zero x has
// |x * inv| < 2^-62 (inv <= 2^960), so y = 0 without the product.

struct Params {
  n: u32,          // elements (or exceptions, for scatter)
  srcBase: u32,    // first word of `src` (dequantize: the codes; scatter: the exception list)
  dstBase: u32,    // first word of `dst` (dequantize, scatter: the elements)
  codesBase: u32,  // first word of `codes` (scatter)
  elements: u32,   // scatter: the chunk's elements
  pad0: u32,
  pad1: u32,
  pad2: u32,
  step: vec2<u32>, // f64 bits (low, high) of the step, 1 / step, the bound and step x 2^30
  inv: vec2<u32>,
  tol: vec2<u32>,
  lim: vec2<u32>,
}

// The reserved codes and the bindings: codec-quantize-common.wgsl, composed before this file.
const CODE_MAX: u32 = 0x80000000u;

// The reserved code of an element (bits b) the arithmetic does not take.
fn specialCode(b: vec2<u32>) -> u32 {
  if (b.y == 0x7ff80000u && b.x == 0u) { return CODE_NAN; }
  if ((b.y & 0x7fffffffu) == 0x7ff00000u && b.x == 0u) { return select(CODE_POS_INF, CODE_NEG_INF, (b.y >> 31u) != 0u); }
  if (b.y == 0x80000000u && b.x == 0u) { return CODE_NEG_ZERO; }
  return CODE_EXCEPTION;
}

// The bits (high word) of a reserved code's element; 0 for CODE_EXCEPTION (the low word is 0).
fn specialHigh(c: u32) -> u32 {
  if (c == CODE_NAN) { return 0x7ff80000u; }
  if (c == CODE_POS_INF) { return 0x7ff00000u; }
  if (c == CODE_NEG_INF) { return 0xfff00000u; }
  if (c == CODE_NEG_ZERO) { return 0x80000000u; }
  return 0u;
}

fn store2(i: u32, v: vec2<u32>) {
  dst[i] = v.x;
  dst[i + 1u] = v.y;
}

fn storeAux(i: u32, v: vec2<u32>) {
  aux[2u * i] = v.x;
  aux[2u * i + 1u] = v.y;
}

// src: the elements' bits (two words each); dst: codes; aux: reconstructions' bits
@compute @workgroup_size(256)
fn quantize(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let i = gid.x + gid.y * groups.x * 256u;
  if (i >= params.n) { return; }
  let b = vec2<u32>(src[2u * i], src[2u * i + 1u]);
  let magnitude = vec2<u32>(b.x, b.y & 0x7fffffffu);
  if (lessMagnitude(params.lim, magnitude) || (b.y == 0x80000000u && b.x == 0u)) {
    dst[i] = specialCode(b);
    storeAux(i, b);
    return;
  }
  let negative = (b.y >> 31u) != 0u;
  let stepSig = significandOf(params.step);
  var y = 0;
  if (((b.y >> 20u) & 0x7ffu) != 0u) {
    let x = significandOf(b);
    let v = significandOf(params.inv);
    let z = roundToF64(multiplySignificands(x, v), i32(x.z + v.z) - 1075);
    y = i32(roundToInteger(z));
    if (negative) { y = -y; }
  }
  var r = timesInteger(y, stepSig);
  if (!lessMagnitude(absDifference(b, r), params.tol)) {
    y += select(-1, 1, greaterF64(b, r));
    r = timesInteger(y, stepSig);
    if (!lessMagnitude(absDifference(b, r), params.tol)) {
      dst[i] = CODE_EXCEPTION;
      storeAux(i, b);
      return;
    }
  }
  dst[i] = u32((y << 1u) ^ (y >> 31u));
  storeAux(i, r);
}

// src: codes; dst: the elements' bits; aux[0] = 1 on an invalid code (every writer stores 1)
@compute @workgroup_size(256)
fn dequantize(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let i = gid.x + gid.y * groups.x * 256u;
  if (i >= params.n) { return; }
  let c = src[params.srcBase + i];
  let o = params.dstBase + 2u * i;
  if (c <= CODE_MAX) {
    let q = i32((c >> 1u) ^ (0u - (c & 1u)));
    store2(o, timesInteger(q, significandOf(params.step)));
    return;
  }
  if (c < CODE_NEG_ZERO) {
    aux[0] = 1u;
    store2(o, vec2<u32>(0u, 0u));
    return;
  }
  if (c == CODE_EXCEPTION) { atomicAdd(&counts[0], 1u); }
  store2(o, vec2<u32>(0u, specialHigh(c)));
}

// src: from srcBase, exception indices (n of them) then their bits (two words each); dst: the
// elements' bits; codes: the codes
@compute @workgroup_size(256)
fn scatter(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let j = gid.x + gid.y * groups.x * 256u;
  if (j >= params.n) { return; }
  let at = exceptionTarget(j, params.elements);
  if (at == 0xFFFFFFFFu) { return; }
  let bits = params.srcBase + params.n + 2u * j;
  store2(params.dstBase + 2u * at, vec2<u32>(src[bits], src[bits + 1u]));
}
