/**
 * The one table of error codes. Codes are stable: tests and callers match on `code`, never on
 * the message. The CLI maps {@link ParleError} to exit status 1 with one line; everything else
 * is a bug.
 */
export const ErrorCodes = {
  /** An argument has the wrong type or shape (message names the argument). */
  INVALID_ARGUMENT: 'INVALID_ARGUMENT',
  /**
   * An option is unknown (a misspelt key: "did you mean"), unsupported, out of range, NaN,
   * negative or of the wrong type. The message starts with `options.<path>` and
   * {@link ParleError.option} holds the path (`'level'`, `'errorBound.rel'`).
   */
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

/** `options.errorBound.rel ...` -> `errorBound.rel`. */
const OPTION_PATH = /^options\.([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*)/;

/** The one error type parle throws for bad input, bad options and unavailable resources. */
export class ParleError extends Error {
  override readonly name = 'ParleError';
  /** Stable code from {@link ErrorCodes}. */
  readonly code: ErrorCode;
  /**
   * For INVALID_OPTION about an option: the option's path as the caller wrote it, e.g. `'level'`,
   * `'errorBound.rel'`, `'tuning.scanWorkgroupSize'` (the message then starts with
   * `options.<path>`, so a front end can name its own flag or parameter instead). Undefined for
   * other codes and for positional arguments (`type`, `length`).
   */
  readonly option?: string;

  /**
   * @param options.option the option's path (see {@link option}); for INVALID_OPTION it defaults
   *   to the path of a message that starts with `options.<path>`.
   */
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown; option?: string }) {
    super(message, options);
    this.code = code;
    this.option = options?.option ?? (code === ErrorCodes.INVALID_OPTION ? OPTION_PATH.exec(message)?.[1] : undefined);
  }
}

/** True when `e` is a {@link ParleError}, optionally of the given code. */
export function isParleError(e: unknown, code?: ErrorCode): e is ParleError {
  return e instanceof ParleError && (code === undefined || e.code === code);
}

/**
 * Rejects keys of `options` that are not in `allowed` (keys whose value is undefined included:
 * a misspelt key is usually set from a variable), so that a typo such as `{ levle: 9 }` fails
 * instead of being ignored. `path` is where `options` sits in the caller's options ('' for the
 * top level, `'errorBound'` for a nested object).
 *
 *     checkKeys({ levle: 9 }, ['level', 'codec'], 'compress')
 *       -> INVALID_OPTION "options.levle is not an option of compress (did you mean level?)", option 'levle'
 *     checkKeys({ rel: 0.01 }, ['abs'], 'compress', 'errorBound')
 *       -> INVALID_OPTION "options.errorBound.rel is not supported: errorBound takes { abs }", option 'errorBound.rel'
 *
 * @internal
 * @throws ParleError INVALID_OPTION with `option` set to the key's path
 */
export function checkKeys(options: object, allowed: readonly string[], call: string, path = ''): void {
  for (const key of Object.keys(options)) {
    if (allowed.includes(key)) continue;
    const near = closestName(key, allowed);
    const hint = near === undefined ? '' : ` (did you mean ${near}?)`;
    const option = path === '' ? key : `${path}.${key}`;
    const message =
      path === ''
        ? `options.${option} is not an option of ${call}${hint === '' ? `; it takes ${allowed.join(', ')}` : hint}`
        : `options.${option} is not supported: ${path} takes { ${allowed.join(', ')} }${hint}`;
    throw new ParleError(ErrorCodes.INVALID_OPTION, message, { option });
  }
}

/**
 * The name in `known` that `name` was probably meant to be: equal but for case, or within one
 * edit (two for names longer than 4 characters; an edit is an insertion, deletion, substitution
 * or swap of neighbours); undefined when none is that close.
 * @internal
 */
export function closestName(name: string, known: readonly string[]): string | undefined {
  const lower = name.toLowerCase();
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const k of known) {
    const d = editDistance(lower, k.toLowerCase());
    if (d < bestDistance && d <= (k.length <= 4 ? 1 : 2)) [best, bestDistance] = [k, d];
  }
  return best;
}

/** Optimal string alignment distance (Levenshtein plus swaps of neighbours). */
function editDistance(a: string, b: string): number {
  let before: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      let d = Math.min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, before[j - 2] + 1);
      row.push(d);
    }
    [before, previous] = [previous, row];
  }
  return previous[b.length];
}
