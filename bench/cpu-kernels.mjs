// Throughput of the wasm kernels (build/parle.wasm, SIMD) on one thread, each beside plain-JS
// baselines measured in the same run. The data is already in wasm memory: this is kernel
// throughput, not the library's end-to-end time (no copies in or out, no workers).
//
//   node build/wasm.mjs && node bench/cpu-kernels.mjs [--quick] [--out DIR]
//
// Prints a table and writes bench/results/<machine>/cpu-kernels.json (machine, per figure min /
// median / max of the rate and the ratio to each baseline, target and PASS/MISS on the median).
// --quick: a quarter of the sizes and fewer iterations (a smoke run; targets are for full size).
import { Bench } from 'tinybench';
import { jsExclusiveScan, jsRleDecode, jsRleDecodeLoop, jsRleEncode } from './lib/baselines.mjs';
import { kernels, warmUp as warmUpAll } from './lib/wasm.mjs';
import { machineInfo, printTable, writeResults } from './lib/results.mjs';
import { rng } from './suite/data.mjs';

const quick = process.argv.includes('--quick');
const scale = quick ? 4 : 1;
const ITERATIONS = quick ? 3 : 10;
const SLOW_ITERATIONS = quick ? 2 : 4; // the V8 sort baselines take about a second each

const MiB = 1 << 20;
const SIZES = {
  rleBytes: (64 * MiB) / scale,
  meanRun: 16,
  sortKeys: (1 << 24) / scale,
  scanElements: (1 << 26) / scale,
};
const KEY_KIND = { U32: 0, I32: 1, F32: 2, U64: 3, I64: 4, F64: 5 };
const SORT_SCRATCH_BYTES = 4096;
const SORT64_SCRATCH_BYTES = 8192;
const DECODE_SLACK_BYTES = 32;

// The kernels on a shared memory of their own, a bump allocator reset per section (bench/lib/wasm.mjs).
const { k, alloc, view, reset } = await kernels();

// ---------------------------------------------------------------------------------------------
// Measurement

const warmUp = (...fns) => warmUpAll(fns);

const results = [];

/** Runs tasks [{ name, fn, beforeEach?, iterations? }] and returns their latency stats (ms). */
function measure(tasks) {
  const stats = {};
  for (const t of tasks) {
    const bench = new Bench({ time: 0, iterations: t.iterations ?? ITERATIONS, warmup: true, warmupIterations: 1, warmupTime: 0 });
    bench.add(t.name, t.fn, t.beforeEach ? { beforeEach: t.beforeEach } : {});
    bench.runSync();
    const task = bench.tasks[0];
    const r = task.result;
    if (r.error) throw r.error;
    stats[t.name] = { min: r.latency.min, median: r.latency.p50, max: r.latency.max, samples: task.runs };
  }
  return stats;
}

/**
 * Records one figure: `work` units per call (bytes, keys or elements), rates from the latency
 * stats, ratios against each baseline (median against median), PASS/MISS on the median.
 */
function record({ figure, unit, unitScale, work, kernel, baselines, target, ratioTarget }) {
  const rate = (ms) => work / (ms / 1000) / unitScale; // in `unit`
  const rates = (s) => ({ min: rate(s.max), median: rate(s.median), max: rate(s.min), samples: s.samples });
  const kernelRate = rates(kernel.stats);
  const base = baselines.map((b) => {
    const r = rates(b.stats);
    return { name: b.name, rate: r, ratio: kernelRate.median / r.median };
  });
  let pass = kernelRate.median >= target;
  if (ratioTarget) pass &&= base[0].ratio >= ratioTarget;
  results.push({ figure, unit, work, kernel: { name: kernel.name, rate: kernelRate }, baselines: base, target, ratioTarget, pass });
}

// ---------------------------------------------------------------------------------------------
// RLE encode / decode: u8, run lengths uniform in 1..31 (mean 16), neighbouring runs differ.

{
  reset();
  const n = SIZES.rleBytes;
  const next = rng(1);
  const input = new Uint8Array(n);
  for (let i = 0, value = 0; i < n; ) {
    const len = 1 + (next() % (2 * SIZES.meanRun - 1));
    value = (value + 1 + (next() % 255)) & 0xff;
    input.fill(value, i, i + len);
    i += len;
  }
  const inPtr = alloc(n);
  view(Uint8Array, inPtr, n).set(input);
  const valuesPtr = alloc(n);
  const lengthsPtr = alloc(n * 4);
  const outPtr = alloc(n + DECODE_SLACK_BYTES);

  const jsValues = new Uint8Array(n);
  const jsLengths = new Uint32Array(n);
  const jsOut = new Uint8Array(n);
  const runCount = k.rleEncode8(inPtr, n, valuesPtr, lengthsPtr);
  if (runCount !== jsRleEncode(input, jsValues, jsLengths)) throw new Error('rleEncode8 disagrees with the JS encoder');
  if (k.rleDecode8(valuesPtr, lengthsPtr, runCount, outPtr) !== n || view(Uint8Array, outPtr, n).some((x, i) => x !== input[i])) {
    throw new Error('rleDecode8 does not round-trip');
  }

  await warmUp(
    () => k.rleEncode8(inPtr, n, valuesPtr, lengthsPtr),
    () => k.rleDecode8(valuesPtr, lengthsPtr, runCount, outPtr),
  );
  const enc = measure([
    { name: 'wasm rleEncode8', fn: () => k.rleEncode8(inPtr, n, valuesPtr, lengthsPtr) },
    { name: 'JS loop', fn: () => jsRleEncode(input, jsValues, jsLengths) },
  ]);
  record({
    figure: `RLE encode u8, ${n / MiB} MiB, mean run ${SIZES.meanRun}`,
    unit: 'GB/s',
    unitScale: 1e9,
    work: n,
    kernel: { name: 'wasm rleEncode8', stats: enc['wasm rleEncode8'] },
    baselines: [{ name: 'JS loop', stats: enc['JS loop'] }],
    target: 3,
    ratioTarget: 7,
  });

  const dec = measure([
    { name: 'wasm rleDecode8', fn: () => k.rleDecode8(valuesPtr, lengthsPtr, runCount, outPtr) },
    { name: 'JS loop', fn: () => jsRleDecodeLoop(jsValues, jsLengths, runCount, jsOut) },
    { name: 'JS fill per run', fn: () => jsRleDecode(jsValues, jsLengths, runCount, jsOut) },
  ]);
  record({
    figure: `RLE decode u8, ${n / MiB} MiB, mean run ${SIZES.meanRun}`,
    unit: 'GB/s',
    unitScale: 1e9,
    work: n,
    kernel: { name: 'wasm rleDecode8', stats: dec['wasm rleDecode8'] },
    baselines: [
      { name: 'JS loop', stats: dec['JS loop'] },
      { name: 'JS fill per run', stats: dec['JS fill per run'] },
    ],
    target: 5,
  });
}

// ---------------------------------------------------------------------------------------------
// Radix sort: 2^24 random u32 keys; f32 keys of mixed sign and magnitude.

for (const kind of ['u32', 'f32']) {
  reset();
  const n = SIZES.sortKeys;
  const next = rng(kind === 'u32' ? 2 : 3);
  const pristine = new Uint32Array(n);
  if (kind === 'u32') for (let i = 0; i < n; i++) pristine[i] = next();
  else {
    const f = new Float32Array(pristine.buffer);
    for (let i = 0; i < n; i++) f[i] = (next() / 2 ** 32 - 0.5) * 2 ** ((next() % 40) - 20);
  }
  const keysPtr = alloc(n * 4);
  const tmpPtr = alloc(n * 4);
  const scratchPtr = alloc(SORT_SCRATCH_BYTES);
  const keys = () => view(Uint32Array, keysPtr, n);
  const keyKind = kind === 'u32' ? KEY_KIND.U32 : KEY_KIND.F32;
  const jsKeys = kind === 'u32' ? new Uint32Array(n) : new Float32Array(n);
  const jsBits = new Uint32Array(jsKeys.buffer);

  keys().set(pristine);
  const where = k.radixSort32(keysPtr, tmpPtr, 0, 0, n, keyKind, scratchPtr);
  const sorted = view(Uint32Array, where ? tmpPtr : keysPtr, n);
  jsBits.set(pristine);
  jsKeys.sort();
  if (sorted.some((x, i) => x !== jsBits[i])) throw new Error(`radixSort32 ${kind} disagrees with TypedArray.prototype.sort`);

  await warmUp(() => {
    keys().set(pristine);
    k.radixSort32(keysPtr, tmpPtr, 0, 0, n, keyKind, scratchPtr);
  });
  const s = measure([
    { name: `wasm radixSort32 ${kind}`, fn: () => k.radixSort32(keysPtr, tmpPtr, 0, 0, n, keyKind, scratchPtr), beforeEach: () => keys().set(pristine) },
    { name: `${kind === 'u32' ? 'Uint32Array' : 'Float32Array'}.prototype.sort`, fn: () => jsKeys.sort(), beforeEach: () => jsBits.set(pristine), iterations: SLOW_ITERATIONS },
  ]);
  const [kernelName, baseName] = Object.keys(s);
  record({
    figure: `radix sort ${kind}, 2^${Math.log2(n)} keys`,
    unit: 'M keys/s',
    unitScale: 1e6,
    work: n,
    kernel: { name: kernelName, stats: s[kernelName] },
    baselines: [{ name: baseName, stats: s[baseName] }],
    target: kind === 'u32' ? 120 : 100,
  });
}

// ---------------------------------------------------------------------------------------------
// Radix sort of 64-bit keys: 2^23 random u64 keys (the bytes of the 2^24 u32 keys above); f64
// keys of mixed sign and magnitude. Eight digits a key against four: no target was set for them,
// half the 32-bit targets stand in (the same bytes at half the keys).

for (const kind of ['u64', 'f64']) {
  reset();
  const n = SIZES.sortKeys / 2;
  const next = rng(kind === 'u64' ? 5 : 6);
  const pristine = new BigUint64Array(n);
  if (kind === 'u64') {
    const words = new Uint32Array(pristine.buffer);
    for (let i = 0; i < 2 * n; i++) words[i] = next();
  } else {
    const f = new Float64Array(pristine.buffer);
    for (let i = 0; i < n; i++) f[i] = (next() / 2 ** 32 - 0.5) * 2 ** ((next() % 80) - 40);
  }
  const keysPtr = alloc(n * 8);
  const tmpPtr = alloc(n * 8);
  const scratchPtr = alloc(SORT64_SCRATCH_BYTES);
  const keys = () => view(BigUint64Array, keysPtr, n);
  const keyKind = kind === 'u64' ? KEY_KIND.U64 : KEY_KIND.F64;
  const jsKeys = kind === 'u64' ? new BigUint64Array(n) : new Float64Array(n);
  const jsBits = new BigUint64Array(jsKeys.buffer);

  keys().set(pristine);
  const where = k.radixSort64(keysPtr, tmpPtr, 0, 0, n, keyKind, scratchPtr);
  const sorted = view(BigUint64Array, where ? tmpPtr : keysPtr, n);
  jsBits.set(pristine);
  jsKeys.sort();
  if (sorted.some((x, i) => x !== jsBits[i])) throw new Error(`radixSort64 ${kind} disagrees with TypedArray.prototype.sort`);

  await warmUp(() => {
    keys().set(pristine);
    k.radixSort64(keysPtr, tmpPtr, 0, 0, n, keyKind, scratchPtr);
  });
  const baseName = `${kind === 'u64' ? 'BigUint64Array' : 'Float64Array'}.prototype.sort`;
  const s = measure([
    {
      name: `wasm radixSort64 ${kind}`,
      fn: () => k.radixSort64(keysPtr, tmpPtr, 0, 0, n, keyKind, scratchPtr),
      beforeEach: () => keys().set(pristine),
    },
    { name: baseName, fn: () => jsKeys.sort(), beforeEach: () => jsBits.set(pristine), iterations: SLOW_ITERATIONS },
  ]);
  record({
    figure: `radix sort ${kind}, 2^${Math.log2(n)} keys`,
    unit: 'M keys/s',
    unitScale: 1e6,
    work: n,
    kernel: { name: `wasm radixSort64 ${kind}`, stats: s[`wasm radixSort64 ${kind}`] },
    baselines: [{ name: baseName, stats: s[baseName] }],
    target: kind === 'u64' ? 60 : 50,
  });
}

// ---------------------------------------------------------------------------------------------
// Exclusive scan of 2^26 u32, out of place.

{
  reset();
  const n = SIZES.scanElements;
  const next = rng(4);
  const inPtr = alloc(n * 4);
  const outPtr = alloc(n * 4);
  const input = view(Uint32Array, inPtr, n);
  for (let i = 0; i < n; i++) input[i] = next() & 0xffff;
  const jsIn = input.slice();
  const jsOut = new Uint32Array(n);
  const carry = k.scanU32(inPtr, outPtr, n, 0, 0) >>> 0;
  if (carry !== jsExclusiveScan(jsIn, jsOut) || view(Uint32Array, outPtr, n).some((x, i) => x !== jsOut[i])) throw new Error('scanU32 disagrees with the JS scan');

  await warmUp(() => k.scanU32(inPtr, outPtr, n, 0, 0));
  const s = measure([
    { name: 'wasm scanU32 exclusive', fn: () => k.scanU32(inPtr, outPtr, n, 0, 0) },
    { name: 'JS loop', fn: () => jsExclusiveScan(jsIn, jsOut) },
    { name: 'memcpy (TypedArray.prototype.set)', fn: () => view(Uint32Array, outPtr, n).set(view(Uint32Array, inPtr, n)) },
  ]);
  record({
    figure: `exclusive scan u32, 2^${Math.log2(n)} elements`,
    unit: 'G elements/s',
    unitScale: 1e9,
    work: n,
    kernel: { name: 'wasm scanU32 exclusive', stats: s['wasm scanU32 exclusive'] },
    baselines: [
      { name: 'JS loop', stats: s['JS loop'] },
      { name: 'memcpy (TypedArray.prototype.set)', stats: s['memcpy (TypedArray.prototype.set)'] },
    ],
    target: 1.6,
  });
}

// ---------------------------------------------------------------------------------------------
// Report

const fmt = (x) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));
const span = (r) => `${fmt(r.median)} (${fmt(r.min)}..${fmt(r.max)})`;
const rows = [];
for (const r of results) {
  rows.push({
    figure: r.figure,
    implementation: r.kernel.name,
    [`rate: median (min..max)`]: `${span(r.kernel.rate)} ${r.unit}`,
    'x baseline': '',
    target: `>= ${r.target} ${r.unit}${r.ratioTarget ? `, >= ${r.ratioTarget}x ${r.baselines[0].name}` : ''}`,
    result: r.pass ? 'PASS' : 'MISS',
  });
  for (const b of r.baselines) {
    rows.push({
      figure: '',
      implementation: `  ${b.name}`,
      [`rate: median (min..max)`]: `${span(b.rate)} ${r.unit}`,
      'x baseline': `${fmt(b.ratio)}x`,
      target: '',
      result: '',
    });
  }
}

const machine = machineInfo();
console.log(`parle CPU kernels, one thread, build/parle.wasm (SIMD)${quick ? ', --quick (1/4 sizes)' : ''}`);
console.log(`${machine.cpu}, ${machine.cores} logical cores, Node ${machine.node}, ${machine.platform}`);
printTable(rows);
console.log('\n"x baseline": the kernel\'s median rate over the baseline\'s median rate. PASS/MISS: the kernel\'s median against the target.');

writeResults(
  {
    'cpu-kernels.json': {
      benchmark: 'cpu-kernels',
      quick,
      machine,
      build: 'build/parle.wasm (SIMD)',
      threads: 1,
      iterations: { kernels: ITERATIONS, slowBaselines: SLOW_ITERATIONS, warmup: 1 },
      results,
    },
  },
  { quick },
);
