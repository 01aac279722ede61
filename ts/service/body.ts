/**
 * Request bodies as streams of byte pieces: counted (metrics, the --max-body limit) and
 * abortable (per-request timeout, client gone) without destroying the request, so the service
 * can still answer 413 or 503 on the same socket.
 */
import type { Readable } from 'node:stream';
import { abortError } from '../cpu/pool.js';
import { ErrorCodes, ParleError } from '../errors.js';
import { bodyTooLarge, ServiceError } from './errors.js';

/** What one request has read and written so far, and its abort signal. */
export interface RequestWork {
  /** Aborts on the per-request timeout (reason: ServiceError TIMEOUT) or when the client goes. */
  readonly controller: AbortController;
  /** Body bytes read. */
  bytesIn: number;
  /** Body bytes written. */
  bytesOut: number;
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
 * The pieces of `body` as they arrive, counted into `work.bytesIn`.
 *
 * Never destroys `body` (a destroyed IncomingMessage takes its socket along, and then no
 * error response can be sent); the error response carries `Connection: close` instead.
 * @throws ParleError TOO_LARGE once more than `maxBody` bytes arrived; the abort's error
 *   (ServiceError TIMEOUT, or ParleError ABORTED) when the request's signal aborts while waiting
 */
export async function* readBody(body: Readable, work: RequestWork, maxBody: number): AsyncGenerator<Uint8Array> {
  const signal = work.controller.signal;
  const pieces = body[Symbol.asyncIterator]() as AsyncIterator<Uint8Array>;
  for (;;) {
    const next = pieces.next();
    next.catch(() => undefined); // a read that loses to an abort may still fail later
    const { value, done } = await unlessAborted(next, signal);
    if (done) return;
    work.bytesIn += value.length;
    if (work.bytesIn > maxBody) throw bodyTooLarge(maxBody, `at least ${work.bytesIn}`);
    yield value;
  }
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
): Promise<Uint8Array> {
  if (expectedBytes !== undefined) {
    const out = new Uint8Array(expectedBytes);
    let filled = 0;
    for await (const piece of readBody(body, work, maxBody)) {
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
  for await (const piece of readBody(body, work, maxBody)) {
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
