// Timing on the GPU for the GPU benchmarks (gpu-layer.mjs, gpu-codec-profile.mjs): the GPU layer
// on Dawn with real timestamps, an op's GPU time from timestamp queries (an empty timestamped
// pass before and after each of its command buffers, and timestamps around each compute pass), a
// warm-up that waits for the GPU's clocks, and an SM clock sampler. Timestamps need the adapter's
// 'timestamp-query' feature.
import { loadInternals } from './internals.mjs';
import { median } from './results.mjs';

/**
 * The GPU layer (ts/gpu/, bench/lib/internals.mjs), with Dawn's WebGPU globals set up to give real
 * (unquantized) timestamps. Returns the layer's exports (createGpuContext, ...).
 */
export async function loadGpuLayer() {
  const layer = await loadInternals('gpu-layer');
  const { create, globals } = await import('webgpu');
  Object.assign(globalThis, globals);
  globalThis.navigator = { gpu: create(['disable-dawn-features=timestamp_quantization']) };
  return layer;
}

/**
 * Timestamp hooks for a GPU context's `encoderHooks`: per submission (command buffer) its GPU
 * time, labelled with its encoder's label, and per compute pass label its time. `capacity`:
 * timestamps per read (at most 4096; each submission takes 2 plus up to 31 of padding, each pass
 * 2); a submission or pass past it goes untimed and is counted. Ops may encode concurrently.
 */
export function timestampHooks(ctx, capacity = 4096) {
  const device = ctx.device;
  const querySet = device.createQuerySet({ type: 'timestamp', count: capacity });
  const resolveBuf = device.createBuffer({ size: 8 * capacity, usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC });
  const read = device.createBuffer({ size: 8 * capacity, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  let next = 0;
  let subs = [];
  let passes = [];
  let untimed = 0;
  const open = []; // submissions being encoded; null for an untimed one
  const reset = () => {
    next = 0;
    subs = [];
    passes = [];
    untimed = 0;
  };
  const hooks = {
    begin(encoder) {
      next = Math.ceil(next / 32) * 32; // resolve offsets are multiples of 256 bytes
      if (next + 64 > capacity) {
        untimed++;
        open.push(null);
        return;
      }
      const sub = { start: next++, end: -1, label: (encoder.label || '').replace(/^parle:/, '') };
      open.push(sub);
      encoder.beginComputePass({ timestampWrites: { querySet, beginningOfPassWriteIndex: sub.start } }).end();
    },
    pass(label) {
      if (open[open.length - 1] === null || next + 3 > capacity) return undefined;
      const i = next;
      next += 2;
      passes.push({ label, i });
      return { querySet, beginningOfPassWriteIndex: i, endOfPassWriteIndex: i + 1 };
    },
    end(encoder) {
      const sub = open.pop();
      if (!sub) return;
      encoder.beginComputePass({ timestampWrites: { querySet, endOfPassWriteIndex: next } }).end();
      sub.end = next++;
      encoder.resolveQuerySet(querySet, sub.start, sub.end + 1 - sub.start, resolveBuf, sub.start * 8);
      subs.push(sub);
    },
  };
  return {
    hooks,
    reset,
    /**
     * The calls' GPU times since the last read or reset: { ms (all submissions), submissions
     * ({ label: ms }), passes ({ label: ms }), passCounts, timedSubmits, untimed }.
     */
    async read() {
      const enc = device.createCommandEncoder();
      enc.copyBufferToBuffer(resolveBuf, 0, read, 0, 8 * capacity);
      device.queue.submit([enc.finish()]);
      await read.mapAsync(GPUMapMode.READ);
      const t = new BigUint64Array(read.getMappedRange().slice(0));
      read.unmap();
      const ms = (a, b) => Number(t[b] - t[a]) / 1e6;
      const out = { ms: 0, submissions: {}, passes: {}, passCounts: {}, timedSubmits: subs.length, untimed };
      for (const s of subs) {
        out.ms += ms(s.start, s.end);
        out.submissions[s.label] = (out.submissions[s.label] ?? 0) + ms(s.start, s.end);
      }
      for (const p of passes) {
        out.passes[p.label] = (out.passes[p.label] ?? 0) + ms(p.i, p.i + 1);
        out.passCounts[p.label] = (out.passCounts[p.label] ?? 0) + 1;
      }
      reset();
      return out;
    },
  };
}

/**
 * Warms the GPU for a timed op: first `sustain` back-to-back for `sustainMs` (default 1000; no
 * timestamp readback between runs, so the GPU stays busy), then `run` (resolving to the run's
 * ms) until the last 5 runs are within 3 % of the best seen (at least 8 runs, at most `maxMs`,
 * default 5000). Why: an H200's SM clock idles at 345 MHz; its driver raises it to 630 MHz and
 * then 1980 MHz only after sustained load, and scan and RLE run 3-4x slower at 345 MHz. Runs
 * with a readback between them kept the clock at a plateau where the times looked steady (a 2^28
 * scan steady at 2.6 ms at 630 MHz, 1.16 ms at 1980). Returns the second phase's run times.
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
    proc.on('error', () => {
      proc = null;
    });
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
    stop() {
      proc?.kill();
    },
  };
}
