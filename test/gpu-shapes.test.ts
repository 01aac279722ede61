/**
 * Kernel shapes chosen from an adapter's features and limits (no GPU needed: the functions read
 * only these fields of the context). The 1024-invocation scan runs only where the adapter allows
 * it, which SwiftShader (256) does not: these checks cover the choice that CI's GPU cannot.
 */
import { describe, expect, it } from 'vitest';
import type { GpuContext } from '../ts/gpu/context.js';
import { scanTile, scanWorkgroupSize } from '../ts/gpu/scan.js';

function context(hasSubgroups: boolean, invocations: number, sizeX: number, scanWorkgroupSize: 256 | 512 | 1024, vecs: 2 | 4 | 8 = 4): GpuContext {
  return {
    hasSubgroups,
    limits: { maxComputeInvocationsPerWorkgroup: invocations, maxComputeWorkgroupSizeX: sizeX },
    tuning: { scanWorkgroupSize, scanVecsPerInvocation: vecs },
  } as unknown as GpuContext;
}

describe('scan workgroup size', () => {
  it('takes the tuned size where the adapter has subgroups and its limits allow it, else 256', () => {
    expect(scanWorkgroupSize(context(true, 1024, 1024, 1024))).toBe(1024);
    expect(scanWorkgroupSize(context(true, 1024, 1024, 512))).toBe(512);
    expect(scanWorkgroupSize(context(true, 256, 256, 1024))).toBe(256); // SwiftShader's limits
    expect(scanWorkgroupSize(context(true, 1024, 512, 1024))).toBe(256); // x dimension too small
    expect(scanWorkgroupSize(context(false, 1024, 1024, 1024))).toBe(256); // the shared-memory scan
  });

  it('sizes the tile as invocations x 4 x vec4 per invocation', () => {
    expect(scanTile(context(true, 1024, 1024, 1024))).toBe(16384);
    expect(scanTile(context(true, 256, 256, 1024, 8))).toBe(8192);
    expect(scanTile(context(false, 1024, 1024, 512, 2))).toBe(2048);
  });
});
