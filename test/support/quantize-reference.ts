/**
 * A plain TypeScript reference of the quantize stage (docs/format.md, "Stage 5: quantize"),
 * one Math.fround per f32 operation (f64: plain JS arithmetic), written from the format text: the
 * kernels of assembly/quantize.ts (both builds) and shaders/codec-quantize.wgsl are compared with
 * it; for f64 also a quantized chunk's payload, written and read (the codes' pipeline by
 * test/support/codec-reference.ts).
 */
import type { QuantizeParams } from '../../ts/codec/quantize.js';
import { decodePayload, encodePayload } from './codec-reference.js';

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);
const bitsOf = (x: number) => ((f32[0] = x), u32[0]);

/** Round half to even (WGSL round, wasm nearest). */
function roundEven(v: number): number {
  const f = Math.floor(v);
  const d = v - f;
  return d > 0.5 ? f + 1 : d < 0.5 ? f : f % 2 === 0 ? f : f + 1;
}

function special(b: number): number {
  if (b === 0x7fc00000) return 0xfffffffe;
  if ((b & 0x7fffffff) === 0x7f800000) return b >>> 31 ? 0xfffffffc : 0xfffffffd;
  if (b === 0x80000000) return 0xfffffffb;
  return 0xffffffff;
}

/** Codes, reconstructions' bits and exception indices of `bits` (the elements' bits). */
export function refQuantize(bits: Uint32Array, p: QuantizeParams): { codes: Uint32Array; recon: Uint32Array; exceptions: number[] } {
  const codes = new Uint32Array(bits.length);
  const recon = new Uint32Array(bits.length);
  const exceptions: number[] = [];
  for (let i = 0; i < bits.length; i++) {
    const b = bits[i];
    let code: number | undefined;
    if ((b & 0x7fffffff) > p.limBits || b === 0x80000000) code = special(b);
    else {
      u32[0] = b;
      const x = f32[0];
      let q = roundEven(Math.fround(x * p.inv));
      let r = Math.fround(q * p.step);
      if (Math.abs(Math.fround(x - r)) >= p.tol) {
        q += x > r ? 1 : -1;
        r = Math.fround(q * p.step);
        if (Math.abs(Math.fround(x - r)) >= p.tol) code = 0xffffffff;
      }
      if (code === undefined) {
        codes[i] = ((q << 1) ^ (q >> 31)) >>> 0;
        recon[i] = bitsOf(r);
        continue;
      }
    }
    codes[i] = code;
    recon[i] = b;
    if (code === 0xffffffff) exceptions.push(i);
  }
  return { codes, recon, exceptions };
}

// ---------------------------------------------------------------------------------------------
// f64 (docs/format.md, "Stage 5: quantize", f64): plain JS numbers are f64, so each operation
// below is the format's one f64 operation. Elements are handled as their bits (BigUint64Array):
// a NaN read into a JS number may lose its payload.
// ---------------------------------------------------------------------------------------------

const F64_NAN = 0x7ff8000000000000n;
const F64_ABS = 0x7fffffffffffffffn;
const F64_INF = 0x7ff0000000000000n;
const F64_NEG_ZERO = 0x8000000000000000n;
const f64 = new Float64Array(1);
const u64 = new BigUint64Array(f64.buffer);
const f64Of = (bits: bigint) => ((u64[0] = bits), f64[0]);
const bitsOf64 = (x: number) => ((f64[0] = x), u64[0]);

/** The f64 parameters, from the format text: step f64(2 abs (1 - 2^-5)) capped at 2^960, inv 1 / step, lim step x 2^30. */
export function refParamsF64(abs: number): { abs: number; step: number; inv: number; lim: number } | undefined {
  if (!(abs >= 2 ** -960)) return undefined;
  const step = Math.min(2 * abs * (1 - 2 ** -5), 2 ** 960);
  return { abs, step, inv: 1 / step, lim: step * 2 ** 30 };
}

function special64(b: bigint): number {
  if (b === F64_NAN) return 0xfffffffe;
  if ((b & F64_ABS) === F64_INF) return b >> 63n ? 0xfffffffc : 0xfffffffd;
  if (b === F64_NEG_ZERO) return 0xfffffffb;
  return 0xffffffff;
}

/** Codes, reconstructions' bits and exception indices of the f64 elements `bits`, by the writer's rule (f64). */
export function refQuantizeF64(
  bits: BigUint64Array,
  p: { abs: number; step: number; inv: number; lim: number },
): { codes: Uint32Array; recon: BigUint64Array; exceptions: number[] } {
  const codes = new Uint32Array(bits.length);
  const recon = new BigUint64Array(bits.length);
  const exceptions: number[] = [];
  const limBits = bitsOf64(p.lim);
  for (let i = 0; i < bits.length; i++) {
    const b = bits[i];
    let code: number | undefined;
    if ((b & F64_ABS) > limBits || b === F64_NEG_ZERO) code = special64(b);
    else {
      const x = f64Of(b);
      let q = roundEven(x * p.inv);
      let r = q * p.step;
      if (Math.abs(x - r) >= p.abs) {
        q += x > r ? 1 : -1;
        r = q * p.step;
        if (Math.abs(x - r) >= p.abs) code = 0xffffffff;
      }
      if (code === undefined) {
        codes[i] = ((q << 1) ^ (q >> 31)) >>> 0;
        // (q = 0 reconstructs as +0: q is an integer, never -0)
        recon[i] = bitsOf64((q === 0 ? 0 : q) * p.step);
        continue;
      }
    }
    codes[i] = code;
    recon[i] = b;
    if (code === 0xffffffff) exceptions.push(i);
  }
  return { codes, recon, exceptions };
}

/**
 * The payload of a quantized f64 chunk (its elements' little-endian bytes) under bound `abs`,
 * the codes coded by `stages` (test/support/codec-reference.ts), or undefined when the format's
 * writer would code it losslessly (bound below 2^-960, exceptions past count / 2, or a payload
 * not below count x 8). Also the reconstructed elements' bytes.
 */
export function refQuantizedPayloadF64(
  elementBytes: Uint8Array,
  abs: number,
  stages: readonly number[],
): { payload: Uint8Array; recon: Uint8Array } | undefined {
  const p = refParamsF64(abs);
  if (p === undefined) return undefined;
  const count = elementBytes.length / 8;
  const bits = new BigUint64Array(elementBytes.slice().buffer);
  const { codes, recon, exceptions } = refQuantizeF64(bits, p);
  const E = exceptions.length;
  if (E > Math.floor(count / 2)) return undefined;
  const codesPayload = encodePayload(stages, new Uint8Array(codes.buffer), 4);
  const payload = new Uint8Array(24 + 12 * E + codesPayload.length);
  if (payload.length >= 8 * count) return undefined;
  const view = new DataView(payload.buffer);
  view.setFloat64(0, abs, true);
  view.setFloat64(8, p.step, true);
  view.setUint32(16, E, true);
  view.setUint32(20, 0, true);
  exceptions.forEach((i, j) => {
    view.setUint32(24 + 4 * j, i, true);
    view.setBigUint64(24 + 4 * E + 8 * j, bits[i], true);
  });
  payload.set(codesPayload, 24 + 12 * E);
  return { payload, recon: new Uint8Array(recon.buffer) };
}

/**
 * The elements' bytes of a quantized f64 payload of `count` elements coded by `stages`, with
 * every check of "What a reader checks" for it; throws `Error('corrupt: ...')`.
 */
export function refDequantizePayloadF64(payload: Uint8Array, stages: readonly number[], count: number): Uint8Array {
  const corrupt = (why: string): never => {
    throw new Error(`corrupt: ${why}`);
  };
  if (stages.length === 0) corrupt('quantized without a pipeline');
  if (payload.length >= 8 * count) corrupt(`quantized P ${payload.length} not below ${8 * count}`);
  if (payload.length < 24) corrupt(`quantized payload of ${payload.length} bytes`);
  const view = new DataView(payload.buffer, payload.byteOffset, payload.byteLength);
  const abs = view.getFloat64(0, true);
  const step = view.getFloat64(8, true);
  const E = view.getUint32(16, true);
  if (!Number.isFinite(abs) || !(abs >= 2 ** -960)) corrupt(`bound ${abs}`);
  if (step !== refParamsF64(abs)!.step) corrupt(`step ${step} of bound ${abs}`);
  if (view.getUint32(20, true) !== 0) corrupt('reserved bytes 20..23');
  if (E > count) corrupt(`${E} exceptions`);
  if (24 + 12 * E > payload.length) corrupt('exceptions past the payload');
  const codeBytes = decodePayload(stages, payload.subarray(24 + 12 * E), 4, count);
  const codes = new Uint32Array(codeBytes.slice().buffer);
  const out = new BigUint64Array(count);
  let found = 0;
  for (let i = 0; i < count; i++) {
    const c = codes[i];
    if (c <= 2 ** 31) {
      const q = c % 2 === 0 ? c / 2 : -(c + 1) / 2;
      out[i] = bitsOf64((q === 0 ? 0 : q) * step);
    } else if (c === 0xfffffffb) out[i] = F64_NEG_ZERO;
    else if (c === 0xfffffffc) out[i] = F64_INF | F64_NEG_ZERO;
    else if (c === 0xfffffffd) out[i] = F64_INF;
    else if (c === 0xfffffffe) out[i] = F64_NAN;
    else if (c === 0xffffffff) found++;
    else corrupt(`code 0x${c.toString(16)}`);
  }
  if (found !== E) corrupt(`${found} exception codes, ${E} listed`);
  let last = -1;
  for (let j = 0; j < E; j++) {
    const i = view.getUint32(24 + 4 * j, true);
    if (i <= last || i >= count || codes[i] !== 0xffffffff) corrupt(`exception index ${i}`);
    out[i] = view.getBigUint64(24 + 4 * E + 8 * j, true);
    last = i;
  }
  return new Uint8Array(out.buffer);
}
