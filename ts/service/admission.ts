/**
 * Admission of requests to the engine: at most `maxActive` requests work on the engine at once,
 * at most `maxWaiting` more wait for a turn (FIFO), and one more is refused with QUEUE_FULL
 * (503 with Retry-After).
 *
 * Why the service needs its own gate: the streaming compressor and decompressor keep up to
 * `workers + 1` chunks in flight each, and every chunk holds its blocks in the engine's wasm
 * memory (up to 11x the chunk's bytes for u8: input, values, lengths, varints). Without a cap,
 * 64 clients would ask for 64 x 3 chunks at once, beyond the 4 GiB wasm32 memory. A waiting
 * request has not read its body yet, so TCP holds the client back and costs the server about
 * one socket buffer (~64 KiB). The engine's own queue (Engine option maxQueue) counts only its
 * whole-array ops (sort here); streams go through this gate.
 */
import { EventEmitter } from 'node:events';
import { abortError } from '../cpu/pool.js';
import { ErrorCodes, ParleError } from '../errors.js';

interface Waiter {
  resolve: (release: () => void) => void;
  reject: (error: unknown) => void;
  signal: AbortSignal | undefined;
  onAbort: (() => void) | undefined;
}

/**
 * Events: `admitted` (a request got a turn), `queued` (a request waits), `released` (a turn
 * was given back), `refused` (QUEUE_FULL). Tests and metrics synchronise on them.
 * @internal
 */
export class AdmissionGate extends EventEmitter {
  private activeCount = 0;
  private readonly waiters: Waiter[] = [];

  /**
   * @param maxActive requests served at once (>= 1).
   * @param maxWaiting requests that may wait for a turn (>= 0).
   * @internal the service makes its gate
   */
  constructor(
    readonly maxActive: number,
    readonly maxWaiting: number,
  ) {
    super();
  }

  /** Resolves once no request holds or waits for a turn (at once when none does). */
  whenIdle(): Promise<void> {
    if (this.activeCount === 0 && this.waiters.length === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const check = () => {
        if (this.activeCount === 0 && this.waiters.length === 0) {
          this.off('released', check);
          resolve();
        }
      };
      this.on('released', check);
    });
  }

  /** Requests holding a turn now. */
  get active(): number {
    return this.activeCount;
  }

  /** Requests waiting for a turn now. */
  get waiting(): number {
    return this.waiters.length;
  }

  /**
   * Waits for a turn; resolves to the function that gives it back (call it exactly once).
   * @throws ParleError QUEUE_FULL (at once, when `maxWaiting` requests already wait), ABORTED
   *   (when `signal` aborts while waiting)
   */
  acquire(signal?: AbortSignal): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(abortError(signal));
    if (this.activeCount < this.maxActive) {
      this.activeCount++;
      this.emit('admitted');
      return Promise.resolve(this.releaser());
    }
    if (this.waiters.length >= this.maxWaiting) {
      this.emit('refused');
      return Promise.reject(
        new ParleError(
          ErrorCodes.QUEUE_FULL,
          `${this.activeCount} requests are being served and ${this.waiters.length} wait, the limit (queue) is ${this.maxWaiting}`,
        ),
      );
    }
    return new Promise((resolve, reject) => {
      const waiter: Waiter = { resolve, reject, signal, onAbort: undefined };
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

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiters.shift();
      if (next) {
        // The turn passes straight to the next waiter; activeCount stays.
        if (next.onAbort) next.signal!.removeEventListener('abort', next.onAbort);
        next.resolve(this.releaser());
        this.emit('admitted');
      } else {
        this.activeCount--;
      }
      this.emit('released');
    };
  }
}
