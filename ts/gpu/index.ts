/**
 * The GPU layer: WebGPU context, device arrays, transfers and the primitives on the GPU
 * (scan, rleEncode, rleDecode, radixSort: functions of a context). The engine (ts/engine.ts) calls this; kernels live in shaders/.
 */
export { createGpuContext, GpuContext, type GpuLimits, type GpuLostInfo, type EncoderHooks } from './context.js';
export { gpuUnavailableReason, type GpuContextOptions, type GpuTuning, type GpuAdapterInfo } from './device.js';
export { DeviceArray, paddedSize } from './device-array.js';
export { scan } from './scan.js';
export { rleDecode, rleEncode } from './rle.js';
export { radixSort } from './radix-sort.js';
export { SMALL_UPLOAD_BYTES } from './transfer.js';
