/**
 * The GPU layer: WebGPU context, device arrays, transfers and the WGSL kernels (scan, RLE
 * encode/decode, radix sort). The engine (ts/engine.ts) calls this; kernels live in shaders/.
 */
export {
  createGpuContext,
  gpuUnavailableReason,
  GpuContext,
  type GpuContextOptions,
  type GpuTuning,
  type GpuAdapterInfo,
  type GpuLimits,
  type GpuLostInfo,
  type EncoderHooks,
} from './context.js';
export { DeviceArray, paddedSize } from './device-array.js';
export { SMALL_UPLOAD_BYTES } from './transfer.js';
