/**
 * Byte layout of the .parle container, versions 1 to 4 (writers write 4). docs/format.md has the diagram and the
 * reasons; this file is its executable twin: constants, writers and checking readers of the
 * header and of chunk table entries.
 */
import { ErrorCodes, ParleError } from '../errors.js';
import type { ElementType } from '../types.js';
import { ELEMENT_TYPES, elementSize } from '../types.js';
import { xxh64 } from './checksum.js';
import { pipelineProblem, StageId, streamCount } from './stages.js';
import { quantizeHeaderBytes } from './quantize.js';
import { PREDICT_HEADER_BYTES } from './predict.js';

/** "\x89PARLE\r\n": the high byte catches 7-bit transfers, CR LF catches newline conversion. */
export const MAGIC = new Uint8Array([0x89, 0x50, 0x41, 0x52, 0x4c, 0x45, 0x0d, 0x0a]);
/** The version writers produce. Readers take versions 1, 2, 3 and {@link VERSION}. */
export const VERSION = 4;
/** Most axes a version-4 shape has. */
export const MAX_RANK = 8;
/** Version 4, header byte 11: bits 0..3 the rank, bit 4 {@link INDEX_FLAG}, bits 5..7 reserved (0). */
const RANK_BITS = 0x0f;
/** Version 4, header byte 11 bit 4: a chunk index follows the last payload (docs/format.md, "Chunk index"). */
export const INDEX_FLAG = 0x10;
export const HEADER_BYTES = 32;
export const ENTRY_BYTES = 32;
/** Largest chunk a reader accepts, in bytes of decoded elements. */
export const MAX_CHUNK_BYTES = 64 << 20;
/**
 * Default chunk size in bytes of decoded elements (version 3): a chunk is the unit of parallel
 * work, as Blosc2's blocks, so an input of 2 x 256 KiB already keeps two workers busy. 128 KiB
 * was tried first: the per-chunk costs (entry, Huffman tables and their decode tables, the
 * chooser's statistics and JavaScript) made compress and decompress 10-60 % slower on the corpus
 * and a label volume's ratio 3 % lower (33.2 against 34.3).
 */
export const DEFAULT_CHUNK_BYTES = 256 << 10;
/**
 * The default chunk size at a level: {@link DEFAULT_CHUNK_BYTES} up to level 7, then larger, as
 * Blosc2 grows its blocks with the level: 512 KiB at 8 and 1 MiB at 9, where a chunk's fixed
 * bytes (entry, directory, Huffman tables: about 100 bytes) cost a highly compressible volume
 * 4-7 % of its size at 128 KiB, 2-4 % at 256 KiB (bench/corpus.mjs, t1-brain-labels.u8).
 */
export function defaultChunkBytes(level: number): number {
  return level <= 7 ? DEFAULT_CHUNK_BYTES : level === 8 ? 512 << 10 : 1 << 20;
}

/** Compression levels (as zstd's and Blosc2's): 1 fastest, 9 smallest. */
export const MIN_LEVEL = 1;
export const MAX_LEVEL = 9;
/** The level compress uses unless told otherwise. */
export const DEFAULT_LEVEL = 5;

/** Chunk payload encodings. */
export const enum Encoding {
  /** The elements, raw little-endian. */
  Stored = 0,
  /** Version 1: run values raw, then (length - 1) as LEB128. */
  Rle = 1,
  /** Version 2: a pipeline of codec stages (ChunkEntry.stages), streams in the payload. */
  Pipeline = 2,
  /**
   * Version 4: stage 7, predict (entry byte 24 = 7; ts/format/predict.ts): the payload holds the
   * predict header and a block a field, each with its own pipeline; ChunkEntry.stages is empty.
   */
  Predicted = 3,
}

/** The fixed header. */
export interface Header {
  /** Container version: 1, 2, 3 or 4 (written: 4). */
  version?: 1 | 2 | 3 | 4;
  /** Version 3: the compression level the writer used (1..9; informational: readers need not know it). */
  level?: number;
  type: ElementType;
  /** Elements per chunk; the last chunk may hold fewer. */
  chunkLength: number;
  /** Elements in the file. */
  elementCount: number;
  /** ceil(elementCount / chunkLength). */
  chunkCount: number;
  /**
   * Version 4: the array's shape (C order, the last axis fastest; the product is elementCount),
   * or undefined when none was recorded (or, for a reader that has seen only the 32-byte header,
   * not yet read: `rank` says it exists).
   */
  shape?: number[];
  /** Version 4: axes of the shape (0: none); the shape block's bytes follow the header. */
  rank?: number;
  /**
   * Version 4: a chunk index (every entry's byte offset; docs/format.md, "Chunk index") follows the last
   * payload. Writers index every container of two chunks or more.
   */
  indexed?: boolean;
}

/** One chunk table entry, as stored in front of its payload. */
export interface ChunkEntry {
  elementCount: number;
  encoding: Encoding;
  /** Runs in an rle payload; 0 for stored. */
  runCount: number;
  /** Payload length in bytes. */
  payloadBytes: number;
  /** XXH64 of the payload (version 1), or its tree hash (version 2, a u32). */
  payloadChecksum: bigint;
  /** XXH64 of the decoded elements' bytes (version 1), or their tree hash (version 2, a u32). */
  elementsChecksum: bigint;
  /** Version 2: the pipeline's stage ids (./stages.ts); empty for stored. */
  stages?: number[];
  /** Version 2: streams in the payload. */
  streamCount?: number;
  /**
   * Version 2, f32 (version 4: also f64): the chunk is quantized (stage 5, entry byte 24;
   * ts/codec/quantize.ts): its payload starts with the quantize header and exceptions, and
   * `stages` code the u32 codes (width 4).
   */
  quantize?: boolean;
  /**
   * Version 4: the chunk is predicted (stage 7, entry byte 24; ts/format/predict.ts); `stages` is
   * empty and `encoding` {@link Encoding.Predicted}.
   */
  predict?: boolean;
}

/** A table entry with where it sits: for `inspect` and parallel decoders. */
export interface LocatedChunk extends ChunkEntry {
  /** Index of the chunk. */
  index: number;
  /** Byte offset of the entry in the file. */
  entryOffset: number;
  /** Byte offset of the payload in the file. */
  payloadOffset: number;
  /** Element offset of the chunk's first element in the decoded array. */
  elementOffset: number;
}

/** The chunk length for a type and a chunk size in bytes. */
export function chunkLengthFor(type: ElementType, chunkBytes: number): number {
  return Math.max(1, Math.floor(chunkBytes / elementSize(type)));
}

/**
 * The most bytes a container of `elementCount` elements of `type` takes with chunks of
 * `chunkBytes` bytes: the header, one entry a chunk, every element stored (no chunk's payload
 * is larger: a chunk that would grow is stored) and, from two chunks on, the chunk index (8 bytes
 * a chunk and 4). What the `out` option of compress must hold, plus a shape block's 8 bytes an
 * axis and 4 when a shape is given (as LZ4's compressBound). Example: 1000 u8 elements in chunks
 * of 4 MiB -> 32 + 32 + 1000 = 1064; in chunks of 500 bytes -> 32 + 64 + 1000 + 20 = 1116.
 * @throws ParleError INVALID_ARGUMENT (a count that is not a non-negative safe integer, an
 *   unknown type, chunkBytes below 1)
 */
export function compressBound(elementCount: number, type: ElementType, chunkBytes: number = DEFAULT_CHUNK_BYTES): number {
  if (!Number.isSafeInteger(elementCount) || elementCount < 0) {
    throw new ParleError(ErrorCodes.INVALID_ARGUMENT, 'elementCount must be a non-negative integer');
  }
  if (!(ELEMENT_TYPES as readonly string[]).includes(type))
    throw new ParleError(ErrorCodes.INVALID_ARGUMENT, `unknown element type ${String(type)}`);
  if (!Number.isSafeInteger(chunkBytes) || chunkBytes < 1)
    throw new ParleError(ErrorCodes.INVALID_ARGUMENT, 'chunkBytes must be a positive integer');
  const header = makeHeader(type, elementCount, chunkLengthFor(type, chunkBytes));
  return HEADER_BYTES + header.chunkCount * ENTRY_BYTES + elementCount * elementSize(type) + indexBytes(header);
}

/**
 * Builds a header for `elementCount` elements of `type` in chunks of `chunkLength` elements:
 * version 4, indexed when it has two chunks or more.
 */
export function makeHeader(
  type: ElementType,
  elementCount: number,
  chunkLength: number,
  level = DEFAULT_LEVEL,
  shape?: readonly number[],
): Header {
  const chunkCount = Math.ceil(elementCount / chunkLength);
  return {
    version: VERSION,
    level,
    type,
    elementCount,
    chunkLength,
    chunkCount,
    ...(shape !== undefined && shape.length > 0 ? { shape: [...shape], rank: shape.length } : {}),
    ...(chunkCount >= 2 ? { indexed: true } : {}),
  };
}

/** Bytes of the chunk index after the last payload: 8 a chunk and a 4-byte checksum; 0 when the header has none. */
export function indexBytes(header: Header): number {
  return header.indexed === true && (header.version ?? VERSION) === 4 ? 8 * header.chunkCount + 4 : 0;
}

/**
 * The chunk index (docs/format.md, "Chunk index"): each chunk's entry offset in bytes from the
 * container's start, u64 little-endian, then the low 32 bits of XXH64 (seed 0) of those bytes.
 * Written into `target` at `at` (8 x entryOffsets.length + 4 bytes), or a new array.
 */
export function writeIndex(entryOffsets: ArrayLike<number>, target?: Uint8Array, at = 0): Uint8Array {
  const n = entryOffsets.length;
  const out = target ?? new Uint8Array(8 * n + 4);
  const view = new DataView(out.buffer, out.byteOffset + at, 8 * n + 4);
  for (let i = 0; i < n; i++) view.setBigUint64(8 * i, BigInt(entryOffsets[i]), true);
  const offsets = out.subarray(at, at + 8 * n);
  view.setUint32(8 * n, Number(xxh64(offsets) & 0xffffffffn), true);
  return target === undefined ? out : out.subarray(at, at + 8 * n + 4);
}

/**
 * Reads and checks the chunk index of a container with `header` whose bytes end with it
 * (`bytes`: the index's {@link indexBytes}; `indexAt`: where it starts in the container). Checks
 * its checksum, that the first offset is the first entry's place, that each next offset lies at
 * least an entry further and that the last entry lies before the index. A reader that walks the
 * entries also checks that each offset is the one it found (parle's readers do).
 * @returns the entry offsets (bytes from the container's start), one a chunk
 * @throws ParleError TRUNCATED (fewer bytes than the index), CORRUPT
 */
export function readIndex(bytes: Uint8Array, header: Header, indexAt: number): Float64Array {
  const k = header.chunkCount;
  const need = indexBytes(header);
  if (bytes.length < need)
    throw new ParleError(ErrorCodes.TRUNCATED, `truncated .parle file: chunk index of ${bytes.length} of ${need} bytes`);
  const corrupt = (why: string) => new ParleError(ErrorCodes.CORRUPT, `corrupt .parle chunk index: ${why}`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, need);
  if (view.getUint32(8 * k, true) !== Number(xxh64(bytes.subarray(0, 8 * k)) & 0xffffffffn)) throw corrupt('checksum mismatch');
  const offsets = new Float64Array(k);
  let previous = -ENTRY_BYTES;
  for (let i = 0; i < k; i++) {
    const offset = view.getBigUint64(8 * i, true);
    const least = i === 0 ? firstEntryOffset(header) : previous + ENTRY_BYTES;
    if ((i === 0 && offset !== BigInt(least)) || offset < BigInt(least) || offset + BigInt(ENTRY_BYTES) > BigInt(indexAt)) {
      throw corrupt(`chunk ${i} at byte ${offset}`);
    }
    previous = Number(offset);
    offsets[i] = previous;
  }
  return offsets;
}

/** Bytes of the shape block after the 32-byte header: 8 a dim and a 4-byte checksum; 0 without a shape. */
export function shapeBlockBytes(rank: number): number {
  return rank > 0 ? 8 * rank + 4 : 0;
}

/** Where a container with this header has its first chunk table entry: after the header and its shape block. */
export function firstEntryOffset(header: Header): number {
  return HEADER_BYTES + shapeBlockBytes(header.rank ?? 0);
}

/** Elements in chunk `index` of a file with this header. */
export function chunkElementCount(header: Header, index: number): number {
  return Math.min(header.chunkLength, header.elementCount - index * header.chunkLength);
}

/** Serialises the header (32 bytes, then a version-4 header's shape block). */
export function writeHeader(header: Header): Uint8Array {
  const rank = header.shape?.length ?? 0;
  const bytes = new Uint8Array(HEADER_BYTES + shapeBlockBytes(rank));
  const view = new DataView(bytes.buffer);
  bytes.set(MAGIC, 0);
  view.setUint8(8, header.version ?? VERSION);
  view.setUint8(9, ELEMENT_TYPES.indexOf(header.type));
  // version 3: byte 10 the level; versions 1 and 2: flags = 0
  view.setUint8(10, (header.version ?? VERSION) >= 3 ? (header.level ?? DEFAULT_LEVEL) : 0);
  view.setUint8(11, rank | (indexBytes(header) > 0 ? INDEX_FLAG : 0));
  view.setUint32(12, header.chunkLength, true);
  view.setBigUint64(16, BigInt(header.elementCount), true);
  view.setUint32(24, header.chunkCount, true);
  view.setUint32(28, Number(xxh64(bytes.subarray(0, 28)) & 0xffffffffn), true);
  if (rank > 0) {
    header.shape!.forEach((d, i) => view.setBigUint64(HEADER_BYTES + 8 * i, BigInt(d), true));
    const dims = bytes.subarray(HEADER_BYTES, HEADER_BYTES + 8 * rank);
    view.setUint32(HEADER_BYTES + 8 * rank, Number(xxh64(dims) & 0xffffffffn), true);
  }
  return bytes;
}

/**
 * Reads and checks the shape block of a version-4 header of rank > 0 from `bytes`, which start
 * at the block (8 x rank dim bytes and their checksum): each dim >= 1, their product the header's
 * element count. Sets and returns `header.shape`.
 * @throws ParleError TRUNCATED, CORRUPT
 */
export function readShape(bytes: Uint8Array, header: Header): number[] {
  const rank = header.rank ?? 0;
  const need = shapeBlockBytes(rank);
  if (bytes.length < need)
    throw new ParleError(ErrorCodes.TRUNCATED, `truncated .parle header: shape block of ${bytes.length} of ${need} bytes`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, need);
  if (view.getUint32(8 * rank, true) !== Number(xxh64(bytes.subarray(0, 8 * rank)) & 0xffffffffn)) {
    throw new ParleError(ErrorCodes.CORRUPT, 'corrupt .parle header: shape checksum mismatch');
  }
  const shape: number[] = [];
  let product = 1n;
  for (let i = 0; i < rank; i++) {
    const d = view.getBigUint64(8 * i, true);
    if (d === 0n || d > BigInt(Number.MAX_SAFE_INTEGER))
      throw new ParleError(ErrorCodes.CORRUPT, `corrupt .parle header: shape dim ${i} is ${d}`);
    product *= d;
    shape.push(Number(d));
  }
  if (product !== BigInt(header.elementCount)) {
    throw new ParleError(ErrorCodes.CORRUPT, `corrupt .parle header: shape [${shape.join(', ')}] for ${header.elementCount} elements`);
  }
  header.shape = shape;
  return shape;
}

/**
 * Checks the magic bytes at the start of `bytes`, which may hold fewer than 8 (a prefix is
 * checked as far as it goes).
 * @throws ParleError NOT_PARLE
 */
export function checkMagic(bytes: Uint8Array): void {
  if (bytes.length === 0 || MAGIC.some((b, i) => i < bytes.length && bytes[i] !== b)) {
    throw new ParleError(ErrorCodes.NOT_PARLE, 'not a .parle container (magic bytes differ)');
  }
}

/**
 * Parses and checks the header at the start of `bytes` (which may be longer).
 * @throws ParleError NOT_PARLE, UNSUPPORTED_VERSION, TRUNCATED, CORRUPT, LIMIT_EXCEEDED
 */
export function readHeader(bytes: Uint8Array, maxElements = Number.MAX_SAFE_INTEGER): Header {
  checkMagic(bytes);
  if (bytes.length < HEADER_BYTES) {
    throw new ParleError(ErrorCodes.TRUNCATED, `truncated .parle header: ${bytes.length} of ${HEADER_BYTES} bytes`);
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, HEADER_BYTES);
  const version = view.getUint8(8);
  // versions 1 and 2: bytes 10..11 are flags, all 0; version 3: byte 10 the level, byte 11
  // reserved; version 4: byte 11 the shape's rank and the index flag
  const level = version >= 3 ? view.getUint8(10) : 0;
  const byte11 = view.getUint8(11);
  const flags = version === 3 ? byte11 : version === 4 ? byte11 & ~(RANK_BITS | INDEX_FLAG) : view.getUint16(10, true);
  if ((version !== 1 && version !== 2 && version !== 3 && version !== 4) || flags !== 0) {
    throw new ParleError(
      ErrorCodes.UNSUPPORTED_VERSION,
      `unsupported .parle version ${version} (flags ${flags}); this build reads versions 1 to 4`,
    );
  }
  const rank = version === 4 ? byte11 & RANK_BITS : 0;
  const indexed = version === 4 && (byte11 & INDEX_FLAG) !== 0;
  const stored = view.getUint32(28, true);
  const computed = Number(xxh64(bytes.subarray(0, 28)) & 0xffffffffn);
  if (stored !== computed) throw new ParleError(ErrorCodes.CORRUPT, 'corrupt .parle header (checksum mismatch)');
  if (version >= 3 && (level < MIN_LEVEL || level > MAX_LEVEL))
    throw new ParleError(ErrorCodes.CORRUPT, `corrupt .parle header: level ${level}`);
  const typeCode = view.getUint8(9);
  const type = ELEMENT_TYPES[typeCode];
  // codes 5 and up (i8, i16, f16, f64, i64, u64) came with version 4
  if (type === undefined || (typeCode >= 5 && version < 4))
    throw new ParleError(ErrorCodes.CORRUPT, `corrupt .parle header: element type code ${typeCode} in version ${version}`);
  const chunkLength = view.getUint32(12, true);
  if (chunkLength === 0 || chunkLength * elementSize(type) > MAX_CHUNK_BYTES) {
    throw new ParleError(ErrorCodes.CORRUPT, `corrupt .parle header: chunk length ${chunkLength} elements`);
  }
  const count = view.getBigUint64(16, true);
  if (count > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw new ParleError(ErrorCodes.CORRUPT, `corrupt .parle header: element count ${count}`);
  }
  const elementCount = Number(count);
  if (elementCount > maxElements) {
    throw new ParleError(
      ErrorCodes.LIMIT_EXCEEDED,
      `the container holds ${elementCount} elements, above the limit of ${maxElements} (option maxElements)`,
    );
  }
  const chunkCount = view.getUint32(24, true);
  if (chunkCount !== Math.ceil(elementCount / chunkLength)) {
    throw new ParleError(ErrorCodes.CORRUPT, `corrupt .parle header: ${chunkCount} chunks for ${elementCount} elements`);
  }
  if (rank > MAX_RANK) throw new ParleError(ErrorCodes.CORRUPT, `corrupt .parle header: rank ${rank}`);
  const header: Header = {
    version: version as 1 | 2 | 3 | 4,
    ...(version >= 3 ? { level } : {}),
    type,
    chunkLength,
    elementCount,
    chunkCount,
    ...(rank > 0 ? { rank } : {}),
    ...(indexed ? { indexed } : {}),
  };
  if (rank > 0 && bytes.length >= HEADER_BYTES + shapeBlockBytes(rank)) readShape(bytes.subarray(HEADER_BYTES), header);
  return header;
}

/** Serialises a chunk table entry (32 bytes) into `target` at `offset`. */
export function writeEntry(entry: ChunkEntry, target: Uint8Array = new Uint8Array(ENTRY_BYTES), offset = 0): Uint8Array {
  const view = new DataView(target.buffer, target.byteOffset + offset, ENTRY_BYTES);
  if (entry.stages !== undefined) {
    // version 2
    view.setUint32(0, entry.elementCount, true);
    for (let i = 0; i < 4; i++) view.setUint8(4 + i, entry.stages[i] ?? 0);
    view.setUint32(8, entry.streamCount ?? 0, true);
    view.setUint32(12, entry.payloadBytes, true);
    view.setUint32(16, Number(entry.payloadChecksum), true);
    view.setUint32(20, Number(entry.elementsChecksum), true);
    view.setUint32(24, entry.quantize === true ? StageId.Quantize : entry.predict === true ? StageId.Predict : 0, true);
    const bytes = new Uint8Array(target.buffer, target.byteOffset + offset, 28);
    view.setUint32(28, Number(xxh64(bytes) & 0xffffffffn), true);
    return target;
  }
  view.setUint32(0, entry.elementCount, true);
  view.setUint8(4, entry.encoding);
  view.setUint8(5, 0);
  view.setUint16(6, 0, true);
  view.setUint32(8, entry.runCount, true);
  view.setUint32(12, entry.payloadBytes, true);
  view.setBigUint64(16, entry.payloadChecksum, true);
  view.setBigUint64(24, entry.elementsChecksum, true);
  return target;
}

/**
 * Parses and checks entry `index` (32 bytes at the start of `bytes`) against the header.
 * @throws ParleError TRUNCATED, CORRUPT
 */
export function readEntry(bytes: Uint8Array, header: Header, index: number): ChunkEntry {
  if (bytes.length < ENTRY_BYTES) {
    throw new ParleError(ErrorCodes.TRUNCATED, `truncated .parle file: chunk ${index} of ${header.chunkCount} is missing`);
  }
  // versions 3 and 4's entries are version 2's (version 4 adds stage 7 in byte 24)
  if (header.version === 2 || header.version === 3 || header.version === 4) return readPipelineEntry(bytes, header, index);
  const view = new DataView(bytes.buffer, bytes.byteOffset, ENTRY_BYTES);
  const entry: ChunkEntry = {
    elementCount: view.getUint32(0, true),
    encoding: view.getUint8(4),
    runCount: view.getUint32(8, true),
    payloadBytes: view.getUint32(12, true),
    payloadChecksum: view.getBigUint64(16, true),
    elementsChecksum: view.getBigUint64(24, true),
  };
  const corrupt = (why: string) => new ParleError(ErrorCodes.CORRUPT, `corrupt .parle chunk ${index}: ${why}`);
  const expected = chunkElementCount(header, index);
  if (entry.elementCount !== expected) throw corrupt(`${entry.elementCount} elements, expected ${expected}`);
  if (view.getUint8(5) !== 0 || view.getUint16(6, true) !== 0) throw corrupt('reserved bytes are not zero');
  const rawBytes = expected * elementSize(header.type);
  if (entry.encoding === Encoding.Stored) {
    if (entry.runCount !== 0 || entry.payloadBytes !== rawBytes) throw corrupt(`stored payload of ${entry.payloadBytes} bytes`);
  } else if (entry.encoding === Encoding.Rle) {
    if (entry.runCount === 0 || entry.runCount > expected) throw corrupt(`${entry.runCount} runs for ${expected} elements`);
    if (entry.payloadBytes >= rawBytes || entry.runCount * elementSize(header.type) + entry.runCount > entry.payloadBytes) {
      throw corrupt(`rle payload of ${entry.payloadBytes} bytes for ${entry.runCount} runs`);
    }
  } else {
    throw corrupt(`unknown encoding ${entry.encoding}`);
  }
  return entry;
}

/** {@link readEntry} for versions 2 and 3 (docs/format.md, "Chunk table entry"). */
function readPipelineEntry(bytes: Uint8Array, header: Header, index: number): ChunkEntry {
  const view = new DataView(bytes.buffer, bytes.byteOffset, ENTRY_BYTES);
  const corrupt = (why: string) => new ParleError(ErrorCodes.CORRUPT, `corrupt .parle chunk ${index}: ${why}`);
  if (view.getUint32(28, true) !== Number(xxh64(bytes.subarray(0, 28)) & 0xffffffffn)) throw corrupt('entry checksum mismatch');
  const stages: number[] = [];
  for (let i = 0; i < 4; i++) {
    const id = view.getUint8(4 + i);
    if (id === 0) {
      for (let j = i + 1; j < 4; j++) if (view.getUint8(4 + j) !== 0) throw corrupt('stage id after the end of the pipeline');
      break;
    }
    stages.push(id);
  }
  const size = elementSize(header.type);
  // a quantized chunk's pipeline codes its u32 codes (width 4), also on f64 elements
  const pre = view.getUint8(24);
  const codesWidth = pre === StageId.Quantize ? 4 : size;
  const problem = pipelineProblem(stages, codesWidth);
  if (problem) throw corrupt(problem);
  // the pack stage came with version 3: a version-2 container that names it is not one a writer made
  if ((header.version ?? VERSION) < 3 && stages.includes(StageId.Pack)) throw corrupt('pack stage in a version-2 container');
  const entry: ChunkEntry = {
    elementCount: view.getUint32(0, true),
    encoding: stages.length === 0 ? Encoding.Stored : Encoding.Pipeline,
    runCount: 0,
    payloadBytes: view.getUint32(12, true),
    payloadChecksum: BigInt(view.getUint32(16, true)),
    elementsChecksum: BigInt(view.getUint32(20, true)),
    stages,
    streamCount: view.getUint32(8, true),
  };
  const expected = chunkElementCount(header, index);
  if (entry.elementCount !== expected) throw corrupt(`${entry.elementCount} elements, expected ${expected}`);
  // byte 24: stage 5 (quantize), stage 7 (predict, version 4) or 0; bytes 25..27 reserved
  const known = pre === 0 || pre === StageId.Quantize || (pre === StageId.Predict && header.version === 4);
  if (view.getUint8(25) !== 0 || view.getUint16(26, true) !== 0 || !known) {
    throw corrupt(!known ? `unknown stage id ${pre} in byte 24` : 'reserved bytes are not zero');
  }
  if (pre === StageId.Predict) {
    if (stages.length !== 0 || entry.streamCount !== 0) throw corrupt('predict stage with a pipeline in the entry');
    const rawBytes = expected * size;
    if (entry.payloadBytes >= rawBytes || entry.payloadBytes < PREDICT_HEADER_BYTES) {
      throw corrupt(`predicted payload of ${entry.payloadBytes} bytes for ${rawBytes} bytes of elements`);
    }
    entry.encoding = Encoding.Predicted;
    entry.predict = true;
    return entry;
  }
  if (pre === StageId.Quantize) {
    // f32, and f64 (a type of version 4 only)
    if (header.type !== 'f32' && header.type !== 'f64') throw corrupt(`quantize stage on ${header.type} elements`);
    if (stages.length === 0) throw corrupt('quantize stage without a pipeline for its codes');
    entry.quantize = true;
  }
  // 8-byte elements have no version-2 pipeline: their chunks are stored, predicted or (f64) quantized
  if (size === 8 && stages.length > 0 && entry.quantize !== true) throw corrupt(`a pipeline on ${header.type} elements`);
  if (entry.streamCount !== streamCount(stages, codesWidth)) throw corrupt(`${entry.streamCount} streams for pipeline ${stages.join(',')}`);
  // a quantized payload, as any piped one, is below the elements' raw size (f64: count x 8)
  const rawBytes = expected * size;
  const minPayload = 8 * entry.streamCount + (entry.quantize === true ? quantizeHeaderBytes(size === 8 ? 8 : 4) : 0);
  if (stages.length === 0 ? entry.payloadBytes !== rawBytes : entry.payloadBytes >= rawBytes || entry.payloadBytes < minPayload) {
    throw corrupt(`payload of ${entry.payloadBytes} bytes for ${rawBytes} bytes of elements`);
  }
  return entry;
}
