// Wall clock of the four 2^28 targets of #14 through the GPU layer (device arrays in and out),
// after a sustained warm-up: scan and sort of u32, RLE encode of u8 with mean run 16 and RLE
// decode of its runs (rleEncode's own lengths, as an application decoding what it encoded would
// hold). One short device call. Each op is timed three times: as it comes, after a full garbage
// collection (with node --expose-gc), and with timestamp queries; each line says how many collections ran inside its
// timed calls and for how long (gcWatch in gpu-timestamps.mjs): the harness's own host arrays
// (1 GiB each) are garbage that V8 collects when it likes, possibly inside a timed call. The third
// time has timestamp queries recorded into every submission and read back after each call
// (outside its timing), as bench/gpu.mjs times: what the queries cost each op's wall clock.
//   node --expose-gc bench/wall-2-28.mjs [--log2 N]   (N: 28 by default; smaller to try it on SwiftShader)
import { contextWithKeys, gcWatch, median, timestampHooks, warmUntilSteady } from './gpu-timestamps.mjs';

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
const ts = ctx.hasTimestamps ? timestampHooks(ctx) : null;
for (const mode of ['', ' after gc()', ' with timestamp queries']) {
  if (mode === ' after gc()' && !gc.collect()) { console.log('(no --expose-gc: the runs after a collection are left out)'); continue; }
  if (mode === ' with timestamp queries' && ts === null) { console.log('(no timestamp queries on this adapter)'); continue; }
  for (const [name, unit, op, reps] of ops) {
    await warmUntilSteady(async () => {
      const t0 = performance.now();
      await op();
      return performance.now() - t0;
    });
    if (mode === ' after gc()') gc.collect();
    const times = [];
    const t0 = performance.now();
    for (let r = 0; r < reps; r++) {
      if (mode === ' with timestamp queries') { ts.reset(); ctx.encoderHooks = ts.hooks; }
      const c0 = performance.now();
      await op();
      times.push(performance.now() - c0);
      if (mode === ' with timestamp queries') { ctx.encoderHooks = null; await ts.read(); }
    }
    const t1 = performance.now();
    await gc.flush();
    const ms = median(times);
    console.log(
      `${name} 2^${log2}${mode}: wall ${ms.toFixed(3)} ms (min ${Math.min(...times).toFixed(3)}, ` +
        `max ${Math.max(...times).toFixed(3)}): ${(n / 1e6 / ms).toFixed(1)} ${unit}; ` +
        `${gc.countDuring(t0, t1)} collections inside, ${gc.msDuring(t0, t1).toFixed(2)} ms`,
    );
  }
}
gc.stop();
ctx.destroy();
