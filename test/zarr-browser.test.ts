/**
 * The Zarr codec in the browser (issue #46): arrays written in Node with zarrita's FileSystemStore
 * and the parle codec, served over HTTP, read in headless Chromium with zarrita's FetchStore and
 * parle's browser build (`dist/browser/zarr.js`, its worker pool cross-origin isolated): a whole
 * u16 volume with partial edge chunks, a sub-region of an f64 grid, and a corrupted chunk (its
 * ParleError code; the other chunks still read).
 *
 * Needs the bundle (`node build/build.mjs --quiet --no-types`, npm test's pretest) and Debian's
 * chromium, as test/browser.test.ts.
 */
import { createReadStream, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { extname, join, normalize, sep } from 'node:path';
import { build } from 'esbuild';
import { chromium, type BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as zarr from 'zarrita';
import { FileSystemStore } from '@zarrita/storage';
import { createEngine, registerZarrCodec, type Engine } from '../ts/index.js';

const CHROMIUM = '/usr/bin/chromium';
const ARGS = ['--no-sandbox', '--headless=new', '--disable-background-networking', '--disable-component-update', '--no-first-run'];
const ROOT = process.cwd();

let engine: Engine;
let dir: string;
let server: Server;
let origin: string;
let context: BrowserContext;
const consoleErrors: string[] = [];
/** Paths the page asked for that the server does not have. */
const notFound: string[] = [];

const VOLUME = { shape: [12, 40, 36], chunks: [5, 16, 16] };
const GRID = { shape: [70, 90], chunks: [32, 32] };
const volumeData = Uint16Array.from(
  { length: 12 * 40 * 36 },
  (_, i) => 1000 + Math.round(300 * Math.sin(i / 97)) + ((i * 2654435761) >>> 29),
);
const gridData = Float64Array.from(
  { length: 70 * 90 },
  (_, i) => Math.round(1000 * Math.cos(Math.floor(i / 90) / 9) * Math.sin((i % 90) / 13)) / 1000,
);
const strideOf = (shape: number[]) => shape.map((_, d) => shape.slice(d + 1).reduce((a, x) => a * x, 1));

/** Content types of what the test server sends. */
const TYPES: Record<string, string> = {
  '.js': 'text/javascript',
  '.wasm': 'application/wasm',
  '.html': 'text/html',
  '.json': 'application/json',
};

/**
 * Serves /dist/browser/ and /build/*.wasm from the repository (the package's layout), the zarrita
 * bundle and the page from `bundleDir`, and the store under /store/, every response with the
 * cross-origin isolation headers (shared memory for the pool).
 */
function serve(bundleDir: string, storeDir: string): Promise<Server> {
  const mounts: [string, string][] = [
    ['/dist/browser/', join(ROOT, 'dist/browser')],
    ['/build/', join(ROOT, 'build')],
    ['/store/', storeDir],
    ['/', bundleDir],
  ];
  const s = createServer((request, response) => {
    const path = decodeURIComponent(new URL(request.url ?? '/', 'http://x').pathname);
    const mount = mounts.find(([prefix]) => path.startsWith(prefix));
    const file = mount && normalize(join(mount[1], path.slice(mount[0].length)));
    const headers = { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' };
    if (!mount || !file || !file.startsWith(mount[1] + sep) || !existsSync(file) || !statSync(file).isFile()) {
      response.writeHead(404, headers).end();
      return;
    }
    response.writeHead(200, { ...headers, 'Content-Type': TYPES[extname(file)] ?? 'application/octet-stream' });
    createReadStream(file).pipe(response);
  });
  return new Promise((resolve) => s.listen(0, '127.0.0.1', () => resolve(s)));
}

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install chromium`);
  if (!existsSync('dist/browser/zarr.js')) throw new Error('the browser bundle is missing: run `node build/build.mjs --quiet --no-types`');
  engine = await createEngine({ workers: 1, gpu: 'off', calibration: 'skip' });
  registerZarrCodec(zarr.registry as unknown as Map<string, () => Promise<unknown>>, { engine });
  dir = mkdtempSync(join(tmpdir(), 'parle-zarr-browser-'));
  const storeDir = join(dir, 'store');
  const store = new FileSystemStore(storeDir);
  const write = async (name: string, dtype: zarr.DataType, spec: { shape: number[]; chunks: number[] }, data: ArrayBufferView) => {
    const arr = await zarr.create(zarr.root(store).resolve(name), {
      shape: spec.shape,
      chunkShape: spec.chunks,
      dtype,
      codecs: [{ name: 'parle', configuration: {} }],
      fillValue: 0 as never,
    });
    await zarr.set(arr, null, { data: data as never, shape: spec.shape, stride: strideOf(spec.shape) });
  };
  await write('volume', 'uint16', VOLUME, volumeData);
  await write('grid', 'float64', GRID, gridData);
  await write('broken', 'uint16', VOLUME, volumeData);
  // one chunk of `broken` with a payload byte flipped (a one-chunk container: its payload ends the file)
  const chunkFile = join(storeDir, 'broken', 'c', '0', '0', '0');
  const bytes = readFileSync(chunkFile);
  bytes[bytes.length - 5] ^= 0x20;
  writeFileSync(chunkFile, bytes);
  // zarrita for the page: one ES module
  const bundleDir = join(dir, 'www');
  await build({
    stdin: { contents: "export * from 'zarrita';", resolveDir: ROOT, loader: 'js' },
    bundle: true,
    format: 'esm',
    platform: 'browser',
    outfile: join(bundleDir, 'zarrita.js'),
    logLevel: 'silent',
  });
  writeFileSync(
    join(bundleDir, 'index.html'),
    '<!doctype html><meta charset="utf-8"><title>parle zarr</title><link rel="icon" href="data:,"><script type="module" src="page.js"></script>',
  );
  writeFileSync(join(bundleDir, 'page.js'), PAGE);
  server = await serve(bundleDir, storeDir);
  const address = server.address();
  origin = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;
  context = await chromium.launchPersistentContext(join(dir, 'profile'), { executablePath: CHROMIUM, headless: true, args: ARGS });
}, 120_000);

afterAll(async () => {
  await context?.close();
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  zarr.registry.delete('parle');
  await engine?.destroy();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/**
 * The page's module (plain JavaScript, served as is): reads the three arrays with zarrita's
 * FetchStore and the browser build's codec on a 2-worker engine, and leaves what it read (or its
 * error) in `globalThis.zarrResult`.
 */
const PAGE = `
import * as zarr from './zarrita.js';
import { createEngine } from '/dist/browser/index.js';
import { register, createGet, WorkerFetchStore } from '/dist/browser/zarr.js';
const bytesOf = (a) => Array.from(new Uint8Array(a.buffer, a.byteOffset, a.byteLength));
try {
  const engine = await createEngine({ workers: 2, gpu: 'off', calibration: 'skip' });
  register(zarr.registry, { engine });
  // version 3 directly (zarr.open probes version 2's .zarray first: a 404 an array)
  const open = (name) => zarr.open.v3(new zarr.FetchStore(location.origin + '/store/' + name), { kind: 'array' });
  const volume = await zarr.get(await open('volume'));
  const region = await zarr.get(await open('grid'), [zarr.slice(10, 45), zarr.slice(20, 71)]);
  const broken = await open('broken');
  let failure = { name: 'none' };
  try {
    await zarr.get(broken, [zarr.slice(0, 5), zarr.slice(0, 16), zarr.slice(0, 16)]);
  } catch (e) {
    // zarrita wraps a codec's error in its CodecPipelineError, the ParleError its cause
    failure = { name: e.name, cause: e.cause && e.cause.name, code: e.cause && e.cause.code };
  }
  const elsewhere = await zarr.get(broken, [zarr.slice(5, 12), null, null]);
  // the workers fetch the chunks (a URL relative to the page) and decode them into their place
  const viaWorkers = await createGet(zarr, { engine })(await zarr.open.v3(new WorkerFetchStore('/store/volume', { engine }), { kind: 'array' }));
  await engine.destroy();
  globalThis.zarrResult = {
    isolated: globalThis.crossOriginIsolated,
    volume: bytesOf(volume.data),
    region: { shape: region.shape, bytes: bytesOf(region.data) },
    broken: failure,
    brokenElsewhere: bytesOf(elsewhere.data),
    viaWorkers: bytesOf(viaWorkers.data),
  };
} catch (e) {
  globalThis.zarrResult = { error: String(e && e.stack ? e.stack : e) };
}
`;

/** What the page reads: each array's elements (or the region's) as bytes, and the broken chunk's error. */
interface PageResult {
  isolated: boolean;
  volume: number[];
  region: { shape: number[]; bytes: number[] };
  broken: { name: string; cause?: string; code?: string };
  brokenElsewhere: number[];
  viaWorkers: number[];
}

describe('the Zarr codec in Chromium (FetchStore, the browser build)', () => {
  it('reads a volume, a sub-region and a corrupted chunk written in Node; the volume again with the workers fetching', async () => {
    const page = await context.newPage();
    page.on('console', (m) => void (m.type() === 'error' && consoleErrors.push(m.text())));
    page.on('pageerror', (e) => consoleErrors.push(`uncaught ${e.message}`));
    page.on('response', (r) => void (r.status() === 404 && notFound.push(new URL(r.url()).pathname)));
    try {
      await page.goto(`${origin}/index.html`);
      await page.waitForFunction(() => 'zarrResult' in globalThis, null, { timeout: 60_000 });
      const result = (await page.evaluate(() => (globalThis as unknown as { zarrResult: unknown }).zarrResult)) as
        PageResult | { error: string };
      if ('error' in result) throw new Error(`the page failed: ${result.error}`);
      expect(result.isolated, 'the page is cross-origin isolated (the pool shares memory)').toBe(true);
      expect(Buffer.compare(Buffer.from(result.volume), Buffer.from(volumeData.buffer)), 'the whole volume').toBe(0);
      expect(
        Buffer.compare(Buffer.from(result.viaWorkers), Buffer.from(volumeData.buffer)),
        'the volume by WorkerFetchStore and createGet',
      ).toBe(0);
      // the grid's rows 10..44, columns 20..70
      const expected = new Float64Array(35 * 51);
      for (let r = 0; r < 35; r++) expected.set(gridData.subarray((10 + r) * 90 + 20, (10 + r) * 90 + 71), r * 51);
      expect(result.region.shape).toEqual([35, 51]);
      expect(Buffer.compare(Buffer.from(result.region.bytes), Buffer.from(expected.buffer)), 'the sub-region').toBe(0);
      expect(result.broken).toEqual({ name: 'CodecPipelineError', cause: 'ParleError', code: 'CHECKSUM_MISMATCH' });
      const rest = volumeData.subarray(5 * 40 * 36);
      expect(Buffer.compare(Buffer.from(result.brokenElsewhere), Buffer.from(rest.buffer, rest.byteOffset, rest.byteLength))).toBe(0);
      expect(notFound).toEqual([]);
      expect(consoleErrors.join('\n'), 'console errors in the page').toBe('');
    } finally {
      await page.close();
    }
  }, 120_000);
});
