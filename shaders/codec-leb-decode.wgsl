// The rle stage's lengths streams decoded on the GPU (docs/format.md, "Version 2", stage 3: each
// run's (length - 1) as unsigned LEB128), for decompress to the device, with the checks of the
// CPU decoder (assembly/varint.ts varintDecodeLengths, ts/codec/cpu-codec.ts decodeRuns2At):
// at most 5 bytes a value, a value below 2^32 - 1, exactly R values that use every byte of the
// stream; and each length at most the chunk's element count (the sum check's first half: a
// longer run cannot fit; the caller checks the total before expanding).
//
// The streams ("slots": one per rle stream pair) lie in one byte buffer `leb`, each at a 4-byte
// aligned start, zero bytes between them. Three passes, plus an exclusive scan in between:
//   lebFlags:  one invocation a byte: 1 where a byte inside a slot's stream ends a value (top
//              bit clear), else 0;
//   (ts/format/device-decode2.ts: exclusive scan of the flags -> idx, and the total)
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
  total: u32,   // unused by the kernels (the scan's total is bound), kept for alignment
  pad: u32,
}

// Per slot, 8 u32: lebStart, lebBytes D, runs R, lengthsAt, pad, maxLength, 0, 0
const SLOT_WORDS: u32 = 8u;

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> slots: array<u32>;
@group(0) @binding(2) var<storage, read> leb: array<u32>;
@group(0) @binding(3) var<storage, read_write> flags: array<u32>;

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

@group(0) @binding(4) var<uniform> vparams: Params;
@group(0) @binding(5) var<storage, read> vslots: array<u32>;
@group(0) @binding(6) var<storage, read> vleb: array<u32>;
@group(0) @binding(7) var<storage, read> vflags: array<u32>;
@group(0) @binding(8) var<storage, read> idx: array<u32>;
@group(0) @binding(9) var<storage, read_write> lengths: array<u32>;
@group(0) @binding(10) var<storage, read_write> status: array<atomic<u32>>;

fn vbyteAt(p: u32) -> u32 {
  return (vleb[p >> 2u] >> ((p & 3u) * 8u)) & 0xFFu;
}

fn vslotOf(p: u32) -> u32 {
  var lo = 0u;
  var hi = vparams.slots;
  loop {
    if (hi - lo <= 1u) { break; }
    let mid = (lo + hi) / 2u;
    if (vslots[mid * SLOT_WORDS] <= p) { lo = mid; } else { hi = mid; }
  }
  return lo;
}

@compute @workgroup_size(WG)
fn lebValues(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wid: vec3<u32>,
             @builtin(num_workgroups) nwg: vec3<u32>) {
  let p = index(tid, wid, nwg);
  if (p >= vparams.bytes || vflags[p] == 0u) { return; }
  let s = vslotOf(p);
  let start = vslots[s * SLOT_WORDS];
  let r = idx[p] - idx[start];
  if (r >= vslots[s * SLOT_WORDS + 2u]) {
    atomicOr(&status[0], 2u);
    return;
  }
  // continuation bytes before p, within the slot
  var k = 0u;
  loop {
    if (k == 5u || p - k <= start) { break; }
    if (vbyteAt(p - k - 1u) < 0x80u) { break; }
    k += 1u;
  }
  if (k == 5u) {
    atomicOr(&status[0], 1u);
    return;
  }
  let last = vbyteAt(p) & 0x7Fu;
  if (k == 4u && last > 0x0Fu) {
    atomicOr(&status[0], 1u);
    return;
  }
  var value = last << (7u * k);
  for (var i = 0u; i < k; i += 1u) {
    value |= (vbyteAt(p - k + i) & 0x7Fu) << (7u * i);
  }
  if (value == 0xFFFFFFFFu) {
    atomicOr(&status[0], 1u);
    return;
  }
  if (value + 1u > vslots[s * SLOT_WORDS + 5u]) {
    atomicOr(&status[0], 4u);
    return;
  }
  lengths[vslots[s * SLOT_WORDS + 3u] + r] = value + 1u;
}

@group(0) @binding(11) var<uniform> cparams: Params;
@group(0) @binding(12) var<storage, read> cslots: array<u32>;
@group(0) @binding(13) var<storage, read> cleb: array<u32>;
@group(0) @binding(14) var<storage, read> cidx: array<u32>;
@group(0) @binding(15) var<storage, read> ctotal: array<u32>;
@group(0) @binding(16) var<storage, read_write> clengths: array<u32>;
@group(0) @binding(17) var<storage, read_write> cstatus: array<atomic<u32>>;

/** Values that end before byte i (the exclusive scan, its total at the end). */
fn endsBefore(i: u32) -> u32 {
  if (i >= cparams.bytes) { return ctotal[0]; }
  return cidx[i];
}

@compute @workgroup_size(WG)
fn lebCheck(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wid: vec3<u32>,
            @builtin(num_workgroups) nwg: vec3<u32>) {
  let s = index(tid, wid, nwg);
  if (s >= cparams.slots) { return; }
  let start = cslots[s * SLOT_WORDS];
  let bytes = cslots[s * SLOT_WORDS + 1u];
  let runs = cslots[s * SLOT_WORDS + 2u];
  let count = endsBefore(start + bytes) - endsBefore(start);
  let lastEnds = bytes > 0u && ((cleb[(start + bytes - 1u) >> 2u] >> (((start + bytes - 1u) & 3u) * 8u)) & 0x80u) == 0u;
  if (count != runs || (bytes > 0u && !lastEnds)) { atomicOr(&cstatus[0], 2u); }
  let pad = cslots[s * SLOT_WORDS + 4u];
  if (pad > 0u) { clengths[cslots[s * SLOT_WORDS + 3u] + runs] = pad; }
}
