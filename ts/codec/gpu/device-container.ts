/**
 * Decompression of a .parle container that lives on the GPU (a u8 DeviceArray) into a
 * DeviceArray: nvCOMP's case, compressed data kept in GPU memory and decoded where it is used.
 * Nothing crosses the bus but what the host needs to plan the decode:
 *
 *   1. the chunk table, in one readback (up to 1024 chunks the first, 4096 each after): a GPU
 *      walk of the entries (shaders/codec-container-walk.wgsl; an entry's place is known only
 *      from the one before, so one invocation follows them; the first walk copies the header
 *      and the shape block after it too, starts after that block where the header says there is
 *      one, and copies a version-4 chunk index of as many chunks as it walks), then a workgroup
 *      a chunk copies its entry, its payload's first 272 bytes (a quantized chunk's header, a
 *      predicted chunk's predict header), its stream directory and the first bytes of each of
 *      its streams (a Huffman stream's mode, segment size and last symbol: parseHuffmanStream's
 *      fields);
 *   2. predicted chunks (stage 7): what their plan reads, in one readback more: their field
 *      blocks' heads, directories and streams' heads (a GPU walk of each chunk's blocks, which
 *      lie one after another: codec-container-walk.wgsl `blocks`), with a decimal map's
 *      exceptions gathered in the same submission (codec-gather.wgsl). Where the plan then reads
 *      what these did not find, it is gathered in more ({@link missingPredictedReads}) and the
 *      plan made again. The
 *      payloads had been read back whole: 36 MB of a 64 MiB RGB array, 40 ms on the H200 host;
 *      quantized chunks: their exceptions, in one more;
 *   3. the decode itself: ts/codec/gpu/decode.ts on the container's own buffer, with every check
 *      it makes on an uploaded container (both tree hashes, every stream's).
 *
 * The host keeps these copies where they start in the container ({@link SparseContainer}) and
 * walks the chunk table again from them with every check of the in-memory reader, each read at
 * the offset it computes itself, so the GPU's walk is trusted for nothing: a read that finds no
 * copy where it starts gets zeros, which the entries' checksums and the plan's checks reject.
 * Containers that decode.ts does not take (version 1, chunks that do not start on 4-byte
 * boundaries) are read back whole and decoded as host containers are (ts/codec/gpu/decompress.ts).
 */
import type { CpuPath } from '../../cpu/cpu-path.js';
import { abortError } from '../../cpu/pool.js';
import type { DeviceArray } from '../../gpu/device-array.js';
import type { GpuContext, Submission } from '../../gpu/context.js';
import { getPipeline } from '../../gpu/pipelines.js';
import { walkChunks, type ReadAt } from '../../format/container.js';
import { ENTRY_BYTES, firstEntryOffset, HEADER_BYTES, indexBytes, MAX_RANK, readHeader, type LocatedChunk } from '../../format/layout.js';
import { quantizeHeaderBytes } from '../../format/quantize.js';
import {
  exceptionBytes,
  FIELD_BLOCK_HEADER_BYTES,
  MAX_FIELDS,
  PREDICT_HEAD_MAX_BYTES,
  readFieldBlocksAt,
  readPredictHeader,
  ValueMap,
  type FieldBlock,
  type PredictHeader,
} from '../../format/predict.js';
import { StageId, streamCount, type Pipeline } from '../../format/stages.js';
import { ParleError } from '../../errors.js';
import { elementSize } from '../../types.js';
import { readDirectory } from '../cpu/directory.js';
import { debug } from '../../platform/node.js';
import { chunksOnDevice, decodeContainerOnDevice, STREAM_HEAD_BYTES } from './decode.js';
import { decompressToDevice } from './decompress.js';
import { encodeGather, type GatherJob } from './gather.js';
import walkSource from '../../../shaders/codec-container-walk.wgsl';
import readSrcSource from '../../../shaders/read-src.wgsl';

/** Words of the walk's output before the offsets: the header, the stop word, padding (codec-container-walk.wgsl). */
const OFFSETS_AT = 32;
/** Where the walk from chunk 0 puts the 68 bytes after the header (a version-4 shape block: at most {@link SHAPE_BLOCK_MAX_BYTES}), in words. */
const SHAPE_AT = 12;
/** A shape block's bytes at most: MAX_RANK dims of 8 bytes and a 4-byte checksum. */
const SHAPE_BLOCK_MAX_BYTES = 8 * MAX_RANK + 4;
/** The word where the walk puts the byte its first entry was at (after the shape block it found, or params.start). */
const START_AT = 10;
/** A chunk's slot in the walk's output, in words (codec-container-walk.wgsl). */
/**
 * Words of a payload's first bytes a slot holds: a predicted chunk's predict header at most (a
 * quantized chunk's header of 16 or 24 bytes fits too). The walk's shader takes it as PREFIX_WORDS.
 */
const PREFIX_WORDS = Math.ceil(PREDICT_HEAD_MAX_BYTES / 4);
const SLOT = (() => {
  const directory = 8 + PREFIX_WORDS;
  return {
    quantize: 8,
    directory,
    directoryAt: directory + 16,
    streamAt: directory + 17,
    heads: directory + 25,
    words: directory + 33,
  } as const;
})();
/** Where the first walk puts the byte its copy of the chunk index starts at (NONE: it copied none). */
const INDEX_FROM_AT = 11;
/** Streams a chunk has at most (a shuffled 4-byte type with rle), each a directory entry of 8 bytes. */
const MAX_STREAMS = 8;
/** Chunks walked a readback at most (1.7 MiB of slots). */
const WALK_CHUNKS = 4096;
/**
 * Chunks walked by the first readback, before the header's chunk count is known: its slots (446
 * KiB) fit the context's kept readback buffers (a new MAP_READ buffer of 768 KiB had cost 0.5 ms
 * a call on the H200 host), and hold 256 MiB of elements in default chunks, and the chunk index
 * of a container of as many; the rest in one more.
 */
const FIRST_WALK_CHUNKS = 1024;
const NONE = 0xffffffff;
/**
 * A field block's slot in the blocks walk's output, in words (codec-container-walk.wgsl
 * BLOCK_WORDS): its place, its head, 64 bytes, then each of its streams' offset and first 4 bytes.
 */
const BLOCK = { head: 1, directory: 3, streamAt: 19, heads: 27, words: 35 } as const;
/**
 * Field blocks the GPU walks in one call at most (35 words each: 70 MiB of slots; a 64 MiB array
 * of 5-field records has 1630); a container that claims more (a hostile one: a block is 8 bytes
 * at least) leaves the rest to the plan's own reads.
 */
const WALK_BLOCKS = 1 << 19;
/** Regions of one readback this many bytes apart or less are gathered as one (the bytes between read too). */
const MERGE_GAP = 64;

const walkCode = `const PREFIX_WORDS = ${PREFIX_WORDS}u;\n${walkSource}\n${readSrcSource}`;

function walkPipeline(gpu: GpuContext, entryPoint: 'walk' | 'copy' | 'blocks'): GPUComputePipeline {
  return getPipeline(gpu.device, `codec-container-walk:${entryPoint}`, () => ({ code: walkCode, entryPoint }));
}

/**
 * Copies of byte ranges of a container, kept where they start: the only reads it serves start
 * where a copy starts (the plan's reads do: see {@link ResidentContainer}) and lie within it;
 * any other read, past the container's end cut short, gives zeros.
 */
class SparseContainer {
  readonly #copies = new Map<number, Uint8Array>();
  constructor(readonly length: number) {}

  /** Keeps `bytes`, the container's bytes from `offset` (the longer copy where two start at one place). */
  add(offset: number, bytes: Uint8Array): void {
    const kept = this.#copies.get(offset);
    if (bytes.length > 0 && (kept === undefined || kept.length < bytes.length)) this.#copies.set(offset, bytes);
  }

  readonly readAt: ReadAt = (offset, length) => {
    const n = Math.max(0, Math.min(length, this.length - offset));
    const copy = this.#copies.get(offset);
    return copy !== undefined && copy.length >= n ? copy.subarray(0, n) : new Uint8Array(n);
  };

  /** True when {@link readAt}(offset, length) finds a copy (a read past the end, cut short, too). */
  has(offset: number, length: number): boolean {
    const n = Math.max(0, Math.min(length, this.length - offset));
    return n === 0 || (this.#copies.get(offset)?.length ?? -1) >= n;
  }
}

/** A read the plan makes that `sparse` does not hold yet: thrown by {@link missingPredictedReads}'s reader. */
class Missing {
  constructor(readonly region: [number, number]) {}
}

/** Bytes of a predicted chunk's payload its predict header lies in at most (the plan's first read). */
const prefixBytes = (c: LocatedChunk) => Math.min(c.payloadBytes, PREDICT_HEAD_MAX_BYTES);

/**
 * The predict header of `c` when `sparse` holds its first {@link prefixBytes} and it passes its
 * checks (kept in `found`), else undefined (the plan reads it, or reports its failure).
 */
function predictHeadOf(sparse: SparseContainer, c: LocatedChunk, size: 1 | 2 | 4 | 8, found: PredictedReads): PredictHeader | undefined {
  if (found.head === undefined && sparse.has(c.payloadOffset, prefixBytes(c))) {
    try {
      found.head = readPredictHeader(sparse.readAt(c.payloadOffset, prefixBytes(c)), c.elementCount, size, c.index, c.payloadBytes);
    } catch (e) {
      if (!(e instanceof ParleError)) throw e;
    }
  }
  return found.head;
}

/** What {@link missingPredictedReads} found of one predicted chunk so far. */
interface PredictedReads {
  head?: PredictHeader;
  blocks?: FieldBlock[];
  /** Every read of its plan is held (or fails a check on what is held): nothing more to read. */
  done?: boolean;
}

/**
 * The reads a predicted chunk's plan makes (ts/codec/gpu/decode.ts) that `sparse` does not hold
 * yet, as [offset, length] regions of the container: its first PREDICT_HEAD_MAX_BYTES bytes,
 * then its field blocks' heads (one at a time: each block's length gives the next one's place;
 * {@link walkFieldBlocks} finds them all at once first), then at once a decimal map's exceptions
 * and each block's directory, then each Huffman stream's head. Empty once the plan can read all
 * it needs, or where what is held already fails a check (the plan then reports it, in its
 * order). `size`: the element width (a block's streams are of its header's word width);
 * `found`: what earlier calls for this chunk found (updated).
 */
function missingPredictedReads(sparse: SparseContainer, c: LocatedChunk, size: 1 | 2 | 4 | 8, found: PredictedReads): [number, number][] {
  if (found.done === true) return [];
  const at = (offset: number) => c.payloadOffset + offset;
  const read = (offset: number, length: number): Uint8Array => {
    if (!sparse.has(at(offset), length)) throw new Missing([at(offset), length]);
    return sparse.readAt(at(offset), length);
  };
  const missing: [number, number][] = [];
  /** `read`'s Missing into `missing`; a check that fails ends what `f` reads (the plan reports it). */
  const attempt = (f: () => void): void => {
    try {
      f();
    } catch (e) {
      if (e instanceof Missing) missing.push(e.region);
      else if (!(e instanceof ParleError)) throw e;
    }
  };
  if (found.blocks === undefined) {
    attempt(() => {
      // not held: Missing; held but failing its checks: its CORRUPT (read again to throw it)
      const head =
        predictHeadOf(sparse, c, size, found) ?? readPredictHeader(read(0, prefixBytes(c)), c.elementCount, size, c.index, c.payloadBytes);
      found.blocks = readFieldBlocksAt(read, c.payloadBytes, head, c.index);
    });
  }
  const { head, blocks } = found;
  if (head !== undefined && blocks !== undefined) {
    const cells = head.words / head.fields;
    const exceptions = head.exceptions;
    if (head.map === ValueMap.Decimal && exceptions > 0) attempt(() => read(head.exceptionsAt, exceptionBytes(size) * exceptions));
    for (const block of blocks) {
      const stages = block.stages as Pipeline;
      if (stages.length === 0) continue;
      attempt(() => {
        const directory = read(block.at, Math.min(8 * streamCount(stages, head.wordWidth), block.bytes));
        const dir = readDirectory(directory, block.bytes, stages, head.wordWidth, cells, c.index);
        if (!stages.includes(StageId.Huffman) || stages.includes(StageId.Pack)) return;
        for (let j = 0; j < dir.decoded.length; j++) attempt(() => read(block.at + dir.at[j], Math.min(STREAM_HEAD_BYTES, dir.encoded[j])));
      });
    }
  }
  if (missing.length === 0) found.done = true;
  return missing;
}

/**
 * Walks up to `chunks` entries from chunk `first` (its entry at byte `start`) on the GPU and
 * keeps in `sparse` what codec-container-walk.wgsl copied of each: the entry, its payload's first
 * bytes (4 {@link PREFIX_WORDS}), its directory and its streams' first bytes (from chunk 0: the
 * header and the {@link SHAPE_BLOCK_MAX_BYTES} after it, the walk starting after a version-4
 * shape block where `start` is the header's end; and the chunk index of a version-4 container
 * of `chunks` chunks at most). Returns the chunks reached, where the next entry would start
 * (NONE after a payload that runs past the container's end), where the walk's first entry was,
 * and where its copy of the chunk index starts (NONE: none).
 */
async function walkTable(
  gpu: GpuContext,
  container: GPUBuffer,
  sparse: SparseContainer,
  first: number,
  start: number,
  chunks: number,
): Promise<{ reached: number; stop: number; from: number; indexFrom: number }> {
  const length = sparse.length;
  const slotsAt = OFFSETS_AT + Math.ceil(chunks / 4) * 4;
  const indexAt = slotsAt + chunks * SLOT.words;
  const outBytes = 4 * (indexAt + 2 * chunks + 1);
  const read = await gpu.submit('decompress: chunk table', (s) => {
    const out = s.temp(outBytes, 'chunk table walk');
    const bind = [
      { binding: 0, resource: { buffer: s.uniform([length, first, start, chunks]) } },
      { binding: 1, resource: { buffer: container, size: Math.ceil(length / 4) * 4 } },
      { binding: 2, resource: { buffer: out } },
    ];
    s.dispatch(walkPipeline(gpu, 'walk'), bind, 1, 'parle:table-walk');
    s.dispatch(walkPipeline(gpu, 'copy'), bind, chunks, 'parle:table-copy');
    return s.readAfter(out, outBytes);
  });
  const words = await read();
  const bytes = new Uint8Array(words.buffer);
  if (first === 0) {
    sparse.add(0, bytes.subarray(0, Math.min(HEADER_BYTES, length)));
    sparse.add(
      HEADER_BYTES,
      bytes.subarray(4 * SHAPE_AT, 4 * SHAPE_AT + Math.max(0, Math.min(SHAPE_BLOCK_MAX_BYTES, length - HEADER_BYTES))),
    );
  }
  // the chunk index, where the walk copied one (the caller keeps it where its header puts one)
  const indexFrom = first === 0 ? words[INDEX_FROM_AT] : NONE;
  if (indexFrom !== NONE && indexFrom < length) {
    sparse.add(indexFrom, bytes.subarray(4 * indexAt, 4 * indexAt + Math.min(8 * chunks + 4, length - indexFrom)));
  }
  const reached = Math.min(words[9], chunks);
  for (let k = 0; k < reached; k++) {
    const at = words[OFFSETS_AT + k];
    const slot = slotsAt + k * SLOT.words;
    const piece = (word: number, n: number) => bytes.subarray(4 * (slot + word), 4 * (slot + word) + Math.max(0, n));
    const payloadAt = at + ENTRY_BYTES;
    const end = payloadAt + Math.min(words[slot + 3], length - payloadAt);
    sparse.add(at, piece(0, ENTRY_BYTES));
    sparse.add(payloadAt, piece(SLOT.quantize, Math.min(4 * PREFIX_WORDS, end - payloadAt)));
    const directoryAt = words[slot + SLOT.directoryAt];
    if (directoryAt !== NONE) sparse.add(directoryAt, piece(SLOT.directory, Math.min(8 * MAX_STREAMS, end - directoryAt)));
    for (let j = 0; j < MAX_STREAMS; j++) {
      const streamAt = words[slot + SLOT.streamAt + j];
      if (streamAt !== NONE) sparse.add(streamAt, piece(SLOT.heads + j, Math.min(4, end - streamAt)));
    }
  }
  return { reached, stop: words[8], from: words[START_AT], indexFrom };
}

/**
 * Walks the field blocks of predicted chunks on the GPU (codec-container-walk.wgsl `blocks`: a
 * chunk's blocks lie one after another, which read back a block at a time had cost a readback a
 * field) and keeps in `sparse` what it copied of each block: its 8-byte head, the 64 bytes after
 * it (its directory) and the first 4 bytes of each of its streams; `regions` ([offset, length])
 * are gathered in the same submission. `jobs`: each chunk's first block (a byte offset in the
 * container, from the predict header the host read), its payload's end, its fields and the
 * word width (bytes, 4 for 8-byte elements: a block's streams are its planes). Nothing is
 * trusted: the plan reads each block and stream where its own walk puts it
 * ({@link missingPredictedReads}).
 */
async function walkFieldBlocks(
  gpu: GpuContext,
  container: GPUBuffer,
  sparse: SparseContainer,
  jobs: readonly { first: number; end: number; fields: number; width: number }[],
  regions: readonly [number, number][],
): Promise<void> {
  const table = new Uint32Array(4 * jobs.length);
  let words = 0;
  jobs.forEach((j, i) => {
    table.set([j.first, j.end, j.fields | (j.width << 16), words], 4 * i);
    words += j.fields * BLOCK.words;
  });
  const length = sparse.length;
  let keepRegions: () => Promise<void> = async () => undefined;
  const read = await gpu.submit('decompress: field blocks', (s) => {
    const out = s.temp(4 * words, 'field blocks walk');
    const jobsBuf = s.temp(table.byteLength, 'field blocks jobs');
    gpu.device.queue.writeBuffer(jobsBuf, 0, table);
    s.dispatch(
      walkPipeline(gpu, 'blocks'),
      [
        { binding: 0, resource: { buffer: s.uniform([length, 0, 0, jobs.length]) } },
        { binding: 1, resource: { buffer: container, size: Math.ceil(length / 4) * 4 } },
        { binding: 2, resource: { buffer: out } },
        { binding: 3, resource: { buffer: jobsBuf } },
      ],
      Math.ceil(jobs.length / 64),
      'parle:field-blocks-walk',
    );
    keepRegions = encodeRegionReads(gpu, s, container, sparse, regions);
    return s.readAfter(out, 4 * words);
  });
  const got = await read();
  await keepRegions();
  const bytes = new Uint8Array(got.buffer, got.byteOffset, got.byteLength);
  /** `n` bytes of the slot from word `word`, no further than the payload's `end` from `at`. */
  const piece = (word: number, at: number, end: number, n: number) =>
    bytes.subarray(4 * word, 4 * word + Math.max(0, Math.min(n, end - at)));
  jobs.forEach((j, i) => {
    const first = table[4 * i + 3];
    for (let k = 0; k < j.fields; k++) {
      const slot = first + k * BLOCK.words;
      const at = got[slot];
      if (at === NONE || at + FIELD_BLOCK_HEADER_BYTES > j.end) break;
      sparse.add(at, piece(slot + BLOCK.head, at, j.end, FIELD_BLOCK_HEADER_BYTES));
      sparse.add(at + FIELD_BLOCK_HEADER_BYTES, piece(slot + BLOCK.directory, at + FIELD_BLOCK_HEADER_BYTES, j.end, 64));
      for (let w = 0; w < MAX_STREAMS; w++) {
        const streamAt = got[slot + BLOCK.streamAt + w];
        if (streamAt !== NONE) sparse.add(streamAt, piece(slot + BLOCK.heads + w, streamAt, j.end, 4));
      }
    }
  });
}

/** Copies the byte ranges `regions` ([offset, length], inside the container) of `container` into `sparse`, in one readback. */
async function fetchRegions(
  gpu: GpuContext,
  container: GPUBuffer,
  sparse: SparseContainer,
  regions: readonly [number, number][],
): Promise<void> {
  if (!regions.some(([, length]) => length > 0)) return;
  const keep = await gpu.submit('decompress: plan reads', (s) => encodeRegionReads(gpu, s, container, sparse, regions));
  await keep();
}

/**
 * Records in `s` the gather of the byte ranges `regions` ([offset, length], inside the container)
 * of `container` into one buffer read back after the submission; the returned function, called
 * after it, keeps each range in `sparse`.
 */
function encodeRegionReads(
  gpu: GpuContext,
  s: Submission,
  container: GPUBuffer,
  sparse: SparseContainer,
  regions: readonly [number, number][],
): () => Promise<void> {
  // regions that overlap or lie within MERGE_GAP bytes of each other are read as one gather job
  // (a field block's head and its directory follow each other); each is kept as its own copy
  const sorted = regions.filter(([, length]) => length > 0).sort((a, b) => a[0] - b[0]);
  const jobs: GatherJob[] = [];
  let bytes = 0;
  for (const [offset, length] of sorted) {
    const last = jobs[jobs.length - 1];
    if (last !== undefined && offset <= last.srcByteOffset + last.byteLength + MERGE_GAP) {
      const end = Math.max(last.srcByteOffset + last.byteLength, offset + length);
      bytes += Math.ceil((end - last.srcByteOffset) / 4) * 4 - Math.ceil(last.byteLength / 4) * 4;
      last.byteLength = end - last.srcByteOffset;
      continue;
    }
    jobs.push({ srcByteOffset: offset, dstByteOffset: bytes, byteLength: length });
    bytes += Math.ceil(length / 4) * 4;
  }
  if (jobs.length === 0) return async () => undefined;
  const dst = s.temp(bytes, 'plan reads');
  s.encoder.clearBuffer(dst);
  encodeGather(gpu, s, container, dst, jobs);
  const read = s.readAfter(dst, bytes);
  return async () => {
    const got = new Uint8Array((await read()).buffer);
    let j = 0;
    for (const [offset, length] of sorted) {
      while (offset >= jobs[j].srcByteOffset + jobs[j].byteLength) j++;
      const from = jobs[j].dstByteOffset + offset - jobs[j].srcByteOffset;
      sparse.add(offset, got.subarray(from, from + length));
    }
  };
}

/**
 * Decodes the container held by `container` (u8; its length is the container's) into a new
 * DeviceArray on `gpu` as described above. `container` is not modified and must stay alive
 * until the promise settles. `tableChunks`: chunks walked a readback (default 4096; tests make
 * it small to take a table in several); `walkBlocks`: false leaves predicted chunks' field blocks
 * to the reads of {@link missingPredictedReads}, a block a round (tests: the plan's second try).
 * @throws ParleError UNSUPPORTED_TYPE (not u8), NOT_PARLE, UNSUPPORTED_VERSION, TRUNCATED,
 *   CORRUPT, LIMIT_EXCEEDED, CHECKSUM_MISMATCH, TOO_LARGE (beyond one storage binding),
 *   DEVICE_LOST, ABORTED
 */
export async function decompressDeviceContainer(
  cpu: CpuPath,
  gpu: GpuContext,
  container: DeviceArray,
  maxElements: number,
  signal?: AbortSignal,
  tableChunks = WALK_CHUNKS,
  walkBlocks = true,
): Promise<DeviceArray> {
  gpu.checkInput(container, 'container', ['u8']);
  /** The container read back whole and decoded as a host container is (ts/codec/gpu/decompress.ts). */
  const readBackWhole = async () => decompressToDevice(cpu, gpu, (await gpu.download(container)) as Uint8Array, maxElements, signal);
  const length = container.byteLength;
  gpu.checkBindable(Math.ceil(Math.max(length, 4) / 4) * 4, 'decompress container');
  // the reader's own errors (truncated header, not a container) for what cannot hold a chunk table
  if (length < HEADER_BYTES + ENTRY_BYTES) return readBackWhole();
  const sparse = new SparseContainer(length);
  let first = 0;
  let start = HEADER_BYTES;
  let left = Math.min(FIRST_WALK_CHUNKS, tableChunks);
  /** Bytes of the chunk index at the container's end (from the header the first walk reads). */
  let index = 0;
  let headerRead = false;
  for (;;) {
    const slots = Math.max(1, Math.min(left, tableChunks, Math.floor((length - start) / ENTRY_BYTES)));
    const { reached, stop, from } = await walkTable(gpu, container.buffer, sparse, first, start, slots);
    if (!headerRead) {
      headerRead = true;
      const header = readHeader(sparse.readAt(0, HEADER_BYTES), maxElements);
      if (header.version === 1) return readBackWhole();
      left = header.chunkCount;
      index = indexBytes(header);
      // a version-4 shape block: the walk started after the one its header claims (and copied
      // it); where that is not the one this header has (the walk trusted for nothing), the table
      // is walked again from the entries after it
      const entries = firstEntryOffset(header);
      if (entries !== from) {
        start = entries;
        continue;
      }
    }
    left -= reached;
    if (signal?.aborted) throw abortError(signal);
    first += reached;
    // the walk stopped short (the table's end, a truncated container): the host's walk says which
    // (or every chunk walked: a chunk index may follow)
    if (reached < slots || stop === NONE || stop >= length || left <= 0) break;
    start = stop;
  }
  // the chunk index at the end, which the walk checks against the entries it found (the first
  // walk copied it where the table fits its slots)
  if (index > 0 && index <= length && !sparse.has(length - index, index)) {
    await fetchRegions(gpu, container.buffer, sparse, [[length - index, index]]);
  }
  const { header, chunks } = walkChunks(sparse.readAt, length, maxElements);
  // predicted chunks (stage 7): what their plan reads (step 2 above); those the GPU does not
  // decode send the whole container through the CPU
  const predicted = chunks.filter((c) => c.predict === true && c.elementCount > 0);
  /** The rounds that read what predicted chunks' plans miss after the walks ({@link missingPredictedReads}). */
  let verify: (() => Promise<void>) | undefined;
  if (predicted.length > 0) {
    const size = elementSize(header.type);
    const t0 = performance.now();
    let rounds = 0;
    let fetched = 0;
    const found = predicted.map((): PredictedReads => ({}));
    /** One readback of what the plans still miss; false when they miss nothing. */
    const fetchMissing = async (): Promise<boolean> => {
      const regions = predicted.flatMap((c, i) => missingPredictedReads(sparse, c, size, found[i]));
      if (regions.length === 0) return false;
      fetched += regions.length;
      rounds++;
      await fetchRegions(gpu, container.buffer, sparse, regions);
      if (signal?.aborted) throw abortError(signal);
      return true;
    };
    // the predict headers (the table's walk copied each payload's first bytes: those it did not
    // reach are gathered), then every chunk's field blocks and their streams' heads walked on
    // the GPU, a decimal map's exceptions beside them; what is still missing after them (what
    // the walk could not follow) in more
    const heads = predicted
      .filter((c) => !sparse.has(c.payloadOffset, prefixBytes(c)))
      .map((c): [number, number] => [c.payloadOffset, prefixBytes(c)]);
    if (heads.length > 0) {
      await fetchRegions(gpu, container.buffer, sparse, heads);
      fetched += heads.length;
      rounds++;
    }
    const walks: { first: number; end: number; fields: number; width: number }[] = [];
    /** A decimal map's exceptions, gathered beside the walk. */
    const alongside: [number, number][] = [];
    let blocks = 0;
    predicted.forEach((c, i) => {
      const head = predictHeadOf(sparse, c, size, found[i]); // none where it fails its checks: the plan reports it
      if (head === undefined) return;
      if (head.map === ValueMap.Decimal && head.exceptions > 0) {
        alongside.push([
          c.payloadOffset + head.exceptionsAt,
          Math.min(exceptionBytes(size) * head.exceptions, c.payloadBytes - head.exceptionsAt),
        ]);
      }
      // no more blocks than 8-byte heads fit the payload (what a header claims is not allocated)
      const fields = Math.min(head.fields, Math.floor((c.payloadBytes - head.blocksAt) / FIELD_BLOCK_HEADER_BYTES));
      if (fields === 0 || blocks + fields > WALK_BLOCKS) return;
      blocks += fields;
      walks.push({ first: c.payloadOffset + head.blocksAt, end: c.payloadOffset + c.payloadBytes, fields, width: head.wordWidth });
    });
    if (walks.length > 0 && walkBlocks) {
      await walkFieldBlocks(gpu, container.buffer, sparse, walks, alongside);
      rounds++;
    }
    verify = async () => {
      while (rounds < MAX_FIELDS + 6 && (await fetchMissing()));
    };
    debug(
      () =>
        `decompress of a device container: ${predicted.length} predicted chunks planned from ${fetched} regions in ${rounds} readbacks, ${(performance.now() - t0).toFixed(2)} ms`,
    );
  }
  if (!chunksOnDevice(sparse.readAt, header, chunks)) return readBackWhole();
  // the exceptions of quantized chunks (the walk read their header, directory and stream heads)
  const regions: [number, number][] = [];
  const width = elementSize(header.type) === 8 ? 8 : 4;
  const headerBytes = quantizeHeaderBytes(width);
  for (const c of chunks) {
    if (c.quantize !== true || c.elementCount === 0) continue;
    const head = sparse.readAt(c.payloadOffset, headerBytes);
    if (head.length < headerBytes) continue; // CORRUPT in the plan
    // the exception count: the header's word 3 (f64: word 4, before its reserved word)
    const exceptions = new DataView(head.buffer, head.byteOffset, headerBytes).getUint32(width === 8 ? 16 : 12, true);
    regions.push([c.payloadOffset + headerBytes, Math.min((4 + width) * exceptions, c.payloadBytes - headerBytes)]);
  }
  await fetchRegions(gpu, container.buffer, sparse, regions);
  if (signal?.aborted) throw abortError(signal);
  if (verify !== undefined) {
    // the plan first reads only what the walks found: the bytes it finds are the container's, so
    // it makes the plan (or throws the error) a plan from every byte would; where it reads what
    // is not held, the rounds of missingPredictedReads fill in what is missing and it plans again
    // (against checking every chunk's reads first: 0.94-1.03x the time in an A/B on the H200)
    const held: ReadAt = (offset, length) => {
      if (!sparse.has(offset, length)) throw new Missing([offset, length]);
      return sparse.readAt(offset, length);
    };
    try {
      return await decodeContainerOnDevice(gpu, { buffer: container.buffer, readAt: held }, header, chunks, signal);
    } catch (e) {
      if (!(e instanceof Missing)) throw e;
    }
    await verify();
  }
  return decodeContainerOnDevice(gpu, { buffer: container.buffer, readAt: sparse.readAt }, header, chunks, signal);
}
