/**
 * `parle serve --processes N`: the service on several cores through node:cluster. The primary
 * process forks N children; each runs its own engine (its share of the workers) and its own
 * service, and all of them listen on the same port. The primary does no request work: it
 * accepts connections and hands them to the children in turn (cluster's round-robin policy, the
 * default on Linux), restarts a child that dies, forwards SIGTERM, and sums the children's
 * metrics for GET /metrics.
 *
 * Why processes and not more worker threads: one service's main thread parses HTTP, copies
 * every body and assembles every container, and it saturated at ~530 MB/s on 2 cores and on 16
 * alike. Processes give each main thread its own core; cluster shares the listening socket
 * without a proxy in front (port 0: the primary picks a free port first, see runPrimary).
 *
 * The messages between the primary and its children are the types of this file's first section.
 */
import cluster, { type Worker } from 'node:cluster';
import { createServer } from 'node:net';
import { AggregatorRegistry, Counter, Gauge, Registry } from 'prom-client';
import { ErrorCodes, ParleError } from '../errors.js';
import { ServiceError, ServiceErrorCodes } from './errors.js';

// ---- the protocol -----------------------------------------------------------------------------

/** What a child learns from the primary at fork time (environment variable {@link CHILD_ENV}, JSON). */
export interface ChildAssignment {
  /** The child's slot, 0..processes-1 (a restarted child keeps its slot). */
  index: number;
  /** Worker threads of the child's engine: its share of the total. */
  workers: number;
  /** Port to listen on: the one the first children got (a restarted child must take the same). */
  port: number;
}

/** Metrics of one child, as prom-client's `registry.getMetricsAsJSON()` gives them. */
type MetricsJson = Awaited<ReturnType<Registry['getMetricsAsJSON']>>;

/** Child -> primary: the text of GET /metrics, please (summed over the children). */
interface MetricsRequest {
  type: 'parle:metrics';
  id: number;
}
/** Primary -> child: the answer to a {@link MetricsRequest}; `error` when the sum failed (a bug). */
interface MetricsText {
  type: 'parle:metrics-text';
  id: number;
  text: string;
  error?: string;
}
/** Primary -> child: send me your own metrics. */
interface CollectRequest {
  type: 'parle:collect';
  id: number;
}
/** Child -> primary: the answer to a {@link CollectRequest}. */
interface Collected {
  type: 'parle:collected';
  id: number;
  metrics?: MetricsJson;
  error?: string;
}
type ToPrimary = MetricsRequest | Collected;
type ToChild = MetricsText | CollectRequest;

/** The environment variable that carries a child's {@link ChildAssignment}. */
export const CHILD_ENV = 'PARLE_SERVE_PROCESS';
/**
 * Milliseconds the primary waits for a child's metrics; a child that does not answer in time (a
 * main thread busy with a burst of work) is summed with its last collection, so the sum's
 * counters lag for that scrape instead of dropping.
 */
const COLLECT_TIMEOUT_MS = 2000;
/** Milliseconds a child waits for the summed metrics before answering 503. */
const METRICS_TIMEOUT_MS = 5000;
/** Processes the default never goes beyond (each costs a main thread, ~80 MiB at rest and its own wasm memory). */
const MAX_DEFAULT_PROCESSES = 8;

function isMessage<T extends { type: string }>(message: unknown, type: T['type']): message is T {
  return typeof message === 'object' && message !== null && (message as { type?: unknown }).type === type;
}

// ---- sizing -----------------------------------------------------------------------------------

/**
 * The default of `--processes`: one process per two cores, 1 to 8, and never more processes
 * than worker threads (each process needs one). The measured reason: a service's main thread
 * (HTTP, body copies, containers) carries ~530 MB/s, about what two workers compress, so one
 * main thread per two cores keeps both busy; on 2 cores that is 1 (today's single process).
 *   cores 1 -> 1, 2 -> 1, 4 -> 2, 16 -> 8, 64 -> 8; cores 16 with --workers 4 -> 4.
 */
export function defaultProcesses(cores: number, workers?: number): number {
  const byCores = Math.min(MAX_DEFAULT_PROCESSES, Math.max(1, Math.floor(cores / 2)));
  return Math.max(1, Math.min(byCores, workers ?? byCores));
}

/**
 * The worker threads of process `index` when `total` are shared by `processes` processes: as
 * even as can be, the first ones taking one more.
 *   total 5, processes 2 -> index 0: 3, index 1: 2.   total 2, processes 2 -> 1 each.
 * @throws ParleError INVALID_OPTION when total < processes (a process needs a worker)
 */
export function shareWorkers(total: number, processes: number, index: number): number {
  if (total < processes) {
    throw new ParleError(
      ErrorCodes.INVALID_OPTION,
      `--workers (${total}) must be at least --processes (${processes}): each process needs a worker thread`,
    );
  }
  return Math.floor(total / processes) + (index < total % processes ? 1 : 0);
}

// ---- the child side -----------------------------------------------------------------------------

/** This process's assignment when it is a child of `parle serve --processes N`, else undefined. */
export function childAssignment(): ChildAssignment | undefined {
  const raw = process.env[CHILD_ENV];
  if (!cluster.isWorker || raw === undefined) return undefined;
  return JSON.parse(raw) as ChildAssignment;
}

/**
 * Wires a child's metrics to the primary: answers the primary's collection requests with
 * `registry`'s metrics, and returns the function GET /metrics calls for the sum over all the
 * children (see {@link runPrimary}), and `disconnect`, which removes the listener.
 */
export function connectChildMetrics(registry: Registry): { readMetrics: () => Promise<string>; disconnect: () => void } {
  let nextId = 1;
  const waiting = new Map<number, (answer: MetricsText) => void>();
  const onMessage = (message: unknown) => {
    if (isMessage<CollectRequest>(message, 'parle:collect')) {
      registry.getMetricsAsJSON().then(
        (metrics) => sendToPrimary({ type: 'parle:collected', id: message.id, metrics }),
        (e: unknown) => sendToPrimary({ type: 'parle:collected', id: message.id, error: String(e) }),
      );
    } else if (isMessage<MetricsText>(message, 'parle:metrics-text')) {
      waiting.get(message.id)?.(message);
      waiting.delete(message.id);
    }
  };
  process.on('message', onMessage);
  const readMetrics = () =>
    new Promise<string>((resolve, reject) => {
      const id = nextId++;
      const timer = setTimeout(() => {
        waiting.delete(id);
        reject(
          new ServiceError(ServiceErrorCodes.TIMEOUT, 503, `the primary process did not send the metrics within ${METRICS_TIMEOUT_MS} ms`),
        );
      }, METRICS_TIMEOUT_MS);
      waiting.set(id, (answer) => {
        clearTimeout(timer);
        if (answer.error !== undefined) reject(new Error(`summing the processes' metrics failed: ${answer.error}`));
        else resolve(answer.text);
      });
      sendToPrimary({ type: 'parle:metrics', id });
    });
  return { readMetrics, disconnect: () => process.off('message', onMessage) };
}

function sendToPrimary(message: ToPrimary): void {
  // A child whose primary is gone exits (cluster does that); nothing to send to.
  if (process.connected) process.send!(message);
}

// ---- the primary --------------------------------------------------------------------------------

/** Options of {@link runPrimary}. */
export interface PrimaryOptions {
  /** Child processes, at least 1. */
  processes: number;
  /** Worker threads over all the children (each gets {@link shareWorkers} of them). */
  workers: number;
  /** Port the children listen on (0: a free one, the same for all). */
  port: number;
  host: string;
  log: (line: string) => void;
  /** Resolves when the service should stop. */
  stop: Promise<unknown>;
}

interface Child {
  index: number;
  worker: Worker;
  pid: number;
  listening: boolean;
  /** Its metrics as last summed into an answer, and the collection that got them. */
  lastSeen?: { id: number; metrics: MetricsJson };
  exited: Promise<{ code: number | null; signal: string | null }>;
}

/**
 * Runs the primary of `parle serve --processes N` until `stop` resolves, then stops the
 * children gracefully (SIGTERM: each stops accepting, finishes its requests in flight and
 * exits 0) and resolves once all have exited. The children are this same program
 * (`process.argv[1]` with the same arguments, node:cluster's default), which must call
 * {@link runServe} with the same options: `runServe` sees {@link CHILD_ENV} and runs one
 * service. Logs `parle serve: listening on URL` once every child listens, and a line for each
 * child that dies and is restarted.
 * @throws ParleError WORKER_FAILED when a child exits before it listens (bad options, the port
 *   taken: its own error is on stderr) or does not exit 0 when stopped
 */
export async function runPrimary(options: PrimaryOptions): Promise<void> {
  const { processes, workers, host, log } = options;
  for (let index = 0; index < processes; index++) shareWorkers(workers, processes, index); // validates
  // Port 0: every child must listen on the same port, and a restarted child too. Children that
  // all listen on 0 would share one (cluster keys the shared socket by the port asked for),
  // but a replacement asking for the port they got would try to bind it anew (EADDRINUSE), and
  // if every child died the shared socket would close and the port change. So the primary
  // picks a free port first and every child asks for that one.
  const port = options.port === 0 ? await freePort(host) : options.port;
  let stopping = false;
  const children = new Map<number, Child>(); // by slot
  let restarts = 0;
  let failure: ParleError | undefined;
  let onFailure: (() => void) | undefined;
  const failed = new Promise<void>((resolve) => (onFailure = resolve));
  const fail = (error: ParleError) => {
    failure ??= error;
    onFailure?.();
  };

  let nextCollect = 1;
  const collecting = new Map<number, (metrics: MetricsJson | undefined) => void>();
  // The counters and histograms of children that died, as last reported: kept in the sum so
  // that it never goes down (Prometheus would read a drop as a reset and count the survivors'
  // totals again). Counts a child made after its last scrape are lost.
  let retired: MetricsJson[] = [];

  function fork(index: number): Child {
    const assignment: ChildAssignment = { index, workers: shareWorkers(workers, processes, index), port };
    const worker = cluster.fork({ [CHILD_ENV]: JSON.stringify(assignment) });
    const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
      worker.once('exit', (code, signal) => resolve({ code, signal })),
    );
    const child: Child = { index, worker, pid: worker.process.pid ?? 0, listening: false, exited };
    children.set(index, child);
    worker.on('message', (message: unknown) => onChildMessage(child, message));
    worker.once('listening', () => (child.listening = true));
    void exited.then(({ code, signal }) => onExit(child, code, signal));
    return child;
  }

  function onExit(child: Child, code: number | null, signal: string | null): void {
    if (children.get(child.index) === child) children.delete(child.index);
    if (child.lastSeen) retired.push(child.lastSeen.metrics.filter((metric) => isCumulative(metric.type)));
    if (stopping) return;
    const how = signal ? `signal ${signal}` : `code ${code}`;
    if (!child.listening) {
      fail(new ParleError(ErrorCodes.WORKER_FAILED, `process ${child.index} (pid ${child.pid}) exited with ${how} before it listened`));
      return;
    }
    restarts++;
    log(`parle serve: process ${child.index} (pid ${child.pid}) exited with ${how}; restarting it`);
    const replacement = fork(child.index);
    replacement.worker.once('listening', () => log(`parle serve: process ${child.index} restarted (pid ${replacement.pid})`));
  }

  function onChildMessage(child: Child, message: unknown): void {
    if (isMessage<MetricsRequest>(message, 'parle:metrics')) {
      sumMetrics().then(
        (text) => sendToChild(child, { type: 'parle:metrics-text', id: message.id, text }),
        (e: unknown) => sendToChild(child, { type: 'parle:metrics-text', id: message.id, text: '', error: String(e) }),
      );
    } else if (isMessage<Collected>(message, 'parle:collected')) {
      collecting.get(message.id)?.(message.metrics);
    }
  }

  /** Asks every listening child for its metrics, sums them, adds the primary's own. */
  async function sumMetrics(): Promise<string> {
    const asked = [...children.values()].filter((child) => child.listening && child.worker.isConnected());
    let stale = 0;
    const answers = await Promise.all(
      asked.map(
        (child) =>
          new Promise<MetricsJson | undefined>((resolve) => {
            const id = nextCollect++;
            const timer = setTimeout(() => {
              // late: its last collection stands in (counters lag, never drop); the answer, when
              // it comes, is still kept for the next scrape
              collecting.set(id, keep);
              stale++;
              resolve(child.lastSeen?.metrics);
            }, COLLECT_TIMEOUT_MS);
            const keep = (metrics: MetricsJson | undefined) => {
              collecting.delete(id);
              // Concurrent scrapes: keep the newest collection.
              if (metrics && (child.lastSeen?.id ?? 0) < id) child.lastSeen = { id, metrics };
            };
            collecting.set(id, (metrics) => {
              clearTimeout(timer);
              keep(metrics);
              resolve(metrics);
            });
            sendToChild(child, { type: 'parle:collect', id });
          }),
      ),
    );
    const got = answers.filter((answer): answer is MetricsJson => answer !== undefined);
    if (retired.length > 1) retired = [await AggregatorRegistry.aggregate(retired).getMetricsAsJSON()]; // one entry, however many died
    const summed = AggregatorRegistry.aggregate<typeof Registry.PROMETHEUS_CONTENT_TYPE>([...got, ...retired]);
    return Registry.merge([summed, primaryMetrics(got.length, restarts, stale)]).metrics();
  }

  function sendToChild(child: Child, message: ToChild): void {
    if (child.worker.isConnected()) child.worker.send(message);
  }

  let signalName: unknown;
  const stopped = options.stop.then((signal) => {
    signalName = signal;
  });
  for (let index = 0; index < processes; index++) fork(index);
  const allListening = Promise.all(
    [...children.values()].map((child) => new Promise<void>((resolve) => child.worker.once('listening', () => resolve()))),
  );
  const outcome = await Promise.race([allListening.then(() => 'listening' as const), failed, stopped]);
  if (outcome === 'listening' && !failure) {
    const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
    log(`parle serve: listening on ${url} (processes ${processes}, workers ${workers}, pid ${process.pid})`);
    await Promise.race([stopped, failed]);
  }

  // Stop: SIGTERM to every child; each drains and exits 0.
  stopping = true;
  const live = [...children.values()];
  const why = failure ? failure.message : typeof signalName === 'string' ? signalName : 'stop';
  log(`parle serve: ${why}; stopping ${live.length} process(es)`);
  for (const child of live) child.worker.process.kill('SIGTERM');
  const exits = await Promise.all(live.map(async (child) => ({ child, ...(await child.exited) })));
  if (failure) throw failure;
  // A child killed by our SIGTERM before it installed its handler (still starting) is clean too.
  const bad = exits.filter(({ code, signal }) => !(code === 0 || (code === null && signal === 'SIGTERM')));
  if (bad.length > 0) {
    const list = bad.map(
      ({ child, code, signal }) => `process ${child.index} (pid ${child.pid}): ${signal ? `signal ${signal}` : `code ${code}`}`,
    );
    throw new ParleError(ErrorCodes.WORKER_FAILED, `not every process stopped cleanly: ${list.join(', ')}`);
  }
  log('parle serve: stopped');
}

/** Counters and histograms only go up; gauges of a dead process mean nothing. */
function isCumulative(type: unknown): boolean {
  // prom-client's typings declare a numeric enum; at run time the type is the name.
  return type === 'counter' || type === 'histogram';
}

/**
 * A free TCP port on `host`, as the kernel picks it for port 0. Another program could take it
 * before the children bind it; they would then fail to listen and the primary exits with
 * WORKER_FAILED (the race is as narrow as a fork).
 */
function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen({ port: 0, host, exclusive: true }, () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** The primary's own metrics, added to the children's sum: a fresh registry per answer, so concurrent scrapes do not mix. */
function primaryMetrics(summed: number, restarts: number, stale: number): Registry {
  const registry = new Registry();
  new Gauge({
    name: 'parle_service_processes',
    help: 'Processes whose metrics are summed in this answer (parle serve --processes)',
    registers: [registry],
  }).set(summed);
  new Gauge({
    name: 'parle_service_stale_processes',
    help: 'Processes summed with their last collection, not answering within 2 s for this one',
    registers: [registry],
  }).set(stale);
  new Counter({
    name: 'parle_service_process_restarts_total',
    help: 'Service processes restarted after they died',
    registers: [registry],
  }).inc(restarts);
  return registry;
}
