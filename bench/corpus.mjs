// The main job on real data (issue #31): compress and decompress of every array of the corpus
// (bench/corpus/, real arrays from Debian packages: bench/corpus/fetch.sh) and of data/samples,
// through the public API on the CPU path, beside the peers a user would pick instead, in the
// same process and run:
//   - parle at levels 1, 5 (the default) and 9, with 1 worker and with more (--workers);
//   - the version-2 writer (the code before container version 3, built from git into
//     bench/.baseline-v2/ on first use: the ratio baseline of the issue), 1 worker;
//   - zstd-wasm -1 (@bokuweb/zstd-wasm) and lz4-wasm (lz4-wasm-nodejs), one thread;
//   - Blosc2 (python-blosc2: shuffle + zstd level 1, as many threads) where `python3 -c 'import blosc2'` works;
//   - the other targets, with 1 worker: 4 MiB of random bytes, the lossy mode on each f32
//     file (a bound of a thousandth of its range), and the first 4 MiB of each file over 2
//     workers against 1 (when --workers lists 1 and 2).
// Speeds are input bytes (compress) or output bytes (decompress) per second, medians of repeated
// calls; each call returns a new array, as a user's does ("fresh"), and decompress is also timed
// into a reused `out` array ("reused"): on the 2-core VM a fresh array costs about 3 ms a MB in
// page faults (the host's, not parle's: a C malloc + memset does the same), which caps any
// fresh result near 0.35 GB/s there.
//
//   node bench/corpus.mjs [--quick] [--workers 1,2] [--files name,...] [--out DIR] [--no-baseline]
//
// Prints a table and PASS/MISS lines for the targets, writes corpus.json and corpus.md
// into bench/results/<machine>/ (machine, per file and method: ratio, MB/s, and the ratios to the
// peers). --quick: the samples only, short timings (a check of the script; bench/.quick/).
import { parseArgs } from 'node:util';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as zstd from '@bokuweb/zstd-wasm';
import * as lz4 from 'lz4-wasm-nodejs';
import { compressBound, createEngine } from '../dist/node/index.js';
import { bytesOf, dataFiles, readArray, sameBytes } from './lib/files.mjs';
import { timeCalls } from './lib/measure.mjs';
import { machineInfo, median, ROOT as root, writeResults } from './lib/results.mjs';

const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean' },
    workers: { type: 'string', default: '1,2' },
    files: { type: 'string' },
    out: { type: 'string' },
    'no-baseline': { type: 'boolean' },
    levels: { type: 'string', default: '1,5,9' },
  },
});
const quick = args.quick === true;
const workerCounts = args.workers.split(',').map(Number);
const levels = args.levels.split(',').map(Number);
/** Per measurement: at least this many calls and this much time. */
const MIN_RUNS = quick ? 3 : 7;
const MIN_MS = quick ? 100 : 700;
const BASELINE_COMMIT = '00ae53d';

/** The arrays: the corpus (when fetched; not with --quick) and the samples. */
const loadFiles = () =>
  dataFiles({ corpus: !quick, files: args.files }).map((f) => {
    const data = readArray(f);
    return { ...f, data, bytes: bytesOf(data) };
  });

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

/** Blosc2 through python3, when installed: { compress, decompress } MB/s and ratio, or undefined. */
function blosc2(file, threads) {
  const probe = spawnSync('python3', ['-c', 'import blosc2'], { encoding: 'utf8' });
  if (probe.status !== 0) return undefined;
  const script = `
import blosc2, sys, time, json, numpy as np
data = open(sys.argv[1], 'rb').read()
size = int(sys.argv[2]); blosc2.set_nthreads(int(sys.argv[3]))
def med(f, n=7):
    f(); t = []
    for _ in range(n):
        t0 = time.perf_counter(); f(); t.append(time.perf_counter() - t0)
    t.sort(); return t[len(t)//2]
c = blosc2.compress(data, typesize=size, clevel=1, filter=blosc2.Filter.SHUFFLE, codec=blosc2.Codec.ZSTD)
assert blosc2.decompress(c) == data
tc = med(lambda: blosc2.compress(data, typesize=size, clevel=1, filter=blosc2.Filter.SHUFFLE, codec=blosc2.Codec.ZSTD))
td = med(lambda: blosc2.decompress(c))
print(json.dumps({'ratio': len(data)/len(c), 'compress': len(data)/tc/1e6, 'decompress': len(data)/td/1e6}))
`;
  const r = spawnSync('python3', ['-c', script, file.path, String(file.Ctor.BYTES_PER_ELEMENT), String(threads)], {
    encoding: 'utf8',
  });
  if (r.status !== 0) return undefined;
  return JSON.parse(r.stdout.trim().split('\n').pop());
}

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
  const row = { file: file.name, type: file.type, bytes: B, source: file.source, methods: {} };
  const add = (name, m) => {
    row.methods[name] = m;
    const fmt = (x) => (x === undefined ? '-' : x.toFixed(0).padStart(6));
    console.log(
      `${file.name.padEnd(26)} ${name.padEnd(22)} ratio ${m.ratio.toFixed(3).padStart(7)}  c ${fmt(m.compress)}  d ${fmt(m.decompress)}` +
        (m.decompressReused !== undefined ? `  d(out) ${fmt(m.decompressReused)}` : '') +
        ' MB/s',
    );
  };
  for (const [w, engine] of engines) {
    for (const level of levels) {
      const packed = await engine.compress(file.data, { level });
      const back = await engine.decompress(packed);
      if (!sameBytes(bytesOf(back), file.bytes)) throw new Error(`${file.name}: level ${level} does not round-trip`);
      const out = new file.Ctor(file.data.length);
      const m = {
        ratio: B / packed.length,
        compress: mbps(B, await timeMs(() => engine.compress(file.data, { level }))),
        decompress: mbps(B, await timeMs(() => engine.decompress(packed))),
        decompressReused: mbps(B, await timeMs(() => engine.decompress(packed, { out }))),
      };
      add(`parle L${level} ${w}w`, m);
    }
  }
  if (baseEngine) {
    const packed = await baseEngine.compress(file.data);
    if (packed[8] !== 2) throw new Error('the baseline does not write version 2');
    add('v2 auto 1w (baseline)', {
      ratio: B / packed.length,
      compress: mbps(B, await timeMs(() => baseEngine.compress(file.data))),
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
  for (const w of workerCounts) {
    const b = blosc2(file, w);
    if (b) add(`blosc2 zstd-1 ${w}t`, b);
  }
  rows.push(row);
}
// The other targets: random bytes (stored at copy speed), the lossy mode, and a 4 MiB
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

// The targets, file by file (a target that needs a peer is checked only where it ran)
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

const md = [
  `# The main job on real data (bench/corpus.mjs)`,
  '',
  `${machine.cpu}, ${machine.cores} cores, Node ${machine.node}, ${machine.date.slice(0, 10)}. MB/s of input (compress) or output (decompress), medians; each call returns a new array ("d" ), "d(out)" decodes into a reused array.`,
  '',
  '| file | method | ratio | compress MB/s | decompress MB/s | d(out) MB/s |',
  '| --- | --- | ---: | ---: | ---: | ---: |',
  ...rows.flatMap((r) =>
    Object.entries(r.methods).map(
      ([name, m]) =>
        `| ${r.file} | ${name} | ${m.ratio.toFixed(3)} | ${m.compress.toFixed(0)} | ${m.decompress.toFixed(0)} | ${m.decompressReused?.toFixed(0) ?? ''} |`,
    ),
  ),
  '',
  ...checks.map((c) => `- ${c.pass ? 'PASS' : 'MISS'} ${c.what}: ${c.detail}`),
  '',
];
writeResults(
  { 'corpus.json': { machine, workers: workerCounts, levels, rows, extra, checks }, 'corpus.md': md.join('\n') },
  { quick, out: args.out },
);
