// Wall clock of the four 2^28 targets of #14 through the GPU layer (device arrays in and out),
// after a sustained warm-up: scan and sort of u32, RLE encode of u8 with mean run 16 and RLE
// decode of its runs (rleEncode's own lengths, as an application decoding what it encoded would
// hold). One short device call. Each op is timed twice: as it comes, and after a full garbage
// collection (with node --expose-gc), and each line says how many collections ran inside its
// timed calls and for how long (gcWatch in gpu-timestamps.mjs): the harness's own host arrays
// (1 GiB each) are garbage that V8 collects when it likes, possibly inside a timed call.
//   node --expose-gc bench/wall-2-28.mjs [--log2 N]   (N: 28 by default; smaller to try it on SwiftShader)
import { contextWithKeys, gcWatch, median, warmUntilSteady } from './gpu-timestamps.mjs';

const { ctx, log2, n, d } = await contextWithKeys();
const gc = await gcWatch();
// u8 runs of mean length 16 (lengths 1..31), no two neighbours equal, as bench/gpu.mjs makes them
const bytes = new Uint8Array(n);
for (let i = 0, s = 7, prev = -1; i < n; ) {
  s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
  const len = 1 + (s >>> 8) % 31;
  let v = s >>> 24;
  if (v === prev) v = (v + 1) & 0xff;
  bytes.fill(v, i, Math.min(n, i + len));
  prev = v;
  i += len;
}
const u8 = await ctx.upload(bytes);
const runs = await ctx.rleEncode(u8);
const ops = [
  ['scan u32', 'G elements/s', async () => (await ctx.scan(d, { inclusive: true })).destroy(), 15],
  ['sort u32', 'G keys/s', async () => (await ctx.sort(d)).keys.destroy(), 7],
  ['rleEncode u8 run 16', 'GB/s of input', async () => { const r = await ctx.rleEncode(u8); r.values.destroy(); r.lengths.destroy(); }, 15],
  ['rleDecode u8 run 16', 'GB/s of output', async () => (await ctx.rleDecode(runs.values, runs.lengths)).destroy(), 15],
];
for (const collectFirst of [false, true]) {
  if (collectFirst && !gc.collect()) { console.log('(no --expose-gc: the runs after a collection are left out)'); break; }
  for (const [name, unit, op, reps] of ops) {
    await warmUntilSteady(async () => {
      const t0 = performance.now();
      await op();
      return performance.now() - t0;
    });
    if (collectFirst) gc.collect();
    const ts = [];
    const t0 = performance.now();
    for (let r = 0; r < reps; r++) {
      const c0 = performance.now();
      await op();
      ts.push(performance.now() - c0);
    }
    const t1 = performance.now();
    await gc.flush();
    const ms = median(ts);
    console.log(
      `${name} 2^${log2}${collectFirst ? ' after gc()' : ''}: wall ${ms.toFixed(3)} ms (min ${Math.min(...ts).toFixed(3)}, ` +
        `max ${Math.max(...ts).toFixed(3)}): ${(n / 1e6 / ms).toFixed(1)} ${unit}; ` +
        `${gc.countDuring(t0, t1)} collections inside, ${gc.msDuring(t0, t1).toFixed(2)} ms`,
    );
  }
}
gc.stop();
ctx.destroy();
