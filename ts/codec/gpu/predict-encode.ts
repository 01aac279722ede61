/// <reference types="@webgpu/types" />
/**
 * Stage 7, predict, written on the GPU (docs/format.md, "Stage 7: predict"): the plan made on the
 * host from a sample read back ({@link planOnDevice}), and every chunk's field planes of
 * zigzagged residuals made in one dispatch ({@link encodePredictResiduals},
 * shaders/codec-predict-encode.wgsl), for ./encode.ts to code each plane as it codes a chunk.
 */
import predictEncodeSource from '../../../shaders/codec-predict-encode.wgsl';
import softFloatSource from '../../../shaders/soft-float64.wgsl';
import decimalSource from '../../../shaders/decimal-f32.wgsl';
import decimal64Source from '../../../shaders/decimal-f64.wgsl';
import medSource from '../../../shaders/predict-med.wgsl';
import { WORKGROUP_SIZE } from '../../gpu/compose.js';
import type { GpuContext, Submission } from '../../gpu/context.js';
import type { DeviceArray } from '../../gpu/device-array.js';
import { elementSize } from '../../types.js';
import { ValueMap } from '../../format/predict.js';
import { planSampleRanges, SampledBytes, STRIDE_MIN_BYTES, WORD_PLANES_PLAN, type PredictPlan } from '../predict.js';
import { chunkingOf, chunkLengthOf, predictPlanOf, type CompressSettings } from '../settings.js';
import { pipeline, readRanges, roundUp4, storageWords } from './common.js';
import { DECIMAL_PAIRS, DECIMAL_POWERS, decimalFactors, FACTOR_WORDS, FLOAT_ORDER_PAIRS } from './predict.js';

/** Where codec-predict-encode.wgsl's table holds each chunk's exponents: after the factors and the powers (EXPONENTS_AT). */
const EXPONENTS_AT = FACTOR_WORDS + DECIMAL_POWERS.length;
/** The kernel's source: the decimal maps' decoders (its exactness checks), med, the kernel. */
const predictEncodeCode = softFloatSource + decimalSource + decimal64Source + medSource + predictEncodeSource;

/**
 * The chunk length and predict plan of a compress of `input` (on `gpu`) in chunks of about
 * `settings.gpuChunkBytes`, as the CPU path makes them ({@link chunkLengthOf},
 * {@link predictPlanOf}, {@link chunkingOf}; the GPU writes every predictor and map): only the
 * elements {@link planSampleRanges} names are read back (one readback of at most a few hundred
 * KiB), which the planner reads as {@link SampledBytes} (no
 * host array of the input's size: at 64 MiB its allocation cost more than the compress). A plan
 * decided already (`settings.predict`) is taken as it is.
 * @throws ParleError DEVICE_LOST
 */
export async function planOnDevice(
  gpu: GpuContext,
  input: DeviceArray,
  settings: CompressSettings,
): Promise<{ chunkLength: number; plan: PredictPlan | undefined }> {
  const type = settings.type ?? input.type;
  const size = elementSize(type);
  const chunkLength = chunkLengthOf(settings, type, settings.gpuChunkBytes);
  if (settings.predict !== undefined)
    return chunkingOf(settings, type, input.length, chunkLength, settings.predict ?? undefined, new Uint8Array(0));
  // nothing to plan (and nothing read back): a fixed codec or the lossy mode (8-byte elements:
  // their word planes, as predictPlanOf plans them there), or a flat array too short for a
  // record stride (but of 8-byte elements, which are always planned: their chunks are predicted
  // or stored)
  const flat = settings.shape === undefined || settings.shape.length < 2;
  if (settings.codec !== undefined || settings.errorBound !== undefined)
    return { chunkLength, plan: size === 8 ? WORD_PLANES_PLAN : undefined };
  if (flat && size < 8 && input.length * size < STRIDE_MIN_BYTES) return { chunkLength, plan: undefined };
  const ranges = input.length === 0 ? [] : planSampleRanges(input.length, type, settings.shape);
  const parts = await readRanges(
    gpu,
    ranges.map(([start, end]) => ({ buffer: input.buffer, offset: start * size, length: (end - start) * size })),
  );
  const bytes = new SampledBytes(
    input.length * size,
    ranges.map(([start], i) => ({ at: start * size, bytes: parts[i] })),
  );
  const plan = predictPlanOf(settings, type, bytes);
  return chunkingOf(settings, type, input.length, chunkLength, plan, bytes);
}

/** The decimal map's inputs and outputs of {@link encodePredictResiduals} (f32, and f64 as `pairs`). */
export interface DecimalEncode {
  /** Per chunk its exponents, a field of elements each, or undefined: the chunk has none (float order). */
  exponents: readonly (readonly number[] | undefined)[];
  /** Output: per chunk its exceptions (u32; cleared here), counted past the list's room too. */
  counts: GPUBuffer;
  /**
   * Output: chunk c's exceptions at c x listStride pairs of u32 (element index in the chunk,
   * bits), in any order; of 8-byte elements at c x 2 listStride, two pairs each (index, low
   * word), (high word, 0).
   */
  list: GPUBuffer;
  /** Exceptions a chunk's list holds: chunkLength / 64. */
  listStride: number;
}

/** Where {@link encodePredictResiduals} reads and writes. */
export interface PredictEncodeJob {
  /** The elements (`count` of `width` bytes from byte 0). */
  input: GPUBuffer;
  count: number;
  /** Element bytes: 1, 2 or 4 (8-byte elements: 4, with `pairs`). */
  width: 1 | 2 | 4;
  /**
   * 8-byte elements as their u32 halves (low, then high): `count`, `chunkLength` and `stride` in
   * words, the plan's fields word fields; the float-order and decimal maps on each element's
   * pair (the decimal map's exponents a field of elements: half the plan's fields).
   */
  pairs?: boolean;
  /** Elements a chunk (the last may hold fewer). */
  chunkLength: number;
  /** The plan (a linear predictor; the bits, float-order or decimal map); undefined: the elements copied as they are, a unit a chunk. */
  plan: PredictPlan | undefined;
  /** Elements from one unit to the next in `resid`: at least a unit's cells, a multiple of 4 / width. */
  stride: number;
  /** Units (chunks x the plan's fields). */
  units: number;
  /** Output: unit u (chunk u div fields, field u mod fields) at byte u x stride x width; `units x stride x width` bytes. */
  resid: GPUBuffer;
  /** The decimal map's (plan.map 2). */
  decimal?: DecimalEncode;
}

/**
 * Records the dispatches that write every chunk's field planes of zigzagged residuals under
 * `job.plan` (or, without one, the chunks copied at the stride) into `job.resid`, each unit padded
 * to the stride with its last value; with the decimal map first each chunk's exceptions (a chunk
 * with more than count / 64 of them takes the float-order map, as one without exponents).
 * Input and outputs are distinct buffers.
 * @throws ParleError TOO_LARGE
 */
export function encodePredictResiduals(ctx: GpuContext, s: Submission, job: PredictEncodeJob): void {
  const { width, plan, decimal } = job;
  const pairs = job.pairs === true;
  const words = (job.units * job.stride * width) / 4;
  if (words === 0) return;
  ctx.checkBindable(roundUp4(job.count * width), 'predict input');
  ctx.checkBindable(words * 4, 'predict residuals');
  const params = plan ?? { fields: 1, rowCells: 0, planeRows: 1, predictor: 0, map: 0 };
  const chunks = Math.ceil(job.count / job.chunkLength);
  // the exceptions pass's invocations: an element each (two words of 8-byte elements)
  const elements = pairs ? job.count / 2 : job.count;
  const uniform = s.uniform([
    job.count,
    job.chunkLength,
    params.fields,
    params.rowCells,
    params.planeRows,
    params.predictor,
    // (the decimal map without its exponents: float order; 8-byte elements' maps of a pair)
    mapOf(params.map === ValueMap.Decimal && decimal === undefined ? ValueMap.FloatOrder : params.map, pairs),
    job.stride,
    words,
    plan === undefined ? 0 : 1,
    decimal?.listStride ?? 0,
    elements,
  ]);
  const consts = { 'W: u32': `${width}u`, 'MASK: u32': width === 4 ? '0xFFFFFFFFu' : `${2 ** (8 * width) - 1}u` };
  // the factors, the powers, then each chunk's exponents (0xFFFFFFFF: none; of 8-byte elements
  // each element field's in both its word fields)
  const table = new Uint32Array(EXPONENTS_AT + (decimal === undefined ? 1 : chunks * params.fields));
  if (decimal !== undefined) {
    table.set(decimalFactors(), 0);
    table.set(DECIMAL_POWERS, FACTOR_WORDS);
    decimal.exponents.forEach((exps, c) => {
      for (let k = 0; k < params.fields; k++) table[EXPONENTS_AT + c * params.fields + k] = exps?.[pairs ? k >> 1 : k] ?? 0xffffffff;
    });
  }
  const counts = decimal?.counts ?? s.temp(4, 'predict exception counts');
  const list = decimal?.list ?? s.temp(8, 'predict exceptions');
  s.encoder.clearBuffer(counts);
  const input = { buffer: job.input, size: roundUp4(Math.max(4, job.count * width)) };
  const tableBuf = storageWords(ctx, s, table, 'predict decimal table');
  if (decimal !== undefined && job.count > 0) {
    s.dispatch(
      pipeline(ctx, 'codec-predict-encode', predictEncodeCode, 'predictExceptions', consts),
      [
        { binding: 0, resource: { buffer: uniform } },
        { binding: 1, resource: input },
        { binding: 3, resource: { buffer: tableBuf } },
        { binding: 4, resource: { buffer: counts } },
        { binding: 5, resource: { buffer: list } },
      ],
      Math.ceil(elements / WORKGROUP_SIZE),
      'parle:predict-exceptions',
    );
  }
  s.dispatch(
    pipeline(ctx, 'codec-predict-encode', predictEncodeCode, 'predictEncode', consts),
    [
      { binding: 0, resource: { buffer: uniform } },
      { binding: 1, resource: input },
      { binding: 2, resource: { buffer: job.resid, size: words * 4 } },
      { binding: 3, resource: { buffer: tableBuf } },
      { binding: 4, resource: { buffer: counts } },
    ],
    Math.ceil(words / WORKGROUP_SIZE),
    'parle:predict-encode',
  );
}

/** The kernel's `map` for the plan's value map (8-byte elements: their pair's maps). */
function mapOf(map: ValueMap, pairs: boolean): number {
  if (!pairs || map === ValueMap.None) return map;
  return map === ValueMap.Decimal ? DECIMAL_PAIRS : FLOAT_ORDER_PAIRS;
}
