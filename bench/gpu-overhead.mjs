// Where an op's wall clock goes beyond its GPU time (sizes in bytes: RLE of 2^log2 u8, scan of
// 2^log2 / 4 u32) (issue #14: RLE at 2^24-2^28 took 1.5-2 ms
// more than its kernels on the H200). Times each phase of rleEncode / rleDecode / scan on a
// context kept busy (clocks up): every submission's encode (host), its wait for the GPU, each
// mapAsync, and buffer creation, by wrapping the context's and the device's methods.
// Prints one line a phase: median ms over the runs. Needs bench/.build/gpu-layer.mjs.
//   node bench/gpu-overhead.mjs [--log2 24]
import { loadGpuLayer, median, warmUntilSteady } from './gpu-timestamps.mjs';

const layer = await loadGpuLayer();
const log2 = process.argv.includes('--log2') ? Number(process.argv[process.argv.indexOf('--log2') + 1]) : 24;
const n = 2 ** log2;
const ctx = await layer.createGpuContext();
const device = ctx.device;
const phases = new Map();
const note = (name, ms) => {
  if (!phases.has(name)) phases.set(name, []);
  phases.get(name).push(ms);
};
let recording = false;
const wrapAsync = (obj, key, name) => {
  const orig = obj[key];
  obj[key] = function (...args) {
    const t0 = performance.now();
    const p = orig.apply(this, args);
    return recording ? p.then((v) => (note(name(args), performance.now() - t0), v)) : p;
  };
};
const wrapSync = (obj, key, name) => {
  const orig = obj[key];
  obj[key] = function (...args) {
    const t0 = performance.now();
    const v = orig.apply(this, args);
    if (recording) note(name(args), performance.now() - t0);
    return v;
  };
};
wrapSync(device, 'createBuffer', (a) => `createBuffer ${a[0].size >= 1 << 20 ? '>=1MiB' : '<1MiB'} ${a[0].usage & 1 ? 'MAP_READ' : ''}`);
wrapSync(device, 'createBindGroup', () => 'createBindGroup');
wrapSync(device.queue, 'submit', () => 'queue.submit');
wrapSync(device.queue, 'writeBuffer', () => 'queue.writeBuffer');
wrapAsync(device.queue, 'onSubmittedWorkDone', () => 'onSubmittedWorkDone');
wrapAsync(GPUBuffer.prototype, 'mapAsync', () => 'mapAsync');
wrapAsync(Object.getPrototypeOf(ctx), 'submit', (a) => `ctx.submit ${a[0]}`);

const bytes = new Uint8Array(n);
for (let i = 0, v = 0; i < n; i += 16) bytes.fill((v = (v + 1 + (i % 7)) & 0xff), i, i + 16);
const input = await ctx.upload(bytes);
const keys = await ctx.upload(new Uint32Array(n / 4).map((_, i) => Math.imul(i, 2654435761)));
const runs = await ctx.rleEncode(input);
const ops = {
  rleEncode: async () => {
    const r = await ctx.rleEncode(input);
    r.values.destroy();
    r.lengths.destroy();
  },
  rleDecode: async () => (await ctx.rleDecode(runs.values, runs.lengths)).destroy(),
  'scan (u32, bytes)': async () => (await ctx.scan(keys, { inclusive: true })).destroy(),
};
for (const [name, op] of Object.entries(ops)) {
  await warmUntilSteady(async () => {
    const t0 = performance.now();
    await op();
    return performance.now() - t0;
  });
  phases.clear();
  const wall = [];
  recording = true;
  for (let r = 0; r < 30; r++) {
    const t0 = performance.now();
    await op();
    wall.push(performance.now() - t0);
  }
  recording = false;
  console.log(`${name} 2^${log2}: wall ${median(wall).toFixed(3)} ms (min ${Math.min(...wall).toFixed(3)})`);
  for (const [phase, ms] of phases) {
    console.log(`  ${phase.padEnd(40)} ${(ms.length / 30).toFixed(1)} a call, median ${median(ms).toFixed(3)} ms, total a call ${(ms.reduce((a, b) => a + b, 0) / 30).toFixed(3)} ms`);
  }
}
ctx.destroy();

// ---- completion: the same work awaited with onSubmittedWorkDone, or with mapAsync of a 4-byte
// buffer copied at its end (both resolve once the work is done; which is seen sooner?)
{
  const ctx2 = await layer.createGpuContext();
  const dev = ctx2.device;
  const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
  const a = dev.createBuffer({ size: 256 << 20, usage });
  const b = dev.createBuffer({ size: 256 << 20, usage });
  const fence = dev.createBuffer({ size: 4, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  for (const bytes of [4 << 10, 4 << 20, 256 << 20]) {
    for (const how of ['onSubmittedWorkDone', 'mapAsync', 'onSubmittedWorkDone', 'mapAsync']) {
      const ts = [];
      for (let r = 0; r < 40; r++) {
        const enc = dev.createCommandEncoder();
        enc.copyBufferToBuffer(a, 0, b, 0, bytes);
        if (how === 'mapAsync') enc.copyBufferToBuffer(b, 0, fence, 0, 4);
        const t0 = performance.now();
        dev.queue.submit([enc.finish()]);
        if (how === 'mapAsync') {
          await fence.mapAsync(GPUMapMode.READ);
          fence.unmap();
        } else await dev.queue.onSubmittedWorkDone();
        ts.push(performance.now() - t0);
      }
      console.log(`completion of a ${bytes >= 1 << 20 ? `${bytes >> 20} MiB` : `${bytes >> 10} KiB`} copy seen by ${how.padEnd(20)} median ${median(ts).toFixed(3)} ms, min ${Math.min(...ts).toFixed(3)}`);
    }
  }
  a.destroy();
  b.destroy();
  fence.destroy();
  ctx2.destroy();
}
