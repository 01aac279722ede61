/**
 * The bytes of the quantize stage (docs/format.md, "Stage 5: quantize"): the reserved codes, the
 * quantizer step a reader recomputes from the bound, and the quantize header at the start of a
 * payload. The quantizer itself (its parameters from a bound, the kernels' contract) is the
 * codec's: ts/codec/quantize.ts.
 */
import { ErrorCodes, ParleError } from '../errors.js';

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

/** The quantizer step for bound `abs` (what a reader recomputes to check a payload's header). */
export function stepFor(abs: number): number {
  return Math.fround(Math.min(2 * abs * (1 - STEP_MARGIN), MAX_STEP));
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
