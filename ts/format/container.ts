/**
 * The .parle container's bytes as a whole: a container assembled from its header, entries and
 * payloads, the chunk table walk that `inspect` and every decoder share, and the report `parle
 * inspect` prints. The whole-array drivers that code the chunks are the codec's
 * (ts/codec/arrays.ts; streaming: ts/codec/stream.ts).
 */
import { ErrorCodes, ParleError } from '../errors.js';
import { elementSize, type ElementType } from '../types.js';
import { pipelineName } from './stages.js';
import { PREDICT_HEADER_BYTES, predictName } from './predict.js';
import {
  ENTRY_BYTES,
  HEADER_BYTES,
  firstEntryOffset,
  indexBytes,
  readIndex,
  readShape,
  shapeBlockBytes,
  readEntry,
  readHeader,
  writeEntry,
  writeHeader,
  writeIndex,
  type ChunkEntry,
  type Header,
  type LocatedChunk,
} from './layout.js';

/**
 * The container's bytes: the header, then each chunk's table entry and payload, in order, then
 * the chunk index when the header has one. With
 * `target` (at least as long; no payload may lie in it) they are written at its start and a view
 * of them is returned, else a new array. `copy` writes a chunk's payload to `out` at `at`
 * (default: `out.set(chunk.payload, at)`; the CPU path copies payloads out of its memory with
 * CpuPath.readBytes).
 */
export function assembleContainer<C extends { entry: ChunkEntry; payload: Uint8Array }>(
  header: Header,
  chunks: readonly C[],
  target?: Uint8Array,
  copy: (chunk: C, out: Uint8Array, at: number) => void = (chunk, out, at) => out.set(chunk.payload, at),
): Uint8Array {
  const head = writeHeader(header);
  let total = head.length + indexBytes(header);
  for (const { payload } of chunks) total += ENTRY_BYTES + payload.length;
  const out = target === undefined ? new Uint8Array(total) : target.subarray(0, total);
  out.set(head, 0);
  const entryOffsets = new Float64Array(chunks.length);
  let offset = head.length;
  chunks.forEach((chunk, i) => {
    entryOffsets[i] = offset;
    writeEntry(chunk.entry, out, offset);
    copy(chunk, out, offset + ENTRY_BYTES);
    offset += ENTRY_BYTES + chunk.payload.length;
  });
  if (indexBytes(header) > 0) writeIndex(entryOffsets, out, offset);
  return out;
}

/**
 * Reads `length` bytes at `offset` of a container; may return fewer at the end of the input.
 * Lets one table walk serve in-memory bytes and files.
 */
export type ReadAt = (offset: number, length: number) => Uint8Array;

/**
 * Reads the header and walks the whole chunk table, checking every entry, that every payload
 * lies inside the `totalBytes` of the input, and that nothing follows the last payload but the
 * chunk index when the header has one (which then lists exactly the entries the walk found).
 * Reads and keeps only the header, the entries (32 bytes a chunk) and the index.
 * @throws ParleError NOT_PARLE, UNSUPPORTED_VERSION, TRUNCATED, CORRUPT, LIMIT_EXCEEDED
 */
export function walkChunks(readAt: ReadAt, totalBytes: number, maxElements?: number): { header: Header; chunks: LocatedChunk[] } {
  const header = readHeader(readAt(0, HEADER_BYTES), maxElements);
  if ((header.rank ?? 0) > 0) readShape(readAt(HEADER_BYTES, shapeBlockBytes(header.rank!)), header);
  const chunks: LocatedChunk[] = [];
  let offset = firstEntryOffset(header);
  for (let index = 0; index < header.chunkCount; index++) {
    const entry = readEntry(readAt(offset, ENTRY_BYTES), header, index);
    const payloadOffset = offset + ENTRY_BYTES;
    if (payloadOffset + entry.payloadBytes > totalBytes) {
      throw new ParleError(
        ErrorCodes.TRUNCATED,
        `truncated .parle file: chunk ${index} needs ${entry.payloadBytes} payload bytes, ${totalBytes - payloadOffset} remain`,
      );
    }
    // the entry itself, extended (a spread copy cost 2 us an entry, 512 of them a 64 MiB call)
    const located = entry as LocatedChunk;
    located.index = index;
    located.entryOffset = offset;
    located.payloadOffset = payloadOffset;
    located.elementOffset = index * header.chunkLength;
    chunks.push(located);
    offset = payloadOffset + entry.payloadBytes;
  }
  const index = indexBytes(header);
  if (offset + index !== totalBytes) {
    if (offset + index > totalBytes)
      throw new ParleError(ErrorCodes.TRUNCATED, `truncated .parle file: chunk index of ${totalBytes - offset} of ${index} bytes`);
    throw new ParleError(ErrorCodes.CORRUPT, `corrupt .parle file: ${totalBytes - offset - index} bytes after the last chunk`);
  }
  if (index > 0) checkIndex(readIndex(readAt(offset, index), header, offset), chunks);
  return { header, chunks };
}

/**
 * Checks that a chunk index lists the entries a walk found.
 * @throws ParleError CORRUPT
 */
export function checkIndex(entryOffsets: Float64Array, chunks: readonly { entryOffset: number }[]): void {
  for (let i = 0; i < chunks.length; i++) {
    if (entryOffsets[i] !== chunks[i].entryOffset) {
      throw new ParleError(
        ErrorCodes.CORRUPT,
        `corrupt .parle chunk index: chunk ${i} at byte ${entryOffsets[i]}, its entry is at byte ${chunks[i].entryOffset}`,
      );
    }
  }
}

/** A {@link ReadAt} over bytes in memory. */
export function readAtBytes(bytes: Uint8Array): ReadAt {
  return (offset, length) => bytes.subarray(offset, offset + length);
}

/** What `parle inspect` prints: the header and the chunk table, JSON-friendly. */
export interface ContainerReport {
  version: number;
  /** Version 3: the level the writer used (1..9). */
  level?: number;
  type: ElementType;
  elementCount: number;
  /** Version 4: the array's shape, when the writer recorded one. */
  shape?: number[];
  /** Version 4: bytes of the chunk index after the last payload (8 a chunk and 4), when it has one. */
  indexBytes?: number;
  chunkLength: number;
  chunkCount: number;
  fileBytes: number;
  decodedBytes: number;
  ratio: number;
  chunks: {
    index: number;
    elementOffset: number;
    elementCount: number;
    /** Version 1: 'stored' or 'rle'; version 2: the pipeline, e.g. 'delta+huffman' (or 'stored'). */
    encoding: string;
    /** Version 1: runs of an rle chunk. */
    runCount: number;
    /** Version 2: streams in the payload. */
    streamCount?: number;
    payloadOffset: number;
    payloadBytes: number;
    /** Hex, at the checksum's width: 16 digits (XXH64) in version 1, 8 (its low 32 bits) since version 2. */
    payloadChecksum: string;
    /** Hex, as payloadChecksum. */
    elementsChecksum: string;
  }[];
}

/** Describes a container of `totalBytes` without decoding it. */
export function inspectContainer(readAt: ReadAt, totalBytes: number): ContainerReport {
  const { header, chunks } = walkChunks(readAt, totalBytes);
  const decodedBytes = header.elementCount * elementSize(header.type);
  // hex digits of a checksum: XXH64 in version 1, its low 32 bits since version 2
  const digits = (header.version ?? 1) === 1 ? 16 : 8;
  return {
    version: header.version ?? 1,
    ...(header.level !== undefined ? { level: header.level } : {}),
    type: header.type,
    elementCount: header.elementCount,
    ...(header.shape !== undefined ? { shape: header.shape } : {}),
    ...(indexBytes(header) > 0 ? { indexBytes: indexBytes(header) } : {}),
    chunkLength: header.chunkLength,
    chunkCount: header.chunkCount,
    fileBytes: totalBytes,
    decodedBytes,
    ratio: decodedBytes / totalBytes,
    chunks: chunks.map((c) => ({
      index: c.index,
      elementOffset: c.elementOffset,
      elementCount: c.elementCount,
      encoding:
        c.predict === true
          ? predictedName(readAt(c.payloadOffset, PREDICT_HEADER_BYTES))
          : c.stages !== undefined
            ? pipelineName(c.stages, c.quantize === true)
            : c.encoding === 0
              ? 'stored'
              : 'rle',
      runCount: c.runCount,
      ...(c.streamCount !== undefined ? { streamCount: c.streamCount } : {}),
      payloadOffset: c.payloadOffset,
      payloadBytes: c.payloadBytes,
      payloadChecksum: c.payloadChecksum.toString(16).padStart(digits, '0'),
      elementsChecksum: c.elementsChecksum.toString(16).padStart(digits, '0'),
    })),
  };
}

/** A predicted chunk's name from its payload's first bytes (`predict(lorenzo2, float-order)`), unchecked: `inspect` decodes nothing. */
function predictedName(head: Uint8Array): string {
  if (head.length < PREDICT_HEADER_BYTES) return 'predict';
  return predictName({ map: head[0], predictor: head[1], fields: head[2], rowCells: 0, planeRows: 0 });
}
