/// <reference types="@webgpu/types" />
/**
 * The byte gather that lays out a container's payloads on the GPU: copies of byte ranges at any
 * byte offsets (outputs too, unlike the other kernels' whole-word rule in ./common.ts), where
 * copyBufferToBuffer needs multiples of 4. Dispatch of shaders/codec-gather.wgsl.
 */
import { ErrorCodes, ParleError } from '../../errors.js';
import gatherSource from '../../../shaders/codec-gather.wgsl';
import { WORKGROUP_SIZE } from '../../gpu/compose.js';
import type { GpuContext, Submission } from '../../gpu/context.js';
import { bindWindow, checkBuffer, checkCount, checkSpan, groupBySpans, pipeline, storageWords, type Window } from './common.js';

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
  const srcSize = src.size;
  const dstSize = dst.size;
  jobs.forEach((j, i) => {
    checkCount(j?.srcByteOffset, `jobs[${i}].srcByteOffset`);
    checkCount(j?.dstByteOffset, `jobs[${i}].dstByteOffset`);
    checkCount(j?.byteLength, `jobs[${i}].byteLength`);
    checkSpan(srcSize, j.srcByteOffset, j.byteLength, `jobs[${i}] source`);
    checkSpan(dstSize, j.dstByteOffset, j.byteLength, `jobs[${i}] destination`);
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
      table[4 * e] = j.srcByteOffset - sw.base;
      table[4 * e + 1] = d;
      table[4 * e + 2] = j.byteLength;
      table[4 * e + 3] = words;
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
