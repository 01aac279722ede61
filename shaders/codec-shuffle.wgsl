// Byte-plane shuffle of docs/format.md (Blosc's shuffle): n elements of W bytes (2 or 4)
// <-> W planes of n bytes, plane k holding byte k of every element. One invocation per 4
// elements: it reads or writes one word of every plane and W words of elements.
//   shuffle:    elements (src) -> planes (dst)
//   unshuffle:  planes (src) -> elements (dst)
// Elements and planes are packed in u32 words, little endian; `params.elements` and
// `params.planes` are word offsets in their bound buffers (bound at 256-byte aligned offsets).
// Output bytes past the end (the last word of each plane, the last word of the elements) are
// written as zero. Composed by ts/gpu/compose.ts (`const WG` = 256 and `const W` prepended).

struct Params {
  n: u32,         // elements
  groups: u32,    // ceil(n / 4): invocations that work
  elements: u32,  // word offset of the elements
  pad: u32,
  planes: vec4<u32>, // word offset of each plane (planes W.. unused)
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> src: array<u32>;
@group(0) @binding(2) var<storage, read_write> dst: array<u32>;

// Elements of group q that exist (1..4).
fn present(q: u32) -> u32 {
  return min(4u, params.n - q * 4u);
}

// The plane words of group q (its m present elements of the elements at word `elements` of
// `src`): byte k of element e is byte e of plane word k; bytes of absent elements are 0.
fn planesOfGroup(elements: u32, q: u32, m: u32) -> vec4<u32> {
  var planeWords = vec4<u32>(0u);
  for (var e = 0u; e < m; e += 1u) {
    let i = q * 4u + e;                         // element
    let word = src[elements + (i * W) / 4u];
    let shift = ((i * W) % 4u) * 8u;            // bit of the element's first byte in its word
    for (var k = 0u; k < W; k += 1u) {
      let v8 = (word >> (shift + k * 8u)) & 0xFFu;
      planeWords[k] |= v8 << (e * 8u);
    }
  }
  return planeWords;
}

// The inverse: the group's m elements from its plane words, as the W words they fill (words past
// the elements' bytes, and bytes of a partial last word, are 0).
fn elementsOfGroup(planeWords: vec4<u32>, m: u32) -> array<u32, 4> {
  var res = array<u32, 4>(0u, 0u, 0u, 0u);
  for (var e = 0u; e < m; e += 1u) {
    let b = e * W;                              // byte of element e in the group's output
    for (var k = 0u; k < W; k += 1u) {
      let v8 = (planeWords[k] >> (e * 8u)) & 0xFFu;
      res[(b + k) / 4u] |= v8 << (((b + k) % 4u) * 8u);
    }
  }
  return res;
}

@compute @workgroup_size(WG)
fn shuffle(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wid: vec3<u32>,
           @builtin(num_workgroups) nwg: vec3<u32>) {
  let q = (wid.y * nwg.x + wid.x) * WG + tid;
  if (q >= params.groups) { return; }
  let planeWords = planesOfGroup(params.elements, q, present(q));
  for (var k = 0u; k < W; k += 1u) { dst[params.planes[k] + q] = planeWords[k]; }
}

@compute @workgroup_size(WG)
fn unshuffle(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wid: vec3<u32>,
             @builtin(num_workgroups) nwg: vec3<u32>) {
  let q = (wid.y * nwg.x + wid.x) * WG + tid;
  if (q >= params.groups) { return; }
  let m = present(q);
  var planeWords = vec4<u32>(0u);
  for (var k = 0u; k < W; k += 1u) { planeWords[k] = src[params.planes[k] + q]; }
  var res = elementsOfGroup(planeWords, m);
  let words = (m * W + 3u) / 4u;                // words holding the group's elements
  for (var j = 0u; j < words; j += 1u) { dst[params.elements + q * W + j] = res[j]; }
}

// ---- unshuffle of many chunks in one dispatch --------------------------------------------------
// Job j: a chunk of n elements whose planes lie at plane word offsets in `src` and whose elements
// go to word `elements` of `dst`; its groups of 4 elements are numbered after those of the jobs
// before it (from firstGroup). An invocation finds its job by binary search over firstGroup.

struct ChunkParams {
  jobs: u32,
  groups: u32, // groups of all jobs
  pad0: u32,
  pad1: u32,
}

struct ShuffleJob {
  elements: u32,
  n: u32,
  firstGroup: u32,
  pad: u32,
  planes: vec4<u32>,
}

@group(0) @binding(3) var<uniform> cparams: ChunkParams;
@group(0) @binding(4) var<storage, read> jobs: array<ShuffleJob>;

// The job whose groups hold global group g: the last with firstGroup <= g (the first one's is 0).
fn jobOfGroup(g: u32) -> ShuffleJob {
  var lo = 0u;
  var hi = cparams.jobs;
  while (hi - lo > 1u) {
    let mid = (lo + hi) / 2u;
    if (jobs[mid].firstGroup <= g) { lo = mid; } else { hi = mid; }
  }
  return jobs[lo];
}

@compute @workgroup_size(WG)
fn unshuffleChunks(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wid: vec3<u32>,
                   @builtin(num_workgroups) nwg: vec3<u32>) {
  let g = (wid.y * nwg.x + wid.x) * WG + tid;
  if (g >= cparams.groups) { return; }
  let job = jobOfGroup(g);
  let q = g - job.firstGroup;
  let m = min(4u, job.n - q * 4u);
  var planeWords = vec4<u32>(0u);
  for (var k = 0u; k < W; k += 1u) { planeWords[k] = src[job.planes[k] + q]; }
  var res = elementsOfGroup(planeWords, m);
  let words = (m * W + 3u) / 4u;
  for (var j = 0u; j < words; j += 1u) { dst[job.elements + q * W + j] = res[j]; }
}

// The shuffle of many chunks in one dispatch: the same jobs, elements (src) -> planes (dst).
@compute @workgroup_size(WG)
fn shuffleChunks(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wid: vec3<u32>,
                 @builtin(num_workgroups) nwg: vec3<u32>) {
  let g = (wid.y * nwg.x + wid.x) * WG + tid;
  if (g >= cparams.groups) { return; }
  let job = jobOfGroup(g);
  let q = g - job.firstGroup;
  let planeWords = planesOfGroup(job.elements, q, min(4u, job.n - q * 4u));
  for (var k = 0u; k < W; k += 1u) { dst[job.planes[k] + q] = planeWords[k]; }
}
