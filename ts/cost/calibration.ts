/**
 * Calibration: short micro-benchmarks at first use that fit the cost model's lines
 * (ts/cost/model.ts), stored per machine and adapter and reused by later runs. A record is redone
 * when its key changes: parle's version, the CPU, the worker count, or the adapter (vendor,
 * architecture, device, description, which carries the driver).
 *
 * Time: a warm-up outside the budget (the GPU's pipelines compile, each op runs once at the first
 * size, the transfers' staging buffers are made), then measurements for at most `budgetMs` of
 * wall clock (DEFAULT_CALIBRATION_BUDGET_MS; data preparation included), most important first.
 */
import { COST_OPS, defaultRates, fitLine, lineThrough, withUpper, type CostOp, type Line, type Rates } from './model.js';

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
  /**
   * Input bytes from which every worker of the CPU path has a chunk of a compress or decompress
   * (workers x chunk bytes): the main job's lines get their last point there (clamped to
   * [CALIBRATION_SIZES.mid, CALIBRATION_SIZES.top]), since a worker pool's throughput grows
   * until then. Without it: CALIBRATION_SIZES.mid.
   */
  poolBytes?: number;
}

/**
 * The format of the stored calibrations (CalibrationRecord) this version writes and reads; a
 * record of another format is measured again.
 */
export const CALIBRATION_FORMAT = 7;

/**
 * A stored calibration. Format 7: as format 6, with the CPU's warm-up before the GPU's (the
 * transfers' small points then follow GPU work, as a caller's readback of a GPU result does) and
 * the transfers warmed up at `small` (CPU_WARM_RUNS: their first calls' 0.3-0.4 ms had been the
 * point). Format 6: measured after a warm-up at the measured sizes (twice at
 * 1 MiB for the GPU), GPU lines from 16 KiB and 16 MiB (three runs; or 1 MiB where 16 MiB did
 * not fit the budget) with upper segments to 64 MiB (the compress's to 256 MiB), the main job's
 * and the upload's upper segments from points up to 64 MiB, the CPU's other ops to 16 MiB, the
 * CPU's small points at 4 KiB as the median of spaced runs (SMALL_RUNS), each op through the
 * engine's public method. Records of formats 1 to 5 are measured again: up to 3 a GPU codec
 * line could hold a first use's cost in its slope, format 4's GPU compress line held a walk over
 * the container's bytes (1.5 ms a MiB against 0.2 on an H200), and format 5's GPU lines of
 * rleEncode, rleDecode, scan and sort took their slopes from 16 KiB and 16 MiB, where a GPU call
 * is mostly fixed cost (an H100's 256 MiB decode of device data predicted at 0.86 ms, 5.4
 * measured). Lines may carry an upper segment; rleDecode's lines scale with the decoded bytes.
 */
export interface CalibrationRecord {
  format: typeof CALIBRATION_FORMAT;
  key: string;
  measuredAt: string;
  /** Milliseconds the measurements took (the budget's part). */
  tookMs: number;
  /** Milliseconds of the warm-up (pipeline compilation, first runs) before them. */
  warmUpMs?: number;
  rates: Rates;
}

/**
 * Input sizes of the calibration points:
 *   - `cpuSmall` and `large`: the CPU's lines (a CPU call of a few KiB is nearly all fixed cost,
 *     and which fixed cost depends on the size: on the H200 host a 16 KiB compress after an
 *     idle pause took 0.5 ms, a 4 KiB one 0.18, as the larger one woke a worker);
 *   - `small` and `large`: the GPU's and the transfers' lines;
 *   - `mid`: every GPU line (below it a GPU's time is mostly fixed cost, so a slope fitted from
 *     16 KiB and 1 MiB says little: on an H200 a GPU compress took 14 ms at both), the main
 *     job's CPU lines (compress, decompress), the readback, and last, if time is left, the CPU's
 *     other ops;
 *   - `top`: where the worker pool is busy (CalibrationProbe.poolBytes, at most this), for the
 *     main job's lines on both paths, and the upload's (uploads of 32 MiB or more go through whole-size staging
 *     pieces, another path than the ring's); and whatever the pool's size, the GPU's other ops
 *     (a GPU call of 16 MiB is still mostly fixed cost: their slopes come from here).
 *   - `gpuTop`: the GPU's compress, last, where the budget allows: its time per byte still falls
 *     past 64 MiB (H200: 0.21 ms a MiB from 16 to 64 MiB, 0.15 at 256 MiB), so the line to 64 MiB
 *     put a 256 MiB compress of host data on the GPU behind the CPU path, which took 1.7x as long.
 * Each line is then straight through its first two points, with an upper segment through its
 * last two from the second-to-last on (see {@link lineFromPoints}).
 */
export const CALIBRATION_SIZES = { cpuSmall: 4 << 10, small: 16 << 10, large: 1 << 20, mid: 16 << 20, top: 64 << 20, gpuTop: 256 << 20 } as const;

/**
 * Default milliseconds of wall clock for the measurements (not the warm-up), once per machine
 * (the rates are stored). On the H200 host (16 workers) 500 ms ran out before the GPU's compress
 * at 16 MiB, whose line through 16 KiB and 1 MiB then predicted 256 MiB at 5x its time; every
 * point there takes about 1.2 s (the two-point lines of every op and transfer about 250 ms, the
 * main job's points at 16 and 64 MiB about 600, the readback at 64 MiB, the CPU's other ops at
 * 16 MiB and the GPU's compress at 256 MiB the rest; a step that starts in time may end past
 * the budget: 1.27-1.51 s measured). Later points (the GPU's other ops at
 * 64 MiB, three runs of each GPU op at 16 MiB, eight of the readback there) made that 1.8-2.6 s
 * on an H100's host (2026-11-25), whose measurements had not fitted 1.2 s before: the CPU's
 * other ops at 16 MiB were left out, and their lines put a 16 MiB CPU sort at 142 ms (21-55
 * measured). A step starts where two of its runs fit what is left (predicted from the line
 * measured so far), and makes its further runs while each fits, so a slow machine (SwiftShader)
 * measures fewer points in the same time and keeps the others' defaults.
 */
export const DEFAULT_CALIBRATION_BUDGET_MS = 2000;

/**
 * The CPU's points at `cpuSmall` and the transfers' at `small`: the median of this many runs,
 * each after a pause of SMALL_CALL_PAUSE_MS. A small call's cost is mostly fixed, and what an
 * application sees is a call after its workers and the JavaScript thread have been idle: on the
 * H200 host a 4 KiB CPU scan took 0.034 ms in a tight loop, 0.065 ms after a 2 ms pause, and the
 * second of two calls (the former point) could still carry the first use's cost (a 16 KiB
 * rleEncode 0.78 ms, steady 0.1).
 */
export const SMALL_RUNS = 5;
/**
 * Runs of the readback at `mid` (the best kept): its new array takes fresh pages until the arrays
 * of earlier runs are collected and their memory comes back. On the H200 host four runs took 13.5,
 * 11, 10.3 and 5.5 ms in one calibration; in another the best of four was 11.7, and the line
 * through it put the readback of a 16 MiB GPU result at twice the 5.5 ms that a caller's steady
 * calls took (a scan of device data to the host predicted 12.1 ms, 6.0 measured). Eight runs on
 * an H100 host: 8.7-17 ms in one calibration, 11.9-17 in another (5.1-6.5 steady).
 */
export const READBACK_MID_RUNS = 8;
/**
 * Runs of each CPU op at `cpuSmall`, and of each transfer at `small`, in the warm-up after its
 * first (at most CPU_WARM_CAP_MS each): until the JavaScript compiler has optimized the host's
 * part of the call (a 16 KiB readback: 0.3-0.4 ms for its first 20 calls in a process, about 0.18
 * from then on, on SwiftShader; calibration, which had made one readback before its points,
 * measured 0.25-0.43 ms on an H100's host and put the CPU path of 4 KiB of device data at
 * 0.45-0.55 ms, 0.23-0.35 measured; warmed up, 0.17-0.30).
 */
export const CPU_WARM_RUNS = 40;
/** Milliseconds of the warm-up's runs of one CPU op at most (a slow machine stops early). */
export const CPU_WARM_CAP_MS = 100;
/** Milliseconds of idle before each of the spaced runs (see SMALL_RUNS). */
export const SMALL_CALL_PAUSE_MS = 2;

/** One measured point of a line: [bytes, milliseconds]. */
type Point = [number, number];

/**
 * The line through measured points (sorted by size): straight through the first two, never
 * below the first's time (`floorMs`); with three or more, an upper segment through the last two
 * from the second-to-last's size on (a GPU's and a worker pool's throughput still grow past the
 * first two sizes). One point: through it with
 * `fallback`'s slope (its fixed cost is then the point's time less that slope's part, never all
 * of the time put in the slope: a 16 KiB point is mostly fixed cost). No point: `fallback`.
 */
export function lineFromPoints(points: readonly Point[], fallback: Line): Line {
  const ps = points.filter(([b, t]) => Number.isFinite(b) && b > 0 && Number.isFinite(t) && t >= 0).sort((x, y) => x[0] - y[0]);
  if (ps.length === 0) return { fixedMs: fallback.fixedMs, msPerByte: fallback.msPerByte };
  if (ps.length === 1) return lineThrough(ps[0], fallback.msPerByte);
  // below the first point a call costs what it costs there (mostly fixed cost: on the H200 host a
  // line through 16 KiB and 1 MiB put a 4 KiB CPU sort at 0.03 ms, which took 0.12)
  const lower = { ...fitLine(ps[0], ps[1]), floorMs: ps[0][1] };
  if (ps.length === 2) return lower;
  return withUpper(lower, ps[ps.length - 2], ps[ps.length - 1]);
}

/**
 * Measures the lines. First a warm-up, outside the budget: each CPU op at `cpuSmall` until the
 * JavaScript and WebAssembly compilers have optimized it (CPU_WARM_RUNS), the probe's own (the
 * GPU's pipelines), then each GPU op twice at `small` (pipelines of the codecs the data picks,
 * pooled buffers: on an H200 the first GPU decompress of 16 KiB took 152 ms, the next 10 ms;
 * their small points come from here), each GPU op twice at `large` where that is not too slow
 * (the guess of what `mid` costs), one upload and readback of 1 MiB (staging buffers), and each
 * transfer at `small` CPU_WARM_RUNS times (the host's code compiled).
 *
 * Then, while the budget (`budgetMs`, default DEFAULT_CALIBRATION_BUDGET_MS, wall clock) lasts,
 * in this order: the transfers at `small` and `large`; every GPU op at `mid` (compress and
 * decompress first; three runs), the upload at `top`, compress and decompress on the GPU at the
 * pool's size (three runs), the GPU's other ops at `top` and the readback at `mid`
 * (READBACK_MID_RUNS runs; right after the warm-up, while the GPU's clock is up); the CPU ops at
 * `cpuSmall` and `large`; compress and decompress on the CPU at `mid` and at the pool's size;
 * the CPU's other ops at `mid`; the readback at `top`; the GPU's compress at `gpuTop`. A step
 * starts only if two of its runs fit what is left, predicted from the line measured so far (from
 * a single point, in proportion to size), and makes each further run that fits, predicted with
 * the step's own runs; the spaced runs of a median only all together. Each point is the best of
 * its runs (the first may pay for page faults, a cold cache, a pool's growth), except the CPU's
 * at `cpuSmall` and the transfers' at `small`: the median of SMALL_RUNS runs after a pause each
 * (replacing the warm-up's). Lines keep the defaults (defaultRates) where nothing was measured.
 */
export async function calibrate(
  probe: CalibrationProbe,
  options: { budgetMs?: number; onProgress?: (done: number, total: number) => void } = {},
): Promise<{ rates: Rates; tookMs: number; warmUpMs: number }> {
  const budget = options.budgetMs ?? DEFAULT_CALIBRATION_BUDGET_MS;
  const hasGpu = probe.gpu !== undefined && probe.upload !== undefined && probe.readback !== undefined;
  const defaults = defaultRates(hasGpu);
  const { cpuSmall, small, large, mid } = CALIBRATION_SIZES;
  const top = Math.min(CALIBRATION_SIZES.top, Math.max(mid, probe.poolBytes ?? mid));
  const transferTop = CALIBRATION_SIZES.top;

  // the measured points of each line, by key: upload, readback, cpu/<op>, gpu/<op>
  const points = new Map<string, Point[]>();
  const add = (key: string, bytes: number, ms: number) => {
    if (!Number.isFinite(ms) || ms < 0) return;
    const ps = points.get(key) ?? [];
    const same = ps.find((p) => p[0] === bytes);
    if (same) same[1] = Math.min(same[1], ms);
    else ps.push([bytes, ms]);
    points.set(key, ps);
  };
  const fallbackOf = (key: string): Line | undefined => {
    if (key === 'upload') return defaults.upload ?? undefined;
    if (key === 'readback') return defaults.readback ?? undefined;
    const [path, op] = key.split('/') as ['cpu' | 'gpu', CostOp];
    return path === 'cpu' ? defaults.cpu[op] : defaults.gpu?.[op];
  };
  const lineOf = (key: string): Line | undefined => {
    const fallback = fallbackOf(key);
    let ps = points.get(key) ?? [];
    // a GPU line's `large` point (the warm-up's one run, the first at that size) only guessed what `mid` costs
    if (key.startsWith('gpu/') && ps.some(([b]) => b >= mid)) ps = ps.filter(([b]) => b !== large);
    return fallback && lineFromPoints(ps, fallback);
  };
  /** What a run of `key` at `bytes` should take, for the budget: from one point, in proportion to size. */
  const predictMs = (key: string, bytes: number): number => {
    const ps = (points.get(key) ?? []).filter(([b]) => b <= bytes);
    if (ps.length === 1) return (ps[0][1] * bytes) / ps[0][0];
    const l = lineOf(key);
    if (!l) return Infinity;
    return l.upper !== undefined && bytes >= l.upper.fromBytes
      ? l.upper.fixedMs + l.upper.msPerByte * bytes
      : l.fixedMs + l.msPerByte * bytes;
  };
  const measureOf = (key: string): ((bytes: number) => Promise<number>) => {
    if (key === 'upload') return (b) => probe.upload!(b);
    if (key === 'readback') return (b) => probe.readback!(b);
    const [path, op] = key.split('/') as ['cpu' | 'gpu', CostOp];
    return path === 'cpu' ? (b) => probe.cpu(op, b) : (b) => probe.gpu!(op, b);
  };
  const gpuKeys = hasGpu ? COST_OPS.map((op) => `gpu/${op}`) : [];
  const cpuKeys = COST_OPS.map((op) => `cpu/${op}`);
  const transferKeys = hasGpu ? ['upload', 'readback'] : [];

  // ---- warm-up, outside the budget ----
  const warmStart = performance.now();
  /** Runs `key` at `bytes` until its host code is compiled: CPU_WARM_RUNS times, CPU_WARM_CAP_MS at most. */
  const warm = async (key: string, bytes: number) => {
    const measure = measureOf(key);
    const until = performance.now() + CPU_WARM_CAP_MS;
    for (let r = 0; r < CPU_WARM_RUNS && performance.now() < until; r++) await measure(bytes);
  };
  // each CPU op at `cpuSmall` until its code is compiled: the first run is the first use, then up to
  // CPU_WARM_RUNS more (on the development machine a 16 KiB CPU compress took 0.7 ms for its
  // first 5 calls, 0.12 from the 35th on, as the JavaScript compiler optimized the codec's code;
  // on the H200 host 0.18 from about the 20th). Before the GPU's warm-up, so that GPU work leads
  // into the measurements, as it leads into a caller's readback of a GPU result: on an H100 a
  // 16 KiB readback took 0.5-0.6 ms after 600 ms of CPU calls and 0.2 after recent GPU work
  // (cost-diagnosis.mjs small, in git history; the SM clock at its floor in both)
  for (const key of cpuKeys) {
    add(key, cpuSmall, await measureOf(key)(cpuSmall));
    await warm(key, cpuSmall);
  }
  if (hasGpu) {
    await probe.warmUp?.();
    // twice at `small` (the first run pays for the first use: 111 ms against 18 for an H200's compress)
    for (const key of gpuKeys) add(key, small, await measureOf(key)(small));
    for (const key of gpuKeys) if (points.get(key)?.length) add(key, small, await measureOf(key)(small));
    // twice at `large` too (the better run kept), where 64 times the `small` time fits twice the
    // budget (on SwiftShader a 1 MiB sort takes seconds): not a point of the line once `mid` is
    // measured, but what tells whether `mid` fits (a fast GPU's time hardly grows to 1 MiB, a
    // software one's does), and the line's second point when `mid` does not fit. One run was
    // not enough: an H200's first GPU compress at 1 MiB took 12 ms, its later ones 5, and the
    // line through that first run predicted 1987 ms for 256 MiB (85 measured), so `mid` looked
    // too dear to measure and the cold choice of compress went to the CPU up to 256 MiB.
    for (const key of gpuKeys) {
      const t = points.get(key)?.[0]?.[1];
      if (t !== undefined && t * (large / small) <= 2 * budget) {
        add(key, large, await measureOf(key)(large));
        add(key, large, await measureOf(key)(large));
      }
    }
    for (const key of transferKeys) await measureOf(key)(large);
    // the first upload past the ring makes its staging piece (about 54 ms on the H200 host):
    // not a measurement of the line
    await measureOf('upload')(transferTop);
    // the transfers at `small` until their host code is compiled (their points come next)
    for (const key of transferKeys) await warm(key, small);
  }
  const warmUpMs = performance.now() - warmStart;
  const unsupported = new Set(gpuKeys.filter((k) => !(points.get(k)?.length ?? 0)));

  // ---- measurements, within the budget ----
  const started = performance.now();
  const left = () => budget - (performance.now() - started);
  interface Step {
    key: string;
    bytes: number;
    /** Runs: the point is the best of them, or with `spaced` their median. */
    runs: number;
    spaced?: boolean;
  }
  const steps: Step[] = [];
  const push = (keys: readonly string[], bytes: number, runs = 2, spaced = false) => {
    for (const key of keys) if (!unsupported.has(key)) steps.push({ key, bytes, runs, spaced });
  };
  const main = (path: 'cpu' | 'gpu') => [`${path}/compress`, `${path}/decompress`];
  const others = (path: 'cpu' | 'gpu') => COST_OPS.filter((op) => op !== 'compress' && op !== 'decompress').map((op) => `${path}/${op}`);
  push(transferKeys, small, SMALL_RUNS, true);
  push(transferKeys, large);
  // The GPU's large points next, while the warm-up's load keeps its clock up (its SM clock falls
  // to 345-630 MHz when idle on an H200; the CPU's points are half a second of an idle GPU).
  // Three runs each: the first at a size makes its buffers (an H100's 16 MiB scan: 2.08 ms, then
  // 0.39), and once both of two runs took 1.94 ms, a line that put the scan of 16 MiB of device
  // data at 1.94 ms (0.50 measured) and of 256 MiB at 23 (4.1).
  if (hasGpu) push([...main('gpu'), ...others('gpu')], mid, 3);
  push(transferKeys.slice(0, 1), transferTop);
  // three runs at the pool's size: the first of a GPU compress of 64 MiB took 28 ms, the second
  // 17, a call of 256 MiB 41 (H200)
  if (top > mid && hasGpu) push(main('gpu'), top, 3);
  // the GPU's other ops at `top` too: at 16 MiB a GPU call is still mostly fixed cost, so the
  // slope through 16 KiB and 16 MiB is noise (an H100's 16 MiB decode took no longer than its
  // 16 KiB one, and the line put a 256 MiB decode of device data at 0.86 ms, 5.4 measured;
  // another calibration's slow 16 MiB scan put a 256 MiB one at 23 ms, 4.1 measured)
  if (hasGpu) push(others('gpu'), transferTop);
  // READBACK_MID_RUNS runs: a readback's new array takes fresh pages until the arrays of earlier
  // runs are collected and their memory comes back
  push(transferKeys.slice(1), mid, READBACK_MID_RUNS);
  push(cpuKeys, cpuSmall, SMALL_RUNS, true); // in place of the warm-up's run (the first use)
  push(cpuKeys, large);
  push(main('cpu'), mid);
  // the main job's CPU lines to the pool's size: a 256 MiB compress on 16 workers was predicted
  // at twice its time from 1 and 16 MiB alone (H200 host)
  if (top > mid) push(main('cpu'), top);
  // the CPU's other ops at `mid` too: their time per byte grows past 1 MiB (out of the caches,
  // results in fresh memory), and the line through 4 KiB and 1 MiB put an H200 host's 16 MiB
  // scan at 7.3 ms, which took 12.5 (the GPU path's 7.3 was then not chosen), and an H100 host's
  // 16 MiB sort at 142-180 ms (21-55 measured; two runs predicted so had not fitted the budget)
  push(others('cpu'), mid);
  // the readback past the sizes whose memory is reused: a 256 MiB result takes fresh pages on
  // every call (the H200 host fills them at about 1.4 GB/s)
  push(transferKeys.slice(1), transferTop);
  if (hasGpu) push(['gpu/compress'], CALIBRATION_SIZES.gpuTop);

  for (let i = 0; i < steps.length; i++) {
    if (left() <= 0) break;
    const { key, bytes, runs, spaced } = steps[i];
    const measure = measureOf(key);
    if (spaced) {
      // a median: all of its runs or none
      if (runs * (predictMs(key, bytes) + SMALL_CALL_PAUSE_MS) <= left()) {
        const times: number[] = [];
        for (let r = 0; r < runs; r++) {
          await new Promise((resolve) => setTimeout(resolve, SMALL_CALL_PAUSE_MS));
          times.push(await measure(bytes));
        }
        times.sort((a, b) => a - b);
        const ps = points.get(key) ?? [];
        points.set(key, [...ps.filter((p) => p[0] !== bytes), [bytes, times[times.length >> 1]]]);
      }
    } else {
      // a best of runs: started where two runs fit (the first at a size may pay for its buffers),
      // then each further run that fits, predicted from the runs before it
      if (Math.min(runs, 2) * predictMs(key, bytes) <= left()) {
        for (let r = 0; r < runs && (r < 2 || predictMs(key, bytes) <= left()); r++) add(key, bytes, await measure(bytes));
      }
    }
    options.onProgress?.(i + 1, steps.length);
  }
  const tookMs = performance.now() - started;

  const rates = defaults;
  for (const op of COST_OPS) rates.cpu[op] = lineOf(`cpu/${op}`)!;
  // the main job's CPU lines measured where every worker has a chunk: no faster per byte past it
  for (const op of ['compress', 'decompress'] as const) {
    const ps = points.get(`cpu/${op}`) ?? [];
    const last = ps.reduce<Point | undefined>((a, p) => (a === undefined || p[0] > a[0] ? p : a), undefined);
    if (probe.poolBytes !== undefined && last !== undefined && last[0] >= probe.poolBytes && last[0] >= mid) {
      rates.cpu[op] = { ...rates.cpu[op], saturated: { fromBytes: last[0], msPerByte: last[1] / last[0] } };
    }
  }
  if (hasGpu) {
    for (const op of COST_OPS) {
      if (unsupported.has(`gpu/${op}`)) delete rates.gpu![op];
      else rates.gpu![op] = lineOf(`gpu/${op}`)!;
    }
    rates.upload = lineOf('upload')!;
    rates.readback = lineOf('readback')!;
  }
  return { rates, tookMs, warmUpMs };
}

/** The key a record is stored under: everything whose change invalidates the rates. */
export function calibrationKey(parts: { parle: string; cpu: string; workers: number; adapter: string | null }): string {
  return [`parle ${parts.parle}`, parts.cpu, `${parts.workers} workers`, parts.adapter ?? 'no GPU'].join(' | ');
}
