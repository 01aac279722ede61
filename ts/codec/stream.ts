/**
 * Incremental .parle writing and reading with bounded memory: bytes go in as they arrive
 * (file reads, HTTP bodies), encoded or decoded pieces come out chunk by chunk. Platform
 * neutral; ts/node/files.ts wraps them for Node files and streams.
 *
 * Chunks are coded in batches of about 4 MiB ({@link BATCH_BYTES}, at least one chunk), every
 * worker taking chunks of a batch, two batches in flight. Memory held: two batches of input (or
 * of decoded elements) plus their payloads, and the batch being gathered; at most 3 x 64 MiB
 * with the largest chunks.
 */
import type { CpuPath } from '../cpu/cpu-path.js';
import { ErrorCodes, ParleError } from '../errors.js';
import type { ElementType, ParleArray } from '../types.js';
import { bytesOf, elementSize } from '../types.js';
import { abortError } from '../cpu/pool.js';
import { checkIndex } from '../format/container.js';
import { checkOut } from './arrays.js';
import {
  chunkReport,
  decodeChunkRun,
  encodeChunkRun,
  type ChunkCodec,
  type ChunkToDecode,
  type ChunkReport,
  type EncodedChunk,
} from './cpu/chunks.js';
import { decodeLegacyChunk } from './legacy/chunk.js';
import { chunkCodecOf, chunkLengthOf, predictPlanOf, type CompressSettings } from './settings.js';
import type { PredictPlan } from './predict.js';
import {
  ENTRY_BYTES,
  HEADER_BYTES,
  chunkElementCount,
  readShape,
  shapeBlockBytes,
  makeHeader,
  checkMagic,
  readEntry,
  readHeader,
  writeEntry,
  writeHeader,
  indexBytes,
  readIndex,
  writeIndex,
  type ChunkEntry,
  type Header,
} from '../format/layout.js';

/**
 * Input bytes a writer codes in one batch of chunks (all workers at once): large enough that
 * every worker of a 16-core host gets a 256 KiB chunk, small enough to stream.
 */
const BATCH_BYTES = 4 << 20;

/**
 * A host copy of an encoded chunk's payload: from the kernels' memory at word speed
 * (CpuPath.copyOfBytes) where it lies there, else (a stored chunk: a view of the input) with a
 * new array and `set`. Not `payload.slice()`: V8 copies a view of a SharedArrayBuffer element by
 * element there, 0.9 GB/s on the 2-core VM against 3-5 GB/s; for the service's payloads that
 * was a quarter of its main thread.
 */
function copyOfPayload(cpu: CpuPath, { payload, payloadPtr }: EncodedChunk): Uint8Array {
  if (payloadPtr !== undefined) return cpu.copyOfBytes(payloadPtr, payload.length);
  const copy = new Uint8Array(payload.length);
  copy.set(payload);
  return copy;
}

/** The output pieces of an encoded chunk: its table entry, then its payload. */
function serialize({ entry, payload }: EncodedChunk): Uint8Array[] {
  return [writeEntry(entry), payload];
}

/** Collects incoming byte pieces and hands out exact-length pieces. */
class ByteQueue {
  private pieces: Uint8Array[] = [];
  private head = 0;
  length = 0;

  push(bytes: Uint8Array): void {
    if (bytes.length === 0) return;
    this.pieces.push(bytes);
    this.length += bytes.length;
  }

  /** Removes and returns the first `n` bytes (a view when they lie in one piece, else a copy). */
  take(n: number): Uint8Array {
    const first = this.pieces[0];
    if (first && first.length - this.head >= n) {
      const out = first.subarray(this.head, this.head + n);
      this.head += n;
      if (this.head === first.length) {
        this.pieces.shift();
        this.head = 0;
      }
      this.length -= n;
      return out;
    }
    const out = new Uint8Array(n);
    let filled = 0;
    while (filled < n) {
      const piece = this.pieces[0];
      const count = Math.min(piece.length - this.head, n - filled);
      out.set(piece.subarray(this.head, this.head + count), filled);
      filled += count;
      this.head += count;
      if (this.head === piece.length) {
        this.pieces.shift();
        this.head = 0;
      }
    }
    this.length -= n;
    return out;
  }
}

/**
 * Writes a container for `elementCount` elements of `type` from their little-endian bytes, in
 * pieces of any size. The element count must be known up front (it is in the header): from a
 * file's size or an HTTP Content-Length.
 *
 * The pieces are copied once, straight into the batch they belong to, which lives in the CPU
 * path's memory where that is shared (the workers read it in place, as for an array from
 * `engine.alloc`): no gathering copy and no second copy into the kernels' memory. On the 2-core
 * VM those two copies, and the garbage they left, took a fifth of the service's main thread.
 */
export class ContainerWriter {
  readonly header: Header;
  /** The batch being gathered: its bytes (exactly the batch's input) and how many have arrived. */
  private gathering: { bytes: Uint8Array; filled: number; resident: boolean } | undefined;
  /** Chunks in the batches started or being gathered. */
  private chunkIndex = 0;
  private started = false;
  private received = 0;
  /** Batches of chunks being encoded, oldest first (their output keeps this order). */
  private readonly inflight: Promise<EncodedChunk[]>[] = [];
  /** What each chunk written so far was coded with and why (the chooser's reasoning). */
  readonly reports: ChunkReport[] = [];
  /** Each chunk's entry offset, as written (the chunk index at the end); the bytes written so far. */
  private readonly entryOffsets: Float64Array;
  private written = 0;

  /** @internal `engine.createCompressor` makes writers. */
  constructor(
    private readonly cpu: CpuPath,
    readonly type: ElementType,
    elementCount: number,
    /** Chunks of `settings.chunkBytes`; `explain`: keep the chooser's reasons in {@link reports}. */
    private readonly settings: CompressSettings,
    /** Runs each write and end through the engine's queue. */
    private readonly admit?: <R>(work: () => Promise<R>) => Promise<R>,
  ) {
    this.header = makeHeader(type, elementCount, chunkLengthOf(settings, type), settings.level, settings.shape);
    this.codec = chunkCodecOf(settings);
    this.entryOffsets = new Float64Array(indexBytes(this.header) > 0 ? this.header.chunkCount : 0);
  }

  private readonly codec: ChunkCodec;
  /** The predict plan (a shape given), made from the first batch's elements: whole slabs of the array. */
  private plan: PredictPlan | undefined;
  private planned = false;

  /** Bytes of input expected in all. */
  get totalInputBytes(): number {
    return this.header.elementCount * elementSize(this.type);
  }

  /**
   * Takes more input bytes (not modified, and not to be modified until the returned promise
   * resolves); resolves to the output pieces ready so far (header, entries, payloads). Keeps
   * two batches of chunks in flight.
   * @throws ParleError INVALID_ARGUMENT when more bytes arrive than the element count allows
   */
  async write(bytes: Uint8Array): Promise<Uint8Array[]> {
    return this.admit ? this.admit(() => this.writeNow(bytes)) : this.writeNow(bytes);
  }

  private async writeNow(bytes: Uint8Array): Promise<Uint8Array[]> {
    if (this.settings.signal?.aborted) throw abortError(this.settings.signal);
    if (this.received + bytes.length > this.totalInputBytes) {
      this.received += bytes.length;
      throw new ParleError(ErrorCodes.INVALID_ARGUMENT, `more input than the ${this.header.elementCount} elements announced`);
    }
    this.received += bytes.length;
    const out = this.start();
    for (let at = 0; at < bytes.length;) {
      const batch = (this.gathering ??= this.nextBatch());
      const count = Math.min(bytes.length - at, batch.bytes.length - batch.filled);
      // at word speed whatever the alignment (CpuPath.writeBytes; it may write 7 bytes past the
      // piece: the next piece's place, or the resident array's slack)
      if (batch.resident) this.cpu.writeBytes(batch.bytes.byteOffset + batch.filled, bytes.subarray(at, at + count));
      else batch.bytes.set(bytes.subarray(at, at + count), batch.filled);
      batch.filled += count;
      at += count;
      if (batch.filled === batch.bytes.length) this.launch();
      // two batches in flight: one coded while the next one's input arrives
      while (this.inflight.length > 1) out.push(...this.emit(await this.inflight.shift()!));
    }
    return out;
  }

  /** The output pieces of a finished batch (entries and payloads), its reports and entry offsets noted in order. */
  private emit(chunks: EncodedChunk[]): Uint8Array[] {
    return chunks.flatMap((chunk) => {
      if (this.entryOffsets.length > 0) this.entryOffsets[this.reports.length] = this.written;
      this.written += ENTRY_BYTES + chunk.payload.length;
      this.reports.push(chunkReport(this.reports.length, chunk));
      return serialize(chunk);
    });
  }

  /**
   * A new batch to gather: the next whole chunks, about {@link BATCH_BYTES} of input (at least
   * one chunk), in the CPU path's memory when it is shared (not cleared: every byte is written).
   */
  private nextBatch(): { bytes: Uint8Array; filled: number; resident: boolean } {
    const size = elementSize(this.type);
    const chunkBytes = this.header.chunkLength * size;
    const perBatch = Math.max(1, Math.floor(BATCH_BYTES / chunkBytes));
    const chunks = Math.min(perBatch, this.header.chunkCount - this.chunkIndex);
    const lastChunk = this.chunkIndex + chunks - 1;
    const need = (chunks - 1) * chunkBytes + chunkElementCount(this.header, lastChunk) * size;
    this.chunkIndex += chunks;
    const bytes = this.cpu.residentResult('u8', need) as Uint8Array;
    return { bytes, filled: 0, resident: this.cpu.isResident(bytes) };
  }

  /**
   * Starts the gathered batch (ts/codec/cpu/chunks.ts encodeChunkRun: every worker takes chunks
   * of one batch, reading the input in place when it lives in the CPU path's memory); its memory
   * goes back once the batch is coded and its payloads copied out.
   */
  private launch(): void {
    const { bytes } = this.gathering!;
    this.gathering = undefined;
    const resident = this.cpu.isResident(bytes);
    const shape = this.settings.shape;
    // (a flat array's record stride is not searched here: the chunk length was fixed before any data)
    if (!this.planned && shape !== undefined && shape.length >= 2) {
      const slab = shape.slice(1).reduce((a, d) => a * d, 1);
      const elements = bytes.length / elementSize(this.type);
      const batchShape = [Math.floor(elements / slab), ...shape.slice(1)];
      if (batchShape[0] * slab === elements)
        this.plan = predictPlanOf({ ...this.settings, shape: batchShape }, this.type, bytes, { strides: false });
      this.planned = true;
    }
    // 8-byte types are always planned (a shape that did not fit the batch: as a sequence)
    if (this.plan === undefined && elementSize(this.type) === 8)
      this.plan = predictPlanOf({ ...this.settings, shape: undefined }, this.type, bytes, { strides: false });
    const run = encodeChunkRun(
      this.cpu,
      this.type,
      bytes,
      this.header.chunkLength,
      {
        codec: this.codec,
        level: this.header.level,
        huffmanLanes: this.settings.decoder === 'gpu',
        signal: this.settings.signal,
        explain: this.settings.explain === true,
        ...(this.plan !== undefined ? { predict: this.plan } : {}),
        ...(resident ? { residentPtr: bytes.byteOffset } : {}),
      },
      // the payloads are views into the kernels' memory (or the input): copied before it goes back
      (encoded) => encoded.map((chunk) => ({ entry: chunk.entry, payload: copyOfPayload(this.cpu, chunk), reason: chunk.reason })),
    ).finally(() => this.cpu.free(bytes));
    run.catch(() => undefined); // awaited in order
    this.inflight.push(run);
  }

  /**
   * Ends the input; resolves to the last output pieces.
   * @throws ParleError UNALIGNED_LENGTH or INVALID_ARGUMENT when the input was short
   */
  async end(): Promise<Uint8Array[]> {
    return this.admit ? this.admit(() => this.endNow()) : this.endNow();
  }

  private async endNow(): Promise<Uint8Array[]> {
    const out = this.start();
    // a batch still gathering means the input was short: its memory goes back now
    if (this.gathering) {
      this.cpu.free(this.gathering.bytes);
      this.gathering = undefined;
    }
    while (this.inflight.length > 0) out.push(...this.emit(await this.inflight.shift()!));
    if (this.received === this.totalInputBytes && this.entryOffsets.length > 0) out.push(writeIndex(this.entryOffsets));
    if (this.received !== this.totalInputBytes) {
      const size = elementSize(this.type);
      throw new ParleError(
        this.received % size === 0 ? ErrorCodes.INVALID_ARGUMENT : ErrorCodes.UNALIGNED_LENGTH,
        `input ended after ${this.received} bytes; ${this.totalInputBytes} were announced`,
      );
    }
    return out;
  }

  private start(): Uint8Array[] {
    if (this.started) return [];
    this.started = true;
    const head = writeHeader(this.header);
    this.written = head.length;
    return [head];
  }
}

/** Options of {@link ContainerReader}. */
export interface ReaderOptions {
  /** Refuse containers that claim more elements than this. */
  maxElements?: number;
  /**
   * A caller-owned array for the whole result: the reader checks its type and length against
   * the header, decodes every chunk into its place (in place by the workers when it lives in the
   * engine's memory) and hands out views of it instead of new arrays.
   */
  out?: ParleArray;
  /** Aborts the chunks in flight and later calls (ABORTED). */
  signal?: AbortSignal;
  /** Runs each call through the engine's queue (QUEUE_FULL, DESTROYED). @internal */
  admit?: <R>(work: () => Promise<R>) => Promise<R>;
}

/**
 * Reads a container from pieces of any size and returns the decoded elements' bytes chunk by
 * chunk, each checked against its checksums before it is handed out.
 */
export class ContainerReader {
  header: Header | undefined;
  private readonly pending = new ByteQueue();
  private entry: ChunkEntry | undefined;
  private chunkIndex = 0;
  /** Chunks (or batches of chunks) being decoded, oldest first. */
  private readonly inflight: Promise<Uint8Array>[] = [];
  /** Whole chunks read but not yet decoding, and their decoded bytes. */
  private batch: ChunkToDecode[] = [];
  private batchBytes = 0;
  /** Container bytes consumed so far, and each entry's offset (checked against the chunk index at the end). */
  private consumed = 0;
  private readonly entryOffsets: number[] = [];
  private indexRead = false;

  /** @internal `engine.createDecompressor` makes readers. */
  constructor(
    private readonly cpu: CpuPath,
    private readonly options: ReaderOptions = {},
  ) {}

  /** Decoded bytes so far, in elements. */
  get elementsDecoded(): number {
    return this.header ? Math.min(this.header.elementCount, this.chunkIndex * this.header.chunkLength) : 0;
  }

  /**
   * Takes more container bytes; resolves to the decoded elements' bytes ready so far. Keeps a
   * chunk a thread in flight.
   * @throws ParleError NOT_PARLE, UNSUPPORTED_VERSION, CORRUPT, LIMIT_EXCEEDED, CHECKSUM_MISMATCH
   */
  async write(bytes: Uint8Array): Promise<Uint8Array[]> {
    return this.options.admit ? this.options.admit(() => this.writeNow(bytes)) : this.writeNow(bytes);
  }

  private async writeNow(bytes: Uint8Array): Promise<Uint8Array[]> {
    const { signal, out: target } = this.options;
    if (signal?.aborted) throw abortError(signal);
    this.pending.push(bytes);
    const out: Uint8Array[] = [];
    for (;;) {
      if (!this.header) {
        if (this.pending.length < HEADER_BYTES) {
          // Check the magic as far as it has arrived, so a wrong file fails early.
          if (this.pending.length > 0) checkMagic(this.peek(Math.min(8, this.pending.length)));
          break;
        }
        this.header = readHeader(this.pending.take(HEADER_BYTES), this.options.maxElements);
        this.consumed = HEADER_BYTES;
        if (target !== undefined) checkOut(this.cpu, target, this.header.type, this.header.elementCount, bytes, false);
        continue;
      }
      if ((this.header.rank ?? 0) > 0 && this.header.shape === undefined) {
        // a version-4 header's shape block
        const need = shapeBlockBytes(this.header.rank!);
        if (this.pending.length < need) break;
        readShape(this.pending.take(need), this.header);
        this.consumed += need;
        continue;
      }
      if (this.chunkIndex === this.header.chunkCount) {
        const index = indexBytes(this.header);
        if (index > 0 && !this.indexRead) {
          if (this.pending.length < index) break;
          const offsets = readIndex(this.pending.take(index), this.header, this.consumed);
          checkIndex(
            offsets,
            this.entryOffsets.map((entryOffset) => ({ entryOffset })),
          );
          this.indexRead = true;
          this.launchBatch();
          while (this.inflight.length > 1) out.push(await this.inflight.shift()!);
          continue;
        }
        if (this.pending.length > 0) {
          throw new ParleError(ErrorCodes.CORRUPT, 'corrupt .parle file: bytes after the last chunk');
        }
        break;
      }
      if (!this.entry) {
        if (this.pending.length < ENTRY_BYTES) break;
        this.entry = readEntry(this.pending.take(ENTRY_BYTES), this.header, this.chunkIndex);
        if (indexBytes(this.header) > 0) this.entryOffsets.push(this.consumed);
        this.consumed += ENTRY_BYTES;
        continue;
      }
      if (this.pending.length < this.entry.payloadBytes) break;
      const payload = this.pending.take(this.entry.payloadBytes);
      this.consumed += this.entry.payloadBytes;
      const size = elementSize(this.header.type);
      const chunkBytes = this.entry.elementCount * size;
      if (this.header.version !== 1) {
        // versions 2 and 3: chunks decode in batches, every worker taking chunks of one batch; a
        // payload is copied (it is compressed, so small) as the caller may reuse its pieces
        this.batch.push({ entry: this.entry, index: this.chunkIndex, payload: payload.slice() });
        this.batchBytes += chunkBytes;
        this.entry = undefined;
        this.chunkIndex++;
        // the last batch waits for the chunk index, when there is one: a container whose index is
        // cut short (or whose last payload claims some of its bytes) is TRUNCATED, as in memory
        const last = this.chunkIndex === this.header.chunkCount;
        if (last ? indexBytes(this.header) === 0 : this.batchBytes >= BATCH_BYTES) this.launchBatch();
        // two batches in flight: one decoded while the next one's bytes arrive
        while (this.inflight.length > 1) out.push(await this.inflight.shift()!);
        continue;
      }
      const at = this.chunkIndex * this.header.chunkLength * size;
      const decoded = target !== undefined ? bytesOf(target).subarray(at, at + chunkBytes) : new Uint8Array(chunkBytes);
      const decoding = decodeLegacyChunk(this.cpu, this.header.type, this.entry, payload, decoded, this.chunkIndex, signal).then(
        () => decoded,
      );
      decoding.catch(() => undefined); // awaited below, in order
      this.inflight.push(decoding);
      this.entry = undefined;
      this.chunkIndex++;
      if (this.inflight.length >= this.cpu.chunkConcurrency) out.push(await this.inflight.shift()!);
    }
    return out;
  }

  /** Starts decoding the collected chunks (decodeChunkRun) into their place in the result, or a new array. */
  private launchBatch(): void {
    const chunks = this.batch;
    const bytes = this.batchBytes;
    this.batch = [];
    this.batchBytes = 0;
    if (chunks.length === 0 || !this.header) return;
    const { out: target, signal } = this.options;
    const at = chunks[0].index * this.header.chunkLength * elementSize(this.header.type);
    const decoded = target !== undefined ? bytesOf(target).subarray(at, at + bytes) : new Uint8Array(bytes);
    const inPlace = target !== undefined && this.cpu.isResident(target);
    const decoding = decodeChunkRun(this.cpu, this.header.type, chunks, inPlace ? target.byteOffset + at : decoded, signal).then(
      () => decoded,
    );
    decoding.catch(() => undefined); // awaited in order
    this.inflight.push(decoding);
  }

  /**
   * Ends the input; resolves to the last decoded pieces.
   * @throws ParleError NOT_PARLE (empty input), TRUNCATED (the input stopped early)
   */
  async end(): Promise<Uint8Array[]> {
    return this.options.admit ? this.options.admit(() => this.endNow()) : this.endNow();
  }

  private async endNow(): Promise<Uint8Array[]> {
    const out: Uint8Array[] = [];
    // the whole chunks of a short input are still handed out before TRUNCATED, but not the last
    // batch of an indexed container without its index (the in-memory reader decodes nothing then)
    if (this.header !== undefined && this.chunkIndex === this.header.chunkCount && indexBytes(this.header) > 0 && !this.indexRead) {
      this.batch = [];
      this.batchBytes = 0;
    }
    this.launchBatch();
    while (this.inflight.length > 0) out.push(await this.inflight.shift()!);
    if (!this.header) {
      if (this.pending.length === 0) throw new ParleError(ErrorCodes.NOT_PARLE, 'not a .parle container (empty)');
      throw new ParleError(ErrorCodes.TRUNCATED, `truncated .parle header: ${this.pending.length} of ${HEADER_BYTES} bytes`);
    }
    if (this.chunkIndex < this.header.chunkCount) {
      throw new ParleError(
        ErrorCodes.TRUNCATED,
        `truncated .parle file: ${this.header.chunkCount - this.chunkIndex} of ${this.header.chunkCount} chunks missing`,
      );
    }
    if (indexBytes(this.header) > 0 && !this.indexRead) {
      throw new ParleError(
        ErrorCodes.TRUNCATED,
        `truncated .parle file: chunk index of ${this.pending.length} of ${indexBytes(this.header)} bytes`,
      );
    }
    return out;
  }

  /** The first `n` pending bytes without consuming them. */
  private peek(n: number): Uint8Array {
    const copy = this.pending.take(this.pending.length);
    this.pending.push(copy);
    return copy.subarray(0, n);
  }
}
