// What a 16 MiB readback to the host costs a caller, call by call, against what calibration's
// probes measure (issue #14's cold predictions: calibration put the readback of a 16 MiB GPU
// result at about twice the 5-6.5 ms that bench/cost-model.mjs's steady calls took). Prints each
// call's ms and whether a garbage collection ran during it, for:
//   - GPU scans of device data to the host, interleaved with CPU-path calls as cost-model.mjs does;
//   - the same GPU calls in a row;
//   - engine.download into new arrays in a row (calibration's probe), into one reused array, and
//     into one reused array filled with zeros first (what calloc does with memory that comes back);
//   - calibration's readback probe (an upload, then the download timed), at the start and later;
//   - a new array's first touch (fresh pages) against a reused one's, without the GPU.
// And GPU decompress of 16 MiB to the device, in a row and each after a CPU call (cost-model.mjs
// measured 14 ms there where calibration predicted 5.9).
//
//   npm run build && node bench/readback-steady.mjs [--out DIR] [--bytes N (default 16 MiB)]
import { probeRunsBytes } from './suite/data.mjs';
import { outputDir } from './out-dir.mjs';
import { release, settle } from './interleave.mjs';
import { lcgKeys } from './gpu-timestamps.mjs';
import { writeFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { PerformanceObserver } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { createEngine } from '../dist/node/index.js';

const { values: args } = parseArgs({ options: { out: { type: 'string' }, bytes: { type: 'string', default: String(16 << 20) } } });
const outDir =
  process.env.OUT && args.out === undefined ? process.env.OUT : outputDir({ out: args.out, quick: false, committed: 'bench/results' });
const BYTES = Number(args.bytes);

const gcs = [];
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) gcs.push([e.startTime, e.startTime + e.duration, e.detail?.kind ?? e.kind]);
}).observe({ entryTypes: ['gc'] });
const gcDuring = (t0, t1) => gcs.filter(([s, e]) => e >= t0 && s <= t1);

const engine = await createEngine({ gpu: 'require' });
console.log(`adapter ${JSON.stringify(engine.adapter)}, workers ${engine.workers}, ${BYTES >> 20} MiB`);
const keys = lcgKeys(BYTES >> 2, 7);
const device = await engine.upload(keys);
const report = {};

/** Times `fn` `n` times (with settle() between), each call's ms and the GCs during it. */
async function series(name, n, fn, between) {
  const rows = [];
  for (let i = 0; i < n; i++) {
    if (between) release(await between());
    await settle();
    const t0 = performance.now();
    const r = await fn(i);
    const t1 = performance.now();
    await new Promise((resolve) => setImmediate(resolve)); // let the observer see this call's GCs
    rows.push({ ms: t1 - t0, gc: gcDuring(t0, t1).length });
    release(r);
  }
  const sorted = rows.map((r) => r.ms).sort((a, b) => a - b);
  const med = sorted[sorted.length >> 1];
  console.log(
    `${name.padEnd(44)} median ${med.toFixed(2)} min ${sorted[0].toFixed(2)} max ${sorted.at(-1).toFixed(2)}  calls: ${rows.map((r) => r.ms.toFixed(1) + (r.gc ? '*' : '')).join(' ')}`,
  );
  report[name] = { median: med, rows };
  return rows;
}

// warm up the GPU path and the CPU path
for (let i = 0; i < 3; i++) {
  release(await engine.scan(device, { path: 'gpu', to: 'host' }));
  release(await engine.scan(keys, { path: 'cpu' }));
}

const probe0 = engine['probe'](engine['gpuContext']);
await series("calibration's readback probe, first", 8, async () => void (await probe0.readback(BYTES)));
await series(
  'gpu scan dev->host, after a cpu call each',
  24,
  () => engine.scan(device, { path: 'gpu', to: 'host' }),
  () => engine.scan(device, { path: 'cpu', to: 'host' }),
);
await series('gpu scan dev->host, in a row', 24, () => engine.scan(device, { path: 'gpu', to: 'host' }));
await series('gpu scan dev->dev, in a row', 12, () => engine.scan(device, { path: 'gpu', to: 'device' }));
await series('download into new arrays, in a row', 16, () => engine.download(device));
const into = new Uint32Array(keys.length);
await series('download into one reused array', 16, () => engine.download(device, { into }));
await series('download into one reused array zeroed first', 16, () => {
  into.fill(0);
  return engine.download(device, { into });
});
const probe = engine['probe'](engine['gpuContext']); // calibration's probe (private)
await series("calibration's readback probe, in a row", 8, async () => void (await probe.readback(BYTES)));
// a download right after an upload: of the array just uploaded (twice: is the second one fast?),
// and of an older array (is it the upload, or the new buffer?)
const afterUpload = { first: [], second: [], older: [] };
await series('download right after an upload', 8, async () => {
  const d = await engine.upload(keys);
  await new Promise((resolve) => setTimeout(resolve, 5));
  for (const which of ['first', 'second']) {
    const t0 = performance.now();
    await engine.download(d);
    afterUpload[which].push(performance.now() - t0);
  }
  d.destroy();
  const e = await engine.upload(keys);
  await new Promise((resolve) => setTimeout(resolve, 5));
  const t0 = performance.now();
  await engine.download(device);
  afterUpload.older.push(performance.now() - t0);
  e.destroy();
});
for (const [k, v] of Object.entries(afterUpload)) console.log(`  ${k.padEnd(6)} download: ${v.map((x) => x.toFixed(1)).join(' ')}`);
report.afterUpload = afterUpload;
await series('new Uint8Array, every byte written (fresh)', 8, () => {
  const a = new Uint8Array(BYTES);
  a.fill(1);
});
const reused = new Uint8Array(BYTES);
await series('reused Uint8Array, every byte written', 8, () => reused.fill(1));
await series('reused Uint8Array, copied into', 8, () => reused.set(new Uint8Array(keys.buffer)));

const packed = await engine.compress(probeRunsBytes(BYTES), { path: 'cpu' });
console.log(`container ${packed.byteLength} bytes for ${BYTES} elements`);
await series('gpu decompress -> device, in a row', 12, () => engine.decompress(packed, { path: 'gpu', to: 'device' }));
await series(
  'gpu decompress -> device, after a cpu call',
  12,
  () => engine.decompress(packed, { path: 'gpu', to: 'device' }),
  () => engine.decompress(packed, { path: 'cpu' }),
);
await series('cpu decompress -> host, in a row', 12, () => engine.decompress(packed, { path: 'cpu' }));
await series('gpu decompress -> host, in a row', 12, () => engine.decompress(packed, { path: 'gpu' }));

await mkdir(outDir, { recursive: true });
await writeFile(join(outDir, 'readback-steady.json'), JSON.stringify({ adapter: engine.adapter, bytes: BYTES, report }, null, 1));
await engine.destroy?.();
process.exit(0);
