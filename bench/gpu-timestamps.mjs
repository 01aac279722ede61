// Plumbing of the GPU layer's benchmark (bench/gpu.mjs): the GPU layer and Dawn,
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
 * (the SM clock beside each figure: `smMhz` in bench/results/gpu-nvidia-h200.json). Runs with a readback between them kept the clock
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
 * The GPU's name (nvidia-smi's where there is one; else `fallback`, e.g. Dawn's adapter
 * description) and its slug for result file names: "NVIDIA H200" -> "nvidia-h200".
 */
export function gpuCard(fallback = 'gpu') {
  let card = fallback;
  try {
    card = execFileSync('nvidia-smi', ['--query-gpu=name', '--format=csv,noheader'], { encoding: 'utf8' }).split('\n')[0];
  } catch {
    // not an NVIDIA machine
  }
  const slug = card
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
  return { card, slug };
}
