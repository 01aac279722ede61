/// <reference types="@webgpu/types" />
/**
 * Composes WGSL kernels from shaders/: WGSL has no includes, so the shared pieces (a workgroup
 * scan, the chained-scan look-back) are prepended as text, after a header that picks the
 * scalar type (`alias T`) and the subgroup or shared-memory variant.
 */
import wgScanSubgroup from '../../shaders/wg-scan-subgroup.wgsl';
import wgScanShared from '../../shaders/wg-scan-shared.wgsl';
import lookbackSource from '../../shaders/lookback.wgsl';
import lookbackWalkSubgroup from '../../shaders/lookback-walk-subgroup.wgsl';
import lookbackWalkThread from '../../shaders/lookback-walk-thread.wgsl';

/** Invocations per workgroup in every parle kernel. */
export const WORKGROUP_SIZE = 256;

/** How a kernel is composed. */
export interface ComposeOptions {
  /** Use subgroup operations (the adapter has the `subgroups` feature and the context uses it). */
  subgroups: boolean;
  /** The scalar type the shared pieces scan: `u32` (also for i32 bits) or `f32`. */
  scalar: 'u32' | 'f32';
  /** Prepend the look-back piece (single-pass chained kernels). */
  lookback?: boolean;
  /** Invocations per workgroup (`const WG`): default {@link WORKGROUP_SIZE}. */
  workgroupSize?: number;
  /** Extra `const NAME: TYPE = VALUE;` lines, e.g. element packing of u8/u16. */
  consts?: Record<string, string>;
}

const idsSubgroup =
  '@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wid: vec3<u32>, ' +
  '@builtin(num_workgroups) nwg: vec3<u32>, @builtin(subgroup_invocation_id) lane: u32, ' +
  '@builtin(subgroup_size) sg: u32';
const idsShared =
  '@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wid: vec3<u32>, ' +
  '@builtin(num_workgroups) nwg: vec3<u32>';

/**
 * Returns the full WGSL source of `kernel` (a file of shaders/) for `opts`. The kernel writes
 * `fn main(/*IDS*\/) { /*LANES*\/ ...` and gets `tid`, `wid`, `nwg`, `lane`, `sg` (without
 * subgroups, `lane = tid` and `sg = WG`: the workgroup acts as one subgroup).
 */
export function composeKernel(kernel: string, opts: ComposeOptions): string {
  const header = [
    opts.subgroups ? 'enable subgroups;' : '',
    `alias T = ${opts.scalar};`,
    `const WG: u32 = ${opts.workgroupSize ?? WORKGROUP_SIZE}u;`,
    ...Object.entries(opts.consts ?? {}).map(([name, value]) => `const ${name} = ${value};`),
  ].join('\n');
  const ids = opts.subgroups ? idsSubgroup : idsShared;
  const lanes = opts.subgroups ? '' : 'let lane = tid; let sg = WG;';
  const body = kernel.replaceAll('/*IDS*/', ids).replaceAll('/*LANES*/', lanes);
  return [
    header,
    opts.subgroups ? wgScanSubgroup : wgScanShared,
    opts.lookback ? lookbackSource : '',
    opts.lookback ? (opts.subgroups ? lookbackWalkSubgroup : lookbackWalkThread) : '',
    body,
  ].join('\n');
}
