// The wall clock of a 2^28 scan (device arrays in and out) as the calls come: back to back, with
// a setImmediate spinner keeping Node's event loop turning, and after a 2 ms pause each (issue
// #14: the scan's wall clock over its 0.96 ms of GPU time varies between runs). Prints the median,
// the minimum and every call.
//   node bench/scan-wait.mjs        (LOG2=20 for a smaller scan)
import { lcgKeys, loadGpuLayer, median, warmUntilSteady } from './gpu-timestamps.mjs';
const layer = await loadGpuLayer();
const ctx = await layer.createGpuContext();
const n = 2 ** Number(process.env.LOG2 ?? 28);
const keys = lcgKeys(n);
const d = await ctx.upload(keys);
const op = async () => (await ctx.scan(d, { inclusive: true })).destroy();
const timed = async () => { const t0 = performance.now(); await op(); return performance.now() - t0; };
await warmUntilSteady(timed, { sustain: op });
const run = async (label, reps = 25) => {
  const ts = [];
  for (let r = 0; r < reps; r++) ts.push(await timed());
  console.log(`${label.padEnd(40)} median ${median(ts).toFixed(3)} min ${Math.min(...ts).toFixed(3)} all ${ts.map((x) => x.toFixed(2)).join(' ')}`);
};
await run('plain, back to back');
// a spinner keeping the event loop turning
let spin = true;
const spinner = () => { if (spin) setImmediate(spinner); };
spinner();
await run('with a setImmediate spinner');
spin = false;
await new Promise((r) => setTimeout(r, 10));
// a pause between calls
const ts = [];
for (let r = 0; r < 25; r++) { await new Promise((res) => setTimeout(res, 2)); ts.push(await timed()); }
console.log(`${'2 ms pause before each'.padEnd(40)} median ${median(ts).toFixed(3)} min ${Math.min(...ts).toFixed(3)}`);
await run('plain again');
ctx.destroy();
