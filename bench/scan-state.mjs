// Where a 2^28 scan's wall clock goes beyond its GPU time, by the state the process is in
// (issue #14: the same kernel's wall clock was 1.05 ms in some processes and phases, 1.13-1.26 in
// others, at the same 0.96 ms of GPU time). Phases, each 25 back-to-back scans timed by wall
// clock and by timestamp queries (gpu-timestamps.mjs): a fresh process; after 2 GiB of host
// arrays were filled and dropped (as bench/gpu.mjs's checks do); after a full collection (with
// --expose-gc); after 3 s of rest. Then the bandwidth ceiling that the scan is held to: a copy
// kernel with the scan's tile shape (1024 invocations, or the adapter's most, x 4 vec4, each subgroup's loads
// consecutive) and copyBufferToBuffer, both 1 GiB in, 1 GiB out, by timestamps.
//   node --expose-gc bench/scan-state.mjs [--log2 N]
import { contextWithKeys, gcWatch, median, timestampHooks, warmUntilSteady } from './gpu-timestamps.mjs';

const { ctx, log2, n, d } = await contextWithKeys();
const gc = await gcWatch();
const op = async () => (await ctx.scan(d, { inclusive: true })).destroy();
await warmUntilSteady(async () => { const t0 = performance.now(); await op(); return performance.now() - t0; }, { sustain: op });
const ts = ctx.hasTimestamps ? timestampHooks(ctx) : null;
ctx.encoderHooks = ts?.hooks ?? null;

async function phase(label) {
  const wall = [];
  const gpu = [];
  const t0 = performance.now();
  for (let r = 0; r < 25; r++) {
    ts?.reset();
    const c0 = performance.now();
    await op();
    wall.push(performance.now() - c0);
    gpu.push(ts ? (await ts.read()).ms : NaN);
  }
  const t1 = performance.now();
  await gc.flush();
  const w = median(wall);
  const g = median(gpu);
  console.log(
    `${label.padEnd(34)} wall ${w.toFixed(3)} ms (min ${Math.min(...wall).toFixed(3)}), GPU ${g.toFixed(3)}, over GPU ${(w - g).toFixed(3)}; ` +
      `${(n / 1e6 / w).toFixed(1)} G/s; ${gc.countDuring(t0, t1)} collections inside`,
  );
}

await phase('fresh');
for (let k = 0; k < 2; k++) {
  const a = new Uint32Array(2 ** 28);
  for (let i = 0; i < a.length; i++) a[i] = i;
}
await phase('after 2 GiB of host arrays');
if (gc.collect()) await phase('after gc()');
await new Promise((r) => setTimeout(r, 3000));
await phase('after 3 s of rest');
await phase('again');

// the ceiling: a copy kernel of the scan's shape, and copyBufferToBuffer
if (ts) {
  const device = ctx.device;
  const bytes = n * 4;
  const src = d.buffer;
  const wg = Math.min(1024, ctx.limits.maxComputeInvocationsPerWorkgroup, ctx.limits.maxComputeWorkgroupSizeX);
  const dst = device.createBuffer({ size: bytes, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST });
  const module = device.createShaderModule({
    code: `enable subgroups;
@group(0) @binding(0) var<storage, read> src: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec4<u32>>;
@compute @workgroup_size(${wg})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) tid: u32, @builtin(subgroup_size) sg: u32,
        @builtin(subgroup_invocation_id) lane: u32) {
  let tile = wid.y * nwg.x + wid.x;
  let base = tile * ${wg * 4}u + (tid - lane) * 4u + lane;
  var v: array<vec4<u32>, 4>;
  for (var k = 0u; k < 4u; k += 1u) { v[k] = src[base + k * sg]; }
  for (var k = 0u; k < 4u; k += 1u) { dst[base + k * sg] = v[k] + vec4<u32>(1u); }
}`,
  });
  const pipeline = device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' } });
  const bind = device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries: [{ binding: 0, resource: { buffer: src, size: bytes } }, { binding: 1, resource: { buffer: dst } }] });
  const tiles = bytes / (wg * 64);
  const [x, y] = ctx.grid(tiles);
  for (const [label, record] of [
    ['copy kernel (scan tile shape)', (enc) => { const p = enc.beginComputePass({ timestampWrites: ts.hooks.pass('copy') }); p.setPipeline(pipeline); p.setBindGroup(0, bind); p.dispatchWorkgroups(x, y); p.end(); }],
    ['copyBufferToBuffer', (enc) => enc.copyBufferToBuffer(src, 0, dst, 0, bytes)],
  ]) {
    const gpu = [];
    const wall = [];
    for (let r = 0; r < 30; r++) {
      ts.reset();
      const c0 = performance.now();
      const enc = device.createCommandEncoder();
      ts.hooks.begin(enc);
      record(enc);
      ts.hooks.end(enc);
      device.queue.submit([enc.finish()]);
      await device.queue.onSubmittedWorkDone();
      wall.push(performance.now() - c0);
      gpu.push((await ts.read()).ms);
    }
    const g = median(gpu.slice(10));
    console.log(`${label.padEnd(34)} GPU ${g.toFixed(3)} ms: ${((2 * bytes) / 1e6 / g).toFixed(0)} GB/s read + write; wall ${median(wall.slice(10)).toFixed(3)} ms`);
  }
  dst.destroy();
}
gc.stop();
ctx.destroy();
