// The timing of the benchmarks that call the public API: bench/browser.mjs on both of its sides
// (Node imports this module from disk, the page bench/browser/page.js from the benchmark's
// server, so both time the same calls the same way), corpus.mjs, corpus-scaling.mjs and
// gpu-corpus.mjs. Plain ES module, no Node built-in, only `performance.now()`, which both
// runtimes have.

/** Per measurement: two warm-up calls, then at least MIN_RUNS calls and at least MIN_MS. */
export const WARMUPS = 2;
export const MIN_RUNS = 7;
export const MIN_MS = 500;
/** A measurement stops after this many timed calls even under MIN_MS (tiny inputs). */
export const MAX_RUNS = 400;

export const CTORS = {
  u8: Uint8Array,
  u16: Uint16Array,
  u32: Uint32Array,
  i32: Int32Array,
  f32: Float32Array,
  i8: Int8Array,
  i16: Int16Array,
  f64: Float64Array,
  i64: BigInt64Array,
  u64: BigUint64Array,
};
const TYPE_OF = new Map(Object.entries(CTORS).map(([type, Ctor]) => [Ctor, type]));

/** The element type named by a file's extension (`camera.u8` -> `u8`), or undefined. */
export function typeOfFile(name) {
  const ext = name.split('.').pop();
  return ext in CTORS ? ext : undefined;
}

/** Timing of `fn` (awaited): { medianMs, minMs, maxMs, runs } after WARMUPS untimed calls. */
export async function timeCalls(fn, { minRuns = MIN_RUNS, minMs = MIN_MS, warmups = WARMUPS } = {}) {
  for (let i = 0; i < warmups; i++) await fn();
  const times = [];
  const start = performance.now();
  while (times.length < minRuns || performance.now() - start < minMs) {
    const t0 = performance.now();
    await fn();
    times.push(performance.now() - t0);
    if (times.length >= MAX_RUNS) break;
  }
  times.sort((a, b) => a - b);
  const mid = times.length >> 1;
  const medianMs = times.length % 2 ? times[mid] : (times[mid - 1] + times[mid]) / 2;
  return { medianMs, minMs: times[0], maxMs: times[times.length - 1], runs: times.length };
}

function sameBits(a, b) {
  if (a.constructor !== b.constructor || a.length !== b.length) return false;
  const x = new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
  const y = new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false;
  return true;
}

/** `bytes` over `ms` in MB/s (1 MB = 10^6 bytes). */
const mbps = (bytes, ms) => bytes / ms / 1e3;

/**
 * Compress and decompress of `data` on `engine`: checks the round trip once (both decompress
 * forms), then times compress(data) (MB/s of input; a new container each call),
 * compress(data, { out }) into one reused array (sized by `compressBound`, the library's export
 * of the side measuring), decompress(container, { out }) into one reused array and
 * decompress(container) into a fresh one (MB/s of output). Each timing gets its own
 * call-sequence, in that order.
 */
export async function measureArray(engine, data, { compressBound, timing = {} }) {
  const bytes = data.byteLength;
  const container = await engine.compress(data);
  const target = new Uint8Array(compressBound(data.length, TYPE_OF.get(data.constructor)));
  const into = await engine.compress(data, { out: target });
  if (into.buffer !== target.buffer || !sameBits(into, container)) throw new Error('compress(data, { out }) differs from compress(data)');
  const out = new data.constructor(data.length);
  const fresh = await engine.decompress(container);
  const reused = await engine.decompress(container, { out });
  if (!sameBits(fresh, data)) throw new Error('round trip failed: decompress(container) differs from the input');
  if (reused !== out) throw new Error('decompress(container, { out }) did not resolve to out');
  if (!sameBits(out, data)) throw new Error('round trip failed: decompress(container, { out }) differs from the input');

  const compress = await timeCalls(() => engine.compress(data), timing);
  const compressOut = await timeCalls(() => engine.compress(data, { out: target }), timing);
  const decompress = await timeCalls(() => engine.decompress(container, { out }), timing);
  const decompressFresh = await timeCalls(() => engine.decompress(container), timing);
  const rate = (t) => ({ ...t, mbps: mbps(bytes, t.medianMs) });
  return {
    bytes,
    elements: data.length,
    containerBytes: container.byteLength,
    compress: rate(compress),
    compressOut: rate(compressOut),
    decompress: rate(decompress),
    decompressFresh: rate(decompressFresh),
  };
}

/**
 * What the engine runs on, read the same way on both sides. The `cpuPath` fields are private to
 * the library (read for diagnosis only; null when the names change).
 */
export function engineInfo(engine) {
  const info = { workers: engine.workers, variant: null, sharedMemory: null, simd: null, inlineBytes: null, segmentBytes: null };
  try {
    const cpu = engine.cpuPath;
    if (cpu) {
      info.variant = cpu.variant ?? null;
      info.sharedMemory = cpu.shared ?? null;
      info.inlineBytes = cpu.inlineBytes ?? null;
      info.segmentBytes = cpu.segmentBytes ?? null;
      info.simd = typeof cpu.kernels?.simdEnabled === 'function' ? cpu.kernels.simdEnabled() === 1 : null;
    }
  } catch {
    // diagnosis only
  }
  try {
    // The array the public API gives out for the engine's memory: a SharedArrayBuffer when shared.
    const probe = engine.alloc('u8', 1);
    info.allocShared = typeof SharedArrayBuffer === 'function' && probe.buffer instanceof SharedArrayBuffer;
    engine.free(probe);
  } catch {
    info.allocShared = null;
  }
  return info;
}

/**
 * How fast this runtime hands out fresh memory: MB/s of `new Uint8Array(bytes)` then `fill(1)`
 * (the allocation, page faults and zeroing a fresh result costs), median of `runs`, at each size;
 * beside the same fill of one reused array (the memory bandwidth).
 */
export function freshArrayRates(sizes = [256 << 10, 2 << 20, 8 << 20], runs = 15) {
  const median = (f) => {
    const times = [];
    for (let i = 0; i < runs; i++) {
      const t0 = performance.now();
      f();
      times.push(performance.now() - t0);
    }
    times.sort((a, b) => a - b);
    return times[times.length >> 1];
  };
  let keep = 0;
  const fresh = {};
  for (const bytes of sizes) {
    const ms = median(() => {
      const a = new Uint8Array(bytes);
      a.fill(1);
      keep += a[bytes - 1];
    });
    fresh[`${bytes >> 10}KiB`] = Math.round(mbps(bytes, ms));
  }
  const largest = Math.max(...sizes);
  const reused = new Uint8Array(largest);
  const ms = median(() => reused.fill(keep & 1 ? 2 : 3));
  return { freshMBps: fresh, reusedMBps: Math.round(mbps(largest, ms)) };
}
