/** Bounded waits for the tests: an event that never comes fails with its name, not a test timeout. */

/**
 * `p`, or a rejection "`what` within `ms` ms" when it has not settled by then (the timer is
 * cleared either way). For waits on an event, not for pacing: `ms` is a generous upper bound.
 */
export async function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([p, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
