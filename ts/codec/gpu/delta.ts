/// <reference types="@webgpu/types" />
/**
 * The delta stage (docs/format.md, stage 1) on the GPU: encode (d[i] = x[i] - x[i-1]) and decode
 * (the inclusive prefix sum, Merrill's reduce-then-scan in three passes), of one sequence or of
 * many chunks in one dispatch each pass: dispatch of shaders/codec-delta.wgsl. The CPU's twin is
 * assembly/delta.ts. Buffers and bindings follow the rules of ./common.ts.
 */
import { ErrorCodes, ParleError } from '../../errors.js';
import deltaSource from '../../../shaders/codec-delta.wgsl';
import { WORKGROUP_SIZE } from '../../gpu/compose.js';
import type { GpuContext, Submission } from '../../gpu/context.js';
import { bindWindow, checkBuffer, checkCount, checkSpan, checkWordOffset, pipeline, roundUp4, storageWords, windowOf } from './common.js';

/** Words per workgroup tile of the delta decode (WG x WPI in codec-delta.wgsl). */
const DELTA_TILE_WORDS = WORKGROUP_SIZE * 16;

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
  checkSpan(args.src.size, srcOff, bytes, 'src');
  checkSpan(args.dst.size, dstOff, bytes, 'dst');
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
  const dataSize = data.size;
  const spans = live
    .map((c) => {
      const at = checkWordOffset(c.byteOffset, 'byteOffset');
      const bytes = roundUp4(c.count * width);
      checkSpan(dataSize, at, bytes, 'chunk');
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
