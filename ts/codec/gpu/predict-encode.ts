/// <reference types="@webgpu/types" />
/**
 * Stage 7, predict, written on the GPU (docs/format.md, "Stage 7: predict"): the plan made on the
 * host from a sample read back ({@link planOnDevice}), and every chunk's field planes of
 * zigzagged residuals made in one dispatch ({@link encodePredictResiduals},
 * shaders/codec-predict-encode.wgsl), for ./encode.ts to code each plane as it codes a chunk.
 */
import predictEncodeSource from '../../../shaders/codec-predict-encode.wgsl';
import { WORKGROUP_SIZE } from '../../gpu/compose.js';
import type { GpuContext, Submission } from '../../gpu/context.js';
import type { DeviceArray } from '../../gpu/device-array.js';
import { elementSize } from '../../types.js';
import { GPU_PLAN_SCOPE, planSampleRanges, SampledBytes, type PredictPlan } from '../predict.js';
import { chunkingOf, chunkLengthOf, predictPlanOf, type CompressSettings } from '../settings.js';
import { pipeline, readRanges, roundUp4 } from './common.js';

/**
 * The chunk length and predict plan of a compress of `input` (on `gpu`) in chunks of about
 * `settings.gpuChunkBytes`, as the CPU path makes them ({@link chunkLengthOf},
 * {@link predictPlanOf}, {@link chunkingOf}) but within what the GPU writes (GPU_PLAN_SCOPE: no
 * med, no decimal map): only the elements {@link planSampleRanges} names are read back (one
 * readback of at most a few hundred KiB), which the planner reads as {@link SampledBytes} (no
 * host array of the input's size: at 64 MiB its allocation cost more than the compress). A plan decided already (`settings.predict`) is taken as it is.
 * @throws ParleError DEVICE_LOST
 */
export async function planOnDevice(
  gpu: GpuContext,
  input: DeviceArray,
  settings: CompressSettings,
): Promise<{ chunkLength: number; plan: PredictPlan | undefined }> {
  const type = input.type;
  const size = elementSize(type);
  const chunkLength = chunkLengthOf(settings, type, settings.gpuChunkBytes);
  if (settings.predict !== undefined)
    return chunkingOf(settings, type, input.length, chunkLength, settings.predict ?? undefined, new Uint8Array(0));
  const ranges = input.length === 0 ? [] : planSampleRanges(input.length, type, settings.shape);
  const parts = await readRanges(
    gpu,
    ranges.map(([start, end]) => ({ buffer: input.buffer, offset: start * size, length: (end - start) * size })),
  );
  const bytes = new SampledBytes(
    input.length * size,
    ranges.map(([start], i) => ({ at: start * size, bytes: parts[i] })),
  );
  const plan = predictPlanOf(settings, type, bytes, { scope: GPU_PLAN_SCOPE });
  return chunkingOf(settings, type, input.length, chunkLength, plan, bytes, GPU_PLAN_SCOPE);
}

/** Where {@link encodePredictResiduals} reads and writes. */
export interface PredictEncodeJob {
  /** The elements (`count` of `width` bytes from byte 0). */
  input: GPUBuffer;
  count: number;
  /** Element bytes: 1, 2 or 4. */
  width: 1 | 2 | 4;
  /** Elements a chunk (the last may hold fewer). */
  chunkLength: number;
  /** The plan (its map bits or float order, a linear predictor); undefined: the elements copied as they are, a unit a chunk. */
  plan: PredictPlan | undefined;
  /** Elements from one unit to the next in `resid`: at least a unit's cells, a multiple of 4 / width. */
  stride: number;
  /** Units (chunks x the plan's fields). */
  units: number;
  /** Output: unit u (chunk u div fields, field u mod fields) at byte u x stride x width; `units x stride x width` bytes. */
  resid: GPUBuffer;
}

/**
 * Records the dispatch that writes every chunk's field planes of zigzagged residuals under
 * `job.plan` (or, without one, the chunks copied at the stride) into `job.resid`, each unit padded
 * to the stride with its last value. Input and output are distinct buffers.
 */
export function encodePredictResiduals(ctx: GpuContext, s: Submission, job: PredictEncodeJob): void {
  const { width, plan } = job;
  const words = (job.units * job.stride * width) / 4;
  if (words === 0) return;
  ctx.checkBindable(roundUp4(job.count * width), 'predict input');
  ctx.checkBindable(words * 4, 'predict residuals');
  const params = plan ?? { fields: 1, rowCells: 0, planeRows: 1, predictor: 0, map: 0 };
  const uniform = s.uniform([
    job.count,
    job.chunkLength,
    params.fields,
    params.rowCells,
    params.planeRows,
    params.predictor,
    params.map,
    job.stride,
    words,
    plan === undefined ? 0 : 1,
    0,
    0,
  ]);
  const consts = { 'W: u32': `${width}u`, 'MASK: u32': width === 4 ? '0xFFFFFFFFu' : `${2 ** (8 * width) - 1}u` };
  s.dispatch(
    pipeline(ctx, 'codec-predict-encode', predictEncodeSource, 'predictEncode', consts),
    [
      { binding: 0, resource: { buffer: uniform } },
      { binding: 1, resource: { buffer: job.input, size: roundUp4(Math.max(4, job.count * width)) } },
      { binding: 2, resource: { buffer: job.resid, size: words * 4 } },
    ],
    Math.ceil(words / WORKGROUP_SIZE),
    'parle:predict-encode',
  );
}
