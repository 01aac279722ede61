/**
 * Many chunks in one task: the CPU path's unit of parallel work is the chunk (256 KiB by
 * default in version 3, as Blosc2's blocks), but a task a chunk would cost a worker message
 * (50-500 us through comlink on the 2-core VM) per 256 KiB. So a call posts one task per worker, and the workers
 * take chunks from a shared job table through an atomic counter until none are left (dynamic
 * scheduling: a worker that drew fast chunks takes more). The engine's thread runs the same
 * procedure alone for small inputs.
 *
 * The job table lives in the kernels' memory: {@link JOB_WORDS} u32 a chunk, written by the
 * engine's thread before the tasks start (inputs) and by the workers (results), so a task's
 * message carries pointers only, not 32 bytes of entry a chunk through structured clone.
 */
import { Encoding, type ChunkEntry } from '../../format/layout.js';
import type { CodecContext } from './arena.js';
import { decodeChunkAt } from './decode.js';
import { encodeChunkAt } from './encode.js';
import type { PredictPlan } from '../predict.js';
import { placeFromMemory, type Placement } from '../place.js';
import { copyOutOfMemory } from '../../cpu/procedures.js';

/** u32 words a chunk takes in a job table. */
export const JOB_WORDS = 12;
/** Bytes of the counters a batch needs: i32 each, by {@link Counter}. */
export const COUNTER_BYTES = 32;

/** The i32 counters of a batch. */
export const enum Counter {
  /** The next job to take. */
  NextJob = 0,
  /** The next arena to take (one a participant). */
  NextArena = 1,
  /** Set by a participant that failed: the others stop. */
  Failed = 2,
  /** Jobs whose input is in place (encode with `staged`: the engine's thread copies input while the workers start). */
  Ready = 3,
  /** Jobs finished (decode with `notifyEvery`: the engine's thread copies results out while the workers go on). */
  Done = 4,
}

/**
 * Word offsets of an encode job. Inputs: 0..2; results: 3..8. Words 1 and 3..8 hold a chunk
 * entry, as in a decode job ({@link writeJobEntry}, {@link jobEntry}).
 */
export const enum EncodeJob {
  InPtr = 0,
  Count = 1,
  /** Room for the payload: payloadRoomBytes(Count x element size) (the encoder writes its first candidate there). */
  OutPtr = 2,
  PayloadBytes = 3,
  /** Stage ids, one a byte, the first in the low byte. */
  Stages = 4,
  StreamCount = 5,
  PayloadHash = 6,
  ElementsHash = 7,
  /** {@link JobFlags}. */
  Flags = 8,
}

/** Word offsets of a decode job (all inputs but Done); words 1 and 3..8 hold the chunk's entry, as in an encode job. */
export const enum DecodeJob {
  PayloadPtr = 0,
  Count = 1,
  /** Room for Count x element size bytes, plus DECODE_SLACK_BYTES unless the batch is exactOut. */
  OutPtr = 2,
  PayloadBytes = 3,
  Stages = 4,
  StreamCount = 5,
  PayloadHash = 6,
  ElementsHash = 7,
  Flags = 8,
  /** The chunk's index in its container (for error messages). */
  Index = 9,
  /** Result: 1 once the chunk is decoded (with `notifyEvery`). */
  Done = 10,
  /** With `hostOut`: the chunk's byte offset in it (after hostOut.byteOffset). */
  HostOutAt = 11,
}

export const enum JobFlags {
  Quantize = 1,
  /** Encode result: the chunk is stored (its payload is its input). */
  Stored = 2,
  /** The chunk is predicted (stage 7; its stages are empty). */
  Predict = 4,
}

/** Parameters of `encodeChunks`. */
export interface EncodeChunksParams {
  elementSize: 1 | 2 | 4 | 8;
  jobsPtr: number;
  jobs: number;
  counterPtr: number;
  /** One arena a participant, each `arenaBytes` long (encodeArenaBytes of the longest chunk). */
  arenaPtrs: number[];
  arenaBytes: number;
  pipeline?: number[];
  level?: number;
  errorBound?: number;
  /** Predict every chunk so (ts/codec/predict.ts). */
  predict?: PredictPlan;
  explain?: boolean;
  /** Huffman streams in mode 3 (EncodeChunkParams.huffmanLanes). */
  huffmanLanes?: boolean;
  /** Wait for each job's input (Counter.Ready): the engine's thread is still copying it in. */
  staged?: boolean;
}

/** Parameters of `decodeChunks`. */
export interface DecodeChunksParams {
  elementSize: 1 | 2 | 4 | 8;
  jobsPtr: number;
  jobs: number;
  counterPtr: number;
  arenaPtrs: number[];
  arenaBytes: number;
  /** Write nothing past a chunk's elements (they lie side by side in one array). */
  exactOut: boolean;
  /**
   * Mark each decoded job (DecodeJob.Done), count it (Counter.Done) and wake the engine's thread
   * every this many jobs (and at the last), so it copies results out while the workers go on.
   */
  notifyEvery?: number;
  /**
   * A host result in shared memory (a SharedArrayBuffer other than the kernels' memory): each
   * participant copies every chunk it decodes from its OutPtr to `byteOffset` + the job's
   * HostOutAt there, so the engine's thread copies nothing out (the chunks of a Zarr array, each
   * decoded into the array zarrita receives).
   */
  hostOut?: { buffer: SharedArrayBuffer; byteOffset: number; place?: Placement };
}

/** What a participant of `encodeChunks` returns: the chooser's reasons (with `explain`), by job. */
export interface EncodeChunksResult {
  reasons: [number, string][];
}

/** Packs up to four stage ids into a u32, the first in the low byte. */
export function packStages(stages: readonly number[]): number {
  let v = 0;
  for (let i = 0; i < stages.length; i++) v += stages[i] * 2 ** (8 * i);
  return v;
}

/** The stage ids of a packed u32. */
export function unpackStages(v: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < 4; i++) {
    const id = (v >>> (8 * i)) & 0xff;
    if (id === 0) break;
    out.push(id);
  }
  return out;
}

/**
 * Runs `job(i, arenaPtr)` for the jobs this participant takes: an arena of its own first (a
 * participant beyond the arenas takes none), then jobs until the counter passes the end or
 * another participant failed. A failure sets the flag and is rethrown.
 */
function takeJobs(
  ctx: CodecContext,
  counterPtr: number,
  jobs: number,
  arenaPtrs: number[],
  job: (i: number, arenaPtr: number) => void,
  waitReady = false,
): void {
  const counters = new Int32Array(ctx.memory.buffer, counterPtr, COUNTER_BYTES / 4);
  const arena = Atomics.add(counters, Counter.NextArena, 1);
  if (arena >= arenaPtrs.length) return;
  for (;;) {
    if (Atomics.load(counters, Counter.Failed) !== 0) return;
    const i = Atomics.add(counters, Counter.NextJob, 1);
    if (i >= jobs) return;
    if (waitReady) {
      // a worker (never the engine's thread: it fills everything before it runs a batch itself)
      // waits until the engine's thread has copied this job's input in
      for (let ready = Atomics.load(counters, Counter.Ready); ready <= i; ready = Atomics.load(counters, Counter.Ready)) {
        if (Atomics.load(counters, Counter.Failed) !== 0) return;
        Atomics.wait(counters, Counter.Ready, ready, 50);
      }
    }
    try {
      job(i, arenaPtrs[arena]);
    } catch (e) {
      Atomics.store(counters, Counter.Failed, 1);
      throw e;
    }
  }
}

/**
 * The engine's thread: marks jobs [0, ready) as having their input in place and wakes the
 * workers waiting for them.
 */
export function markReady(memory: ArrayBufferLike, counterPtr: number, ready: number): void {
  const counters = new Int32Array(memory, counterPtr, COUNTER_BYTES / 4);
  Atomics.store(counters, Counter.Ready, ready);
  Atomics.notify(counters, Counter.Ready);
}

/**
 * Encodes the chunks of a job table (ts/codec/cpu/encode.ts, one chunk at a time): each result's
 * payload is copied to its job's OutPtr unless the chunk is stored.
 * @throws Error (a bug: an arena too small); no ParleError (encoding never fails on data)
 */
export function encodeChunksAt(ctx: CodecContext, p: EncodeChunksParams): EncodeChunksResult {
  const reasons: [number, string][] = [];
  takeJobs(
    ctx,
    p.counterPtr,
    p.jobs,
    p.arenaPtrs,
    (i, arenaPtr) => {
      const words = new Uint32Array(ctx.memory.buffer, p.jobsPtr + 4 * JOB_WORDS * i, JOB_WORDS);
      const count = words[EncodeJob.Count];
      const r = encodeChunkAt(ctx, {
        elementSize: p.elementSize,
        count,
        inPtr: words[EncodeJob.InPtr],
        arenaPtr,
        arenaBytes: p.arenaBytes,
        pipeline: p.pipeline,
        level: p.level,
        explain: p.explain,
        huffmanLanes: p.huffmanLanes,
        payloadPtr: words[EncodeJob.OutPtr],
        ...(p.errorBound !== undefined ? { errorBound: p.errorBound } : {}),
        ...(p.predict !== undefined ? { predict: p.predict } : {}),
      });
      const stored = r.entry.encoding === Encoding.Stored;
      if (!stored && r.inPlace !== true) ctx.kernels.copyBytes(words[EncodeJob.OutPtr], arenaPtr + r.payloadOffset, r.entry.payloadBytes);
      writeJobEntry(words, r.entry);
      if (stored) words[EncodeJob.Flags] |= JobFlags.Stored;
      if (p.explain === true) reasons.push([i, r.reason]);
    },
    p.staged === true,
  );
  return { reasons };
}

/** Writes a chunk's entry into a job's words 1 and 3..8 (the same places in encode and decode jobs). */
function writeJobEntry(words: Uint32Array, entry: ChunkEntry): void {
  words[EncodeJob.Count] = entry.elementCount;
  words[EncodeJob.PayloadBytes] = entry.payloadBytes;
  words[EncodeJob.Stages] = packStages(entry.stages ?? []);
  words[EncodeJob.StreamCount] = entry.streamCount ?? 0;
  words[EncodeJob.PayloadHash] = Number(entry.payloadChecksum);
  words[EncodeJob.ElementsHash] = Number(entry.elementsChecksum);
  words[EncodeJob.Flags] = (entry.quantize === true ? JobFlags.Quantize : 0) | (entry.predict === true ? JobFlags.Predict : 0);
}

/** The entry in a job's words 1 and 3..8: an encode job's results, or a decode job's chunk. */
export function jobEntry(words: Uint32Array): ChunkEntry {
  const stages = unpackStages(words[EncodeJob.Stages]);
  const predict = (words[EncodeJob.Flags] & JobFlags.Predict) !== 0;
  return {
    elementCount: words[EncodeJob.Count],
    encoding: predict ? Encoding.Predicted : stages.length === 0 ? Encoding.Stored : Encoding.Pipeline,
    runCount: 0,
    payloadBytes: words[EncodeJob.PayloadBytes],
    payloadChecksum: BigInt(words[EncodeJob.PayloadHash]),
    elementsChecksum: BigInt(words[EncodeJob.ElementsHash]),
    stages,
    streamCount: words[EncodeJob.StreamCount],
    ...((words[EncodeJob.Flags] & JobFlags.Quantize) !== 0 ? { quantize: true } : {}),
    ...(predict ? { predict: true } : {}),
  };
}

/** Writes a decode job for chunk `index` (its entry passed readEntry). */
export function writeDecodeJob(words: Uint32Array, entry: ChunkEntry, index: number, payloadPtr: number, outPtr: number): void {
  words[DecodeJob.PayloadPtr] = payloadPtr;
  words[DecodeJob.OutPtr] = outPtr;
  writeJobEntry(words, entry);
  words[DecodeJob.Index] = index;
  words[DecodeJob.Done] = 0; // the table's memory is reused: no stale mark from an earlier batch
  words[DecodeJob.HostOutAt] = 0;
}

/**
 * Decodes the chunks of a job table (version 2 or 3 entries that passed readEntry), each into
 * its OutPtr, checking both tree hashes.
 * @throws ParleError CHECKSUM_MISMATCH, CORRUPT (the first failing chunk of this participant)
 */
export function decodeChunksAt(ctx: CodecContext, p: DecodeChunksParams): null {
  takeJobs(ctx, p.counterPtr, p.jobs, p.arenaPtrs, (i, arenaPtr) => {
    const words = new Uint32Array(ctx.memory.buffer, p.jobsPtr + 4 * JOB_WORDS * i, JOB_WORDS);
    const entry = jobEntry(words);
    const outPtr = words[DecodeJob.OutPtr];
    decodeChunkAt(ctx, {
      elementSize: p.elementSize,
      entry,
      index: words[DecodeJob.Index],
      payloadPtr: words[DecodeJob.PayloadPtr],
      arenaPtr,
      arenaBytes: p.arenaBytes,
      outPtr,
      exactOut: p.exactOut,
    });
    if (p.hostOut !== undefined) {
      // (the decoded elements are scratch with DECODE_SLACK_BYTES after them: the copies may move them)
      const result = new Uint8Array(p.hostOut.buffer, p.hostOut.byteOffset);
      const place = p.hostOut.place;
      if (place === undefined) {
        copyOutOfMemory(ctx, outPtr, entry.elementCount * p.elementSize, result, words[DecodeJob.HostOutAt]);
      } else {
        // the chunk's part of the block, to its place in the result
        placeFromMemory(ctx, place, outPtr, words[DecodeJob.HostOutAt], entry.elementCount, result, p.elementSize);
      }
    }
    if (p.notifyEvery !== undefined) {
      Atomics.store(words, DecodeJob.Done, 1);
      const counters = new Int32Array(ctx.memory.buffer, p.counterPtr, COUNTER_BYTES / 4);
      const done = Atomics.add(counters, Counter.Done, 1) + 1;
      if (done % p.notifyEvery === 0 || done === p.jobs) Atomics.notify(counters, Counter.Done);
    }
  });
  return null;
}

/**
 * The engine's thread, while workers decode a batch with `notifyEvery`: calls `take(i)` for each
 * job as it is marked decoded (in any order, each once), waking when the workers notify, until
 * every job is taken or `settled` resolves (the tasks ended: a failure, or all done). Without
 * Atomics.waitAsync (some browsers) it only waits for `settled`. Jobs not taken are left to the caller.
 */
export async function drainDecoded(
  memory: ArrayBufferLike,
  counterPtr: number,
  jobsPtr: number,
  jobs: number,
  taken: Uint8Array,
  take: (i: number) => void,
  settled: Promise<unknown>,
): Promise<void> {
  const waitAsync = (
    Atomics as unknown as { waitAsync?: (a: Int32Array, i: number, v: number, t?: number) => { async: boolean; value: unknown } }
  ).waitAsync;
  if (typeof waitAsync !== 'function') return;
  const counters = new Int32Array(memory, counterPtr, COUNTER_BYTES / 4);
  const table = new Uint32Array(memory, jobsPtr, jobs * JOB_WORDS);
  let over = false;
  void settled.then(() => (over = true));
  let seen = 0;
  let count = 0;
  while (count < jobs && !over) {
    const wait = waitAsync.call(Atomics, counters, Counter.Done, seen, 1000);
    if (wait.async) await Promise.race([wait.value, settled]);
    seen = Atomics.load(counters, Counter.Done);
    for (let i = 0; i < jobs; i++) {
      if (taken[i] === 0 && Atomics.load(table, i * JOB_WORDS + DecodeJob.Done) === 1) {
        taken[i] = 1;
        count++;
        take(i);
      }
    }
  }
}
