/**
 * Node specifics behind one small interface; ts/platform/browser.ts is its twin, swapped in by
 * the browser bundle (build/build.mjs).
 */
import type { Endpoint } from 'comlink';
import nodeEndpoint from 'comlink/dist/esm/node-adapter.mjs';
import { existsSync } from 'node:fs';
import { mkdir, open, readFile, rename, writeFile } from 'node:fs/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { availableParallelism, cpus, homedir } from 'node:os';
import { join } from 'node:path';
import { debuglog } from 'node:util';
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

/**
 * The parent's Node options for a worker, less the ones that run code: workers inherit
 * process.execArgv, and under `node -e` / `node -p` each worker ran the parent's script again
 * (each starting an engine with workers of its own).
 */
function workerExecArgv(): string[] {
  const out: string[] = [];
  const argv = process.execArgv;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (['-e', '--eval', '-p', '--print', '-pe', '-r', '--require', '--import'].includes(a)) {
      i++; // and its argument
      continue;
    }
    if (/^--(eval|print|input-type|require|import)=/.test(a) || a === '-i' || a === '--interactive') continue;
    out.push(a);
  }
  return out;
}

/** Starts a worker running the pool's worker script (dist/node/worker.js). */
export function spawnWorker(): SpawnedWorker {
  const script = new URL('dist/node/worker.js', packageRoot());
  if (!existsSync(script)) throw new Error(`parle: ${script.pathname} is missing; run \`npm run build\``);
  const worker = new Worker(script, { execArgv: workerExecArgv() });
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

/** A description of the CPU, for calibration keys. */
export function cpuDescription(): string {
  return `${cpus()[0]?.model ?? 'unknown CPU'} x${availableParallelism()}`;
}

/** The file calibrations are kept in: $PARLE_CACHE_DIR, $XDG_CACHE_HOME/parle or ~/.cache/parle. */
export function calibrationFile(): string {
  const dir = process.env.PARLE_CACHE_DIR ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'parle');
  return join(dir, 'calibration.json');
}

/** Loads the stored value for `key` (undefined when absent or unreadable). */
export async function loadStored<T>(key: string): Promise<T | undefined> {
  try {
    const all = JSON.parse(await readFile(calibrationFile(), 'utf8')) as Record<string, T>;
    return all[key];
  } catch {
    return undefined;
  }
}

/** Stores a value under `key` (best effort: a read-only home only costs a recalibration). */
export async function saveStored(key: string, value: unknown): Promise<void> {
  const file = calibrationFile();
  try {
    let all: Record<string, unknown> = {};
    try {
      all = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
    } catch {
      // first record
    }
    all[key] = value;
    await mkdir(join(file, '..'), { recursive: true });
    const tmp = `${file}.${process.pid}.tmp`;
    await writeFile(tmp, JSON.stringify(all, null, 2));
    await rename(tmp, file);
  } catch {
    // not writable: calibrate again next time
  }
}

const debugLog = debuglog('parle');

/**
 * Debug logging: the cost model's decisions and measured times. Off unless NODE_DEBUG includes
 * `parle` (Node's util.debuglog). `message` is only called when enabled.
 */
export function debug(message: () => string): void {
  if (debugLog.enabled) debugLog('%s', message());
}

/** Whether {@link debug} prints (so callers can skip building what only it would print). */
export function debugEnabled(): boolean {
  return debugLog.enabled;
}

/**
 * A `file:` URL read as an HTTP server would answer it (Node's fetch refuses file: URLs; a
 * worker reads a store on local disk this way): 200 and the file's bytes, 206 and a range for a
 * `Range: bytes=a-b` or `bytes=-n` header, 404 for a missing file, the size in `content-length`
 * (a HEAD reads nothing). Other errors (permissions, a folder) are thrown.
 */
export async function readFileResponse(
  url: string,
  method: 'GET' | 'HEAD',
  range: string | undefined,
): Promise<{ status: number; statusText: string; headers: Record<string, string>; body: ArrayBuffer | null }> {
  let file;
  try {
    file = await open(fileURLToPath(url), 'r');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { status: 404, statusText: 'Not Found', headers: {}, body: null };
    throw e;
  }
  try {
    const size = (await file.stat()).size;
    let start = 0;
    let end = size; // exclusive
    const wanted = range === undefined ? null : /^bytes=(\d*)-(\d*)$/.exec(range);
    if (range !== undefined && (wanted === null || (wanted[1] === '' && wanted[2] === '')))
      return { status: 416, statusText: 'Range Not Satisfiable', headers: {}, body: null };
    if (wanted) {
      if (wanted[1] === '') start = Math.max(0, size - Number(wanted[2]));
      else {
        start = Number(wanted[1]);
        end = wanted[2] === '' ? size : Math.min(size, Number(wanted[2]) + 1);
      }
      if (start >= end) return { status: 416, statusText: 'Range Not Satisfiable', headers: {}, body: null };
    }
    const headers = { 'content-length': String(end - start) };
    const status = wanted ? 206 : 200;
    const statusText = wanted ? 'Partial Content' : 'OK';
    if (method === 'HEAD') return { status, statusText, headers, body: null };
    const body = new Uint8Array(end - start);
    for (let at = 0; at < body.length;) {
      const { bytesRead } = await file.read(body, at, body.length - at, start + at);
      if (bytesRead === 0) break;
      at += bytesRead;
    }
    return { status, statusText, headers, body: body.buffer };
  } finally {
    await file.close();
  }
}

/** The file: URL of `key` (a store's path, `/c/0/1`) under folder `root` (relative to the working directory), every character of the path escaped. */
export function fileUrlOf(root: string, key: string): string | undefined {
  return pathToFileURL(join(root, key.replace(/^\/+/, ''))).href;
}
