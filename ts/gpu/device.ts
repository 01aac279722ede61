/// <reference types="@webgpu/types" />
/**
 * Opening WebGPU for a GpuContext (ts/gpu/context.ts): the options and their checks, the kernel
 * shapes (tuning) and their defaults, the adapter and the device.
 *
 * Acquisition: `navigator.gpu` in browsers; in Node the `webgpu` package (Dawn), whose `globals`
 * (GPUBufferUsage, GPUMapMode, ...) are copied onto globalThis only where missing.
 */
import { checkKeys, ErrorCodes, ParleError } from '../errors.js';

/** Options of {@link createGpuContext}. */
export interface GpuContextOptions {
  /** Adapter preference (WebGPU's GPUPowerPreference); default: the platform's choice. */
  powerPreference?: 'low-power' | 'high-performance';
  /**
   * 'auto' (default): use subgroup operations when the adapter has the `subgroups` feature;
   * 'off': always use the shared-memory variants (tests run both).
   */
  subgroups?: 'auto' | 'off';
  /**
   * Look-back reads before a chained kernel falls back to reducing the stalled predecessor's
   * tile itself (default 1024). 0 forces the fallback at every step: a test of the fallback path,
   * quadratic in the number of tiles.
   */
  lookbackSpin?: number;
  /** Staging chunk size in bytes for uploads and readback (default 8 MiB, a multiple of 4). */
  stagingChunkBytes?: number;
  /** Staging buffers per ring (default 4). */
  stagingSlots?: number;
  /** Kernel shapes, for benchmarks; the defaults suit the GPUs measured (bench/results). */
  tuning?: Partial<GpuTuning>;
  /**
   * Bytes of released storage buffers kept for reuse (buffer-pool.ts); default: twice the storage
   * binding limit, clamped to [256 MiB, 4 GiB]. 0 disables the pool. Kept buffers are freed after
   * 5 s without a release, and by releaseStaging().
   */
  poolBytes?: number;
  /**
   * Caps the storage binding size below the adapter's (bytes, a multiple of 2^14), so that tests
   * can exercise the split of arrays beyond one binding with small arrays.
   */
  maxStorageBindingBytes?: number;
}

/** The keys of {@link GpuContextOptions}, which createGpuContext checks (a typo is INVALID_OPTION, not ignored). */
const CONTEXT_OPTION_KEYS = Object.keys({
  powerPreference: true,
  subgroups: true,
  lookbackSpin: true,
  stagingChunkBytes: true,
  stagingSlots: true,
  tuning: true,
  poolBytes: true,
  maxStorageBindingBytes: true,
} satisfies Record<keyof GpuContextOptions, true>);

/** Measured best on an H200 (bench/results/nvidia-h200/gpu-layer.json); its keys are the tuning's keys. */
export const DEFAULT_TUNING: GpuTuning = {
  decodeWordsPerInvocation: 16,
  sortItemsPerInvocation: 8,
  sortLookbackWindow: 8,
  sortWorkgroupSize: 256,
  scanVecsPerInvocation: 4,
  scanWorkgroupSize: 1024,
  uploadPieceBytes: 256 << 20,
};

/** Kernel shapes (see GpuContextOptions.tuning). */
export interface GpuTuning {
  /** u32 output words per invocation of the RLE decode expand: 4, 8 or 16 (default 16). */
  decodeWordsPerInvocation: 4 | 8 | 16;
  /**
   * Keys per invocation of the radix sort (tile = workgroup size x this): 8, 12 or 16 (default 8:
   * on the H200, 2^28 keys, the OneSweep sort took 18.8 ms of GPU time with 8, 25.5 with 12 and
   * 23.9 with 16; fewer registers per invocation).
   */
  sortItemsPerInvocation: 8 | 12 | 16;
  /**
   * Invocations per radix sort workgroup with subgroups: 256 or 512 (default 256), capped at 16
   * subgroups of the adapter's smallest subgroup size and at its workgroup limits (without
   * subgroups: 256). 512 doubles the tile, so a pass has half the tiles and look-back status
   * words, at twice the workgroup memory (about 39 KiB on NVIDIA). On the H200 at 2^28 keys it
   * took 19.0 ms of GPU time against 18.8 with 256.
   */
  sortWorkgroupSize: 256 | 512;
  /**
   * vec4 loads per invocation of the scan (tile = 256 x 4 x this elements): 2, 4 or 8 (default
   * 4: on the H200 at 2^28 u32 the scan took 1.02 ms of GPU time with 4 and 1.30 with 8).
   */
  scanVecsPerInvocation: 2 | 4 | 8;
  /**
   * Invocations per scan workgroup where the adapter has subgroups and allows it (else 256):
   * 256, 512 or 1024 (tile = this x 4 x scanVecsPerInvocation elements). Default 1024: on the
   * H200 at 2^28 u32 the scan took 0.95 ms of GPU time with 1024, 0.99 with 512 and 1.02 with
   * 256 (measured by a benchmark since removed; git history has its gpu-variants-nvidia-h200.json): a quarter of the tiles, so a quarter of
   * the look-backs, with the same registers per invocation.
   */
  scanWorkgroupSize: 256 | 512 | 1024;
  /**
   * Predecessor tiles whose status words the radix sort's look-back reads at once per digit (one
   * memory round trip for up to this many tiles; 1: one tile per round trip): 1, 4, 8, 16 or 32
   * (default 8: on the H200 at 2^28 keys the sort took 18.9 ms of GPU time with 8, 20.1 with 1,
   * 20.5 with 16 and 22.3 with 32; a one-tile walk serialises long chains of tiles, a wide window
   * reads status words past the nearest complete one in vain).
   */
  sortLookbackWindow: 1 | 4 | 8 | 16 | 32;
  /**
   * Bytes of each staging piece of an upload of 32 MiB or more: a multiple of 4 MiB (default
   * 256 MiB: on the H200 host 256 MiB uploaded at 10.4 GB/s through one piece, 8.1-9.4 GB/s
   * through pieces of 16-128 MiB; the fill of larger buffers runs closer to memcpy speed).
   */
  uploadPieceBytes: number;
}

/** The adapter's identity as the adapter reports it (strings may be empty). */
export interface GpuAdapterInfo {
  vendor: string;
  architecture: string;
  device: string;
  description: string;
}

/**
 * Look-back windows (of up to 32 tiles each) read without progress before falling back. On an
 * H200 at 2^28 elements 64, 256, 1024, 4096 and 16384 all timed alike once the look-back read
 * 32 tiles per round trip (a one-tile walk had serialised it); 1024 keeps the fallback rare.
 */
const DEFAULT_LOOKBACK_SPIN = 1024;

let dawnGpu: GPU | undefined;
/** Contexts alive on `dawnGpu`: when the last one ends, the reference is dropped so Node can exit. */
let liveDawnContexts = 0;
/** Why the last {@link createGpuContext} found no GPU (see {@link gpuUnavailableReason}). */
let unavailableReason = 'no WebGPU adapter was found';

/**
 * Why there is no GPU, in words for an error message or `explain`: the optional `webgpu` package
 * not installed (Node), no `navigator.gpu` (a browser without WebGPU), or no adapter.
 */
export function gpuUnavailableReason(): string {
  return unavailableReason;
}

async function findGpu(): Promise<GPU | undefined> {
  const nav = (globalThis as { navigator?: { gpu?: GPU } }).navigator;
  if (nav?.gpu !== undefined) return nav.gpu;
  if (dawnGpu !== undefined) return dawnGpu;
  const isNode = typeof process !== 'undefined' && process.versions?.node !== undefined;
  if (!isNode) {
    unavailableReason = 'this browser has no WebGPU (navigator.gpu is absent)';
    return undefined;
  }
  // Dawn's `webgpu` package is an optional peer dependency (132 MB of native builds): loaded only
  // here, on the first context, and only when the application installed it.
  const name = 'webgpu'; // a variable: bundlers for browsers leave it alone
  let dawn: { create(flags: string[]): GPU; globals: object };
  try {
    dawn = (await import(/* @vite-ignore */ name)) as typeof dawn;
  } catch (e) {
    const code = (e as { code?: string }).code;
    unavailableReason =
      code === 'ERR_MODULE_NOT_FOUND' && String((e as Error).message).includes("'webgpu'")
        ? 'the optional package `webgpu` (Dawn for Node) is not installed; `npm install webgpu` enables the GPU path'
        : `the \`webgpu\` package failed to load: ${(e as Error).message ?? String(e)}`;
    return undefined;
  }
  try {
    const globals = dawn.globals as Record<string, unknown>;
    for (const [key, value] of Object.entries(globals)) {
      if (!(key in globalThis)) (globalThis as Record<string, unknown>)[key] = value;
    }
    dawnGpu = dawn.create([]);
    return dawnGpu;
  } catch (e) {
    unavailableReason = `the \`webgpu\` package could not start Dawn: ${(e as Error).message ?? String(e)}`;
    return undefined;
  }
}

/** @internal Counts a context on Dawn's GPU (GpuContext's constructor, for a context opened there). */
export function dawnContextOpened(): void {
  liveDawnContexts++;
}

/** @internal Counts the end of a context on Dawn's GPU (its device lost or destroyed). */
export function dawnContextEnded(): void {
  if (--liveDawnContexts === 0) dawnGpu = undefined; // lets Node exit
}

/** What {@link openDevice} found and checked, for GpuContext's constructor. */
export interface ContextSettings {
  subgroups: boolean;
  lookbackSpin: number;
  chunk: number;
  slots: number;
  sgMin: number;
  sgMax: number;
  onDawn?: boolean;
  tuning?: GpuTuning;
  poolBytes?: number;
  maxBinding?: number;
}

/**
 * @internal The work of createGpuContext (ts/gpu/context.ts) short of the context itself: checks
 * the options, opens an adapter and a device, and resolves to them with the context's settings;
 * null when there is no WebGPU or no adapter ({@link gpuUnavailableReason} says why).
 * @throws ParleError INVALID_OPTION for a bad option.
 */
export async function openDevice(
  opts: GpuContextOptions,
): Promise<{ device: GPUDevice; adapterInfo: GpuAdapterInfo; settings: ContextSettings } | null> {
  if (opts === null || typeof opts !== 'object') throw new ParleError(ErrorCodes.INVALID_OPTION, 'options of createGpuContext must be an object');
  checkKeys(opts, CONTEXT_OPTION_KEYS, 'createGpuContext');
  if (opts.powerPreference !== undefined && opts.powerPreference !== 'low-power' && opts.powerPreference !== 'high-performance') {
    throw new ParleError(ErrorCodes.INVALID_OPTION, `options.powerPreference must be 'low-power' or 'high-performance'`);
  }
  if (opts.subgroups !== undefined && opts.subgroups !== 'auto' && opts.subgroups !== 'off') {
    throw new ParleError(ErrorCodes.INVALID_OPTION, `options.subgroups must be 'auto' or 'off'`);
  }
  const spin = opts.lookbackSpin ?? DEFAULT_LOOKBACK_SPIN;
  if (!Number.isInteger(spin) || spin < 0 || spin > 1 << 20) {
    throw new ParleError(ErrorCodes.INVALID_OPTION, 'options.lookbackSpin must be an integer in [0, 2^20]');
  }
  const chunk = opts.stagingChunkBytes ?? 8 << 20;
  if (!Number.isInteger(chunk) || chunk < 4096 || chunk % 4 !== 0) {
    throw new ParleError(ErrorCodes.INVALID_OPTION, 'options.stagingChunkBytes must be a multiple of 4, at least 4096');
  }
  if (opts.tuning !== undefined && (opts.tuning === null || typeof opts.tuning !== 'object')) {
    throw new ParleError(ErrorCodes.INVALID_OPTION, 'options.tuning must be an object');
  }
  checkKeys(opts.tuning ?? {}, Object.keys(DEFAULT_TUNING), 'createGpuContext', 'tuning');
  // (a key set to undefined keeps its default)
  const given = Object.fromEntries(Object.entries(opts.tuning ?? {}).filter(([, value]) => value !== undefined)) as Partial<GpuTuning>;
  const tuning: GpuTuning = { ...DEFAULT_TUNING, ...given };
  if (![4, 8, 16].includes(tuning.decodeWordsPerInvocation)) {
    throw new ParleError(ErrorCodes.INVALID_OPTION, 'options.tuning.decodeWordsPerInvocation must be 4, 8 or 16');
  }
  if (![8, 12, 16].includes(tuning.sortItemsPerInvocation)) {
    throw new ParleError(ErrorCodes.INVALID_OPTION, 'options.tuning.sortItemsPerInvocation must be 8, 12 or 16');
  }
  if (![256, 512].includes(tuning.sortWorkgroupSize)) {
    throw new ParleError(ErrorCodes.INVALID_OPTION, 'options.tuning.sortWorkgroupSize must be 256 or 512');
  }
  if (![2, 4, 8].includes(tuning.scanVecsPerInvocation)) {
    throw new ParleError(ErrorCodes.INVALID_OPTION, 'options.tuning.scanVecsPerInvocation must be 2, 4 or 8');
  }
  if (![256, 512, 1024].includes(tuning.scanWorkgroupSize)) {
    throw new ParleError(ErrorCodes.INVALID_OPTION, 'options.tuning.scanWorkgroupSize must be 256, 512 or 1024');
  }
  if (![1, 4, 8, 16, 32].includes(tuning.sortLookbackWindow)) {
    throw new ParleError(ErrorCodes.INVALID_OPTION, 'options.tuning.sortLookbackWindow must be 1, 4, 8, 16 or 32');
  }
  if (!Number.isSafeInteger(tuning.uploadPieceBytes) || tuning.uploadPieceBytes <= 0 || tuning.uploadPieceBytes % (4 << 20) !== 0) {
    throw new ParleError(ErrorCodes.INVALID_OPTION, 'options.tuning.uploadPieceBytes must be a positive multiple of 4 MiB');
  }
  if (opts.poolBytes !== undefined && (!Number.isSafeInteger(opts.poolBytes) || opts.poolBytes < 0)) {
    throw new ParleError(ErrorCodes.INVALID_OPTION, 'options.poolBytes must be a non-negative integer');
  }
  const cap = opts.maxStorageBindingBytes;
  if (cap !== undefined && (!Number.isSafeInteger(cap) || cap < 1 << 14 || cap % (1 << 14) !== 0)) {
    throw new ParleError(ErrorCodes.INVALID_OPTION, 'options.maxStorageBindingBytes must be a multiple of 16384');
  }
  const slots = opts.stagingSlots ?? 4;
  if (!Number.isInteger(slots) || slots < 1 || slots > 64) {
    throw new ParleError(ErrorCodes.INVALID_OPTION, 'options.stagingSlots must be an integer in [1, 64]');
  }
  const gpu = await findGpu();
  if (gpu === undefined) return null;
  const adapter = await gpu.requestAdapter(opts.powerPreference === undefined ? undefined : { powerPreference: opts.powerPreference });
  if (adapter === null) {
    unavailableReason = 'WebGPU found no adapter (no GPU or driver; in Node on Linux, a Vulkan driver)';
    return null;
  }
  const al = adapter.limits;
  const requiredLimits: Record<string, number> = {
    maxStorageBufferBindingSize: al.maxStorageBufferBindingSize,
    maxBufferSize: al.maxBufferSize,
    maxComputeWorkgroupStorageSize: al.maxComputeWorkgroupStorageSize,
    maxStorageBuffersPerShaderStage: al.maxStorageBuffersPerShaderStage,
    maxComputeWorkgroupsPerDimension: al.maxComputeWorkgroupsPerDimension,
    maxComputeInvocationsPerWorkgroup: al.maxComputeInvocationsPerWorkgroup,
    maxComputeWorkgroupSizeX: al.maxComputeWorkgroupSizeX,
  };
  const features: GPUFeatureName[] = [];
  const subgroups = opts.subgroups !== 'off' && adapter.features.has('subgroups');
  if (subgroups) features.push('subgroups' as GPUFeatureName);
  if (adapter.features.has('timestamp-query')) features.push('timestamp-query');
  const device = await adapter.requestDevice({ requiredFeatures: features, requiredLimits, label: 'parle' });
  const onDawn = dawnGpu !== undefined && gpu === dawnGpu;
  const info = adapter.info as GPUAdapterInfo & { subgroupMinSize?: number; subgroupMaxSize?: number };
  const sgMin = info?.subgroupMinSize ?? 4;
  const sgMax = info?.subgroupMaxSize ?? 128;
  if (subgroups && (sgMin < 4 || sgMax > 128 || (sgMin & (sgMin - 1)) !== 0)) {
    // kernels assume power-of-two subgroups of 4..128 lanes: use the shared-memory variants
    device.destroy();
    return openDevice({ ...opts, subgroups: 'off' });
  }
  return {
    device,
    adapterInfo: {
      vendor: info?.vendor ?? '',
      architecture: info?.architecture ?? '',
      device: info?.device ?? '',
      description: info?.description ?? '',
    },
    settings: { subgroups, lookbackSpin: spin, chunk, slots, sgMin, sgMax, onDawn, tuning, poolBytes: opts.poolBytes, maxBinding: cap },
  };
}
