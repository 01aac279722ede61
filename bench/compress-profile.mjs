// Where compress from the device spends its time (issue #14, Rutter's case: a volume on the GPU,
// the .parle container wanted on the host), through the public API (createEngine from dist/):
// per submission of the GPU layer its wall clock (call to resolved promise) and its GPU time,
// and per kernel (compute pass label) its GPU time, from timestamp queries; then the call's
// wall clock without timestamps. Medians over the runs (after a sustained warm-up).
//   node bench/compress-profile.mjs [--runs 5] [--only sparse|runs|calibration] [--quick (small inputs: a check of the script)]
//     [--churn (first, large calls of other ops in the same process, as a benchmark grid or a
//     long-running service makes: 256 MiB upload, CPU compress, GPU decompress, sort, RLE, 3 times)]
// With NODE_DEBUG=parle the codec prints its own phase lines too.
import { parseArgs } from 'node:util';
import { createEngine } from '../dist/node/index.js';
import { calibrationBytes, probeRunsBytes, sparseVolume } from './suite/data.mjs';
import { median, startClockSampler, timestampHooks, warmUntilSteady } from './gpu-timestamps.mjs';

const { values: args } = parseArgs({
  options: { runs: { type: 'string', default: '5' }, quick: { type: 'boolean' }, only: { type: 'string' }, churn: { type: 'boolean' } },
});
const runs = Number(args.runs);
const engine = await createEngine({ gpu: 'require' });
// the SM clock while the untimed runs go (nvidia-smi every 100 ms; nothing without it)
const clocks = await startClockSampler(100);
const ctx = engine['gpuContext']; // the engine's GPU context (a private field, read for profiling)
const ts = ctx.hasTimestamps ? timestampHooks(ctx, 4096) : null;
// every submission's wall clock, by name
let subs = [];
const submit = ctx.submit;
ctx.submit = function (name, ...rest) {
  const t0 = performance.now();
  return submit.call(this, name, ...rest).then((v) => (subs.push({ name, ms: performance.now() - t0 }), v));
};

if (args.churn) {
  const big = probeRunsBytes(args.quick ? 1 << 20 : 256 << 20);
  for (let r = 0; r < 3; r++) {
    const d = await engine.upload(big);
    const packed = await engine.compress(big, { path: 'cpu' });
    (await engine.decompress(packed, { path: 'gpu', to: 'device' })).destroy();
    await engine.sort(new Uint32Array(big.buffer), { path: 'gpu' }); // host keys: a host result
    const runs = await engine.rleEncode(d, { path: 'gpu' });
    runs.values.destroy();
    runs.lengths.destroy();
    d.destroy();
  }
  console.log(`after the churn: GPU buffer pool ${JSON.stringify(ctx.poolStats)}`);
}

const inputs = {
  calibration: ['the calibration pattern, 64 MiB', () => calibrationBytes(args.quick ? 1 << 20 : 64 << 20)],
  sparse: ['sparse volume u8 (Rutter)', () => (args.quick ? sparseVolume(64, 40) : sparseVolume())],
  runs: ['u8 runs, mean 16', () => probeRunsBytes(args.quick ? 1 << 20 : 256 << 20)],
};
for (const [name, make] of args.only === undefined ? Object.values(inputs) : [inputs[args.only]]) {
  const data = make();
  const onGpu = await engine.upload(data);
  const once = () => engine.compress(onGpu, { path: 'gpu' });
  await warmUntilSteady(async () => {
    const t0 = performance.now();
    await once();
    return performance.now() - t0;
  }, { sustain: once, sustainMs: args.quick ? 0 : 1000, maxMs: args.quick ? 0 : 3000 });
  const walls = [];
  const wallStart = Date.now();
  for (let r = 0; r < Math.max(runs, 20); r++) {
    const t0 = performance.now();
    await once();
    walls.push(performance.now() - t0);
  }
  const smMhz = await clocks.smMhzDuring(wallStart, Date.now());
  // per submission and per kernel, with timestamps
  const bySub = new Map();
  const byPass = new Map();
  const passCount = new Map();
  const gpuTotals = [];
  const wallTimed = [];
  for (let r = 0; r < runs; r++) {
    subs = [];
    ctx.encoderHooks = ts?.hooks ?? null;
    const t0 = performance.now();
    await once();
    wallTimed.push(performance.now() - t0);
    ctx.encoderHooks = null;
    for (const s of subs) {
      const e = bySub.get(s.name) ?? { count: 0, ms: [] };
      e.count++;
      e.ms.push(s.ms);
      bySub.set(s.name, e);
    }
    if (ts !== null) {
      const t = await ts.read();
      gpuTotals.push(t.ms);
      for (const [label, ms] of Object.entries(t.passes)) byPass.set(label, [...(byPass.get(label) ?? []), ms]);
      for (const [label, k] of Object.entries(t.passCounts)) passCount.set(label, (passCount.get(label) ?? 0) + k);
    }
  }
  const packed = await once();
  console.log(`\n${name}: ${data.length} B -> ${packed.length} B (ratio ${(data.length / packed.length).toFixed(2)})`);
  console.log(`  compress wall ${median(walls).toFixed(2)} ms (min ${Math.min(...walls).toFixed(2)}; SM clock ${smMhz ?? '-'} MHz); with timestamps ${median(wallTimed).toFixed(2)} ms, GPU time of its submissions ${gpuTotals.length ? median(gpuTotals).toFixed(2) : '-'} ms`);
  console.log(`  submissions a call: ${[...bySub.values()].reduce((a, e) => a + e.count, 0) / runs}`);
  for (const [sub, e] of bySub) console.log(`    ${sub.padEnd(34)} ${(e.count / runs).toFixed(1)} a call, wall total a call ${(e.ms.reduce((a, b) => a + b, 0) / runs).toFixed(2)} ms`);
  const passes = [...byPass].map(([label, ms]) => [label, median(ms)]).sort((a, b) => b[1] - a[1]);
  console.log(`  dispatches a call: ${[...passCount.values()].reduce((a, b) => a + b, 0) / runs}`);
  for (const [label, ms] of passes) console.log(`    kernel ${label.padEnd(34)} ${(passCount.get(label) / runs).toFixed(0).padStart(4)} dispatches, ${ms.toFixed(3)} ms a call (GPU)`);
  onGpu.destroy();
}
clocks.stop();
await engine.destroy();
