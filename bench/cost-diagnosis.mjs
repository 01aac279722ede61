// Why some cells of bench/cost-model.mjs measure what calibration does not predict (issue #14):
//   alloc       a new 16 MiB host array written once, in this young process (glibc's mmap threshold
//               still 128 KiB: each one mapped fresh) and after a garbage collection has freed
//               earlier ones (the threshold raised: the heap's memory reused; gc() through
//               v8.setFlagsFromString, not --expose-gc, which the worker pool's threads refuse).
//   idle        GPU sorts of device data (16 and 256 MiB) in a row, after a pause, after the
//               JavaScript thread was busy as long, and after a CPU sort of the same size (what
//               cost-model.mjs interleaves): is it the GPU's idle clock or the CPU path's work?
//   decompress  GPU decompress of 256 KiB and 16 MiB containers to the device and the host, in a
//               row and after 256 MiB GPU sorts, with the buffer pool's counters
//   small       4 and 16 KiB: calibration's readback and CPU probes (spaced as it spaces them)
//               against a caller's calls of those sizes, alone and after a GPU call (the cost
//               model's 4 KiB cells: CPU-path calls of device data predicted 0.46-0.59 ms that took
//               0.21-0.37, host CPU calls predicted 0.05-0.08 that took 0.09-0.18)
//   probes      calibration's GPU probes (their data: a 1 MiB pattern repeated) against the cost
//               model bench's calls of the same op and size (its data: bench/suite/data.mjs), one
//               after the other in rounds, so that the GPU's clock is the same for both (an H100's
//               calibration put a 16 MiB GPU decompress to the device at 4.1 ms; the bench's took
//               10.7-14.3)
//
//   npm run build && node bench/cost-diagnosis.mjs [--out DIR] [--quick (probes at 256 KiB: a check of the script)] [sections...]
//   PARLE_DIST=path/to/other/dist/node/index.js node bench/cost-diagnosis.mjs ...   (a baseline build)
import { probeRunsBytes } from './suite/data.mjs';
import { outputDir } from './out-dir.mjs';
import { settle } from './interleave.mjs';
import { lcgKeys, startClockSampler } from './gpu-timestamps.mjs';
import { readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import v8 from 'node:v8';
import vm from 'node:vm';
import { parseArgs } from 'node:util';
// PARLE_DIST: another build's dist/node/index.js (a baseline beside this one, in the same call)
const { createEngine } = await import(
  process.env.PARLE_DIST ? new URL(process.env.PARLE_DIST, `file://${process.cwd()}/`).href : '../dist/node/index.js'
);
/** Destroys what a call made on the GPU (duck-typed: a baseline build's DeviceArray is another class). */
const release = (x) => {
  if (x && typeof x.destroy === 'function' && 'buffer' in x) x.destroy();
  else if (x && typeof x === 'object' && !ArrayBuffer.isView(x)) for (const v of Object.values(x)) release(v);
};

const { values: args, positionals } = parseArgs({
  options: { out: { type: 'string' }, quick: { type: 'boolean', default: false } },
  allowPositionals: true,
});
const outDir =
  process.env.OUT && args.out === undefined ? process.env.OUT : outputDir({ out: args.out, quick: args.quick, committed: 'bench/results' });
const sections = new Set(positionals.length > 0 ? positionals : ['alloc', 'idle', 'decompress', 'small', 'probes']);
const report = {};
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const spin = (ms) => {
  const end = performance.now() + ms;
  while (performance.now() < end);
};
const fmt = (xs) => xs.map((x) => x.toFixed(1)).join(' ');
const med = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

// the SM and memory clocks (nvidia-smi, NVIDIA machines only) and the buffer pool's counters
// during each series: is a slow GPU call the clock, or buffers made anew?
const clocks = await startClockSampler(20);
let engine = null;
const poolNow = () => (engine ? { ...engine['gpuContext'].poolStats } : null);

/** `n` timed calls of `fn`, each after `before()` (untimed); prints and records them. */
async function series(name, n, fn, before) {
  const ms = [];
  const sm = [];
  const mem = [];
  const p0 = poolNow();
  for (let i = 0; i < n; i++) {
    if (before) await before();
    else await settle();
    const [d0, t0] = [Date.now(), performance.now()];
    release(await fn());
    ms.push(performance.now() - t0);
    const during = clocks.samples.filter((c) => c.t >= d0 - 10 && c.t <= Date.now() + 10);
    sm.push(during.length ? med(during.map((c) => c.sm)) : NaN);
    mem.push(during.length ? med(during.map((c) => c.mem)) : NaN);
  }
  const p1 = poolNow();
  const seen = sm.filter((x) => !Number.isNaN(x));
  const extra = [
    seen.length ? `  SM MHz ${sm.map((x) => (Number.isNaN(x) ? '-' : x)).join(' ')}, mem ${med(mem.filter((x) => !Number.isNaN(x)))}` : '',
    p0 ? `  buffers created ${p1.created - p0.created}, reused ${p1.reused - p0.reused}` : '',
  ].join('');
  console.log(`${name.padEnd(52)} median ${med(ms).toFixed(2).padStart(7)}  calls: ${fmt(ms)}${extra}`);
  report[name] = ms;
  return ms;
}

const thp = (() => {
  try {
    return readFileSync('/sys/kernel/mm/transparent_hugepage/enabled', 'utf8').trim();
  } catch {
    return 'unknown';
  }
})();
console.log(`transparent huge pages: ${thp}`);

if (sections.has('alloc')) {
  const B = 16 << 20;
  // first, before anything large was freed in this process
  await series('alloc: new 16 MiB array written, young process', 8, () => void new Uint8Array(B).fill(1));
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc');
  gc();
  await sleep(50);
  await series('alloc: the same after a full gc', 8, () => void new Uint8Array(B).fill(1));
  await series(
    'alloc: the same, gc before each',
    8,
    () => void new Uint8Array(B).fill(1),
    async () => {
      gc();
      await settle();
    },
  );
  const reused = new Uint8Array(B);
  await series('alloc: one reused 16 MiB array written', 8, () => void reused.fill(1));
}

engine = await createEngine({ gpu: 'require', calibration: 'skip' });
console.log(`adapter ${JSON.stringify(engine.adapter)}, workers ${engine.workers}`);
const keysOf = (bytes) => lcgKeys(bytes >> 2, 7);

if (sections.has('idle')) {
  for (const bytes of [16 << 20, 256 << 20]) {
    const keys = keysOf(bytes);
    const d = await engine.upload(keys);
    const sort = () => engine.sort(d, { path: 'gpu' });
    for (let i = 0; i < 3; i++) release(await sort());
    const mib = `${bytes >> 20} MiB`;
    const cpuMs = await series(`idle: cpu sort ${mib} (host keys)`, 3, () => engine.sort(keys, { path: 'cpu' }));
    const pause = Math.round(med(cpuMs));
    await series(`idle: gpu sort ${mib} d->d, in a row`, 8, sort);
    await series(`idle: gpu sort ${mib} d->d, after ${pause} ms asleep`, 6, sort, () => sleep(pause));
    await series(`idle: gpu sort ${mib} d->d, after ${pause} ms of JS spin`, 6, sort, async () => spin(pause));
    await series(`idle: gpu sort ${mib} d->d, after a cpu sort`, 6, sort, async () => release(await engine.sort(keys, { path: 'cpu' })));
    await series(`idle: gpu sort ${mib} d->d, after 2 ms asleep`, 6, sort, () => sleep(2));
    await series(`idle: gpu sort ${mib} d->d, after 20 ms asleep`, 6, sort, () => sleep(20));
    d.destroy();
  }
}

if (sections.has('decompress')) {
  const pool = () => engine['gpuContext'].poolStats;
  /** Prints the buffer pool's counters since `p0` (a copy of pool() taken before). */
  const poolSince = (p0) => {
    const p1 = pool();
    console.log(
      `  pool: created ${p1.created - p0.created}, reused ${p1.reused - p0.reused}, kept ${(p1.keptBytes / 2 ** 20).toFixed(0)} MiB of ${(p1.limitBytes / 2 ** 20).toFixed(0)}`,
    );
  };
  for (const bytes of [256 << 10, 16 << 20]) {
    const packed = await engine.compress(probeRunsBytes(bytes), { path: 'cpu' });
    const size = `${bytes >> 10} KiB`;
    for (const to of ['device', 'host']) {
      const call = () => engine.decompress(packed, { path: 'gpu', to });
      release(await call());
      const p0 = { ...pool() };
      await series(`decompress: gpu ${size} -> ${to}, in a row`, 8, call);
      poolSince(p0);
      await series(`decompress: cpu ${size} -> ${to}, in a row`, 8, () => engine.decompress(packed, { path: 'cpu', to }));
      await series(`decompress: gpu ${size} -> ${to}, after a cpu one`, 8, call, async () => {
        release(await engine.decompress(packed, { path: 'cpu', to }));
        await settle();
      });
    }
  }
  // after 256 MiB GPU sorts (the pool holding their buffers), as cost-model.mjs's last cells are
  const big = await engine.upload(keysOf(256 << 20));
  for (let i = 0; i < 2; i++) release(await engine.sort(big, { path: 'gpu' }));
  big.destroy();
  const packed = await engine.compress(probeRunsBytes(16 << 20), { path: 'cpu' });
  const p0 = { ...pool() };
  await series('decompress: gpu 16384 KiB -> device, after 256 MiB sorts', 8, () =>
    engine.decompress(packed, { path: 'gpu', to: 'device' }),
  );
  poolSince(p0);
}

if (sections.has('small')) {
  const probe = engine['probe'](engine['gpuContext']); // calibration's probes (private)
  const spaced = () => sleep(2); // calibration's SMALL_CALL_PAUSE_MS
  for (const bytes of [4 << 10, 16 << 10]) {
    const size = `${bytes >> 10} KiB`;
    const keys = keysOf(bytes);
    const d = await engine.upload(keys);
    const gpuCall = () => engine.scan(d, { path: 'gpu', to: 'device' });
    for (let i = 0; i < 20; i++) {
      release(await engine.scan(keys, { path: 'cpu' }));
      release(await engine.scan(d, { path: 'cpu', to: 'host' }));
      release(await gpuCall());
    }
    const afterGpu = async () => {
      release(await gpuCall());
      await settle();
    };
    // (timed whole: the probe's upload and its wait too; calibration's trace has the download alone)
    await series(`small: probe readback ${size}, spaced`, 12, () => probe.readback(bytes), spaced);
    await series(`small: download ${size} (old array), spaced`, 12, () => engine.download(d), spaced);
    await series(`small: download ${size} (old array), after a gpu call`, 12, () => engine.download(d), afterGpu);
    // calibration measures these points after its warm-up's CPU runs: about 600 ms without GPU work
    await series(
      `small: download ${size} (old array), after 600 ms asleep`,
      6,
      () => engine.download(d),
      () => sleep(600),
    );
    await series(
      `small: download ${size} (old array), after 600 ms of cpu calls`,
      6,
      () => engine.download(d),
      async () => {
        const end = performance.now() + 600;
        while (performance.now() < end) release(await engine.scan(keys, { path: 'cpu' }));
        await spaced();
      },
    );
    // calibration's probe without its pause: an upload, its copy waited for (untimed), then the download
    let uploaded = null;
    await series(
      `small: download ${size} right after an upload`,
      12,
      () => engine.download(uploaded),
      async () => {
        uploaded?.destroy();
        await spaced();
        uploaded = await engine.upload(keys);
        await engine['gpuContext'].device.queue.onSubmittedWorkDone();
      },
    );
    uploaded.destroy();
    await series(`small: probe cpu scan ${size}, spaced`, 12, () => probe.cpu('scan', bytes), spaced);
    await series(`small: cpu scan ${size} host, spaced`, 12, () => engine.scan(keys, { path: 'cpu' }), spaced);
    await series(`small: cpu scan ${size} host, after a gpu call`, 12, () => engine.scan(keys, { path: 'cpu' }), afterGpu);
    await series(`small: cpu scan ${size} device->host, spaced`, 12, () => engine.scan(d, { path: 'cpu', to: 'host' }), spaced);
    await series(`small: cpu scan ${size} device->host, after a gpu call`, 12, () => engine.scan(d, { path: 'cpu', to: 'host' }), afterGpu);
    await series(`small: gpu scan ${size} device->device, spaced`, 12, gpuCall, spaced);
    await series(`small: gpu scan ${size} device->host, spaced`, 12, () => engine.scan(d, { path: 'gpu', to: 'host' }), spaced);
    d.destroy();
  }
}

if (sections.has('probes')) {
  const probe = engine['probe'](engine['gpuContext']); // calibration's probes (private)
  for (const bytes of args.quick ? [256 << 10] : [16 << 20, 64 << 20]) {
    const size = `${bytes >> 10} KiB`;
    const runs = probeRunsBytes(bytes);
    const keys = keysOf(bytes);
    const dRuns = await engine.upload(runs);
    const dKeys = await engine.upload(keys);
    const packed = await engine.compress(runs, { path: 'cpu' });
    const encoded = await engine.rleEncode(dRuns, { path: 'gpu' });
    // the bench's call of each op (bench/cost-model.mjs: device data to the device; compress's result on the host)
    const bench = {
      rleEncode: () => engine.rleEncode(dRuns, { path: 'gpu', to: 'device' }),
      rleDecode: () => engine.rleDecode(encoded, { path: 'gpu', to: 'device' }),
      scan: () => engine.scan(dKeys, { path: 'gpu', to: 'device' }),
      sort: () => engine.sort(dKeys, { path: 'gpu', to: 'device' }),
      compress: () => engine.compress(dRuns, { path: 'gpu' }),
      decompress: () => engine.decompress(packed, { path: 'gpu', to: 'device' }),
    };
    for (const [op, call] of Object.entries(bench)) {
      for (let i = 0; i < 2; i++) {
        await probe.gpu(op, bytes);
        release(await call());
      }
      const probeMs = [];
      const benchMs = [];
      for (let r = 0; r < 8; r++) {
        probeMs.push(await probe.gpu(op, bytes));
        await settle();
        const t0 = performance.now();
        release(await call());
        benchMs.push(performance.now() - t0);
        await settle();
      }
      console.log(
        `probes: gpu ${op} ${size}`.padEnd(40),
        `probe ${med(probeMs).toFixed(2)} (${fmt(probeMs)})  bench's call ${med(benchMs).toFixed(2)} (${fmt(benchMs)})`,
      );
      report[`probes: gpu ${op} ${size}`] = { probe: probeMs, bench: benchMs };
    }
    release(encoded);
    dRuns.destroy();
    dKeys.destroy();
  }
}

await mkdir(outDir, { recursive: true });
await writeFile(join(outDir, 'cost-diagnosis.json'), JSON.stringify({ adapter: engine.adapter, thp, report }, null, 1));
clocks.stop();
process.exit(0);
