/// <reference types="@webgpu/types" />
/**
 * The rle stage's streams (docs/format.md, "Version 2", stage 3: the runs' values, raw, and
 * their (length - 1) as unsigned LEB128) of every chunk of an array, built on the GPU: the runs
 * by ts/gpu/rle.ts (shaders/rle-encode.wgsl), their scans by ts/gpu/scan.ts, and the LEB128
 * sizes and bytes by dispatch of shaders/codec-rle-streams.wgsl.
 */
import rleStreamsSource from '../../../shaders/codec-rle-streams.wgsl';
import { WORKGROUP_SIZE } from '../../gpu/compose.js';
import type { DeviceArray } from '../../gpu/device-array.js';
import { rleEncodeThen } from '../../gpu/rle.js';
import { encodeScan } from '../../gpu/scan.js';
import type { GpuContext } from '../../gpu/context.js';
import { pipeline } from './common.js';
import { encodeHistogramCodes, type HistogramCode } from './histogram.js';
import { ErrorCodes, ParleError } from '../../errors.js';
import { elementSize } from '../../types.js';

/** The rle stage's two streams of every chunk of an array, on the GPU (see {@link rleChunkStreams}). */
export interface RleChunkStreams {
  /** Runs of all chunks together (a run never crosses a chunk), padding's dropped runs not counted. */
  runs: number;
  /** The run values, of the input's element type: chunk c's values stream is bytes [firstRun[c] w, endRun[c] w). */
  values: DeviceArray;
  /** Every run's (length - 1) as LEB128, runs in order: chunk c's lengths stream is bytes [lebStart[c], lebStart[c + 1]). */
  leb: GPUBuffer;
  /** Per chunk, then one past the last: the index of its first run (all runs, dropped ones too, at the end). */
  firstRun: Uint32Array;
  /** Per chunk: one past the index of its last run that is not dropped (firstRun[c + 1] where it has no padding runs). */
  endRun: Uint32Array;
  /** Per chunk, then one past the last: the byte of `leb` where its lengths stream starts (all LEB bytes at the end). */
  lebStart: Uint32Array;
  /** Gives the buffers back (values destroyed, `leb` to the pool). */
  release(): void;
  /**
   * With the runs counted ({@link rleChunkStreams} `runs`): each chunk's values stream's and
   * lengths stream's byte histogram and Huffman code (a chunk whose runs were not counted: those of no bytes).
   */
  codes?: { values: HistogramCode[]; lengths: HistogramCode[] };
}

/**
 * The rle stage's streams (docs/format.md, "Version 2", stage 3: a values stream of the runs'
 * elements, raw, and a lengths stream of (length - 1) as unsigned LEB128) of each of `chunkCount`
 * chunks of `chunkLength` elements of `input`, built on the GPU: the runs with a run start forced
 * at every chunk (rle-encode.wgsl), the exclusive scan of their lengths (each run's first
 * element, which finds the chunks' first runs), each run's LEB128 size, their exclusive scan
 * (byte offsets), and the bytes (shaders/codec-rle-streams.wgsl), all but the runs in the run
 * encode's second submission (two submissions in all). Three small readbacks: the run count,
 * the LEB total, and the table of chunk starts and ends (3 words a chunk). The streams' bytes stay on
 * the GPU (for histograms, Huffman coding, or a readback of the payload); `leb` is a worst-case
 * buffer (for every run, the LEB128 size of a chunk-long run).
 * `chunkLength` must be a multiple of the elements per u32 word (4 for u8, 2 for u16) unless
 * there is one chunk. `units`: chunks that hold fewer elements than the chunk length (units of
 * ./predict-encode.ts, padded with their last element; byte planes of ./encode.ts, padded with
 * anything): `cells` each, `shortCells` from chunk `shortFrom` on; their streams hold only those
 * (a run is cut at its chunk's end; runs that start past it are dropped).
 * With `runs` (a chunk's maximal runs of equal elements among its cells, as a histogram pass
 * counted them: ./histogram.ts `runs`; undefined where not counted) everything is one submission
 * and one round trip: the buffers are sized from the runs counted plus one for every element
 * not counted (a bound on the runs), and each chunk's two streams' byte histograms and Huffman
 * codes are made in it too (`codes`; the streams' places written on the GPU, their sizes bounded
 * by the runs counted; a chunk whose runs were not counted gets the codes of no bytes). The runs
 * found must equal those counted (else GPU_ERROR).
 * @throws ParleError INVALID_ARGUMENT (chunk length, runs), TOO_LARGE (beyond one storage
 *   binding), DEVICE_LOST, GPU_ERROR
 */
export async function rleChunkStreams(
  ctx: GpuContext,
  input: DeviceArray,
  chunkLength: number,
  chunkCount: number,
  units: { cells: number; shortFrom: number; shortCells: number } = { cells: chunkLength, shortFrom: chunkCount, shortCells: 0 },
  runs?: readonly (number | undefined)[],
): Promise<RleChunkStreams> {
  // the shader's chunk: with one chunk, only run 0 starts one
  const chunk = chunkCount > 1 ? chunkLength : 0xffffffff;
  const n = input.length;
  const vw = elementSize(input.type);
  // elements of chunk c that are not padding
  const cellsOf = (c: number) =>
    Math.max(0, Math.min(c >= units.shortFrom ? units.shortCells : units.cells, chunkCount > 1 ? n - c * chunkLength : n));
  let runsAtMost: number | undefined;
  if (runs !== undefined) {
    if (!Array.isArray(runs) || runs.length !== chunkCount)
      throw new ParleError(ErrorCodes.INVALID_ARGUMENT, `runs must hold one entry a chunk (${chunkCount})`);
    let bound = n;
    runs.forEach((r, c) => {
      if (r === undefined) return;
      if (!Number.isInteger(r) || r < 0 || r > cellsOf(c) || (r === 0) !== (cellsOf(c) === 0))
        throw new ParleError(ErrorCodes.INVALID_ARGUMENT, `runs[${c}] must be a run count of the chunk's ${cellsOf(c)} elements`);
      bound -= cellsOf(c) - r;
    });
    if (n > 0) runsAtMost = Math.max(1, bound);
  }
  const acquired: GPUBuffer[] = [];
  // a run is at most a chunk long: (length - 1) takes ceil(bits / 7) LEB128 bytes
  const longest = Math.min(n, chunkCount > 1 ? chunkLength : n);
  const lebMost = Math.max(1, Math.ceil(Math.log2(longest) / 7));
  // Recorded into the run-length encode's second submission (R runs known, or bounded): each
  // run's first element (exclusive scan of the lengths), its LEB128 size, their exclusive scan
  // (byte offsets) and total, and the bytes, into a worst-case buffer (the LEB128 size of the
  // longest possible run, a chunk, for every run), with the table of chunk starts: one round
  // trip for all of it (with the runs counted, the streams' histograms too).
  let encoded;
  try {
    encoded = await rleEncodeThen(
      ctx,
      input,
      chunkCount > 1 ? chunkLength : 0,
      (s, R, values, lengthsBuf, runCount) => {
        const starts = s.temp(R * 4, 'rle-starts');
        const at = s.temp(R * 4, 'rle-leb-offsets');
        const counts = s.temp(R * 4, 'rle-leb-sizes');
        const totalBuf = s.temp(16, 'rle-leb-total');
        const tableBuf = s.temp(chunkCount * 12, 'rle-chunk-table');
        const lebWorst = Math.ceil((R * lebMost) / 4) * 4;
        const leb = ctx.acquireStorage(lebWorst, 'rle-leb');
        acquired.push(leb);
        const groups = Math.ceil(R / WORKGROUP_SIZE);
        // (one chunk: it ends at the input's end at the latest)
        const cells = chunkCount > 1 ? units.cells : Math.min(n, units.cells);
        const uniform = s.uniform([R, chunk, cells, units.shortFrom, units.shortCells, chunkCount, vw, 0]);
        s.encoder.clearBuffer(totalBuf);
        s.encoder.clearBuffer(tableBuf, 0, chunkCount * 12);
        s.encoder.clearBuffer(leb, 0, lebWorst);
        encodeScan(ctx, s, lengthsBuf, starts, R, 'u32', false);
        const streams = (entryPoint: string) => pipeline(ctx, 'codec-rle-streams', rleStreamsSource, entryPoint);
        s.dispatch(
          streams('lebSizes'),
          [
            { binding: 0, resource: { buffer: uniform } },
            { binding: 1, resource: { buffer: lengthsBuf } },
            { binding: 2, resource: { buffer: counts } },
            { binding: 3, resource: { buffer: starts } },
            { binding: 7, resource: { buffer: runCount } },
          ],
          groups,
          'parle:rle-leb-sizes',
        );
        encodeScan(ctx, s, counts, at, R, 'u32', false, totalBuf);
        s.dispatch(
          streams('lebWrite'),
          [
            { binding: 0, resource: { buffer: uniform } },
            { binding: 1, resource: { buffer: lengthsBuf } },
            { binding: 3, resource: { buffer: starts } },
            { binding: 4, resource: { buffer: at } },
            { binding: 5, resource: { buffer: leb } },
            { binding: 6, resource: { buffer: tableBuf } },
            { binding: 7, resource: { buffer: runCount } },
          ],
          groups,
          'parle:rle-leb-write',
        );
        let readCodes: (() => Promise<HistogramCode[][]>) | undefined;
        if (runs !== undefined) {
          // each chunk's streams' places, then their histograms and codes
          const valueSpans = s.temp(8 * chunkCount, 'rle-value-spans');
          const lebSpans = s.temp(8 * chunkCount, 'rle-leb-spans');
          s.dispatch(
            streams('spans'),
            [
              { binding: 0, resource: { buffer: uniform } },
              { binding: 6, resource: { buffer: tableBuf } },
              { binding: 7, resource: { buffer: runCount } },
              { binding: 8, resource: { buffer: totalBuf } },
              { binding: 9, resource: { buffer: valueSpans } },
              { binding: 10, resource: { buffer: lebSpans } },
            ],
            Math.ceil(chunkCount / WORKGROUP_SIZE),
            'parle:rle-spans',
          );
          readCodes = encodeHistogramCodes(ctx, s, [
            { buffer: values, spans: valueSpans, atMost: runs.map((r) => (r ?? 0) * vw) },
            { buffer: leb, spans: lebSpans, atMost: runs.map((r) => (r ?? 0) * lebMost) },
          ]);
        }
        return { leb, readTotal: s.readAfter(totalBuf, 4), readTable: s.readAfter(tableBuf, chunkCount * 12), readCodes };
      },
      runsAtMost,
    );
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
      const none = new Uint32Array(chunkCount + 1);
      const empty = runs === undefined ? {} : { codes: { values: [], lengths: [] } };
      return { runs: 0, values, leb, firstRun: none, endRun: none.subarray(0, chunkCount), lebStart: none, release, ...empty };
    }
    const { leb, readTotal, readTable, readCodes } = encoded.then;
    const [total, table, codes] = await Promise.all([readTotal(), readTable(), readCodes?.()]);
    const lebBytes = total[0];
    const firstRun = new Uint32Array(chunkCount + 1);
    const lebStart = new Uint32Array(chunkCount + 1);
    const endRun = new Uint32Array(chunkCount);
    for (let c = 0; c < chunkCount; c++) {
      firstRun[c] = table[3 * c];
      lebStart[c] = table[3 * c + 1];
    }
    firstRun[chunkCount] = R;
    lebStart[chunkCount] = lebBytes;
    let kept = 0;
    for (let c = 0; c < chunkCount; c++) {
      // (the first dropped run + 1, or 0: none)
      endRun[c] = table[3 * c + 2] === 0 ? firstRun[c + 1] : table[3 * c + 2] - 1;
      kept += endRun[c] - firstRun[c];
      const counted = runs?.[c];
      if (counted !== undefined && endRun[c] - firstRun[c] !== counted)
        throw new ParleError(
          ErrorCodes.GPU_ERROR,
          `chunk ${c}: the GPU found ${endRun[c] - firstRun[c]} runs where ${counted} were counted`,
        );
    }
    const result: RleChunkStreams = { runs: kept, values, leb, firstRun, endRun, lebStart, release };
    if (codes !== undefined) result.codes = { values: codes[0], lengths: codes[1] };
    return result;
  } catch (e) {
    release();
    throw e;
  }
}
