// The consumer fixtures: parle as the people who install it use it, from the packed tarball.
//   node test/consumers/run.mjs [NAME ...]        (npm run test:consumers; .ci/run runs all)
//
// 0. The fixtures are copied to $PARLE_CONSUMERS_DIR (default: $TMPDIR/parle-consumers), outside
//    the repository, so that nothing resolves to the repository's own node_modules (the webgpu
//    package there would light up a fixture's GPU path).
// 1. `npm pack` of the built package (run `npm run build` first) -> .pack/parle.tgz there
// 2. `npm install` in each fixture folder (no lockfile, no audit): its package.json names
//    "parle-codec": "file:../.pack/parle.tgz" and its own tools, so each is a fresh consumer project
// 3. node-esm, node-cjs, node-full: `node check.*` (see each file for what it checks);
//    typescript: `npm run check`, tsc over an application of the published declarations (strict,
//    skipLibCheck off; once without the DOM lib and @webgpu/types, once with them);
//    vite, webpack: the fixture's own build, then its dist/ served with COOP/COEP and opened in
//    Debian's Chromium through playwright-core (WebGPU on SwiftShader), where the page
//    round-trips data/samples/camera.u8 on two workers and on WebGPU.
// Prints one line per fixture and "consumers: N passed, N failed"; exits 1 when one failed.
// PARLE_REQUIRE_GPU=1 (CI) fails a browser fixture whose WebGPU round trip did not run.
import { spawn } from 'node:child_process';
import { copyFileSync, cpSync, createReadStream, existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer } from 'node:http';
import { extname, join, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const source = fileURLToPath(new URL('./', import.meta.url));
const root = join(source, '..', '..');
const here = process.env.PARLE_CONSUMERS_DIR ?? join(tmpdir(), 'parle-consumers');
const FIXTURES = ['node-esm', 'node-cjs', 'node-full', 'typescript', 'vite', 'webpack'];
const BROWSER = new Set(['vite', 'webpack']);
const SWIFTSHADER = '/usr/lib/chromium/vk_swiftshader_icd.json';
const CHROMIUM = '/usr/bin/chromium';
const SAMPLE = join(root, 'data/samples/camera.u8');
const requireGpu = process.env.PARLE_REQUIRE_GPU === '1';
const env = { ...process.env };
if (!env.VK_ICD_FILENAMES && existsSync(SWIFTSHADER)) env.VK_ICD_FILENAMES = SWIFTSHADER;

const chosen = process.argv.slice(2);
for (const name of chosen) if (!FIXTURES.includes(name)) throw new Error(`unknown fixture ${name}; one of ${FIXTURES.join(', ')}`);
const fixtures = chosen.length ? FIXTURES.filter((f) => chosen.includes(f)) : FIXTURES;

/** Runs a command; resolves to its output, rejects with it when the status is not 0. */
function sh(cmd, args, cwd, { quiet = false } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const take = (chunk) => {
      out += chunk;
      if (!quiet) process.stdout.write(chunk);
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`${cmd} ${args.join(' ')} (in ${cwd}) exited ${code}\n${quiet ? out : ''}`))));
  });
}

const seconds = (t0) => ((performance.now() - t0) / 1000).toFixed(1);

// ---- 1. the tarball -----------------------------------------------------------------------
if (!existsSync(join(root, 'dist/node/index.js')) || !existsSync(join(root, 'dist/types/index.d.ts'))) {
  console.error('consumers: dist/ is missing or has no types; run `npm run build` first');
  process.exit(2);
}
rmSync(here, { recursive: true, force: true });
cpSync(source, here, { recursive: true, filter: (path) => !/(^|[/\\])(node_modules|dist|\.pack)$/.test(path) });
console.log(`consumers: fixtures copied to ${here}`);
const packDir = join(here, '.pack');
mkdirSync(packDir);
let t0 = performance.now();
// --ignore-scripts: `prepare` would rebuild what `npm run build` just built
await sh('npm', ['pack', '--ignore-scripts', '--silent', '--pack-destination', packDir], root, { quiet: true });
const tgz = readdirSync(packDir).find((f) => f.endsWith('.tgz'));
renameSync(join(packDir, tgz), join(packDir, 'parle.tgz'));
console.log(`consumers: packed ${tgz} (${(statSync(join(packDir, 'parle.tgz')).size / 1e6).toFixed(2)} MB) in ${seconds(t0)} s`);

// ---- 2. installs, side by side (mostly waiting on the registry) ----------------------------
t0 = performance.now();
const installs = await Promise.allSettled(
  fixtures.map(async (name) => {
    const dir = join(here, name);
    await sh('npm', ['install', '--no-audit', '--no-fund', '--no-package-lock', '--loglevel=error'], dir, { quiet: true });
  }),
);
console.log(`consumers: installed ${fixtures.length} fixture(s) in ${seconds(t0)} s`);

// ---- 3. the checks ------------------------------------------------------------------------
const results = [];
let browser;

async function runFixture(name) {
  const dir = join(here, name);
  if (name === 'typescript') {
    await sh('npm', ['run', 'check', '--silent'], dir);
    return '';
  }
  if (!BROWSER.has(name)) {
    const script = existsSync(join(dir, 'check.cjs')) ? 'check.cjs' : 'check.mjs';
    await sh(process.execPath, [script], dir);
    return '';
  }
  copyFileSync(join(here, 'shared/app.js'), join(dir, 'src/app.js'));
  await sh('npm', ['run', 'build', '--silent'], dir, { quiet: true });
  return checkInBrowser(name, join(dir, 'dist'));
}

for (const [i, name] of fixtures.entries()) {
  const start = performance.now();
  let status = 'pass';
  let note = '';
  try {
    if (installs[i].status === 'rejected') throw installs[i].reason;
    console.log(`--- ${name}`);
    note = await runFixture(name);
  } catch (e) {
    status = 'FAIL';
    note = String(e?.stack ?? e);
  }
  results.push({ name, status, note, s: seconds(start) });
  console.log(`consumers: ${name}: ${status} (${seconds(start)} s)${note ? ` ${note}` : ''}`);
}
await browser?.close();

const failed = results.filter((r) => r.status !== 'pass');
console.log(`consumers: ${results.length - failed.length} passed, ${failed.length} failed (${results.map((r) => `${r.name} ${r.status} ${r.s} s`).join(', ')})`);
process.exit(failed.length ? 1 : 0);

// ---- the browser part ---------------------------------------------------------------------

/** Serves `dir` on a free port with the cross-origin isolation headers. */
async function serveStatic(dir) {
  const types = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.mjs': 'text/javascript', '.wasm': 'application/wasm', '.css': 'text/css', '.map': 'application/json' };
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    const file = normalize(join(dir, path === '/' ? 'index.html' : path));
    const headers = {
      'Cross-Origin-Opener-Policy': 'same-origin',
      'Cross-Origin-Embedder-Policy': 'require-corp',
      'Cache-Control': 'no-store',
    };
    if (!file.startsWith(dir + sep) || !existsSync(file) || !statSync(file).isFile()) {
      res.writeHead(404, headers).end('not found');
      return;
    }
    res.writeHead(200, { ...headers, 'Content-Type': types[extname(file)] ?? 'application/octet-stream' });
    createReadStream(file).pipe(res);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${server.address().port}/`, close: () => new Promise((resolve) => server.close(resolve)) };
}

/** Opens the built app, gives it the sample file, checks the JSON it writes. */
async function checkInBrowser(name, dist) {
  if (!browser) {
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      env,
      // as test/browser.test.ts: WebGPU on SwiftShader; --no-sandbox because CI runs as root
      args: ['--no-sandbox', '--enable-unsafe-webgpu', '--enable-features=Vulkan', '--use-vulkan=swiftshader', '--use-webgpu-adapter=swiftshader', '--disable-gpu-sandbox'],
    });
  }
  const server = await serveStatic(dist);
  const page = await browser.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(`uncaught ${e.message}`));
  // a 404 shows in the console without its URL: name it (the browser's own /favicon.ico aside)
  page.on('console', (m) => m.type() === 'error' && !m.text().startsWith('Failed to load resource') && errors.push(m.text()));
  page.on('response', (res) => res.status() >= 400 && !res.url().endsWith('/favicon.ico') && errors.push(`HTTP ${res.status()} ${res.url()}`));
  try {
    await page.goto(server.url);
    await page.waitForFunction(() => document.querySelector('#result')?.textContent !== 'loading', null, { timeout: 60_000 });
    await page.setInputFiles('#file', SAMPLE);
    await page.waitForFunction(() => document.querySelector('#result')?.textContent.startsWith('{'), null, { timeout: 180_000 });
    const r = JSON.parse(await page.textContent('#result'));
    console.log(`  result: ${JSON.stringify(r)}`);
    const expect = (ok, what) => {
      if (!ok) throw new Error(`check failed: ${what}\n  page result: ${JSON.stringify(r)}\n  page errors: ${errors.join(' | ')}`);
      console.log(`  ok  ${what}`);
    };
    expect(!r.error, 'the page ran');
    expect(r.crossOriginIsolated, 'served with COOP/COEP, the page is cross-origin isolated (shared memory)');
    expect(r.cpu.ok && r.cpu.workers === 2, `${r.file} (${r.bytes} bytes) round-trips on 2 Web Workers`);
    expect(r.cpuCodec.ok, "and with codec 'delta+huffman'");
    if (r.gpu.ok) expect(r.gpu.adapter !== null, `round-trips on WebGPU (${r.gpu.adapter})`);
    else if (requireGpu) expect(false, `round-trips on WebGPU (${r.gpu.error})`);
    else console.log(`  *** the WebGPU round trip did NOT run: ${r.gpu.error}`);
    expect(errors.length === 0, `no console errors${errors.length ? `: ${errors.join(' | ')}` : ''}`);
    return r.gpu.ok ? '' : '(WebGPU not checked)';
  } finally {
    await page.close();
    await server.close();
  }
}
