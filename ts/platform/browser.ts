/**
 * Browser specifics; the twin of ts/platform/node.ts (same exports), chosen by the browser bundle.
 */
import type { Endpoint } from 'comlink';

/**
 * The build outputs, each as a literal `new URL(..., import.meta.url)`: the pattern Vite,
 * webpack 5 and Parcel recognise, so an application's bundler copies the .wasm files and rewrites
 * their URLs; served as is, they resolve to the package's build/ folder beside dist/.
 */
const BUILD_ASSETS: Record<string, () => URL> = {
  'parle.wasm': () => new URL('../../build/parle.wasm', import.meta.url),
  'parle-scalar.wasm': () => new URL('../../build/parle-scalar.wasm', import.meta.url),
  'parle-unshared.wasm': () => new URL('../../build/parle-unshared.wasm', import.meta.url),
};

/** Fetches a build output (e.g. `parle.wasm`) from the package's build/ folder, beside dist/. */
export async function loadBuildAsset(name: string): Promise<Uint8Array<ArrayBuffer>> {
  const asset = BUILD_ASSETS[name];
  if (!asset) throw new Error(`parle: unknown build asset ${name}`);
  const url = asset();
  const response = await fetch(url);
  if (!response.ok) throw new Error(`parle: fetching ${url} failed: HTTP ${response.status}`);
  return new Uint8Array(await response.arrayBuffer());
}

/** Number of logical cores the browser reports. */
export function hardwareConcurrency(): number {
  return navigator.hardwareConcurrency ?? 1;
}

/** True when the page may share memory between threads (cross-origin isolated). */
export function canShareMemory(): boolean {
  return typeof SharedArrayBuffer === 'function' && (globalThis as { crossOriginIsolated?: boolean }).crossOriginIsolated === true;
}

/** A started worker. */
export interface SpawnedWorker {
  endpoint: Endpoint;
  terminate(): Promise<void>;
  onExit(listener: (reason: string) => void): void;
  ref(): void;
  unref(): void;
}

/**
 * The message a worker posts once it listens (see {@link parentEndpoint}). Module workers drop
 * messages that arrive before their script has attached a listener, and the worker's modules
 * await at top level (xxhash-wasm in ts/format/checksum.ts) before `Comlink.expose` runs; Node's
 * worker_threads queue such messages instead, so only the browser needs the handshake.
 */
const WORKER_READY = 'parle:worker-ready';

/**
 * Starts a module worker running dist/browser/worker.js. Messages to it wait on this side until
 * it says it listens, so the pool's first message (init) is never lost.
 */
export function spawnWorker(): SpawnedWorker {
  const worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module', name: 'parle-cpu' });
  let waiting: [unknown, Transferable[]][] | undefined = [];
  worker.addEventListener('message', function onReady(event: MessageEvent) {
    if (event.data !== WORKER_READY) return;
    worker.removeEventListener('message', onReady);
    const queued = waiting ?? [];
    waiting = undefined;
    for (const [message, transfer] of queued) worker.postMessage(message, transfer);
  });
  const endpoint: Endpoint = {
    postMessage(message: unknown, transfer: Transferable[] = []) {
      if (waiting) waiting.push([message, transfer]);
      else worker.postMessage(message, transfer);
    },
    addEventListener: worker.addEventListener.bind(worker) as Endpoint['addEventListener'],
    removeEventListener: worker.removeEventListener.bind(worker) as Endpoint['removeEventListener'],
  };
  return {
    endpoint,
    terminate: async () => worker.terminate(),
    onExit(listener) {
      // A script that fails to load or throws at top level fires a plain Event or an ErrorEvent.
      worker.addEventListener('error', (e) => listener(`worker error: ${e.message || 'the worker script failed to load or start'}`));
    },
    ref: () => undefined,
    unref: () => undefined,
  };
}

/**
 * Inside a worker: the endpoint to the page that started it. Tells the page it listens: the
 * caller attaches its listener in this same task (`Comlink.expose(api, parentEndpoint())`),
 * before the page's answer can be dispatched.
 */
export function parentEndpoint(): Endpoint {
  const scope = globalThis as unknown as { postMessage(message: unknown): void };
  scope.postMessage(WORKER_READY);
  return globalThis as unknown as Endpoint;
}

/** A description of the CPU, for calibration keys. */
export function cpuDescription(): string {
  return `${navigator.userAgent} x${navigator.hardwareConcurrency ?? 1}`;
}

/** Loads the stored value for `key` from localStorage (undefined when absent or unavailable). */
export async function loadStored<T>(key: string): Promise<T | undefined> {
  try {
    const text = globalThis.localStorage?.getItem(`parle:${key}`);
    return text ? (JSON.parse(text) as T) : undefined;
  } catch {
    return undefined;
  }
}

/** Stores a value under `key` in localStorage (best effort). */
export async function saveStored(key: string, value: unknown): Promise<void> {
  try {
    globalThis.localStorage?.setItem(`parle:${key}`, JSON.stringify(value));
  } catch {
    // storage full or blocked: calibrate again next time
  }
}

/** Whether `localStorage.parleDebug` was set when parle loaded. */
const debugOn = (() => {
  try {
    return globalThis.localStorage?.getItem('parleDebug') != null;
  } catch {
    return false;
  }
})();

/**
 * Debug logging: the cost model's decisions and measured times, to console.debug when
 * `localStorage.parleDebug` is set (read once, when parle loads). `message` is only called when
 * enabled.
 */
export function debug(message: () => string): void {
  if (debugOn) console.debug(`parle ${message()}`);
}

/** Whether {@link debug} prints (so callers can skip building what only it would print). */
export function debugEnabled(): boolean {
  return debugOn;
}

/** `file:` URLs are read in Node only (ts/platform/node.ts): a page's fetch refuses them. */
export async function readFileResponse(
  url: string,
  _method: 'GET' | 'HEAD',
  _range: string | undefined,
): Promise<{ status: number; statusText: string; headers: Record<string, string>; body: ArrayBuffer | null }> {
  throw new Error(`${url}: file: URLs are read in Node only`);
}

/** No file: URLs in a page (ts/platform/node.ts has them). */
export function fileUrlOf(_root: string, _key: string): string | undefined {
  return undefined;
}
