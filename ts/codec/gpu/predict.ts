/// <reference types="@webgpu/types" />
/**
 * The inverse of stage 7, predict (docs/format.md, "Stage 7: predict"), on the GPU for many
 * chunks at once: dispatch of shaders/codec-predict.wgsl (unzigzag, a prefix sum along each axis
 * the predictor spans or LOCO-I's median edge detector by wavefronts, the fields joined into
 * cells, the float-order map undone). The CPU's twin is assembly/predict.ts. Takes every
 * predictor (none, left, up, lorenzo2, lorenzo3, med) with the bits value map on 1-, 2- and
 * 4-byte words, the float-order and decimal maps of f32 (the decimal map's f64 product emulated
 * exactly in u32 words), and 8-byte elements (their words: two fields an element field) with
 * every map (f64's decimal map: its quotient found by long division in u32 words); {@link
 * predictOnDevice} says which chunks. Buffers and bindings follow the rules of ./common.ts.
 */
import { ErrorCodes, ParleError } from '../../errors.js';
import predictSource from '../../../shaders/codec-predict.wgsl';
import softFloatSource from '../../../shaders/soft-float64.wgsl';
import decimalSource from '../../../shaders/decimal-f32.wgsl';
import decimal64Source from '../../../shaders/decimal-f64.wgsl';
import medSource from '../../../shaders/predict-med.wgsl';
import { WORKGROUP_SIZE } from '../../gpu/compose.js';
import type { GpuContext, Submission } from '../../gpu/context.js';
import { Predictor, ValueMap, type PredictHeader } from '../../format/predict.js';
import { checkBuffer, checkWordOffset, pipeline, roundUp4, storageWords } from './common.js';
import { encodeDeltaDecodeChunks, type DeltaChunk } from './delta.js';

/**
 * Rows of at least this many cells sum along the row a workgroup a row (coalesced);
 * shorter ones in one invocation a row (a workgroup a row would leave most of its invocations
 * idle). Long rows had gone through codec-delta.wgsl's chunk scan, a job a row: 100k rows of
 * 640 cells (chessboards) cost the host 25 ms a call to build its table, the GPU 7 ms.
 */
const LONG_ROW = 256;
/**
 * Rows of at least this many cells (a flat array's chunk is one row) go through codec-delta.wgsl's
 * chunk scan, which spreads a row over many workgroups (a workgroup would walk 64 tiles or more
 * one after another); there are few such rows, so its job a row costs the host little.
 */
const VERY_LONG_ROW = 16384;
/**
 * Columns of at least this many cells sum down the column a workgroup a column, tiles of cells a
 * row apart; shorter ones in one invocation a column. An invocation's column is a chain of
 * dependent loads (about 0.5 us a cell on the H200): an RGB array predicted with rows of 3 cells
 * has 3 columns of 87k cells a 256 KiB chunk, which took 40 ms of a 64 MiB decode that way.
 */
const LONG_COLUMN = 1024;
/** Words of a job in the jobs table (PredictJob in codec-predict.wgsl). */
const JOB_WORDS = 21;

/**
 * True when {@link encodePredictDecodeChunks} decodes a chunk with this predict header of
 * `elementWidth`-byte elements (else the CPU must: a predictor id past med, a value map of 1- or
 * 2-byte elements).
 */
export function predictOnDevice(head: Pick<PredictHeader, 'predictor' | 'map'>, elementWidth: number): boolean {
  return head.predictor <= Predictor.Med && (head.map === ValueMap.None || elementWidth >= 4);
}

/**
 * The kernels' value maps of 8-byte elements, an element's pair of words mapped as one
 * (codec-predict.wgsl and codec-predict-encode.wgsl `map`): float order, and f64's decimal map.
 */
export const FLOAT_ORDER_PAIRS = 3;
export const DECIMAL_PAIRS = 4;

/** codec-predict.wgsl's value map of 8-byte elements, by the header's. */
const PAIR_MAPS: Record<number, number> = {
  [ValueMap.None]: ValueMap.None,
  [ValueMap.FloatOrder]: FLOAT_ORDER_PAIRS,
  [ValueMap.Decimal]: DECIMAL_PAIRS,
};

/**
 * The integers 10^e for e = 0..18 as (low, high) u32 words: what decimal-f64.wgsl divides by
 * (words POW10_AT.. of its table, after {@link decimalFactors}); made once.
 */
export const DECIMAL_POWERS: readonly number[] = Array.from({ length: 19 }, (_, e) => 10n ** BigInt(e)).flatMap((p) => [
  Number(p & 0xffffffffn),
  Number(p >> 32n),
]);

/** Words of the decimal factors' table (codec-predict.wgsl `decimal`): F[e] = 10^-e, e = 0..18, three words each. */
export const FACTOR_WORDS = 3 * 19;

/**
 * The decimal map's factors as the kernel takes them: for e = 0..18 the f64 nearest 10^-e (as the
 * CPU's DECIMAL_FACTORS) as its 53-bit mantissa (high 21 bits with the leading 1, low 32 bits)
 * and the power of two of its last bit.
 */
export function decimalFactors(): Uint32Array {
  const table = new Uint32Array(FACTOR_WORDS);
  const view = new DataView(new ArrayBuffer(8));
  for (let e = 0; e <= 18; e++) {
    view.setFloat64(0, Number(`1e-${e}`), true);
    const lo = view.getUint32(0, true);
    const hi = view.getUint32(4, true);
    const biased = (hi >>> 20) & 0x7ff;
    table.set([(hi & 0xfffff) | 0x100000, lo, (biased - 1075) >>> 0], 3 * e);
  }
  return table;
}

/** One predicted chunk of {@link encodePredictDecodeChunks}. */
export interface PredictChunk {
  /** Byte offset of field plane 0's residuals in `resid` (a multiple of 4): `cells` zigzagged words of the word width. */
  residByteOffset: number;
  /** Bytes from one field plane's residuals to the next (a multiple of 4, at least cells x width). */
  planeByteStride: number;
  /** Byte offset of the chunk's elements in `out` (a multiple of 4). */
  outByteOffset: number;
  /** The chunk's predict header: fields, rowCells, planeRows, predictor, map, a decimal map's exponents; `words` = cells x fields. */
  head: Pick<PredictHeader, 'fields' | 'rowCells' | 'planeRows' | 'predictor' | 'map' | 'words' | 'exponents'>;
  /**
   * A decimal map's exceptions: element indices (strictly increasing, below the chunk's elements:
   * the caller checks them) and the bits written there over the decoded elements (an 8-byte
   * element's two words, low then high).
   */
  exceptions?: { indices: Uint32Array; bits: Uint32Array };
}

/**
 * Records the inverse of the predict stage of `chunks` (residual planes of words in `resid`: of
 * `elementWidth` bytes, of 4 for 8-byte elements) into their elements in `out` in `s`: up to
 * eight dispatches for all chunks (widen; rows, an invocation a row, or a workgroup a row of
 * {@link LONG_ROW} cells or more; columns, an invocation a column, or a workgroup a column of
 * {@link LONG_COLUMN} cells or more; planes; join; a decimal map's exceptions; a pass no chunk
 * needs is left out), and the delta chunk scan's three for rows of {@link VERY_LONG_ROW} cells
 * or more. Scratch: 4 bytes a word of every chunk. Writes ceil(cells x fields x word width / 4)
 * words a chunk at its `outByteOffset` (bytes past its elements zero). `resid` and `out` must be different buffers; chunks' outputs must not overlap. The
 * header's fields are trusted as readPredictHeader checked them (cells a whole number of rows,
 * rows of planes).
 * @throws ParleError INVALID_ARGUMENT (offsets, a chunk {@link predictOnDevice} refuses), TOO_LARGE
 */
export function encodePredictDecodeChunks(
  ctx: GpuContext,
  s: Submission,
  resid: GPUBuffer,
  out: GPUBuffer,
  elementWidth: 1 | 2 | 4 | 8,
  chunks: readonly PredictChunk[],
): void {
  const width = elementWidth === 8 ? 4 : elementWidth;
  checkBuffer(resid, 'resid');
  checkBuffer(out, 'out');
  if (resid === out) throw new ParleError(ErrorCodes.INVALID_ARGUMENT, 'resid and out must be different buffers');
  const live = chunks.filter((c) => c.head.words > 0);
  if (live.length === 0) return;
  const table = new Uint32Array(live.length * JOB_WORDS);
  /** Items of each pass so far: widen, rows, columns, planes, join, long rows, long columns, med planes (workgroups of the last three). */
  const items = [0, 0, 0, 0, 0, 0, 0, 0];
  const veryLongRows: DeltaChunk[] = [];
  const decimal: number[] = [...decimalFactors(), ...DECIMAL_POWERS];
  const exceptionPairs: number[] = [];
  let wide = 0;
  let residEnd = 0;
  let outEnd = 0;
  live.forEach((c, i) => {
    const { fields, rowCells, planeRows, predictor, map, words } = c.head;
    if (!predictOnDevice(c.head, elementWidth))
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
    const alongRows = predictor !== Predictor.None && predictor !== Predictor.Up && predictor !== Predictor.Med && rowCells > 1;
    const shortRows = alongRows && rowCells < LONG_ROW;
    const columnLength = predictor === Predictor.Lorenzo3 ? planeRows : rows;
    const downColumns =
      (predictor === Predictor.Up || predictor === Predictor.Lorenzo2 || predictor === Predictor.Lorenzo3) && columnLength > 1;
    const columns = downColumns ? fields * (rows / columnLength) * rowCells : 0;
    const longColumns = columnLength >= LONG_COLUMN;
    const overPlanes = predictor === Predictor.Lorenzo3 && rows > planeRows;
    const counts = [
      words,
      shortRows ? fields * rows : 0,
      longColumns ? 0 : columns,
      overPlanes ? fields * planeRows * rowCells : 0,
      Math.ceil((words * width) / 4),
      alongRows && !shortRows && rowCells < VERY_LONG_ROW ? fields * rows : 0,
      longColumns ? columns : 0,
      predictor === Predictor.Med ? fields : 0,
    ];
    if (alongRows && rowCells >= VERY_LONG_ROW) {
      for (let k = 0; k < fields; k++)
        for (let r = 0; r < rows; r++) veryLongRows.push({ byteOffset: (wide + k * cells + r * rowCells) * 4, count: rowCells });
    }
    table.set(
      [
        residAt / 4,
        stride / 4,
        wide,
        cells,
        fields,
        rowCells,
        planeRows,
        rows,
        predictor,
        elementWidth === 8 ? PAIR_MAPS[map] : map,
        outAt / 4,
        words,
        ...items,
        decimal.length,
      ],
      i * JOB_WORDS,
    );
    if (map === ValueMap.Decimal) {
      // an exponent an element field (8-byte elements: half the word fields)
      const exponents = c.head.exponents ?? [];
      for (let k = 0; k < (elementWidth === 8 ? fields / 2 : fields); k++) decimal.push(exponents[k] ?? 0);
      const x = c.exceptions;
      for (let j = 0; j < (x?.indices.length ?? 0); j++) {
        if (elementWidth === 8)
          exceptionPairs.push(outAt / 4 + 2 * x!.indices[j], x!.bits[2 * j], outAt / 4 + 2 * x!.indices[j] + 1, x!.bits[2 * j + 1]);
        else exceptionPairs.push(outAt / 4 + x!.indices[j], x!.bits[j]);
      }
    }
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
  const entries = [
    'predictWiden',
    'predictRows',
    'predictColumns',
    'predictPlanes',
    'predictJoin',
    'predictRowsLong',
    'predictColumnsLong',
    'predictMed',
    'predictExceptions',
  ];
  const buffers: Record<number, GPUBufferBinding> = {
    1: { buffer: jobs },
    2: { buffer: resid, size: residEnd },
    3: { buffer: wideBuf },
    4: { buffer: out, size: outEnd },
    5: { buffer: storageWords(ctx, s, new Uint32Array(decimal), 'predict decimal factors') },
    6: { buffer: storageWords(ctx, s, new Uint32Array(exceptionPairs), 'predict exceptions') },
  };
  items.push(exceptionPairs.length / 2);
  // the bindings each entry point uses (layout 'auto' holds only those)
  const uses = [
    [1, 2, 3],
    [1, 3],
    [1, 3],
    [1, 3],
    [1, 3, 4, 5],
    [1, 3],
    [1, 3],
    [1, 3],
    [4, 6],
  ];
  // the passes in order: the axes (any order: their sums commute) or med, then the join and the exceptions
  for (const p of [0, 1, 5, 2, 6, 3, 7, 4, 8]) {
    if (p === 2 && veryLongRows.length > 0) encodeDeltaDecodeChunks(ctx, s, wideBuf, 4, veryLongRows);
    if (items[p] === 0) continue;
    s.dispatch(
      pipeline(ctx, 'codec-predict', softFloatSource + decimalSource + decimal64Source + medSource + predictSource, entries[p], consts),
      [
        { binding: 0, resource: { buffer: s.uniform([live.length, items[p], p, 0]) } },
        ...uses[p].map((binding): GPUBindGroupEntry => ({ binding, resource: buffers[binding] })),
      ],
      p === 5 || p === 6 || p === 7 ? items[p] : Math.ceil(items[p] / WORKGROUP_SIZE), // long rows and columns, med planes: a workgroup an item
      `parle:${entries[p]}`,
    );
  }
}
