/**
 * Node: .parle files, standard input and standard output through streams with bounded memory
 * (a few chunks in flight: a 4 GiB input is compressed in well under 300 MiB of RSS;
 * bench/format-stream.mjs measures it). The CLI's I/O rules, as gzip and zstd users expect:
 *
 * - The path `-` means standard input (as input) or standard output (as output).
 * - A new or existing regular file (`--force` to replace one) is written to a temporary file
 *   beside it and renamed into place only on success, so a failure never leaves a partial
 *   output behind; a symbolic link to a regular file keeps its link: the file it names is
 *   replaced.
 * - Anything else that exists (a FIFO, a character device such as /dev/null, a symbolic link to
 *   one, standard output) is written directly, never replaced; a terminal only with `--force`
 *   (the output is binary). A directory is refused.
 * - Compress needs the element count before the first chunk (it is in the header): input from a
 *   pipe is first copied to a temporary file in the OS's temporary directory, removed after.
 */
import { createReadStream, createWriteStream, readSync } from 'node:fs';
import { fstat as fstatCallback } from 'node:fs';
import { mkdtemp, open, realpath, rename, rm, stat, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { isatty } from 'node:tty';
import { promisify } from 'node:util';
import type { ChunkReport } from '../codec/cpu/chunks.js';
import type { Engine } from '../engine.js';
import { ErrorCodes, ParleError } from '../errors.js';
import { inspectContainer, type ContainerReport } from '../format/container.js';
import type { ElementType } from '../types.js';
import { elementSize } from '../types.js';

const fstat = promisify(fstatCallback);

/** The path that means standard input or standard output. */
export const STDIO = '-';

/** Called as work advances: `doneBytes` of `totalBytes` (input bytes on compress, output bytes on decompress). */
export type ProgressCallback = (doneBytes: number, totalBytes: number) => void;

/** Options of {@link compressFile}. */
export interface CompressFileOptions {
  /** Element type of the raw little-endian input (default u8). */
  type?: ElementType;
  /** Bytes of decoded elements per chunk (default: the level's, 256 KiB at the default level). */
  chunkBytes?: number;
  /** Compression level 1..9 (default 5; see CompressOptions.level). */
  level?: number;
  /** Keep the chooser's reasons in the returned reports. */
  explain?: boolean;
  /** The codec pipeline: 'auto' (default), 'stored' or stages joined by '+' (see CompressOptions.codec). */
  codec?: string;
  /** The decoder the Huffman streams are laid out for: 'cpu' (default, mode 2) or 'gpu' (mode 3; see CompressOptions.decoder). */
  decoder?: 'cpu' | 'gpu';
  /** f32 and f64 only: lossy within this absolute bound (see CompressOptions.errorBound). */
  errorBound?: { abs: number };
  /** The array's shape, C order; its product must be the input's element count (see CompressOptions.shape). */
  shape?: readonly number[];
  /** Replace an existing regular output file, write binary to a terminal (default false). */
  force?: boolean;
  onProgress?: ProgressCallback;
}

/** Options of {@link decompressFile}. */
export interface DecompressFileOptions {
  /** Refuse containers that claim more elements than this (default: no limit; memory stays bounded). */
  maxElements?: number;
  /** As {@link CompressFileOptions.force}. */
  force?: boolean;
  onProgress?: ProgressCallback;
}

const ioError = (what: string, e: unknown): ParleError =>
  e instanceof ParleError
    ? e
    : new ParleError(ErrorCodes.IO_ERROR, `${what}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`, { cause: e });

const describe = (path: string) => (path === STDIO ? 'standard input' : path);

/** An input opened for one pass: its bytes, their count where known, and what to remove after. */
interface Input {
  stream: () => Readable;
  /** Bytes, or undefined for a pipe. */
  size: number | undefined;
  close: () => Promise<void>;
}

/**
 * Opens `path` (or standard input for `-`) for reading.
 * @throws ParleError IO_ERROR (missing, unreadable, a directory)
 */
async function openInput(path: string): Promise<Input> {
  if (path === STDIO) {
    const info = await fstat(0).catch((e) => {
      throw ioError('cannot read standard input', e);
    });
    return {
      stream: () => process.stdin,
      size: info.isFile() ? info.size : undefined,
      close: async () => undefined,
    };
  }
  let info;
  try {
    info = await stat(path);
  } catch (e) {
    throw ioError(`cannot read ${path}`, e);
  }
  if (info.isDirectory()) throw new ParleError(ErrorCodes.IO_ERROR, `${path} is a directory`);
  // a FIFO or device has no size: read it as a pipe
  return {
    stream: () => createReadStream(path, { highWaterMark: 1 << 20 }),
    size: info.isFile() ? info.size : undefined,
    close: async () => undefined,
  };
}

/**
 * An input whose size is known: pipes are copied to a temporary file first (the container's
 * header holds the element count).
 */
async function openSizedInput(path: string): Promise<Input & { size: number; path: string }> {
  const input = await openInput(path);
  if (input.size !== undefined) {
    return { ...input, size: input.size, path: path === STDIO ? '/dev/stdin' : path };
  }
  const dir = await mkdtemp(join(tmpdir(), 'parle-'));
  const spill = join(dir, 'input');
  try {
    await pipeline(input.stream(), createWriteStream(spill));
  } catch (e) {
    await rm(dir, { recursive: true, force: true });
    throw ioError(`cannot read ${describe(path)}`, e);
  }
  const { size } = await stat(spill);
  return {
    stream: () => createReadStream(spill, { highWaterMark: 1 << 20 }),
    size,
    path: spill,
    close: () => rm(dir, { recursive: true, force: true }),
  };
}

/**
 * Writes through `produce` into `outPath` (`-`: standard output) by the rules in this module's
 * comment.
 * @throws ParleError IO_ERROR (exists without force, a directory, a terminal without force, a write failed)
 */
async function writeOutput(outPath: string, force: boolean | undefined, produce: (sink: Writable) => Promise<void>): Promise<void> {
  const refuseTerminal = (fd: number, name: string) => {
    if (!force && isatty(fd)) {
      throw new ParleError(ErrorCodes.IO_ERROR, `${name} is a terminal: not writing binary data there (use --force, or redirect it)`);
    }
  };
  if (outPath === STDIO) {
    refuseTerminal(1, 'standard output');
    await produce(process.stdout).catch((e) => {
      throw ioError('writing standard output failed', e);
    });
    return;
  }
  const info = await stat(outPath).catch(() => undefined);
  if (info?.isDirectory()) throw new ParleError(ErrorCodes.IO_ERROR, `${outPath} is a directory`);
  if (info !== undefined && !info.isFile()) {
    // a FIFO, a device or a socket (or a link to one): written in place, never replaced
    const handle = await open(outPath, 'w').catch((e) => {
      throw ioError(`cannot write ${outPath}`, e);
    });
    try {
      refuseTerminal(handle.fd, outPath);
    } catch (e) {
      await handle.close();
      throw e;
    }
    // the stream closes the handle when it finishes or fails
    await produce(handle.createWriteStream()).catch((e) => {
      throw ioError(`writing ${outPath} failed`, e);
    });
    return;
  }
  if (info !== undefined && !force) throw new ParleError(ErrorCodes.IO_ERROR, `${outPath} exists (use --force to replace it)`);
  // a regular file, or none yet: a temporary beside the file (beside the link's target for a
  // link), renamed over it on success
  const target = info !== undefined ? await realpath(outPath) : outPath;
  const tmpPath = join(dirname(target), `.${target.slice(dirname(target).length + 1)}.${process.pid}.tmp`);
  try {
    await produce(createWriteStream(tmpPath));
    await rename(tmpPath, target);
  } catch (e) {
    await unlink(tmpPath).catch(() => undefined);
    throw ioError(`writing ${outPath} failed`, e);
  }
}

/** The codec side of a stream: a container writer or reader. */
interface StreamCodec {
  write(bytes: Uint8Array): Promise<Uint8Array[]>;
  end(): Promise<Uint8Array[]>;
}

/**
 * Pipes `source` through `codec` into `sink`, one 1 MiB read at a time; backpressure comes from
 * the pipeline (the codec keeps a few batches of chunks in flight). `progress(pieceIn, piecesOut)`
 * is called after each piece. The sink is ended unless it is standard output.
 */
function streamThrough(
  source: Readable,
  codec: StreamCodec,
  sink: Writable,
  progress?: (inBytes: number, out: Uint8Array[]) => void,
): Promise<void> {
  return pipeline(
    source,
    async function* (pieces: AsyncIterable<Buffer>) {
      for await (const piece of pieces) {
        const out = await codec.write(piece);
        progress?.(piece.length, out);
        yield* out;
      }
      const out = await codec.end();
      progress?.(0, out);
      yield* out;
    },
    sink,
    { end: sink !== process.stdout },
  );
}

/**
 * Compresses the raw little-endian elements in `inPath` (`-`: standard input) into the .parle
 * file `outPath` (`-`: standard output) by the rules in this module's comment.
 * @throws ParleError UNALIGNED_LENGTH (size not a multiple of the element size), INVALID_OPTION,
 *   IO_ERROR
 */
export async function compressFile(
  engine: Engine,
  inPath: string,
  outPath: string,
  options: CompressFileOptions = {},
): Promise<ChunkReport[]> {
  const type = options.type ?? 'u8';
  const size = elementSize(type);
  const input = await openSizedInput(inPath);
  try {
    const totalBytes = input.size;
    if (totalBytes % size !== 0) {
      throw new ParleError(
        ErrorCodes.UNALIGNED_LENGTH,
        `${describe(inPath)} has ${totalBytes} bytes, not a whole number of ${type} elements (${size} bytes each)`,
      );
    }
    const writer = engine.createCompressor(type, totalBytes / size, {
      ...(options.chunkBytes !== undefined ? { chunkBytes: options.chunkBytes } : {}),
      ...(options.codec !== undefined ? { codec: options.codec } : {}),
      ...(options.level !== undefined ? { level: options.level } : {}),
      ...(options.decoder !== undefined ? { decoder: options.decoder } : {}),
      explain: options.explain === true,
      ...(options.errorBound !== undefined ? { errorBound: options.errorBound } : {}),
      ...(options.shape !== undefined ? { shape: options.shape } : {}),
    });
    let done = 0;
    await writeOutput(outPath, options.force, (sink) =>
      streamThrough(input.stream(), writer, sink, (inBytes) => {
        done += inBytes;
        options.onProgress?.(done, totalBytes);
      }),
    );
    return writer.reports;
  } finally {
    await input.close();
  }
}

/**
 * Decompresses the .parle file `inPath` (`-`: standard input) into raw little-endian elements in
 * `outPath` (`-`: standard output); returns the element type. Progress counts decoded bytes.
 * @throws ParleError NOT_PARLE, UNSUPPORTED_VERSION, TRUNCATED, CORRUPT, CHECKSUM_MISMATCH,
 *   LIMIT_EXCEEDED, IO_ERROR
 */
export async function decompressFile(
  engine: Engine,
  inPath: string,
  outPath: string,
  options: DecompressFileOptions = {},
): Promise<ElementType> {
  const input = await openInput(inPath);
  const reader = engine.createDecompressor(options.maxElements !== undefined ? { maxElements: options.maxElements } : {});
  let done = 0;
  await writeOutput(outPath, options.force, (sink) =>
    streamThrough(input.stream(), reader, sink, (_inBytes, out) => {
      const header = reader.header;
      if (header === undefined || options.onProgress === undefined) return;
      for (const piece of out) done += piece.length;
      options.onProgress(done, header.elementCount * elementSize(header.type));
    }),
  );
  if (reader.header === undefined) throw new ParleError(ErrorCodes.NOT_PARLE, `${describe(inPath)} is empty, not a .parle container`);
  return reader.header.type;
}

/**
 * Reads the header and walks the chunk table of a .parle file (`-`: standard input, copied to a
 * temporary file first); 32 bytes a chunk are read, the payloads are not.
 * @throws ParleError as the container checks, IO_ERROR
 */
export async function inspectFile(path: string): Promise<ContainerReport> {
  const input = await openSizedInput(path);
  try {
    const handle = await open(input.path, 'r').catch((e) => {
      throw ioError(`cannot read ${describe(path)}`, e);
    });
    try {
      const fd = handle.fd;
      return inspectContainer((offset, length) => {
        const buffer = new Uint8Array(length);
        const read = readSync(fd, buffer, 0, length, offset);
        return buffer.subarray(0, read);
      }, input.size);
    } finally {
      await handle.close();
    }
  } finally {
    await input.close();
  }
}
