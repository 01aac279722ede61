import type { GpuContext } from './context.js';
import type { DeviceArray } from './device-array.js';
export async function sortOp(ctx: GpuContext, keys: DeviceArray, values?: DeviceArray): Promise<{ keys: DeviceArray; values?: DeviceArray }> { throw new Error('todo'); }
