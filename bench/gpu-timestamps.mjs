// Plumbing of the GPU benchmarks (bench/gpu.mjs, bench/gpu-clocks.mjs): the GPU layer and Dawn,
// timestamp queries (an op's GPU time from empty timestamped passes around each of its command
// buffers, and per-pass times), a warm-up that waits for the GPU's clocks, and an SM clock
// sampler. Timestamps need the adapter's 'timestamp-query' feature.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Imports parle's GPU layer from bench/.build/gpu-layer.mjs (built here with esbuild from
 * ts/gpu/index.ts when missing: the GPU machine has no esbuild, so build before packing), and
 * sets up Dawn's WebGPU globals with real (unquantized) timestamps. Returns the layer's exports.
 */
export async function loadGpuLayer() {
  const here = dirname(fileURLToPath(import.meta.url));
  const layerPath = join(here, '.build', 'gpu-layer.mjs');
  if (!existsSync(layerPath)) {
    execFileSync('npx', ['esbuild', join(here, '..', 'ts', 'gpu', 'index.ts'), '--bundle', '--platform=node', '--format=esm',
      '--loader:.wgsl=text', '--external:webgpu', `--outfile=${layerPath}`], { stdio: 'inherit' });
  }
  const layer = await import(layerPath);
  const { create, globals } = await import('webgpu');
  // Dawn quantizes timestamps unless told not to; the benchmarks want real ones.
  Object.assign(globalThis, globals);
  globalThis.navigator = { gpu: create(['disable-dawn-features=timestamp_quantization']) };
  return layer;
}

/** The median of `xs` (upper median for even lengths). */
export const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };

/**
 * Timestamp hooks: an empty pass with a timestamp before and after each of an op's command
 * buffers (the op's GPU time), and timestamps around each compute pass (per-kernel times).
 * `capacity`: timestamps per read (at most 4096; each command buffer takes 2 and up to 31 of
 * padding, each pass 2).
 */
export function timestampHooks(ctx, capacity = 512) {
  const device = ctx.device;
  const querySet = device.createQuerySet({ type: 'timestamp', count: capacity });
  const resolve = device.createBuffer({ size: 8 * capacity, usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC });
  const read = device.createBuffer({ size: 8 * capacity, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  let next = 0;
  let submissions = [];
  let passes = [];
  const hooks = {
    begin(encoder) {
      next = Math.ceil(next / 32) * 32; // resolve offsets must be multiples of 256 bytes
      if (next + 64 > capacity) throw new Error('timestamp capacity');
      submissions.push({ start: next, end: -1 });
      encoder.beginComputePass({ timestampWrites: { querySet, beginningOfPassWriteIndex: next } }).end();
      next++;
    },
    pass(label) {
      if (next + 3 > capacity) return undefined; // full: this pass goes untimed
      const i = next;
      next += 2;
      passes.push({ label, i });
      return { querySet, beginningOfPassWriteIndex: i, endOfPassWriteIndex: i + 1 };
    },
    end(encoder) {
      const sub = submissions[submissions.length - 1];
      encoder.beginComputePass({ timestampWrites: { querySet, endOfPassWriteIndex: next } }).end();
      sub.end = next++;
      encoder.resolveQuerySet(querySet, sub.start, sub.end + 1 - sub.start, resolve, sub.start * 8);
    },
  };
  return {
    hooks,
    reset() { next = 0; submissions = []; passes = []; },
    /** { ms: the op's GPU time, passes: { label: ms }, passCounts: { label: passes } } */
    async read() {
      const enc = device.createCommandEncoder();
      enc.copyBufferToBuffer(resolve, 0, read, 0, 8 * capacity);
      device.queue.submit([enc.finish()]);
      await read.mapAsync(GPUMapMode.READ);
      const t = new BigUint64Array(read.getMappedRange().slice(0));
      read.unmap();
      let ns = 0n;
      for (const s of submissions) ns += t[s.end] - t[s.start];
      const perPass = {};
      const passCounts = {};
      for (const p of passes) {
        perPass[p.label] = (perPass[p.label] ?? 0) + Number(t[p.i + 1] - t[p.i]) / 1e6;
        passCounts[p.label] = (passCounts[p.label] ?? 0) + 1;
      }
      const out = { ms: Number(ns) / 1e6, passes: perPass, passCounts };
      this.reset();
      return out;
    },
  };
}


/**
 * Warms the GPU for a timed op: first `sustain` back-to-back for `sustainMs` (default 1000; no
 * timestamp readback between runs, so the GPU stays busy), then `run` (resolving to the run's
 * ms) until the last 5 runs are within 3 % of the best seen (at least 8 runs, at most `maxMs`,
 * default 5000). Why: an H200's SM clock idles at 345 MHz; its driver raises it to 630 MHz and
 * then 1980 MHz only after sustained load, and scan and RLE run 3-4x slower at 345 MHz
 * (bench/results/gpu-clocks-nvidia-h200.json). Runs with a readback between them kept the clock
 * at a plateau where the times looked steady (a 2^28 scan steady at 2.6 ms at 630 MHz, 1.16 ms
 * at 1980). Returns the second phase's run times.
 */
export async function warmUntilSteady(run, { sustain, sustainMs = 1000, maxMs = 5000 } = {}) {
  const s0 = performance.now();
  if (sustain) while (performance.now() - s0 < sustainMs) await sustain();
  const t0 = performance.now();
  const times = [];
  for (;;) {
    times.push(await run());
    if (performance.now() - t0 >= maxMs) break;
    if (times.length >= 8 && Math.max(...times.slice(-5)) <= Math.min(...times) * 1.03) break;
  }
  return times;
}

/**
 * Samples the GPU's SM clock with nvidia-smi every `everyMs` (NVIDIA machines; elsewhere the
 * sampler records nothing). `smMhzDuring(start, end)` gives the median clock of the samples in
 * [start, end] (Date.now() ms), else the first sample after `end`, or null.
 */
export async function startClockSampler(everyMs = 100) {
  const { spawn } = await import('node:child_process');
  const samples = [];
  let proc = null;
  try {
    proc = spawn('nvidia-smi', ['--query-gpu=clocks.sm,clocks.mem,utilization.gpu,power.draw', '--format=csv,noheader,nounits', '-lms', String(everyMs)]);
    let buf = '';
    proc.stdout.on('data', (d) => {
      buf += d;
      for (let i; (i = buf.indexOf('\n')) >= 0; ) {
        const [sm, mem, util, power] = buf.slice(0, i).split(',').map((s) => Number(s.trim()));
        buf = buf.slice(i + 1);
        samples.push({ t: Date.now(), sm, mem, util, power });
      }
    });
    proc.on('error', () => { proc = null; });
  } catch {
    proc = null;
  }
  return {
    samples,
    async smMhzDuring(start, end) {
      const c = samples.filter((s) => s.t >= start && s.t <= end + everyMs / 2).map((s) => s.sm);
      if (c.length) return median(c);
      if (proc === null) return null;
      // shorter than a sampling period: the first sample after it
      await new Promise((r) => setTimeout(r, 2 * everyMs));
      const after = samples.find((s) => s.t > end && s.t <= end + 2 * everyMs);
      return after ? after.sm : null;
    },
    stop() { proc?.kill(); },
  };
}

/**
 * Edits the WGSL of every shader module of `ctx` whose label contains `labelPart`, as the context
 * builds it: each edit is [from, to] (the first occurrence of `from` becomes `to`) or [from, to,
 * 'to end of function'] (from `from` to the module's next "\n}\n" becomes `to`). An edit whose
 * `from` is missing throws, naming `what`. Returns () => how many modules were edited.
 */
export function editShaderModules(ctx, labelPart, edits, what) {
  const create = ctx.device.createShaderModule.bind(ctx.device);
  let edited = 0;
  ctx.device.createShaderModule = (desc) => {
    if (!String(desc.label).includes(labelPart)) return create(desc);
    let code = desc.code;
    for (const [from, to, toEnd] of edits) {
      const at = code.indexOf(from);
      if (at < 0) throw new Error(`${what}: "${from.trim().split('\n')[0]}" is not in the kernel`);
      const end = toEnd ? code.indexOf('\n}\n', at) + 3 : at + from.length;
      code = code.slice(0, at) + to + (toEnd ? '\n' : '') + code.slice(end);
    }
    edited++;
    return create({ ...desc, code });
  };
  return () => edited;
}

/**
 * Times the op `once` (an async function that runs it once and releases its result) on `ctx`
 * after warmUntilSteady: `runs` runs with timestamp queries, each followed by a run timed by
 * wall clock. Returns the medians in ms: `passes` (a pass label's GPU time: the sum over its
 * passes in one run), the op's whole GPU time `gpuMs`, and `wallMs`.
 */
export async function timePasses(ctx, once, runs = 7) {
  const ts = timestampHooks(ctx);
  const timed = async () => {
    const t0 = performance.now();
    await once();
    return performance.now() - t0;
  };
  await warmUntilSteady(timed, { sustain: once });
  const perLabel = {};
  const gpu = [];
  const wall = [];
  for (let r = 0; r < runs; r++) {
    ctx.encoderHooks = ts.hooks;
    await once();
    ctx.encoderHooks = null;
    const t = await ts.read();
    for (const [label, ms] of Object.entries(t.passes)) (perLabel[label] ??= []).push(ms);
    gpu.push(t.ms);
    wall.push(await timed());
  }
  const passes = Object.fromEntries(Object.entries(perLabel).map(([label, ms]) => [label, median(ms)]));
  return { passes, gpuMs: median(gpu), wallMs: median(wall) };
}

/**
 * timePasses of `ctx.sort(keys)` (keys: a DeviceArray): the onesweep passes together
 * (`passesMs`), the histogram pass, the whole GPU time, the wall clock (medians, ms).
 */
export async function timeSort(ctx, keys, runs = 7) {
  const t = await timePasses(ctx, async () => (await ctx.sort(keys)).keys.destroy(), runs);
  return { passesMs: t.passes['parle:sort-onesweep'], histogramMs: t.passes['parle:sort-histogram'], gpuMs: t.gpuMs, wallMs: t.wallMs };
}

/**
 * Watches V8's garbage collections (perf_hooks 'gc' entries) so that a timed loop can say how
 * much of its wall clock they took: `msDuring(t0, t1)` sums the collections' time inside
 * [t0, t1] (performance.now() ms), `countDuring` counts them. Call `stop()` when done.
 * `collect()` runs a full collection first where node runs with --expose-gc (else does nothing
 * and returns false): a harness's own garbage (the host arrays of earlier checks, GiBs) is
 * then not collected inside the next timed loop.
 */
export async function gcWatch() {
  const { PerformanceObserver } = await import('node:perf_hooks');
  const entries = [];
  const obs = new PerformanceObserver((list) => { for (const e of list.getEntries()) entries.push({ start: e.startTime, end: e.startTime + e.duration }); });
  obs.observe({ entryTypes: ['gc'] });
  const inside = (t0, t1) => entries.filter((e) => e.end > t0 && e.start < t1);
  return {
    /** Lets the observer's queued entries arrive (they are delivered asynchronously). */
    flush: () => new Promise((resolve) => setTimeout(resolve, 0)),
    msDuring: (t0, t1) => inside(t0, t1).reduce((s, e) => s + Math.min(e.end, t1) - Math.max(e.start, t0), 0),
    countDuring: (t0, t1) => inside(t0, t1).length,
    collect: () => { if (typeof globalThis.gc !== 'function') return false; globalThis.gc(); return true; },
    stop: () => obs.disconnect(),
  };
}

/**
 * The setup of the 2^28 wall-clock benchmarks (wall-2-28.mjs, scan-state.mjs): the GPU layer, a
 * context, and n = 2^log2 (`--log2 N` on the command line, default 28) u32 keys from an LCG,
 * uploaded. Returns { layer, ctx, log2, n, keys (host), d (the DeviceArray) }.
 */
export async function contextWithKeys() {
  const layer = await loadGpuLayer();
  const ctx = await layer.createGpuContext();
  const log2 = process.argv.includes('--log2') ? Number(process.argv[process.argv.indexOf('--log2') + 1]) : 28;
  const n = 2 ** log2;
  const keys = lcgKeys(n);
  return { layer, ctx, log2, n, keys, d: await ctx.upload(keys) };
}

/**
 * `n` u32 keys from the LCG s -> 1664525 s + 1013904223 (mod 2^32) started at `seed`, each
 * masked with `mask`: the GPU benchmarks' keys (the same keys in every one for one seed).
 */
export function lcgKeys(n, seed = 1, mask = 0xffffffff) {
  const a = new Uint32Array(n);
  for (let i = 0, s = seed; i < n; i++) a[i] = (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) & mask;
  return a;
}
