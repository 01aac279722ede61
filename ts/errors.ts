/**
 * The one table of error codes. Codes are stable: tests and callers match on `code`, never on
 * the message. The CLI maps {@link ParleError} to exit status 1 with one line; everything else
 * is a bug.
 */
export const ErrorCodes = {
  /** An argument has the wrong type or shape (message names the argument). */
  INVALID_ARGUMENT: 'INVALID_ARGUMENT',
  /** An option is out of range, NaN, negative or of the wrong type (message names the option). */
  INVALID_OPTION: 'INVALID_OPTION',
  /** The input's ArrayBuffer was detached (transferred). */
  DETACHED_BUFFER: 'DETACHED_BUFFER',
  /** The element type is not one this operation supports. */
  UNSUPPORTED_TYPE: 'UNSUPPORTED_TYPE',
  /** Two arrays that must have equal lengths do not (runs' values/lengths, sort keys/values). */
  LENGTH_MISMATCH: 'LENGTH_MISMATCH',
  /** A byte length is not a whole number of elements. */
  UNALIGNED_LENGTH: 'UNALIGNED_LENGTH',
  /** The data is too large for the path (e.g. beyond the wasm32 address space) or for a limit. */
  TOO_LARGE: 'TOO_LARGE',
  /** Not a .parle container (wrong magic), or empty. */
  NOT_PARLE: 'NOT_PARLE',
  /** A .parle container of a version or feature this build does not read. */
  UNSUPPORTED_VERSION: 'UNSUPPORTED_VERSION',
  /** The container ends before the header, chunk table or a payload does. */
  TRUNCATED: 'TRUNCATED',
  /** The container is structurally invalid (impossible counts, bad run lengths, bad varints). */
  CORRUPT: 'CORRUPT',
  /** A payload or decoded chunk does not match its stored checksum. */
  CHECKSUM_MISMATCH: 'CHECKSUM_MISMATCH',
  /** The container claims more elements than a configured limit allows. */
  LIMIT_EXCEEDED: 'LIMIT_EXCEEDED',
  /** The requested path (e.g. `gpu`) is not available on this engine. */
  PATH_UNAVAILABLE: 'PATH_UNAVAILABLE',
  /** The GPU device was lost while the operation ran. */
  DEVICE_LOST: 'DEVICE_LOST',
  /**
   * The GPU could not allocate memory an operation needed (WebGPU reported out-of-memory); the
   * operation's results were not used. Destroy DeviceArrays no longer needed, or use the CPU
   * path; `auto` runs such a call again on the CPU.
   */
  OUT_OF_MEMORY: 'OUT_OF_MEMORY',
  /**
   * WebGPU rejected commands parle recorded (a validation or internal error of the device, not
   * of the input); the operation's results were not used. A bug or a faulty driver: report it.
   */
  GPU_ERROR: 'GPU_ERROR',
  /** The engine was destroyed. */
  DESTROYED: 'DESTROYED',
  /** The operation was aborted through its AbortSignal. */
  ABORTED: 'ABORTED',
  /** The engine's queue of pending operations is full (option maxQueue); retry later. */
  QUEUE_FULL: 'QUEUE_FULL',
  /** A worker thread crashed or was terminated while it ran this operation; the pool replaced it. */
  WORKER_FAILED: 'WORKER_FAILED',
  /** Reading or writing a file failed. */
  IO_ERROR: 'IO_ERROR',
} as const;

/** A stable error code from {@link ErrorCodes}. */
export type ErrorCode = (typeof ErrorCodes)[keyof typeof ErrorCodes];

/** The one error type parle throws for bad input, bad options and unavailable resources. */
export class ParleError extends Error {
  override readonly name = 'ParleError';
  /** Stable code from {@link ErrorCodes}. */
  readonly code: ErrorCode;

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

/** True when `e` is a {@link ParleError}, optionally of the given code. */
export function isParleError(e: unknown, code?: ErrorCode): e is ParleError {
  return e instanceof ParleError && (code === undefined || e.code === code);
}
