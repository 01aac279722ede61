// Wall clock of scan and sort of 2^28 u32 through the GPU layer (device arrays in and out), after
// a sustained warm-up: the #14 targets' figures in one short device call. Prints one line each.
//   node bench/wall-2-28.mjs
import { loadGpuLayer, median, warmUntilSteady } from './gpu-timestamps.mjs';

const layer = await loadGpuLayer();
const ctx = await layer.createGpuContext();
const n = 2 ** 28;
const keys = new Uint32Array(n);
for (let i = 0, s = 1; i < n; i++) keys[i] = s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
const d = await ctx.upload(keys);
for (const [name, op, reps] of [
  ['scan', async () => (await ctx.scan(d, { inclusive: true })).destroy(), 15],
  ['sort', async () => (await ctx.sort(d)).keys.destroy(), 7],
]) {
  await warmUntilSteady(async () => {
    const t0 = performance.now();
    await op();
    return performance.now() - t0;
  });
  const ts = [];
  for (let r = 0; r < reps; r++) {
    const t0 = performance.now();
    await op();
    ts.push(performance.now() - t0);
  }
  const ms = median(ts);
  console.log(`${name} u32 2^28: wall ${ms.toFixed(3)} ms (min ${Math.min(...ts).toFixed(3)}): ${(n / 1e6 / ms).toFixed(1)} G/s`);
}
ctx.destroy();
