// The page of bench/zarr-browser.mjs: reads of Zarr arrays served by the driver (/store/NAME) with
// zarrita's FetchStore, through zarrita's get (the parle codec decoding on the browser build's
// worker pool, numcodecs on this thread), parle's createGet (the pool's workers placing each
// chunk in the result; with parle's WorkerFetchStore, the workers fetching the chunks too) or
// fizarrita's getWorker (numcodecs in its Web Workers).
// The driver bundles zarrita, fizarrita, its pool and the zarrita it runs on (0.6: the driver says
// why) into /lib/zarr-libs.js (all three undefined where fizarrita is not installed) and
// fizarrita's codec worker into /lib/fizarrita-worker.js. It waits for `window.zarrBench`, calls setup({ workers }) once, then
// read(...) per read; each resolves to plain JSON.
import { createEngine } from '/dist/browser/index.js';
import { createGet, register, WorkerFetchStore } from '/dist/browser/zarr.js';
import { getWorker, WorkerPool, zarr, zarrForFizarrita } from '/lib/zarr-libs.js';

let engine;
let pool;
/** zarrita's get with the chunks placed by the engine's workers (parle-codec/zarr createGet). */
let parleGet;
/** Opened arrays by reader and store name (opening reads zarr.json: not part of a timed read). */
const arrays = new Map();

/** The longest main-thread task (ms) the longtask observer saw since the last read began. */
let longestTaskMs = 0;
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) longestTaskMs = Math.max(longestTaskMs, e.duration);
}).observe({ type: 'longtask' });

/** The engine and fizarrita's pool, both of `workers` workers; what the page runs on. */
async function setup({ workers }) {
  if (!globalThis.crossOriginIsolated) throw new Error('the page is not cross-origin isolated (its server sends COOP and COEP)');
  engine = await createEngine({ workers, gpu: 'off', calibration: 'skip' });
  register(zarr.registry, { engine });
  parleGet = createGet(zarr, { engine });
  if (WorkerPool) pool = new WorkerPool(workers);
  return {
    userAgent: navigator.userAgent,
    hardwareConcurrency: navigator.hardwareConcurrency,
    crossOriginIsolated: globalThis.crossOriginIsolated,
    engine: { workers: engine.workers, sharedMemory: engine.sharedMemory },
    fizarrita: typeof getWorker === 'function',
  };
}

/** The array in store `name`, opened with the zarrita module `z` (memoized by `reader`). */
async function open(z, reader, name) {
  const key = `${reader} ${name}`;
  if (!arrays.has(key)) {
    // version 3 directly (zarr.open probes version 2's .zarray first: a 404 an array)
    // (createGet-workers: parle's WorkerFetchStore, whose requests the engine's workers make)
    const url = `${location.origin}/store/${name}`;
    const store = reader === 'createGet-workers' ? new WorkerFetchStore(url, { engine }) : new z.FetchStore(url);
    arrays.set(key, await z.open.v3(store, { kind: 'array' }));
  }
  return arrays.get(key);
}

/** SHA-256 of a typed array's bytes, in hex (digest takes no shared memory: such a view is copied). */
async function sha256(a) {
  const bytes = new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
  const own = a.buffer instanceof ArrayBuffer ? bytes : new Uint8Array(bytes);
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', own));
  return Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('');
}

/**
 * One read of the array in store `store`: whole, or `region` ([start, stop) per axis), with
 * `reader` 'zarrita' (zarrita's get) or 'fizarrita' (getWorker on the pool; `shared`: its
 * useSharedArrayBuffer). Resolves to { ms, longestTaskMs, shape, shared (whether the result lies
 * in shared memory) } and, with `digest`, the result's SHA-256 (computed after the timing).
 */
async function read({ store, reader, region = null, shared = false, digest = false }) {
  const z = reader === 'fizarrita' ? zarrForFizarrita : zarr;
  const arr = await open(z, reader, store);
  const selection = region && region.map(([start, stop]) => z.slice(start, stop));
  longestTaskMs = 0;
  const t0 = performance.now();
  const chunk =
    reader === 'zarrita'
      ? await zarr.get(arr, selection)
      : reader === 'createGet' || reader === 'createGet-workers'
        ? await parleGet(arr, selection)
        : await getWorker(arr, selection, { pool, workerUrl: '/lib/fizarrita-worker.js', useSharedArrayBuffer: shared });
  const ms = performance.now() - t0;
  // the observer's entries come in a task of their own
  await new Promise((resolve) => setTimeout(resolve, 20));
  const out = {
    ms,
    longestTaskMs,
    shape: chunk.shape,
    shared: typeof SharedArrayBuffer === 'function' && chunk.data.buffer instanceof SharedArrayBuffer,
  };
  if (digest) out.sha256 = await sha256(chunk.data);
  return out;
}

window.zarrBench = { setup, read };
