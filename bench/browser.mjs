// The browser build against the Node build on the same real arrays, in the same run, with the
// same number of workers: compress and decompress in headless Chromium (Debian's
// /usr/bin/chromium driven by playwright-core; a cross-origin isolated page, so the pool shares
// one WebAssembly.Memory) beside Node, and the ratio browser / Node. The target (the browser
// build's issue): >= 0.8x Node's rate both ways on every file.
//
//   node build/build.mjs --quiet --no-types && node bench/browser.mjs [--quick] [--files a,b] [--workers N] [--out DIR]
//
// Files: the corpus (bench/corpus/index.json, bench/corpus/data/; missing ones are skipped with
// a warning: bench/corpus/fetch.sh) and data/samples/t1-mri.u16, camera.u8; the element type is
// the extension's. --quick: the two samples only (results in bench/.quick/). --files: names (or
// their beginnings), comma-separated. --workers N (default 2). --rounds R (default 3): per file,
// R rounds of Node then browser (below). --timeout S: seconds per file, side and round (default
// 120). --strict: exit 1 when a ratio misses the target.
//
// Both sides run bench/lib/measure.mjs (Node from disk, the page bench/browser/index.html
// from this script's server), so they time the same calls the same way: per file, compress(data)
// (MB/s of input; a new container each call) and, for comparison, compress(data, { out }) into a
// reused array; decompress(container, { out }) into a reused array and decompress(container)
// into a new one (MB/s of output); each a median of >= 7 calls and >= 500 ms after 2 warm-ups,
// the round trip checked first. The target is on compress(data) and decompress(container, { out }).
// Engines: createEngine({ workers: N, gpu: 'off', calibration: 'skip' }) on each side.
//
// Node measures a file, then the browser does, R times over; the two never run at once. A side's
// MB/s is the median of its rounds' figures; the ratio browser / Node is the median of the
// rounds' ratios, each of two measurements taken back to back (on a busy machine the load
// drifts: a pair sees about the same load, and the median drops a round one side had quiet).
// Every round's figures are in the JSON. The load average before and after is printed: figures
// taken while something else runs on the machine say little.
//
// Each side also reports how fast it fills new memory (new Uint8Array(n).fill at 256 KiB, 2 MiB
// and 8 MiB: the page faults a new result costs) beside a reused array: the columns with new
// results (c, d) follow it, those into reused arrays (c(out), d(out)) do not.
//
// Prints a table and PASS/MISS lines; writes browser.json (machine, Chromium version, workers,
// both engines' environment, per file figures) to bench/results/<machine>/ (--quick: bench/.quick/).
import { createReadStream, existsSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import os from 'node:os';
import { extname, join, normalize, sep } from 'node:path';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';
import { compressBound, createEngine } from '../dist/node/index.js';
import { CTORS, dataFiles, readArray } from './lib/files.mjs';
import { engineInfo, freshArrayRates, measureArray, MIN_MS, MIN_RUNS, WARMUPS } from './lib/measure.mjs';
import { machineInfo, ROOT as root, writeResults } from './lib/results.mjs';

const CHROMIUM = '/usr/bin/chromium';
/** test/browser.test.ts's flags, less WebGPU's (gpu: 'off' here). --no-sandbox: CI runs as root. */
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--headless=new',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];
const TARGET = 0.8;
const SAMPLES = ['t1-mri.u16', 'camera.u8'];

const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean' },
    files: { type: 'string' },
    workers: { type: 'string', default: '2' },
    rounds: { type: 'string', default: '3' },
    timeout: { type: 'string', default: '120' },
    out: { type: 'string' },
    strict: { type: 'boolean' },
  },
});
const quick = args.quick === true;
const workers = Number(args.workers);
if (!Number.isInteger(workers) || workers < 0) throw new Error(`--workers must be a whole number, not ${args.workers}`);
const rounds = Number(args.rounds);
if (!Number.isInteger(rounds) || rounds < 1) throw new Error(`--rounds must be a whole number >= 1, not ${args.rounds}`);
const timeoutMs = Number(args.timeout) * 1000;
if (!(timeoutMs > 0)) throw new Error(`--timeout must be a positive number of seconds, not ${args.timeout}`);

for (const file of ['dist/node/index.js', 'dist/browser/index.js', 'dist/browser/worker.js', 'build/parle.wasm']) {
  if (!existsSync(join(root, file))) throw new Error(`${file} is missing: run \`node build/build.mjs --quiet --no-types\``);
}
if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install chromium`);

// ---------------------------------------------------------------------------------------------
// The files

/** { name, path (repository-relative, also the URL path), type, bytes } of every file to run. */
function listFiles() {
  const chosen = dataFiles({ corpus: !quick, samples: SAMPLES, files: args.files });
  if (chosen.length === 0) throw new Error(`no file matches --files ${args.files}`);
  return chosen.map((f) => ({ name: f.name, path: f.rel, type: f.type, bytes: statSync(f.path).size }));
}

/** The file as a typed array over a fresh buffer of its own (aligned, as the page's fetch gives). */
const loadArray = (file) => readArray({ path: join(root, file.path), Ctor: CTORS[file.type] });

// ---------------------------------------------------------------------------------------------
// The server: the repository's files the page needs, cross-origin isolated

/** URL path prefixes served (each the same folder under the repository root) and their files. */
const MOUNTS = [
  { prefix: '/dist/browser/', allow: /\.js(\.map)?$/ },
  { prefix: '/build/', allow: /\.wasm$/ },
  { prefix: '/bench/browser/', allow: /\.(html|js)$/ },
  { prefix: '/bench/lib/', allow: /\/measure\.mjs$/ },
  { prefix: '/bench/corpus/data/', allow: /\.(u8|u16|u32|i32|f32)$/ },
  { prefix: '/data/samples/', allow: /\.(u8|u16|u32|i32|f32)$/ },
];
const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
};

function resolveRequest(urlPath) {
  let path;
  try {
    path = decodeURIComponent(urlPath);
  } catch {
    return null;
  }
  if (path.includes('\0')) return null;
  const mount = MOUNTS.find((m) => path.startsWith(m.prefix));
  if (!mount) return null;
  const base = join(root, mount.prefix);
  const file = normalize(join(root, path));
  if (!file.startsWith(base) || file.includes(`${sep}..${sep}`) || !mount.allow.test(file)) return null;
  return file;
}

async function startServer() {
  const headers = {
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
    'Cross-Origin-Opener-Policy': 'same-origin',
    'Cross-Origin-Embedder-Policy': 'require-corp',
    'Cross-Origin-Resource-Policy': 'same-origin',
  };
  const server = createServer((req, res) => {
    const fail = (status, text) => {
      res.writeHead(status, { ...headers, 'Content-Type': 'text/plain; charset=utf-8' });
      res.end(text);
    };
    if (req.method !== 'GET' && req.method !== 'HEAD') return fail(405, 'method not allowed\n');
    const file = resolveRequest(new URL(req.url ?? '/', 'http://localhost').pathname);
    let size;
    try {
      size = file && statSync(file).isFile() ? statSync(file).size : undefined;
    } catch {
      size = undefined;
    }
    if (size === undefined) return fail(404, 'not found\n');
    res.writeHead(200, { ...headers, 'Content-Type': TYPES[extname(file)] ?? 'application/octet-stream', 'Content-Length': size });
    if (req.method === 'HEAD') return res.end();
    createReadStream(file)
      .on('error', () => res.destroy())
      .pipe(res);
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

// ---------------------------------------------------------------------------------------------
// Helpers

function withTimeout(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: timed out after ${ms / 1000} s`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

const fmt = (x, digits = 0) => (x === undefined || x === null || Number.isNaN(x) ? '-' : x.toFixed(digits));
const pad = (s, n) => String(s).padStart(n);
const OPS = ['compress', 'compressOut', 'decompress', 'decompressFresh'];

const median = (xs) => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
const round1 = (x) => Math.round(x * 10) / 10;

/** One side's rounds merged: per op the median of the rounds' MB/s, the best, and every round's figures. */
function mergeRounds(results) {
  const merged = { bytes: results[0].bytes, elements: results[0].elements, containerBytes: results[0].containerBytes };
  for (const op of OPS) {
    merged[op] = {
      mbps: median(results.map((r) => r[op].mbps)),
      bestMBps: Math.max(...results.map((r) => r[op].mbps)),
      rounds: results.map((r) => ({
        mbps: round1(r[op].mbps),
        medianMs: r[op].medianMs,
        minMs: r[op].minMs,
        maxMs: r[op].maxMs,
        runs: r[op].runs,
      })),
    };
  }
  return merged;
}
const loadavg = () => os.loadavg().map((x) => Math.round(x * 100) / 100);

// ---------------------------------------------------------------------------------------------
// The run

const started = performance.now();
/** The builds' files and their modification times: a rebuild during the run makes its figures mixed. */
const BUILD_FILES = ['dist/node/index.js', 'dist/browser/index.js', 'dist/browser/worker.js', 'build/parle.wasm'];
const buildStamp = () => BUILD_FILES.map((f) => `${f} ${statSync(join(root, f)).mtime.toISOString()}`);
const buildBefore = buildStamp();
const files = listFiles();
const machine = machineInfo();
console.log(`machine: ${machine.cpu}, ${machine.cores} cores, Node ${machine.node}`);
const loadBefore = loadavg();
console.log(
  `workers: ${workers}; per measurement ${WARMUPS} warm-ups, then >= ${MIN_RUNS} calls and >= ${MIN_MS} ms, median; ${rounds} rounds`,
);
console.log(`load average (1, 5, 15 min) before: ${loadBefore.join(', ')}`);
if (loadBefore[0] > machine.cores / 2)
  console.warn(`warning: the machine is busy (load ${loadBefore[0]} on ${machine.cores} cores): figures will be noisy`);

let server;
let browser;
let page;
let nodeEngine;
let closing = false;
const pageErrors = [];

async function cleanup() {
  if (closing) return;
  closing = true;
  try {
    if (page && !page.isClosed())
      await withTimeout(
        page.evaluate(() => window.parleBench?.teardown()),
        5000,
        'page teardown',
      ).catch(() => {});
  } catch {
    // best effort
  }
  await browser?.close().catch(() => {});
  await server?.close().catch(() => {});
  await nodeEngine?.destroy().catch(() => {});
}

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    console.error(`\n${signal}: closing the browser and the server`);
    cleanup().finally(() => process.exit(130));
  });
}

const rows = [];
let chromiumVersion;
let nodeEnv;
let browserEnv;
try {
  nodeEngine = await createEngine({ workers, gpu: 'off', calibration: 'skip' });
  if (nodeEngine.workers !== workers) throw new Error(`the Node engine has ${nodeEngine.workers} workers, asked for ${workers}`);
  nodeEnv = { ...engineInfo(nodeEngine), availableParallelism: os.availableParallelism?.() ?? os.cpus().length, memory: freshArrayRates() };

  server = await startServer();
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
  chromiumVersion = browser.version();
  page = await (await browser.newContext()).newPage();
  page.on('pageerror', (error) => pageErrors.push(`uncaught: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error') pageErrors.push(message.text());
  });
  page.on('crash', () => pageErrors.push('the page crashed'));
  const response = await page.goto(`${server.url}/bench/browser/index.html`);
  if (!response?.ok()) throw new Error(`the benchmark page: HTTP ${response?.status()}`);
  await page
    .waitForFunction(() => window.parleBench !== undefined, null, { timeout: 30_000 })
    .catch((e) => {
      throw new Error(`the benchmark page did not load: ${pageErrors.join('; ') || e.message}`);
    });
  const isolated = await page.evaluate(() => globalThis.crossOriginIsolated === true);
  if (!isolated) throw new Error('the benchmark page is NOT cross-origin isolated: check the COOP/COEP headers');
  browserEnv = await withTimeout(
    page.evaluate((w) => window.parleBench.setup({ workers: w }), workers),
    60_000,
    'creating the browser engine',
  );
  const e = browserEnv.engine;
  console.log(
    `chromium: ${chromiumVersion}; crossOriginIsolated ${browserEnv.crossOriginIsolated}, wasm SIMD ${browserEnv.wasmSimd}, hardwareConcurrency ${browserEnv.hardwareConcurrency}`,
  );
  const { memory: nodeMemory, ...nodeEngineInfo } = nodeEnv;
  console.log(`  node engine:    ${JSON.stringify(nodeEngineInfo)}`);
  console.log(`  browser engine: ${JSON.stringify(e)}; fetched ${browserEnv.fetched.join(', ')}`);
  const memoryLine = (m) =>
    `${Object.entries(m.freshMBps)
      .map(([size, rate]) => `${size} ${rate}`)
      .join(', ')} (reused array ${m.reusedMBps})`;
  console.log(`  MB/s of new Uint8Array(n).fill(1): node ${memoryLine(nodeMemory)}`);
  console.log(`                                     browser ${memoryLine(browserEnv.memory)}`);
  if (!e.allocShared || e.sharedMemory === false) throw new Error('the browser engine does not share its memory with its workers');
  if (e.workers !== workers) throw new Error(`the browser engine has ${e.workers} workers, asked for ${workers}`);
  console.log('');

  for (const file of files) {
    const data = loadArray(file);
    process.stdout.write(`${file.name} (${file.type}, ${fmt(file.bytes / 1e6, 1)} MB):`);
    const nodeRounds = [];
    const browserRounds = [];
    for (let round = 0; round < rounds; round++) {
      const n = await withTimeout(
        measureArray(nodeEngine, data, { compressBound }),
        timeoutMs,
        `${file.name} in Node (round ${round + 1})`,
      );
      const b = await withTimeout(
        page.evaluate((spec) => window.parleBench.runFile(spec), { url: `/${file.path}`, type: file.type }),
        timeoutMs,
        `${file.name} in Chromium (round ${round + 1})`,
      );
      if (pageErrors.length > 0) throw new Error(`errors in the page: ${pageErrors.join('; ')}`);
      nodeRounds.push(n);
      browserRounds.push(b);
      process.stdout.write(
        ` [c ${fmt(n.compress.mbps)}/${fmt(b.compress.mbps)} d(out) ${fmt(n.decompress.mbps)}/${fmt(b.decompress.mbps)}]`,
      );
    }
    const nodeResult = mergeRounds(nodeRounds);
    const browserResult = mergeRounds(browserRounds);
    const ratio = {};
    const roundRatios = {};
    for (const op of OPS) {
      roundRatios[op] = nodeRounds.map((n, i) => Math.round((browserRounds[i][op].mbps / n[op].mbps) * 1000) / 1000);
      ratio[op] = median(nodeRounds.map((n, i) => browserRounds[i][op].mbps / n[op].mbps));
    }
    const row = {
      file: file.name,
      type: file.type,
      bytes: file.bytes,
      containerBytes: { node: nodeResult.containerBytes, browser: browserResult.containerBytes },
      node: nodeResult,
      browser: browserResult,
      ratio,
      roundRatios,
      pass: { compress: ratio.compress >= TARGET, decompress: ratio.decompress >= TARGET },
    };
    rows.push(row);
    console.log(' MB/s node/browser');
  }
} catch (error) {
  await cleanup();
  console.error(`\nbench/browser.mjs failed: ${error.stack ?? error}`);
  if (pageErrors.length > 0) console.error(`page errors: ${pageErrors.join('\n  ')}`);
  process.exit(1);
}
await cleanup();

// ---------------------------------------------------------------------------------------------
// Report

const elapsedS = (performance.now() - started) / 1000;
const loadAfter = loadavg();
const rebuilt = buildStamp().filter((line, i) => line !== buildBefore[i]);
if (rebuilt.length > 0) {
  console.warn(
    `warning: the build was rewritten during the run (${rebuilt.join('; ')}); both sides loaded theirs at the start, but a replaced worker would load the new one`,
  );
}
const COLUMNS = [
  ['c', 'compress'],
  ['c(out)', 'compressOut'],
  ['d(out)', 'decompress'],
  ['d', 'decompressFresh'],
];
const header = ['file'.padEnd(26), pad('MB', 5), ...COLUMNS.flatMap(([label]) => [pad(`${label} N`, 10), pad('B', 6), pad('B/N', 5)])].join(
  ' ',
);
console.log('');
console.log(
  `MB/s, median of ${rounds} rounds (each a median of calls); N: Node, B: browser (Chromium); B/N: median of the rounds' ratios (target: c and d(out) >= ${TARGET})`,
);
console.log(`c: compress(data), new container (input MB/s); c(out): compress(data, { out }) into a reused array;`);
console.log(`d(out): decompress(container, { out }) into a reused array (output MB/s); d: decompress(container), new array`);
console.log(header);
console.log('-'.repeat(header.length));
for (const r of rows) {
  console.log(
    [
      r.file.padEnd(26),
      pad(fmt(r.bytes / 1e6, 1), 5),
      ...COLUMNS.flatMap(([, op]) => [pad(fmt(r.node[op].mbps), 10), pad(fmt(r.browser[op].mbps), 6), pad(fmt(r.ratio[op], 2), 5)]),
    ].join(' '),
  );
}
const differing = rows.filter((r) => r.containerBytes.node !== r.containerBytes.browser);
if (differing.length > 0) {
  console.log(
    `note: containers of different sizes: ${differing.map((r) => `${r.file} node ${r.containerBytes.node} B, browser ${r.containerBytes.browser} B`).join('; ')}`,
  );
}
console.log('');
let misses = 0;
for (const r of rows) {
  for (const op of ['compress', 'decompress']) {
    const ok = r.pass[op];
    if (!ok) misses++;
    console.log(
      `${ok ? 'PASS' : 'MISS'} ${r.file} ${op}: browser ${fmt(r.browser[op].mbps)} MB/s = ${fmt(r.ratio[op], 3)}x Node's ${fmt(r.node[op].mbps)} MB/s (target >= ${TARGET}x)`,
    );
  }
}
console.log(
  `\n${rows.length} files, ${misses} misses; ${elapsedS.toFixed(0)} s; load average before ${loadBefore.join(', ')}, after ${loadAfter.join(', ')}`,
);

writeResults(
  {
    'browser.json': {
      machine,
      chromium: { version: chromiumVersion, executable: CHROMIUM, args: CHROMIUM_ARGS },
      workers,
      quick,
      timing: {
        warmups: WARMUPS,
        minRuns: MIN_RUNS,
        minMs: MIN_MS,
        rounds,
        statistic: "per round: median of calls; mbps: median of rounds; ratio: median of the rounds' browser / node ratios",
      },
      loadAverage: { before: loadBefore, after: loadAfter },
      build: { files: buildBefore, changedDuringRun: rebuilt },
      target: { ratio: TARGET, ops: ['compress', 'decompress'] },
      env: { node: nodeEnv, browser: browserEnv },
      files: rows,
      misses,
      elapsedS: Math.round(elapsedS),
    },
  },
  { quick, out: args.out },
);
if (args.strict && misses > 0) process.exit(1);
