// Encode of pack streams (docs/format.md "Pack streams": PFOR in SIMD-BP128's vertical layout,
// Lemire and Boytsov 2015), one workgroup a block of 256 elements (invocation t: element t), in
// two dispatches:
//   plan   each block planned as the CPU's encoder plans it (assembly/pack.ts planBlock): the
//          minimum of its values and of their zigzags (workgroup atomicMin), the histograms of
//          the bit lengths of value - minimum in both domains and their largest (atomicAdd,
//          atomicMax), then an invocation a domain and bit width b up to that largest sizes the
//          block (exceptions: the values of more than b bits, at most 255) and the smallest
//          wins (atomicMin of bytes, then the plain domain, then the larger b: the CPU's serial
//          search from the largest b down keeps the first smallest so); the block's bytes to
//          `sizes[job.firstBlock + k]` and added to `totals[job]` (the stream's bytes E);
//   write  the block planned again, laid out in workgroup memory (header, reference, the low b
//          bits of each value - reference in 4 lanes, exception positions and high parts, each
//          exception's rank among the block's from a workgroup scan), then ORed into `dst` at
//          byte job.out + offsets[firstBlock + k] - offsets[firstBlock] (`offsets`: the
//          exclusive scan of the plan's sizes, so a stream's blocks follow one another and the
//          streams of a dispatch lie where the host put them; `dst` cleared beforehand).
// The bytes equal the CPU encoder's (assembly/pack.ts packEncode) for the same elements.
// Composed by ts/gpu/compose.ts (`const WG` = 256, the shared workgroup scan prepended);
// shaders/read-src.wgsl appended (elements at any byte offset of `src`).

struct Params {
  blocks: u32,  // blocks of this dispatch (over all jobs)
  jobs: u32,    // entries of `jobs`
  pad0: u32,
  pad1: u32,
}

struct Job {
  src: u32,            // byte offset of the stream's first element in `src` (any alignment)
  count: u32,          // its elements n > 0
  width: u32,          // w: 1, 2 or 4
  firstBlock: u32,     // its first block's entry in `sizes` / `offsets`
  dispatchBlock: u32,  // its first block in this dispatch (ascending over the jobs)
  out: u32,            // write: byte offset of the stream in `dst`
  pad0: u32,
  pad1: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> jobs: array<Job>;
@group(0) @binding(2) var<storage, read> src: array<u32>;
// plan: each block's bytes
@group(0) @binding(3) var<storage, read_write> sizes: array<u32>;
// plan: each job's bytes, added up (cleared beforehand)
@group(0) @binding(4) var<storage, read_write> totals: array<atomic<u32>>;
// write: the exclusive scan of the plan's sizes
@group(0) @binding(5) var<storage, read> offsets: array<u32>;
// write: the streams (cleared beforehand: each block is ORed in)
@group(0) @binding(6) var<storage, read_write> dst: array<atomic<u32>>;

const BLOCK: u32 = 256u;
const_assert WG == BLOCK;
// Bytes of a block at most: 3 header bytes, a 4-byte reference, 64 slots of 32 bits in 4 lanes
// (1024 bytes), 255 exception positions and 255 high parts of 32 bits (1020 bytes).
const BLOCK_WORDS: u32 = (3u + 4u + 1024u + 255u + 1020u + 3u) / 4u;

var<workgroup> minimum: array<atomic<u32>, 2>;
// bit lengths 0..32 of value - minimum: [0, 33) plain, [33, 66) zigzag; the largest of each
var<workgroup> lengths: array<atomic<u32>, 66>;
var<workgroup> longest: array<atomic<u32>, 2>;
// the best candidate: bytes << 8 | zigzag << 6 | (63 - b); each candidate's exceptions
var<workgroup> bestKey: atomic<u32>;
var<workgroup> candidateExceptions: array<u32, 66>;
// the plan: b, zigzag, e, h, reference, bytes
var<workgroup> chosen: array<u32, 6>;
var<workgroup> block: array<atomic<u32>, BLOCK_WORDS>;

// srcWord, read8, read32: shaders/read-src.wgsl (appended)

// The job of dispatch block b: the last whose first block is at or before b.
fn jobOf(b: u32) -> u32 {
  var lo = 0u;
  var hi = params.jobs - 1u;
  while (lo < hi) {
    let mid = lo + (hi - lo + 1u) / 2u;
    if (jobs[mid].dispatchBlock <= b) { lo = mid; } else { hi = mid - 1u; }
  }
  return lo;
}

// Zigzag of a w-byte two's complement value held in the low 8w bits of v.
fn zigzag(v: u32, width: u32) -> u32 {
  let shift = 32u - 8u * width;
  let s = bitcast<i32>(v << shift) >> shift;
  return bitcast<u32>((s << 1u) ^ (s >> 31u));
}

fn bitLength(x: u32) -> u32 {
  return 32u - countLeadingZeros(x);
}

fn lowMask(b: u32) -> u32 {
  return select((1u << b) - 1u, 0xFFFFFFFFu, b >= 32u);
}

// Bytes of a block of c elements at bit width b with e exceptions of h bits.
fn blockBytes(c: u32, width: u32, b: u32, e: u32, h: u32) -> u32 {
  let m = (c + 3u) / 4u;
  let packed = 16u * ((m * b + 31u) / 32u);
  return 2u + width + packed + select(0u, 1u + e + (e * h + 7u) / 8u, e > 0u);
}

// Element i of a job, w bytes little-endian in the low bits.
fn element(job: Job, i: u32) -> u32 {
  let p = job.src + i * job.width;
  if (job.width == 1u) { return read8(p); }
  if (job.width == 2u) { return read32(p) & 0xFFFFu; }
  return read32(p);
}

// A dispatch block: its job, its index k in the job, its elements c and this invocation's value.
struct Cell {
  job: u32,
  k: u32,
  c: u32,
  value: u32,
}

fn cellOf(b: u32, tid: u32) -> Cell {
  let j = jobOf(b);
  let job = jobs[j];
  let k = b - job.dispatchBlock;
  let first = k * BLOCK;
  let c = min(BLOCK, job.count - first);
  var v = 0u;
  if (tid < c) { v = element(job, first + tid); }
  return Cell(j, k, c, v);
}

// Plans the block into `chosen` (every invocation calls it: it has barriers).
fn planBlock(tid: u32, cell: Cell, width: u32) {
  if (tid < 2u) {
    atomicStore(&minimum[tid], 0xFFFFFFFFu);
    atomicStore(&longest[tid], 0u);
  }
  if (tid < 66u) { atomicStore(&lengths[tid], 0u); }
  if (tid == 0u) { atomicStore(&bestKey, 0xFFFFFFFFu); }
  workgroupBarrier();
  let valid = tid < cell.c;
  let z = zigzag(cell.value, width);
  if (valid) {
    atomicMin(&minimum[0], cell.value);
    atomicMin(&minimum[1], z);
  }
  workgroupBarrier();
  let min0 = atomicLoad(&minimum[0]);
  let min1 = atomicLoad(&minimum[1]);
  if (valid) {
    let l0 = bitLength(cell.value - min0);
    let l1 = bitLength(z - min1);
    atomicAdd(&lengths[l0], 1u);
    atomicAdd(&lengths[33u + l1], 1u);
    atomicMax(&longest[0], l0);
    atomicMax(&longest[1], l1);
  }
  workgroupBarrier();
  // candidate (d, b) = (tid / 33, tid % 33), b up to the domain's largest bit length
  if (tid < 66u) {
    let d = tid / 33u;
    let b = tid % 33u;
    let maxBits = atomicLoad(&longest[d]);
    var e = 0u;
    for (var k = b + 1u; k <= maxBits; k += 1u) { e += atomicLoad(&lengths[33u * d + k]); }
    candidateExceptions[tid] = e;
    if (b <= maxBits && e <= 255u) {
      let bytes = blockBytes(cell.c, width, b, e, maxBits - b);
      atomicMin(&bestKey, (bytes << 8u) | (d << 6u) | (63u - b));
    }
  }
  workgroupBarrier();
  if (tid == 0u) {
    let key = atomicLoad(&bestKey);
    let b = 63u - (key & 63u);
    let d = (key >> 6u) & 1u;
    let e = candidateExceptions[33u * d + b];
    chosen[0] = b;
    chosen[1] = d;
    chosen[2] = e;
    chosen[3] = select(0u, atomicLoad(&longest[d]) - b, e > 0u);
    chosen[4] = select(min0, min1, d == 1u);
    chosen[5] = key >> 8u;
  }
  workgroupBarrier();
}

@compute @workgroup_size(WG)
fn plan(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>) {
  let b = wid.y * nwg.x + wid.x;
  if (b >= params.blocks) { return; } // uniform: the whole workgroup leaves
  let cell = cellOf(b, tid);
  let job = jobs[cell.job];
  planBlock(tid, cell, job.width);
  if (tid == 0u) {
    sizes[job.firstBlock + cell.k] = chosen[5];
    atomicAdd(&totals[cell.job], chosen[5]);
  }
}

// ORs the low n bits (n <= 32) of v, v < 2^n, into the block from its bit `pos`.
fn orBits(pos: u32, v: u32, n: u32) {
  if (n == 0u) { return; }
  let w = pos >> 5u;
  let s = pos & 31u;
  atomicOr(&block[w], v << s);
  if (s != 0u && s + n > 32u) { atomicOr(&block[w + 1u], v >> (32u - s)); }
}

@compute @workgroup_size(WG)
fn write(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wid: vec3<u32>,
         @builtin(num_workgroups) nwg: vec3<u32>) {
  let b = wid.y * nwg.x + wid.x;
  if (b >= params.blocks) { return; } // uniform
  let cell = cellOf(b, tid);
  let job = jobs[cell.job];
  let width = job.width;
  for (var i = tid; i < BLOCK_WORDS; i += WG) { atomicStore(&block[i], 0u); }
  planBlock(tid, cell, width);
  let bw = chosen[0];
  let zz = chosen[1];
  let e = chosen[2];
  let h = chosen[3];
  let reference = chosen[4];
  let total = chosen[5];
  let valid = tid < cell.c;
  var x = cell.value;
  if (zz == 1u) { x = zigzag(x, width); }
  let d = x - reference;
  let exception = valid && bitLength(d) > bw;
  var count = 0u;
  let rank = wgExclusiveScan(select(0u, 1u, exception), tid, tid, WG, &count);
  // header: b | z << 7, e, h (only with exceptions), the reference's w bytes
  let head = select(2u, 3u, e > 0u);
  if (tid == 0u) {
    orBits(0u, bw | (zz << 7u), 8u);
    orBits(8u, e, 8u);
    if (e > 0u) { orBits(16u, h, 8u); }
    orBits(8u * head, reference & lowMask(8u * width), 8u * width);
  }
  // the low b bits: element t is lane t mod 4, slot t div 4 (bits slot b.. of the lane, whose
  // word k lies at byte 16 k + 4 lane of the packed bits)
  let packedAt = head + width;
  if (valid && bw > 0u) {
    let lane = tid & 3u;
    let pos = (tid >> 2u) * bw;
    let word = pos >> 5u;
    let bit = pos & 31u;
    let low = d & lowMask(bw);
    let first = min(bw, 32u - bit);
    orBits(8u * (packedAt + 16u * word + 4u * lane) + bit, low & lowMask(first), first);
    if (bw > first) { orBits(8u * (packedAt + 16u * (word + 1u) + 4u * lane), low >> first, bw - first); }
  }
  // the exceptions: their positions, then their high parts (h bits each, least significant first)
  let positionsAt = packedAt + 16u * (((cell.c + 3u) / 4u * bw + 31u) / 32u);
  if (exception) {
    orBits(8u * (positionsAt + rank), tid, 8u);
    orBits(8u * (positionsAt + e) + rank * h, d >> bw, h);
  }
  workgroupBarrier();
  // the block's bytes to `dst` at their byte offset (any alignment: each word ORed into the two it spans)
  let at = job.out + offsets[job.firstBlock + cell.k] - offsets[job.firstBlock];
  let shift = (at & 3u) * 8u;
  let base = at >> 2u;
  for (var i = tid; i < (total + 3u) / 4u; i += WG) {
    let v = atomicLoad(&block[i]);
    if (v == 0u) { continue; }
    atomicOr(&dst[base + i], v << shift);
    // (the word after the stream's last is not touched: its bytes there are 0)
    if (shift != 0u && (v >> (32u - shift)) != 0u) { atomicOr(&dst[base + i + 1u], v >> (32u - shift)); }
  }
}
