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
