#!/usr/bin/env node
/**
 * Why one GPU context ran kernels 2-3x slower than another in the same process (issue #14):
 * the same 2^28 scan, RLE encode and RLE decode on two contexts, in phases that differ only in
 * how busy the GPU is kept (back-to-back, gapped by host work, after idle), with the SM clock
 * sampled by nvidia-smi every 100 ms beside them. Also a raw 1 GiB device copy per buffer pair
 * (placement: does one buffer pair copy slower than another?).
 *
 * Writes $OUT/gpu-clocks.json (or bench/.quick/results/gpu-clocks.json): every timed run with
 * its wall time (Date.now()), context, op and GPU ms (timestamp queries), the nvidia-smi samples,
 * and per phase the median GPU ms beside the median SM clock of the samples it overlapped.
 *
 *   node bench/gpu-clocks.mjs [--log2 N]       (needs a GPU with timestamp-query; see gpu.mjs)
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { rng, runsBytes } from './suite/data.mjs';
import { loadGpuLayer, median, startClockSampler, timestampHooks } from './gpu-timestamps.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const { createGpuContext } = await loadGpuLayer();

const args = process.argv.slice(2);
const log2 = args.includes('--log2') ? Number(args[args.indexOf('--log2') + 1]) : 28;
const n = 2 ** log2;
const log = (...a) => console.error(...a);

// the SM clock every 100 ms (nvidia-smi; nothing on machines without the NVIDIA driver)
const clocks = await startClockSampler(100);
const smi = clocks.samples;
const samples = [];
const phases = [];

async function setup(label, opts) {
  const ctx = await createGpuContext(opts);
  const ts = timestampHooks(ctx);
  ctx.encoderHooks = ts.hooks;
  const next = rng(7);
  const keys = new Uint32Array(n);
  for (let i = 0; i < n; i++) keys[i] = next() & 0xff;
  const d = await ctx.upload(keys);
  const r8 = await ctx.upload(runsBytes(n, 16, 7));
  const runs = await ctx.rleEncode(r8);
  const ops = {
    scan: () => ctx.scan(d, { inclusive: true }).then((o) => o.destroy()),
    rleEncode: () => ctx.rleEncode(r8).then((o) => { o.values.destroy(); o.lengths.destroy(); }),
    rleDecode: () => ctx.rleDecode(runs.values, runs.lengths).then((o) => o.destroy()),
  };
  return { label, ctx, ts, ops };
}

/** One timed run: GPU ms by timestamps, and when it ran. */
async function once(c, op, phase) {
  c.ts.reset();
  const t0 = Date.now();
  await c.ops[op]();
  const g = await c.ts.read();
  samples.push({ t: t0, ctx: c.label, op, phase, gpuMs: g.ms });
  return g.ms;
}

/** Runs `op` on `c` per `shape`: back-to-back for `ms`, or `count` runs each after `gapMs` of idle. */
async function phase(name, c, op, shape) {
  const start = Date.now();
  const times = [];
  if (shape.gapMs === undefined) {
    while (Date.now() - start < shape.ms) times.push(await once(c, op, name));
  } else {
    for (let i = 0; i < shape.count; i++) {
      await sleep(shape.gapMs);
      times.push(await once(c, op, name));
    }
  }
  const end = Date.now();
  const clocks = smi.filter((s) => s.t >= start && s.t <= end + 50).map((s) => s.sm);
  const row = { name, ctx: c.label, op, runs: times.length, gpuMsMedian: median(times), gpuMsMin: Math.min(...times), gpuMsFirst: times[0], smMhzMedian: clocks.length ? median(clocks) : null, smMhzMin: clocks.length ? Math.min(...clocks) : null };
  phases.push(row);
  log(JSON.stringify(row));
  return row;
}

const A = await setup('A', { powerPreference: 'high-performance' });
const B = await setup('B', {});
log('adapters', JSON.stringify(A.ctx.adapterInfo), JSON.stringify(B.ctx.adapterInfo));

for (const op of ['scan', 'rleEncode', 'rleDecode']) {
  await sleep(3000);
  await phase(`${op}: 20 runs back-to-back after 3 s idle`, A, op, { count: 20, gapMs: 0 });
  await phase(`${op}: back-to-back 2 s`, A, op, { ms: 2000 });
  await phase(`${op}: back-to-back 1 s, other context`, B, op, { ms: 1000 });
  await phase(`${op}: back-to-back 1 s, first context again`, A, op, { ms: 1000 });
  await phase(`${op}: 20 runs, each after 100 ms idle`, A, op, { count: 20, gapMs: 100 });
  await phase(`${op}: 20 runs, each after 20 ms idle`, B, op, { count: 20, gapMs: 20 });
  // the shape of bench/gpu.mjs's timeOp after host work: 2 s idle, 300 ms warm-up, 7 runs
  await sleep(2000);
  await phase(`${op}: 300 ms warm-up after 2 s idle`, A, op, { ms: 300 });
  await phase(`${op}: the 7 runs after it`, A, op, { count: 7, gapMs: 0 });
}

// ---- placement: raw 1 GiB copies between fresh buffer pairs of one context, at full load ----
{
  const device = A.ctx.device;
  const bytes = Math.min(n * 4, 1 << 30);
  const bufs = [];
  for (let i = 0; i < 6; i++) {
    const b = device.createBuffer({ size: bytes, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST });
    const e = device.createCommandEncoder();
    e.clearBuffer(b);
    device.queue.submit([e.finish()]);
    bufs.push(b);
  }
  const copy = async (a, b) => {
    A.ts.reset();
    const e = device.createCommandEncoder();
    A.ts.hooks.begin(e);
    e.copyBufferToBuffer(a, 0, b, 0, bytes);
    A.ts.hooks.end(e);
    device.queue.submit([e.finish()]);
    return (await A.ts.read()).ms;
  };
  const warm = Date.now();
  while (Date.now() - warm < 1500) await copy(bufs[0], bufs[1]);
  const rows = [];
  for (const [i, j] of [[0, 1], [2, 3], [4, 5], [1, 0], [3, 2], [5, 4], [0, 5]]) {
    const t = [];
    for (let r = 0; r < 5; r++) t.push(await copy(bufs[i], bufs[j]));
    rows.push({ pair: `${i}->${j}`, ms: median(t), GBpsReadWrite: (2 * bytes) / 1e6 / median(t) });
  }
  phases.push({ name: 'placement: 1 GiB copyBufferToBuffer per buffer pair, after 1.5 s of copies', rows });
  log(JSON.stringify(rows));
  for (const b of bufs) b.destroy();
}

clocks.stop();
const outDir = process.env.OUT ?? join(here, '.quick', 'results');
mkdirSync(outDir, { recursive: true });
const file = join(outDir, 'gpu-clocks.json');
writeFileSync(file, JSON.stringify({ when: new Date().toISOString(), log2, adapter: A.ctx.adapterInfo, phases, samples, smi }, null, 1));
console.log(phases.filter((p) => !p.rows).map((p) => `${p.name.padEnd(58)} ${p.ctx} gpu ${p.gpuMsMedian.toFixed(3)} ms (min ${p.gpuMsMin.toFixed(3)}, first ${p.gpuMsFirst.toFixed(3)})  SM ${p.smMhzMedian ?? '-'} MHz (min ${p.smMhzMin ?? '-'})`).join('\n'));
console.log(`wrote ${file}`);
A.ctx.destroy();
B.ctx.destroy();
process.exit(0);
