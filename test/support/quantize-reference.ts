/**
 * A plain TypeScript reference of the quantize stage (docs/format.md, "Stage 5: quantize"),
 * one Math.fround per f32 operation, written from the format text: the kernels of
 * assembly/quantize.ts (both builds) and shaders/codec-quantize.wgsl are compared with it.
 */
import type { QuantizeParams } from '../../ts/codec/quantize.js';

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
