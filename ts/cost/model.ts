/**
 * The cost model: predicted milliseconds of each path for one call, from where the data lives,
 * where the result is wanted, and calibrated rates of this machine.
 *
 *   time(path) = moves + kernel
 *   moves      = the link transfers the path needs: an upload when host data goes to the GPU, a
 *                readback when device data goes to the CPU or a GPU result is wanted on the host
 *   transfer   = latency + bytes / bandwidth                  (per direction: upload, readback;
 *                latency once per array: runs are two, values and lengths)
 *   kernel     = a + b * bytes                                  (per op, element width and path)
 *
 * The kernel line's intercept `a` is the fixed cost of a call (dispatch, a worker round trip);
 * together with `b` it also gives the size-dependent throughput a GPU shows (low for small
 * inputs). Both come from calibration (ts/cost/calibration.ts) at two sizes or more and are refined
 * online from observed times, at two levels (StarPU's history-based models are the reference:
 * Augonnet et al., "StarPU: a unified platform for task scheduling on heterogeneous multicore
 * architectures", 2011):
 *   - calls: per op, path, input and result location and size bucket (a power of 4 bytes), the
 *     ratio of the whole call's observed time (moves included) to the calibrated prediction;
 *     with 3 or more samples, the median of the last five scales that path's prediction;
 *   - kernels: the same per op, path and size bucket, from the calls that move nothing on their
 *     path (movesNothing: what calibration timed for the kernel's line), applied to the kernel
 *     part of calls of the other location pairs where no call of that shape was seen.
 * Medians of a few samples keep one outlier from moving a prediction.
 *
 * For `decompress` the bytes are the decoded size (from the container's header), and its GPU
 * line covers the whole GPU decode from host bytes (the container's upload and its decode on
 * the GPU): no separate upload is added. Compress's GPU line covers the call
 * from device elements to the container on the host: no readback is added. For `rleDecode` the
 * kernel lines scale with the decoded size (`workBytes`) while the moves are of the runs
 * (`inputBytes`). Calibrated lines do not go below their smallest point's time (`floorMs`).
 *
 * Lines get an upper segment from larger calibration points (16 MiB; 64 MiB, where the worker
 * pool is busy, for compress, decompress and the upload) when the budget allows: the main job's
 * calls are large, and a line through 16 KiB and 1 MiB alone predicted a 256 MiB GPU compress at
 * 2.5x its time on an H200, a 256 MiB CPU compress with 16 workers at 5x (one chunk at 1 MiB
 * keeps one worker busy). See ts/cost/calibration.ts for the points and the budget.
 */

/** Operations the model knows. */
export type CostOp = 'rleEncode' | 'rleDecode' | 'scan' | 'sort' | 'compress' | 'decompress';
export const COST_OPS: readonly CostOp[] = ['rleEncode', 'rleDecode', 'scan', 'sort', 'compress', 'decompress'];

/** Where data is or is wanted. */
export type Location = 'host' | 'device';

/**
 * A straight line: milliseconds = fixedMs + msPerByte * bytes; with `upper`, a second segment
 * that takes over from `upper.fromBytes` on (calibrated at a third, larger size: a GPU's
 * throughput and a worker pool's both still grow past the second point, so one line through
 * two small sizes overestimates large calls).
 */
export interface Line {
  fixedMs: number;
  msPerByte: number;
  /** From `fromBytes` on; its `fixedMs` may be negative (the segment's times there are >= 0). */
  upper?: { fromBytes: number; fixedMs: number; msPerByte: number };
  /** Milliseconds no call takes less than (a call's fixed cost below the smallest measured size). */
  floorMs?: number;
  /**
   * From `fromBytes` on, at least `msPerByte` x bytes: a worker pool busy at its last point gains
   * no throughput past it, while a segment through two points keeps the smaller one's fixed cost
   * (an H200 host's CPU compress: 27 ms at 64 MiB on 16 workers, 106 at 256 MiB, 63 from the
   * segment through 16 and 64 MiB).
   */
  saturated?: { fromBytes: number; msPerByte: number };
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
  /** Bytes of the input: what an upload or a readback of the input moves. */
  inputBytes: number;
  /**
   * Bytes the kernel lines scale with, when not the input's: the decoded size for rleDecode (its
   * cost follows the elements it writes, and calibration measures it so).
   */
  workBytes?: number;
  resultBytes: number;
  inputLocation: Location;
  resultLocation: Location;
  /**
   * Milliseconds of host work the call does before either path runs that the GPU's line does not
   * hold, added to the GPU path's prediction: rleDecode of host runs sums their lengths first
   * (the CPU path's line, calibrated on host runs, holds it; the GPU's, on device runs, does not).
   */
  gpuHostMs?: number;
  /**
   * Readback round trips the GPU path waits for between its submissions beyond those its line
   * holds, each charged at the readback's fixed cost: rleDecode of device runs whose sum parle
   * does not know reads the sum back before it sizes its output (calibration's runs are
   * rleEncode's, whose sum is known: one submission).
   */
  gpuRoundTrips?: number;
}

/** What the model says of a call. */
export interface Prediction {
  path: 'cpu' | 'gpu';
  predictedMs: { cpu: number; gpu: number | null };
  reason: string;
}

/**
 * Bytes from which a new host array takes fresh pages on every call: glibc's malloc maps
 * allocations past its mmap threshold, which rises with freed blocks up to 32 MiB (Node on
 * Linux), and gives them back when freed; smaller ones reuse freed memory.
 */
export const FRESH_RESULT_BYTES = 32 << 20;

/** Size bucket of the online history: powers of 4 bytes (0 .. BUCKETS - 1). */
function bucket(bytes: number): number {
  return Math.min(BUCKETS - 1, Math.floor(Math.log2(Math.max(1, bytes)) / 2));
}

/** Size buckets: up to 4^31 bytes (the last one holds everything larger). */
const BUCKETS = 32;
const HISTORY = 5;
const MIN_SAMPLES = 3;
/** A call history's median that moves by more than this part of itself makes choose() predict again. */
const MEDIAN_MOVE = 0.1;
const OP_INDEX: Record<CostOp, number> = { rleEncode: 0, rleDecode: 1, scan: 2, sort: 3, compress: 4, decompress: 5 };

/**
 * Samples of the online history in numbered slots (no string keys: every call records a sample
 * and `auto` reads the medians, often with cold caches after a pause or a GPU call), each slot's
 * last HISTORY samples in a ring and their median kept as they arrive, NaN below MIN_SAMPLES.
 */
class History {
  private readonly samples: Float64Array;
  /** Samples held per slot (<= HISTORY), and where the next one goes. */
  private readonly filled: Uint8Array;
  private readonly next: Uint8Array;
  private readonly medians: Float64Array;

  constructor(slots: number) {
    this.samples = new Float64Array(slots * HISTORY);
    this.filled = new Uint8Array(slots);
    this.next = new Uint8Array(slots);
    this.medians = new Float64Array(slots).fill(NaN);
  }

  /** The median of the slot's samples, or NaN below MIN_SAMPLES. */
  median(slot: number): number {
    return this.medians[slot];
  }

  /**
   * Adds a sample to the slot, replacing its oldest once it holds HISTORY. Returns whether the
   * slot's median appeared or moved by more than MEDIAN_MOVE of itself.
   */
  push(slot: number, sample: number): boolean {
    const base = slot * HISTORY;
    this.samples[base + this.next[slot]] = sample;
    this.next[slot] = (this.next[slot] + 1) % HISTORY;
    const n = Math.min(this.filled[slot] + 1, HISTORY);
    this.filled[slot] = n;
    if (n < MIN_SAMPLES) return false;
    const before = this.medians[slot];
    const after = this.samples.slice(base, base + n).sort()[n >> 1];
    this.medians[slot] = after;
    return !(Math.abs(after - before) <= MEDIAN_MOVE * Math.abs(before)); // (NaN before: moved)
  }

  clear(): void {
    this.filled.fill(0);
    this.next.fill(0);
    this.medians.fill(NaN);
  }
}

/** Slots of the kernel history (op, path, size bucket) and of the call history (op, path, input and result location, size bucket). */
const KERNEL_SLOTS = COST_OPS.length * 2 * BUCKETS;
const CALL_SLOTS = COST_OPS.length * 2 * 2 * 2 * BUCKETS;

/** Slot of a kernel's history: op index, path (0 cpu, 1 gpu), size bucket. */
const kernelSlot = (op: number, gpu: number, b: number) => (op * 2 + gpu) * BUCKETS + b;

/** Slot of a call's history: op index, path, input and result location (0 host, 1 device), size bucket. */
const callSlot = (op: number, gpu: number, inDevice: number, outDevice: number, b: number) =>
  (((op * 2 + gpu) * 2 + inDevice) * 2 + outDevice) * BUCKETS + b;
/** Calls of one shape that one prediction of choose() serves. */
export const CHOICE_REUSE = 8;
/**
 * choose() leaves the path a shape's byte counts ran on only for one predicted this much faster
 * (a part of the kept path's time): paths within it of each other would otherwise take turns as
 * their medians move.
 */
export const SWITCH_GAIN = 0.1;
/** A call's GPU slot less its CPU slot. */
const GPU_SLOT = 4 * BUCKETS;

/** See CostModel.freshResultMs. */
const freshMsPerByte = (rates: Rates) =>
  rates.readback?.upper ? Math.max(0, rates.readback.upper.msPerByte - rates.readback.msPerByte) : 0;

/**
 * The rates' lines packed into one Float64Array, LINE_WORDS numbers a line (fixedMs, msPerByte,
 * upper's fromBytes (Infinity: none), fixedMs and msPerByte, floorMs (0: none), saturated's
 * fromBytes (Infinity: none) and msPerByte); all NaN: no line. Lines: the CPU path's per op,
 * the GPU path's per op, the upload, the readback. Every call's sample and `auto`'s predictions
 * read them, often with cold caches after a pause or a GPU call: a flat table and numbered
 * history slots touch less memory than the nested objects and string keys they replace.
 */
const LINE_WORDS = 8;
const GPU_LINES = COST_OPS.length;
const UPLOAD_LINE = 2 * COST_OPS.length;
const READBACK_LINE = UPLOAD_LINE + 1;

function packLines(rates: Rates): Float64Array {
  const t = new Float64Array((READBACK_LINE + 1) * LINE_WORDS);
  const put = (i: number, line: Line | null | undefined) => {
    const o = i * LINE_WORDS;
    if (!line) {
      t.fill(NaN, o, o + LINE_WORDS);
      return;
    }
    t.set(
      [
        line.fixedMs,
        line.msPerByte,
        line.upper?.fromBytes ?? Infinity,
        line.upper?.fixedMs ?? 0,
        line.upper?.msPerByte ?? 0,
        line.floorMs ?? 0,
        line.saturated?.fromBytes ?? Infinity,
        line.saturated?.msPerByte ?? 0,
      ],
      o,
    );
  };
  COST_OPS.forEach((op, i) => {
    put(i, rates.cpu[op]);
    put(GPU_LINES + i, rates.gpu?.[op]);
  });
  put(UPLOAD_LINE, rates.upload);
  put(READBACK_LINE, rates.readback);
  return t;
}

export class CostModel {
  private readonly history = new History(KERNEL_SLOTS);
  private readonly calls = new History(CALL_SLOTS);
  #rates: Rates;
  #lines: Float64Array;
  /** choose()'s remembered choices, per call slot of the CPU path: the bytes, the path (1: GPU), uses left. */
  private readonly chosenBytes = new Float64Array(CALL_SLOTS).fill(NaN);
  private readonly chosenWork = new Float64Array(CALL_SLOTS);
  private readonly chosenPath = new Uint8Array(CALL_SLOTS);
  private readonly chosenLeft = new Uint8Array(CALL_SLOTS);
  /** Fresh pages' ms per byte of a host result past FRESH_RESULT_BYTES (freshResultMs). */
  #freshMsPerByte: number;

  constructor(rates: Rates) {
    this.#rates = rates;
    this.#lines = packLines(rates);
    this.#freshMsPerByte = freshMsPerByte(rates);
  }

  /** The calibrated rates. Setting them clears the history (its ratios were against the old ones). */
  get rates(): Rates {
    return this.#rates;
  }

  set rates(rates: Rates) {
    this.#rates = rates;
    this.#lines = packLines(rates);
    this.#freshMsPerByte = freshMsPerByte(rates);
    this.history.clear();
    this.calls.clear();
    this.chosenLeft.fill(0);
    this.chosenBytes.fill(NaN);
  }

  /**
   * Line `i` of the packed table at `bytes`: the upper segment's time from its `fromBytes` on,
   * else the line's; at least `floorMs`, and from the saturated part's `fromBytes` on at least its
   * ms per byte x bytes. NaN where the line is absent.
   */
  private lineMs(i: number, bytes: number): number {
    const t = this.#lines;
    const o = i * LINE_WORDS;
    let ms = bytes >= t[o + 2] ? t[o + 3] + t[o + 4] * bytes : t[o] + t[o + 1] * bytes;
    if (t[o + 5] > ms) ms = t[o + 5];
    if (bytes >= t[o + 6] && t[o + 7] * bytes > ms) ms = t[o + 7] * bytes;
    return ms;
  }

  /**
   * A transfer (line `i`: the upload's or the readback's) of `bytes` in `arrays` arrays, one after
   * the other: the line at `bytes`, and each further array's fixed cost (the line at 0 bytes: its
   * floor). On an H100 host the CPU path's rleDecode of 4 KiB of device runs, two readbacks, took
   * 0.46-0.54 ms and a scan of 4 KiB of device data, one, 0.26; one readback's line put the
   * former at 0.19-0.28.
   */
  private moveMs(i: number, bytes: number, arrays: number): number {
    return this.lineMs(i, bytes) + (arrays - 1) * this.lineMs(i, 0);
  }

  /** Kernel time of `op` on `path` for `bytes`: the observed median of the bucket when there is one. */
  kernelMs(op: CostOp, path: 'cpu' | 'gpu', bytes: number): number | null {
    const ms = this.kernelLineMs(OP_INDEX[op], path === 'gpu' ? 1 : 0, bytes, true);
    return Number.isNaN(ms) ? null : ms;
  }

  /** A kernel's line at `bytes`, scaled by its history's median when `refined` and there is one. */
  private kernelLineMs(op: number, gpu: number, bytes: number, refined: boolean): number {
    const ms = this.lineMs(gpu * GPU_LINES + op, bytes);
    if (!refined) return ms;
    // Samples are ratios of observed to calibrated time; their median corrects the line.
    const ratio = this.history.median(kernelSlot(op, gpu, bucket(bytes)));
    return Number.isNaN(ratio) ? ms : ms * ratio;
  }

  /**
   * A path's predicted ms (NaN: no such path) from the calibrated lines alone (`refined` false)
   * or with refined kernels.
   */
  private pathMs(call: CallShape, op: number, gpu: number, refined: boolean): number {
    const { inputBytes, resultBytes } = call;
    const inDevice = call.inputLocation === 'device';
    const outDevice = call.resultLocation === 'device';
    const kernel = this.kernelLineMs(op, gpu, call.workBytes ?? inputBytes, refined);
    const hasUpload = !Number.isNaN(this.#lines[UPLOAD_LINE * LINE_WORDS]);
    const hasReadback = !Number.isNaN(this.#lines[READBACK_LINE * LINE_WORDS]);
    // runs are two arrays, values and lengths: rleDecode's input, rleEncode's result
    const inArrays = call.op === 'rleDecode' ? 2 : 1;
    const outArrays = call.op === 'rleEncode' ? 2 : 1;
    if (gpu === 0) {
      return (
        (inDevice && hasReadback ? this.moveMs(READBACK_LINE, inputBytes, inArrays) : 0) +
        kernel +
        (outDevice && hasUpload ? this.moveMs(UPLOAD_LINE, resultBytes, outArrays) : this.freshResultMs(call.op, resultBytes))
      );
    }
    if (!hasUpload || !hasReadback) return NaN;
    const moveIn = !inDevice && call.op !== 'decompress' ? this.moveMs(UPLOAD_LINE, inputBytes, inArrays) : 0;
    // (a GPU compress's line includes the container's readback: compress's result is on the host)
    const moveOut = !outDevice && call.op !== 'compress' ? this.moveMs(READBACK_LINE, resultBytes, outArrays) : 0;
    const roundTrips = call.gpuRoundTrips ? call.gpuRoundTrips * this.lineMs(READBACK_LINE, 0) : 0;
    return (call.gpuHostMs ?? 0) + moveIn + kernel + roundTrips + moveOut;
  }

  /**
   * What a CPU result on the host costs beyond its line: the fresh pages of a new array past
   * FRESH_RESULT_BYTES, at the rate the readback's upper segment pays over its lower one (its
   * top point reads into fresh pages on every call, its lower ones into memory that is reused
   * once collected: the best of their runs). The lines of rleEncode,
   * rleDecode, scan and sort are calibrated up to 16 MiB, whose results' memory is reused; on the
   * H200 host a 256 MiB CPU sort then took 372 ms against 195 predicted. Compress's and
   * decompress's lines reach 64 MiB and hold it already.
   */
  private freshResultMs(op: CostOp, resultBytes: number): number {
    if (op === 'compress' || op === 'decompress' || resultBytes <= FRESH_RESULT_BYTES) return 0;
    return this.#freshMsPerByte * (resultBytes - FRESH_RESULT_BYTES);
  }

  /**
   * A path's prediction (NaN: no such path): scaled by the call history's median when there is
   * one (`observed`), else from refined kernels.
   */
  private predictPath(call: CallShape, op: number, gpu: number, slot: number): number {
    const ratio = this.calls.median(slot);
    return Number.isNaN(ratio) ? this.pathMs(call, op, gpu, true) : this.pathMs(call, op, gpu, false) * ratio;
  }

  /** The call history's slot of `call` on the CPU path (the GPU path's is this + GPU_SLOT). */
  private cpuCallSlot(call: CallShape, op: number): number {
    return callSlot(
      op,
      0,
      call.inputLocation === 'device' ? 1 : 0,
      call.resultLocation === 'device' ? 1 : 0,
      bucket(call.workBytes ?? call.inputBytes),
    );
  }

  /**
   * Records the observed ms of a whole call (moves included) for the call-level history; a call
   * that moves nothing on its path (see {@link movesNothing}) is also a sample of its kernel's
   * history, since it is what calibration timed for the kernel's line. `call.inputBytes` as for
   * predict().
   */
  observeCall(call: CallShape, path: 'cpu' | 'gpu', ms: number): void {
    const op = OP_INDEX[call.op];
    const gpu = path === 'gpu' ? 1 : 0;
    const base = this.pathMs(call, op, gpu, false);
    const work = call.workBytes ?? call.inputBytes;
    if (!(base > 0) || !(ms >= 0) || !(work > 0)) return;
    const slot = this.cpuCallSlot(call, op);
    if (this.calls.push(slot + gpu * GPU_SLOT, ms / base)) this.chosenLeft[slot] = 0;
    if (movesNothing(call, path)) this.observe(call.op, path, work, ms);
  }

  /**
   * Predicted ms of every path and the one `auto` takes. A tie goes to where the data is.
   * `withReason` false leaves `reason` empty (the per-call route: no string formatting).
   */
  predict(call: CallShape, withReason = true): Prediction {
    const { inputLocation, resultLocation } = call;
    const op = OP_INDEX[call.op];
    const slot = this.cpuCallSlot(call, op);
    const cpu = this.predictPath(call, op, 0, slot);
    const gpu = this.predictPath(call, op, 1, slot + GPU_SLOT);
    if (Number.isNaN(gpu)) {
      return { path: 'cpu', predictedMs: { cpu, gpu: null }, reason: 'no GPU path on this engine, so the CPU path runs' };
    }
    const tie = Math.abs(cpu - gpu) <= 0.02 * Math.min(cpu, gpu);
    const path: 'cpu' | 'gpu' = tie ? (inputLocation === 'device' ? 'gpu' : 'cpu') : cpu < gpu ? 'cpu' : 'gpu';
    if (!withReason) return { path, predictedMs: { cpu, gpu }, reason: '' };
    const ms = (x: number) => `${x < 1 ? x.toFixed(3) : x.toFixed(1)} ms`;
    const where = `input on the ${inputLocation === 'host' ? 'host' : 'GPU'}, result wanted on the ${resultLocation === 'host' ? 'host' : 'GPU'}`;
    const observed = (s: number) => !Number.isNaN(this.calls.median(s));
    const seen = [observed(slot) ? 'cpu' : '', observed(slot + GPU_SLOT) ? 'gpu' : ''].filter(Boolean);
    const history = seen.length > 0 ? ` (${seen.join(' and ')} from the times of earlier calls of this shape)` : '';
    const reason = tie
      ? `${where}: both paths predict about ${ms(cpu)}; the data stays where it is (${path})${history}`
      : `${where}: ${path} predicts ${ms(path === 'cpu' ? cpu : gpu)} against ${ms(path === 'cpu' ? gpu : cpu)} on the ${path === 'cpu' ? 'GPU' : 'CPU'}${history}`;
    return { path, predictedMs: { cpu, gpu }, reason };
  }

  /**
   * `auto`'s path for `call`: predict()'s, remembered per call shape (op, locations, size bucket)
   * and reused for the next CHOICE_REUSE - 1 calls of that shape with the same byte counts
   * (without `gpuHostMs`), then predicted again; sooner when the shape's call history on either
   * path gets a median or its median moves by more than MEDIAN_MOVE (kernel history, which
   * refines shapes without call history, reaches the choice within CHOICE_REUSE calls). A new
   * prediction keeps the path the same byte counts ran on unless the other is predicted
   * SWITCH_GAIN faster: history corrects a choice without making two close paths take turns
   * (on the H200, a 16 MiB scan and sort of host data flipped between paths whose times spread
   * over 2x; cost-model-nvidia-h200-trace.log in git history). New rates forget every remembered
   * choice. Why: `auto` used to predict on every call, mostly after a pause or another op, when
   * the code runs with cold caches: on the H200's host its route took 15-19 us more than the
   * fixed path's for 4 KiB calls of 120-290 us (auto-overhead-nvidia-h200-before.log in git history);
   * with this, 7-13 us more, of which choose() 3-12 us (auto-overhead-nvidia-h200.log).
   */
  choose(call: CallShape): 'cpu' | 'gpu' {
    const op = OP_INDEX[call.op];
    const slot = this.cpuCallSlot(call, op);
    const work = call.workBytes ?? -1;
    // these byte counts were chosen for last (the call slot holds a size bucket)
    const sameBytes = this.chosenBytes[slot] === call.inputBytes && this.chosenWork[slot] === work;
    if (sameBytes && this.chosenLeft[slot] > 0 && call.gpuHostMs === undefined) {
      this.chosenLeft[slot]--;
      return this.chosenPath[slot] === 1 ? 'gpu' : 'cpu';
    }
    const prediction = this.predict(call, false);
    let path = prediction.path;
    if (sameBytes) {
      // these byte counts ran on `kept` before: leave it only for a path predicted SWITCH_GAIN faster
      const kept = this.chosenPath[slot] === 1 ? 'gpu' : 'cpu';
      const { cpu, gpu } = prediction.predictedMs;
      if (path !== kept && gpu !== null && (path === 'gpu' ? gpu > cpu * (1 - SWITCH_GAIN) : cpu > gpu * (1 - SWITCH_GAIN))) path = kept;
    }
    this.chosenBytes[slot] = call.inputBytes;
    this.chosenWork[slot] = work;
    this.chosenPath[slot] = path === 'gpu' ? 1 : 0;
    this.chosenLeft[slot] = CHOICE_REUSE - 1;
    return path;
  }

  /**
   * Records an observed kernel time for online refinement: the ms of a call as calibration times
   * the kernel's line (through the public method, moving nothing: see {@link movesNothing}).
   * `bytes` as the line's (work bytes). observeCall() records these for the calls it gets.
   */
  observe(op: CostOp, path: 'cpu' | 'gpu', bytes: number, ms: number): void {
    const i = OP_INDEX[op];
    const gpu = path === 'gpu' ? 1 : 0;
    const line = this.kernelLineMs(i, gpu, bytes, false);
    if (!(line > 0) || !(ms >= 0) || !(bytes > 0)) return;
    this.history.push(kernelSlot(i, gpu, bucket(bytes)), ms / line);
  }
}

/**
 * Whether `call` on `path` moves nothing over the link beyond what the kernel's line holds: the
 * CPU path from host data to a host result; the GPU path from device data to a device result,
 * except compress (its line ends with the container on the host) and decompress (its line starts
 * from the container on the host). Only such calls are samples of a kernel's history: a call
 * that uploads its input waits for that upload's copy in its kernel's time (a 16 MiB GPU scan of
 * host data on the H200 took 2x its line there, and the ratio, applied to the same scan of
 * device data, predicted 1.11 ms for a 0.54 ms call), and the CPU kernel alone, timed inside the
 * engine, leaves out the call's own cost that its line, timed through the public method, holds
 * (a 4 KiB rleEncode: 0.034 ms against 0.092).
 */
export function movesNothing(call: Pick<CallShape, 'op' | 'inputLocation' | 'resultLocation'>, path: 'cpu' | 'gpu'): boolean {
  if (path === 'cpu') return call.inputLocation === 'host' && call.resultLocation === 'host';
  if (call.op === 'compress') return call.inputLocation === 'device' && call.resultLocation === 'host';
  if (call.op === 'decompress') return call.resultLocation === 'device';
  return call.inputLocation === 'device' && call.resultLocation === 'device';
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
    compress: gpuLine(1),
    decompress: gpuLine(1),
  };
  return { cpu, gpu, upload: { fixedMs: 0.1, msPerByte: 1 / 1e6 }, readback: { fixedMs: 0.1, msPerByte: 1 / 1e6 } };
}

/**
 * `line` with an upper segment through the measured points `from` and `to` (bytes, ms), used
 * from `from[0]` bytes on: fitLine's slope, and an intercept that may be negative, so that the
 * segment passes through `from` (its times from there on are >= from's). A readback's cost per
 * byte grows past the sizes whose memory is reused (H200 host: 5.5 ms at 16 MiB, 43 at 64 MiB);
 * an intercept clamped at 0 put 16 MiB at 12.5 ms.
 */
export function withUpper(line: Line, from: [number, number], to: [number, number]): Line {
  const u = fitLine(from, to);
  const [b1, t1] = [clean(from[0]), clean(from[1])];
  const fixedMs = t1 - u.msPerByte * b1;
  return { ...line, upper: { fromBytes: b1, fixedMs, msPerByte: u.msPerByte } };
}

/** A time or size as a line may use it: finite and >= 0 (anything else counts as 0). */
const clean = (x: number) => (Number.isFinite(x) && x > 0 ? x : 0);

/**
 * The straight line through two measured points (bytes, ms): the smaller point's time splits
 * into a fixed cost and the slope's part. Both parts are finite and >= 0, whatever the points:
 * a time that does not grow with size (noise) gives the slope a quarter of the larger point's
 * mean ms per byte (throughput at most 4x higher past it), and the line then passes through the
 * smaller point; a non-finite or negative time counts as 0. (A slope that did grow is kept as
 * measured: a floor on it would, for a GPU's line through 16 KiB and 16 MiB that is nearly all
 * fixed cost, put a quarter of the fixed cost per 16 MiB into the slope.)
 */
export function fitLine(small: [number, number], large: [number, number]): Line {
  let [b1, t1] = [clean(small[0]), clean(small[1])];
  let [b2, t2] = [clean(large[0]), clean(large[1])];
  if (b2 < b1) [b1, t1, b2, t2] = [b2, t2, b1, t1];
  const grew = t2 > t1 && b2 > b1;
  const msPerByte = Math.max(grew ? (t2 - t1) / (b2 - b1) : t2 / Math.max(1, b2) / 4, 1e-12);
  const fixedMs = Math.max(0, t1 - msPerByte * b1);
  return { fixedMs, msPerByte };
}

/**
 * The line through one measured point (bytes, ms) with slope `msPerByte` (where only one size
 * was measured, a default's slope): the point's time less the slope's part is the fixed cost.
 * Where the slope's part alone passes the time, the line goes through the origin and the point.
 */
export function lineThrough(point: [number, number], msPerByte: number): Line {
  const bytes = clean(point[0]);
  const ms = clean(point[1]);
  const slope = clean(msPerByte);
  if (slope * bytes <= ms) return { fixedMs: ms - slope * bytes, msPerByte: slope };
  return { fixedMs: 0, msPerByte: bytes > 0 ? ms / bytes : slope };
}
