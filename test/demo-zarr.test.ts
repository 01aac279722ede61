/**
 * The demo page's Zarr section (issue #46) in headless Chromium, served by web/serve.mjs as
 * `npm run demo:web` serves it: the page opens data/zarr/t1-mri.zarr over HTTP with zarrita's
 * FetchStore and decodes slices with the parle codec on its engine; the slices it shows (their
 * elements' checksum and the canvas's pixels) must be those of data/samples/t1-mri.u16 read
 * here, for the middle slice, the last (a partial edge chunk) and the first, cross-origin
 * isolated (the engine's shared memory) and not (its workers with memories of their own). Also: the shipped store reads back as the sample
 * in Node, so a codec change that leaves it unreadable fails here (rewrite it with
 * `node data/zarr/write.mjs`). A screenshot of the section is saved to test/artifacts/demo-zarr.png.
 *
 * Needs the bundle (`node build/build.mjs --quiet --no-types`, npm test's pretest) and Debian's
 * chromium, as test/browser.test.ts.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import * as zarr from 'zarrita';
import { FileSystemStore } from '@zarrita/storage';
import { createEngine, registerZarrCodec } from '../ts/index.js';
// @ts-expect-error: a plain .mjs script without type declarations
import { startServer } from '../web/serve.mjs';

const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = fileURLToPath(new URL('./artifacts/', import.meta.url));
const ARGS = ['--no-sandbox', '--headless=new', '--disable-background-networking', '--disable-component-update', '--no-first-run'];
const STORE_DIR = 'data/zarr/t1-mri.zarr';
const SAMPLE = 'data/samples/t1-mri.u16';
/** The sample's shape (data/samples/t1-mri.json): z, y, x. */
const [DEPTH, HEIGHT, WIDTH] = [62, 128, 128];
const SLICE_BYTES = HEIGHT * WIDTH * 2;

interface Server {
  url: string;
  close(): Promise<void>;
}

let context: BrowserContext;
let profileDir: string;
let isolated: Server;
let notIsolated: Server;
/** Console errors, uncaught exceptions and failed requests of every page, as `url: text`. */
const problems: string[] = [];
const sample = readFileSync(SAMPLE);
const metadata = JSON.parse(readFileSync(join(STORE_DIR, 'zarr.json'), 'utf8')) as {
  attributes: { window: { min: number; max: number } };
};

/** FNV-1a (32 bits) as 8 hex digits: the reference for the page's `data-checksum`. */
function fnv1a32(bytes: Uint8Array): string {
  let hash = 0x811c9dc5;
  for (const byte of bytes) hash = Math.imul(hash ^ byte, 0x01000193);
  return (hash >>> 0).toString(16).padStart(8, '0');
}

/** Slice `z` of the sample: its elements' bytes, little-endian. */
const sliceBytes = (z: number) => sample.subarray(z * SLICE_BYTES, (z + 1) * SLICE_BYTES);

/** Bytes of every file under `dir`. */
function bytesUnder(dir: string): number {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .reduce((sum, entry) => sum + statSync(join(entry.parentPath, entry.name)).size, 0);
}

async function openPage(url: string): Promise<Page> {
  const page = await context.newPage();
  page.on('console', (message) => void (message.type() === 'error' && problems.push(`${page.url()}: ${message.text()}`)));
  page.on('pageerror', (error) => problems.push(`${page.url()}: uncaught ${error.message}`));
  page.on('response', (response) => void (response.status() >= 400 && problems.push(`${response.status()} ${response.url()}`)));
  await page.goto(url);
  return page;
}

/** Waits until the section shows slice `z` (no read pending), and returns its checksum; throws at once if a read failed. */
async function waitForSlice(page: Page, z: number): Promise<string | null> {
  const outcome = await page.waitForFunction(
    (index) => {
      const { state, index: shown } = document.getElementById('zarr')!.dataset;
      return state === 'failed' ? 'failed' : state === 'shown' && shown === String(index) ? 'shown' : false;
    },
    z,
    { timeout: 60_000 },
  );
  if ((await outcome.jsonValue()) === 'failed') throw new Error(`the Zarr section failed: ${await page.textContent('#zarr-error')}`);
  return page.getAttribute('#zarr', 'data-checksum');
}

/** The canvas's red channel (the grey of each pixel), row by row. */
function canvasGreys(page: Page): Promise<number[]> {
  return page.evaluate(() => {
    const canvas = document.getElementById('zarr-canvas') as HTMLCanvasElement;
    const { data } = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height);
    return Array.from({ length: canvas.width * canvas.height }, (_, p) => data[4 * p]);
  });
}

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install chromium`);
  if (!existsSync('dist/browser/zarr.js')) throw new Error('the browser bundle is missing: run `node build/build.mjs --quiet --no-types`');
  isolated = await startServer({ port: 0, isolation: true });
  notIsolated = await startServer({ port: 0, isolation: false });
  profileDir = mkdtempSync(join(tmpdir(), 'parle-demo-zarr-'));
  context = await chromium.launchPersistentContext(profileDir, { executablePath: CHROMIUM, headless: true, args: ARGS });
});

afterAll(async () => {
  await context?.close();
  await isolated?.close();
  await notIsolated?.close();
  if (profileDir) rmSync(profileDir, { recursive: true, force: true });
});

afterEach(() => {
  expect(problems.splice(0), 'console errors and failed requests').toEqual([]);
});

describe('the shipped Zarr store (data/zarr/t1-mri.zarr)', () => {
  it('reads back in Node as data/samples/t1-mri.u16, parle-coded in chunks of 4 x 64 x 64', async () => {
    const engine = await createEngine({ workers: 1, gpu: 'off', calibration: 'skip' });
    registerZarrCodec(zarr.registry as unknown as Map<string, () => Promise<unknown>>, { engine });
    try {
      const arr = await zarr.open.v3(new FileSystemStore(STORE_DIR), { kind: 'array' });
      expect(arr.shape).toEqual([DEPTH, HEIGHT, WIDTH]);
      expect(arr.chunks).toEqual([4, 64, 64]);
      expect(arr.dtype).toBe('uint16');
      const data = (await zarr.get(arr)).data as Uint16Array;
      const bytes = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
      expect(bytes.equals(sample), 'the store holds the sample').toBe(true);
      // small enough to ship, and compressed: 381 kB for 2 MB when written
      expect(bytesUnder(STORE_DIR)).toBeLessThan(sample.length / 4);
    } finally {
      zarr.registry.delete('parle');
      await engine.destroy();
    }
  });
});

describe('the demo page reads it slice by slice in Chromium', () => {
  it('cross-origin isolated: the middle, last and first slices, on the canvas and by checksum', async () => {
    const page = await openPage(`${isolated.url}?calibration=skip`);
    try {
      const middle = Math.floor(DEPTH / 2);
      expect(await waitForSlice(page, middle)).toBe(fnv1a32(sliceBytes(middle)));
      expect(await page.evaluate(() => globalThis.crossOriginIsolated)).toBe(true);
      // what the canvas shows: each element through the display window zarr.json records
      const { min, max } = metadata.attributes.window;
      const elements = new Uint16Array(sample.buffer, sample.byteOffset + middle * SLICE_BYTES, HEIGHT * WIDTH);
      const expected = Array.from(elements, (v) => Math.min(255, Math.max(0, Math.round(((v - min) * 255) / Math.max(1, max - min)))));
      const greys = await canvasGreys(page);
      expect(greys.length).toBe(HEIGHT * WIDTH);
      expect(
        greys.findIndex((g, p) => g !== expected[p]),
        'the first pixel that differs',
      ).toBe(-1);
      expect(new Set(greys).size, 'an image, not a blank canvas').toBeGreaterThan(50);
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.locator('#zarr').screenshot({ path: join(ARTIFACTS, 'demo-zarr.png') });

      // the store's size as the page measured it (HEAD of every key), and its ratio
      expect(Number(await page.getAttribute('#zarr', 'data-store-bytes'))).toBe(bytesUnder(STORE_DIR));
      expect(await page.textContent('#zarr-store')).toMatch(/uint16, 62 × 128 × 128 \(z, y, x\) in 64 chunks of 4 × 64 × 64, .*× smaller/);
      expect(await page.textContent('#zarr-timing')).toMatch(
        /^4 chunks, [\d.]+ KiB: fetched in [\d.]+ ms \(4 over HTTP\), decoded in [\d.]+ ms$/,
      );

      // the slider, by keyboard: End is the last slice (chunk row 15 holds slices 60 and 61 only), Home the first
      await page.focus('#zarr-slice');
      await page.keyboard.press('End');
      expect(await waitForSlice(page, DEPTH - 1)).toBe(fnv1a32(sliceBytes(DEPTH - 1)));
      await page.keyboard.press('Home');
      expect(await waitForSlice(page, 0)).toBe(fnv1a32(sliceBytes(0)));
      expect(await page.isVisible('#zarr-error')).toBe(false);
    } finally {
      await page.close();
    }
  });

  it('not isolated (no shared memory): the middle slice by checksum', async () => {
    const page = await openPage(`${notIsolated.url}?calibration=skip`);
    try {
      const middle = Math.floor(DEPTH / 2);
      expect(await waitForSlice(page, middle)).toBe(fnv1a32(sliceBytes(middle)));
      expect(await page.evaluate(() => globalThis.crossOriginIsolated)).toBe(false);
    } finally {
      await page.close();
    }
  });
});
