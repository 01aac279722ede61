/**
 * RLE on the CPU path: encode and decode of host arrays (or arrays that live in the kernels'
 * memory) through the AssemblyScript kernels (assembly/rle.ts), split across the workers.
 * - Encode: each segment encodes alone; runs that cross a segment boundary are merged, and the
 *   segments' runs move into place (Rutter's stitch, on the CPU).
 * - Decode: runs split into groups; a group's output offset is the sum of the lengths before
 *   it; groups decode into their own ranges.
 * Element work goes through unsigned bit views, so f32 NaN payloads and -0 survive.
 */
import { ErrorCodes, ParleError } from '../errors.js';
import type { ElementType, ParleArray } from '../types.js';
import { arrayConstructor, elementSize, elementTypeOf } from '../types.js';
import { CpuPath, bitView, fillBits, kernelTask, setBits, splitEven, type BitView, copyTask } from './cpu-path.js';
import { type Task } from './protocol.js';
import { type Executor, abortError } from './pool.js';
import { DECODE_SLACK_BYTES, type KernelName } from './wasm.js';

/** Runs of a run-length encoding: `values[i]` repeated `lengths[i]` times. */
export interface Runs<T extends ParleArray = ParleArray> {
  /** One element per run, of the input's type. */
  values: T;
  /** Run lengths in elements, each >= 1 from an encoder. */
  lengths: Uint32Array;
}

/** Run-length encode; see {@link Engine.rleEncode}. */
export async function rleEncode<T extends ParleArray>(cpu: CpuPath, input: T, signal?: AbortSignal): Promise<Runs<T>> {
  const type = elementTypeOf(input) as ElementType;
  const size = elementSize(type);
  const n = input.length;
  const exec = cpu.executorFor(n * size);
  const segment = Math.max(1, Math.floor(cpu.segmentBytes / size));
  const window = segment * exec.concurrency;
  const resident = cpu.isResident(input);
  const kernel: KernelName = size === 1 ? 'rleEncode8' : size === 2 ? 'rleEncode16' : size === 4 ? 'rleEncode32' : 'rleEncode64';
  if (resident) return rleEncodeResident(cpu, input, exec, kernel, signal);
  const windows: Runs[] = [];
  const windowLength = Math.min(n, window);
  await cpu.withBlocks(
    [resident ? 0 : windowLength * size, windowLength * size, windowLength * 4],
    async ([inBlock, valuesBlock, lengthsBlock]) => {
      for (let start = 0; start < n; start += window) {
        const count = Math.min(window, n - start);
        const inPtr = cpu.place(input, start, count, inBlock);
        const pieces = splitEven(count, exec.concurrency, 4096);
        const runCounts = await cpu.runAll(
          exec,
          pieces.map((p) =>
            kernelTask(
              kernel,
              [inPtr + p.offset * size, p.length, valuesBlock!.ptr + p.offset * size, lengthsBlock!.ptr + p.offset * 4],
              [
                [0, p.length * size, 'in'],
                [2, p.length * size, 'out'],
                [3, p.length * 4, 'out'],
              ],
            ),
          ),
          signal,
        );
        // Stitch this window's pieces while they are in memory (the next window reuses it).
        const pieceRuns = pieces.map((p, k) => ({
          values: cpu.view(valuesBlock!.ptr + p.offset * size, runCounts[k], size),
          lengths: new Uint32Array(cpu.heap.buffer, lengthsBlock!.ptr + p.offset * 4, runCounts[k]),
        }));
        windows.push(stitchRuns(pieceRuns, type));
      }
    },
  );
  const joined =
    windows.length === 0
      ? { values: new (arrayConstructor(type))(0), lengths: new Uint32Array(0) }
      : windows.length === 1
        ? windows[0]
        : stitchRuns(
            windows.map((w) => ({ values: bitView(w.values), lengths: w.lengths })),
            type,
          );
  return joined as Runs<T>;
}

/**
 * RLE of a resident input into resident runs: one task a segment encodes into scratch, then
 * the segments' runs move into their final places in parallel and the runs that cross a
 * segment boundary are merged (Rutter's encode / scan / stitch kernels, on threads).
 */
async function rleEncodeResident<T extends ParleArray>(
  cpu: CpuPath,
  input: T,
  exec: Executor,
  kernel: KernelName,
  signal?: AbortSignal,
): Promise<Runs<T>> {
  const type = elementTypeOf(input) as ElementType;
  const size = elementSize(type);
  const n = input.length;
  // Untouched scratch costs address space only: pages are committed when written.
  return cpu.withBlocks([n * size, n * 4], async ([valuesBlock, lengthsBlock]) => {
    const pieces = splitEven(n, exec.concurrency, 4096);
    const counts =
      n === 0
        ? []
        : await cpu.runAll(
            exec,
            pieces.map((p) =>
              kernelTask(
                kernel,
                [input.byteOffset + p.offset * size, p.length, valuesBlock!.ptr + p.offset * size, lengthsBlock!.ptr + p.offset * 4],
                [
                  [0, p.length * size, 'in'],
                  [2, p.length * size, 'out'],
                  [3, p.length * 4, 'out'],
                ],
              ),
            ),
            signal,
          );
    // Plan: where each piece's runs go, and which first runs continue the previous piece's last.
    const scratchValues = cpu.view(valuesBlock?.ptr ?? 0, n, size);
    const plan: { piece: number; from: number; at: number; mergeInto: number }[] = [];
    let total = 0;
    pieces.forEach((p, k) => {
      const first = scratchValues[p.offset];
      const previous = k > 0 ? scratchValues[pieces[k - 1].offset + counts[k - 1] - 1] : undefined;
      const merges = total > 0 && first === previous;
      plan.push({ piece: k, from: merges ? 1 : 0, at: total, mergeInto: merges ? total - 1 : -1 });
      total += counts[k] - (merges ? 1 : 0);
    });
    const values = cpu.allocResident(type, total, false) as T;
    const lengths = cpu.allocResident('u32', total, false) as Uint32Array;
    try {
      const tasks: Task<'kernel'>[] = [];
      for (const { piece, from, at } of plan) {
        const p = pieces[piece];
        const count = counts[piece] - from;
        if (count === 0) continue;
        tasks.push(
          copyTask(values.byteOffset + at * size, valuesBlock!.ptr + (p.offset + from) * size, count * size),
          copyTask(lengths.byteOffset + at * 4, lengthsBlock!.ptr + (p.offset + from) * 4, count * 4),
        );
      }
      await cpu.runAll(exec, tasks, signal);
      const scratchLengths = new Uint32Array(cpu.heap.buffer, lengthsBlock?.ptr ?? 0, n);
      const finalLengths = new Uint32Array(cpu.heap.buffer, lengths.byteOffset, total);
      for (const { piece, mergeInto } of plan) {
        if (mergeInto < 0) continue;
        const merged = finalLengths[mergeInto] + scratchLengths[pieces[piece].offset];
        if (merged > 0xffffffff) {
          throw new ParleError(ErrorCodes.TOO_LARGE, 'a run longer than 2^32 - 1 elements does not fit a u32 run length');
        }
        finalLengths[mergeInto] = merged;
      }
    } catch (e) {
      cpu.free(values);
      cpu.free(lengths);
      throw e;
    }
    return { values, lengths };
  });
}

/**
 * Expands runs into `totalLength` elements (the sum of `lengths`, computed by the caller).
 * Batches of runs whose output fits a window are split in groups, one a task; a run longer
 * than a window is filled directly.
 */
export async function rleDecode<T extends ParleArray>(
  cpu: CpuPath,
  values: T,
  lengths: Uint32Array,
  totalLength: number,
  signal?: AbortSignal,
  out?: T,
): Promise<T> {
  const type = elementTypeOf(values) as ElementType;
  const size = elementSize(type);
  const exec = cpu.executorFor(totalLength * size);
  if (cpu.isResident(values) && cpu.isResident(lengths) && (out === undefined || cpu.isResident(out))) {
    return rleDecodeResident(cpu, values, lengths, totalLength, exec, signal, out);
  }
  const P = exec.concurrency;
  const result = out ?? (new (arrayConstructor(type))(totalLength) as T);
  const valueBits = bitView(values);
  const window = Math.max(1, Math.floor(cpu.segmentBytes / size)) * P;
  const kernel: KernelName = size === 1 ? 'rleDecode8' : size === 2 ? 'rleDecode16' : size === 4 ? 'rleDecode32' : 'rleDecode64';
  const runCount = lengths.length;
  const batchRuns = Math.min(runCount, window);
  const outBytes = window * size + P * DECODE_SLACK_BYTES;
  await cpu.withBlocks([batchRuns * size, batchRuns * 4, outBytes], async ([valuesBlock, lengthsBlock, outBlock]) => {
    let run = 0;
    let out = 0;
    let take = batchRuns;
    while (run < runCount) {
      if (signal?.aborted) throw abortError(signal);
      // Take `take` runs; while their output is larger than a window, take fewer in proportion
      // (the kernel sums, so JavaScript never loops over runs).
      const end = Math.min(runCount, run + take);
      cpu.copyIn(lengthsBlock!.ptr, lengths.subarray(run, end));
      const elements = cpu.kernels.sumLengths(lengthsBlock!.ptr, end - run);
      if (elements > window) {
        if (end - run === 1) {
          fillBits(bitView(result), valueBits[run], out, out + elements); // one long run: a memset
          out += elements;
          run = end;
        } else {
          take = Math.max(1, Math.min(end - run - 1, Math.floor(((end - run) * window) / elements)));
        }
        continue;
      }
      cpu.copyIn(valuesBlock!.ptr, valueBits.subarray(run, end));
      // Groups of runs, each decoded into its own range with slack after it, so one group's
      // overshooting v128 stores never land on another's output.
      const groups = splitEven(end - run, P, 1024).map((g) => ({
        ...g,
        elements: cpu.kernels.sumLengths(lengthsBlock!.ptr + g.offset * 4, g.length),
      }));
      let at = outBlock!.ptr;
      const tasks = groups.map((g) => {
        const task = kernelTask(
          kernel,
          [valuesBlock!.ptr + g.offset * size, lengthsBlock!.ptr + g.offset * 4, g.length, at],
          [
            [0, g.length * size, 'in'],
            [1, g.length * 4, 'in'],
            [3, g.elements * size + DECODE_SLACK_BYTES, 'out'],
          ],
        );
        at += g.elements * size + DECODE_SLACK_BYTES;
        return task;
      });
      await cpu.runAll(exec, tasks, signal);
      const resultBits = bitView(result);
      at = outBlock!.ptr;
      for (const g of groups) {
        setBits(resultBits, cpu.view(at, g.elements, size), out);
        out += g.elements;
        at += g.elements * size + DECODE_SLACK_BYTES;
      }
      run = end;
      take = Math.min(batchRuns, take * 2);
    }
  });
  return result;
}

/**
 * Decode of resident runs into a resident result: groups of runs decode straight into their
 * ranges in parallel; then the first 32 bytes of each group, which the previous group's
 * overshooting v128 stores may have hit, are written again.
 */
async function rleDecodeResident<T extends ParleArray>(
  cpu: CpuPath,
  values: T,
  lengths: Uint32Array,
  total: number,
  exec: Executor,
  signal?: AbortSignal,
  into?: T,
): Promise<T> {
  const type = elementTypeOf(values) as ElementType;
  const size = elementSize(type);
  const kernel: KernelName = size === 1 ? 'rleDecode8' : size === 2 ? 'rleDecode16' : size === 4 ? 'rleDecode32' : 'rleDecode64';
  // a caller's resident array has 64 bytes of slack after it (alloc), room for the overshoot
  const result = into ?? (cpu.allocResident(type, total, false, DECODE_SLACK_BYTES) as T);
  try {
    const groups = splitEven(lengths.length, exec.concurrency, 1024);
    let offset = 0;
    const placed = groups.map((g) => {
      const at = offset;
      offset += cpu.kernels.sumLengths(lengths.byteOffset + g.offset * 4, g.length);
      return { ...g, at };
    });
    await cpu.runAll(
      exec,
      placed.map((g) =>
        kernelTask(
          kernel,
          [values.byteOffset + g.offset * size, lengths.byteOffset + g.offset * 4, g.length, result.byteOffset + g.at * size],
          [
            [0, g.length * size, 'in'],
            [1, g.length * 4, 'in'],
            [3, (total - g.at) * size + DECODE_SLACK_BYTES, 'out'],
          ],
        ),
      ),
      signal,
    );
    const out = bitView(new (arrayConstructor(type))(cpu.heap.buffer, result.byteOffset, total));
    const valueBits = bitView(new (arrayConstructor(type))(cpu.heap.buffer, values.byteOffset, values.length));
    const lengthView = new Uint32Array(cpu.heap.buffer, lengths.byteOffset, lengths.length);
    const repair = Math.ceil(DECODE_SLACK_BYTES / size);
    for (const g of placed.slice(1)) {
      let at = g.at;
      for (let r = g.offset; r < g.offset + g.length && at < g.at + repair; r++) {
        const end = Math.min(at + lengthView[r], g.at + repair);
        fillBits(out, valueBits[r], at, end);
        at += lengthView[r];
      }
    }
  } catch (e) {
    if (into === undefined) cpu.free(result);
    throw e;
  }
  return result;
}

/**
 * Joins runs of consecutive pieces into one encoding: the last run of a piece and the first
 * of the next merge when their values have the same bits.
 * @throws ParleError TOO_LARGE when a merged run exceeds 2^32 - 1 elements
 */
export function stitchRuns(parts: readonly { values: BitView; lengths: Uint32Array }[], type: ElementType): Runs {
  let total = 0;
  for (const part of parts) total += part.lengths.length;
  const Ctor = arrayConstructor(type);
  const values = new Ctor(total);
  const valueBits = bitView(values);
  const lengths = new Uint32Array(total);
  let count = 0;
  for (const part of parts) {
    let from = 0;
    if (count > 0 && part.values.length > 0 && valueBits[count - 1] === part.values[0]) {
      const merged = lengths[count - 1] + part.lengths[0];
      if (merged > 0xffffffff) {
        throw new ParleError(ErrorCodes.TOO_LARGE, 'a run longer than 2^32 - 1 elements does not fit a u32 run length');
      }
      lengths[count - 1] = merged;
      from = 1;
    }
    setBits(valueBits, part.values.subarray(from), count);
    lengths.set(part.lengths.subarray(from), count);
    count += part.values.length - from;
  }
  if (count === total) return { values, lengths };
  return { values: values.slice(0, count), lengths: lengths.slice(0, count) };
}
