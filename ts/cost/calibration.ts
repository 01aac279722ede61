/**
 * Calibration: short micro-benchmarks at first use (<= about 300 ms in all) that fit the cost
 * model's lines (ts/cost/model.ts), stored per machine and adapter and reused by later runs.
 * A record is redone when its key changes: parle's version, the CPU, the worker count, or the
 * adapter (vendor, architecture, device, description, which carries the driver).
 */
import { COST_OPS, defaultRates, fitLine, withUpper, type CostOp, type Line, type Rates } from './model.js';

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

/**
 * A stored calibration. Format 2: lines may carry an upper segment, and rleDecode's lines scale
 * with the decoded bytes (records of format 1 are measured again).
 */
export interface CalibrationRecord {
  format: 2;
  key: string;
  measuredAt: string;
  /** Milliseconds the measurements took (the budget's part). */
  tookMs: number;
  /** Milliseconds of the GPU warm-up (pipeline compilation) before them. */
  warmUpMs?: number;
  rates: Rates;
}

/**
 * Input sizes of the points of each line: every line at `small` and `large`; compress,
 * decompress and the transfers also at `huge` while the budget lasts (an upper segment).
 */
export const CALIBRATION_SIZES = { small: 16 << 10, large: 1 << 20, huge: 16 << 20 } as const;

/** The ops whose lines get the third point: the main job's. */
const HUGE_OPS: readonly CostOp[] = ['compress', 'decompress'];

/** The smaller of two runs: the first may pay for compilation or page faults. */
async function best(measure: () => Promise<number>): Promise<number> {
  const first = await measure();
  return Math.min(first, await measure());
}

/**
 * Measures every line: the transfers and the CPU at two sizes, then each GPU kernel at the
 * small size, then, while the budget lasts, at the large one, then the main job's lines
 * (compress and decompress on both paths, the transfers) at a third size for an upper segment.
 * A line measured at one point only goes through the origin (conservative for a GPU, whose
 * throughput grows with size). Lines not measured before the budget (`budgetMs`, default 300)
 * runs out keep the defaults, and a measurement whose predicted time would pass what is left
 * is skipped. Each measurement is the better of two runs (the first pays for page faults, a
 * cold cache). Before the budget starts, each CPU op runs once at the small size (the
 * WebAssembly and JavaScript compilers' tiers) and the GPU's pipelines compile in the probe's
 * warm-up (on an H200 the compilation took longer than all the measurements together).
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
  // the CPU path's first calls pay for compilation tiers: once each, outside the budget
  for (const op of COST_OPS) await probe.cpu(op, CALIBRATION_SIZES.small);
  const warmUpMs = performance.now() - warmStart;
  const started = performance.now();
  const left = () => budget - (performance.now() - started);
  const { small, large, huge } = CALIBRATION_SIZES;
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
  // third points: the upper segment of a line from `large` to `huge`, when it fits what is left
  const upper =
    (measure: (bytes: number) => Promise<number>, get: () => Line | undefined, set: (l: Line) => void): Step =>
    async () => {
      const line = get();
      if (line === undefined) return;
      const atLarge = line.fixedMs + line.msPerByte * large;
      const guess = line.fixedMs + line.msPerByte * huge;
      if (2 * guess > left()) return; // two runs of it would not fit
      const t = await best(() => measure(huge));
      if (Number.isFinite(t)) set(withUpper(line, [large, atLarge], [huge, t]));
    };
  if (hasGpu) {
    steps.push(
      upper(
        (b) => probe.upload!(b),
        () => rates.upload ?? undefined,
        (l) => (rates.upload = l),
      ),
    );
    steps.push(
      upper(
        (b) => probe.readback!(b),
        () => rates.readback ?? undefined,
        (l) => (rates.readback = l),
      ),
    );
  }
  for (const op of HUGE_OPS) {
    steps.push(
      upper(
        (b) => probe.cpu(op, b),
        () => rates.cpu[op],
        (l) => (rates.cpu[op] = l),
      ),
    );
    if (hasGpu)
      steps.push(
        upper(
          (b) => probe.gpu!(op, b),
          () => rates.gpu![op],
          (l) => (rates.gpu![op] = l),
        ),
      );
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
