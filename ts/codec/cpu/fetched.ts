/**
 * Containers decoded by the worker that fetched them (ts/cpu/protocol.ts FetchTask): the
 * `decodeFetched` procedure runs in a worker once per fetched container, decodes it in a scratch
 * block of the kernels' memory the engine's thread reserved for the task, and writes its
 * elements to their place in a host result over a SharedArrayBuffer. No message a chunk: the
 * engine's thread sends one task a worker and reads one answer (ts/codec/arrays.ts
 * decompressFetched; a Zarr read through parle-codec/zarr's WorkerFetchStore).
 */
import { ErrorCodes, ParleError } from '../../errors.js';
import { readAtBytes, walkChunks } from '../../format/container.js';
import { HEADER_BYTES, readHeader } from '../../format/layout.js';
import { DECODE_SLACK_BYTES } from '../../cpu/wasm.js';
import { copyIntoMemory } from '../../cpu/procedures.js';
import { elementSize, type ElementType } from '../../types.js';
import { checkPlacement, type Placement } from '../place.js';
import type { CodecContext } from './arena.js';
import { COUNTER_BYTES, DecodeJob, JOB_WORDS, decodeChunksAt, writeDecodeJob } from './batch.js';
import { slotOffsets } from './chunks.js';
import { decodeArenaBytesFor } from './decode.js';

/** Parameters of `decodeFetched`; `body` and `item` are added by the worker for each response. */
export interface DecodeFetchedParams {
  /** The element type every container must hold (CORRUPT otherwise). */
  type: ElementType;
  /** The scratch block: [scratchPtr, scratchPtr + scratchBytes) of the kernels' memory, this task's alone. */
  scratchPtr: number;
  scratchBytes: number;
  /** The result: a SharedArrayBuffer other than the kernels' memory, from byteOffset, of `length` elements. */
  out: { buffer: SharedArrayBuffer; byteOffset: number; length: number };
  /** Each request's placement of its container's elements in the result. */
  places: Placement[];
  body?: Uint8Array;
  item?: number;
}

/**
 * Bytes of scratch a `decodeFetched` task reserves for containers of up to `count` elements of
 * `size` bytes, before it knows them: a container's payloads (its raw size at most for any
 * container worth fetching) and elements, twice its raw bytes, and one chunk's decode arena
 * (./decode.ts decodeArenaBytes: the decoded streams, up to the chunk's bytes and 5 bytes of run
 * lengths an element; 4 bytes an element; its elements twice, predicted), 3x the chunk's bytes
 * and 10 bytes an element, for a chunk of up to {@link FETCHED_CHUNK_BYTES}; and 1 MiB. A
 * container whose decode needs more (larger chunks) comes back to the engine's thread. (4x the
 * raw bytes and 1 MiB sent every 1 MiB chunk of u8 volumes, one `.parle` chunk each whose arena
 * alone is 7 MiB, back to the engine's thread.)
 */
export function fetchedScratchBytes(count: number, size: number): number {
  const chunk = Math.min(count, Math.floor(FETCHED_CHUNK_BYTES / size));
  return 2 * count * size + 3 * chunk * size + 10 * chunk + (1 << 20);
}

/** The largest `.parle` chunk {@link fetchedScratchBytes} makes room to decode: the Zarr codec's (ts/zarr/index.ts), 4 MiB. */
const FETCHED_CHUNK_BYTES = 4 << 20;

/** Rounds up to 16 bytes. */
const align = (n: number) => Math.ceil(n / 16) * 16;

/**
 * Decodes the container in `params.body` into its place (`params.places[params.item]`) in the
 * result, every chunk's payload and elements checked as any decode. Returns false (the body
 * handed back: the engine's thread decodes it) for a version-1 container or one whose decode does
 * not fit the scratch block.
 * @throws ParleError the reader's codes (NOT_PARLE, TRUNCATED, CORRUPT, CHECKSUM_MISMATCH, ...);
 *   CORRUPT for a container of another type than the array's or another element count than the
 *   placement's shape; INVALID_OPTION, LENGTH_MISMATCH (the placement against `out`)
 */
export function decodeFetchedAt(ctx: CodecContext, p: DecodeFetchedParams): boolean {
  const body = p.body!;
  const place = p.places[p.item!];
  const count = place.shape.reduce((a, d) => a * d, 1);
  const header = readHeader(body.subarray(0, Math.min(body.length, HEADER_BYTES)), Number.MAX_SAFE_INTEGER);
  if (header.version === 1) return false;
  if (header.type !== p.type || header.elementCount !== count)
    throw new ParleError(
      ErrorCodes.CORRUPT,
      `not a chunk of this array: a container of ${header.elementCount} ${header.type} elements; the array's chunk holds ${count} ${p.type}`,
    );
  const { chunks } = walkChunks(readAtBytes(body), body.length, count);
  const checked = checkPlacement(place, header.elementCount, p.out.length);
  const size = elementSize(p.type) as 1 | 2 | 4 | 8;
  // the scratch: counters, the job table, the payloads, each chunk's elements, one arena
  let arenaBytes = 0;
  for (const c of chunks)
    arenaBytes = Math.max(
      arenaBytes,
      decodeArenaBytesFor(body.subarray(c.payloadOffset, c.payloadOffset + c.payloadBytes), c, size, c.index),
    );
  const payloadSlots = slotOffsets(chunks.length, (i) => chunks[i].payloadBytes + 16);
  const outSlots = slotOffsets(chunks.length, (i) => chunks[i].elementCount * size + DECODE_SLACK_BYTES);
  const counterPtr = align(p.scratchPtr);
  const jobsPtr = counterPtr + align(COUNTER_BYTES);
  const payloadPtr = jobsPtr + align(chunks.length * JOB_WORDS * 4);
  const outPtr = payloadPtr + payloadSlots.total;
  const arenaPtr = outPtr + outSlots.total;
  if (arenaPtr + arenaBytes > p.scratchPtr + p.scratchBytes) return false;
  const memory = new Uint8Array(ctx.memory.buffer);
  memory.fill(0, counterPtr, counterPtr + COUNTER_BYTES);
  const table = new Uint32Array(ctx.memory.buffer, jobsPtr, chunks.length * JOB_WORDS);
  chunks.forEach((c, i) => {
    // (a slot has 16 bytes of room after its payload)
    copyIntoMemory(ctx, payloadPtr + payloadSlots.at[i], body.subarray(c.payloadOffset, c.payloadOffset + c.payloadBytes));
    const words = table.subarray(i * JOB_WORDS, (i + 1) * JOB_WORDS);
    writeDecodeJob(words, c, c.index, payloadPtr + payloadSlots.at[i], outPtr + outSlots.at[i]);
    // with a placement, HostOutAt is the chunk's first element in the container
    words[DecodeJob.HostOutAt] = c.elementOffset;
  });
  decodeChunksAt(ctx, {
    elementSize: size,
    jobsPtr,
    jobs: chunks.length,
    counterPtr,
    arenaPtrs: [arenaPtr],
    arenaBytes,
    exactOut: false,
    hostOut: { buffer: p.out.buffer, byteOffset: p.out.byteOffset, place: checked },
  });
  return true;
}
