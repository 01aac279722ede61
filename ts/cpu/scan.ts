/**
 * Prefix scan on the CPU path (assembly/scan.ts): reduce each segment, scan the segment sums,
 * scan each segment from its carry; segments on the workers.
 */
import { CpuPath, kernelTask, splitEven, bitView, setBits } from './cpu-path.js';
import { elementTypeOf } from '../types.js';

/** Prefix sum; see {@link Engine.scan}. Reduce, scan of the sums, scan from the carries. */
export async function scan<T extends Uint32Array | Int32Array | Float32Array>(
  cpu: CpuPath,
  input: T,
  inclusive: boolean,
  signal?: AbortSignal,
  out?: T,
): Promise<T> {
  const type = elementTypeOf(input) as 'u32' | 'i32' | 'f32';
  const n = input.length;
  const exec = cpu.executorFor(n * 4);
  const isFloat = type === 'f32';
  const resident = cpu.isResident(input);
  const result = out ?? (cpu.result(type, n, resident) as T);
  // where the sums go: in place into a resident result; else into a block, then copied out
  const outResident = cpu.isResident(result);
  const window = Math.max(1, Math.floor(cpu.segmentBytes / 4)) * exec.concurrency;
  const windowLength = Math.min(n, window);
  const add = isFloat ? (a: number, b: number) => Math.fround(a + b) : (a: number, b: number) => (a + b) >>> 0;
  const outBlockBytes = resident && !outResident ? windowLength * 4 : 0;
  await cpu.withBlocks([resident ? 0 : windowLength * 4, outBlockBytes], async ([block, outBlock]) => {
    let carry = 0;
    for (let start = 0; start < n; start += window) {
      const count = Math.min(window, n - start);
      const inPtr = cpu.place(input, start, count, block);
      const outPtr = outResident ? result.byteOffset + start * 4 : outBlock ? outBlock.ptr : inPtr;
      const pieces = splitEven(count, exec.concurrency, 1 << 16);
      const sums = await cpu.runAll(
        exec,
        pieces
          .slice(0, -1)
          .map((p) => kernelTask(isFloat ? 'reduceF32' : 'reduceU32', [inPtr + p.offset * 4, p.length], [[0, p.length * 4, 'in']])),
        signal,
      );
      const carries = [carry];
      for (const s of sums) carries.push(add(carries[carries.length - 1], s));
      const outs = await cpu.runAll(
        exec,
        pieces.map((p, k) =>
          kernelTask(
            isFloat ? 'scanF32' : 'scanU32',
            [inPtr + p.offset * 4, outPtr + p.offset * 4, p.length, inclusive ? 1 : 0, carries[k]],
            [
              [0, p.length * 4, 'in'],
              [1, p.length * 4, 'out'],
            ],
          ),
        ),
        signal,
      );
      carry = isFloat ? outs[outs.length - 1] : outs[outs.length - 1] >>> 0;
      if (!outResident) setBits(bitView(result), cpu.view(outPtr, count, 4), start);
    }
  });
  return result;
}
