#!/usr/bin/env node
/**
 * The WebGPU layer of parle on a real GPU (scan, radix sort, RLE, transfers), through the layer
 * itself (ts/gpu/, bundled by bench/lib/internals.mjs), on device arrays; on the GPU machine:
 * `bash bench/gpu-machine.sh run gpu-layer`.
 *
 * Figures (medians of REPS runs each, after a warm-up):
 *   scan of 2^k u32 (inclusive) ............. G elements/s; bytes moved = 8 per element
 *   radix sort of 2^k u32 keys .............. G keys/s (and key-value pairs at 2^24)
 *   RLE encode of 2^k u8, mean run 16 ....... GB/s of input
 *   RLE decode of the same runs ............. GB/s of output
 *   256 MiB transfers: queue.writeBuffer, ctx.upload, readback into a new and into a reused
 *   array, downloadMapped (zero-copy), and the host's memcpy (the bound of filling mapped memory)
 * GPU time: timestamp queries around each op's command buffers (bench/lib/gpu.mjs) where the
 * adapter has 'timestamp-query'; wall time: from the call to the resolved promise (submit,
 * completion, and any 4-byte count read). Every large result is checked against a host
 * computation (also at small odd sizes, with the forced look-back fallback and without subgroups).
 * An idle H200's SM clock is 345 MHz and reaches 1980 MHz only after a few hundred ms of
 * sustained load (scan and RLE run 3-4x slower at 345 MHz): every op is warmed until its times
 * settle (warmUntilSteady), and each figure records the median SM clock of its runs (`smMhz`,
 * from nvidia-smi where present).
 *
 * Usage: node bench/gpu-layer.mjs [--quick] [--max-log2 N] [--out DIR]
 * Writes bench/results/<machine>/gpu-layer.json (the machine is the GPU's).
 */
import { rng } from './suite/data.mjs';
import { loadGpuLayer, startClockSampler, timestampHooks, warmUntilSteady } from './lib/gpu.mjs';
import { machineInfo, median, writeResults } from './lib/results.mjs';

const { createGpuContext, scan, rleEncode, rleDecode, radixSort } = await loadGpuLayer();

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const maxLog2 = args.includes('--max-log2') ? Number(args[args.indexOf('--max-log2') + 1]) : quick ? 20 : 28;
const REPS = quick ? 3 : 7;

const log = (...a) => console.error(...a);
const clocks = await startClockSampler();

async function timeOp(ctx, ts, fn, cleanup) {
  const gpu = [];
  const wall = [];
  let passes = {};
  // warm-up: pipelines, and the GPU's clocks, which idle at 345 MHz on the H200 and reach
  // 1980 MHz only under sustained load: run until the times settle (bench/lib/gpu.mjs)
  const warm = await warmUntilSteady(
    async () => {
      ts?.reset();
      const t0 = performance.now();
      cleanup?.(await fn());
      const t1 = performance.now();
      return ts ? (await ts.read()).ms : t1 - t0;
    },
    { sustain: async () => { ts?.reset(); cleanup?.(await fn()); } },
  );
  const start = Date.now();
  for (let r = 0; r < REPS; r++) {
    ts?.reset();
    const t0 = performance.now();
    const out = await fn();
    const t1 = performance.now();
    const g = ts ? await ts.read() : { ms: NaN, passes: {} };
    wall.push(t1 - t0);
    gpu.push(g.ms);
    if (r === Math.floor(REPS / 2)) passes = g.passes;
    cleanup?.(out);
  }
  const smMhz = await clocks.smMhzDuring(start, Date.now());
  return { gpuMs: median(gpu), wallMs: median(wall), gpuMsAll: gpu, wallMsAll: wall, passesMs: passes, smMhz, warmRuns: warm.length };
}

function makeRuns(n, meanRun, next) {
  const a = new Uint8Array(n);
  let i = 0;
  let prev = -1;
  while (i < n) {
    const len = 1 + (next() % (2 * meanRun - 1));
    let v = next() & 0xff;
    if (v === prev) v = (v + 1) & 0xff;
    prev = v;
    a.fill(v, i, Math.min(n, i + len));
    i += len;
  }
  return a;
}

const results = { machine: machineInfo(), checks: [], figures: {}, notes: [] };

const ctx = await createGpuContext({ powerPreference: 'high-performance' });
if (ctx === null) {
  log('no WebGPU adapter');
  process.exit(2);
}
results.adapter = { ...ctx.adapterInfo, hasSubgroups: ctx.hasSubgroups, subgroupMinSize: ctx.subgroupMinSize, subgroupMaxSize: ctx.subgroupMaxSize, hasTimestamps: ctx.hasTimestamps, limits: ctx.limits };
log('adapter', JSON.stringify(results.adapter));
const ts = ctx.hasTimestamps ? timestampHooks(ctx) : null;

function check(name, ok, detail = '') {
  results.checks.push({ name, ok, detail });
  log(`${ok ? 'ok  ' : 'FAIL'} ${name} ${detail}`);
}

// ---- correctness on this adapter at small and odd sizes (subgroup paths differ from SwiftShader)
async function correctness(c, label) {
  const next = rng(12345);
  for (const n of [1, 255, 4097, 65536 * 4 + 3, 1_000_003]) {
    const a = new Uint32Array(n).map(() => next() % 1000);
    const out = await c.download(await scan(c, await c.upload(a), { inclusive: false }));
    let acc = 0, ok = true;
    for (let i = 0; i < n && ok; i++) { if (out[i] !== acc >>> 0) ok = false; acc = (acc + a[i]) >>> 0; }
    check(`${label} scan u32 exclusive n=${n}`, ok);
    const f = Float32Array.from({ length: n }, () => (next() % 200) - 100);
    const fo = await c.download(await scan(c, await c.upload(f), { inclusive: true }));
    let fa = 0, fok = true;
    for (let i = 0; i < n && fok; i++) { fa += f[i]; if (fo[i] !== fa) fok = false; }
    check(`${label} scan f32 inclusive n=${n}`, fok);
    // the forced fallback recounts every predecessor tile: quadratic in tiles, so large sorts
    // are left out there (minutes on SwiftShader at 10^6 keys)
    if (label !== 'spin0' || n <= 70_000) {
      const keys = new Uint32Array(n).map(() => next() % 5000);
      const vals = Uint32Array.from({ length: n }, (_, i) => i);
      const s = await radixSort(c, await c.upload(keys), await c.upload(vals));
      const sk = await c.download(s.keys);
      const sv = await c.download(s.values);
      let sok = true;
      for (let i = 0; i < n && sok; i++) {
        if (keys[sv[i]] !== sk[i]) sok = false;
        if (i > 0 && (sk[i - 1] > sk[i] || (sk[i - 1] === sk[i] && sv[i - 1] >= sv[i]))) sok = false;
      }
      check(`${label} sort u32 key-value stable n=${n}`, sok);
      const fk = Float32Array.from({ length: n }, () => ((next() % 2001) - 1000) / 7);
      const fs = await c.download((await radixSort(c, await c.upload(fk))).keys);
      const want = fk.slice().sort();
      let fsok = true;
      for (let i = 0; i < n && fsok; i++) if (!Object.is(fs[i], want[i])) fsok = false;
      check(`${label} sort f32 n=${n}`, fsok);
    }
    for (const meanRun of [1, 16, 5000]) {
      const u8 = makeRuns(n, meanRun, next);
      const runs = await rleEncode(c, await c.upload(u8));
      let count = 0;
      for (let i = 0; i < n; i++) if (i === 0 || u8[i] !== u8[i - 1]) count++;
      const back = await c.download(await rleDecode(c, runs.values, runs.lengths));
      let rok = runs.values.length === count && back.length === n;
      for (let i = 0; i < n && rok; i++) if (back[i] !== u8[i]) rok = false;
      check(`${label} rle u8 round trip n=${n} mean run ${meanRun}`, rok, `runs ${runs.values.length}/${count}`);
    }
  }
}
await correctness(ctx, 'default');
{
  const fallback = await createGpuContext({ lookbackSpin: 0 });
  await correctness(fallback, 'spin0');
  fallback.destroy();
  const shared = await createGpuContext({ subgroups: 'off' });
  await correctness(shared, 'no-subgroups');
  shared.destroy();
}

// ---- transfers -------------------------------------------------------------------------------
{
  const bytes = 256 << 20;
  const host = new Uint8Array(bytes);
  const next = rng(7);
  const words = new Uint32Array(host.buffer);
  for (let i = 0; i < words.length; i++) words[i] = next();
  const dst = ctx.device.createBuffer({ size: bytes, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC });
  const wb = [];
  for (let r = 0; r <= 5; r++) {
    const t0 = performance.now();
    ctx.device.queue.writeBuffer(dst, 0, host);
    await ctx.device.queue.onSubmittedWorkDone();
    if (r > 0) wb.push(performance.now() - t0);
  }
  results.figures.uploadWriteBuffer256MiB = { ms: median(wb), GBps: bytes / 1e6 / median(wb) };
  const up = [];
  for (let r = 0; r <= 5; r++) {
    const t0 = performance.now();
    const d = await ctx.upload(host);
    await ctx.device.queue.onSubmittedWorkDone();
    if (r > 0) up.push(performance.now() - t0);
    if (r === 5) {
      const back = await ctx.download(d);
      let ok = true;
      for (let i = 0; i < bytes && ok; i += 4093) if (back[i] !== host[i]) ok = false;
      check('upload/download 256 MiB round trip', ok);
    }
    d.destroy();
  }
  results.figures.uploadWholeStaging256MiB = { ms: median(up), GBps: bytes / 1e6 / median(up), note: 'ctx.upload: one staging piece (256 MiB default) kept mapped, re-mapped in the background' };
  const d = await ctx.upload(host);
  const down = [];
  for (let r = 0; r <= 5; r++) {
    const t0 = performance.now();
    await ctx.download(d);
    if (r > 0) down.push(performance.now() - t0);
  }
  results.figures.readbackRing256MiB = { ms: median(down), GBps: bytes / 1e6 / median(down), note: 'into a new array (page faults)' };
  const reuse = new Uint8Array(bytes);
  const downInto = [];
  const mapped = [];
  for (let r = 0; r <= 5; r++) {
    const t0 = performance.now();
    await ctx.download(d, { into: reuse });
    const t1 = performance.now();
    const m = await ctx.downloadMapped(d);
    const t2 = performance.now();
    if (r === 5) check('downloadMapped 256 MiB equals the upload', m.array[12345] === host[12345] && m.array[bytes - 1] === host[bytes - 1]);
    m.release();
    if (r > 0) { downInto.push(t1 - t0); mapped.push(t2 - t1); }
  }
  results.figures.readbackRingInto256MiB = { ms: median(downInto), GBps: bytes / 1e6 / median(downInto), note: 'into a reused array' };
  results.figures.readbackMapped256MiB = { ms: median(mapped), GBps: bytes / 1e6 / median(mapped), note: 'zero-copy: copy + mapAsync, array over the mapping' };
  // the host's memcpy, the bound of any upload that fills mapped memory from JavaScript
  {
    const plain = new Uint8Array(bytes);
    plain.set(host);
    const m = [];
    for (let r = 0; r < 5; r++) {
      const t0 = performance.now();
      plain.set(host);
      m.push(performance.now() - t0);
    }
    results.figures.hostMemcpy256MiB = { ms: median(m), GBps: bytes / 1e6 / median(m), note: 'TypedArray.set between two paged-in arrays' };
  }
  dst.destroy();
  log('transfers', JSON.stringify(results.figures));
}

ctx.encoderHooks = ts?.hooks ?? null;

// ---- scan -------------------------------------------------------------------------------------
for (const log2 of [20, 24, 26, 27, 27.99, 28].filter((k) => k <= maxLog2)) {
  // 27.99: 2^28 - 4096 elements, 65535 tiles, the largest 1-D dispatch
  const n = log2 === 27.99 ? 2 ** 28 - 4096 : 2 ** log2;
  const next = rng(log2 * 100);
  const a = new Uint32Array(n);
  for (let i = 0; i < n; i++) a[i] = next() & 0xff;
  const d = await ctx.upload(a);
  const t = await timeOp(ctx, ts, () => scan(ctx, d, { inclusive: true }), (o) => o.destroy());
  if (log2 === maxLog2 || log2 === 27.99) {
    const out = await ctx.download(await scan(ctx, d, { inclusive: true }));
    let acc = 0, ok = true;
    for (let i = 0; i < n && ok; i++) { acc = (acc + a[i]) >>> 0; if (out[i] !== acc) ok = false; }
    check(`scan u32 inclusive n=2^${log2}`, ok);
  }
  results.figures[`scan_u32_2^${log2}`] = { ...t, GelemsPerS: n / 1e6 / t.gpuMs, GelemsPerSWall: n / 1e6 / t.wallMs, GBpsReadWrite: (8 * n) / 1e6 / t.gpuMs };
  log(`scan 2^${log2}`, JSON.stringify(results.figures[`scan_u32_2^${log2}`]));
  d.destroy();
}

// ---- RLE u8 mean run 16 ----------------------------------------------------------------------
for (const log2 of [24, 28].filter((k) => k <= maxLog2)) {
  const n = 2 ** log2;
  const next = rng(100 + log2);
  const a = makeRuns(n, 16, next);
  const d = await ctx.upload(a);
  const enc = await timeOp(ctx, ts, () => rleEncode(ctx, d), (o) => { o.values.destroy(); o.lengths.destroy(); });
  const runs = await rleEncode(ctx, d);
  const dec = await timeOp(ctx, ts, () => rleDecode(ctx, runs.values, runs.lengths), (o) => o.destroy());
  if (log2 === maxLog2) {
    const back = await ctx.download(await rleDecode(ctx, runs.values, runs.lengths));
    let ok = back.length === n;
    for (let i = 0; i < n && ok; i++) if (back[i] !== a[i]) ok = false;
    check(`rle u8 mean run 16 round trip n=2^${log2}`, ok, `runs ${runs.values.length}`);
  }
  results.figures[`rleEncode_u8_run16_2^${log2}`] = { ...enc, runs: runs.values.length, GBpsInput: n / 1e6 / enc.gpuMs, GBpsInputWall: n / 1e6 / enc.wallMs };
  results.figures[`rleDecode_u8_run16_2^${log2}`] = { ...dec, GBpsOutput: n / 1e6 / dec.gpuMs, GBpsOutputWall: n / 1e6 / dec.wallMs };
  log(`rle 2^${log2}`, JSON.stringify(results.figures[`rleEncode_u8_run16_2^${log2}`]), JSON.stringify(results.figures[`rleDecode_u8_run16_2^${log2}`]));
  runs.values.destroy(); runs.lengths.destroy(); d.destroy();
}

// ---- radix sort -------------------------------------------------------------------------------
for (const log2 of [20, 24, 26, 28].filter((k) => k <= maxLog2)) {
  const n = 2 ** log2;
  const next = rng(200 + log2);
  const keys = new Uint32Array(n);
  for (let i = 0; i < n; i++) keys[i] = next();
  const d = await ctx.upload(keys);
  const t = await timeOp(ctx, ts, () => radixSort(ctx, d), (o) => o.keys.destroy());
  if (log2 === maxLog2 || log2 === 24) {
    const out = await ctx.download((await radixSort(ctx, d)).keys);
    let ok = true, xa = 0, xb = 0, sa = 0, sb = 0;
    for (let i = 0; i < n; i++) {
      if (i > 0 && out[i - 1] > out[i]) ok = false;
      xa ^= keys[i]; xb ^= out[i]; sa = (sa + keys[i]) >>> 0; sb = (sb + out[i]) >>> 0;
    }
    check(`sort u32 n=2^${log2} sorted + same multiset (xor, sum)`, ok && xa === xb && sa === sb);
  }
  results.figures[`sort_u32_2^${log2}`] = { ...t, GkeysPerS: n / 1e6 / t.gpuMs, GkeysPerSWall: n / 1e6 / t.wallMs };
  log(`sort 2^${log2}`, JSON.stringify(results.figures[`sort_u32_2^${log2}`]));
  if (log2 === 24) {
    const vals = Uint32Array.from({ length: n }, (_, i) => i);
    const dv = await ctx.upload(vals);
    const kv = await timeOp(ctx, ts, () => radixSort(ctx, d, dv), (o) => { o.keys.destroy(); o.values.destroy(); });
    results.figures[`sortKV_u32_2^${log2}`] = { ...kv, GpairsPerS: n / 1e6 / kv.gpuMs };
    dv.destroy();
  }
  d.destroy();
}

ctx.encoderHooks = null;

results.pool = ctx.poolStats;
writeResults({ 'gpu-layer.json': results }, { quick, gpu: true });
const table = Object.entries(results.figures).map(([k, v]) => `${k.padEnd(28)} ${Object.entries(v).filter(([, x]) => typeof x === 'number').map(([a, x]) => `${a}=${x.toFixed(3)}`).join(' ')}`);
console.log(table.join('\n'));
console.log(`checks: ${results.checks.filter((c) => c.ok).length}/${results.checks.length} ok`);
clocks.stop();
ctx.destroy();
process.exit(results.checks.every((c) => c.ok) ? 0 : 1);
