// LSD radix sort of 32-bit keys (u32 bits; i32 and f32 mapped to order-preserving u32), 8-bit
// digits, 4 passes: OneSweep (Adinets and Merrill 2022, "Onesweep: A Faster Least Significant
// Digit Radix Sort for GPUs"): one kernel per 8-bit digit place (rank, look-back, scatter), the
// chained scan's decoupled look-back run for each of the 256 digits, plus the decoupled
// fallback of Smith, Levien and Owens (SPAA 2025, "Decoupled Fallback"), because WebGPU gives no
// forward-progress guarantee between workgroups.
//
// Entry points (composed by ts/gpu/radix-sort.ts, which records them in one command buffer):
//   globalHistogram: one read of all keys -> the four 256-bin digit histograms
//                    digitStart[pass * 256 + digit] (u32 atomics, zeroed before);
//   scanHistogram:   one workgroup: each pass's 256 bins -> their exclusive scan, in place
//                    (= the first output index of each digit in that pass);
//   onesweep:        one per pass: each workgroup takes the next tile (start order), ranks its
//                    keys per digit, publishes its 256 digit counts, looks back per digit for
//                    the count of that digit in all earlier tiles, then orders its keys by digit
//                    and scatters them (and u32 values) to digitStart + look-back prefix + rank.
// Keys are mapped to u32 whose unsigned order is the key order (i32: flip the sign bit; f32:
// IEEE totalOrder, negative -> all bits flipped, positive -> sign bit set) wherever pass 0 and
// the histogram read them, and mapped back when the last pass stores them.
//
// Composed with: SORT_WG (invocations per onesweep workgroup), ITEMS (keys per invocation, 8, 12
// or 16), MIN_SG and MAX_SG (the adapter's subgroup sizes), LB_WINDOW (look-back reads per round,
// 1..32), the ranking piece (`rankTile`, `scanDigits`, RANK_GROUPS: radix-rank-subgroup.wgsl or
// radix-rank-shared.wgsl)
// and, for key-only sorts, every line marked `// values` removed. LB_MAX_SPIN is an override.
//
// Tile (TILE = SORT_WG * ITEMS keys): the workgroup's "groups" (subgroups, or the whole
// workgroup without subgroups) each own a contiguous region of GROUP * ITEMS keys; item k of
// lane l is key region + k * GROUP + l (coalesced loads; (k, l) order = key order, so ranks are
// stable).
//
// Look-back status words (`spine`, u32 atomics, zeroed before each pass):
//   [0]                         tile counter: tiles are numbered in the order workgroups start,
//                               so a tile's predecessors have all started;
//   [SPINE_BASE + 256 t + d]    tile t's status for digit d: flag in the top 2 bits (0: not yet
//                               published, READY: the value is tile t's count of digit d,
//                               INCLUSIVE: the value is the count of digit d in tiles 0..t),
//                               value in the low 30 bits (n < 2^30 keys). One word per status, so
//                               a reader never sees half an update; tile 0 publishes INCLUSIVE
//                               at once, every other tile READY then INCLUSIVE.
// Look-back (once the tile has published its counts and scanned them): invocation t walks
// digits t, t + SORT_WG, ... back from the previous tile, LB_WINDOW predecessors per round
// (independent reads, in flight together: one memory round trip per window instead of per
// tile), adding READY counts up to the nearest INCLUSIVE one, which ends the walk; a status not
// yet published ends the round, and the next round starts at that tile. A digit's walk that
// ends publishes this tile's INCLUSIVE status of that digit at once (successors waiting on it
// need not wait for the other digits). A digit whose walk makes no progress within LB_MAX_SPIN
// rounds stops; when any digit stopped, the workgroup recounts the highest such predecessor
// tile's digit histogram from its keys (decoupled fallback; the count equals what that tile
// publishes), and every digit waiting on that tile takes its count and walks on: each round
// moves at least one digit one tile back, so the look-back ends whatever the scheduler does.
// LB_MAX_SPIN = 0 recounts every predecessor (tests). Status words are relaxed atomics; each
// carries its own value, and a tile's status of a digit only goes 0 -> READY -> INCLUSIVE, so
// no ordering is needed.

struct Params {
  n: u32,          // keys
  numTiles: u32,   // ceil(n / TILE) (onesweep); workgroups of the dispatch (globalHistogram)
  shift: u32,      // digit = (key >> shift) & 0xFF; pass = shift / 8
  flags: u32,      // bit 0: map keys to sortable on load; bit 1: map back on store; bits 8..9: 0 u32, 1 i32, 2 f32
}

const TILE: u32 = SORT_WG * ITEMS;
const RADIX: u32 = 256u;
const SPINE_BASE: u32 = 4u;
const ST_READY: u32 = 0x40000000u;
const ST_INCLUSIVE: u32 = 0x80000000u;
const ST_FLAG: u32 = 0xC0000000u;
const ST_VALUE: u32 = 0x3FFFFFFFu;
const WALK_DONE: u32 = 0xFFFFFFFFu;
override LB_MAX_SPIN: u32 = 1024u; // 0 forces the fallback at every step (tests)

fn toSortable(k: u32, kind: u32) -> u32 {
  if (kind == 1u) { return k ^ 0x80000000u; }
  if (kind == 2u) { return k ^ select(0x80000000u, 0xFFFFFFFFu, (k & 0x80000000u) != 0u); }
  return k;
}

fn fromSortable(k: u32, kind: u32) -> u32 {
  if (kind == 1u) { return k ^ 0x80000000u; }
  if (kind == 2u) { return k ^ select(0xFFFFFFFFu, 0x80000000u, (k & 0x80000000u) != 0u); }
  return k;
}

// ---- global histogram -------------------------------------------------------------------------
// HIST_WG invocations; a block is HIST_WG vec4 loads (4 * HIST_WG keys); workgroup w reads blocks
// w, w + numWorkgroups, ... and counts each key's 4 digits in workgroup atomics, then adds its
// non-zero bins to the global histogram.

const HIST_WG: u32 = 256u;

@group(0) @binding(0) var<uniform> histParams: Params;
@group(0) @binding(1) var<storage, read> histKeys: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read_write> histOut: array<atomic<u32>>; // [pass * 256 + digit]

var<workgroup> histCount: array<atomic<u32>, 1024>;

fn histAdd(key: u32) {
  atomicAdd(&histCount[key & 0xFFu], 1u);
  atomicAdd(&histCount[256u + ((key >> 8u) & 0xFFu)], 1u);
  atomicAdd(&histCount[512u + ((key >> 16u) & 0xFFu)], 1u);
  atomicAdd(&histCount[768u + (key >> 24u)], 1u);
}

@compute @workgroup_size(HIST_WG)
fn globalHistogram(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wid: vec3<u32>,
                   @builtin(num_workgroups) nwg: vec3<u32>) {
  let w = wid.y * nwg.x + wid.x; // a 2-D grid's extra workgroups exit
  if (w >= histParams.numTiles) { return; }
  for (var b = tid; b < 1024u; b += HIST_WG) { atomicStore(&histCount[b], 0u); }
  workgroupBarrier();
  let n = histParams.n;
  let kind = (histParams.flags >> 8u) & 3u;
  let nVecs = (n + 3u) / 4u;
  for (var v = w * HIST_WG + tid; v < nVecs; v += histParams.numTiles * HIST_WG) {
    let q = histKeys[v];
    let e = v * 4u;
    histAdd(toSortable(q.x, kind));
    if (e + 1u < n) { histAdd(toSortable(q.y, kind)); }
    if (e + 2u < n) { histAdd(toSortable(q.z, kind)); }
    if (e + 3u < n) { histAdd(toSortable(q.w, kind)); }
  }
  workgroupBarrier();
  for (var b = tid; b < 1024u; b += HIST_WG) {
    let c = atomicLoad(&histCount[b]);
    if (c != 0u) { atomicAdd(&histOut[b], c); }
  }
}

// ---- scan of the global histogram -------------------------------------------------------------
// One workgroup of 64 invocations: invocation t scans 16 bins (pass t / 16, bins 16 (t % 16) ..),
// then invocations 0..3 scan their pass's 16 partial sums.

@group(0) @binding(3) var<storage, read_write> scanHist: array<u32>; // [pass * 256 + digit]

var<workgroup> scanPart: array<u32, 64>;

@compute @workgroup_size(64)
fn scanHistogram(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
  if (wid.x + wid.y != 0u) { return; }
  var s = 0u;
  for (var i = 0u; i < 16u; i += 1u) { s += scanHist[tid * 16u + i]; }
  scanPart[tid] = s;
  workgroupBarrier();
  if (tid < 4u) {
    var run = 0u;
    for (var i = 0u; i < 16u; i += 1u) {
      let v = scanPart[tid * 16u + i];
      scanPart[tid * 16u + i] = run;
      run += v;
    }
  }
  workgroupBarrier();
  var run = scanPart[tid];
  for (var i = 0u; i < 16u; i += 1u) {
    let v = scanHist[tid * 16u + i];
    scanHist[tid * 16u + i] = run;
    run += v;
  }
}

// ---- onesweep: one pass -----------------------------------------------------------------------
// Ranks the tile's keys (rankTile), publishes the tile's digit counts (READY) as soon as they are
// known, looks back, orders the keys by digit in workgroup memory (`stage`; CUB's OneSweep stages
// before its look-back, which here made a pass 1.6 % slower), then writes the keys out in stage order:
// consecutive invocations write consecutive addresses of a digit's output segment, so the scatter
// is coalesced per digit segment (OneSweep's staging). Values follow through the same stage in a
// second round. Workgroup memory starts zeroed (WGSL), so the rank counters, lbSum and fbMax need
// no reset.

@group(0) @binding(4) var<uniform> params: Params;
@group(0) @binding(5) var<storage, read> keysIn: array<u32>;
@group(0) @binding(6) var<storage, read> digitStart: array<u32>;   // scanned global histogram
@group(0) @binding(7) var<storage, read_write> spine: array<atomic<u32>>;
@group(0) @binding(8) var<storage, read_write> keysOut: array<u32>;
@group(0) @binding(9) var<storage, read> valuesIn: array<u32>;         // values
@group(0) @binding(10) var<storage, read_write> valuesOut: array<u32>; // values

var<workgroup> tileNum: u32;
var<workgroup> digitCount: array<u32, RADIX>;  // this tile's count of each digit
var<workgroup> lbSum: array<u32, RADIX>;       // look-back: count of each digit in earlier tiles
var<workgroup> digitBase: array<u32, RADIX>;   // digitStart, then output - stage index (digitScanned)
var<workgroup> tileStart: array<u32, RADIX>;   // counts, then first stage index (scanDigits)
var<workgroup> stage: array<u32, TILE>;
var<workgroup> walkId: array<u32, RADIX>;      // look-back: next predecessor to read, or WALK_DONE
var<workgroup> fbMax: atomic<u32>;             // fallback: 1 + highest stalled predecessor, 0: none
var<workgroup> fbTile: u32;
var<workgroup> fbCount: array<atomic<u32>, RADIX>;

/**
 * scanDigits (in the ranking piece) calls this once per digit d with its first stage index; the
 * look-back adds the count of d in earlier tiles (publishInclusive). Then key i of the stage, a
 * key of digit d, goes to output index digitBase[d] + i (u32 arithmetic wraps; the sum is in
 * range).
 */
fn digitScanned(d: u32, start: u32) {
  tileStart[d] = start;
  digitBase[d] -= start;
}

fn statusIndex(tile: u32, d: u32) -> u32 {
  return SPINE_BASE + tile * RADIX + d;
}

/**
 * `tile`'s INCLUSIVE status of digit d: its count in tiles before `tile` (`before`) + its own;
 * `before` also goes into digitBase[d].
 */
fn publishInclusive(tile: u32, d: u32, before: u32) {
  atomicStore(&spine[statusIndex(tile, d)], ST_INCLUSIVE | (before + digitCount[d]));
  digitBase[d] += before;
}

/**
 * Walks back from walkId[d] for each digit d of this invocation, adding READY counts to lbSum[d],
 * until an INCLUSIVE status (walkId[d] = WALK_DONE; `tile`'s INCLUSIVE status of d published at
 * once) or LB_MAX_SPIN rounds without progress (then fbMax >= walkId[d] + 1). A round reads the
 * statuses of LB_WINDOW predecessors walkId[d], walkId[d] - 1, ... at once (independent loads:
 * one memory round trip for up to LB_WINDOW tiles, as in CUB's warp-wide look-back), takes the
 * READY counts up to the nearest INCLUSIVE one and stops at the first one not yet published.
 * Consecutive invocations walk consecutive digits, so a subgroup's reads of a tile coalesce.
 */
fn walkDigits(tile: u32, tid: u32) {
  for (var d = tid; d < RADIX; d += SORT_WG) {
    var id = walkId[d];
    if (id == WALK_DONE) { continue; }
    var acc = lbSum[d];
    var spin = 0u;
    while (id != WALK_DONE && spin < LB_MAX_SPIN) {
      var st: array<u32, LB_WINDOW>;
      for (var j = 0u; j < LB_WINDOW; j += 1u) {
        // j > id: before tile 0, counts as not published (never reached: tile 0's status is
        // INCLUSIVE or not published, and either ends the round)
        let s = atomicLoad(&spine[statusIndex(id - min(j, id), d)]);
        st[j] = select(0u, s, j <= id);
      }
      var run = true; // statuses 0 .. j - 1 of the window were all READY
      var moved = 0u;
      var done = false;
      for (var j = 0u; j < LB_WINDOW; j += 1u) {
        let flag = st[j] & ST_FLAG;
        let take = run && flag != 0u;
        acc += select(0u, st[j] & ST_VALUE, take);
        moved += select(0u, 1u, take);
        done = done || (take && flag == ST_INCLUSIVE);
        run = take && flag == ST_READY;
      }
      if (done) {
        id = WALK_DONE;
      } else if (moved > 0u) {
        id -= moved; // tiles id .. id - moved + 1 were READY; tile 0 never is, so id >= moved
        spin = 0u;
      } else {
        spin += 1u;
      }
    }
    walkId[d] = id;
    lbSum[d] = acc;
    if (id == WALK_DONE) { publishInclusive(tile, d, acc); } else { atomicMax(&fbMax, id + 1u); }
  }
}

/** Counts the digits of tile f's keys (this pass's shift and mapping) into fbCount. */
fn recountTile(f: u32, tid: u32, kind: u32, mapIn: bool) {
  for (var d = tid; d < RADIX; d += SORT_WG) { atomicStore(&fbCount[d], 0u); }
  workgroupBarrier();
  for (var k = 0u; k < ITEMS; k += 1u) {
    let i = f * TILE + k * SORT_WG + tid;
    if (i < params.n) {
      var key = keysIn[i];
      if (mapIn) { key = toSortable(key, kind); }
      atomicAdd(&fbCount[(key >> params.shift) & 0xFFu], 1u);
    }
  }
  workgroupBarrier();
}

/**
 * Look-back of every digit for tile `tile` > 0 (walkId[d] = tile - 1, lbSum[d] = 0 before):
 * lbSum[d] = the count of digit d in tiles 0 .. tile - 1; publishes tile's INCLUSIVE status of
 * each digit as soon as that digit's walk ends (and adds lbSum[d] to digitBase[d]). Every
 * invocation calls it (uniform control flow); it ends with a barrier.
 */
fn lookbackDigits(tile: u32, tid: u32, kind: u32, mapIn: bool) {
  loop {
    walkDigits(tile, tid);
    workgroupBarrier();
    if (tid == 0u) {
      fbTile = atomicLoad(&fbMax);
      atomicStore(&fbMax, 0u); // the next round's atomicMax come after the load below
    }
    let f1 = workgroupUniformLoad(&fbTile);
    if (f1 == 0u) { break; }
    // Fallback: predecessor f has not published some digit; count its tile here.
    let f = f1 - 1u;
    recountTile(f, tid, kind, mapIn);
    for (var d = tid; d < RADIX; d += SORT_WG) {
      if (walkId[d] == f) {
        lbSum[d] += atomicLoad(&fbCount[d]);
        walkId[d] = select(f - 1u, WALK_DONE, f == 0u);
        if (f == 0u) { publishInclusive(tile, d, lbSum[d]); }
      }
    }
  }
}

@compute @workgroup_size(SORT_WG)
fn onesweep(/*IDS*/) {
  /*LANES*/
  if (tid == 0u) { tileNum = atomicAdd(&spine[0], 1u); }
  let tile = workgroupUniformLoad(&tileNum);
  if (tile >= params.numTiles) { return; }
  let group = tid / sg;
  let groups = SORT_WG / sg;
  let kind = (params.flags >> 8u) & 3u;
  let mapIn = (params.flags & 1u) != 0u;
  let mapOut = (params.flags & 2u) != 0u;
  let region = tile * TILE + group * sg * ITEMS;
  // Load every key first (independent loads in flight together), then rank.
  var keys: array<u32, ITEMS>;
  var ranks: array<u32, ITEMS>;
  var vals: array<u32, ITEMS>; // values
  for (var k = 0u; k < ITEMS; k += 1u) {
    let i = region + k * sg + lane;
    if (i < params.n) {
      keys[k] = keysIn[i];
      vals[k] = valuesIn[i]; // values
    }
  }
  // this pass's first output index of each digit, read while the keys load
  let startBase = (params.shift / 8u) * RADIX;
  for (var d = tid; d < RADIX; d += SORT_WG) { digitBase[d] = digitStart[startBase + d]; }
  for (var k = 0u; k < ITEMS; k += 1u) {
    var key = 0u;
    if (region + k * sg + lane < params.n) {
      key = keys[k];
      if (mapIn) { key = toSortable(key, kind); }
    }
    keys[k] = key;
  }
  rankTile(&keys, &ranks, region, tid, lane, sg);
  workgroupBarrier();
  // rankCount[g * 256 + d]: group g's count of digit d -> exclusive prefix over groups (all
  // loads first: independent); the tile's count of digit d is published at once (READY; tile 0:
  // INCLUSIVE) and kept in digitCount[d] and tileStart[d] (for scanDigits)
  for (var d = tid; d < RADIX; d += SORT_WG) {
    var c: array<u32, RANK_GROUPS>;
    for (var g = 0u; g < RANK_GROUPS; g += 1u) {
      if (g < groups) { c[g] = atomicLoad(&rankCount[g * RADIX + d]); }
    }
    var sum = 0u;
    for (var g = 0u; g < RANK_GROUPS; g += 1u) {
      if (g < groups) {
        atomicStore(&rankCount[g * RADIX + d], sum);
        sum += c[g];
      }
    }
    atomicStore(&spine[statusIndex(tile, d)], select(ST_READY, ST_INCLUSIVE, tile == 0u) | sum);
    digitCount[d] = sum;
    tileStart[d] = sum;
    walkId[d] = tile - 1u; // tile 0 does not look back
  }
  workgroupBarrier();
  scanDigits(tid, lane, sg);
  workgroupBarrier();
  // digitBase[d] += count of digit d in tiles before this one (look-back; tile 0: none), before
  // the staging: this tile's INCLUSIVE statuses go out sooner for its successors (on the H200 a
  // pass took 3.78-3.80 ms against 3.84-3.86 with the staging first, in two runs of
  // sort-rank.mjs and its sort-rank-nvidia-h200-order.log in git history)
  if (tile != 0u) { lookbackDigits(tile, tid, kind, mapIn); }
  for (var k = 0u; k < ITEMS; k += 1u) {
    let i = region + k * sg + lane;
    if (i < params.n) {
      let d = (keys[k] >> params.shift) & 0xFFu;
      let local = tileStart[d] + atomicLoad(&rankCount[group * RADIX + d]) + ranks[k];
      stage[local] = keys[k];
      ranks[k] = local;
    }
  }
  workgroupBarrier();
  let tileN = min(TILE, params.n - tile * TILE);
  var pos: array<u32, ITEMS>; // values
  for (var j = 0u; j < ITEMS; j += 1u) {
    let i = j * SORT_WG + tid;
    if (i < tileN) {
      let key = stage[i];
      let p = digitBase[(key >> params.shift) & 0xFFu] + i;
      keysOut[p] = select(key, fromSortable(key, kind), mapOut);
      pos[j] = p; // values
    }
  }
  workgroupBarrier(); // values
  for (var k = 0u; k < ITEMS; k += 1u) { // values
    if (region + k * sg + lane < params.n) { stage[ranks[k]] = vals[k]; } // values
  } // values
  workgroupBarrier(); // values
  for (var j = 0u; j < ITEMS; j += 1u) { // values
    let i = j * SORT_WG + tid; // values
    if (i < tileN) { valuesOut[pos[j]] = stage[i]; } // values
  } // values
}
