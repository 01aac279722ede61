// What the quantize stage's f32 and f64 kernels share (codec-quantize.wgsl,
// codec-quantize-f64.wgsl; composed before either by ts/codec/gpu/quantize.ts): the reserved codes
// of docs/format.md ("Stage 5: quantize"; assembly/quantize.ts), the bindings, whose `Params`
// each kernel's file declares (the f64 kernels' parameters are f64 bit pairs; both have n,
// srcBase and codesBase), and the scatter's checks of an exception.

const CODE_EXCEPTION: u32 = 0xffffffffu;
const CODE_NAN: u32 = 0xfffffffeu;
const CODE_POS_INF: u32 = 0xfffffffdu;
const CODE_NEG_INF: u32 = 0xfffffffcu;
const CODE_NEG_ZERO: u32 = 0xfffffffbu;

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> src: array<u32>;
@group(0) @binding(2) var<storage, read_write> dst: array<u32>;
@group(0) @binding(3) var<storage, read_write> aux: array<u32>;
// [0]: exception codes that dequantize met; [1]: exceptions that scatter refused
@group(0) @binding(4) var<storage, read_write> counts: array<atomic<u32>>;
@group(0) @binding(5) var<storage, read> codes: array<u32>;

// Where exception j of the list at src[srcBase] (n indices, then the bits) goes: its index, or
// 0xFFFFFFFF (counted in counts[1]) where it is not above the index before it, not below
// `elements`, or not at an exception code (the CPU decoder's checks).
fn exceptionTarget(j: u32, elements: u32) -> u32 {
  let at = src[params.srcBase + j];
  let ordered = j == 0u || src[params.srcBase + j - 1u] < at;
  if (!ordered || at >= elements || codes[params.codesBase + at] != CODE_EXCEPTION) {
    atomicAdd(&counts[1], 1u);
    return 0xFFFFFFFFu;
  }
  return at;
}
