// Decode of Huffman streams (docs/format.md "Huffman streams"), one invocation per segment:
// the segments of a mode-2 stream are independent, found through the stream's table of segment
// end offsets (Haugen's offset table; Huff0's jump table), so each invocation decodes 2^g
// symbols on its own (Weißenberger and Schmidt 2018 decode segments in parallel the same way,
// and synchronise where segments are not marked; the format marks them). Modes 0 (raw bytes)
// and 1 (one symbol repeated) are cut into segments of 2^VIRTUAL_LOG2 bytes on the host and
// copied or filled here, so one dispatch serves every stream of a chunk or of many chunks.
//
// Bits are read least significant first; a decoder window holds the next 11 bits, and one
// lookup in the stream's 2048-entry table (symbol | code length << 8, built on the host)
// gives the symbol and the bits to consume. A segment that consumes bits past its end, or
// finds a length-0 entry (not possible with a complete code), is counted in `status`.
//
// Output: each stream's bytes start on a u32 word of `dst`; a segment of 2^g >= 1024 symbols is
// a whole number of words, so every invocation writes whole words and no two invocations share
// a word. The stream's last word is padded with zero bytes.
// Composed by ts/gpu/compose.ts (`const WG` = 256 prepended).

struct Params {
  segments: u32,     // segments over all streams of this dispatch (invocations that work)
  streams: u32,      // entries of `streams`
  segmentBase: u32,  // global index (over the dispatches of one decode) of this dispatch's first segment
  pad: u32,
}

struct Stream {
  firstSegment: u32,  // global index of its first segment (streams in ascending order)
  symbols: u32,       // decoded bytes n
  segmentLog2: u32,   // g (mode 2) or the host's segment size for modes 0 and 1
  mode: u32,          // 0 raw, 1 one symbol, 2 Huffman
  src: u32,           // mode 2: byte offset of the segment end table in `src`; mode 0: of the raw bytes; mode 1: the symbol
  bits: u32,          // mode 2: byte offset of the bitstreams in `src`
  dst: u32,           // word offset of the decoded bytes in `dst`
  table: u32,         // mode 2: first entry of the stream's decode table in `tables`
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> streams: array<Stream>;
@group(0) @binding(2) var<storage, read> tables: array<u32>;
@group(0) @binding(3) var<storage, read> src: array<u32>;
@group(0) @binding(4) var<storage, read_write> dst: array<u32>;
// [0]: segments that failed; [1]: 0xFFFFFFFF - the lowest failing global segment index (0: none)
@group(0) @binding(5) var<storage, read_write> status: array<atomic<u32>, 2>;

const TABLE_MASK: u32 = 0x7FFu;
// Bytes a segment of at most 2^20 symbols of at most 11 bits can take, with room: bounds the
// bit count so that a lying offset cannot overflow it.
const MAX_SEGMENT_BYTES: u32 = 0x200000u;

fn srcWord(i: u32) -> u32 {
  if (i < arrayLength(&src)) { return src[i]; }
  return 0u;
}

fn read8(p: u32) -> u32 {
  return (srcWord(p >> 2u) >> ((p & 3u) * 8u)) & 0xFFu;
}

// Little-endian u32 at byte p of `src`.
fn read32(p: u32) -> u32 {
  let s = (p & 3u) * 8u;
  let lo = srcWord(p >> 2u);
  if (s == 0u) { return lo; }
  return (lo >> s) | (srcWord((p >> 2u) + 1u) << (32u - s));
}

fn fail(g: u32) {
  atomicAdd(&status[0], 1u);
  atomicMax(&status[1], 0xFFFFFFFFu - (params.segmentBase + g));
}

/** The stream of global segment g (streams ascend by firstSegment; g < params.segments). */
fn streamOf(g: u32) -> Stream {
  var lo = 0u;
  var hi = params.streams - 1u;
  while (lo < hi) {
    let mid = lo + (hi - lo + 1u) / 2u;
    if (streams[mid].firstSegment <= g) { lo = mid; } else { hi = mid - 1u; }
  }
  return streams[lo];
}

@compute @workgroup_size(WG)
fn decode(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wid: vec3<u32>,
          @builtin(num_workgroups) nwg: vec3<u32>) {
  let g = (wid.y * nwg.x + wid.x) * WG + tid;
  if (g >= params.segments) { return; }
  let st = streamOf(g);
  let seg = g - st.firstSegment;
  let first = seg << st.segmentLog2;               // first symbol of the segment
  let count = min(1u << st.segmentLog2, st.symbols - first);
  let outWord = st.dst + (first >> 2u);                // segments are whole words (2^g, g >= 10)
  let words = (count + 3u) / 4u;

  if (st.mode == 1u) {
    let fill = st.src * 0x01010101u;
    for (var j = 0u; j < words; j += 1u) {
      let left = count - j * 4u;
      var w = fill;
      if (left < 4u) { w = fill & ((1u << (left * 8u)) - 1u); }
      dst[outWord + j] = w;
    }
    return;
  }

  if (st.mode == 0u) {
    let p = st.src + first;
    for (var j = 0u; j < words; j += 1u) {
      let left = count - j * 4u;
      var w = 0u;
      if (left >= 4u) {
        w = read32(p + j * 4u);
      } else {
        for (var k = 0u; k < left; k += 1u) { w |= read8(p + j * 4u + k) << (k * 8u); }
      }
      dst[outWord + j] = w;
    }
    return;
  }

  // mode 2: this segment's bits are bytes [start, end) of the bitstreams
  var start = 0u;
  if (seg > 0u) { start = read32(st.src + (seg - 1u) * 4u); }
  let end = read32(st.src + seg * 4u);
  if (end < start) { fail(g); return; }
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
      let e = tables[st.table + (window & TABLE_MASK)];
      let len = e >> 8u;
      used += len;
      if (len == 0u || used > avail) { fail(g); return; }
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
