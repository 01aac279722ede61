#!/usr/bin/env node
/**
 * Where the time of the GPU codec goes (issue #32's first build item): compress from the device
 * (`path: 'gpu'`, the container read back to the host, or left on the device: `to: 'device'`) and decompress of the CPU path's container
 * to the device (`path: 'gpu'`, `to: 'device'`; `decoder: 'gpu'`), from host memory and from a
 * copy of it already on the device ("resident"), on the real arrays of bench/corpus/,
 * each repeated to each of --mib, through the public API. For every call:
 *   - the wall clock;
 *   - the GPU time of each submission (a timestamped empty pass before and after each command
 *     buffer of parle's ops) and of each compute pass by its label (parle:huffman-decode, ...);
 *   - what crossed the host <-> GPU boundary: submissions, readbacks (mapAsync), bytes written by
 *     queue.writeBuffer, buffers and bind groups created;
 *   - with --cpu-profile, the main thread's self time per function (V8's sampling profiler through
 *     node:inspector; "(idle)" is waiting for the GPU or the workers).
 * "host" = wall - GPU: time the GPU sat idle inside the call (JavaScript, the CPU path's workers,
 * the waits between submissions). Medians over --reps calls after a warm-up of --warm-ms (an
 * H200's SM clock rises only under sustained load: bench/lib/gpu.mjs warmUntilSteady).
 *
 *   node bench/gpu-codec-profile.mjs [--files a,b] [--mib 4,64,256] [--reps 5] [--warm-ms 1500]
 *                                    [--workers 16] [--cpu-profile] [--chunk-bytes N]
 *                                    [--out DIR] [--only compress|decompress] [--shape] [--timeline]
 *                                    [--error-bound REL]
 *
 * Writes gpu-codec-profile.json and .md into bench/results/<machine>/ (the machine is the GPU's).
 * Needs a GPU with 'timestamp-query' (else GPU times are null and only the counts and wall clock
 * remain). --shape: the array with its shape, both compresses' (the CPU path's container the
 * decodes take, and the GPU path's): predicted chunks.
 * --timeline: one more call of each direction logged event by event (ms from the call's start:
 * each submission with its GPU time, each readback's map and when it resolved, the waits, the
 * writeBuffer bytes, the compute passes encoded in between), the "timeline of one call" of #45.
 * --error-bound REL: the lossy mode (f32 and f64 files), the bound REL times the range of the
 * array's finite values, in every compress (the CPU path's container the decodes take too).
 * Two builds against each other: bench/gpu-codec-ab.mjs.
 */
import os from 'node:os';
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Session } from 'node:inspector/promises';
import { compressBound, createEngine } from '../dist/node/index.js';
import { dataFiles, finiteRange, repeatedArray } from './lib/files.mjs';
import { timestampHooks } from './lib/gpu.mjs';
import { machineInfo, median, ROOT as root, writeResults } from './lib/results.mjs';

const { values: args } = parseArgs({
  options: {
    files: { type: 'string' },
    mib: { type: 'string' },
    reps: { type: 'string' },
    'warm-ms': { type: 'string' },
    workers: { type: 'string' },
    'cpu-profile': { type: 'boolean' },
    out: { type: 'string' },
    quick: { type: 'boolean' },
    'chunk-bytes': { type: 'string' },
    only: { type: 'string' },
    shape: { type: 'boolean' },
    timeline: { type: 'boolean' },
    'error-bound': { type: 'string' },
  },
});
/** --chunk-bytes: the GPU compress's chunk size (default: the GPU path's own). */
const gpuChunk = args['chunk-bytes'] === undefined ? {} : { chunkBytes: Number(args['chunk-bytes']) };
const quick = args.quick === true;
/** --only compress|decompress: one direction (compress: both of its rows). */
const ONLY = args.only;
if (ONLY !== undefined && ONLY !== 'compress' && ONLY !== 'decompress') throw new Error('--only takes compress or decompress');
const MIBS = (args.mib ?? (quick ? '4' : '4,64,256')).split(',').map(Number);
const REPS = Number(args.reps ?? (quick ? 2 : 5));
const WARM_MS = Number(args['warm-ms'] ?? (quick ? 0 : 1500));
const workers = Number(args.workers ?? Math.min(16, os.cpus().length));

const engine = await createEngine({ workers, gpu: 'require', calibration: 'skip' });
/** The engine's GPU context (internal: a benchmark's view). */
const ctx = engine.gpuContext;
const device = ctx.device;

// ---- --timeline: the events of one call -------------------------------------------------------
/** The events of the call being logged ({ t: ms from its start, what }), or null. */
let timeline = null;
let timelineStart = 0;
/** Labels of the compute passes encoded since the last event logged. */
let passesSince = [];
/** Each finished command buffer's encoder label. */
const labels = new WeakMap();
const at = (t) => +(t - timelineStart).toFixed(3);
function logEvent(key, t, self, a, r) {
  const push = (what) => {
    timeline.push({ t: at(t), what: passesSince.length > 0 ? `${what} (after encoding ${passesSince.join(', ')})` : what });
    passesSince = [];
  };
  switch (key) {
    case 'encoder.beginComputePass':
      passesSince.push((a[0]?.label ?? 'timestamps').replace(/^parle:/, ''));
      return;
    case 'encoder.finish':
      labels.set(r, self.label);
      return;
    case 'queue.submit':
      return push(`submit ${a[0].map((b) => labels.get(b) ?? '?').join(', ')}`);
    case 'queue.writeBuffer':
      return push(`writeBuffer ${a[4] !== undefined ? a[4] * (a[2].BYTES_PER_ELEMENT ?? 1) : a[2].byteLength} B`);
    case 'buffer.mapAsync':
    case 'queue.onSubmittedWorkDone': {
      const what = key === 'buffer.mapAsync' ? `mapAsync ${a[2] ?? self.size} B` : 'onSubmittedWorkDone';
      push(what);
      const log = timeline;
      r.then(
        () => log.push({ t: at(performance.now()), what: `  ${what} resolved` }),
        () => {},
      );
      return;
    }
  }
}

// ---- time spent in WebGPU's calls on this thread (Dawn's bindings: the sync part of each) ----
const native = {};
const timeMethods = (proto, cls) => {
  for (const name of Object.getOwnPropertyNames(proto)) {
    const d = Object.getOwnPropertyDescriptor(proto, name);
    if (d === undefined || typeof d.value !== 'function' || name === 'constructor') continue;
    const f = d.value;
    const key = `${cls}.${name}`;
    proto[name] = function (...a) {
      const t = performance.now();
      try {
        const r = f.apply(this, a);
        if (timeline !== null) logEvent(key, t, this, a, r);
        return r;
      } finally {
        native[key] = (native[key] ?? 0) + performance.now() - t;
      }
    };
  }
};
{
  const enc = device.createCommandEncoder();
  const pass = enc.beginComputePass();
  pass.end();
  enc.finish();
  const buf = device.createBuffer({ size: 16, usage: GPUBufferUsage.STORAGE });
  for (const [obj, cls] of [
    [device, 'device'],
    [device.queue, 'queue'],
    [enc, 'encoder'],
    [pass, 'pass'],
    [buf, 'buffer'],
  ])
    timeMethods(Object.getPrototypeOf(obj), cls);
  buf.destroy();
}

// ---- counters on the device's host-side calls ----------------------------------------------
const counts = { submits: 0, readbacks: 0, writeBytes: 0, writes: 0, buffers: 0, bufferBytes: 0, bindGroups: 0 };
const zero = () => Object.fromEntries(Object.keys(counts).map((k) => [k, 0]));
const queue = device.queue;
const wrap = (obj, name, before) => {
  const f = obj[name].bind(obj);
  obj[name] = (...a) => {
    before(...a);
    return f(...a);
  };
};
wrap(queue, 'submit', () => counts.submits++);
wrap(queue, 'writeBuffer', (_b, _o, data, _do, size) => {
  counts.writes++;
  counts.writeBytes += size !== undefined ? size * (data.BYTES_PER_ELEMENT ?? 1) : data.byteLength;
});
wrap(device, 'createBindGroup', () => counts.bindGroups++);
const createBuffer = device.createBuffer.bind(device);
device.createBuffer = (desc) => {
  counts.buffers++;
  counts.bufferBytes += desc.size;
  const b = createBuffer(desc);
  const map = b.mapAsync.bind(b);
  b.mapAsync = (...a) => {
    counts.readbacks++;
    return map(...a);
  };
  return b;
};

// ---- timestamps: an empty pass before and after each command buffer, and around each pass ---
const stamps = ctx.hasTimestamps ? timestampHooks(ctx) : null;
if (stamps) ctx.encoderHooks = stamps.hooks;

// ---- the main thread's CPU profile ------------------------------------------------------------
const session = args['cpu-profile'] ? new Session() : null;
if (session) {
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 200 });
}
/** Self time (ms) per function name of a V8 profile, the top `top`. */
function selfTimes(profile, top = 12) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const ms = new Map();
  for (let i = 0; i < profile.samples.length; i++) {
    const n = byId.get(profile.samples[i]);
    const f = n.callFrame;
    const file = f.url ? f.url.split('/').pop() : '';
    const name = `${f.functionName || '(anonymous)'}${file ? ` ${file}:${f.lineNumber + 1}` : ''}`;
    ms.set(name, (ms.get(name) ?? 0) + profile.timeDeltas[i] / 1000);
  }
  return Object.fromEntries(
    [...ms]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([k, v]) => [k, +v.toFixed(2)]),
  );
}

/** Times `call` (REPS times after the warm-up), returning medians and per-call means of the profile. */
async function profile(call) {
  const w0 = performance.now();
  do await call();
  while (performance.now() - w0 < WARM_MS);
  await call();
  if (stamps) await stamps.read();
  const walls = [];
  const gpus = [];
  const passes = {};
  const submissions = {};
  const sums = zero();
  let untimed = 0;
  const native0 = { ...native };
  for (let r = 0; r < REPS; r++) {
    const before = { ...counts };
    const t0 = performance.now();
    await call();
    walls.push(performance.now() - t0);
    for (const k of Object.keys(counts)) sums[k] += counts[k] - before[k];
    if (stamps) {
      const s = await stamps.read();
      gpus.push(s.ms);
      untimed += s.untimed;
      for (const [k, v] of Object.entries(s.passes)) passes[k] = (passes[k] ?? 0) + v / REPS;
      for (const [k, v] of Object.entries(s.submissions)) submissions[k] = (submissions[k] ?? 0) + v / REPS;
    }
  }
  const nativeMs = Object.entries(native)
    .map(([k, v]) => [k, (v - (native0[k] ?? 0)) / REPS])
    .filter(([, v]) => v > 0.005)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 12)
    .map(([k, v]) => [k, +v.toFixed(3)]);
  // the main thread's profile from calls of their own, so the sampler's interrupts are not in
  // the timed calls (their walls still carry the timestamps and the counting wrappers)
  let cpu;
  if (session) {
    await session.post('Profiler.start');
    for (let r = 0; r < REPS; r++) await call();
    cpu = selfTimes((await session.post('Profiler.stop')).profile);
    if (stamps) await stamps.read();
  }
  let events;
  if (args.timeline === true) {
    events = timeline = [];
    passesSince = [];
    timelineStart = performance.now();
    await call();
    events.push({ t: at(performance.now()), what: 'returned' });
    timeline = null;
    events.sort((a, b) => a.t - b.t);
    if (stamps) {
      const s = await stamps.read();
      events.push({ t: null, what: `GPU ms by submission: ${JSON.stringify(s.submissions)}` });
    }
  }
  const wallMs = median(walls);
  const gpuMs = stamps ? median(gpus) : null;
  return {
    wallMs,
    gpuMs,
    hostMs: gpuMs === null ? null : wallMs - gpuMs,
    perCall: Object.fromEntries(Object.entries(sums).map(([k, v]) => [k, v / REPS])),
    untimedSubmits: untimed / REPS,
    webgpuMs: Object.fromEntries(nativeMs),
    submissions: Object.fromEntries(Object.entries(submissions).map(([k, v]) => [k, +v.toFixed(3)])),
    passes: Object.fromEntries(
      Object.entries(passes)
        .sort((a, b) => b[1] - a[1])
        .map(([k, v]) => [k, +v.toFixed(3)]),
    ),
    cpu,
    timeline: events,
  };
}

/** Chunks per pipeline of `container` (through the CLI's inspect). */
function pipelinesOf(container) {
  const file = join(os.tmpdir(), `parle-profile-${process.pid}.parle`);
  writeFileSync(file, container);
  const report = JSON.parse(
    execFileSync(process.execPath, [join(root, 'bin/parle.mjs'), 'inspect', file], { encoding: 'utf8', maxBuffer: 1 << 26 }),
  );
  rmSync(file);
  const out = {};
  for (const c of report.chunks) out[c.pipeline ?? c.encoding] = (out[c.pipeline ?? c.encoding] ?? 0) + 1;
  return out;
}

const rows = [];
for (const file of dataFiles({ samples: [], files: args.files })) {
  const raw = readFileSync(file.path);
  for (const mib of MIBS) {
    // the file repeated (or cut) to `mib` MiB; --shape: whole rows of its shape, which the CPU
    // path's containers record (predicted chunks, stage 7)
    const { host, shaped: shape } = repeatedArray(raw, mib, file, args.shape === true);
    // --error-bound: the bound, a fraction of the range of the finite values
    const shaped =
      args['error-bound'] === undefined ? shape : { ...shape, errorBound: { abs: Number(args['error-bound']) * finiteRange(host) } };
    const B = host.byteLength;
    const input = await engine.upload(host);
    // the container the GPU decodes: the CPU path's, its Huffman streams laid out for the GPU (mode 3)
    const container = await engine.compress(host, { path: 'cpu', decoder: 'gpu', ...shaped });
    const pipelines = pipelinesOf(container);
    const gpuContainer = await engine.compress(input, { path: 'gpu', ...shaped, ...gpuChunk });
    const doCompress = ONLY !== 'decompress';
    const compress = doCompress ? await profile(() => engine.compress(input, { path: 'gpu', ...shaped, ...gpuChunk })) : null;
    // the same into an array the caller keeps, bounded for chunks down to 1 KiB (a fresh result
    // costs its page faults: 1.3 GB/s for a new array on the H200 host)
    const out = new Uint8Array(compressBound(host.length, file.type, 1024));
    out.fill(1);
    const compressOut = doCompress ? await profile(() => engine.compress(input, { path: 'gpu', out, ...shaped, ...gpuChunk })) : null;
    // the container left on the device (`to: 'device'`): only its checksums read back
    const compressResident = doCompress
      ? await profile(async () => (await engine.compress(input, { path: 'gpu', to: 'device', ...shaped, ...gpuChunk })).destroy())
      : null;
    const decompress =
      ONLY !== 'compress' ? await profile(async () => (await engine.decompress(container, { path: 'gpu', to: 'device' })).destroy()) : null;
    // the container already on the device (a u8 DeviceArray): nothing uploaded
    const onDevice = ONLY !== 'compress' ? await engine.upload(container) : null;
    const resident = onDevice && (await profile(async () => (await engine.decompress(onDevice)).destroy()));
    onDevice?.destroy();
    input.destroy();
    const row = {
      file: file.name,
      mib,
      bytes: B,
      ratioCpu: B / container.length,
      ratioGpu: B / gpuContainer.length,
      cpuContainer: pipelines,
      compress: compress && { gbps: B / compress.wallMs / 1e6, ...compress },
      compressOut: compressOut && { gbps: B / compressOut.wallMs / 1e6, ...compressOut },
      compressResident: compressResident && { gbps: B / compressResident.wallMs / 1e6, ...compressResident },
      decompress: decompress && { gbps: B / decompress.wallMs / 1e6, ...decompress },
      resident: resident && { gbps: B / resident.wallMs / 1e6, ...resident },
    };
    rows.push(row);
    const line = (what, r) =>
      `  ${what.padEnd(10)} ${(B / r.wallMs / 1e6).toFixed(2).padStart(6)} GB/s  wall ${r.wallMs.toFixed(2)} ms  GPU ${r.gpuMs?.toFixed(2)} ms  ` +
      `submits ${r.perCall.submits} readbacks ${r.perCall.readbacks} writeBuffer ${(r.perCall.writeBytes / 2 ** 20).toFixed(1)} MiB ` +
      `buffers ${r.perCall.buffers} bindGroups ${r.perCall.bindGroups}\n    ` +
      Object.entries(r.passes)
        .slice(0, 8)
        .map(([k, v]) => `${k.replace('parle:', '')} ${v.toFixed(2)}`)
        .join(', ');
    console.log(
      `${file.name} ${mib} MiB (ratio cpu ${row.ratioCpu.toFixed(2)} gpu ${row.ratioGpu.toFixed(2)}) ${JSON.stringify(pipelines)}`,
    );
    if (compress) console.log(line('compress', compress));
    if (compressOut) console.log(line('c(out)', compressOut));
    if (compressResident) console.log(line('c(device)', compressResident));
    if (decompress) console.log(line('decompress', decompress));
    if (decompress) console.log(`    submissions (decompress, GPU ms):`, JSON.stringify(decompress.submissions));
    if (resident) console.log(line('resident', resident));
    if (resident) console.log(`    submissions (resident, GPU ms):`, JSON.stringify(resident.submissions));
    for (const [what, r] of [
      ['compress', compress],
      ['compress into out', compressOut],
      ['compress to the device', compressResident],
      ['decompress', decompress],
      ['resident', resident],
    ]) {
      if (r === null) continue;
      console.log(`    WebGPU calls (${what}, ms a call):`, JSON.stringify(r.webgpuMs));
      if (session) console.log(`    main thread (${what}, ms in ${REPS} calls):`, JSON.stringify(r.cpu));
      if (r.timeline) console.log(`    timeline (${what}, ms):\n` + r.timeline.map((e) => `      ${e.t ?? ''} ${e.what}`).join('\n'));
    }
  }
}
await engine.destroy();

const machine = machineInfo({ adapter: ctx.adapterInfo });
const md = [
  `# GPU codec profile (${machine.date.slice(0, 10)}, ${machine.gpu ?? machine.adapter.description}, ${machine.cores}-core host, ${workers} workers)`,
  '',
  'Wall clock and GPU time (timestamps around every command buffer) per call, medians; host = wall - GPU.',
  '',
  '| file | MiB | direction | GB/s | wall ms | GPU ms | host ms | submits | readbacks | writeBuffer MiB | top passes (ms) |',
  '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ...rows.flatMap((r) =>
    ['compress', 'compressOut', 'compressResident', 'decompress', 'resident']
      .filter((d) => r[d] != null)
      .map((d) => {
        const x = r[d];
        const top = Object.entries(x.passes)
          .slice(0, 4)
          .map(([k, v]) => `${k.replace('parle:', '')} ${v.toFixed(2)}`)
          .join(', ');
        return `| ${r.file} | ${r.mib} | ${d} | ${x.gbps.toFixed(2)} | ${x.wallMs.toFixed(2)} | ${x.gpuMs?.toFixed(2) ?? '-'} | ${x.hostMs?.toFixed(2) ?? '-'} | ${x.perCall.submits} | ${x.perCall.readbacks} | ${(x.perCall.writeBytes / 2 ** 20).toFixed(1)} | ${top} |`;
      }),
  ),
  '',
];
writeResults(
  { 'gpu-codec-profile.json': { machine, workers, reps: REPS, rows }, 'gpu-codec-profile.md': md.join('\n') },
  { quick, out: args.out, gpu: true },
);
