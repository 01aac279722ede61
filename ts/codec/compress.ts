/**
 * A compress call in the codec layer: its settings, built once from the call's options
 * (ts/options.ts compressSettings) and passed down whichever route it takes, and the one place
 * that route is chosen. The engine picks the path (the cost model, or the caller's `path`) and
 * moves data between host and device; on that path the route is decided here:
 *
 *   route                  input    what runs                                                  where
 *   'cpu'                  host     chunks coded on the worker pool, the chooser per chunk     ./arrays.ts
 *   'gpu'                  device   every chunk coded on the GPU, the container read back      ./gpu/encode.ts
 *   'gpu-to-device'        device   the same, the container left on the GPU (a u8 DeviceArray) ./gpu/encode.ts
 *   'gpu-runs'             device   runs on the GPU, read back, chunks coded on the workers    ./gpu/compress.ts
 *   'gpu-lossy'            device   quantized on the GPU, the codes' chunks coded there        ./gpu/encode-lossy.ts
 *   'gpu-lossy-to-device'  device   the same, the container left on the GPU                    ./gpu/encode-lossy.ts
 *
 * The GPU codes a chunk itself when the chooser picks (its candidates, and the predict stage
 * with every predictor and map) or the fixed pipeline is one it has ({@link gpuCodablePipeline});
 * else the runs way, whose bytes are the CPU path's (a shaped array: the CPU path). The lossy
 * mode (f32 and f64) runs on the GPU where the GPU codes the codes' pipeline itself, else on the
 * CPU path. 8-byte elements take the chooser (their chunks are predicted or stored, under every
 * map), f64's lossy mode and a fixed codec the GPU codes (on each word plane, the CPU path's
 * bytes) on the GPU; another fixed codec of them, the CPU path.
 */
import type { CpuPath } from '../cpu/cpu-path.js';
import type { DeviceArray } from '../gpu/device-array.js';
import type { GpuContext } from '../gpu/context.js';
import { elementSize, isGpuCodecType, type ElementType, type ParleArray } from '../types.js';
import { compressArray } from './arrays.js';
import { compressRunsFromDevice } from './gpu/compress.js';
import { compressLossyOnDevice } from './gpu/encode-lossy.js';
import { canCompressOnDevice, compressOnDevice, compressToDevice, gpuCodablePipeline } from './gpu/encode.js';
import type { CompressSettings } from './settings.js';

export type { CompressSettings } from './settings.js';

/** A compress's route; see this module's table. */
export type CompressRoute = 'cpu' | 'gpu' | 'gpu-to-device' | 'gpu-runs' | 'gpu-lossy' | 'gpu-lossy-to-device';

/**
 * The route of a compress on `path` (the engine's choice) with its container wanted at `to`.
 *   compressRoute('gpu', 'host', { codec: undefined, errorBound: undefined, ... }, u8 of 2^20)  ->  'gpu'
 *   compressRoute('gpu', 'host', { codec: [Delta, Pack], ... }, ...)                            ->  'gpu-runs'
 *   compressRoute('gpu', 'host', { errorBound: 0.01, codec: [Rle, Pack], ... }, f32)            ->  'cpu'
 *   compressRoute('gpu', 'host', { errorBound: 0.01, codec: undefined, ... }, f64)              ->  'gpu-lossy'
 */
export function compressRoute(
  path: 'cpu' | 'gpu',
  to: 'host' | 'device',
  settings: CompressSettings,
  input: { readonly type: ElementType; readonly length: number },
): CompressRoute {
  if (path === 'cpu') return 'cpu';
  // the lossy mode of f32 and f64 (./gpu/encode-lossy.ts), with the chooser's or a pipeline the
  // GPU codes
  if (settings.errorBound !== undefined && (input.type === 'f32' || input.type === 'f64')) {
    if (settings.codec !== undefined && !gpuCodablePipeline(settings.codec)) return 'cpu';
    return to === 'device' ? 'gpu-lossy-to-device' : 'gpu-lossy';
  }
  // 8-byte elements: the chooser's predicted chunks on the GPU (./gpu/encode.ts), and a fixed
  // codec it codes (on each word plane, as the CPU path); another on the CPU path
  if (elementSize(input.type) === 8) {
    if (settings.codec !== undefined && !gpuCodablePipeline(settings.codec)) return 'cpu';
    return to === 'device' ? 'gpu-to-device' : 'gpu';
  }
  if (!isGpuCodecType(input.type)) return 'cpu';
  if (!canCompressOnDevice(settings.codec)) return settings.shape === undefined ? 'gpu-runs' : 'cpu';
  return to === 'device' ? 'gpu-to-device' : 'gpu';
}

/**
 * Runs `route` on `input`: a host array for 'cpu', a DeviceArray for the others (the engine
 * moves it there). With `target` (a host array of at least compressBound bytes; not with
 * 'gpu-to-device' and 'gpu-lossy-to-device') the container is written into its start and a view
 * of it returned.
 * @returns the container's bytes: a Uint8Array on the host, a u8 DeviceArray for 'gpu-to-device'
 *   and 'gpu-lossy-to-device'
 * @throws ParleError TOO_LARGE, DEVICE_LOST, ABORTED, WORKER_FAILED (as each route's functions)
 */
export async function compressOn(
  route: CompressRoute,
  cpu: CpuPath,
  gpu: GpuContext | null,
  input: ParleArray | DeviceArray,
  settings: CompressSettings,
  target?: Uint8Array,
): Promise<Uint8Array | DeviceArray> {
  if (route === 'cpu') return compressArray(cpu, input as ParleArray, settings, target);
  const device = input as DeviceArray;
  switch (route) {
    case 'gpu':
      return compressOnDevice(gpu!, device, settings, target);
    case 'gpu-to-device':
      return compressToDevice(gpu!, device, settings);
    case 'gpu-runs':
      return compressRunsFromDevice(cpu, gpu!, device, settings, target);
    case 'gpu-lossy':
    case 'gpu-lossy-to-device':
      return compressLossyOnDevice(gpu!, device, settings, { target, resident: route === 'gpu-lossy-to-device' });
  }
}
