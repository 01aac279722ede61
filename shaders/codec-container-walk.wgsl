// The chunk table of a container that lives on the device, for decompress from a DeviceArray
// (ts/codec/gpu/device-container.ts): to plan the decode the host needs the header, every
// chunk's entry, its stream directory, the first bytes of each of its streams and a quantized
// chunk's header, and reads them back in one piece instead of the whole container. Two
// dispatches:
//   walk   one invocation copies the header (32 bytes) to `out` (from chunk 0: and the 68 bytes
//          after it, where a version-4 header of rank r > 0 has its shape block of 8 r + 4 bytes,
//          whose end is then where the entries start when params.start is 32: the start it took
//          goes to the start word, which the host checks against the header it reads), then
//          follows the entries from chunk params.first, whose entry starts at byte params.start
//          (or after the shape block): an entry's place is known
//          only from the previous one's payload length (a chain of dependent reads). It stops
//          after params.chunks entries, at the header's chunk count, or at an entry that does not
//          fit in the container's params.bytes; it writes each entry's byte offset to its word of
//          the offsets, the count of entries it reached to the reached word and where the next
//          entry would start to the stop word (NONE after a payload that runs past the end).
//   copy   one workgroup a chunk reached fills its slot (SLOT_WORDS words; see below) from the entry and
//          the payload as docs/format.md lays them out: the entry; the payload's first
//          4 PREFIX_WORDS bytes (a quantized chunk's header: bound, step, exception count n; a
//          predicted chunk's predict header, PREDICT_HEAD_MAX_BYTES at most); the directory (S x 8
//          bytes, S <= 8; after the header and the 8 n bytes of exceptions in a quantized
//          chunk, 12 n of f64), and where it was read; for each stream j < S, where it starts (the
//          directory's end + the encoded sizes of the streams before it) and its first 4 bytes.
//          From chunk 0, where a version-4 header says the container ends in a chunk index of
//          its chunk count C <= params.chunks: workgroup k also copies the index's words 2k and
//          2k + 1 (workgroup 0 its checksum, word 2C), into indexAt() on, and where the index
//          starts to the index word (NONE where it copied none).
//   blocks  one invocation a predicted chunk (stage 7) follows its field blocks, which lie one
//          after another (each block's length gives the next one's place), from its first block
//          (the predict header's end, which the host read) to its payload's end: for each block
//          its place, its 8-byte head and the 64 bytes after it (its stream directory), and for
//          each of its streams (S of them, from the head's stages and the element width:
//          S <= 8) where it starts and its first 4 bytes, as `copy` does for a chunk, into a
//          slot of BLOCK_WORDS words; a block that does not fit the payload ends the walk (NONE
//          in its place word).
// Nothing here is trusted: the host walks the table again from these bytes with every check of
// the in-memory reader and finds each byte it reads at the offset it computes itself (a copy
// made at another offset is not found there: the host then reads zeros). Every read of `src` is
// bounded (0 past the binding); bytes past the payload (or the container) read as 0.
// `out` layout, in words: [0, 8) the header, [8] the stop, [9] the entries reached, [10] the
// start, [11] the index's place, [12, 29) the 68 bytes after the header, [32, 32 + chunks) the
// offsets (those past the entries reached unspecified), then `chunks` slots from slotsAt(), then
// 2 chunks + 1 words of the chunk index from indexAt() (ts/codec/gpu/device-container.ts
// agrees, and prepends PREFIX_WORDS: `const PREFIX_WORDS = ...u;`).

const HEADER_WORDS = 8u;
const STOP_AT = 8u;
const REACHED_AT = 9u;
const START_AT = 10u;
const INDEX_FROM_AT = 11u;
const INDEX_FLAG = 0x10u;    // version 4, header byte 11
const SHAPE_AT = 12u;
const SHAPE_WORDS = 17u;     // a shape block of MAX_RANK dims (8 bytes each) and its checksum
const MAX_RANK = 8u;
const HEADER_BYTES = 32u;
const OFFSETS_AT = 32u;
const ENTRY_BYTES = 32u;
const NONE = 0xFFFFFFFFu;
const MAX_STREAMS = 8u;
// a slot, in words
const SLOT_QUANTIZE = 8u;    // PREFIX_WORDS words: the payload's first bytes
const SLOT_DIRECTORY = SLOT_QUANTIZE + PREFIX_WORDS;  // 16 words: the directory (MAX_STREAMS x 8 bytes)
const SLOT_DIRECTORY_AT = SLOT_DIRECTORY + 16u;
const SLOT_STREAM_AT = SLOT_DIRECTORY_AT + 1u;  // MAX_STREAMS words: each stream's byte offset (NONE: none)
const SLOT_HEADS = SLOT_STREAM_AT + MAX_STREAMS;  // MAX_STREAMS words: each stream's first 4 bytes
const SLOT_WORDS = SLOT_HEADS + MAX_STREAMS;
const_assert SLOT_WORDS <= 128u;  // an invocation a word of a workgroup of `copy`
const QUANTIZED = 5u;        // entry byte 24 of a quantized chunk
const F64_TYPE = 8u;         // header byte 9 of a container of f64 elements

struct Params {
  bytes: u32,   // the container's length in bytes
  first: u32,   // the index of the first chunk of this walk
  start: u32,   // the byte offset of its entry
  chunks: u32,  // slots: chunks walked at most
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> src: array<u32>;
@group(0) @binding(2) var<storage, read_write> out: array<u32>;
// blocks: a predicted chunk's walk (params.chunks of them): its first block's byte offset, its
// payload's end, its fields | the element width (bytes) << 16, its first slot's word in `out`
@group(0) @binding(3) var<storage, read> blockJobs: array<vec4<u32>>;

// a field block's slot, in words: its place, its head (2 words), the 64 bytes after the head,
// each stream's byte offset (NONE: none), each stream's first 4 bytes
const BLOCK_WORDS = 35u;
const BLOCK_STREAM_AT = 19u;
const BLOCK_HEADS = 27u;
const BLOCK_HEAD_BYTES = 8u;
const SHUFFLE = 2u;  // stage ids (ts/format/stages.ts StageId)
const RLE = 3u;

// srcWord, read8, read32: shaders/read-src.wgsl (appended)

fn slotsAt() -> u32 {
  return OFFSETS_AT + ((params.chunks + 3u) & ~3u);
}

fn indexAt() -> u32 {
  return slotsAt() + params.chunks * SLOT_WORDS;
}

// Where the chunk index starts when this walk copies it (from chunk 0, a version-4 header with
// the index flag, its chunk count within the slots, the index within the container), else NONE.
fn indexFrom() -> u32 {
  let total = read32(24u);
  if (params.first != 0u || read8(8u) != 4u || (read8(11u) & INDEX_FLAG) == 0u || total > params.chunks) { return NONE; }
  let bytes = 8u * total + 4u;
  if (bytes > params.bytes) { return NONE; }
  return params.bytes - bytes;
}

@compute @workgroup_size(1)
fn walk() {
  for (var i = 0u; i < HEADER_WORDS; i++) {
    out[i] = srcWord(i);
  }
  let total = read32(24u);  // the header's chunk count
  var at = params.start;
  if (params.first == 0u) {
    for (var i = 0u; i < SHAPE_WORDS; i++) {
      out[SHAPE_AT + i] = srcWord(HEADER_WORDS + i);
    }
    let rank = read8(11u) & 15u;  // version 4: byte 11's low bits
    if (params.start == HEADER_BYTES && read8(8u) == 4u && rank > 0u && rank <= MAX_RANK) {
      at = HEADER_BYTES + 8u * rank + 4u;
    }
  }
  out[START_AT] = at;
  var k = 0u;
  loop {
    if (k >= params.chunks || params.first + k >= total || at > params.bytes || params.bytes - at < ENTRY_BYTES) { break; }
    out[OFFSETS_AT + k] = at;
    k += 1u;
    let payload = read32(at + 12u);
    if (payload > params.bytes - at - ENTRY_BYTES) {
      at = NONE;
      break;
    }
    at += ENTRY_BYTES + payload;
  }
  out[STOP_AT] = at;
  out[REACHED_AT] = k;
  out[INDEX_FROM_AT] = indexFrom();
}

// The 4 bytes at byte p, those at or past `end` read as 0.
fn bytesBefore(p: u32, end: u32) -> u32 {
  if (p >= end) { return 0u; }
  let word = read32(p);
  if (end - p >= 4u) { return word; }
  return word & ((1u << ((end - p) * 8u)) - 1u);
}

// Where stream j of a directory of `streams` entries (8 bytes each: decoded, encoded sizes) at
// byte directoryAt starts: the directory's end + the encoded sizes of the streams before it;
// NONE for no such stream, or where the directory or a stream before it runs past `end`.
fn streamStart(directoryAt: u32, streams: u32, j: u32, end: u32) -> u32 {
  if (directoryAt == NONE || j >= streams || streams > MAX_STREAMS || directoryAt > end || end - directoryAt < 8u * streams) {
    return NONE;
  }
  var p = directoryAt + 8u * streams;
  for (var i = 0u; i < j; i++) {
    let encoded = read32(directoryAt + 8u * i + 4u);
    if (encoded > end - p) { return NONE; }
    p += encoded;
  }
  return p;
}

@compute @workgroup_size(128)
fn copy(@builtin(local_invocation_index) w: u32, @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>) {
  let k = wid.y * nwg.x + wid.x;
  if (k >= params.chunks || w >= SLOT_WORDS) { return; }
  // the chunk index: words 2k and 2k + 1 (its entry offset k), workgroup 0 the checksum too
  let indexStart = indexFrom();
  let total = read32(24u);
  if (indexStart != NONE && ((k < total && w < 2u) || (k == 0u && w == 2u))) {
    let i = select(2u * k + w, 2u * total, w == 2u);
    out[indexAt() + i] = bytesBefore(indexStart + 4u * i, params.bytes);
  }
  if (k >= out[REACHED_AT]) { return; }
  let slot = slotsAt() + k * SLOT_WORDS;
  let at = out[OFFSETS_AT + k];
  // at + 32 <= params.bytes (the walk's check); the payload ends at the container's end at most
  let payloadAt = at + ENTRY_BYTES;
  let end = payloadAt + min(read32(at + 12u), params.bytes - payloadAt);
  // the directory: after a quantized chunk's header and exceptions (f32: a 16-byte header whose
  // word 3 counts the exceptions, 8 bytes each; f64: 24, word 4, 12 bytes each)
  var directoryAt = payloadAt;
  if ((read32(at + 24u) & 0xFFu) == QUANTIZED) {
    let f64 = ((read32(8u) >> 8u) & 0xFFu) == F64_TYPE;
    let each = select(8u, 12u, f64);
    let exceptions = read32(payloadAt + select(12u, 16u, f64));
    directoryAt = select(NONE, payloadAt + select(16u, 24u, f64) + each * exceptions, exceptions <= (end - payloadAt) / each);
  }
  let streams = read32(at + 8u);
  var word = 0u;
  if (w < SLOT_QUANTIZE) {
    word = read32(at + 4u * w);
  } else if (w < SLOT_DIRECTORY) {
    word = bytesBefore(payloadAt + 4u * (w - SLOT_QUANTIZE), end);
  } else if (w < SLOT_DIRECTORY_AT) {
    if (directoryAt != NONE) { word = bytesBefore(directoryAt + 4u * (w - SLOT_DIRECTORY), end); }
  } else if (w == SLOT_DIRECTORY_AT) {
    word = directoryAt;
  } else if (w < SLOT_HEADS + MAX_STREAMS) {
    let p = streamStart(directoryAt, streams, select(w - SLOT_STREAM_AT, w - SLOT_HEADS, w >= SLOT_HEADS), end);
    if (w < SLOT_HEADS) {
      word = p;
    } else if (p != NONE) {
      word = bytesBefore(p, end);
    }
  }
  out[slot + w] = word;
}

@compute @workgroup_size(64)
fn blocks(@builtin(global_invocation_id) gid: vec3<u32>) {
  let i = gid.x;
  if (i >= params.chunks) { return; }
  let job = blockJobs[i];
  let end = min(job.y, params.bytes);
  let fields = job.z & 0xFFFFu;
  let width = job.z >> 16u;
  var at = job.x;
  for (var k = 0u; k < fields; k++) {
    let slot = job.w + k * BLOCK_WORDS;
    if (at > end || end - at < BLOCK_HEAD_BYTES) {
      out[slot] = NONE;
      return;
    }
    out[slot] = at;
    for (var w = 0u; w < BLOCK_STREAM_AT - 1u; w++) {
      out[slot + 1u + w] = bytesBefore(at + 4u * w, end);
    }
    let bytes = read32(at + 4u);
    let fits = bytes <= end - at - BLOCK_HEAD_BYTES;
    // its streams: S from its stages (the head's 4 bytes, 0 after the last), its directory of
    // S x 8 bytes (decoded, encoded sizes) after the head, the streams after the directory
    let stages = read32(at);
    var shuffle = false;
    var rle = false;
    for (var b = 0u; b < 4u; b++) {
      let id = (stages >> (8u * b)) & 0xFFu;
      shuffle = shuffle || id == SHUFFLE;
      rle = rle || id == RLE;
    }
    let streams = select(select(1u, width, shuffle) * select(1u, 2u, rle), 0u, (stages & 0xFFu) == 0u);
    // (none where the block does not fit the payload)
    let directoryAt = at + BLOCK_HEAD_BYTES;
    for (var j = 0u; j < MAX_STREAMS; j++) {
      let p = streamStart(directoryAt, select(0u, streams, fits), j, directoryAt + bytes);
      out[slot + BLOCK_STREAM_AT + j] = p;
      out[slot + BLOCK_HEADS + j] = select(0u, bytesBefore(p, end), p != NONE);
    }
    if (!fits) {
      at = NONE;
    } else {
      at += BLOCK_HEAD_BYTES + bytes;
    }
  }
}
