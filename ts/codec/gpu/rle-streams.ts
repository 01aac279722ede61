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
 * @throws ParleError INVALID_ARGUMENT (chunk length), TOO_LARGE (beyond one storage binding),
 *   DEVICE_LOST
 */
export async function rleChunkStreams(
  ctx: GpuContext,
  input: DeviceArray,
  chunkLength: number,
  chunkCount: number,
  units: { cells: number; shortFrom: number; shortCells: number } = { cells: chunkLength, shortFrom: chunkCount, shortCells: 0 },
): Promise<RleChunkStreams> {
  // the shader's chunk: with one chunk, only run 0 starts one
  const chunk = chunkCount > 1 ? chunkLength : 0xffffffff;
  const acquired: GPUBuffer[] = [];
  // Recorded into the run-length encode's second submission (R runs known): each run's first
  // element (exclusive scan of the lengths), its LEB128 size, their exclusive scan (byte
  // offsets) and total, and the bytes, into a worst-case buffer (the LEB128 size of the longest
  // possible run, a chunk, for every run), with the table of chunk starts: one round trip for
  // all of it.
  let encoded;
  try {
    encoded = await rleEncodeThen(ctx, input, chunkCount > 1 ? chunkLength : 0, (s, R, _values, lengthsBuf) => {
      const starts = s.temp(R * 4, 'rle-starts');
      const at = s.temp(R * 4, 'rle-leb-offsets');
      const counts = s.temp(R * 4, 'rle-leb-sizes');
      const totalBuf = s.temp(16, 'rle-leb-total');
      const tableBuf = s.temp(chunkCount * 12, 'rle-chunk-table');
      // a run is at most a chunk long: (length - 1) takes ceil(bits / 7) LEB128 bytes
      const longest = Math.min(input.length, chunkCount > 1 ? chunkLength : input.length);
      const lebWorst = Math.ceil((R * Math.max(1, Math.ceil(Math.log2(longest) / 7))) / 4) * 4;
      const leb = ctx.acquireStorage(lebWorst, 'rle-leb');
      acquired.push(leb);
      const groups = Math.ceil(R / WORKGROUP_SIZE);
      // (one chunk: it ends at the input's end at the latest)
      const cells = chunkCount > 1 ? units.cells : Math.min(input.length, units.cells);
      const uniform = s.uniform([R, chunk, cells, units.shortFrom, units.shortCells, 0, 0, 0]);
      s.encoder.clearBuffer(totalBuf);
      s.encoder.clearBuffer(tableBuf, 0, chunkCount * 12);
      s.encoder.clearBuffer(leb, 0, lebWorst);
      encodeScan(ctx, s, lengthsBuf, starts, R, 'u32', false);
      s.dispatch(
        pipeline(ctx, 'codec-rle-streams', rleStreamsSource, 'lebSizes'),
        [
          { binding: 0, resource: { buffer: uniform } },
          { binding: 1, resource: { buffer: lengthsBuf } },
          { binding: 2, resource: { buffer: counts } },
          { binding: 3, resource: { buffer: starts } },
        ],
        groups,
        'parle:rle-leb-sizes',
      );
      encodeScan(ctx, s, counts, at, R, 'u32', false, totalBuf);
      s.dispatch(
        pipeline(ctx, 'codec-rle-streams', rleStreamsSource, 'lebWrite'),
        [
          { binding: 0, resource: { buffer: uniform } },
          { binding: 1, resource: { buffer: lengthsBuf } },
          { binding: 3, resource: { buffer: starts } },
          { binding: 4, resource: { buffer: at } },
          { binding: 5, resource: { buffer: leb } },
          { binding: 6, resource: { buffer: tableBuf } },
        ],
        groups,
        'parle:rle-leb-write',
      );
      return { leb, readTotal: s.readAfter(totalBuf, 4), readTable: s.readAfter(tableBuf, chunkCount * 12) };
    });
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
      return { runs: 0, values, leb, firstRun: none, endRun: none.subarray(0, chunkCount), lebStart: none, release };
    }
    const { leb, readTotal, readTable } = encoded.then;
    const [total, table] = await Promise.all([readTotal(), readTable()]);
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
    let runs = 0;
    for (let c = 0; c < chunkCount; c++) {
      // (the first dropped run + 1, or 0: none)
      endRun[c] = table[3 * c + 2] === 0 ? firstRun[c + 1] : table[3 * c + 2] - 1;
      runs += endRun[c] - firstRun[c];
    }
    return { runs, values, leb, firstRun, endRun, lebStart, release };
  } catch (e) {
    release();
    throw e;
  }
}
