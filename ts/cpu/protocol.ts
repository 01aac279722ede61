/**
 * The message protocol between the engine's thread and its workers, in one file of types.
 * Calls go through comlink (its Node adapter over worker_threads in Node); a worker exposes
 * {@link WorkerApi}.
 *
 * A task names a procedure of a procedure table (ts/cpu/procedures.ts) and its parameters. Pointers in the
 * parameters are byte offsets into the kernels' memory. When the workers share the engine's
 * memory (SharedArrayBuffer), that is all. When they cannot (a browser page that is not
 * cross-origin isolated), each worker owns a memory, and the task lists its {@link Region}s:
 * the engine sends the bytes of `in` regions along, the worker places every region in its own
 * memory and rewrites the pointer, and sends the bytes of `out` regions back.
 */
import type { ErrorCode } from '../errors.js';
import type { KernelName, KernelVariant } from './wasm.js';

/** What a worker is started with. */
export interface WorkerInit {
  /** The compiled kernels (compiled once by the engine, posted to every worker). */
  module: WebAssembly.Module;
  /** The shared memory, or null when the worker owns an unshared one. */
  memory: WebAssembly.Memory | null;
  variant: KernelVariant;
}

/** A block of memory that a task reads (`in`), writes (`out`) or both. */
export interface Region {
  /** The parameter that holds the block's pointer: a key of the params, or `args.N` for a kernel call. */
  param: string;
  /** Byte length of the block. */
  bytes: number;
  access: 'in' | 'out' | 'inout';
}

/** Parameters of the `kernel` procedure: one kernel call. */
export interface KernelParams {
  kernel: KernelName;
  args: number[];
}

/**
 * Procedures a worker runs, with their parameter and result types. This layer defines one,
 * `kernel` (one kernel call); the codec adds its own by declaration merging
 * (ts/codec/cpu/procedures.ts), so the CPU runtime imports nothing of the codec.
 */
export interface Procedures {
  kernel: { params: KernelParams; result: number };
}

export type ProcName = keyof Procedures;

/** One unit of work for one thread. */
export interface Task<P extends ProcName = ProcName> {
  proc: P;
  params: Procedures[P]['params'];
  /** The memory blocks the task touches (needed only when workers do not share memory). */
  regions: Region[];
}

/**
 * A task over fetched bodies: the worker makes each request (all at once), and runs the task's
 * procedure once per response of status 200 or 206, as they arrive, with the params and two
 * more: `body` (the response's bytes, in the worker's memory) and `item` (the request's index).
 * Only where the workers share the engine's memory. (A Zarr read: each chunk fetched, decoded
 * and placed by one worker, one message a worker instead of a few a chunk.)
 */
export interface FetchTask<P extends ProcName = ProcName> extends Task<P> {
  requests: { url: string; init: WorkerRequestInit }[];
}

/**
 * What became of one request of a {@link FetchTask}: its status and the procedure's result or
 * error. `body` is handed back (transferred) when the procedure did not run (a status other than
 * 200, 206 and 404) or returned `false` (it could not use the body: the engine's thread then
 * does the work), and `failed` when fetch itself failed.
 */
export interface FetchedItem {
  status: number;
  statusText: string;
  value?: unknown;
  error?: { code: ErrorCode; message: string };
  failed?: string;
  body?: ArrayBuffer;
}

/** A procedure's outcome: errors travel as values so their code survives the thread boundary. */
export type Outcome<R> = { ok: true; value: R; outputs?: ArrayBuffer[] } | { ok: false; code: ErrorCode; message: string };

/** What a worker exposes through comlink. */
export interface WorkerApi {
  /** Instantiates the kernels; resolves when the worker is ready. */
  init(init: WorkerInit): Promise<void>;
  /**
   * Runs a task. `inputs` holds the bytes of the task's `in`/`inout` regions, in order, when
   * the worker owns its memory; the outcome then carries the `out`/`inout` regions' bytes.
   */
  run(task: Task, inputs?: ArrayBuffer[]): Promise<Outcome<unknown>>;
  /**
   * Makes an HTTP request (fetch) and reads its body on this worker, so the engine's thread does
   * not; the body is transferred back. `id` names the request for {@link abortFetch}. Runs beside
   * tasks: the worker serves it between them.
   */
  fetch(id: number, url: string, init: WorkerRequestInit): Promise<WorkerResponse>;
  /** Runs a task over fetched bodies (shared memory only); one entry a request, in order. */
  runFetched(task: FetchTask): Promise<FetchedItem[]>;
  /** Aborts request `id` if it is still in flight (its fetch then answers `{ error, aborted: true }`). */
  abortFetch(id: number): void;
}

/** What a worker's request carries of a RequestInit: the parts structured clone can carry. */
export interface WorkerRequestInit {
  method?: 'GET' | 'HEAD';
  headers?: Record<string, string>;
  credentials?: 'omit' | 'same-origin' | 'include';
  cache?: 'default' | 'no-store' | 'reload' | 'no-cache' | 'force-cache' | 'only-if-cached';
  redirect?: 'follow' | 'error' | 'manual';
}

/**
 * A worker's answer to a request: the response (its body's bytes, or null when the status is
 * 404 or the method HEAD), or the error fetch raised (a network error, an abort).
 */
export type WorkerResponse =
  | { kind: 'response'; status: number; statusText: string; headers: Record<string, string>; body: ArrayBuffer | null }
  | { kind: 'error'; message: string; aborted: boolean };
