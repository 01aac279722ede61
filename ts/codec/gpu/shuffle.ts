/// <reference types="@webgpu/types" />
/**
 * The byte-plane shuffle stage (docs/format.md, stage 2; Blosc's shuffle) and its inverse on the
 * GPU, of one sequence or of many chunks in one dispatch: dispatch of shaders/codec-shuffle.wgsl.
 * The CPU's twin is assembly/shuffle.ts. Buffers and bindings follow the rules of ./common.ts.
 */
import { ErrorCodes, ParleError } from '../../errors.js';
import shuffleSource from '../../../shaders/codec-shuffle.wgsl';
import { WORKGROUP_SIZE } from '../../gpu/compose.js';
import type { GpuContext, Submission } from '../../gpu/context.js';
import { bindWindow, checkBuffer, checkCount, checkSpan, checkWordOffset, pipeline, roundUp4, storageWords, windowOf } from './common.js';

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
  const planesSize = args.planes.size;
  const planeOffs = args.planeByteOffsets.map((o, k) => checkWordOffset(o, `planeByteOffsets[${k}]`));
  planeOffs.forEach((o, k) => checkSpan(planesSize, o, planeBytes, `plane ${k}`));
  const sorted = [...planeOffs].sort((a, b) => a - b);
  for (let k = 1; k < sorted.length; k++) {
    if (n > 0 && sorted[k - 1] + planeBytes > sorted[k]) throw new ParleError(ErrorCodes.INVALID_ARGUMENT, 'planes overlap');
  }
  const elemBytes = roundUp4(n * w);
  checkSpan(args.elements.size, elemOff, elemBytes, 'elements');
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
  const elementsSize = elements.size;
  const planesSize = planes.size;
  live.forEach((c, i) => {
    const at = checkWordOffset(c.elementsByteOffset, 'elementsByteOffset');
    const bytes = roundUp4(c.count * width);
    checkSpan(elementsSize, at, bytes, 'elements');
    if (!Array.isArray(c.planeByteOffsets) || c.planeByteOffsets.length !== width)
      throw new ParleError(ErrorCodes.INVALID_ARGUMENT, `planeByteOffsets must hold ${width} offsets`);
    const planeWords = c.planeByteOffsets.map((o, k) => {
      checkSpan(planesSize, checkWordOffset(o, `planeByteOffsets[${k}]`), roundUp4(c.count), `plane ${k}`);
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
