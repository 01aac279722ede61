/// <reference types="@webgpu/types" />
/**
 * The GPU kernels of container version 2's codec (docs/format.md, "Version 2: the codec
 * pipeline"): the tree hash (XXH32 of 4096-byte blocks, level after level), the decode of
 * Huffman streams (modes 0, 1 and 2), delta encode and decode, byte-plane shuffle and unshuffle,
 * byte histograms and the encode of mode-2 Huffman streams. Dispatch of shaders/codec-hash.wgsl,
 * codec-huffman.wgsl, codec-delta.wgsl,
 * codec-shuffle.wgsl, codec-histogram.wgsl, codec-huffman-encode.wgsl and codec-gather.wgsl
 * (the byte gather that lays out payloads: outputs at any byte offset, unlike the rule below).
 *
 * Every op works on raw GPUBuffers at byte offsets, so that a container's streams, planes and
 * chunks can live side by side in one buffer. Shared rules:
 * - Buffers need STORAGE usage. Kernels bind a window of each buffer at a 256-byte aligned offset
 *   (minStorageBufferOffsetAlignment) covering the bytes they touch; a window beyond one storage
 *   binding throws TOO_LARGE (chunks are at most 64 MiB, far below).
 * - Outputs are written in whole u32 words: output byte offsets must be multiples of 4, and the
 *   bytes from an output's end up to the next multiple of 4 are overwritten with zeros.
 * - Inputs and outputs are distinct buffers (WebGPU forbids binding one buffer as read-only and
 *   writable storage in one dispatch).
 * - Each `encode*` function records its passes into a Submission (one command buffer, no
 *   readback in between); the async functions of the same name without `encode` run one
 *   submission each.
 */
import { ErrorCodes, ParleError } from '../../errors.js';
import {
  canonicalCodeTable,
  headerBytes,
  HuffmanMode,
  LANES,
  MAX_CODE_BITS,
  MAX_SEGMENT_LOG2,
  MIN_SEGMENT_LOG2,
  readLayout,
  segmentCount,
  writeHeader,
} from '../huffman.js';
import hashSource from '../../../shaders/codec-hash.wgsl';
import huffmanSource from '../../../shaders/codec-huffman.wgsl';
import deltaSource from '../../../shaders/codec-delta.wgsl';
import shuffleSource from '../../../shaders/codec-shuffle.wgsl';
import gatherSource from '../../../shaders/codec-gather.wgsl';
import histogramSource from '../../../shaders/codec-histogram.wgsl';
import codeLengthsSource from '../../../shaders/codec-code-lengths.wgsl';
import huffmanEncodeSource from '../../../shaders/codec-huffman-encode.wgsl';
import rleStreamsSource from '../../../shaders/codec-rle-streams.wgsl';
import packDecodeSource from '../../../shaders/codec-pack-decode.wgsl';
import readSrcSource from '../../../shaders/read-src.wgsl';
import lanesBallotSource from '../../../shaders/huffman-lanes-ballot.wgsl';
import lanesSharedSource from '../../../shaders/huffman-lanes-shared.wgsl';
import { composeKernel, WORKGROUP_SIZE } from '../../gpu/compose.js';
import type { DeviceArray } from '../../gpu/device-array.js';
import { rleEncodeThen } from '../../gpu/rle.js';
import { encodeScan } from '../../gpu/scan.js';
import type { GpuContext, Submission } from '../../gpu/context.js';
import { getPipeline } from '../../gpu/pipelines.js';

/** The kernels that read bytes of their `src` binding, with shaders/read-src.wgsl appended. */
const huffmanDecodeCode = (ballot: boolean): string =>
  `${huffmanSource}\n${readSrcSource}\n${ballot ? lanesBallotSource : lanesSharedSource}`;
const huffmanEncodeCode = `${huffmanEncodeSource}\n${readSrcSource}`;
const packDecodeCode = `${packDecodeSource}\n${readSrcSource}`;

/** Bytes of a tree hash block (docs/format.md, "Tree hash"). */
export const TREE_HASH_BLOCK = 4096;
/** Entries of a Huffman decode table: one per 11-bit window. */
export const HUFFMAN_TABLE_ENTRIES = 1 << MAX_CODE_BITS;
/** log2 of the bytes per invocation of raw (mode 0) and one-symbol (mode 1) streams. */
const FLAT_SEGMENT_LOG2 = 9;
/** Words per workgroup tile of the delta decode (WG x WPI in codec-delta.wgsl). */
const DELTA_TILE_WORDS = WORKGROUP_SIZE * 16;

// ---- shared plumbing -----------------------------------------------------------------------

function pipeline(
  ctx: GpuContext,
  file: string,
  source: string,
  entryPoint: string,
  consts: Record<string, string> = {},
  subgroups = false,
): GPUComputePipeline {
  const key = `${file}:${entryPoint}:${Object.values(consts).join(',')}:${subgroups ? 'sg' : ''}`;
  return getPipeline(ctx.device, key, () => ({
    code: composeKernel(source, { subgroups, scalar: 'u32', consts }),
    entryPoint,
  }));
}

function checkBuffer(buffer: unknown, name: string): GPUBuffer {
  if (typeof buffer !== 'object' || buffer === null || typeof (buffer as GPUBuffer).size !== 'number') {
    throw new ParleError(ErrorCodes.INVALID_ARGUMENT, `${name} must be a GPUBuffer`);
  }
  const b = buffer as GPUBuffer;
  if ((b.usage & GPUBufferUsage.STORAGE) === 0) throw new ParleError(ErrorCodes.INVALID_ARGUMENT, `${name} needs GPUBufferUsage.STORAGE`);
  return b;
}

function checkCount(value: unknown, name: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new ParleError(ErrorCodes.INVALID_ARGUMENT, `${name} must be a non-negative integer`);
  }
  return value;
}

function checkWordOffset(value: unknown, name: string): number {
  const v = checkCount(value, name);
  if (v % 4 !== 0)
    throw new ParleError(ErrorCodes.INVALID_ARGUMENT, `${name} must be a multiple of 4 (outputs are written in whole words)`);
  return v;
}

function checkSpan(buffer: GPUBuffer, offset: number, bytes: number, name: string): void {
  if (offset + bytes > buffer.size) {
    throw new ParleError(
      ErrorCodes.INVALID_ARGUMENT,
      `${name}: bytes ${offset}..${offset + bytes} lie past the buffer's ${buffer.size} bytes`,
    );
  }
}

function roundUp4(n: number): number {
  return Math.ceil(n / 4) * 4;
}

/** A window [start, end) of a buffer bound at an aligned offset: `base` is that offset. */
interface Window {
  base: number;
  end: number;
}

function alignment(ctx: GpuContext): number {
  return ctx.device.limits.minStorageBufferOffsetAlignment;
}

function maxBinding(ctx: GpuContext): number {
  return Math.min(ctx.limits.maxStorageBufferBindingSize, ctx.limits.maxBufferSize);
}

/** The window of `buffer` covering bytes [start, end), bound from an aligned offset. */
function windowOf(ctx: GpuContext, start: number, end: number): Window {
  const align = alignment(ctx);
  return { base: Math.floor(start / align) * align, end };
}

/** The binding of a window (at least 4 bytes, rounded up to a word; `buffer` holds them). */
function bindWindow(ctx: GpuContext, buffer: GPUBuffer, w: Window, what: string): GPUBufferBinding {
  const size = Math.min(buffer.size - w.base, Math.max(4, roundUp4(w.end - w.base)));
  if (size > maxBinding(ctx)) {
    throw new ParleError(ErrorCodes.TOO_LARGE, `${what}: a window of ${size} bytes exceeds one storage binding (${maxBinding(ctx)} bytes)`);
  }
  return { buffer, offset: w.base, size };
}

/**
 * Splits items, in order, into groups whose spans (one [start, end) per bound buffer, or null
 * where an item does not touch that buffer) each fit one storage binding from an aligned offset.
 */
function groupBySpans(
  ctx: GpuContext,
  count: number,
  spans: (i: number) => ([number, number] | null)[],
  what: string,
): { items: number[]; windows: (Window | null)[] }[] {
  const align = alignment(ctx);
  const limit = maxBinding(ctx);
  const groups: { items: number[]; windows: (Window | null)[] }[] = [];
  let current: { items: number[]; windows: (Window | null)[] } | null = null;
  const fits = (w: Window) => roundUp4(w.end - w.base) <= limit;
  for (let i = 0; i < count; i++) {
    const s = spans(i);
    const own = s.map((x) => (x === null ? null : windowOf(ctx, x[0], x[1])));
    for (const w of own) {
      if (w !== null && !fits(w))
        throw new ParleError(ErrorCodes.TOO_LARGE, `${what}: item ${i} spans more than one storage binding (${limit} bytes)`);
    }
    if (current !== null) {
      const merged = current.windows.map((w, k) => {
        const o = own[k];
        if (w === null) return o;
        if (o === null) return w;
        const start = Math.min(w.base, o.base);
        return { base: Math.floor(start / align) * align, end: Math.max(w.end, o.end) };
      });
      if (merged.every((w) => w === null || fits(w))) {
        current.items.push(i);
        current.windows = merged;
        continue;
      }
    }
    current = { items: [i], windows: own };
    groups.push(current);
  }
  return groups;
}

/** A scratch storage buffer of `s` holding `words` (uploaded before the submission runs). */
function storageWords(ctx: GpuContext, s: Submission, words: Uint32Array, label: string): GPUBuffer {
  const b = s.temp(Math.max(16, words.byteLength), label);
  if (words.length > 0) ctx.device.queue.writeBuffer(b, 0, words.buffer, words.byteOffset, words.byteLength);
  return b;
}

/** Maps a MAP_READ buffer (after its submission), copies its contents out and destroys it. */
async function mapAndRead(ctx: GpuContext, rb: GPUBuffer): Promise<ArrayBuffer> {
  try {
    await ctx.guard(rb.mapAsync(GPUMapMode.READ));
    const copy = rb.getMappedRange().slice(0);
    rb.unmap();
    return copy;
  } finally {
    rb.destroy();
  }
}

// ---- tree hash ---------------------------------------------------------------------------------

/** A byte range of a buffer. */
export interface ByteRange {
  /** Byte offset of the range's first byte (any alignment). */
  byteOffset: number;
  /** Bytes in the range (any count, 0 included). */
  byteLength: number;
}

/** Blocks a workgroup of hashTiles (codec-hash.wgsl): four invocations a block, one XXH32 lane each. */
const HASH_TILE_BLOCKS = WORKGROUP_SIZE / 4;

/** One range of one level of the tree hash: entries of the kernel's range table. */
interface HashRange {
  src: number;
  bytes: number;
  dst: number;
}

/**
 * Records the tree hashes of docs/format.md ("Tree hash": XXH32, seed 0, of every 4096-byte
 * block, level after level while a level is longer than 4096 bytes, then XXH32 of the last
 * level) of every byte range of `buffer`, into `s`. Returns a function to call after the
 * submission: it reads back one u32 per range (4 bytes each, nothing else) in range order.
 *
 * Every level of every range is planned on the host (their lengths follow from the byte
 * lengths), so the levels run as dispatches of one submission: level 1 hashes the ranges in
 * place (grouped into windows of one storage binding each), later levels hash the previous
 * level's hashes in a scratch buffer; a range's last level writes its result word. A workgroup
 * hashes 64 blocks, four invocations a block (one XXH32 lane each), staging 128 bytes of each
 * block at a time in workgroup memory with coalesced loads.
 * Example: a range of 4097 bytes -> XXH32(le32(XXH32(bytes 0..4095)) ++ le32(XXH32(byte 4096)));
 * an empty range -> 0x02CC5D05.
 * @throws ParleError INVALID_ARGUMENT (not a storage buffer, a range outside it), TOO_LARGE
 *   (a range beyond one storage binding)
 */
export function encodeTreeHashes(
  ctx: GpuContext,
  s: Submission,
  buffer: GPUBuffer,
  ranges: readonly ByteRange[],
): () => Promise<Uint32Array> {
  checkBuffer(buffer, 'buffer');
  if (!Array.isArray(ranges)) throw new ParleError(ErrorCodes.INVALID_ARGUMENT, 'ranges must be an array');
  ranges.forEach((r, i) => {
    checkCount(r?.byteOffset, `ranges[${i}].byteOffset`);
    checkCount(r?.byteLength, `ranges[${i}].byteLength`);
    checkSpan(buffer, r.byteOffset, r.byteLength, `ranges[${i}]`);
  });
  const m = ranges.length;
  if (m === 0) return async () => new Uint32Array(0);

  // Plan: scratch words [0, m) are the results, then each non-final level's hashes.
  let next = m;
  const place = (bytes: number, chunk: number): { dst: number; blocks: number } => {
    const blocks = Math.max(1, Math.ceil(bytes / TREE_HASH_BLOCK));
    if (blocks === 1) return { dst: chunk, blocks };
    const dst = next;
    next += blocks;
    return { dst, blocks };
  };
  const first: HashRange[] = [];
  let active: { chunk: number; src: number; bytes: number }[] = [];
  ranges.forEach((r, c) => {
    const { dst, blocks } = place(r.byteLength, c);
    first.push({ src: r.byteOffset, bytes: r.byteLength, dst });
    if (blocks > 1) active.push({ chunk: c, src: dst * 4, bytes: blocks * 4 });
  });
  const later: HashRange[][] = [];
  while (active.length > 0) {
    const level: HashRange[] = [];
    const still: typeof active = [];
    for (const a of active) {
      const { dst, blocks } = place(a.bytes, a.chunk);
      level.push({ src: a.src, bytes: a.bytes, dst });
      if (blocks > 1) still.push({ chunk: a.chunk, src: dst * 4, bytes: blocks * 4 });
    }
    later.push(level);
    active = still;
  }

  const scratch = s.temp(next * 4, 'tree-hash');
  const hashPipe = pipeline(ctx, 'codec-hash', hashSource, 'hashTiles');
  const dispatch = (level: HashRange[], input: GPUBufferBinding | null, srcBase: number): void => {
    const table = new Uint32Array(level.length * 4);
    let blocks = 0;
    level.forEach((r, i) => {
      // an empty range reads nothing: its offset may lie outside the window
      table.set([r.bytes === 0 ? 0 : r.src - srcBase, r.bytes, blocks, r.dst], i * 4);
      blocks += Math.max(1, Math.ceil(r.bytes / TREE_HASH_BLOCK));
    });
    const tableBuf = storageWords(ctx, s, table, 'tree-hash-ranges');
    s.dispatch(
      hashPipe,
      [
        { binding: 0, resource: { buffer: s.uniform([blocks, level.length, input === null ? 1 : 0, 0]) } },
        { binding: 1, resource: { buffer: tableBuf } },
        // later levels read `scratch`; the range table stands in for the unused input
        { binding: 2, resource: input ?? { buffer: tableBuf } },
        { binding: 3, resource: { buffer: scratch } },
      ],
      Math.ceil(blocks / HASH_TILE_BLOCKS),
      'parle:tree-hash',
    );
  };
  const groups = groupBySpans(
    ctx,
    m,
    (i) => [ranges[i].byteLength > 0 ? [ranges[i].byteOffset, ranges[i].byteOffset + ranges[i].byteLength] : null],
    'tree hash',
  );
  for (const group of groups) {
    const w = group.windows[0];
    const level = group.items.map((i) => first[i]);
    if (w === null)
      dispatch(level, null, 0); // only empty ranges: nothing is read
    else dispatch(level, bindWindow(ctx, buffer, w, 'tree hash'), w.base);
  }
  for (const level of later) dispatch(level, null, 0);
  return s.readAfter(scratch, m * 4);
}

/**
 * Tree hashes of many byte ranges of `buffer` (e.g. every chunk's decoded elements), in one
 * submission; only the hashes are read back (4 bytes a range). See {@link encodeTreeHashes}.
 * @returns one u32 per range, in range order.
 * @throws ParleError INVALID_ARGUMENT, TOO_LARGE, DEVICE_LOST
 */
export async function treeHashes(ctx: GpuContext, buffer: GPUBuffer, ranges: readonly ByteRange[]): Promise<Uint32Array> {
  if (Array.isArray(ranges) && ranges.length === 0) return new Uint32Array(0);
  return submitThenRead(ctx, 'tree-hash', (s) => encodeTreeHashes(ctx, s, buffer, ranges));
}

/** Records `encode` in one submission, then runs the reader it returned (the one-call forms of the encode* functions). */
async function submitThenRead<R>(ctx: GpuContext, label: string, encode: (s: Submission) => () => Promise<R>): Promise<R> {
  let read: (() => Promise<R>) | undefined;
  await ctx.submit(label, (s) => {
    read = encode(s);
  });
  return read!();
}

/**
 * The tree hash (docs/format.md) of `byteLength` bytes of `buffer` from `byteOffset` (any
 * alignment), computed on the GPU; only the final u32 is read back.
 * Example: 0 bytes -> 0x02CC5D05; up to 4096 bytes -> their XXH32 (seed 0).
 * @throws ParleError INVALID_ARGUMENT, TOO_LARGE, DEVICE_LOST
 */
export async function treeHash(ctx: GpuContext, buffer: GPUBuffer, byteOffset: number, byteLength: number): Promise<number> {
  return (await treeHashes(ctx, buffer, [{ byteOffset, byteLength }]))[0];
}

// ---- Huffman -----------------------------------------------------------------------------------

/** A parsed Huffman stream (docs/format.md, "Huffman streams"), checked against its bytes. */
export interface HuffmanStreamInfo {
  /** 0 raw, 1 one symbol, 2 Huffman, 3 Huffman in 32 interleaved lanes (version 3). */
  mode: 0 | 1 | 2 | 3;
  /** Decoded bytes D (symbols). */
  decodedBytes: number;
  /** Encoded bytes E: the stream's length, mode byte included. */
  encodedBytes: number;
  /** Mode 2: the segment size log2 g (10..20); 0 for modes 0 and 1. */
  segmentLog2: number;
  /** Mode 2: segments K = ceil(D / 2^g); 0 for modes 0 and 1. */
  segments: number;
  /** Mode 1: the symbol; 0 otherwise. */
  symbol: number;
  /** Mode 2: byte offset of the segment end table from the stream's start; 0 otherwise. */
  offsetsAt: number;
  /** Byte offset of the data from the stream's start: mode 2 the bitstreams, mode 0 the raw bytes (1); mode 1: 0. */
  bitsAt: number;
}

function corrupt(message: string): never {
  throw new ParleError(ErrorCodes.CORRUPT, message);
}

/**
 * Parses one Huffman stream (`stream`: its E = `encodedBytes` bytes, mode byte first, or only
 * its first min(3, E) bytes when `encodedBytes` is given) that must decode to `decodedBytes`
 * bytes, with the checks of docs/format.md that need only its fixed fields
 * (unknown mode, a length that disagrees with mode 0 or 1, a truncated header or segment end
 * table, g outside 10..20): O(1) a stream, since a decode plans thousands. The GPU decode checks
 * the rest (shaders/codec-huffman.wgsl, reported by {@link encodeHuffmanDecode}'s check as
 * CORRUPT): code lengths over 11, fewer than two symbols, an incomplete or over-full code,
 * segment end offsets decreasing or not ending at the stream's end, a segment that needs bits
 * past its end. Checking the lengths and offsets here had cost a 64 MiB f32 decode of 2048
 * streams 3.6 ms of the main thread on the H200 host.
 * Example: [1, 7] with decodedBytes 3 -> { mode: 1, symbol: 7, ... }.
 * @throws ParleError CORRUPT (with the reason), INVALID_ARGUMENT (not a Uint8Array, a bad count)
 */
export function parseHuffmanStream(stream: Uint8Array, decodedBytes: number, encodedBytes = stream?.length): HuffmanStreamInfo {
  if (!(stream instanceof Uint8Array)) throw new ParleError(ErrorCodes.INVALID_ARGUMENT, 'stream must be a Uint8Array');
  checkCount(decodedBytes, 'decodedBytes');
  checkCount(encodedBytes, 'encodedBytes');
  if (stream.length < Math.min(3, encodedBytes)) {
    throw new ParleError(ErrorCodes.INVALID_ARGUMENT, `stream must hold at least the first ${Math.min(3, encodedBytes)} bytes`);
  }
  if (encodedBytes < 1) corrupt('empty Huffman stream');
  const mode = stream[0];
  // one object shape for every mode (thousands of streams a call)
  const info: HuffmanStreamInfo = {
    mode: 0,
    decodedBytes,
    encodedBytes,
    segmentLog2: 0,
    segments: 0,
    symbol: 0,
    offsetsAt: 0,
    bitsAt: 0,
  };
  if (mode === 0) {
    if (encodedBytes !== 1 + decodedBytes) corrupt(`raw Huffman stream of ${encodedBytes} bytes for ${decodedBytes} bytes`);
    info.bitsAt = 1;
    return info;
  }
  if (mode === 1) {
    if (encodedBytes !== 2) corrupt(`one-symbol Huffman stream of ${encodedBytes} bytes`);
    info.mode = 1;
    info.symbol = stream[1];
    return info;
  }
  if (mode !== 2 && mode !== 3) corrupt(`unknown Huffman mode ${mode}`);
  const layout = readLayout(stream, decodedBytes, encodedBytes);
  if (typeof layout === 'string') corrupt(layout);
  info.mode = mode;
  info.segmentLog2 = layout.segmentLog2;
  info.segments = layout.segments;
  info.offsetsAt = layout.offsetsAt;
  info.bitsAt = layout.bitsAt;
  return info;
}

/**
 * The 2048-entry decode table of a canonical code (docs/format.md): entry w (an 11-bit window of
 * the bitstream, first bit lowest) = symbol | length << 8 of the code that starts the window.
 * Codes are canonical (sorted by length, then symbol) and stored bit-reversed (first bit lowest),
 * so a code c of length L fills the entries reverse(c) + k 2^L, k < 2^(11-L).
 * Example: lengths {0: 1, 1: 2, 2: 2} -> codes 0, 10, 11 -> entries 0bxx0 = 0 | 1 << 8,
 * 0b001 = 1 | 2 << 8, 0b011 = 2 | 2 << 8 (x: any bits).
 * @param lengths code lengths of symbols 0..255 (0 = absent), each at most 11.
 * @throws ParleError CORRUPT (a length over 11, fewer than two symbols, an incomplete or
 *   over-full code)
 */
export function buildHuffmanDecodeTable(lengths: Uint8Array): Uint32Array {
  checkCodeLengths(lengths);
  const order: number[] = [];
  for (let sym = 0; sym < lengths.length && sym < 256; sym++) if (lengths[sym] > 0) order.push(sym);
  order.sort((a, b) => lengths[a] - lengths[b] || a - b);
  const table = new Uint32Array(HUFFMAN_TABLE_ENTRIES);
  let code = 0;
  let previous = lengths[order[0]];
  for (let i = 0; i < order.length; i++) {
    const sym = order[i];
    const len = lengths[sym];
    if (i > 0) code = (code + 1) << (len - previous);
    previous = len;
    let reversed = 0;
    for (let b = 0; b < len; b++) reversed |= ((code >> b) & 1) << (len - 1 - b);
    const entry = sym | (len << 8);
    for (let w = reversed; w < HUFFMAN_TABLE_ENTRIES; w += 1 << len) table[w] = entry;
  }
  return table;
}

/**
 * Checks code lengths as a reader must (each at most 11, at least two symbols, a complete code).
 * The table itself is built where it is used: in each workgroup of the GPU decode kernel
 * (shaders/codec-huffman.wgsl), by {@link buildHuffmanDecodeTable} in tests.
 * @throws ParleError CORRUPT (as {@link buildHuffmanDecodeTable})
 */
export function checkCodeLengths(lengths: Uint8Array): void {
  let symbols = 0;
  let kraft = 0;
  for (let sym = 0; sym < lengths.length && sym < 256; sym++) {
    const len = lengths[sym];
    if (len === 0) continue;
    if (len > MAX_CODE_BITS) corrupt(`code length ${len} of symbol ${sym} over ${MAX_CODE_BITS}`);
    symbols++;
    kraft += HUFFMAN_TABLE_ENTRIES >> len;
  }
  if (symbols < 2) corrupt(`${symbols} symbols in a Huffman code (at least 2)`);
  if (kraft !== HUFFMAN_TABLE_ENTRIES)
    corrupt(`Huffman code is ${kraft < HUFFMAN_TABLE_ENTRIES ? 'incomplete' : 'over-full'} (Kraft sum ${kraft}/${HUFFMAN_TABLE_ENTRIES})`);
}

/** Words of a stream's entry in the decode kernel's stream table (codec-huffman.wgsl `Stream`). */
const STREAM_WORDS = 9;

/** One stream of a {@link encodeHuffmanDecode} call. */
export interface HuffmanDecodeJob {
  /** The stream, parsed and checked by {@link parseHuffmanStream}. */
  stream: HuffmanStreamInfo;
  /** Byte offset of the stream (its mode byte) in the source buffer; any alignment. */
  srcByteOffset: number;
  /**
   * Byte offset of the decoded bytes in the destination buffer: a multiple of 4. The stream
   * writes ceil(D / 4) whole words there (the last one padded with zero bytes).
   */
  dstByteOffset: number;
}

/**
 * Records the decode of Huffman streams (modes 0, 1 and 2) from `srcBuf` into `dstBuf` in `s`,
 * one dispatch for all of them (more only where the streams span more than one storage binding).
 * Mode 2: one invocation per segment of 2^g symbols, found through the stream's segment end
 * offsets (Haugen's offset table; segment-parallel decoding as in Weißenberger and Schmidt 2018),
 * decoded with one lookup of an 11-bit window in the stream's 2048-entry table per symbol and
 * written 4 symbols a word; a workgroup decodes 256 segments of one stream and first builds that
 * table in workgroup memory from the code lengths in the stream's header in `srcBuf` (which must
 * hold the bytes `stream` was parsed from). Modes 0 and 1 are copied or filled, 128 KiB a
 * workgroup, a word an invocation at a time (shaders/codec-huffman.wgsl).
 * Returns a function to call after the submission: it reads back the 12-byte status and throws
 * CORRUPT naming the first stream and segment that failed and why (a code that is not complete or
 * longer than 11 bits, segment end offsets that decrease or do not end at the stream's end, bits
 * past a segment's end: the checks {@link parseHuffmanStream} leaves to the kernel); the output
 * is then unspecified.
 * Destination ranges (rounded up to words) must not overlap each other; the source may hold
 * anything besides the streams.
 * @throws ParleError INVALID_ARGUMENT (buffers, offsets, overlapping outputs, the same buffer for
 *   both), TOO_LARGE (one stream beyond one storage binding)
 */
export function encodeHuffmanDecode(
  ctx: GpuContext,
  s: Submission,
  srcBuf: GPUBuffer,
  dstBuf: GPUBuffer,
  jobs: readonly HuffmanDecodeJob[],
): () => Promise<void> {
  checkBuffer(srcBuf, 'srcBuf');
  checkBuffer(dstBuf, 'dstBuf');
  if (srcBuf === dstBuf) throw new ParleError(ErrorCodes.INVALID_ARGUMENT, 'srcBuf and dstBuf must be different buffers');
  if (!Array.isArray(jobs)) throw new ParleError(ErrorCodes.INVALID_ARGUMENT, 'jobs must be an array');
  jobs.forEach((j, i) => {
    const st = j?.stream;
    if (typeof st !== 'object' || st === null || ![0, 1, 2, 3].includes(st.mode)) {
      throw new ParleError(ErrorCodes.INVALID_ARGUMENT, `jobs[${i}].stream must come from parseHuffmanStream`);
    }
    checkCount(j.srcByteOffset, `jobs[${i}].srcByteOffset`);
    checkWordOffset(j.dstByteOffset, `jobs[${i}].dstByteOffset`);
    checkSpan(srcBuf, j.srcByteOffset, st.encodedBytes, `jobs[${i}] source`);
    checkSpan(dstBuf, j.dstByteOffset, roundUp4(st.decodedBytes), `jobs[${i}] destination`);
  });
  const live = jobs.map((_, i) => i).filter((i) => jobs[i].stream.decodedBytes > 0);
  const byDst = [...live].sort((a, b) => jobs[a].dstByteOffset - jobs[b].dstByteOffset);
  for (let k = 1; k < byDst.length; k++) {
    const prev = jobs[byDst[k - 1]];
    if (prev.dstByteOffset + roundUp4(prev.stream.decodedBytes) > jobs[byDst[k]].dstByteOffset) {
      throw new ParleError(ErrorCodes.INVALID_ARGUMENT, `jobs[${byDst[k - 1]}] and jobs[${byDst[k]}] write overlapping bytes`);
    }
  }
  if (live.length === 0) return async () => undefined;

  // workgroups of a stream: mode 2, WG segments each; mode 3, WG / 32 (32 lanes a segment); modes
  // 0 and 1, pieces of WG x 2^FLAT_SEGMENT_LOG2 bytes
  const groupsOf = (st: HuffmanStreamInfo): number =>
    st.mode === 3
      ? Math.ceil(st.segments / (WORKGROUP_SIZE / LANES))
      : Math.ceil((st.mode === 2 ? st.segments : Math.ceil(st.decodedBytes / 2 ** FLAT_SEGMENT_LOG2)) / WORKGROUP_SIZE);
  // the global slot (WG a workgroup, over every dispatch) of each live job's first segment, for the error message
  const firstSlot = new Map<number, number>();
  let totalGroups = 0;
  for (const i of live) {
    firstSlot.set(i, totalGroups * WORKGROUP_SIZE);
    totalGroups += groupsOf(jobs[i].stream);
  }
  const status = s.temp(16, 'huffman-status');
  s.encoder.clearBuffer(status);
  // mode 3's lanes take their units by a subgroup ballot where every subgroup is 32, 64 or 128
  // wide, else through workgroup memory (shaders/huffman-lanes-*.wgsl)
  const ballot = ctx.hasSubgroups && ctx.subgroupMinSize >= 32 && ctx.subgroupMaxSize <= 128;
  const decodePipe = pipeline(ctx, 'codec-huffman', huffmanDecodeCode(ballot), 'decode', {}, ballot);

  const groups = groupBySpans(
    ctx,
    live.length,
    (k) => {
      const j = jobs[live[k]];
      const src: [number, number] | null = j.stream.mode === 1 ? null : [j.srcByteOffset, j.srcByteOffset + j.stream.encodedBytes];
      return [src, [j.dstByteOffset, j.dstByteOffset + roundUp4(j.stream.decodedBytes)]];
    },
    'Huffman decode',
  );
  for (const group of groups) {
    const [srcWin, dstWin] = group.windows;
    const srcBase = srcWin?.base ?? 0;
    const dstBase = dstWin!.base;
    const entries = new Uint32Array(group.items.length * STREAM_WORDS);
    let workgroups = 0;
    group.items.forEach((k, e) => {
      const i = live[k];
      const { stream: st, srcByteOffset, dstByteOffset } = jobs[i];
      const coded = st.mode >= 2;
      entries.set(
        [
          workgroups,
          st.decodedBytes,
          coded ? st.segmentLog2 : FLAT_SEGMENT_LOG2,
          st.mode,
          st.mode === 1 ? st.symbol : srcByteOffset + (coded ? st.offsetsAt : st.bitsAt) - srcBase,
          coded ? srcByteOffset + st.bitsAt - srcBase : 0,
          (dstByteOffset - dstBase) / 4,
          coded ? srcByteOffset - srcBase : 0,
          coded ? st.encodedBytes - st.bitsAt : 0,
        ],
        e * STREAM_WORDS,
      );
      workgroups += groupsOf(st);
    });
    const streamsBuf = storageWords(ctx, s, entries, 'huffman-streams');
    s.dispatch(
      decodePipe,
      [
        { binding: 0, resource: { buffer: s.uniform([workgroups, group.items.length, firstSlot.get(live[group.items[0]])!, 0]) } },
        { binding: 1, resource: { buffer: streamsBuf } },
        // only one-symbol streams: nothing is read, the stream table stands in
        { binding: 2, resource: srcWin === null ? { buffer: streamsBuf } : bindWindow(ctx, srcBuf, srcWin, 'Huffman source') },
        { binding: 3, resource: bindWindow(ctx, dstBuf, dstWin!, 'Huffman destination') },
        { binding: 4, resource: { buffer: status, offset: 0, size: 12 } },
      ],
      workgroups,
      'parle:huffman-decode',
    );
  }
  const read = s.readAfter(status, 12);
  return async () => {
    const [bad, lowest, reasons] = await read();
    if (bad === 0) return;
    const g = 0xffffffff - lowest;
    let job = live[0];
    for (const i of live) if (firstSlot.get(i)! <= g) job = i;
    const seg = g - firstSlot.get(job)!;
    const why = [
      reasons & 2 ? 'code lengths that are not a complete code of at most 11 bits' : '',
      reasons & 4 ? 'segment end offsets that decrease or do not end at the stream end' : '',
      reasons & 1 ? 'bits past its end' : '',
      reasons & 8 ? 'lanes that read past its units or leave units unread' : '',
    ].filter(Boolean);
    corrupt(`Huffman stream ${job}: segment ${seg} is corrupt: ${why.join('; ')} (${bad} failure${bad === 1 ? '' : 's'})`);
  };
}

/**
 * Decodes Huffman streams (modes 0, 1 and 2) from `srcBuf` into `dstBuf` in one submission;
 * see {@link encodeHuffmanDecode}. Reads back 12 bytes (the status), nothing else.
 * @throws ParleError CORRUPT (a bad code, bad segment offsets, bits past a segment's end), INVALID_ARGUMENT, TOO_LARGE,
 *   DEVICE_LOST
 */
export async function huffmanDecode(
  ctx: GpuContext,
  srcBuf: GPUBuffer,
  dstBuf: GPUBuffer,
  jobs: readonly HuffmanDecodeJob[],
): Promise<void> {
  let check: () => Promise<void> = async () => undefined;
  await ctx.submit('huffman-decode', (s) => {
    check = encodeHuffmanDecode(ctx, s, srcBuf, dstBuf, jobs);
  });
  await check();
}

// ---- pack ---------------------------------------------------------------------------------------

/** Elements per block of a pack stream (docs/format.md, "Pack streams"). */
const PACK_BLOCK = 256;

/** One pack stream of {@link encodePackDecode}. */
export interface PackDecodeJob {
  /** Byte offset of its first block in the source buffer (and in `bytes`, the same bytes on the host). */
  srcByteOffset: number;
  /** Its bytes E (the blocks', nothing after the last). */
  encodedBytes: number;
  /** Decoded bytes D: D / width elements. */
  decodedBytes: number;
  /** Element width w of the stream. */
  width: 1 | 2 | 4;
  /** Byte offset of the decoded bytes in the destination: a multiple of 4; ceil(D / 4) words are written. */
  dstByteOffset: number;
}

/**
 * Records the decode of pack streams (docs/format.md, "Pack streams") from `srcBuf` into
 * `dstBuf` in two dispatches for all of them (shaders/codec-pack-decode.wgsl): an invocation a
 * stream walks its block headers with every check a reader makes there and lists the blocks;
 * then a workgroup a block of 256 elements decodes it. The source is bound whole (TOO_LARGE
 * beyond one storage binding). Returns a function to call after the submission: it reads the
 * status back and throws CORRUPT naming the first stream whose headers a reader rejects (or that
 * does not decode to its D bytes in its E), else where exception positions were out of order or
 * past their block (the output is then unspecified). Destination ranges must not overlap; the
 * result equals the CPU decoder's (assembly/pack.ts packDecode) byte for byte.
 * @throws ParleError INVALID_ARGUMENT (offsets, widths, the same buffer twice), TOO_LARGE; CORRUPT
 *   from the returned function
 */
export function encodePackDecode(
  ctx: GpuContext,
  s: Submission,
  srcBuf: GPUBuffer,
  dstBuf: GPUBuffer,
  jobs: readonly PackDecodeJob[],
): () => Promise<void> {
  checkBuffer(srcBuf, 'srcBuf');
  checkBuffer(dstBuf, 'dstBuf');
  if (srcBuf === dstBuf) throw new ParleError(ErrorCodes.INVALID_ARGUMENT, 'srcBuf and dstBuf must be different buffers');
  const streams = new Uint32Array(Math.max(8, 8 * jobs.length));
  let blocks = 0;
  let dstEnd = 0;
  let srcEnd = 0;
  jobs.forEach((j, i) => {
    if (![1, 2, 4].includes(j.width)) throw new ParleError(ErrorCodes.INVALID_ARGUMENT, `jobs[${i}].width must be 1, 2 or 4`);
    checkCount(j.srcByteOffset, `jobs[${i}].srcByteOffset`);
    checkCount(j.encodedBytes, `jobs[${i}].encodedBytes`);
    checkWordOffset(j.dstByteOffset, `jobs[${i}].dstByteOffset`);
    checkCount(j.decodedBytes, `jobs[${i}].decodedBytes`);
    checkSpan(srcBuf, j.srcByteOffset, j.encodedBytes, `jobs[${i}] source`);
    checkSpan(dstBuf, j.dstByteOffset, roundUp4(j.decodedBytes), `jobs[${i}] destination`);
    const n = Math.floor(j.decodedBytes / j.width);
    // width 0 tells the walk that D is not a multiple of w: a stream a reader rejects
    streams.set(
      [j.srcByteOffset, j.srcByteOffset + j.encodedBytes, n, j.decodedBytes % j.width === 0 ? j.width : 0, j.dstByteOffset / 4, blocks],
      8 * i,
    );
    blocks += Math.ceil(n / PACK_BLOCK);
    dstEnd = Math.max(dstEnd, j.dstByteOffset + roundUp4(j.decodedBytes));
    srcEnd = Math.max(srcEnd, roundUp4(j.srcByteOffset + j.encodedBytes));
  });
  if (jobs.length === 0) return async () => undefined;
  ctx.checkBindable(srcEnd, 'pack decode source');
  ctx.checkBindable(Math.max(4, dstEnd), 'pack decode destination');
  const status = s.temp(16, 'pack-status');
  s.encoder.clearBuffer(status);
  const table = s.temp(Math.max(16, 16 * blocks), 'pack blocks');
  const params = s.uniform([blocks, jobs.length, 0, 0]);
  const pipe = (entryPoint: 'walk' | 'decode') =>
    getPipeline(ctx.device, `codec-pack-decode:${entryPoint}`, () => ({ code: packDecodeCode, entryPoint }));
  const src = { buffer: srcBuf, size: Math.max(4, srcEnd) };
  s.dispatch(
    pipe('walk'),
    [
      { binding: 0, resource: { buffer: params } },
      { binding: 2, resource: src },
      { binding: 4, resource: { buffer: status, offset: 0, size: 16 } },
      { binding: 5, resource: { buffer: storageWords(ctx, s, streams, 'pack streams') } },
      { binding: 6, resource: { buffer: table } },
    ],
    Math.ceil(jobs.length / 64),
    'parle:pack-walk',
  );
  if (blocks > 0) {
    s.dispatch(
      pipe('decode'),
      [
        { binding: 0, resource: { buffer: params } },
        { binding: 1, resource: { buffer: table } },
        { binding: 2, resource: src },
        { binding: 3, resource: { buffer: dstBuf, size: Math.max(4, dstEnd) } },
        { binding: 4, resource: { buffer: status, offset: 0, size: 16 } },
      ],
      blocks,
      'parle:pack-decode',
    );
  }
  const read = s.readAfter(status, 16);
  return async () => {
    const [badPositions, , badStreams, lowest] = await read();
    if (badStreams !== 0) {
      const i = 0xffffffff - lowest;
      const j = jobs[i];
      corrupt(`pack stream ${i}: pack stream does not decode to ${j.decodedBytes} bytes in its ${j.encodedBytes}`);
    }
    if (badPositions !== 0)
      corrupt(`pack stream: ${badPositions} exception position${badPositions === 1 ? '' : 's'} out of order or past its block`);
  };
}

// ---- delta -------------------------------------------------------------------------------------

/** Arguments of the delta and shuffle kernels' element side. */
export interface DeltaArgs {
  /** Input buffer; the elements start at `srcByteOffset` (a multiple of 4, default 0). */
  src: GPUBuffer;
  srcByteOffset?: number;
  /** Output buffer (not `src`); `dstByteOffset` a multiple of 4 (default 0). */
  dst: GPUBuffer;
  dstByteOffset?: number;
  /** Element size in bytes. */
  width: 1 | 2 | 4;
  /** Elements (count x width bytes, little endian, packed in u32 words as in host memory). */
  count: number;
  /**
   * Encode only: elements per chunk, each chunk encoded on its own (its first element kept, as
   * the container's chunks are): 0 or absent for one sequence; else chunkLength x width must be
   * a multiple of 4 bytes (chunks start at whole words). One dispatch for all the chunks.
   */
  chunkLength?: number;
}

function packingConsts(width: 1 | 2 | 4): Record<string, string> {
  const bits = width * 8;
  return {
    'EPW: u32': `${4 / width}u`,
    'BITS: u32': `${bits}u`,
    'EMASK: u32': bits === 32 ? '0xFFFFFFFFu' : `${2 ** bits - 1}u`,
  };
}

function checkDeltaArgs(args: DeltaArgs): { srcOff: number; dstOff: number; bytes: number } {
  if (typeof args !== 'object' || args === null) throw new ParleError(ErrorCodes.INVALID_ARGUMENT, 'arguments must be an object');
  checkBuffer(args.src, 'src');
  checkBuffer(args.dst, 'dst');
  if (args.src === args.dst) throw new ParleError(ErrorCodes.INVALID_ARGUMENT, 'src and dst must be different buffers');
  if (![1, 2, 4].includes(args.width)) throw new ParleError(ErrorCodes.INVALID_ARGUMENT, 'width must be 1, 2 or 4');
  checkCount(args.count, 'count');
  const srcOff = checkWordOffset(args.srcByteOffset ?? 0, 'srcByteOffset');
  const dstOff = checkWordOffset(args.dstByteOffset ?? 0, 'dstByteOffset');
  const bytes = roundUp4(args.count * args.width);
  checkSpan(args.src, srcOff, bytes, 'src');
  checkSpan(args.dst, dstOff, bytes, 'dst');
  return { srcOff, dstOff, bytes };
}

/**
 * Records a delta encode or decode (docs/format.md, stage 1) of `count` elements of `width`
 * bytes in `s`. Encode: d[0] = x[0], d[i] = x[i] - x[i-1]; decode: the inclusive prefix sum
 * x[i] = d[0] + ... + d[i]; both wrap mod 2^(8 width) (floats and i32 by their bit patterns).
 * Example, width 1: encode [5, 7, 6] -> [5, 2, 255]; decode [5, 2, 255] -> [5, 7, 6].
 * Encode: one invocation per word. Decode: reduce-then-scan in three passes (per-tile sums of
 * 4096 words, one workgroup scanning the tile sums, each tile scanned again from its carry), so
 * linear in the bytes; the tile sums (4 bytes per 16 KiB) are scratch. Writes ceil(count x
 * width / 4) words at dst (bytes past the end zero).
 * @throws ParleError INVALID_ARGUMENT (buffers, offsets, width, count), TOO_LARGE
 */
export function encodeDelta(ctx: GpuContext, s: Submission, direction: 'encode' | 'decode', args: DeltaArgs): void {
  if (direction !== 'encode' && direction !== 'decode')
    throw new ParleError(ErrorCodes.INVALID_ARGUMENT, "direction must be 'encode' or 'decode'");
  const { srcOff, dstOff, bytes } = checkDeltaArgs(args);
  const chunkLength = args.chunkLength ?? 0;
  if (
    !Number.isSafeInteger(chunkLength) ||
    chunkLength < 0 ||
    (chunkLength * args.width) % 4 !== 0 ||
    (chunkLength > 0 && direction !== 'encode')
  )
    throw new ParleError(ErrorCodes.INVALID_ARGUMENT, 'chunkLength must be 0 or, for an encode, a count of elements of whole u32 words');
  if (args.count === 0) return;
  const srcWin = windowOf(ctx, srcOff, srcOff + bytes);
  const dstWin = windowOf(ctx, dstOff, dstOff + bytes);
  const src = bindWindow(ctx, args.src, srcWin, 'delta source');
  const dst = bindWindow(ctx, args.dst, dstWin, 'delta destination');
  const words = bytes / 4;
  const tiles = Math.ceil(words / DELTA_TILE_WORDS);
  const chunkWords = (chunkLength * args.width) / 4;
  if (chunkWords >= 2 ** 32) throw new ParleError(ErrorCodes.INVALID_ARGUMENT, 'chunkLength is too large');
  const params = s.uniform([args.count, words, (srcOff - srcWin.base) / 4, (dstOff - dstWin.base) / 4, tiles, chunkWords, 0, 0]);
  const consts = packingConsts(args.width);
  const pipe = (entry: string) => pipeline(ctx, 'codec-delta', deltaSource, entry, consts);
  if (direction === 'encode') {
    s.dispatch(
      pipe('encode'),
      [
        { binding: 0, resource: { buffer: params } },
        { binding: 1, resource: src },
        { binding: 2, resource: dst },
      ],
      Math.ceil(words / WORKGROUP_SIZE),
      'parle:delta-encode',
    );
    return;
  }
  const sums = s.temp(tiles * 4, 'delta-tile-sums');
  s.dispatch(
    pipe('tileSums'),
    [
      { binding: 0, resource: { buffer: params } },
      { binding: 1, resource: src },
      { binding: 3, resource: { buffer: sums } },
    ],
    tiles,
    'parle:delta-tile-sums',
  );
  s.dispatch(
    pipe('carries'),
    [
      { binding: 0, resource: { buffer: params } },
      { binding: 3, resource: { buffer: sums } },
    ],
    1,
    'parle:delta-carries',
  );
  s.dispatch(
    pipe('tileScan'),
    [
      { binding: 0, resource: { buffer: params } },
      { binding: 1, resource: src },
      { binding: 2, resource: dst },
      { binding: 3, resource: { buffer: sums } },
    ],
    tiles,
    'parle:delta-tile-scan',
  );
}

/** One chunk of {@link encodeDeltaDecodeChunks}: `count` elements at `byteOffset` (a multiple of 4). */
export interface DeltaChunk {
  byteOffset: number;
  count: number;
}

/**
 * Records the delta decode (inclusive prefix sum, wrapping; see {@link encodeDelta}) of many
 * chunks of `width`-byte elements in place in `data`, each chunk on its own (its sum starting
 * again at its first element), in three dispatches for all of them: per-tile sums of every tile
 * of every chunk (a workgroup finds its chunk by binary search over a table of the chunks' first
 * tiles), one invocation per chunk turning its tiles' sums into carries, and each tile scanned
 * again and written in place. Bytes of a chunk's last word past its elements keep their value.
 * The chunks must not share words (they may come in any order); `data` is bound whole
 * (TOO_LARGE beyond one storage binding). Replaces three dispatches per chunk, which cost a
 * 64 MiB decode of 256 chunks 23 ms of GPU time on an H200 (the tiny passes, not the bytes).
 * @throws ParleError INVALID_ARGUMENT (offsets, counts, overlapping chunks), TOO_LARGE
 */
export function encodeDeltaDecodeChunks(
  ctx: GpuContext,
  s: Submission,
  data: GPUBuffer,
  width: 1 | 2 | 4,
  chunks: readonly DeltaChunk[],
): void {
  checkBuffer(data, 'data');
  if (![1, 2, 4].includes(width)) throw new ParleError(ErrorCodes.INVALID_ARGUMENT, 'width must be 1, 2 or 4');
  const live = chunks.filter((c) => checkCount(c.count, 'count') > 0);
  if (live.length === 0) return;
  const table = new Uint32Array(live.length * 4);
  const spans = live
    .map((c) => {
      const at = checkWordOffset(c.byteOffset, 'byteOffset');
      const bytes = roundUp4(c.count * width);
      checkSpan(data, at, bytes, 'chunk');
      return { at, bytes, count: c.count };
    })
    .sort((a, b) => a.at - b.at);
  let tiles = 0;
  spans.forEach((c, i) => {
    if (i > 0 && spans[i - 1].at + spans[i - 1].bytes > c.at) throw new ParleError(ErrorCodes.INVALID_ARGUMENT, 'delta chunks overlap');
    table.set([c.at / 4, c.count, tiles, 0], i * 4);
    tiles += Math.ceil(c.bytes / 4 / DELTA_TILE_WORDS);
  });
  const end = spans[spans.length - 1].at + spans[spans.length - 1].bytes;
  ctx.checkBindable(end, 'delta decode data');
  const params = s.uniform([live.length, tiles, 0, 0]);
  const jobs = storageWords(ctx, s, table, 'delta chunks');
  const sums = s.temp(tiles * 4, 'delta-tile-sums');
  const pipe = (entry: string) => pipeline(ctx, 'codec-delta', deltaSource, entry, packingConsts(width));
  const bind = (...which: number[]) =>
    which.map((binding): GPUBindGroupEntry => ({
      binding,
      resource: binding === 6 ? { buffer: data, size: end } : { buffer: binding === 3 ? sums : binding === 4 ? params : jobs },
    }));
  s.dispatch(pipe('chunkSums'), bind(3, 4, 5, 6), tiles, 'parle:delta-chunk-sums');
  s.dispatch(pipe('chunkCarries'), bind(3, 4, 5), Math.ceil(live.length / WORKGROUP_SIZE), 'parle:delta-chunk-carries');
  s.dispatch(pipe('chunkScan'), bind(3, 4, 5, 6), tiles, 'parle:delta-chunk-scan');
}

/**
 * Delta encode on the GPU (d[0] = x[0], d[i] = x[i] - x[i-1], wrapping), one submission; see
 * {@link encodeDelta}. @throws ParleError INVALID_ARGUMENT, TOO_LARGE, DEVICE_LOST
 */
export async function deltaEncode(ctx: GpuContext, args: DeltaArgs): Promise<void> {
  await ctx.submit('delta-encode', (s) => encodeDelta(ctx, s, 'encode', args));
}

/**
 * Delta decode on the GPU (inclusive prefix sum, wrapping), one submission; see
 * {@link encodeDelta}. @throws ParleError INVALID_ARGUMENT, TOO_LARGE, DEVICE_LOST
 */
export async function deltaDecode(ctx: GpuContext, args: DeltaArgs): Promise<void> {
  await ctx.submit('delta-decode', (s) => encodeDelta(ctx, s, 'decode', args));
}

// ---- shuffle -----------------------------------------------------------------------------------

/** Arguments of {@link encodeShuffle}. */
export interface ShuffleArgs {
  /** The interleaved elements; `elementsByteOffset` a multiple of 4 (default 0). */
  elements: GPUBuffer;
  elementsByteOffset?: number;
  /** The byte planes, all in one buffer (not `elements`), plane k at `planeByteOffsets[k]` (multiples of 4). */
  planes: GPUBuffer;
  planeByteOffsets: readonly number[];
  /** Element size in bytes: the number of planes. */
  width: 2 | 4;
  /** Elements (= bytes per plane). */
  count: number;
}

/**
 * Records a byte-plane shuffle (docs/format.md, stage 2; Blosc's shuffle) or its inverse in
 * `s`. shuffle: `count` elements of `width` bytes -> `width` planes, plane k holding byte k
 * (k = 0 least significant) of every element; unshuffle: planes -> elements.
 * Example, width 2: elements [01 02 03 04] <-> planes [01 03], [02 04].
 * One invocation per 4 elements (one word of each plane). Output: shuffle writes ceil(count / 4)
 * words per plane, unshuffle ceil(count x width / 4) words (bytes past the end zero). The plane
 * ranges must not overlap.
 * @throws ParleError INVALID_ARGUMENT (buffers, offsets, width, count, overlapping planes),
 *   TOO_LARGE
 */
export function encodeShuffle(ctx: GpuContext, s: Submission, direction: 'shuffle' | 'unshuffle', args: ShuffleArgs): void {
  if (direction !== 'shuffle' && direction !== 'unshuffle')
    throw new ParleError(ErrorCodes.INVALID_ARGUMENT, "direction must be 'shuffle' or 'unshuffle'");
  if (typeof args !== 'object' || args === null) throw new ParleError(ErrorCodes.INVALID_ARGUMENT, 'arguments must be an object');
  checkBuffer(args.elements, 'elements');
  checkBuffer(args.planes, 'planes');
  if (args.elements === args.planes) throw new ParleError(ErrorCodes.INVALID_ARGUMENT, 'elements and planes must be different buffers');
  const w = args.width;
  if (w !== 2 && w !== 4) throw new ParleError(ErrorCodes.INVALID_ARGUMENT, 'width must be 2 or 4');
  const n = checkCount(args.count, 'count');
  const elemOff = checkWordOffset(args.elementsByteOffset ?? 0, 'elementsByteOffset');
  if (!Array.isArray(args.planeByteOffsets) || args.planeByteOffsets.length !== w) {
    throw new ParleError(ErrorCodes.INVALID_ARGUMENT, `planeByteOffsets must hold ${w} offsets`);
  }
  const planeBytes = roundUp4(n);
  const planeOffs = args.planeByteOffsets.map((o, k) => checkWordOffset(o, `planeByteOffsets[${k}]`));
  planeOffs.forEach((o, k) => checkSpan(args.planes, o, planeBytes, `plane ${k}`));
  const sorted = [...planeOffs].sort((a, b) => a - b);
  for (let k = 1; k < sorted.length; k++) {
    if (n > 0 && sorted[k - 1] + planeBytes > sorted[k]) throw new ParleError(ErrorCodes.INVALID_ARGUMENT, 'planes overlap');
  }
  const elemBytes = roundUp4(n * w);
  checkSpan(args.elements, elemOff, elemBytes, 'elements');
  if (n === 0) return;
  const elemWin = windowOf(ctx, elemOff, elemOff + elemBytes);
  const planeWin = windowOf(ctx, sorted[0], sorted[w - 1] + planeBytes);
  const groups = Math.ceil(n / 4);
  const planeWords = [0, 0, 0, 0];
  planeOffs.forEach((o, k) => (planeWords[k] = (o - planeWin.base) / 4));
  const params = s.uniform([n, groups, (elemOff - elemWin.base) / 4, 0, ...planeWords]);
  const elemBinding = bindWindow(ctx, args.elements, elemWin, 'shuffle elements');
  const planeBinding = bindWindow(ctx, args.planes, planeWin, 'shuffle planes');
  const shuffling = direction === 'shuffle';
  s.dispatch(
    pipeline(ctx, 'codec-shuffle', shuffleSource, direction, { 'W: u32': `${w}u` }),
    [
      { binding: 0, resource: { buffer: params } },
      { binding: 1, resource: shuffling ? elemBinding : planeBinding },
      { binding: 2, resource: shuffling ? planeBinding : elemBinding },
    ],
    Math.ceil(groups / WORKGROUP_SIZE),
    `parle:${direction}`,
  );
}

/** One chunk of {@link encodeShuffleChunks}: `count` elements at `elementsByteOffset`, and its planes. */
export interface ShuffleChunk {
  elementsByteOffset: number;
  /** Byte offsets of its `width` planes in the planes buffer (multiples of 4). */
  planeByteOffsets: readonly number[];
  count: number;
}

/**
 * Records the shuffle or unshuffle (see {@link encodeShuffle}) of many chunks of `width`-byte
 * elements between `elements` and their planes in `planes`, in one dispatch for all of them
 * (shaders/codec-shuffle.wgsl shuffleChunks / unshuffleChunks: an invocation per 4 elements finds
 * its chunk by binary search over a table of the chunks' first groups). Writes ceil(count / 4)
 * words per plane (shuffle) or ceil(count x width / 4) words per chunk (unshuffle), bytes past
 * the end zero. Both buffers are bound whole up to the last chunk (TOO_LARGE beyond one storage
 * binding). Replaces a dispatch per chunk: 7 ms of GPU time for a 64 MiB f32 decode of 256
 * chunks on an H200 (28 ms at 256 MiB), 10-12 ms for a compress of 256 KiB chunks, mostly the
 * passes' fixed cost.
 * @throws ParleError INVALID_ARGUMENT (offsets, counts, the same buffer twice), TOO_LARGE
 */
export function encodeShuffleChunks(
  ctx: GpuContext,
  s: Submission,
  direction: 'shuffle' | 'unshuffle',
  elements: GPUBuffer,
  planes: GPUBuffer,
  width: 2 | 4,
  chunks: readonly ShuffleChunk[],
): void {
  checkBuffer(elements, 'elements');
  checkBuffer(planes, 'planes');
  if (direction !== 'shuffle' && direction !== 'unshuffle')
    throw new ParleError(ErrorCodes.INVALID_ARGUMENT, "direction must be 'shuffle' or 'unshuffle'");
  if (elements === planes) throw new ParleError(ErrorCodes.INVALID_ARGUMENT, 'elements and planes must be different buffers');
  if (width !== 2 && width !== 4) throw new ParleError(ErrorCodes.INVALID_ARGUMENT, 'width must be 2 or 4');
  const live = chunks.filter((c) => checkCount(c.count, 'count') > 0);
  if (live.length === 0) return;
  const table = new Uint32Array(live.length * 8);
  let groups = 0;
  let elementsEnd = 0;
  let planesEnd = 0;
  live.forEach((c, i) => {
    const at = checkWordOffset(c.elementsByteOffset, 'elementsByteOffset');
    const bytes = roundUp4(c.count * width);
    checkSpan(elements, at, bytes, 'elements');
    if (!Array.isArray(c.planeByteOffsets) || c.planeByteOffsets.length !== width)
      throw new ParleError(ErrorCodes.INVALID_ARGUMENT, `planeByteOffsets must hold ${width} offsets`);
    const planeWords = c.planeByteOffsets.map((o, k) => {
      checkSpan(planes, checkWordOffset(o, `planeByteOffsets[${k}]`), roundUp4(c.count), `plane ${k}`);
      planesEnd = Math.max(planesEnd, o + roundUp4(c.count));
      return o / 4;
    });
    table.set([at / 4, c.count, groups, 0, ...planeWords, ...[0, 0, 0, 0].slice(width)], i * 8);
    groups += Math.ceil(c.count / 4);
    elementsEnd = Math.max(elementsEnd, at + bytes);
  });
  ctx.checkBindable(elementsEnd, 'shuffle elements');
  ctx.checkBindable(planesEnd, 'shuffle planes');
  const shuffling = direction === 'shuffle';
  const elementsBinding = { buffer: elements, size: elementsEnd };
  const planesBinding = { buffer: planes, size: planesEnd };
  s.dispatch(
    pipeline(ctx, 'codec-shuffle', shuffleSource, shuffling ? 'shuffleChunks' : 'unshuffleChunks', { 'W: u32': `${width}u` }),
    [
      { binding: 1, resource: shuffling ? elementsBinding : planesBinding },
      { binding: 2, resource: shuffling ? planesBinding : elementsBinding },
      { binding: 3, resource: { buffer: s.uniform([live.length, groups, 0, 0]) } },
      { binding: 4, resource: { buffer: storageWords(ctx, s, table, 'shuffle chunks') } },
    ],
    Math.ceil(groups / WORKGROUP_SIZE),
    `parle:${direction}-chunks`,
  );
}

/** Byte-plane shuffle on the GPU, one submission; see {@link encodeShuffle}. @throws as it, DEVICE_LOST */
export async function shuffle(ctx: GpuContext, args: ShuffleArgs): Promise<void> {
  await ctx.submit('shuffle', (s) => encodeShuffle(ctx, s, 'shuffle', args));
}

/** Byte-plane unshuffle on the GPU, one submission; see {@link encodeShuffle}. @throws as it, DEVICE_LOST */
export async function unshuffle(ctx: GpuContext, args: ShuffleArgs): Promise<void> {
  await ctx.submit('unshuffle', (s) => encodeShuffle(ctx, s, 'unshuffle', args));
}

// ---- histograms --------------------------------------------------------------------------------

/** Bytes of a histogram tile: one workgroup each (TILE_BYTES in codec-histogram.wgsl). */
const HISTOGRAM_TILE_BYTES = 64 << 10;

/** One copy of {@link encodeGather}: `byteLength` bytes from `srcByteOffset` of the source to `dstByteOffset` of the destination. */
export interface GatherJob {
  srcByteOffset: number;
  dstByteOffset: number;
  byteLength: number;
}

/**
 * Records byte copies from `src` to `dst` at any byte offsets and lengths into `s`
 * (shaders/codec-gather.wgsl: one invocation per destination word). copyBufferToBuffer needs
 * offsets and sizes in multiples of 4; this lays out a container's payloads, whose streams start
 * anywhere. Bytes of `dst` outside the jobs' ranges are left alone, except that the words the
 * jobs touch must be zero beforehand where a job covers only part of them (ORed in): clear
 * `dst` first. Jobs must not overlap in `dst`; `src` and `dst` must be distinct buffers. Jobs of
 * 0 bytes are skipped.
 * Example: src bytes [1, 2, 3, 4, 5], job {src 1, dst 3, 4 bytes} on a cleared dst -> dst bytes
 * [0, 0, 0, 2, 3, 4, 5, 0].
 * @throws ParleError INVALID_ARGUMENT (not a storage buffer, a range outside its buffer, the
 *   same buffer twice), TOO_LARGE (a range beyond one storage binding)
 */
export function encodeGather(ctx: GpuContext, s: Submission, src: GPUBuffer, dst: GPUBuffer, jobs: readonly GatherJob[]): void {
  checkBuffer(src, 'src');
  checkBuffer(dst, 'dst');
  if (src === dst) throw new ParleError(ErrorCodes.INVALID_ARGUMENT, 'src and dst must be distinct buffers');
  jobs.forEach((j, i) => {
    checkCount(j?.srcByteOffset, `jobs[${i}].srcByteOffset`);
    checkCount(j?.dstByteOffset, `jobs[${i}].dstByteOffset`);
    checkCount(j?.byteLength, `jobs[${i}].byteLength`);
    checkSpan(src, j.srcByteOffset, j.byteLength, `jobs[${i}] source`);
    checkSpan(dst, j.dstByteOffset, j.byteLength, `jobs[${i}] destination`);
  });
  const live = jobs.filter((j) => j.byteLength > 0);
  const groups = groupBySpans(
    ctx,
    live.length,
    (k) => [
      [live[k].srcByteOffset, live[k].srcByteOffset + live[k].byteLength],
      [live[k].dstByteOffset, live[k].dstByteOffset + live[k].byteLength],
    ],
    'gather',
  );
  const pipe = pipeline(ctx, 'codec-gather', gatherSource, 'gather');
  for (const group of groups) {
    const [sw, dw] = group.windows as Window[];
    // jobs in ascending first words; the search needs that order, not the destinations'
    const table = new Uint32Array(group.items.length * 4);
    let words = 0;
    group.items.forEach((k, e) => {
      const j = live[k];
      const d = j.dstByteOffset - dw.base;
      table.set([j.srcByteOffset - sw.base, d, j.byteLength, words], e * 4);
      words += Math.floor((d + j.byteLength - 1) / 4) - Math.floor(d / 4) + 1;
    });
    s.dispatch(
      pipe,
      [
        { binding: 0, resource: { buffer: s.uniform([words, group.items.length, 0, 0]) } },
        { binding: 1, resource: { buffer: storageWords(ctx, s, table, 'gather-jobs') } },
        { binding: 2, resource: bindWindow(ctx, src, sw, 'gather source') },
        { binding: 3, resource: bindWindow(ctx, dst, dw, 'gather destination') },
      ],
      Math.ceil(words / WORKGROUP_SIZE),
      'parle:gather',
    );
  }
}

/**
 * Records byte histograms of byte ranges of `buffer` into `s`: for each range, 256 u32 counts
 * (count of byte value v at index v). Returns a function to call after the submission: it reads
 * back 1 KiB per range (nothing else) and gives range r's counts at [256 r, 256 r + 256).
 *
 * One workgroup per 64 KiB tile of a range counts into workgroup memory, then adds its counts to
 * the range's histogram with atomicAdd (shaders/codec-histogram.wgsl); one dispatch for all the
 * ranges (more only where they span more than one storage binding). Ranges may start at any
 * byte, overlap, or be empty (all-zero counts).
 * Example: bytes [7, 7, 0] -> counts[7] = 2, counts[0] = 1, the other 254 counts 0.
 * @throws ParleError INVALID_ARGUMENT (not a storage buffer, a range outside it, a length of
 *   2^32 or more), TOO_LARGE (a range beyond one storage binding)
 */
export function encodeHistograms8(
  ctx: GpuContext,
  s: Submission,
  buffer: GPUBuffer,
  ranges: readonly ByteRange[],
): () => Promise<Uint32Array> {
  const m = Array.isArray(ranges) ? ranges.length : 0;
  const hist = recordHistograms(ctx, s, buffer, ranges, 0);
  return hist === undefined ? async () => new Uint32Array(0) : s.readAfter(hist, m * 1024);
}

/**
 * encodeHistograms8's work: checks, then records the histograms into a temporary of the
 * submission, of `m` x 1 KiB followed by `extraWords` u32 (not cleared); undefined for no ranges.
 */
function recordHistograms(
  ctx: GpuContext,
  s: Submission,
  buffer: GPUBuffer,
  ranges: readonly ByteRange[],
  extraWords: number,
): GPUBuffer | undefined {
  checkBuffer(buffer, 'buffer');
  if (!Array.isArray(ranges)) throw new ParleError(ErrorCodes.INVALID_ARGUMENT, 'ranges must be an array');
  ranges.forEach((r, i) => {
    checkCount(r?.byteOffset, `ranges[${i}].byteOffset`);
    checkCount(r?.byteLength, `ranges[${i}].byteLength`);
    checkSpan(buffer, r.byteOffset, r.byteLength, `ranges[${i}]`);
    // counts are u32
    if (r.byteLength >= 2 ** 32) throw new ParleError(ErrorCodes.INVALID_ARGUMENT, `ranges[${i}].byteLength must be below 2^32`);
  });
  const m = ranges.length;
  if (m === 0) return undefined;
  const hist = s.temp(m * 1024 + 4 * extraWords, 'histograms');
  s.encoder.clearBuffer(hist, 0, m * 1024);
  const live = ranges.map((_, i) => i).filter((i) => ranges[i].byteLength > 0);
  const pipe = pipeline(ctx, 'codec-histogram', histogramSource, 'histogram', { 'TILE_BYTES: u32': `${HISTOGRAM_TILE_BYTES}u` });
  const groups = groupBySpans(
    ctx,
    live.length,
    (k) => {
      const r = ranges[live[k]];
      return [[r.byteOffset, r.byteOffset + r.byteLength]];
    },
    'histogram',
  );
  for (const group of groups) {
    const w = group.windows[0]!;
    const table = new Uint32Array(group.items.length * 4);
    let tiles = 0;
    group.items.forEach((k, e) => {
      const i = live[k];
      const r = ranges[i];
      table.set([r.byteOffset - w.base, r.byteLength, tiles, i * 256], e * 4);
      tiles += Math.ceil(r.byteLength / HISTOGRAM_TILE_BYTES);
    });
    s.dispatch(
      pipe,
      [
        { binding: 0, resource: { buffer: s.uniform([tiles, group.items.length, 0, 0]) } },
        { binding: 1, resource: { buffer: storageWords(ctx, s, table, 'histogram-ranges') } },
        { binding: 2, resource: bindWindow(ctx, buffer, w, 'histogram source') },
        { binding: 3, resource: { buffer: hist, offset: 0, size: m * 1024 } },
      ],
      tiles,
      'parle:histogram',
    );
  }
  return hist;
}

/** A byte histogram with its Huffman code, as {@link encodeHistogramCodes8} reads them back. */
export interface HistogramCode {
  /** 256 counts: count of byte value v at index v. */
  counts: Uint32Array;
  /** 256 code lengths in bits (0: absent symbol), the host's `codeLengths(counts)`; all 0 with fewer than two present symbols. */
  lengths: Uint8Array;
  /** Bits the counted bytes take in that code: the sum of counts[v] x lengths[v]. */
  codedBits: number;
}

/**
 * {@link encodeHistograms8} with each range's Huffman code made on the GPU as well
 * (shaders/codec-code-lengths.wgsl: the same lengths as the host's `codeLengths`, one workgroup
 * per histogram), so that a chooser sizes its candidate streams without building their codes on
 * the host. Reads back 1 KiB of counts, 256 bytes of lengths and a word of bits per range.
 * @returns a function to call after the submission: one HistogramCode per range, in order
 *   (views into one array).
 * @throws as encodeHistograms8, and INVALID_ARGUMENT for a range of 2^28 bytes or more (its
 *   coded bits could pass a u32)
 */
export function encodeHistogramCodes8(
  ctx: GpuContext,
  s: Submission,
  buffer: GPUBuffer,
  ranges: readonly ByteRange[],
): () => Promise<HistogramCode[]> {
  if (Array.isArray(ranges)) {
    ranges.forEach((r, i) => {
      if (typeof r?.byteLength === 'number' && r.byteLength >= 2 ** 28)
        throw new ParleError(ErrorCodes.INVALID_ARGUMENT, `ranges[${i}].byteLength must be below 2^28 for code lengths`);
    });
  }
  const m = Array.isArray(ranges) ? ranges.length : 0;
  const lengthsAt = 256 * m;
  const bitsAt = lengthsAt + 64 * m;
  const hist = recordHistograms(ctx, s, buffer, ranges, 65 * m);
  if (hist === undefined) return async () => [];
  const words = 256 * m + 65 * m;
  s.dispatch(
    pipeline(ctx, 'codec-code-lengths', codeLengthsSource, 'codeLengths'),
    [
      { binding: 0, resource: { buffer: s.uniform([m, lengthsAt, bitsAt, 0]) } },
      { binding: 1, resource: { buffer: hist, offset: 0, size: 4 * words } },
    ],
    m,
    'parle:code-lengths',
  );
  const read = s.readAfter(hist, 4 * words);
  return async () => {
    const all = await read();
    const lengths = new Uint8Array(all.buffer, all.byteOffset + 4 * lengthsAt, 256 * m);
    return Array.from({ length: m }, (_, r) => ({
      counts: all.subarray(256 * r, 256 * r + 256),
      lengths: lengths.subarray(256 * r, 256 * r + 256),
      codedBits: all[bitsAt + r],
    }));
  };
}

/**
 * Byte histograms of byte ranges of `buffer` (any alignment), on the GPU in one submission; only
 * the counts are read back (1 KiB per range). See {@link encodeHistograms8}.
 * Example: one range over bytes [1, 1, 2] -> a Uint32Array(256) with [1] = 2, [2] = 1.
 * @returns 256 u32 counts per range, range after range (range r at 256 r).
 * @throws ParleError INVALID_ARGUMENT, TOO_LARGE, DEVICE_LOST
 */
export async function histograms8(ctx: GpuContext, buffer: GPUBuffer, ranges: readonly ByteRange[]): Promise<Uint32Array> {
  if (Array.isArray(ranges) && ranges.length === 0) return new Uint32Array(0);
  return submitThenRead(ctx, 'histograms', (s) => encodeHistograms8(ctx, s, buffer, ranges));
}

/**
 * Byte histograms of byte ranges of `buffer` with their Huffman codes, on the GPU in one
 * submission (see {@link encodeHistogramCodes8}).
 * Example: one range over bytes [1, 1, 2] -> counts [1] = 2, [2] = 1; lengths [1] = 1, [2] = 1;
 * codedBits 3.
 * @throws ParleError INVALID_ARGUMENT, TOO_LARGE, DEVICE_LOST
 */
export async function histogramCodes8(ctx: GpuContext, buffer: GPUBuffer, ranges: readonly ByteRange[]): Promise<HistogramCode[]> {
  if (Array.isArray(ranges) && ranges.length === 0) return [];
  return submitThenRead(ctx, 'histogram codes', (s) => encodeHistogramCodes8(ctx, s, buffer, ranges));
}

// ---- Huffman encode ----------------------------------------------------------------------------

/** Symbols of a block of the encode (BLOCK_LOG2 in codec-huffman-encode.wgsl): the smallest segment. */
const ENCODE_BLOCK = 1 << MIN_SEGMENT_LOG2;
/**
 * Most symbols of one encoded stream: bit offsets are u32 on the GPU, and 2^28 codes of 11 bits
 * (plus a pad byte a segment) stay below 2^32 bits. Chunks are at most 64 MiB.
 */
export const HUFFMAN_ENCODE_MAX_BYTES = 2 ** 28;

/**
 * A MAP_READ buffer receiving byte ranges of buffers, packed one after the other in order (each
 * range from a multiple of 4, its length rounded up to 4), at the end of what `s` recorded so
 * far; the returned function, called after the submit, maps and reads it and destroys it.
 * Offsets must be multiples of 4 (copyBufferToBuffer).
 */
function readPacked(
  ctx: GpuContext,
  s: Submission,
  ranges: readonly { buffer: GPUBuffer; byteOffset: number; byteLength: number }[],
): () => Promise<Uint8Array> {
  let size = 0;
  for (const r of ranges) size += roundUp4(r.byteLength);
  const rb = ctx.device.createBuffer({
    label: 'parle:codec-readback',
    size: Math.max(4, size),
    usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST,
  });
  s.onFailure.push(rb);
  let at = 0;
  for (const r of ranges) {
    const bytes = roundUp4(r.byteLength);
    if (bytes > 0) s.encoder.copyBufferToBuffer(r.buffer, r.byteOffset, rb, at, bytes);
    at += bytes;
  }
  return async () => new Uint8Array(await mapAndRead(ctx, rb));
}

/** One stream of a {@link huffmanEncodeStreams} call. */
export interface HuffmanEncodeJob {
  /** Byte offset of the symbols (bytes) in the source buffer; any alignment. */
  srcByteOffset: number;
  /** Symbols n (bytes), 0 to {@link HUFFMAN_ENCODE_MAX_BYTES}. */
  byteLength: number;
  /**
   * Code lengths of symbols 0..255 (ts/codec/huffman.ts codeLengths): at most 11 bits, at least
   * two symbols, a complete code (Kraft sum exactly 1). Every byte of the range needs a code.
   */
  lengths: Uint8Array;
  /**
   * log2 of the symbols per segment, g: 10..20 (ts/codec/huffman.ts DEFAULT_SEGMENT_LOG2); with
   * `mode` 3, 10..12 (LANES_SEGMENT_LOG2).
   */
  segmentLog2: number;
  /**
   * The stream mode to write: 2 (default) or 3, 32 interleaved lanes a segment (docs/format.md,
   * "Mode 3: interleaved lanes"). Every job of a call has the same mode.
   */
  mode?: 2 | 3;
}

/** Largest g of a mode-3 job: the kernel keeps 2^g / 32 steps of masks in workgroup memory. */
const LANES_MAX_SEGMENT_LOG2 = 12;

/** Where a job's output (end offsets, then bitstreams) lies in its group's output buffer. */
interface EncodeSlot {
  /** Byte offset in the virtual layout of all jobs (the group's window base subtracted later). */
  at: number;
  /** Worst-case bytes: 4 K end offsets + the bitstreams' bound, rounded up to words. */
  bytes: number;
  segments: number;
  blocks: number;
}

function checkEncodeJob(srcBuf: GPUBuffer, j: HuffmanEncodeJob, i: number): void {
  if (typeof j !== 'object' || j === null) throw new ParleError(ErrorCodes.INVALID_ARGUMENT, `jobs[${i}] must be an object`);
  checkCount(j.srcByteOffset, `jobs[${i}].srcByteOffset`);
  checkCount(j.byteLength, `jobs[${i}].byteLength`);
  if (j.byteLength > HUFFMAN_ENCODE_MAX_BYTES) {
    throw new ParleError(ErrorCodes.TOO_LARGE, `jobs[${i}]: ${j.byteLength} bytes exceed one Huffman stream (${HUFFMAN_ENCODE_MAX_BYTES})`);
  }
  checkSpan(srcBuf, j.srcByteOffset, j.byteLength, `jobs[${i}] source`);
  if (j.mode !== undefined && j.mode !== 2 && j.mode !== 3)
    throw new ParleError(ErrorCodes.INVALID_ARGUMENT, `jobs[${i}].mode must be 2 or 3`);
  const g = j.segmentLog2;
  const maxG = j.mode === 3 ? LANES_MAX_SEGMENT_LOG2 : MAX_SEGMENT_LOG2;
  if (!Number.isInteger(g) || g < MIN_SEGMENT_LOG2 || g > maxG) {
    throw new ParleError(ErrorCodes.INVALID_ARGUMENT, `jobs[${i}].segmentLog2 must be an integer in ${MIN_SEGMENT_LOG2}..${maxG}`);
  }
  const lengths = j.lengths;
  if (!(lengths instanceof Uint8Array) || lengths.length !== 256) {
    throw new ParleError(ErrorCodes.INVALID_ARGUMENT, `jobs[${i}].lengths must be a Uint8Array of 256 code lengths`);
  }
  let kraft = 0;
  let present = 0;
  for (let sym = 0; sym < 256; sym++) {
    const len = lengths[sym];
    if (len === 0) continue;
    if (len > MAX_CODE_BITS)
      throw new ParleError(ErrorCodes.INVALID_ARGUMENT, `jobs[${i}].lengths: code length ${len} of symbol ${sym} over ${MAX_CODE_BITS}`);
    present++;
    kraft += HUFFMAN_TABLE_ENTRIES >> len;
  }
  if (present < 2) throw new ParleError(ErrorCodes.INVALID_ARGUMENT, `jobs[${i}].lengths: ${present} symbols in the code (at least 2)`);
  if (kraft !== HUFFMAN_TABLE_ENTRIES) {
    throw new ParleError(
      ErrorCodes.INVALID_ARGUMENT,
      `jobs[${i}].lengths: the code is ${kraft < HUFFMAN_TABLE_ENTRIES ? 'incomplete' : 'over-full'} (Kraft sum ${kraft}/${HUFFMAN_TABLE_ENTRIES})`,
    );
  }
}

/**
 * Huffman-encodes byte ranges of `srcBuf` on the GPU into complete mode-2 Huffman streams
 * (docs/format.md, "Huffman streams": mode 2, g, last symbol m, the 4-bit lengths of 0..m, the K
 * segment end offsets, the segments' bitstreams), one per job, with the caller's code lengths.
 * The bytes equal what the CPU writes for the same lengths and g (ts/codec/huffman.ts
 * writeHeader, then assembly/codec.ts huffmanEncode): segments of 2^g symbols, each from a byte
 * boundary and zero-padded, bits least significant first, canonical codes stored first bit
 * lowest. A job of 0 bytes gives the header alone (K = 0). The mode (0 raw, 1 one symbol, 2) is
 * the caller's choice: this always writes mode 2.
 * Example: bytes [0, 1, 2, 0] with lengths {0: 1, 1: 2, 2: 2}, g = 10 -> codes 0, 10, 11, 0 ->
 * [2, 10, 2, 0x21, 0x02, 1, 0, 0, 0, 0x1a] (a header of 5 bytes, K = 1 end offset, one byte of
 * bits: 0 | 1 0 | 1 1 | 0 read from bit 0 up).
 *
 * PAVLE (Balevic 2009) on blocks of 1024 symbols, three dispatches per group of jobs in one
 * submission (shaders/codec-huffman-encode.wgsl): the bits of each block; per job, the segment
 * sizes scanned into the end offsets and each block's bit offset; each block's codes placed by a
 * workgroup scan, assembled in workgroup memory with atomicOr and written out (atomicOr only on
 * the words shared with neighbouring blocks). That submission reads back 4 bytes per job (the
 * bitstreams' lengths) and an 8-byte status; a second one copies exactly each stream's end
 * offsets and bitstreams (4 K + its bitstream bytes, rounded up to 4) into one readback buffer
 * ({@link huffmanEncodeOnDevice} is the first alone). Headers are written on the host. GPU scratch: per job about 4 K + n x (longest code) / 8 bytes
 * (the worst case) of output, 1 KiB of codes, 4 bytes per 1024 symbols.
 * @returns one stream per job, in job order (fresh Uint8Arrays).
 * @throws ParleError INVALID_ARGUMENT (not a storage buffer, a range outside it, lengths that
 *   are not a complete code of 2 to 256 symbols of at most 11 bits, g outside 10..20, a byte of a
 *   range without a code: the first such job and byte value are named), TOO_LARGE (a job over
 *   {@link HUFFMAN_ENCODE_MAX_BYTES}, a range beyond one storage binding), DEVICE_LOST
 */
export async function huffmanEncodeStreams(ctx: GpuContext, srcBuf: GPUBuffer, jobs: readonly HuffmanEncodeJob[]): Promise<Uint8Array[]> {
  const { streams, release } = await huffmanEncodeOnDevice(ctx, srcBuf, jobs);
  try {
    // submission 2: exactly the end offsets and bitstreams of every stream, packed in job order
    const bodies = streams.flatMap((st) => (st.body === null ? [] : [st.body]));
    let all: Uint8Array = new Uint8Array(0);
    if (bodies.length > 0) {
      let read: () => Promise<Uint8Array> = async () => new Uint8Array(0);
      await ctx.submit('huffman-encode-read', (s) => {
        read = readPacked(ctx, s, bodies);
      });
      all = await read();
    }
    let packed = 0;
    return streams.map(({ header, body }) => {
      if (body === null) return header;
      const stream = new Uint8Array(header.length + body.byteLength);
      stream.set(header, 0);
      stream.set(all.subarray(packed, packed + body.byteLength), header.length);
      packed += roundUp4(body.byteLength);
      return stream;
    });
  } finally {
    release();
  }
}

/** A Huffman stream of {@link huffmanEncodeOnDevice}: its header on the host, the rest on the GPU. */
export interface DeviceHuffmanStream {
  /** The stream's first bytes: mode 2, g, the last symbol m and the 4-bit code lengths. */
  header: Uint8Array;
  /**
   * Where the rest lies (the K segment end offsets, then the bitstreams): `byteLength` bytes at
   * byte `byteOffset` (a multiple of 4) of `buffer`; null for a job of 0 bytes (K = 0).
   */
  body: { buffer: GPUBuffer; byteOffset: number; byteLength: number } | null;
}

/**
 * {@link huffmanEncodeStreams} without the readback of the streams: the same bytes, left in GPU
 * buffers for the caller to gather (the container's payloads, ts/codec/gpu/encode.ts). One
 * submission and one small readback (the status and 4 bytes per job). The buffers stay valid
 * until `release()`; the caller must call it once.
 * @returns per job (in job order) its stream, as a header and a GPU range.
 * @throws as huffmanEncodeStreams
 */
export async function huffmanEncodeOnDevice(
  ctx: GpuContext,
  srcBuf: GPUBuffer,
  jobs: readonly HuffmanEncodeJob[],
): Promise<{ streams: DeviceHuffmanStream[]; release(): void }> {
  const run = await encodeHuffmanJobs(ctx, srcBuf, jobs);
  return { streams: run.headers.map((header, i) => ({ header, body: run.bodies.get(i) ?? null })), release: run.release };
}

/** The outcome of {@link encodeHuffmanJobs}: the jobs' streams, their bitstream parts still on the GPU. */
interface EncodedJobs {
  /** Each job's header (written on the host). */
  headers: Uint8Array[];
  /** Per job of more than 0 bytes (by job index): where its end offsets and bitstreams lie on the GPU. */
  bodies: Map<number, { buffer: GPUBuffer; byteOffset: number; byteLength: number }>;
  /** Gives the output buffers back to the pool. */
  release(): void;
}

/**
 * Submission 1 of {@link huffmanEncodeStreams}: encodes every job into output buffers and reads
 * back the status and the bitstreams' lengths. On failure the outputs are released.
 */
async function encodeHuffmanJobs(ctx: GpuContext, srcBuf: GPUBuffer, jobs: readonly HuffmanEncodeJob[]): Promise<EncodedJobs> {
  checkBuffer(srcBuf, 'srcBuf');
  if (!Array.isArray(jobs)) throw new ParleError(ErrorCodes.INVALID_ARGUMENT, 'jobs must be an array');
  jobs.forEach((j, i) => checkEncodeJob(srcBuf, j, i));
  const m = jobs.length;
  const lanes = m > 0 && jobs[0].mode === 3;
  jobs.forEach((j, i) => {
    if ((j.mode === 3) !== lanes) throw new ParleError(ErrorCodes.INVALID_ARGUMENT, `jobs[${i}].mode differs from jobs[0].mode`);
  });
  const headers = jobs.map((j) => {
    const h = new Uint8Array(headerBytes(j.lengths));
    writeHeader(h, 0, j.lengths, j.segmentLog2, lanes ? HuffmanMode.Lanes : HuffmanMode.Huffman);
    return h;
  });
  const live = jobs.map((_, i) => i).filter((i) => jobs[i].byteLength > 0);
  if (live.length === 0) return { headers, bodies: new Map(), release: () => undefined };

  // Layout: each live job's output slot, one after the other in a virtual space that the groups
  // cut into windows of one storage binding each.
  const slots = new Map<number, EncodeSlot>();
  let at = 0;
  for (const i of live) {
    const j = jobs[i];
    const segments = segmentCount(j.byteLength, j.segmentLog2);
    let longest = 0;
    for (let b = 0; b < 256; b++) if (j.lengths[b] > longest) longest = j.lengths[b];
    // a segment's bits padded to a byte (mode 2) or each of 32 lanes' to 16 bits (mode 3)
    const bytes = 4 * segments + roundUp4(Math.ceil((j.byteLength * longest) / 8) + (lanes ? 2 * LANES : 1) * segments);
    if (bytes > maxBinding(ctx) - alignment(ctx)) {
      throw new ParleError(
        ErrorCodes.TOO_LARGE,
        `jobs[${i}]: its output (up to ${bytes} bytes) exceeds one storage binding (${maxBinding(ctx)} bytes)`,
      );
    }
    slots.set(i, { at, bytes, segments, blocks: lanes ? segments : Math.ceil(j.byteLength / ENCODE_BLOCK) });
    at += bytes;
  }
  const groups = groupBySpans(
    ctx,
    live.length,
    (k) => {
      const i = live[k];
      const slot = slots.get(i)!;
      return [
        [jobs[i].srcByteOffset, jobs[i].srcByteOffset + jobs[i].byteLength],
        [slot.at, slot.at + slot.bytes],
      ];
    },
    'Huffman encode',
  );

  // Submission 1: encode into one output buffer per group; read back the lengths and status.
  const outputs: { buffer: GPUBuffer; base: number }[] = [];
  const slotOutput = new Map<number, { buffer: GPUBuffer; byteOffset: number }>();
  const release = () => {
    for (const o of outputs.splice(0)) ctx.releaseStorage(o.buffer);
  };
  try {
    let readMeta: () => Promise<Uint32Array> = async () => new Uint32Array(0);
    await ctx.submit('huffman-encode', (s) => {
      const meta = s.temp(4 * (2 + m), 'huffman-encode-meta');
      s.encoder.clearBuffer(meta, 0, roundUp4(4 * (2 + m)));
      const pipe = (entry: string) => pipeline(ctx, 'codec-huffman-encode', huffmanEncodeCode, entry);
      for (const group of groups) {
        const [srcWin, outWin] = group.windows as Window[];
        const outBytes = roundUp4(outWin.end - outWin.base);
        const out = ctx.acquireStorage(outBytes, 'huffman-encode-out');
        outputs.push({ buffer: out, base: outWin.base });
        s.encoder.clearBuffer(out, 0, outBytes);
        const table = new Uint32Array(group.items.length * 8);
        const codes = new Uint32Array(group.items.length * 256);
        let blocks = 0;
        group.items.forEach((k, e) => {
          const i = live[k];
          const j = jobs[i];
          const slot = slots.get(i)!;
          table.set(
            [blocks, j.byteLength, j.segmentLog2, j.srcByteOffset - srcWin.base, (slot.at - outWin.base) / 4, slot.segments, e * 256, i],
            e * 8,
          );
          codes.set(canonicalCodeTable(j.lengths), e * 256);
          slotOutput.set(i, { buffer: out, byteOffset: slot.at - outWin.base });
          blocks += slot.blocks;
        });
        const params = s.uniform([blocks, group.items.length, lanes ? 1 : 0, 0]);
        // mode 3: blocks are segments, WG / 32 a workgroup
        const blockGroups = lanes ? Math.ceil(blocks / (WORKGROUP_SIZE / LANES)) : blocks;
        const jobsBuf = storageWords(ctx, s, table, 'huffman-encode-jobs');
        const codesBuf = storageWords(ctx, s, codes, 'huffman-encode-codes');
        const blocksBuf = s.temp(4 * blocks, 'huffman-encode-blocks');
        const src = bindWindow(ctx, srcBuf, srcWin, 'Huffman encode source');
        const dst: GPUBufferBinding = { buffer: out, offset: 0, size: outBytes };
        const metaBinding: GPUBufferBinding = { buffer: meta, offset: 0, size: roundUp4(4 * (2 + m)) };
        s.dispatch(
          pipe(lanes ? 'countLanes' : 'countBits'),
          [
            { binding: 0, resource: { buffer: params } },
            { binding: 1, resource: { buffer: jobsBuf } },
            { binding: 2, resource: { buffer: codesBuf } },
            { binding: 3, resource: src },
            { binding: 4, resource: { buffer: blocksBuf } },
            { binding: 6, resource: metaBinding },
          ],
          blockGroups,
          'parle:huffman-count-bits',
        );
        s.dispatch(
          pipe('placeSegments'),
          [
            { binding: 0, resource: { buffer: params } },
            { binding: 1, resource: { buffer: jobsBuf } },
            { binding: 4, resource: { buffer: blocksBuf } },
            { binding: 5, resource: dst },
            { binding: 6, resource: metaBinding },
          ],
          group.items.length,
          'parle:huffman-place-segments',
        );
        s.dispatch(
          pipe(lanes ? 'writeLanes' : 'writeBits'),
          [
            { binding: 0, resource: { buffer: params } },
            { binding: 1, resource: { buffer: jobsBuf } },
            { binding: 2, resource: { buffer: codesBuf } },
            { binding: 3, resource: src },
            { binding: 4, resource: { buffer: blocksBuf } },
            { binding: 5, resource: dst },
          ],
          blockGroups,
          'parle:huffman-write-bits',
        );
      }
      readMeta = s.readAfter(meta, 4 * (2 + m));
    });
    const meta = await readMeta();
    if (meta[0] !== 0) {
      const key = 0xffffffff - meta[1];
      const job = key >>> 8;
      throw new ParleError(
        ErrorCodes.INVALID_ARGUMENT,
        `jobs[${job}]: byte value ${key & 0xff} has no code (length 0) in jobs[${job}].lengths (${meta[0]} invocation${meta[0] === 1 ? '' : 's'} found bytes without a code)`,
      );
    }
    const bodies = new Map(live.map((i) => [i, { ...slotOutput.get(i)!, byteLength: 4 * slots.get(i)!.segments + meta[2 + i] }]));
    return { headers, bodies, release };
  } catch (e) {
    release();
    throw e;
  }
}

// ---- rle streams of every chunk --------------------------------------------------------------

/** The rle stage's two streams of every chunk of an array, on the GPU (see {@link rleChunkStreams}). */
export interface RleChunkStreams {
  /** Runs R of all chunks together (a run never crosses a chunk). */
  runs: number;
  /** The R run values, of the input's element type: chunk c's values stream is bytes [firstRun[c] w, firstRun[c + 1] w). */
  values: DeviceArray;
  /** Every run's (length - 1) as LEB128, runs in order: chunk c's lengths stream is bytes [lebStart[c], lebStart[c + 1]). */
  leb: GPUBuffer;
  /** Per chunk, then one past the last: the index of its first run (R at the end). */
  firstRun: Uint32Array;
  /** Per chunk, then one past the last: the byte of `leb` where its lengths stream starts (all LEB bytes at the end). */
  lebStart: Uint32Array;
  /** Gives the buffers back (values destroyed, `leb` to the pool). */
  release(): void;
}

/**
 * The rle stage's streams (docs/format.md, "Version 2", stage 3: a values stream of the runs'
 * elements, raw, and a lengths stream of (length - 1) as unsigned LEB128) of each of `chunkCount`
 * chunks of `chunkLength` elements of `input`, built on the GPU: the runs with a run start forced
 * at every chunk (rle-encode.wgsl), the exclusive scan of their lengths (each run's first
 * element, which finds the chunks' first runs), each run's LEB128 size, their exclusive scan
 * (byte offsets), and the bytes (shaders/codec-rle-streams.wgsl), all but the runs in the run
 * encode's second submission (two submissions in all). Three small readbacks: the run count,
 * the LEB total, and the table of chunk starts (2 words a chunk). The streams' bytes stay on
 * the GPU (for histograms, Huffman coding, or a readback of the payload); `leb` is a worst-case
 * buffer (for every run, the LEB128 size of a chunk-long run).
 * `chunkLength` must be a multiple of the elements per u32 word (4 for u8, 2 for u16) unless
 * there is one chunk.
 * @throws ParleError INVALID_ARGUMENT (chunk length), TOO_LARGE (beyond one storage binding),
 *   DEVICE_LOST
 */
export async function rleChunkStreams(
  ctx: GpuContext,
  input: DeviceArray,
  chunkLength: number,
  chunkCount: number,
): Promise<RleChunkStreams> {
  // the shader's chunk: with one chunk, only run 0 starts one
  const chunk = chunkCount > 1 ? chunkLength : 0xffffffff;
  const acquired: GPUBuffer[] = [];
  // Recorded into the run-length encode's second submission (R runs known): each run's first
  // element (exclusive scan of the lengths), its LEB128 size, their exclusive scan (byte
  // offsets) and total, and the bytes, into a worst-case buffer (the LEB128 size of the longest
  // possible run, a chunk, for every run), with the table of chunk starts: one round trip for
  // all of it.
  let encoded;
  try {
    encoded = await rleEncodeThen(ctx, input, chunkCount > 1 ? chunkLength : 0, (s, R, _values, lengthsBuf) => {
      const starts = s.temp(R * 4, 'rle-starts');
      const at = s.temp(R * 4, 'rle-leb-offsets');
      const counts = s.temp(R * 4, 'rle-leb-sizes');
      const totalBuf = s.temp(16, 'rle-leb-total');
      const tableBuf = s.temp(chunkCount * 8, 'rle-chunk-table');
      // a run is at most a chunk long: (length - 1) takes ceil(bits / 7) LEB128 bytes
      const longest = Math.min(input.length, chunkCount > 1 ? chunkLength : input.length);
      const lebWorst = Math.ceil((R * Math.max(1, Math.ceil(Math.log2(longest) / 7))) / 4) * 4;
      const leb = ctx.acquireStorage(lebWorst, 'rle-leb');
      acquired.push(leb);
      const groups = Math.ceil(R / WORKGROUP_SIZE);
      const uniform = s.uniform([R, chunk, 0, 0]);
      s.encoder.clearBuffer(totalBuf);
      s.encoder.clearBuffer(leb, 0, lebWorst);
      encodeScan(ctx, s, lengthsBuf, starts, R, 'u32', false);
      s.dispatch(
        pipeline(ctx, 'codec-rle-streams', rleStreamsSource, 'lebSizes'),
        [
          { binding: 0, resource: { buffer: uniform } },
          { binding: 1, resource: { buffer: lengthsBuf } },
          { binding: 2, resource: { buffer: counts } },
        ],
        groups,
        'parle:rle-leb-sizes',
      );
      encodeScan(ctx, s, counts, at, R, 'u32', false, totalBuf);
      s.dispatch(
        pipeline(ctx, 'codec-rle-streams', rleStreamsSource, 'lebWrite'),
        [
          { binding: 0, resource: { buffer: uniform } },
          { binding: 1, resource: { buffer: lengthsBuf } },
          { binding: 3, resource: { buffer: starts } },
          { binding: 4, resource: { buffer: at } },
          { binding: 5, resource: { buffer: leb } },
          { binding: 6, resource: { buffer: tableBuf } },
        ],
        groups,
        'parle:rle-leb-write',
      );
      return { leb, readTotal: s.readAfter(totalBuf, 4), readTable: s.readAfter(tableBuf, chunkCount * 8) };
    });
  } catch (e) {
    for (const b of acquired.splice(0)) ctx.releaseStorage(b);
    throw e;
  }
  const { values, lengths } = encoded;
  const R = lengths.length;
  const release = () => {
    values.destroy();
    lengths.destroy();
    for (const b of acquired.splice(0)) ctx.releaseStorage(b);
  };
  try {
    if (encoded.then === undefined) {
      const leb = ctx.acquireStorage(4, 'rle-leb');
      acquired.push(leb);
      return { runs: 0, values, leb, firstRun: new Uint32Array(chunkCount + 1), lebStart: new Uint32Array(chunkCount + 1), release };
    }
    const { leb, readTotal, readTable } = encoded.then;
    const [total, table] = await Promise.all([readTotal(), readTable()]);
    const lebBytes = total[0];
    const firstRun = new Uint32Array(chunkCount + 1);
    const lebStart = new Uint32Array(chunkCount + 1);
    for (let c = 0; c < chunkCount; c++) {
      firstRun[c] = table[2 * c];
      lebStart[c] = table[2 * c + 1];
    }
    firstRun[chunkCount] = R;
    lebStart[chunkCount] = lebBytes;
    return { runs: R, values, leb, firstRun, lebStart, release };
  } catch (e) {
    release();
    throw e;
  }
}
