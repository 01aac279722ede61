// What the GPU error checks cost (ts/gpu/gpu-errors.ts: the device's uncaptured errors counted
// around every submission and transfer, the pool's new buffers in error scopes, checked before
// an op resolves): small GPU calls, where a fixed cost shows, and a large one, through the
// public API, this build beside a baseline build (another checkout's dist/, e.g. the commit
// before). Both builds are loaded into one process, each with its own engine and device, and
// their calls alternate task by task, round by round (A B, then B A): the GPU's clock, which
// moved one process's small calls by 50 % against another's on an H100
// (bench/results/gpu-error-checks-nvidia-h100-processes.json), is then the same for both.
// Figures: tinybench medians (ms) per build, the median over rounds, and this build's ratio to
// the baseline's.
//
//   npm run build && node bench/gpu-error-checks.mjs --base ../other/dist [--rounds 6] [--quick] [--out DIR]
//   (the baseline's dist/ inside a folder whose parents hold node_modules/, e.g. .gpu-carry/base/dist)
//
// Writes gpu-error-checks.json into DIR (default bench/results; on the device tool: $OUT).
import { lcgKeys } from './gpu-timestamps.mjs';
import { outputDir } from './out-dir.mjs';
import { probeRunsBytes } from './suite/data.mjs';
import { Bench } from 'tinybench';
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const { values: args } = parseArgs({
  options: {
    base: { type: 'string' },
    rounds: { type: 'string', default: '6' },
    // without the 64 MiB scan (seconds a call on SwiftShader): a smoke run
    quick: { type: 'boolean', default: false },
    out: { type: 'string' },
  },
});
if (args.base === undefined) {
  console.error("--base DIST (a baseline build's dist/) is required");
  process.exit(2);
}
const root = fileURLToPath(new URL('..', import.meta.url));

/** One build's engine and its calls, by task name. */
async function setUp(dist) {
  const { createEngine } = await import(pathToFileURL(join(dist, 'node/index.js')).href);
  const engine = await createEngine({ gpu: 'require', calibration: 'skip', workers: 0 });
  const host16k = lcgKeys(4096);
  const dev16k = await engine.upload(host16k);
  const dev4k = await engine.upload(lcgKeys(1024));
  const devRuns = await engine.upload(probeRunsBytes(64 << 10));
  const runs = await engine.rleEncode(devRuns, { path: 'gpu' });
  const dev64m = args.quick ? null : await engine.upload(lcgKeys(1 << 24));
  const devMiB = await engine.upload(probeRunsBytes(1 << 20));
  const gpu = { path: 'gpu' };
  const calls = {
    'upload 16 KiB': async () => (await engine.upload(host16k)).destroy(),
    'download 16 KiB': async () => engine.download(dev16k),
    'scan 4 KiB, device to device': async () => (await engine.scan(dev4k, gpu)).destroy(),
    'sort 4 KiB, device to device': async () => (await engine.sort(dev4k, gpu)).destroy(),
    'rleEncode 64 KiB, device to device': async () => {
      const r = await engine.rleEncode(devRuns, gpu);
      r.values.destroy();
      r.lengths.destroy();
    },
    'rleDecode 64 KiB, device to device': async () => (await engine.rleDecode(runs, gpu)).destroy(),
    'compress 1 MiB, device to host': async () => engine.compress(devMiB, gpu),
    'scan 64 MiB, device to device': async () => (await engine.scan(dev64m, gpu)).destroy(),
  };
  if (args.quick) delete calls['scan 64 MiB, device to device'];
  return { engine, calls };
}

const builds = { base: await setUp(resolve(args.base)), this: await setUp(join(root, 'dist')) };
const tasks = Object.keys(builds.this.calls);
/** Per task and build, the tinybench median of each round (ms). */
const medians = Object.fromEntries(tasks.map((t) => [t, { base: [], this: [] }]));
const rounds = Number(args.rounds);
for (let r = 0; r < rounds; r++) {
  const order = r % 2 === 0 ? ['base', 'this'] : ['this', 'base'];
  // at least 10 calls a task and 200 ms (tinybench's default of 64 calls takes minutes on SwiftShader)
  const bench = new Bench({ time: 200, iterations: 10, warmupTime: 50, warmupIterations: 3 });
  for (const task of tasks) for (const which of order) bench.add(`${which}|${task}`, builds[which].calls[task]);
  await bench.run();
  for (const t of bench.tasks) {
    const [which, task] = t.name.split('|');
    medians[task][which].push(t.result.latency.p50);
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const rows = tasks.map((task) => {
  const base = median(medians[task].base);
  const now = median(medians[task].this);
  return { task, baseMs: base, thisMs: now, ratio: now / base, baseRounds: medians[task].base, thisRounds: medians[task].this };
});
const adapter = builds.this.engine.adapter;
console.log(
  `adapter ${JSON.stringify(adapter)}; both builds in one process, ${rounds} rounds alternating A B / B A, medians of tinybench medians`,
);
for (const r of rows) {
  console.log(
    `${r.task.padEnd(36)} base ${r.baseMs.toFixed(4).padStart(9)} ms  this ${r.thisMs.toFixed(4).padStart(9)} ms  ratio ${r.ratio.toFixed(3)}`,
  );
}
for (const b of Object.values(builds)) await b.engine.destroy();
const outDir =
  process.env.OUT && args.out === undefined ? process.env.OUT : outputDir({ out: args.out, quick: args.quick, committed: 'bench/results' });
await mkdir(outDir, { recursive: true });
await writeFile(
  join(outDir, 'gpu-error-checks.json'),
  JSON.stringify(
    {
      benchmark: 'gpu-error-checks',
      date: new Date().toISOString(),
      machine: { cpus: os.cpus().length, cpu: os.cpus()[0]?.model },
      adapter,
      base: args.base,
      rounds,
      rows,
    },
    null,
    2,
  ),
);
process.exit(0);
