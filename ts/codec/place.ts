/**
 * Placement of decoded elements into a larger array (decompress's `place`): a container's
 * elements form an array of `shape` (C order); the block `[start, start + count)` of it is
 * written into `out` at `outOffset`, `out`'s axes stepping `outStrides` elements. How a Zarr
 * reader puts each decoded chunk into its place in the array it returns (parle-codec/zarr),
 * row by row, with no copy of the whole chunk in between. Nothing here allocates per element.
 */
import { ErrorCodes, ParleError } from '../errors.js';
import { bytesAt, copyOutOfMemory, type KernelContext } from '../cpu/procedures.js';

/** Where a decoded container's elements go in a larger array; all counts in elements. */
export interface Placement {
  /** The container's elements as an array of this shape (C order): its product is their count. */
  readonly shape: readonly number[];
  /** The block to write: its first index along each axis... */
  readonly start: readonly number[];
  /** ...and its extent along each axis (0 writes nothing). */
  readonly count: readonly number[];
  /** Where the block's first element goes in `out`. */
  readonly outOffset: number;
  /** `out`'s step along each axis (>= 0; 0 for an axis the block has one index of, as any). */
  readonly outStrides: readonly number[];
}

/**
 * Checks `place` against a container of `elements` elements and an `out` of `outLength`.
 * @throws ParleError INVALID_OPTION (ranks differ, a block outside the shape, a negative or
 *   fractional number, a write past `out`), LENGTH_MISMATCH (a shape whose product is not `elements`)
 */
export function checkPlacement(place: unknown, elements: number, outLength: number): Placement {
  const p = place as Placement;
  const rank = Array.isArray(p?.shape) ? p.shape.length : -1;
  const ints = (a: unknown, name: string) => {
    if (!Array.isArray(a) || a.length !== rank || !a.every((v) => Number.isSafeInteger(v) && v >= 0))
      throw new ParleError(ErrorCodes.INVALID_OPTION, `options.place.${name} must be ${rank} non-negative integers (the shape's rank)`, {
        option: 'place',
      });
  };
  if (rank < 1)
    throw new ParleError(ErrorCodes.INVALID_OPTION, 'options.place.shape must be an array of at least one axis', { option: 'place' });
  ints(p.shape, 'shape');
  ints(p.start, 'start');
  ints(p.count, 'count');
  ints(p.outStrides, 'outStrides');
  if (!Number.isSafeInteger(p.outOffset) || p.outOffset < 0)
    throw new ParleError(ErrorCodes.INVALID_OPTION, 'options.place.outOffset must be a non-negative integer', { option: 'place' });
  const product = p.shape.reduce((a, d) => a * d, 1);
  if (product !== elements)
    throw new ParleError(ErrorCodes.LENGTH_MISMATCH, `options.place.shape holds ${product} elements; the container has ${elements}`);
  let last = p.outOffset;
  let empty = false;
  for (let d = 0; d < rank; d++) {
    if (p.start[d] + p.count[d] > p.shape[d])
      throw new ParleError(ErrorCodes.INVALID_OPTION, `options.place: the block passes the shape along axis ${d}`, { option: 'place' });
    if (p.count[d] === 0) empty = true;
    last += Math.max(0, p.count[d] - 1) * p.outStrides[d];
  }
  if (!empty && last >= outLength)
    throw new ParleError(ErrorCodes.INVALID_OPTION, `options.place writes element ${last} of an out of ${outLength}`, { option: 'place' });
  return p;
}

/** Elements the block of `place` holds. */
export function placedElements(place: Placement): number {
  return place.count.reduce((a, d) => a * d, 1);
}

/**
 * Calls `copy(from, to, n)` for each run of the block of `place` that lies in the container's
 * elements `[first, end)` (one `.parle` chunk's): `from` its index in the container's elements,
 * `to` in `out`, `n` elements along the last axis, whose steps are 1 in the container (C order)
 * and `outStrides[rank - 1]` in `out` (1 for a run copied whole; else element by element).
 */
export function placeRuns(place: Placement, first: number, end: number, copy: (from: number, to: number, n: number) => void): void {
  const { shape, start, count, outOffset, outStrides } = merged(place);
  const rank = shape.length;
  const last = rank - 1;
  if (count.some((c) => c === 0) || end <= first) return;
  // C-order steps of the container's array
  const steps = new Array<number>(rank);
  for (let d = last, step = 1; d >= 0; d--) {
    steps[d] = step;
    step *= shape[d];
  }
  // the rows of the block (every index but the last axis'), in order
  const index = new Array<number>(rank).fill(0);
  for (;;) {
    let from = start[last];
    let to = outOffset;
    for (let d = 0; d < last; d++) {
      from += (start[d] + index[d]) * steps[d];
      to += index[d] * outStrides[d];
    }
    const a = Math.max(from, first);
    const b = Math.min(from + count[last], end);
    if (a < b) copy(a, to + (a - from) * outStrides[last], b - a);
    else if (from >= end) return; // the rows only move on through the container
    // the next row
    let d = last - 1;
    while (d >= 0 && ++index[d] === count[d]) index[d--] = 0;
    if (d < 0) return;
  }
}

/**
 * `place` with its trailing axes merged where the block spans them whole and lies in `out` side
 * by side (the rows of a record array, 5 elements each, become one run a chunk): the same
 * elements to the same places, in fewer runs.
 */
function merged(place: Placement): Placement {
  const shape = [...place.shape];
  const start = [...place.start];
  const count = [...place.count];
  const outStrides = [...place.outStrides];
  for (let d = shape.length - 1; d >= 1; d--) {
    if (start[d] !== 0 || count[d] !== shape[d] || outStrides[d] !== 1 || outStrides[d - 1] !== count[d]) break;
    shape[d - 1] *= shape[d];
    start[d - 1] *= shape[d];
    count[d - 1] *= shape[d];
    outStrides[d - 1] = 1;
    shape.pop();
    start.pop();
    count.pop();
    outStrides.pop();
  }
  return { shape, start, count, outOffset: place.outOffset, outStrides };
}

/**
 * Writes the part of `place`'s block that lies in the container's elements `[first, first + n)`,
 * given as `src` (their bytes side by side, `size` bytes an element), into `dst` (the bytes of
 * `out`): one `.parle` chunk's share of the block. `src` and `dst` must not overlap.
 */
export function placeBytes(place: Placement, src: Uint8Array, first: number, dst: Uint8Array, size: number): void {
  const step = place.outStrides[place.outStrides.length - 1];
  placeRuns(place, first, first + src.length / size, (from, to, n) => copyRun(src, (from - first) * size, dst, to * size, n, size, step));
}

/**
 * Copies `n` elements of `size` bytes from `src` at byte `from` (side by side) to `dst` at byte
 * `to`, stepping `step` elements there (1: one copy of the run).
 */
function copyRun(src: Uint8Array, from: number, dst: Uint8Array, to: number, n: number, size: number, step: number): void {
  if (step === 1) {
    dst.set(src.subarray(from, from + n * size), to);
    return;
  }
  for (let k = 0; k < n; k++) dst.set(src.subarray(from + k * size, from + (k + 1) * size), to + k * step * size);
}

/**
 * As {@link placeBytes}, from the container's elements `[first, first + count)` decoded at `ptr`
 * in the kernels' memory: runs copied whole where the step in `out` is 1 are first moved to
 * `dst`'s alignment where there is room after them (ts/cpu/procedures.ts copyOutOfMemory: V8
 * copies out of shared memory a byte at a time otherwise). The elements at `ptr` are scratch and
 * not valid afterwards; the caller's block must have 7 bytes of room after them. `dst` must not
 * overlap them.
 */
export function placeFromMemory(
  ctx: KernelContext,
  place: Placement,
  ptr: number,
  first: number,
  count: number,
  dst: Uint8Array,
  size: number,
): void {
  const step = place.outStrides[place.outStrides.length - 1];
  // each run is copied when the next one is known: moving it may overwrite up to 7 bytes after
  // it, which must not be the next run's
  let pending: [from: number, to: number, n: number] | undefined;
  const copy = ([from, to, n]: [number, number, number], room: number) => {
    const src = ptr + (from - first) * size;
    if (step !== 1) copyRun(bytesAt(ctx, src, n * size), 0, dst, to * size, n, size, step);
    else if (room >= 7) copyOutOfMemory(ctx, src, n * size, dst, to * size);
    else dst.set(bytesAt(ctx, src, n * size), to * size);
  };
  placeRuns(place, first, first + count, (from, to, n) => {
    if (pending !== undefined) copy(pending, (from - pending[0] - pending[2]) * size);
    pending = [from, to, n];
  });
  if (pending !== undefined) copy(pending, 7);
}
