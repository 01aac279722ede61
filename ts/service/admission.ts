/**
 * Admission of requests to the engine: at most `maxActive` requests work on the engine at once,
 * the others wait for a turn (FIFO), and a newcomer is refused at once, before its body is read,
 * when waiting would take too long:
 *
 *   - shed (503 OVERLOADED with Retry-After): the work queued ahead of it (the bytes still to
 *     code of the requests working and waiting) and its own, divided by the measured rate,
 *     passes `maxWaitMs`: it would not be done within that time;
 *   - QUEUE_FULL (503 with Retry-After): `maxWaiting` requests already wait (a count, a backstop).
 *
 * A request that finds a free turn is always admitted, whatever the estimate. The service checks
 * on arrival and holds a place ({@link AdmissionGate.reserve}, counted as waiting work) while
 * the body's first bytes come in, then takes its turn without a second check: a request is shed
 * only before its client sent anything, and a slow client holds a place, not a turn.
 *
 * Why shed instead of queueing: a queued request's client waits, and one that waits longer than
 * its own timeout has cost the service its whole body for nothing (issue 34: a third of 64
 * clients gave up after 10 s). A 503 sent before the body is read costs a few hundred bytes,
 * and the admitted requests finish within about `maxWaitMs` plus their own coding time.
 *
 * The rate is measured, not configured: the bytes the requests working on the engine read per
 * second (an exponentially weighted mean of samples of at least {@link RATE_SAMPLE_MS}), counted
 * only while every turn is taken, when the rate is the service's capacity rather than its load.
 * Before the first sample it is `initialBytesPerS` (cautious: a low guess sheds a little more
 * during the first half second, a high one would admit more than can finish in time).
 *
 * Each kind of work (the route) has its own rate, measured over the samples in which it read at
 * least 90 % of the bytes; a kind not measured yet uses the lower of the rate of all the work and
 * the initial guess. Without that, a
 * burst of decompress after a compress load was admitted at the compress rate, 3.5x too high.
 *
 * The bytes still to read undercount the work of a request whose body is in but whose last
 * chunks are still coding and sending (a decompress's output is larger than its body): the wait
 * ahead is therefore scaled by a correction learnt from the waits themselves, the mean ratio of
 * each admitted waiter's actual wait to the one predicted when it began to wait (within 0.5..4).
 * Without it, decompress on the 2-core VM waited 2.0 s on average under a 2 s bound and its p99
 * reached 5.4 s.
 *
 * Why the service needs a bound on concurrent work at all: the streaming compressor and
 * decompressor keep up to two batches of chunks (about 4 MiB each) in flight each, and every
 * chunk holds its blocks in the engine's wasm memory. A waiting request has not read its body
 * yet, so TCP holds the client back and costs the server about one socket buffer (~64 KiB). The
 * engine's own queue (Engine option maxQueue) counts only its whole-array ops (sort here);
 * streams go through this gate.
 */
import { EventEmitter } from 'node:events';
import { abortError } from '../cpu/pool.js';
import { ErrorCodes, ParleError } from '../errors.js';
import { ServiceError, ServiceErrorCodes } from './errors.js';

/** Refusals answered at once beyond the pace ({@link AdmissionGate.paceRefusal}): a burst's allowance. */
const REFUSAL_BURST = 64;
/** The longest a refusal's answer is held back (ms); past it, refusals are answered at this delay. */
export const MAX_REFUSAL_DELAY_MS = 1000;

/** Milliseconds of saturated service one rate sample spans at least. */
export const RATE_SAMPLE_MS = 250;
/** Weight of a new rate sample in the running mean (0..1). */
const RATE_WEIGHT = 0.3;

/** A request's work as the gate sees it: bytes in all (its body), and how many it has read. */
export interface Job {
  /** Body bytes in all (Content-Length); undefined when unknown (a chunked body). */
  readonly bytes: number | undefined;
  /** Body bytes read so far. */
  readonly done: () => number;
  /**
   * What kind of work it is (e.g. the route): each kind has its own measured rate, as a byte of
   * a container to decompress costs more than a byte of elements to compress. Default: ''.
   */
  readonly kind?: string;
}

/** A place held by {@link AdmissionGate.reserve}: take the turn, or give the place up (each once). */
export interface Reservation {
  /**
   * Takes a turn, waiting for one if none is free; never shed. Resolves to the function that
   * gives it back (call it exactly once).
   * @throws ParleError ABORTED (when `signal` aborts while waiting)
   */
  acquire(signal?: AbortSignal): Promise<() => void>;
  /** Gives the place up (a request that failed before it took its turn). */
  cancel(): void;
}

interface Waiter {
  resolve: (release: () => void) => void;
  reject: (error: unknown) => void;
  signal: AbortSignal | undefined;
  onAbort: (() => void) | undefined;
  job: Job;
  /** When it began to wait (ms), and the wait the estimate predicted then (ms, before correction). */
  queuedAt: number;
  predictedMs: number;
}

/** Options of {@link AdmissionGate}. */
export interface GateOptions {
  /** Requests served at once (>= 1). */
  maxActive: number;
  /** Requests that may wait for a turn (>= 0). */
  maxWaiting: number;
  /** Milliseconds of queued work beyond which a newcomer is shed (Infinity: never). */
  maxWaitMs: number;
  /** Bytes per second assumed before the first measurement (> 0). */
  initialBytesPerS: number;
  /** Refusals answered per second before they are paced ({@link AdmissionGate.paceRefusal}); Infinity: never paced. */
  refusalsPerS?: number;
  /** The clock, in milliseconds (default `performance.now`; tests pass their own). */
  now?: () => number;
}

/**
 * Events: `admitted` (a request got a turn), `queued` (a request waits), `released` (a turn
 * was given back), `refused` (QUEUE_FULL), `shed` (OVERLOADED). Tests and metrics synchronise
 * on them.
 * @internal
 */
export class AdmissionGate extends EventEmitter {
  readonly maxActive: number;
  readonly maxWaiting: number;
  readonly maxWaitMs: number;
  private readonly activeJobs = new Set<Job>();
  private readonly waiters: Waiter[] = [];
  /** Requests that passed the check on arrival and wait for their body's first bytes ({@link reserve}). */
  private readonly reservedJobs = new Set<Job>();
  /** Bytes read by requests that have given their turn back, by kind. */
  private readonly finishedBytes = new Map<string, number>();
  private readonly initialRate: number;
  /** Measured bytes per second of each kind (see the module comment). */
  private readonly kindRates = new Map<string, number>();
  /** Measured bytes per second (or the initial guess). */
  private rate: number;
  private measured = false;
  /** Start of the current saturated interval: time (ms) and bytes read by then, by kind. */
  private mark: { at: number; bytes: Map<string, number> } | undefined;
  /** Mean size of the bodies seen, for requests without a Content-Length. */
  private meanBytes = 1 << 20;
  /** Actual over predicted waits, a running mean (see the module comment). */
  private correction = 1;
  private readonly now: () => number;
  /** Milliseconds between paced refusals (0: not paced). */
  private readonly refusalGapMs: number;
  /** When the last refusal paced is answered (ms). */
  private lastRefusalAt = -Infinity;

  /** @internal the service makes its gate */
  constructor(options: GateOptions) {
    super();
    this.maxActive = options.maxActive;
    this.maxWaiting = options.maxWaiting;
    this.maxWaitMs = options.maxWaitMs;
    this.rate = options.initialBytesPerS;
    this.initialRate = options.initialBytesPerS;
    this.now = options.now ?? (() => performance.now());
    const refusalsPerS = options.refusalsPerS ?? Infinity;
    this.refusalGapMs = refusalsPerS === Infinity ? 0 : 1000 / refusalsPerS;
  }

  /**
   * Milliseconds to hold back the answer to a refusal just made (OVERLOADED, QUEUE_FULL), so that
   * refusals are answered at most `refusalsPerS` a second after a burst of REFUSAL_BURST (a token
   * bucket), each held at most MAX_REFUSAL_DELAY_MS. A client that ignores Retry-After and asks
   * again at once is refused again, each refusal a new connection and a few hundred bytes: 64
   * such clients drew 1000 refusals a second on the 2-core VM, and with the clients on the same
   * cores the refusing took the engine's CPU (admitted goodput 11-22 % of polite clients', with
   * client timeouts). Holding the answer makes those clients wait instead; clients that honour
   * Retry-After stay under the pace (about 40 refusals a second in the same load).
   */
  paceRefusal(): number {
    if (this.refusalGapMs === 0) return 0;
    const now = this.now();
    const at = Math.min(
      Math.max(this.lastRefusalAt + this.refusalGapMs, now - (REFUSAL_BURST - 1) * this.refusalGapMs),
      now + MAX_REFUSAL_DELAY_MS,
    );
    this.lastRefusalAt = at;
    return Math.max(0, at - now);
  }

  /** Resolves once no request holds, waits for or reserved a turn (at once when none does). */
  whenIdle(): Promise<void> {
    const idle = () => this.activeJobs.size === 0 && this.waiters.length === 0 && this.reservedJobs.size === 0;
    if (idle()) return Promise.resolve();
    return new Promise((resolve) => {
      const check = () => {
        if (idle()) {
          this.off('released', check);
          resolve();
        }
      };
      this.on('released', check);
    });
  }

  /** Requests holding a turn now. */
  get active(): number {
    return this.activeJobs.size;
  }

  /** Requests waiting for a turn now. */
  get waiting(): number {
    return this.waiters.length;
  }

  /** The rate the estimates use, bytes per second, and whether it was measured yet. */
  get bytesPerS(): { value: number; measured: boolean } {
    this.sample(this.now());
    return { value: this.rate, measured: this.measured };
  }

  /** The learnt ratio of actual to predicted waits the estimates are scaled by (1 until learnt). */
  get waitCorrection(): number {
    return this.correction;
  }

  /**
   * Milliseconds a request of `ownBytes` arriving now would take to be done when it had to wait
   * for a turn: the bytes still to read of the requests working and waiting, and its own, over
   * the rate. (A request that finds a free turn is admitted whatever this says.)
   */
  expectedWaitMs(ownBytes = 0): number {
    return this.aheadMs() * this.correction + (ownBytes / this.rate) * 1000;
  }

  /** {@link expectedWaitMs} for `job`, its own bytes at its kind's rate. */
  private expectedWaitFor(job: Job): number {
    return this.aheadMs() * this.correction + (this.sizeOf(job) / this.rateOf(job)) * 1000;
  }

  /** Milliseconds of the work queued (working and waiting) at the rate, before the correction. */
  private aheadMs(): number {
    this.sample(this.now());
    let seconds = 0;
    for (const job of this.activeJobs) seconds += Math.max(0, this.sizeOf(job) - job.done()) / this.rateOf(job);
    for (const waiter of this.waiters) seconds += this.sizeOf(waiter.job) / this.rateOf(waiter.job);
    for (const job of this.reservedJobs) seconds += this.sizeOf(job) / this.rateOf(job);
    return seconds * 1000;
  }

  /**
   * Bytes per second of `job`'s kind; while its kind has no measurement, the lower of the rate of
   * all the work and the initial guess (a kind's first requests are admitted cautiously).
   */
  private rateOf(job: Job): number {
    return this.kindRates.get(job.kind ?? '') ?? Math.min(this.rate, this.initialRate);
  }

  /**
   * Reserves a place for `job` on arrival, before its client sends the body: throws what
   * {@link acquire} would reject with at once (OVERLOADED, QUEUE_FULL), else holds the place
   * (counted in the estimates and the waiting count as a request waiting for a turn) until the
   * reservation's `acquire` takes a turn, never shed then, or `cancel` gives it up. The service
   * reserves on arrival and acquires once the body's first bytes are in, so a request is shed
   * only before its client sent anything, and a turn is held by work, not by a slow client.
   * @throws ServiceError OVERLOADED; ParleError QUEUE_FULL
   */
  reserve(job: Job = { bytes: undefined, done: () => 0 }): Reservation {
    if (this.activeJobs.size + this.reservedJobs.size >= this.maxActive) this.refuseAtOnce(job);
    this.reservedJobs.add(job);
    let open = true;
    const close = () => {
      const was = open;
      open = false;
      this.reservedJobs.delete(job);
      return was;
    };
    return {
      acquire: (signal) => {
        if (!close()) return Promise.reject(new Error('a reservation is acquired or cancelled once'));
        return this.enter(signal, job);
      },
      cancel: () => {
        if (close()) this.emit('released');
      },
    };
  }

  /**
   * Throws what {@link acquire} rejects with at once for `job` when every turn is taken: OVERLOADED
   * when its expected wait passes maxWaitMs, QUEUE_FULL when maxWaiting requests wait (or hold a
   * reservation). Emits `shed` or `refused`.
   */
  private refuseAtOnce(job: Job): void {
    const waitMs = this.expectedWaitFor(job);
    if (waitMs > this.maxWaitMs) {
      this.emit('shed');
      const retryAfterSeconds = Math.max(1, Math.ceil((waitMs - this.maxWaitMs) / 1000));
      throw new ServiceError(
        ServiceErrorCodes.OVERLOADED,
        503,
        `the work queued ahead and this request's would take about ${Math.round(waitMs)} ms at ${(this.rateOf(job) / 1e6).toFixed(0)} MB/s, ` +
          `more than the bound (maxWaitMs) of ${this.maxWaitMs} ms; retry after ${retryAfterSeconds} s`,
        retryAfterSeconds,
      );
    }
    if (this.waiters.length + this.reservedJobs.size >= this.maxWaiting) {
      this.emit('refused');
      throw new ParleError(
        ErrorCodes.QUEUE_FULL,
        `${this.activeJobs.size} requests are being served and ${this.waiters.length + this.reservedJobs.size} wait, the limit (queue) is ${this.maxWaiting}`,
      );
    }
  }

  /**
   * Waits for a turn; resolves to the function that gives it back (call it exactly once).
   * `job` tells the gate the request's size and progress (for the estimates; default: unknown
   * size, nothing read).
   * @throws ServiceError OVERLOADED (at once, when the expected wait passes maxWaitMs; its
   *   `retryAfterSeconds` says when the queue should have drained below it); ParleError
   *   QUEUE_FULL (at once, when `maxWaiting` requests already wait), ABORTED (when `signal`
   *   aborts while waiting)
   */
  acquire(signal?: AbortSignal, job: Job = { bytes: undefined, done: () => 0 }): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(abortError(signal));
    if (this.activeJobs.size + this.reservedJobs.size >= this.maxActive) {
      try {
        this.refuseAtOnce(job);
      } catch (e) {
        return Promise.reject(e);
      }
    }
    return this.enter(signal, job);
  }

  /** A turn for `job` now when one is free, else a place in the queue (no check: the caller made it). */
  private enter(signal: AbortSignal | undefined, job: Job): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(abortError(signal));
    if (this.activeJobs.size < this.maxActive) {
      this.start(job);
      return Promise.resolve(this.releaser(job));
    }
    return new Promise((resolve, reject) => {
      const waiter: Waiter = { resolve, reject, signal, onAbort: undefined, job, queuedAt: this.now(), predictedMs: this.aheadMs() };
      if (signal) {
        waiter.onAbort = () => {
          const at = this.waiters.indexOf(waiter);
          if (at >= 0) this.waiters.splice(at, 1);
          reject(abortError(signal));
          this.emit('released');
        };
        signal.addEventListener('abort', waiter.onAbort, { once: true });
      }
      this.waiters.push(waiter);
      this.emit('queued');
    });
  }

  /** The size a job counts for: its Content-Length, or the mean of the bodies seen. */
  private sizeOf(job: Job): number {
    return job.bytes ?? this.meanBytes;
  }

  /** Bytes read so far by every request that held a turn. */
  private totalBytes(): Map<string, number> {
    const bytes = new Map(this.finishedBytes);
    for (const job of this.activeJobs) bytes.set(job.kind ?? '', (bytes.get(job.kind ?? '') ?? 0) + job.done());
    return bytes;
  }

  /**
   * Closes a rate sample when the current saturated interval is long enough, and starts or
   * ends the interval as the gate fills or empties.
   */
  private sample(now: number): void {
    const saturated = this.activeJobs.size >= this.maxActive;
    if (this.mark && now - this.mark.at >= RATE_SAMPLE_MS) {
      const bytes = this.totalBytes();
      const read = new Map<string, number>();
      let total = 0;
      for (const [kind, n] of bytes) {
        const delta = n - (this.mark.bytes.get(kind) ?? 0);
        read.set(kind, delta);
        total += delta;
      }
      const rate = (total * 1000) / (now - this.mark.at);
      if (rate > 0) {
        this.rate = this.measured ? this.rate * (1 - RATE_WEIGHT) + rate * RATE_WEIGHT : rate;
        this.measured = true;
        for (const [kind, delta] of read) {
          if (delta < 0.9 * total) continue;
          const before = this.kindRates.get(kind);
          this.kindRates.set(kind, before === undefined ? rate : before * (1 - RATE_WEIGHT) + rate * RATE_WEIGHT);
        }
      }
      this.mark = saturated ? { at: now, bytes } : undefined;
    } else if (!saturated) {
      this.mark = undefined; // too short to tell
    } else if (!this.mark) {
      this.mark = { at: now, bytes: this.totalBytes() };
    }
  }

  private start(job: Job): void {
    this.sample(this.now());
    this.activeJobs.add(job);
    this.sample(this.now());
    this.emit('admitted');
  }

  private releaser(job: Job): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const now = this.now();
      this.sample(now);
      this.activeJobs.delete(job);
      const done = job.done();
      this.finishedBytes.set(job.kind ?? '', (this.finishedBytes.get(job.kind ?? '') ?? 0) + done);
      if (done > 0) this.meanBytes = this.meanBytes * 0.9 + done * 0.1;
      const next = this.waiters.shift();
      if (next) {
        if (next.onAbort) next.signal!.removeEventListener('abort', next.onAbort);
        // learn how far off the prediction was (waits too short to tell are left out)
        if (next.predictedMs >= 50) {
          const ratio = Math.min(4, Math.max(0.5, (now - next.queuedAt) / next.predictedMs));
          this.correction = this.correction * (1 - RATE_WEIGHT) + ratio * RATE_WEIGHT;
        }
        this.activeJobs.add(next.job);
        next.resolve(this.releaser(next.job));
        this.emit('admitted');
      } else {
        this.sample(now);
      }
      this.emit('released');
    };
  }
}
