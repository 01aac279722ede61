// The rle stage's lengths stream on the GPU (docs/format.md, "Version 2", stage 3 rle): each
// run's (length - 1) as unsigned LEB128 (7 bits a byte, low groups first, the top bit set on all
// but the last byte), the runs of all chunks in one byte buffer, so that compress from the device
// reads back only payload bytes. Runs come from rle-encode.wgsl with the chunk length set (a run
// never crosses a chunk), `starts` is the exclusive scan of their lengths (element index of each
// run's first element). A chunk may end before the next chunk's start: its elements past `cells`
// (`shortCells` for chunks from `shortFrom` on) are padding: a run's length is cut at its
// chunk's end, and runs that start past it (padding of other values: byte planes' zeros) are
// dropped (no LEB128 bytes; the chunk's values end before the first of them). Two entry points,
// one invocation a run (2-D grid: wid.y * nwg.x + wid.x), the run count R read from `runCount`
// (written by rle-encode.wgsl in the same submission; the grid covers a bound on it):
//   lebSizes: counts[r] = bytes of run r's LEB128 (1..5; 0 for a dropped run or r >= R);
//   (ts/codec/gpu/rle-streams.ts: exclusive scan of counts -> at, and the total)
//   lebWrite: writes run r's bytes at byte at[r] of `leb` (zeroed before; atomicOr per u32 word,
//             since neighbouring runs share words); for a run that starts a chunk (starts[r]
//             a multiple of the chunk length) the chunk's first run and first LEB byte into
//             table[3 c], table[3 c + 1]; for a chunk's first dropped run r, r + 1 into
//             table[3 c + 2] (cleared before: 0 where none);
//   spans:    one invocation a chunk: its values stream's and lengths stream's byte offset and
//             length (from the table, R and the LEB total) into `spans`, for the histograms of
//             both streams in the same submission (ts/codec/gpu/histogram.ts, device ranges).
// Composed by ts/codec/gpu/rle-streams.ts with `const WG` (256) prepended.

struct Params {
  runsMax: u32,    // entries of the run buffers (>= R)
  chunk: u32,      // elements from one chunk's start to the next
  cells: u32,      // elements of a chunk (<= chunk)
  shortFrom: u32,  // the first chunk of shortCells elements
  shortCells: u32,
  chunks: u32,     // chunks (spans)
  valueBytes: u32, // bytes of a run's value (spans)
  pad: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> lengths: array<u32>;
@group(0) @binding(2) var<storage, read_write> counts: array<u32>;
@group(0) @binding(3) var<storage, read> starts: array<u32>;
@group(0) @binding(7) var<storage, read> runCount: array<u32>;

// The end of the elements of the chunk element `start` lies in (padding after it).
fn chunkEnd(start: u32) -> u32 {
  let c = start / params.chunk;
  return c * params.chunk + select(params.cells, params.shortCells, c >= params.shortFrom);
}

// Run r's length, cut at its chunk's end (0: the run starts in the padding and is dropped).
fn runLength(r: u32) -> u32 {
  let start = starts[r];
  let end = chunkEnd(start);
  return select(0u, min(lengths[r], end - start), start < end);
}

fn lebBytes(v: u32) -> u32 {
  return 1u + select(0u, 1u, v >= 0x80u) + select(0u, 1u, v >= 0x4000u) + select(0u, 1u, v >= 0x200000u) +
    select(0u, 1u, v >= 0x10000000u);
}

fn runIndex(tid: u32, wid: vec3<u32>, nwg: vec3<u32>) -> u32 {
  return (wid.y * nwg.x + wid.x) * WG + tid;
}

@compute @workgroup_size(WG)
fn lebSizes(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wid: vec3<u32>,
            @builtin(num_workgroups) nwg: vec3<u32>) {
  let r = runIndex(tid, wid, nwg);
  if (r >= params.runsMax) { return; }
  if (r >= runCount[0]) {
    counts[r] = 0u;
    return;
  }
  let n = runLength(r);
  counts[r] = select(0u, lebBytes(n - 1u), n > 0u);
}

@group(0) @binding(4) var<storage, read> at: array<u32>;
@group(0) @binding(5) var<storage, read_write> leb: array<atomic<u32>>;
@group(0) @binding(6) var<storage, read_write> table: array<u32>;

@compute @workgroup_size(WG)
fn lebWrite(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wid: vec3<u32>,
            @builtin(num_workgroups) nwg: vec3<u32>) {
  let r = runIndex(tid, wid, nwg);
  if (r >= min(params.runsMax, runCount[0])) { return; }
  let n = runLength(r);
  let first = at[r];
  let start = starts[r];
  let c = start / params.chunk;
  if (start % params.chunk == 0u) {
    table[3u * c] = r;
    table[3u * c + 1u] = first;
  }
  if (n == 0u) {
    // the chunk's first dropped run: the one after its last kept run (or its first run)
    if (start % params.chunk == 0u || starts[r - 1u] < chunkEnd(start)) { table[3u * c + 2u] = r + 1u; }
    return;
  }
  var v = n - 1u;
  // the bytes of one word are gathered and OR-ed in at once (at most two words: 5 bytes)
  var pos = first;
  var word = 0u;
  loop {
    var b = v & 0x7Fu;
    v = v >> 7u;
    if (v != 0u) { b |= 0x80u; }
    word |= b << ((pos & 3u) * 8u);
    pos += 1u;
    if (v == 0u || (pos & 3u) == 0u) {
      atomicOr(&leb[(pos - 1u) >> 2u], word);
      word = 0u;
    }
    if (v == 0u) { break; }
  }
}

@group(0) @binding(8) var<storage, read> lebTotal: array<u32>;
@group(0) @binding(9) var<storage, read_write> valueSpans: array<u32>;
@group(0) @binding(10) var<storage, read_write> lebSpans: array<u32>;

@compute @workgroup_size(WG)
fn spans(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wid: vec3<u32>,
         @builtin(num_workgroups) nwg: vec3<u32>) {
  let c = runIndex(tid, wid, nwg);
  if (c >= params.chunks) { return; }
  let runs = min(params.runsMax, runCount[0]);
  let first = table[3u * c];
  let next = select(runs, table[3u * c + 3u], c + 1u < params.chunks);
  let dropped = table[3u * c + 2u];
  let end = select(dropped - 1u, next, dropped == 0u);
  let lebFirst = table[3u * c + 1u];
  let lebNext = select(lebTotal[0], table[3u * c + 4u], c + 1u < params.chunks);
  // (max: a span is never negative, whatever the table holds)
  valueSpans[2u * c] = first * params.valueBytes;
  valueSpans[2u * c + 1u] = (max(end, first) - first) * params.valueBytes;
  lebSpans[2u * c] = lebFirst;
  lebSpans[2u * c + 1u] = max(lebNext, lebFirst) - lebFirst;
}
