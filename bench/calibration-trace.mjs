// What calibration measures, point by point, against the same calls later (issue #14: on an H200
// calibration measured a GPU compress of 16-64 MiB at 3-7x its steady time). Prints every probe
// run in order (the op, its size, its milliseconds, and for GPU runs the part spent inside the
// GPU layer's submissions: the rest is host JavaScript), the calibrated lines, then the same
// probes repeated after calibration, and small CPU calls tight and after a 2 ms pause (the
// cost-model bench's spacing) through the probe and through the engine.
//   node bench/calibration-trace.mjs [--prewarm N (GPU compresses of 1 MiB before calibrating)]
//   node bench/calibration-trace.mjs --compare (no calibration: GPU compresses of the calibration
//     pattern and of bench/suite/data.mjs probeRunsBytes, 16 MiB, the input uploaded once or before
//     each call, with the time in submissions and in garbage collection)
import { PerformanceObserver } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { createEngine } from '../dist/node/index.js';
import { calibrationBytes, probeRunsBytes } from './suite/data.mjs';

const { values: args } = parseArgs({ options: { prewarm: { type: 'string', default: '0' }, compare: { type: 'boolean', default: false } } });
const engine = await createEngine({ gpu: 'require', calibration: 'skip' });
const ctx = engine['gpuContext'];
let gcMs = 0;
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) gcMs += e.duration;
}).observe({ entryTypes: ['gc'] });
let inSubmissions = 0;
const submit = ctx.submit;
ctx.submit = function (...a) {
  const t0 = performance.now();
  return submit.apply(this, a).finally(() => (inSubmissions += performance.now() - t0));
};
const t00 = performance.now();
const trace = [];
let probe;
const makeProbe = engine['probe'];
engine['probe'] = function (gpu) {
  const p = makeProbe.call(this, gpu);
  const wrap = (kind, fn) =>
    async (...a) => {
      const s0 = inSubmissions;
      const g0 = gcMs;
      const ms = await fn(...a);
      const row = { at: performance.now() - t00, kind, op: typeof a[0] === 'string' ? a[0] : '', bytes: typeof a[0] === 'number' ? a[0] : a[1], ms, submitMs: inSubmissions - s0, gcMs: gcMs - g0 };
      trace.push(row);
      return ms;
    };
  probe = {
    ...p,
    cpu: wrap('cpu', p.cpu),
    gpu: wrap('gpu', p.gpu),
    upload: wrap('upload', p.upload),
    readback: wrap('readback', p.readback),
  };
  return probe;
};
const show = (r) =>
  `${r.at.toFixed(0).padStart(6)} ms  ${r.kind.padEnd(8)} ${r.op.padEnd(10)} ${String(r.bytes >> 10).padStart(7)} KiB ${r.ms.toFixed(2).padStart(9)} ms` +
  (r.kind === 'gpu' ? `  in submissions ${r.submitMs.toFixed(2)} ms` : '') + `  gc ${r.gcMs.toFixed(2)} ms`;

if (args.compare) {
  const n = 16 << 20;
  const datasets = { 'calibration pattern': calibrationBytes(n), probeRunsBytes: probeRunsBytes(n) };
  for (const [name, data] of Object.entries(datasets)) {
    for (const fresh of [false, true]) {
      let d = await engine.upload(data);
      const rows = [];
      for (let i = 0; i < 10; i++) {
        if (fresh) {
          d.destroy();
          d = await engine.upload(data);
        }
        const s0 = inSubmissions;
        const g0 = gcMs;
        const t0 = performance.now();
        const out = await engine.compress(d, { path: 'gpu' });
        rows.push(`${(performance.now() - t0).toFixed(1)} (sub ${(inSubmissions - s0).toFixed(1)}, gc ${(gcMs - g0).toFixed(1)}, ${out.length} B)`);
      }
      d.destroy();
      console.log(`${name}, ${fresh ? 'uploaded before each call' : 'uploaded once'}: ${rows.join('  ')}`);
    }
  }
  await engine.destroy();
  process.exit(0);
}
const prewarm = Number(args.prewarm);
if (prewarm > 0) {
  const p = engine['probe'](ctx);
  for (let i = 0; i < prewarm; i++) await p.gpu('compress', 1 << 20);
  console.log(`prewarm: ${prewarm} GPU compresses of 1 MiB: ${trace.slice(-3).map((r) => r.ms.toFixed(2)).join(', ')} ms (last three)`);
  trace.length = 0;
}
await engine.calibrate({ force: true });
console.log(`calibration: ${JSON.stringify(engine.lastCalibration)}`);
for (const r of trace) console.log(show(r));
const rates = engine.model.rates;
const line = (l) => (l ? `${l.fixedMs.toFixed(3)} ms + ${(l.msPerByte * 2 ** 20).toFixed(4)} ms/MiB${l.upper ? `, from ${l.upper.fromBytes >> 20} MiB ${l.upper.fixedMs.toFixed(2)} ms + ${(l.upper.msPerByte * 2 ** 20).toFixed(4)} ms/MiB` : ''}` : '-');
for (const op of Object.keys(rates.cpu)) console.log(`line cpu/${op.padEnd(10)} ${line(rates.cpu[op])}`);
for (const op of Object.keys(rates.gpu ?? {})) console.log(`line gpu/${op.padEnd(10)} ${line(rates.gpu[op])}`);
console.log(`line upload         ${line(rates.upload)}\nline readback       ${line(rates.readback)}`);

console.log('\nafter calibration, the same probes again:');
trace.length = 0;
for (const [op, bytes, n] of [['compress', 16 << 20, 12], ['compress', 64 << 20, 6], ['decompress', 16 << 20, 6], ['rleEncode', 16 << 20, 4], ['sort', 16 << 20, 4]]) {
  for (let i = 0; i < n; i++) await probe.gpu(op, bytes);
}
for (const [op, bytes, n] of [['compress', 16 << 20, 4], ['compress', 64 << 20, 3]]) for (let i = 0; i < n; i++) await probe.cpu(op, bytes);
for (const r of trace) console.log(show(r));

console.log('\nsmall CPU calls, median of 15 (ms): probe tight, probe after 2 ms, engine after 2 ms');
const settle = () => new Promise((r) => setTimeout(r, 2));
const med = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const keys = new Uint32Array(1024).map((_, i) => Math.imul(i + 7, 2654435761) >>> 0);
const bytes = new Uint8Array(4096).map((_, i) => (i >> 4) & 255);
const calls = {
  rleEncode: () => engine.rleEncode(bytes, { path: 'cpu' }),
  scan: () => engine.scan(keys, { path: 'cpu' }),
  sort: () => engine.sort(keys, { path: 'cpu' }),
  compress: () => engine.compress(bytes, { path: 'cpu' }),
};
for (const [op, call] of Object.entries(calls)) {
  const tight = [];
  const spaced = [];
  const viaEngine = [];
  for (let i = 0; i < 15; i++) tight.push(await probe.cpu(op, 4096));
  for (let i = 0; i < 15; i++) {
    await settle();
    spaced.push(await probe.cpu(op, 4096));
  }
  for (let i = 0; i < 15; i++) {
    await settle();
    const t0 = performance.now();
    await call();
    viaEngine.push(performance.now() - t0);
  }
  console.log(`${op.padEnd(10)} ${med(tight).toFixed(3)} ${med(spaced).toFixed(3)} ${med(viaEngine).toFixed(3)}`);
}
await engine.destroy();
