/**
 * HTTP errors of the service: every error answers with one JSON shape,
 * `{ "error": { "code": "...", "message": "..." } }`, where `code` is a {@link ParleError} code
 * (ts/errors.ts) or one of the few HTTP-level codes below. Clients match on `code`, never on
 * the message. The table of statuses is {@link statusOf}.
 */
import { ErrorCodes, ParleError, type ErrorCode } from '../errors.js';

/** Codes for what only HTTP can get wrong; everything else carries a ParleError code. */
export const ServiceErrorCodes = {
  /** POST /v1/compress without a Content-Length (the element count goes in the header up front). 411. */
  LENGTH_REQUIRED: 'LENGTH_REQUIRED',
  /** A Content-Type other than application/octet-stream or application/x-parle. 415. */
  UNSUPPORTED_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  /** No such route. 404. */
  NOT_FOUND: 'NOT_FOUND',
  /** The request took longer than the per-request timeout (option timeoutMs). 503. */
  TIMEOUT: 'TIMEOUT',
  /**
   * The work queued ahead would take longer than the bound (option maxWaitMs) at the measured
   * rate: the request is shed before its body is read. 503 with Retry-After (seconds until the
   * queue should be under the bound).
   */
  OVERLOADED: 'OVERLOADED',
  /**
   * The body arrived slower than the floor (option minBodyRate, after bodyGraceMs of waiting for
   * it): a slow or stalled client, or a Content-Length longer than the bytes sent. 408.
   */
  SLOW_BODY: 'SLOW_BODY',
  /**
   * The client read the response slower than the floor (option minBodyRate, after bodyGraceMs of
   * the response waiting for it): a client that stopped reading. The response is cut (its status
   * went out already) and the request's turn given back. 408 in the metrics.
   */
  SLOW_READ: 'SLOW_READ',
  /** The service is shutting down (SIGTERM) and takes no new requests. 503. */
  SHUTTING_DOWN: 'SHUTTING_DOWN',
  /** A bug: anything that is not a ParleError. 500; the message is generic and the error is logged. */
  INTERNAL: 'INTERNAL',
} as const;

/** A code of {@link ServiceErrorCodes}. */
export type ServiceErrorCode = (typeof ServiceErrorCodes)[keyof typeof ServiceErrorCodes];

/** An error the service answers with an HTTP-level code and status. */
export class ServiceError extends Error {
  override readonly name = 'ServiceError';
  constructor(
    readonly code: ServiceErrorCode,
    readonly status: number,
    message: string,
    /** Seconds for the Retry-After header of a 503 (default {@link RETRY_AFTER_SECONDS}). */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }
}

/**
 * The JSON body of every error response. `parameter`, on 400s about a query parameter (an
 * unknown, repeated or bad one, a missing or unknown `type`), names it as the request wrote it
 * (percent-decoded): `{ "error": { "code": "INVALID_OPTION", "message": "unknown query
 * parameter 'levle' (did you mean 'level'?); ...", "parameter": "levle" } }`.
 */
export interface ErrorBody {
  error: { code: ErrorCode | ServiceErrorCode; message: string; parameter?: string };
}

/** Seconds a client should wait before retrying a 503 (the Retry-After header). */
export const RETRY_AFTER_SECONDS = 1;

/** HTTP status of each ParleError code. */
const PARLE_STATUS: Record<ErrorCode, number> = {
  // Bad input: the request, not the server, is wrong.
  INVALID_ARGUMENT: 400,
  INVALID_OPTION: 400,
  DETACHED_BUFFER: 400,
  UNSUPPORTED_TYPE: 400,
  LENGTH_MISMATCH: 400,
  UNALIGNED_LENGTH: 400,
  NOT_PARLE: 400,
  UNSUPPORTED_VERSION: 400,
  TRUNCATED: 400,
  CORRUPT: 400,
  CHECKSUM_MISMATCH: 400,
  // Over a limit: the body (413 --max-body), a container's claimed size, the 4 GiB wasm memory.
  TOO_LARGE: 413,
  LIMIT_EXCEEDED: 413,
  // Transient: the same request may succeed later.
  QUEUE_FULL: 503,
  WORKER_FAILED: 503,
  DESTROYED: 503,
  ABORTED: 503,
  DEVICE_LOST: 503,
  OUT_OF_MEMORY: 503,
  PATH_UNAVAILABLE: 503,
  IO_ERROR: 500,
  GPU_ERROR: 500,
};

/** The status, code, message and (for a query parameter's error) parameter an error answers with. */
export function describeError(error: unknown): {
  status: number;
  code: ErrorCode | ServiceErrorCode;
  message: string;
  parameter?: string;
  retryAfterSeconds?: number;
} {
  if (error instanceof ServiceError) {
    return {
      status: error.status,
      code: error.code,
      message: error.message,
      ...(error.retryAfterSeconds !== undefined ? { retryAfterSeconds: error.retryAfterSeconds } : {}),
    };
  }
  if (error instanceof ParleError) {
    const parameter = (error as { parameter?: unknown }).parameter;
    return {
      status: PARLE_STATUS[error.code] ?? 500,
      code: error.code,
      message: error.message,
      ...(typeof parameter === 'string' ? { parameter } : {}),
    };
  }
  return { status: 500, code: ServiceErrorCodes.INTERNAL, message: 'internal error' };
}

/** The HTTP status of an error (see the table in the README). */
export function statusOf(error: unknown): number {
  return describeError(error).status;
}

/** 413 for a body over the limit. */
export function bodyTooLarge(limit: number, seen: number | string): ParleError {
  return new ParleError(ErrorCodes.TOO_LARGE, `the body has ${seen} bytes, more than the limit (maxBody) of ${limit}`);
}
