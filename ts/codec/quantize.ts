/**
 * The error-bounded lossy mode for f32 and f64 (docs/format.md, "Stage 5: quantize"): Haugen's
 * mid-tread uniform threshold quantizer (his equations 2.2a / 2.2b after Rosten) with the dead
 * zone of a pointwise bound, run before the version-2 stages. Each element x becomes an integer
 * q with f32(q) * step (f64: f64(q) * step) within `abs` of x (checked in the element's own
 * arithmetic for every element); the u32 codes zigzag(q) then go through the usual pipeline at
 * width 4, picked by the chooser. NaN, +-Infinity and -0 get reserved codes; anything the
 * arithmetic cannot bring within the bound is an exception, stored exactly.
 *
 * This module derives the kernels' parameters from the bound and checks the option; the
 * header's bytes and the reserved codes are in ts/format/quantize.ts, the kernels' contract in
 * ts/cpu/wasm.ts (assembly/quantize.ts; WGSL twin in shaders/codec-quantize.wgsl).
 */
import { checkKeys, ErrorCodes, ParleError } from '../errors.js';
import { bitsF32, f32Bits, MIN_BOUND, MIN_BOUND_F64, stepFor, stepForF64 } from '../format/quantize.js';

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

/** The largest f32 not above `x` (x > 0, finite). */
function f32AtMost(x: number): number {
  let f = Math.fround(x);
  if (f > x) f = bitsF32(f32Bits(f) - 1);
  return f;
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

/** The f64 kernel's parameters for a bound (docs/format.md, "Stage 5: quantize", f64). */
export interface QuantizeParamsF64 {
  /** The bound, as given; also the tolerance: an element is accepted when f64(|x - x'|) < abs. */
  abs: number;
  /** Quantizer step: f64(2 abs (1 - 2^-5)), at most 2^960. */
  step: number;
  /** f64(1 / step). */
  inv: number;
  /** step x 2^30 (exact): larger magnitudes (and NaN, Infinity) are not quantized. */
  lim: number;
}

/**
 * The f64 kernel's parameters for `abs`, or undefined when the bound is below
 * {@link MIN_BOUND_F64} (2^-960): every chunk is then coded losslessly.
 *   quantizeParamsF64(0.25)  ->  { abs: 0.25, step: 0.484375, inv: 2.0645..., lim: 0.484375 x 2^30 }
 */
export function quantizeParamsF64(abs: number): QuantizeParamsF64 | undefined {
  if (!(abs >= MIN_BOUND_F64)) return undefined;
  const step = stepForF64(abs);
  return { abs, step, inv: 1 / step, lim: step * 2 ** 30 };
}

/** Element types the lossy mode takes. */
export const LOSSY_TYPES: readonly string[] = ['f32', 'f64'];

/**
 * Checks `options.errorBound` for elements of `type`: `{ abs }` with abs a finite number > 0,
 * and only for f32 and f64. Returns the bound, or undefined when absent. Other keys (`{ rel }`, a
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
  if (!LOSSY_TYPES.includes(type)) {
    throw new ParleError(
      ErrorCodes.INVALID_OPTION,
      `${name} applies to f32 and f64 data only; got ${type} (${type === 'f16' ? 'f16 is' : 'integers are'} compressed losslessly)`,
    );
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
