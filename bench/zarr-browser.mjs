// Zarr v3 arrays read in the browser (issue #46): bench/zarr.mjs's arrays and chunking written in
// Node with the `parle` codec (level 5), zarrita's numcodecs zstd 1 and blosc (zstd 5, byte
// shuffle) and no compression (the floor of any read), served over loopback HTTP to headless
// Chromium (cross-origin isolated), and read there whole and as a sub-region with zarrita's
// FetchStore by:
//
//   zarrita get            the parle codec decoding on the browser build's pool of --workers
//                          workers; numcodecs decoding on the page's main thread
//   parle createGet        the workers decode each chunk into its place in the result; with
//                          parle's WorkerFetchStore (the reader 'createGet-workers') they also
//                          make the requests and read the bodies
//   fizarrita getWorker    @fideus-labs/fizarrita: numcodecs decoding in its WorkerPool of
//                          --workers Web Workers, useSharedArrayBuffer: true (false, noted, where
//                          that fails); skipped where fizarrita is not installed
//
// For each: the store's ratio, a whole read (MB/s of the array's raw bytes) and the sub-region
// (ms), medians over --rounds rounds that take every reader in turn, after a warm-up read that
// checks the bytes (SHA-256 against Node's). And how busy the page's main thread is during a
// whole read: the Chrome DevTools Protocol's Performance.getMetrics before and after it; busy is
// the growth of TaskDuration (the wall time of the renderer main thread's tasks; a Web Worker's
// are not counted) over the read's wall time, cpu that of ThreadTime (the main thread's CPU time),
// longest the longest task a PerformanceObserver('longtask') saw (only tasks over 50 ms count).
//
// Targets (issue #46, 2 workers): a whole read >= 3x zarrita with numcodecs zstd at >= its
// ratio, and >= fizarrita's with blosc; a sub-region no slower than the fastest peer; the main
// thread busy for less than 10 % of a whole read with parle (decoding happens in the workers).
//
// Usage: node bench/zarr-browser.mjs [--workers 2] [--chunk-mib 1] [--min-mib 64] [--rounds 5]
// [--files a.f32,b.u8] [--quick] [--out DIR] [--profile DIR: the page's main thread profiled in
// one more whole read by each parle reader, DIR/<array>-<reader>.cpuprofile]. Needs the corpus (bash bench/corpus/fetch.sh), the
// build (node build/build.mjs --quiet --no-types), Debian's /usr/bin/chromium and, for its rows,
// @fideus-labs/fizarrita, @fideus-labs/worker-pool and zarrita-0.6 (devDependencies; also found
// through NODE_PATH). --quick: one array, 3 rounds. Writes zarr-browser.json and zarr-browser.md into
// bench/results/<machine>/ (quick: bench/.quick/).
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { delimiter, extname, join, normalize, sep } from 'node:path';
import { parseArgs } from 'node:util';
import { build } from 'esbuild';
import { chromium } from 'playwright-core';
import * as zarr from 'zarrita';
import { FileSystemStore } from '@zarrita/storage';
import { createEngine } from '../dist/node/index.js';
import { register } from '../dist/node/zarr.js';
import { machineInfo, median, ROOT, writeResults } from './lib/results.mjs';
import { codecsOf, regionOf, stackedArray, storeBytes, zarrFiles } from './lib/zarr-arrays.mjs';

const CHROMIUM = '/usr/bin/chromium';
/** test/zarr-browser.test.ts's flags. --no-sandbox: CI runs as root. */
const CHROMIUM_ARGS = ['--no-sandbox', '--headless=new', '--disable-background-networking', '--disable-component-update', '--no-first-run'];

const { values: args } = parseArgs({
  options: {
    workers: { type: 'string', default: '2' },
    'chunk-mib': { type: 'string', default: '1' },
    'min-mib': { type: 'string', default: '64' },
    rounds: { type: 'string' },
    files: { type: 'string' },
    quick: { type: 'boolean' },
    out: { type: 'string' },
    profile: { type: 'string' },
  },
});
const workers = Number(args.workers);
if (!Number.isInteger(workers) || workers < 1) throw new Error(`--workers must be a positive whole number, not ${args.workers}`);
const rounds = Number(args.rounds ?? (args.quick ? 3 : 5));
if (!Number.isInteger(rounds) || rounds < 1) throw new Error(`--rounds must be a positive whole number, not ${args.rounds}`);
const chunkBytes = Number(args['chunk-mib']) * 2 ** 20;
const minBytes = Number(args['min-mib']) * 2 ** 20;
/** Region reads per reader and round (they are short). */
const REGION_READS = 3;
/** Per page call (one read, or the set-up). */
const TIMEOUT_MS = 120_000;

for (const file of ['dist/node/index.js', 'dist/browser/index.js', 'dist/browser/zarr.js', 'dist/browser/worker.js', 'build/parle.wasm']) {
  if (!existsSync(join(ROOT, file))) throw new Error(`${file} is missing: run \`node build/build.mjs --quiet --no-types\``);
}
if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install chromium`);

/** The stores of each array (ZARR_CODECS' names) and who reads each. */
const STORES = ['parle', 'numcodecs zstd 1', 'numcodecs blosc zstd 5 shuffle', 'uncompressed (bytes)'];
const READERS = [
  { codec: 'parle', reader: 'zarrita' },
  { codec: 'parle', reader: 'createGet' },
  { codec: 'parle', reader: 'createGet-workers' },
  { codec: 'numcodecs zstd 1', reader: 'zarrita' },
  { codec: 'numcodecs zstd 1', reader: 'fizarrita', shared: true },
  { codec: 'numcodecs blosc zstd 5 shuffle', reader: 'zarrita' },
  { codec: 'numcodecs blosc zstd 5 shuffle', reader: 'fizarrita', shared: true },
  { codec: 'uncompressed (bytes)', reader: 'zarrita' },
];
const slug = (s) => s.replace(/[^\w.]+/g, '-');
const sha256 = (a) =>
  createHash('sha256')
    .update(new Uint8Array(a.buffer, a.byteOffset, a.byteLength))
    .digest('hex');
const withTimeout = (promise, what) => {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: timed out after ${TIMEOUT_MS / 1000} s`)), TIMEOUT_MS);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
};

const started = performance.now();
const loadBefore = loadavg().map((x) => Math.round(x * 100) / 100);
console.log(`load average (1, 5, 15 min) before: ${loadBefore.join(', ')}`);
const dir = mkdtempSync(join(tmpdir(), 'parle-zarr-browser-bench-'));
const storeDir = join(dir, 'store');
const libDir = join(dir, 'lib');

// ---------------------------------------------------------------------------------------------
// The stores, written in Node; each array's and region's SHA-256 for the page's reads

/** Per file: { name, shape, chunkShape, dtype, bytes, region, sha256, regionSha256, ratios: { codec: ratio } }. */
const arrays = [];
{
  const engine = await createEngine({ workers, gpu: 'off', calibration: 'skip' });
  register(zarr.registry, { engine });
  try {
    for (const file of zarrFiles({ files: args.files, quick: args.quick })) {
      const { data, shape, stride, chunkShape, dtype, region } = stackedArray(file, { minBytes, chunkBytes });
      const entry = {
        name: file.name,
        shape,
        chunkShape,
        dtype,
        bytes: data.byteLength,
        region,
        sha256: sha256(data),
        regionSha256: sha256(regionOf(data, shape, region)),
        ratios: {},
      };
      for (const codec of STORES) {
        const name = slug(`${file.name}-${codec}`);
        const arr = await zarr.create(zarr.root(new FileSystemStore(storeDir)).resolve(name), {
          shape,
          chunkShape,
          dtype,
          codecs: codecsOf(codec, data.BYTES_PER_ELEMENT),
          fillValue: 0,
        });
        await zarr.set(arr, null, { data, shape, stride });
        entry.ratios[codec] = data.byteLength / storeBytes(join(storeDir, name));
      }
      arrays.push(entry);
      console.log(`${file.name}: [${shape}] (${(data.byteLength / 2 ** 20).toFixed(0)} MiB), chunks [${chunkShape}], stores written`);
    }
  } finally {
    zarr.registry.delete('parle');
    await engine.destroy();
  }
}

// ---------------------------------------------------------------------------------------------
// The page's libraries: zarrita (with fizarrita and its pool where installed), fizarrita's worker

/** Where fizarrita is looked for beyond the repository's node_modules. */
const nodePaths = (process.env.NODE_PATH ?? '').split(delimiter).filter(Boolean);
/**
 * fizarrita 1.4.1 (its peer range says zarrita >= 0.6) hands zarrita's codecs their chunk's
 * metadata as zarrita 0.6 named it (`data_type`); zarrita 0.7 reads `dataType`, and its codecs
 * fail (zarrita 0.7.5: a TypeError in the bytes codec, and a whole read that never settles). So
 * fizarrita, its worker and the arrays it reads get zarrita 0.6 (the devDependency `zarrita-0.6`,
 * with the same numcodecs).
 */
const zarritaForFizarrita = {
  name: 'zarrita-for-fizarrita',
  setup(b) {
    b.onResolve({ filter: /^zarrita$/ }, (a) =>
      a.importer.includes(`${sep}@fideus-labs${sep}`) ? b.resolve('zarrita-0.6', { kind: a.kind, resolveDir: a.resolveDir }) : undefined,
    );
  },
};
const bundle = (contents, outfile) =>
  build({
    stdin: { contents, resolveDir: ROOT, loader: 'js' },
    bundle: true,
    format: 'esm',
    platform: 'browser',
    nodePaths,
    plugins: [zarritaForFizarrita],
    // fizarrita's package.json says "sideEffects": false, which would drop its codec worker (a
    // module that is all side effect) from the worker's bundle
    ignoreAnnotations: true,
    outfile: join(libDir, outfile),
    logLevel: 'silent',
  });
const versionOf = (name) => {
  for (const base of [join(ROOT, 'node_modules'), ...nodePaths]) {
    const path = join(base, name, 'package.json');
    if (existsSync(path)) return JSON.parse(readFileSync(path, 'utf8')).version;
  }
  return null;
};
let fizarrita = null;
try {
  await bundle(
    [
      "export * as zarr from 'zarrita';",
      "export * as zarrForFizarrita from 'zarrita-0.6';",
      "export { getWorker } from '@fideus-labs/fizarrita';",
      "export { WorkerPool } from '@fideus-labs/worker-pool';",
    ].join('\n'),
    'zarr-libs.js',
  );
  await bundle("import '@fideus-labs/fizarrita/codec-worker';", 'fizarrita-worker.js');
  fizarrita = {
    version: versionOf('@fideus-labs/fizarrita'),
    workerPool: versionOf('@fideus-labs/worker-pool'),
    zarrita: versionOf('zarrita-0.6'),
  };
} catch (error) {
  console.warn(`fizarrita is not installed (npm install; or NODE_PATH): its rows are skipped (${error.message.split('\n')[0]})`);
  await bundle(
    "export * as zarr from 'zarrita'; export const zarrForFizarrita = undefined, getWorker = undefined, WorkerPool = undefined;",
    'zarr-libs.js',
  );
}

// ---------------------------------------------------------------------------------------------
// The server: the page, the browser build, the libraries and the stores, cross-origin isolated

const MOUNTS = [
  ['/bench/zarr-browser/', join(ROOT, 'bench/zarr-browser')],
  ['/dist/browser/', join(ROOT, 'dist/browser')],
  ['/build/', join(ROOT, 'build')],
  ['/lib/', libDir],
  ['/store/', storeDir],
];
const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.wasm': 'application/wasm',
  '.json': 'application/json',
};
const HEADERS = {
  'Cache-Control': 'no-store',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
  'Cross-Origin-Resource-Policy': 'same-origin',
};
const server = createServer((request, response) => {
  const path = decodeURIComponent(new URL(request.url ?? '/', 'http://x').pathname);
  const mount = MOUNTS.find(([prefix]) => path.startsWith(prefix));
  const file = mount && normalize(join(mount[1], path.slice(mount[0].length)));
  if (!file || !file.startsWith(mount[1] + sep) || !existsSync(file) || !statSync(file).isFile()) {
    response.writeHead(404, HEADERS).end();
    return;
  }
  response.writeHead(200, {
    ...HEADERS,
    'Content-Type': TYPES[extname(file)] ?? 'application/octet-stream',
    'Content-Length': statSync(file).size,
  });
  createReadStream(file)
    .on('error', () => response.destroy())
    .pipe(response);
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));

// ---------------------------------------------------------------------------------------------
// The reads, in Chromium

const rows = [];
const notes = [];
const pageErrors = [];
let browser;
let chromiumVersion;
let pageEnv;
try {
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
  chromiumVersion = browser.version();
  const context = await browser.newContext();
  const page = await context.newPage();
  page.on('pageerror', (error) => pageErrors.push(`uncaught: ${error.message}`));
  page.on('console', (message) => void (message.type() === 'error' && pageErrors.push(message.text())));
  page.on('crash', () => pageErrors.push('the page crashed'));
  await page.goto(`http://127.0.0.1:${server.address().port}/bench/zarr-browser/index.html`);
  await page
    .waitForFunction(() => window.zarrBench !== undefined, null, { timeout: 60_000 })
    .catch((e) => {
      throw new Error(`the page did not load: ${pageErrors.join('; ') || e.message}`);
    });
  pageEnv = await withTimeout(
    page.evaluate((w) => window.zarrBench.setup({ workers: w }), workers),
    'the page set-up',
  );
  console.log(
    `chromium ${chromiumVersion}; crossOriginIsolated ${pageEnv.crossOriginIsolated}; parle engine ${JSON.stringify(pageEnv.engine)}; fizarrita ${fizarrita ? `${fizarrita.version} (worker-pool ${fizarrita.workerPool}, zarrita ${fizarrita.zarrita})` : 'not installed'}`,
  );
  const cdp = await context.newCDPSession(page);
  await cdp.send('Performance.enable', { timeDomain: 'timeTicks' });
  const metrics = async () => Object.fromEntries((await cdp.send('Performance.getMetrics')).metrics.map((m) => [m.name, m.value]));
  const read = (spec, what) =>
    withTimeout(
      page.evaluate((s) => window.zarrBench.read(s), spec),
      what,
    );

  for (const a of arrays) {
    const jobs = READERS.filter((r) => r.reader !== 'fizarrita' || pageEnv.fizarrita).map((r) => ({
      ...r,
      store: slug(`${a.name}-${r.codec}`),
      label:
        r.reader === 'createGet'
          ? `parle createGet (${workers} workers)`
          : r.reader === 'createGet-workers'
            ? `parle createGet, WorkerFetchStore (${workers} workers)`
            : r.reader === 'zarrita'
              ? r.codec === 'parle'
                ? `zarrita get (${workers} workers)`
                : 'zarrita get'
              : `fizarrita (${workers} workers)`,
      whole: [],
      region: [],
    }));
    // the warm-up: each reader's whole read and region once, their bytes checked
    for (const job of jobs) {
      const what = `${a.name}, ${job.codec}, ${job.label}`;
      const check = async () => {
        const whole = await read({ store: job.store, reader: job.reader, shared: job.shared, digest: true }, what);
        const part = await read({ store: job.store, reader: job.reader, shared: job.shared, region: a.region, digest: true }, what);
        if (whole.sha256 !== a.sha256) throw new Error(`${what}: the whole read differs from the array written`);
        if (part.sha256 !== a.regionSha256) throw new Error(`${what}: the region read differs from the array's region`);
        job.resultShared = whole.shared;
      };
      try {
        await check();
      } catch (error) {
        if (!job.shared || error.message.includes('differs')) throw error;
        notes.push(`${what}: useSharedArrayBuffer true failed (${error.message.split('\n')[0]}); read with false`);
        job.shared = false;
        pageErrors.length = 0;
        await check();
      }
    }
    if (pageErrors.length > 0) throw new Error(`errors in the page: ${pageErrors.join('; ')}`);
    // --profile DIR: one more whole read by each parle reader under the DevTools CPU profiler (the
    // page's main thread), saved as DIR/<array>-<reader>.cpuprofile (not timed)
    if (args.profile) {
      mkdirSync(args.profile, { recursive: true });
      await cdp.send('Profiler.enable');
      await cdp.send('Profiler.setSamplingInterval', { interval: 200 });
      for (const job of jobs.filter((j) => j.codec === 'parle')) {
        await cdp.send('Profiler.start');
        await read({ store: job.store, reader: job.reader, shared: job.shared }, `${a.name}, profiled`);
        const { profile } = await cdp.send('Profiler.stop');
        writeFileSync(join(args.profile, `${slug(`${a.name}-${job.reader}`)}.cpuprofile`), JSON.stringify(profile));
      }
      await cdp.send('Profiler.disable');
    }
    // the timed rounds: every reader in turn (each round starting one further), so a change of the
    // machine's load falls on all of them
    for (let round = 0; round < rounds; round++) {
      for (let k = 0; k < jobs.length; k++) {
        const job = jobs[(round + k) % jobs.length];
        const what = `${a.name}, ${job.codec}, ${job.label}`;
        const before = await metrics();
        const whole = await read({ store: job.store, reader: job.reader, shared: job.shared }, what);
        const after = await metrics();
        job.whole.push({
          ms: whole.ms,
          taskMs: (after.TaskDuration - before.TaskDuration) * 1e3,
          cpuMs: (after.ThreadTime - before.ThreadTime) * 1e3,
          longestTaskMs: whole.longestTaskMs,
        });
        for (let i = 0; i < REGION_READS; i++) {
          job.region.push((await read({ store: job.store, reader: job.reader, shared: job.shared, region: a.region }, what)).ms);
        }
      }
    }
    if (pageErrors.length > 0) throw new Error(`errors in the page: ${pageErrors.join('; ')}`);
    for (const job of jobs) {
      const wholeMs = median(job.whole.map((w) => w.ms));
      const row = {
        file: a.name,
        shape: a.shape,
        mib: a.bytes / 2 ** 20,
        chunkShape: a.chunkShape,
        codec: job.codec,
        reader: job.label,
        useSharedArrayBuffer: job.reader === 'fizarrita' ? job.shared : undefined,
        resultShared: job.resultShared,
        ratio: a.ratios[job.codec],
        readMBps: a.bytes / wholeMs / 1e3,
        regionMs: median(job.region),
        busy: median(job.whole.map((w) => w.taskMs / w.ms)),
        cpu: median(job.whole.map((w) => w.cpuMs / w.ms)),
        longestTaskMs: median(job.whole.map((w) => w.longestTaskMs)),
        reads: job.whole.map((w) => ({
          ms: round1(w.ms),
          taskMs: round1(w.taskMs),
          cpuMs: round1(w.cpuMs),
          longestTaskMs: round1(w.longestTaskMs),
        })),
        regionReads: job.region.map(round1),
      };
      rows.push(row);
      console.log(
        `${a.name.padEnd(26)} ${job.codec.padEnd(31)} ${job.label.padEnd(24)} ratio ${row.ratio.toFixed(3).padStart(7)}  read ${row.readMBps.toFixed(0).padStart(5)} MB/s  region ${row.regionMs.toFixed(1).padStart(6)} ms  busy ${pct(row.busy).padStart(4)}  cpu ${pct(row.cpu).padStart(4)}  longest ${row.longestTaskMs.toFixed(0).padStart(4)} ms`,
      );
    }
  }
} finally {
  await browser?.close().catch(() => {});
  server.closeAllConnections();
  server.close();
  rmSync(dir, { recursive: true, force: true });
}
function round1(x) {
  return Math.round(x * 10) / 10;
}
function pct(x) {
  return `${(100 * x).toFixed(0)} %`;
}
for (const note of notes) console.log(`note: ${note}`);

// PASS / MISS against the issue's targets, per file
const checks = [];
for (const file of new Set(rows.map((r) => r.file))) {
  const of = (codec, reader) => rows.find((r) => r.file === file && r.codec === codec && r.reader.startsWith(reader));
  // parle's best reader: zarrita's get, or createGet (the workers place the chunks; with
  // WorkerFetchStore they fetch them too); the main thread's least busy one
  const parleRows = rows.filter((r) => r.file === file && r.codec === 'parle');
  const p = parleRows.reduce((a, b) => (b.readMBps > a.readMBps ? b : a));
  const quiet = parleRows.reduce((a, b) => (b.busy < a.busy ? b : a));
  const z = of('numcodecs zstd 1', 'zarrita');
  const fb = of('numcodecs blosc zstd 5 shuffle', 'fizarrita');
  const peers = rows.filter((r) => r.file === file && r.codec.startsWith('numcodecs'));
  const fastest = peers.reduce((a, b) => (b.regionMs < a.regionMs ? b : a));
  checks.push([
    `${file}: parle's whole read >= 3x numcodecs zstd's (zarrita get) at >= its ratio`,
    p.readMBps >= 3 * z.readMBps && p.ratio >= z.ratio,
    `${(p.readMBps / z.readMBps).toFixed(2)}x, ratio ${p.ratio.toFixed(2)} vs ${z.ratio.toFixed(2)}`,
  ]);
  if (fb) {
    checks.push([
      `${file}: parle's whole read >= fizarrita's with blosc`,
      p.readMBps >= fb.readMBps,
      `${p.readMBps.toFixed(0)} vs ${fb.readMBps.toFixed(0)} MB/s`,
    ]);
  }
  checks.push([
    `${file}: parle's sub-region no slower than the fastest peer`,
    p.regionMs <= fastest.regionMs,
    `${p.regionMs.toFixed(1)} vs ${fastest.regionMs.toFixed(1)} ms (${fastest.codec}, ${fastest.reader})`,
  ]);
  checks.push([
    `${file}: main thread busy < 10 % of parle's whole read (${quiet.reader})`,
    quiet.busy < 0.1,
    `${pct(quiet.busy)} (cpu ${pct(quiet.cpu)})`,
  ]);
}
for (const [what, ok, detail] of checks) console.log(`${ok ? 'PASS' : 'MISS'} ${what}: ${detail}`);
const elapsedS = (performance.now() - started) / 1000;
console.log(`${elapsedS.toFixed(0)} s`);

const machine = machineInfo({ workers, chromium: chromiumVersion, fizarrita, loadBefore });
console.log(`load average after: ${machine.loadAverage.join(', ')}`);
const zarritaVersion = JSON.parse(readFileSync(join(ROOT, 'node_modules/zarrita/package.json'), 'utf8')).version;
const md = [
  '# Zarr arrays read in Chromium: the parle codec against numcodecs and fizarrita',
  '',
  `${machine.cpu}, ${machine.cores} cores, Node ${machine.node}, Chromium ${chromiumVersion}, ${machine.date.slice(0, 10)}, commit ${machine.commit}, load average ${loadBefore[0]} before and ${machine.loadAverage[0]} after; zarrita ${zarritaVersion}${fizarrita ? `, fizarrita ${fizarrita.version} (on zarrita ${fizarrita.zarrita}: see the script)` : ', fizarrita not installed'}; parle's engine and fizarrita's pool of ${workers} workers. Stores written in Node, read over loopback HTTP (zarrita's FetchStore) by a cross-origin isolated page. Each array is a corpus array stacked along its first axis to at least ${args['min-mib']} MiB; chunks of about ${args['chunk-mib']} MiB; region: two chunks' rows, the middle half of the other axes. Medians of ${rounds} rounds (${REGION_READS} region reads each) after a warm-up read whose bytes are checked. read: MB/s of the array's raw bytes. busy: the main thread's task time (CDP TaskDuration) over a whole read's wall time; cpu: its CPU time (ThreadTime) over the same; longest: the longest task seen (longtask entries, over 50 ms).`,
  '',
  '| file | shape | codec | reader | chunk shape | ratio | read MB/s | region ms | busy | cpu | longest ms |',
  '| --- | --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |',
  ...rows.map(
    (r) =>
      `| ${r.file} | [${r.shape}] (${r.mib.toFixed(0)} MiB) | ${r.codec} | ${r.reader} | [${r.chunkShape}] | ${r.ratio.toFixed(3)} | ${r.readMBps.toFixed(0)} | ${r.regionMs.toFixed(1)} | ${pct(r.busy)} | ${pct(r.cpu)} | ${r.longestTaskMs.toFixed(0)} |`,
  ),
  '',
  ...notes.map((n) => `Note: ${n}`),
  ...checks.map(([what, ok, detail]) => `- ${ok ? 'PASS' : 'MISS'} ${what}: ${detail}`),
  '',
].join('\n');
writeResults(
  {
    'zarr-browser.json': { machine, page: pageEnv, zarrita: zarritaVersion, rounds, regionReads: REGION_READS, rows, notes, checks },
    'zarr-browser.md': md,
  },
  { quick: args.quick, out: args.out },
);
