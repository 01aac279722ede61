/**
 * Encoding and decoding of one .parle chunk on the CPU path. A chunk is independent of every
 * other, so chunks run in parallel, one a worker (the procedures are in ts/cpu/procedures.ts;
 * checksums are computed there too).
 */
import type { CpuPath } from '../cpu/cpu-path.js';
import { DECODE_SLACK_BYTES } from '../cpu/wasm.js';
import type { ElementType } from '../types.js';
import { elementSize } from '../types.js';
import { Encoding, type ChunkEntry } from './layout.js';
import { decodeArenaBytes, decodeArenaBytesFor, encodeArenaBytes, readDirectory } from '../codec/cpu-codec.js';
import { pipelineName, type Pipeline } from '../codec/stages.js';

/** An encoded chunk: its table entry and its payload. */
export interface EncodedChunk {
  entry: ChunkEntry;
  payload: Uint8Array;
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
    pipeline: pipelineName((entry.stages ?? []) as Pipeline, entry.quantize === true),
    payloadBytes: entry.payloadBytes,
    reason: reason ?? '',
  };
}

/**
 * How to code a chunk: a version-2 pipeline (stage ids), undefined for the chooser, or an f32
 * chunk quantized within an absolute error bound first (its codes by `pipeline` or the chooser).
 */
export type ChunkCodec = number[] | undefined | LossyCodec;

/** An error-bounded f32 codec (ts/codec/quantize.ts). */
export interface LossyCodec {
  pipeline?: number[];
  errorBound: { abs: number };
}

/**
 * Encodes one chunk as version 2 (ts/codec/cpu-codec.ts): the chooser's pipeline, or `codec`.
 * `elementBytes` (the elements' little-endian bytes) is not modified. When `runs` are given (a
 * GPU encode), the elements are expanded from them instead (`elementBytes` is then unused).
 */
export function encodeChunk2(
  cpu: CpuPath,
  type: ElementType,
  elementBytes: Uint8Array | { count: number; values: Uint8Array; lengths: Uint32Array; elementsHash?: number },
  codec: ChunkCodec,
  signal?: AbortSignal,
  elementsPtr?: number,
): Promise<EncodedChunk> {
  const size = elementSize(type);
  const fromRuns = !(elementBytes instanceof Uint8Array);
  // elements already in the kernels' memory (a resident input) are read in place
  const inPlace = elementsPtr !== undefined && !fromRuns;
  const count = fromRuns ? elementBytes.count : elementBytes.length / size;
  const raw = count * size;
  const lossy = codec !== undefined && !Array.isArray(codec) ? codec : undefined;
  const errorBound = size === 4 ? lossy?.errorBound.abs : undefined;
  const pipeline = lossy !== undefined ? lossy.pipeline : (codec as number[] | undefined);
  const arenaBytes = encodeArenaBytes(count, size, errorBound !== undefined);
  const runCount = fromRuns ? elementBytes.lengths.length : 0;
  const sizes = fromRuns
    ? [raw + DECODE_SLACK_BYTES, arenaBytes, runCount * size + 16, runCount * 4 + 16]
    : [inPlace ? 0 : raw + DECODE_SLACK_BYTES, arenaBytes];
  return cpu.runChunk(
    'encodeChunk2',
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
          ...(errorBound !== undefined ? { errorBound } : {}),
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
            if (!inPlace) cpu.heap.bytes(inPtr, raw).set(elementBytes);
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
            ? cpu.heap.bytes(inPtr, raw).slice()
            : elementBytes
          : cpu.heap.bytes(arenaPtr + result.payloadOffset, result.entry.payloadBytes).slice(),
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
export function decodeChunk2(
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
    'decodeChunk2',
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
          if (payloadPtr === undefined) cpu.heap.bytes(pPtr, payload.length).set(payload);
        },
      };
    },
    (_result, [, , outBlock]) => {
      if (!inPlace) out.set(cpu.heap.bytes(outBlock, outBytes));
    },
    signal,
  );
}

/**
 * Decodes chunk `index` into `out` (its elements' bytes, `entry.elementCount` x element size
 * long), checking the payload and the decoded elements against their checksums. `entry` must
 * have passed `readEntry`. `payload` and `out` must not overlap.
 * @throws ParleError CHECKSUM_MISMATCH, CORRUPT
 */
export function decodeChunk(
  cpu: CpuPath,
  type: ElementType,
  entry: ChunkEntry,
  payload: Uint8Array,
  out: Uint8Array,
  index: number,
  signal?: AbortSignal,
): Promise<void> {
  const size = elementSize(type);
  const outBytes = entry.elementCount * size;
  return cpu.runChunk(
    'decodeChunk',
    outBytes,
    [payload.length, entry.runCount * 4, outBytes + DECODE_SLACK_BYTES],
    ([payloadPtr, lengthsPtr, outPtr]) => ({
      params: { elementSize: size, entry, index, payloadPtr, lengthsPtr, outPtr },
      regions: [
        { param: 'payloadPtr', bytes: payload.length, access: 'in' },
        { param: 'lengthsPtr', bytes: entry.runCount * 4, access: 'out' },
        { param: 'outPtr', bytes: outBytes + DECODE_SLACK_BYTES, access: 'out' },
      ],
      fill: () => cpu.heap.bytes(payloadPtr, payload.length).set(payload),
    }),
    (_result, [, , outPtr]) => {
      out.set(cpu.heap.bytes(outPtr, outBytes));
    },
    signal,
  );
}

/**
 * Checks chunk `index`'s payload checksum and, for an rle chunk, decodes its run lengths (LEB128)
 * into the CPU path's memory at `lengthsPtr` (room for entry.runCount u32, allocated by the
 * caller from `cpu.heap`) and checks that they sum to the chunk's element count. A stored chunk's
 * payload is its elements; nothing is decoded. The decoded elements' checksum is not checked here
 * (the elements are expanded elsewhere: see ts/format/device-decode.ts).
 * @throws ParleError CHECKSUM_MISMATCH (payload), CORRUPT
 */
export function decodeChunkRuns(
  cpu: CpuPath,
  type: ElementType,
  entry: ChunkEntry,
  payload: Uint8Array,
  lengthsPtr: number,
  index: number,
  signal?: AbortSignal,
): Promise<void> {
  const size = elementSize(type);
  const lengthBytes = entry.encoding === Encoding.Stored ? 0 : entry.runCount * 4;
  // the decoded size picks a worker over the inline executor, as for decodeChunk: the LEB128
  // decode scales with the runs, and small payloads of large chunks are common
  return cpu.runChunk(
    'decodeChunk',
    entry.elementCount * size,
    [payload.length],
    ([payloadPtr]) => ({
      params: { elementSize: size, entry, index, payloadPtr, lengthsPtr, outPtr: 0, runsOnly: true },
      regions: [
        { param: 'payloadPtr', bytes: payload.length, access: 'in' },
        { param: 'lengthsPtr', bytes: lengthBytes, access: 'out' },
      ],
      fill: () => cpu.heap.bytes(payloadPtr, payload.length).set(payload),
    }),
    () => undefined,
    signal,
  );
}

/**
 * Decodes a version-2 rle chunk down to its runs into the CPU path's memory at `valuesPtr` and
 * `lengthsPtr` (blocks the caller allocated from `cpu.heap`, laid out by `runsLayout`), for an
 * expand on the GPU (ts/format/device-decode2.ts). Checks the run lengths; no hash.
 * @throws ParleError CORRUPT
 */
export function decodeChunk2Runs(
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
  const size = elementSize(type);
  const arenaBytes = decodeArenaBytes(
    readDirectory(payload, payload.length, entry.stages ?? [], size, entry.elementCount, index),
    entry.elementCount,
    size,
  );
  return cpu.runChunk(
    'decodeRuns2',
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
      fill: () => cpu.heap.bytes(payloadPtr, payload.length).set(payload),
    }),
    () => undefined,
    signal,
  );
}
