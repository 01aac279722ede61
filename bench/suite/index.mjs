// parle's comparison benchmark suite (issue 6): parle against its peers and against the figures
// of the papers it builds on (Rutter 2011, Gruber 2013, Haugen 2009), with charts.
//
//   npm run build && node bench/suite/index.mjs [--quick] [--json FILE] [--gpu-machine] [--out DIR]
//   parle bench [--quick] [--json FILE] [--gpu-machine] [--out DIR]      (the same, from the CLI)
//
// Writes report.md and *.svg into DIR (default bench/report/; --quick: bench/.quick/report/,
// git-ignored; with --gpu-machine: $OUT when set), and the results into suite.json of
// bench/results/<machine>/ (bench/lib/results.mjs; --quick: bench/.quick/<machine>/; with an
// output DIR: DIR/<machine>/). --json FILE writes the results JSON there too.
//   node bench/suite/index.mjs --rewrite-report [FILE] [--out DIR]
// rewrites the report (default bench/report/) from a results file (default this machine's
// suite.json), folding in the other machines' runs (report.mjs findCompanions).
//
// Modes:
//   --quick         about 90 s on 2 idle cores: sizes up to 1 MiB, Rutter's files at 128^3,
//                   Haugen's cube at 128^3, Gruber's sizes scaled to 2^20; GPU cases above 256 KiB
//                   skipped (the local GPU is SwiftShader, a software Vulkan: a 1 MiB sort ~1.6 s).
//   (default)       the full run: sizes up to 64 MiB, Rutter's files at 512^3, Haugen's cubes at
//                   128^3 and 512^3, Gruber's 2^25 / 2^26; GPU cases above 2 MiB skipped locally.
//   --gpu-machine   the full run on a real GPU (bench/gpu-machine.sh run suite): no GPU cap, the
//                   GPU required, output to $OUT. CUDA anchors (bench/cuda-anchors.py's output)
//                   found at DIR/cuda-anchors.txt are folded into the report.
import { resultsDir } from '../lib/results.mjs';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { repetitionPolicy } from './measure.mjs';
import { initPeers } from './peers.mjs';
import { ratesOf } from './measure.mjs';
import { writeReport, findCompanions } from './report.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SWIFTSHADER = '/usr/lib/chromium/vk_swiftshader_icd.json';
const KiB = 1024;
const MiB = 2 ** 20;

/** Sizes of each mode. */
export function sizesFor(mode) {
  const quick = mode === 'quick';
  const pow4 = (from, to) => {
    const out = [];
    for (let b = from; b <= to; b *= 4) out.push(b);
    return out;
  };
  return {
    sweep: quick ? pow4(4 * KiB, 1 * MiB) : pow4(4 * KiB, 64 * MiB),
    rlePackMax: quick ? 256 * KiB : 4 * MiB,
    deflateMax: mode === 'gpu-machine' ? 16 * MiB : 160 * MiB,
    // the GPU machine's 10-minute limit: its peers (CPU codecs, measured here too) stop at 16 MiB
    peerSweepMax: mode === 'gpu-machine' ? 16 * MiB : 64 * MiB,
    haugenPeerMax: mode === 'gpu-machine' ? 16 * MiB : 2 ** 40,
    kindKeys: quick ? 2 ** 18 : 2 ** 22,
    kindGpuKeys: quick ? 2 ** 14 : mode === 'gpu-machine' ? 2 ** 22 : 2 ** 16,
    gruberScanLog2: quick ? 20 : 26,
    gruberSortLog2: quick ? [19, 20] : [25, 26],
    rutterEdge: quick ? 128 : 512,
    rutterGpuEdge: mode === 'gpu-machine' ? 512 : 64,
    haugenEdges: quick ? [128] : [128, 512],
  };
}

/** Parses the suite's flags (the CLI passes its own). */
export function parseSuiteArgs(argv) {
  const { values } = parseArgs({
    args: argv,
    options: {
      quick: { type: 'boolean', default: false },
      json: { type: 'string' },
      'gpu-machine': { type: 'boolean', default: false },
      out: { type: 'string' },
      only: { type: 'string' },
    },
  });
  return { quick: values.quick, json: values.json, gpuMachine: values['gpu-machine'], out: values.out, only: values.only };
}

function machine() {
  return {
    cpu: os.cpus()[0]?.model ?? 'unknown',
    logicalCores: os.cpus().length,
    totalMemoryBytes: os.totalmem(),
    loadAverageAtStart: os.loadavg(),
    platform: os.platform(),
    release: os.release(),
    arch: os.arch(),
    node: process.version,
    v8: process.versions.v8,
  };
}

/**
 * Runs the suite. options: { quick, gpuMachine, out, json, only (comma list of groups), log }.
 * Resolves to the results object (also written as JSON, with the report and charts).
 */
export async function runSuite(options = {}) {
  const started = performance.now();
  const mode = options.gpuMachine ? 'gpu-machine' : options.quick ? 'quick' : 'full';
  const log = options.log ?? ((line) => process.stderr.write(`[${((performance.now() - started) / 1000).toFixed(1)}s] ${line}\n`));
  // The local GPU is SwiftShader (a software Vulkan driver of Debian's chromium package); point Vulkan at it before Dawn loads.
  process.env.XDG_RUNTIME_DIR ??= '/tmp'; // Dawn's Vulkan loader complains without one
  if (mode !== 'gpu-machine' && !process.env.VK_ICD_FILENAMES && existsSync(SWIFTSHADER)) process.env.VK_ICD_FILENAMES = SWIFTSHADER;
  // a quick run goes to bench/.quick/ unless --out says otherwise (bench/lib/results.mjs)
  const out = options.out ?? (mode === 'gpu-machine' ? process.env.OUT : undefined);
  const outDir = out !== undefined ? resolve(out) : join(ROOT, mode === 'quick' ? 'bench/.quick/report' : 'bench/report');
  const resultsFile = join(resultsDir({ quick: mode === 'quick', out, gpu: mode === 'gpu-machine' }), 'suite.json');

  const { createEngine, VERSION } = await import('../../dist/node/index.js');
  const cases = await import('./cases.mjs');
  await initPeers();
  const engine = await createEngine({ gpu: mode === 'gpu-machine' ? 'require' : 'auto' });
  await engine.calibrate();
  const policy = { ...repetitionPolicy(mode === 'quick'), giveUpMs: mode === 'quick' ? 1500 : 8000 };
  const gpuCap = mode === 'gpu-machine' ? Infinity : mode === 'quick' ? 256 * KiB : 2 * MiB;
  const gpuCapWhy =
    mode === 'gpu-machine' ? 'none' : 'the local GPU is SwiftShader, a software renderer: a GPU sort of 1 MiB takes about 1.6 s here';

  const results = {
    suite: 'parle comparison benchmarks (issue 6)',
    parle: VERSION,
    mode,
    date: new Date().toISOString(),
    machine: machine(),
    adapter: engine.adapter,
    gpuDriver: engine.adapter ? (process.env.VK_ICD_FILENAMES ?? 'system Vulkan driver') : null,
    workers: engine.workers,
    gpuCapBytes: Number.isFinite(gpuCap) ? gpuCap : null,
    gpuCapWhy,
    policy,
    sizes: sizesFor(mode),
    costModelRates: engine.model.rates,
    figures: [],
    skipped: [],
    notes: [],
  };
  log(`mode ${mode}; ${results.machine.cpu}, ${results.machine.logicalCores} cores, Node ${process.version}; workers ${engine.workers}; adapter ${engine.adapter ? `${engine.adapter.vendor} ${engine.adapter.architecture} ${engine.adapter.device} ${engine.adapter.description}`.trim() : 'none'}`);

  const ctx = {
    engine,
    policy,
    gpuCap,
    gpuCapWhy,
    sizes: results.sizes,
    log,
    record(fig) {
      const entry = { ...fig, rate: ratesOf(fig.ms, fig.workBytes ?? fig.bytes) };
      for (const k of Object.keys(entry)) if (entry[k] === undefined) delete entry[k];
      results.figures.push(entry);
      return entry;
    },
    last: () => results.figures[results.figures.length - 1],
    skip(what, why) {
      results.skipped.push({ what, why });
    },
  };

  const groups = ['sweep', 'keyKinds', 'gruber', 'rutter', 'haugen', 'real'];
  const only = options.only ? options.only.split(',') : groups;
  await mkdir(outDir, { recursive: true });
  try {
    for (const g of groups) {
      if (!only.includes(g)) continue;
      const t0 = performance.now();
      await cases[g](ctx);
      results.notes.push(`${g}: ${((performance.now() - t0) / 1000).toFixed(1)} s`);
      // written after every group, so a run cut off by a time limit still leaves its figures
      await writeFile(resultsFile, JSON.stringify({ ...results, partial: true }, null, 2) + '\n');
    }
  } finally {
    await engine.destroy();
  }
  results.samples = ctx.samples;
  results.tookS = (performance.now() - started) / 1000;

  const companions = await findCompanions({ root: ROOT, outDir, mode });
  const { markdown, charts } = writeReport({ ...results, resultsFile: relative(ROOT, resultsFile) }, companions);
  await writeFile(resultsFile, JSON.stringify(results, null, 2) + '\n');
  await writeFile(join(outDir, 'report.md'), markdown);
  for (const [name, svg] of Object.entries(charts)) await writeFile(join(outDir, name), svg);
  if (options.json) await writeFile(resolve(options.json), JSON.stringify(results, null, 2) + '\n');
  log(`done in ${results.tookS.toFixed(1)} s; wrote ${resultsFile}, ${outDir}/report.md and ${Object.keys(charts).length} charts`);
  return results;
}

/** Rewrites report.md and the charts in `dir` from the results in `file` (after adding companions). */
export async function rewriteReport(file = join(resultsDir(), 'suite.json'), dir = join(ROOT, 'bench/report')) {
  const results = JSON.parse(await readFile(file, 'utf8'));
  const companions = await findCompanions({ root: ROOT, outDir: dir, mode: results.mode });
  const { markdown, charts } = writeReport({ ...results, resultsFile: relative(ROOT, file) }, companions);
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'report.md'), markdown);
  for (const [name, svg] of Object.entries(charts)) await writeFile(join(dir, name), svg);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  if (args[0] === '--rewrite-report') {
    const at = args.indexOf('--out');
    const file = args[1] !== undefined && args[1] !== '--out' ? resolve(args[1]) : undefined;
    await rewriteReport(file, at > 0 ? resolve(args[at + 1]) : undefined);
  } else await runSuite(parseSuiteArgs(args));
}
