/**
 * The CPU path: host arrays in, host arrays out, through the AssemblyScript kernels
 * (assembly/), split across a pool of workers that share one WebAssembly.Memory.
 *
 * The engine's thread owns the memory layout (ts/cpu/memory.ts); tasks carry pointers. Inputs
 * are copied into the memory once, a window at a time (a window is one 16 MiB segment per
 * worker), so every op but sort takes inputs of any size within the 4 GiB wasm32 address
 * space. Arrays made by {@link CpuPath.alloc} already live in the memory: they are used in
 * place, and results of an op on them live there too (zero copy).
 *
 * The primitives run on it are functions of a CpuPath, one family a file as in ts/gpu/:
 * ./rle.ts (encode, decode), ./scan.ts, ./sort.ts; the codec's chunk procedures go through
 * {@link CpuPath.runChunk} and {@link CpuPath.runChunks} (ts/codec/cpu/).
 *
 * All element work goes through unsigned "bit views" (Uint8/16/32Array over the same bytes), so
 * f32 NaN payloads and -0 survive every copy.
 */
import { ErrorCodes, ParleError } from '../errors.js';
import type { ElementType, ParleArray } from '../types.js';
import { arrayConstructor, elementSize } from '../types.js';
import { canShareMemory } from '../platform/node.js';
import { WasmHeap, formatBytes, type HeapBlock } from './memory.js';
import { InlineExecutor, WorkerPool, abortError, type Executor } from './pool.js';
import { KERNEL_PROCEDURES, copyIntoMemory, copyOutOfMemory, type KernelContext, type ProcedureTable } from './procedures.js';
import type { ProcName, Procedures, Region, Task } from './protocol.js';
import {
  MAX_MEMORY_PAGES,
  WASM_PAGE_BYTES,
  compileKernels,
  createKernelMemory,
  instantiateKernels,
  type KernelName,
  type KernelVariant,
  type Kernels,
} from './wasm.js';

/** Bytes of input one task works on at a time. */
export const SEGMENT_BYTES = 16 << 20;

/**
 * Inputs below this many bytes run on the calling thread. Measured here (2 cores, host arrays,
 * median ms inline / pool of 2): 256 KiB rleEncode 0.48 / 0.79, sort 1.43 / 0.93; 1 MiB
 * rleEncode 0.76 / 1.34, sort 2.13 / 4.83; 4 MiB rleEncode 1.77 / 2.12, scan 3.14 / 3.83; 16 MiB
 * rleEncode 10.1 / 8.1. A worker's round trip (about 0.1 ms through comlink) and the serial copy
 * of a host array into the memory eat the gain below a few MiB.
 */
export const INLINE_BYTES = 4 << 20;
/**
 * Inputs of at least this many bytes spread the chunks of compress and decompress over every
 * worker (CpuPath.runChunks); below, one worker codes them (a round trip to the workers costs
 * about as much as coding 64 KiB, so splitting smaller inputs gains nothing).
 */
export const PARALLEL_BYTES = 256 << 10;
/**
 * Inputs of at least this many bytes are coded off the calling thread when there are two or
 * more workers (CpuPath.runChunks): one worker below {@link PARALLEL_BYTES}, every worker from
 * it. Many calls of one chunk each (the chunks of a Zarr array, read at once) then spread over
 * the workers instead of taking the calling thread one after another, and a page's main thread
 * stays free; a lone call of this size pays a round trip (0.1-0.5 ms on the 2-core VM).
 */
export const OFFLOAD_BYTES = 32 << 10;

/** Options of {@link CpuPath.create}. */
export interface CpuPathOptions {
  /** SIMD kernels (default) or their scalar twins. */
  variant?: 'simd' | 'scalar';
  /** Worker threads; 0 runs everything on the calling thread (default 0). */
  workers?: number;
  /** Share one memory with the workers (default: when the runtime allows it). */
  shareMemory?: boolean;
  /** Bytes one task works on (default {@link SEGMENT_BYTES}; tests make it tiny). */
  segmentBytes?: number;
  /** Inputs below this run on the calling thread (default {@link INLINE_BYTES}). */
  inlineBytes?: number;
  /** Bytes the kernels' memory may grow to (default and most: 4 GiB, the wasm32 address space). */
  maxMemoryBytes?: number;
  /**
   * The procedures the calling thread runs (default: kernel calls only). The workers run those of
   * their script (dist/{node,browser}/worker.js: the codec's); the engine passes the same table
   * (ts/codec/cpu/procedures.ts PROCEDURES).
   */
  procedures?: ProcedureTable;
}

export type BitView = Uint8Array | Uint16Array | Uint32Array | BigUint64Array;

/** An unsigned view of the same bytes as `array`, so copies keep bit patterns (an f16's, an f64's NaN payload, -0). */
export function bitView(array: ParleArray): BitView {
  if (array instanceof Uint8Array || array instanceof Uint16Array || array instanceof Uint32Array || array instanceof BigUint64Array)
    return array;
  return bitViewOf(array.buffer, array.byteOffset, array.length, array.BYTES_PER_ELEMENT);
}

/** `target.set(source, at)` for two bit views of one element width (TypeScript cannot pair a union's methods). */
export function setBits(target: BitView, source: BitView, at = 0): void {
  (target as Uint8Array).set(source as Uint8Array, at);
}

/** `target.fill(value, start, end)` for a bit view and one of its own elements. */
export function fillBits(target: BitView, value: number | bigint, start: number, end: number): void {
  (target as Uint8Array).fill(value as number, start, end);
}

function bitViewOf(buffer: ArrayBufferLike, byteOffset: number, length: number, size: number): BitView {
  if (size === 1) return new Uint8Array(buffer, byteOffset, length);
  if (size === 2) return new Uint16Array(buffer, byteOffset, length);
  if (size === 8) return new BigUint64Array(buffer, byteOffset, length);
  return new Uint32Array(buffer, byteOffset, length);
}

/** A kernel call as a task; `regions` lists [argument index, bytes, access] of its pointers. */
export function kernelTask(kernel: KernelName, args: number[], regions: [number, number, Region['access']][]): Task<'kernel'> {
  return {
    proc: 'kernel',
    params: { kernel, args },
    regions: regions.filter(([arg]) => args[arg] !== 0).map(([arg, bytes, access]) => ({ param: `args.${arg}`, bytes, access })),
  };
}

/** A task that copies `bytes` bytes from `src` to `dst` in the kernels' memory (memmove). */
export function copyTask(dst: number, src: number, bytes: number): Task<'kernel'> {
  return kernelTask(
    'copyBytes',
    [dst, src, bytes],
    [
      [0, bytes, 'out'],
      [1, bytes, 'in'],
    ],
  );
}

/** Splits `count` elements into at most `parts` nearly equal pieces of at least `minLength`. */
export function splitEven(count: number, parts: number, minLength = 1): { offset: number; length: number }[] {
  const pieces = Math.max(1, Math.min(parts, Math.floor(count / Math.max(1, minLength))));
  const out: { offset: number; length: number }[] = [];
  for (let k = 0; k < pieces; k++) {
    const offset = Math.floor((k * count) / pieces);
    out.push({ offset, length: Math.floor(((k + 1) * count) / pieces) - offset });
  }
  return out;
}

/** u32 lengths summed per window by {@link CpuPath.sumLengths} (1 MiB of them). */
const SUM_WINDOW = 1 << 18;

export class CpuPath {
  readonly kernels: Kernels;
  readonly heap: WasmHeap;
  readonly variant: KernelVariant;
  readonly segmentBytes: number;
  readonly inlineBytes: number;
  /** True when the workers share the memory; false when segments are transferred. */
  readonly shared: boolean;
  private readonly inline: InlineExecutor;
  /** The worker pool, when there are workers. */
  readonly pool: WorkerPool | undefined;
  /** Arrays made by {@link alloc}, with their blocks. */
  private readonly resident = new WeakMap<object, HeapBlock>();
  private readonly finalizer: FinalizationRegistry<HeapBlock>;
  /** @internal the kernels and their memory as procedures see them (ts/codec/place.ts placeFromMemory copies out of it) */
  readonly context: KernelContext;

  private constructor(
    ctx: KernelContext,
    heap: WasmHeap,
    variant: KernelVariant,
    options: Required<CpuPathOptions>,
    pool: WorkerPool | undefined,
  ) {
    this.kernels = ctx.kernels;
    this.context = ctx;
    this.heap = heap;
    this.variant = variant;
    this.segmentBytes = options.segmentBytes;
    this.inlineBytes = options.inlineBytes;
    this.shared = options.shareMemory;
    this.inline = new InlineExecutor(ctx, options.procedures);
    this.pool = pool;
    // An alloc'd array that is collected without free() gives its block back.
    this.finalizer = new FinalizationRegistry((block) => {
      if (this.heap.isLive(block)) {
        this.heap.release(block);
        this.residentBytesCount -= block.bytes;
        this.wakeNext();
      }
    });
  }

  /** Compiles the kernels (once per process), makes the memory and starts the workers. */
  static async create(options: CpuPathOptions = {}): Promise<CpuPath> {
    const shareMemory = options.shareMemory ?? canShareMemory();
    const settings: Required<CpuPathOptions> = {
      variant: options.variant ?? 'simd',
      workers: options.workers ?? 0,
      shareMemory,
      segmentBytes: Math.max(64, options.segmentBytes ?? SEGMENT_BYTES),
      inlineBytes: options.inlineBytes ?? INLINE_BYTES,
      maxMemoryBytes: options.maxMemoryBytes ?? MAX_MEMORY_PAGES * WASM_PAGE_BYTES,
      procedures: options.procedures ?? KERNEL_PROCEDURES,
    };
    const variant: KernelVariant = shareMemory ? settings.variant : 'simd-unshared';
    const module = await compileKernels(variant);
    const memory = createKernelMemory(256, variant);
    const kernels = await instantiateKernels(module, memory);
    const pool =
      settings.workers > 0 ? await WorkerPool.create({ size: settings.workers, module, variant, memory, shared: shareMemory }) : undefined;
    return new CpuPath({ kernels, memory }, new WasmHeap(memory, kernels.heapBase(), settings.maxMemoryBytes), variant, settings, pool);
  }

  /** Threads that run tasks at once for an input of `bytes`. */
  /** @internal the primitives' modules (rle.ts, scan.ts, sort.ts) */
  executorFor(bytes: number): Executor {
    return this.pool && bytes >= this.inlineBytes ? this.pool : this.inline;
  }

  // ---- arrays that live in the kernels' memory ------------------------------------------

  /**
   * A zero-filled typed array of `length` elements that lives in the kernels' memory: ops take
   * it without a copy and return results that live there too. Release with {@link free} (or let
   * it be garbage-collected). Only when the memory is shared; else a plain array.
   */
  alloc<T extends ElementType>(type: T, length: number): ParleArray {
    if (!this.shared) return new (arrayConstructor(type))(length);
    // 64 readable bytes after it: a container here is decoded in place, and the Huffman decoder
    // reads up to 8 bytes past a payload's end
    return this.allocResident(type, length, true, 64);
  }

  /**
   * A result array that lives in the kernels' memory (not cleared; 64 readable bytes after it),
   * or a plain one when the memory is not shared.
   */
  residentResult<T extends ElementType>(type: T, length: number): ParleArray {
    if (!this.shared) return new (arrayConstructor(type))(length);
    return this.allocResident(type, length, false, 64);
  }

  /** A resident array; `zero` clears it, `slackBytes` more bytes are kept after it (decode overshoot). */
  /** @internal the primitives' modules (rle.ts, scan.ts, sort.ts) */
  allocResident<T extends ElementType>(type: T, length: number, zero: boolean, slackBytes = 0): ParleArray {
    const bytes = length * elementSize(type);
    const block = this.heap.alloc(Math.max(1, bytes + slackBytes));
    if (zero) this.heap.bytes(block.ptr, bytes).fill(0);
    const array = new (arrayConstructor(type))(this.heap.buffer, block.ptr, length);
    this.resident.set(array, block);
    this.residentBytesCount += block.bytes;
    this.finalizer.register(array, block, array);
    return array;
  }

  /** Releases an array made by {@link alloc}; other arrays are ignored. Do not use it afterwards. */
  free(array: ParleArray): void {
    const block = this.resident.get(array);
    if (!block) return;
    this.resident.delete(array);
    this.finalizer.unregister(array);
    this.heap.release(block);
    this.residentBytesCount -= block.bytes;
    this.wakeNext();
  }

  /** True when `array` was made by {@link alloc} and not freed. */
  isResident(array: ParleArray): boolean {
    return this.resident.has(array);
  }

  /**
   * The exact sum of u32 run `lengths` (a number: exact below 2^53), on this thread with the
   * SIMD kernel (assembly/varint.ts sumLengths): in place for a resident array, else copied
   * through one block of at most 1 MiB, window by window; a JavaScript loop only when no block
   * is free. 16.8 M lengths on the 2-core development machine: 30-45 ms as a JavaScript loop,
   * 9-13 ms this way, 8.5 ms in place.
   */
  sumLengths(lengths: Uint32Array): number {
    if (this.resident.has(lengths)) return this.kernels.sumLengths(lengths.byteOffset, lengths.length);
    const window = Math.min(lengths.length, SUM_WINDOW);
    const block = window > 0 ? this.heap.tryAlloc(window * 4) : undefined;
    if (block === undefined) {
      let total = 0;
      for (let i = 0; i < lengths.length; i++) total += lengths[i];
      return total;
    }
    try {
      let total = 0;
      for (let at = 0; at < lengths.length; at += window) {
        const part = lengths.subarray(at, Math.min(lengths.length, at + window));
        this.copyIn(block.ptr, part);
        total += this.kernels.sumLengths(block.ptr, part.length);
      }
      return total;
    } finally {
      this.heap.release(block);
      this.wakeNext();
    }
  }

  /** A result array: resident (not cleared) when `likeResident`, else a plain one. */
  /** @internal the primitives' modules (rle.ts, scan.ts, sort.ts) */
  result<T extends ElementType>(type: T, length: number, likeResident: boolean): ParleArray {
    if (likeResident) return this.allocResident(type, length, false);
    return new (arrayConstructor(type))(length);
  }

  /** Copies host bytes `src` into the kernels' memory at `ptr`, the 7 bytes after them its room (ts/cpu/procedures.ts copyIntoMemory). */
  writeBytes(ptr: number, src: Uint8Array): void {
    copyIntoMemory(this.context, ptr, src);
  }

  /** Copies `n` scratch bytes at `ptr`, the 7 bytes after them its room, to `dst` at `at` (ts/cpu/procedures.ts copyOutOfMemory). */
  readBytes(ptr: number, n: number, dst: Uint8Array, at = 0): void {
    copyOutOfMemory(this.context, ptr, n, dst, at);
  }

  /**
   * Copies ranges within the kernels' memory, `ranges[i]` = [destination, source, bytes]: spread
   * over the workers (each takes a run of consecutive ranges of about equal bytes) when the
   * memory is shared and they add up to PARALLEL_BYTES, else on this thread. No destination may
   * overlap another range's source or destination. Used to lay a container's payloads side by
   * side in a resident result, which one thread copied at its memcpy speed after every chunk was
   * coded (on the 16-core host about 50 MB at 7 GB/s, some 7 ms of a 64 MiB compress that took 26
   * with 16 workers).
   * @throws ParleError ABORTED, WORKER_FAILED
   */
  async copyRanges(ranges: readonly (readonly [number, number, number])[], signal?: AbortSignal): Promise<void> {
    let total = 0;
    for (const r of ranges) total += r[2];
    const workers = this.pool?.concurrency ?? 0;
    // the list's block without waiting in the memory queue (a caller may hold blocks that a
    // waiting operation needs): none free, and this thread copies
    const list =
      this.shared && workers >= 2 && total >= PARALLEL_BYTES && ranges.length >= 2 ? this.heap.tryAlloc(ranges.length * 12) : undefined;
    if (list === undefined) {
      for (const [dst, src, bytes] of ranges) this.kernels.copyBytes(dst, src, bytes);
      return;
    }
    try {
      const words = new Uint32Array(this.heap.buffer, list.ptr, ranges.length * 3);
      ranges.forEach((r, i) => words.set(r, 3 * i));
      // runs of consecutive ranges, a new one each time the bytes so far pass the next share
      const tasks: Task<'kernel'>[] = [];
      let first = 0;
      let sum = 0;
      for (let i = 0; i < ranges.length; i++) {
        sum += ranges[i][2];
        if (sum >= ((tasks.length + 1) * total) / workers || i === ranges.length - 1) {
          tasks.push(kernelTask('copyRanges', [list.ptr + 12 * first, i + 1 - first], [[0, 12 * (i + 1 - first), 'in']]));
          first = i + 1;
        }
      }
      await this.runAll(this.pool!, tasks, signal);
    } finally {
      this.heap.release(list);
    }
  }

  /** A new host array of the `n` scratch bytes at `ptr` (see {@link readBytes}: they are moved). */
  copyOfBytes(ptr: number, n: number): Uint8Array {
    const out = new Uint8Array(n);
    this.readBytes(ptr, n, out);
    return out;
  }

  // ---- helpers ------------------------------------------------------------------------

  /** Copies `source` (any bit view) into the memory at `ptr`. */
  /** @internal the primitives' modules (rle.ts, scan.ts, sort.ts) */
  copyIn(ptr: number, source: BitView): void {
    setBits(bitViewOf(this.heap.buffer, ptr, source.length, source.BYTES_PER_ELEMENT), source);
  }

  /** A view of `length` elements of width `size` at `ptr` (valid until the next allocation). */
  /** @internal the primitives' modules (rle.ts, scan.ts, sort.ts) */
  view(ptr: number, length: number, size: number): BitView {
    return bitViewOf(this.heap.buffer, ptr, length, size);
  }

  /** The input's pointer when it is resident, else copies `count` elements from `start` into `block`. */
  /** @internal the primitives' modules (rle.ts, scan.ts, sort.ts) */
  place(input: ParleArray, start: number, count: number, block: HeapBlock | undefined): number {
    const size = input.BYTES_PER_ELEMENT;
    if (this.resident.has(input)) return input.byteOffset + start * size;
    if (!block) throw new Error('place() needs a block for a host array');
    this.copyIn(block.ptr, bitView(input).subarray(start, start + count));
    return block.ptr;
  }

  /**
   * Runs tasks and waits until every one has settled (so no task still writes to memory that is
   * about to be released), then returns their results or throws the first error.
   */
  /** @internal the primitives' modules (rle.ts, scan.ts, sort.ts) */
  async runAll<P extends ProcName>(exec: Executor, tasks: Task<P>[], signal?: AbortSignal): Promise<Procedures[P]['result'][]> {
    if (signal?.aborted) throw abortError(signal);
    const settled = await Promise.allSettled(tasks.map((t) => exec.run(t, signal)));
    const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed) throw failed.reason;
    return settled.map((s) => (s as PromiseFulfilledResult<Procedures[P]['result']>).value);
  }

  /** Allocates blocks (undefined for sizes of 0), runs `fn`, and releases them afterwards. */
  /** @internal the primitives' modules (rle.ts, scan.ts, sort.ts) */
  async withBlocks<R>(sizes: readonly number[], fn: (blocks: (HeapBlock | undefined)[]) => Promise<R>, signal?: AbortSignal): Promise<R> {
    const blocks = await this.acquireBlocks(sizes, signal);
    try {
      return await fn(blocks);
    } finally {
      for (const block of blocks) if (block) this.heap.release(block);
      this.holding--;
      this.wakeNext();
    }
  }

  /** Operations holding blocks of {@link withBlocks} now. */
  private holding = 0;
  /** Operations waiting for memory, oldest first: each is woken to try again after a release. */
  private readonly memoryWaiters: (() => void)[] = [];

  /** Wakes the oldest operation that waits for memory (it tries again, and wakes the next when it fits). */
  private wakeNext(): void {
    this.memoryWaiters.shift()?.();
  }

  /**
   * Blocks of the given sizes (0: none), all at once. When they do not fit in the heap now, the
   * operation waits, first in first out, until earlier operations release memory (the
   * memory-aware queue). Fails at once when they can never fit.
   * @throws ParleError TOO_LARGE (the sizes can never fit, or the heap is held by arrays nobody
   *   releases), ABORTED
   */
  private async acquireBlocks(sizes: readonly number[], signal?: AbortSignal): Promise<(HeapBlock | undefined)[]> {
    const need = sizes.reduce((a, b) => a + (b > 0 ? WasmHeap.blockBytes(b) : 0), 0);
    const residentBytes = this.residentBytes;
    if (need > this.heap.capacity - residentBytes) {
      throw new ParleError(
        ErrorCodes.TOO_LARGE,
        `this operation needs ${formatBytes(need)} of WebAssembly memory at once; the CPU path has ${formatBytes(this.heap.capacity)}` +
          (residentBytes > 0
            ? `, of which ${formatBytes(residentBytes)} hold arrays in the engine's memory (engine.alloc or resident results: engine.free them)`
            : ''),
      );
    }
    let first = true;
    for (;;) {
      if (signal?.aborted) throw abortError(signal);
      // newcomers queue behind operations already waiting (first in, first out)
      if (!first || this.memoryWaiters.length === 0) {
        const blocks: (HeapBlock | undefined)[] = [];
        let fits = true;
        for (const bytes of sizes) {
          if (bytes <= 0) {
            blocks.push(undefined);
            continue;
          }
          const block = this.heap.tryAlloc(bytes);
          if (block === undefined) {
            fits = false;
            break;
          }
          blocks.push(block);
        }
        if (fits) {
          // counted at once (not after the await that returns them): others decide by it
          this.holding++;
          if (!first) this.wakeNext(); // let the next waiter try too
          return blocks;
        }
        for (const block of blocks) if (block) this.heap.release(block);
        if (this.holding === 0) {
          // nothing in flight will release memory: what is live is held by arrays
          this.wakeNext();
          throw new ParleError(
            ErrorCodes.TOO_LARGE,
            `this operation needs ${formatBytes(need)} of WebAssembly memory; ${formatBytes(this.heap.liveBytes)} of ` +
              `${formatBytes(this.heap.capacity)} are held by arrays in the engine's memory (engine.alloc or resident results not freed: engine.free them)`,
          );
        }
      }
      const retry = !first;
      first = false;
      await new Promise<void>((resolve, reject) => {
        const onAbort = () => {
          const at = this.memoryWaiters.indexOf(wake);
          if (at >= 0) this.memoryWaiters.splice(at, 1);
          reject(abortError(signal!));
        };
        const wake = () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        };
        signal?.addEventListener('abort', onAbort, { once: true });
        // a newcomer queues last; one that was woken and still does not fit keeps its place first
        if (retry) this.memoryWaiters.unshift(wake);
        else this.memoryWaiters.push(wake);
      });
    }
  }

  /** Bytes of arrays that live in the kernels' memory (engine.alloc, resident results). */
  private residentBytesCount = 0;
  private get residentBytes(): number {
    return this.residentBytesCount;
  }

  // ---- .parle chunks ------------------------------------------------------------------

  /** How many chunks to keep in flight: one per thread, plus one being copied. */
  get chunkConcurrency(): number {
    return (this.pool?.concurrency ?? 1) + 1;
  }

  /**
   * Runs `procedure` for a chunk: allocates its blocks, lets `fill` copy its input in, runs the
   * task on a worker (or inline for small chunks) and lets `read` copy the result out.
   */
  async runChunk<P extends ProcName, R>(
    proc: P,
    inputBytes: number,
    sizes: readonly number[],
    build: (ptrs: number[]) => { params: Procedures[P]['params']; regions: Region[]; fill: () => void },
    read: (result: Procedures[P]['result'], ptrs: number[]) => R,
    signal?: AbortSignal,
  ): Promise<R> {
    return this.withBlocks(
      sizes,
      async (blocks) => {
        const ptrs = blocks.map((b) => b?.ptr ?? 0);
        const { params, regions, fill } = build(ptrs);
        fill();
        const exec = this.executorFor(inputBytes);
        const result = (await exec.run({ proc, params, regions } as Task<P>, signal)) as Procedures[P]['result'];
        return read(result, ptrs);
      },
      signal,
    );
  }

  /**
   * Runs a batch procedure (e.g. the codec's, ts/codec/cpu/batch.ts) over `jobs` chunks, where
   * the workers share the memory: with two or more workers, on one of them from
   * {@link OFFLOAD_BYTES} of input and on every one (as many as chunks) from
   * {@link PARALLEL_BYTES}; with one, on it when there are two or more chunks and inlineBytes;
   * else on the calling thread. Allocates the counters (`table.counterBytes`, zeroed), the job
   * table (`jobs` x `table.jobBytes`) and blocks of `sizes(participants)` (0: none), lets `build`
   * fill them and make the params (`staged`: on workers, where it may leave the rest of the
   * input to its `feed`, called once the tasks are posted), runs one task a participant and lets
   * `read` take the results before the blocks are released.
   * @throws ParleError the first participant's error, ABORTED, TOO_LARGE (memory)
   */
  async runChunks<P extends ProcName, R>(
    proc: P,
    inputBytes: number,
    jobs: number,
    table: { counterBytes: number; jobBytes: number },
    sizes: (participants: number) => readonly number[],
    build: (
      at: { counterPtr: number; jobsPtr: number; blocks: number[] },
      participants: number,
      staged: boolean,
    ) => { params: Procedures[P]['params']; feed?: () => void; drain?: (settled: Promise<unknown>) => Promise<void> },
    read: (results: Procedures[P]['result'][], at: { jobsPtr: number; blocks: number[] }) => R,
    signal?: AbortSignal,
  ): Promise<R> {
    // two or more workers: one takes the work off this thread from OFFLOAD_BYTES on, all split
    // the chunks from PARALLEL_BYTES on; one worker only takes the work off this thread (a round
    // trip costs 0.1-0.5 ms on the 2-core VM), as other ops do from inlineBytes
    const workers = this.pool?.concurrency ?? 0;
    const parallel =
      this.pool !== undefined &&
      this.shared &&
      inputBytes >= (workers >= 2 ? OFFLOAD_BYTES : this.inlineBytes) &&
      (jobs > 1 || workers >= 2);
    const participants = parallel && inputBytes >= PARALLEL_BYTES ? Math.min(workers, jobs) : 1;
    return this.withBlocks(
      [table.counterBytes, Math.max(1, jobs) * table.jobBytes, ...sizes(participants)],
      async (held) => {
        const [counterPtr, jobsPtr, ...blocks] = held.map((b) => b?.ptr ?? 0);
        this.heap.bytes(counterPtr, table.counterBytes).fill(0);
        // staged (workers): `feed` fills the rest of the input after the tasks are posted, while
        // the workers start on what is there (they wait for it: ts/codec/cpu/batch.ts)
        const { params, feed, drain } = build({ counterPtr, jobsPtr, blocks }, participants, parallel);
        const task = { proc, params, regions: [] } as unknown as Task<P>;
        let results: Procedures[P]['result'][];
        if (!parallel) {
          results = [(await this.inline.run(task, signal)) as Procedures[P]['result']];
        } else {
          const running = Array.from({ length: participants }, () => this.pool!.run(task, signal) as Promise<Procedures[P]['result']>);
          if (feed) {
            // the pool posts a task a microtask after run() (slot.ready.then): let it, then copy
            for (let tick = 0; tick < 3; tick++) await Promise.resolve();
            feed();
          }
          const all = Promise.allSettled(running);
          // results copied out by this thread while the workers go on
          if (drain) await drain(all);
          const settled = await all;
          const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
          if (failed) throw failed.reason;
          results = settled.map((r) => (r as PromiseFulfilledResult<Procedures[P]['result']>).value);
        }
        return read(results, { jobsPtr, blocks });
      },
      signal,
    );
  }

  /**
   * The container's tree hash (XXH32 of 4 KiB blocks, level after level: docs/format.md) of
   * `bytes`, copied into the kernels' memory and hashed by one thread: a worker when there are
   * any (`onWorker`, for callers that hash many buffers at once), else by size.
   */
  async treeHash(bytes: Uint8Array, signal?: AbortSignal, onWorker = false): Promise<number> {
    const scratch = Math.ceil(Math.max(bytes.length, 1) / 4096) * 4 + 16;
    return this.withBlocks([bytes.length, scratch], async ([inBlock, scratchBlock]) => {
      const inPtr = inBlock?.ptr ?? 0;
      if (bytes.length > 0) this.heap.bytes(inPtr, bytes.length).set(bytes);
      const exec = onWorker ? (this.pool ?? this.inline) : this.executorFor(bytes.length);
      const task = kernelTask(
        'treeHash',
        [inPtr, bytes.length, scratchBlock!.ptr],
        [
          [0, bytes.length, 'in'],
          [2, scratch, 'out'],
        ],
      );
      return ((await exec.run(task, signal)) as number) >>> 0;
    });
  }

  /** Stops the workers and releases the memory. */
  async destroy(): Promise<void> {
    await this.pool?.destroy();
  }
}
