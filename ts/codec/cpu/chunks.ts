/**
 * Encoding and decoding of one .parle chunk on the CPU path. A chunk is independent of every
 * other, so chunks run in parallel, one a worker (the procedures are in ts/cpu/procedures.ts;
 * checksums are computed there too).
 */
import type { CpuPath } from '../../cpu/cpu-path.js';
import { DECODE_SLACK_BYTES } from '../../cpu/wasm.js';
import type { ElementType } from '../../types.js';
import { elementSize, kernelSize } from '../../types.js';
import type { ChunkEntry } from '../../format/layout.js';
import { encodeArenaBytes, payloadRoomBytes } from './encode.js';
import { decodeArenaBytes, decodeArenaBytesFor } from './decode.js';
import { readDirectory } from './directory.js';
import { pipelineName, type Pipeline } from '../../format/stages.js';
import { COUNTER_BYTES, DecodeJob, EncodeJob, JOB_WORDS, JobFlags, drainDecoded, jobEntry, markReady, writeDecodeJob } from './batch.js';
import type { PredictPlan } from '../predict.js';
import { placeFromMemory, type Placement } from '../place.js';

/** The batch procedures' table in the kernels' memory: their counters, then a job of JOB_WORDS u32 a chunk (./batch.ts). */
const JOB_TABLE = { counterBytes: COUNTER_BYTES, jobBytes: JOB_WORDS * 4 };

/** An encoded chunk: its table entry and its payload. */
export interface EncodedChunk {
  entry: ChunkEntry;
  payload: Uint8Array;
  /**
   * Where `payload` lies in the CPU path's memory, when it does and may be treated as scratch:
   * copy it out with CpuPath.readBytes (which may move it; its slot has the room).
   */
  payloadPtr?: number;
  /** Version 2: why the chooser picked this pipeline. */
  reason?: string;
}

/** What a chunk was coded with and why: `explainCodec`, `parle compress --explain`. */
export interface ChunkReport {
  index: number;
  elementCount: number;
  /** The pipeline, e.g. 'delta+shuffle+rle+huffman', or 'stored'. */
  pipeline: string;
  /** Payload bytes of the chunk (its table entry adds 32). */
  payloadBytes: number;
  /** The chooser's estimates, the candidates encoded and their sizes. */
  reason: string;
}

/** The report of chunk `index`. */
export function chunkReport(index: number, { entry, reason }: EncodedChunk): ChunkReport {
  return {
    index,
    elementCount: entry.elementCount,
    pipeline: entry.predict === true ? 'predict' : pipelineName((entry.stages ?? []) as Pipeline, entry.quantize === true),
    payloadBytes: entry.payloadBytes,
    reason: reason ?? '',
  };
}

/**
 * How to code a chunk: a version-2 pipeline (stage ids), undefined for the chooser, or an f32
 * chunk quantized within an absolute error bound first (its codes by `pipeline` or the chooser).
 */
export type ChunkCodec = number[] | undefined | LossyCodec;

/** An error-bounded f32 or f64 codec (ts/codec/quantize.ts). */
export interface LossyCodec {
  pipeline?: number[];
  errorBound: { abs: number };
}

/** How {@link encodeChunk} codes a chunk. */
export interface EncodeChunkOptions {
  /** The pipeline (undefined: the chooser's), or the lossy codec. */
  codec: ChunkCodec;
  signal?: AbortSignal;
  /** Where the elements already are in the kernels' memory (a resident input: read in place). */
  elementsPtr?: number;
  /** 1..9: how many candidates the chooser encodes (default 5). */
  level?: number;
  /** Keep the chooser's reasons in the chunk's report (default true). */
  explain?: boolean;
  /** Huffman streams in 32 interleaved lanes (decoder 'gpu', mode 3). */
  huffmanLanes?: boolean;
  /** Predict the chunk with this plan (ts/codec/predict.ts). */
  predict?: PredictPlan;
}

/**
 * Encodes one chunk (ts/codec/cpu/encode.ts): the chooser's pipeline, or `codec`.
 * `elementBytes` (the elements' little-endian bytes) is not modified. When `runs` are given (a
 * GPU encode), the elements are expanded from them instead (`elementBytes` is then unused).
 */
export function encodeChunk(
  cpu: CpuPath,
  type: ElementType,
  elementBytes: Uint8Array | { count: number; values: Uint8Array; lengths: Uint32Array; elementsHash?: number },
  options: EncodeChunkOptions,
): Promise<EncodedChunk> {
  const { codec, signal, elementsPtr, level, explain = true, huffmanLanes = false, predict } = options;
  const size = elementSize(type);
  const fromRuns = !(elementBytes instanceof Uint8Array);
  // elements already in the kernels' memory (a resident input) are read in place
  const inPlace = elementsPtr !== undefined && !fromRuns;
  const count = fromRuns ? elementBytes.count : elementBytes.length / size;
  const raw = count * size;
  const lossy = codec !== undefined && !Array.isArray(codec) ? codec : undefined;
  const errorBound = size === 4 || size === 8 ? lossy?.errorBound.abs : undefined;
  const pipeline = lossy !== undefined ? lossy.pipeline : (codec as number[] | undefined);
  const arenaBytes = encodeArenaBytes(count, size, errorBound !== undefined, predict !== undefined);
  const runCount = fromRuns ? elementBytes.lengths.length : 0;
  const sizes = fromRuns
    ? [raw + DECODE_SLACK_BYTES, arenaBytes, runCount * size + 16, runCount * 4 + 16]
    : [inPlace ? 0 : raw + DECODE_SLACK_BYTES, arenaBytes];
  return cpu.runChunk(
    'encodeChunk',
    raw,
    sizes,
    ([inBlock, arenaPtr, runValuesPtr, runLengthsPtr]) => {
      const inPtr = inPlace ? elementsPtr : inBlock;
      return {
        params: {
          elementSize: size,
          count,
          inPtr,
          arenaPtr,
          arenaBytes,
          pipeline,
          explain,
          ...(level !== undefined ? { level } : {}),
          ...(huffmanLanes ? { huffmanLanes } : {}),
          ...(errorBound !== undefined ? { errorBound } : {}),
          ...(predict !== undefined ? { predict } : {}),
          ...(fromRuns ? { runCount, runValuesPtr, runLengthsPtr, elementsHash: elementBytes.elementsHash } : {}),
        },
        regions: [
          { param: 'inPtr', bytes: raw + DECODE_SLACK_BYTES, access: fromRuns ? 'out' : 'in' },
          { param: 'arenaPtr', bytes: arenaBytes, access: 'out' },
          ...(fromRuns
            ? ([
                { param: 'runValuesPtr', bytes: runCount * size, access: 'in' },
                { param: 'runLengthsPtr', bytes: runCount * 4, access: 'in' },
              ] as const)
            : []),
        ],
        fill: () => {
          if (!fromRuns) {
            if (!inPlace) cpu.writeBytes(inPtr, elementBytes);
          } else {
            cpu.heap.bytes(runValuesPtr, runCount * size).set(elementBytes.values.subarray(0, runCount * size));
            const l = elementBytes.lengths;
            cpu.heap.bytes(runLengthsPtr, runCount * 4).set(new Uint8Array(l.buffer, l.byteOffset, runCount * 4));
          }
        },
      };
    },
    (result, [inPtr, arenaPtr]) => ({
      entry: result.entry,
      payload:
        result.payloadOffset < 0
          ? fromRuns
            ? cpu.copyOfBytes(inPtr, raw)
            : elementBytes
          : cpu.copyOfBytes(arenaPtr + result.payloadOffset, result.entry.payloadBytes),
      reason: result.reason,
    }),
    signal,
  );
}

/**
 * Decodes version-2 chunk `index` into `out`: its elements' bytes on the host (a view of
 * `entry.elementCount` x element size bytes), or a pointer into the CPU path's memory where the
 * workers write the elements in place (nothing is written past them). The payload is copied
 * into that memory first, unless `payloadPtr` says where it already lies there (with 16
 * readable bytes after it). Checks the payload and the elements against their tree hashes.
 * `entry` must have passed `readEntry`; payload and output must not overlap.
 * @throws ParleError CHECKSUM_MISMATCH, CORRUPT
 */
export function decodeChunk(
  cpu: CpuPath,
  type: ElementType,
  entry: ChunkEntry,
  payload: Uint8Array,
  out: Uint8Array | number,
  index: number,
  signal?: AbortSignal,
  payloadPtr?: number,
): Promise<void> {
  const size = elementSize(type);
  const count = entry.elementCount;
  const outBytes = count * size;
  const inPlace = typeof out === 'number';
  const arenaBytes = decodeArenaBytesFor(payload, entry, size, index) + (inPlace ? outBytes + DECODE_SLACK_BYTES + 64 : 0);
  return cpu.runChunk(
    'decodeChunk',
    outBytes,
    [payloadPtr === undefined ? payload.length + 16 : 0, arenaBytes, inPlace ? 0 : outBytes + DECODE_SLACK_BYTES],
    ([payloadBlock, arenaPtr, outBlock]) => {
      const pPtr = payloadPtr ?? payloadBlock;
      const outPtr = inPlace ? out : outBlock;
      return {
        params: { elementSize: size, entry, index, payloadPtr: pPtr, arenaPtr, arenaBytes, outPtr, exactOut: inPlace },
        regions: [
          { param: 'payloadPtr', bytes: payload.length + 16, access: 'in' },
          { param: 'arenaPtr', bytes: arenaBytes, access: 'out' },
          { param: 'outPtr', bytes: outBytes + (inPlace ? 0 : DECODE_SLACK_BYTES), access: 'out' },
        ],
        fill: () => {
          if (payloadPtr === undefined) cpu.writeBytes(pPtr, payload);
        },
      };
    },
    (_result, [, , outBlock]) => {
      if (!inPlace) cpu.readBytes(outBlock, outBytes, out);
    },
    signal,
  );
}

/**
 * Decodes a version-2 rle chunk down to its runs into the CPU path's memory at `valuesPtr` and
 * `lengthsPtr` (blocks the caller allocated from `cpu.heap`, laid out by `runsLayout`), for an
 * expand on the GPU (ts/codec/gpu/decode.ts). Checks the run lengths; no hash.
 * @throws ParleError CORRUPT
 */
export function decodeChunkRuns(
  cpu: CpuPath,
  type: ElementType,
  entry: ChunkEntry,
  payload: Uint8Array,
  index: number,
  valuesPtr: number,
  valueBytes: number,
  lengthsPtr: number,
  runs: number,
  signal?: AbortSignal,
): Promise<void> {
  const size = kernelSize(type);
  const arenaBytes = decodeArenaBytes(
    readDirectory(payload, payload.length, entry.stages ?? [], size, entry.elementCount, index),
    entry.elementCount,
    size,
  );
  return cpu.runChunk(
    'decodeRuns',
    entry.elementCount * size,
    [payload.length + 16, arenaBytes],
    ([payloadPtr, arenaPtr]) => ({
      params: { elementSize: size, entry, index, payloadPtr, arenaPtr, arenaBytes, valuesPtr, lengthsPtr },
      regions: [
        { param: 'payloadPtr', bytes: payload.length + 16, access: 'in' },
        { param: 'arenaPtr', bytes: arenaBytes, access: 'out' },
        { param: 'valuesPtr', bytes: valueBytes, access: 'out' },
        { param: 'lengthsPtr', bytes: runs * 4, access: 'out' },
      ],
      fill: () => cpu.writeBytes(payloadPtr, payload),
    }),
    () => undefined,
    signal,
  );
}

/** Byte offsets in a region of slots: each slot 16-byte aligned, `bytes(i)` long. */
export function slotOffsets(count: number, bytes: (i: number) => number): { at: number[]; total: number } {
  const at: number[] = new Array(count);
  let total = 0;
  for (let i = 0; i < count; i++) {
    at[i] = total;
    total += Math.ceil(bytes(i) / 16) * 16;
  }
  return { at, total };
}

/** Options of {@link encodeChunkRun}. */
export interface ChunkRunOptions {
  codec?: ChunkCodec;
  /** 1..9 (see EncodeChunkParams.level). */
  level?: number;
  /** Huffman streams in mode 3 (see EncodeChunkParams.huffmanLanes). */
  huffmanLanes?: boolean;
  signal?: AbortSignal;
  /** Where `bytes` already lies in the CPU path's memory (a resident input: read in place). */
  residentPtr?: number;
  /** Build the chooser's reasons. */
  explain?: boolean;
  /** Predict every chunk with this plan (ts/codec/predict.ts). */
  predict?: PredictPlan;
}

/**
 * Encodes consecutive chunks of `chunkLength` elements (the last may be shorter) of `bytes`, the
 * elements' little-endian bytes, all in one batch (ts/codec/cpu/batch.ts): spread over every
 * worker for inputs of 256 KiB or more. `read` gets every chunk's entry and payload; a payload
 * is a view into the CPU path's memory (or into `bytes` for a stored chunk) valid only until
 * `read` returns: copy what is kept. `bytes` is not modified.
 * @throws ParleError ABORTED, TOO_LARGE (memory)
 */
export function encodeChunkRun<R>(
  cpu: CpuPath,
  type: ElementType,
  bytes: Uint8Array,
  chunkLength: number,
  options: ChunkRunOptions,
  read: (chunks: EncodedChunk[]) => R,
): Promise<R> {
  const size = elementSize(type);
  const count = bytes.length / size;
  const jobs = Math.ceil(count / chunkLength);
  const chunkBytes = chunkLength * size;
  const lossy = options.codec !== undefined && !Array.isArray(options.codec) ? options.codec : undefined;
  const errorBound = size === 4 || size === 8 ? lossy?.errorBound.abs : undefined;
  const pipeline = lossy !== undefined ? lossy.pipeline : (options.codec as number[] | undefined);
  const arenaBytes = encodeArenaBytes(Math.min(count, chunkLength), size, errorBound !== undefined, options.predict !== undefined);
  const resident = options.residentPtr !== undefined;
  const slots = slotOffsets(jobs, (i) => payloadRoomBytes(Math.min(chunkBytes, bytes.length - i * chunkBytes)));
  return cpu.runChunks(
    'encodeChunks',
    bytes.length,
    jobs,
    JOB_TABLE,
    (participants) => [resident ? 0 : bytes.length + DECODE_SLACK_BYTES, slots.total, ...new Array<number>(participants).fill(arenaBytes)],
    ({ counterPtr, jobsPtr, blocks: [inBlock, outBlock, ...arenaPtrs] }, participants, staged) => {
      const inPtr = resident ? options.residentPtr! : inBlock;
      // the input is copied in by this thread; on workers, chunk by chunk after the tasks are
      // posted, so the workers start on the first chunks while the rest is copied (the copy of
      // a 7 MB photograph took 1.9 ms on the 2-core VM, a tenth of the call)
      const stage = staged && !resident && jobs > 1;
      // (writeBytes may write up to 7 bytes past a group: the next group's, not yet marked
      // ready, or the block's slack)
      const copyIn = (from: number, to: number) =>
        cpu.writeBytes(inPtr + from * chunkBytes, bytes.subarray(from * chunkBytes, Math.min(bytes.length, to * chunkBytes)));
      if (!resident && !stage) cpu.writeBytes(inPtr, bytes);
      const table = new Uint32Array(cpu.heap.buffer, jobsPtr, jobs * JOB_WORDS);
      for (let i = 0; i < jobs; i++) {
        const w = i * JOB_WORDS;
        table[w + EncodeJob.InPtr] = inPtr + i * chunkBytes;
        table[w + EncodeJob.Count] = Math.min(chunkLength, count - i * chunkLength);
        table[w + EncodeJob.OutPtr] = outBlock + slots.at[i];
      }
      const params = {
        elementSize: size,
        jobsPtr,
        jobs,
        counterPtr,
        arenaPtrs,
        arenaBytes,
        ...(pipeline !== undefined ? { pipeline } : {}),
        ...(options.level !== undefined ? { level: options.level } : {}),
        ...(options.huffmanLanes === true ? { huffmanLanes: true } : {}),
        ...(errorBound !== undefined ? { errorBound } : {}),
        ...(options.predict !== undefined ? { predict: options.predict } : {}),
        ...(options.explain === true ? { explain: true } : {}),
        ...(stage ? { staged: true } : {}),
      };
      if (!stage) {
        markReady(cpu.heap.buffer, counterPtr, jobs);
        return { params };
      }
      // the first chunk of each participant before the tasks go out, then the rest in groups
      const first = Math.min(jobs, participants);
      copyIn(0, first);
      markReady(cpu.heap.buffer, counterPtr, first);
      const group = Math.max(1, Math.floor((1 << 20) / chunkBytes));
      const feed = () => {
        for (let from = first; from < jobs; from += group) {
          const to = Math.min(jobs, from + group);
          copyIn(from, to);
          markReady(cpu.heap.buffer, counterPtr, to);
        }
      };
      return { params, feed };
    },
    (results, { jobsPtr, blocks: [, outBlock] }) => {
      const reasons = new Map<number, string>();
      for (const r of results) for (const [i, why] of r.reasons) reasons.set(i, why);
      const table = new Uint32Array(cpu.heap.buffer, jobsPtr, jobs * JOB_WORDS);
      const chunks: EncodedChunk[] = new Array(jobs);
      for (let i = 0; i < jobs; i++) {
        const words = table.subarray(i * JOB_WORDS, (i + 1) * JOB_WORDS);
        const entry = jobEntry(words);
        const stored = (words[EncodeJob.Flags] & JobFlags.Stored) !== 0;
        const payload = stored
          ? bytes.subarray(i * chunkBytes, i * chunkBytes + entry.payloadBytes)
          : cpu.heap.bytes(outBlock + slots.at[i], entry.payloadBytes);
        chunks[i] = {
          entry,
          payload,
          ...(stored ? {} : { payloadPtr: outBlock + slots.at[i] }),
          ...(options.explain === true ? { reason: reasons.get(i) ?? '' } : {}),
        };
      }
      return read(chunks);
    },
    options.signal,
  );
}

/** A chunk to decode: its entry (passed readEntry), index, and payload (host bytes, or where it lies in the CPU path's memory). */
export interface ChunkToDecode {
  entry: ChunkEntry;
  index: number;
  payload: Uint8Array;
  /** The payload's place in the CPU path's memory (with 16 readable bytes after it), when it lies there. */
  payloadPtr?: number;
}

/**
 * Decodes consecutive chunks of a version-2 or version-3 container into `out`, their elements
 * side by side: host bytes (a view of the chunks' elements), or a pointer into the CPU path's
 * memory (written in place, nothing past the elements). One batch (ts/codec/cpu/batch.ts),
 * spread over every worker for outputs of 256 KiB or more. Checks every payload's and
 * element's tree hash. Payloads and `out` must not overlap.
 * @throws ParleError CHECKSUM_MISMATCH, CORRUPT, ABORTED, TOO_LARGE (memory)
 */
export function decodeChunkRun(
  cpu: CpuPath,
  type: ElementType,
  chunks: readonly ChunkToDecode[],
  out: Uint8Array | number,
  signal?: AbortSignal,
  place?: Placement,
): Promise<void> {
  const size = elementSize(type);
  const inPlace = typeof out === 'number';
  if (inPlace && place !== undefined) throw new Error('decodeChunkRun: a placement needs a host out');
  let arenaBytes = 0;
  let outBytes = 0;
  for (const c of chunks) {
    const raw = c.entry.elementCount * size;
    const need = decodeArenaBytesFor(c.payload, c.entry, size, c.index) + (inPlace ? raw + DECODE_SLACK_BYTES + 64 : 0);
    if (need > arenaBytes) arenaBytes = need;
    outBytes += raw;
  }
  const payloadSlots = slotOffsets(chunks.length, (i) => (chunks[i].payloadPtr !== undefined ? 0 : chunks[i].payload.length + 16));
  const outSlots = slotOffsets(chunks.length, (i) => (inPlace ? 0 : chunks[i].entry.elementCount * size + DECODE_SLACK_BYTES));
  // each chunk's place in `out` (host bytes), and whether it was copied there yet
  const outAt: number[] = [];
  for (let i = 0, at = 0; i < chunks.length; at += chunks[i].entry.elementCount * size, i++) outAt.push(at);
  const copied = new Uint8Array(chunks.length);
  // a host result over a SharedArrayBuffer (not the kernels' memory) the workers can write
  const sharedOut =
    !inPlace && typeof SharedArrayBuffer !== 'undefined' && out.buffer instanceof SharedArrayBuffer && out.buffer !== cpu.heap.buffer
      ? out.buffer
      : undefined;
  let outBlockPtr = 0;
  const copyOut = (i: number) => {
    const raw = chunks[i].entry.elementCount * size;
    if (place === undefined) {
      cpu.readBytes(outBlockPtr + outSlots.at[i], raw, out as Uint8Array, outAt[i]);
      return;
    }
    // the chunk's part of the block, to its place
    placeFromMemory(
      cpu.context,
      place,
      outBlockPtr + outSlots.at[i],
      outAt[i] / size,
      chunks[i].entry.elementCount,
      out as Uint8Array,
      size,
    );
  };
  return cpu.runChunks(
    'decodeChunks',
    outBytes,
    chunks.length,
    JOB_TABLE,
    (participants) => [payloadSlots.total, outSlots.total, ...new Array<number>(participants).fill(arenaBytes)],
    ({ counterPtr, jobsPtr, blocks: [payloadBlock, outBlock, ...arenaPtrs] }, _participants, staged) => {
      outBlockPtr = outBlock;
      const table = new Uint32Array(cpu.heap.buffer, jobsPtr, chunks.length * JOB_WORDS);
      let inPlaceAt = 0;
      for (let i = 0; i < chunks.length; i++) {
        const c = chunks[i];
        let payloadPtr = c.payloadPtr;
        if (payloadPtr === undefined) {
          payloadPtr = payloadBlock + payloadSlots.at[i];
          cpu.writeBytes(payloadPtr, c.payload);
        }
        const outPtr = inPlace ? out + inPlaceAt : outBlock + outSlots.at[i];
        writeDecodeJob(table.subarray(i * JOB_WORDS, (i + 1) * JOB_WORDS), c.entry, c.index, payloadPtr, outPtr);
        inPlaceAt += c.entry.elementCount * size;
      }
      const params = { elementSize: size, jobsPtr, jobs: chunks.length, counterPtr, arenaPtrs, arenaBytes, exactOut: inPlace };
      if (inPlace || !staged) return { params };
      if (sharedOut !== undefined && (out as Uint8Array).byteLength < 2 ** 32) {
        // a result in shared memory: the workers copy each chunk there as they decode it (with
        // a placement, HostOutAt is the chunk's first element in the container)
        for (let i = 0; i < chunks.length; i++)
          table[i * JOB_WORDS + DecodeJob.HostOutAt] = place === undefined ? outAt[i] : outAt[i] / size;
        copied.fill(1);
        const hostOut = { buffer: sharedOut, byteOffset: (out as Uint8Array).byteOffset, ...(place !== undefined ? { place } : {}) };
        return { params: { ...params, hostOut } };
      }
      // on workers, into a host array: this thread copies each chunk out as it is decoded (woken
      // about 16 times a batch), instead of all of them after the last
      const notifyEvery = Math.max(1, Math.ceil(chunks.length / 16));
      const drain = (settled: Promise<unknown>) =>
        drainDecoded(cpu.heap.buffer, counterPtr, jobsPtr, chunks.length, copied, copyOut, settled);
      return { params: { ...params, notifyEvery }, drain };
    },
    () => {
      if (inPlace) return;
      for (let i = 0; i < chunks.length; i++) if (copied[i] === 0) copyOut(i);
    },
    signal,
  );
}
