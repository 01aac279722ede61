/**
 * Stable LSD radix sort on the CPU path (assembly/radix-sort.ts, assembly/parallel.ts): sort
 * segments (LSD radix sort each), then merge pairs of sorted runs, each merge split by merge
 * path so every worker takes part (measured faster here than a parallel LSD with per-pass
 * histograms: see the closing notes of the worker pool issue). 32-bit keys (u32, i32, f32) and
 * 64-bit keys (u64, i64, f64) take the same steps with their width's kernels; values are u32.
 */
import { CpuPath, kernelTask, splitEven, bitView, copyTask, setBits } from './cpu-path.js';
import { type Task } from './protocol.js';
import { type SortKeys, arrayConstructor, elementTypeOf } from '../types.js';
import { KeyKind, SORT_SCRATCH_BYTES, SORT64_SCRATCH_BYTES } from './wasm.js';
import { type Executor } from './pool.js';

/** The element types of sort keys. */
type SortType = 'u32' | 'i32' | 'f32' | 'u64' | 'i64' | 'f64';

const KEY_KINDS: { [T in SortType]: KeyKind } = {
  u32: KeyKind.U32,
  i32: KeyKind.I32,
  f32: KeyKind.F32,
  u64: KeyKind.U64,
  i64: KeyKind.I64,
  f64: KeyKind.F64,
};

/** The kernels and sizes of one key width (values are u32, 4 bytes, at either width). */
interface KeyWidth {
  /** Bytes a key. */
  size: 4 | 8;
  /** 8-bit digits a key. */
  digits: 4 | 8;
  /** Bytes of scratch a sorting task needs. */
  scratchBytes: number;
  sort: 'radixSort32' | 'radixSort64';
  mergePathSplit: 'mergePathSplit32' | 'mergePathSplit64';
  mergeRuns: 'mergeRuns32' | 'mergeRuns64';
  histograms: 'radixHistograms32' | 'radixHistograms64';
  scatter: 'radixScatter32' | 'radixScatter64';
  sortBuckets: 'radixSortBuckets32' | 'radixSortBuckets64';
}

const WIDTH_32: KeyWidth = {
  size: 4,
  digits: 4,
  scratchBytes: SORT_SCRATCH_BYTES,
  sort: 'radixSort32',
  mergePathSplit: 'mergePathSplit32',
  mergeRuns: 'mergeRuns32',
  histograms: 'radixHistograms32',
  scatter: 'radixScatter32',
  sortBuckets: 'radixSortBuckets32',
};

const WIDTH_64: KeyWidth = {
  size: 8,
  digits: 8,
  scratchBytes: SORT64_SCRATCH_BYTES,
  sort: 'radixSort64',
  mergePathSplit: 'mergePathSplit64',
  mergeRuns: 'mergeRuns64',
  histograms: 'radixHistograms64',
  scatter: 'radixScatter64',
  sortBuckets: 'radixSortBuckets64',
};

/** Stable LSD radix sort; see {@link Engine.sort}. Sorts segments, then merges them. */
export async function sort<K extends SortKeys>(
  cpu: CpuPath,
  keys: K,
  values: Uint32Array | undefined,
  signal?: AbortSignal,
): Promise<{ keys: K; values?: Uint32Array }> {
  const type = elementTypeOf(keys) as SortType;
  const kind = KEY_KINDS[type];
  const width = keys.BYTES_PER_ELEMENT === 8 ? WIDTH_64 : WIDTH_32;
  const n = keys.length;
  if (n === 0) {
    const empty = cpu.result(type, 0, cpu.isResident(keys)) as K;
    return values ? { keys: empty, values: cpu.result('u32', 0, cpu.isResident(values)) as Uint32Array } : { keys: empty };
  }
  const keyBytes = n * width.size;
  const exec = cpu.executorFor(keyBytes);
  const pieces = splitEven(n, exec.concurrency, 1 << 16);
  // Resident keys (values) sort into resident buffers, one of which becomes the result;
  // host arrays use scratch blocks and are copied out.
  const keysResident = cpu.isResident(keys);
  const valuesResident = values !== undefined && cpu.isResident(values);
  const kb = keysResident ? 0 : keyBytes;
  const vb = values && !valuesResident ? n * 4 : 0;
  const keyBuffers = keysResident ? [cpu.allocResident(type, n, false), cpu.allocResident(type, n, false)] : [];
  const valueBuffers = valuesResident ? [cpu.allocResident('u32', n, false), cpu.allocResident('u32', n, false)] : [];
  let resultIndex = -1;
  try {
    return await cpu.withBlocks(
      [kb, kb, vb, vb, width.scratchBytes * pieces.length],
      async ([keysBlock, keysTmp, valsBlock, valsTmp, scratch]) => {
        const K = keysResident ? keyBuffers.map((b) => b.byteOffset) : [keysBlock!.ptr, keysTmp!.ptr];
        const V = valuesResident ? valueBuffers.map((b) => b.byteOffset) : values ? [valsBlock!.ptr, valsTmp!.ptr] : [0, 0];
        cpu.copyIn(K[0], bitView(keys));
        if (values) cpu.copyIn(V[0], values);
        const src =
          (await sortByTopDigit(cpu, exec, width, pieces, K, V, n, kind, scratch!.ptr, signal)) ??
          (await sortAndMerge(cpu, exec, width, pieces, K, V, n, kind, scratch!.ptr, signal));
        resultIndex = src;
        let sortedKeys: K;
        if (keysResident) sortedKeys = keyBuffers[src] as K;
        else {
          sortedKeys = new (arrayConstructor(type))(n) as K;
          setBits(bitView(sortedKeys), cpu.view(K[src], n, width.size));
        }
        if (!values) return { keys: sortedKeys };
        let sortedValues: Uint32Array;
        if (valuesResident) sortedValues = valueBuffers[src] as Uint32Array;
        else {
          sortedValues = new Uint32Array(n);
          sortedValues.set(cpu.view(V[src], n, 4) as Uint32Array);
        }
        return { keys: sortedKeys, values: sortedValues };
      },
    );
  } finally {
    // Free the resident buffers that are not the result (both on failure).
    keyBuffers.forEach((b, i) => i !== resultIndex && cpu.free(b));
    valueBuffers.forEach((b, i) => i !== resultIndex && cpu.free(b));
  }
}

/**
 * Sort, then merge: each worker sorts one segment, then pairs of sorted runs are merged,
 * each merge split by merge path so every worker takes part. Returns the buffer index (0 or 1)
 * holding the result. Keys are `width.size` bytes, values 4.
 */
async function sortAndMerge(
  cpu: CpuPath,
  exec: Executor,
  width: KeyWidth,
  pieces: { offset: number; length: number }[],
  K: number[],
  V: number[],
  n: number,
  kind: KeyKind,
  scratchPtr: number,
  signal?: AbortSignal,
): Promise<number> {
  const values = V[0] !== 0;
  const size = width.size;
  // 1. Sort each segment in place (its tmp is the same range of the tmp buffer).
  const where = await cpu.runAll(
    exec,
    pieces.map((p, k) => {
      const o = p.offset * size;
      const v = p.offset * 4;
      return kernelTask(
        width.sort,
        [K[0] + o, K[1] + o, V[0] && V[0] + v, V[1] && V[1] + v, p.length, kind, scratchPtr + k * width.scratchBytes],
        [
          [0, p.length * size, 'inout'],
          [1, p.length * size, 'inout'],
          [2, p.length * 4, 'inout'],
          [3, p.length * 4, 'inout'],
          [6, width.scratchBytes, 'out'],
        ],
      );
    }),
    signal,
  );
  // Bring every sorted segment into the keys buffer.
  const copies: Task<'kernel'>[] = [];
  pieces.forEach((p, k) => {
    if (where[k] !== 1) return;
    copies.push(copyTask(K[0] + p.offset * size, K[1] + p.offset * size, p.length * size));
    if (values) copies.push(copyTask(V[0] + p.offset * 4, V[1] + p.offset * 4, p.length * 4));
  });
  await cpu.runAll(exec, copies, signal);
  // 2. Merge pairs of sorted runs until one is left, alternating between the buffers.
  let runs = pieces;
  let src = 0;
  while (runs.length > 1) {
    const dst = 1 - src;
    const next: { offset: number; length: number }[] = [];
    const tasks: Task<'kernel'>[] = [];
    for (let i = 0; i < runs.length; i += 2) {
      const a = runs[i];
      const b = runs[i + 1];
      if (!b) {
        tasks.push(copyTask(K[dst] + a.offset * size, K[src] + a.offset * size, a.length * size));
        if (values) tasks.push(copyTask(V[dst] + a.offset * 4, V[src] + a.offset * 4, a.length * 4));
        next.push(a);
        continue;
      }
      const total = a.length + b.length;
      const parts = Math.max(1, Math.round((exec.concurrency * total) / n));
      const aKeys = K[src] + a.offset * size;
      const bKeys = K[src] + b.offset * size;
      const split = (diag: number) => cpu.kernels[width.mergePathSplit](aKeys, a.length, bKeys, b.length, diag, kind);
      for (let q = 0; q < parts; q++) {
        const d0 = Math.floor((q * total) / parts);
        const d1 = Math.floor(((q + 1) * total) / parts);
        const a0 = split(d0);
        const a1 = split(d1);
        const b0 = d0 - a0;
        const b1 = d1 - a1;
        const out = a.offset + d0;
        tasks.push(
          kernelTask(
            width.mergeRuns,
            [
              aKeys + a0 * size,
              V[src] && V[src] + (a.offset + a0) * 4,
              a1 - a0,
              bKeys + b0 * size,
              V[src] && V[src] + (b.offset + b0) * 4,
              b1 - b0,
              K[dst] + out * size,
              V[dst] && V[dst] + out * 4,
              kind,
            ],
            [
              [0, (a1 - a0) * size, 'in'],
              [1, (a1 - a0) * 4, 'in'],
              [3, (b1 - b0) * size, 'in'],
              [4, (b1 - b0) * 4, 'in'],
              [6, (d1 - d0) * size, 'out'],
              [7, (d1 - d0) * 4, 'out'],
            ],
          ),
        );
      }
      next.push({ offset: a.offset, length: total });
    }
    await cpu.runAll(exec, tasks, signal);
    runs = next;
    src = dst;
  }
  return src;
}

/**
 * Parallel MSD split, then LSD within buckets (as the single-thread kernel does for large
 * inputs, on every worker): each worker counts its segment's digits; the most significant
 * digit that varies splits the keys into 256 buckets; each worker scatters its segment
 * stably into them; each worker sorts a contiguous range of buckets of about n / workers
 * keys. Returns the buffer index holding the result, or undefined when one bucket would hold
 * too many keys to share the work (then sort-and-merge runs).
 */
async function sortByTopDigit(
  cpu: CpuPath,
  exec: Executor,
  width: KeyWidth,
  pieces: { offset: number; length: number }[],
  K: number[],
  V: number[],
  n: number,
  kind: KeyKind,
  scratchPtr: number,
  signal?: AbortSignal,
): Promise<number | undefined> {
  const P = pieces.length;
  // Workers that own their memory would send whole buffers back over each other's buckets.
  if (P < 2 || !cpu.shared) return undefined;
  const size = width.size;
  const TABLES = width.digits * 256; // counts a worker: one table of 256 a digit
  const HIST = TABLES * 4;
  return cpu.withBlocks([P * HIST, P * 1024, 257 * 4], async ([histBlock, offsetsBlock, boundsBlock]) => {
    await cpu.runAll(
      exec,
      pieces.map((p, w) =>
        kernelTask(
          width.histograms,
          [K[0] + p.offset * size, p.length, kind, histBlock!.ptr + w * HIST],
          [
            [0, p.length * size, 'in'],
            [3, HIST, 'out'],
          ],
        ),
      ),
      signal,
    );
    const hist = new Uint32Array(cpu.heap.buffer, histBlock!.ptr, P * TABLES).slice();
    const total = (digit: number, bucket: number) => {
      let sum = 0;
      for (let w = 0; w < P; w++) sum += hist[w * TABLES + digit * 256 + bucket];
      return sum;
    };
    let digit = width.digits - 1;
    for (; digit >= 0; digit--) {
      let nonEmpty = 0;
      for (let b = 0; b < 256 && nonEmpty < 2; b++) if (total(digit, b) > 0) nonEmpty++;
      if (nonEmpty > 1) break;
    }
    if (digit < 0) return 0; // every key is equal: already sorted
    const sizes = Array.from({ length: 256 }, (_, b) => total(digit, b));
    if (Math.max(...sizes) > (1.5 * n) / P) return undefined;
    // Offsets: bucket-major, then worker, so the scatter is stable.
    const bounds = new Uint32Array(257);
    const offsets = new Uint32Array(P * 256);
    let at = 0;
    for (let b = 0; b < 256; b++) {
      bounds[b] = at;
      for (let w = 0; w < P; w++) {
        offsets[w * 256 + b] = at;
        at += hist[w * TABLES + digit * 256 + b];
      }
    }
    bounds[256] = at;
    new Uint32Array(cpu.heap.buffer, offsetsBlock!.ptr, P * 256).set(offsets);
    new Uint32Array(cpu.heap.buffer, boundsBlock!.ptr, 257).set(bounds);
    await cpu.runAll(
      exec,
      pieces.map((p, w) =>
        kernelTask(
          width.scatter,
          [K[0] + p.offset * size, V[0] && V[0] + p.offset * 4, K[1], V[1], p.length, kind, digit * 8, offsetsBlock!.ptr + w * 1024],
          [
            [0, p.length * size, 'in'],
            [1, p.length * 4, 'in'],
            [2, n * size, 'inout'],
            [3, n * 4, 'inout'],
            [7, 1024, 'inout'],
          ],
        ),
      ),
      signal,
    );
    // Contiguous bucket ranges of about n / P keys each.
    const ranges: [number, number][] = [];
    let first = 0;
    for (let w = 0; w < P && first < 256; w++) {
      const goal = ((w + 1) * n) / P;
      let last = first + 1;
      while (last < 256 && (w === P - 1 || bounds[last + 1] <= goal)) last++;
      ranges.push([first, last]);
      first = last;
    }
    await cpu.runAll(
      exec,
      ranges.map(([from, to], w) =>
        kernelTask(
          width.sortBuckets,
          [K[1], K[0], V[1], V[0], boundsBlock!.ptr, from, to, kind, scratchPtr + w * width.scratchBytes],
          [
            [0, n * size, 'inout'],
            [1, n * size, 'inout'],
            [2, n * 4, 'inout'],
            [3, n * 4, 'inout'],
            [4, 257 * 4, 'in'],
            [8, width.scratchBytes, 'out'],
          ],
        ),
      ),
      signal,
    );
    return 1;
  });
}
