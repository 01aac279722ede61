/**
 * Request body -> .parle chunks -> response body, chunk by chunk, with backpressure both ways:
 *
 *   socket -> readBody() -> ContainerWriter/Reader.write() -> yield -> Readable -> socket
 *
 * The generators below are pulled by the response stream: a piece is only asked for when the
 * response has room (its buffer is under 64 KiB), and the next body piece is only read when
 * the codec has taken the last one (`write()` resolves once fewer than `workers + 1` chunks
 * are in flight). A slow reader therefore stalls the codec, which stalls the body, which
 * stalls the client's sends through TCP. Memory held per request: one chunk of input being
 * gathered, the chunks in flight (their wasm blocks) and one chunk of output.
 *
 * Each generator holds a turn of the admission gate from its first step to its end, and on
 * any early end (error, abort, client gone) waits for its chunks still in flight before it
 * gives the turn back, so the gate's bound on concurrent engine work holds.
 */
import { Readable } from 'node:stream';
import { ContainerWriter, type ContainerReader } from '../codec/stream.js';
import type { Header } from '../format/layout.js';
import type { AdmissionGate, Job, Reservation } from './admission.js';
import { floorAllowanceMs, throwIfAborted, type BodyFloor, type RequestPhases, type RequestWork } from './body.js';
import { ServiceError, ServiceErrorCodes } from './errors.js';

/**
 * Waits until no chunk of `codec` is in flight any more. `end()` awaits the in-flight chunks
 * oldest first and stops at the first that failed, so it is called until it has nothing left
 * to fail on: at most once per chunk in flight, plus the final call.
 */
async function drain(codec: ContainerWriter | ContainerReader, maxInFlight: number): Promise<void> {
  for (let i = 0; i <= maxInFlight; i++) {
    try {
      await codec.end();
      return;
    } catch {
      // A failed chunk or the input's length; try again until the queue is empty.
    }
  }
}

/** Options shared by the two streaming generators. */
export interface StreamContext {
  gate: AdmissionGate;
  work: RequestWork;
  /**
   * The request's work for the gate's estimates: compress, its body bytes in all (Content-Length;
   * undefined when unknown) and `done` the body bytes read; decompress, the output bytes its
   * container declares (known once its header is read) and `done` the bytes written.
   */
  job: Omit<Job, 'kind'>;
  /**
   * Called with each output piece's length before it is sent; throws to end the request (the
   * decompress route's ratio of output to input, {@link ServiceOptions.maxOutputRatio}).
   */
  beforeOutput?: (bytes: number) => void;
  /** Called once the request got its turn. */
  onAdmitted?: () => void;
  /** Chunks a codec keeps in flight at most (the CPU path's chunkConcurrency). */
  maxInFlight: number;
  /**
   * The slowest reader of the response: after `graceMs` of the response waiting for the client,
   * at least `minBytesPerS` of output must have been taken per second of waiting, and no single
   * wait may pass `graceMs` (a client that stopped reading: the bytes its socket took before it
   * stopped, megabytes on loopback, would otherwise buy it minutes at the rate), else `onSlow` is
   * called with a SLOW_READ error (the route cuts the response, which ends this generator and
   * gives the turn back). Only time waiting for the client counts.
   */
  readFloor?: BodyFloor & { onSlow: (error: ServiceError) => void };
}

/**
 * Runs `body` through `codec` and yields its output pieces, holding a turn of `gate`.
 * @throws the codec's ParleError, the body's (TOO_LARGE, SLOW_BODY, TIMEOUT, ABORTED), the
 *   gate's (OVERLOADED, QUEUE_FULL); the error is also kept in `work.error`
 */
async function* runCodec(
  codec: ContainerWriter | ContainerReader,
  body: () => AsyncIterable<Uint8Array>,
  { gate, work, maxInFlight, job, beforeOutput, onAdmitted, readFloor }: StreamContext,
): AsyncGenerator<Uint8Array> {
  const signal = work.controller.signal;
  const phases = work.phases;
  let release: () => void;
  let at = performance.now();
  /** Adds the time since the last call to `phase`. */
  const spent = (phase: keyof RequestPhases) => {
    const now = performance.now();
    phases[phase] += now - at;
    at = now;
  };
  const kind = codec instanceof ContainerWriter ? 'compress' : 'decompress';
  const gateJob = {
    get bytes() {
      return job.bytes;
    },
    done: job.done,
    kind,
  };
  const pieces = body()[Symbol.asyncIterator]();
  const early: Uint8Array[] = [];
  let ended = false;
  let reservation: Reservation | undefined;
  try {
    // 503 at once, before the client sends the body (Expect: 100-continue) or more of it; past
    // this the request is never shed
    reservation = gate.reserve(gateJob);
    // Turns are held by work, not by waiting for a client: the body's first ADMIT_AFTER_BYTES
    // (or all of it) arrive before the request takes one, so a client trickling its body meets
    // the body floor's 408 without ever holding a turn (32 such clients had held every turn
    // of the 16-core host for 5 s).
    for (let got = 0; got < ADMIT_AFTER_BYTES;) {
      const next = await pieces.next();
      if (next.done === true) {
        ended = true;
        break;
      }
      early.push(next.value);
      got += next.value.length;
    }
    spent('bodyMs');
    const held = reservation;
    reservation = undefined;
    release = await held.acquire(signal);
  } catch (e) {
    work.error ??= e;
    reservation?.cancel();
    await pieces.return?.(undefined);
    throw e;
  } finally {
    spent('waitMs');
  }
  /** The early pieces, then the rest of the body. */
  async function* rest(): AsyncGenerator<Uint8Array> {
    yield* early;
    early.length = 0;
    while (!ended) {
      const next = await pieces.next();
      if (next.done === true) return;
      yield next.value;
    }
  }
  onAdmitted?.();
  let finished = false;
  // the read floor: a timer armed while a piece waits for the client to take it
  let readWaitMs = 0;
  let disarm: (() => void) | undefined;
  const watchRead = () => {
    if (readFloor === undefined || readFloor.minBytesPerS <= 0) return;
    const started = performance.now();
    const allowanceMs = floorAllowanceMs(readFloor, work.bytesOut, readWaitMs);
    const timer = setTimeout(
      () => {
        readWaitMs += performance.now() - started;
        readFloor.onSlow(
          new ServiceError(
            ServiceErrorCodes.SLOW_READ,
            408,
            `the client read ${work.bytesOut} bytes of the response in ${Math.round(readWaitMs)} ms of waiting for it, ` +
              `below the floor (minBodyRate) of ${readFloor.minBytesPerS} bytes/s`,
          ),
        );
      },
      Math.max(0, Math.min(allowanceMs, readFloor.graceMs)),
    );
    timer.unref?.();
    disarm = () => {
      clearTimeout(timer);
      readWaitMs += performance.now() - started;
      disarm = undefined;
    };
  };
  try {
    // Time between the body's pieces is body reading (readBody counts the part spent waiting for
    // the client in work.bodyWaitMs); awaiting the codec is coding; a suspended yield is the
    // response's consumer (the socket) not asking for more.
    for await (const piece of rest()) {
      spent('bodyMs');
      const out = await codec.write(piece);
      spent('codingMs');
      throwIfAborted(signal);
      for (const bytes of out) {
        beforeOutput?.(bytes.length);
        work.bytesOut += bytes.length;
        watchRead();
        yield bytes;
        disarm?.();
        spent('sendMs');
      }
    }
    spent('bodyMs');
    const out = await codec.end();
    spent('codingMs');
    finished = true;
    for (const bytes of out) {
      beforeOutput?.(bytes.length);
      work.bytesOut += bytes.length;
      watchRead();
      yield bytes;
      disarm?.();
      spent('sendMs');
    }
  } catch (e) {
    work.error ??= e;
    throw e;
  } finally {
    disarm?.();
    // a body left unread (a failure) is ended: its reader's finally runs
    if (!finished) await pieces.return?.(undefined);
    if (!finished) await drain(codec, maxInFlight);
    release();
  }
}

/**
 * Body bytes a request sends before it takes a turn of the gate (all of a shorter body): a turn
 * is held by work on the engine, not by waiting for a slow client. At most this much a
 * connection is read ahead of admission (with 4096 connections, 256 MiB).
 */
export const ADMIT_AFTER_BYTES = 64 << 10;

/** Compresses `body` into .parle container bytes (see {@link runCodec}). */
export function compressBody(
  writer: ContainerWriter,
  body: () => AsyncIterable<Uint8Array>,
  ctx: StreamContext,
): AsyncGenerator<Uint8Array> {
  return runCodec(writer, body, ctx);
}

/**
 * Decompresses the .parle container in `body` into its elements' bytes (see {@link runCodec});
 * `reader.header` is set by the time the first piece is yielded.
 */
export function decompressBody(
  reader: ContainerReader,
  body: () => AsyncIterable<Uint8Array>,
  ctx: StreamContext,
): AsyncGenerator<Uint8Array> {
  return runCodec(reader, body, ctx);
}

/**
 * A byte stream of `first` (when given), then the pieces of `rest`, pulled only while the
 * consumer has room (highWaterMark 64 KiB: one output chunk at a time, not 16 of them as
 * `Readable.from` would buffer in object mode). Destroying it (client gone, error) ends
 * `rest` through `return()`, so its `finally` runs: the codec drains and the gate's turn is
 * given back even when no piece was ever read.
 */
export function toReadable(first: Uint8Array | undefined, rest: AsyncGenerator<Uint8Array>): Readable {
  let held = first;
  let pumping = false;
  return new Readable({
    highWaterMark: 64 * 1024,
    read() {
      if (pumping) return;
      pumping = true;
      void (async () => {
        try {
          if (held) {
            const piece = held;
            held = undefined;
            if (!this.push(piece)) return;
          }
          for (;;) {
            const { value, done } = await rest.next();
            if (done) {
              this.push(null);
              return;
            }
            if (!this.push(value)) return;
          }
        } catch (e) {
          this.destroy(e as Error);
        } finally {
          pumping = false;
        }
      })();
    },
    destroy(error, callback) {
      rest.return(undefined).then(
        () => callback(error),
        (e: unknown) => callback(error ?? (e as Error)),
      );
    },
  });
}
export type { Header };
