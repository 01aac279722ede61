/// <reference types="@webgpu/types" />
/**
 * Radix sort on the GPU: 4 passes of shaders/radix-sort.wgsl (upsweep, scan of the histogram
 * table with shaders/scan.wgsl, downsweep) recorded in one command buffer.
 */
import { ErrorCodes, ParleError } from '../errors.js';
import sortSource from '../../shaders/radix-sort.wgsl';
import rankSubgroup from '../../shaders/radix-rank-subgroup.wgsl';
import rankShared from '../../shaders/radix-rank-shared.wgsl';
import { composeKernel } from './compose.js';
import type { GpuContext } from './context.js';
import { DeviceArray } from './device-array.js';
import { getPipeline } from './pipelines.js';
import { encodeScan } from './scan.js';

const KIND = { u32: 0, i32: 1, f32: 2 } as const;

/**
 * Invocations per sort workgroup: with subgroups, 16 subgroups of the smallest size the adapter
 * may use, at most 256 (NVIDIA: 8 warps of 32; SwiftShader: 16 of 4), so the per-subgroup digit
 * counters (16 x 256 x 4 bytes) fit workgroup memory; without subgroups, 256.
 */
export function sortWorkgroupSize(ctx: GpuContext): number {
  return ctx.hasSubgroups ? Math.min(256, 16 * ctx.subgroupMinSize) : 256;
}

function sortPipelines(ctx: GpuContext, withValues: boolean): { up: GPUComputePipeline; down: GPUComputePipeline } {
  const wg = sortWorkgroupSize(ctx);
  const items = ctx.tuning.sortItemsPerInvocation;
  const variant = `${ctx.hasSubgroups ? 'sg' : 'shared'}:${wg}:${items}:${withValues ? 'kv' : 'k'}`;
  const build = (entryPoint: string) => () => {
    let kernel = sortSource;
    if (!withValues) kernel = kernel.split('\n').filter((line) => !line.includes('// values')).join('\n');
    const code = composeKernel((ctx.hasSubgroups ? rankSubgroup : rankShared) + '\n' + kernel, {
      subgroups: ctx.hasSubgroups,
      scalar: 'u32',
      consts: { 'SORT_WG: u32': `${wg}u`, 'ITEMS: u32': `${items}u`, 'MIN_SG: u32': `${ctx.subgroupMinSize}u` },
    });
    return { code, entryPoint };
  };
  return {
    up: getPipeline(ctx.device, `sort-up:${variant}`, build('upsweep')),
    down: getPipeline(ctx.device, `sort-down:${variant}`, build('downsweep')),
  };
}

/** GpuContext.sort: see its documentation. */
export async function sortOp(
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
  const wg = sortWorkgroupSize(ctx);
  const tile = wg * ctx.tuning.sortItemsPerInvocation;
  const tiles = Math.max(1, Math.ceil(n / tile));
  const histLength = 256 * tiles;
  ctx.checkBindable(histLength * 4, 'sort histogram table');
  const pipes = sortPipelines(ctx, v !== undefined);
  const kind = KIND[k.type as keyof typeof KIND];
  const out = await ctx.submit('sort', (s) => {
    const keysOut = s.output(k.byteLength, `sorted-keys-${k.type}`);
    const valuesOut = v === undefined ? undefined : s.output(v.byteLength, 'sorted-values');
    if (n === 0) return { keysOut, valuesOut };
    const keysTmp = s.temp(k.byteLength, 'sort-keys-tmp');
    const valuesTmp = v === undefined ? undefined : s.temp(v.byteLength, 'sort-values-tmp');
    const hist = s.temp(histLength * 4, 'sort-hist');
    const histScanned = s.temp(histLength * 4, 'sort-offsets');
    let keysSrc = ctx.paddedBuffer(s, k);
    let valuesSrc = v === undefined ? undefined : ctx.paddedBuffer(s, v);
    for (let pass = 0; pass < 4; pass++) {
      const keysDst = pass % 2 === 0 ? keysTmp : keysOut;
      const valuesDst = pass % 2 === 0 ? valuesTmp : valuesOut;
      const flags = (pass === 0 ? 1 : 0) | (pass === 3 ? 2 : 0) | (kind << 8);
      const params = s.uniform([n, tiles, pass * 8, flags]);
      s.dispatch(
        pipes.up,
        [
          { binding: 0, resource: { buffer: params } },
          { binding: 1, resource: { buffer: keysSrc } },
          { binding: 2, resource: { buffer: hist } },
        ],
        tiles,
        'parle:sort-upsweep',
      );
      encodeScan(ctx, s, hist, histScanned, histLength, 'u32', false);
      const entries: GPUBindGroupEntry[] = [
        { binding: 3, resource: { buffer: params } },
        { binding: 4, resource: { buffer: keysSrc } },
        { binding: 5, resource: { buffer: histScanned } },
        { binding: 6, resource: { buffer: keysDst } },
      ];
      if (valuesSrc !== undefined && valuesDst !== undefined) {
        entries.push({ binding: 7, resource: { buffer: valuesSrc } }, { binding: 8, resource: { buffer: valuesDst } });
      }
      s.dispatch(pipes.down, entries, tiles, 'parle:sort-downsweep');
      keysSrc = keysDst;
      valuesSrc = valuesDst;
    }
    return { keysOut, valuesOut };
  });
  const result: { keys: DeviceArray; values?: DeviceArray } = { keys: ctx.owned(out.keysOut, k.type, n) };
  if (out.valuesOut !== undefined) result.values = ctx.owned(out.valuesOut, 'u32', n);
  return result;
}
