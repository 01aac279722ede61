/**
 * The HTTP service over one {@link Engine} (and its worker pool), shared by all requests:
 *
 *   POST /v1/compress?type=u8|u16|u32|i32|f32|i8|i16|f16|f64|i64|u64[&codec=...][&level=1..9][&decoder=cpu|gpu]   raw little-endian elements -> application/x-parle
 *   POST /v1/decompress                          a .parle container -> raw elements (application/octet-stream), at most maxOutputBytes
 *   POST /v1/sort?type=u32|i32|f32|u64|i64|f64   raw keys -> the keys sorted (stable LSD radix sort)
 *   GET  /healthz                                200 {"status":"ok", "pid", ...} (503 while shutting down)
 *   GET  /metrics                                Prometheus text (ts/service/metrics.ts; option readMetrics)
 *
 * Query parameters are strict (ts/service/query.ts): `type` is required where listed (400
 * UNSUPPORTED_TYPE without it), and a parameter a route does not take, a repeated one or a bad
 * value is 400 INVALID_OPTION naming the parameter, all before any body byte is read. Compress
 * writes the bytes the library writes for the same elements and options (`engine.compress`,
 * `parle compress`): the same chunk size by default (defaultChunkBytes(level)).
 * Request bodies must be `application/octet-stream` or `application/x-parle` (else 415); they
 * are never buffered by the framework: a content-type parser hands the raw stream over.
 * Compress and decompress stream chunk by chunk (ts/service/streams.ts); sort buffers its keys
 * (it needs them all), bounded by `maxBody`. Errors answer `{ "error": { "code", "message" } }`
 * with the statuses of ts/service/errors.ts. Requests that reach the engine pass an admission
 * gate (ts/service/admission.ts): 503 OVERLOADED with Retry-After, before the body is read,
 * when the work queued ahead would take longer than `maxWaitMs`; QUEUE_FULL when `queue`
 * requests already wait; past `shedRate` refusals a second each refusal's answer waits its turn.
 * A connection answered before its body was read is half-closed, the rest left unread
 * (closeAfterAnswer). A body slower than `minBodyRate` is cut with 408 SLOW_BODY.
 */
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import http from 'node:http';
import type { Socket } from 'node:net';
import type { Readable } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import type { Engine } from '../engine.js';
import { checkKeys, ErrorCodes, ParleError } from '../errors.js';
import { HEADER_BYTES, MAX_CHUNK_BYTES } from '../format/layout.js';
import type { SortKeys } from '../types.js';
import { arrayConstructor, elementSize } from '../types.js';
import { AdmissionGate } from './admission.js';
import { abortReason, readBody, readHead, readWholeBody, type BodyFloor, type RequestWork } from './body.js';
import { OutputLimit } from './output-limit.js';
import { RETRY_AFTER_SECONDS, ServiceError, ServiceErrorCodes, bodyTooLarge, describeError, type ErrorBody } from './errors.js';
import { ServiceMetrics } from './metrics.js';
import { compressParameters, readQuery, sortParameters, type CompressParameters } from './query.js';
import { compressBody, decompressBody, toReadable, type StreamContext } from './streams.js';

/** Options of {@link createService}; any other key is refused with INVALID_OPTION (`options.<key> is not an option ...`). */
export interface ServiceOptions {
  /**
   * Largest request body, in bytes (default 1 GiB). Refused with 413 TOO_LARGE before the body
   * is read when Content-Length says more, else as soon as the streamed bytes pass it. Sort
   * holds its whole body in memory (plus 8 bytes a key in the engine), so this also bounds it.
   */
  maxBody?: number;
  /**
   * Largest output of a decompress, in bytes (default 1 GiB, as `maxBody`). A container whose
   * header declares more is refused with 413 LIMIT_EXCEEDED before any output and before it
   * takes a turn: a container of a few hundred bytes may declare gigabytes of constant elements.
   */
  maxOutputBytes?: number;
  /**
   * Largest ratio of a decompress's output bytes to its body bytes (default 65536; 0: none). A
   * container whose declared output passes it for its Content-Length is refused from its header
   * (413 LIMIT_EXCEEDED); mid-stream, output that would pass it for the body bytes read so far
   * ends the request the same way (or cuts the response once it has started). parle's own
   * containers of constant elements reach about 4800 (256 KiB chunks) to 17000 (1 MiB chunks,
   * level 9); only chunks larger than the library writes by default reach 65536.
   */
  maxOutputRatio?: number;
  /** Requests that may wait for a turn on the engine (default 128); one more gets 503 QUEUE_FULL. */
  queue?: number;
  /**
   * Milliseconds of queued work beyond which a request is shed (default 1500): when every turn
   * is taken and the bytes still to code of the requests working and waiting, over the rate the
   * service measured, would keep a newcomer waiting longer, it gets 503 OVERLOADED with
   * Retry-After at once, before its body is read. Admitted requests then finish within about
   * this plus their own coding time: on the 2-core VM, 64 clients of 16 MiB bodies, 2000 gave a
   * p99 of 2.9-3.0 s, just inside the 3 s target, so the default leaves a margin for a rate that
   * moves. 0 sheds whenever a request would wait.
   */
  maxWaitMs?: number;
  /**
   * Refusals (503 OVERLOADED, QUEUE_FULL) answered per second before their answers are held back
   * (default 200; 0: never held). Past a burst of 64, each refusal's answer waits its turn at this
   * pace, at most 1 s: clients that ask again at once after a 503, ignoring Retry-After, are
   * slowed instead of taking the CPU the admitted requests need (on the 2-core VM, 64 such
   * clients: admitted goodput 54-59 MB/s and client timeouts without it, 172-192 MB/s and none
   * with it). Clients that honour Retry-After stay under the pace.
   */
  shedRate?: number;
  /**
   * The slowest body accepted, in bytes per second of waiting for it (default 16384; 0: no
   * floor). After `bodyGraceMs` of waiting, a client whose body arrives slower (a slow or
   * stalled client, a Content-Length longer than what is sent) is answered 408 SLOW_BODY (or cut,
   * once the response has started) and its turn given back. Only time waiting for the client
   * counts, not time the codec holds the body back. The same floor holds for reading the
   * response of compress and decompress: a client that takes it slower, or leaves it waiting
   * longer than `bodyGraceMs` at once, has it cut (SLOW_READ) and its turn given back.
   */
  minBodyRate?: number;
  /** Milliseconds of waiting for body bytes always allowed before `minBodyRate` applies (default 5000). */
  bodyGraceMs?: number;
  /**
   * Requests that work on the engine at once (default: the engine's workers + 1, at least 2).
   * Each active stream holds up to workers + 1 chunks in flight in the engine's wasm memory.
   */
  maxActive?: number;
  /**
   * Milliseconds a request may take from its first byte to its last byte out (default
   * 120000); past it, 503 TIMEOUT (or a cut connection when the response had started), and the
   * engine op is aborted.
   */
  timeoutMs?: number;
  /**
   * Bytes of elements per .parle chunk that compress writes, 1 KiB to 64 MiB, for every request
   * whatever its `level`. Default: the library's, `defaultChunkBytes(level)` (256 KiB up to level
   * 7, 512 KiB at 8, 1 MiB at 9), so the service writes the same bytes as `engine.compress` and
   * `parle compress` for the same elements, codec and level. Smaller chunks hold less memory per
   * request (u8 needs ~11x the chunk's bytes of wasm memory in flight, for up to workers + 1
   * chunks); larger ones cost fewer worker round trips.
   */
  chunkBytes?: number;
  /**
   * Open connections the service keeps at once (default 4096). A connection beyond it closes the
   * oldest connection that has not sent a byte yet, or itself when every open one has: a flood
   * of idle or half-open sockets recycles itself instead of taking the process's file
   * descriptors, memory and slots from the clients being served.
   */
  maxConnections?: number;
  /** Milliseconds a client may take to send a request's headers (default 10000); then 408 and the connection closed. */
  headersTimeoutMs?: number;
  /** Milliseconds an idle keep-alive connection stays open between requests (default 5000, Node's). */
  keepAliveTimeoutMs?: number;
  /** Requests a connection may carry (default 0: no limit); the last is answered with `Connection: close`. */
  maxRequestsPerSocket?: number;
  /** fastify's logger option (default false: no request logs). */
  logger?: boolean;
  /**
   * The text of GET /metrics (default: this service's own registry, `metrics.registry`).
   * `parle serve --processes N` passes one that returns the sum over all the processes.
   */
  readMetrics?: () => Promise<string>;
}

/** A running service; see {@link createService}. */
export interface Service {
  /** The fastify instance (routes registered, not listening until {@link listen}). */
  readonly app: FastifyInstance;
  readonly engine: Engine;
  readonly metrics: ServiceMetrics;
  /** @internal the admission gate (tests synchronise on its events) */
  readonly gate: AdmissionGate;
  /** Requests received and not yet answered. */
  readonly inFlight: number;
  /** Starts listening; resolves to the base URL, e.g. `http://127.0.0.1:8080`. Port 0 picks a free one. */
  listen(options: { port: number; host: string }): Promise<string>;
  /**
   * Graceful stop: stops accepting connections, answers requests arriving on open keep-alive
   * connections with 503 SHUTTING_DOWN, waits for the requests in flight to finish, closes
   * idle connections. Does not destroy the engine (its owner does). Safe to call twice.
   */
  close(): Promise<void>;
}

const BODY_TYPES = ['application/octet-stream', 'application/x-parle'];
/** Decompressed bytes held back before the status is sent (see the decompress route). */
const HOLD_BYTES = 1 << 20;
const DEFAULTS = {
  maxConnections: 4096,
  headersTimeoutMs: 10_000,
  keepAliveTimeoutMs: 5000,
  maxRequestsPerSocket: 0,
  maxBody: 2 ** 30,
  maxOutputBytes: 2 ** 30,
  maxOutputRatio: 65536,
  queue: 128,
  timeoutMs: 120_000,
  maxWaitMs: 1500,
  shedRate: 200,
  minBodyRate: 16384,
  bodyGraceMs: 5000,
};
/**
 * Bytes per second per worker the admission gate assumes before it has measured the rate: about
 * half what a worker compresses of real photographs (u8) on the 16-core host, so the first
 * second of a burst sheds a little more rather than admitting work that cannot finish in time.
 */
const INITIAL_BYTES_PER_S_PER_WORKER = 32e6;

/** The keys of {@link ServiceOptions}: any other is refused (INVALID_OPTION). */
export const SERVICE_OPTION_KEYS: readonly (keyof ServiceOptions)[] = [
  'maxBody',
  'maxOutputBytes',
  'maxOutputRatio',
  'queue',
  'maxWaitMs',
  'shedRate',
  'minBodyRate',
  'bodyGraceMs',
  'maxActive',
  'timeoutMs',
  'chunkBytes',
  'maxConnections',
  'headersTimeoutMs',
  'keepAliveTimeoutMs',
  'maxRequestsPerSocket',
  'logger',
  'readMetrics',
];

/**
 * Checks that `options` is undefined or an object whose keys are all in `known` (ts/errors.ts
 * checkKeys: a misspelt key gets a "did you mean"), and returns it.
 *   checkOptionsObject({ maxbody: 5 }, SERVICE_OPTION_KEYS, 'createService')
 *     ->  INVALID_OPTION "options.maxbody is not an option of createService (did you mean maxBody?)", option 'maxbody'
 * @throws ParleError INVALID_OPTION (not an object; an unknown key, named as written)
 */
export function checkOptionsObject(options: unknown, known: readonly string[], fn: string): Record<string, unknown> {
  if (options === undefined) return {};
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new ParleError(
      ErrorCodes.INVALID_OPTION,
      `options of ${fn} must be an object; got ${options === null ? 'null' : typeof options}`,
    );
  }
  checkKeys(options, known, fn);
  return options as Record<string, unknown>;
}

function checkOption(value: unknown, name: string, min: number, max: number): number | undefined;
function checkOption(value: unknown, name: string, min: number, max: number, fallback: number): number;
function checkOption(value: unknown, name: string, min: number, max: number, fallback?: number): number | undefined {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new ParleError(ErrorCodes.INVALID_OPTION, `options.${name} must be an integer from ${min} to ${max}; got ${String(value)}`);
  }
  return value;
}

/** The checked options of {@link createService}, defaults applied except where they depend on the engine. */
interface CheckedServiceOptions {
  maxBody: number;
  maxOutputBytes: number;
  maxOutputRatio: number;
  queue: number;
  maxWaitMs: number;
  shedRate: number;
  minBodyRate: number;
  bodyGraceMs: number;
  maxActive: number | undefined;
  timeoutMs: number;
  /** undefined: the library's default for the request's level. */
  chunkBytes: number | undefined;
  maxConnections: number;
  headersTimeoutMs: number;
  keepAliveTimeoutMs: number;
  maxRequestsPerSocket: number;
  logger: boolean;
  readMetrics: (() => Promise<string>) | undefined;
}

/**
 * Checks the options of {@link createService} (runServe checks them too, before it forks).
 * @throws ParleError INVALID_OPTION: not an object, an unknown key, a value out of range or of
 *   the wrong type (the message starts `options.<name>`)
 */
export function checkServiceOptions(options: unknown, fn = 'createService'): CheckedServiceOptions {
  const o = checkOptionsObject(options, SERVICE_OPTION_KEYS, fn);
  if (o.logger !== undefined && typeof o.logger !== 'boolean') {
    throw new ParleError(ErrorCodes.INVALID_OPTION, `options.logger must be a boolean; got ${typeof o.logger}`);
  }
  if (o.readMetrics !== undefined && typeof o.readMetrics !== 'function') {
    throw new ParleError(ErrorCodes.INVALID_OPTION, `options.readMetrics must be a function; got ${typeof o.readMetrics}`);
  }
  return {
    maxBody: checkOption(o.maxBody, 'maxBody', 0, Number.MAX_SAFE_INTEGER, DEFAULTS.maxBody),
    maxOutputBytes: checkOption(o.maxOutputBytes, 'maxOutputBytes', 0, Number.MAX_SAFE_INTEGER, DEFAULTS.maxOutputBytes),
    maxOutputRatio: checkOption(o.maxOutputRatio, 'maxOutputRatio', 0, Number.MAX_SAFE_INTEGER, DEFAULTS.maxOutputRatio),
    queue: checkOption(o.queue, 'queue', 0, 2 ** 31, DEFAULTS.queue),
    maxWaitMs: checkOption(o.maxWaitMs, 'maxWaitMs', 0, 2 ** 31 - 1, DEFAULTS.maxWaitMs),
    shedRate: checkOption(o.shedRate, 'shedRate', 0, 2 ** 31 - 1, DEFAULTS.shedRate),
    minBodyRate: checkOption(o.minBodyRate, 'minBodyRate', 0, Number.MAX_SAFE_INTEGER, DEFAULTS.minBodyRate),
    bodyGraceMs: checkOption(o.bodyGraceMs, 'bodyGraceMs', 0, 2 ** 31 - 1, DEFAULTS.bodyGraceMs),
    maxActive: checkOption(o.maxActive, 'maxActive', 1, 2 ** 16),
    timeoutMs: checkOption(o.timeoutMs, 'timeoutMs', 1, 2 ** 31 - 1, DEFAULTS.timeoutMs),
    chunkBytes: checkOption(o.chunkBytes, 'chunkBytes', 1024, MAX_CHUNK_BYTES),
    maxConnections: checkOption(o.maxConnections, 'maxConnections', 1, 2 ** 31 - 1, DEFAULTS.maxConnections),
    headersTimeoutMs: checkOption(o.headersTimeoutMs, 'headersTimeoutMs', 1, 2 ** 31 - 1, DEFAULTS.headersTimeoutMs),
    keepAliveTimeoutMs: checkOption(o.keepAliveTimeoutMs, 'keepAliveTimeoutMs', 0, 2 ** 31 - 1, DEFAULTS.keepAliveTimeoutMs),
    maxRequestsPerSocket: checkOption(o.maxRequestsPerSocket, 'maxRequestsPerSocket', 0, 2 ** 31 - 1, DEFAULTS.maxRequestsPerSocket),
    logger: (o.logger as boolean | undefined) ?? false,
    readMetrics: o.readMetrics as (() => Promise<string>) | undefined,
  };
}

/**
 * Milliseconds a connection answered before its body was read stays half-closed (our side
 * ended, nothing more read) before it is closed; see {@link closeAfterAnswer}.
 */
const LINGER_MS = 2000;

/**
 * Answers with `Connection: close` a request whose body was not read to its end, and closes the
 * connection without reading the rest: once the answer is out our side is ended (FIN) and reading
 * stops, so the client's bytes wait in the kernel's buffers, unread, and cost no CPU; the socket
 * is closed when LINGER_MS pass. A client that reads answers while it sends (Node's http, curl,
 * this repository's load client) has the answer and closes at once; one that sends the whole
 * body first has LINGER_MS to finish before the close, which then resets the connection (the
 * kernel sends a reset for unread bytes). Closing at once, as Node does for `Connection: close`,
 * would make that reset race the answer; reading the rest to discard it, as Node does to keep a
 * connection alive (and Apache's and nginx's "lingering close"), cost the main thread most of a
 * core on the 2-core VM under clients that never back off (each refused upload read 1-2 MB
 * before its client closed). The model is Go's net/http (`closeWriteAndWait`: CloseWrite, then
 * a delay, then Close, for a body it did not read).
 * `onHalfClosed` is told the socket once its answer is out, so that the connection limit may
 * close it first to make room.
 */
function closeAfterAnswer(request: FastifyRequest, reply: FastifyReply, onHalfClosed: (socket: Socket) => void): void {
  reply.header('connection', 'close');
  const req = request.raw;
  const socket = req.socket;
  // Detach the body's reader (an abandoned async iterator).
  req.removeAllListeners('readable');
  req.removeAllListeners('data');
  // Called by Node once the answer with `Connection: close` is written: end our side and stop
  // reading, then close after LINGER_MS. Node has just resumed the body to drain it
  // (IncomingMessage's dump), which resumes the socket a tick later: every resume is undone.
  socket.destroySoon = function halfClose(this: typeof socket) {
    this.end();
    this.on('resume', () => this.pause());
    this.pause();
    const timer = setTimeout(() => this.destroy(), LINGER_MS);
    timer.unref();
    this.once('close', () => clearTimeout(timer));
    onHalfClosed(this);
  };
}

/** Content-Length as a number, undefined when absent. */
function contentLength(request: FastifyRequest): number | undefined {
  const header = request.headers['content-length'];
  if (header === undefined) return undefined;
  const n = Number(header);
  // Node's parser already refuses malformed lengths; this is belt and braces.
  if (!Number.isSafeInteger(n) || n < 0) throw new ParleError(ErrorCodes.INVALID_ARGUMENT, `bad Content-Length: ${header}`);
  return n;
}

/**
 * Creates the service over `engine` (which it shares between all requests and does not
 * destroy). Routes, their query parameters and statuses: this module's header,
 * ts/service/query.ts and ts/service/errors.ts.
 *   await createService(engine, { maxBody: 64 << 20 })  ->  a Service; `await service.listen({ port: 0, host: '127.0.0.1' })`
 * @throws ParleError INVALID_OPTION: `options` not an object, a key that is not one of
 *   {@link ServiceOptions}, a value out of range (the message starts `options.<name>`)
 */
export async function createService(engine: Engine, options: ServiceOptions = {}): Promise<Service> {
  const checked = checkServiceOptions(options);
  const { maxBody, queue, timeoutMs, chunkBytes, maxWaitMs, maxOutputBytes, maxOutputRatio } = checked;
  const maxActive = checked.maxActive ?? Math.max(2, engine.workers + 1);
  const floor: BodyFloor = { minBytesPerS: checked.minBodyRate, graceMs: checked.bodyGraceMs };

  const gate = new AdmissionGate({
    maxActive,
    maxWaiting: queue,
    maxWaitMs,
    initialBytesPerS: INITIAL_BYTES_PER_S_PER_WORKER * Math.max(1, engine.workers),
    refusalsPerS: checked.shedRate === 0 ? Infinity : checked.shedRate,
  });
  const metrics = new ServiceMetrics(engine, gate);
  const works = new WeakMap<FastifyRequest, RequestWork>();
  const maxInFlight = Math.max(2, engine.workers + 1);
  let closing = false;
  let inFlight = 0;
  let onIdle: (() => void) | undefined;
  /**
   * Connections the connection limit may close to make room, oldest first: those that have not
   * sent a byte yet, and those half-closed after an answer ({@link closeAfterAnswer}).
   */
  const closable = new Set<Socket>();
  const halfClosed = (socket: Socket) => {
    if (!socket.destroyed) closable.add(socket);
  };

  const app = Fastify({
    logger: checked.logger,
    // Requests on open keep-alive connections during shutdown get our own JSON 503 (onRequest).
    return503OnClosing: false,
    // The per-request timeout is ours (timeoutMs); Node's would cut uploads without an answer.
    requestTimeout: 0,
    // Node checks the headers' timeout every connectionsCheckingInterval (30 s by default): a
    // server of its own, checked every second, so a slow sender of headers goes within a second
    serverFactory: (handler) => {
      const server = http.createServer(
        {
          headersTimeout: checked.headersTimeoutMs,
          requestTimeout: 0,
          connectionsCheckingInterval: Math.min(1000, checked.headersTimeoutMs),
        },
        handler,
      );
      // maxConnections is kept here, not by Node's server.maxConnections (which closes every
      // connection past it, a client's as an attacker's): at the limit the oldest closable one
      // (silent, or half-closed after its answer) is closed to make room. A flood of idle
      // sockets then only recycles itself; clients that send at once always get in
      // (bench/service-load.mjs --hostile-only: 10,000 idle sockets had held every one of 4096
      // slots, and the load's clients were refused 163,000 times in 20 s).
      let open = 0;
      server.on('connection', (socket: Socket) => {
        open++;
        // Node's headers timeout starts at a request's first byte: a connection that never
        // sends one would stay open for ever. It gets headersTimeoutMs too.
        const idle = setTimeout(() => socket.destroy(), checked.headersTimeoutMs);
        idle.unref();
        socket.once('close', () => {
          open--;
          closable.delete(socket);
          clearTimeout(idle);
        });
        if (open > checked.maxConnections) {
          const oldest = closable.values().next();
          if (oldest.done === true) {
            socket.destroy();
            return;
          }
          closable.delete(oldest.value);
          oldest.value.destroy();
        }
        closable.add(socket);
        socket.once('data', () => {
          closable.delete(socket);
          clearTimeout(idle);
        });
      });
      server.keepAliveTimeout = checked.keepAliveTimeoutMs;
      server.maxRequestsPerSocket = checked.maxRequestsPerSocket;
      return server;
    },
  });

  const workOf = (request: FastifyRequest): RequestWork => works.get(request)!;
  /** Compress parameters, checked in the route's onRequest hook. */
  const compressParams = new WeakMap<FastifyRequest, CompressParameters>();

  // ---- bodies: the raw stream, never buffered by fastify ----------------------------------
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(BODY_TYPES, (_request, payload, done) => done(null, payload));
  app.addContentTypeParser('*', (request, _payload, done) => {
    done(
      new ServiceError(
        ServiceErrorCodes.UNSUPPORTED_MEDIA_TYPE,
        415,
        `Content-Type must be ${BODY_TYPES.join(' or ')}; got ${request.headers['content-type'] ?? 'none'}`,
      ),
      undefined,
    );
  });

  // ---- every request: timeout, client-gone abort, metrics --------------------------------
  app.addHook('onRequest', (request, reply, done) => {
    const started = process.hrtime.bigint();
    const controller = new AbortController();
    const work: RequestWork = {
      controller,
      bytesIn: 0,
      bytesOut: 0,
      bodyWaitMs: 0,
      phases: { waitMs: 0, bodyMs: 0, codingMs: 0, sendMs: 0 },
    };
    if (request.headers.expect?.toLowerCase() === '100-continue') {
      work.sendContinue = () => {
        work.sendContinue = undefined;
        if (!reply.raw.headersSent && !reply.raw.destroyed) reply.raw.writeContinue();
      };
    }
    works.set(request, work);
    inFlight++;
    const res = reply.raw;
    // A request that is torn down emits 'error' on its IncomingMessage; without a listener
    // that would be an uncaught exception. The failure is handled through `controller`.
    request.raw.on('error', () => undefined);
    const timer = setTimeout(() => {
      metrics.timedOut.inc({ route: request.routeOptions.url ?? 'unmatched' });
      controller.abort(new ServiceError(ServiceErrorCodes.TIMEOUT, 503, `the request took longer than ${timeoutMs} ms (timeoutMs)`));
    }, timeoutMs);
    res.once('close', () => {
      clearTimeout(timer);
      const completed = res.writableFinished;
      if (!completed) controller.abort(new Error('the client closed the connection'));
      const route = request.routeOptions.url ?? 'unmatched';
      const error = work.error ?? (completed ? undefined : abortReason(controller.signal));
      const described = error === undefined ? undefined : describeError(error);
      // 499: the client went away before the response was complete (nginx's convention); a
      // response the service cut (its error came after the status went out) counts with the
      // error's status, e.g. 408 SLOW_BODY.
      const status = completed
        ? String(res.statusCode)
        : described === undefined || described.code === ErrorCodes.ABORTED
          ? '499'
          : String(described.status);
      metrics.requests.inc({ route, method: request.method, status });
      // Every request that failed, answered or cut, with its code: the metrics and (logger on) the log.
      if (described !== undefined) {
        const { code } = described;
        metrics.failed.inc({ route, code, status });
        request.log.info({ code, status, bytesIn: work.bytesIn, bytesOut: work.bytesOut }, 'request failed');
      }
      metrics.bytesIn.inc({ route }, work.bytesIn);
      metrics.bytesOut.inc({ route }, work.bytesOut);
      metrics.duration.observe({ route }, Number(process.hrtime.bigint() - started) / 1e9);
      if (route === '/v1/compress' || route === '/v1/decompress') {
        const { waitMs, bodyMs, codingMs, sendMs } = work.phases;
        metrics.phases.inc({ route, phase: 'wait' }, waitMs / 1000);
        metrics.phases.inc({ route, phase: 'body' }, bodyMs / 1000);
        metrics.phases.inc({ route, phase: 'body_client' }, work.bodyWaitMs / 1000);
        metrics.phases.inc({ route, phase: 'coding' }, codingMs / 1000);
        metrics.phases.inc({ route, phase: 'send' }, sendMs / 1000);
      }
      inFlight--;
      if (inFlight === 0) onIdle?.();
    });
    if (closing) {
      reply.header('connection', 'close');
      done(new ServiceError(ServiceErrorCodes.SHUTTING_DOWN, 503, 'the service is shutting down'));
      return;
    }
    done();
  });

  // Bytes out of whole replies (sort, JSON); streamed bodies are counted as they are produced.
  app.addHook('onSend', async (request, _reply, payload) => {
    const work = works.get(request);
    if (work && (typeof payload === 'string' || payload instanceof Uint8Array)) work.bytesOut += Buffer.byteLength(payload);
    return payload;
  });

  app.setErrorHandler((error, request, reply) => {
    const work = works.get(request);
    // An op that failed because the request timed out reports the timeout, not ABORTED.
    const cause =
      work?.controller.signal.aborted && work.controller.signal.reason instanceof ServiceError ? work.controller.signal.reason : error;
    const described = describeError(cause);
    let { status, code, message } = described;
    const parameter = described.parameter;
    if (work) work.error ??= cause;
    const shed = code === ServiceErrorCodes.OVERLOADED || code === ErrorCodes.QUEUE_FULL;
    const route = request.routeOptions.url ?? 'unmatched';
    if (shed) metrics.shed.inc({ route, code });
    // (GPU_ERROR, IO_ERROR: a bug or the machine, not the request)
    if (cause instanceof ParleError && status >= 500 && status !== 503) request.log.error({ err: cause }, 'internal error');
    if (!(cause instanceof ServiceError) && !(cause instanceof ParleError)) {
      const fastifyStatus = (error as { statusCode?: number }).statusCode;
      if (fastifyStatus === 415) {
        ({ status, code, message } = {
          status: 415,
          code: ServiceErrorCodes.UNSUPPORTED_MEDIA_TYPE,
          message: String((error as Error).message),
        });
      } else if (fastifyStatus !== undefined && fastifyStatus >= 400 && fastifyStatus < 500) {
        ({ status, code, message } = {
          status: fastifyStatus,
          code: ErrorCodes.INVALID_ARGUMENT,
          message: String((error as Error).message),
        });
      } else {
        request.log.error({ err: error }, 'internal error');
      }
    }
    if (status === 503) reply.header('retry-after', String(described.retryAfterSeconds ?? RETRY_AFTER_SECONDS));
    if (!request.raw.complete) closeAfterAnswer(request, reply, halfClosed);
    const body: ErrorBody = { error: { code, message, ...(parameter !== undefined ? { parameter } : {}) } };
    // a refusal past the pace (option shedRate) is answered later (AdmissionGate.paceRefusal)
    const holdMs = shed ? gate.paceRefusal() : 0;
    if (holdMs > 0) {
      metrics.shedHeld.inc({ route }, holdMs / 1000);
      return delay(holdMs).then(() => reply.code(status).type('application/json').send(body));
    }
    return reply.code(status).type('application/json').send(body);
  });

  app.setNotFoundHandler((request, reply) => {
    const body: ErrorBody = { error: { code: ServiceErrorCodes.NOT_FOUND, message: `no route ${request.method} ${request.url}` } };
    if (!request.raw.complete) closeAfterAnswer(request, reply, halfClosed);
    return reply.code(404).type('application/json').send(body);
  });

  // ---- checks before any body byte is read ------------------------------------------------

  /** 413 from Content-Length alone, before the body is read. */
  function refuseLargeBody(request: FastifyRequest): number | undefined {
    const length = contentLength(request);
    if (length !== undefined && length > maxBody) throw bodyTooLarge(maxBody, length);
    return length;
  }

  /** 415 before the body is read (fastify's parser would only see it after the other checks). */
  function checkContentType(request: FastifyRequest): void {
    const header = request.headers['content-type'];
    const mime = header?.split(';')[0].trim().toLowerCase();
    if (mime === undefined || !BODY_TYPES.includes(mime)) {
      throw new ServiceError(
        ServiceErrorCodes.UNSUPPORTED_MEDIA_TYPE,
        415,
        `Content-Type must be ${BODY_TYPES.join(' or ')}; got ${header ?? 'none'}`,
      );
    }
  }

  /**
   * The read floor of a streamed response (the body floor's rate and grace): a client that stops
   * reading has its response cut with SLOW_READ, so its turn goes back before the request's
   * timeout (ts/service/streams.ts).
   */
  function readFloorOf(reply: FastifyReply, work: RequestWork): StreamContext['readFloor'] {
    return {
      ...floor,
      onSlow: (error) => {
        work.error ??= error;
        reply.raw.destroy(error);
      },
    };
  }

  /** The request body stream; an empty one when the request had none. */
  function bodyOf(request: FastifyRequest): Readable {
    return (request.body as Readable | undefined) ?? request.raw;
  }

  // ---- routes -------------------------------------------------------------------------------

  app.post(
    '/v1/compress',
    {
      onRequest: async (request) => {
        const params = compressParameters(request.raw.url ?? request.url);
        compressParams.set(request, params);
        const { type } = params;
        checkContentType(request);
        const length = refuseLargeBody(request);
        if (length === undefined) {
          throw new ServiceError(
            ServiceErrorCodes.LENGTH_REQUIRED,
            411,
            'POST /v1/compress needs a Content-Length: the element count goes into the container header before the body',
          );
        }
        if (length % elementSize(type) !== 0) {
          throw new ParleError(
            ErrorCodes.UNALIGNED_LENGTH,
            `the body has ${length} bytes, not a whole number of ${type} elements (${elementSize(type)} bytes each)`,
          );
        }
      },
    },
    async (request, reply) => {
      const { type, codec, level, decoder, shape } = compressParams.get(request)!;
      const length = contentLength(request)!;
      const work = workOf(request);
      // The options `parle compress` passes for the same flags (ts/node/files.ts compressFile):
      // the same container bytes.
      const writer = engine.createCompressor(type, length / elementSize(type), {
        ...(chunkBytes !== undefined ? { chunkBytes } : {}),
        ...(codec !== undefined ? { codec } : {}),
        ...(level !== undefined ? { level } : {}),
        ...(decoder !== undefined ? { decoder } : {}),
        ...(shape !== undefined ? { shape } : {}),
      });
      // Streams always run on the CPU path (the ContainerWriter takes chunks to the workers).
      metrics.paths.inc({ op: 'compress', path: 'cpu' });
      const ctx: StreamContext = {
        gate,
        work,
        maxInFlight,
        job: { bytes: length, done: () => work.bytesIn },
        readFloor: readFloorOf(reply, work),
        onAdmitted: () => metrics.admitted.inc({ route: '/v1/compress' }),
      };
      const output = compressBody(writer, () => readBody(bodyOf(request), work, maxBody, floor), ctx);
      // Errors before the first piece (queue full, timeout while waiting) still get a status.
      const first = await output.next();
      reply.type('application/x-parle').header('parle-type', type);
      return reply.send(toReadable(first.done ? undefined : first.value, output));
    },
  );

  app.post(
    '/v1/decompress',
    {
      onRequest: async (request) => {
        readQuery(request.raw.url ?? request.url, 'POST /v1/decompress');
        checkContentType(request);
        refuseLargeBody(request);
      },
    },
    async (request, reply) => {
      const work = workOf(request);
      const limit = new OutputLimit(maxOutputBytes, maxOutputRatio, contentLength(request));
      const body = readBody(bodyOf(request), work, maxBody, floor);
      // A client that did not ask `Expect: 100-continue` sends its body anyway: its header is
      // read now, so a container that declares too much output is refused at once instead of
      // after a wait for a turn, and the gate weighs the request by the output it declares.
      // (One that asked passes the gate's shed check first, on the mean size, so a shed one never
      // sends its body; its header is then among the body's first bytes, read before a turn.)
      const head = work.sendContinue === undefined ? await readHead(body, HEADER_BYTES) : undefined;
      if (head !== undefined) limit.checkHeader(head.bytes);
      const reader = engine.createDecompressor();
      const ctx: StreamContext = {
        gate,
        work,
        maxInFlight,
        job: {
          get bytes() {
            return limit.declaredBytes;
          },
          done: () => work.bytesOut,
        },
        beforeOutput: (bytes) => limit.checkOutput(work.bytesOut + bytes, work.bytesIn),
        readFloor: readFloorOf(reply, work),
        onAdmitted: () => metrics.admitted.inc({ route: '/v1/decompress' }),
      };
      const output = decompressBody(reader, () => limit.checkedBody(head, body), ctx);
      // The status goes out once HOLD_BYTES of output are ready, or the container ended: a
      // corrupt or truncated container whose output fits (and any bad header) gets its 400;
      // past that, a failure cuts the response short of its Content-Length.
      const held: Uint8Array[] = [];
      let heldBytes = 0;
      while (heldBytes < HOLD_BYTES) {
        const next = await output.next();
        if (next.done) break;
        held.push(next.value);
        heldBytes += next.value.length;
      }
      const header = reader.header!;
      metrics.paths.inc({ op: 'decompress', path: 'cpu' });
      reply
        .type('application/octet-stream')
        .header('parle-type', header.type)
        .header('content-length', String(header.elementCount * elementSize(header.type)));
      return reply.send(toReadable(held.length > 0 ? Buffer.concat(held, heldBytes) : undefined, output));
    },
  );

  app.post(
    '/v1/sort',
    {
      onRequest: async (request) => {
        const { type } = sortParameters(request.raw.url ?? request.url);
        checkContentType(request);
        const length = refuseLargeBody(request);
        if (length !== undefined && length % elementSize(type) !== 0) {
          throw new ParleError(ErrorCodes.UNALIGNED_LENGTH, `the body has ${length} bytes, not a whole number of ${type} keys`);
        }
      },
    },
    async (request, reply) => {
      const { type } = sortParameters(request.raw.url ?? request.url);
      const work = workOf(request);
      const signal = work.controller.signal;
      const length = contentLength(request);
      const release = await gate.acquire(signal, { bytes: length, done: () => work.bytesIn, kind: 'sort' });
      metrics.admitted.inc({ route: '/v1/sort' });
      try {
        const bytes = await readWholeBody(bodyOf(request), work, maxBody, length, floor);
        if (bytes.length % elementSize(type) !== 0) {
          throw new ParleError(ErrorCodes.UNALIGNED_LENGTH, `the body has ${bytes.length} bytes, not a whole number of ${type} keys`);
        }
        const keys = new (arrayConstructor(type))(bytes.buffer, bytes.byteOffset, bytes.length / elementSize(type)) as SortKeys;
        metrics.paths.inc({ op: 'sort', path: engine.explain('sort', keys).path });
        const sorted = await engine.sort(keys, { signal });
        return reply
          .type('application/octet-stream')
          .header('parle-type', type)
          .send(Buffer.from(sorted.buffer, sorted.byteOffset, sorted.byteLength));
      } finally {
        release();
      }
    },
  );

  // GET routes take no query parameters either: a misspelt probe or scrape is told so.
  const noParameters = (route: string) => ({
    onRequest: async (request: FastifyRequest) => void readQuery(request.raw.url ?? request.url, route),
  });

  app.get('/healthz', noParameters('GET /healthz'), async (_request, reply) => {
    if (closing) reply.code(503).header('retry-after', String(RETRY_AFTER_SECONDS));
    return {
      status: closing ? 'closing' : 'ok',
      // Which process answered: with `parle serve --processes N` each has its own engine.
      pid: process.pid,
      workers: engine.workers,
      pending: engine.pending,
      active: gate.active,
      waiting: gate.waiting,
      workerRestarts: engine.workerRestarts,
    };
  });

  const readMetrics = checked.readMetrics ?? (() => metrics.registry.metrics());
  app.get('/metrics', noParameters('GET /metrics'), async (_request, reply) => {
    const text = await readMetrics();
    return reply.type(metrics.registry.contentType).send(text);
  });

  // `Expect: 100-continue` (curl sends it for bodies over 1 MiB): Node answers 100 Continue at
  // once unless 'checkContinue' is listened for. Here the request is routed as any other and the
  // 100 goes out only when its body is first read (RequestWork.sendContinue), after the gate's
  // shed check (AdmissionGate.refuseAtOnce): a shed request's client never sends its body.
  app.server.on('checkContinue', (req, res) => app.server.emit('request', req, res));
  await app.ready();

  let closed: Promise<void> | undefined;
  return {
    app,
    engine,
    metrics,
    gate,
    get inFlight() {
      return inFlight;
    },
    async listen({ port, host }) {
      await app.listen({ port, host });
      const address = app.server.address();
      const actual = typeof address === 'object' && address ? address.port : port;
      return `http://${host.includes(':') ? `[${host}]` : host}:${actual}`;
    },
    close() {
      closed ??= (async () => {
        closing = true;
        const stopped = app.close();
        // Keep-alive connections that were busy when close() began become idle only when
        // their response ends; close those once nothing is in flight.
        if (inFlight > 0) await new Promise<void>((resolve) => (onIdle = resolve));
        app.server.closeIdleConnections();
        await stopped;
      })();
      return closed;
    },
  };
}
