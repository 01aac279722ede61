#!/usr/bin/env node
/**
 * The floor under every GPU call of parle in Node: what a submission and a readback cost through
 * Dawn (the `webgpu` package) with no work in them, medians of --reps after a warm-up, µs:
 *   - submit an empty command buffer, await queue.onSubmittedWorkDone();
 *   - submit a 16-byte copy into a MAP_READ buffer, await its mapAsync (a status readback);
 *   - the two in sequence, as GpuContext.submit and a status read do (ts/gpu/context.ts);
 *   - a dispatch of one workgroup, then a 16-byte readback;
 *   - queue.writeBuffer of 16 bytes, then a readback of them (an upload and a readback).
 * A call of parle's GPU path makes a few of these one after another (decompress from a host
 * container: an upload, a submission and its readbacks; from a device container: two), so this
 * is what "a fixed cost per call well under 0.5 ms" meets before any kernel runs.
 *   node bench/gpu-roundtrip.mjs [--reps 200] [--out DIR]
 * Writes gpu-roundtrip-<gpu>.json to --out (default bench/results/).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { create, globals } from 'webgpu';
import { outArg, outputDir } from './out-dir.mjs';
import { gpuCard } from './gpu-timestamps.mjs';

const { values: args } = parseArgs({ options: { reps: { type: 'string' }, out: { type: 'string' }, quick: { type: 'boolean' } } });
const quick = args.quick === true;
const REPS = Number(args.reps ?? (quick ? 20 : 200));
Object.assign(globalThis, globals);
// kept referenced for the whole run (Dawn's instance must outlive its devices)
const gpu = create([]);
globalThis.parleBenchGpu = gpu;
const adapter = await gpu.requestAdapter();
if (adapter === null) throw new Error('no WebGPU adapter');
const device = await adapter.requestDevice();
const { queue } = device;
const storage = device.createBuffer({ size: 256, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST });
const readback = device.createBuffer({ size: 256, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
const module = device.createShaderModule({
  code: '@group(0) @binding(0) var<storage, read_write> b: array<u32>; @compute @workgroup_size(64) fn main(@builtin(local_invocation_index) i: u32) { b[i] += 1u; }',
});
const pipeline = device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' } });
const bindGroup = device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries: [{ binding: 0, resource: { buffer: storage } }] });

const read16 = async () => {
  await readback.mapAsync(GPUMapMode.READ, 0, 16);
  const words = new Uint32Array(readback.getMappedRange(0, 16).slice(0));
  readback.unmap();
  return words;
};
const cases = {
  'submit + onSubmittedWorkDone': async () => {
    queue.submit([device.createCommandEncoder().finish()]);
    await queue.onSubmittedWorkDone();
  },
  'copy + mapAsync': async () => {
    const e = device.createCommandEncoder();
    e.copyBufferToBuffer(storage, 0, readback, 0, 16);
    queue.submit([e.finish()]);
    await read16();
  },
  'copy + onSubmittedWorkDone, then mapAsync': async () => {
    const e = device.createCommandEncoder();
    e.copyBufferToBuffer(storage, 0, readback, 0, 16);
    queue.submit([e.finish()]);
    await queue.onSubmittedWorkDone();
    await read16();
  },
  'dispatch + copy + mapAsync': async () => {
    const e = device.createCommandEncoder();
    const pass = e.beginComputePass();
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, bindGroup);
    pass.dispatchWorkgroups(1);
    pass.end();
    e.copyBufferToBuffer(storage, 0, readback, 0, 16);
    queue.submit([e.finish()]);
    await read16();
  },
  'writeBuffer + copy + mapAsync': async () => {
    queue.writeBuffer(storage, 0, new Uint32Array(4));
    const e = device.createCommandEncoder();
    e.copyBufferToBuffer(storage, 0, readback, 0, 16);
    queue.submit([e.finish()]);
    await read16();
  },
};
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const rows = [];
for (const [name, fn] of Object.entries(cases)) {
  for (let i = 0; i < Math.min(20, REPS); i++) await fn();
  const us = [];
  for (let i = 0; i < REPS; i++) {
    const t = performance.now();
    await fn();
    us.push((performance.now() - t) * 1000);
  }
  const sorted = [...us].sort((a, b) => a - b);
  const row = { case: name, medianUs: median(us), p10Us: sorted[Math.floor(0.1 * us.length)], p90Us: sorted[Math.floor(0.9 * us.length)] };
  rows.push(row);
  console.log(`${name.padEnd(44)} median ${row.medianUs.toFixed(0).padStart(5)} us  (p10 ${row.p10Us.toFixed(0)}, p90 ${row.p90Us.toFixed(0)})`);
}
device.destroy();
const { card, slug } = gpuCard(adapter.info?.description || 'gpu');
const dir = outputDir({ out: outArg() ?? args.out, quick, committed: 'bench/results' });
writeFileSync(join(dir, `gpu-roundtrip-${slug}.json`), JSON.stringify({ date: new Date().toISOString(), gpu: card, node: process.version, reps: REPS, rows }, null, 2) + '\n');
