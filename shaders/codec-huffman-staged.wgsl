// Staged variant of `decode` (codec-huffman.wgsl), entry `decodeStaged`: the same segments,
// modes, stream table, status words and output, with the global stores coalesced. Composed
// after codec-huffman.wgsl (its Params, Stream, bindings, streamOf/srcWord/read8/read32/fail and
// constants), with `const STAGE_WORDS` (16u or 32u, chosen by ts/gpu/codec.ts from the device's
// workgroup storage limit) prepended.
//
// One invocation still decodes one segment (segment-parallel decoding as in Weißenberger and
// Schmidt 2018; the segment's bits found through the stream's offset table, Haugen), but where
// `decode` stores each word at once, 1 KiB or more away from its neighbours' words, this kernel
// works in rounds:
//   1. every invocation decodes its segment's next STAGE_WORDS words into its own row of `stage`
//      and records the row's destination word and word count (0: nothing to write);
//   2. workgroupBarrier;
//   3. the workgroup writes the rows out: STAGE_WORDS consecutive invocations write the
//      STAGE_WORDS consecutive words of one row (with 32, one 128-byte store per 32 invocations);
//   4. workgroupBarrier (the rows are refilled next round).
// Every invocation runs the workgroup's largest round count (a workgroup-uniform value), so the
// barriers are in uniform control flow; an invocation whose segment is finished, failed or
// absent (past `params.segments`) decodes nothing in the remaining rounds and leaves count 0 in
// its row, but still writes other rows. A row's word count never exceeds what is left of its
// segment, so no invocation writes past a segment's words. A segment that fails (bits past its
// end, a length-0 entry, end < start) is counted in `status` once and writes nothing more; the
// op then fails, so what it wrote before does not matter.
//
// Rows are stored with their columns XOR-swizzled by the row index (word q of row r at column
// q ^ (r % STAGE_WORDS)): in step 1 the invocations of a subgroup store the same q of different
// rows, and in step 3 they read different q of one row, neither in one shared-memory bank.

var<workgroup> stage: array<u32, WG * STAGE_WORDS>;
var<workgroup> rowDst: array<u32, WG>;    // word of `dst` where the row's words go this round
var<workgroup> rowCount: array<u32, WG>;  // words of the row to write this round (0: none)
var<workgroup> roundsMax: atomic<u32>;    // the workgroup's largest round count
var<workgroup> roundsAll: u32;            // the same, read with workgroupUniformLoad

@compute @workgroup_size(WG)
fn decodeStaged(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wid: vec3<u32>,
                @builtin(num_workgroups) nwg: vec3<u32>) {
  let g = (wid.y * nwg.x + wid.x) * WG + tid;
  var live = g < params.segments;   // false once the segment is finished or failed, or absent
  var mode = 0u;
  var count = 0u;                   // symbols of the segment
  var words = 0u;                   // words of the segment
  var outWord = 0u;
  var fillWord = 0u;                // mode 1: the symbol in every byte
  var p = 0u;                       // mode 0: byte of `src` of the segment's first symbol
  var table = 0u;                   // mode 2: first entry of the decode table
  var avail = 0u;                   // mode 2: bits the segment may consume
  var used = 0u;
  var wi = 0u;                      // mode 2: word of the window's low bits
  var sh = 0u;                      // mode 2: bit of that word where the window starts
  var w0 = 0u;
  var w1 = 0u;
  if (live) {
    let st = streamOf(g);
    let seg = g - st.firstSegment;
    let first = seg << st.segmentLog2;               // first symbol of the segment
    mode = st.mode;
    count = min(1u << st.segmentLog2, st.symbols - first);
    words = (count + 3u) / 4u;
    outWord = st.dst + (first >> 2u);                // segments are whole words (2^g, g >= 10)
    fillWord = st.src * 0x01010101u;
    p = st.src + first;
    table = st.table;
    if (mode == 2u) {
      // this segment's bits are bytes [start, end) of the bitstreams
      var start = 0u;
      if (seg > 0u) { start = read32(st.src + (seg - 1u) * 4u); }
      let end = read32(st.src + seg * 4u);
      if (end < start) {
        fail(g);
        live = false;
      } else {
        avail = min(end - start, MAX_SEGMENT_BYTES) * 8u;
        let at = st.bits + start;
        wi = at >> 2u;
        sh = (at & 3u) * 8u;
        w0 = srcWord(wi);
        w1 = srcWord(wi + 1u);
      }
    }
  }
  if (live) { atomicMax(&roundsMax, (words + STAGE_WORDS - 1u) / STAGE_WORDS); }
  workgroupBarrier();
  if (tid == 0u) { roundsAll = atomicLoad(&roundsMax); }
  let rounds = workgroupUniformLoad(&roundsAll);

  let row = tid * STAGE_WORDS;
  let swz = tid % STAGE_WORDS;
  var j = 0u;                       // next word of the segment to decode
  for (var r = 0u; r < rounds; r += 1u) {
    // 1. decode up to STAGE_WORDS words into this invocation's row
    var n = 0u;
    if (live && j < words) {
      let m = min(STAGE_WORDS, words - j);
      for (var q = 0u; q < m; q += 1u) {
        let left = count - (j + q) * 4u;             // symbols left from this word on
        var w = 0u;
        if (mode == 1u) {
          w = fillWord;
          if (left < 4u) { w = fillWord & ((1u << (left * 8u)) - 1u); }
        } else if (mode == 0u) {
          let b = p + (j + q) * 4u;
          if (left >= 4u) {
            w = read32(b);
          } else {
            for (var k = 0u; k < left; k += 1u) { w |= read8(b + k) << (k * 8u); }
          }
        } else {
          let inWord = min(4u, left);
          for (var k = 0u; k < inWord; k += 1u) {
            // the next 32 bits from bit `sh` of w0 (a shift by 32 - 0 is taken mod 32 and discarded)
            let window = select((w0 >> sh) | (w1 << (32u - sh)), w0, sh == 0u);
            let e = tables[table + (window & TABLE_MASK)];
            let len = e >> 8u;
            used += len;
            if (len == 0u || used > avail) {
              live = false;
              break;
            }
            w |= (e & 0xFFu) << (k * 8u);
            sh += len;
            if (sh >= 32u) {
              sh -= 32u;
              w0 = w1;
              wi += 1u;
              w1 = srcWord(wi + 1u);
            }
          }
          if (!live) {
            fail(g);
            break;
          }
        }
        stage[row + (q ^ swz)] = w;
      }
      if (live) {
        n = m;
        rowDst[tid] = outWord + j;
        j += m;
      }
    }
    rowCount[tid] = n;
    workgroupBarrier();

    // 3. write the rows out: STAGE_WORDS consecutive invocations, consecutive words of one row
    let col = tid % STAGE_WORDS;
    for (var k = 0u; k < STAGE_WORDS; k += 1u) {
      let rr = tid / STAGE_WORDS + k * (WG / STAGE_WORDS);
      if (col < rowCount[rr]) {
        dst[rowDst[rr] + col] = stage[rr * STAGE_WORDS + (col ^ (rr % STAGE_WORDS))];
      }
    }
    workgroupBarrier();
  }
}
