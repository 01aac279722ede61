/// <reference types="@webgpu/types" />
/**
 * The decode of pack streams (docs/format.md, "Pack streams": PFOR in SIMD-BP128's vertical
 * layout, Lemire and Boytsov 2015) on the GPU: dispatch of shaders/codec-pack-decode.wgsl, with
 * shaders/read-src.wgsl appended (a walk of every stream's block headers, then a workgroup a
 * block). The CPU's twin is assembly/pack.ts packDecode. Buffers follow the rules of
 * ./common.ts.
 */
import { ErrorCodes, ParleError } from '../../errors.js';
import packDecodeSource from '../../../shaders/codec-pack-decode.wgsl';
import readSrcSource from '../../../shaders/read-src.wgsl';
import type { GpuContext, Submission } from '../../gpu/context.js';
import { getPipeline } from '../../gpu/pipelines.js';
import { checkBuffer, checkCount, checkSpan, checkWordOffset, corrupt, roundUp4, storageWords } from './common.js';

/** The kernel, with shaders/read-src.wgsl appended (it reads bytes of its `src` binding). */
const packDecodeCode = `${packDecodeSource}\n${readSrcSource}`;

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
  const srcSize = srcBuf.size;
  const dstSize = dstBuf.size;
  jobs.forEach((j, i) => {
    if (![1, 2, 4].includes(j.width)) throw new ParleError(ErrorCodes.INVALID_ARGUMENT, `jobs[${i}].width must be 1, 2 or 4`);
    checkCount(j.srcByteOffset, `jobs[${i}].srcByteOffset`);
    checkCount(j.encodedBytes, `jobs[${i}].encodedBytes`);
    checkWordOffset(j.dstByteOffset, `jobs[${i}].dstByteOffset`);
    checkCount(j.decodedBytes, `jobs[${i}].decodedBytes`);
    checkSpan(srcSize, j.srcByteOffset, j.encodedBytes, `jobs[${i}] source`);
    checkSpan(dstSize, j.dstByteOffset, roundUp4(j.decodedBytes), `jobs[${i}] destination`);
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
