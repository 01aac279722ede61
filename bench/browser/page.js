// The benchmark page of bench/browser.mjs: the browser build (/dist/browser/index.js) on the
// same measurements as Node's side (bench/lib/measure.mjs). The driver waits for `window.parleBench`,
// then calls `setup({ workers })` once and `runFile({ url, type })` per file; each resolves to
// plain JSON. A module that fails to load leaves `window.parleBench` unset: the driver reports the
// page's errors. `setup` refuses a page that is not cross-origin isolated.
import { compressBound, createEngine } from '/dist/browser/index.js';
import { CTORS, engineInfo, freshArrayRates, measureArray } from '/bench/lib/measure.mjs';

const log = (line) => {
  document.getElementById('log').textContent += `${line}\n`;
};

let engine;

/** What the page runs on: isolation, shared memory, the kernels' variant, the wasm files fetched. */
function environment() {
  const wasmFetched = performance
    .getEntriesByType('resource')
    .map((e) => new URL(e.name).pathname)
    .filter((p) => p.endsWith('.wasm') || p.endsWith('worker.js'));
  return {
    userAgent: navigator.userAgent,
    hardwareConcurrency: navigator.hardwareConcurrency,
    crossOriginIsolated: globalThis.crossOriginIsolated === true,
    sharedArrayBuffer: typeof SharedArrayBuffer === 'function',
    // A 128-bit SIMD instruction (v128.const + drop) validates where the browser has wasm SIMD.
    wasmSimd: WebAssembly.validate(
      new Uint8Array([
        0,
        97,
        115,
        109,
        1,
        0,
        0,
        0,
        1,
        4,
        1,
        96,
        0,
        0,
        3,
        2,
        1,
        0,
        10,
        23,
        1,
        21,
        0,
        253,
        12,
        ...new Array(16).fill(0),
        26,
        11,
      ]),
    ),
    fetched: wasmFetched,
    engine: engine ? engineInfo(engine) : null,
    memory: freshArrayRates(),
  };
}

async function setup({ workers }) {
  if (globalThis.crossOriginIsolated !== true) {
    throw new Error('the benchmark page is not cross-origin isolated (no COOP/COEP headers?): the pool cannot share memory');
  }
  engine = await createEngine({ workers, gpu: 'off', calibration: 'skip' });
  if (engine.workers !== workers) throw new Error(`the engine has ${engine.workers} workers, asked for ${workers}`);
  const env = environment();
  log(`engine: ${JSON.stringify(env.engine)}`);
  return env;
}

async function runFile({ url, type, timing }) {
  if (!engine) throw new Error('setup() first');
  const response = await fetch(url);
  if (!response.ok) throw new Error(`fetching ${url}: HTTP ${response.status}`);
  const data = new CTORS[type](await response.arrayBuffer());
  const result = await measureArray(engine, data, { compressBound, timing });
  log(`${url}: ${JSON.stringify(result)}`);
  return result;
}

async function teardown() {
  await engine?.destroy();
  engine = undefined;
}

window.parleBench = { setup, runFile, teardown, environment };
