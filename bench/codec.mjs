// Container version 2 (the codec pipeline: delta, byte-plane shuffle, RLE, canonical Huffman;
// docs/format.md "Version 2") on one thread, beside @bokuweb/zstd-wasm level 1 in the same run:
//
//   1. ratio of codec 'auto' on the samples `npm start` uses (data/samples/), beside zstd-wasm -1
//      and beside codec 'rle' (version 1's RLE); and, at 64 KiB chunks, that no chunk of 'auto'
//      is larger than the same chunk under 'rle' (up to 16 bytes over: the v2 stream directory);
//   2. compress / decompress MB/s of 'auto' (input bytes / median time) beside zstd-wasm -1 on
//      the same bytes, as ratios;
//   3. the Huffman kernels (build/parle.wasm, data already in wasm memory): encode GB/s of input
//      and decode GB/s of output on 4 MiB streams, decode checked against the input.
//
//   node build/build.mjs --quiet --no-types && node bench/codec.mjs [--quick]
//
// Prints a table and PASS/MISS lines, writes bench/results/codec.json (machine; per figure
// min / median / max, baseline, ratio, target, pass on the median).
// --quick: fewer iterations and less time per task (a smoke run; targets are for a full run).
import { outArg, outputDir } from './out-dir.mjs';
import { Bench } from 'tinybench';
import * as zstd from '@bokuweb/zstd-wasm';
import { readFile, mkdir, writeFile } from 'node:fs/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { dirname, join } from 'node:path';
import os from 'node:os';
import { execFileSync } from 'node:child_process';
import { createEngine } from '../dist/node/index.js';
import { rng } from './suite/data.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const quick = process.argv.includes('--quick');
/** Per tinybench task: at least this many samples and this much time (ms). */
const ITERATIONS = quick ? 5 : 30;
const TIME_MS = quick ? 100 : 1000;
const KERNEL_ITERATIONS = quick ? 5 : 30;

const KiB = 1 << 10;
const MiB = 1 << 20;
const CHECK_CHUNK_BYTES = 64 * KiB;
const HUFFMAN_STREAM_BYTES = 4 * MiB;
const HEADER_BYTES = 32;
const ENTRY_BYTES = 32;
/** A v2 'rle' chunk and an 'auto' chunk may differ by the stream directory alone: 2 streams x 8 bytes. */
const DIRECTORY_SLACK_BYTES = 16;
const ZSTD_LEVEL = 1;

const TARGETS = {
  ratioVsZstd: { 't1-brain-labels': 0.9, 't1-kmeans-labels': 0.9, 't1-mri': 1, camera: 1 },
  compressVsZstd: 5,
  decompressVsZstd: 2,
  huffmanEncodeGBps: 1,
  huffmanDecodeGBps: 1.5,
};

// The samples of ts/cli/demo.ts SAMPLES.
const SAMPLES = [
  { name: 't1-brain-labels', file: 't1-brain-labels.u8', Ctor: Uint8Array },
  { name: 't1-kmeans-labels', file: 't1-kmeans-labels.u8', Ctor: Uint8Array },
  { name: 't1-mri', file: 't1-mri.u16', Ctor: Uint16Array },
  { name: 'camera', file: 'camera.u8', Ctor: Uint8Array },
];

// ---------------------------------------------------------------------------------------------
// Helpers

const bytesOf = (a) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
const sameBytes = (a, b) =>
  a.length === b.length &&
  Buffer.compare(Buffer.from(a.buffer, a.byteOffset, a.length), Buffer.from(b.buffer, b.byteOffset, b.length)) === 0;

/** The sample as a typed array over a fresh, aligned buffer (Buffer pool slices need not be aligned). */
async function loadSample(s) {
  const raw = await readFile(join(root, 'data/samples', s.file));
  return new s.Ctor(new Uint8Array(raw).buffer);
}

/**
 * Walks a container's chunk table (32-byte header, then per chunk a 32-byte entry whose payload
 * length P is the u32 at entry + 12, the payload after it) and returns each chunk's P.
 */
function chunkPayloadBytes(file) {
  const dv = new DataView(file.buffer, file.byteOffset, file.byteLength);
  const version = file[8];
  const chunks = dv.getUint32(24, true);
  const sizes = [];
  let at = HEADER_BYTES;
  for (let i = 0; i < chunks; i++) {
    if (at + ENTRY_BYTES > file.length) throw new Error(`chunk table ends early at chunk ${i}`);
    const p = dv.getUint32(at + 12, true);
    sizes.push(p);
    at += ENTRY_BYTES + p;
  }
  if (at !== file.length) throw new Error(`chunk table walk ends at ${at}, file is ${file.length} bytes`);
  return { version, sizes };
}

/** Stage ids of each chunk of a v2 container (entry + 4, 0-terminated), as names. */
function chunkPipelines(file) {
  const names = { 1: 'delta', 2: 'shuffle', 3: 'rle', 4: 'huffman' };
  const dv = new DataView(file.buffer, file.byteOffset, file.byteLength);
  const out = [];
  let at = HEADER_BYTES;
  for (let i = 0, k = dv.getUint32(24, true); i < k; i++) {
    const ids = [...file.subarray(at + 4, at + 8)].filter((x) => x !== 0);
    out.push(ids.length ? ids.map((x) => names[x] ?? `?${x}`).join('+') : 'stored');
    at += ENTRY_BYTES + dv.getUint32(at + 12, true);
  }
  return out;
}

/** Counts of each distinct string, as 'a x3, b x1'. */
const tally = (list) =>
  Object.entries(list.reduce((m, x) => ((m[x] = (m[x] ?? 0) + 1), m), {}))
    .map(([k, n]) => `${k} x${n}`)
    .join(', ');

/** Runs one task (sync or async) through tinybench; returns its latency stats in ms. */
async function measure(name, fn, { iterations = ITERATIONS, time = TIME_MS } = {}) {
  const bench = new Bench({ time, iterations, warmup: true, warmupIterations: 3, warmupTime: 0 });
  bench.add(name, fn);
  await bench.run();
  const task = bench.tasks[0];
  const r = task.result;
  if (r.error) throw r.error;
  return { min: r.latency.min, median: r.latency.p50, max: r.latency.max, samples: r.latency.samplesCount ?? task.runs };
}

/** Rates in `unitScale` units per second of `work` per call, from latency stats (ms). */
const rates = (work, unitScale, s) => {
  const rate = (ms) => work / (ms / 1000) / unitScale;
  return { min: rate(s.max), median: rate(s.median), max: rate(s.min), samples: s.samples };
};

/**
 * V8 runs a wasm function in Liftoff until it has used a budget, then compiles it with TurboFan
 * in the background and switches at the next call. A few calls and a pause, so samples are
 * optimized code.
 */
async function warmUp(...fns) {
  for (let round = 0; round < 3; round++) for (const fn of fns) await fn();
  await new Promise((resolve) => setTimeout(resolve, 300));
}

const results = [];
const problems = [];
/** Things a reader should know that are not failures. */
const notes = [];

// ---------------------------------------------------------------------------------------------
// 1 + 2. Ratio and speed on the samples, through the public API, one thread.

const engine = await createEngine({ workers: 1, gpu: 'off', calibration: 'skip' });
await zstd.init();

const samples = [];
for (const s of SAMPLES) samples.push({ ...s, data: await loadSample(s) });

for (const s of samples) {
  const data = s.data;
  const bytes = bytesOf(data);
  const n = bytes.length;

  // --- ratio at the default chunk size
  const auto = await engine.compress(data, { codec: 'auto' });
  const rle = await engine.compress(data, { codec: 'rle' });
  const z = zstd.compress(bytes, ZSTD_LEVEL);
  for (const [label, packed, decode] of [
    ['auto', auto, async (b) => bytesOf(await engine.decompress(b))],
    ['rle', rle, async (b) => bytesOf(await engine.decompress(b))],
    [`zstd-wasm -${ZSTD_LEVEL}`, z, async (b) => zstd.decompress(b)],
  ]) {
    let ok;
    try {
      ok = sameBytes(await decode(packed), bytes);
    } catch (err) {
      ok = false;
      problems.push(`${s.name}: ${label} decompress threw ${err?.code ?? ''} ${err?.message ?? err}`);
    }
    if (!ok) problems.push(`${s.name}: ${label} round trip differs`);
  }
  const ratio = (packed) => n / packed.length;
  const autoRatio = ratio(auto);
  const vsZstd = autoRatio / ratio(z);
  const ratioTarget = TARGETS.ratioVsZstd[s.name];
  results.push({
    section: 'ratio',
    sample: s.name,
    figure: `ratio ${s.name} (${(n / KiB).toFixed(0)} KiB)`,
    unit: 'x',
    inputBytes: n,
    chunkBytes: 'default',
    pipelines: tally(chunkPipelines(auto)),
    kernel: { name: "parle 'auto'", bytes: auto.length, value: { min: autoRatio, median: autoRatio, max: autoRatio } },
    baselines: [
      { name: `zstd-wasm -${ZSTD_LEVEL}`, bytes: z.length, value: { min: ratio(z), median: ratio(z), max: ratio(z) }, ratio: vsZstd },
      {
        name: "parle 'rle' (v1's RLE)",
        bytes: rle.length,
        value: { min: ratio(rle), median: ratio(rle), max: ratio(rle) },
        ratio: autoRatio / ratio(rle),
      },
    ],
    target: `>= ${ratioTarget}x zstd-wasm -${ZSTD_LEVEL}`,
    targetRatio: ratioTarget,
    pass: vsZstd >= ratioTarget,
  });

  // --- per chunk at 64 KiB: 'auto' never larger than 'rle' (beyond the directory)
  const autoSmall = await engine.compress(data, { codec: 'auto', chunkBytes: CHECK_CHUNK_BYTES });
  const rleSmall = await engine.compress(data, { codec: 'rle', chunkBytes: CHECK_CHUNK_BYTES });
  for (const [label, packed] of [
    ['auto', autoSmall],
    ['rle', rleSmall],
  ]) {
    let ok;
    try {
      ok = sameBytes(bytesOf(await engine.decompress(packed)), bytes);
    } catch (err) {
      ok = false;
      problems.push(`${s.name}: ${label} at 64 KiB chunks, decompress threw ${err?.code ?? ''} ${err?.message ?? err}`);
    }
    if (!ok) problems.push(`${s.name}: ${label} at 64 KiB chunks, round trip differs`);
  }
  const a = chunkPayloadBytes(autoSmall);
  const r = chunkPayloadBytes(rleSmall);
  if (a.sizes.length !== r.sizes.length) throw new Error(`${s.name}: 'auto' has ${a.sizes.length} chunks, 'rle' ${r.sizes.length}`);
  let worst = -Infinity;
  let worstChunk = -1;
  let larger = 0;
  for (let i = 0; i < a.sizes.length; i++) {
    const excess = a.sizes[i] - r.sizes[i];
    if (excess > 0) larger++;
    if (excess > worst) {
      worst = excess;
      worstChunk = i;
    }
  }
  const smallPipes = chunkPipelines(autoSmall);
  const rlePipes = chunkPipelines(rleSmall);
  results.push({
    section: 'chunks',
    sample: s.name,
    figure: `chunks ${s.name}: 'auto' - 'rle' per chunk (64 KiB chunks)`,
    unit: 'bytes',
    chunkBytes: CHECK_CHUNK_BYTES,
    chunks: a.sizes.length,
    containerVersion: { auto: a.version, rle: r.version },
    autoBytes: autoSmall.length,
    rleBytes: rleSmall.length,
    chunksLarger: larger,
    worstExcessBytes: worst,
    worstChunk: {
      index: worstChunk,
      auto: a.sizes[worstChunk],
      rle: r.sizes[worstChunk],
      autoPipeline: smallPipes[worstChunk],
      rlePipeline: rlePipes[worstChunk],
    },
    pipelines: tally(smallPipes),
    target: `worst excess <= ${DIRECTORY_SLACK_BYTES} bytes`,
    pass: worst <= DIRECTORY_SLACK_BYTES,
  });

  // --- speed: 'auto' at the default chunk size beside zstd-wasm -1, same bytes
  await warmUp(
    () => engine.compress(data, { codec: 'auto' }),
    () => engine.decompress(auto),
    () => zstd.compress(bytes, ZSTD_LEVEL),
    () => zstd.decompress(z),
  );
  const cAuto = await measure('auto compress', () => engine.compress(data, { codec: 'auto' }));
  const cZstd = await measure('zstd compress', () => zstd.compress(bytes, ZSTD_LEVEL));
  const dAuto = await measure('auto decompress', () => engine.decompress(auto));
  const dZstd = await measure('zstd decompress', () => zstd.decompress(z));
  for (const [dir, mine, theirs, target] of [
    ['compress', cAuto, cZstd, TARGETS.compressVsZstd],
    ['decompress', dAuto, dZstd, TARGETS.decompressVsZstd],
  ]) {
    const m = rates(n, 1e6, mine);
    const t = rates(n, 1e6, theirs);
    const ratioX = m.median / t.median;
    results.push({
      section: 'speed',
      sample: s.name,
      figure: `${dir} ${s.name}`,
      unit: 'MB/s',
      inputBytes: n,
      kernel: { name: `parle 'auto' ${dir}`, value: m, latencyMs: mine },
      baselines: [{ name: `zstd-wasm -${ZSTD_LEVEL} ${dir}`, value: t, latencyMs: theirs, ratio: ratioX }],
      target: `>= ${target}x zstd-wasm -${ZSTD_LEVEL}`,
      targetRatio: target,
      pass: ratioX >= target,
    });
  }
}

// ---------------------------------------------------------------------------------------------
// 3. Huffman kernels, raw: one shared memory, a bump allocator reset per stream.

// codeLengths (TypeScript) bundled for this script, as the library calls it.
const bundleDir = join(root, 'bench/.build');
await mkdir(bundleDir, { recursive: true });
const bundlePath = join(bundleDir, 'huffman.mjs');
// esbuild is a dev tool: the device machine has none, so a bundle built before packing is used there
let esbuild;
try {
  esbuild = await import('esbuild');
} catch {
  esbuild = undefined;
}
if (esbuild) {
  const built = await esbuild.build({
    entryPoints: [join(root, 'ts/codec/huffman.ts')],
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    write: false,
    logLevel: 'silent',
  });
  await writeFile(bundlePath, built.outputFiles[0].contents);
}
const { codeLengths, codedBits, DEFAULT_SEGMENT_LOG2 } = await import(pathToFileURL(bundlePath).href);

const memory = new WebAssembly.Memory({ initial: 256, maximum: 65536, shared: true });
const module = await WebAssembly.compile(await readFile(join(root, 'build/parle.wasm')));
const { exports: k } = await WebAssembly.instantiate(module, { env: { memory } });
if (!k.simdEnabled()) throw new Error('build/parle.wasm is not the SIMD build');
const heapBase = (k.heapBase() + 63) & ~63;
let top = heapBase;
function alloc(bytes) {
  const ptr = Math.ceil(top / 64) * 64;
  top = ptr + bytes;
  const have = memory.buffer.byteLength;
  if (top > have) memory.grow(Math.ceil((top - have) / 65536));
  return ptr;
}
const view = (Ctor, ptr, length) => new Ctor(memory.buffer, ptr, length);

/** `src` repeated (the last copy cut short) to `bytes` bytes. */
function tile(src, bytes) {
  const out = new Uint8Array(bytes);
  for (let at = 0; at < bytes; at += src.length) out.set(src.subarray(0, Math.min(src.length, bytes - at)), at);
  return out;
}

const camera = bytesOf(samples.find((s) => s.name === 'camera').data);
const mri = bytesOf(samples.find((s) => s.name === 'mri' || s.name === 't1-mri').data);

const STREAMS = [
  {
    name: "camera's deltas",
    note: 'camera.u8 tiled to 4 MiB, then deltaEncode8',
    make: () => {
      const tiled = tile(camera, HUFFMAN_STREAM_BYTES);
      top = heapBase;
      const inPtr = alloc(tiled.length);
      const outPtr = alloc(tiled.length);
      view(Uint8Array, inPtr, tiled.length).set(tiled);
      k.deltaEncode8(inPtr, outPtr, tiled.length);
      return view(Uint8Array, outPtr, tiled.length).slice();
    },
  },
  {
    name: "MRI's high byte plane",
    note: 'byte 1 of each u16 of t1-mri.u16, tiled to 4 MiB',
    substitute: "the MRI's low byte plane",
    make: () => {
      const plane = new Uint8Array(mri.length >> 1);
      for (let i = 0; i < plane.length; i++) plane[i] = mri[2 * i + 1];
      return tile(plane, HUFFMAN_STREAM_BYTES);
    },
  },
  {
    // t1-mri.u16 holds 0..255 (t1-mri.json), so its high plane is all zeros (above): the low
    // plane, which carries the data, is the MRI stream that gets a code.
    name: "MRI's low byte plane",
    note: 'byte 0 of each u16 of t1-mri.u16 (its values), tiled to 4 MiB',
    make: () => {
      const plane = new Uint8Array(mri.length >> 1);
      for (let i = 0; i < plane.length; i++) plane[i] = mri[2 * i];
      return tile(plane, HUFFMAN_STREAM_BYTES);
    },
  },
  {
    name: 'skewed synthetic',
    note: 'floor(exponential, mean 6) clamped to 255, rng(7): about 4 bits a symbol',
    make: () => {
      const next = rng(7);
      const out = new Uint8Array(HUFFMAN_STREAM_BYTES);
      for (let i = 0; i < out.length; i++) out[i] = Math.min(255, Math.floor(-Math.log(1 - next() / 4294967296) * 6));
      return out;
    },
  },
];

for (const stream of STREAMS) {
  const input = stream.make();
  const n = input.length;
  const segLog2 = DEFAULT_SEGMENT_LOG2;
  const segments = Math.ceil(n / 2 ** segLog2);
  top = heapBase;
  const srcPtr = alloc(n);
  const histPtr = alloc(1024);
  const scratchPtr = alloc(4096);
  const lengthsPtr = alloc(256);
  const codesPtr = alloc(1024);
  const tablePtr = alloc(12 * KiB);
  const offsetsPtr = alloc(segments * 4);
  // worst case: 11 bits a symbol, plus a byte of padding a segment, plus 8 bytes of slack
  const encCap = Math.ceil((n * 11) / 8) + segments + 8;
  const encPtr = alloc(encCap);
  const outPtr = alloc(n + 64);
  view(Uint8Array, srcPtr, n).set(input);

  k.histogram8(srcPtr, n, histPtr, scratchPtr);
  const hist = view(Uint32Array, histPtr, 256).slice();
  const jsHist = new Uint32Array(256);
  for (let i = 0; i < n; i++) jsHist[input[i]]++;
  if (hist.some((x, i) => x !== jsHist[i])) problems.push(`${stream.name}: histogram8 differs from a JS count`);
  const present = hist.filter((x) => x > 0).length;
  if (present < 2) {
    // A one-symbol stream is mode 1 (docs/format.md "Huffman streams"): no code, nothing to time.
    const only = hist.findIndex((x) => x > 0);
    notes.push(
      `${stream.name}: every byte is ${only}, a one-symbol (mode 1) stream with no Huffman code; not timed${stream.substitute ? `, measured instead: ${stream.substitute}` : ''}`,
    );
    results.push({
      section: 'huffman',
      stream: stream.name,
      note: stream.note,
      bytes: n,
      symbols: present,
      skipped: `one symbol (${only}): mode 1, no Huffman code`,
      figure: `huffman, ${stream.name}`,
      target: 'n/a',
      pass: null,
    });
    continue;
  }
  const lengths = codeLengths(hist);
  view(Uint8Array, lengthsPtr, 256).set(lengths);
  const kraft = k.huffmanBuildCodes(lengthsPtr, codesPtr);
  if (kraft !== 2048) problems.push(`${stream.name}: huffmanBuildCodes returned ${kraft}, not 2048 (a complete code)`);
  const tableStatus = k.huffmanBuildTable(lengthsPtr, codesPtr, tablePtr, n);
  if (tableStatus !== 0) problems.push(`${stream.name}: huffmanBuildTable returned ${tableStatus}`);
  k.huffmanBuildCodes(lengthsPtr, codesPtr); // the table build used codesPtr as scratch: the codes again

  const encBytes = k.huffmanEncode(srcPtr, n, codesPtr, segLog2, encPtr, offsetsPtr);
  const offsets = view(Uint32Array, offsetsPtr, segments).slice();
  if (offsets[segments - 1] !== encBytes)
    problems.push(`${stream.name}: last segment offset ${offsets[segments - 1]} != ${encBytes} bytes written`);
  const predicted = codedBits(hist, lengths) / 8;
  // each segment is padded to a byte: at most `segments` bytes over the bit count
  if (encBytes < predicted || encBytes > Math.ceil(predicted) + segments)
    problems.push(`${stream.name}: encoded ${encBytes} bytes, code lengths predict ${predicted.toFixed(0)}`);
  const output = view(Uint8Array, outPtr, n);
  output.fill(0xa5); // a sentinel, so an unwritten byte shows
  const decStatus = k.huffmanDecode(encPtr, encBytes, offsetsPtr, segLog2, n, tablePtr, outPtr);
  const decodeOk = decStatus === 0 && sameBytes(view(Uint8Array, outPtr, n), input);
  if (decStatus !== 0) problems.push(`${stream.name}: huffmanDecode returned ${decStatus}`);
  else if (!decodeOk) problems.push(`${stream.name}: huffmanDecode output differs from the input`);

  const encode = () => k.huffmanEncode(srcPtr, n, codesPtr, segLog2, encPtr, offsetsPtr);
  const decode = () => k.huffmanDecode(encPtr, encBytes, offsetsPtr, segLog2, n, tablePtr, outPtr);
  const histogram = () => k.histogram8(srcPtr, n, histPtr, scratchPtr);
  await warmUp(encode, decode, histogram);
  const sEnc = await measure('huffmanEncode', encode, { iterations: KERNEL_ITERATIONS, time: 0 });
  const sDec = await measure('huffmanDecode', decode, { iterations: KERNEL_ITERATIONS, time: 0 });
  const sHist = await measure('histogram8', histogram, { iterations: KERNEL_ITERATIONS, time: 0 });
  // the timed calls rewrote the same bytes: check once more that they decode
  if (!sameBytes(view(Uint8Array, outPtr, n), input)) problems.push(`${stream.name}: output differs after the timed decodes`);

  let entropy = 0;
  for (let sym = 0; sym < 256; sym++) if (hist[sym]) entropy -= (hist[sym] / n) * Math.log2(hist[sym] / n);
  const common = {
    section: 'huffman',
    stream: stream.name,
    note: stream.note,
    bytes: n,
    segmentLog2: segLog2,
    symbols: hist.filter((x) => x > 0).length,
    entropyBitsPerSymbol: entropy,
    codedBitsPerSymbol: (encBytes * 8) / n,
    encodedBytes: encBytes,
    decodeMatchesInput: decodeOk,
    unit: 'GB/s',
  };
  const enc = rates(n, 1e9, sEnc);
  const dec = rates(n, 1e9, sDec);
  results.push({
    ...common,
    figure: `huffman encode, ${stream.name}`,
    kernel: { name: 'wasm huffmanEncode', value: enc, latencyMs: sEnc },
    baselines: [],
    side: { name: 'wasm histogram8 (same bytes)', value: rates(n, 1e9, sHist) },
    target: `>= ${TARGETS.huffmanEncodeGBps} GB/s of input`,
    targetValue: TARGETS.huffmanEncodeGBps,
    pass: enc.median >= TARGETS.huffmanEncodeGBps,
  });
  results.push({
    ...common,
    figure: `huffman decode, ${stream.name}`,
    kernel: { name: 'wasm huffmanDecode', value: dec, latencyMs: sDec },
    baselines: [],
    target: `>= ${TARGETS.huffmanDecodeGBps} GB/s of output, = input`,
    targetValue: TARGETS.huffmanDecodeGBps,
    pass: dec.median >= TARGETS.huffmanDecodeGBps && decodeOk,
  });
}

// ---------------------------------------------------------------------------------------------
// Report

const fmt = (x) => (!Number.isFinite(x) ? String(x) : Math.abs(x) >= 100 ? x.toFixed(0) : Math.abs(x) >= 10 ? x.toFixed(1) : x.toFixed(2));
const span = (v) => (v.min === v.max ? fmt(v.median) : `${fmt(v.median)} (${fmt(v.min)}..${fmt(v.max)})`);

function printTable(title, rows) {
  console.log(`\n${title}`);
  const columns = Object.keys(rows[0]);
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((row) => String(row[c]).length)));
  const line = (cells) => cells.map((cell, i) => String(cell).padEnd(widths[i])).join(' | ');
  console.log(line(columns));
  console.log(widths.map((w) => '-'.repeat(w)).join('-|-'));
  for (const row of rows) console.log(line(columns.map((c) => row[c])));
}

const cpu = os.cpus()[0]?.model ?? 'unknown';
/** The commit measured, with '+dirty' when the work tree differs from it (or null outside git). */
function gitDescribe() {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: root, encoding: 'utf8' }).trim() !== '';
    return head + (dirty ? '+dirty' : '');
  } catch {
    return null;
  }
}
console.log(`parle codec v2, one thread (workers: 1, gpu: off), beside zstd-wasm -${ZSTD_LEVEL}${quick ? ', --quick' : ''}`);
console.log(`${cpu}, ${os.cpus().length} logical cores, Node ${process.version}, ${os.platform()} ${os.arch()}`);

printTable(
  'Ratio (input bytes / output bytes), default chunk size',
  results
    .filter((r) => r.section === 'ratio')
    .map((r) => ({
      sample: r.sample,
      "parle 'auto'": `${fmt(r.kernel.value.median)} (${r.kernel.bytes} B)`,
      [`zstd-wasm -${ZSTD_LEVEL}`]: `${fmt(r.baselines[0].value.median)} (${r.baselines[0].bytes} B)`,
      'auto / zstd': `${r.baselines[0].ratio.toFixed(3)}x`,
      "parle 'rle'": `${fmt(r.baselines[1].value.median)} (${r.baselines[1].bytes} B)`,
      'auto / rle': `${fmt(r.baselines[1].ratio)}x`,
      "auto's pipelines": r.pipelines,
      target: r.target,
      result: r.pass ? 'PASS' : 'MISS',
    })),
);

printTable(
  `Per chunk, ${CHECK_CHUNK_BYTES / KiB} KiB chunks: payload of 'auto' minus payload of 'rle'`,
  results
    .filter((r) => r.section === 'chunks')
    .map((r) => ({
      sample: r.sample,
      chunks: r.chunks,
      'auto / rle bytes': `${r.autoBytes} / ${r.rleBytes}`,
      'chunks larger': r.chunksLarger,
      'worst excess': `${r.worstExcessBytes} B (chunk ${r.worstChunk.index}: ${r.worstChunk.autoPipeline} ${r.worstChunk.auto} vs ${r.worstChunk.rlePipeline} ${r.worstChunk.rle})`,
      target: r.target,
      result: r.pass ? 'PASS' : 'MISS',
    })),
);

printTable(
  'Speed, MB/s of input bytes: median (min..max) of the tinybench samples',
  results
    .filter((r) => r.section === 'speed')
    .map((r) => ({
      figure: r.figure,
      "parle 'auto'": span(r.kernel.value),
      [`zstd-wasm -${ZSTD_LEVEL}`]: span(r.baselines[0].value),
      'x zstd': `${fmt(r.baselines[0].ratio)}x`,
      samples: `${r.kernel.value.samples} / ${r.baselines[0].value.samples}`,
      target: r.target,
      result: r.pass ? 'PASS' : 'MISS',
    })),
);

printTable(
  `Huffman kernels, one thread, ${HUFFMAN_STREAM_BYTES / MiB} MiB streams, segments of 2^${DEFAULT_SEGMENT_LOG2}: GB/s median (min..max)`,
  results
    .filter((r) => r.section === 'huffman')
    .map((r) =>
      r.skipped
        ? {
            figure: r.figure,
            rate: 'not timed',
            'bits/symbol (entropy)': r.skipped,
            histogram8: '',
            'decode = input': '',
            target: 'n/a',
            result: 'n/a',
          }
        : {
            figure: r.figure,
            rate: `${span(r.kernel.value)} GB/s`,
            'bits/symbol (entropy)': `${r.codedBitsPerSymbol.toFixed(2)} (${r.entropyBitsPerSymbol.toFixed(2)}), ${r.symbols} symbols`,
            histogram8: r.side ? `${span(r.side.value)} GB/s` : '',
            'decode = input': r.decodeMatchesInput ? 'yes' : 'NO',
            target: r.target,
            result: r.pass ? 'PASS' : 'MISS',
          },
    ),
);

console.log('');
for (const r of results) {
  if (r.pass === null) {
    console.log(`n/a   ${r.figure}: ${r.skipped}`);
    continue;
  }
  const detail =
    r.section === 'ratio'
      ? `auto ${fmt(r.kernel.value.median)} vs zstd ${fmt(r.baselines[0].value.median)} = ${r.baselines[0].ratio.toFixed(3)}x`
      : r.section === 'chunks'
        ? `worst excess ${r.worstExcessBytes} B over ${r.chunks} chunks`
        : r.section === 'speed'
          ? `${fmt(r.kernel.value.median)} vs ${fmt(r.baselines[0].value.median)} MB/s = ${fmt(r.baselines[0].ratio)}x`
          : `${fmt(r.kernel.value.median)} GB/s`;
  console.log(`${r.pass ? 'PASS' : 'MISS'}  ${r.figure}: ${detail} (target ${r.target})`);
}
if (notes.length) {
  console.log('\nNOTES:');
  for (const x of notes) console.log(`  ${x}`);
}
if (problems.length) {
  console.log('\nPROBLEMS (round trips and kernel checks):');
  for (const p of problems) console.log(`  ${p}`);
} else console.log('\nall round trips and kernel checks agree');

await mkdir(join(root, 'bench/results'), { recursive: true });
const json = {
  benchmark: 'codec',
  date: new Date().toISOString(),
  quick,
  machine: {
    cpu,
    logicalCores: os.cpus().length,
    totalMemoryBytes: os.totalmem(),
    platform: os.platform(),
    arch: os.arch(),
    node: process.version,
    v8: process.versions.v8,
  },
  commit: gitDescribe(),
  engine: { workers: 1, gpu: 'off', calibration: 'skip' },
  build: 'dist/node (public API); build/parle.wasm (SIMD) for the kernels',
  peer: `@bokuweb/zstd-wasm level ${ZSTD_LEVEL}`,
  threads: 1,
  iterations: { api: ITERATIONS, apiTimeMs: TIME_MS, kernels: KERNEL_ITERATIONS, warmup: 3 },
  targets: TARGETS,
  results,
  notes,
  problems,
  pass: results.every((r) => r.pass !== false) && problems.length === 0,
};
// --quick: bench/.quick/results/ unless --out DIR (bench/out-dir.mjs)
await writeFile(join(outputDir({ out: outArg(), quick, committed: 'bench/results' }), 'codec.json'), JSON.stringify(json, null, 2) + '\n');
console.log('wrote bench/results/codec.json');
await engine.destroy();
