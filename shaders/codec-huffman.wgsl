// Decode of Huffman streams (docs/format.md "Huffman streams"), one invocation per segment:
// the segments of a mode-2 stream are independent, found through the stream's table of segment
// end offsets (Haugen's offset table; Huff0's jump table), so each invocation decodes 2^g
// symbols on its own (Weißenberger and Schmidt 2018 decode segments in parallel the same way,
// and synchronise where segments are not marked; the format marks them). Modes 0 (raw bytes)
// and 1 (one symbol repeated) are cut into pieces of WG x 2^FLAT_LOG2 bytes, one a workgroup,
// copied or filled a word an invocation at a time (consecutive invocations, consecutive words),
// so one dispatch serves every stream of a chunk or of many chunks.
//
// Workgroups, not invocations, are dealt out to streams: a stream of S segments (or pieces)
// takes ceil(S / WG) consecutive workgroups, and all invocations of a workgroup work on one
// stream. A mode-2 workgroup first builds its stream's 2048-entry decode table in workgroup
// memory from the code lengths in the stream's header (each entry symbol | code length << 8,
// the layout of buildHuffmanDecodeTable in ts/codec/gpu/huffman-decode.ts), where a separate dispatch
// had built every table into a storage buffer first. The kernel's own time did not move with
// it, nor with two symbols a lookup or the bitstream loaded further ahead (measured on an H200,
// docs/benchmarks.md): it is bound by each invocation's loop of 2^g symbols at low occupancy.
//
// Bits are read least significant first; a decoder window holds the next 11 bits, and one
// lookup in the table gives the symbol and the bits to consume.
//
// The checks of docs/format.md that the host leaves to this kernel (ts/codec/gpu/huffman-decode.ts
// parseHuffmanStream reads only the fixed fields) fail the stream's segments: code lengths over
// 11, fewer than two symbols or a Kraft sum other than 1 (every workgroup of the stream, before
// it decodes), a segment whose end offset is below its start or a last segment that does not
// end at the stream's end, a segment that consumes bits past its end or meets a length-0 entry.
// `status` counts the failures, keeps the lowest failing slot and ORs in the reasons.
//
// Mode 3 (docs/format.md, "Mode 3: interleaved lanes"): a workgroup decodes LANE_SEGMENTS = WG / 32
// segments of its stream, 32 invocations a segment, one a lane. Each step every lane with a
// symbol looks its window up; the lanes whose code runs past their buffered bits take the
// segment's next units, in lane order, so their positions are a population count of a mask of
// the lanes that need one (stepMask: a subgroup ballot, or a mask in workgroup memory and a
// barrier a step where subgroups are narrower than 32 or absent; shaders/huffman-lanes-*.wgsl).
// Lane l's quads are words l, l + 32, ... of the segment's output: 32 lanes store 32 consecutive
// words. Where DietGPU interleaves rANS lanes (Johnson 2021), these are Huffman lanes.
//
// Output: each stream's bytes start on a u32 word of `dst`; a segment of 2^g >= 1024 symbols is
// a whole number of words, so every invocation writes whole words and no two invocations share
// a word. The stream's last word is padded with zero bytes.
// Composed by ts/gpu/compose.ts (`const WG` = 256 prepended).

struct Params {
  groups: u32,       // workgroups of this dispatch that work (over all its streams)
  streams: u32,      // entries of `streams`
  slotBase: u32,     // global index (over the dispatches of one decode) of this dispatch's first slot (WG a workgroup)
  pad: u32,
}

struct Stream {
  firstGroup: u32,    // its first workgroup in this dispatch (streams in ascending order)
  symbols: u32,       // decoded bytes n
  segmentLog2: u32,   // g (modes 2 and 3); FLAT_LOG2 for modes 0 and 1
  mode: u32,          // 0 raw, 1 one symbol, 2 Huffman, 3 Huffman in lanes
  src: u32,           // modes 2, 3: byte offset of the segment end table in `src`; mode 0: of the raw bytes; mode 1: the symbol
  bits: u32,          // modes 2, 3: byte offset of the bitstreams in `src`
  dst: u32,           // word offset of the decoded bytes in `dst`
  header: u32,        // modes 2, 3: byte offset of the stream's mode byte in `src` (its code lengths from +3)
  bitBytes: u32,      // modes 2, 3: bytes of the bitstreams (the stream's end - bits): where the last segment ends
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> streams: array<Stream>;
@group(0) @binding(2) var<storage, read> src: array<u32>;
@group(0) @binding(3) var<storage, read_write> dst: array<u32>;
// [0]: failures; [1]: 0xFFFFFFFF - the lowest failing global slot (0: none); [2]: the reasons
// (REASON_* bits)
@group(0) @binding(4) var<storage, read_write> status: array<atomic<u32>, 3>;

const REASON_BITS: u32 = 1u;     // bits past a segment's end, or a length-0 table entry
const REASON_CODE: u32 = 2u;     // code lengths over 11, fewer than two symbols, a Kraft sum other than 1
const REASON_OFFSETS: u32 = 4u;  // a segment end below its start, or a last segment not ending at the stream's end (mode 3: or an odd length)
const REASON_UNITS: u32 = 8u;    // mode 3: a segment whose lanes read past its units or leave units unread

const TABLE_BITS: u32 = 11u;
const TABLE_ENTRIES: u32 = 2048u;
const TABLE_MASK: u32 = 0x7FFu;
const LANES: u32 = 32u;
const LANE_SEGMENTS: u32 = WG / LANES;   // mode-3 segments a workgroup
// Bytes a segment of at most 2^20 symbols of at most 11 bits can take, with room: bounds the
// bit count so that a lying offset cannot overflow it.
const MAX_SEGMENT_BYTES: u32 = 0x200000u;

var<workgroup> table: array<u32, TABLE_ENTRIES>;
var<workgroup> lens: array<u32, 256>;
var<workgroup> counts: array<atomic<u32>, 16>;
// codes of each length (the index's low 4 bits) among the symbols of each block of 32 (its high 3)
var<workgroup> blockCounts: array<atomic<u32>, 128>;
// the symbols in canonical order (by length, then symbol)
var<workgroup> sorted: array<u32, 256>;
// for each length L: its first code left-aligned to 11 bits, and how many symbols have shorter codes
var<workgroup> bases: array<u32, 16>;
var<workgroup> firsts: array<u32, 16>;
var<workgroup> groupStream: u32;
var<workgroup> codeBad: u32;

// srcWord, read8, read32: shaders/read-src.wgsl (appended)

fn fail(slot: u32, reason: u32) {
  atomicAdd(&status[0], 1u);
  atomicMax(&status[1], 0xFFFFFFFFu - (params.slotBase + slot));
  atomicOr(&status[2], reason);
}

/** The stream of workgroup w (streams ascend by firstGroup; w < params.groups). */
fn streamOfGroup(w: u32) -> u32 {
  var lo = 0u;
  var hi = params.streams - 1u;
  while (lo < hi) {
    let mid = lo + (hi - lo + 1u) / 2u;
    if (streams[mid].firstGroup <= w) { lo = mid; } else { hi = mid - 1u; }
  }
  return lo;
}

/**
 * Builds the decode table of the canonical code whose lengths follow the mode byte at `header`
 * (byte 2: the last symbol with a length, then a nibble a symbol) into `table`, every invocation
 * taking part: the count of codes of each length, then (deflate's rule) the first code of each
 * length, code = (code + count[L - 1]) << 1, left-aligned to 11 bits: the codes of length L
 * then cover the 11-bit values [bases[L], bases[L] + count[L] << (11 - L)), ranges that follow
 * each other in L and cover [0, 2048) once for a complete code. Invocation tid places symbol tid
 * in canonical order (its rank among the symbols of its length: counts by blocks of 32 below
 * its block, then its own block); then each invocation fills 2048 / WG entries, entry w (an
 * 11-bit window, first bit lowest) from its bits reversed, v: the length L whose range holds v
 * and the symbol at firsts[L] + (v - bases[L]) >> (11 - L) in canonical order. (Filling a
 * symbol's 2^(11 - L) entries by its own invocation, a 1-bit code's 1024 in one loop, and
 * ranking by a loop over every symbol below had cost more than a mode-3 workgroup's decode in
 * skewed streams.) Called by every invocation (it has barriers); `build` false (modes 0 and 1)
 * skips the work. Returns whether the code is one a reader accepts (lengths at most 11, at least
 * two symbols, Kraft sum exactly 1), the same in every invocation.
 */
fn buildTable(tid: u32, header: u32, build: bool) -> bool {
  if (tid < 16u) { atomicStore(&counts[tid], 0u); }
  for (var i = tid; i < 128u; i += WG) { atomicStore(&blockCounts[i], 0u); }
  var len = 0u;
  if (build && tid <= read8(header + 2u)) {
    len = (read8(header + 3u + tid / 2u) >> ((tid & 1u) * 4u)) & 15u;
  }
  lens[tid] = len;
  workgroupBarrier();
  if (len > 0u) {
    atomicAdd(&counts[len], 1u);
    atomicAdd(&blockCounts[(tid >> 5u) * 16u + len], 1u);
  }
  workgroupBarrier();
  if (tid == 0u) {
    var symbols = 0u;
    var kraft = 0u;
    var code = 0u;
    var previous = 0u;
    for (var b = 1u; b <= TABLE_BITS; b += 1u) {
      let c = atomicLoad(&counts[b]);
      code = (code + previous) << 1u;
      bases[b] = code << (TABLE_BITS - b);
      firsts[b] = symbols;
      previous = c;
      symbols += c;
      kraft += c << (TABLE_BITS - b);
    }
    var longer = 0u;
    for (var b = TABLE_BITS + 1u; b < 16u; b += 1u) { longer += atomicLoad(&counts[b]); }
    codeBad = select(0u, 1u, build && (longer > 0u || symbols < 2u || kraft != TABLE_ENTRIES));
  }
  let ok = workgroupUniformLoad(&codeBad) == 0u;
  if (!ok || !build) { return ok; }
  if (len > 0u) {
    let block = tid >> 5u;
    var rank = 0u;
    for (var k = 0u; k < block; k += 1u) { rank += atomicLoad(&blockCounts[k * 16u + len]); }
    for (var s = block << 5u; s < tid; s += 1u) {
      if (lens[s] == len) { rank += 1u; }
    }
    sorted[firsts[len] + rank] = tid;
  }
  workgroupBarrier();
  for (var w = tid; w < TABLE_ENTRIES; w += WG) {
    let v = reverseBits(w) >> (32u - TABLE_BITS);
    // the longest length whose range starts at or below v (an empty length's range starts where the next one's does)
    var l = 1u;
    for (var b = 2u; b <= TABLE_BITS; b += 1u) {
      if (bases[b] <= v) { l = b; }
    }
    table[w] = sorted[firsts[l] + ((v - bases[l]) >> (TABLE_BITS - l))] | (l << 8u);
  }
  workgroupBarrier();
  return true;
}

// The 16-bit unit at byte p of `src` (any alignment).
fn read16(p: u32) -> u32 {
  let s = (p & 3u) * 8u;
  if (s <= 16u) { return (srcWord(p >> 2u) >> s) & 0xFFFFu; }
  return read32(p) & 0xFFFFu;
}

/**
 * Mode 3: this invocation decodes lane `lane32` of segment `seg` of `st` (docs/format.md, "Mode 3:
 * interleaved lanes"). Every invocation of the workgroup runs the same 2^g / 32 steps (stepMask
 * may hold a barrier); a lane without a symbol at a step, or of a segment past the stream's end
 * or found bad, takes no unit.
 */
fn decodeLanes(st: Stream, seg: u32, lane: u32, lane32: u32, slot: u32, groupSlot: u32) {
  let segments = ((st.symbols - 1u) >> st.segmentLog2) + 1u;
  let first = seg << st.segmentLog2;
  var c = 0u;                                   // this segment's symbols
  var start = 0u;
  var units = 0u;
  var ok = seg < segments;
  if (ok) {
    c = min(1u << st.segmentLog2, st.symbols - first);
    if (seg > 0u) { start = read32(st.src + (seg - 1u) * 4u); }
    let end = read32(st.src + seg * 4u);
    if (end < start || ((end - start) & 1u) != 0u || (seg + 1u == segments && end != st.bitBytes)) {
      ok = false;
      if (lane32 == 0u) { fail(slot, REASON_OFFSETS); }
    }
    units = (end - start) / 2u;
  }
  let at = st.bits + start;                     // the segment's first unit
  let outWord = st.dst + (first >> 2u);
  let quads = (c + 3u) / 4u;
  let steps = (1u << st.segmentLog2) / LANES;   // uniform: the stream's g
  var b = 0u;       // the lane's buffered bits, next bit lowest
  var a = 0u;       // how many
  var p = 0u;       // units the segment's lanes have taken (the same in all 32)
  var packed = 0u;  // the quad being decoded
  var over = false; // this lane reached past the units
  lanesBegin(at, lane32);
  for (var t = 0u; t < steps; t += 1u) {
    let quad = lane32 + LANES * (t >> 2u);
    let has = ok && !over && 4u * quad + (t & 3u) < c;
    var e = table[b & TABLE_MASK];
    let need = has && (e >> 8u) > a;
    let m = stepMask(need, lane, lane32, groupSlot, t);
    let pos = p + countOneBits(m & ((1u << lane32) - 1u));
    p += countOneBits(m);
    // every invocation takes part (a subgroup shuffle); the unit is this lane's where it needs one
    let unit = lanesUnit(at, pos, need, lane);
    if (need) {
      if (pos >= units) {
        over = true;
        fail(slot, REASON_UNITS);
      } else {
        b |= unit << a;
        a += 16u;
        e = table[b & TABLE_MASK];
      }
    }
    lanesAdvance(at, p, lane32);
    if (has && !over) {
      let len = e >> 8u;
      packed |= (e & 0xFFu) << ((t & 3u) * 8u);
      b >>= len;
      a -= len;
    }
    if ((t & 3u) == 3u) {
      if (ok && quad < quads) { dst[outWord + quad] = packed; }
      packed = 0u;
    }
  }
  if (ok && lane32 == 0u && p < units) { fail(slot, REASON_UNITS); }
}

@compute @workgroup_size(WG)
fn decode(/*IDS*/) {
  /*LANES*/
  let w = wid.y * nwg.x + wid.x;
  if (w >= params.groups) { return; } // uniform: the whole workgroup leaves
  if (tid == 0u) { groupStream = streamOfGroup(w); }
  let st = streams[workgroupUniformLoad(&groupStream)];
  let slot = w * WG + tid;
  if (!buildTable(tid, st.header, st.mode >= 2u)) {
    if (tid == 0u) { fail(slot, REASON_CODE); }
    return;
  }
  if (st.mode == 3u) {
    // 32 invocations a segment: the segment's index within the workgroup from laneGroup
    // (shaders/huffman-lanes-*.wgsl); its slot, for the status, counts segments from the
    // stream's first slot as mode 2's do
    let groupSlot = laneGroup(tid, lane);
    let seg = (w - st.firstGroup) * LANE_SEGMENTS + groupSlot;
    decodeLanes(st, seg, lane, lane & (LANES - 1u), st.firstGroup * WG + seg, groupSlot);
    return;
  }
  let seg = (w - st.firstGroup) * WG + tid;      // segment (mode 2) of the stream
  let first = seg << st.segmentLog2;             // its first symbol

  if (st.mode != 2u) {
    // modes 0 and 1: this workgroup's piece of WG x 2^FLAT_LOG2 bytes, word k x WG + tid of it
    let pieceWords = WG << (st.segmentLog2 - 2u);
    let base = (w - st.firstGroup) * pieceWords;  // first word of the piece in the stream
    let words = (st.symbols + 3u) / 4u;
    let fill = st.src * 0x01010101u;
    for (var k = tid; k < pieceWords; k += WG) {
      let j = base + k;
      if (j >= words) { break; }
      let left = st.symbols - j * 4u;
      var word = fill;
      if (st.mode == 0u) {
        let p = st.src + j * 4u;
        if (left >= 4u) {
          word = read32(p);
        } else {
          word = 0u;
          for (var b = 0u; b < left; b += 1u) { word |= read8(p + b) << (b * 8u); }
        }
      } else if (left < 4u) {
        word = fill & ((1u << (left * 8u)) - 1u);
      }
      dst[st.dst + j] = word;
    }
    return;
  }

  if (first >= st.symbols) { return; }
  let count = min(1u << st.segmentLog2, st.symbols - first);
  let outWord = st.dst + (first >> 2u);          // segments are whole words (2^g, g >= 10)
  let words = (count + 3u) / 4u;

  // this segment's bits are bytes [start, end) of the bitstreams
  var start = 0u;
  if (seg > 0u) { start = read32(st.src + (seg - 1u) * 4u); }
  let end = read32(st.src + seg * 4u);
  let segments = ((st.symbols - 1u) >> st.segmentLog2) + 1u;
  if (end < start || (seg + 1u == segments && end != st.bitBytes)) { fail(slot, REASON_OFFSETS); return; }
  let avail = min(end - start, MAX_SEGMENT_BYTES) * 8u;   // bits the segment may consume
  let at = st.bits + start;
  var wi = at >> 2u;          // word of the window's low bits
  var sh = (at & 3u) * 8u;    // bit of that word where the window starts
  var w0 = srcWord(wi);
  var w1 = srcWord(wi + 1u);
  var used = 0u;
  for (var j = 0u; j < words; j += 1u) {
    var packed = 0u;
    let inWord = min(4u, count - j * 4u);
    for (var k = 0u; k < inWord; k += 1u) {
      // the next 32 bits from bit `sh` of w0 (a shift by 32 - 0 is taken mod 32 and discarded)
      let window = select((w0 >> sh) | (w1 << (32u - sh)), w0, sh == 0u);
      let e = table[window & TABLE_MASK];
      let len = e >> 8u;
      used += len;
      if (len == 0u || used > avail) { fail(slot, REASON_BITS); return; }
      packed |= (e & 0xFFu) << (k * 8u);
      sh += len;
      if (sh >= 32u) {
        sh -= 32u;
        w0 = w1;
        wi += 1u;
        w1 = srcWord(wi + 1u);
      }
    }
    dst[outWord + j] = packed;
  }
}
