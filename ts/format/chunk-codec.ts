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

/** An encoded chunk: its table entry and its payload. */
export interface EncodedChunk {
  entry: ChunkEntry;
  payload: Uint8Array;
}

/**
 * Encodes one chunk of elements, given as their little-endian bytes, choosing RLE only when
 * its payload is strictly smaller than the raw bytes. `elementBytes` is not modified.
 */
export function encodeChunk(cpu: CpuPath, type: ElementType, elementBytes: Uint8Array, signal?: AbortSignal): Promise<EncodedChunk> {
  const size = elementSize(type);
  const count = elementBytes.length / size;
  const raw = elementBytes.length;
  return cpu.runChunk(
    'encodeChunk',
    raw,
    [raw, raw, count * 4, count * 5],
    ([inPtr, valuesPtr, lengthsPtr, varintPtr]) => ({
      params: { elementSize: size, count, inPtr, valuesPtr, lengthsPtr, varintPtr },
      regions: [
        { param: 'inPtr', bytes: raw, access: 'in' },
        { param: 'valuesPtr', bytes: raw, access: 'out' },
        { param: 'lengthsPtr', bytes: count * 4, access: 'out' },
        { param: 'varintPtr', bytes: count * 5, access: 'out' },
      ],
      fill: () => cpu.heap.bytes(inPtr, raw).set(elementBytes),
    }),
    (entry, [, valuesPtr]) => ({
      entry,
      // A stored payload is the input itself; an rle one was left at valuesPtr.
      payload: entry.encoding === Encoding.Stored ? elementBytes : cpu.heap.bytes(valuesPtr, entry.payloadBytes).slice(),
    }),
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
 * Encodes one chunk of `count` elements given as its maximal runs (`values`: the runs' values'
 * little-endian bytes, runCount x element size; `lengths`: u32, summing to `count`), as
 * {@link encodeChunk} would encode the elements: same payload, same checksums (the runs are
 * expanded into the CPU path's memory for the elements' XXH64 and for a stored payload).
 */
export function encodeChunkFromRuns(
  cpu: CpuPath,
  type: ElementType,
  count: number,
  values: Uint8Array,
  lengths: Uint32Array,
  signal?: AbortSignal,
): Promise<EncodedChunk> {
  const size = elementSize(type);
  const raw = count * size;
  const runCount = lengths.length;
  return cpu.runChunk(
    'encodeChunk',
    raw,
    [raw + DECODE_SLACK_BYTES, raw, runCount * 5, values.length, runCount * 4],
    ([inPtr, valuesPtr, varintPtr, runValuesPtr, runLengthsPtr]) => ({
      params: { elementSize: size, count, inPtr, valuesPtr, lengthsPtr: 0, varintPtr, runCount, runValuesPtr, runLengthsPtr },
      regions: [
        { param: 'runValuesPtr', bytes: values.length, access: 'in' },
        { param: 'runLengthsPtr', bytes: runCount * 4, access: 'in' },
        { param: 'inPtr', bytes: raw + DECODE_SLACK_BYTES, access: 'out' },
        { param: 'valuesPtr', bytes: raw, access: 'out' },
        { param: 'varintPtr', bytes: runCount * 5, access: 'out' },
      ],
      fill: () => {
        cpu.heap.bytes(runValuesPtr, values.length).set(values);
        cpu.heap.bytes(runLengthsPtr, runCount * 4).set(new Uint8Array(lengths.buffer, lengths.byteOffset, runCount * 4));
      },
    }),
    (entry, [inPtr, valuesPtr]) => ({
      entry,
      payload: cpu.heap.bytes(entry.encoding === Encoding.Stored ? inPtr : valuesPtr, entry.payloadBytes).slice(),
    }),
    signal,
  );
}
