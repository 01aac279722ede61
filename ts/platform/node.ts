/**
 * Node specifics behind one small interface; ts/platform/browser.ts is its twin, swapped in by
 * the browser bundle (build/build.mjs).
 */
import type { Endpoint } from 'comlink';
import nodeEndpoint from 'comlink/dist/esm/node-adapter.mjs';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { Worker, parentPort } from 'node:worker_threads';

/**
 * The package root: the nearest folder above this module that holds build/parle.wasm
 * (ts/platform/ and dist/node/ are two levels down; other bundles of the sources, such as
 * benchmarks, may sit elsewhere).
 */
function packageRoot(): URL {
  let url = new URL('./', import.meta.url);
  for (let up = 0; up < 5; up++) {
    if (existsSync(new URL('build/parle.wasm', url))) return url;
    url = new URL('../', url);
  }
  throw new Error('parle: build/parle.wasm not found above ' + import.meta.url + '; run `npm run build`');
}

/** Reads a build output (e.g. `parle.wasm`) from the package's build/ folder. */
export async function loadBuildAsset(name: string): Promise<Uint8Array<ArrayBuffer>> {
  return new Uint8Array(await readFile(new URL(`build/${name}`, packageRoot())));
}

/** Number of logical cores the runtime reports. */
export function hardwareConcurrency(): number {
  return availableParallelism();
}

/** True when threads can share memory (always in Node). */
export function canShareMemory(): boolean {
  return typeof SharedArrayBuffer === 'function';
}

/** A started worker thread. */
export interface SpawnedWorker {
  endpoint: Endpoint;
  /** Stops the thread at once (a running kernel is cut off). */
  terminate(): Promise<void>;
  /** Called once when the thread ends for any reason other than terminate(). */
  onExit(listener: (reason: string) => void): void;
  /** Keeps the process alive while the worker runs a task. */
  ref(): void;
  /** Lets the process exit while the worker idles. */
  unref(): void;
}

/** Starts a worker running the pool's worker script (dist/node/worker.js). */
export function spawnWorker(): SpawnedWorker {
  const script = new URL('dist/node/worker.js', packageRoot());
  if (!existsSync(script)) throw new Error(`parle: ${script.pathname} is missing; run \`npm run build\``);
  const worker = new Worker(script);
  let terminating = false;
  return {
    endpoint: nodeEndpoint(worker),
    terminate: async () => {
      terminating = true;
      await worker.terminate();
    },
    onExit(listener) {
      let told = false;
      const tell = (reason: string) => {
        if (!told && !terminating) listener(reason);
        told = true;
      };
      worker.on('error', (e) => tell(`worker error: ${e.message}`));
      worker.on('exit', (code) => tell(`worker exited with code ${code}`));
    },
    ref: () => worker.ref(),
    unref: () => worker.unref(),
  };
}

/** Inside a worker: the endpoint to the thread that started it. */
export function parentEndpoint(): Endpoint {
  if (!parentPort) throw new Error('parle: parentEndpoint() called outside a worker thread');
  return nodeEndpoint(parentPort);
}

export const platformName = 'node' as const;
