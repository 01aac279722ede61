#!/usr/bin/env node
/**
 * The GPU Huffman decode kernel alone (shaders/codec-huffman.wgsl), mode 2 (one invocation a
 * segment of 2^10 symbols) against mode 3 (32 lanes a segment of 2^12: docs/format.md, "Mode 3:
 * interleaved lanes"), on real bytes: each corpus file's bytes repeated to --mib MiB, cut into
 * streams of --stream-kib KiB (the CPU path's chunks are 256 KiB), each with its own code, encoded
 * on the GPU. A submission holds --batch decodes of all streams back to back, so the GPU stays
 * busy (its clock governor idles it at a fraction of its clock between short calls); the
 * kernel's time is its passes' GPU time (timestamp queries: bench/gpu-timestamps.mjs) over
 * --batch, beside the wall time of a decode (the submission's over --batch: the host's planning
 * of the dispatch included), medians of --reps submissions after a second of warm-up. Every
 * decode is checked against the input once.
 *
 * Needs bench/internals/dist/huffman.mjs (node bench/internals/build.mjs).
 *   node bench/huffman-gpu.mjs [--files a,b] [--mib 64] [--stream-kib 256] [--batch 20] [--reps 5] [--out DIR]
 *                              [--internals DIR --tag NAME]
 * Writes huffman-gpu-<gpu>.json to --out (default bench/results/): per file and mode the encoded
 * bytes, ms a decode and GB/s of output, and mode 3's time as a ratio of mode 2's.
 */
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { outArg, outputDir } from './out-dir.mjs';
import { corpusFiles, repeatTo } from './corpus-arrays.mjs';
import { gpuCard, startClockSampler, timestampHooks } from './gpu-timestamps.mjs';

const { values: args } = parseArgs({
  options: {
    files: { type: 'string' },
    mib: { type: 'string' },
    'stream-kib': { type: 'string' },
    batch: { type: 'string' },
    reps: { type: 'string' },
    out: { type: 'string' },
    quick: { type: 'boolean' },
    internals: { type: 'string' },
    tag: { type: 'string' },
  },
});
// --internals DIR: another build's bench/internals/dist (a before / after comparison in one run); --tag: its name in the file name
const internalsDir = args.internals === undefined ? new URL('./internals/dist/', import.meta.url) : pathToFileURL(`${resolve(args.internals)}/`);
const internals = await import(new URL('huffman.mjs', internalsDir).href).catch(() => {
  throw new Error(`${fileURLToPath(internalsDir)}huffman.mjs is missing: run node bench/internals/build.mjs first`);
});
const {
  createGpuContext,
  encodeHuffmanDecode,
  huffmanEncodeStreams,
  parseHuffmanStream,
  codeLengths,
  DEFAULT_SEGMENT_LOG2,
  LANES_SEGMENT_LOG2,
} = internals;

const quick = args.quick === true;
const MIB = Number(args.mib ?? (quick ? 4 : 64));
const STREAM = Number(args['stream-kib'] ?? 256) << 10;
const BATCH = Number(args.batch ?? (quick ? 3 : 20));
const REPS = Number(args.reps ?? (quick ? 2 : 5));

const ctx = await createGpuContext({});
if (ctx === null) throw new Error('no WebGPU adapter');
const { device } = ctx;
// mode 3's units are taken by a subgroup ballot where every subgroup is 32-128 wide (else workgroup memory)
const ballot = ctx.hasSubgroups && ctx.subgroupMinSize >= 32 && ctx.subgroupMaxSize <= 128;
if (!ctx.hasTimestamps) throw new Error('the adapter has no timestamp-query: the kernel cannot be timed');
const stamps = timestampHooks(ctx, 4096);
const clock = await startClockSampler(50);
ctx.encoderHooks = stamps.hooks;
console.log(
  `subgroups ${ctx.hasSubgroups ? `${ctx.subgroupMinSize}-${ctx.subgroupMaxSize}` : 'none'}: mode 3 by ${ballot ? 'ballot' : 'workgroup memory'}`,
);
const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC;
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const roundUp4 = (n) => Math.ceil(n / 4) * 4;

async function readBack(buffer, size) {
  const rb = device.createBuffer({ size, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  const enc = device.createCommandEncoder();
  enc.copyBufferToBuffer(buffer, 0, rb, 0, size);
  device.queue.submit([enc.finish()]);
  await rb.mapAsync(GPUMapMode.READ);
  const out = new Uint8Array(rb.getMappedRange().slice(0));
  rb.destroy();
  return out;
}

const rows = [];
for (const { entry, raw } of corpusFiles(args.files)) {
  const bytes = repeatTo(raw, MIB, Uint8Array);
  const n = bytes.length;
  const srcBuf = device.createBuffer({ size: roundUp4(n), usage });
  device.queue.writeBuffer(srcBuf, 0, bytes.buffer, 0, roundUp4(n) === n ? n : n - (n % 4));
  if (n % 4 !== 0) device.queue.writeBuffer(srcBuf, n - (n % 4), Uint8Array.of(...bytes.subarray(n - (n % 4)), 0, 0, 0).subarray(0, 4));
  const dstBuf = device.createBuffer({ size: roundUp4(n) + 64, usage });
  const row = { file: entry.file, bytes: n, streamBytes: STREAM };
  for (const [mode, g] of [
    [2, DEFAULT_SEGMENT_LOG2],
    [3, LANES_SEGMENT_LOG2],
  ]) {
    const jobs = [];
    for (let at = 0; at < n; at += STREAM) {
      const piece = bytes.subarray(at, Math.min(n, at + STREAM));
      const hist = new Array(256).fill(0);
      for (const b of piece) hist[b]++;
      if (hist.filter((c) => c > 0).length < 2) hist[(piece[0] + 1) & 255] = 1; // two symbols at least
      jobs.push({ srcByteOffset: at, byteLength: piece.length, lengths: codeLengths(hist), segmentLog2: g, mode });
    }
    const streams = await huffmanEncodeStreams(ctx, srcBuf, jobs);
    let total = 0;
    const offsets = streams.map((st) => {
      const o = total;
      total += st.length;
      return o;
    });
    const packed = new Uint8Array(roundUp4(total));
    streams.forEach((st, i) => packed.set(st, offsets[i]));
    const encBuf = device.createBuffer({ size: packed.length, usage });
    device.queue.writeBuffer(encBuf, 0, packed);
    const decodeJobs = streams.map((st, i) => ({
      stream: parseHuffmanStream(st, jobs[i].byteLength),
      srcByteOffset: offsets[i],
      dstByteOffset: jobs[i].srcByteOffset, // streams of whole KiB: multiples of 4
    }));
    const run = async (batch) => {
      stamps.reset(); // only this submission's timestamps are kept
      const checks = await ctx.submit('bench-huffman-decode', (s) => {
        const list = [];
        for (let b = 0; b < batch; b++) list.push(encodeHuffmanDecode(ctx, s, encBuf, dstBuf, decodeJobs));
        return list;
      });
      for (const check of checks) await check();
    };
    await run(1);
    const back = await readBack(dstBuf, roundUp4(n));
    for (let i = 0; i < n; i++) if (back[i] !== bytes[i]) throw new Error(`${entry.file} mode ${mode}: byte ${i} decoded wrong`);
    const w0 = performance.now();
    while (performance.now() - w0 < (quick ? 100 : 1000)) await run(BATCH);
    const walls = [];
    const kernels = [];
    const start = Date.now();
    for (let r = 0; r < REPS; r++) {
      const t0 = performance.now();
      await run(BATCH);
      walls.push((performance.now() - t0) / BATCH);
      kernels.push(((await stamps.read()).passes['parle:huffman-decode'] ?? NaN) / BATCH);
    }
    const ms = median(kernels);
    const wallMs = median(walls);
    // the SM clock while they ran (nvidia-smi; null elsewhere)
    const smMhz = await clock.smMhzDuring(start, Date.now());
    row[`mode${mode}`] = { segmentLog2: g, encodedBytes: total, ms, gbps: n / ms / 1e6, wallMs, smMhz };
    encBuf.destroy();
  }
  row.ratio = row.mode3.ms / row.mode2.ms;
  row.sizeRatio = row.mode3.encodedBytes / row.mode2.encodedBytes;
  rows.push(row);
  console.log(
    `${entry.file.padEnd(26)} ${MIB} MiB in ${STREAM >> 10} KiB streams, GPU ms (GB/s) [wall ms]: ` +
      `mode 2 ${row.mode2.ms.toFixed(3)} (${row.mode2.gbps.toFixed(1)}) [${row.mode2.wallMs.toFixed(3)}] ${row.mode2.smMhz} MHz  ` +
      `mode 3 ${row.mode3.ms.toFixed(3)} (${row.mode3.gbps.toFixed(1)}) [${row.mode3.wallMs.toFixed(3)}] ${row.mode3.smMhz} MHz  time ${row.ratio.toFixed(2)}x  size ${row.sizeRatio.toFixed(4)}x`,
  );
  srcBuf.destroy();
  dstBuf.destroy();
}
ctx.destroy();
clock.stop();

const { card, slug: name } = gpuCard();
const dir = outputDir({ out: outArg() ?? args.out, quick, committed: 'bench/results' });
const path = join(dir, `huffman-gpu-${name}${args.tag === undefined ? "" : `-${args.tag}`}.json`);
writeFileSync(
  path,
  JSON.stringify({ date: new Date().toISOString(), gpu: card, mib: MIB, batch: BATCH, reps: REPS, ballot, rows }, null, 1),
);
console.log(`wrote ${path}`);
