/// <reference types="@webgpu/types" />
/**
 * Byte histograms of byte ranges of a GPU buffer (privatised in workgroup memory, as in
 * Podlozhnyuk, "Histogram calculation in CUDA", NVIDIA 2007), and the Huffman code lengths of
 * those histograms made on the GPU as well (two-queue Huffman, van Leeuwen 1976, the same
 * lengths as the host's `codeLengths` in ts/codec/huffman.ts), for the chooser and the Huffman
 * encode: dispatch of shaders/codec-histogram.wgsl and shaders/codec-code-lengths.wgsl. The
 * CPU's twin of the histograms is assembly/statistics.ts. Buffers and bindings follow the rules
 * of ./common.ts.
 */
import { ErrorCodes, ParleError } from '../../errors.js';
import histogramSource from '../../../shaders/codec-histogram.wgsl';
import codeLengthsSource from '../../../shaders/codec-code-lengths.wgsl';
import type { GpuContext, Submission } from '../../gpu/context.js';
import { bindWindow, checkBuffer, checkCount, checkSpan, groupBySpans, pipeline, storageWords, submitThenRead } from './common.js';
import type { ByteRange } from './hash.js';

/** Bytes of a histogram tile: one workgroup each (TILE_BYTES in codec-histogram.wgsl). */
const HISTOGRAM_TILE_BYTES = 64 << 10;

/**
 * Records byte histograms of byte ranges of `buffer` into `s`: for each range, 256 u32 counts
 * (count of byte value v at index v). Returns a function to call after the submission: it reads
 * back 1 KiB per range (nothing else) and gives range r's counts at [256 r, 256 r + 256).
 *
 * One workgroup per 64 KiB tile of a range counts into workgroup memory, then adds its counts to
 * the range's histogram with atomicAdd (shaders/codec-histogram.wgsl); one dispatch for all the
 * ranges (more only where they span more than one storage binding). Ranges may start at any
 * byte, overlap, or be empty (all-zero counts).
 * Example: bytes [7, 7, 0] -> counts[7] = 2, counts[0] = 1, the other 254 counts 0.
 * @throws ParleError INVALID_ARGUMENT (not a storage buffer, a range outside it, a length of
 *   2^32 or more), TOO_LARGE (a range beyond one storage binding)
 */
export function encodeHistograms8(
  ctx: GpuContext,
  s: Submission,
  buffer: GPUBuffer,
  ranges: readonly ByteRange[],
): () => Promise<Uint32Array> {
  const m = Array.isArray(ranges) ? ranges.length : 0;
  const hist = m === 0 ? undefined : s.temp(m * 1024, 'histograms');
  recordHistograms(ctx, s, buffer, ranges, 0, hist, 0);
  return hist === undefined ? async () => new Uint32Array(0) : s.readAfter(hist, m * 1024);
}

/**
 * encodeHistograms8's work: checks, then records the histograms into `hist` (m x 1 KiB from
 * word `at`, a multiple of 64: a storage binding's offset; cleared first), and with `runWidth`
 * each range's repeats of `runWidth`-byte elements into a temporary of m u32, returned
 * (undefined for no ranges). `hist` may be undefined only for no ranges.
 */
function recordHistograms(
  ctx: GpuContext,
  s: Submission,
  buffer: GPUBuffer,
  ranges: readonly ByteRange[],
  runWidth: 0 | 1 | 2 | 4,
  hist: GPUBuffer | undefined,
  at: number,
): GPUBuffer | undefined {
  checkBuffer(buffer, 'buffer');
  if (!Array.isArray(ranges)) throw new ParleError(ErrorCodes.INVALID_ARGUMENT, 'ranges must be an array');
  const size = buffer.size;
  ranges.forEach((r, i) => {
    checkCount(r?.byteOffset, `ranges[${i}].byteOffset`);
    checkCount(r?.byteLength, `ranges[${i}].byteLength`);
    checkSpan(size, r.byteOffset, r.byteLength, `ranges[${i}]`);
    // counts are u32
    if (r.byteLength >= 2 ** 32) throw new ParleError(ErrorCodes.INVALID_ARGUMENT, `ranges[${i}].byteLength must be below 2^32`);
    if (runWidth > 1 && (r.byteOffset % runWidth !== 0 || r.byteLength % runWidth !== 0))
      throw new ParleError(
        ErrorCodes.INVALID_ARGUMENT,
        `ranges[${i}] must start and end on whole elements of ${runWidth} bytes for its runs`,
      );
  });
  const m = ranges.length;
  if (m === 0 || hist === undefined) return undefined;
  s.encoder.clearBuffer(hist, 4 * at, m * 1024);
  const repeats = s.temp(4 * m, 'histogram repeats');
  s.encoder.clearBuffer(repeats);
  const live = ranges.map((_, i) => i).filter((i) => ranges[i].byteLength > 0);
  const groups = groupBySpans(
    ctx,
    live.length,
    (k) => {
      const r = ranges[live[k]];
      return [[r.byteOffset, r.byteOffset + r.byteLength]];
    },
    'histogram',
  );
  for (const group of groups) {
    const w = group.windows[0]!;
    const table = new Uint32Array(group.items.length * 2);
    const spans = new Uint32Array(group.items.length * 2);
    let tiles = 0;
    group.items.forEach((k, e) => {
      const i = live[k];
      const r = ranges[i];
      table.set([tiles, i * 256], e * 2);
      spans.set([r.byteOffset - w.base, r.byteLength], e * 2);
      tiles += Math.ceil(r.byteLength / HISTOGRAM_TILE_BYTES);
    });
    dispatchHistograms(
      ctx,
      s,
      tiles,
      table,
      runWidth,
      storageWords(ctx, s, spans, 'histogram-spans'),
      bindWindow(ctx, buffer, w, 'histogram source'),
      {
        hist,
        at,
        m,
        repeats,
      },
    );
  }
  return repeats;
}

/** One dispatch of codec-histogram.wgsl: `tiles` workgroups over the ranges of `table` (first tile, histogram word a range) and their spans. */
function dispatchHistograms(
  ctx: GpuContext,
  s: Submission,
  tiles: number,
  table: Uint32Array,
  runWidth: number,
  spans: GPUBuffer,
  source: GPUBufferBinding,
  out: { hist: GPUBuffer; at: number; m: number; repeats: GPUBuffer },
): void {
  const pipe = pipeline(ctx, 'codec-histogram', histogramSource, 'histogram', { 'TILE_BYTES: u32': `${HISTOGRAM_TILE_BYTES}u` });
  s.dispatch(
    pipe,
    [
      { binding: 0, resource: { buffer: s.uniform([tiles, table.length / 2, runWidth, 0]) } },
      { binding: 1, resource: { buffer: storageWords(ctx, s, table, 'histogram-ranges') } },
      { binding: 2, resource: source },
      { binding: 3, resource: { buffer: out.hist, offset: 4 * out.at, size: out.m * 1024 } },
      { binding: 4, resource: { buffer: out.repeats } },
      { binding: 5, resource: { buffer: spans } },
    ],
    tiles,
    'parle:histogram',
  );
}

/**
 * recordHistograms of ranges whose places a kernel of this submission writes: range r's byte
 * offset and length in words 2r, 2r + 1 of `spans` (written before this dispatch runs), at most
 * atMost[r] bytes; `buffer` bound whole (it must fit one storage binding).
 */
function recordDeviceHistograms(
  ctx: GpuContext,
  s: Submission,
  source: DeviceHistogramSource,
  hist: GPUBuffer | undefined,
  at: number,
): void {
  const { buffer, spans, atMost } = source;
  checkBuffer(buffer, 'buffer');
  checkBuffer(spans, 'spans');
  const m = atMost.length;
  if (spans.size < 8 * m) throw new ParleError(ErrorCodes.INVALID_ARGUMENT, `spans must hold ${m} byte ranges`);
  atMost.forEach((x, i) => checkCount(x, `atMost[${i}]`));
  if (m === 0 || hist === undefined) return;
  s.encoder.clearBuffer(hist, 4 * at, m * 1024);
  const table = new Uint32Array(2 * m);
  let tiles = 0;
  atMost.forEach((bytes, r) => {
    table.set([tiles, r * 256], 2 * r);
    tiles += Math.ceil(bytes / HISTOGRAM_TILE_BYTES);
  });
  if (tiles === 0) return;
  const whole = bindWindow(ctx, buffer, { base: 0, end: buffer.size }, 'histogram source');
  dispatchHistograms(ctx, s, tiles, table, 0, spans, whole, { hist, at, m, repeats: s.temp(4 * m, 'histogram repeats') });
}

/** A byte histogram with its Huffman code, as {@link encodeHistogramCodes} reads them back. */
export interface HistogramCode {
  /** 256 counts: count of byte value v at index v. */
  counts: Uint32Array;
  /** 256 code lengths in bits (0: absent symbol), the host's `codeLengths(counts)`; all 0 with fewer than two present symbols. */
  lengths: Uint8Array;
  /** Bits the counted bytes take in that code: the sum of counts[v] x lengths[v]. */
  codedBits: number;
  /** With a run width: the range's maximal runs of equal elements of that many bytes (0 for an empty range). */
  runs?: number;
}

/** Byte ranges of a buffer whose histograms and codes {@link encodeHistogramCodes} records, with a run width (0: no runs counted). */
export interface HistogramSource {
  buffer: GPUBuffer;
  ranges: readonly ByteRange[];
  runWidth?: 0 | 1 | 2 | 4;
}

/**
 * Byte ranges of a buffer whose places only the GPU knows, for {@link encodeHistogramCodes}: a
 * kernel earlier in the same submission writes range r's byte offset and byte length into words
 * 2r and 2r + 1 of `spans`; range r holds at most atMost[r] bytes (the tiles counted: a loose bound
 * costs workgroups that find nothing). `buffer` must fit one storage binding (bound whole).
 */
export interface DeviceHistogramSource {
  buffer: GPUBuffer;
  spans: GPUBuffer;
  atMost: readonly number[];
}

/**
 * {@link encodeHistograms8} of each source with each range's Huffman code made on the GPU as
 * well (shaders/codec-code-lengths.wgsl: the same lengths as the host's `codeLengths`, one
 * workgroup per histogram), so that a chooser sizes its candidate streams without building their
 * codes on the host. The histograms of all sources go into one buffer and their codes are made
 * in one dispatch (its time is the serial tree build of one workgroup: a dispatch a source had
 * been a chain of those), read back at once: 1 KiB of counts, 256 bytes of lengths and a word of
 * bits per range. With a `runWidth` (1, 2 or 4 bytes) the same pass counts each range's runs of
 * equal elements of that width as well (the rle stage's runs: `runs`; one more word per range
 * read back).
 * @returns a function to call after the submission: for each source, one HistogramCode per
 *   range, in order (views into one array).
 * @throws as encodeHistograms8, and INVALID_ARGUMENT for a range of 2^28 bytes or more (its
 *   coded bits could pass a u32) or, with a run width, one that does not start and end on whole
 *   elements of it
 */
export function encodeHistogramCodes(
  ctx: GpuContext,
  s: Submission,
  sources: readonly (HistogramSource | DeviceHistogramSource)[],
): () => Promise<HistogramCode[][]> {
  const lengthsOf = (x: HistogramSource | DeviceHistogramSource) =>
    'atMost' in x ? (Array.isArray(x.atMost) ? x.atMost : []) : Array.isArray(x.ranges) ? x.ranges.map((r) => r?.byteLength) : [];
  sources.forEach((x) => {
    lengthsOf(x).forEach((bytes, i) => {
      if (typeof bytes === 'number' && bytes >= 2 ** 28)
        throw new ParleError(ErrorCodes.INVALID_ARGUMENT, `ranges[${i}] must be below 2^28 bytes for code lengths`);
    });
  });
  const counts = sources.map((x) => lengthsOf(x).length);
  const m = counts.reduce((a, c) => a + c, 0);
  const lengthsAt = 256 * m;
  const bitsAt = lengthsAt + 64 * m;
  const words = 256 * m + 65 * m;
  const hist = m === 0 ? undefined : s.temp(4 * words, 'histograms');
  let first = 0;
  const recorded = sources.map((x, k) => {
    const at = first;
    first += counts[k];
    if ('atMost' in x) {
      recordDeviceHistograms(ctx, s, x, hist, 256 * at);
      return { at, repeats: undefined };
    }
    return { at, repeats: recordHistograms(ctx, s, x.buffer, x.ranges, x.runWidth ?? 0, hist, 256 * at) };
  });
  if (hist === undefined) return async () => sources.map(() => []);
  s.dispatch(
    pipeline(ctx, 'codec-code-lengths', codeLengthsSource, 'codeLengths'),
    [
      { binding: 0, resource: { buffer: s.uniform([m, lengthsAt, bitsAt, 0]) } },
      { binding: 1, resource: { buffer: hist, offset: 0, size: 4 * words } },
    ],
    m,
    'parle:code-lengths',
  );
  const read = s.readAfter(hist, 4 * words);
  const readRepeats = recorded.map(({ repeats }, k) => {
    const x = sources[k];
    return repeats === undefined || 'atMost' in x || !x.runWidth ? async () => undefined : s.readAfter(repeats, 4 * counts[k]);
  });
  return async () => {
    const [all, ...repeats] = await Promise.all([read(), ...readRepeats.map((r) => r())]);
    const lengths = new Uint8Array(all.buffer, all.byteOffset + 4 * lengthsAt, 256 * m);
    return sources.map((x, k) =>
      Array.from({ length: counts[k] }, (_, i) => {
        const r = recorded[k].at + i;
        const rep = repeats[k];
        return {
          counts: all.subarray(256 * r, 256 * r + 256),
          lengths: lengths.subarray(256 * r, 256 * r + 256),
          codedBits: all[bitsAt + r],
          ...(rep === undefined || 'atMost' in x ? {} : { runs: x.ranges[i].byteLength / x.runWidth! - rep[i] }),
        };
      }),
    );
  };
}

/**
 * Byte histograms of byte ranges of `buffer` (any alignment), on the GPU in one submission; only
 * the counts are read back (1 KiB per range). See {@link encodeHistograms8}.
 * Example: one range over bytes [1, 1, 2] -> a Uint32Array(256) with [1] = 2, [2] = 1.
 * @returns 256 u32 counts per range, range after range (range r at 256 r).
 * @throws ParleError INVALID_ARGUMENT, TOO_LARGE, DEVICE_LOST
 */
export async function histograms8(ctx: GpuContext, buffer: GPUBuffer, ranges: readonly ByteRange[]): Promise<Uint32Array> {
  if (Array.isArray(ranges) && ranges.length === 0) return new Uint32Array(0);
  return submitThenRead(ctx, 'histograms', (s) => encodeHistograms8(ctx, s, buffer, ranges));
}

/**
 * Byte histograms of byte ranges of `buffer` with their Huffman codes (and with `runWidth`, the
 * ranges' runs of elements of that many bytes), on the GPU in one submission (see
 * {@link encodeHistogramCodes}).
 * Example: one range over bytes [1, 1, 2] -> counts [1] = 2, [2] = 1; lengths [1] = 1, [2] = 1;
 * codedBits 3.
 * @throws ParleError INVALID_ARGUMENT, TOO_LARGE, DEVICE_LOST
 */
export async function histogramCodes8(
  ctx: GpuContext,
  buffer: GPUBuffer,
  ranges: readonly ByteRange[],
  runWidth: 0 | 1 | 2 | 4 = 0,
): Promise<HistogramCode[]> {
  if (Array.isArray(ranges) && ranges.length === 0) return [];
  const [codes] = await submitThenRead(ctx, 'histogram codes', (s) => encodeHistogramCodes(ctx, s, [{ buffer, ranges, runWidth }]));
  return codes;
}
