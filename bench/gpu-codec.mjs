#!/usr/bin/env node
/**
 * The version-2 codec on a real GPU and a many-core host (the `device` tool; recipe in
 * ../shared/gpu/README.md). Writes $OUT/gpu-codec.json (or bench/results/gpu-codec-local.json).
 *
 * Figures (medians of REPS runs after warm-up runs, wall clock from the call to the resolved
 * promise):
 *   Huffman decode on the GPU ........ GB/s of output: the streams of a `codec: 'huffman'`
 *                                       container decoded by ts/codec/gpu/stages.ts (one dispatch for
 *                                       all streams, one invocation a segment), status read back
 *                                       (`huffman`, on the engine's context); then the same
 *                                       decode on two fresh contexts, the direct kernel (default)
 *                                       and tuning.huffmanDecodeStaged (coalesced stores through
 *                                       workgroup memory), timed alternately (`huffmanStaged`)
 *   decompress to the device ......... the GPU path (container uploaded, payload hashes,
 *                                       entropy decode, expand, unshuffle, delta and element
 *                                       hashes on the GPU) against the CPU path + upload
 *                                       (Haugen's case), on three 256 MiB inputs
 *   compress / decompress on the CPU . workers 1, 2, 4, 8, 16 (gpu 'off'), host arrays
 * Every decode is checked against the input once.
 *
 * The GPU layer is imported from bench/.build/gpu-codec-layer.mjs, built here with esbuild when
 * missing (the device machine has no esbuild: build before packing).
 * Usage: node bench/gpu-codec.mjs [--quick] [--only huffman|decompress|compress|cpu] [--build-only]
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import { rng as rngU32 } from './suite/data.mjs';
import { outArg, outputDir } from './out-dir.mjs';

/** Uniform in [0, 1) from a seeded u32 generator. */
const rng = (seed) => {
  const next = rngU32(seed);
  return () => next() / 4294967296;
};

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');
const layerPath = join(here, '.build', 'gpu-codec-layer.mjs');
const entry = join(here, '.build', 'gpu-codec-entry.ts');
const entryText =
  "export { createGpuContext } from '../../ts/gpu/context.ts';\nexport { huffmanDecode, huffmanDecodeStageWords, parseHuffmanStream } from '../../ts/codec/gpu/stages.ts';\n";
// rebuilt when missing or built from an older entry (one without huffmanDecodeStageWords)
if (!existsSync(layerPath) || !existsSync(entry) || readFileSync(entry, 'utf8') !== entryText) {
  mkdirSync(dirname(layerPath), { recursive: true });
  writeFileSync(entry, entryText);
  execFileSync('npx', ['esbuild', entry, '--bundle', '--platform=node', '--format=esm', '--loader:.wgsl=text', '--external:webgpu', `--outfile=${layerPath}`], {
    cwd: root,
    stdio: 'inherit',
  });
}
const layer = await import(layerPath);
// --build-only: build bench/.build/gpu-codec-layer.mjs and stop (before packing for the GPU machine)
if (process.argv.includes('--build-only')) process.exit(0);
const { createEngine, compressBound } = await import(join(root, 'dist/node/index.js'));

const quick = process.argv.includes('--quick');
/** --only huffman|decompress|compress|cpu: one section (a shorter device run). */
const only = process.argv.includes('--only') ? process.argv[process.argv.indexOf('--only') + 1] : undefined;
const section = (name) => only === undefined || only === name;
const REPS = quick ? 3 : 7;
const MiB = 1 << 20;
const N = (quick ? 4 : 256) * MiB;

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[s.length >> 1];
}
async function timeIt(fn, reps = REPS, warm = 2) {
  for (let i = 0; i < warm; i++) await fn();
  const ts = [];
  for (let i = 0; i < reps; i++) {
    const t0 = performance.now();
    await fn();
    ts.push(performance.now() - t0);
  }
  return { medianMs: median(ts), minMs: Math.min(...ts), maxMs: Math.max(...ts) };
}
const sameBytes = (a, b) => Buffer.compare(Buffer.from(a.buffer, a.byteOffset, a.byteLength), Buffer.from(b.buffer, b.byteOffset, b.byteLength)) === 0;

// ---- inputs: 256 MiB each, seeded
function runs16(n) {
  const r = rng(11);
  const a = new Uint8Array(n);
  for (let i = 0; i < n; ) {
    const len = 1 + Math.floor(r() * 31);
    a.fill(Math.floor(r() * 256), i, Math.min(n, i + len));
    i += len;
  }
  return a;
}
function smoothNoise(n) {
  // a photograph-like random walk: small steps, so delta + Huffman pays and RLE does not
  const r = rng(12);
  const a = new Uint8Array(n);
  let v = 128;
  for (let i = 0; i < n; i++) {
    v = (v + Math.round((r() - 0.5) * 12)) & 255;
    a[i] = v;
  }
  return a;
}
function mriLike(n) {
  // a smooth 12-bit field with noise in the low bits, as a u16 volume
  const r = rng(13);
  const a = new Uint16Array(n / 2);
  for (let i = 0; i < a.length; i++) a[i] = (((Math.sin(i / 5000) + 1) * 1500) | 0) + ((r() * 16) | 0);
  return a;
}

const results = {
  machine: { cpu: os.cpus()[0]?.model, cores: os.cpus().length, node: process.version },
  huffman: [],
  huffmanStaged: [],
  decompressToDevice: [],
  cpuScaling: [],
};
const log = (...a) => console.log(...a);

const engine = await createEngine({ gpu: 'require', calibration: 'skip' });
const gpu = engine.gpuContext ?? engine['gpuContext'];
results.machine.adapter = gpu?.adapterInfo ?? null;
log('adapter', JSON.stringify(results.machine.adapter), 'cores', results.machine.cores);

// ---- 1. Huffman decode on the GPU
if (section('huffman')) {
  const input = smoothNoise(N);
  for (const g of [10]) {
    // delta + huffman: the Huffman streams hold the deltas (a photograph's distribution)
    const packed = await engine.compress(input, { codec: 'delta+huffman', chunkBytes: 64 * MiB, path: 'cpu' });
    // each chunk's deltas start from 0 at the chunk's first element
    const deltas = new Uint8Array(input.length);
    for (let i = 0; i < input.length; i++) deltas[i] = (input[i] - (i % (64 * MiB) > 0 ? input[i - 1] : 0)) & 255;
    // walk the table: header 32, entry 32, payload = directory (8) + one stream
    const view = new DataView(packed.buffer, packed.byteOffset);
    const jobs = [];
    let at = 32;
    let dst = 0;
    while (at < packed.length) {
      const count = view.getUint32(at, true);
      const P = view.getUint32(at + 12, true);
      const payloadAt = at + 32;
      const D = view.getUint32(payloadAt, true);
      const E = view.getUint32(payloadAt + 4, true);
      const streamAt = payloadAt + 8;
      if (view.getUint8(at + 4) === 1 && view.getUint8(at + 5) === 4 && packed[streamAt] === 2) {
        const stream = layer.parseHuffmanStream(packed.subarray(streamAt, streamAt + E), D);
        jobs.push({ stream, srcByteOffset: streamAt, dstByteOffset: dst });
      }
      dst += (count + 3) & ~3;
      at = payloadAt + P;
    }
    const src = await engine.upload(packed);
    const out = await engine.upload(new Uint8Array(dst));
    const t = await timeIt(() => layer.huffmanDecode(gpu, src.buffer, out.buffer, jobs));
    const back = await engine.download(out);
    const ok = jobs.length > 0 && jobs.every((j) => j.stream.segmentLog2 === g) && sameBytes(back.subarray(0, input.length), deltas);
    const gbps = input.length / (t.medianMs * 1e6);
    log(`huffman decode on the GPU, 2^${g} segments, ${jobs.length} streams: ${t.medianMs.toFixed(2)} ms, ${gbps.toFixed(1)} GB/s of output, ok ${ok}`);
    results.huffman.push({ segmentLog2: g, streams: jobs.length, bytes: input.length, ...t, gbps, ok, target: 100 });
    src.destroy();
    out.destroy();

    // the direct and the staged kernel on contexts of their own (the layer's build of ts/gpu),
    // set up alike; their timed runs alternate so that clocks and heat affect both alike
    const variants = [];
    for (const staged of [false, true]) {
      const ctx = await layer.createGpuContext({ tuning: { huffmanDecodeStaged: staged } });
      const vSrc = await ctx.upload(packed);
      const vOut = await ctx.upload(new Uint8Array(dst));
      variants.push({ staged, ctx, src: vSrc, out: vOut, stageWords: layer.huffmanDecodeStageWords(ctx), ms: [] });
    }
    for (const v of variants) for (let i = 0; i < 2; i++) await layer.huffmanDecode(v.ctx, v.src.buffer, v.out.buffer, jobs);
    for (let i = 0; i < REPS; i++) {
      for (const v of variants) {
        const t0 = performance.now();
        await layer.huffmanDecode(v.ctx, v.src.buffer, v.out.buffer, jobs);
        v.ms.push(performance.now() - t0);
      }
    }
    const pair = { segmentLog2: g, streams: jobs.length, bytes: input.length, workgroupStorage: variants[0].ctx.limits.maxComputeWorkgroupStorageSize };
    for (const v of variants) {
      const vBack = await v.ctx.download(v.out);
      const vOk = jobs.length > 0 && sameBytes(vBack.subarray(0, input.length), deltas);
      const vt = { medianMs: median(v.ms), minMs: Math.min(...v.ms), maxMs: Math.max(...v.ms) };
      const vGbps = input.length / (vt.medianMs * 1e6);
      const kernel = v.stageWords === 0 ? 'direct' : `staged, ${v.stageWords}-word rows`;
      log(`huffman decode, ${v.staged ? 'tuning.huffmanDecodeStaged' : 'default'} (${kernel}): ${vt.medianMs.toFixed(2)} ms, ${vGbps.toFixed(1)} GB/s of output, ok ${vOk}`);
      pair[v.staged ? 'staged' : 'direct'] = { ...vt, gbps: vGbps, ok: vOk, stageWords: v.stageWords };
      v.src.destroy();
      v.out.destroy();
      v.ctx.destroy();
    }
    pair.stagedSpeedup = pair.direct.medianMs / pair.staged.medianMs;
    log(`huffman decode, staged / direct: ${pair.stagedSpeedup.toFixed(2)}x`);
    results.huffmanStaged.push(pair);
  }
}

// ---- 2. decompress to the device: GPU path against CPU decode + upload
for (const [name, make] of !section('decompress') ? [] : [
  ['u8 runs (mean 16)', runs16],
  ['u8 smooth noise', smoothNoise],
  ['u16 mri-like', mriLike],
]) {
  const input = make(N);
  const packed = await engine.compress(input, { path: 'cpu' });
  const ratio = input.byteLength / packed.length;
  const check = await engine.decompress(packed, { to: 'device', path: 'gpu' });
  const ok = sameBytes(await engine.download(check), input);
  check.destroy();
  const gpuPath = await timeIt(async () => (await engine.decompress(packed, { to: 'device', path: 'gpu' })).destroy());
  const cpuPath = await timeIt(async () => (await engine.decompress(packed, { to: 'device', path: 'cpu' })).destroy());
  const speedup = cpuPath.medianMs / gpuPath.medianMs;
  log(
    `decompress to the device, ${name}: ratio ${ratio.toFixed(2)}, GPU path ${gpuPath.medianMs.toFixed(1)} ms, CPU + upload ${cpuPath.medianMs.toFixed(1)} ms: ${speedup.toFixed(2)}x (target 5x), ok ${ok}`,
  );
  results.decompressToDevice.push({ input: name, bytes: input.byteLength, ratio, gpuPath, cpuPathPlusUpload: cpuPath, speedup, ok, target: 5 });
}
// ---- 3. compress from the device: the GPU path against readback + the CPU path (Rutter's case)
results.compressFromDevice = [];
for (const [name, make, codec] of !section('compress') ? [] : [
  ['u8 runs (mean 16)', runs16, 'auto'],
  ['u8 smooth noise', smoothNoise, 'auto'],
  ['u8 smooth noise, delta+huffman', smoothNoise, 'delta+huffman'],
  ['u16 mri-like', mriLike, 'auto'],
]) {
  const input = make(N);
  const device = await engine.upload(input);
  const viaGpu = await engine.compress(device, { path: 'gpu', codec });
  const viaCpu = await engine.compress(device, { path: 'cpu', codec });
  const ok = sameBytes(await engine.decompress(viaGpu, { path: 'cpu' }), input);
  const gpuPath = await timeIt(() => engine.compress(device, { path: 'gpu', codec }));
  const cpuPath = await timeIt(() => engine.compress(device, { path: 'cpu', codec }));
  const speedup = cpuPath.medianMs / gpuPath.medianMs;
  // with reused results on both sides (options.out; the CPU path reads back into a reused array):
  // no fresh pages, which fill at about 1.5 GB/s on the H200's host
  const out = new Uint8Array(compressBound(input.length, device.type));
  const host = new input.constructor(input.length);
  const gpuReused = await timeIt(() => engine.compress(device, { path: 'gpu', codec, out }));
  const cpuReused = await timeIt(async () => engine.compress(await engine.download(device, { into: host }), { path: 'cpu', codec, out }));
  const speedupReused = cpuReused.medianMs / gpuReused.medianMs;
  log(
    `compress from the device, ${name} (${codec}): ratio GPU path ${(input.byteLength / viaGpu.length).toFixed(2)} / CPU path ${(input.byteLength / viaCpu.length).toFixed(2)}, ` +
      `GPU path ${gpuPath.medianMs.toFixed(1)} ms, readback + CPU ${cpuPath.medianMs.toFixed(1)} ms: ${speedup.toFixed(2)}x; ` +
      `into a reused out: GPU path ${gpuReused.medianMs.toFixed(1)} ms, readback into a reused array + CPU ${cpuReused.medianMs.toFixed(1)} ms: ${speedupReused.toFixed(2)}x, ok ${ok}`,
  );
  results.compressFromDevice.push({
    input: name,
    codec,
    bytes: input.byteLength,
    ratioGpuPath: input.byteLength / viaGpu.length,
    ratioCpuPath: input.byteLength / viaCpu.length,
    gpuPath,
    cpuPath,
    speedup,
    reusedOut: { gpuPath: gpuReused, cpuPath: cpuReused, speedup: speedupReused },
    ok,
  });
  device.destroy();
}
await engine.destroy();

// ---- 4. CPU scaling of compress and decompress
if (section('cpu')) {
  const input = runs16(N);
  for (const workers of [1, 2, 4, 8, 16].filter((w) => w <= os.cpus().length)) {
    const e = await createEngine({ gpu: 'off', workers, calibration: 'skip' });
    const packed = await e.compress(input);
    const c = await timeIt(() => e.compress(input), quick ? 2 : 3, 1);
    const d = await timeIt(() => e.decompress(packed), quick ? 2 : 3, 1);
    log(`workers ${workers}: compress ${c.medianMs.toFixed(0)} ms (${(N / c.medianMs / 1e6).toFixed(2)} GB/s), decompress ${d.medianMs.toFixed(0)} ms (${(N / d.medianMs / 1e6).toFixed(2)} GB/s)`);
    results.cpuScaling.push({ workers, bytes: N, compress: c, decompress: d });
    await e.destroy();
  }
}

// quick runs go to bench/.quick/ unless --out says otherwise (bench/out-dir.mjs)
const outDir = process.env.OUT ?? outputDir({ out: outArg(), quick, committed: 'bench/results' });
const outFile = join(outDir, process.env.OUT ? 'gpu-codec.json' : 'gpu-codec-local.json');
writeFileSync(outFile, JSON.stringify(results, null, 2));
log('wrote', outFile);
