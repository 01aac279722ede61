/**
 * The engine's probe for the cost model's calibration (ts/cost/calibration.ts measures through
 * it): each op timed through the engine's public calls with the path fixed, on synthetic inputs,
 * and the GPU's transfers. The engine builds one per calibration ({@link makeProbe}).
 */
import { compressArray } from './codec/arrays.js';
import { compressSettingsWith } from './codec/settings.js';
import type { CalibrationProbe } from './cost/calibration.js';
import type { CostOp } from './cost/model.js';
import type { CpuPath } from './cpu/cpu-path.js';
import { rleEncode as rleEncodeOnCpu, type Runs } from './cpu/rle.js';
import { DEFAULT_CHUNK_BYTES } from './format/layout.js';
import type { GpuContext } from './gpu/context.js';
import { DeviceArray } from './gpu/device-array.js';
import { rleEncode as rleEncodeOnGpu } from './gpu/rle.js';
import { GPU_OPS, OPS, type Data, type DeviceRuns } from './options.js';
import type { ParleArray } from './types.js';

/** The engine's calls a probe times, each with its path fixed (an Engine is one). */
export interface ProbedCalls {
  /** CPU worker threads: the main job's lines get their last point where each has a chunk. */
  readonly workers: number;
  rleEncode(input: Data, options: { path: 'cpu' | 'gpu' }): Promise<unknown>;
  rleDecode(runs: Runs | DeviceRuns, options: { path: 'cpu' | 'gpu' }): Promise<Data>;
  scan(input: Data, options: { path: 'cpu' | 'gpu' }): Promise<unknown>;
  sort(keys: Data, options: { path: 'cpu' | 'gpu' }): Promise<unknown>;
  compress(input: Data, options: { path: 'cpu' | 'gpu' }): Promise<unknown>;
  decompress(bytes: Uint8Array, options: { path: 'cpu' | 'gpu'; to?: 'device' }): Promise<Data>;
}

/**
 * Micro-benchmarks of each path on synthetic data: bytes in runs of 1 to 31 (mean 16) of
 * pseudo-random values (what RLE and the codecs' choices see in the main job's data; an
 * incrementing pattern is coded by delta far faster than such data), or pseudo-random u32 keys.
 * Inputs are made once per size and reused (their pages touched: a fresh array costs page faults
 * that a caller's data has paid already), larger ones by repeating a 1 MiB pattern; the upload
 * and readback go through gpu.upload and gpu.download, the engine's own paths (the staging ring,
 * whole-size staging pieces from 32 MiB).
 */
export function makeProbe(calls: ProbedCalls, cpu: CpuPath, gpu: GpuContext): CalibrationProbe {
  const PATTERN = 1 << 20;
  const pattern = (keys: boolean): Uint8Array => {
    const u8 = new Uint8Array(PATTERN);
    let s = keys ? 7 : 1;
    if (keys) {
      const u32 = new Uint32Array(u8.buffer);
      for (let i = 0; i < u32.length; i++) u32[i] = s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
      return u8;
    }
    for (let i = 0, v = 0; i < PATTERN;) {
      s = (Math.imul(s, 1103515245) + 12345) >>> 0;
      const len = 1 + ((s >>> 8) % 31);
      v = (v + 1 + (s % 200)) & 255;
      u8.fill(v, i, Math.min(PATTERN, i + len));
      i += len;
    }
    return u8;
  };
  const patterns = new Map<boolean, Uint8Array>();
  const samples = new Map<string, ParleArray>();
  const sample = (op: CostOp | 'transfer', bytes: number): ParleArray => {
    const keys = op === 'sort' || op === 'scan';
    const id = `${keys ? 'keys' : 'runs'} ${bytes}`;
    let made = samples.get(id);
    if (made === undefined) {
      let p = patterns.get(keys);
      if (p === undefined) patterns.set(keys, (p = pattern(keys)));
      const u8 = new Uint8Array(bytes);
      u8.set(p.subarray(0, Math.min(bytes, PATTERN)));
      for (let filled = Math.min(bytes, PATTERN); filled < bytes; filled *= 2) u8.copyWithin(filled, 0, Math.min(filled, bytes - filled));
      made = keys ? new Uint32Array(u8.buffer, 0, bytes >> 2) : u8;
      samples.set(id, made);
    }
    return made;
  };
  const time = async (fn: () => Promise<unknown>) => {
    const t0 = performance.now();
    await fn();
    return performance.now() - t0;
  };
  // containers of the decompress probes, made once per size (not part of what is timed)
  const containers = new Map<number, Promise<Uint8Array>>();
  const container = (bytes: number) => {
    let packed = containers.get(bytes);
    if (packed === undefined)
      containers.set(
        bytes,
        (packed = compressArray(cpu, sample('decompress', bytes), compressSettingsWith({ chunkBytes: DEFAULT_CHUNK_BYTES }))),
      );
    return packed;
  };
  // Each op runs through its public method with the path fixed (validation, routing, the
  // result's delivery included: what the model predicts is a caller's call; on the H200 host a
  // 4 KiB rleEncode took 0.034 ms through the CPU path's kernel call, 0.092 ms through the
  // engine). The history those calls leave is cleared when the rates are set.
  const probeGpu = async (op: CostOp, bytes: number): Promise<number> => {
    if (!GPU_OPS.has(op)) return Infinity;
    if (bytes > gpu.limits.maxStorageBufferBindingSize) return Infinity; // no point (compressFromDevice: TOO_LARGE)
    if (op === 'decompress') {
      const packed = await container(bytes);
      return time(async () => ((await calls.decompress(packed, { path: 'gpu', to: 'device' })) as DeviceArray).destroy());
    }
    const input = await gpu.upload(sample(op, bytes));
    await gpu.device.queue.onSubmittedWorkDone(); // (not the upload's copy in the op's time)
    try {
      if (op === 'rleDecode') {
        const runs = await rleEncodeOnGpu(gpu, input);
        try {
          return await time(async () => ((await calls.rleDecode(runs, { path: 'gpu' })) as DeviceArray).destroy());
        } finally {
          runs.values.destroy();
          runs.lengths.destroy();
        }
      }
      return await time(async () => destroyAll(await runOp(calls, op, input, 'gpu')));
    } finally {
      input.destroy();
    }
  };
  return {
    cpu: async (op: CostOp, bytes: number) => {
      const input = sample(op, bytes);
      if (op === 'rleDecode') {
        const runs = await rleEncodeOnCpu(cpu, input);
        return time(() => calls.rleDecode(runs, { path: 'cpu' }));
      }
      if (op === 'decompress') {
        const packed = await container(bytes);
        return time(() => calls.decompress(packed, { path: 'cpu' }));
      }
      return time(() => runOp(calls, op, input, 'cpu'));
    },
    gpu: (op: CostOp, bytes: number) => probeGpu(op, bytes),
    upload: async (bytes: number) => {
      const data = sample('transfer', bytes);
      let d: DeviceArray | undefined;
      const ms = await time(async () => (d = await gpu.upload(data)));
      d?.destroy();
      return ms;
    },
    warmUp: async () => {
      for (const op of OPS) if (GPU_OPS.has(op)) await probeGpu(op, 64);
    },
    // the CPU path splits compress and decompress into chunks, one a worker at a time
    poolBytes: Math.max(1, calls.workers) * DEFAULT_CHUNK_BYTES,
    // Into a new array, as a caller's readback: up to FRESH_RESULT_BYTES its memory is reused
    // once earlier arrays are collected (hence READBACK_MID_RUNS runs at 16 MiB, the best kept:
    // 13.5, 11, 10.3 and 5.5 ms on the H200 host as garbage collection freed them); past it,
    // fresh pages on every call. Neither a reused array nor one reused and cleared (what calloc
    // does with memory that comes back) is what a caller's steady calls see: on an H100 host a
    // 16 MiB readback took 2.56 ms into a reused array cleared after it, 8.7-17 into new arrays
    // in a row, and 5.1-6.5 in a caller's interleaved calls (bench/cost-model.mjs), as the
    // collector had given memory back or not.
    readback: async (bytes: number) => {
      const d = await gpu.upload(sample('transfer', bytes));
      try {
        await gpu.device.queue.onSubmittedWorkDone(); // (not the upload's copy in the time)
        return await time(() => gpu.download(d));
      } finally {
        d.destroy();
      }
    },
  };
}

/** rleEncode, scan, sort or compress of `input` through its public method on `path`, for calibration. */
function runOp(calls: ProbedCalls, op: CostOp, input: Data, path: 'cpu' | 'gpu'): Promise<unknown> {
  switch (op) {
    case 'rleEncode':
      return calls.rleEncode(input, { path });
    case 'scan':
      return calls.scan(input, { path });
    case 'sort':
      return calls.sort(input, { path });
    case 'compress':
      return calls.compress(input, { path });
    default:
      throw new Error(`no probe for ${op}`);
  }
}

/**
 * @internal Destroys `value` if it is a DeviceArray, or the DeviceArrays among an object's own
 * values (an op's result: DeviceRuns, sorted keys and values); anything else, typed arrays
 * included, is left alone.
 */
export function destroyAll(value: unknown): void {
  if (value instanceof DeviceArray) value.destroy();
  // (not a typed array's elements: Object.values of a GPU compress's container took 20 ms at
  // 16 MiB on the H200 host, inside the calibration's timing, so its GPU compress line came out
  // at 1.5 ms per MiB against 0.2 steady, and the cold choice went to the CPU)
  else if (value && typeof value === 'object' && !ArrayBuffer.isView(value)) {
    for (const v of Object.values(value)) if (v instanceof DeviceArray) v.destroy();
  }
}
