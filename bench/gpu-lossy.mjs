#!/usr/bin/env node
/**
 * The error-bounded lossy mode on a real GPU, on the corpus's float arrays (f32 and f64; issue
 * #45: "the lossy mode for f32 and f64" on the device both ways), through the public API, as it
 * is and repeated to 64 MiB, at bounds of 1e-3 and 1e-5 of the array's range of finite values:
 *   - compress from the device on the GPU path (quantized there: ts/codec/gpu/encode-lossy.ts;
 *     the container read back to the host, and left on the device) beside readback + the CPU
 *     path (16 workers or as many as there are): before f64 was quantized on the GPU, the GPU
 *     path of f64 was that readback;
 *   - decompress to the device of the CPU path's container: the GPU path (uploaded, then decoded
 *     there), the same container already on the device, and the CPU decode + upload (what the
 *     GPU path of f64 did before);
 *   - checks: both paths decode both paths' containers to the same bits, and every finite element
 *     is within the bound.
 * Medians of REPS calls after SUSTAIN_MS of calls back to back (the GPU's clock rises under load),
 * GB/s of elements. Writes bench/results/<machine>/gpu-lossy.json and gpu-lossy.md.
 *   node bench/gpu-lossy.mjs [--quick] [--files a,b] [--workers 16] [--out DIR]
 */
import os from 'node:os';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { createEngine } from '../dist/node/index.js';
import { dataFiles, finiteRange, repeatTo, sameBytes as same } from './lib/files.mjs';
import { timeCalls } from './lib/measure.mjs';
import { machineInfo, writeResults } from './lib/results.mjs';

const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean' },
    files: { type: 'string' },
    workers: { type: 'string' },
    out: { type: 'string' },
  },
});
const quick = args.quick === true;
const REPS = quick ? 3 : 7;
const SUSTAIN_MS = quick ? 150 : 600;
const RELATIVE_BOUNDS = [1e-3, 1e-5];

/** Median ms of REPS calls of `fn` after SUSTAIN_MS of calls back to back. */
const timeMs = async (fn) => {
  for (const t0 = performance.now(); performance.now() - t0 < SUSTAIN_MS;) await fn();
  return (await timeCalls(fn, { minRuns: REPS, minMs: 0, warmups: 0 })).medianMs;
};

/** The first element of `y` that is not within `abs` of `x` (NaN, infinities and -0 exact), or -1. */
function outOfBound(x, y, abs) {
  for (let i = 0; i < x.length; i++) {
    if (Number.isFinite(x[i]) ? Math.abs(x[i] - y[i]) <= abs : Object.is(x[i], y[i])) continue;
    return i;
  }
  return -1;
}

const workers = Number(args.workers ?? Math.min(16, os.cpus().length));
const engine = await createEngine({ workers, gpu: 'require', calibration: 'skip' });
const rows = [];
const problems = [];
const floats = dataFiles({ samples: [], files: args.files }).filter((f) => f.name.endsWith('.f32') || f.name.endsWith('.f64'));
for (const file of floats) {
  const { Ctor } = file;
  const raw = readFileSync(file.path);
  for (const mib of quick ? [0] : [0, 64]) {
    const host = repeatTo(raw, mib === 0 ? raw.length : Math.ceil((mib << 20) / raw.length) * raw.length, Ctor);
    const B = host.byteLength;
    const name = `${file.name}${mib > 0 ? ` x${Math.round(B / raw.length)}` : ''}`;
    const range = finiteRange(host);
    const device = await engine.upload(host);
    for (const rel of RELATIVE_BOUNDS) {
      const abs = rel * range;
      const opts = { errorBound: { abs } };
      const gpuContainer = await engine.compress(device, { ...opts, path: 'gpu' });
      const cpuContainer = await engine.compress(host, { ...opts, path: 'cpu' });
      const want = await engine.decompress(cpuContainer, { path: 'cpu' });
      const bad = outOfBound(host, want, abs);
      if (bad >= 0) problems.push(`${name} abs ${abs}: element ${bad} of the CPU path's decode is out of bound`);
      for (const [what, container] of [
        ['GPU', gpuContainer],
        ['CPU', cpuContainer],
      ]) {
        if (!same(await engine.decompress(container, { path: 'cpu' }), want))
          problems.push(`${name} abs ${abs}: the CPU decode of the ${what} container differs`);
        const back = await engine.decompress(container, { path: 'gpu', to: 'device' });
        if (!same(await engine.download(back), want)) problems.push(`${name} abs ${abs}: the GPU decode of the ${what} container differs`);
        back.destroy();
      }
      const resident = await engine.upload(cpuContainer);
      const cGpu = await timeMs(() => engine.compress(device, { ...opts, path: 'gpu' }));
      const cResident = await timeMs(async () => (await engine.compress(device, { ...opts, path: 'gpu', to: 'device' })).destroy());
      const cCpu = await timeMs(async () => engine.compress(await engine.download(device), { ...opts, path: 'cpu' }));
      const dGpu = await timeMs(async () => (await engine.decompress(cpuContainer, { path: 'gpu', to: 'device' })).destroy());
      const dResident = await timeMs(async () => (await engine.decompress(resident)).destroy());
      const dCpu = await timeMs(async () => (await engine.upload(await engine.decompress(cpuContainer, { path: 'cpu' }))).destroy());
      resident.destroy();
      const row = {
        file: name,
        bytes: B,
        rel,
        abs,
        ratioGpu: B / gpuContainer.length,
        ratioCpu: B / cpuContainer.length,
        quantizedChunks: engine.inspect(gpuContainer).chunks.filter((c) => c.encoding.startsWith('quantize')).length,
        chunks: engine.inspect(gpuContainer).chunks.length,
        compress: { gpu: B / cGpu / 1e6, gpuResident: B / cResident / 1e6, readbackCpu: B / cCpu / 1e6 },
        decompress: { gpu: B / dGpu / 1e6, gpuResident: B / dResident / 1e6, cpuUpload: B / dCpu / 1e6 },
      };
      rows.push(row);
      console.log(
        `${name.padEnd(28)} abs ${rel} of the range: ratio gpu ${row.ratioGpu.toFixed(2)} / cpu ${row.ratioCpu.toFixed(2)} (${row.quantizedChunks}/${row.chunks} chunks quantized)  compress gpu ${row.compress.gpu.toFixed(2)} (to the device ${row.compress.gpuResident.toFixed(2)}) / readback+cpu ${row.compress.readbackCpu.toFixed(2)}  decompress gpu ${row.decompress.gpu.toFixed(2)} (on the device ${row.decompress.gpuResident.toFixed(2)}) / cpu+upload ${row.decompress.cpuUpload.toFixed(2)} GB/s`,
      );
    }
    device.destroy();
  }
}
await engine.destroy();
for (const p of problems) console.log(`PROBLEM ${p}`);
console.log(problems.length === 0 ? 'all checks passed' : `${problems.length} problems`);
const table = [
  'GB/s of elements, medians (bench/gpu-lossy.mjs); the bound a fraction of the range of finite values:',
  '',
  '| array | bound | ratio GPU path / CPU path | compress: device -> host, GPU path | device -> device container | readback + CPU path | decompress: host container -> device | device container -> device | CPU + upload |',
  '| --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ...rows.map(
    (r) =>
      `| ${r.file} | ${r.rel} | ${r.ratioGpu.toFixed(2)} / ${r.ratioCpu.toFixed(2)} | ${[r.compress.gpu, r.compress.gpuResident, r.compress.readbackCpu, r.decompress.gpu, r.decompress.gpuResident, r.decompress.cpuUpload].map((v) => v.toFixed(2)).join(' | ')} |`,
  ),
  '',
].join('\n');
console.log(`\n${table}`);
writeResults(
  { 'gpu-lossy.json': { machine: machineInfo(), workers, rows, problems }, 'gpu-lossy.md': table },
  { quick, out: args.out, gpu: true },
);
if (problems.length > 0) process.exitCode = 1;
