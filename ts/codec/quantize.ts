/**
 * The error-bounded lossy mode for f32 (docs/format.md, "Stage 5: quantize"): Haugen's
 * mid-tread uniform threshold quantizer (his equations 2.2a / 2.2b after Rosten) with the dead
 * zone of a pointwise bound, run before the version-2 stages. Each element x becomes an integer
 * q with f32(q) * step within `abs` of x (checked in f32 for every element); the codes
 * zigzag(q) then go through the usual pipeline, picked by the chooser. NaN, +-Infinity and -0
 * get reserved codes; anything the arithmetic cannot bring within the bound is an exception,
 * stored exactly.
 *
 * This module derives the kernels' parameters from the bound, reads and writes the quantize
 * header of a payload, and declares the kernels' contract (assembly/quantize.ts; WGSL twin in
 * shaders/codec-quantize.wgsl).
 */
import { checkKeys, ErrorCodes, ParleError } from '../errors.js';

/** Reserved codes (assembly/quantize.ts). A quantized element's code is zigzag(q) <= {@link CODE_MAX}. */
export const enum Code {
  Exception = 0xffffffff,
  NaN = 0xfffffffe,
  PosInfinity = 0xfffffffd,
  NegInfinity = 0xfffffffc,
  NegZero = 0xfffffffb,
}
/** Largest code of a quantized element a reader accepts: zigzag(2^24). */
export const CODE_MAX = 2 ** 25;

/** Smallest bound that quantizes; below it every chunk is coded losslessly (see {@link quantizeParams}). */
export const MIN_BOUND = 2 ** -120;
/** The step is 2 abs (1 - STEP_MARGIN): the margin absorbs f32 rounding of x * inv and of q * step. */
export const STEP_MARGIN = 2 ** -5;
/** Bytes of the quantize header at the start of a payload: abs (f64), step (f32), exception count (u32). */
export const QUANTIZE_HEADER_BYTES = 16;
/** Largest step: keeps step * 2^23 and every reconstruction finite. */
const MAX_STEP = 2 ** 100;

/** The kernels' parameters for a bound. */
export interface QuantizeParams {
  /** The bound, as given. */
  abs: number;
  /** Quantizer step (an f32): f32(2 abs (1 - 2^-5)), at most 2^100. */
  step: number;
  /** f32(1 / step). */
  inv: number;
  /** The largest f32 <= abs: an element is accepted when f32(|x - x'|) < tol. */
  tol: number;
  /** Bits of f32(step x 2^23): larger magnitudes (and NaN, Infinity) are not quantized. */
  limBits: number;
}

const f32Scratch = new Float32Array(1);
const u32Scratch = new Uint32Array(f32Scratch.buffer);

/** The bits of an f32. */
export function f32Bits(x: number): number {
  f32Scratch[0] = x;
  return u32Scratch[0];
}

/** The f32 of some bits. */
export function bitsF32(bits: number): number {
  u32Scratch[0] = bits;
  return f32Scratch[0];
}

/** The largest f32 not above `x` (x > 0, finite). */
function f32AtMost(x: number): number {
  let f = Math.fround(x);
  if (f > x) f = bitsF32(f32Bits(f) - 1);
  return f;
}

/** The quantizer step for bound `abs` (what a reader recomputes to check a payload's header). */
export function stepFor(abs: number): number {
  return Math.fround(Math.min(2 * abs * (1 - STEP_MARGIN), MAX_STEP));
}

/**
 * The kernels' parameters for `abs`, or undefined when the bound is below {@link MIN_BOUND}:
 * there every chunk is coded losslessly (which meets any bound), since a step that small would
 * meet f32 subnormals, which a GPU may flush to zero, and the two paths would then differ.
 */
export function quantizeParams(abs: number): QuantizeParams | undefined {
  if (!(abs >= MIN_BOUND)) return undefined;
  const step = stepFor(abs);
  const inv = Math.fround(1 / step);
  const tol = f32AtMost(Math.min(abs, 3.4e38));
  const lim = Math.fround(step * 2 ** 23);
  const limBits = Math.min(f32Bits(lim), 0x7f7fffff);
  return { abs, step, inv, tol, limBits };
}

/**
 * Checks `options.errorBound` for elements of `type`: `{ abs }` with abs a finite number > 0,
 * and only for f32. Returns the bound, or undefined when absent. Other keys (`{ rel }`, a
 * relative bound, is not a mode of this codec) are refused by name.
 * @param path where the bound sits in the caller's options (messages say `options.<path>`).
 * @throws ParleError INVALID_OPTION naming the problem, with `option` the path (`errorBound`,
 *   `errorBound.abs`, `errorBound.rel`)
 */
export function checkErrorBound(value: unknown, type: string, path = 'errorBound'): number | undefined {
  if (value === undefined) return undefined;
  const name = `options.${path}`;
  if (typeof value !== 'object' || value === null) {
    throw new ParleError(ErrorCodes.INVALID_OPTION, `${name} must be an object { abs }; got ${value === null ? 'null' : typeof value}`);
  }
  checkKeys(value, ['abs'], 'compress', path);
  if (type !== 'f32') {
    throw new ParleError(ErrorCodes.INVALID_OPTION, `${name} applies to f32 data only; got ${type} (integers are compressed losslessly)`);
  }
  const abs = (value as { abs?: unknown }).abs;
  if (typeof abs !== 'number' || !Number.isFinite(abs) || abs <= 0) {
    throw new ParleError(
      ErrorCodes.INVALID_OPTION,
      `${name}.abs must be a finite number > 0; got ${typeof abs === 'number' ? String(abs) : typeof abs}`,
    );
  }
  return abs;
}

/** The quantize header at the start of a payload. */
export interface QuantizeHeader {
  abs: number;
  step: number;
  /** Exceptions listed after the header (indices, then values: 8 bytes each). */
  exceptions: number;
  /** Bytes of the header and the exception lists: where the codes' payload starts. */
  codesAt: number;
}

/** Writes the quantize header at the start of `out`. */
export function writeQuantizeHeader(out: Uint8Array, abs: number, step: number, exceptions: number): void {
  const view = new DataView(out.buffer, out.byteOffset, QUANTIZE_HEADER_BYTES);
  view.setFloat64(0, abs, true);
  view.setUint32(8, f32Bits(step), true);
  view.setUint32(12, exceptions, true);
}

/**
 * Reads and checks the quantize header of a chunk of `count` elements whose payload (`payload`,
 * at least its first 16 bytes) is `payloadBytes` long and must still hold `minCodesBytes` (the
 * codes' stream directory) after the exception lists.
 * @throws ParleError CORRUPT: a bound that is not finite or below {@link MIN_BOUND}, a step that
 *   is not {@link stepFor} the bound, more exceptions than elements or than the payload holds
 */
export function readQuantizeHeader(
  payload: Uint8Array,
  payloadBytes: number,
  count: number,
  minCodesBytes: number,
  index: number,
): QuantizeHeader {
  const corrupt = (why: string) => new ParleError(ErrorCodes.CORRUPT, `corrupt .parle chunk ${index}: ${why}`);
  if (payloadBytes < QUANTIZE_HEADER_BYTES || payload.length < QUANTIZE_HEADER_BYTES)
    throw corrupt(`quantized payload of ${payloadBytes} bytes`);
  const view = new DataView(payload.buffer, payload.byteOffset, QUANTIZE_HEADER_BYTES);
  const abs = view.getFloat64(0, true);
  const stepBits = view.getUint32(8, true);
  const exceptions = view.getUint32(12, true);
  if (!Number.isFinite(abs) || !(abs >= MIN_BOUND)) throw corrupt(`error bound ${abs}`);
  if (stepBits !== f32Bits(stepFor(abs))) throw corrupt(`quantizer step ${bitsF32(stepBits)} is not the step of bound ${abs}`);
  if (exceptions > count) throw corrupt(`${exceptions} exceptions for ${count} elements`);
  const codesAt = QUANTIZE_HEADER_BYTES + 8 * exceptions;
  if (codesAt + minCodesBytes > payloadBytes) throw corrupt(`${exceptions} exceptions do not fit a payload of ${payloadBytes} bytes`);
  return { abs, step: bitsF32(stepBits), exceptions, codesAt };
}

/** The quantize kernels (assembly/quantize.ts), part of `Kernels` (ts/cpu/wasm.ts). */
export interface QuantizeKernels {
  /**
   * Quantizes `n` f32 at `inPtr`: codes (u32) to `codesPtr`, reconstructions to `reconPtr`, the
   * first `cap` exceptions' indices and bits to `excIndexPtr` / `excValuePtr`. Returns the
   * exception count (may exceed cap). Parameters from {@link quantizeParams}.
   */
  quantizeF32(
    inPtr: number,
    n: number,
    step: number,
    inv: number,
    tol: number,
    limBits: number,
    codesPtr: number,
    reconPtr: number,
    excIndexPtr: number,
    excValuePtr: number,
    cap: number,
  ): number;
  /** Codes to f32 (exceptions as 0); returns the Code.Exception count, or -1 for an invalid code. In place allowed. */
  dequantizeF32(codesPtr: number, n: number, step: number, outPtr: number): number;
  /** Writes the exceptions over the output, checking order, range and codes; 0 or -1. */
  scatterExceptions(codesPtr: number, n: number, excIndexPtr: number, excValuePtr: number, e: number, outPtr: number): number;
}
