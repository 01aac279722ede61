// The exception lists of the lossy mode's compress from the device (docs/format.md, "Stage 5:
// quantize"): after the quantize kernel (codec-quantize.wgsl) has coded every element, the
// elements coded 0xFFFFFFFF (exceptions, stored exactly) are listed in index order, a stream
// compaction in two passes around an exclusive scan (ts/codec/gpu/encode-lossy.ts):
//   exceptionFlags: one invocation an element: flags[i] = 1 where codes[i] is the exception code;
//   (exclusive scan of the flags -> pos, and their total E)
//   exceptionList:  one invocation an element: an exception writes its index to indices[pos[i]]
//                   and its bits to values[pos[i]] (an f64's two words to 2 pos[i] and the next).
// Composed by ts/gpu/compose.ts (`const WG` = 256). 2-D grids: wid.y * nwg.x + wid.x.

struct Params {
  n: u32,      // elements
  words: u32,  // exceptionList: words an element (1: f32, 2: f64)
  pad1: u32,
  pad2: u32,
}

const CODE_EXCEPTION: u32 = 0xffffffffu;

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> codes: array<u32>;
@group(0) @binding(2) var<storage, read_write> flags: array<u32>;

fn element(tid: u32, wid: vec3<u32>, nwg: vec3<u32>) -> u32 {
  return (wid.y * nwg.x + wid.x) * WG + tid;
}

@compute @workgroup_size(WG)
fn exceptionFlags(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wid: vec3<u32>,
                  @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = element(tid, wid, nwg);
  if (i >= params.n) { return; }
  flags[i] = select(0u, 1u, codes[i] == CODE_EXCEPTION);
}

@group(0) @binding(3) var<storage, read> pos: array<u32>;
@group(0) @binding(4) var<storage, read> elements: array<u32>;
@group(0) @binding(5) var<storage, read_write> indices: array<u32>;
@group(0) @binding(6) var<storage, read_write> values: array<u32>;

@compute @workgroup_size(WG)
fn exceptionList(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wid: vec3<u32>,
                 @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = element(tid, wid, nwg);
  if (i >= params.n || codes[i] != CODE_EXCEPTION) { return; }
  indices[pos[i]] = i;
  for (var k = 0u; k < params.words; k++) {
    values[pos[i] * params.words + k] = elements[i * params.words + k];
  }
}
