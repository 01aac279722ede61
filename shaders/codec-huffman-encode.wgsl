// Encode of mode-2 Huffman streams (docs/format.md, "Huffman streams") as PAVLE does it (Balevic
// 2009): code lengths of the symbols, an exclusive scan of them for every code's bit offset, then
// every code written in parallel with atomic OR (neighbouring codes share words). Three passes
// over blocks of BLOCK = 1024 symbols (2^10, the smallest segment, so no block straddles two
// segments), many streams ("jobs") per dispatch:
//   countBits      one workgroup per block: the bits of its 1024 codes -> blocks[b]
//   placeSegments  one workgroup per job: segment bytes = ceil(bits of its blocks / 8), scanned
//                  into the K segment end offsets (written to the job's output), then every
//                  block's bit offset from the start of the bitstreams -> blocks[b]; the
//                  bitstreams' length -> status[2 + job index]
//   writeBits      one workgroup per block: each invocation joins the codes of 4 symbols (at
//                  most 44 bits), a workgroup scan places them, they are ORed into the block's
//                  bits in workgroup memory (PAVLE's shared-memory variant), and the block's
//                  words go out: plain stores inside, atomicOr for the first and the last word,
//                  which the neighbouring blocks or segments may share
// A job's output (word `out` of `dst`, cleared first by ts/codec/gpu/huffman-encode.ts) is the stream without
// its header: K end offsets (u32), then the bitstreams from word out + K. Each segment starts on
// a byte boundary; the bits of a byte are filled from bit 0, codes stored first bit lowest
// (bit-reversed canonical codes, built on the host), pad bits zero: byte for byte what
// assembly/huffman.ts huffmanEncode writes.
//
// Mode 3 (docs/format.md, "Mode 3: interleaved lanes"; `params.lanes` = 1, g <= 12): the entries
// are segments, not blocks (blocks[b] is segment b's bits), and 32 invocations take a segment,
// one a lane, LANE_SEGMENTS = WG / 32 segments a workgroup:
//   countLanes     each lane's bits B_l, rounded up to 16-bit units -> blocks[b] = 16 x units
//   placeSegments  as above, one block a segment
//   writeLanes     each lane walks its symbols twice: first it marks the steps at which the
//                  decoder takes one of its units (a code that runs past the lane's bits read so
//                  far: the code that covers bit 16k reads unit k) in a mask a step; an exclusive
//                  scan of the masks' counts over the steps then places every unit (the units of
//                  earlier steps, then the lanes below it at its step); the second walk writes
//                  each unit, once its 16 bits are known, to its place (atomicOr of a half word:
//                  neighbouring lanes share words)
//
// A symbol whose code length is 0 (no code) is counted in status[0]; status[1] keeps 0xFFFFFFFF -
// the lowest (job index << 8 | symbol) seen, so the host names the first job and byte value.
// Composed by ts/gpu/compose.ts (`const WG` = 256, the shared workgroup scan prepended).

struct Params {
  blocks: u32,  // blocks over all jobs of this dispatch (mode 3: segments)
  jobs: u32,    // entries of `jobs`
  lanes: u32,   // 1: mode 3 (every job), blocks are segments
  pad1: u32,
}

struct Job {
  firstBlock: u32,   // index of the job's first block (mode 3: segment) in `blocks` (jobs in ascending order)
  symbols: u32,      // n > 0
  segmentLog2: u32,  // g, 10..20
  src: u32,          // byte offset of the symbols in the bound `src` (any alignment)
  out: u32,          // word offset of the job's end offset table in `dst`
  segments: u32,     // K = ceil(n / 2^g)
  codes: u32,        // first entry of the job's 256 codes in `codes`
  index: u32,        // the job's index in the caller's list (for status)
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> jobs: array<Job>;
// per job 256 entries: bit-reversed canonical code | length << 16 (0: the symbol has no code)
@group(0) @binding(2) var<storage, read> codes: array<u32>;
@group(0) @binding(3) var<storage, read> src: array<u32>;
@group(0) @binding(4) var<storage, read_write> blocks: array<u32>;
@group(0) @binding(5) var<storage, read_write> dst: array<atomic<u32>>;
@group(0) @binding(6) var<storage, read_write> status: array<atomic<u32>>;

const BLOCK_LOG2: u32 = 10u;
const_assert WG * 4u == (1u << BLOCK_LOG2); // one invocation per 4 symbols of a block
// Words of a block's bits: 1024 codes of at most 11 bits, from any bit of the first word.
const LOCAL_WORDS: u32 = (1024u * 11u + 31u + 31u) / 32u;

var<workgroup> table: array<u32, 256>;
var<workgroup> bits: array<atomic<u32>, LOCAL_WORDS>;
var<workgroup> uniformCount: u32;

// srcWord, read8, read32: shaders/read-src.wgsl (appended)

// The job of block b: the last whose first block is at or before b.
fn jobOf(b: u32) -> u32 {
  var lo = 0u;
  var hi = params.jobs - 1u;
  while (lo < hi) {
    let mid = lo + (hi - lo + 1u) / 2u;
    if (jobs[mid].firstBlock <= b) { lo = mid; } else { hi = mid - 1u; }
  }
  return lo;
}

fn flagMissing(job: u32, symbol: u32) {
  atomicAdd(&status[0], 1u);
  atomicMax(&status[1], 0xFFFFFFFFu - ((job << 8u) | symbol));
}

// Symbols this invocation of block b codes (0 to 4) and their first index in the job.
fn firstSymbol(job: Job, b: u32, tid: u32) -> u32 {
  return ((b - job.firstBlock) << BLOCK_LOG2) + tid * 4u;
}

fn countOf(job: Job, first: u32) -> u32 {
  if (first >= job.symbols) { return 0u; }
  return min(4u, job.symbols - first);
}

@compute @workgroup_size(WG)
fn countBits(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wid: vec3<u32>,
             @builtin(num_workgroups) nwg: vec3<u32>) {
  let b = wid.y * nwg.x + wid.x;
  if (b >= params.blocks) { return; } // uniform: the whole workgroup leaves
  let job = jobs[jobOf(b)];
  table[tid] = codes[job.codes + tid];
  workgroupBarrier();
  let first = firstSymbol(job, b, tid);
  let count = countOf(job, first);
  let w = read32(job.src + first);
  var n = 0u;
  var missing = 256u; // the lowest byte value without a code among this invocation's symbols
  for (var k = 0u; k < count; k += 1u) {
    let sym = (w >> (k * 8u)) & 0xFFu;
    let len = table[sym] >> 16u;
    if (len == 0u) { missing = min(missing, sym); }
    n += len;
  }
  if (missing < 256u) { flagMissing(job.index, missing); }
  var total = 0u;
  _ = wgExclusiveScan(n, tid, tid, WG, &total);
  if (tid == 0u) { blocks[b] = total; }
}

@compute @workgroup_size(WG)
fn placeSegments(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wid: vec3<u32>,
                 @builtin(num_workgroups) nwg: vec3<u32>) {
  let j = wid.y * nwg.x + wid.x;
  if (j >= params.jobs) { return; } // uniform
  let job = jobs[j];
  if (tid == 0u) { uniformCount = job.segments; }
  let segments = workgroupUniformLoad(&uniformCount);
  var perSegment = 1u << (job.segmentLog2 - BLOCK_LOG2);
  var lastBlock = job.firstBlock + ((job.symbols + (1u << BLOCK_LOG2) - 1u) >> BLOCK_LOG2);
  if (params.lanes == 1u) {
    perSegment = 1u;
    lastBlock = job.firstBlock + segments;
  }
  // 1. bytes of each segment (invocation tid takes segments tid, tid + WG, ...)
  for (var seg = tid; seg < segments; seg += WG) {
    let b0 = job.firstBlock + seg * perSegment;
    let b1 = min(lastBlock, b0 + perSegment);
    var n = 0u;
    for (var b = b0; b < b1; b += 1u) { n += blocks[b]; }
    atomicStore(&dst[job.out + seg], (n + 7u) / 8u);
  }
  // 2. end offsets: an inclusive scan, WG segments a step (each invocation reads what it wrote)
  var carry = 0u;
  for (var base = 0u; base < segments; base += WG) {
    let i = base + tid;
    var v = 0u;
    if (i < segments) { v = atomicLoad(&dst[job.out + i]); }
    var total = 0u;
    let before = wgExclusiveScan(v, tid, tid, WG, &total);
    if (i < segments) { atomicStore(&dst[job.out + i], carry + before + v); }
    carry += total;
  }
  storageBarrier(); // step 3 reads the end offsets of other invocations
  // 3. bit offset of every block from the start of the bitstreams
  for (var seg = tid; seg < segments; seg += WG) {
    var at = 0u;
    if (seg > 0u) { at = atomicLoad(&dst[job.out + seg - 1u]) * 8u; }
    let b0 = job.firstBlock + seg * perSegment;
    let b1 = min(lastBlock, b0 + perSegment);
    for (var b = b0; b < b1; b += 1u) {
      let n = blocks[b];
      blocks[b] = at;
      at += n;
    }
  }
  if (tid == 0u) { atomicStore(&status[2u + job.index], carry); }
}

// ORs the low `len` bits (at most 44) of lo | hi << 32 into `bits` from bit `pos`.
fn orBits(pos: u32, lo: u32, hi: u32, len: u32) {
  if (len == 0u) { return; }
  let w = pos >> 5u;
  let s = pos & 31u;
  atomicOr(&bits[w], lo << s);
  if (s == 0u) {
    if (len > 32u) { atomicOr(&bits[w + 1u], hi); }
    return;
  }
  if (s + len > 32u) { atomicOr(&bits[w + 1u], (lo >> (32u - s)) | (hi << s)); }
  if (s + len > 64u) { atomicOr(&bits[w + 2u], hi >> (32u - s)); }
}

@compute @workgroup_size(WG)
fn writeBits(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wid: vec3<u32>,
             @builtin(num_workgroups) nwg: vec3<u32>) {
  let b = wid.y * nwg.x + wid.x;
  if (b >= params.blocks) { return; } // uniform
  let job = jobs[jobOf(b)];
  table[tid] = codes[job.codes + tid];
  for (var i = tid; i < LOCAL_WORDS; i += WG) { atomicStore(&bits[i], 0u); }
  workgroupBarrier();
  // the codes of this invocation's symbols, first symbol lowest
  let first = firstSymbol(job, b, tid);
  let count = countOf(job, first);
  let w = read32(job.src + first);
  var lo = 0u;
  var hi = 0u;
  var n = 0u;
  for (var k = 0u; k < count; k += 1u) {
    let c = table[(w >> (k * 8u)) & 0xFFu];
    let code = c & 0xFFFFu;
    let len = c >> 16u;
    if (len > 0u) {
      if (n < 32u) {
        lo |= code << n;
        if (n + len > 32u) { hi |= code >> (32u - n); }
      } else {
        hi |= code << (n - 32u);
      }
    }
    n += len;
  }
  var total = 0u;
  let before = wgExclusiveScan(n, tid, tid, WG, &total);
  let at = blocks[b];        // the block's first bit, from the start of the bitstreams
  let shift = at & 31u;
  orBits(shift + before, lo, hi, n);
  workgroupBarrier();
  // the block's words: its first and last may hold bits of the blocks or segments around it
  let words = (shift + total + 31u) / 32u;
  let outWord = job.out + job.segments + (at >> 5u);
  for (var i = tid; i < words; i += WG) {
    let v = atomicLoad(&bits[i]);
    if (i == 0u || i + 1u == words) {
      if (v != 0u) { atomicOr(&dst[outWord + i], v); }
    } else {
      atomicStore(&dst[outWord + i], v);
    }
  }
}

// ---- mode 3 ------------------------------------------------------------------------------------

const LANES: u32 = 32u;
const LANE_SEGMENTS: u32 = WG / LANES;
// Steps of a segment of at most 2^12 symbols: 128 a lane.
const MAX_STEPS: u32 = 128u;

var<workgroup> segUnits: array<atomic<u32>, LANE_SEGMENTS>;
var<workgroup> stepMasks: array<atomic<u32>, LANE_SEGMENTS * MAX_STEPS>;
var<workgroup> stepBefore: array<u32, LANE_SEGMENTS * MAX_STEPS>;
var<workgroup> laneSums: array<u32, WG>;

// The segment of lane group `slot` of workgroup w: its job, its index in the job, its symbols
// (0 past the job's last segment or the dispatch's).
struct LaneSegment {
  job: u32,
  seg: u32,
  first: u32,   // its first symbol in the job
  count: u32,   // its symbols c
}

fn laneSegment(w: u32, slot: u32) -> LaneSegment {
  let b = w * LANE_SEGMENTS + slot;
  var r = LaneSegment(0u, 0u, 0u, 0u);
  if (b >= params.blocks) { return r; }
  r.job = jobOf(b);
  let job = jobs[r.job];
  r.seg = b - job.firstBlock;
  r.first = r.seg << job.segmentLog2;
  if (r.seg < job.segments && r.first < job.symbols) { r.count = min(1u << job.segmentLog2, job.symbols - r.first); }
  return r;
}

// Every invocation loads the codes of the jobs of the workgroup's segments: all of one job
// except where the workgroup straddles two, so each lane looks its codes up in `codes` there.
fn laneCode(job: Job, sym: u32) -> u32 {
  return codes[job.codes + sym];
}

@compute @workgroup_size(WG)
fn countLanes(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wid: vec3<u32>,
              @builtin(num_workgroups) nwg: vec3<u32>) {
  let w = wid.y * nwg.x + wid.x;
  if (w * LANE_SEGMENTS >= params.blocks) { return; } // uniform
  let slot = tid / LANES;
  let lane = tid % LANES;
  let ls = laneSegment(w, slot);
  let job = jobs[ls.job];
  var bits = 0u;
  var missing = 256u;
  let quads = (ls.count + 3u) / 4u;
  for (var q = lane; q < quads; q += LANES) {
    let at = ls.first + 4u * q;
    let v = read32(job.src + at);
    let inQuad = min(4u, ls.count - 4u * q);
    for (var k = 0u; k < inQuad; k += 1u) {
      let sym = (v >> (k * 8u)) & 0xFFu;
      let len = laneCode(job, sym) >> 16u;
      if (len == 0u) { missing = min(missing, sym); }
      bits += len;
    }
  }
  if (missing < 256u) { flagMissing(job.index, missing); }
  atomicAdd(&segUnits[slot], (bits + 15u) / 16u);
  workgroupBarrier();
  if (lane == 0u && ls.count > 0u) { blocks[w * LANE_SEGMENTS + slot] = 16u * atomicLoad(&segUnits[slot]); }
}

@compute @workgroup_size(WG)
fn writeLanes(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wid: vec3<u32>,
              @builtin(num_workgroups) nwg: vec3<u32>) {
  let w = wid.y * nwg.x + wid.x;
  if (w * LANE_SEGMENTS >= params.blocks) { return; } // uniform
  let slot = tid / LANES;
  let lane = tid % LANES;
  let ls = laneSegment(w, slot);
  let job = jobs[ls.job];
  let masks = slot * MAX_STEPS;
  let quads = (ls.count + 3u) / 4u;
  // walk 1: the steps at which the decoder takes one of this lane's units
  var bits = 0u;
  for (var q = lane; q < quads; q += LANES) {
    let v = read32(job.src + ls.first + 4u * q);
    let inQuad = min(4u, ls.count - 4u * q);
    let step0 = (q / LANES) * 4u;
    for (var k = 0u; k < inQuad; k += 1u) {
      let len = laneCode(job, (v >> (k * 8u)) & 0xFFu) >> 16u;
      if ((bits + len + 15u) / 16u > (bits + 15u) / 16u) { atomicOr(&stepMasks[masks + step0 + k], 1u << lane); }
      bits += len;
    }
  }
  workgroupBarrier();
  // units taken before each step: lane l sums steps 4l .. 4l + 3 of its segment, then adds the
  // sums of the lanes below it
  var sum = 0u;
  for (var k = 0u; k < MAX_STEPS / LANES; k += 1u) { sum += countOneBits(atomicLoad(&stepMasks[masks + lane * 4u + k])); }
  laneSums[tid] = sum;
  workgroupBarrier();
  var before = 0u;
  for (var l = 0u; l < lane; l += 1u) { before += laneSums[slot * LANES + l]; }
  for (var k = 0u; k < MAX_STEPS / LANES; k += 1u) {
    stepBefore[masks + lane * 4u + k] = before;
    before += countOneBits(atomicLoad(&stepMasks[masks + lane * 4u + k]));
  }
  workgroupBarrier();
  if (ls.count == 0u) { return; }
  // walk 2: the lane's bits, 16 at a time, each unit to the place of the step that takes it
  let segByte = blocks[w * LANE_SEGMENTS + slot] / 8u;  // from the start of the job's bitstreams
  let outWord = job.out + job.segments;
  var acc = 0u;          // bits not yet written, next lowest
  var accBits = 0u;
  var queue = array<u32, 4>(0u, 0u, 0u, 0u);  // places of units taken, not yet written
  var taken = 0u;
  var written = 0u;
  bits = 0u;
  let below = (1u << lane) - 1u;
  for (var q = lane; q < quads; q += LANES) {
    let v = read32(job.src + ls.first + 4u * q);
    let inQuad = min(4u, ls.count - 4u * q);
    let step0 = (q / LANES) * 4u;
    for (var k = 0u; k < inQuad; k += 1u) {
      let c = laneCode(job, (v >> (k * 8u)) & 0xFFu);
      let len = c >> 16u;
      let t = masks + step0 + k;
      if ((bits + len + 15u) / 16u > (bits + 15u) / 16u) {
        queue[taken & 3u] = stepBefore[t] + countOneBits(atomicLoad(&stepMasks[t]) & below);
        taken += 1u;
      }
      bits += len;
      acc |= (c & 0xFFFFu) << accBits;
      accBits += len;
      if (accBits >= 16u) {
        writeUnit(outWord, segByte + 2u * queue[written & 3u], acc & 0xFFFFu);
        written += 1u;
        acc >>= 16u;
        accBits -= 16u;
      }
    }
  }
  if (accBits > 0u) { writeUnit(outWord, segByte + 2u * queue[written & 3u], acc); }
}

// ORs a 16-bit unit into byte `byte` (even) of the bitstreams that start at word `outWord`.
fn writeUnit(outWord: u32, byte: u32, unit: u32) {
  if (unit != 0u) { atomicOr(&dst[outWord + (byte >> 2u)], unit << ((byte & 2u) * 8u)); }
}
