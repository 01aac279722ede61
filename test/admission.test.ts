// The service's admission gate (ts/service/admission.ts) on its own, with an injected clock:
// admission with a free turn, shedding with the Retry-After the estimate gives, the waiting
// count's backstop, first-in first-out turns, the rate measured over saturated intervals, the
// correction learnt from actual waits, and aborts while waiting. No sleeps: the clock moves when
// a test says so.
import { describe, expect, it } from 'vitest';
import { ErrorCodes, ParleError } from '../ts/errors.js';
import { AdmissionGate, MAX_REFUSAL_DELAY_MS, RATE_SAMPLE_MS, type Job } from '../ts/service/admission.js';
import { ServiceError, ServiceErrorCodes } from '../ts/service/errors.js';

/** A gate over a clock the test moves (`clock.t`, ms). */
function gateWith(
  options: { maxActive?: number; maxWaiting?: number; maxWaitMs?: number; initialBytesPerS?: number; refusalsPerS?: number } = {},
) {
  const clock = { t: 0 };
  const gate = new AdmissionGate({
    maxActive: options.maxActive ?? 1,
    maxWaiting: options.maxWaiting ?? 16,
    maxWaitMs: options.maxWaitMs ?? Infinity,
    initialBytesPerS: options.initialBytesPerS ?? 1e6,
    refusalsPerS: options.refusalsPerS,
    now: () => clock.t,
  });
  return { gate, clock };
}

/** A job of `bytes` whose progress the test sets (`job.read`). */
function job(bytes: number | undefined, kind?: string): Job & { read: number } {
  const j = { bytes, read: 0, done: () => j.read, ...(kind !== undefined ? { kind } : {}) };
  return j;
}

describe('the admission gate', () => {
  it('admits a request that finds a free turn, whatever the estimate says', async () => {
    const { gate } = gateWith({ maxWaitMs: 0 });
    const release = await gate.acquire(undefined, job(1e12));
    expect(gate.active).toBe(1);
    release();
    release(); // a second call is a no-op
    expect(gate.active).toBe(0);
  });

  it('sheds a newcomer at once with OVERLOADED when the work ahead and its own pass maxWaitMs, Retry-After from the excess', async () => {
    const { gate } = gateWith({ maxWaitMs: 1000, initialBytesPerS: 1e6 });
    await gate.acquire(undefined, job(10e6)); // 10 s of work ahead at 1 MB/s
    let shed = 0;
    gate.on('shed', () => shed++);
    const refused = await gate.acquire(undefined, job(1e6)).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ServiceError);
    const e = refused as ServiceError;
    expect({ code: e.code, status: e.status }).toEqual({ code: ServiceErrorCodes.OVERLOADED, status: 503 });
    // expected wait 10 s + 1 s of its own; the bound 1 s: retry after 10 s
    expect(e.retryAfterSeconds).toBe(10);
    expect(gate.expectedWaitMs(1e6)).toBeCloseTo(11000, 6);
    expect(shed).toBe(1);
    expect(gate.waiting).toBe(0);
  });

  it('reserve refuses at once as acquire would; a reservation counts as work ahead, and its acquire is never shed', async () => {
    const { gate } = gateWith({ maxWaitMs: 1000, maxWaiting: 2, initialBytesPerS: 1e6 });
    const first = gate.reserve(job(0.5e6)); // a free turn: reserved whatever the estimate
    expect(gate.expectedWaitMs()).toBeCloseTo(500, 6); // counted as work ahead
    let shed = 0;
    gate.on('shed', () => shed++);
    expect(() => gate.reserve(job(2e6))).toThrow(expect.objectContaining({ code: ServiceErrorCodes.OVERLOADED }));
    expect(shed).toBe(1);
    const second = gate.reserve(job(0.2e6)); // 0.7 s expected: within the bound
    const held = await first.acquire();
    expect(gate.active).toBe(1);
    // the clock runs and the estimate grows past the bound: the reservation still queues, not shed
    const third = gate.reserve(job(0.1e6));
    expect(() => gate.reserve(job(0.1e6))).toThrow(expect.objectContaining({ code: ErrorCodes.QUEUE_FULL }));
    const waiting = second.acquire();
    expect(gate.waiting).toBe(1);
    await expect(second.acquire()).rejects.toThrow(/once/);
    third.cancel();
    third.cancel(); // a second call is a no-op
    held();
    (await waiting)();
    await gate.whenIdle();
    expect(shed).toBe(1);
  });

  it('queues a newcomer whose expected wait is within the bound, and turns go first in, first out', async () => {
    const { gate } = gateWith({ maxWaitMs: 5000, initialBytesPerS: 1e6 });
    const first = await gate.acquire(undefined, job(1e6));
    const order: string[] = [];
    const b = gate.acquire(undefined, job(1e6)).then((release) => (order.push('b'), release));
    const c = gate.acquire(undefined, job(1e6)).then((release) => (order.push('c'), release));
    expect(gate.waiting).toBe(2);
    first();
    (await b)();
    (await c)();
    expect(order).toEqual(['b', 'c']);
    expect(gate.active).toBe(0);
    await gate.whenIdle();
  });

  it('refuses with QUEUE_FULL once maxWaiting requests wait', async () => {
    const { gate } = gateWith({ maxWaiting: 1 });
    await gate.acquire(undefined, job(1));
    void gate.acquire(undefined, job(1));
    const refused = await gate.acquire(undefined, job(1)).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ParleError);
    expect((refused as ParleError).code).toBe(ErrorCodes.QUEUE_FULL);
  });

  it('measures the rate over a saturated interval of at least RATE_SAMPLE_MS, and a kind its own rate', async () => {
    const { gate, clock } = gateWith({ initialBytesPerS: 1e6 });
    const working = job(100e6, 'compress');
    const release = await gate.acquire(undefined, working);
    expect(gate.bytesPerS).toEqual({ value: 1e6, measured: false });
    clock.t = RATE_SAMPLE_MS / 2;
    working.read = 5e6;
    expect(gate.bytesPerS.measured).toBe(false); // too short to tell
    clock.t = 500;
    working.read = 10e6;
    // 10 MB over 500 ms of every turn taken: 20 MB/s
    expect(gate.bytesPerS).toEqual({ value: 20e6, measured: true });
    // the kind's own rate prices its newcomers; an unmeasured kind the lower of that and the guess
    expect(gate.expectedWaitMs(0)).toBeCloseTo(((100e6 - 10e6) / 20e6) * 1000, 6);
    release();
  });

  it('learns the ratio of actual to predicted waits and scales its estimates by it', async () => {
    const { gate, clock } = gateWith({ initialBytesPerS: 1e6 });
    const release = await gate.acquire(undefined, job(1e6)); // predicted: 1 s ahead
    const waiting = gate.acquire(undefined, job(1e6));
    clock.t = 2000; // it took twice as long
    release();
    (await waiting)();
    // a running mean of weight 0.3 from 1: 0.7 + 0.3 x 2
    expect(gate.waitCorrection).toBeCloseTo(1.3, 9);
  });

  it('a waiter whose signal aborts leaves the queue with ABORTED; the next one keeps its place', async () => {
    const { gate } = gateWith();
    const release = await gate.acquire(undefined, job(1));
    const controller = new AbortController();
    const aborted = gate.acquire(controller.signal, job(1)).catch((e: unknown) => e);
    const next = gate.acquire(undefined, job(1));
    expect(gate.waiting).toBe(2);
    controller.abort();
    const e = await aborted;
    expect(e).toBeInstanceOf(ParleError);
    expect((e as ParleError).code).toBe(ErrorCodes.ABORTED);
    expect(gate.waiting).toBe(1);
    release();
    (await next)();
    expect(gate.active).toBe(0);
    // an already aborted signal is refused before anything
    const already = new AbortController();
    already.abort();
    await expect(gate.acquire(already.signal, job(1))).rejects.toMatchObject({ code: ErrorCodes.ABORTED });
  });

  it('a job without a size counts as the mean of the bodies it has seen', async () => {
    const { gate } = gateWith({ initialBytesPerS: 1e6 });
    const sized = job(4e6);
    const release = await gate.acquire(undefined, sized);
    sized.read = 4e6;
    release();
    // the mean starts at 1 MiB and moves a tenth of the way to each finished job's bytes
    const mean = (1 << 20) * 0.9 + 4e6 * 0.1;
    const r = await gate.acquire(undefined, job(undefined));
    expect(gate.expectedWaitMs(0)).toBeCloseTo((mean / 1e6) * 1000, 6);
    r();
  });

  it('paces refusals: a burst of 64 answered at once, then one each 1/refusalsPerS, held at most MAX_REFUSAL_DELAY_MS; the pace recovers', () => {
    const { gate, clock } = gateWith({ refusalsPerS: 100 }); // 10 ms apart
    const holds = Array.from({ length: 64 }, () => gate.paceRefusal());
    expect(holds.every((ms) => ms === 0)).toBe(true);
    expect(gate.paceRefusal()).toBe(10);
    expect(gate.paceRefusal()).toBe(20);
    clock.t = 15; // the clock moves: the next turn is 30 ms from the start
    expect(gate.paceRefusal()).toBe(15);
    const later = Array.from({ length: 200 }, () => gate.paceRefusal());
    expect(Math.max(...later)).toBe(MAX_REFUSAL_DELAY_MS);
    expect(later.at(-1)).toBe(MAX_REFUSAL_DELAY_MS);
    clock.t = 60_000; // a quiet minute: a new burst answered at once
    expect(Array.from({ length: 64 }, () => gate.paceRefusal()).every((ms) => ms === 0)).toBe(true);
    expect(gate.paceRefusal()).toBe(10);
    // without refusalsPerS, never held
    const free = gateWith().gate;
    expect(Array.from({ length: 1000 }, () => free.paceRefusal()).every((ms) => ms === 0)).toBe(true);
  });
});
