/**
 * The bytes of the quantize stage (docs/format.md, "Stage 5: quantize"): the reserved codes, the
 * quantizer step a reader recomputes from the bound, and the quantize header at the start of a
 * payload, for f32 chunks and (version 4) f64 chunks. The quantizer itself (its parameters from
 * a bound, the kernels' contract) is the codec's: ts/codec/quantize.ts.
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
/** Largest code of a quantized f32 element a reader accepts: zigzag(2^24). */
export const CODE_MAX = 2 ** 25;
/** Largest code of a quantized f64 element a reader accepts: zigzag(2^30) (the writer's |q| is at most 2^30). */
export const CODE_MAX_F64 = 2 ** 31;

/** Smallest bound that quantizes; below it every chunk is coded losslessly (see {@link quantizeParams}). */
export const MIN_BOUND = 2 ** -120;
/** The step is 2 abs (1 - STEP_MARGIN): the margin absorbs f32 rounding of x * inv and of q * step. */
export const STEP_MARGIN = 2 ** -5;
/** Bytes of the quantize header at the start of a payload: abs (f64), step (f32), exception count (u32). */
export const QUANTIZE_HEADER_BYTES = 16;
/** Largest step: keeps step * 2^23 and every reconstruction finite. */
const MAX_STEP = 2 ** 100;
/**
 * Smallest bound that quantizes f64; below it every f64 chunk is coded losslessly. With the
 * largest step ({@link MAX_STEP_F64}) it keeps the step, 1 / step and step x 2^30 normal and
 * finite (a subnormal step would make 1 / step Infinity).
 */
export const MIN_BOUND_F64 = 2 ** -960;
/** Largest f64 step: keeps step x 2^30 (the magnitude limit) and every reconstruction finite. */
const MAX_STEP_F64 = 2 ** 960;
/** Bytes of the f64 quantize header: abs (f64), step (f64), exception count (u32), 4 bytes reserved (0). */
export const QUANTIZE_HEADER_BYTES_F64 = 24;

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

/** The f64 quantizer step for bound `abs`: f64(2 abs (1 - 2^-5)) (one rounding), at most 2^960. */
export function stepForF64(abs: number): number {
  return Math.min(2 * abs * (1 - STEP_MARGIN), MAX_STEP_F64);
}

/** Bytes of the quantize header for elements of `width` bytes (f32: 16, f64: 24). */
export function quantizeHeaderBytes(width: 4 | 8): number {
  return width === 8 ? QUANTIZE_HEADER_BYTES_F64 : QUANTIZE_HEADER_BYTES;
}

/** The quantize header at the start of a payload. */
export interface QuantizeHeader {
  abs: number;
  step: number;
  /** Exceptions listed after the header (u32 indices, then values of the elements' width). */
  exceptions: number;
  /** Where the exception indices start: the header's bytes (16, or 24 for f64). */
  indicesAt: number;
  /** Where the exception values start. */
  valuesAt: number;
  /** Bytes of the header and the exception lists: where the codes' payload starts. */
  codesAt: number;
}

/**
 * Writes the quantize header at the start of `out`: for f32 (`width` 4) abs, step (f32),
 * exceptions; for f64 (8) abs, step (f64), exceptions, 4 zero bytes.
 */
export function writeQuantizeHeader(out: Uint8Array, abs: number, step: number, exceptions: number, width: 4 | 8 = 4): void {
  const view = new DataView(out.buffer, out.byteOffset, quantizeHeaderBytes(width));
  view.setFloat64(0, abs, true);
  if (width === 8) {
    view.setFloat64(8, step, true);
    view.setUint32(16, exceptions, true);
    view.setUint32(20, 0, true);
  } else {
    view.setUint32(8, f32Bits(step), true);
    view.setUint32(12, exceptions, true);
  }
}

/**
 * Reads and checks the quantize header of a chunk of `count` elements of `width` bytes (4: f32,
 * 8: f64) whose payload (`payload`, at least its first 16 or 24 bytes) is `payloadBytes` long
 * and must still hold `minCodesBytes` (the codes' stream directory) after the exception lists.
 * @throws ParleError CORRUPT: a bound that is not finite or below {@link MIN_BOUND} (f64:
 *   {@link MIN_BOUND_F64}), a step that is not {@link stepFor} (f64: {@link stepForF64}) the
 *   bound, reserved bytes not 0 (f64), more exceptions than elements or than the payload holds
 */
export function readQuantizeHeader(
  payload: Uint8Array,
  payloadBytes: number,
  count: number,
  minCodesBytes: number,
  index: number,
  width: 4 | 8 = 4,
): QuantizeHeader {
  const corrupt = (why: string) => new ParleError(ErrorCodes.CORRUPT, `corrupt .parle chunk ${index}: ${why}`);
  const headerBytes = quantizeHeaderBytes(width);
  if (payloadBytes < headerBytes || payload.length < headerBytes) throw corrupt(`quantized payload of ${payloadBytes} bytes`);
  const view = new DataView(payload.buffer, payload.byteOffset, headerBytes);
  const abs = view.getFloat64(0, true);
  let step: number;
  let exceptions: number;
  if (width === 8) {
    step = view.getFloat64(8, true);
    exceptions = view.getUint32(16, true);
    if (!Number.isFinite(abs) || !(abs >= MIN_BOUND_F64)) throw corrupt(`error bound ${abs}`);
    if (step !== stepForF64(abs)) throw corrupt(`quantizer step ${step} is not the step of bound ${abs}`);
    if (view.getUint32(20, true) !== 0) throw corrupt('reserved bytes of the quantize header are not zero');
  } else {
    const stepBits = view.getUint32(8, true);
    exceptions = view.getUint32(12, true);
    if (!Number.isFinite(abs) || !(abs >= MIN_BOUND)) throw corrupt(`error bound ${abs}`);
    if (stepBits !== f32Bits(stepFor(abs))) throw corrupt(`quantizer step ${bitsF32(stepBits)} is not the step of bound ${abs}`);
    step = bitsF32(stepBits);
  }
  if (exceptions > count) throw corrupt(`${exceptions} exceptions for ${count} elements`);
  const valuesAt = headerBytes + 4 * exceptions;
  const codesAt = valuesAt + width * exceptions;
  if (codesAt + minCodesBytes > payloadBytes) throw corrupt(`${exceptions} exceptions do not fit a payload of ${payloadBytes} bytes`);
  return { abs, step, exceptions, indicesAt: headerBytes, valuesAt, codesAt };
}
