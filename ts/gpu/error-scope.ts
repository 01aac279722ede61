/**
 * GPU errors that WebGPU reports instead of throwing. A buffer the device cannot allocate, and
 * every command that uses it, fail with an error event, not an exception; a command buffer that
 * fails validation does not run at all. Without a check an op resolves with whatever its outputs
 * held: on SwiftShader a 256 MiB GPU rleEncode whose scratch buffer ran out of memory returned
 * the runs of the call before it. Error scopes (WebGPU, "Error Scopes") catch the errors of the
 * calls made between a push and its pop; these helpers wrap parle's synchronous sections of
 * WebGPU calls in them, and the context checks what they caught before an op resolves
 * (GpuContext.checkErrors).
 */

/** What an error scope caught. */
export interface CaughtGpuError {
  /** True for an out-of-memory error; false for a validation or internal error. */
  outOfMemory: boolean;
  message: string;
}

/** The first error caught, out of memory first; null when none (or the scopes could not be read: a lost device). */
export type Caught = Promise<CaughtGpuError | null>;

/**
 * Runs `fn`, synchronous WebGPU calls on `device`, inside out-of-memory, validation and internal
 * error scopes. Scopes are a stack per device; `fn` must not await, so that no other op's calls
 * land in these scopes (JavaScript runs nothing else between the push and the pop).
 * @returns `fn`'s result and what the scopes caught. If `fn` throws, the scopes are popped and
 *   the exception propagates (the op fails with it; what the scopes caught is dropped).
 */
export function scoped<T>(device: GPUDevice, fn: () => T): [T, Caught] {
  device.pushErrorScope('out-of-memory');
  device.pushErrorScope('validation');
  device.pushErrorScope('internal');
  let result: T;
  try {
    result = fn();
  } catch (e) {
    void popScopes(device);
    throw e;
  }
  return [result, popScopes(device)];
}

/** Pops the three scopes of {@link scoped} (innermost first) and resolves to what they caught. */
function popScopes(device: GPUDevice): Caught {
  const internal = device.popErrorScope();
  const validation = device.popErrorScope();
  const oom = device.popErrorScope();
  return Promise.all([oom, validation, internal]).then(
    ([o, v, i]): CaughtGpuError | null => {
      if (o) return { outOfMemory: true, message: o.message };
      const e = v ?? i;
      return e ? { outOfMemory: false, message: e.message } : null;
    },
    () => null, // the device is lost: guard() reports that
  );
}

/**
 * Creates a buffer inside error scopes (see {@link scoped}): the buffer (invalid if its creation
 * failed: every command that uses it then fails validation) and what the scopes caught.
 */
export function createBufferChecked(device: GPUDevice, descriptor: GPUBufferDescriptor): [GPUBuffer, Caught] {
  return scoped(device, () => device.createBuffer(descriptor));
}
