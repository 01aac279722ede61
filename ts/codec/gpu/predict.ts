/// <reference types="@webgpu/types" />
/**
 * The inverse of stage 7, predict (docs/format.md, "Stage 7: predict"), on the GPU for many
 * chunks at once: dispatch of shaders/codec-predict.wgsl (unzigzag, a prefix sum along each axis
 * the predictor spans, the fields joined into cells, the float-order map undone). The CPU's twin
 * is assembly/predict.ts. Takes the linear predictors (none, left, up, lorenzo2, lorenzo3) with
 * the bits or float-order value map on 1-, 2- and 4-byte words; {@link predictOnDevice} says
 * which chunks. Buffers and bindings follow the rules of ./common.ts.
 */
import { ErrorCodes, ParleError } from '../../errors.js';
import predictSource from '../../../shaders/codec-predict.wgsl';
import { WORKGROUP_SIZE } from '../../gpu/compose.js';
import type { GpuContext, Submission } from '../../gpu/context.js';
import { Predictor, ValueMap, type PredictHeader } from '../../format/predict.js';
import { checkBuffer, checkWordOffset, pipeline, roundUp4, storageWords } from './common.js';
import { encodeDeltaDecodeChunks, type DeltaChunk } from './delta.js';

/**
 * Rows of at least this many cells sum along the row in codec-delta.wgsl's chunk scan (a
 * workgroup a row, coalesced); shorter ones in one invocation a row (a workgroup a row would
 * leave most of its invocations idle).
 */
const LONG_ROW = 256;
/** Words of a job in the jobs table (PredictJob in codec-predict.wgsl). */
const JOB_WORDS = 20;

/** True when {@link encodePredictDecodeChunks} decodes a chunk with this predict header (else the CPU must: med, the decimal map, 8-byte elements). */
export function predictOnDevice(head: PredictHeader, elementWidth: number): boolean {
  return elementWidth <= 4 && head.predictor <= Predictor.Lorenzo3 && head.map !== ValueMap.Decimal;
}

/** One predicted chunk of {@link encodePredictDecodeChunks}. */
export interface PredictChunk {
  /** Byte offset of field plane 0's residuals in `resid` (a multiple of 4): `cells` zigzagged words of `width` bytes. */
  residByteOffset: number;
  /** Bytes from one field plane's residuals to the next (a multiple of 4, at least cells x width). */
  planeByteStride: number;
  /** Byte offset of the chunk's elements in `out` (a multiple of 4). */
  outByteOffset: number;
  /** The chunk's predict header: fields, rowCells, planeRows, predictor, map; `words` = cells x fields. */
  head: Pick<PredictHeader, 'fields' | 'rowCells' | 'planeRows' | 'predictor' | 'map' | 'words'>;
}

/**
 * Records the inverse of the predict stage of `chunks` (residual planes of `width`-byte words in
 * `resid`) into their elements in `out` in `s`: five dispatches for all chunks (widen, rows,
 * columns, planes, join; a pass no chunk needs is left out) and the delta chunk scan's three for
 * rows of {@link LONG_ROW} cells or more. Scratch: 4 bytes a word of every chunk. Writes
 * ceil(cells x fields x width / 4) words a chunk at its `outByteOffset` (bytes past its elements
 * zero). `resid` and `out` must be different buffers; chunks' outputs must not overlap. The
 * header's fields are trusted as readPredictHeader checked them (cells a whole number of rows,
 * rows of planes).
 * @throws ParleError INVALID_ARGUMENT (offsets, a chunk {@link predictOnDevice} refuses), TOO_LARGE
 */
export function encodePredictDecodeChunks(
  ctx: GpuContext,
  s: Submission,
  resid: GPUBuffer,
  out: GPUBuffer,
  width: 1 | 2 | 4,
  chunks: readonly PredictChunk[],
): void {
  checkBuffer(resid, 'resid');
  checkBuffer(out, 'out');
  if (resid === out) throw new ParleError(ErrorCodes.INVALID_ARGUMENT, 'resid and out must be different buffers');
  const live = chunks.filter((c) => c.head.words > 0);
  if (live.length === 0) return;
  const table = new Uint32Array(live.length * JOB_WORDS);
  /** Items of each pass so far: widen, rows, columns, planes, join. */
  const items = [0, 0, 0, 0, 0];
  const longRows: DeltaChunk[] = [];
  let wide = 0;
  let residEnd = 0;
  let outEnd = 0;
  live.forEach((c, i) => {
    const { fields, rowCells, planeRows, predictor, map, words } = c.head;
    if (!predictOnDevice(c.head as PredictHeader, width) || (map === ValueMap.FloatOrder && width !== 4))
      throw new ParleError(
        ErrorCodes.INVALID_ARGUMENT,
        `chunk ${i}: predictor ${predictor} with value map ${map} is not decoded on the GPU`,
      );
    const residAt = checkWordOffset(c.residByteOffset, 'residByteOffset');
    const stride = checkWordOffset(c.planeByteStride, 'planeByteStride');
    const outAt = checkWordOffset(c.outByteOffset, 'outByteOffset');
    const cells = words / fields;
    const rows = cells / rowCells;
    if (stride < cells * width) throw new ParleError(ErrorCodes.INVALID_ARGUMENT, 'planeByteStride is shorter than a plane');
    const alongRows = predictor !== Predictor.None && predictor !== Predictor.Up && rowCells > 1;
    const shortRows = alongRows && rowCells < LONG_ROW;
    const columnLength = predictor === Predictor.Lorenzo3 ? planeRows : rows;
    const downColumns =
      (predictor === Predictor.Up || predictor === Predictor.Lorenzo2 || predictor === Predictor.Lorenzo3) && columnLength > 1;
    const overPlanes = predictor === Predictor.Lorenzo3 && rows > planeRows;
    if (alongRows && !shortRows) {
      for (let k = 0; k < fields; k++)
        for (let r = 0; r < rows; r++) longRows.push({ byteOffset: (wide + k * cells + r * rowCells) * 4, count: rowCells });
    }
    const counts = [
      words,
      shortRows ? fields * rows : 0,
      downColumns ? fields * (rows / columnLength) * rowCells : 0,
      overPlanes ? fields * planeRows * rowCells : 0,
      Math.ceil((words * width) / 4),
    ];
    table.set(
      [residAt / 4, stride / 4, wide, cells, fields, rowCells, planeRows, rows, predictor, map, outAt / 4, words, ...items],
      i * JOB_WORDS,
    );
    counts.forEach((n, p) => (items[p] += n));
    wide += words;
    residEnd = Math.max(residEnd, residAt + (fields - 1) * stride + roundUp4(cells * width));
    outEnd = Math.max(outEnd, outAt + roundUp4(words * width));
  });
  ctx.checkBindable(wide * 4, 'predict work words');
  ctx.checkBindable(residEnd, 'predict residuals');
  ctx.checkBindable(outEnd, 'predict output');
  const wideBuf = s.temp(wide * 4, 'predict work words');
  const jobs = storageWords(ctx, s, table, 'predict chunks');
  const consts = { 'W: u32': `${width}u`, 'MASK: u32': width === 4 ? '0xFFFFFFFFu' : `${2 ** (8 * width) - 1}u` };
  const entries = ['predictWiden', 'predictRows', 'predictColumns', 'predictPlanes', 'predictJoin'];
  const buffers: Record<number, GPUBufferBinding> = {
    1: { buffer: jobs },
    2: { buffer: resid, size: residEnd },
    3: { buffer: wideBuf },
    4: { buffer: out, size: outEnd },
  };
  // the bindings each entry point uses (layout 'auto' holds only those)
  const uses = [
    [1, 2, 3],
    [1, 3],
    [1, 3],
    [1, 3],
    [1, 3, 4],
  ];
  for (let p = 0; p < entries.length; p++) {
    if (p === 2 && longRows.length > 0) encodeDeltaDecodeChunks(ctx, s, wideBuf, 4, longRows);
    if (items[p] === 0) continue;
    s.dispatch(
      pipeline(ctx, 'codec-predict', predictSource, entries[p], consts),
      [
        { binding: 0, resource: { buffer: s.uniform([live.length, items[p], p, 0]) } },
        ...uses[p].map((binding): GPUBindGroupEntry => ({ binding, resource: buffers[binding] })),
      ],
      Math.ceil(items[p] / WORKGROUP_SIZE),
      `parle:${entries[p]}`,
    );
  }
}
