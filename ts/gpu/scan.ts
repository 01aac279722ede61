/// <reference types="@webgpu/types" />
/**
 * Prefix scan on the GPU: dispatch of shaders/scan.wgsl (single-pass chained scan with decoupled
 * look-back and decoupled fallback).
 */
import { ErrorCodes, ParleError } from '../errors.js';
import scanSource from '../../shaders/scan.wgsl';
import { composeKernel } from './compose.js';
import type { GpuContext, Submission } from './context.js';
import { DeviceArray, paddedSize } from './device-array.js';
import { getPipeline } from './pipelines.js';

/**
 * Invocations per scan workgroup: `tuning.scanWorkgroupSize` where the adapter has subgroups (the
 * workgroup scan of wg-scan-subgroup.wgsl serves any size) and its limits allow it, else 256.
 */
export function scanWorkgroupSize(ctx: GpuContext): number {
  const l = ctx.limits;
  const wg = ctx.tuning.scanWorkgroupSize;
  return ctx.hasSubgroups && wg <= l.maxComputeInvocationsPerWorkgroup && wg <= l.maxComputeWorkgroupSizeX ? wg : 256;
}

/** Elements per workgroup tile of the scan kernel: scanWorkgroupSize invocations x `tuning.scanVecsPerInvocation` vec4. */
export function scanTile(ctx: GpuContext): number {
  return scanWorkgroupSize(ctx) * 4 * ctx.tuning.scanVecsPerInvocation;
}
/** u32 words before the tile status words in a look-back spine buffer (LB_BASE in lookback.wgsl). */
export const LOOKBACK_BASE = 4;

/** Bytes of the look-back spine buffer for `tiles` tiles (a counter, then two words per tile). */
export function spineBytes(tiles: number): number {
  return (LOOKBACK_BASE + 2 * tiles) * 4;
}

function scanPipeline(ctx: GpuContext, scalar: 'u32' | 'f32'): GPUComputePipeline {
  const vpt = ctx.tuning.scanVecsPerInvocation;
  const wg = scanWorkgroupSize(ctx);
  const key = `scan:${scalar}:${ctx.hasSubgroups ? 'sg' : 'shared'}:${vpt}:${wg}:${ctx.lookbackSpin}`;
  return getPipeline(ctx.device, key, () => ({
    code: composeKernel(scanSource, {
      subgroups: ctx.hasSubgroups,
      scalar,
      lookback: true,
      workgroupSize: wg,
      consts: { 'SCAN_VPT: u32': `${vpt}u` },
    }),
    entryPoint: 'main',
    constants: { LB_MAX_SPIN: ctx.lookbackSpin },
  }));
}

/**
 * Records a scan of `n` elements of `srcBuf` into `dstBuf` (both padded to 16 bytes, distinct)
 * in `s`. `scalar` 'u32' serves u32 and i32. When `totalBuf` is given, its first word receives
 * the sum of all elements (u32 wrapping, or f32 bits). Nothing is recorded for n = 0.
 * Arrays beyond one storage binding are scanned in windows of whole tiles, each bound at its
 * offset, each adding the sum of the windows before it (carried on the GPU, no readback).
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
  const maxBinding = ctx.limits.maxStorageBufferBindingSize;
  // elements per window: whole tiles, the window's bytes a multiple of the offset alignment
  const tile = scanTile(ctx);
  const window = paddedSize(n * 4) <= maxBinding ? n : Math.floor(maxBinding / 4 / tile) * tile;
  const windowTiles = Math.ceil(window / tile);
  const spine = s.temp(spineBytes(windowTiles), 'scan-spine');
  // carries: a zero for the first window, then ping-pong between two words
  const zero = s.temp(16, 'scan-carry0');
  s.encoder.clearBuffer(zero);
  const pingPong = [s.temp(16, 'scan-carry-a'), s.temp(16, 'scan-carry-b')];
  const pipeline = scanPipeline(ctx, scalar);
  let carry = zero;
  for (let start = 0, k = 0; start < n; start += window, k++) {
    const count = Math.min(window, n - start);
    const tiles = Math.ceil(count / tile);
    const last = start + count >= n;
    const total = last && totalBuf !== undefined ? totalBuf : pingPong[k % 2];
    const offset = start * 4;
    // bound with an explicit size: a pooled buffer may be larger than one binding
    const bind = (b: GPUBuffer): GPUBufferBinding => ({ buffer: b, offset, size: paddedSize(count * 4) });
    s.encoder.clearBuffer(spine);
    s.dispatch(
      pipeline,
      [
        { binding: 0, resource: { buffer: s.uniform([count, tiles, inclusive ? 1 : 0, 0]) } },
        { binding: 1, resource: bind(srcBuf) },
        { binding: 2, resource: bind(dstBuf) },
        { binding: 3, resource: { buffer: spine } },
        { binding: 4, resource: { buffer: total } },
        { binding: 5, resource: { buffer: carry } },
      ],
      tiles,
      'parle:scan',
    );
    carry = total;
  }
}

/**
 * Prefix sum of u32, i32 (two's complement, wrapping) or f32 elements, into a new DeviceArray
 * of the same type and length. Inclusive: out[i] = in[0] + ... + in[i]; exclusive: out[0] = 0,
 * out[i] = in[0] + ... + in[i-1]. Example: [3,1,4,1,5] -> inclusive [3,4,8,9,14], exclusive
 * [0,3,4,8,9]. f32 sums are associated differently from a serial loop (per 16 elements, per
 * workgroup, per tile), so they may differ from it by rounding and between runs.
 * Algorithm: single-pass chained scan with decoupled look-back (Merrill and Garland 2016) and
 * decoupled fallback (Smith, Levien and Owens 2025); 4096 elements per workgroup, vec4 loads.
 * The input is not modified; output and input never overlap. Arrays beyond one storage binding
 * are scanned in windows of whole tiles, each adding the sum of the ones before it (read on the
 * GPU: no readback).
 * @throws ParleError UNSUPPORTED_TYPE, INVALID_ARGUMENT, TOO_LARGE (beyond maxBufferSize), DEVICE_LOST
 */
export async function scan(ctx: GpuContext, input: DeviceArray, opts: { inclusive: boolean }): Promise<DeviceArray> {
  const d = ctx.checkInput(input, 'input', ['u32', 'i32', 'f32']);
  if (typeof opts !== 'object' || opts === null || typeof opts.inclusive !== 'boolean') {
    throw new ParleError(ErrorCodes.INVALID_OPTION, 'options.inclusive must be a boolean');
  }
  const scalar = d.type === 'f32' ? 'f32' : 'u32';
  const out = await ctx.submit('scan', (s) => {
    // beyond one binding: the input must be padded already (made by parle), the output too
    const dst = s.output(d.byteLength, `scan-${d.type}`, 0, true);
    encodeScan(ctx, s, ctx.paddedBuffer(s, d, true), dst, d.length, scalar, opts.inclusive);
    return dst;
  });
  return ctx.owned(out, d.type, d.length);
}
