/**
 * Whole arrays to .parle containers and back on the CPU path, chunks in parallel over the
 * workers. The container's bytes (assembly, the table walk) are ts/format/container.ts; the
 * streaming twins are in ts/codec/stream.ts.
 */
import type { CpuPath } from '../cpu/cpu-path.js';
import { debug, debugEnabled } from '../platform/node.js';
import { ErrorCodes, ParleError } from '../errors.js';
import type { ParleArray } from '../types.js';
import { arrayConstructor, bytesOf, elementSize, elementTypeOf, holdsType, type ElementType } from '../types.js';
import {
  chunkReport,
  decodeChunk,
  decodeChunkRun,
  encodeChunk,
  encodeChunkRun,
  type ChunkReport,
  type ChunkToDecode,
  type EncodedChunk,
} from './cpu/chunks.js';
import { decodeLegacyChunk } from './legacy/chunk.js';
import { fetchedScratchBytes } from './cpu/fetched.js';
import { checkPlacement, placeBytes, type Placement } from './place.js';
import type { Header, LocatedChunk } from '../format/layout.js';
import type { WorkerRequestInit } from '../cpu/protocol.js';
import { assembleContainer, readAtBytes, walkChunks } from '../format/container.js';
import { HEADER_BYTES, makeHeader, readHeader } from '../format/layout.js';
import { chunkCodecOf, chunkingOf, chunkLengthOf, predictPlanOf, type CompressSettings } from './settings.js';

/**
 * Runs `fn` over `count` items with at most `concurrency` at once; resolves to the results in
 * order. The first failure rejects after every started call has settled.
 */
export async function mapLimited<R>(count: number, concurrency: number, fn: (index: number) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(count);
  let next = 0;
  let failure: { error: unknown } | undefined;
  const lane = async () => {
    while (next < count && !failure) {
      const index = next++;
      try {
        results[index] = await fn(index);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, lane));
  if (failure) throw failure.error;
  return results;
}

/**
 * Compresses a whole array into one .parle container (the current version), chunks of
 * `settings.chunkBytes` in parallel: `settings.codec` fixes every chunk's pipeline (undefined:
 * the chooser picks per chunk at `settings.level`), `settings.errorBound` quantizes f32 first,
 * `settings.decoder` lays the Huffman streams out for the CPU (mode 2) or a GPU (mode 3,
 * docs/format.md "Mode 3: interleaved lanes"). With `target` (at least compressBound bytes, not
 * overlapping `input`) the container is written at its start and a view of it returned.
 * @throws ParleError TOO_LARGE (memory), ABORTED, WORKER_FAILED
 */
export async function compressArray(cpu: CpuPath, input: ParleArray, settings: CompressSettings, target?: Uint8Array): Promise<Uint8Array> {
  return (await compressArrayReport(cpu, input, settings, target)).bytes;
}

/** {@link compressArray}, with what each chunk was coded with and why (`explain`: the chooser's reasons too). */
export async function compressArrayReport(
  cpu: CpuPath,
  input: ParleArray,
  settings: CompressSettings,
  target?: Uint8Array,
): Promise<{ bytes: Uint8Array; reports: ChunkReport[] }> {
  const { chunkBytes, signal, level } = settings;
  const codec = chunkCodecOf(settings);
  const explain = settings.explain ?? debugEnabled();
  const huffmanLanes = settings.decoder === 'gpu';
  const type = settings.type ?? (elementTypeOf(input) as ElementType);
  const bytes = bytesOf(input);
  const { chunkLength, plan: predict } = chunkingOf(
    settings,
    type,
    input.length,
    chunkLengthOf(settings, type, chunkBytes),
    predictPlanOf(settings, type, bytes),
    bytes,
  );
  const header = makeHeader(type, input.length, chunkLength, level, settings.shape);
  const chunkByteLength = header.chunkLength * elementSize(type);
  const resident = cpu.isResident(input);
  /** The container and the reports, from every chunk's entry and payload. */
  const residentTarget = target !== undefined && (cpu.isResident(target) || target.buffer === cpu.heap.buffer);
  const finish = async (chunks: readonly EncodedChunk[]) => {
    const reports = chunks.map((c, i) => chunkReport(i, c));
    if (explain) debug(() => reports.map((r) => `compress chunk ${r.index}: ${r.reason}`).join('\n'));
    // a resident target: the payloads in the CPU path's memory are copied by the workers, each
    // a run of them, once the header and entries are written
    const ranges: [number, number, number][] = [];
    // else payloads in that memory go through readBytes (V8's copy out of shared memory is a
    // byte at a time where the alignments differ, as a payload's place in a container does)
    const copy = (chunk: EncodedChunk, out: Uint8Array, at: number) => {
      const n = chunk.payload.length;
      // (a stored chunk's payload is its elements: in that memory when the input is resident,
      // and not scratch, so never through readBytes, which may move its source)
      const inMemory = chunk.payloadPtr !== undefined || chunk.payload.buffer === cpu.heap.buffer;
      if (residentTarget && inMemory) ranges.push([out.byteOffset + at, chunk.payloadPtr ?? chunk.payload.byteOffset, n]);
      else if (chunk.payloadPtr !== undefined) cpu.readBytes(chunk.payloadPtr, n, out, at);
      else out.set(chunk.payload, at);
    };
    const bytes = assembleContainer(header, chunks, target, copy);
    await cpu.copyRanges(ranges, signal);
    return { bytes, reports };
  };
  if (cpu.shared || cpu.pool === undefined) {
    // one batch: every worker takes chunks from one job table, the container is assembled from
    // the payloads where the workers left them (one copy)
    return encodeChunkRun(
      cpu,
      type,
      bytes,
      header.chunkLength,
      { codec, level, signal, explain, huffmanLanes, predict, ...(resident ? { residentPtr: input.byteOffset } : {}) },
      finish,
    );
  }
  // workers that own their memories (no SharedArrayBuffer): a task a chunk, its bytes sent along
  const chunks = await mapLimited(header.chunkCount, cpu.chunkConcurrency, (i) =>
    encodeChunk(cpu, type, bytes.subarray(i * chunkByteLength, (i + 1) * chunkByteLength), {
      codec,
      signal,
      // a resident input is read in place by the workers: no copy in
      ...(resident ? { elementsPtr: input.byteOffset + i * chunkByteLength } : {}),
      level,
      explain,
      huffmanLanes,
      predict,
    }),
  );
  return finish(chunks);
}

/**
 * Decompresses a whole container, chunks in parallel; see {@link Engine.decompress}. The result
 * is `out` when given (checked: the container's type and element count, no overlap with
 * `bytes`), else a new array: resident in the kernels' memory when `bytes` is (`bytesResident`),
 * else a host array. Chunks decode in place into a resident result (no copy out) and read their
 * payloads in place from resident `bytes` (no copy in).
 * @throws ParleError (the reader's codes), INVALID_ARGUMENT (out's type or overlap), LENGTH_MISMATCH (out's length)
 */
export async function decompressBytes(
  cpu: CpuPath,
  bytes: Uint8Array,
  maxElements: number,
  signal?: AbortSignal,
  options: { out?: ParleArray; bytesResident?: boolean; place?: Placement } = {},
): Promise<ParleArray> {
  const { header, chunks } = walkChunks(readAtBytes(bytes), bytes.length, maxElements);
  const size = elementSize(header.type);
  const out = options.out;
  if (options.place !== undefined)
    return decompressPlaced(cpu, bytes, header, chunks, options.place, out!, signal, options.bytesResident === true);
  if (out !== undefined) checkOut(cpu, out, header.type, header.elementCount, bytes, options.bytesResident === true);
  const result =
    out ??
    (options.bytesResident
      ? cpu.residentResult(header.type, header.elementCount)
      : new (arrayConstructor(header.type))(header.elementCount));
  const inPlace = cpu.isResident(result);
  const resultBytes = bytesOf(result);
  if (header.version !== 1 && (cpu.shared || cpu.pool === undefined)) {
    // one batch over every chunk (see compressArrayReport)
    await decodeChunkRun(
      cpu,
      header.type,
      chunksToDecode(bytes, chunks, options.bytesResident === true),
      inPlace ? result.byteOffset : resultBytes,
      signal,
    );
    return result;
  }
  await mapLimited(chunks.length, cpu.chunkConcurrency, (i) => {
    const chunk = chunks[i];
    const start = chunk.elementOffset * size;
    const payload = bytes.subarray(chunk.payloadOffset, chunk.payloadOffset + chunk.payloadBytes);
    const target = resultBytes.subarray(start, start + chunk.elementCount * size);
    if (header.version === 1) return decodeLegacyChunk(cpu, header.type, chunk, payload, target, chunk.index, signal);
    return decodeChunk(
      cpu,
      header.type,
      chunk,
      payload,
      inPlace ? result.byteOffset + start : target,
      chunk.index,
      signal,
      options.bytesResident ? bytes.byteOffset + chunk.payloadOffset : undefined,
    );
  });
  return result;
}

/**
 * Decompresses a list of whole containers (all of one element type) on the CPU into one new array
 * of their elements one after another, each container into its place, the containers
 * concurrently (a container of one chunk decodes on one worker). `maxElements` bounds the list's
 * total. See {@link Engine.decompress}.
 * @throws ParleError INVALID_ARGUMENT (containers of different element types), LIMIT_EXCEEDED (the
 *   total), the reader's codes
 */
export async function decompressList(
  cpu: CpuPath,
  list: readonly Uint8Array[],
  maxElements: number,
  signal?: AbortSignal,
): Promise<ParleArray> {
  const headers = list.map((v) => readHeader(v.subarray(0, Math.min(v.length, HEADER_BYTES)), maxElements));
  const type = headers[0].type;
  const other = headers.findIndex((h) => h.type !== type);
  if (other >= 0)
    throw new ParleError(ErrorCodes.INVALID_ARGUMENT, `container ${other} holds ${headers[other].type} elements, container 0 ${type}`);
  const total = headers.reduce((sum, h) => sum + h.elementCount, 0);
  if (total > maxElements)
    throw new ParleError(ErrorCodes.LIMIT_EXCEEDED, `the list holds ${total} elements, more than maxElements (${maxElements})`);
  const out = new (arrayConstructor(type))(total) as ParleArray;
  let end = 0;
  const starts = headers.map((h) => (end += h.elementCount) - h.elementCount);
  await mapLimited(list.length, cpu.chunkConcurrency, (i) =>
    decompressBytes(cpu, list[i], maxElements, signal, { out: out.subarray(starts[i], starts[i] + headers[i].elementCount) as ParleArray }),
  );
  return out;
}

/** The chunks of a container in `bytes` as decodeChunkRun takes them (`resident`: `bytes` lies in the CPU path's memory). */
function chunksToDecode(bytes: Uint8Array, chunks: readonly LocatedChunk[], resident: boolean): ChunkToDecode[] {
  return chunks.map((c) => ({
    entry: c,
    index: c.index,
    payload: bytes.subarray(c.payloadOffset, c.payloadOffset + c.payloadBytes),
    ...(resident ? { payloadPtr: bytes.byteOffset + c.payloadOffset } : {}),
  }));
}

/**
 * {@link decompressBytes} with a placement (ts/codec/place.ts): the container's elements, an
 * array of `place.shape`, have their block written into `out` (of the container's type, any
 * length the block fits); by the workers as they decode where `out` is over a SharedArrayBuffer,
 * else by this thread from each decoded chunk. Version-1 containers and workers that own their
 * memories decode whole first, then place.
 * @throws ParleError as decompressBytes; INVALID_OPTION, LENGTH_MISMATCH (checkPlacement);
 *   INVALID_ARGUMENT (`out` of another type, in the kernels' memory, or overlapping `bytes`)
 */
async function decompressPlaced(
  cpu: CpuPath,
  bytes: Uint8Array,
  header: Header,
  chunks: readonly LocatedChunk[],
  placement: Placement,
  out: ParleArray,
  signal: AbortSignal | undefined,
  bytesResident: boolean,
): Promise<ParleArray> {
  if (!holdsType(out, header.type))
    throw new ParleError(ErrorCodes.INVALID_ARGUMENT, `options.out must hold ${header.type} elements (the container's type)`);
  if (cpu.isResident(out)) throw new ParleError(ErrorCodes.INVALID_ARGUMENT, 'options.out with options.place must be a host array');
  if (
    out.buffer === bytes.buffer &&
    out.byteOffset < bytes.byteOffset + bytes.byteLength &&
    bytes.byteOffset < out.byteOffset + out.byteLength
  )
    throw new ParleError(ErrorCodes.INVALID_ARGUMENT, 'options.out overlaps the input');
  const place = checkPlacement(placement, header.elementCount, out.length);
  const outBytes = bytesOf(out);
  if (header.version !== 1 && (cpu.shared || cpu.pool === undefined)) {
    await decodeChunkRun(cpu, header.type, chunksToDecode(bytes, chunks, bytesResident), outBytes, signal, place);
    return out;
  }
  const whole = await decompressBytes(cpu, bytes, header.elementCount, signal, { bytesResident });
  placeBytes(place, bytesOf(whole), 0, outBytes, elementSize(header.type));
  return out;
}

/** A container to fetch and decode into its place in a result (see {@link decompressFetched}). */
export interface ContainerRequest {
  /** An absolute URL. */
  url: string;
  init: WorkerRequestInit;
  /** Where the container's elements go in the result (its `shape` is the container's). */
  place: Placement;
}

/**
 * Fetches containers and decodes each into its place in `out` on the workers, the worker that
 * fetched a container decoding it (ts/codec/cpu/fetched.ts): the requests split into one task a
 * worker, each with a scratch block of the kernels' memory, so this thread posts one message a
 * worker and reads one answer, whatever the number of containers. `out` must be over a
 * SharedArrayBuffer (not the kernels' memory) and the workers must share memory; a container
 * that does not fit its worker's scratch (or of version 1) comes back and is decoded here.
 * Every request runs to its end before an error is thrown (the first in request order).
 * @returns the indices of the requests answered 404 (their places are left as they were)
 * @throws ParleError IO_ERROR (a failed fetch; a status other than 200, 206 and 404), the
 *   reader's codes, CORRUPT (a container of another type), INVALID_OPTION and LENGTH_MISMATCH
 *   (a placement), ABORTED, WORKER_FAILED
 */
export async function decompressFetched(
  cpu: CpuPath,
  requests: readonly ContainerRequest[],
  out: ParleArray,
  signal?: AbortSignal,
): Promise<number[]> {
  const type = elementTypeOf(out)!;
  const size = elementSize(type);
  const pool = cpu.pool;
  if (pool === undefined || !cpu.shared || !(out.buffer instanceof SharedArrayBuffer) || cpu.isResident(out))
    throw new Error('decompressFetched needs workers that share memory and a result over a SharedArrayBuffer');
  const groups = Array.from({ length: Math.min(pool.concurrency, requests.length) }, () => [] as number[]);
  requests.forEach((_, i) => groups[i % groups.length].push(i));
  const outShared = { buffer: out.buffer, byteOffset: out.byteOffset, length: out.length };
  const settled = await Promise.allSettled(
    groups.map((group) => {
      const count = Math.max(...group.map((i) => requests[i].place.shape.reduce((a, d) => a * d, 1)));
      const scratchBytes = fetchedScratchBytes(count, size);
      return cpu.withBlocks(
        [scratchBytes],
        async ([block]) => {
          const items = await pool.runFetched(
            {
              proc: 'decodeFetched',
              params: { type, scratchPtr: block!.ptr, scratchBytes, out: outShared, places: group.map((i) => requests[i].place) },
              regions: [],
              requests: group.map((i) => ({ url: requests[i].url, init: requests[i].init })),
            },
            signal,
          );
          return items.map((item, k) => ({ item, index: group[k] }));
        },
        signal,
      );
    }),
  );
  const missing: number[] = [];
  const errors: { index: number; error: unknown }[] = [];
  const fallbacks: Promise<unknown>[] = [];
  for (const s of settled) {
    if (s.status === 'rejected') {
      errors.push({ index: -1, error: s.reason });
      continue;
    }
    for (const { item, index } of s.value) {
      const url = requests[index].url;
      if (item.failed !== undefined)
        errors.push({ index, error: new ParleError(ErrorCodes.IO_ERROR, `fetch ${url} failed: ${item.failed}`) });
      else if (item.error !== undefined) errors.push({ index, error: new ParleError(item.error.code, `${url}: ${item.error.message}`) });
      else if (item.status === 404) missing.push(index);
      else if (item.status !== 200 && item.status !== 206)
        errors.push({
          index,
          error: new ParleError(ErrorCodes.IO_ERROR, `${url}: unexpected response status ${item.status} ${item.statusText}`),
        });
      else if (item.value === false) {
        // not decodable in the worker's scratch: here, as any placed decode
        fallbacks.push(
          decompressPlacedHere(cpu, new Uint8Array(item.body!), requests[index].place, out, signal).catch((error: unknown) =>
            errors.push({ index, error }),
          ),
        );
      }
    }
  }
  await Promise.all(fallbacks);
  if (errors.length > 0) throw errors.sort((a, b) => a.index - b.index)[0].error;
  return missing.sort((a, b) => a - b);
}

/**
 * A container decoded into its place in `out` on this thread's terms (decompressBytes with a
 * placement), as a fetched one: a container of another type than `out`'s or another element
 * count than the placement's shape is CORRUPT (not a chunk of this array).
 * @throws ParleError as decompressBytes with a placement; CORRUPT for another type
 */
export async function decompressPlacedHere(
  cpu: CpuPath,
  bytes: Uint8Array,
  place: Placement,
  out: ParleArray,
  signal?: AbortSignal,
): Promise<void> {
  const count = place.shape.reduce((a, d) => a * d, 1);
  const header = readHeader(bytes.subarray(0, Math.min(bytes.length, HEADER_BYTES)), Number.MAX_SAFE_INTEGER);
  if (!holdsType(out, header.type) || header.elementCount !== count)
    throw new ParleError(
      ErrorCodes.CORRUPT,
      `not a chunk of this array: a container of ${header.elementCount} ${header.type} elements; the array's chunk holds ${count} ${elementTypeOf(out)}`,
    );
  await decompressBytes(cpu, bytes, count, signal, { out, place });
}

/**
 * Checks a caller-owned output: `type` and `length` elements, not detached, not overlapping `input`
 * (`inputResident`: the input lives in the kernels' memory).
 * @throws ParleError INVALID_ARGUMENT, LENGTH_MISMATCH, DETACHED_BUFFER
 */
export function checkOut(
  cpu: CpuPath,
  out: ParleArray,
  type: ElementType,
  length: number,
  input: ArrayBufferView,
  inputResident: boolean,
): void {
  const outType = elementTypeOf(out);
  if (outType === undefined) throw new ParleError(ErrorCodes.INVALID_ARGUMENT, 'options.out must be a typed array');
  if (out.buffer.byteLength === 0 && out.length > 0) throw new ParleError(ErrorCodes.DETACHED_BUFFER, 'options.out is detached');
  if (!holdsType(out, type))
    throw new ParleError(ErrorCodes.INVALID_ARGUMENT, `options.out must hold ${type} elements (the result's type); got ${outType}`);
  if (out.length !== length)
    throw new ParleError(ErrorCodes.LENGTH_MISMATCH, `options.out holds ${out.length} elements; the result has ${length}`);
  // the same memory: one buffer object, or both in the kernels' memory (whose buffer object changes as it grows)
  const sameMemory = out.buffer === input.buffer || (cpu.isResident(out) && inputResident);
  const a0 = out.byteOffset;
  const a1 = a0 + out.byteLength;
  const b0 = input.byteOffset;
  const b1 = b0 + input.byteLength;
  if (sameMemory && a0 < b1 && b0 < a1 && out.byteLength > 0 && input.byteLength > 0) {
    throw new ParleError(ErrorCodes.INVALID_ARGUMENT, 'options.out overlaps the input');
  }
}
