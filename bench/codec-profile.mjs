// Where the time of the main job goes: engine.compress / engine.decompress on the CPU path
// (gpu: 'off'), per real file, from V8's sampling CPU profiler. For every file and direction a
// child process `node --cpu-prof` runs the operation in a loop for --seconds (after a warm-up)
// and writes one .cpuprofile per thread (the main thread and each worker); the samples inside
// the measured loop are summed per function (WebAssembly functions named from build/parle.wat,
// parle's JavaScript located in ts/ through dist/'s source maps) and per category of work
// (bench/lib/profile-summary.mjs), per thread kind (main thread; workers summed).
//
//   node bench/codec-profile.mjs [--files a,b] [--workers 1] [--level 5] [--seconds 3] [--quick]
//                                [--interval US] [--raw-deltas] [--min-mib N] [--out DIR] [--keep]
//
//   --files    names from bench/corpus/index.json or data/samples (with or without extension)
//   --quick    only data/samples, 1 second each; results go to bench/.quick/ (not committed)
//   --interval the profiler's sampling interval in µs (V8's default: 1000)
//   --keep     keep the .cpuprofile files (their folder is printed)
//   --min-mib  repeat each file to at least N MiB (the last copy cut at an element), as
//              corpus-scaling.mjs does: enough chunks for every worker of a large pool
//   --raw-deltas  each sample counts for the whole time to the next one (DevTools' rule); by
//              default at most 2 intervals, the rest spread in proportion (profile-summary.mjs:
//              the sampler runs late where the cores are busy; "sampler late" says how much)
//
// Both directions reuse their result array (`out`), so the page faults of a fresh array stay out
// of the figures (on the 2-core dev VM a fresh array costs about 3 ms per MB in page faults).
// The wall clock is measured with the profiler running (about 1 sample a millisecond a thread).
// Results: codec-profile.json and codec-profile.md in bench/results/<machine>/ (this run; the
// children run a snapshot of this file, so it imports bench/lib/ only in the parent).
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
} from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = fileURLToPath(new URL('..', import.meta.url));
const self = fileURLToPath(import.meta.url);
const RESULT_TAG = 'CODEC_PROFILE_RESULT ';
const TYPES = { u8: Uint8Array, u16: Uint16Array, u32: Uint32Array, i32: Int32Array, f32: Float32Array };

// ---------------------------------------------------------------------------------------------
// The child: one file, one direction, under the profiler

async function child() {
  const { values: a } = parseArgs({
    options: {
      child: { type: 'boolean' },
      file: { type: 'string' },
      type: { type: 'string' },
      op: { type: 'string' },
      workers: { type: 'string' },
      level: { type: 'string' },
      seconds: { type: 'string' },
      'min-mib': { type: 'string' },
    },
  });
  const { createEngine, compressBound } = await import('../dist/node/index.js');
  const Ctor = TYPES[a.type];
  const raw = readFileSync(a.file);
  if (raw.length % Ctor.BYTES_PER_ELEMENT !== 0) throw new Error(`${a.file}: ${raw.length} bytes is not a whole number of ${a.type}`);
  // an aligned copy of its own, repeated to --min-mib
  const minBytes = Number(a['min-mib'] ?? 0) * 1048576;
  const copies = Math.max(1, Math.ceil(minBytes / raw.length));
  const data = new Ctor((raw.length / Ctor.BYTES_PER_ELEMENT) * copies);
  for (let c = 0; c < copies; c++) new Uint8Array(data.buffer).set(raw, c * raw.length);
  const level = Number(a.level);
  const seconds = Number(a.seconds);
  const engine = await createEngine({ workers: Number(a.workers), gpu: 'off' });
  try {
    const bytesOf = (x) => new Uint8Array(x.buffer, x.byteOffset, x.byteLength);
    const container = (await engine.compress(data, { level })).slice();
    const back = await engine.decompress(container);
    if (Buffer.compare(bytesOf(back), bytesOf(data)) !== 0) throw new Error('round trip differs');
    let once;
    if (a.op === 'compress') {
      const out = new Uint8Array(compressBound(data.length, a.type));
      once = async () => (await engine.compress(data, { level, out })).length;
    } else {
      const out = new Ctor(data.length);
      once = async () => (await engine.decompress(container, { out })).byteLength;
    }
    // the reused result of each direction, checked once
    const first = await once();
    if (a.op === 'compress' && first !== container.length)
      throw new Error(`compress into out: ${first} bytes, a fresh result ${container.length}`);
    // warm-up: at least 3 calls and a quarter of the measured time (at most 1 s)
    const warm = performance.now();
    for (let n = 0; n < 3 || performance.now() - warm < Math.min(1000, seconds * 250); n++) await once();
    const hr = () => Number(process.hrtime.bigint() / 1000n); // V8's profile clock, in µs
    const fromUs = hr();
    const t0 = performance.now();
    let calls = 0;
    do {
      await once();
      calls++;
    } while (performance.now() - t0 < seconds * 1000);
    const wallMs = performance.now() - t0;
    const toUs = hr();
    const cpu = engine['cpu']; // the CPU path (a private field): which kernel variant runs
    process.stdout.write(
      RESULT_TAG +
        JSON.stringify({
          calls,
          wallMs,
          fromUs,
          toUs,
          inputBytes: data.byteLength,
          containerBytes: container.length,
          variant: cpu?.variant ?? 'simd',
          workers: engine.workers,
        }) +
        '\n',
    );
  } finally {
    await engine.destroy(); // the workers exit, and write their profiles
  }
}

// ---------------------------------------------------------------------------------------------
// The parent: files, children, summaries, results

async function main() {
  const { values: args } = parseArgs({
    options: {
      files: { type: 'string' },
      workers: { type: 'string', default: '1' },
      level: { type: 'string', default: '5' },
      seconds: { type: 'string' },
      quick: { type: 'boolean', default: false },
      interval: { type: 'string' },
      out: { type: 'string' },
      keep: { type: 'boolean', default: false },
      'raw-deltas': { type: 'boolean', default: false },
      'min-mib': { type: 'string', default: '0' },
    },
  });
  const interval = args.interval ? Number(args.interval) : 1000;
  const { wasmNames, SourceMaps, summarizeProfile, addFunctions, byCategory, threadOfFile, CATEGORIES, UNMAPPED } =
    await import('./lib/profile-summary.mjs');
  const { dataFiles } = await import('./lib/files.mjs');
  const { machineInfo, writeResults } = await import('./lib/results.mjs');
  const workers = Number(args.workers);
  const level = Number(args.level);
  const seconds = Number(args.seconds ?? (args.quick ? 1 : 3));
  if (!Number.isInteger(workers) || workers < 0) usage('--workers: an integer >= 0');
  if (!Number.isInteger(level) || level < 1 || level > 9) usage('--level: 1..9');
  if (!(seconds > 0)) usage('--seconds: > 0');
  if (!Number.isInteger(interval) || interval < 50) usage('--interval: an integer >= 50 (µs)');

  if (!existsSync(join(root, 'dist/node/index.js')) || !existsSync(join(root, 'build/parle.wasm'))) {
    console.error('dist/ or build/parle.wasm is missing: run `node build/build.mjs --quiet --no-types` first');
    process.exit(1);
  }
  const stale = newestMtime([join(root, 'ts'), join(root, 'assembly')]);
  const built = Math.min(statSync(join(root, 'dist/node/index.js')).mtimeMs, statSync(join(root, 'build/parle.wasm')).mtimeMs);
  if (stale.mtimeMs > built)
    console.warn(`warning: ${stale.path.slice(root.length)} is newer than dist/ or build/: the figures are of the last build`);
  // a private copy of the build, so that a rebuild while the children run changes nothing
  const snap = await snapshotBuild();
  process.on('exit', () => rmSync(snap.dir, { recursive: true, force: true }));

  const chosen = dataFiles({ corpus: !args.quick, files: args.files });

  const machine = machineInfo();
  if (os.loadavg()[0] > machine.cores / 2)
    console.warn(
      `warning: load average ${os.loadavg()[0].toFixed(1)} on ${machine.cores} cores: other processes compete, timings will be noisy`,
    );
  const git = (...a) => spawnSync('git', a, { cwd: root, encoding: 'utf8' }).stdout?.trimEnd() ?? '';
  const build = {
    commit: git('rev-parse', '--short', 'HEAD'),
    changedSources: git('status', '--porcelain', '--', 'ts', 'assembly')
      .split('\n')
      .filter(Boolean)
      .map((l) => l.slice(3)),
    wasmSha256: createHash('sha256')
      .update(readFileSync(join(snap.dir, 'build/parle.wasm')))
      .digest('hex')
      .slice(0, 16),
    distSha256: createHash('sha256')
      .update(
        readdirSync(join(snap.dir, 'dist/node'))
          .filter((f) => f.endsWith('.js'))
          .sort()
          .map((f) => readFileSync(join(snap.dir, 'dist/node', f), 'utf8'))
          .join('\0'),
      )
      .digest('hex')
      .slice(0, 16),
  };
  console.log(
    `codec-profile: ${machine.cpu}, ${machine.cores} cores, node ${machine.node}; workers ${workers}, level ${level}, ${seconds} s a file and direction` +
      `; results reuse their output array (out): a fresh one would add its page faults (about 3 ms/MB on the dev VM)`,
  );

  const maps = new SourceMaps();
  const wasmCache = new Map();
  const wasmFor = (variant) => {
    if (!wasmCache.has(variant)) {
      const base = { simd: 'parle', scalar: 'parle-scalar', 'simd-unshared': 'parle-unshared' }[variant] ?? 'parle';
      const w = wasmNames(join(snap.dir, 'build', base + '.wat'), join(snap.dir, 'build', base + '.wasm'));
      for (const p of w.problems) console.warn(`warning: wasm names: ${p}`);
      wasmCache.set(variant, w);
    }
    return wasmCache.get(variant);
  };

  const results = [];
  const failures = [];
  for (const file of chosen) {
    for (const op of ['compress', 'decompress']) {
      const dir = mkdtempSync(join(os.tmpdir(), 'codec-profile-'));
      try {
        const r = spawnSync(
          process.execPath,
          [
            '--cpu-prof',
            `--cpu-prof-dir=${dir}`,
            `--cpu-prof-interval=${interval}`,
            snap.child,
            '--child',
            `--file=${file.path}`,
            `--type=${file.type}`,
            `--op=${op}`,
            `--workers=${workers}`,
            `--level=${level}`,
            `--seconds=${seconds}`,
            `--min-mib=${args['min-mib']}`,
          ],
          { encoding: 'utf8', timeout: (seconds * 3 + 120) * 1000, maxBuffer: 64 << 20, cwd: root },
        );
        const line = (r.stdout ?? '').split('\n').find((l) => l.startsWith(RESULT_TAG));
        if (r.status !== 0 || line === undefined) {
          const why = r.error?.message ?? (r.signal ? `killed by ${r.signal}` : `exit ${r.status}`);
          throw new Error(`${why}\n${tail(r.stderr)}`);
        }
        const run = JSON.parse(line.slice(RESULT_TAG.length));
        const wasm = wasmFor(run.variant);
        const profiles = readdirSync(dir).filter((n) => n.endsWith('.cpuprofile'));
        const main = new Map();
        const work = new Map();
        let mainSampled = 0;
        let workSampled = 0;
        let mainGap = 0;
        let workGap = 0;
        let workerThreads = 0;
        const wasmUrls = [];
        for (const name of profiles) {
          const thread = threadOfFile(name);
          const profile = JSON.parse(readFileSync(join(dir, name), 'utf8'));
          const s = summarizeProfile(profile, {
            fromUs: run.fromUs,
            toUs: run.toUs,
            wasm,
            maps,
            capUs: (args['raw-deltas'] ? 1e9 : 2) * interval,
          });
          wasmUrls.push(...s.wasmUrls);
          if (thread?.thread === 0) {
            addFunctions(main, s.functions);
            mainSampled += s.sampledUs;
            mainGap += s.gapShare * s.sampledUs;
          } else {
            if (s.sampledUs > 0) workerThreads++;
            addFunctions(work, s.functions);
            workSampled += s.sampledUs;
            workGap += s.gapShare * s.sampledUs;
          }
        }
        if (run.workers > 0 && workerThreads < run.workers)
          console.warn(`warning: ${file.name} ${op}: ${workerThreads} of ${run.workers} workers' profiles have samples in the window`);
        const unknownWasm = wasmUrls.filter((u) => u.module === undefined);
        if (unknownWasm.length) console.warn(`warning: wasm modules of unknown origin: ${unknownWasm.map((u) => u.url).join(', ')}`);
        const unmappedTop = [...main.values(), ...work.values()]
          .filter((e) => UNMAPPED.has(e.frame.category))
          .sort((x, y) => y.us - x.us)
          .slice(0, 5)
          .map((e) => e.frame.key);
        const summary = summarize({ file, op, run, main, work, mainSampled, workSampled, workerThreads, CATEGORIES, UNMAPPED, byCategory });
        summary.samplerGapShare = (mainGap + workGap) / Math.max(1, mainSampled + workSampled);
        results.push(summary);
        printSummary(summary);
        const worst = Math.min(...Object.values(summary.threads).map((t) => t.mappedShare));
        if (worst < 0.9)
          console.warn(
            `warning: ${file.name} ${op}: only ${(100 * worst).toFixed(1)} % of a thread's busy time is in known categories; ` +
              `add rules to CATEGORIES in bench/lib/profile-summary.mjs for: ${unmappedTop.join(', ')}`,
          );
        if (args.keep) console.log(`  profiles: ${dir}`);
      } catch (e) {
        console.error(`error: ${file.name} ${op}: ${e.message.trim()}`);
        failures.push({ file: file.name, op, error: e.message.trim().split('\n')[0] });
      } finally {
        if (!args.keep) rmSync(dir, { recursive: true, force: true });
      }
    }
  }

  const key = {
    workers,
    level,
    seconds,
    files: args.files ?? (args.quick ? 'samples' : 'all'),
    interval,
    ...(args['raw-deltas'] ? { rawDeltas: true } : {}),
    ...(Number(args['min-mib']) > 0 ? { minMiB: Number(args['min-mib']) } : {}),
  };
  machine.loadAverageAtEnd = os.loadavg().map((x) => Number(x.toFixed(2)));
  const doc = {
    about:
      'bench/codec-profile.mjs: engine.compress / engine.decompress on the CPU path (gpu off), one profiled child process a file and direction; ' +
      'ms are per call, from samples of V8\'s CPU profiler inside the measured loop; "main" is the main thread, "workers" the worker threads summed; ' +
      'percentages are of the busy (non-idle) samples of that thread kind. Results reuse their output array (out).',
    runs: [{ key, machine, build, results: results.map(toJson), failures }],
  };
  writeResults({ 'codec-profile.json': doc, 'codec-profile.md': markdown(doc, CATEGORIES) }, { quick: args.quick, out: args.out });
  if (failures.length) console.log(`${failures.length} failed or skipped`);
  if (results.length === 0) process.exit(1);
}

function usage(msg) {
  console.error(
    `${msg}\nusage: node bench/codec-profile.mjs [--files a,b] [--workers 1] [--level 5] [--seconds 3] [--quick] [--interval US] [--raw-deltas] [--out DIR] [--keep]`,
  );
  process.exit(2);
}

function tail(text, lines = 15) {
  return (text ?? '').trim().split('\n').slice(-lines).join('\n');
}

/**
 * Copies dist/node/, build/*.wasm|*.wat and package.json to a temporary folder (node_modules
 * linked), with this script as bench/codec-profile.mjs there for the children. A copy whose
 * modules do not all resolve (a build was writing) is taken again, up to 20 times.
 */
async function snapshotBuild() {
  for (let attempt = 0; ; attempt++) {
    const dir = mkdtempSync(join(os.tmpdir(), 'codec-profile-build-'));
    try {
      mkdirSync(join(dir, 'dist'), { recursive: true });
      mkdirSync(join(dir, 'build'));
      mkdirSync(join(dir, 'bench'));
      cpSync(join(root, 'dist/node'), join(dir, 'dist/node'), { recursive: true });
      for (const f of readdirSync(join(root, 'build'))) if (/\.(wasm|wat)$/.test(f)) cpSync(join(root, 'build', f), join(dir, 'build', f));
      cpSync(join(root, 'package.json'), join(dir, 'package.json'));
      symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'), 'dir');
      cpSync(self, join(dir, 'bench/codec-profile.mjs'));
      // every relative import of the entry points is there
      const seen = new Set();
      const visit = (name) => {
        if (seen.has(name)) return;
        seen.add(name);
        const text = readFileSync(join(dir, 'dist/node', name), 'utf8');
        if (!existsSync(join(dir, 'dist/node', name + '.map'))) throw new Error(`${name}.map missing`);
        for (const m of text.matchAll(/(?:from|import)\s*\(?\s*"\.\/([^"]+)"/g)) visit(m[1]);
      };
      visit('index.js');
      visit('worker.js');
      for (const w of ['parle.wasm', 'parle.wat']) if (!existsSync(join(dir, 'build', w))) throw new Error(`build/${w} missing`);
      return { dir, child: join(dir, 'bench/codec-profile.mjs') };
    } catch (e) {
      rmSync(dir, { recursive: true, force: true });
      if (attempt >= 20) throw new Error(`no consistent copy of dist/ and build/ (a build running?): ${e.message}`);
      await new Promise((r) => setTimeout(r, 3000));
    }
  }
}

function newestMtime(dirs) {
  let best = { path: '', mtimeMs: 0 };
  const walk = (d) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else {
        const m = statSync(p).mtimeMs;
        if (m > best.mtimeMs) best = { path: p, mtimeMs: m };
      }
    }
  };
  for (const d of dirs) if (existsSync(d)) walk(d);
  return best;
}

/** Per-call figures of one file and direction. */
function summarize({ file, op, run, main, work, mainSampled, workSampled, workerThreads, CATEGORIES, UNMAPPED, byCategory }) {
  const perCall = (us) => us / 1000 / run.calls;
  const threads = {};
  for (const [kind, fns, sampled] of [
    ['main', main, mainSampled],
    ['workers', work, workSampled],
  ]) {
    if (sampled === 0) continue;
    const cats = byCategory(fns);
    const idle = cats.get('idle');
    const busy = Math.max(0, sampled - idle);
    const unmapped = [...UNMAPPED].reduce((s, c) => s + (cats.get(c) ?? 0), 0);
    threads[kind] = {
      sampledMsPerCall: perCall(sampled),
      busyMsPerCall: perCall(busy),
      idleMsPerCall: perCall(idle),
      mappedShare: busy > 0 ? 1 - unmapped / busy : 1,
      categories: Object.fromEntries(
        CATEGORIES.map(([c]) => c)
          .filter((c) => cats.get(c) > 0)
          .map((c) => [c, { msPerCall: perCall(cats.get(c)), share: c === 'idle' || busy <= 0 ? null : cats.get(c) / busy }]),
      ),
    };
  }
  const all = [];
  for (const [kind, fns] of [
    ['main', main],
    ['worker', work],
  ])
    for (const e of fns.values()) if (e.frame.category !== 'idle') all.push({ kind, e });
  const busyAll = (threads.main?.busyMsPerCall ?? 0) + (threads.workers?.busyMsPerCall ?? 0);
  const top = all
    .sort((x, y) => y.e.us - x.e.us)
    .slice(0, 12)
    .map(({ kind, e }) => ({
      thread: kind,
      function: e.frame.kind === 'wasm' ? `${e.frame.name} (wasm${e.frame.raw !== e.frame.name ? ' ' + e.frame.raw : ''})` : e.frame.key,
      category: e.frame.category,
      msPerCall: perCall(e.us),
      share: busyAll > 0 ? perCall(e.us) / busyAll : 0,
    }));
  const bytes = run.inputBytes; // compress: its input; decompress: its output, the same elements
  return {
    file: file.name,
    source: file.source,
    type: file.type,
    op,
    calls: run.calls,
    wallMs: run.wallMs,
    msPerCall: run.wallMs / run.calls,
    gbPerS: (bytes * run.calls) / (run.wallMs / 1000) / 1e9,
    inputBytes: run.inputBytes,
    containerBytes: run.containerBytes,
    ratio: run.inputBytes / run.containerBytes,
    workers: run.workers,
    workerThreadsSampled: workerThreads,
    variant: run.variant,
    threads,
    top,
  };
}

function toJson(s) {
  const round = (x, d = 4) => (x === null ? null : Number(x.toPrecision(d)));
  return {
    ...s,
    wallMs: round(s.wallMs, 6),
    msPerCall: round(s.msPerCall),
    gbPerS: round(s.gbPerS),
    samplerGapShare: round(s.samplerGapShare, 3),
    ratio: round(s.ratio),
    threads: Object.fromEntries(
      Object.entries(s.threads).map(([k, t]) => [
        k,
        {
          sampledMsPerCall: round(t.sampledMsPerCall),
          busyMsPerCall: round(t.busyMsPerCall),
          idleMsPerCall: round(t.idleMsPerCall),
          mappedShare: round(t.mappedShare, 3),
          categories: Object.fromEntries(
            Object.entries(t.categories).map(([c, v]) => [c, { msPerCall: round(v.msPerCall), share: round(v.share, 3) }]),
          ),
        },
      ]),
    ),
    top: s.top.map((t) => ({ ...t, msPerCall: round(t.msPerCall), share: round(t.share, 3) })),
  };
}

const fmt = (x, w = 7) =>
  (x === undefined || x === null ? '' : x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2)).padStart(w);
const pct = (x, w = 6) => (x === undefined || x === null ? '' : `${(100 * x).toFixed(1)}%`).padStart(w);

function printSummary(s) {
  const m = s.threads.main;
  const w = s.threads.workers;
  console.log(
    `\n${s.file} ${s.op}: ${s.calls} calls, ${s.msPerCall.toFixed(2)} ms/call, ${s.gbPerS.toFixed(3)} GB/s ` +
      `(${(s.inputBytes / 1e6).toFixed(2)} MB, ratio ${s.ratio.toFixed(2)}); busy ms/call main ${fmt(m?.busyMsPerCall, 0)}` +
      (w ? `, workers ${fmt(w.busyMsPerCall, 0)} (${s.workerThreadsSampled})` : '') +
      `; mapped ${pct(m?.mappedShare, 0)} / ${pct(w?.mappedShare, 0)}; sampler late ${pct(s.samplerGapShare, 0)}`,
  );
  console.log(`  ${'category'.padEnd(32)} ${'main ms'.padStart(8)} ${'%busy'.padStart(6)} ${'work ms'.padStart(8)} ${'%busy'.padStart(6)}`);
  const cats = new Set([...Object.keys(m?.categories ?? {}), ...Object.keys(w?.categories ?? {})]);
  const order = [...cats].sort((a, b) => {
    if (a === 'idle') return 1;
    if (b === 'idle') return -1;
    const v = (c) => (m?.categories[c]?.msPerCall ?? 0) + (w?.categories[c]?.msPerCall ?? 0);
    return v(b) - v(a);
  });
  for (const c of order) {
    const mc = m?.categories[c];
    const wc = w?.categories[c];
    console.log(`  ${c.padEnd(32)} ${fmt(mc?.msPerCall, 8)} ${pct(mc?.share)} ${fmt(wc?.msPerCall, 8)} ${pct(wc?.share)}`);
  }
  console.log("  top functions (self ms/call, % of all threads' busy time):");
  for (const t of s.top) console.log(`  ${fmt(t.msPerCall, 8)} ${pct(t.share)}  ${t.thread.padEnd(6)} ${t.function}  [${t.category}]`);
}

function markdown(doc, CATEGORIES) {
  const lines = ['# codec-profile', '', 'Written by `node bench/codec-profile.mjs` (do not edit). ' + doc.about, ''];
  for (const run of doc.runs) {
    const k = run.key;
    lines.push(
      `## workers ${k.workers}, level ${k.level}, ${k.seconds} s, files: ${k.files}${k.minMiB ? ` repeated to ${k.minMiB} MiB` : ''}${k.interval !== 1000 ? `, interval ${k.interval} µs` : ''}`,
      '',
      `${run.machine.cpu}, ${run.machine.cores} cores, Node ${run.machine.node}, ${run.machine.date}` +
        ((run.machine.loadAverageAtStart ?? run.machine.loadAverage)
          ? ` (load average ${(run.machine.loadAverageAtStart ?? run.machine.loadAverage)[0]} at the start, ${run.machine.loadAverageAtEnd?.[0]} at the end)`
          : '') +
        (run.build
          ? `; build of ${run.build.commit}` +
            (run.build.changedSources?.length ? ` with uncommitted changes to ${run.build.changedSources.join(', ')}` : '') +
            ` (parle.wasm ${run.build.wasmSha256}, dist ${run.build.distSha256})`
          : ''),
      '',
      '| file | op | GB/s | ms/call | ratio | thread | busy ms | ' + 'top categories (ms/call, % of busy) |',
      '| --- | --- | ---: | ---: | ---: | --- | ---: | --- |',
    );
    for (const r of run.results) {
      const shown = Object.entries(r.threads).filter(([, t], i, all) => t.busyMsPerCall >= 0.005 || all.length === 1);
      for (const [kind, t] of shown) {
        const cats = Object.entries(t.categories)
          .filter(([c]) => c !== 'idle')
          .sort((a, b) => b[1].msPerCall - a[1].msPerCall)
          .filter(([, v]) => v.share >= 0.02)
          .map(([c, v]) => `${c} ${v.msPerCall.toFixed(2)} (${(100 * v.share).toFixed(0)}%)`)
          .join(', ');
        const first = kind === shown[0][0];
        lines.push(
          `| ${first ? r.file : ''} | ${first ? r.op : ''} | ${first ? r.gbPerS.toFixed(3) : ''} | ${first ? r.msPerCall.toFixed(2) : ''} | ${first ? r.ratio.toFixed(2) : ''} | ${kind} | ${t.busyMsPerCall.toFixed(2)} | ${cats} |`,
        );
      }
    }
    lines.push('', 'Top functions (self ms/call, all threads):', '');
    for (const r of run.results) {
      lines.push(
        `- ${r.file} ${r.op}: ` +
          r.top
            .slice(0, 6)
            .map((t) => `${t.function.replace(/ \(wasm.*\)$/, '')} [${t.thread}] ${t.msPerCall.toFixed(2)}`)
            .join('; '),
      );
    }
    if (run.failures.length)
      lines.push('', 'Failed or skipped: ' + run.failures.map((f) => `${f.file}${f.op ? ' ' + f.op : ''} (${f.error})`).join('; '));
    lines.push('');
  }
  return lines.join('\n');
}

if (process.argv.includes('--child')) await child();
else await main();
