// Kernel shapes side by side (GpuContextOptions.tuning): scan and radix sort of 2^28 u32 (or
// --log2 N) through the GPU layer, device arrays in and out, one context per variant, each after
// a sustained warm-up. Prints and saves, per variant, the GPU time (timestamp queries, median)
// and the wall clock (median), each as a ratio to the default shape (the baseline, run first and
// again last to show drift). Every variant's output is checked: the scan against a serial scan
// on the host, the sort for order and for the same multiset (sum and xor of the keys).
//   node bench/gpu-variants.mjs [--log2 28] [--out DIR]
// Saves DIR/gpu-variants.json (DIR: $OUT, else bench/.quick).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { lcgKeys, loadGpuLayer, median, timestampHooks, warmUntilSteady } from './gpu-timestamps.mjs';

const { values: args } = parseArgs({ options: { log2: { type: 'string', default: '28' }, out: { type: 'string' } } });
const n = 2 ** Number(args.log2);
const outDir = args.out ?? process.env.OUT ?? 'bench/.quick';

// each variant: a name and its tuning (GpuContextOptions.tuning), or { options } for other
// context options (spin 1: a look-back falls back to reducing a predecessor's tile itself after
// one round without progress, so fallbacks happen often; a check of correctness more than a
// figure)
const VARIANTS = {
  scan: [
    ['default', {}],
    ['workgroup 256', { scanWorkgroupSize: 256 }],
    ['workgroup 512', { scanWorkgroupSize: 512 }],
    ['workgroup 1024, 8 vec4 per invocation', { scanWorkgroupSize: 1024, scanVecsPerInvocation: 8 }],
    ['frequent decoupled fallback (spin 1)', { options: { lookbackSpin: 1 } }],
    ['default (again)', {}],
  ],
  sort: [
    ['default', {}],
    ['workgroup 512', { sortWorkgroupSize: 512 }],
    ['default (again)', {}],
  ],
};

const layer = await loadGpuLayer();
const keys = lcgKeys(n);
let keySum = 0;
let keyXor = 0;
for (let i = 0; i < n; i++) {
  keySum = (keySum + keys[i]) >>> 0;
  keyXor ^= keys[i];
}
// inclusive scan of the keys at every 4097th index (u32 wrapping): spot checks of the GPU's output
const probes = [];
for (let i = 0, run = 0; i < n; i++) {
  run = (run + keys[i]) >>> 0;
  if (i % 4097 === 0 || i === n - 1) probes.push([i, run]);
}

function checkScan(out) {
  for (const [i, want] of probes) if (out[i] !== want) return `scan[${i}] = ${out[i]}, want ${want}`;
  return 'ok';
}

function checkSort(out) {
  let sum = 0;
  let xor = 0;
  for (let i = 0; i < n; i++) {
    if (i > 0 && out[i - 1] > out[i]) return `out of order at ${i}`;
    sum = (sum + out[i]) >>> 0;
    xor ^= out[i];
  }
  return sum === keySum && xor === keyXor ? 'ok' : 'keys changed (sum or xor differs)';
}

const results = [];
for (const [op, variants] of Object.entries(VARIANTS)) {
  let base;
  for (const [name, shape] of variants) {
    const tuning = shape.options === undefined ? shape : {};
    const ctx = await layer.createGpuContext({ ...shape.options, tuning });
    const ts = ctx.hasTimestamps ? timestampHooks(ctx) : null;
    const d = await ctx.upload(keys);
    const once = op === 'scan' ? () => ctx.scan(d, { inclusive: true }) : async () => (await ctx.sort(d)).keys;
    const check = op === 'scan' ? checkScan : checkSort;
    const verdict = check(await ctx.download(await once()));
    const timed = async () => {
      const t0 = performance.now();
      (await once()).destroy();
      return performance.now() - t0;
    };
    await warmUntilSteady(timed, { sustain: async () => (await once()).destroy() });
    const walls = [];
    const gpus = [];
    for (let r = 0; r < (op === 'scan' ? 15 : 7); r++) {
      walls.push(await timed());
      if (ts !== null) {
        ctx.encoderHooks = ts.hooks;
        (await once()).destroy();
        ctx.encoderHooks = null;
        gpus.push((await ts.read()).ms);
      }
    }
    const row = { op, variant: name, tuning, options: shape.options, n, wallMs: median(walls), gpuMs: ts === null ? null : median(gpus), check: verdict };
    base ??= row;
    row.wallRatio = row.wallMs / base.wallMs;
    row.gpuRatio = row.gpuMs === null ? null : row.gpuMs / base.gpuMs;
    results.push(row);
    console.log(
      `${op} ${name.padEnd(28)} wall ${row.wallMs.toFixed(3)} ms (x${row.wallRatio.toFixed(3)})` +
        (row.gpuMs === null ? '' : `  GPU ${row.gpuMs.toFixed(3)} ms (x${row.gpuRatio.toFixed(3)})`) +
        `  ${(n / 1e6 / row.wallMs).toFixed(1)} G/s wall  check: ${verdict}`,
    );
    d.destroy();
    ctx.destroy();
  }
}
mkdirSync(outDir, { recursive: true });
writeFileSync(join(outDir, 'gpu-variants.json'), JSON.stringify({ date: new Date().toISOString(), results }, null, 2));
