// Codec 'auto' (docs/format.md) on one thread, beside @bokuweb/zstd-wasm level 1 in the same run,
// on the samples `npm start` uses (data/samples/):
//
//   1. ratio of 'auto' beside zstd-wasm -1 and beside codec 'rle' (version 1's RLE); and, at
//      64 KiB chunks, that no chunk of 'auto' is larger than the same chunk under 'rle' (up to 16
//      bytes over: the stream directory);
//   2. compress / decompress MB/s of 'auto' (input bytes / median time) beside zstd-wasm -1 on
//      the same bytes, as ratios.
// The Huffman kernels alone: bench/huffman-kernels.mjs; the corpus beside more peers: bench/corpus.mjs.
//
//   node build/build.mjs --quiet --no-types && node bench/codec.mjs [--quick] [--out DIR]
//
// Prints a table and PASS/MISS lines, writes bench/results/<machine>/codec.json (machine; per
// figure min / median / max, baseline, ratio, target, pass on the median).
// --quick: fewer iterations and less time per task (a smoke run; targets are for a full run).
import { Bench } from 'tinybench';
import * as zstd from '@bokuweb/zstd-wasm';
import { createEngine } from '../dist/node/index.js';
import { bytesOf, dataFiles, readArray, sameBytes } from './lib/files.mjs';
import { machineInfo, printTable, writeResults } from './lib/results.mjs';

const quick = process.argv.includes('--quick');
/** Per tinybench task: at least this many samples and this much time (ms). */
const ITERATIONS = quick ? 5 : 30;
const TIME_MS = quick ? 100 : 1000;

const KiB = 1 << 10;
const CHECK_CHUNK_BYTES = 64 * KiB;
const HEADER_BYTES = 32;
const ENTRY_BYTES = 32;
/** A v2 'rle' chunk and an 'auto' chunk may differ by the stream directory alone: 2 streams x 8 bytes. */
const DIRECTORY_SLACK_BYTES = 16;
const ZSTD_LEVEL = 1;

const TARGETS = {
  ratioVsZstd: { 't1-brain-labels': 0.9, 't1-kmeans-labels': 0.9, 't1-mri': 1, camera: 1 },
  compressVsZstd: 5,
  decompressVsZstd: 2,
};

// ---------------------------------------------------------------------------------------------
// Helpers

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

/** A few rounds of calls and a pause, so that the timed calls run optimized code. */
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

const samples = dataFiles({ corpus: false }).map((f) => ({ name: f.name.replace(/\.\w+$/, ''), data: readArray(f) }));

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
// Report

const fmt = (x) => (!Number.isFinite(x) ? String(x) : Math.abs(x) >= 100 ? x.toFixed(0) : Math.abs(x) >= 10 ? x.toFixed(1) : x.toFixed(2));
const span = (v) => (v.min === v.max ? fmt(v.median) : `${fmt(v.median)} (${fmt(v.min)}..${fmt(v.max)})`);

const machine = machineInfo();
console.log(`parle codec 'auto', one thread (workers: 1, gpu: off), beside zstd-wasm -${ZSTD_LEVEL}${quick ? ', --quick' : ''}`);
console.log(`${machine.cpu}, ${machine.cores} logical cores, Node ${machine.node}, ${machine.platform}`);

printTable(
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
  'Ratio (input bytes / output bytes), default chunk size',
);

printTable(
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
  `Per chunk, ${CHECK_CHUNK_BYTES / KiB} KiB chunks: payload of 'auto' minus payload of 'rle'`,
);

printTable(
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
  'Speed, MB/s of input bytes: median (min..max) of the tinybench samples',
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
        : `${fmt(r.kernel.value.median)} vs ${fmt(r.baselines[0].value.median)} MB/s = ${fmt(r.baselines[0].ratio)}x`;
  console.log(`${r.pass ? 'PASS' : 'MISS'}  ${r.figure}: ${detail} (target ${r.target})`);
}
if (notes.length) {
  console.log('\nNOTES:');
  for (const x of notes) console.log(`  ${x}`);
}
if (problems.length) {
  console.log('\nPROBLEMS (round trips):');
  for (const p of problems) console.log(`  ${p}`);
} else console.log('\nall round trips agree');

writeResults(
  {
    'codec.json': {
      benchmark: 'codec',
      quick,
      machine,
      engine: { workers: 1, gpu: 'off', calibration: 'skip' },
      build: 'dist/node (public API)',
      peer: `@bokuweb/zstd-wasm level ${ZSTD_LEVEL}`,
      threads: 1,
      iterations: { api: ITERATIONS, apiTimeMs: TIME_MS, warmup: 3 },
      targets: TARGETS,
      results,
      notes,
      problems,
      pass: results.every((r) => r.pass !== false) && problems.length === 0,
    },
  },
  { quick },
);
await engine.destroy();
