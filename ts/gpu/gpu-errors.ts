/**
 * GPU errors that WebGPU reports instead of throwing. A buffer the device cannot allocate, and
 * every command that uses it, fail with an error, not an exception, and a command buffer that
 * fails validation does not run at all: without a check an op resolves with whatever its outputs
 * held (on SwiftShader a 256 MiB GPU rleEncode whose scratch buffer ran out of memory returned the
 * runs of the call before it). Two sources, checked before an op resolves (GpuContext.checkErrors):
 *
 *   - {@link GpuErrorLog}: the device's `uncapturederror` events, counted. An op notes the count
 *     before its WebGPU calls and looks for errors logged since once its work is done. Free on the
 *     hot path (a compare). Dawn's Node binding dispatches the event inside the failing call; a
 *     browser's comes later, from the GPU process (not shown to arrive before an op's awaits end:
 *     there the pool's scopes are what the browser test, test/browser.test.ts, exercises).
 *   - {@link createBufferChecked}: buffers the pool makes, in error scopes of parle's own, so that
 *     an allocation that fails is known even inside an application's error scope (which would
 *     take the commands' errors from the log). Scopes are not used on every call: with every
 *     submission and transfer in scopes, awaited, a 4 KiB scan of device data took 0.236 ms
 *     against 0.148, a 64 MiB one 0.301 against 0.238, a 16 KiB download 0.100 against 0.056 on
 *     an H100 host (gpu-error-checks-nvidia-h100-scopes.log in git history, both builds in one
 *     process); the count costs nothing measurable there (0.92-1.05x the build without checks:
 *     gpu-error-checks-nvidia-h100.log, -2.log), and a buffer is made only when the pool has
 *     none to hand out.
 */

/** A GPU error as parle reports it. */
export interface CaughtGpuError {
  /** True for an out-of-memory error; false for a validation or internal error. */
  outOfMemory: boolean;
  message: string;
}

/** Errors kept for since() (older ones are dropped: an op that failed needs one). */
const KEPT = 16;

/**
 * `e` as parle reports it: whether it is an out-of-memory error (where no scope's filter says so,
 * by the class's name: the class is a global only where WebGPU is), and the first line of its
 * message (Dawn's go on with the call chain).
 */
const caughtOf = (e: GPUError, outOfMemory = e.constructor?.name === 'GPUOutOfMemoryError'): CaughtGpuError => ({
  outOfMemory,
  message: e.message.split('\n')[0].trim(),
});

/**
 * The device's uncaptured errors, counted, the last KEPT kept. Errors inside an application's
 * error scope are the application's and never reach it. The events are not prevented: WebGPU's
 * default report (a console message) still shows errors no op of parle's was waiting for.
 */
export class GpuErrorLog {
  #count = 0;
  readonly #recent: { seq: number; error: CaughtGpuError }[] = [];

  constructor(device: GPUDevice) {
    device.addEventListener('uncapturederror', (event) => {
      this.#recent.push({ seq: this.#count++, error: caughtOf((event as GPUUncapturedErrorEvent).error) });
      if (this.#recent.length > KEPT) this.#recent.shift();
    });
  }

  /** Errors logged so far: a mark for {@link since}. */
  get count(): number {
    return this.#count;
  }

  /** The errors logged since `mark` (at most the last KEPT). */
  since(mark: number): CaughtGpuError[] {
    return this.#recent.filter((r) => r.seq >= mark).map((r) => r.error);
  }
}

/**
 * Creates a buffer inside out-of-memory, validation and internal error scopes of its own: the
 * buffer (invalid if its creation failed: every command that uses it then fails validation) and a
 * promise of what the scopes caught (the first error, out of memory first; null: none, or the
 * device is lost). Scopes are a stack per device; nothing else runs between the pushes and pops.
 */
export function createBufferChecked(device: GPUDevice, descriptor: GPUBufferDescriptor): [GPUBuffer, Promise<CaughtGpuError | null>] {
  device.pushErrorScope('out-of-memory');
  device.pushErrorScope('validation');
  device.pushErrorScope('internal');
  let buffer: GPUBuffer;
  let caught: Promise<CaughtGpuError | null>;
  try {
    buffer = device.createBuffer(descriptor);
  } finally {
    // popped whether or not createBuffer threw: the scopes are a stack
    const internal = device.popErrorScope();
    const validation = device.popErrorScope();
    const oom = device.popErrorScope();
    caught = Promise.all([oom, validation, internal]).then(
      ([o, v, i]) => {
        if (o) return caughtOf(o, true); // out of memory first
        const e = v ?? i;
        return e ? caughtOf(e, false) : null;
      },
      () => null, // the device is lost: guard() reports that
    );
  }
  return [buffer, caught];
}
