/**
 * Calibration: short micro-benchmarks at first use (<= about 300 ms in all) that fit the cost
 * model's lines (ts/cost/model.ts), stored per machine and adapter and reused by later runs.
 * A record is redone when its key changes: parle's version, the CPU, the worker count, or the
 * adapter (vendor, architecture, device, description, which carries the driver).
 */
import { COST_OPS, defaultRates, fitLine, type CostOp, type Line, type Rates } from './model.js';

/** Runs one measurement and resolves to its milliseconds (the engine supplies these). */
export interface CalibrationProbe {
  cpu(op: CostOp, bytes: number): Promise<number>;
  gpu?(op: CostOp, bytes: number): Promise<number>;
  upload?(bytes: number): Promise<number>;
  readback?(bytes: number): Promise<number>;
  /**
   * Runs each GPU op once on a tiny input, before the measurements and outside their budget:
   * the GPU's pipelines compile there (a cost the first GPU call pays in any case).
   */
  warmUp?(): Promise<void>;
}

/** A stored calibration. */
export interface CalibrationRecord {
  format: 1;
  key: string;
  measuredAt: string;
  /** Milliseconds the measurements took (the budget's part). */
  tookMs: number;
  /** Milliseconds of the GPU warm-up (pipeline compilation) before them. */
  warmUpMs?: number;
  rates: Rates;
}

/** Input sizes of the two points of each line. */
export const CALIBRATION_SIZES = { small: 16 << 10, large: 1 << 20 } as const;

/** The smaller of two runs: the first may pay for compilation or page faults. */
async function best(measure: () => Promise<number>): Promise<number> {
  const first = await measure();
  return Math.min(first, await measure());
}

/**
 * Measures every line: the transfers and the CPU at two sizes, then each GPU kernel at the
 * small size, then, while the budget lasts, at the large one. A line measured at one point only
 * goes through the origin (conservative for a GPU, whose throughput grows with size). Lines
 * not measured before the budget (`budgetMs`, default 300) runs out keep the defaults. The
 * first run of each measurement is discarded (it pays for page faults, a cold cache). The GPU's
 * pipelines compile before, in the probe's warm-up, outside the budget (on an H200 the
 * compilation took longer than all the measurements together).
 */
export async function calibrate(
  probe: CalibrationProbe,
  options: { budgetMs?: number; onProgress?: (done: number, total: number) => void } = {},
): Promise<{ rates: Rates; tookMs: number; warmUpMs: number }> {
  const budget = options.budgetMs ?? 300;
  const hasGpu = probe.gpu !== undefined && probe.upload !== undefined && probe.readback !== undefined;
  const rates = defaultRates(hasGpu);
  const warmStart = performance.now();
  if (hasGpu) await probe.warmUp?.();
  const warmUpMs = performance.now() - warmStart;
  const started = performance.now();
  const left = () => budget - (performance.now() - started);
  const { small, large } = CALIBRATION_SIZES;
  type Step = () => Promise<void>;
  const twoPoint =
    (measure: (bytes: number) => Promise<number>, set: (l: Line) => void): Step =>
    async () => {
      const t1 = await best(() => measure(small));
      const t2 = await best(() => measure(large));
      set(fitLine([small, t1], [large, t2]));
    };
  const gpuSmall = new Map<CostOp, number>();
  const steps: Step[] = [];
  if (hasGpu) {
    steps.push(
      twoPoint(
        (b) => probe.upload!(b),
        (l) => (rates.upload = l),
      ),
    );
    steps.push(
      twoPoint(
        (b) => probe.readback!(b),
        (l) => (rates.readback = l),
      ),
    );
  }
  for (const op of COST_OPS)
    steps.push(
      twoPoint(
        (b) => probe.cpu(op, b),
        (l) => (rates.cpu[op] = l),
      ),
    );
  if (hasGpu) {
    for (const op of COST_OPS)
      steps.push(async () => {
        const t = await best(() => probe.gpu!(op, small));
        if (!Number.isFinite(t)) {
          delete rates.gpu![op];
          return;
        }
        gpuSmall.set(op, t);
        rates.gpu![op] = { fixedMs: 0, msPerByte: t / small };
      });
    for (const op of COST_OPS)
      steps.push(async () => {
        const t1 = gpuSmall.get(op);
        if (t1 === undefined || t1 * (large / small) > 4 * left()) return; // would not fit the budget
        const t2 = await best(() => probe.gpu!(op, large));
        rates.gpu![op] = fitLine([small, t1], [large, t2]);
      });
  }
  for (let i = 0; i < steps.length; i++) {
    if (left() <= 0) break;
    await steps[i]();
    options.onProgress?.(i + 1, steps.length);
  }
  return { rates, tookMs: performance.now() - started, warmUpMs };
}

/** The key a record is stored under: everything whose change invalidates the rates. */
export function calibrationKey(parts: { parle: string; cpu: string; workers: number; adapter: string | null }): string {
  return [`parle ${parts.parle}`, parts.cpu, `${parts.workers} workers`, parts.adapter ?? 'no GPU'].join(' | ');
}
