/**
 * Procedures: what a thread runs on the kernels' memory, by name, from a table the layer above
 * hands over (the codec's: ts/codec/cpu/procedures.ts). The engine's thread runs them for small
 * inputs (InlineExecutor); workers run them otherwise (ts/cpu/worker.ts, bundled with the
 * codec's table as dist/{node,browser}/worker.js). Plain functions of pointers: they allocate nothing in the
 * kernels' memory. This layer's own procedure is `kernel`: one kernel call.
 */
import { ParleError } from '../errors.js';
import type { KernelParams, Outcome, ProcName, Procedures } from './protocol.js';
import type { Kernels } from './wasm.js';

/** The kernels and the memory they work on. */
export interface KernelContext {
  kernels: Kernels;
  memory: WebAssembly.Memory;
}

/** `length` bytes of the kernels' memory at `ptr` (a view; valid until the memory grows). */
export function bytesAt(ctx: KernelContext, ptr: number, length: number): Uint8Array {
  return new Uint8Array(ctx.memory.buffer, ptr, length);
}

/** Copies between the host and the kernels' memory below this size take V8's copy as it is ({@link copyIntoMemory}). */
const ALIGNED_COPY_MIN_BYTES = 4096;

/** Whether the kernels' memory is a SharedArrayBuffer (a page that is not cross-origin isolated has none). */
function sharedMemory(ctx: KernelContext): boolean {
  return typeof SharedArrayBuffer !== 'undefined' && ctx.memory.buffer instanceof SharedArrayBuffer;
}

/**
 * Copies host bytes `src` into the kernels' memory at `ptr`. The up to 7 bytes after
 * `ptr + src.length` may be overwritten: the caller's block must have that room. `src` must
 * not lie in the kernels' memory.
 *
 * Why not `bytesAt(ctx, ptr, n).set(src)`: V8 copies into and out of a SharedArrayBuffer with
 * relaxed atomics, a word at a time where source and destination lie at the same address mod 8,
 * a byte at a time where they do not (on the 2-core dev VM 4 GB/s against 23-30, Node 20). A
 * chunk's payload lies anywhere in a container, and a decoded chunk goes anywhere in an array,
 * so most copies were the slow kind. Here the bytes land 0-7 bytes past `ptr`, at the source's
 * alignment, and wasm's memory.copy (a memmove at full speed whatever the alignment) moves them
 * into place.
 */
export function copyIntoMemory(ctx: KernelContext, ptr: number, src: Uint8Array): void {
  const n = src.length;
  const shift = n >= ALIGNED_COPY_MIN_BYTES && sharedMemory(ctx) ? (src.byteOffset - ptr) & 7 : 0;
  bytesAt(ctx, ptr + shift, n).set(src);
  if (shift !== 0) ctx.kernels.copyBytes(ptr, ptr + shift, n);
}

/**
 * Copies `n` bytes at `ptr` in the kernels' memory to `dst` at `at` (host bytes, or a view of
 * the kernels' memory that does not overlap them). The bytes at `ptr` are scratch: they may be
 * moved up to 7 bytes further (the caller's block must have that room after them) and are not
 * valid afterwards. For the alignment rule see {@link copyIntoMemory}.
 */
export function copyOutOfMemory(ctx: KernelContext, ptr: number, n: number, dst: Uint8Array, at = 0): void {
  if (n >= ALIGNED_COPY_MIN_BYTES && sharedMemory(ctx)) {
    if (dst.buffer === ctx.memory.buffer) {
      ctx.kernels.copyBytes(dst.byteOffset + at, ptr, n);
      return;
    }
    const shift = (dst.byteOffset + at - ptr) & 7;
    if (shift !== 0) {
      ctx.kernels.copyBytes(ptr + shift, ptr, n);
      ptr += shift;
    }
  }
  dst.set(bytesAt(ctx, ptr, n), at);
}

/** The `kernel` procedure: calls one kernel with its arguments; its result, or 0. */
export function callKernel(ctx: KernelContext, { kernel, args }: KernelParams): number {
  const fn = ctx.kernels[kernel] as (...a: number[]) => number | undefined;
  return fn(...args) ?? 0;
}

/** The pointer a region names: a key of the params, or `args.N` for a kernel call's argument N. */
export function regionPointer(params: Record<string, unknown>, key: string): number {
  if (key.startsWith('args.')) return (params.args as number[])[Number(key.slice(5))];
  return params[key] as number;
}

/** Sets the pointer a region names (a worker that owns its memory moves the region). */
export function setRegionPointer(params: Record<string, unknown>, key: string, value: number): void {
  if (key.startsWith('args.')) (params.args as number[])[Number(key.slice(5))] = value;
  else params[key] = value;
}

/** A procedure: a plain function of the kernels and its parameters. */
export type Procedure<P extends ProcName> = (ctx: KernelContext, params: Procedures[P]['params']) => Procedures[P]['result'];

/** The procedures a thread can run, by name: `kernel` always, the rest as the layer above registers them. */
export type ProcedureTable = { kernel: Procedure<'kernel'> } & { [P in ProcName]?: Procedure<P> };

/** The table of this layer alone: kernel calls. */
export const KERNEL_PROCEDURES: ProcedureTable = { kernel: callKernel };

/**
 * Runs procedure `proc` of `table`; a ParleError becomes an error outcome (its code survives
 * postMessage).
 * @throws Error for a procedure the table does not have (a bug: the worker script and the
 *   engine's table differ)
 */
export function runProcedure<P extends ProcName>(
  table: ProcedureTable,
  ctx: KernelContext,
  proc: P,
  params: Procedures[P]['params'],
): Outcome<Procedures[P]['result']> {
  const procedure = table[proc] as Procedure<P> | undefined;
  if (procedure === undefined) throw new Error(`no procedure ${proc} in this thread's table`);
  try {
    return { ok: true, value: procedure(ctx, params) };
  } catch (e) {
    if (e instanceof ParleError) return { ok: false, code: e.code, message: e.message };
    throw e;
  }
}
