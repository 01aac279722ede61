// Run-length encode (PARLE, Balevic 2009) in two passes, no readback in between:
// `main`, one chained single-pass kernel: flags run starts (an element whose bits differ from
//   its predecessor's), counts them per invocation and per tile, looks back (lookback.wgsl, with
//   decoupled fallback) for the tile's first run index, then scatters the end index of each run
//   (ends[r - 1] = start of run r). The last tile writes the run count.
// `runsOut`, in a second submission once the host has read the run count (so that values and
//   lengths go straight into buffers of their exact size): one invocation per output word of
//   values (EPW runs) gathers each run's value from the input at its start (ends[r - 1]) and
//   writes lengths[r] = ends[r] - ends[r - 1]; packed u8/u16 value words are assembled in
//   registers, so no atomics.
//
// Composed by ts/gpu/compose.ts with `alias T = u32`, and per element type:
//   EPW (elements per u32 word: 4 for u8, 2 for u16, 1 for 32-bit), BITS (32 / EPW), EMASK.
// Elements compare as bit patterns, so f32 NaN payloads and -0 keep their own runs. With a chunk
// length, a run also starts at every multiple of it (runs cut at the container's chunks).

struct Params {
  n: u32,          // elements
  numTiles: u32,   // ceil(n / TILE)
  pad: u32,
  chunk: u32,      // 0, or a chunk length (a multiple of EPW): every chunk starts a run
}

const WPT: u32 = 16u;            // u32 words per invocation (4 vec4 loads)
const EPT: u32 = WPT * EPW;      // elements per invocation
const TILE: u32 = WG * EPT;      // elements per tile

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> src: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read_write> ends: array<u32>;
@group(0) @binding(4) var<storage, read_write> lb_spine: array<atomic<u32>>;
@group(0) @binding(5) var<storage, read_write> runCount: array<u32>; // [0]: the run count

fn elementAt(i: u32) -> u32 {
  let wi = i / EPW;
  return (src[wi >> 2u][wi & 3u] >> ((i % EPW) * BITS)) & EMASK;
}

fn loadWords(first: u32) -> array<u32, WPT> {
  var words: array<u32, WPT>;
  let vbase = first / EPW / 4u;
  for (var q = 0u; q < WPT / 4u; q += 1u) {
    let v = src[vbase + q];
    words[q * 4u] = v.x; words[q * 4u + 1u] = v.y; words[q * 4u + 2u] = v.z; words[q * 4u + 3u] = v.w;
  }
  return words;
}

// Run-start flags of one word, SWAR: t = word XOR (word shifted up one element, the previous
// element shifted in), and an element's top bit is set in `flags` when its lane of t is not 0:
// ((t & LOW) + LOW | t) & HIGH, LOW = 0x7F7F7F7F (u8), 0x7FFF7FFF (u16), 0x7FFFFFFF (32-bit).
const HIGH: u32 = ~LOW;

/** Flags (lane top bits) of the elements of `word` at elements [at, at + EPW) that start a run. */
fn startFlags(word: u32, prev: u32, at: u32) -> u32 {
  let n = params.n;
  var p = prev;
  // element 0 always starts a run, and so does each chunk's first (a word's first element: the
  // chunk length is a multiple of EPW), so runs are cut where the container's chunks are
  if (at == 0u || (params.chunk != 0u && at % params.chunk == 0u)) { p = ~word & EMASK; }
  let shifted = select((word << (BITS % 32u)) | p, p, EPW == 1u);
  let t = word ^ shifted;
  var flags = (((t & LOW) + LOW) | t) & HIGH;
  if (at + EPW > n) {
    let valid = select(0u, n - at, n > at); // < EPW
    flags &= (1u << (valid * BITS)) - 1u;
  }
  return flags;
}

/** The element before `first` (any value when first is 0: startFlags ignores it). */
fn prevElement(first: u32) -> u32 {
  if (first > 0u && first <= params.n) { return elementAt(first - 1u); }
  return 0u;
}

/** Run starts among elements [first, first + EPT) (those below n). */
fn countStarts(words: ptr<function, array<u32, WPT>>, first: u32) -> u32 {
  var prev = prevElement(first);
  var count = 0u;
  for (var w = 0u; w < WPT; w += 1u) {
    let word = (*words)[w];
    count += countOneBits(startFlags(word, prev, first + w * EPW));
    prev = word >> (32u - BITS);
  }
  return count;
}

fn tileReduce(tile: u32, tid: u32, lane: u32, sg: u32) -> T {
  let first = tile * TILE + tid * EPT;
  var words = loadWords(first);
  var total = 0u;
  _ = wgExclusiveScan(countStarts(&words, first), tid, lane, sg, &total);
  return total;
}

@compute @workgroup_size(WG)
fn main(/*IDS*/) {
  /*LANES*/
  let tile = lbAcquireTile(tid);
  if (tile >= params.numTiles) { return; }
  let n = params.n;
  let first = tile * TILE + tid * EPT;
  var words = loadWords(first);
  var tileRuns = 0u;
  let threadPrefix = wgExclusiveScan(countStarts(&words, first), tid, lane, sg, &tileRuns);
  let tilePrefix = lookback(tile, tileRuns, tid, lane, sg);
  var r = tilePrefix + threadPrefix; // index of the next run that starts here
  var prev = prevElement(first);
  for (var w = 0u; w < WPT; w += 1u) {
    let word = words[w];
    let at = first + w * EPW;
    var flags = startFlags(word, prev, at);
    prev = word >> (32u - BITS);
    while (flags != 0u) {
      let i = at + countTrailingZeros(flags) / BITS;
      if (r > 0u) { ends[r - 1u] = i; }
      r += 1u;
      flags &= flags - 1u;
    }
  }
  if (tile == params.numTiles - 1u && tid == 0u) {
    let runs = tilePrefix + tileRuns;
    ends[runs - 1u] = n;
    runCount[0] = runs;
  }
}

@group(0) @binding(6) var<storage, read> endsIn: array<u32>;
@group(0) @binding(7) var<storage, read> countIn: array<u32>;
@group(0) @binding(8) var<storage, read_write> lengths: array<u32>;
@group(0) @binding(9) var<storage, read> srcIn: array<u32>;
@group(0) @binding(10) var<storage, read_write> values: array<u32>;

@compute @workgroup_size(WG)
fn runsOut(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wid: vec3<u32>,
           @builtin(num_workgroups) nwg: vec3<u32>) {
  let word = (wid.y * nwg.x + wid.x) * WG + tid;
  let runs = countIn[0];
  let r0 = word * EPW;
  if (r0 >= runs) { return; }
  var packed = 0u;
  var start = select(0u, endsIn[max(r0, 1u) - 1u], r0 > 0u);
  for (var j = 0u; j < EPW; j += 1u) {
    let r = r0 + j;
    if (r < runs) {
      let end = endsIn[r];
      lengths[r] = end - start;
      let v = (srcIn[start / EPW] >> ((start % EPW) * BITS)) & EMASK;
      packed |= v << (j * BITS);
      start = end;
    }
  }
  values[word] = packed;
}
