// The chunk table of a container that lives on the device, for decompress from a DeviceArray
// (ts/codec/gpu/device-container.ts): to plan the decode the host needs the header, every
// chunk's entry and the first bytes of its payload (its stream directory, a quantized chunk's
// header), and reads them back in one piece instead of the whole container. Two dispatches:
//   walk   one invocation copies the header (32 bytes) to `out`, then follows the entries from
//          chunk params.first, whose entry starts at byte params.start: an entry's place is known
//          only from the previous one's payload length (a chain of dependent reads). It stops
//          after params.chunks entries, at the header's chunk count, or at an entry that does not
//          fit in the container's params.bytes; it writes each entry's byte offset to its word of
//          the offsets (0xFFFFFFFF for the chunks it did not reach) and where the next entry
//          would start to the stop word (0xFFFFFFFF after a payload that runs past the end).
//   copy   one workgroup a chunk slot copies the entry and the first PREFIX bytes of its payload
//          (fewer where the payload or the container ends; zeros after them) to its slot.
// Nothing here is trusted: the host walks the table again from these bytes with every check of
// the in-memory reader. Every read of `src` is bounded (0 past the binding).
// `out` layout, in words: [0, 8) the header, [8] the stop, [12, 12 + chunks) the offsets, then
// `chunks` slots of SLOT_WORDS words from SLOTS_AT (ts/codec/gpu/device-container.ts agrees).

const HEADER_WORDS = 8u;
const STOP_AT = 8u;
const OFFSETS_AT = 12u;
const ENTRY_BYTES = 32u;
const PREFIX = 96u;
const SLOT_WORDS = 32u;  // (ENTRY_BYTES + PREFIX) / 4
const NONE = 0xFFFFFFFFu;

struct Params {
  bytes: u32,   // the container's length in bytes
  first: u32,   // the index of the first chunk of this walk
  start: u32,   // the byte offset of its entry
  chunks: u32,  // slots: chunks walked at most
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> src: array<u32>;
@group(0) @binding(2) var<storage, read_write> out: array<u32>;

// srcWord, read8, read32: shaders/read-src.wgsl (appended)

fn slotsAt() -> u32 {
  return OFFSETS_AT + ((params.chunks + 3u) & ~3u);
}

@compute @workgroup_size(1)
fn walk() {
  for (var i = 0u; i < HEADER_WORDS; i++) {
    out[i] = srcWord(i);
  }
  let total = read32(24u);  // the header's chunk count
  var at = params.start;
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
  for (var i = k; i < params.chunks; i++) {
    out[OFFSETS_AT + i] = NONE;
  }
}

@compute @workgroup_size(32)
fn copy(@builtin(local_invocation_index) w: u32, @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>) {
  let k = wid.y * nwg.x + wid.x;
  if (k >= params.chunks) { return; }
  let at = out[OFFSETS_AT + k];
  var word = 0u;
  if (at != NONE) {
    // bytes of the slot that hold the container's bytes: the entry, then up to PREFIX of the payload
    let n = min(ENTRY_BYTES + min(read32(at + 12u), PREFIX), params.bytes - at);
    let b = w * 4u;
    if (b < n) {
      word = read32(at + b);
      if (n - b < 4u) { word &= (1u << ((n - b) * 8u)) - 1u; }
    }
  }
  out[slotsAt() + k * SLOT_WORDS + w] = word;
}
