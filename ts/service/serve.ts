/**
 * `parle serve`: one engine, one service, until SIGTERM (or SIGINT). On the signal the
 * service stops accepting connections, finishes the requests in flight, stops the workers and
 * resolves, so the command exits 0. With `processes` > 1, a primary process forks that many
 * children sharing the port, each with one engine and one service (ts/service/cluster.ts).
 */
import cluster from 'node:cluster';
import { availableParallelism } from 'node:os';
import { createEngine } from '../engine.js';
import { ErrorCodes, ParleError } from '../errors.js';
import { childAssignment, connectChildMetrics, defaultProcesses, runPrimary } from './cluster.js';
import { checkOptionsObject, checkServiceOptions, createService, SERVICE_OPTION_KEYS, type ServiceOptions } from './server.js';
export { integerFlag } from './flags.js';

/**
 * Options of {@link runServe} (the flags of `parle serve`) and those of createService; any other
 * key is refused with INVALID_OPTION before anything starts.
 */
export interface ServeOptions extends ServiceOptions {
  /** TCP port (default 8080; 0 picks a free one, printed on stdout). */
  port?: number;
  /** Address to listen on (default 127.0.0.1; 0.0.0.0 or :: for every interface). */
  host?: string;
  /**
   * Worker threads of the engine (default: the machine's available parallelism); with several
   * processes, the total, shared between them (5 over 2 processes: 3 and 2).
   */
  workers?: number;
  /**
   * Processes serving the port, each with an engine and its share of `workers` (default
   * the default: one per two cores, 1 to 8, at most `workers`). 1 serves in this
   * process; more fork children with node:cluster (ts/service/cluster.ts): the children re-run
   * this program (`process.argv`), which must call runServe with the same options.
   */
  processes?: number;
  /**
   * The engine's GPU (default `off`: compress and decompress run on the CPU, and only sort has a
   * GPU kernel, which pays for host data only when the keys are large).
   */
  gpu?: 'auto' | 'off' | 'require';
  /** Where the `listening on URL` line goes (default: stdout). */
  log?: (line: string) => void;
  /** Resolves when the service should stop (default: the first SIGTERM or SIGINT). */
  stopSignal?: Promise<unknown>;
}

/** The keys of {@link ServeOptions}: any other is refused (INVALID_OPTION). */
const SERVE_OPTION_KEYS: readonly (keyof ServeOptions)[] = [
  'port',
  'host',
  'workers',
  'processes',
  'gpu',
  'log',
  'stopSignal',
  ...SERVICE_OPTION_KEYS,
];

/**
 * Checks every option of {@link runServe}, the service's included, so that a bad one fails here
 * and not in each forked child.
 * @throws ParleError INVALID_OPTION (the message starts `options.<name>`)
 */
function checkServeOptions(options: unknown): void {
  const o = checkOptionsObject(options, SERVE_OPTION_KEYS, 'runServe');
  const fail = (name: string, what: string, value: unknown) => {
    const got = typeof value === 'string' ? `'${value}'` : typeof value === 'number' || value === null ? String(value) : typeof value;
    throw new ParleError(ErrorCodes.INVALID_OPTION, `options.${name} must be ${what}; got ${got}`);
  };
  const isInteger = (v: unknown, min: number, max: number) => typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max;
  if (o.port !== undefined && !isInteger(o.port, 0, 65535)) fail('port', 'an integer from 0 to 65535', o.port);
  if (o.host !== undefined && (typeof o.host !== 'string' || o.host === '')) fail('host', 'a non-empty string', o.host);
  if (o.workers !== undefined && !isInteger(o.workers, 1, Number.MAX_SAFE_INTEGER)) fail('workers', 'a positive integer', o.workers);
  if (o.processes !== undefined && !isInteger(o.processes, 1, Number.MAX_SAFE_INTEGER))
    fail('processes', 'a positive integer', o.processes);
  if (o.gpu !== undefined && !['auto', 'off', 'require'].includes(o.gpu as string)) fail('gpu', "'auto', 'off' or 'require'", o.gpu);
  if (o.log !== undefined && typeof o.log !== 'function') fail('log', 'a function', o.log);
  if (o.stopSignal !== undefined && typeof (o.stopSignal as { then?: unknown } | null)?.then !== 'function') {
    fail('stopSignal', 'a promise', o.stopSignal);
  }
  const serviceOptions = Object.fromEntries(Object.entries(o).filter(([key]) => (SERVICE_OPTION_KEYS as readonly string[]).includes(key)));
  checkServiceOptions(serviceOptions, 'runServe');
}

/** Resolves at the first SIGTERM or SIGINT. */
function terminationSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const on = (signal: NodeJS.Signals) => {
      process.off('SIGTERM', on);
      process.off('SIGINT', on);
      resolve(signal);
    };
    process.on('SIGTERM', on);
    process.on('SIGINT', on);
  });
}

/**
 * Runs the service until it is told to stop; resolves after a graceful stop (in-flight
 * requests finished, workers stopped). Prints `parle serve: listening on http://HOST:PORT`
 * once it accepts connections (with several processes: once every one of them does).
 * With `processes` > 1 this process becomes the cluster's primary (`runPrimary` in ts/service/cluster.ts); run
 * in one of its children (the environment says so), it serves that child's share.
 *   runServe({ port: 0, processes: 2, workers: 4 })  ->  two processes of 2 workers on one free port
 * @throws ParleError INVALID_OPTION (before anything starts: `options` not an object, a key that
 *   is neither a {@link ServeOptions} nor a ServiceOptions key, a value out of range or of the
 *   wrong type, workers < processes; the message starts `options.<name>`); WORKER_FAILED (a
 *   child exited before it listened, or did not stop cleanly); the listen error (e.g.
 *   EADDRINUSE) with one process
 */
export async function runServe(options: ServeOptions = {}): Promise<void> {
  checkServeOptions(options);
  const {
    port = 8080,
    host = '127.0.0.1',
    workers,
    processes,
    gpu = 'off',
    log = (line) => process.stdout.write(`${line}\n`),
    ...serviceOptions
  } = options;
  const child = childAssignment();
  if (child) {
    // A child of `--processes N`: SIGTERM comes from the primary (which got the SIGTERM or the
    // terminal's SIGINT); later signals must not kill a child that is draining.
    process.on('SIGINT', () => undefined);
    const stop = new Promise<NodeJS.Signals>((resolve) => process.on('SIGTERM', () => resolve('SIGTERM')));
    const prefix = `parle serve: process ${child.index} (pid ${process.pid})`;
    try {
      await runOne({ port: child.port, host, workers: child.workers, gpu, serviceOptions, stop, prefix, log, inCluster: true });
    } finally {
      // The IPC channel to the primary would keep this process alive, even after an error
      // (the primary then waits for an exit that never comes).
      cluster.worker?.disconnect();
    }
    return;
  }
  // Listen for the signal before anything can be slow, so an early SIGTERM is not fatal.
  const stop = options.stopSignal ?? terminationSignal();
  const count = processes ?? defaultProcesses(availableParallelism(), workers);
  if (count > 1) {
    await runPrimary({ processes: count, workers: workers ?? availableParallelism(), port, host, log, stop });
    return;
  }
  await runOne({ port, host, workers, gpu, serviceOptions, stop, prefix: 'parle serve', log, inCluster: false });
}

/** One engine and one service until `stop`; the single process, or one child of several. */
async function runOne(o: {
  port: number;
  host: string;
  workers: number | undefined;
  gpu: 'auto' | 'off' | 'require';
  serviceOptions: ServiceOptions;
  stop: Promise<unknown>;
  prefix: string;
  log: (line: string) => void;
  inCluster: boolean;
}): Promise<void> {
  const { serviceOptions, log, prefix } = o;
  const engine = await createEngine({ workers: o.workers, gpu: o.gpu, maxQueue: Math.max(1, serviceOptions.queue ?? 128) });
  try {
    // In a cluster, GET /metrics answers the sum over all the processes, which only the
    // primary can collect (it asks every child for its registry).
    let metricsLink: ReturnType<typeof connectChildMetrics> | undefined;
    const readMetrics = o.inCluster ? () => metricsLink!.readMetrics() : serviceOptions.readMetrics;
    const service = await createService(engine, { ...serviceOptions, readMetrics });
    if (o.inCluster) metricsLink = connectChildMetrics(service.metrics.registry);
    const url = await service.listen({ port: o.port, host: o.host });
    log(
      o.inCluster
        ? `${prefix}: ready (workers ${engine.workers})`
        : `${prefix}: listening on ${url} (workers ${engine.workers}, pid ${process.pid})`,
    );
    const signal = await o.stop;
    log(`${prefix}: ${typeof signal === 'string' ? signal : 'stop'}; finishing ${service.inFlight} request(s) in flight`);
    await service.close();
    metricsLink?.disconnect();
    log(`${prefix}: stopped`);
  } finally {
    await engine.destroy();
  }
}
