/**
 * The pack stage's kernels (assembly/pack.ts; docs/format.md "Pack streams") in both builds:
 * round trips over widths 1, 2, 4 and block-boundary lengths, on all zeros, all max, one outlier
 * a block, small negative deltas and random values; every stream also read by a plain reference
 * decoder written from docs/format.md; packBytes and packStats against the encoder; and hostile
 * streams (lying bit widths, exception counts, positions, truncations, random mutations) placed
 * at the very end of the memory, so that a read past the stream traps, with a guard after the
 * output so that a write past it shows. Seeded: every failure prints its seed.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { PACK_SCRATCH_BYTES } from '../ts/cpu/wasm.js';
import { KernelHarness, loadBothBuilds, type TestedVariant } from './support/kernels.js';
import * as ref from './support/codec-reference.js';
import { Rng, caseSeed, describeSeed } from './support/random.js';

const VARIANTS: readonly TestedVariant[] = ['simd', 'scalar'];
const WIDTHS = [1, 2, 4] as const;
type Width = (typeof WIDTHS)[number];
const SIZES = [0, 1, 3, 4, 5, 15, 16, 17, 255, 256, 257, 511, 512, 1000, 4099];
const SENTINEL = 0xa5;
const GUARD = 64;

let builds: Record<TestedVariant, KernelHarness>;
beforeAll(async () => {
  builds = await loadBothBuilds();
});

/** The reference decoder: elements as u32 (low 8w bits), or a string saying why not. */
function referenceDecode(s: Uint8Array, n: number, w: Width): Uint32Array | string {
  try {
    const bytes = ref.packDecodeStream(s, n * w, w);
    return asU32(bytes, w);
  } catch (e) {
    return (e as Error).message;
  }
}

type Shape = 'zeros' | 'max' | 'outlier' | 'small-negative' | 'random' | 'ramp' | 'narrow';
const SHAPES: readonly Shape[] = ['zeros', 'max', 'outlier', 'small-negative', 'random', 'ramp', 'narrow'];

function makeData(rng: Rng, shape: Shape, n: number, w: Width): Uint8Array {
  const max = 2 ** (8 * w) - 1;
  const v = new Uint32Array(n);
  for (let i = 0; i < n; i++) {
    switch (shape) {
      case 'zeros': v[i] = 0; break;
      case 'max': v[i] = max; break;
      case 'outlier': v[i] = i % 256 === 77 ? max - (rng.nextU32() % 3) : rng.nextU32() % 4; break;
      case 'small-negative': v[i] = (((rng.nextU32() % 9) - 4) >>> 0) % 2 ** (8 * w); break;
      case 'random': v[i] = rng.nextU32() % 2 ** (8 * w); break;
      case 'ramp': v[i] = (1000 + i) % 2 ** (8 * w); break;
      case 'narrow': v[i] = (rng.nextU32() % 16) + (rng.nextFloat() < 0.03 ? rng.nextU32() % 2 ** (8 * w) : 0); break;
    }
  }
  const bytes = new Uint8Array(n * w);
  for (let i = 0; i < n; i++) for (let k = 0; k < w; k++) bytes[i * w + k] = Math.floor(v[i] / 2 ** (8 * k)) & 0xff;
  return bytes;
}

function asU32(bytes: Uint8Array, w: Width): Uint32Array {
  const n = bytes.length / w;
  const out = new Uint32Array(n);
  for (let i = 0; i < n; i++) {
    let x = 0;
    for (let k = 0; k < w; k++) x += bytes[i * w + k] * 2 ** (8 * k);
    out[i] = x;
  }
  return out;
}

/** Encodes with the kernel; returns the stream. */
function encode(h: KernelHarness, data: Uint8Array, w: Width, capacity?: number): Uint8Array | undefined {
  h.reset();
  const n = data.length / w;
  const inPtr = h.copyIn(data, 16);
  const bound = Math.ceil(n / 256) * 20 + n * w + 64;
  const outPtr = h.allocFilled(bound + GUARD, SENTINEL);
  const scratch = h.alloc(PACK_SCRATCH_BYTES);
  const cap = capacity ?? bound;
  const bytes = h.kernels.packEncode(inPtr, n, w, outPtr, cap, scratch);
  if (bytes < 0) {
    expect(h.bytes(outPtr + cap, GUARD).every((x) => x === SENTINEL)).toBe(true);
    return undefined;
  }
  expect(bytes).toBeLessThanOrEqual(cap);
  expect(h.kernels.packBytes(inPtr, n, w, scratch)).toBe(bytes);
  return h.bytes(outPtr, bytes).slice();
}

/**
 * Decodes `stream` placed at the very end of the memory (a read past it traps) into an output
 * followed by a guard. Returns the kernel's answer and the output.
 */
function decodeAtEnd(h: KernelHarness, stream: Uint8Array, n: number, w: Width): { result: number; out: Uint8Array } {
  h.reset();
  const outPtr = h.allocFilled(n * w + GUARD, SENTINEL);
  const scratch = h.alloc(PACK_SCRATCH_BYTES);
  const srcPtr = h.byteLength - stream.length;
  expect(srcPtr).toBeGreaterThan(scratch + PACK_SCRATCH_BYTES);
  h.bytes(srcPtr, stream.length).set(stream);
  const result = h.kernels.packDecode(srcPtr, stream.length, n, w, outPtr, scratch);
  expect(h.bytes(outPtr + n * w, GUARD).every((x) => x === SENTINEL)).toBe(true);
  return { result, out: h.bytes(outPtr, n * w).slice() };
}

describe.each(VARIANTS)('pack kernels (%s build)', (variant) => {
  for (const w of WIDTHS) {
    for (const shape of SHAPES) {
      it(`round trips width ${w}, ${shape}, sizes ${SIZES.join(' ')}`, () => {
        const h = builds[variant];
        const seed = caseSeed(`pack ${w} ${shape}`);
        const rng = new Rng(seed);
        for (const n of SIZES) {
          const data = makeData(rng, shape, n, w);
          const stream = encode(h, data, w)!;
          const ctx = `${describeSeed(seed)} n=${n}`;
          expect(stream, ctx).toBeDefined();
          const { result, out } = decodeAtEnd(h, stream, n, w);
          expect(result, ctx).toBe(stream.length);
          expect(out, ctx).toEqual(data);
          const viaRef = referenceDecode(stream, n, w);
          expect(viaRef, ctx).toEqual(asU32(data, w));
          // a full block of raw values costs its bytes plus at most 3 + w + 16 of header and padding
          expect(stream.length, ctx).toBeLessThanOrEqual(n * w + Math.ceil(n / 256) * (3 + w + 16));
          if (shape === 'zeros' || shape === 'max') expect(stream.length, ctx).toBe(Math.ceil(n / 256) * (2 + w));
        }
      });
    }
  }

  it('takes exceptions where they pay: one outlier in a block of 2-bit values', () => {
    const h = builds[variant];
    const v = new Uint32Array(256).map((_, i) => i % 4);
    v[100] = 0xfffffff0;
    const stream = encode(h, new Uint8Array(v.buffer), 4)!;
    // b = 2, one exception of 30 high bits: 3 + 4 + 64 + 1 + 4
    expect(stream[0] & 0x3f).toBe(2);
    expect(stream[1]).toBe(1);
    expect(stream.length).toBe(3 + 4 + 64 + 1 + 4);
  });

  it('zigzags small negative values: a block of -2..2 as i16 packs in 3 bits', () => {
    const h = builds[variant];
    const v = new Uint16Array(256).map((_, i) => ((i % 5) - 2) & 0xffff);
    const stream = encode(h, new Uint8Array(v.buffer), 2)!;
    expect(stream[0] & 0x80).toBe(0x80);
    expect(stream[0] & 0x3f).toBe(3);
  });

  it('returns -1 and writes nothing past the capacity when the stream does not fit', () => {
    const h = builds[variant];
    const rng = new Rng(caseSeed('pack capacity'));
    const data = makeData(rng, 'random', 1000, 2);
    const full = encode(h, data, 2)!;
    for (const cap of [0, 1, 100, full.length - 1]) expect(encode(h, data, 2, cap)).toBeUndefined();
    expect(encode(h, data, 2, full.length)).toEqual(full);
  });

  it('packStats counts a block of one value as 1 bit an element (the sample may miss the rest)', () => {
    const h = builds[variant];
    for (const w of WIDTHS) {
      h.reset();
      const n = 300; // a full block and one of 44
      const inPtr = h.copyIn(new Uint8Array(n * w).fill(7), 16);
      const outPtr = h.alloc(16);
      h.view(Float64Array, outPtr, 2).fill(0);
      h.kernels.packStats(inPtr, n, w, outPtr, h.alloc(PACK_SCRATCH_BYTES));
      const floor = 2 + w + 32 + (2 + w + 16);
      // the deltas: 7 then zeros, an exception in the first block at b = 1 when w = 1... at least the floor
      expect(h.view(Float64Array, outPtr, 1)[0], `width ${w}`).toBe(floor);
      expect(h.view(Float64Array, outPtr + 8, 1)[0], `width ${w}`).toBeGreaterThanOrEqual(floor);
    }
  });

  it('packStats sums exact block sizes of the elements and of their deltas', () => {
    const h = builds[variant];
    const rng = new Rng(caseSeed('pack stats'));
    for (const w of WIDTHS) {
      const n = 700;
      const data = makeData(rng, 'narrow', n, w);
      const vals = asU32(data, w);
      const deltas = new Uint8Array(n * w);
      for (let i = 0; i < n; i++) {
        const d = (vals[i] - (i > 0 ? vals[i - 1] : 0)) >>> 0;
        for (let k = 0; k < w; k++) deltas[i * w + k] = (d >>> (8 * k)) & 0xff;
      }
      const expected = [encode(h, data, w)!.length, encode(h, deltas, w)!.length];
      h.reset();
      const inPtr = h.copyIn(data, 16);
      const outPtr = h.alloc(16);
      h.view(Float64Array, outPtr, 2).fill(0);
      const scratch = h.alloc(PACK_SCRATCH_BYTES);
      h.kernels.packStats(inPtr, n, w, outPtr, scratch);
      expect(Array.from(h.view(Float64Array, outPtr, 2)), `width ${w}`).toEqual(expected);
    }
  });

  describe('hostile streams: -1, never out of bounds', () => {
    /** A stream of one block of 256 elements of width w with b = 3 and two exceptions. */
    function sample(w: Width): Uint8Array {
      const v = new Uint32Array(300).map((_, i) => i % 8);
      v[10] = 2 ** (8 * w) - 1;
      v[200] = 2 ** (8 * w) - 2;
      v[270] = 2 ** (8 * w - 1);
      const bytes = new Uint8Array(300 * w);
      for (let i = 0; i < 300; i++) for (let k = 0; k < w; k++) bytes[i * w + k] = Math.floor(v[i] / 2 ** (8 * k)) & 0xff;
      return encode(builds[variant], bytes, w)!;
    }
    /** Bytes of the sample's first block. */
    function blockZeroBytes(w: Width): number {
      return sample(w).length - encodeTail(w).length;
    }
    function encodeTail(w: Width): Uint8Array {
      const v = new Uint32Array(44).map((_, i) => (256 + i) % 8);
      v[14] = 2 ** (8 * w - 1);
      const bytes = new Uint8Array(44 * w);
      for (let i = 0; i < 44; i++) for (let k = 0; k < w; k++) bytes[i * w + k] = Math.floor(v[i] / 2 ** (8 * k)) & 0xff;
      return encode(builds[variant], bytes, w)!;
    }
    for (const w of WIDTHS) {
      it(`width ${w}: lying fields`, () => {
        const h = builds[variant];
        const good = sample(w);
        expect(good[0] & 0x3f).toBe(3);
        expect(good[1]).toBe(2);
        expect(decodeAtEnd(h, good, 300, w).result).toBe(good.length);
        const lie = (edit: (s: Uint8Array) => void, n = 300) => {
          const s = good.slice();
          edit(s);
          return decodeAtEnd(h, s, n, w).result;
        };
        expect(lie((s) => (s[0] = 8 * w + 1))).toBe(-1); // b over 8w
        expect(lie((s) => (s[0] = 63))).toBe(-1);
        expect(lie((s) => (s[0] |= 0x40))).toBe(-1); // reserved bit
        expect(lie((s) => (s[1] = 255))).toBe(-1); // exceptions past what the stream holds
        expect(lie((s) => (s[2] = 0))).toBe(-1); // h = 0
        expect(lie((s) => (s[2] = 8 * w))).toBe(-1); // b + h over 8w
        expect(lie((s) => (s[0] = 8 * w))).toBe(-1); // exceptions with b = 8w
        const positions = 3 + w + 16 * Math.ceil((64 * 3) / 32);
        expect(lie((s) => (s[positions] = s[positions + 1]))).toBe(-1); // repeated position
        expect(lie((s) => ([s[positions], s[positions + 1]] = [s[positions + 1], s[positions]]))).toBe(-1); // decreasing
        // the last block (44 elements, one exception): its position 14, then 44 (past it) and 43
        const lastPosition = blockZeroBytes(w) + 3 + w + 16 * Math.ceil((11 * 3) / 32);
        expect(good[lastPosition]).toBe(14);
        expect(lie((s) => (s[lastPosition] = 44))).toBe(-1);
        expect(lie((s) => (s[lastPosition] = 43))).toBe(good.length);
        // fewer elements claimed than the stream holds: the blocks end before the stream
        expect(lie(() => {}, 256)).toBeLessThan(good.length);
        // every truncation
        for (let len = 0; len < good.length; len++) {
          const r = decodeAtEnd(h, good.subarray(0, len), 300, w).result;
          expect(r, `length ${len}`).toBe(-1);
        }
      });

      it(`width ${w}: random mutations decode or fail, within bounds`, () => {
        const h = builds[variant];
        const seed = caseSeed(`pack mutations ${w}`);
        const rng = new Rng(seed);
        const good = sample(w);
        let decoded = 0;
        for (let t = 0; t < 400; t++) {
          const s = good.slice();
          const flips = 1 + (rng.nextU32() % 4);
          for (let f = 0; f < flips; f++) s[rng.nextU32() % s.length] = rng.nextU32() & 0xff;
          const { result: r, out } = decodeAtEnd(h, s, 300, w);
          expect(r === -1 || (r >= 0 && r <= s.length), describeSeed(seed)).toBe(true);
          // the reference agrees on which are valid (up to the trailing-bytes check the caller
          // makes), and on the elements of those that are
          const viaRef = referenceDecode(s.subarray(0, r < 0 ? s.length : r), 300, w);
          expect(typeof viaRef === 'string', `${describeSeed(seed)} trial ${t}`).toBe(r < 0);
          if (r >= 0) {
            expect(asU32(out, w), `${describeSeed(seed)} trial ${t}: the elements`).toEqual(viaRef);
            decoded++;
          }
        }
        // mutations of values (not of structure) decode: the comparison above ran
        expect(decoded, describeSeed(seed)).toBeGreaterThan(0);
      });
    }
  });
});
