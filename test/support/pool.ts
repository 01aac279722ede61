/**
 * Deterministic control of a worker pool's tasks (ts/cpu/pool.ts), for tests of aborts, crashes
 * and queueing: no polling of `busy`, no sleeps. The next task a worker is handed is held "running"
 * until released, however fast its worker is.
 */
import type { WorkerPool } from '../../ts/cpu/pool.js';
import { within } from './wait.js';

export interface HeldTask {
  /**
   * Resolves once the pool has handed the task to a worker (it is posted; `busy` counts it), or
   * rejects after `limitMs` with a message that says so.
   */
  started(limitMs?: number): Promise<void>;
  /**
   * Lets the held task's result through (the task completes as its worker finished it); if no
   * task was handed out yet, none will be held. Call it in a `finally`.
   */
  release(): void;
}

type Execute = (slot: unknown, task: unknown) => Promise<unknown>;

/**
 * Holds the next task `pool` hands to a worker: the task is posted to its worker as usual, but
 * the pool sees its result only after {@link HeldTask.release}, so the task stays running for as
 * long as the test needs: an abort or a kill in between always lands on a running task. Later
 * tasks are not held.
 */
export function holdNextTask(pool: WorkerPool): HeldTask {
  const target = pool as unknown as { execute: Execute };
  const original = target.execute;
  let markStarted!: () => void;
  const started = new Promise<void>((resolve) => (markStarted = resolve));
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const held: Execute = async (slot, task) => {
    target.execute = original; // only this task
    const result = original.call(pool, slot, task); // posts the task to the worker now
    markStarted();
    try {
      return await result;
    } finally {
      await gate;
    }
  };
  target.execute = held;
  return {
    started: (limitMs = 30_000) => within(started, limitMs, 'the pool did not hand the held task to a worker'),
    release: () => {
      if (target.execute === held) target.execute = original; // no task came: hold none later
      open();
    },
  };
}

/**
 * Resolves when `pool.run` is next called, once the task is in the pool's queue (or handed to
 * a worker); rejects after `limitMs` with a message that says so.
 */
export function nextRun(pool: WorkerPool, limitMs = 30_000): Promise<void> {
  const target = pool as unknown as { run: (...args: unknown[]) => Promise<unknown> };
  const original = target.run;
  let markQueued!: () => void;
  const queued = new Promise<void>((resolve) => (markQueued = resolve));
  target.run = function (...args: unknown[]): Promise<unknown> {
    target.run = original;
    const result = original.apply(pool, args);
    markQueued();
    return result;
  };
  return within(queued, limitMs, 'no task reached the pool').finally(() => {
    if (target.run !== original) target.run = original;
  });
}
