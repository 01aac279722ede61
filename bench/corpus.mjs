// The main job on real data (issue #31, codec v4 #44): compress and decompress of every array of
// the corpus (bench/corpus/, real arrays from Debian packages: bench/corpus/fetch.sh) and of
// data/samples, through the public API on the CPU path, beside the peers a user would pick
// instead, in the same process tree and run:
//   - parle at levels 1, 5 (the default) and 9, with 1 worker and with more (--workers), each
//     given the array's shape (bench/corpus/index.json, data/samples/*.json); one row
//     "parle L5 1w, no shape" (the array as flat, as container version 3 saw it); for the u32
//     RGBA pixels (retina_rgba.u32) also "parle L5 1w, u8 [h, w, 4]", the same bytes as u8
//     with the channels as the last axis;
//   - the version-2 writer (the code before container version 3, built from git into
//     bench/.baseline-v2/ on first use: the ratio baseline of issue #31), 1 worker;
//   - zstd-wasm -1 (@bokuweb/zstd-wasm) and lz4-wasm (lz4-wasm-nodejs), one thread;
//   - the outside anchors of bench/anchors.py (Blosc2 best filter with zstd 9 and zstd 1,
//     zstd -19, xz -9e, optipng -o2 for the images; one thread each), run per corpus file as
//     `python3 bench/anchors.py --only NAME` after parle's timings of that file (never beside
//     them); without python3, numpy, blosc2 or a tool a note says so and those rows are left
//     out (--no-anchors: none);
//   - the issue's other targets, with 1 worker: 4 MiB of random bytes, the lossy mode on each f32
//     file (a bound of a thousandth of its range), and the first 4 MiB of each file over 2
//     workers against 1 (when --workers lists 1 and 2).
// Speeds are input bytes (compress) or output bytes (decompress) per second, medians of repeated
// calls; each call returns a new array, as a user's does ("fresh"), and decompress is also timed
// into a reused `out` array ("reused"): on the 2-core VM a fresh array costs about 3 ms a MB in
// page faults (the host's, not parle's: a C malloc + memset does the same), which caps any
// fresh result near 0.35 GB/s there. The anchors' speeds are bench/anchors.py's (the command-line
// tools' include their process start; optipng's decoder is not timed).
//
//   node bench/corpus.mjs [--quick] [--workers 1,2] [--levels 1,5,9] [--files name,...]
//                         [--only NAME] [--out DIR] [--no-baseline] [--no-anchors]
//                         [--anchor-runs 3]
//
// --files: names or their beginnings, comma-separated; --only NAME: one file, by its name with
// or without the type suffix (dem_trinidad). Prints a table per file, a summary "ratio against
// the anchors" (parle L5 1w with the shape beside each anchor, * where parle's ratio is higher,
// and parle's speed as a multiple of zstd-wasm -1's) and PASS/MISS lines for the issue's
// targets; writes corpus.json and corpus.md into bench/results/<machine>/ (machine, per file
// and method: ratio, MB/s). --quick: the samples only, short timings (a check of the script;
// bench/.quick/).
import { parseArgs } from 'node:util';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as zstd from '@bokuweb/zstd-wasm';
import * as lz4 from 'lz4-wasm-nodejs';
import { compressBound, createEngine } from '../dist/node/index.js';
import { bytesOf, dataFiles, readArray, sameBytes } from './lib/files.mjs';
import { timeCalls } from './lib/measure.mjs';
import { machineInfo, median, printTable, ROOT as root, writeResults } from './lib/results.mjs';

const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean' },
    workers: { type: 'string', default: '1,2' },
    files: { type: 'string' },
    only: { type: 'string' },
    out: { type: 'string' },
    'no-baseline': { type: 'boolean' },
    'no-anchors': { type: 'boolean' },
    'anchor-runs': { type: 'string', default: '3' },
    levels: { type: 'string', default: '1,5,9' },
    help: { type: 'boolean', short: 'h' },
  },
});
if (args.help) {
  // the usage: this file's header
  const text = readFileSync(new URL(import.meta.url), 'utf8');
  console.log(text.slice(0, text.indexOf('\nimport ')).replace(/^\/\/ ?/gm, ''));
  process.exit(0);
}
const quick = args.quick === true;
const workerCounts = args.workers.split(',').map(Number);
const levels = args.levels.split(',').map(Number);
/** Per measurement: at least this many calls and this much time. */
const MIN_RUNS = quick ? 3 : 7;
const MIN_MS = quick ? 100 : 700;
const BASELINE_COMMIT = '00ae53d';

/** The shapes: bench/corpus/index.json's, and data/samples/<name>.json's. */
const INDEX = JSON.parse(readFileSync(join(root, 'bench/corpus/index.json'), 'utf8'));
function shapeOf(f) {
  if (f.source === 'corpus') return INDEX.find((e) => e.file === f.name)?.shape;
  const side = join(root, 'data/samples', f.name.replace(/\.[^.]+$/, '.json'));
  return existsSync(side) ? JSON.parse(readFileSync(side, 'utf8')).shape : undefined;
}

/** The arrays: the corpus (when fetched; not with --quick) and the samples; --only: one of them. */
function loadFiles() {
  let chosen = dataFiles({ corpus: !quick, files: args.only ? undefined : args.files });
  if (args.only) {
    chosen = chosen.filter((f) => args.only === f.name || args.only === f.name.replace(/\.[^.]+$/, ''));
    if (chosen.length === 0) throw new Error(`--only ${args.only}: no such file (names: bench/corpus/index.json, data/samples)`);
  }
  return chosen.map((f) => {
    const data = readArray(f);
    let shape = shapeOf(f);
    if (shape && shape.reduce((a, d) => a * d, 1) !== data.length) {
      console.warn(`warning: ${f.name}: shape [${shape}] does not hold ${data.length} elements; run without a shape`);
      shape = undefined;
    }
    return { ...f, data, bytes: bytesOf(data), shape };
  });
}

/** Median ms of `fn` (awaited) after two warm-up calls, over at least MIN_RUNS calls and MIN_MS (bench/lib/measure.mjs). */
const timeMs = async (fn) => (await timeCalls(fn, { minRuns: MIN_RUNS, minMs: MIN_MS })).medianMs;

const mbps = (bytes, ms) => bytes / ms / 1e3;

/** The version-2 writer: the repository at BASELINE_COMMIT, built once into bench/.baseline-v2/. */
async function loadBaseline() {
  const dir = join(root, 'bench/.baseline-v2');
  const entry = join(dir, 'dist/node/index.js');
  if (!existsSync(entry)) {
    try {
      rmSync(dir, { recursive: true, force: true });
      mkdirSync(dir, { recursive: true });
      const tar = execFileSync(
        'git',
        ['-C', root, 'archive', BASELINE_COMMIT, 'assembly', 'build', 'shaders', 'ts', 'package.json', 'tsconfig.json'],
        {
          maxBuffer: 1 << 28,
        },
      );
      execFileSync('tar', ['-x', '-C', dir], { input: tar });
      // relative, so the folder still works where the repository is copied (the device machine)
      symlinkSync('../../node_modules', join(dir, 'node_modules'));
      execFileSync('node', ['build/build.mjs', '--quiet', '--no-types'], { cwd: dir, stdio: 'inherit' });
    } catch (e) {
      console.warn(`no version-2 baseline (${e.message.split('\n')[0]})`);
      return undefined;
    }
  }
  return import(pathToFileURL(entry).href);
}

/**
 * What bench/anchors.py can run here: { ok, notes } (ok false: none of it). A missing optional
 * piece (blosc2, a command) only leaves its anchors out; anchors.py does that with --skip-missing.
 */
function anchorsAvailable() {
  const notes = [];
  if (args['no-anchors']) return { ok: false, notes: ['--no-anchors: the anchors of bench/anchors.py are left out'] };
  const py = spawnSync('python3', ['-c', 'import numpy'], { encoding: 'utf8' });
  if (py.error || py.status !== 0) {
    const why = py.error ? 'python3 not found' : 'python3 has no numpy';
    return { ok: false, notes: [`${why}: the anchors of bench/anchors.py (Blosc2, zstd -19, xz -9e, optipng) are left out`] };
  }
  if (spawnSync('python3', ['-c', 'import blosc2']).status !== 0)
    notes.push('python3 has no blosc2 (pip install blosc2): the Blosc2 anchors are left out');
  for (const tool of ['zstd', 'xz', 'optipng']) {
    if (spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0)
      notes.push(`${tool} not found (apt-get install zstd xz-utils optipng): its anchor is left out`);
  }
  return { ok: true, notes };
}

/** The anchors of one corpus file: bench/anchors.py's rows, or [] (with a note) where it fails. */
function runAnchors(file) {
  const r = spawnSync('python3', [join(root, 'bench/anchors.py'), '--only', file.name, '--runs', String(anchorRuns), '--skip-missing'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 1 << 26,
  });
  if (r.error || r.status !== 0) {
    const note = `${file.name}: bench/anchors.py failed (${r.error?.message ?? `exit ${r.status}`}): its anchors are left out`;
    console.warn(`note: ${note}`);
    anchorNotes.push(note);
    return [];
  }
  return JSON.parse(r.stdout);
}

const anchorRuns = Number(args['anchor-runs']);
const { ok: anchorsOk, notes: anchorNotes } = anchorsAvailable();
for (const n of anchorNotes) console.warn(`note: ${n}`);

await zstd.init();
const files = loadFiles();
const baseline = args['no-baseline'] ? undefined : await loadBaseline();
const rows = [];
const engines = new Map();
for (const w of workerCounts) engines.set(w, await createEngine({ workers: w, gpu: 'off', calibration: 'skip' }));
const baseEngine = baseline ? await baseline.createEngine({ workers: 1, gpu: 'off', calibration: 'skip' }) : undefined;

const machine = machineInfo();
console.log(`machine: ${machine.cpu}, ${machine.cores} cores, node ${machine.node}`);
for (const file of files) {
  const B = file.bytes.length;
  const row = { file: file.name, type: file.type, shape: file.shape ?? null, bytes: B, source: file.source, methods: {} };
  const add = (name, m) => {
    row.methods[name] = m;
    const fmt = (x) => (x == null ? '     -' : x.toFixed(0).padStart(6));
    console.log(
      `${file.name.padEnd(26)} ${name.padEnd(30)} ratio ${m.ratio.toFixed(3).padStart(7)}  c ${fmt(m.compress)}  d ${fmt(m.decompress)}` +
        (m.decompressReused !== undefined ? `  d(out) ${fmt(m.decompressReused)}` : '') +
        ' MB/s',
    );
  };
  /** One parle row: `data` (a view of the file's bytes) with `shape` at `level` on `engine`. */
  const parle = async (name, engine, level, data, shape) => {
    const opts = shape ? { level, shape } : { level };
    const packed = await engine.compress(data, opts);
    const back = await engine.decompress(packed);
    if (!sameBytes(bytesOf(back), file.bytes)) throw new Error(`${file.name}: ${name} does not round-trip`);
    const out = new data.constructor(data.length);
    add(name, {
      ratio: B / packed.length,
      compress: mbps(B, await timeMs(() => engine.compress(data, opts))),
      decompress: mbps(B, await timeMs(() => engine.decompress(packed))),
      decompressReused: mbps(B, await timeMs(() => engine.decompress(packed, { out }))),
      ...(shape ? { shape } : {}),
    });
  };
  for (const [w, engine] of engines) {
    for (const level of levels) await parle(`parle L${level} ${w}w`, engine, level, file.data, file.shape);
  }
  const first = engines.get(1) ?? engines.values().next().value;
  const w1 = engines.has(1) ? 1 : workerCounts[0];
  // the version-3-like baseline: the same array as flat (no shape)
  if (file.shape) await parle(`parle L5 ${w1}w, no shape`, first, 5, file.data, undefined);
  // u32 RGBA pixels: also the bytes as u8 with the channels as the last axis
  if (file.type === 'u32' && file.shape && /rgba/i.test(file.name)) {
    const u8 = new Uint8Array(file.data.buffer, file.data.byteOffset, file.data.byteLength);
    const shape = [...file.shape, 4];
    await parle(`parle L5 ${w1}w, u8 [${shape.join(',')}]`, first, 5, u8, shape);
  }
  // (the version-2 writer takes five types: the others as the unsigned words of their width,
  // 8-byte elements as pairs of u32)
  if (baseEngine) {
    const size = file.data.BYTES_PER_ELEMENT;
    const Words = { 1: Uint8Array, 2: Uint16Array, 4: Uint32Array, 8: Uint32Array }[size];
    const words = ['u8', 'u16', 'u32', 'i32', 'f32'].includes(file.type)
      ? file.data
      : new Words(file.data.buffer, file.data.byteOffset, file.data.byteLength / Words.BYTES_PER_ELEMENT);
    const packed = await baseEngine.compress(words);
    if (packed[8] !== 2) throw new Error('the baseline does not write version 2');
    add('v2 auto 1w (baseline)', {
      ratio: B / packed.length,
      compress: mbps(B, await timeMs(() => baseEngine.compress(words))),
      decompress: mbps(B, await timeMs(() => baseEngine.decompress(packed))),
    });
  }
  {
    const packed = zstd.compress(file.bytes, 1);
    if (!sameBytes(zstd.decompress(packed), file.bytes)) throw new Error('zstd round trip');
    add('zstd-wasm -1', {
      ratio: B / packed.length,
      compress: mbps(B, await timeMs(() => zstd.compress(file.bytes, 1))),
      decompress: mbps(B, await timeMs(() => zstd.decompress(packed))),
    });
  }
  {
    const packed = lz4.compress(file.bytes);
    if (!sameBytes(lz4.decompress(packed), file.bytes)) throw new Error('lz4 round trip');
    add('lz4-wasm', {
      ratio: B / packed.length,
      compress: mbps(B, await timeMs(() => lz4.compress(file.bytes))),
      decompress: mbps(B, await timeMs(() => lz4.decompress(packed))),
    });
  }
  if (anchorsOk && file.source === 'corpus') {
    for (const a of runAnchors(file)) {
      add(a.anchor, {
        ratio: a.ratio,
        compress: a.compressMBs ?? undefined,
        decompress: a.decompressMBs ?? undefined,
        anchor: true,
        setting: a.setting,
      });
    }
  }
  rows.push(row);
}
// The issue's other targets: random bytes (stored at copy speed), the lossy mode, and a 4 MiB
// input over 2 workers against 1
const extra = { random: undefined, lossy: [], parallel4MiB: [] };
const both = (m) => `${m.compress.toFixed(0)} MB/s (into a reused out ${m.compressReused.toFixed(0)})`;
const one = engines.get(1);
if (one) {
  const noise = new Uint8Array(4 << 20);
  for (let i = 0, x = 0x9e3779b9; i < noise.length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    noise[i] = x & 0xff;
  }
  const packed = await one.compress(noise);
  // into a reused out as well: a fresh 4 MiB result's page faults alone cap it near 0.35 GB/s on the 2-core VM
  const out = new Uint8Array(compressBound(noise.length, 'u8'));
  extra.random = {
    bytes: noise.length,
    ratio: noise.length / packed.length,
    compress: mbps(noise.length, await timeMs(() => one.compress(noise))),
    compressReused: mbps(noise.length, await timeMs(() => one.compress(noise, { out }))),
  };
  console.log(`random 4 MiB, 1 worker: ratio ${extra.random.ratio.toFixed(3)}, compress ${both(extra.random)}`);
  for (const file of files.filter((f) => f.type === 'f32')) {
    let lo = Infinity;
    let hi = -Infinity;
    for (const v of file.data) if (Number.isFinite(v)) ((lo = Math.min(lo, v)), (hi = Math.max(hi, v)));
    // a bound of a thousandth of the data's range
    const abs = (hi - lo) / 1000 || 1e-6;
    const B = file.bytes.length;
    const packed = await one.compress(file.data, { errorBound: { abs } });
    const out = new Uint8Array(compressBound(file.data.length, 'f32'));
    const m = {
      file: file.name,
      abs,
      ratio: B / packed.length,
      compress: mbps(B, await timeMs(() => one.compress(file.data, { errorBound: { abs } }))),
      compressReused: mbps(B, await timeMs(() => one.compress(file.data, { errorBound: { abs }, out }))),
    };
    extra.lossy.push(m);
    console.log(`lossy ${file.name} abs ${abs.toPrecision(3)}, 1 worker: ratio ${m.ratio.toFixed(2)}, compress ${both(m)}`);
  }
}
const two = engines.get(2);
if (one && two) {
  for (const file of files.filter((f) => f.bytes.length >= 4 << 20)) {
    const data = file.data.subarray(0, (4 << 20) / file.data.BYTES_PER_ELEMENT);
    const B = data.byteLength;
    const packed = await one.compress(data);
    const rate = async (engine) => ({
      compress: mbps(B, await timeMs(() => engine.compress(data))),
      decompress: mbps(B, await timeMs(() => engine.decompress(packed))),
    });
    const [r1, r2] = [await rate(one), await rate(two)];
    const m = {
      file: file.name,
      bytes: B,
      w1: r1,
      w2: r2,
      compressX: r2.compress / r1.compress,
      decompressX: r2.decompress / r1.decompress,
    };
    extra.parallel4MiB.push(m);
    console.log(`4 MiB of ${file.name}: 2 workers vs 1: compress ${m.compressX.toFixed(2)}x, decompress ${m.decompressX.toFixed(2)}x`);
  }
}
for (const e of engines.values()) await e.destroy();
await baseEngine?.destroy();

// The issue's targets, file by file (a target that needs a peer is checked only where it ran)
const checks = [];
const check = (what, pass, detail) => checks.push({ what, pass, detail });
const d5 = [];
const c5 = [];
for (const row of rows) {
  const m = row.methods;
  const p = m['parle L5 1w'];
  const z = m['zstd-wasm -1'];
  const l = m['lz4-wasm'];
  const p1 = m['parle L1 1w'];
  if (!p) continue;
  d5.push(p.decompress);
  c5.push(p.compress);
  check(`${row.file}: decompress 1w >= 2x zstd-wasm -1`, p.decompress >= 2 * z.decompress, `${(p.decompress / z.decompress).toFixed(2)}x`);
  check(`${row.file}: compress 1w >= 3x zstd-wasm -1`, p.compress >= 3 * z.compress, `${(p.compress / z.compress).toFixed(2)}x`);
  const v2 = m['v2 auto 1w (baseline)'];
  if (v2) check(`${row.file}: ratio L5 >= 0.98 x version 2's auto`, p.ratio >= 0.98 * v2.ratio, `${(p.ratio / v2.ratio).toFixed(3)}`);
  const flat = m['parle L5 1w, no shape'];
  if (flat)
    check(`${row.file}: ratio L5 with the shape >= without`, p.ratio >= flat.ratio, `${p.ratio.toFixed(3)} vs ${flat.ratio.toFixed(3)}`);
  if (row.source === 'samples')
    check(`${row.file}: ratio L5 >= zstd -1`, p.ratio >= z.ratio, `${p.ratio.toFixed(3)} vs ${z.ratio.toFixed(3)}`);
  if (p1)
    check(
      `${row.file}: L1 >= lz4-wasm both ways at >= its ratio`,
      p1.compress >= l.compress && p1.decompress >= l.decompress && p1.ratio >= l.ratio,
      `c ${(p1.compress / l.compress).toFixed(2)}x d ${(p1.decompress / l.decompress).toFixed(2)}x ratio ${(p1.ratio / l.ratio).toFixed(2)}x`,
    );
}
if (d5.length) check('median file: decompress 1w >= 1.5 GB/s', median(d5) >= 1500, `${median(d5).toFixed(0)} MB/s`);
if (c5.length) check('median file: compress 1w >= 1 GB/s', median(c5) >= 1000, `${median(c5).toFixed(0)} MB/s`);
if (extra.random) check('random bytes: compress 1w >= 3 GB/s', extra.random.compress >= 3000, both(extra.random));
for (const m of extra.lossy) check(`${m.file}: lossy compress 1w >= 1 GB/s`, m.compress >= 1000, both(m));
for (const m of extra.parallel4MiB)
  check(
    `${m.file}, 4 MiB: 2 workers vs 1 >= 1.8x both ways`,
    m.compressX >= 1.8 && m.decompressX >= 1.8,
    `c ${m.compressX.toFixed(2)}x d ${m.decompressX.toFixed(2)}x`,
  );
for (const c of checks) console.log(`${c.pass ? 'PASS' : 'MISS'} ${c.what}: ${c.detail}`);

// The summary: parle L5 1w with the shape beside each anchor (* where parle's ratio is higher),
// and parle's speed as a multiple of zstd-wasm -1's, both ways
const ANCHORS = [
  ['Blosc2 best, zstd 9', 'Blosc2 best zstd 9'],
  ['Blosc2 best, zstd 1', 'Blosc2 best zstd 1'],
  ['zstd -19', 'zstd -19'],
  ['xz -9e', 'xz -9e'],
  ['optipng -o2', 'optipng -o2'],
];
const fmtRatio = (x) => (x >= 100 ? x.toFixed(1) : x >= 10 ? x.toFixed(2) : x.toFixed(3));
const summaryRows = rows.some((r) => r.source === 'corpus') ? rows.filter((r) => r.source === 'corpus') : rows;
const summary = summaryRows.flatMap((r) => {
  const z = r.methods['zstd-wasm -1'];
  const line = (label, p) => {
    if (!p) return [];
    const beats = [];
    const cells = {};
    for (const [key, title] of ANCHORS) {
      const a = r.methods[key];
      if (!a) {
        cells[title] = '-';
        continue;
      }
      if (p.ratio > a.ratio) beats.push(key);
      cells[title] = `${fmtRatio(a.ratio)}${p.ratio > a.ratio ? ' *' : ''}`;
    }
    const present = ANCHORS.filter(([key]) => r.methods[key]).length;
    return [
      {
        json: {
          file: label,
          parleRatio: p.ratio,
          anchors: Object.fromEntries(ANCHORS.filter(([key]) => r.methods[key]).map(([key]) => [key, r.methods[key].ratio])),
          beats,
          compressVsZstd1: p.compress / z.compress,
          decompressVsZstd1: p.decompress / z.decompress,
        },
        table: {
          file: label,
          'parle L5 1w (shape)': fmtRatio(p.ratio),
          ...cells,
          beats: `${beats.length}/${present}`,
          'c x zstd-wasm -1': `${(p.compress / z.compress).toFixed(2)}x`,
          'd x zstd-wasm -1': `${(p.decompress / z.decompress).toFixed(2)}x`,
        },
      },
    ];
  };
  const u8 = Object.keys(r.methods).find((k) => k.startsWith('parle L5 1w, u8 ['));
  return [
    ...line(r.file, r.methods['parle L5 1w']),
    ...(u8 ? line(`${r.file} as ${u8.slice('parle L5 1w, '.length)}`, r.methods[u8]) : []),
  ];
});
const summaryTitle =
  "Ratio against the anchors: parle L5 1w with the shape; each anchor's ratio, * where parle's is higher; parle's compress (c) and decompress (d) speed as a multiple of zstd-wasm -1's (both one thread, fresh arrays)";
printTable(
  summary.map((s) => s.table),
  summaryTitle,
);
for (const n of anchorNotes) console.log(`note: ${n}`);

const num = (x) => (x == null ? '' : x.toFixed(0));
const mdTable = (objs) => {
  if (objs.length === 0) return [];
  const cols = Object.keys(objs[0]);
  return [
    `| ${cols.join(' | ')} |`,
    `| ${cols.map((_, i) => (i ? '---:' : '---')).join(' | ')} |`,
    ...objs.map((o) => `| ${cols.map((c) => o[c]).join(' | ')} |`),
  ];
};
const md = [
  `# The main job on real data (bench/corpus.mjs)`,
  '',
  `${machine.cpu}, ${machine.cores} cores, Node ${machine.node}, ${machine.date.slice(0, 10)}, commit ${machine.commit}. MB/s of input (compress) or output (decompress), medians; each call returns a new array ("d" ), "d(out)" decodes into a reused array. parle rows get the array's shape (bench/corpus/index.json) but "no shape"; the anchors are bench/anchors.py's (one thread, ${anchorRuns} runs; the command-line tools' times include their process start).`,
  '',
  `## ${summaryTitle}`,
  '',
  ...mdTable(summary.map((s) => s.table)),
  '',
  ...anchorNotes.map((n) => `Note: ${n}`),
  ...(anchorNotes.length ? [''] : []),
  '## Every method',
  '',
  '| file | method | ratio | compress MB/s | decompress MB/s | d(out) MB/s |',
  '| --- | --- | ---: | ---: | ---: | ---: |',
  ...rows.flatMap((r) =>
    Object.entries(r.methods).map(
      ([name, m]) =>
        `| ${r.file} | ${name} | ${m.ratio.toFixed(3)} | ${num(m.compress)} | ${num(m.decompress)} | ${num(m.decompressReused)} |`,
    ),
  ),
  '',
  '## Targets',
  '',
  ...checks.map((c) => `- ${c.pass ? 'PASS' : 'MISS'} ${c.what}: ${c.detail}`),
  '',
];
writeResults(
  {
    'corpus.json': {
      machine,
      workers: workerCounts,
      levels,
      anchorRuns,
      anchorNotes,
      rows,
      summary: summary.map((s) => s.json),
      extra,
      checks,
    },
    'corpus.md': md.join('\n'),
  },
  { quick, out: args.out },
);
