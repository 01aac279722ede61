import type { GpuContext } from './context.js';
import type { DeviceArray } from './device-array.js';
export async function rleEncodeOp(ctx: GpuContext, input: DeviceArray): Promise<{ values: DeviceArray; lengths: DeviceArray }> { throw new Error('todo'); }
export async function rleDecodeOp(ctx: GpuContext, values: DeviceArray, lengths: DeviceArray): Promise<DeviceArray> { throw new Error('todo'); }
