/**
 * HTTP requests whose bodies a worker reads (ts/cpu/pool.ts `WorkerPool.fetch`): the request a
 * worker makes with fetch, shared with the engine's thread, which makes it itself when the engine
 * has no workers. `file:` URLs are read from the file system in Node (as a server would answer).
 */
import { readFileResponse } from '../platform/node.js';
import type { WorkerRequestInit, WorkerResponse } from './protocol.js';

/**
 * Makes a request with this thread's fetch and reads its body (not for 404 or HEAD: cancelled).
 * Errors are values: a network error or an abort by `signal`.
 */
export async function fetchResponse(url: string, init: WorkerRequestInit, signal?: AbortSignal): Promise<WorkerResponse> {
  try {
    if (url.startsWith('file:')) {
      // (Node's fetch takes no file: URLs; a store on local disk is read here, as a server would)
      const range = Object.entries(init.headers ?? {}).find(([name]) => name.toLowerCase() === 'range')?.[1];
      return { kind: 'response', ...(await readFileResponse(url, init.method ?? 'GET', range)) };
    }
    const response = await fetch(url, { ...init, ...(signal ? { signal } : {}) });
    const headers: Record<string, string> = {};
    response.headers.forEach((value, key) => (headers[key] = value));
    let body: ArrayBuffer | null = null;
    if (response.status === 404 || init.method === 'HEAD') await response.body?.cancel();
    else body = await response.arrayBuffer();
    return { kind: 'response', status: response.status, statusText: response.statusText, headers, body };
  } catch (e) {
    // (Node's fetch says "fetch failed" and puts the reason in `cause`)
    const cause = e instanceof Error && e.cause instanceof Error ? ` (${e.cause.message})` : '';
    return { kind: 'error', message: (e instanceof Error ? e.message : String(e)) + cause, aborted: signal?.aborted === true };
  }
}

/**
 * Resolves after the thread's pending tasks (a response's incoming data among them) had their
 * turn: `scheduler.yield()` where there is one (Chromium), else setImmediate (Node), else a
 * MessageChannel message (not setTimeout: clamped to 4 ms when nested).
 */
export function yieldToTasks(): Promise<void> {
  const scheduler = (globalThis as { scheduler?: { yield?: () => Promise<void> } }).scheduler;
  if (typeof scheduler?.yield === 'function') return scheduler.yield();
  if (typeof setImmediate === 'function') return new Promise((resolve) => setImmediate(resolve));
  return new Promise((resolve) => {
    const channel = new MessageChannel();
    channel.port1.onmessage = () => {
      channel.port1.close();
      resolve();
    };
    channel.port2.postMessage(null);
  });
}
