/**
 * The cost model: predicted milliseconds of each path for one call, from where the data lives,
 * where the result is wanted, and calibrated rates of this machine.
 *
 *   time(path) = moves + kernel
 *   moves      = the link transfers the path needs: an upload when host data goes to the GPU, a
 *                readback when device data goes to the CPU or a GPU result is wanted on the host
 *   transfer   = latency + bytes / bandwidth                  (per direction: upload, readback)
 *   kernel     = a + b * bytes                                  (per op, element width and path)
 *
 * The kernel line's intercept `a` is the fixed cost of a call (dispatch, a worker round trip);
 * together with `b` it also gives the size-dependent throughput a GPU shows (low for small
 * inputs). Both come from calibration (ts/cost/calibration.ts) at two sizes and are refined
 * online from observed times: a few samples per op, path and size bucket (a power of 4), the
 * median of the last five, so outliers do not move it (StarPU's history-based models are the
 * reference: Augonnet et al., "StarPU: a unified platform for task scheduling on heterogeneous
 * multicore architectures", 2011).
 */

/** Operations the model knows. */
export type CostOp = 'rleEncode' | 'rleDecode' | 'scan' | 'sort' | 'compress' | 'decompress';
export const COST_OPS: readonly CostOp[] = ['rleEncode', 'rleDecode', 'scan', 'sort', 'compress', 'decompress'];

/** Where data is or is wanted. */
export type Location = 'host' | 'device';

/** A straight line: milliseconds = fixedMs + msPerByte * bytes. */
export interface Line {
  fixedMs: number;
  msPerByte: number;
}

/** The rates one calibration measured. */
export interface Rates {
  /** Kernel lines of the CPU path (the worker pool), per op. */
  cpu: Record<CostOp, Line>;
  /** Kernel lines of the GPU path, per op that has a GPU kernel; null without a GPU. */
  gpu: Partial<Record<CostOp, Line>> | null;
  /** Host to device. */
  upload: Line | null;
  /** Device to host. */
  readback: Line | null;
}

/** One call to predict. Bytes are of the input; result bytes are an estimate. */
export interface CallShape {
  op: CostOp;
  inputBytes: number;
  resultBytes: number;
  inputLocation: Location;
  resultLocation: Location;
}

/** What the model says of a call. */
export interface Prediction {
  path: 'cpu' | 'gpu';
  predictedMs: { cpu: number; gpu: number | null };
  reason: string;
}

const at = (line: Line, bytes: number) => line.fixedMs + line.msPerByte * bytes;

/** Size bucket of the online history: powers of 4 bytes. */
function bucket(bytes: number): number {
  return Math.floor(Math.log2(Math.max(1, bytes)) / 2);
}

const HISTORY = 5;
const MIN_SAMPLES = 3;

export class CostModel {
  private readonly history = new Map<string, number[]>();

  constructor(
    /** The calibrated rates. */
    public rates: Rates,
  ) {}

  /** Kernel time of `op` on `path` for `bytes`: the observed median of the bucket when there is one. */
  kernelMs(op: CostOp, path: 'cpu' | 'gpu', bytes: number): number | null {
    const line = path === 'cpu' ? this.rates.cpu[op] : this.rates.gpu?.[op];
    if (!line) return null;
    // Samples are ratios of observed to calibrated time; their median corrects the line.
    const observed = this.history.get(`${op}/${path}/${bucket(bytes)}`);
    if (observed && observed.length >= MIN_SAMPLES) {
      const sorted = [...observed].sort((x, y) => x - y);
      return at(line, bytes) * sorted[sorted.length >> 1];
    }
    return at(line, bytes);
  }

  /** Predicted ms of every path and the one `auto` takes. A tie goes to where the data is. */
  predict(call: CallShape): Prediction {
    const { op, inputBytes, resultBytes, inputLocation, resultLocation } = call;
    const cpuKernel = this.kernelMs(op, 'cpu', inputBytes) as number;
    const readback = this.rates.readback;
    const upload = this.rates.upload;
    const cpu =
      (inputLocation === 'device' && readback ? at(readback, inputBytes) : 0) +
      cpuKernel +
      (resultLocation === 'device' && upload ? at(upload, resultBytes) : 0);
    const gpuKernel = this.kernelMs(op, 'gpu', inputBytes);
    if (gpuKernel === null || !upload || !readback) {
      return { path: 'cpu', predictedMs: { cpu, gpu: null }, reason: 'no GPU path on this engine, so the CPU path runs' };
    }
    const gpu =
      (inputLocation === 'host' ? at(upload, inputBytes) : 0) + gpuKernel + (resultLocation === 'host' ? at(readback, resultBytes) : 0);
    const tie = Math.abs(cpu - gpu) <= 0.02 * Math.min(cpu, gpu);
    const path: 'cpu' | 'gpu' = tie ? (inputLocation === 'device' ? 'gpu' : 'cpu') : cpu < gpu ? 'cpu' : 'gpu';
    const ms = (x: number) => `${x < 1 ? x.toFixed(3) : x.toFixed(1)} ms`;
    const where = `input on the ${inputLocation === 'host' ? 'host' : 'GPU'}, result wanted on the ${resultLocation === 'host' ? 'host' : 'GPU'}`;
    const reason = tie
      ? `${where}: both paths predict about ${ms(cpu)}; the data stays where it is (${path})`
      : `${where}: ${path} predicts ${ms(path === 'cpu' ? cpu : gpu)} against ${ms(path === 'cpu' ? gpu : cpu)} on the ${path === 'cpu' ? 'GPU' : 'CPU'}`;
    return { path, predictedMs: { cpu, gpu }, reason };
  }

  /** Records an observed kernel time (moves excluded) for online refinement. */
  observe(op: CostOp, path: 'cpu' | 'gpu', bytes: number, ms: number): void {
    const line = path === 'cpu' ? this.rates.cpu[op] : this.rates.gpu?.[op];
    if (!line || !(ms >= 0) || !(bytes > 0)) return;
    const key = `${op}/${path}/${bucket(bytes)}`;
    const samples = this.history.get(key) ?? [];
    samples.push(ms / at(line, bytes));
    if (samples.length > HISTORY) samples.shift();
    this.history.set(key, samples);
  }
}

/**
 * Rates to use without calibration (`calibration: 'skip'`): conservative figures of the
 * development machine (2 cores, SwiftShader as the GPU), so `auto` keeps host data on the CPU
 * unless it is large and already on the GPU.
 */
export function defaultRates(hasGpu: boolean): Rates {
  const cpuLine = (gbps: number): Line => ({ fixedMs: 0.005, msPerByte: 1 / (gbps * 1e6) });
  const gpuLine = (gbps: number): Line => ({ fixedMs: 0.5, msPerByte: 1 / (gbps * 1e6) });
  const cpu: Record<CostOp, Line> = {
    rleEncode: cpuLine(2),
    rleDecode: cpuLine(2),
    scan: cpuLine(2),
    sort: cpuLine(0.3),
    compress: cpuLine(1),
    decompress: cpuLine(1),
  };
  if (!hasGpu) return { cpu, gpu: null, upload: null, readback: null };
  const gpu: Partial<Record<CostOp, Line>> = {
    rleEncode: gpuLine(1),
    rleDecode: gpuLine(1),
    scan: gpuLine(1),
    sort: gpuLine(0.1),
  };
  return { cpu, gpu, upload: { fixedMs: 0.1, msPerByte: 1 / 1e6 }, readback: { fixedMs: 0.1, msPerByte: 1 / 1e6 } };
}

/** The straight line through two measured points (bytes, ms); slope and intercept kept >= 0. */
export function fitLine(small: [number, number], large: [number, number]): Line {
  const [b1, t1] = small;
  const [b2, t2] = large;
  const msPerByte = Math.max((t2 - t1) / Math.max(1, b2 - b1), t2 / Math.max(1, b2) / 4, 1e-12);
  const fixedMs = Math.max(0, t1 - msPerByte * b1);
  return { fixedMs, msPerByte };
}
