// The error-bounded lossy mode (issue 16) against Haugen's ratio-vs-SNR table (MSc thesis, 2009,
// Table 5.3 and section 5.3: 64^3 cube 27.9x at 24.67 dB, 128^3 cube 32.3x), on the suite's
// seismic cubes (bench/suite/data.mjs) and a real float image (data/lossy/, ITK's MRI slice); and
// the f64 mode (docs/format.md, Stage 5, f64) beside them: the 128^3 cube as f64 (the same values,
// smooth) and, when the corpus is fetched (bench/corpus/fetch.sh; or PARLE_CORPUS_DIR), its f64
// atom records pdb_atoms_f64.f64 (3-decimal coordinates, 2-decimal occupancy and B-factor), also
// at abs 5e-4 and 5e-3 (half a unit of the coarsest and finest printed digit):
//
//   parle lossless v2 ('auto')                  the baseline of the 2x target (f64: lossless v4, predicted)
//   parle errorBound { abs }, abs = 1e-1 .. 1e-6 of the data's range: ratio, SNR (his eq. 5.1,
//     RMS amplitudes), the largest error / abs (<= 1 on every element: checked), MB/s
//   parle errorBound at Haugen's SNR (abs from the SNR: noise RMS of a uniform quantizer step/sqrt 12)
//   quantize + zstd-wasm -1 / -3: the same codes (zigzag u32) through zstd instead of the v2 stages
//   Haugen's own quantizer (8-bit, dead zone beta 0.6, eq. 2.1 / 2.2a) + parle lossless, at his SNR
//
// Targets (PASS / MISS): on the seismic cubes, the ratio at abs = 1e-3 of the range >= 2x lossless
// v2's; quantize + compress >= 1 GB/s on one thread (workers: 1). Speeds are one thread, medians.
//
// Usage: npm run bench:lossy [-- --quick] [--out DIR]; writes lossy.json and a chart
// lossy-ratio-vs-error.svg (ratio against abs / range) into bench/results/<machine>/ (quick: bench/.quick/).
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import * as zstd from '@bokuweb/zstd-wasm';
import { createEngine } from '../dist/node/index.js';
import { seismicVolume, quantizeDeadZone, snrDb as haugenSnrDb, stepScaleForSnr } from './suite/data.mjs';
import { lineChart } from './suite/svg.mjs';
import { finiteRange } from './lib/files.mjs';
import { machineInfo, ROOT as root, writeResults } from './lib/results.mjs';

const quick = process.argv.includes('--quick');
const REL_BOUNDS = [1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6];
const HAUGEN_SNR = 24.67;
const TARGET_RATIO_X = 2;
const TARGET_GBPS = 1;
const REPS = quick ? 3 : 5;

const HAUGEN = {
  cite: 'Haugen, Seismic Data Compression and GPU Memory Latency, MSc thesis, NTNU, 2009, Table 5.3 and section 5.3',
  rows: [
    { cube: '64^3', ratio: 1 / 0.0358, snrDb: 24.67, method: 'subband transform + dead-zone quantizer (beta 0.6) + RLE + Huffman' },
    { cube: '128^3', ratio: 1 / 0.031, snrDb: null, method: 'same (SNR not given)' },
  ],
};

await zstd.init();
const engine = await createEngine({ workers: 1, gpu: 'off', calibration: 'skip' });

// ---- data ---------------------------------------------------------------------------------------

const datasets = [];
for (const edge of quick ? [64, 128] : [64, 128, 256]) {
  datasets.push({ name: `seismic ${edge}^3`, seismic: true, values: seismicVolume(edge), source: 'bench/suite/data.mjs seismicVolume (synthetic, Haugen layout)' });
}
const brain = new Float32Array((await readFile(join(root, 'data/lossy/brain-slice-magnitude.f32'))).buffer.slice(0));
datasets.push({ name: 'MRI slice 217x181 (ITK, real)', seismic: false, values: brain, source: 'data/lossy/SOURCE.md (Debian insighttoolkit5-examples, Apache-2.0)' });
// f64: the 128^3 cube's values as doubles, and the corpus's f64 atom records when present
datasets.push({ name: 'seismic 128^3 as f64', seismic: false, values: Float64Array.from(datasets[1].values), source: 'seismicVolume(128) as f64 (smooth)' });
const corpusDir = process.env.PARLE_CORPUS_DIR ?? join(root, 'bench/corpus/data');
const atoms = join(corpusDir, 'pdb_atoms_f64.f64');
if (existsSync(atoms)) {
  datasets.push({
    name: 'pdb_atoms_f64 [1067208, 5] (corpus, real)',
    seismic: false,
    values: new Float64Array((await readFile(atoms)).buffer.slice(0)),
    source: 'bench/corpus/SOURCE.md (theseus-examples, public domain)',
    absBounds: [5e-4, 5e-3],
  });
} else {
  console.error(`(no ${atoms}: the f64 corpus array is left out; bench/corpus/fetch.sh fetches it)`);
}

// ---- measures -----------------------------------------------------------------------------------

/** SNR in dB (Haugen's eq. 5.1: RMS amplitudes) and the largest |x - y|. */
function errors(x, y) {
  let s = 0;
  let e = 0;
  let max = 0;
  for (let i = 0; i < x.length; i++) {
    const d = x[i] - y[i];
    s += x[i] * x[i];
    e += d * d;
    max = Math.max(max, Math.abs(d));
  }
  return { snrDb: 10 * Math.log10(s / Math.max(e, 1e-300)), maxError: max };
}

/** Median milliseconds of `fn` over REPS runs after one warm-up. */
async function time(fn) {
  await fn();
  const ms = [];
  for (let r = 0; r < REPS; r++) {
    const t0 = performance.now();
    await fn();
    ms.push(performance.now() - t0);
  }
  ms.sort((a, b) => a - b);
  return ms[Math.floor(ms.length / 2)];
}

const mbps = (bytes, ms) => bytes / 1e6 / (ms / 1e3);

/** The quantizer's codes (zigzag u32), as ts/codec/quantize.ts defines them, in plain JS (for the zstd peer; f64 in f64). */
function quantizeCodes(values, abs) {
  const f64 = values instanceof Float64Array;
  const round = f64 ? (v) => v : Math.fround;
  const step = f64 ? Math.min(2 * abs * (1 - 2 ** -5), 2 ** 960) : Math.fround(Math.min(2 * abs * (1 - 2 ** -5), 2 ** 100));
  const inv = round(1 / step);
  const lim = step * 2 ** (f64 ? 30 : 23);
  const codes = new Uint32Array(values.length);
  for (let i = 0; i < values.length; i++) {
    const x = values[i];
    if (!Number.isFinite(x) || Math.abs(x) > lim) {
      codes[i] = 0xffffffff;
      continue;
    }
    const q = Math.round(round(x * inv));
    codes[i] = ((q << 1) ^ (q >> 31)) >>> 0;
  }
  return codes;
}

// ---- runs ---------------------------------------------------------------------------------------

const results = [];
for (const d of datasets) {
  const x = d.values;
  const bytes = x.byteLength;
  const range = finiteRange(x);
  console.error(`${d.name}: ${bytes} bytes, range ${range.toPrecision(4)}`);
  const rows = [];
  const lossless = await engine.compress(x);
  rows.push({
    method: x instanceof Float64Array ? 'parle lossless (v4: predicted)' : 'parle lossless v2',
    bytes: lossless.length,
    ratio: bytes / lossless.length,
    snrDb: Infinity,
    compressMBps: mbps(bytes, await time(() => engine.compress(x))),
    decompressMBps: mbps(bytes, await time(() => engine.decompress(lossless))),
  });
  for (const level of [1, 3]) {
    const z = zstd.compress(new Uint8Array(x.buffer, x.byteOffset, bytes), level);
    rows.push({ method: `zstd-wasm -${level} (lossless)`, bytes: z.length, ratio: bytes / z.length, snrDb: Infinity, compressMBps: mbps(bytes, await time(() => zstd.compress(new Uint8Array(x.buffer), level))) });
  }
  // abs at Haugen's SNR: noise RMS = step / sqrt(12) = rms(x) 10^(-snr / 20)
  let sq = 0;
  for (const v of x) sq += v * v;
  const rms = Math.sqrt(sq / x.length);
  const absAtSnr = ((rms * 10 ** (-HAUGEN_SNR / 20) * Math.sqrt(12)) / 2) * (1 - 2 ** -5);
  const bounds = [
    ...REL_BOUNDS.map((rel) => ({ rel, abs: rel * range })),
    ...(d.absBounds ?? []).map((abs) => ({ rel: abs / range, abs })),
    { rel: absAtSnr / range, abs: absAtSnr, atSnr: true },
  ];
  for (const { rel, abs, atSnr } of bounds) {
    const packed = await engine.compress(x, { errorBound: { abs } });
    const y = await engine.decompress(packed);
    const { snrDb, maxError } = errors(x, y);
    if (!(maxError <= abs)) throw new Error(`${d.name}: bound ${abs} missed: largest error ${maxError}`);
    const pipelines = [...new Set((await engine.explainCodec(x, { errorBound: { abs } })).map((c) => c.pipeline))].join(', ');
    rows.push({
      method: atSnr ? `parle errorBound at Haugen's SNR` : `parle errorBound`,
      rel,
      abs,
      bytes: packed.length,
      ratio: bytes / packed.length,
      snrDb,
      maxErrorOverAbs: maxError / abs,
      compressMBps: mbps(bytes, await time(() => engine.compress(x, { errorBound: { abs } }))),
      decompressMBps: mbps(bytes, await time(() => engine.decompress(packed))),
      pipelines,
    });
    if (atSnr) continue;
    const codes = quantizeCodes(x, abs);
    const codeBytes = new Uint8Array(codes.buffer);
    for (const level of [1, 3]) {
      const z = zstd.compress(codeBytes, level);
      rows.push({
        method: `quantize + zstd-wasm -${level}`,
        rel,
        abs,
        bytes: z.length,
        ratio: bytes / z.length,
        snrDb,
        compressMBps: mbps(bytes, await time(() => zstd.compress(codeBytes, level))),
        note: 'zstd time only (codes made in plain JS)',
      });
    }
  }
  if (d.seismic) {
    // Haugen's own quantizer: 8-bit indices, dead zone beta 0.6, step coarsened to his SNR, then parle lossless
    const scale = stepScaleForSnr(x, HAUGEN_SNR);
    const q = quantizeDeadZone(x, 8, 0.6, scale);
    const packed = await engine.compress(q.indices);
    let maxError = 0;
    for (let i = 0; i < x.length; i++) maxError = Math.max(maxError, Math.abs(x[i] - (q.indices[i] - 128) * q.step));
    rows.push({
      method: `Haugen's quantizer (8-bit, beta 0.6, step x${scale}) + parle lossless`,
      bytes: packed.length,
      ratio: bytes / packed.length,
      snrDb: haugenSnrDb(x, q.indices, q.step),
      maxErrorOverRange: maxError / range,
      compressMBps: mbps(bytes, await time(async () => engine.compress(quantizeDeadZone(x, 8, 0.6, scale).indices))),
      note: 'no pointwise bound; his quantizer in plain JS is in the time',
    });
  }
  const at3 = rows.find((r) => r.method === 'parle errorBound' && r.rel === 1e-3);
  const targets = d.seismic
    ? {
        ratio: { want: `>= ${TARGET_RATIO_X}x lossless v2 at abs = 1e-3 of the range`, got: at3.ratio / rows[0].ratio, pass: at3.ratio >= TARGET_RATIO_X * rows[0].ratio },
        speed: { want: `quantize + compress >= ${TARGET_GBPS} GB/s on one thread`, gotGBps: at3.compressMBps / 1000, pass: at3.compressMBps >= TARGET_GBPS * 1000 },
      }
    : undefined;
  results.push({ dataset: d.name, source: d.source, bytes, range, rows, targets });
}
await engine.destroy();

// ---- report -------------------------------------------------------------------------------------

const f = (v, p = 3) => (v === undefined ? '' : v === Infinity ? 'lossless' : typeof v === 'number' ? +v.toPrecision(p) + '' : String(v));
console.log(`\nparle lossy mode (issue 16), one thread; ${os.cpus()[0]?.model ?? 'cpu'}, ${os.cpus().length} cores, Node ${process.version}${quick ? ', --quick' : ''}`);
console.log(`\nHaugen (${HAUGEN.cite}):`);
for (const r of HAUGEN.rows) console.log(`  ${r.cube}: ${r.ratio.toFixed(1)}x${r.snrDb ? ` at ${r.snrDb} dB` : ''} (${r.method})`);
const problems = [];
for (const res of results) {
  console.log(`\n${res.dataset} (${(res.bytes / 2 ** 20).toFixed(2)} MiB, range ${f(res.range, 4)}; ${res.source})`);
  console.log('| method | abs / range | ratio | SNR dB | max err / abs | compress MB/s | decompress MB/s | pipelines |');
  console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |');
  for (const r of res.rows) {
    console.log(`| ${r.method} | ${f(r.rel, 2)} | ${f(r.ratio)} | ${f(r.snrDb)} | ${f(r.maxErrorOverAbs)} | ${f(r.compressMBps, 4)} | ${f(r.decompressMBps, 4)} | ${r.pipelines ?? r.note ?? ''} |`);
  }
  if (res.targets) {
    for (const [k, t] of Object.entries(res.targets)) {
      const line = `${t.pass ? 'PASS' : 'MISS'} ${res.dataset}: ${t.want}: ${k === 'ratio' ? f(t.got) + 'x' : f(t.gotGBps) + ' GB/s'}`;
      console.log(line);
      if (!t.pass) problems.push(line);
    }
  }
}

const out = {
  benchmark: 'lossy',
  quick,
  machine: machineInfo(),
  engine: { workers: 1, gpu: 'off', calibration: 'skip' },
  peer: '@bokuweb/zstd-wasm levels 1 and 3',
  haugen: HAUGEN,
  targets: { ratioVsLosslessAt1e3: TARGET_RATIO_X, compressGBps: TARGET_GBPS },
  results,
  problems,
  pass: problems.length === 0,
};
const chart = lineChart({
  title: 'parle lossy: ratio against the error bound',
  xLabel: 'abs / data range',
  yLabel: 'compression ratio (x)',
  xBase: 10,
  series: results.flatMap((res) => [
    { name: `${res.dataset}: parle`, points: res.rows.filter((r) => r.method === 'parle errorBound').map((r) => [r.rel, r.ratio]) },
    { name: `${res.dataset}: q + zstd -3`, points: res.rows.filter((r) => r.method === 'quantize + zstd-wasm -3').map((r) => [r.rel, r.ratio]) },
  ]),
});
writeResults(
  { 'lossy.json': JSON.stringify(out, (k, v) => (v === Infinity ? 'lossless' : v), 2) + '\n', 'lossy-ratio-vs-error.svg': chart },
  { quick },
);
console.log(problems.length ? `${problems.length} MISS` : 'all targets PASS');
