/**
 * Browser specifics; the twin of ts/platform/node.ts (same exports), chosen by the browser bundle.
 */
import type { Endpoint } from 'comlink';

/** Fetches a build output (e.g. `parle.wasm`) from the package's build/ folder, beside dist/. */
export async function loadBuildAsset(name: string): Promise<Uint8Array<ArrayBuffer>> {
  const response = await fetch(new URL(`../../build/${name}`, import.meta.url));
  if (!response.ok) throw new Error(`fetching ${name} failed: HTTP ${response.status}`);
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

/** Starts a module worker running dist/browser/worker.js. */
export function spawnWorker(): SpawnedWorker {
  const worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
  return {
    endpoint: worker as unknown as Endpoint,
    terminate: async () => worker.terminate(),
    onExit(listener) {
      worker.addEventListener('error', (e) => listener(`worker error: ${e.message}`));
    },
    ref: () => undefined,
    unref: () => undefined,
  };
}

/** Inside a worker: the endpoint to the page that started it. */
export function parentEndpoint(): Endpoint {
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

export const platformName = 'browser' as const;
