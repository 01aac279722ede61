/// <reference types="@webgpu/types" />
/**
 * The encode of pack streams (docs/format.md, "Pack streams": PFOR in SIMD-BP128's vertical
 * layout, Lemire and Boytsov 2015) on the GPU, for the GPU writer (./encode.ts): a plan pass that
 * sizes every candidate stream exactly (each block's bytes, and each stream's E), and a write pass
 * for the streams chosen, each laid out where the host puts it. Dispatch of
 * shaders/codec-pack-encode.wgsl (a workgroup a block of 256 elements), with
 * shaders/read-src.wgsl appended. The bytes equal the CPU encoder's (assembly/pack.ts packEncode)
 * for the same elements. Buffers follow the rules of ./common.ts.
 */
import { ErrorCodes, ParleError } from '../../errors.js';
import packEncodeSource from '../../../shaders/codec-pack-encode.wgsl';
import readSrcSource from '../../../shaders/read-src.wgsl';
import type { GpuContext, Submission } from '../../gpu/context.js';
import { encodeScan } from '../../gpu/scan.js';
import { checkBuffer, checkCount, checkSpan, pipeline, roundUp4, storageWords } from './common.js';

/** Elements a block of a pack stream holds (docs/format.md, "Pack streams"). */
export const PACK_BLOCK = 256;

const packEncodeCode = `${packEncodeSource}\n${readSrcSource}`;

/** A pack stream to size or write: `count` elements of `width` bytes at byte `srcByteOffset` (any alignment) of the source. */
export interface PackStream {
  srcByteOffset: number;
  count: number;
  width: 1 | 2 | 4;
}

/**
 * The plan of a set of pack streams of one source buffer ({@link encodePackSizes}): each stream's
 * first block in `sizes`, which holds every block's bytes once the plan's submission has run
 * (the write pass reads them: keep the buffer until then).
 */
export interface PackSizing {
  readonly src: GPUBuffer;
  readonly streams: readonly PackStream[];
  /** Stream i's first block's entry in `sizes`; blocks of all streams in all: `blocks`. */
  readonly firstBlock: readonly number[];
  readonly blocks: number;
  readonly sizes: GPUBuffer;
}

/** Blocks of a stream of `count` elements. */
const blocksOf = (count: number) => Math.ceil(count / PACK_BLOCK);

/** Bytes of a plan's `sizes` buffer for `blocks` blocks at least: 4 a block, padded to 16 (the scan binds it so). */
export const paddedBytes = (blocks: number) => Math.max(16, Math.ceil((4 * blocks) / 16) * 16);

/** Bytes of `src` the streams reach, rounded up to whole words (at least one). */
const srcEnd = (streams: readonly PackStream[]) => Math.max(4, ...streams.map((x) => roundUp4(x.srcByteOffset + x.count * x.width)));

/** The job table of the kernel: 8 words a stream (shaders/codec-pack-encode.wgsl `Job`). */
function jobTable(streams: readonly { stream: PackStream; firstBlock: number; out: number }[]): { table: Uint32Array; blocks: number } {
  const table = new Uint32Array(Math.max(8, 8 * streams.length));
  let blocks = 0;
  streams.forEach(({ stream, firstBlock, out }, i) => {
    table.set([stream.srcByteOffset, stream.count, stream.width, firstBlock, blocks, out], 8 * i);
    blocks += blocksOf(stream.count);
  });
  return { table, blocks };
}

function checkStreams(src: GPUBuffer, streams: readonly PackStream[]): void {
  if (!Array.isArray(streams)) throw new ParleError(ErrorCodes.INVALID_ARGUMENT, 'streams must be an array');
  streams.forEach((x, i) => {
    if (![1, 2, 4].includes(x?.width)) throw new ParleError(ErrorCodes.INVALID_ARGUMENT, `streams[${i}].width must be 1, 2 or 4`);
    checkCount(x.srcByteOffset, `streams[${i}].srcByteOffset`);
    checkCount(x.count, `streams[${i}].count`);
    if (x.count === 0) throw new ParleError(ErrorCodes.INVALID_ARGUMENT, `streams[${i}] has no elements`);
    checkSpan(src.size, x.srcByteOffset, x.count * x.width, `streams[${i}]`);
  });
}

/**
 * Records the plan of pack streams of `src` into `s`: every block planned as the CPU's encoder
 * plans it (assembly/pack.ts planBlock: the plain or zigzag domain and the bit width b that make
 * the block smallest, exceptions included), its bytes written to `sizes` (u32 a block, a buffer
 * of at least 4 x blocks bytes, padded to 16, that the caller keeps for {@link encodePackWrite}).
 * Returns the plan and a function to call after the submission: it reads back each stream's
 * bytes E (4 bytes a stream, nothing else). Streams may overlap.
 * @throws ParleError INVALID_ARGUMENT (not a storage buffer, a stream outside `src`, a width not
 *   1, 2 or 4, a stream of no elements, `sizes` too small), TOO_LARGE (`src` beyond one storage binding)
 */
export function encodePackSizes(
  ctx: GpuContext,
  s: Submission,
  src: GPUBuffer,
  streams: readonly PackStream[],
  sizes: GPUBuffer,
): { sizing: PackSizing; read: () => Promise<Uint32Array> } {
  checkBuffer(src, 'src');
  checkBuffer(sizes, 'sizes');
  checkStreams(src, streams);
  const firstBlock: number[] = [];
  let blocks = 0;
  for (const x of streams) {
    firstBlock.push(blocks);
    blocks += blocksOf(x.count);
  }
  if (sizes.size < paddedBytes(blocks))
    throw new ParleError(ErrorCodes.INVALID_ARGUMENT, `sizes holds ${sizes.size} bytes, the plan needs ${paddedBytes(blocks)}`);
  const sizing: PackSizing = { src, streams, firstBlock, blocks, sizes };
  if (streams.length === 0) return { sizing, read: async () => new Uint32Array(0) };
  const srcBinding = { buffer: src, size: srcEnd(streams) };
  ctx.checkBindable(srcBinding.size, 'pack encode source');
  const totals = s.temp(Math.max(16, 4 * streams.length), 'pack totals');
  s.encoder.clearBuffer(totals);
  const { table } = jobTable(streams.map((stream, i) => ({ stream, firstBlock: firstBlock[i], out: 0 })));
  s.dispatch(
    pipeline(ctx, 'codec-pack-encode', packEncodeCode, 'plan'),
    [
      { binding: 0, resource: { buffer: s.uniform([blocks, streams.length, 0, 0]) } },
      { binding: 1, resource: { buffer: storageWords(ctx, s, table, 'pack encode jobs') } },
      { binding: 2, resource: srcBinding },
      { binding: 3, resource: { buffer: sizes } },
      { binding: 4, resource: { buffer: totals } },
    ],
    blocks,
    'parle:pack-plan',
  );
  const read = s.readAfter(totals, 4 * streams.length);
  return { sizing, read: async () => (await read()).slice(0, streams.length) };
}

/**
 * Records the write of streams of a plan (`sizing`, whose submission ran before this one or runs
 * earlier in `s`) into `dst`: stream `writes[i].stream` (an index into the plan's streams) at byte
 * `writes[i].dstByteOffset`, its E bytes as the plan's totals gave them; the rest of `dst` is
 * cleared (the blocks are ORed in). The streams' ranges must not overlap; `dst` is not the plan's
 * source.
 * @throws ParleError INVALID_ARGUMENT (an index outside the plan, a range outside `dst`, `dst` the
 *   source), TOO_LARGE (`dst` beyond one storage binding)
 */
export function encodePackWrite(
  ctx: GpuContext,
  s: Submission,
  sizing: PackSizing,
  writes: readonly { stream: number; dstByteOffset: number; byteLength: number }[],
  dst: GPUBuffer,
): void {
  checkBuffer(dst, 'dst');
  if (dst === sizing.src) throw new ParleError(ErrorCodes.INVALID_ARGUMENT, 'dst must not be the source');
  writes.forEach((x, i) => {
    if (!Number.isInteger(x?.stream) || x.stream < 0 || x.stream >= sizing.streams.length)
      throw new ParleError(ErrorCodes.INVALID_ARGUMENT, `writes[${i}].stream is not a stream of the plan`);
    checkCount(x.dstByteOffset, `writes[${i}].dstByteOffset`);
    checkSpan(dst.size, x.dstByteOffset, x.byteLength, `writes[${i}]`);
  });
  s.encoder.clearBuffer(dst);
  if (writes.length === 0) return;
  const dstBinding = { buffer: dst, size: Math.max(4, ...writes.map((x) => roundUp4(x.dstByteOffset + x.byteLength))) };
  ctx.checkBindable(dstBinding.size, 'pack encode destination');
  const srcBinding = { buffer: sizing.src, size: srcEnd(writes.map((x) => sizing.streams[x.stream])) };
  ctx.checkBindable(srcBinding.size, 'pack encode source');
  // every block's offset from the plan's first: a stream's blocks follow one another
  const offsets = s.temp(paddedBytes(sizing.blocks), 'pack offsets');
  encodeScan(ctx, s, sizing.sizes, offsets, sizing.blocks, 'u32', false);
  const { table, blocks } = jobTable(
    writes.map((x) => ({ stream: sizing.streams[x.stream], firstBlock: sizing.firstBlock[x.stream], out: x.dstByteOffset })),
  );
  s.dispatch(
    pipeline(ctx, 'codec-pack-encode', packEncodeCode, 'write'),
    [
      { binding: 0, resource: { buffer: s.uniform([blocks, writes.length, 0, 0]) } },
      { binding: 1, resource: { buffer: storageWords(ctx, s, table, 'pack encode jobs') } },
      { binding: 2, resource: srcBinding },
      { binding: 5, resource: { buffer: offsets } },
      { binding: 6, resource: dstBinding },
    ],
    blocks,
    'parle:pack-write',
  );
}
