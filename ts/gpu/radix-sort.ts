/// <reference types="@webgpu/types" />
/**
 * Radix sort on the GPU: LSD, 4 passes of 8-bit digits, OneSweep (Adinets and Merrill 2022,
 * "Onesweep: A Faster Least Significant Digit Radix Sort for GPUs") with the decoupled fallback
 * of Smith, Levien and Owens (SPAA 2025) in its per-digit look-back. Kernels in
 * shaders/radix-sort.wgsl, recorded in one command buffer:
 *   globalHistogram (one read of the keys: the four 256-bin digit histograms),
 *   scanHistogram (one workgroup: each pass's exclusive scan of its 256 bins),
 *   then per pass one `onesweep` dispatch (rank, publish per-digit tile counts, look back over
 *   `tuning.sortLookbackWindow` predecessors per memory round trip, scatter), its look-back
 *   status words zeroed before it.
 * Keys: u32, i32 or f32 (i32 in signed order, f32 in IEEE totalOrder); values: optional u32,
 * moved with their keys; stable. Fewer than 2^30 keys (30-bit look-back values).
 */
import { ErrorCodes, ParleError } from '../errors.js';
import sortSource from '../../shaders/radix-sort.wgsl';
import rankSubgroup from '../../shaders/radix-rank-subgroup.wgsl';
import rankShared from '../../shaders/radix-rank-shared.wgsl';
import { composeKernel } from './compose.js';
import type { GpuContext } from './context.js';
import { DeviceArray, paddedSize } from './device-array.js';
import { getPipeline } from './pipelines.js';

const KIND = { u32: 0, i32: 1, f32: 2 } as const;

/** u32 words before the tile status words in the sort's look-back buffer (SPINE_BASE in the shader). */
const SPINE_BASE = 4;
/** Keys per global-histogram block (256 invocations x one vec4 each; HIST_WG in the shader). */
const HIST_BLOCK = 1024;
/** Most workgroups of the global histogram (each loops over blocks, then adds 1024 bins). */
const HIST_MAX_WORKGROUPS = 1024;
/** Status words hold 30-bit counts. */
const MAX_KEYS = 2 ** 30 - 1;

/**
 * Invocations per sort workgroup: with subgroups, `tuning.sortWorkgroupSize` (256 or 512) capped
 * at 16 subgroups of the smallest size the adapter may use (NVIDIA: 8 or 16 warps of 32;
 * SwiftShader: 16 of 4), so the per-subgroup digit counters (at most 16 x 256 x 4 bytes) fit
 * workgroup memory, and at the device's workgroup limits (512 also needs the workgroup memory
 * of its 4096-key stage); without subgroups, 256.
 */
export function sortWorkgroupSize(ctx: GpuContext): number {
  if (!ctx.hasSubgroups) return 256;
  const l = ctx.limits;
  let wg = Math.min(ctx.tuning.sortWorkgroupSize, 16 * ctx.subgroupMinSize, l.maxComputeInvocationsPerWorkgroup, l.maxComputeWorkgroupSizeX);
  // rank counters + stage + 7 arrays of 256 words, in bytes
  const storage = (w: number) => 4 * ((w / ctx.subgroupMinSize) * 256 + w * ctx.tuning.sortItemsPerInvocation + 7 * 256);
  while (wg > 256 && storage(wg) > l.maxComputeWorkgroupStorageSize) wg /= 2;
  return Math.max(wg, Math.min(256, 16 * ctx.subgroupMinSize));
}

interface SortPipelines {
  histogram: GPUComputePipeline;
  scan: GPUComputePipeline;
  onesweep: GPUComputePipeline;
}

function sortPipelines(ctx: GpuContext, withValues: boolean): SortPipelines {
  const wg = sortWorkgroupSize(ctx);
  const items = ctx.tuning.sortItemsPerInvocation;
  const window = ctx.tuning.sortLookbackWindow;
  const variant = `${ctx.hasSubgroups ? `sg${ctx.subgroupMaxSize}` : 'shared'}:${wg}:${items}:${window}:${withValues ? 'kv' : 'k'}`;
  const build = (entryPoint: string, constants?: Record<string, number>) => () => {
    let kernel = sortSource;
    if (!withValues)
      kernel = kernel
        .split('\n')
        .filter((line) => !line.includes('// values'))
        .join('\n');
    const code = composeKernel((ctx.hasSubgroups ? rankSubgroup : rankShared) + '\n' + kernel, {
      subgroups: ctx.hasSubgroups,
      scalar: 'u32',
      consts: {
        'SORT_WG: u32': `${wg}u`,
        'ITEMS: u32': `${items}u`,
        'MIN_SG: u32': `${ctx.subgroupMinSize}u`,
        'MAX_SG: u32': `${ctx.subgroupMaxSize}u`,
        'LB_WINDOW: u32': `${window}u`,
      },
    });
    return { code, entryPoint, constants };
  };
  return {
    histogram: getPipeline(ctx.device, `sort-histogram:${variant}`, build('globalHistogram')),
    scan: getPipeline(ctx.device, `sort-scan-histogram:${variant}`, build('scanHistogram')),
    onesweep: getPipeline(ctx.device, `sort-onesweep:${variant}:${ctx.lookbackSpin}`, build('onesweep', { LB_MAX_SPIN: ctx.lookbackSpin })),
  };
}

/**
 * Stable LSD radix sort of u32, i32 or f32 keys (ascending; f32 in IEEE 754 totalOrder:
 * -NaN < -Inf < ... < -0 < +0 < ... < +Inf < +NaN), optionally carrying u32 values (equal keys
 * keep their input order). Returns new DeviceArrays; the inputs are not modified.
 * Algorithm: OneSweep (Adinets and Merrill 2022): one read of the keys for all four 8-bit
 * digit histograms, then one kernel per digit place that ranks each tile's keys, looks back per
 * digit across tiles (decoupled look-back with decoupled fallback: Smith, Levien and Owens 2025)
 * and scatters stably. Up to 2^30 - 1 keys.
 * @throws ParleError UNSUPPORTED_TYPE, LENGTH_MISMATCH, INVALID_ARGUMENT, TOO_LARGE (2^30 keys or
 *   more, or beyond a storage binding), DEVICE_LOST
 */
export async function radixSort(
  ctx: GpuContext,
  keys: DeviceArray,
  values?: DeviceArray,
): Promise<{ keys: DeviceArray; values?: DeviceArray }> {
  const k = ctx.checkInput(keys, 'keys', ['u32', 'i32', 'f32']);
  const v = values === undefined ? undefined : ctx.checkInput(values, 'values', ['u32']);
  if (v !== undefined && v.length !== k.length) {
    throw new ParleError(ErrorCodes.LENGTH_MISMATCH, `keys has ${k.length} elements, values ${v.length}`);
  }
  ctx.checkUsable();
  const n = k.length;
  if (n > MAX_KEYS) throw new ParleError(ErrorCodes.TOO_LARGE, `sort takes fewer than 2^30 keys, got ${n}`);
  const wg = sortWorkgroupSize(ctx);
  const tile = wg * ctx.tuning.sortItemsPerInvocation;
  const tiles = Math.max(1, Math.ceil(n / tile));
  const spineLength = SPINE_BASE + 256 * tiles;
  ctx.checkBindable(spineLength * 4, 'sort look-back status');
  const pipes = sortPipelines(ctx, v !== undefined);
  const kind = KIND[k.type as keyof typeof KIND];
  const out = await ctx.submit('sort', (s) => {
    const keysOut = s.output(k.byteLength, `sorted-keys-${k.type}`);
    const valuesOut = v === undefined ? undefined : s.output(v.byteLength, 'sorted-values');
    if (n === 0) return { keysOut, valuesOut };
    const keysTmp = s.temp(k.byteLength, 'sort-keys-tmp');
    const valuesTmp = v === undefined ? undefined : s.temp(v.byteLength, 'sort-values-tmp');
    const spine = s.temp(spineLength * 4, 'sort-spine');
    const digitStart = s.temp(4 * 256 * 4, 'sort-digit-start');
    let keysSrc = ctx.paddedBuffer(s, k);
    let valuesSrc = v === undefined ? undefined : ctx.paddedBuffer(s, v);
    // the four digit histograms, then their exclusive scans (first output index of each digit)
    s.encoder.clearBuffer(digitStart);
    const histWorkgroups = Math.min(HIST_MAX_WORKGROUPS, Math.ceil(n / HIST_BLOCK));
    s.dispatch(
      pipes.histogram,
      [
        { binding: 0, resource: { buffer: s.uniform([n, histWorkgroups, 0, kind << 8]) } },
        { binding: 1, resource: { buffer: keysSrc, size: paddedSize(n * 4) } },
        { binding: 2, resource: { buffer: digitStart } },
      ],
      histWorkgroups,
      'parle:sort-histogram',
    );
    s.dispatch(pipes.scan, [{ binding: 3, resource: { buffer: digitStart } }], 1, 'parle:sort-scan-histogram');
    for (let pass = 0; pass < 4; pass++) {
      const keysDst = pass % 2 === 0 ? keysTmp : keysOut;
      const valuesDst = pass % 2 === 0 ? valuesTmp : valuesOut;
      const flags = (pass === 0 ? 1 : 0) | (pass === 3 ? 2 : 0) | (kind << 8);
      s.encoder.clearBuffer(spine, 0, spineLength * 4);
      const entries: GPUBindGroupEntry[] = [
        { binding: 4, resource: { buffer: s.uniform([n, tiles, pass * 8, flags]) } },
        { binding: 5, resource: { buffer: keysSrc } },
        { binding: 6, resource: { buffer: digitStart } },
        { binding: 7, resource: { buffer: spine } },
        { binding: 8, resource: { buffer: keysDst } },
      ];
      if (valuesSrc !== undefined && valuesDst !== undefined) {
        entries.push({ binding: 9, resource: { buffer: valuesSrc } }, { binding: 10, resource: { buffer: valuesDst } });
      }
      // tiles are numbered by the kernel's counter; a 2-D grid's extra workgroups exit
      s.dispatch(pipes.onesweep, entries, tiles, 'parle:sort-onesweep');
      keysSrc = keysDst;
      valuesSrc = valuesDst;
    }
    return { keysOut, valuesOut };
  });
  const result: { keys: DeviceArray; values?: DeviceArray } = { keys: ctx.owned(out.keysOut, k.type, n) };
  if (out.valuesOut !== undefined) result.values = ctx.owned(out.valuesOut, 'u32', n);
  return result;
}
