/// <reference types="@webgpu/types" />
/**
 * Prefix scan on the GPU: dispatch of shaders/scan.wgsl (single-pass chained scan with decoupled
 * look-back and decoupled fallback).
 */
import { ErrorCodes, ParleError } from '../errors.js';
import scanSource from '../../shaders/scan.wgsl';
import { composeKernel } from './compose.js';
import type { GpuContext, Submission } from './context.js';
import { DeviceArray } from './device-array.js';
import { getPipeline } from './pipelines.js';

/** Elements per workgroup tile of the scan kernel (256 invocations x 16). */
export const SCAN_TILE = 4096;
/** u32 words before the tile status words in a look-back spine buffer (LB_BASE in lookback.wgsl). */
export const LOOKBACK_BASE = 4;

/** Bytes of the look-back spine buffer for `tiles` tiles (a counter, then two words per tile). */
export function spineBytes(tiles: number): number {
  return (LOOKBACK_BASE + 2 * tiles) * 4;
}

function scanPipeline(ctx: GpuContext, scalar: 'u32' | 'f32'): GPUComputePipeline {
  const key = `scan:${scalar}:${ctx.hasSubgroups ? 'sg' : 'shared'}:${ctx.lookbackSpin}`;
  return getPipeline(ctx.device, key, () => ({
    code: composeKernel(scanSource, { subgroups: ctx.hasSubgroups, scalar, lookback: true }),
    entryPoint: 'main',
    constants: { LB_MAX_SPIN: ctx.lookbackSpin },
  }));
}

/**
 * Records a scan of `n` elements of `srcBuf` into `dstBuf` (both padded to 16 bytes, distinct)
 * in `s`. `scalar` 'u32' serves u32 and i32. When `totalBuf` is given, its first word receives
 * the sum of all elements (u32 wrapping, or f32 bits). Nothing is recorded for n = 0.
 */
export function encodeScan(
  ctx: GpuContext,
  s: Submission,
  srcBuf: GPUBuffer,
  dstBuf: GPUBuffer,
  n: number,
  scalar: 'u32' | 'f32',
  inclusive: boolean,
  totalBuf?: GPUBuffer,
): void {
  if (n === 0) return;
  const tiles = Math.ceil(n / SCAN_TILE);
  const spine = s.temp(spineBytes(tiles), 'scan-spine');
  s.encoder.clearBuffer(spine);
  const total = totalBuf ?? s.temp(4, 'scan-total');
  const pipeline = scanPipeline(ctx, scalar);
  s.dispatch(
    pipeline,
    [
      { binding: 0, resource: { buffer: s.uniform([n, tiles, inclusive ? 1 : 0, 0]) } },
      { binding: 1, resource: { buffer: srcBuf } },
      { binding: 2, resource: { buffer: dstBuf } },
      { binding: 3, resource: { buffer: spine } },
      { binding: 4, resource: { buffer: total } },
    ],
    tiles,
    'parle:scan',
  );
}

/** GpuContext.scan: see its documentation. */
export async function scanOp(ctx: GpuContext, input: DeviceArray, opts: { inclusive: boolean }): Promise<DeviceArray> {
  const d = ctx.checkInput(input, 'input', ['u32', 'i32', 'f32']);
  if (typeof opts !== 'object' || opts === null || typeof opts.inclusive !== 'boolean') {
    throw new ParleError(ErrorCodes.INVALID_OPTION, 'options.inclusive must be a boolean');
  }
  const scalar = d.type === 'f32' ? 'f32' : 'u32';
  const out = await ctx.submit('scan', (s) => {
    const dst = s.output(d.byteLength, `scan-${d.type}`);
    encodeScan(ctx, s, ctx.paddedBuffer(s, d), dst, d.length, scalar, opts.inclusive);
    return dst;
  });
  return ctx.owned(out, d.type, d.length);
}
