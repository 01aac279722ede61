// Byte gather: copies byte ranges of `src` (any alignment) to byte ranges of `dst` (any
// alignment), for the container's payloads assembled on the GPU (ts/codec/gpu/encode.ts).
// One invocation per destination word of a job (2-D grid: wid.y * nwg.x + wid.x): it finds its
// job (binary search of the jobs' first words), reads the source bytes of its word (one word, a
// funnel shift of two, or byte by byte at a range's ends) and writes the word. Words shared with
// a neighbouring job are ORed in (atomicOr into a cleared destination); whole words are stored.
// Jobs never overlap in `dst`; ts/codec/gpu/gather.ts clears `dst`'s ranges first and binds both
// buffers at aligned offsets (job offsets are relative to them).
// Composed by ts/gpu/compose.ts (`const WG` = 256 prepended).

struct Params {
  words: u32,  // destination words over all jobs of this dispatch
  jobs: u32,   // entries of `jobs`
  pad0: u32,
  pad1: u32,
}

struct Job {
  src: u32,        // byte offset of the source range in the bound `src`
  dst: u32,        // byte offset of the destination range in the bound `dst`
  bytes: u32,      // byte length (> 0)
  firstWord: u32,  // index of the job's first destination word over the dispatch (ascending)
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> jobs: array<Job>;
@group(0) @binding(2) var<storage, read> src: array<u32>;
@group(0) @binding(3) var<storage, read_write> dst: array<atomic<u32>>;

fn srcByte(b: u32) -> u32 {
  return (src[b >> 2u] >> ((b & 3u) * 8u)) & 0xFFu;
}

@compute @workgroup_size(WG)
fn gather(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wid: vec3<u32>,
          @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = (wid.y * nwg.x + wid.x) * WG + tid;
  if (i >= params.words) { return; }
  // the last job whose first word is at or before i
  var lo = 0u;
  var hi = params.jobs - 1u;
  while (lo < hi) {
    let mid = lo + (hi - lo + 1u) / 2u;
    if (jobs[mid].firstWord <= i) { lo = mid; } else { hi = mid - 1u; }
  }
  let j = jobs[lo];
  let w = (j.dst >> 2u) + (i - j.firstWord);       // the destination word
  let a = max(w * 4u, j.dst);                        // its bytes [a, b) that belong to the job
  let b = min(w * 4u + 4u, j.dst + j.bytes);
  let s = j.src + (a - j.dst);                       // the source byte of destination byte a
  var word = 0u;
  if (b - a == 4u) {
    let k = s >> 2u;
    let off = (s & 3u) * 8u;
    if (off == 0u) {
      word = src[k];
    } else {
      // bytes s..s+3 span words k and k + 1, both inside the source range
      word = (src[k] >> off) | (src[k + 1u] << (32u - off));
    }
    atomicStore(&dst[w], word);
  } else {
    for (var p = a; p < b; p += 1u) {
      word |= srcByte(s + (p - a)) << ((p & 3u) * 8u);
    }
    atomicOr(&dst[w], word);
  }
}
