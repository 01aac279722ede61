/**
 * The error-bounded lossy mode (docs/format.md, "Stage 5: quantize"; issue 16): the quantize
 * kernels of both builds against the plain reference (test/support/quantize-reference.ts), the
 * bound on every element of seeded inputs (NaN, Infinity, -0, subnormals, huge magnitudes,
 * bounds from 1e-6 to 1e3 of the data's range), the options' errors, and hostile payloads
 * (lying exception counts and bounds, bad indices and codes): CORRUPT or CHECKSUM_MISMATCH,
 * never a crash. Seeded: failures print the seed.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile as readFileAsync, rm, writeFile as writeFileAsync } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine, type Engine } from '../ts/engine.js';
import { ErrorCodes, ParleError, type ErrorCode } from '../ts/errors.js';
import { f32Bits, stepFor } from '../ts/format/quantize.js';
import { quantizeParams, type QuantizeParams } from '../ts/codec/quantize.js';
import {
  compressBound,
  ENTRY_BYTES,
  HEADER_BYTES,
  makeHeader,
  readEntry,
  readHeader,
  writeEntry,
  writeHeader,
  Encoding,
} from '../ts/format/layout.js';
import { inspectContainer, readAtBytes } from '../ts/format/container.js';
import * as ref from './support/codec-reference.js';
import { refQuantize } from './support/quantize-reference.js';
import { loadBothBuilds, type KernelHarness } from './support/kernels.js';
import { Rng, caseSeed, describeSeed } from './support/random.js';
import { describeGpu } from './gpu/support.js';
import { expectPayloadFlips, rewritePayload } from './support/fuzz.js';
import type { DeviceArray } from '../ts/gpu/device-array.js';

let engine: Engine;
let engine2: Engine;
let builds: Record<'simd' | 'scalar', KernelHarness>;
beforeAll(async () => {
  [engine, engine2, builds] = await Promise.all([
    createEngine({ workers: 1, gpu: 'off' }),
    createEngine({ workers: 2, gpu: 'off' }),
    loadBothBuilds(),
  ]);
});
afterAll(async () => {
  await Promise.all([engine.destroy(), engine2.destroy()]);
});

// ---------------------------------------------------------------------------------------------
// Data
// ---------------------------------------------------------------------------------------------

const SPECIAL_BITS = [
  0x7fc00000, // NaN (canonical)
  0xffc00000, // -NaN
  0x7f800001, // signalling NaN with a payload
  0x7fc12345, // quiet NaN with a payload
  0x7f800000, // +Infinity
  0xff800000, // -Infinity
  0x80000000, // -0
  0x00000000, // +0
  0x00000001, // smallest subnormal
  0x807fffff, // largest negative subnormal
  0x00400000, // a subnormal
  0x00800000, // smallest normal
  0x7f7fffff, // largest finite
  0xff7fffff, // most negative finite
  0x7149f2ca, // 1e30
];

/**
 * `n` f32 (as bits) of a noisy signal of amplitude `scale`, with specials, subnormals and huge
 * magnitudes sprinkled in at a rate of `specialRate`.
 */
function signal(rng: Rng, n: number, scale: number, specialRate: number): Uint32Array {
  const bits = new Uint32Array(n);
  const f = new Float32Array(bits.buffer);
  let phase = rng.nextFloat() * 6;
  for (let i = 0; i < n; i++) {
    phase += 0.05 + 0.02 * rng.nextFloat();
    f[i] = scale * (Math.sin(phase) + 0.3 * (rng.nextFloat() - 0.5));
    if (rng.nextFloat() < specialRate) bits[i] = SPECIAL_BITS[rng.intBetween(0, SPECIAL_BITS.length - 1)];
  }
  return bits;
}

/** The range (max - min) of the finite elements whose magnitude is below `cap`. */
function rangeOf(values: Float32Array, cap = Infinity): number {
  let lo = Infinity;
  let hi = -Infinity;
  for (const v of values) {
    if (Number.isFinite(v) && Math.abs(v) < cap) {
      lo = Math.min(lo, v);
      hi = Math.max(hi, v);
    }
  }
  return hi > lo ? hi - lo : 1;
}

/** Checks the bound on every element: |x - y| <= abs for finite x, the same bits otherwise. */
function expectWithinBound(x: Float32Array, y: Float32Array, abs: number, what: string): void {
  expect(y.length, what).toBe(x.length);
  const xb = new Uint32Array(x.buffer, x.byteOffset, x.length);
  const yb = new Uint32Array(y.buffer, y.byteOffset, y.length);
  for (let i = 0; i < x.length; i++) {
    const ok = Number.isFinite(x[i]) && xb[i] !== 0x80000000 ? Math.abs(x[i] - y[i]) <= abs : xb[i] === yb[i];
    if (!ok) {
      throw new Error(
        `${what}: element ${i}: ${x[i]} (0x${xb[i].toString(16)}) decoded as ${y[i]} (0x${yb[i].toString(16)}), bound ${abs}`,
      );
    }
  }
}

async function expectCode(p: Promise<unknown>, codes: ErrorCode[], what: string): Promise<void> {
  try {
    await p;
  } catch (e) {
    if (!(e instanceof ParleError)) throw new Error(`${what}: threw a non-ParleError: ${String(e)}`);
    expect(codes, `${what}: ${e.code} ${e.message}`).toContain(e.code);
    return;
  }
  throw new Error(`${what}: did not throw`);
}

// ---------------------------------------------------------------------------------------------
// Kernels: both builds against the reference
// ---------------------------------------------------------------------------------------------

const SIZES = [0, 1, 2, 3, 4, 5, 7, 8, 15, 16, 17, 255, 256, 257, 4099];
const RELATIVE_BOUNDS = [1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1, 10, 1e3];

function runQuantize(h: KernelHarness, bits: Uint32Array, p: QuantizeParams) {
  h.reset();
  const n = bits.length;
  const inPtr = h.copyIn(bits, 64);
  const codesPtr = h.allocFilled(4 * n + 64, 0xab);
  const reconPtr = h.allocFilled(4 * n + 64, 0xab);
  const cap = n;
  const idxPtr = h.allocFilled(4 * cap + 64, 0xab);
  const valPtr = h.allocFilled(4 * cap + 64, 0xab);
  const e = h.kernels.quantizeF32(inPtr, n, p.step, p.inv, p.tol, p.limBits, codesPtr, reconPtr, idxPtr, valPtr, cap);
  const codes = h.copyOut(Uint32Array, codesPtr, n);
  const recon = h.copyOut(Uint32Array, reconPtr, n);
  const indices = Array.from(h.copyOut(Uint32Array, idxPtr, e));
  const values = h.copyOut(Uint32Array, valPtr, e);
  // nothing written past the outputs
  expect(Array.from(h.bytes(codesPtr + 4 * n, 16))).toEqual(new Array(16).fill(0xab));
  expect(Array.from(h.bytes(reconPtr + 4 * n, 16))).toEqual(new Array(16).fill(0xab));
  // dequantize (into a sentinel-filled output), then the exceptions
  const outPtr = h.allocFilled(4 * n + 64, 0xcd);
  const found = h.kernels.dequantizeF32(codesPtr, n, p.step, outPtr);
  const scatter = h.kernels.scatterExceptions(codesPtr, n, idxPtr, valPtr, e, outPtr);
  const out = h.copyOut(Uint32Array, outPtr, n);
  expect(Array.from(h.bytes(outPtr + 4 * n, 16))).toEqual(new Array(16).fill(0xcd));
  return { e, codes, recon, indices, values, found, scatter, out };
}

describe('quantize kernels (SIMD and scalar builds) against the reference', () => {
  for (const rel of RELATIVE_BOUNDS) {
    it(`bound ${rel} of the range, sizes ${SIZES.join(', ')}`, () => {
      for (const n of SIZES) {
        const seed = caseSeed(`kernels ${rel} ${n}`);
        const rng = new Rng(seed);
        const bits = signal(rng, n, 10 ** rng.intBetween(-3, 3), 0.05);
        const range = rangeOf(new Float32Array(bits.buffer), 1e20);
        const p = quantizeParams(rel * range)!;
        const want = refQuantize(bits, p);
        for (const variant of ['simd', 'scalar'] as const) {
          const what = `${variant} n=${n} rel=${rel} ${describeSeed(seed)}`;
          const got = runQuantize(builds[variant], bits, p);
          expect(Array.from(got.codes), what).toEqual(Array.from(want.codes));
          expect(Array.from(got.recon), what).toEqual(Array.from(want.recon));
          expect(got.indices, what).toEqual(want.exceptions);
          expect(Array.from(got.values), what).toEqual(want.exceptions.map((i) => bits[i]));
          expect(got.found, what).toBe(want.exceptions.length);
          expect(got.scatter, what).toBe(0);
          // dequantize gives back the reconstructions, bit for bit
          expect(Array.from(got.out), what).toEqual(Array.from(want.recon));
          expectWithinBound(new Float32Array(bits.buffer), new Float32Array(got.out.buffer), rel * range, what);
        }
      }
    });
  }

  it('specials, subnormals and huge magnitudes: reserved codes, exceptions, exact reconstructions', () => {
    const bits = new Uint32Array(SPECIAL_BITS);
    const p = quantizeParams(1e-3)!;
    const got = runQuantize(builds.simd, bits, p);
    const codeOf = (b: number) => got.codes[SPECIAL_BITS.indexOf(b)];
    expect(codeOf(0x7fc00000)).toBe(0xfffffffe);
    expect(codeOf(0x7f800000)).toBe(0xfffffffd);
    expect(codeOf(0xff800000)).toBe(0xfffffffc);
    expect(codeOf(0x80000000)).toBe(0xfffffffb);
    expect(codeOf(0x00000000)).toBe(0);
    expect(codeOf(0x00000001)).toBe(0); // subnormals quantize to 0
    for (const b of [0xffc00000, 0x7f800001, 0x7fc12345, 0x7f7fffff, 0xff7fffff, 0x7149f2ca]) expect(codeOf(b)).toBe(0xffffffff);
    // tiny magnitudes (subnormals, the smallest normal) come back as +0; the rest exactly
    expect(Array.from(got.out)).toEqual(SPECIAL_BITS.map((b) => ((b & 0x7fffffff) <= 0x00800000 && b !== 0x80000000 ? 0 : b)));
  });

  it('worked example: [0, 0.26, -0.74, NaN, -0, 3e38] with step 0.5', () => {
    const x = new Float32Array([0, 0.26, -0.74, NaN, -0, 3e38]);
    const p = { abs: 0.26, step: 0.5, inv: 2, tol: Math.fround(0.26), limBits: f32Bits(0.5 * 2 ** 23) };
    const got = runQuantize(builds.scalar, new Uint32Array(x.buffer), p);
    expect(Array.from(got.codes)).toEqual([0, 2, 1, 0xfffffffe, 0xfffffffb, 0xffffffff]);
    expect(Array.from(new Float32Array(got.out.buffer))).toEqual([0, 0.5, -0.5, NaN, -0, Math.fround(3e38)]);
    expect(got.indices).toEqual([5]);
  });

  it('dequantize rejects codes that are neither quantized nor reserved; scatter rejects bad indices', () => {
    const h = builds.simd;
    for (const bad of [2 ** 25 + 1, 0x80000000, 0xfffffffa]) {
      for (const variant of ['simd', 'scalar'] as const) {
        const k = builds[variant];
        k.reset();
        const codes = new Uint32Array([0, 2, 4, bad, 6, 8, 10, 12]);
        const ptr = k.copyIn(codes, 64);
        const out = k.alloc(64);
        expect(k.kernels.dequantizeF32(ptr, codes.length, 0.5, out), `${variant} code 0x${bad.toString(16)}`).toBe(-1);
      }
    }
    h.reset();
    const codes = new Uint32Array([0xffffffff, 0, 0xffffffff, 0]);
    const cPtr = h.copyIn(codes, 64);
    const out = h.alloc(64);
    const vals = h.copyIn(new Uint32Array([1, 2]), 64);
    for (const [indices, want] of [
      [[0, 2], 0],
      [[2, 0], -1], // out of order
      [[0, 0], -1], // repeated
      [[0, 1], -1], // not an exception code
      [[0, 4], -1], // out of range
    ] as const) {
      const idx = h.copyIn(new Uint32Array(indices), 64);
      expect(h.kernels.scatterExceptions(cPtr, 4, idx, vals, 2, out), `indices ${indices}`).toBe(want);
    }
  });
});

// ---------------------------------------------------------------------------------------------
// The engine: the bound on every element
// ---------------------------------------------------------------------------------------------

describe('compress with errorBound: the bound holds on every element', () => {
  const cases = [
    { name: 'noisy sine with specials', scale: 1, specials: 0.01, cap: 1e20 },
    { name: 'small amplitude (1e-30) with subnormals', scale: 1e-30, specials: 0.02, cap: 1e20 },
    { name: 'large amplitude (1e30)', scale: 1e30, specials: 0.01, cap: Infinity },
    { name: 'huge magnitudes inside the range', scale: 1e37, specials: 0.05, cap: Infinity },
  ];
  for (const c of cases) {
    it(`${c.name}, bounds 1e-6 .. 1e3 of the range`, async () => {
      const seed = caseSeed(`engine ${c.name}`);
      const rng = new Rng(seed);
      const n = 70_001;
      const bits = signal(rng, n, c.scale, c.specials);
      const x = new Float32Array(bits.buffer);
      const range = rangeOf(x, c.cap);
      for (const rel of RELATIVE_BOUNDS) {
        const abs = rel * range;
        const what = `${c.name} rel=${rel} abs=${abs} ${describeSeed(seed)}`;
        const packed = await engine.compress(x, { errorBound: { abs }, chunkBytes: 64 << 10 });
        const y = (await engine.decompress(packed)) as Float32Array;
        expectWithinBound(x, y, abs, what);
        // the workers give the same bytes
        expect(Array.from(await engine2.compress(x, { errorBound: { abs }, chunkBytes: 64 << 10 })), what).toEqual(Array.from(packed));
      }
    });
  }

  it('quantized chunks are smaller than lossless ones, and inspect names the stage', async () => {
    const rng = new Rng(caseSeed('ratio'));
    const x = new Float32Array(signal(rng, 200_000, 5, 0).buffer);
    const lossless = await engine.compress(x);
    const lossy = await engine.compress(x, { errorBound: { abs: 1e-3 * rangeOf(x) } });
    expect(lossy.length * 2).toBeLessThan(lossless.length);
    const report = inspectContainer(readAtBytes(lossy), lossy.length);
    expect(report.version).toBe(4);
    expect(report.chunks[0].encoding.startsWith('quantize+')).toBe(true);
    const explained = await engine.explainCodec(x, { errorBound: { abs: 1e-3 } });
    expect(explained[0].pipeline.startsWith('quantize+')).toBe(true);
    expect(explained[0].reason).toMatch(/quantize \(abs 0.001/);
  });

  it('edge sizes, a fixed codec, all equal, all specials, a bound below 2^-120 (lossless)', async () => {
    for (const n of [0, 1, 2, 3, 17, 1025]) {
      const x = new Float32Array(n).map((_, i) => Math.sin(i) * 3);
      const y = (await engine.decompress(await engine.compress(x, { errorBound: { abs: 0.01 } }))) as Float32Array;
      expectWithinBound(x, y, 0.01, `n=${n}`);
    }
    const equal = new Float32Array(5000).fill(1.2345);
    const e2 = (await engine.decompress(await engine.compress(equal, { errorBound: { abs: 1e-4 }, codec: 'rle+huffman' }))) as Float32Array;
    expectWithinBound(equal, e2, 1e-4, 'all equal, rle+huffman');
    const specials = new Float32Array(new Uint32Array(4096).map((_, i) => SPECIAL_BITS[i % SPECIAL_BITS.length]).buffer);
    const s2 = (await engine.decompress(await engine.compress(specials, { errorBound: { abs: 1 } }))) as Float32Array;
    expectWithinBound(specials, s2, 1, 'specials');
    const tiny = new Float32Array(signal(new Rng(7), 3000, 1, 0.05).buffer);
    const t2 = (await engine.decompress(await engine.compress(tiny, { errorBound: { abs: 1e-40 } }))) as Float32Array;
    expect(Array.from(new Uint32Array(t2.buffer))).toEqual(Array.from(new Uint32Array(tiny.buffer)));
  });

  it('the streaming compressor gives the same bytes', async () => {
    const x = new Float32Array(signal(new Rng(caseSeed('stream')), 50_000, 2, 0.01).buffer);
    const whole = await engine.compress(x, { errorBound: { abs: 0.002 }, chunkBytes: 32 << 10 });
    const writer = engine.createCompressor('f32', x.length, { errorBound: { abs: 0.002 }, chunkBytes: 32 << 10 });
    const bytes = new Uint8Array(x.buffer);
    const parts: Uint8Array[] = [];
    for (let at = 0; at < bytes.length; at += 10_007) parts.push(...(await writer.write(bytes.subarray(at, at + 10_007))));
    parts.push(...(await writer.end()));
    const joined = new Uint8Array(parts.reduce((a, p) => a + p.length, 0));
    let o = 0;
    for (const p of parts) {
      joined.set(p, o);
      o += p.length;
    }
    expect(Array.from(joined)).toEqual(Array.from(whole));
  });
});

describe('errorBound: bad options', () => {
  const x = new Float32Array(100);
  for (const abs of [0, -1, -0, NaN, Infinity, -Infinity, '0.1', null, undefined]) {
    it(`abs = ${String(abs)}: INVALID_OPTION`, async () => {
      await expectCode(engine.compress(x, { errorBound: { abs } as never }), [ErrorCodes.INVALID_OPTION], `abs ${String(abs)}`);
    });
  }
  it('not an object: INVALID_OPTION', async () => {
    await expectCode(engine.compress(x, { errorBound: 0.1 as never }), [ErrorCodes.INVALID_OPTION], 'number');
  });
  for (const array of [new Uint8Array(10), new Uint16Array(10), new Uint32Array(10), new Int32Array(10)]) {
    it(`on ${array.constructor.name}: INVALID_OPTION naming the type`, async () => {
      try {
        await engine.compress(array, { errorBound: { abs: 1 } });
        throw new Error('did not throw');
      } catch (e) {
        expect(e).toBeInstanceOf(ParleError);
        expect((e as ParleError).code).toBe(ErrorCodes.INVALID_OPTION);
        expect((e as ParleError).message).toMatch(/u8|u16|u32|i32/);
      }
      expect(() => engine.createCompressor('u16', 10, { errorBound: { abs: 1 } })).toThrow(/u16/);
    });
  }
  it("'quantize' is not a codec stage name", async () => {
    await expectCode(engine.compress(x, { codec: 'quantize+huffman' }), [ErrorCodes.INVALID_OPTION], 'codec');
  });
});

// ---------------------------------------------------------------------------------------------
// Hostile payloads
// ---------------------------------------------------------------------------------------------

/**
 * The hostile-payload cases against one decoder: the CPU path, or (describeGpu below) the GPU
 * path decoding to the device, which must refuse the same payloads with the same codes.
 */
function hostileCases(decoder: () => (bytes: Uint8Array) => Promise<unknown>): void {
  let packed: Uint8Array;
  let exceptions: number;
  beforeAll(async () => {
    const x = new Float32Array(20_000).map((_, i) => Math.sin(i / 30) * 4);
    const b = new Uint32Array(x.buffer);
    b[10] = 0x7f7fffff; // exceptions: huge magnitudes and a NaN payload
    b[500] = 0xff000000;
    b[7000] = 0x7fc00001;
    packed = await engine.compress(x, { errorBound: { abs: 1e-3 } });
    const entry = readEntry(packed.subarray(HEADER_BYTES), readHeader(packed), 0);
    expect(entry.quantize).toBe(true);
    exceptions = new DataView(packed.buffer, HEADER_BYTES + ENTRY_BYTES + 12, 4).getUint32(0, true);
    expect(exceptions).toBe(3);
  });
  const setU32 = (at: number, v: number) => (p: Uint8Array) => (new DataView(p.buffer, p.byteOffset).setUint32(at, v, true), p);
  const setF64 = (at: number, v: number) => (p: Uint8Array) => (new DataView(p.buffer, p.byteOffset).setFloat64(at, v, true), p);
  const decode = (bytes: Uint8Array) => decoder()(bytes);

  it('an untouched container decodes (the rewrite helper is sound)', async () => {
    await decode(rewritePayload(packed, (p) => p));
  });
  it('exception counts: larger than the chunk, than the payload, off by one either way', async () => {
    for (const count of [0xffffffff, 20_001, 100_000, 4, 2, 0]) {
      await expectCode(decode(rewritePayload(packed, setU32(12, count))), [ErrorCodes.CORRUPT], `count ${count}`);
    }
    // one more exception, its 8 bytes inserted (the layout stays readable): the codes disagree
    await expectCode(
      decode(
        rewritePayload(packed, (p) => {
          const q = new Uint8Array(p.length + 8);
          q.set(p.subarray(0, 16 + 4 * exceptions));
          q.set(p.subarray(16 + 4 * exceptions, 16 + 8 * exceptions), 16 + 4 * exceptions + 4);
          q.set(p.subarray(16 + 8 * exceptions), 16 + 8 * exceptions + 8);
          new DataView(q.buffer).setUint32(12, exceptions + 1, true);
          new DataView(q.buffer).setUint32(16 + 4 * exceptions, 19_999, true);
          return q;
        }),
      ),
      [ErrorCodes.CORRUPT],
      'inserted exception',
    );
    // one fewer, its bytes removed
    await expectCode(
      decode(
        rewritePayload(packed, (p) => {
          const e = exceptions;
          const q = new Uint8Array(p.length - 8);
          q.set(p.subarray(0, 16 + 4 * (e - 1)));
          q.set(p.subarray(16 + 4 * e, 16 + 4 * e + 4 * (e - 1)), 16 + 4 * (e - 1));
          q.set(p.subarray(16 + 8 * e), 16 + 8 * (e - 1));
          new DataView(q.buffer).setUint32(12, e - 1, true);
          return q;
        }),
      ),
      [ErrorCodes.CORRUPT],
      'removed exception',
    );
  });
  it('exception indices out of order, repeated, out of range, or not at an exception code', async () => {
    for (const [j, v] of [
      [0, 600], // after index 1 (500): out of order
      [1, 10], // repeats index 0
      [2, 20_000], // out of range
      [2, 0xffffffff],
      [1, 501], // a quantized element's code
    ]) {
      await expectCode(decode(rewritePayload(packed, setU32(16 + 4 * j, v))), [ErrorCodes.CORRUPT], `index ${j} = ${v}`);
    }
  });
  it("lying bounds: not finite, not positive, below 2^-120, or a step that is not the bound's", async () => {
    for (const abs of [NaN, Infinity, -1, 0, 1e-40, 2e-3, 1.5e-3]) {
      await expectCode(decode(rewritePayload(packed, setF64(0, abs))), [ErrorCodes.CORRUPT], `abs ${abs}`);
    }
    await expectCode(decode(rewritePayload(packed, setU32(8, f32Bits(stepFor(1e-3)) + 1))), [ErrorCodes.CORRUPT], 'step + 1 ulp');
    // a bound and step that agree but lie: the elements' hash catches the other values
    await expectCode(
      decode(rewritePayload(packed, (p) => (setF64(0, 2e-3)(p), setU32(8, f32Bits(stepFor(2e-3)))(p)))),
      [ErrorCodes.CHECKSUM_MISMATCH],
      'consistent lie',
    );
  });
  it('entry byte 24: unknown stage id, quantize without a pipeline, on an integer type', async () => {
    await expectCode(
      decode(
        rewritePayload(
          packed,
          (p) => p,
          (e) => (e[24] = 6),
        ),
      ),
      [ErrorCodes.CORRUPT],
      'stage 6',
    );
    await expectCode(
      decode(
        rewritePayload(
          packed,
          (p) => p,
          (e) => (e[25] = 1),
        ),
      ),
      [ErrorCodes.CORRUPT],
      'reserved 25',
    );
    await expectCode(
      decode(
        rewritePayload(
          packed,
          (p) => p,
          (e) => e.fill(0, 4, 12),
        ),
      ),
      [ErrorCodes.CORRUPT],
      'no pipeline',
    );
    const u8 = await engine.compress(new Uint8Array(5000).map((_, i) => i % 7));
    await expectCode(
      decode(
        rewritePayload(
          u8,
          (p) => p,
          (e) => (e[24] = 5),
        ),
      ),
      [ErrorCodes.CORRUPT],
      'u8',
    );
  });
  it('codes that are neither quantized values nor reserved', async () => {
    // a container built by hand: quantize header, no exceptions, codes through 'huffman'
    const n = 4096;
    const codes = new Uint32Array(n).map((_, i) => (i % 5) * 2);
    codes[100] = 0x80000000;
    const codesPayload = ref.encodePayload([4], new Uint8Array(codes.buffer), 4);
    const payload = new Uint8Array(16 + codesPayload.length);
    const view = new DataView(payload.buffer);
    view.setFloat64(0, 0.5, true);
    view.setUint32(8, f32Bits(stepFor(0.5)), true);
    payload.set(codesPayload, 16);
    const header = makeHeader('f32', n, n);
    const out = new Uint8Array(HEADER_BYTES + ENTRY_BYTES + payload.length);
    out.set(writeHeader(header));
    writeEntry(
      {
        elementCount: n,
        encoding: Encoding.Pipeline,
        runCount: 0,
        payloadBytes: payload.length,
        payloadChecksum: BigInt(ref.treeHash(payload)),
        elementsChecksum: 0n,
        stages: [4],
        streamCount: 1,
        quantize: true,
      },
      out,
      HEADER_BYTES,
    );
    out.set(payload, HEADER_BYTES + ENTRY_BYTES);
    await expectCode(decode(out), [ErrorCodes.CORRUPT], 'invalid code');
  });
  // 150 mutated payloads in three tests of 50 (the 150 in one test had passed the 120 s timeout
  // on SwiftShader beside three other jobs)
  for (const part of [0, 1, 2]) {
    it(`random byte flips in the payload (hashes made right again), ${part + 1} of 3: CORRUPT or CHECKSUM_MISMATCH, or the same elements`, async () => {
      // The elements' hash is of the decoded elements (docs/format.md, Stage 5), so a flipped
      // payload that still decodes must decode to exactly the untouched container's elements:
      // a flip that changes no decoded value (a low bit of the f64 bound whose step is the same,
      // an exception's index or value rewritten to itself by two flips) is not an error.
      await expectPayloadFlips(packed, decode, caseSeed(part === 0 ? 'flips' : `flips ${part}`), 50, 64);
    });
  }
}

describe('hostile quantized payloads: CORRUPT or CHECKSUM_MISMATCH, never a crash', () => {
  hostileCases(() => (bytes) => engine.decompress(bytes));
});

describeGpu('quantized chunks decoded on the GPU (decompress to the device)', () => {
  let gpuEngine: Engine;
  beforeAll(async () => {
    gpuEngine = await createEngine({ workers: 1, gpu: 'require', calibration: 'skip' });
  });
  afterAll(async () => {
    await gpuEngine?.destroy();
  });
  /** Decodes on the GPU path to the device; the result is read back (and its buffer freed). */
  const onGpu = async (bytes: Uint8Array): Promise<Float32Array> => {
    const d = (await gpuEngine.decompress(bytes, { to: 'device', path: 'gpu' })) as unknown as DeviceArray;
    try {
      return (await gpuEngine.download(d)) as Float32Array;
    } finally {
      d.destroy();
    }
  };

  it("every pipeline of the codes, several chunks, specials and exceptions: the CPU path's bits", async () => {
    const rng = new Rng(caseSeed('lossy gpu decode'));
    const x = new Float32Array(70_001).map((_, i) => Math.sin(i / 40) * 3 + rng.nextFloat() * 0.01);
    const b = new Uint32Array(x.buffer);
    for (const [i, bits] of [
      [5, 0x7fc00000],
      [6, 0x7f800000],
      [7, 0xff800000],
      [8, 0x80000000],
      [9, 0x7f7fffff],
      [40_000, 0x7fc00001],
    ])
      b[i] = bits;
    for (const codec of [
      'auto',
      'huffman',
      'delta+huffman',
      'shuffle+huffman',
      'delta+shuffle+huffman',
      'rle',
      'rle+huffman',
      'delta+rle+huffman',
    ]) {
      for (const abs of [1e-3, 0.25]) {
        const packed = await engine.compress(x, { errorBound: { abs }, codec, chunkBytes: 64 << 10 });
        const cpu = (await engine.decompress(packed)) as Float32Array;
        const gpu = await onGpu(packed);
        expect(
          Buffer.compare(
            new Uint8Array(gpu.buffer, gpu.byteOffset, gpu.byteLength),
            new Uint8Array(cpu.buffer, cpu.byteOffset, cpu.byteLength),
          ),
          `${codec} abs ${abs}`,
        ).toBe(0);
      }
    }
  });

  // one input for every case (one test a case: the five of them in one test took 22 s of
  // SwiftShader, past the 120 s timeout beside three other jobs)
  const encodeInput = (() => {
    const rng = new Rng(caseSeed('lossy gpu encode'));
    const x = new Float32Array(90_001).map((_, i) => Math.sin(i / 50) * 2 + rng.nextFloat() * 0.02);
    const b = new Uint32Array(x.buffer);
    for (const [i, bits] of [
      [3, 0x7fc00000],
      [4, 0xff800000],
      [5, 0x80000000],
      [70, 0x7f7fffff],
      [80_000, 0x7fc00001],
    ])
      b[i] = bits;
    // chunk 5 (of 16 KiB chunks): every element a huge magnitude, an exception: coded losslessly
    for (let i = 5 * 4096; i < 6 * 4096; i++) b[i] = 0x7f000000 + (i & 0xffff);
    return x;
  })();
  for (const [codec, abs] of [
    ['auto', 1e-3],
    ['huffman', 1e-3],
    ['delta+huffman', 0.05],
    ['rle+huffman', 0.5],
    ['auto', 1e-40],
  ] as const) {
    it(`compress from the device quantizes on the GPU (${codec}, abs ${abs}): the same decoded elements as the CPU path, lossless where quantizing does not pay`, async () => {
      const x = encodeInput;
      const n = x.length;
      const device = await gpuEngine.upload(x);
      try {
        const viaGpu = await gpuEngine.compress(device, { errorBound: { abs }, codec, chunkBytes: 16 << 10, path: 'gpu' });
        // into a caller-owned out: the same container
        const out = new Uint8Array(compressBound(n, 'f32', 16 << 10)).fill(0x3c);
        const into = await gpuEngine.compress(device, { errorBound: { abs }, codec, chunkBytes: 16 << 10, path: 'gpu', out });
        expect(into.buffer === out.buffer && Buffer.compare(into, viaGpu) === 0, `${codec} abs ${abs}: into out`).toBe(true);
        const viaCpu = await engine.compress(x, { errorBound: { abs }, codec, chunkBytes: 16 << 10 });
        const fromGpu = (await engine.decompress(viaGpu)) as Float32Array;
        const fromCpu = (await engine.decompress(viaCpu)) as Float32Array;
        const what = `${codec} abs ${abs}`;
        expect(
          Buffer.compare(
            new Uint8Array(fromGpu.buffer, fromGpu.byteOffset, fromGpu.byteLength),
            new Uint8Array(fromCpu.buffer, fromCpu.byteOffset, fromCpu.byteLength),
          ),
          what,
        ).toBe(0);
        const chunks = inspectContainer(readAtBytes(viaGpu), viaGpu.length).chunks;
        const quantized = chunks.filter((c) => c.encoding.startsWith('quantize')).length;
        if (abs >= 1e-3) {
          expect(quantized, what).toBe(chunks.length - 1); // all but the chunk of huge magnitudes
          expect(chunks[5].encoding.startsWith('quantize'), what).toBe(false);
          // (both choosers have every candidate: the GPU's sizes them exactly, the CPU's from a sample)
          expect(viaGpu.length, what).toBeLessThan(1.05 * viaCpu.length);
        } else {
          expect(quantized, what).toBe(0); // below 2^-120: lossless, as on the CPU path
        }
        // the CPU's container (pack chunks among them, read through the CPU) to the device too
        expect(
          Buffer.compare(
            new Uint8Array((await onGpu(viaCpu)).buffer),
            new Uint8Array(fromCpu.buffer, fromCpu.byteOffset, fromCpu.byteLength),
          ),
          `${what}: CPU container`,
        ).toBe(0);
        // also decoded on the GPU path, to the device
        expect(
          Buffer.compare(
            new Uint8Array((await onGpu(viaGpu)).buffer),
            new Uint8Array(fromCpu.buffer, fromCpu.byteOffset, fromCpu.byteLength),
          ),
          what,
        ).toBe(0);
      } finally {
        device.destroy();
      }
    });
  }

  describe('hostile payloads refused as on the CPU path', () => {
    hostileCases(() => onGpu);
  });
});

// ---------------------------------------------------------------------------------------------
// The command line
// ---------------------------------------------------------------------------------------------

const BIN = fileURLToPath(new URL('../bin/parle.mjs', import.meta.url));
function cli(...args: string[]): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], (error, _stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stderr }));
  });
}

describe('parle compress --error-bound-abs', () => {
  it('round trips f32 within the bound; rejects integer types and bad bounds (exit 1)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'parle-lossy-'));
    try {
      const x = new Float32Array(signal(new Rng(caseSeed('cli')), 30_000, 3, 0.01).buffer);
      const raw = join(dir, 'in.f32');
      await writeFileAsync(raw, new Uint8Array(x.buffer));
      expect((await cli('compress', raw, join(dir, 'a.parle'), '--type', 'f32', '--error-bound-abs', '0.01')).code).toBe(0);
      expect((await cli('decompress', join(dir, 'a.parle'), join(dir, 'back.f32'))).code).toBe(0);
      const back = new Float32Array(new Uint8Array(await readFileAsync(join(dir, 'back.f32'))).buffer);
      expectWithinBound(x, back, 0.01, 'cli');
      const u8 = await cli('compress', raw, join(dir, 'b.parle'), '--type', 'u8', '--error-bound-abs', '0.01');
      expect(u8.code).toBe(1);
      expect(u8.stderr).toMatch(/INVALID_OPTION/);
      expect(u8.stderr).toMatch(/u8/);
      for (const bad of ['0', '-1', 'abc', 'NaN']) {
        const r = await cli('compress', raw, join(dir, `c${bad}.parle`), '--type', 'f32', '--error-bound-abs', bad);
        expect(r.code, bad).toBe(1);
        expect(r.stderr, bad).toMatch(/INVALID_OPTION/);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
