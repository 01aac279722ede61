/**
 * Request bodies as streams of byte pieces: counted (metrics, the --max-body limit) and
 * abortable (per-request timeout, client gone) without destroying the request, so the service
 * can still answer 413 or 503 on the same socket.
 */
import type { Readable } from 'node:stream';
import { abortError } from '../cpu/pool.js';
import { ErrorCodes, ParleError } from '../errors.js';
import { bodyTooLarge, ServiceError, ServiceErrorCodes } from './errors.js';

/**
 * The slowest body the service waits for: after `graceMs` of waiting for body bytes, at least
 * `minBytesPerS` must have arrived per second of waiting. Only time spent waiting for the client
 * counts (not time the codec holds the body back), so a busy server never fails a fast client.
 *   { minBytesPerS: 16384, graceMs: 5000 }: a client sending 1 KiB/s fails after ~5.3 s of waiting,
 *   one sending nothing after 5 s.
 */
export interface BodyFloor {
  /** Bytes per second of waiting (0: no floor). */
  minBytesPerS: number;
  /** Milliseconds of waiting always allowed. */
  graceMs: number;
}

/**
 * Where a streamed request's time went, in milliseconds (ts/service/streams.ts measures them):
 * waiting for a turn at the admission gate, reading its body (between pieces, including the
 * time waiting for the client, `bodyWaitMs`), awaiting the codec, and held at the response (the
 * socket not taking more).
 */
export interface RequestPhases {
  waitMs: number;
  bodyMs: number;
  codingMs: number;
  sendMs: number;
}

/** What one request has read and written so far, and its abort signal. */
export interface RequestWork {
  /** Aborts on the per-request timeout (reason: ServiceError TIMEOUT) or when the client goes. */
  readonly controller: AbortController;
  /** Body bytes read. */
  bytesIn: number;
  /** Body bytes written. */
  bytesOut: number;
  /** Milliseconds spent waiting for body bytes from the client (see {@link BodyFloor}). */
  bodyWaitMs: number;
  /** Where the request's time went (streamed routes). */
  readonly phases: RequestPhases;
  /** The error the request failed with, once it failed (for the metrics and the log). */
  error?: unknown;
  /**
   * Tells a client that sent `Expect: 100-continue` to send its body (once; a no-op for other
   * clients). readBody calls it before its first read, so a request refused before then (shed,
   * a bad parameter) never had its body sent at all.
   */
  sendContinue?: () => void;
}

/** The error an aborted request fails with: the timeout's own error, or ABORTED. */
export function abortReason(signal: AbortSignal): Error {
  return signal.reason instanceof ServiceError ? signal.reason : abortError(signal);
}

/** Throws the abort's error when `signal` has aborted. */
export function throwIfAborted(signal: AbortSignal): void {
  if (signal.aborted) throw abortReason(signal);
}

/**
 * `promise`, or the abort's error when `signal` aborts first. The abort listener is removed
 * as soon as either settles: a long-lived promise raced against every read (Promise.race)
 * would keep a reaction per read, and with it every piece read, until the request ends.
 */
function unlessAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(abortReason(signal));
  let onAbort: () => void = () => undefined;
  return new Promise<T>((resolve, reject) => {
    onAbort = () => reject(abortReason(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject);
  }).finally(() => signal.removeEventListener('abort', onAbort));
}

/**
 * Milliseconds of waiting `floor` still allows a client that moved `bytes` in `waitedMs` of
 * waiting: its grace plus the time its bytes earned at the floor's rate, less what it waited.
 * The same rule for bodies (readBody) and responses (ts/service/streams.ts).
 */
export function floorAllowanceMs(floor: BodyFloor, bytes: number, waitedMs: number): number {
  return floor.graceMs + (bytes * 1000) / floor.minBytesPerS - waitedMs;
}

/** The SLOW_BODY error for `work`. */
function slowBody(work: RequestWork, floor: BodyFloor): ServiceError {
  return new ServiceError(
    ServiceErrorCodes.SLOW_BODY,
    408,
    `the body arrived at ${Math.round((work.bytesIn * 1000) / Math.max(1, work.bodyWaitMs))} bytes/s over ${Math.round(work.bodyWaitMs)} ms of waiting, ` +
      `below the floor (minBodyRate) of ${floor.minBytesPerS} bytes/s`,
  );
}

/**
 * The pieces of `body` as they arrive, counted into `work.bytesIn`, the time waited for them into
 * `work.bodyWaitMs`.
 *
 * Never destroys `body` (a destroyed IncomingMessage takes its socket along, and then no
 * error response can be sent); the error response carries `Connection: close` instead.
 * @throws ParleError TOO_LARGE once more than `maxBody` bytes arrived; ServiceError SLOW_BODY when
 *   the client falls below `floor`; the abort's error (ServiceError TIMEOUT, or ParleError
 *   ABORTED) when the request's signal aborts while waiting; ParleError ABORTED when the
 *   connection closes before the body ended
 */
export async function* readBody(
  body: Readable,
  work: RequestWork,
  maxBody: number,
  floor: BodyFloor = { minBytesPerS: 0, graceMs: 0 },
): AsyncGenerator<Uint8Array> {
  const signal = work.controller.signal;
  work.sendContinue?.();
  const pieces = body[Symbol.asyncIterator]() as AsyncIterator<Uint8Array>;
  for (;;) {
    const next = pieces.next();
    next.catch(() => undefined); // a read that loses to an abort may still fail later
    const started = performance.now();
    let timer: ReturnType<typeof setTimeout> | undefined;
    let result: IteratorResult<Uint8Array>;
    try {
      // (the allowance first: a promise made before this throw would reject unobserved)
      const allowanceMs = floor.minBytesPerS > 0 ? floorAllowanceMs(floor, work.bytesIn, work.bodyWaitMs) : Infinity;
      if (allowanceMs <= 0) throw slowBody(work, floor);
      let waiting = unlessAborted(next, signal);
      if (floor.minBytesPerS > 0) {
        waiting = Promise.race([
          waiting,
          new Promise<never>((_resolve, reject) => {
            timer = setTimeout(() => {
              work.bodyWaitMs += performance.now() - started;
              reject(slowBody(work, floor));
            }, allowanceMs);
          }),
        ]);
      }
      result = await waiting;
    } catch (e) {
      if (e instanceof ParleError || e instanceof ServiceError) throw e;
      // the body stream's own error: the connection closed before the body ended (a client that
      // went away, or one whose Content-Length promised more than it sent before closing)
      throw new ParleError(ErrorCodes.ABORTED, `the body ended after ${work.bytesIn} bytes: the client closed the connection`, {
        cause: e,
      });
    } finally {
      clearTimeout(timer);
    }
    work.bodyWaitMs += performance.now() - started;
    const { value, done } = result;
    if (done) return;
    work.bytesIn += value.length;
    if (work.bytesIn > maxBody) throw bodyTooLarge(maxBody, `at least ${work.bytesIn}`);
    yield value;
  }
}

/** The first bytes of a body, read ahead of the rest (see {@link readHead}). */
export interface BodyHead {
  /** The pieces read, whole, in order. */
  readonly pieces: readonly Uint8Array[];
  /** Their first `min(wanted, total)` bytes, joined. */
  readonly bytes: Uint8Array;
}

/**
 * Reads pieces of `body` (a {@link readBody} generator) until `wanted` bytes or its end have
 * arrived; the pieces are returned to be passed on, and `body` goes on after them.
 * @throws as {@link readBody}
 */
export async function readHead(body: AsyncIterator<Uint8Array>, wanted: number): Promise<BodyHead> {
  const pieces: Uint8Array[] = [];
  let total = 0;
  while (total < wanted) {
    const next = await body.next();
    if (next.done) break;
    pieces.push(next.value);
    total += next.value.length;
  }
  const joined = pieces.length === 1 ? pieces[0] : Buffer.concat(pieces, total);
  return { pieces, bytes: joined.subarray(0, Math.min(wanted, total)) };
}

/**
 * The whole body in one new Uint8Array (its byteOffset is 0, so any element view fits).
 * `expectedBytes` (from Content-Length) preallocates; without it pieces are joined at the end.
 * @throws as {@link readBody}; ParleError INVALID_ARGUMENT when the body is not `expectedBytes` long
 */
export async function readWholeBody(
  body: Readable,
  work: RequestWork,
  maxBody: number,
  expectedBytes: number | undefined,
  floor?: BodyFloor,
): Promise<Uint8Array> {
  if (expectedBytes !== undefined) {
    const out = new Uint8Array(expectedBytes);
    let filled = 0;
    for await (const piece of readBody(body, work, maxBody, floor)) {
      if (filled + piece.length > expectedBytes) {
        throw new ParleError(ErrorCodes.INVALID_ARGUMENT, `the body is longer than its Content-Length of ${expectedBytes}`);
      }
      out.set(piece, filled);
      filled += piece.length;
    }
    if (filled !== expectedBytes) {
      throw new ParleError(ErrorCodes.INVALID_ARGUMENT, `the body ended after ${filled} of ${expectedBytes} bytes`);
    }
    return out;
  }
  const pieces: Uint8Array[] = [];
  let total = 0;
  for await (const piece of readBody(body, work, maxBody, floor)) {
    pieces.push(piece);
    total += piece.length;
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const piece of pieces) {
    out.set(piece, at);
    at += piece.length;
  }
  return out;
}
