// The browser bundle in real Chromium (Debian's /usr/bin/chromium, headless, driven by
// playwright-core): the demo page's self-test cross-origin isolated (shared memory) and not
// (transferred segments), WebGPU on SwiftShader, a file round trip through the page's UI with the
// .parle it downloads read back by Node, a GPU op whose buffer cannot be made (it must reject),
// and no console errors. A screenshot of the page after a run is saved to
// test/artifacts/browser-demo.png.
//
// Needs the bundle: `node build/build.mjs --quiet --no-types` (npm test's pretest does it).
// PARLE_REQUIRE_GPU=1 fails the GPU case instead of skipping it when no adapter comes up.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createEngine } from '../ts/engine.js';
import { BASE_SEED, Rng } from './support/random.js';
// @ts-expect-error: a plain .mjs script without type declarations
import { startServer } from '../web/serve.mjs';

const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = fileURLToPath(new URL('./artifacts/', import.meta.url));
/** WebGPU on SwiftShader (software Vulkan), as the issue asks; --no-sandbox because CI runs as root. */
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--enable-unsafe-webgpu',
  '--enable-features=Vulkan',
  '--use-vulkan=swiftshader',
  '--use-webgpu-adapter=swiftshader',
  '--disable-gpu-sandbox',
  '--headless=new',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];
const CPU_OPS = ['rleEncode', 'rleDecode', 'sort', 'scan', 'compress', 'decompress'];
const GPU_OPS = ['rleEncode', 'rleDecode', 'sort', 'scan'];
const requireGpu = process.env.PARLE_REQUIRE_GPU === '1';

interface SelfTestResult {
  op: string;
  path: 'cpu' | 'gpu';
  ok: boolean;
  ms: number;
  error?: string;
}
interface SelfTestSummary {
  status: 'pass' | 'fail';
  results: SelfTestResult[];
  env: { crossOriginIsolated: boolean; sharedMemory: boolean; workers: number; adapter: unknown; seed: number };
}
interface Server {
  url: string;
  close(): Promise<void>;
}

let userDataDir: string;
let context: BrowserContext;
let isolated: Server;
let notIsolated: Server;
/** Console errors and uncaught exceptions of every page, as `url: text`. */
const consoleErrors: string[] = [];
/** The self-test summaries, by mode, for the GPU case. */
const selfTests = new Map<string, SelfTestSummary>();

async function openPage(url: string): Promise<Page> {
  const page = await context.newPage();
  page.on('console', (message) => {
    if (message.type() === 'error') consoleErrors.push(`${page.url()}: ${message.text()}`);
  });
  page.on('pageerror', (error) => consoleErrors.push(`${page.url()}: uncaught ${error.message}`));
  await page.goto(url);
  return page;
}

/** Seeded u32 data in runs of mean length 8 (compresses well, but not to nothing). */
function runsOfU32(rng: Rng, length: number): Uint32Array {
  const out = new Uint32Array(length);
  for (let i = 0; i < length;) {
    const run = 1 + (rng.nextU32() % 16);
    out.fill(rng.nextU32() & 0xffff, i, i + run);
    i += run;
  }
  return out;
}

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install chromium`);
  if (!existsSync('dist/browser/index.js') || !existsSync('build/parle.wasm')) {
    throw new Error('the browser bundle is missing: run `node build/build.mjs --quiet --no-types`');
  }
  isolated = await startServer({ port: 0, isolation: true });
  notIsolated = await startServer({ port: 0, isolation: false });
  // A fresh profile: no stored calibration, no cache, nothing from another run.
  userDataDir = mkdtempSync(join(tmpdir(), 'parle-chromium-'));
  context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    acceptDownloads: true,
    viewport: { width: 960, height: 1100 },
  });
});

afterAll(async () => {
  await context?.close();
  await isolated?.close();
  await notIsolated?.close();
  if (userDataDir) rmSync(userDataDir, { recursive: true, force: true });
});

afterEach(() => {
  // Every case ends with no console error on its pages; the list starts empty for the next case,
  // so one case's error fails that case, not every case after it.
  const errors = consoleErrors.splice(0);
  expect(errors, 'console errors in the page').toEqual([]);
});

describe('the browser bundle', () => {
  it('imports no Node built-in and finds its worker and kernels by literal URLs', () => {
    for (const file of ['dist/browser/index.js', 'dist/browser/worker.js']) {
      const code = readFileSync(file, 'utf8');
      expect(code, file).not.toMatch(/\bfrom\s*["']node:|\brequire\(|import\(\s*["']node:/);
    }
    // (the bundle's whitespace is dropped: a bundler's parser reads the call, not its spacing)
    const index = readFileSync('dist/browser/index.js', 'utf8');
    expect(index).toMatch(/new URL\("\.\/worker\.js",\s*import\.meta\.url\)/);
    for (const wasm of ['parle.wasm', 'parle-scalar.wasm', 'parle-unshared.wasm']) {
      expect(index).toMatch(new RegExp(`new URL\\("\\.\\./\\.\\./build/${wasm.replace('.', '\\.')}",\\s*import\\.meta\\.url\\)`));
    }
  });
});

describe('the demo page in Chromium', () => {
  const seed = BASE_SEED;

  for (const mode of ['isolated', 'not isolated'] as const) {
    it(`self-test: every op round-trips on the CPU workers, ${mode}`, async () => {
      const server = mode === 'isolated' ? isolated : notIsolated;
      const page = await openPage(`${server.url}?selftest&seed=${seed}`);
      try {
        await page.waitForFunction(() => (document.getElementById('selftest')?.textContent ?? '') !== '', null, { timeout: 50_000 });
        const summary = JSON.parse((await page.textContent('#selftest')) ?? '') as SelfTestSummary;
        selfTests.set(mode, summary);
        const coi = await page.evaluate(() => globalThis.crossOriginIsolated);
        expect(coi).toBe(mode === 'isolated');
        expect(summary.env.crossOriginIsolated).toBe(coi);
        // Shared memory exactly when isolated; else the pool transfers segments.
        expect(summary.env.sharedMemory).toBe(coi);
        expect(summary.env.workers).toBe(2);
        const failed = summary.results.filter((r) => !r.ok);
        expect(failed, `self-test failures (seed ${seed}; rerun with PARLE_SEED=${seed})`).toEqual([]);
        expect(summary.status).toBe('pass');
        expect(summary.results.filter((r) => r.path === 'cpu').map((r) => r.op)).toEqual(CPU_OPS);
        for (const r of summary.results) expect(r.ms).toBeGreaterThanOrEqual(0);
      } finally {
        await page.close();
      }
    });
  }

  it('self-test: the GPU ops round-trip on WebGPU (SwiftShader), isolated and not', (ctx) => {
    const gpuRuns = [...selfTests].map(([mode, s]) => [mode, s.results.filter((r) => r.path === 'gpu')] as const);
    expect(gpuRuns.length, 'the self-test cases ran first').toBe(2);
    if (gpuRuns.some(([, results]) => results.length === 0)) {
      const message =
        `*** GPU part of the browser self-test did NOT run: no WebGPU adapter in headless Chromium ` +
        `(${gpuRuns.map(([mode, r]) => `${mode}: ${r.length} GPU results`).join(', ')}). Only the CPU path was tested.`;
      if (requireGpu) throw new Error(`${message} PARLE_REQUIRE_GPU=1 makes this a failure.`);
      console.warn(message);
      ctx.skip();
    }
    for (const [, results] of gpuRuns) {
      expect(results.map((r) => r.op)).toEqual(GPU_OPS);
      expect(
        results.filter((r) => !r.ok),
        `GPU failures (seed ${seed})`,
      ).toEqual([]);
    }
  });

  it('a file chosen through the page round-trips, and its download decompresses in Node', async () => {
    const rng = new Rng(seed);
    const original = runsOfU32(rng, 75_000); // 300 kB: a GPU sort on SwiftShader stays around a second
    const bytes = Buffer.from(original.buffer);
    // the page's flows, not its calibration (the sample test below calibrates): no measuring of
    // SwiftShader first, whose time depends on the machine's load (it passed 40 s under a second job)
    const page = await openPage(`${isolated.url}?calibration=skip`);
    try {
      await page.waitForSelector('body[data-ready="true"]', { state: 'attached', timeout: 40_000 });
      await page.setInputFiles('#file', { name: 'runs.u32', mimeType: 'application/octet-stream', buffer: bytes });
      await page.selectOption('#type', 'u32');
      await expect.poll(() => page.isEnabled('#compress')).toBe(true);
      await page.click('#compress');
      await page.waitForSelector('body[data-state="compressed"]', { state: 'attached', timeout: 40_000 });
      expect(await page.isVisible('#error')).toBe(false);

      // The download is the .parle container; Node's engine reads it back.
      const [download] = await Promise.all([page.waitForEvent('download'), page.click('#download')]);
      expect(download.suggestedFilename()).toBe('runs.u32.parle');
      const downloaded = readFileSync(await download.path());
      const node = await createEngine({ workers: 0, gpu: 'off' });
      try {
        const back = await node.decompress(new Uint8Array(downloaded));
        expect(back).toBeInstanceOf(Uint32Array);
        expect(Buffer.from(back.buffer, back.byteOffset, back.byteLength).equals(bytes)).toBe(true);
      } finally {
        await node.destroy();
      }

      await page.click('#decompress');
      await page.waitForSelector('body[data-state="decompressed"]', { state: 'attached', timeout: 20_000 });
      expect(await page.getAttribute('#verdict', 'data-round-trip')).toBe('ok');
      expect(await page.getAttribute('#progress', 'value')).toBe('1');

      // What the page shows: a row per step, the cost model's choice per op, a chart with bars.
      const stats = await page.$$eval('#stats tbody tr', (rows) => rows.map((r) => r.textContent ?? ''));
      expect(stats).toHaveLength(2);
      expect(stats[0]).toMatch(/compress \(u32\)/);
      // beside the browser's own gzip: parle's row and CompressionStream's, each with a ratio
      const vsGzip = await page.$$eval('#vs-gzip tbody tr', (rows) => rows.map((r) => r.textContent ?? ''));
      expect(vsGzip).toHaveLength(2);
      expect(vsGzip[0]).toMatch(/^parle \(u32, auto\)/);
      expect(vsGzip[1]).toMatch(/^gzip \(CompressionStream\).*×/);
      const explained = await page.$$eval('#explain tbody tr td:nth-child(2)', (cells) => cells.map((c) => c.textContent));
      expect(explained).toHaveLength(6); // rleEncode, rleDecode, scan, sort, compress, decompress
      for (const path of explained) expect(['cpu', 'gpu']).toContain(path);
      const bars = await page.$$eval('#chart rect title', (titles) => titles.map((t) => t.textContent ?? ''));
      expect(bars.filter((t) => / on cpu: /.test(t))).toHaveLength(6);
      const gpu = await page.evaluate(() => document.getElementById('env-gpu')?.textContent ?? '');
      if (gpu.startsWith('WebGPU:')) expect(bars.filter((t) => / on gpu: /.test(t))).toHaveLength(4);

      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: join(ARTIFACTS, 'browser-demo.png'), fullPage: true });
    } finally {
      await page.close();
    }
  });

  it('the sample button fetches a repository sample, sets its type and round-trips it', async () => {
    const page = await openPage(isolated.url);
    try {
      // the first page of an origin calibrates on SwiftShader: slow on a loaded machine
      await page.waitForSelector('body[data-ready="true"]', { state: 'attached', timeout: 100_000 });
      await page.selectOption('#sample', 't1-mri.u16');
      await page.click('#try-sample');
      await page.waitForSelector('body[data-state="decompressed"]', { state: 'attached', timeout: 60_000 });
      expect(await page.isVisible('#error')).toBe(false);
      expect(await page.getAttribute('body', 'data-sample')).toBe('t1-mri.u16');
      expect(await page.inputValue('#type')).toBe('u16');
      expect(await page.textContent('#file-info')).toMatch(/^t1-mri\.u16: .*1015808 u16 elements/);
      expect(await page.getAttribute('#verdict', 'data-round-trip')).toBe('ok');
      const stats = await page.$$eval('#stats tbody tr', (rows) => rows.map((r) => r.textContent ?? ''));
      expect(stats.map((r) => r.split(' (')[0])).toEqual(['compress', 'decompress']);
      // the server's /samples/ mount: that folder's data files only
      expect((await fetch(`${isolated.url}samples/..%2fpackage.json`)).status).toBe(404);
      expect((await fetch(`${isolated.url}samples/regenerate.js`)).status).toBe(404);
    } finally {
      await page.close();
    }
  }, 200_000);

  it('a .parle file made by Node, dropped on the page, decompresses there, not isolated', async () => {
    const original = runsOfU32(new Rng(seed ^ 0x5bd1e995), 50_000);
    const node = await createEngine({ workers: 0, gpu: 'off' });
    let container: Uint8Array;
    try {
      container = await node.compress(original, { chunkBytes: 64 << 10 });
    } finally {
      await node.destroy();
    }
    const page = await openPage(`${notIsolated.url}?calibration=skip`);
    try {
      await page.waitForSelector('body[data-ready="true"]', { state: 'attached', timeout: 40_000 });
      // Dropped on the drop zone this time, as a person drags a file in.
      const dataTransfer = await page.evaluateHandle((bytes) => {
        const transfer = new DataTransfer();
        transfer.items.add(new File([new Uint8Array(bytes)], 'node.parle'));
        return transfer;
      }, Array.from(container));
      await page.dispatchEvent('#drop', 'drop', { dataTransfer });
      await expect.poll(() => page.isEnabled('#decompress')).toBe(true);
      expect(await page.isEnabled('#compress')).toBe(false);
      await page.click('#decompress');
      await page.waitForSelector('body[data-state="decompressed"]', { state: 'attached', timeout: 20_000 });
      const [download] = await Promise.all([page.waitForEvent('download'), page.click('#download')]);
      expect(download.suggestedFilename()).toBe('node.u32');
      const decoded = readFileSync(await download.path());
      expect(decoded.equals(Buffer.from(original.buffer))).toBe(true);
    } finally {
      await page.close();
    }
  });

  // WebGPU in a browser reports a buffer it cannot make as an error (from the GPU process, later),
  // not an exception: the op must reject, not resolve with its outputs' stale contents. The page is
  // opened outside openPage: Chromium writes the WebGPU error to its console, as it should.
  it('a GPU op whose buffer cannot be made rejects (GPU_ERROR), and the next one works', async (ctx) => {
    const page = await context.newPage();
    try {
      await page.goto(notIsolated.url);
      // (a string: vitest would rewrite the import() of a function's source for Node)
      const outcome = (await page.evaluate(`(async () => {
        const parle = await import('/dist/browser/index.js');
        let engine;
        try {
          engine = await parle.createEngine({ workers: 0, gpu: 'require', calibration: 'skip', gpuPoolBytes: 0 });
        } catch (e) {
          return { noGpu: String(e) };
        }
        try {
          const gpuContext = engine.gpuContext;
          const device = gpuContext.device;
          const input = new Uint8Array(1 << 16).map((_, i) => (i >> 4) & 255);
          const want = await engine.rleEncode(input, { path: 'cpu' });
          const same = (a, b) => a.length === b.length && a.every((v, i) => v === b[i]);
          const original = device.createBuffer;
          // RLE encode's scratch buffer made past maxBufferSize: never valid (gpuPoolBytes 0: made anew)
          device.createBuffer = function (desc) {
            const size = desc.label === 'parle:rle-ends' ? gpuContext.limits.maxBufferSize + 256 : desc.size;
            return original.call(device, { ...desc, size });
          };
          let failed;
          try {
            const runs = await engine.rleEncode(input, { path: 'gpu' });
            failed = \`resolved (\${same(runs.values, want.values) ? 'right' : 'stale'} runs)\`;
          } catch (e) {
            failed = e.code ?? String(e);
          } finally {
            device.createBuffer = original;
          }
          // Chromium may deliver the failed op's uncapturederror event (\"Invalid Buffer ... due to
          // a previous error\") a task later, where the next op's error count would take it as its
          // own (1 run in 2 failed so, before and after container version 3): let it arrive first
          await device.queue.onSubmittedWorkDone();
          await new Promise((resolve) => setTimeout(resolve, 100));
          const again = await engine.rleEncode(input, { path: 'gpu' });
          return { failed, again: same(again.values, want.values) && same(again.lengths, want.lengths) };
        } finally {
          await engine.destroy();
        }
      })()`)) as { noGpu: string } | { failed: string; again: boolean };
      if ('noGpu' in outcome) {
        if (requireGpu) throw new Error(`no WebGPU adapter in headless Chromium (${outcome.noGpu}); PARLE_REQUIRE_GPU=1`);
        console.warn(`*** the browser's GPU error case did NOT run: ${outcome.noGpu}`);
        ctx.skip();
      }
      expect(outcome).toEqual({ failed: 'GPU_ERROR', again: true });
    } finally {
      await page.close();
    }
  });
});
