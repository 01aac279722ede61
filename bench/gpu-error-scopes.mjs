// What the GPU error checks cost (ts/gpu/error-scope.ts: every submission, transfer and pool
// allocation in WebGPU error scopes, checked before the op resolves): small GPU calls, where a
// fixed cost shows, and a large one, through the public API, this build beside a baseline build
// (another checkout's dist/, e.g. the commit before), each in its own processes, in the order
// A B A B so that drift touches both alike. Figures: tinybench medians (ms) per build, and the
// ratio of this build's to the baseline's.
//
//   npm run build && node bench/gpu-error-scopes.mjs --base ../other/dist [--rounds 2] [--out DIR]
//
// Writes gpu-error-scopes.json into DIR (default bench/results; on the device tool: $OUT).
import { outputDir } from './out-dir.mjs';
import { Bench } from 'tinybench';
import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const { values: args } = parseArgs({
  options: {
    base: { type: 'string' },
    rounds: { type: 'string', default: '2' },
    out: { type: 'string' },
    child: { type: 'string' }, // (internal) a dist/ to time, JSON on stdout
  },
});
const root = fileURLToPath(new URL('..', import.meta.url));

/** Times the calls with the build in `dist` (its node/index.js); resolves to { task: median ms }. */
async function measure(dist) {
  const { createEngine } = await import(pathToFileURL(join(dist, 'node/index.js')).href);
  const engine = await createEngine({ gpu: 'require', calibration: 'skip', workers: 0 });
  const keys = (n) => {
    const a = new Uint32Array(n);
    for (let i = 0, s = 7; i < n; i++) a[i] = s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return a;
  };
  const runsBytes = (n) => {
    const a = new Uint8Array(n);
    for (let i = 0, s = 1, v = 0; i < n; ) {
      s = (Math.imul(s, 1103515245) + 12345) >>> 0;
      const len = 1 + ((s >>> 8) % 31);
      v = (v + 1 + (s % 200)) & 255;
      a.fill(v, i, Math.min(n, i + len));
      i += len;
    }
    return a;
  };
  const host16k = keys(4096);
  const dev16k = await engine.upload(host16k);
  const dev4k = await engine.upload(keys(1024));
  const devRuns = await engine.upload(runsBytes(64 << 10));
  const runs = await engine.rleEncode(devRuns, { path: 'gpu' });
  const dev64m = await engine.upload(keys(1 << 24));
  const devMiB = await engine.upload(runsBytes(1 << 20));
  const gpu = { path: 'gpu' };
  // at least 10 calls a task and 400 ms (tinybench's default of 64 calls takes minutes on SwiftShader)
  const bench = new Bench({ time: 400, iterations: 10, warmupTime: 100, warmupIterations: 3 });
  bench
    .add('upload 16 KiB', async () => (await engine.upload(host16k)).destroy())
    .add('download 16 KiB', async () => engine.download(dev16k))
    .add('scan 4 KiB, device to device', async () => (await engine.scan(dev4k, gpu)).destroy())
    .add('sort 4 KiB, device to device', async () => (await engine.sort(dev4k, gpu)).destroy())
    .add('rleEncode 64 KiB, device to device', async () => {
      const r = await engine.rleEncode(devRuns, gpu);
      r.values.destroy();
      r.lengths.destroy();
    })
    .add('rleDecode 64 KiB, device to device', async () => (await engine.rleDecode(runs, gpu)).destroy())
    .add('compress 1 MiB, device to host', async () => engine.compress(devMiB, gpu))
    .add('scan 64 MiB, device to device', async () => (await engine.scan(dev64m, gpu)).destroy());
  await bench.run();
  const out = Object.fromEntries(bench.tasks.map((t) => [t.name, t.result.latency.p50]));
  out.adapter = engine.adapter;
  await engine.destroy();
  return out;
}

if (args.child !== undefined) {
  process.stdout.write(JSON.stringify(await measure(args.child)));
  process.exit(0);
}
if (args.base === undefined) {
  console.error('--base DIST (a baseline build\'s dist/) is required');
  process.exit(2);
}
const builds = { base: resolve(args.base), this: join(root, 'dist') };
const runs = { base: [], this: [] };
for (let r = 0; r < Number(args.rounds); r++) {
  for (const which of ['base', 'this']) {
    const json = execFileSync(process.execPath, [fileURLToPath(import.meta.url), '--child', builds[which]], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    runs[which].push(JSON.parse(json));
  }
}
const tasks = Object.keys(runs.this[0]).filter((k) => k !== 'adapter');
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const rows = tasks.map((task) => {
  const base = median(runs.base.map((r) => r[task]));
  const now = median(runs.this.map((r) => r[task]));
  return { task, baseMs: base, thisMs: now, ratio: now / base, baseRuns: runs.base.map((r) => r[task]), thisRuns: runs.this.map((r) => r[task]) };
});
console.log(`adapter ${JSON.stringify(runs.this[0].adapter)}; ${args.rounds} processes per build, medians of tinybench medians`);
for (const r of rows) {
  console.log(`${r.task.padEnd(36)} base ${r.baseMs.toFixed(4).padStart(9)} ms  this ${r.thisMs.toFixed(4).padStart(9)} ms  ratio ${r.ratio.toFixed(3)}`);
}
const outDir = process.env.OUT && args.out === undefined ? process.env.OUT : outputDir({ out: args.out, quick: false, committed: 'bench/results' });
await mkdir(outDir, { recursive: true });
await writeFile(
  join(outDir, 'gpu-error-scopes.json'),
  JSON.stringify({ benchmark: 'gpu-error-scopes', date: new Date().toISOString(), machine: { cpus: os.cpus().length, cpu: os.cpus()[0]?.model }, adapter: runs.this[0].adapter, base: args.base, rows }, null, 2),
);
