/**
 * `parle serve`: one engine, one service, until SIGTERM (or SIGINT). On the signal the
 * service stops accepting connections, finishes the requests in flight, stops the workers and
 * resolves, so the command exits 0.
 */
import { InvalidArgumentError } from 'commander';
import { createEngine } from '../engine.js';
import { createService, type ServiceOptions } from './server.js';

/** Options of {@link runServe} (the flags of `parle serve`). */
export interface ServeOptions extends ServiceOptions {
  /** TCP port (default 8080; 0 picks a free one, printed on stdout). */
  port?: number;
  /** Address to listen on (default 127.0.0.1; 0.0.0.0 or :: for every interface). */
  host?: string;
  /** Worker threads of the engine (default: the machine's available parallelism). */
  workers?: number;
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
 * once it accepts connections.
 * @throws ParleError INVALID_OPTION; the listen error (e.g. EADDRINUSE)
 */
export async function runServe(options: ServeOptions = {}): Promise<void> {
  const { port = 8080, host = '127.0.0.1', workers, gpu = 'off', log = (line) => process.stdout.write(`${line}\n`), ...serviceOptions } = options;
  // Listen for the signal before anything can be slow, so an early SIGTERM is not fatal.
  const stop = options.stopSignal ?? terminationSignal();
  const engine = await createEngine({ workers, gpu, maxQueue: Math.max(1, serviceOptions.queue ?? 128) });
  try {
    const service = await createService(engine, serviceOptions);
    const url = await service.listen({ port, host });
    log(`parle serve: listening on ${url} (workers ${engine.workers}, pid ${process.pid})`);
    const signal = await stop;
    log(`parle serve: ${typeof signal === 'string' ? signal : 'stop'}; finishing ${service.inFlight} request(s) in flight`);
    await service.close();
    log('parle serve: stopped');
  } finally {
    await engine.destroy();
  }
}

/** Commander parser of an integer flag from `min` to `max` (a usage error, exit 2, otherwise). */
export function integerFlag(name: string, min: number, max = Number.MAX_SAFE_INTEGER): (value: string) => number {
  return (value: string): number => {
    const n = Number(value);
    if (!/^\d+$/.test(value) || !Number.isSafeInteger(n) || n < min || n > max) {
      throw new InvalidArgumentError(`${name} must be an integer from ${min} to ${max}`);
    }
    return n;
  };
}
