/**
 * The CPU path on the calling thread: host arrays in, host arrays out, through the
 * AssemblyScript kernels (assembly/) on one WebAssembly.Memory.
 *
 * Inputs are copied into the memory once, in segments of at most {@link SEGMENT_BYTES}, so any
 * input size works within the 4 GiB wasm32 address space (sort excepted: it needs all keys at
 * once). Segments are where the worker pool will split work: RLE runs that cross a segment
 * boundary are merged, scans carry their running total from segment to segment.
 *
 * All element work goes through unsigned "bit views" (Uint8/16/32Array over the same bytes), so
 * f32 NaN payloads and -0 survive every copy.
 */
import { ErrorCodes, ParleError } from '../errors.js';
import type { ElementType, ParleArray, SortKeys } from '../types.js';
import { arrayConstructor, elementSize, elementTypeOf } from '../types.js';
import { WasmHeap } from './memory.js';
import {
  DECODE_SLACK_BYTES,
  KeyKind,
  SORT_SCRATCH_BYTES,
  compileKernels,
  createKernelMemory,
  instantiateKernels,
  type KernelVariant,
  type Kernels,
} from './wasm.js';

/** Bytes of input the CPU path moves into wasm memory at a time. */
export const SEGMENT_BYTES = 16 << 20;

/** Runs of a run-length encoding: `values[i]` repeated `lengths[i]` times. */
export interface Runs<T extends ParleArray = ParleArray> {
  /** One element per run, of the input's type. */
  values: T;
  /** Run lengths in elements, each >= 1 from an encoder. */
  lengths: Uint32Array;
}

type BitView = Uint8Array | Uint16Array | Uint32Array;

/** An unsigned view of the same bytes as `array`, so copies keep bit patterns. */
export function bitView(array: ParleArray): BitView {
  switch (array.BYTES_PER_ELEMENT) {
    case 1:
      return array instanceof Uint8Array ? array : new Uint8Array(array.buffer, array.byteOffset, array.length);
    case 2:
      return array as Uint16Array;
    default:
      return array instanceof Uint32Array ? array : new Uint32Array(array.buffer, array.byteOffset, array.length);
  }
}

function bitViewOf(buffer: ArrayBufferLike, byteOffset: number, length: number, size: number): BitView {
  if (size === 1) return new Uint8Array(buffer, byteOffset, length);
  if (size === 2) return new Uint16Array(buffer, byteOffset, length);
  return new Uint32Array(buffer, byteOffset, length);
}

export class CpuPath {
  readonly kernels: Kernels;
  readonly heap: WasmHeap;
  readonly variant: KernelVariant;
  /** Bytes of input moved into wasm memory at a time (tests make it small to cross boundaries). */
  readonly segmentBytes: number;

  private constructor(kernels: Kernels, heap: WasmHeap, variant: KernelVariant, segmentBytes: number) {
    this.kernels = kernels;
    this.heap = heap;
    this.variant = variant;
    this.segmentBytes = segmentBytes;
  }

  /** Compiles (once per process) and instantiates the kernels over a fresh shared memory. */
  static async create(variant: KernelVariant = 'simd', segmentBytes = SEGMENT_BYTES): Promise<CpuPath> {
    const module = await compileKernels(variant);
    const memory = createKernelMemory();
    const kernels = await instantiateKernels(module, memory);
    return new CpuPath(kernels, new WasmHeap(memory, kernels.heapBase()), variant, Math.max(16, segmentBytes));
  }

  /** Copies `source` (any bit view) into the heap at `ptr`. */
  private copyIn(ptr: number, source: BitView): void {
    bitViewOf(this.heap.buffer, ptr, source.length, source.BYTES_PER_ELEMENT).set(source);
  }

  /** A view of `length` elements of width `size` at `ptr` (valid until the next allocation). */
  private view(ptr: number, length: number, size: number): BitView {
    return bitViewOf(this.heap.buffer, ptr, length, size);
  }

  /**
   * Run-length encode. See {@link Engine.rleEncode} for the contract.
   * Runs that cross a segment boundary are merged (Rutter's stitch step).
   */
  rleEncode<T extends ParleArray>(input: T): Runs<T> {
    const type = elementTypeOf(input) as ElementType;
    const size = elementSize(type);
    const bits = bitView(input);
    const n = bits.length;
    const segment = Math.max(1, Math.floor(this.segmentBytes / size));
    const encode = size === 1 ? this.kernels.rleEncode8 : size === 2 ? this.kernels.rleEncode16 : this.kernels.rleEncode32;
    const parts: { values: BitView; lengths: Uint32Array }[] = [];
    const segmentLength = Math.min(n, segment);
    this.heap.with([segmentLength * size, segmentLength * size, segmentLength * 4], (inBlock, valuesBlock, lengthsBlock) => {
      for (let start = 0; start < n; start += segment) {
        const count = Math.min(segment, n - start);
        this.copyIn(inBlock.ptr, bits.subarray(start, start + count));
        const runs = encode(inBlock.ptr, count, valuesBlock.ptr, lengthsBlock.ptr);
        parts.push({
          values: this.view(valuesBlock.ptr, runs, size).slice(),
          lengths: new Uint32Array(this.heap.buffer, lengthsBlock.ptr, runs).slice(),
        });
      }
    });
    const Ctor = arrayConstructor(type);
    if (parts.length === 0) return { values: new Ctor(0) as T, lengths: new Uint32Array(0) };
    if (parts.length === 1) {
      const values = parts[0].values;
      return { values: new Ctor(values.buffer, 0, values.length) as T, lengths: parts[0].lengths };
    }
    return stitchRuns(parts, type) as Runs<T>;
  }

  /**
   * Expand runs into `totalLength` elements (the sum of `lengths`, computed by the caller).
   * Decodes batches of runs whose output fits a segment; a run longer than a segment is filled
   * directly in the result.
   */
  rleDecode<T extends ParleArray>(values: T, lengths: Uint32Array, totalLength: number): T {
    const type = elementTypeOf(values) as ElementType;
    const size = elementSize(type);
    const Ctor = arrayConstructor(type);
    const result = new Ctor(totalLength) as T;
    const outBits = bitView(result);
    const valueBits = bitView(values);
    const segment = Math.max(1, Math.floor(this.segmentBytes / size));
    const decode = size === 1 ? this.kernels.rleDecode8 : size === 2 ? this.kernels.rleDecode16 : this.kernels.rleDecode32;
    const runCount = lengths.length;
    const batchRuns = Math.min(runCount, segment);
    this.heap.with([batchRuns * size, batchRuns * 4, segment * size + DECODE_SLACK_BYTES], (valuesBlock, lengthsBlock, outBlock) => {
      let run = 0;
      let out = 0;
      let take = batchRuns;
      while (run < runCount) {
        // Take `take` runs; while their output is larger than a segment, take fewer in
        // proportion (the kernel sums, so JavaScript never loops over runs).
        const end = Math.min(runCount, run + take);
        this.copyIn(lengthsBlock.ptr, lengths.subarray(run, end));
        const elements = this.kernels.sumLengths(lengthsBlock.ptr, end - run);
        if (elements > segment) {
          if (end - run === 1) {
            // One run longer than a segment: a fill is already a memset.
            outBits.fill(valueBits[run], out, out + elements);
            out += elements;
            run = end;
          } else {
            take = Math.max(1, Math.min(end - run - 1, Math.floor(((end - run) * segment) / elements)));
          }
          continue;
        }
        this.copyIn(valuesBlock.ptr, valueBits.subarray(run, end));
        decode(valuesBlock.ptr, lengthsBlock.ptr, end - run, outBlock.ptr);
        outBits.set(this.view(outBlock.ptr, elements, size), out);
        out += elements;
        run = end;
        take = Math.min(batchRuns, take * 2);
      }
    });
    return result;
  }

  /** Prefix sum; see {@link Engine.scan}. Segments carry their running total to the next. */
  scan<T extends Uint32Array | Int32Array | Float32Array>(input: T, inclusive: boolean): T {
    const type = elementTypeOf(input) as ElementType;
    const Ctor = arrayConstructor(type);
    const result = new Ctor(input.length) as T;
    const n = input.length;
    const segment = Math.max(1, Math.floor(this.segmentBytes / 4));
    const inBits = bitView(input);
    const outBits = bitView(result);
    const isFloat = type === 'f32';
    this.heap.with([Math.min(n, segment) * 4], (block) => {
      let carry = 0;
      for (let start = 0; start < n; start += segment) {
        const count = Math.min(segment, n - start);
        this.copyIn(block.ptr, inBits.subarray(start, start + count));
        carry = isFloat
          ? this.kernels.scanF32(block.ptr, block.ptr, count, inclusive ? 1 : 0, carry)
          : this.kernels.scanU32(block.ptr, block.ptr, count, inclusive ? 1 : 0, carry) >>> 0;
        outBits.set(this.view(block.ptr, count, 4), start);
      }
    });
    return result;
  }

  /** Stable LSD radix sort; see {@link Engine.sort}. Needs all keys (and values) in wasm memory at once. */
  sort<K extends SortKeys>(keys: K, values?: Uint32Array): { keys: K; values?: Uint32Array } {
    const type = elementTypeOf(keys) as 'u32' | 'i32' | 'f32';
    const kind = type === 'u32' ? KeyKind.U32 : type === 'i32' ? KeyKind.I32 : KeyKind.F32;
    const n = keys.length;
    const bytes = n * 4;
    const sizes = values ? [bytes, bytes, bytes, bytes, SORT_SCRATCH_BYTES] : [bytes, bytes, SORT_SCRATCH_BYTES];
    return this.heap.with(sizes, (...blocks) => {
      const [keysBlock, keysTmp] = blocks;
      const valuesBlock = values ? blocks[2] : undefined;
      const valuesTmp = values ? blocks[3] : undefined;
      const scratch = blocks[blocks.length - 1];
      this.copyIn(keysBlock.ptr, bitView(keys));
      if (values && valuesBlock) this.copyIn(valuesBlock.ptr, values);
      const inTmp = this.kernels.radixSort32(
        keysBlock.ptr,
        keysTmp.ptr,
        valuesBlock?.ptr ?? 0,
        valuesTmp?.ptr ?? 0,
        n,
        kind,
        scratch.ptr,
      );
      const Ctor = arrayConstructor(type);
      const sortedKeys = new Ctor(n) as K;
      bitView(sortedKeys).set(this.view(inTmp ? keysTmp.ptr : keysBlock.ptr, n, 4));
      if (!values || !valuesBlock || !valuesTmp) return { keys: sortedKeys };
      const sortedValues = new Uint32Array(this.view(inTmp ? valuesTmp.ptr : valuesBlock.ptr, n, 4));
      return { keys: sortedKeys, values: sortedValues };
    });
  }
}

/**
 * Joins per-segment runs into one encoding: the last run of a segment and the first of the
 * next merge when their values have the same bits.
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
    valueBits.set(part.values.subarray(from), count);
    lengths.set(part.lengths.subarray(from), count);
    count += part.values.length - from;
  }
  if (count === total) return { values, lengths };
  return { values: values.slice(0, count), lengths: lengths.slice(0, count) };
}
