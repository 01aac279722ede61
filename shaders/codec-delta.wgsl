// Delta stage of docs/format.md: elements of W = 4 / EPW bytes (BITS bits, EMASK their mask),
// little endian, packed EPW to a u32 word as in host memory; arithmetic wraps mod 2^BITS.
//   encode:  d[0] = x[0], d[i] = x[i] - x[i-1]            one invocation per output word
//            (with chunkWords, every chunk of that many words starts again: d = x there)
//   decode:  x[i] = d[0] + ... + d[i]  (inclusive scan)   reduce-then-scan, three passes:
//     tileSums  each workgroup sums its tile of TILE_WORDS words (elements past n read as 0)
//     carries   one workgroup turns the tile sums into exclusive prefixes, 4096 at a time
//     tileScan  each workgroup scans its tile again, starting from its carry
// The reduce-then-scan shape is Merrill's; the workgroup scan is the shared raking scan of
// wg-scan-shared.wgsl (Gruber's recursive block scan), composed in by ts/gpu/compose.ts with
// `alias T = u32`, `const WG` = 256 and EPW / BITS / EMASK.
//
// Buffers are bound at 256-byte aligned offsets; `params.src` and `params.dst` are the word
// offsets of the data in them. Lanes of the last word past n are written as zero.

struct Params {
  n: u32,      // elements
  words: u32,  // ceil(n / EPW)
  src: u32,    // word offset of the input in `src`
  dst: u32,    // word offset of the output in `dst`
  tiles: u32,  // ceil(words / TILE_WORDS)
  chunkWords: u32, // encode: 0, or words per chunk: each chunk is encoded on its own (d = x at its start)
  pad1: u32,
  pad2: u32,
}

const WPI: u32 = 16u;               // words per invocation
const TILE_WORDS: u32 = WG * WPI;   // words per workgroup tile

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> src: array<u32>;
@group(0) @binding(2) var<storage, read_write> dst: array<u32>;
@group(0) @binding(3) var<storage, read_write> sums: array<u32>;

// Mask of the lanes of word i that hold elements (all but the last word: every lane).
fn laneMask(i: u32) -> u32 {
  let valid = params.n - i * EPW;
  if (valid >= EPW) { return 0xFFFFFFFFu; }
  return (1u << (valid * BITS)) - 1u;
}

// Word i of the input, lanes past n zeroed; 0 past the last word.
fn loadWord(i: u32) -> u32 {
  if (i >= params.words) { return 0u; }
  return src[params.src + i] & laneMask(i);
}

fn wordSum(w: u32) -> u32 {
  var s = 0u;
  for (var j = 0u; j < EPW; j += 1u) { s += (w >> (j * BITS)) & EMASK; }
  return s;
}

@compute @workgroup_size(WG)
fn encode(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wid: vec3<u32>,
          @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = (wid.y * nwg.x + wid.x) * WG + tid;
  if (i >= params.words) { return; }
  let x = loadWord(i);
  var prev = 0u;
  let chunkStart = params.chunkWords != 0u && i % params.chunkWords == 0u;
  if (i > 0u && !chunkStart) { prev = src[params.src + i - 1u] >> (32u - BITS); } // a shift by 32 - 32 = 0 for W = 4
  var res = 0u;
  for (var j = 0u; j < EPW; j += 1u) {
    let e = (x >> (j * BITS)) & EMASK;
    res |= ((e - prev) & EMASK) << (j * BITS);
    prev = e;
  }
  dst[params.dst + i] = res & laneMask(i);
}

fn tileIndex(wid: vec3<u32>, nwg: vec3<u32>) -> u32 {
  return wid.y * nwg.x + wid.x;
}

@compute @workgroup_size(WG)
fn tileSums(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wid: vec3<u32>,
            @builtin(num_workgroups) nwg: vec3<u32>) {
  let tile = tileIndex(wid, nwg);
  if (tile >= params.tiles) { return; } // uniform: the whole workgroup leaves
  let base = tile * TILE_WORDS + tid * WPI;
  var s = 0u;
  for (var k = 0u; k < WPI; k += 1u) { s += wordSum(loadWord(base + k)); }
  var total = 0u;
  _ = wgExclusiveScan(s, tid, tid, WG, &total);
  if (tid == 0u) { sums[tile] = total; }
}

@compute @workgroup_size(WG)
fn carries(@builtin(local_invocation_index) tid: u32) {
  var carry = 0u;
  for (var b = 0u; b < params.tiles; b += TILE_WORDS) {
    let base = b + tid * WPI;
    var s = 0u;
    for (var k = 0u; k < WPI; k += 1u) {
      if (base + k < params.tiles) { s += sums[base + k]; }
    }
    var total = 0u;
    var acc = carry + wgExclusiveScan(s, tid, tid, WG, &total);
    for (var k = 0u; k < WPI; k += 1u) {
      if (base + k < params.tiles) {
        let v = sums[base + k];
        sums[base + k] = acc;
        acc += v;
      }
    }
    carry += total;
  }
}

@compute @workgroup_size(WG)
fn tileScan(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wid: vec3<u32>,
            @builtin(num_workgroups) nwg: vec3<u32>) {
  let tile = tileIndex(wid, nwg);
  if (tile >= params.tiles) { return; }
  let base = tile * TILE_WORDS + tid * WPI;
  var s = 0u;
  for (var k = 0u; k < WPI; k += 1u) { s += wordSum(loadWord(base + k)); }
  var total = 0u;
  var acc = sums[tile] + wgExclusiveScan(s, tid, tid, WG, &total);
  for (var k = 0u; k < WPI; k += 1u) {
    let i = base + k;
    if (i >= params.words) { break; }
    let x = loadWord(i);
    var res = 0u;
    for (var j = 0u; j < EPW; j += 1u) {
      acc += (x >> (j * BITS)) & EMASK;
      res |= (acc & EMASK) << (j * BITS);
    }
    dst[params.dst + i] = res & laneMask(i);
  }
}

// ---- decode of many chunks in place: one dispatch a pass for all of them --------------------
// Each job is one chunk's delta stream at word `word` of `data` (n elements), decoded where it
// lies (every invocation reads its words before it writes them, and no other reads them).
// The tiles of all jobs are numbered one after another (job j's from firstTile); a workgroup
// finds its job by a binary search over the jobs' first tiles (sorted, the first one 0).
//   chunkSums    each tile's sum, as tileSums
//   chunkCarries one invocation a job: its tiles' sums to exclusive prefixes (a chunk has tens of tiles)
//   chunkScan    each tile scanned again from its carry, written in place

struct ChunkParams {
  jobs: u32,
  tiles: u32, // tiles of all jobs
  pad0: u32,
  pad1: u32,
}

struct DeltaJob {
  word: u32,      // word offset of the chunk's stream in `data`
  n: u32,         // elements
  firstTile: u32, // its first tile among all jobs' tiles
  pad: u32,
}

@group(0) @binding(4) var<uniform> cparams: ChunkParams;
@group(0) @binding(5) var<storage, read> jobs: array<DeltaJob>;
@group(0) @binding(6) var<storage, read_write> data: array<u32>;

// The job whose tiles hold `tile`: the last with firstTile <= tile.
fn jobOf(tile: u32) -> DeltaJob {
  var lo = 0u;
  var hi = cparams.jobs;
  while (hi - lo > 1u) {
    let mid = (lo + hi) / 2u;
    if (jobs[mid].firstTile <= tile) { lo = mid; } else { hi = mid; }
  }
  return jobs[lo];
}

// Word i of a job of n elements (`words` words), lanes past n zeroed; 0 past its last word.
fn jobWord(job: DeltaJob, words: u32, i: u32) -> u32 {
  if (i >= words) { return 0u; }
  let valid = job.n - i * EPW;
  let mask = select((1u << (valid * BITS)) - 1u, 0xFFFFFFFFu, valid >= EPW);
  return data[job.word + i] & mask;
}

fn jobWords(job: DeltaJob) -> u32 {
  return job.n / EPW + select(0u, 1u, job.n % EPW != 0u);
}

// The sum of the WPI words of a job from word `base` (0 past its end).
fn jobSlotSum(job: DeltaJob, words: u32, base: u32) -> u32 {
  var s = 0u;
  for (var k = 0u; k < WPI; k += 1u) { s += wordSum(jobWord(job, words, base + k)); }
  return s;
}

@compute @workgroup_size(WG)
fn chunkSums(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wid: vec3<u32>,
             @builtin(num_workgroups) nwg: vec3<u32>) {
  let tile = tileIndex(wid, nwg);
  if (tile >= cparams.tiles) { return; }
  let job = jobOf(tile);
  let words = jobWords(job);
  let base = (tile - job.firstTile) * TILE_WORDS + tid * WPI;
  let s = jobSlotSum(job, words, base);
  var total = 0u;
  _ = wgExclusiveScan(s, tid, tid, WG, &total);
  if (tid == 0u) { sums[tile] = total; }
}

@compute @workgroup_size(WG)
fn chunkCarries(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wid: vec3<u32>,
                @builtin(num_workgroups) nwg: vec3<u32>) {
  let j = tileIndex(wid, nwg) * WG + tid;
  if (j >= cparams.jobs) { return; }
  let job = jobs[j];
  let tiles = (jobWords(job) + TILE_WORDS - 1u) / TILE_WORDS;
  var acc = 0u;
  for (var t = 0u; t < tiles; t += 1u) {
    let v = sums[job.firstTile + t];
    sums[job.firstTile + t] = acc;
    acc += v;
  }
}

@compute @workgroup_size(WG)
fn chunkScan(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wid: vec3<u32>,
             @builtin(num_workgroups) nwg: vec3<u32>) {
  let tile = tileIndex(wid, nwg);
  if (tile >= cparams.tiles) { return; }
  let job = jobOf(tile);
  let words = jobWords(job);
  let base = (tile - job.firstTile) * TILE_WORDS + tid * WPI;
  let s = jobSlotSum(job, words, base);
  var total = 0u;
  var acc = sums[tile] + wgExclusiveScan(s, tid, tid, WG, &total);
  for (var k = 0u; k < WPI; k += 1u) {
    let i = base + k;
    if (i >= words) { break; }
    let x = jobWord(job, words, i);
    var res = 0u;
    for (var j = 0u; j < EPW; j += 1u) {
      acc += (x >> (j * BITS)) & EMASK;
      res |= (acc & EMASK) << (j * BITS);
    }
    // lanes past n keep what the buffer held there (the next chunk's bytes never share a word)
    let valid = job.n - i * EPW;
    let mask = select((1u << (valid * BITS)) - 1u, 0xFFFFFFFFu, valid >= EPW);
    data[job.word + i] = (res & mask) | (data[job.word + i] & ~mask);
  }
}
