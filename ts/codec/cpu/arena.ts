/**
 * The kernels' memory as the CPU codec's procedures see it (./encode.ts, ./decode.ts): the
 * kernels and their memory, the bump arena that all of a procedure's scratch comes from (sized
 * by encodeArenaBytes in ./encode.ts and decodeArenaBytes in ./decode.ts), views of the memory,
 * the slack the kernels may write or read past a buffer's end, and the tree hash of a range
 * (docs/format.md, "Tree hash"; assembly/hash.ts).
 */
import type { Kernels } from '../../cpu/wasm.js';
import { DECIMAL_FACTORS } from '../predict.js';

/** The kernels and the memory they work on (as ts/cpu/procedures.ts's KernelContext). */
export interface CodecContext {
  kernels: Kernels;
  memory: WebAssembly.Memory;
}

/** Bytes the kernels may write or read past a buffer's end (v128 stores, 8-byte bit I/O, decode slack). */
export const SLACK = 64;
/** Bytes of small scratch at the arena's start: histogram scratch, histograms, runs, code tables. */
export const SMALL_SCRATCH = 32 << 10;

/** A bump allocator over [ptr, ptr + bytes). */
export class Arena {
  private next: number;
  constructor(
    readonly ptr: number,
    private readonly end: number,
  ) {
    this.next = ptr;
  }
  alloc(bytes: number): number {
    // arithmetic, not `& ~15`: pointers reach 4 GiB, past 32-bit bitwise operators
    const at = Math.ceil(this.next / 16) * 16;
    if (at + bytes > this.end) throw new Error(`codec arena overflow: ${bytes} bytes at ${at - this.ptr} of ${this.end - this.ptr}`);
    this.next = at + bytes;
    return at;
  }
  mark(): number {
    return this.next;
  }
  reset(mark: number): void {
    this.next = mark;
  }
}

/** A byte view of `length` bytes at `ptr` in the kernels' memory. */
export function u8(ctx: CodecContext, ptr: number, length: number): Uint8Array {
  return new Uint8Array(ctx.memory.buffer, ptr, length);
}

/** A u32 view of `length` words at `ptr` (4-byte aligned) in the kernels' memory. */
export function u32(ctx: CodecContext, ptr: number, length: number): Uint32Array {
  return new Uint32Array(ctx.memory.buffer, ptr, length);
}

/** The tree hash of `len` bytes at `ptr`, as stored in a version-2 entry. */
export function treeHashAt(ctx: CodecContext, arena: Arena, ptr: number, len: number): number {
  const mark = arena.mark();
  const scratch = arena.alloc(Math.ceil(len / 4096) * 4 + 16);
  const h = ctx.kernels.treeHash(ptr, len, scratch) >>> 0;
  arena.reset(mark);
  return h;
}

/**
 * The decimal map's exponents in the arena, a byte a field, as assembly/predict.ts's decimal
 * kernels take them (decimalEncodeF64 and decimalDecodeF64 need nothing else). Returns expPtr.
 */
export function exponentsAt(ctx: CodecContext, arena: Arena, exponents: readonly number[]): number {
  const expPtr = arena.alloc(exponents.length);
  u8(ctx, expPtr, exponents.length).set(exponents);
  return expPtr;
}

/**
 * The f32 decimal map's tables in the arena, as assembly/predict.ts decimalEncodeF32 and
 * decimalDecodeF32 take them: {@link exponentsAt}, and F[e] (DECIMAL_FACTORS) as f64 at
 * factorPtr (the arena's 16-byte alignment suits f64).
 */
export function decimalTablesAt(ctx: CodecContext, arena: Arena, exponents: readonly number[]): { expPtr: number; factorPtr: number } {
  const expPtr = exponentsAt(ctx, arena, exponents);
  const factorPtr = arena.alloc(8 * DECIMAL_FACTORS.length);
  new Float64Array(ctx.memory.buffer, factorPtr, DECIMAL_FACTORS.length).set(DECIMAL_FACTORS);
  return { expPtr, factorPtr };
}
