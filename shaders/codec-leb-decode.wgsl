// The rle stage's lengths streams decoded on the GPU (docs/format.md, "Version 2", stage 3: each
// run's (length - 1) as unsigned LEB128), for decompress to the device, with the checks of the
// CPU decoder (assembly/varint.ts varintDecodeLengths, ts/codec/cpu/decode.ts decodeRunsAt):
// at most 5 bytes a value, a value below 2^32 - 1, exactly R values that use every byte of the
// stream; and each length at most the chunk's element count (the sum check's first half: a
// longer run cannot fit; the caller checks the total before expanding).
//
// The streams ("slots": one per rle stream pair) lie in one byte buffer `leb`, each at a 4-byte
// aligned start, zero bytes between them. Three passes, plus an exclusive scan in between:
//   lebFlags:  one invocation a byte: 1 where a byte inside a slot's stream ends a value (top
//              bit clear), else 0;
//   (ts/codec/gpu/decode.ts: exclusive scan of the flags -> idx, and the total)
//   lebValues: one invocation a byte that ends a value: its run index in the slot is
//              idx[p] - idx[slot start]; the value is assembled from the continuation bytes before
//              it (never past the slot's start) and written as length = value + 1 at the slot's
//              lengthsAt + index;
//   lebCheck:  one invocation a slot: the slot ends a value with its last byte and holds exactly
//              R values; writes the slot's pad run length after its runs.
// Errors set bits of status[0] (1: a value longer than 5 bytes or too large, 2: not R values or
// an unterminated value, 4: a length past the chunk's elements); the host turns any into CORRUPT.
// Composed by ts/gpu/compose.ts (`const WG` = 256).

struct Params {
  bytes: u32,   // bytes of `leb` covered (the last slot's end)
  slots: u32,
  pad0: u32,
  pad1: u32,
}

// Per slot, 8 u32: lebStart, lebBytes D, runs R, lengthsAt, pad, maxLength, 0, 0
const SLOT_WORDS: u32 = 8u;

// The bindings, shared by the three entry points (each layout holds the ones it uses)
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> slots: array<u32>;
@group(0) @binding(2) var<storage, read> leb: array<u32>;
@group(0) @binding(3) var<storage, read_write> flags: array<u32>;
@group(0) @binding(4) var<storage, read> idx: array<u32>;
@group(0) @binding(5) var<storage, read_write> lengths: array<u32>;
@group(0) @binding(6) var<storage, read_write> status: array<atomic<u32>>;
@group(0) @binding(7) var<storage, read> total: array<u32>;

fn byteAt(p: u32) -> u32 {
  return (leb[p >> 2u] >> ((p & 3u) * 8u)) & 0xFFu;
}

/** The last slot whose stream starts at or before byte p (slots ascend by start). */
fn slotOf(p: u32) -> u32 {
  var lo = 0u;
  var hi = params.slots; // answer in [lo, hi)
  loop {
    if (hi - lo <= 1u) { break; }
    let mid = (lo + hi) / 2u;
    if (slots[mid * SLOT_WORDS] <= p) { lo = mid; } else { hi = mid; }
  }
  return lo;
}

fn index(tid: u32, wid: vec3<u32>, nwg: vec3<u32>) -> u32 {
  return (wid.y * nwg.x + wid.x) * WG + tid;
}

@compute @workgroup_size(WG)
fn lebFlags(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wid: vec3<u32>,
            @builtin(num_workgroups) nwg: vec3<u32>) {
  let p = index(tid, wid, nwg);
  if (p >= params.bytes) { return; }
  let s = slotOf(p);
  let inside = p < slots[s * SLOT_WORDS] + slots[s * SLOT_WORDS + 1u];
  flags[p] = select(0u, 1u, inside && byteAt(p) < 0x80u);
}

@compute @workgroup_size(WG)
fn lebValues(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wid: vec3<u32>,
             @builtin(num_workgroups) nwg: vec3<u32>) {
  let p = index(tid, wid, nwg);
  if (p >= params.bytes || flags[p] == 0u) { return; }
  let s = slotOf(p);
  let start = slots[s * SLOT_WORDS];
  let r = idx[p] - idx[start];
  if (r >= slots[s * SLOT_WORDS + 2u]) {
    atomicOr(&status[0], 2u);
    return;
  }
  // continuation bytes before p, within the slot
  var k = 0u;
  loop {
    if (k == 5u || p - k <= start) { break; }
    if (byteAt(p - k - 1u) < 0x80u) { break; }
    k += 1u;
  }
  if (k == 5u) {
    atomicOr(&status[0], 1u);
    return;
  }
  let last = byteAt(p) & 0x7Fu;
  if (k == 4u && last > 0x0Fu) {
    atomicOr(&status[0], 1u);
    return;
  }
  var value = last << (7u * k);
  for (var i = 0u; i < k; i += 1u) {
    value |= (byteAt(p - k + i) & 0x7Fu) << (7u * i);
  }
  if (value == 0xFFFFFFFFu) {
    atomicOr(&status[0], 1u);
    return;
  }
  if (value + 1u > slots[s * SLOT_WORDS + 5u]) {
    atomicOr(&status[0], 4u);
    return;
  }
  lengths[slots[s * SLOT_WORDS + 3u] + r] = value + 1u;
}

/** Values that end before byte i (the exclusive scan, its total at the end). */
fn endsBefore(i: u32) -> u32 {
  if (i >= params.bytes) { return total[0]; }
  return idx[i];
}

@compute @workgroup_size(WG)
fn lebCheck(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wid: vec3<u32>,
            @builtin(num_workgroups) nwg: vec3<u32>) {
  let s = index(tid, wid, nwg);
  if (s >= params.slots) { return; }
  let start = slots[s * SLOT_WORDS];
  let bytes = slots[s * SLOT_WORDS + 1u];
  let runs = slots[s * SLOT_WORDS + 2u];
  let count = endsBefore(start + bytes) - endsBefore(start);
  let lastEnds = bytes > 0u && byteAt(start + bytes - 1u) < 0x80u;
  if (count != runs || (bytes > 0u && !lastEnds)) { atomicOr(&status[0], 2u); }
  let pad = slots[s * SLOT_WORDS + 4u];
  if (pad > 0u) { lengths[slots[s * SLOT_WORDS + 3u] + runs] = pad; }
}
