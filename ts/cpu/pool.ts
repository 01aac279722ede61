/**
 * Executors of tasks (ts/cpu/protocol.ts): on the calling thread, or on a pool of workers that
 * share the kernels' memory (or, without SharedArrayBuffer, own one each and get their
 * segments transferred).
 *
 * The pool keeps a FIFO of tasks; each worker runs one task at a time. A task aborted while
 * queued is dropped; a task aborted while it runs has its worker terminated and replaced, so a
 * long kernel does not hold the pool. A worker that crashes fails the task it ran with
 * WORKER_FAILED and is replaced; the pool keeps serving.
 */
import * as Comlink from 'comlink';
import { ErrorCodes, ParleError } from '../errors.js';
import { spawnWorker, type SpawnedWorker } from '../platform/node.js';
import { regionPointer, runProcedure, type KernelContext, type ProcedureTable } from './procedures.js';
import type {
  FetchTask,
  FetchedItem,
  Outcome,
  ProcName,
  Procedures,
  Task,
  WorkerApi,
  WorkerRequestInit,
  WorkerResponse,
} from './protocol.js';
import type { KernelVariant } from './wasm.js';

/** Runs tasks somewhere. */
export interface Executor {
  /** How many tasks run at once. */
  readonly concurrency: number;
  /**
   * Runs a task; rejects with its ParleError, or ABORTED when `signal` aborts first, or
   * WORKER_FAILED when its worker dies.
   */
  run<P extends ProcName>(task: Task<P>, signal?: AbortSignal): Promise<Procedures[P]['result']>;
}

function unwrap<R>(outcome: Outcome<R>): R {
  if (!outcome.ok) throw new ParleError(outcome.code, outcome.message);
  return outcome.value;
}

/** Abort error of an operation. */
export function abortError(signal: AbortSignal): ParleError {
  const reason = signal.reason instanceof Error ? `: ${signal.reason.message}` : '';
  return new ParleError(ErrorCodes.ABORTED, `the operation was aborted${reason}`);
}

/** Runs tasks synchronously on the calling thread (for inputs too small for a round trip). */
export class InlineExecutor implements Executor {
  readonly concurrency = 1;
  constructor(
    private readonly ctx: KernelContext,
    private readonly procedures: ProcedureTable,
  ) {}

  async run<P extends ProcName>(task: Task<P>, signal?: AbortSignal): Promise<Procedures[P]['result']> {
    if (signal?.aborted) throw abortError(signal);
    return unwrap(runProcedure(this.procedures, this.ctx, task.proc, task.params));
  }
}

interface QueuedTask {
  task: Task;
  signal?: AbortSignal;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
  onAbort?: () => void;
}

interface Slot {
  worker: SpawnedWorker;
  api: Comlink.Remote<WorkerApi>;
  ready: Promise<void>;
  running: QueuedTask | undefined;
  /** Requests in flight on this worker (fetch): failed with the slot when it is replaced. */
  requests: Set<(error: ParleError) => void>;
}

/**
 * A request's answer (ts/cpu/fetch.ts fetchResponse, made here or on a worker) as the caller
 * receives it.
 * @throws ParleError ABORTED (`signal` aborted it), IO_ERROR (fetch failed)
 */
export function responseOf(answer: WorkerResponse, url: string, signal?: AbortSignal): FetchedResponse {
  if (answer.kind === 'error') {
    if (answer.aborted && signal) throw abortError(signal);
    throw new ParleError(ErrorCodes.IO_ERROR, `fetch ${url} failed: ${answer.message}`);
  }
  const { status, statusText, headers, body } = answer;
  return { status, statusText, headers, body: new Uint8Array(body ?? new ArrayBuffer(0)) };
}

/** A response whose body a worker read (`Engine.fetchBytes`). */
export interface FetchedResponse {
  status: number;
  statusText: string;
  /** Header names in lower case. */
  headers: Record<string, string>;
  /** The body; empty for 404 and HEAD (not read). */
  body: Uint8Array<ArrayBuffer>;
}

/** Options of {@link WorkerPool.create}. */
export interface PoolOptions {
  size: number;
  module: WebAssembly.Module;
  variant: KernelVariant;
  /** The engine's memory: shared with the workers, or (unshared) the source and target of transfers. */
  memory: WebAssembly.Memory;
  shared: boolean;
}

export class WorkerPool implements Executor {
  private readonly slots: Slot[] = [];
  private readonly queue: QueuedTask[] = [];
  private destroyed = false;
  private nextRequest = 0;
  /** Workers replaced after a crash or an abort, since the pool started. */
  restarts = 0;

  private constructor(private readonly options: PoolOptions) {}

  /** Starts `size` workers and waits until each has instantiated the kernels. */
  static async create(options: PoolOptions): Promise<WorkerPool> {
    const pool = new WorkerPool(options);
    for (let i = 0; i < options.size; i++) pool.slots.push(pool.startSlot(i));
    try {
      await Promise.all(pool.slots.map((s) => s.ready));
    } catch (e) {
      await pool.destroy();
      throw e;
    }
    return pool;
  }

  get concurrency(): number {
    return this.slots.length;
  }

  /** Tasks waiting for a worker. */
  get queued(): number {
    return this.queue.length;
  }

  /** Tasks running now. */
  get busy(): number {
    return this.slots.filter((s) => s.running).length;
  }

  private startSlot(index: number): Slot {
    const worker = spawnWorker();
    const api = Comlink.wrap<WorkerApi>(worker.endpoint);
    const { module, variant, memory, shared } = this.options;
    const slot: Slot = {
      worker,
      api,
      ready: api.init({ module, variant, memory: shared ? memory : null }),
      running: undefined,
      requests: new Set(),
    };
    slot.ready.then(
      () => worker.unref(),
      () => undefined,
    );
    worker.onExit((reason) =>
      this.replace(index, slot, new ParleError(ErrorCodes.WORKER_FAILED, `a CPU worker failed (${reason}); it was replaced`)),
    );
    return slot;
  }

  /** Replaces the worker of `slot`, failing the task it ran with `error`. */
  private replace(index: number, slot: Slot, error: ParleError): void {
    if (this.slots[index] !== slot) return;
    const task = slot.running;
    slot.running = undefined;
    for (const fail of slot.requests) fail(error);
    slot.requests.clear();
    slot.api[Comlink.releaseProxy]();
    if (this.destroyed) return;
    this.restarts++;
    const fresh = this.startSlot(index);
    this.slots[index] = fresh;
    if (task) {
      task.signal?.removeEventListener('abort', task.onAbort!);
      task.reject(error);
    }
    fresh.ready.then(
      () => this.dispatch(),
      () => undefined,
    );
  }

  run<P extends ProcName>(task: Task<P>, signal?: AbortSignal): Promise<Procedures[P]['result']> {
    if (this.destroyed) return Promise.reject(new ParleError(ErrorCodes.DESTROYED, 'the engine was destroyed'));
    if (signal?.aborted) return Promise.reject(abortError(signal));
    return new Promise((resolve, reject) => {
      const entry: QueuedTask = { task, signal, resolve: resolve as (v: unknown) => void, reject };
      if (signal) {
        entry.onAbort = () => this.abort(entry);
        signal.addEventListener('abort', entry.onAbort, { once: true });
      }
      this.queue.push(entry);
      this.dispatch();
    });
  }

  /**
   * Runs a task over fetched bodies (ts/cpu/protocol.ts FetchTask) on one worker, queued as
   * any task: the worker makes the requests and runs the procedure on each body. Shared memory
   * only. Rejects as {@link run} (ABORTED, WORKER_FAILED, DESTROYED); a request's failure or a
   * procedure's error is in its item.
   */
  runFetched(task: FetchTask, signal?: AbortSignal): Promise<FetchedItem[]> {
    if (!this.options.shared) return Promise.reject(new Error('runFetched needs workers that share the memory'));
    return this.run(task as Task, signal) as unknown as Promise<FetchedItem[]>;
  }

  private abort(entry: QueuedTask): void {
    const at = this.queue.indexOf(entry);
    if (at >= 0) {
      this.queue.splice(at, 1);
      entry.reject(abortError(entry.signal!));
      return;
    }
    const index = this.slots.findIndex((s) => s.running === entry);
    if (index < 0) return;
    // A running kernel cannot be interrupted: end its thread, then fail the task, so the
    // caller frees memory only after nothing writes to it any more.
    const slot = this.slots[index];
    slot.running = undefined;
    void slot.worker.terminate().then(() => {
      entry.reject(abortError(entry.signal!));
      this.replace(index, slot, abortError(entry.signal!));
    });
  }

  private dispatch(): void {
    for (const slot of this.slots) {
      if (this.queue.length === 0) return;
      if (slot.running) continue;
      const entry = this.queue.shift()!;
      slot.running = entry;
      slot.worker.ref();
      void slot.ready
        .then(() => this.execute(slot, entry.task))
        .then(
          (value) => {
            if (slot.running !== entry) return; // aborted or replaced meanwhile
            slot.running = undefined;
            if (slot.requests.size === 0) slot.worker.unref();
            entry.signal?.removeEventListener('abort', entry.onAbort!);
            entry.resolve(value);
            this.dispatch();
          },
          (error: unknown) => {
            if (slot.running !== entry) return;
            slot.running = undefined;
            if (slot.requests.size === 0) slot.worker.unref();
            entry.signal?.removeEventListener('abort', entry.onAbort!);
            entry.reject(error);
            this.dispatch();
          },
        );
    }
  }

  /** Sends a task to a worker; in unshared mode moves its regions' bytes both ways. */
  private async execute(slot: Slot, task: Task): Promise<unknown> {
    if ('requests' in task) return slot.api.runFetched(task as FetchTask);
    if (this.options.shared) return unwrap(await slot.api.run(task));
    const memory = this.options.memory;
    const params = task.params as unknown as Record<string, unknown>;
    const inputs = task.regions
      .filter((r) => r.access !== 'out')
      .map((r) => new Uint8Array(memory.buffer, regionPointer(params, r.param), r.bytes).slice().buffer);
    // The worker rewrites pointers in its copy of the params; ours keep the engine's.
    const outcome = await slot.api.run(task, Comlink.transfer(inputs, inputs));
    const value = unwrap(outcome);
    const outputs = outcome.ok ? (outcome.outputs ?? []) : [];
    let next = 0;
    for (const region of task.regions) {
      if (region.access === 'in') continue;
      new Uint8Array(memory.buffer, regionPointer(params, region.param), region.bytes).set(new Uint8Array(outputs[next++]));
    }
    return value;
  }

  /**
   * Makes an HTTP request on a worker, which reads the body there and transfers it here, so this
   * thread does not read the network (a page's main thread receives a chunk as one message). The
   * worker with the fewest requests in flight takes it, beside its tasks (it answers between
   * them). Statuses are not errors: the caller reads `status`.
   * @throws ParleError IO_ERROR (fetch failed: network, CORS, a bad URL; the message says which),
   *   ABORTED (`signal`), WORKER_FAILED (the worker ended), DESTROYED
   */
  fetch(url: string, init: WorkerRequestInit, signal?: AbortSignal): Promise<FetchedResponse> {
    if (this.destroyed) return Promise.reject(new ParleError(ErrorCodes.DESTROYED, 'the engine was destroyed'));
    if (signal?.aborted) return Promise.reject(abortError(signal));
    const slot = this.slots.reduce((a, b) => (b.requests.size < a.requests.size ? b : a));
    const id = this.nextRequest++;
    return new Promise<FetchedResponse>((resolve, reject) => {
      const settle = (error: ParleError | undefined, value?: FetchedResponse) => {
        if (!slot.requests.delete(fail)) return;
        signal?.removeEventListener('abort', onAbort);
        if (slot.requests.size === 0 && slot.running === undefined) slot.worker.unref();
        if (error) reject(error);
        else resolve(value!);
      };
      const fail = (error: ParleError) => settle(error);
      const onAbort = () => {
        void slot.api.abortFetch(id);
        settle(abortError(signal!));
      };
      slot.requests.add(fail);
      slot.worker.ref();
      signal?.addEventListener('abort', onAbort, { once: true });
      slot.ready
        .then((): Promise<WorkerResponse> => slot.api.fetch(id, url, init) as Promise<WorkerResponse>)
        .then(
          (answer: WorkerResponse) => {
            try {
              settle(undefined, responseOf(answer, url, signal));
            } catch (error) {
              settle(error as ParleError);
            }
          },
          (error: unknown) => settle(new ParleError(ErrorCodes.WORKER_FAILED, `a CPU worker failed during a request: ${String(error)}`)),
        );
    });
  }

  /** Test hook: ends worker `index` as a crash would (its task fails, a new worker takes its place). */
  async killWorker(index: number): Promise<void> {
    const slot = this.slots[index];
    await slot.worker.terminate();
    this.replace(index, slot, new ParleError(ErrorCodes.WORKER_FAILED, 'a CPU worker was terminated; it was replaced'));
  }

  /** Ends every worker; queued and running tasks fail with DESTROYED. */
  async destroy(): Promise<void> {
    if (this.destroyed) return;
    this.destroyed = true;
    const error = new ParleError(ErrorCodes.DESTROYED, 'the engine was destroyed');
    for (const entry of this.queue.splice(0)) entry.reject(error);
    await Promise.all(
      this.slots.map(async (slot) => {
        for (const fail of slot.requests) fail(error);
        slot.running?.reject(error);
        slot.running = undefined;
        slot.api[Comlink.releaseProxy]();
        await slot.worker.terminate();
      }),
    );
  }
}
