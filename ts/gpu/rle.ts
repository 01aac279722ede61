/// <reference types="@webgpu/types" />
/**
 * Run-length encode and decode on the GPU: dispatch of shaders/rle-encode.wgsl and
 * shaders/rle-decode.wgsl (see rleEncode / rleDecode below for the contracts).
 */
import { ErrorCodes, ParleError } from '../errors.js';
import { GPU_CODEC_TYPES, elementSize, type ElementType } from '../types.js';
import encodeSource from '../../shaders/rle-encode.wgsl';
import decodeSource from '../../shaders/rle-decode.wgsl';
import { composeKernel, WORKGROUP_SIZE } from './compose.js';
import type { GpuContext, Submission } from './context.js';
import { DeviceArray, paddedSize } from './device-array.js';
import { getPipeline } from './pipelines.js';
import { encodeScan, spineBytes } from './scan.js';

/** The element types the run kernels take: every type of 1, 2 or 4 bytes (they compare bits). */
const ALL_TYPES: readonly ElementType[] = GPU_CODEC_TYPES;
/** u32 words per invocation of the encode kernel (WPT in rle-encode.wgsl). */
const WORDS_PER_INVOCATION = 16;

/** Elements per u32 word of `type`: 4, 2 or 1. */
function perWord(type: ElementType): number {
  return 4 / elementSize(type);
}

function packingConsts(type: ElementType): Record<string, string> {
  const epw = perWord(type);
  const bits = 32 / epw;
  return {
    'EPW: u32': `${epw}u`,
    'BITS: u32': `${bits}u`,
    'EMASK: u32': bits === 32 ? '0xFFFFFFFFu' : `${(2 ** bits - 1).toString()}u`,
    'LOW: u32': { 8: '0x7F7F7F7Fu', 16: '0x7FFF7FFFu', 32: '0x7FFFFFFFu' }[bits]!,
  };
}

function encodePipelines(ctx: GpuContext, type: ElementType): { main: GPUComputePipeline; runs: GPUComputePipeline } {
  const epw = perWord(type);
  const variant = `${epw}:${ctx.hasSubgroups ? 'sg' : 'shared'}:${ctx.lookbackSpin}`;
  const build = (entryPoint: string) => () => ({
    code: composeKernel(encodeSource, { subgroups: ctx.hasSubgroups, scalar: 'u32', lookback: true, consts: packingConsts(type) }),
    entryPoint,
    constants: entryPoint === 'main' ? { LB_MAX_SPIN: ctx.lookbackSpin } : undefined,
  });
  return {
    main: getPipeline(ctx.device, `rle-encode:${variant}`, build('main')),
    runs: getPipeline(ctx.device, `rle-runs:${variant}`, build('runsOut')),
  };
}

function decodePipeline(ctx: GpuContext, type: ElementType, entryPoint: 'expand' | 'checkOffsets'): GPUComputePipeline {
  const wpt = ctx.tuning.decodeWordsPerInvocation;
  const key = `rle-decode:${entryPoint}:${perWord(type)}:${wpt}`;
  return getPipeline(ctx.device, key, () => ({
    code: composeKernel(decodeSource, {
      subgroups: false,
      scalar: 'u32',
      consts: { ...packingConsts(type), 'WPT: u32': `${wpt}u` },
    }),
    entryPoint,
  }));
}

function emptyArray(ctx: GpuContext, type: ElementType): DeviceArray {
  return ctx.owned(ctx.acquireStorage(0, `empty-${type}`), type, 0);
}

/**
 * Run-length encode (PARLE, Balevic 2009) of any element type: `values` (same type) and
 * `lengths` (u32), one entry per maximal run of equal elements. f32 compares bit patterns (NaN
 * payloads and -0 are runs of their own). Example: [0,2,2,9,5,5,5,8] -> values [0,2,9,5,8],
 * lengths [1,2,1,3,1]; [] -> [], [].
 * Two submissions: (1) one chained pass flags run starts, counts them per tile, looks back
 * for the tile's first run index and scatters the end of the run before each start into a
 * pooled worst-case buffer (4 bytes an element); the last tile writes the run count, which is
 * read back (4 bytes: the DeviceArrays know their length); (2) one pass gathers each run's
 * value from the input and its length from neighbouring run ends straight into buffers of the
 * run count's size (no slack held by the application, nothing copied).
 * With `chunkLength` (elements, a multiple of the elements per u32 word: 4 for u8, 2 for u16, 1
 * otherwise; 0 for none), a run also starts at every multiple of it: the runs of each of the
 * container's chunks on their own.
 * @throws ParleError INVALID_ARGUMENT, TOO_LARGE, DEVICE_LOST
 */
export async function rleEncode(
  ctx: GpuContext,
  input: DeviceArray,
  chunkLength = 0,
): Promise<{ values: DeviceArray; lengths: DeviceArray }> {
  const { values, lengths } = await rleEncodeThen(ctx, input, chunkLength, () => undefined);
  return { values, lengths };
}

/**
 * @internal {@link rleEncode}, with `then` recorded into its second submission after the
 * runs are written (`runs` >= 1 of them: values of the input's type and u32 lengths, in the
 * given buffers; `count` holds the run count in its word 0), so that work on the runs whose sizes
 * follow from their count costs no round trip of its own; its result is returned as `then`
 * (undefined for an empty input, where it is not called).
 * With `runsAtMost` (a bound the caller knows, >= 1: the runs its statistics counted, say) there
 * is one submission: the runs are written into buffers of that many entries and `then` gets
 * `runs` = runsAtMost (its kernels read the true count from `count`, which is read back with it);
 * the arrays returned hold the true count. A count above the bound is a GPU_ERROR.
 */
export async function rleEncodeThen<T>(
  ctx: GpuContext,
  input: DeviceArray,
  chunkLength: number,
  then: (s: Submission, runs: number, values: GPUBuffer, lengths: GPUBuffer, count: GPUBuffer) => T,
  runsAtMost?: number,
): Promise<{ values: DeviceArray; lengths: DeviceArray; then?: T }> {
  const d = ctx.checkInput(input, 'input', ALL_TYPES);
  if (!Number.isInteger(chunkLength) || chunkLength < 0 || chunkLength >= 2 ** 32 || chunkLength % perWord(d.type) !== 0) {
    throw new ParleError(ErrorCodes.INVALID_ARGUMENT, `chunkLength must be 0 or a multiple of ${perWord(d.type)} below 2^32`);
  }
  ctx.checkUsable();
  const n = d.length;
  if (n === 0) return { values: emptyArray(ctx, d.type), lengths: emptyArray(ctx, 'u32') };
  ctx.checkBindable(n * 4, 'rleEncode run lengths (worst case: one run per element)');
  const epw = perWord(d.type);
  const tile = WORKGROUP_SIZE * WORDS_PER_INVOCATION * epw;
  const tiles = Math.ceil(n / tile);
  const pipes = encodePipelines(ctx, d.type);
  if (runsAtMost !== undefined && (!Number.isInteger(runsAtMost) || runsAtMost < 1 || runsAtMost > n)) {
    throw new ParleError(ErrorCodes.INVALID_ARGUMENT, `runsAtMost must be an integer in [1, ${n}]`);
  }
  // Two submissions: the first finds the runs (each run's end index) and reads back their count;
  // the second gathers values and lengths straight into buffers of the run count's size, so an
  // application holding them holds no slack and nothing is copied. `ends` (worst case one run
  // per element) and the count live between the two in pooled buffers. With a bound on the
  // count, both in one submission.
  const ends = ctx.acquireStorage(n * 4, 'rle-ends');
  const count = ctx.acquireStorage(16, 'rle-count');
  // `src`: the input padded (ctx.paddedBuffer), once a submission
  const recordRuns = (s: Submission, src: GPUBuffer) => {
    const spine = s.temp(spineBytes(tiles), 'rle-spine');
    s.encoder.clearBuffer(spine);
    s.dispatch(
      pipes.main,
      [
        { binding: 0, resource: { buffer: s.uniform([n, tiles, 0, chunkLength]) } },
        { binding: 1, resource: { buffer: src } },
        { binding: 3, resource: { buffer: ends } },
        { binding: 4, resource: { buffer: spine } },
        { binding: 5, resource: { buffer: count } },
      ],
      tiles,
      'parle:rle-encode',
    );
    return s.readAfter(count, 4);
  };
  /** The runs' values and lengths into buffers of `runs` entries (the kernel reads the count itself), then `then`. */
  const recordGather = (s: Submission, runs: number, src: GPUBuffer) => {
    const values = s.output(runs * elementSize(d.type), `rle-values-${d.type}`);
    const lengths = s.output(runs * 4, 'rle-lengths');
    s.dispatch(
      pipes.runs,
      [
        { binding: 6, resource: { buffer: ends } },
        { binding: 7, resource: { buffer: count } },
        { binding: 8, resource: { buffer: lengths } },
        { binding: 9, resource: { buffer: src } },
        { binding: 10, resource: { buffer: values } },
      ],
      Math.ceil(Math.ceil(runs / epw) / WORKGROUP_SIZE),
      'parle:rle-runs',
    );
    return { values, lengths, then: then(s, runs, values, lengths, count) };
  };
  try {
    let runs: number;
    let out: { values: GPUBuffer; lengths: GPUBuffer; then: T };
    if (runsAtMost === undefined) {
      const readCount = await ctx.submit('rle-encode', (s) => recordRuns(s, ctx.paddedBuffer(s, d)));
      runs = (await readCount())[0];
      out = await ctx.submit('rle-encode-runs', (s) => recordGather(s, runs, ctx.paddedBuffer(s, d)));
    } else {
      let readCount: () => Promise<Uint32Array> = async () => new Uint32Array(1);
      out = await ctx.submit('rle-encode', (s) => {
        const src = ctx.paddedBuffer(s, d);
        readCount = recordRuns(s, src);
        return recordGather(s, runsAtMost, src);
      });
      runs = (await readCount())[0];
      if (runs > runsAtMost) {
        for (const b of [out.values, out.lengths]) ctx.releaseStorage(b);
        throw new ParleError(ErrorCodes.GPU_ERROR, `the GPU found ${runs} runs where at most ${runsAtMost} were counted`);
      }
    }
    const lengths = ctx.owned(out.lengths, 'u32', runs);
    ctx.noteLengthSum(lengths, n);
    return { values: ctx.owned(out.values, d.type, runs), lengths, then: out.then };
  } finally {
    ctx.releaseStorage(ends);
    ctx.releaseStorage(count);
  }
}

/**
 * Records the exclusive scan of `runs` run lengths into `offsets` (their sum into `status`
 * word 0) and the check that flags a sum that wraps past 2^32 (status word 1); `status` is
 * cleared first.
 */
function encodeOffsets(
  ctx: GpuContext,
  s: Submission,
  type: ElementType,
  lengths: DeviceArray,
  runs: number,
  offsets: GPUBuffer,
  status: GPUBuffer,
): void {
  const lengthsBuf = ctx.paddedBuffer(s, lengths);
  s.encoder.clearBuffer(status);
  encodeScan(ctx, s, lengthsBuf, offsets, runs, 'u32', false, status);
  s.dispatch(
    decodePipeline(ctx, type, 'checkOffsets'),
    [
      { binding: 4, resource: { buffer: s.uniform([0, runs, 0, 0]) } },
      { binding: 5, resource: { buffer: offsets } },
      { binding: 6, resource: { buffer: lengthsBuf } },
      { binding: 7, resource: { buffer: status } },
    ],
    Math.ceil(runs / WORKGROUP_SIZE),
    'parle:rle-check',
  );
}

/**
 * Run-length decode: `values[r]` repeated `lengths[r]` times, in order, into a new DeviceArray
 * of values' type. Example: values [0,2,9], lengths [1,2,0] -> [0,2,2]. Zero lengths are allowed.
 * Passes: an exclusive scan of the lengths (chained, as {@link scan}) that also writes the
 * total; then an expand in which every invocation writes 16 words of output (16 to 64
 * elements) and finds its first run by binary search in the run offsets, so a long run is
 * spread over many invocations. The 4-byte total is read back: for lengths that {@link
 * rleEncode} returned (whose sum it knows) after one submission of all passes, which confirms
 * it; for other lengths between the scan and the expand, to size the output (a second
 * submission, one more round trip).
 * The sum of lengths must stay below 2^32; the runs must fit one storage binding (the output
 * may exceed one: it is expanded in windows).
 *
 * One submission when the decoded length is known beforehand (`expectTotal`, or the sum parle
 * noted for `lengths`, rleEncode's: {@link GpuContext.noteLengthSum}): the lengths' scan, the
 * wrap check and the expand into an output of that length are recorded together, and the
 * status read back after them confirms the guess (a wrong guess only cost an expand, whose
 * writes stay inside its output, and whose run search stays inside the runs). Otherwise two: the
 * scan and check, whose total is read back to size the output, then the expand. On the H200 a
 * 2^28 u8 decode of rleEncode's runs took 0.80-0.88 ms of wall clock in one submission, 1.19 in
 * two (measured by wall-2-28.mjs, in git history).
 *
 * With `expectTotal` (elements), runs whose lengths do not sum to it (or wrap past 2^32) fail
 * with CORRUPT, after an output of `expectTotal` elements (the caller's own figure) was
 * allocated and given back: a decoder of untrusted runs never allocates what the runs claim.
 * @throws ParleError LENGTH_MISMATCH, UNSUPPORTED_TYPE (lengths not u32), INVALID_ARGUMENT,
 *   TOO_LARGE, DEVICE_LOST
 */
export async function rleDecode(ctx: GpuContext, values: DeviceArray, lengths: DeviceArray, expectTotal?: number): Promise<DeviceArray> {
  const v = ctx.checkInput(values, 'values', ALL_TYPES);
  const l = ctx.checkInput(lengths, 'lengths', ['u32']);
  if (v.length !== l.length) {
    throw new ParleError(ErrorCodes.LENGTH_MISMATCH, `values has ${v.length} runs, lengths ${l.length}`);
  }
  ctx.checkUsable();
  const runs = l.length;
  if (runs === 0) {
    if (expectTotal !== undefined && expectTotal !== 0)
      throw new ParleError(ErrorCodes.CORRUPT, `no runs, expected ${expectTotal} elements`);
    return emptyArray(ctx, v.type);
  }
  const size = elementSize(v.type);
  const guess = expectTotal ?? ctx.lengthSumOf(lengths);
  // a guess the output could not take is left to the two-submission path, which reports it
  const fused = guess !== undefined && guess > 0 && guess < 2 ** 32 && paddedSize(guess * size) <= ctx.limits.maxBufferSize;
  const offsets = ctx.acquireStorage(runs * 4, 'rle-offsets');
  const status = ctx.acquireStorage(8, 'rle-total');
  let dst: GPUBuffer | undefined;
  try {
    let readStatus: () => Promise<Uint32Array> = async () => new Uint32Array(2);
    await ctx.submit(fused ? 'rle-decode' : 'rle-decode-scan', (s) => {
      encodeOffsets(ctx, s, v.type, l, runs, offsets, status);
      // not s.output: kept past a submit that succeeded only when the guess was right
      if (fused) dst = expand(ctx, s, v, runs, offsets, guess, ctx.acquireStorage(guess * size, `rle-decoded-${v.type}`, 0, true));
      readStatus = s.readAfter(status, 8);
    });
    const [total, wrapped] = await readStatus();
    if (dst !== undefined && wrapped === 0 && total === guess) {
      const out = ctx.owned(dst, v.type, total);
      dst = undefined;
      return out;
    }
    if (expectTotal !== undefined && (wrapped !== 0 || total !== expectTotal)) {
      throw new ParleError(
        ErrorCodes.CORRUPT,
        `the run lengths sum to ${wrapped !== 0 ? '2^32 or more' : total} elements, expected ${expectTotal}`,
      );
    }
    if (wrapped !== 0) {
      throw new ParleError(ErrorCodes.TOO_LARGE, 'rleDecode: the run lengths sum to 2^32 elements or more');
    }
    if (total === 0) return emptyArray(ctx, v.type);
    ctx.checkBindable(total * size, 'rleDecode output', true);
    const out = await ctx.submit('rle-decode-expand', (s) =>
      expand(ctx, s, v, runs, offsets, total, s.output(total * size, `rle-decoded-${v.type}`, 0, true)),
    );
    return ctx.owned(out, v.type, total);
  } finally {
    if (dst !== undefined) ctx.releaseStorage(dst);
    ctx.releaseStorage(offsets);
    ctx.releaseStorage(status);
  }
}

/**
 * @internal Records the decode of runs whose lengths must sum to `total` elements (the caller's
 * own figure, at least 1 and below 2^32) into `s`: the lengths' scan, the wrap check and the
 * expand into `dst` (at least `total` elements, bound in windows where larger than one binding),
 * as the one-submission path of {@link rleDecode}. Nothing is read back until the returned
 * `check` runs after the submission: it throws CORRUPT when the lengths wrap past 2^32 or do not
 * sum to `total` (the expand's writes stayed inside `dst`, its run search inside the runs).
 * `values` and `lengths` have one entry per run (at least one). For a caller that records more
 * after the decode in the same submission (the GPU codec's one-submission decode).
 * @throws ParleError LENGTH_MISMATCH (runs), TOO_LARGE (the runs beyond one binding)
 */
export function encodeRleDecodeExpected(
  ctx: GpuContext,
  s: Submission,
  values: DeviceArray,
  lengths: DeviceArray,
  total: number,
  dst: GPUBuffer,
): () => Promise<void> {
  const v = ctx.checkInput(values, 'values', ALL_TYPES);
  const l = ctx.checkInput(lengths, 'lengths', ['u32']);
  const runs = l.length;
  if (v.length !== runs || runs === 0) throw new ParleError(ErrorCodes.LENGTH_MISMATCH, `values has ${v.length} runs, lengths ${runs}`);
  if (!(total >= 1 && total < 2 ** 32)) throw new ParleError(ErrorCodes.INVALID_ARGUMENT, `total ${total} out of range`);
  const offsets = s.temp(runs * 4, 'rle-offsets');
  const status = s.temp(16, 'rle-total');
  encodeOffsets(ctx, s, v.type, l, runs, offsets, status);
  expand(ctx, s, v, runs, offsets, total, dst);
  const read = s.readAfter(status, 8);
  return async () => {
    const [sum, wrapped] = await read();
    if (wrapped !== 0 || sum !== total) {
      throw new ParleError(
        ErrorCodes.CORRUPT,
        `the run lengths sum to ${wrapped !== 0 ? '2^32 or more' : sum} elements, expected ${total}`,
      );
    }
  };
}

/**
 * Records the expand of `runs` runs (values `v`, exclusive-scanned lengths `offsets`) into the
 * first `total` elements of `dst`, in windows of whole 16 KiB blocks within one storage binding
 * (the output may exceed one). Returns `dst`.
 */
function expand(
  ctx: GpuContext,
  s: Submission,
  v: DeviceArray,
  runs: number,
  offsets: GPUBuffer,
  total: number,
  dst: GPUBuffer,
): GPUBuffer {
  const size = elementSize(v.type);
  const byteLength = total * size;
  const windowBytes = Math.floor(ctx.limits.maxStorageBufferBindingSize / (1 << 14)) * (1 << 14);
  const window = paddedSize(byteLength) <= ctx.limits.maxStorageBufferBindingSize ? total : windowBytes / size;
  const perInvocation = ctx.tuning.decodeWordsPerInvocation * perWord(v.type);
  const pipeline = decodePipeline(ctx, v.type, 'expand');
  const valuesBuf = ctx.paddedBuffer(s, v);
  for (let base = 0; base < total; base += window) {
    const end = Math.min(total, base + window);
    // bound with an explicit size: a pooled buffer may be larger than one binding
    const binding: GPUBufferBinding = { buffer: dst, offset: base * size, size: paddedSize((end - base) * size) };
    s.dispatch(
      pipeline,
      [
        { binding: 0, resource: { buffer: s.uniform([end, runs, base, 0]) } },
        { binding: 1, resource: { buffer: offsets } },
        { binding: 2, resource: { buffer: valuesBuf } },
        { binding: 3, resource: binding },
      ],
      Math.ceil(Math.ceil((end - base) / perInvocation) / WORKGROUP_SIZE),
      'parle:rle-expand',
    );
  }
  return dst;
}
