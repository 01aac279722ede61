// Statistics of the version-2 codec: byte histograms (what Huffman code lengths are built from)
// and the chooser's one-pass statistics (docs/format.md, "The chooser"): byte histograms of each
// plane of the elements and of their deltas, element runs and byte runs of each plane. The
// chooser that reads them is TypeScript (ts/codec/chooser.ts); these kernels allocate nothing
// and take pointers.
//
// Scalar code, the same in both builds (build/parle.wasm and build/parle-scalar.wasm);
// test/codec-kernels.test.ts compares both with plain counts.

/** Bytes counted into the u16 sub-histograms before they are added up: each counter then holds at most 65534. */
const HIST_BLOCK: usize = 16 * 32767;

/**
 * Byte histogram of `n` bytes at `ptr` into 256 u32 at `histPtr` (overwritten). Byte i is counted
 * in the u16 sub-histogram i mod 8 of `scratchPtr` (8 x 256 u16, 4096 bytes), so that a run of
 * equal bytes spreads over eight counters instead of serialising on one counter's
 * store-to-load forwarding; the sub-histograms are added into `histPtr` after every
 * {@link HIST_BLOCK} bytes (a counter sees at most an eighth of them) and at the end.
 */
export function histogram8(ptr: usize, n: usize, histPtr: usize, scratchPtr: usize): void {
  memory.fill(histPtr, 0, 1024);
  const whole = n & ~(<usize>15);
  let i: usize = 0;
  if (whole > 0) memory.fill(scratchPtr, 0, 4096);
  while (i < whole) {
    const blockEnd = min<usize>(whole, i + HIST_BLOCK);
    for (; i < blockEnd; i += 16) {
      const p = ptr + i;
      count16(scratchPtr, <usize>load<u8>(p));
      count16(scratchPtr + 512, <usize>load<u8>(p, 1));
      count16(scratchPtr + 1024, <usize>load<u8>(p, 2));
      count16(scratchPtr + 1536, <usize>load<u8>(p, 3));
      count16(scratchPtr + 2048, <usize>load<u8>(p, 4));
      count16(scratchPtr + 2560, <usize>load<u8>(p, 5));
      count16(scratchPtr + 3072, <usize>load<u8>(p, 6));
      count16(scratchPtr + 3584, <usize>load<u8>(p, 7));
      count16(scratchPtr, <usize>load<u8>(p, 8));
      count16(scratchPtr + 512, <usize>load<u8>(p, 9));
      count16(scratchPtr + 1024, <usize>load<u8>(p, 10));
      count16(scratchPtr + 1536, <usize>load<u8>(p, 11));
      count16(scratchPtr + 2048, <usize>load<u8>(p, 12));
      count16(scratchPtr + 2560, <usize>load<u8>(p, 13));
      count16(scratchPtr + 3072, <usize>load<u8>(p, 14));
      count16(scratchPtr + 3584, <usize>load<u8>(p, 15));
    }
    addSubHistograms(histPtr, scratchPtr);
  }
  for (; i < n; i++) {
    const a = histPtr + (<usize>load<u8>(ptr + i) << 2);
    store<u32>(a, load<u32>(a) + 1);
  }
}

// @ts-ignore: decorator
@inline function count16(sub: usize, byte: usize): void {
  const a = sub + (byte << 1);
  store<u16>(a, load<u16>(a) + 1);
}

/** Adds the eight u16 sub-histograms at `scratchPtr` into the u32 histogram at `histPtr` and zeroes them. */
function addSubHistograms(histPtr: usize, scratchPtr: usize): void {
  for (let s: usize = 0; s < 256; s++) {
    const q = scratchPtr + (s << 1);
    const sum =
      <u32>load<u16>(q) + <u32>load<u16>(q, 512) + <u32>load<u16>(q, 1024) + <u32>load<u16>(q, 1536) +
      <u32>load<u16>(q, 2048) + <u32>load<u16>(q, 2560) + <u32>load<u16>(q, 3072) + <u32>load<u16>(q, 3584);
    const h = histPtr + (s << 2);
    store<u32>(h, load<u32>(h) + sum);
  }
  memory.fill(scratchPtr, 0, 4096);
}

/**
 * One pass of statistics over `n` elements of width sizeof<T> for the chooser, added to what the
 * buffers hold (call it on several ranges of a chunk to sample it):
 *   histPtr: 2 x width x 256 u32: byte histograms of each byte plane of the elements (plane k
 *            of the elements at k x 256), then of their deltas (at (width + k) x 256);
 *   runsPtr: 2 + 2 x width u32: element runs of the elements and of the deltas, then byte runs
 *            of each plane of the elements (2 + k) and of the deltas (2 + width + k).
 * The first element of the range counts as a run start and its delta is taken from 0.
 */
// @ts-ignore: decorator
@inline function codecStats<T>(inPtr: usize, n: usize, histPtr: usize, runsPtr: usize): void {
  const W: usize = sizeof<T>();
  let prev: u32 = 0;
  let prevDelta: u32 = 0;
  let runs: u32 = 0;
  let deltaRuns: u32 = 0;
  let planeRuns: u32 = 0; // per-plane counters packed when W == 1; else counted below
  const hd = histPtr + W * 1024;
  if (n == 0) return;
  // the first element starts a run of every kind
  {
    const x = <u32>load<T>(inPtr);
    for (let k: usize = 0; k < W; k++) {
      const a = histPtr + (k << 10) + (((x >> (<u32>k << 3)) & 0xff) << 2);
      store<u32>(a, load<u32>(a) + 1);
      const b = hd + (k << 10) + (((x >> (<u32>k << 3)) & 0xff) << 2);
      store<u32>(b, load<u32>(b) + 1);
      store<u32>(runsPtr + ((2 + k) << 2), load<u32>(runsPtr + ((2 + k) << 2)) + 1);
      store<u32>(runsPtr + ((2 + W + k) << 2), load<u32>(runsPtr + ((2 + W + k) << 2)) + 1);
    }
    prev = x;
    prevDelta = x;
    runs = 1;
    deltaRuns = 1;
  }
  for (let i: usize = 1; i < n; i++) {
    const x = <u32>load<T>(inPtr + i * W);
    const d = sizeof<T>() == 4 ? x - prev : (x - prev) & (sizeof<T>() == 1 ? 0xff : 0xffff);
    runs += <u32>(x != prev);
    deltaRuns += <u32>(d != prevDelta);
    if (W == 1) {
      const a = histPtr + (x << 2);
      store<u32>(a, load<u32>(a) + 1);
      const b = hd + (d << 2);
      store<u32>(b, load<u32>(b) + 1);
    } else {
      const xd = x ^ prev;
      const dd = d ^ prevDelta;
      for (let k: usize = 0; k < W; k++) {
        const s = <u32>k << 3;
        const a = histPtr + (k << 10) + (((x >> s) & 0xff) << 2);
        store<u32>(a, load<u32>(a) + 1);
        const b = hd + (k << 10) + (((d >> s) & 0xff) << 2);
        store<u32>(b, load<u32>(b) + 1);
        const ra = runsPtr + ((2 + k) << 2);
        store<u32>(ra, load<u32>(ra) + <u32>(((xd >> s) & 0xff) != 0));
        const rb = runsPtr + ((2 + W + k) << 2);
        store<u32>(rb, load<u32>(rb) + <u32>(((dd >> s) & 0xff) != 0));
      }
    }
    prev = x;
    prevDelta = d;
  }
  store<u32>(runsPtr, load<u32>(runsPtr) + runs);
  store<u32>(runsPtr + 4, load<u32>(runsPtr + 4) + deltaRuns);
  if (W == 1) {
    // one plane: its byte runs are the element runs (the first element was counted above)
    planeRuns = runs - 1;
    store<u32>(runsPtr + 8, load<u32>(runsPtr + 8) + planeRuns);
    store<u32>(runsPtr + 12, load<u32>(runsPtr + 12) + deltaRuns - 1);
  }
}

export function codecStats8(inPtr: usize, n: usize, histPtr: usize, runsPtr: usize): void { codecStats<u8>(inPtr, n, histPtr, runsPtr); }
export function codecStats16(inPtr: usize, n: usize, histPtr: usize, runsPtr: usize): void { codecStats<u16>(inPtr, n, histPtr, runsPtr); }
export function codecStats32(inPtr: usize, n: usize, histPtr: usize, runsPtr: usize): void { codecStats<u32>(inPtr, n, histPtr, runsPtr); }
