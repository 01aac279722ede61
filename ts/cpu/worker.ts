/**
 * The body of a CPU pool worker: it instantiates the kernels posted by the engine and runs tasks
 * (ts/cpu/protocol.ts) on them with the procedures of the table it is given. The worker script
 * itself belongs to the layer that owns the table (the codec's: ts/codec/cpu/worker.ts, bundled
 * as dist/node/worker.js and dist/browser/worker.js), so the pool knows no codec.
 */
import * as Comlink from 'comlink';
import { parentEndpoint } from '../platform/node.js';
import { fetchResponse, yieldToTasks } from './fetch.js';
import { runProcedure, setRegionPointer, type KernelContext, type ProcedureTable } from './procedures.js';
import type { FetchTask, FetchedItem, Outcome, Task, WorkerApi, WorkerInit, WorkerRequestInit, WorkerResponse } from './protocol.js';
import { WASM_PAGE_BYTES, createKernelMemory, instantiateKernels } from './wasm.js';

/** Runs a task on a memory this worker owns: place its regions, run, send `out` bytes back. */
function runUnshared(table: ProcedureTable, context: KernelContext, task: Task, inputs: ArrayBuffer[]): Outcome<unknown> {
  const params = task.params as unknown as Record<string, unknown>;
  let top = Math.ceil(context.kernels.heapBase() / 64) * 64;
  const placed: number[] = [];
  for (const region of task.regions) {
    placed.push(top);
    top += Math.ceil((region.bytes + 64) / 64) * 64;
  }
  const need = top - context.memory.buffer.byteLength;
  if (need > 0) context.memory.grow(Math.ceil(need / WASM_PAGE_BYTES));
  let input = 0;
  task.regions.forEach((region, i) => {
    if (region.access !== 'out') new Uint8Array(context.memory.buffer, placed[i], region.bytes).set(new Uint8Array(inputs[input++]));
    setRegionPointer(params, region.param, placed[i]);
  });
  const outcome = runProcedure(table, context, task.proc, task.params as never);
  if (!outcome.ok) return outcome;
  const outputs = task.regions.flatMap((region, i) =>
    region.access === 'in' ? [] : [new Uint8Array(context.memory.buffer, placed[i], region.bytes).slice().buffer],
  );
  return Comlink.transfer({ ...outcome, outputs }, outputs);
}

/** Requests in flight on this worker, by id, to abort. */
const requests = new Map<number, AbortController>();

/** A request made here (its body transferred back). */
async function fetchHere(id: number, url: string, init: WorkerRequestInit): Promise<WorkerResponse> {
  const controller = new AbortController();
  requests.set(id, controller);
  try {
    const answer = await fetchResponse(url, init, controller.signal);
    return answer.kind === 'response' && answer.body ? Comlink.transfer(answer, [answer.body]) : answer;
  } finally {
    requests.delete(id);
  }
}

/** Requests of a FetchTask a worker has in flight at once (a browser's HTTP/1.1 connections to a host: 6). */
const REQUESTS_IN_FLIGHT = 6;

/**
 * A task over fetched bodies (ts/cpu/protocol.ts FetchTask): REQUESTS_IN_FLIGHT requests at a
 * time, the procedure run on each usable body as it arrives (one at a time: this thread's), bodies it
 * did not use handed back.
 */
async function runFetched(table: ProcedureTable, context: KernelContext, task: FetchTask): Promise<FetchedItem[]> {
  const transfer: ArrayBuffer[] = [];
  const one = async (item: number): Promise<FetchedItem> => {
    const { url, init } = task.requests[item];
    const answer = await fetchResponse(url, init);
    if (answer.kind === 'error') return { status: 0, statusText: '', failed: answer.message };
    const { status, statusText, body } = answer;
    if (body === null || (status !== 200 && status !== 206)) {
      if (body) transfer.push(body);
      return { status, statusText, ...(body ? { body } : {}) };
    }
    // the other requests' incoming data first: a decode holds this thread for milliseconds, and
    // a response this thread does not read stalls at the server
    await yieldToTasks();
    const params = { ...(task.params as object), body: new Uint8Array(body), item } as never;
    const outcome = runProcedure(table, context, task.proc, params);
    if (!outcome.ok) return { status, statusText, error: { code: outcome.code, message: outcome.message } };
    if ((outcome.value as unknown) === false) {
      transfer.push(body);
      return { status, statusText, value: false, body };
    }
    return { status, statusText, value: outcome.value };
  };
  // REQUESTS_IN_FLIGHT at a time (bodies wait here for this thread's decode: a bounded number)
  const items: FetchedItem[] = new Array(task.requests.length);
  let next = 0;
  const lane = async () => {
    while (next < task.requests.length) {
      const item = next++;
      items[item] = await one(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(REQUESTS_IN_FLIGHT, task.requests.length) }, lane));
  return Comlink.transfer(items, transfer);
}

/**
 * Serves this worker's end of the pool (comlink over the parent's endpoint) with the procedures
 * of `table`. Call once, at the top of a worker script.
 */
export function serveWorker(table: ProcedureTable): void {
  let ctx: KernelContext | undefined;
  let shared = true;
  const api: WorkerApi = {
    async init(init: WorkerInit) {
      shared = init.memory !== null;
      const memory = init.memory ?? createKernelMemory(16, init.variant);
      ctx = { kernels: await instantiateKernels(init.module, memory), memory };
    },
    async run(task: Task, inputs?: ArrayBuffer[]) {
      if (!ctx) throw new Error('worker used before init');
      if (shared) return runProcedure(table, ctx, task.proc, task.params as never);
      return runUnshared(table, ctx, task, inputs ?? []);
    },
    async runFetched(task: FetchTask) {
      if (!ctx) throw new Error('worker used before init');
      if (!shared) throw new Error('runFetched needs the shared memory');
      return runFetched(table, ctx, task);
    },
    fetch: fetchHere,
    abortFetch(id: number) {
      requests.get(id)?.abort();
    },
  };
  Comlink.expose(api, parentEndpoint());
}
