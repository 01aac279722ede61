// Timing with tinybench: each figure is the latency of one call over repetitions (min / median /
// max in ms), after a warm-up call, plus rates derived from the bytes the call moves.
import { Bench } from 'tinybench';

/**
 * The repetition policy of a run. `quick` keeps the whole --quick run near 90 s on 2 cores; calls
 * that take longer than `slowMs` are repeated fewer times (their spread is small next to their
 * length), and not warmed up when they are huge (the first call of a 128 MiB codec pass is not
 * JIT-bound).
 */
export function repetitionPolicy(quick) {
  return {
    iterations: quick ? 3 : 5,
    timeMs: quick ? 60 : 250,
    slowIterations: quick ? 2 : 3,
    slowMs: quick ? 400 : 1000,
  };
}

/**
 * Runs `fn` (sync or async) repeatedly and returns { min, median, max, samples } in ms.
 * `beforeEach` runs outside the timed region (resetting inputs that a call consumes).
 * `expectMs`: a previous estimate of one call; slow calls get the policy's fewer repetitions.
 */
export async function measure(fn, { policy, beforeEach, afterEach, expectMs = 0, warmup = true } = {}) {
  const slow = expectMs >= policy.slowMs;
  const bench = new Bench({
    time: slow ? 0 : policy.timeMs,
    iterations: slow ? policy.slowIterations : policy.iterations,
    warmup: warmup && expectMs < 4 * policy.slowMs,
    warmupIterations: 1,
    warmupTime: 0,
    throws: true,
  });
  const hooks = {};
  if (beforeEach) hooks.beforeEach = beforeEach;
  if (afterEach) hooks.afterEach = afterEach;
  bench.add('case', fn, hooks);
  await bench.run();
  const task = bench.tasks[0];
  const r = task.result;
  if (r.state === 'errored' || r.error) throw r.error;
  return { min: r.latency.min, median: r.latency.p50, max: r.latency.max, samples: r.latency.samplesCount ?? task.runs };
}

/** One call's wall time in ms (to decide the repetition policy of a big case). */
export async function timeOnce(fn) {
  const t0 = performance.now();
  const out = await fn();
  return { ms: performance.now() - t0, out };
}

/** Rates (GB/s of `bytes`) from latency stats: min rate from the max latency, and so on. */
export function ratesOf(ms, bytes, scale = 1e9) {
  const rate = (t) => (t > 0 ? bytes / (t / 1000) / scale : null);
  return { min: rate(ms.max), median: rate(ms.median), max: rate(ms.min) };
}
