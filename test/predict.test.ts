/**
 * Container version 4 (docs/format.md, "Version 4: shape and stage 7 (predict)"): the plain
 * reference of test/support/predict-reference.ts tested on its own (maps, predictors, residuals,
 * predicted payloads and their checks, a hand-built container), then the engine's version-4
 * writer checked against it: `compress(array, { shape })` round trips, the reference reads the
 * container and its shape, and a shape makes images, grids and records smaller.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CompressPlan, ErrorCodes, ParleError, compressBound, createEngine, type Engine } from '../ts/index.js';
import { compressRoute } from '../ts/codec/compress.js';
import { chunkingOf, compressSettingsWith, predictPlanOf } from '../ts/codec/settings.js';
import { fillOf, planSampleRanges, residualBytes, SampledBytes, windowOf, type Geometry } from '../ts/codec/predict.js';
import { elementSize, type ElementType } from '../ts/types.js';
import { STAGE, treeHash } from './support/codec-reference.js';
import {
  MAP,
  PREDICTOR,
  PREDICT_STAGE,
  TYPE_CODE,
  decodeContainer,
  decodePredictedPayload,
  encodeContainer,
  encodeEntry,
  encodeHeader,
  encodePredictedPayload,
  f32Bits,
  f32FromBits,
  floatOrder,
  floatOrderInverse,
  mapDecode,
  mapEncode,
  neighbours,
  prediction,
  predictResiduals,
  readPredictedPayload,
  unpredict,
  unzigzag,
  xxh64Low,
  zigzag,
  type PredictParams,
  type Width,
  encodeIndex,
} from './support/predict-reference.js';
import { Rng, caseSeed, describeSeed } from './support/random.js';

type Typed = Uint8Array | Uint16Array | Uint32Array | Int32Array | Float32Array;

function bytesOf(array: Typed): Uint8Array {
  return new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
}

function f32BytesOf(values: readonly number[]): Uint8Array {
  return bytesOf(Float32Array.from(values));
}

function u32le(bytes: Uint8Array, at: number): number {
  return new DataView(bytes.buffer, bytes.byteOffset).getUint32(at, true);
}

function setU32le(bytes: Uint8Array, at: number, value: number): void {
  new DataView(bytes.buffer, bytes.byteOffset).setUint32(at, value, true);
}

/** Values of `cells` cells x `fields` fields on rows of X: smooth (a ramp, a slow wave and a little noise) or noisy. */
function makeValues(rng: Rng, w: Width, fields: number, X: number, rows: number, smooth: boolean): Uint32Array {
  const M = 2 ** (8 * w);
  const u = new Uint32Array(X * rows * fields);
  for (let c = 0; c < X * rows; c++) {
    const i = Math.floor(c / X);
    const j = c % X;
    for (let k = 0; k < fields; k++) {
      const v = smooth ? Math.round(M / 3 + 3 * i - 2 * j + 10 * k + 5 * Math.sin(i / 3 + j / 5) + rng.intBetween(-2, 2)) : rng.nextU32();
      u[c * fields + k] = ((v % M) + M) % M;
    }
  }
  return u;
}

// ---------------------------------------------------------------------------------------------
// The reference on its own
// ---------------------------------------------------------------------------------------------

describe('predict reference: predictors', () => {
  const WIDTHS: Width[] = [1, 2, 4];
  for (let p = 0; p <= 5; p++) {
    for (const w of WIDTHS) {
      for (let fields = 1; fields <= 4; fields++) {
        for (const smooth of [true, false]) {
          it(`unpredict(predictResiduals(u)) = u: p=${p} w=${w} f=${fields} ${smooth ? 'smooth' : 'noisy'}`, () => {
            const seed = caseSeed(`predict round trip ${p} ${w} ${fields} ${smooth}`);
            const rng = new Rng(seed);
            for (let trial = 0; trial < 4; trial++) {
              const X = rng.intBetween(1, 13);
              const Y = rng.intBetween(1, 4);
              const rows = Y * rng.intBetween(1, 3);
              const u = makeValues(rng, w, fields, X, rows, smooth);
              const planes = predictResiduals(u, w, fields, X, Y, p);
              expect(planes.length).toBe(fields);
              for (const plane of planes) {
                expect(plane.length).toBe(X * rows);
                for (const r of plane) expect(r).toBeLessThan(2 ** (8 * w));
              }
              const back = unpredict(planes, w, fields, X, Y, p);
              expect(Array.from(back), `${describeSeed(seed)} X=${X} Y=${Y} rows=${rows}`).toEqual(Array.from(u));
            }
          });
        }
      }
    }
  }

  it('zigzag maps small residuals of either sign to small values', () => {
    expect([0, 1, 2, 3, 4].map((r) => unzigzag(r, 1))).toEqual([0, 255, 1, 254, 2]);
    expect([0, 255, 1, 254, 2].map((d) => zigzag(d, 1))).toEqual([0, 1, 2, 3, 4]);
    expect(zigzag(0x7f, 1)).toBe(0xfe);
    expect(zigzag(0x80, 1)).toBe(0xff);
    expect(zigzag(0xffff, 2)).toBe(1);
    expect(zigzag(0xffffffff, 4)).toBe(1);
    expect(zigzag(0x80000000, 4)).toBe(0xffffffff);
    expect(zigzag(0x7fffffff, 4)).toBe(0xfffffffe);
    for (const w of [1, 2, 4] as const) for (const r of [0, 1, 2, 77, 2 ** (8 * w) - 1]) expect(zigzag(unzigzag(r, w), w)).toBe(r);
  });

  it('lorenzo2 leaves 0 residuals on a linear ramp away from the borders', () => {
    for (const w of [1, 2, 4] as const) {
      const X = 9;
      const rows = 7;
      const M = 2 ** (8 * w);
      const fields = 2;
      const u = new Uint32Array(X * rows * fields);
      for (let c = 0; c < X * rows; c++) {
        const i = Math.floor(c / X);
        const j = c % X;
        u[c * 2] = (((5 + 3 * i + 7 * j) % M) + M) % M;
        u[c * 2 + 1] = (((M - 1 - 40 * i + 11 * j) % M) + M) % M; // wraps below 0
      }
      const planes = predictResiduals(u, w, fields, X, 1, PREDICTOR.lorenzo2);
      for (let c = 0; c < X * rows; c++) {
        const i = Math.floor(c / X);
        const j = c % X;
        if (i > 0 && j > 0) {
          expect(planes[0][c], `w=${w} c=${c}`).toBe(0);
          expect(planes[1][c], `w=${w} c=${c}`).toBe(0);
        }
      }
      // borders: the first row predicts from the left only, the first column from above only
      expect(planes[0][1]).toBe(zigzag(7, w));
      expect(planes[0][X]).toBe(zigzag(3, w));
      expect(planes[1][X]).toBe(zigzag(-40, w));
      expect(Array.from(unpredict(planes, w, fields, X, 1, PREDICTOR.lorenzo2))).toEqual(Array.from(u));
    }
  });

  it('lorenzo3 leaves 0 residuals on a 3-D linear ramp away from the borders', () => {
    const w = 2;
    const X = 6;
    const Y = 5;
    const planesCount = 4;
    const u = new Uint32Array(X * Y * planesCount);
    for (let c = 0; c < u.length; c++) {
      const i = Math.floor(c / X);
      const t = Math.floor(i / Y);
      const y = i % Y;
      const j = c % X;
      u[c] = 100 + 7 * t + 3 * y + 2 * j;
    }
    const [plane] = predictResiduals(u, w, 1, X, Y, PREDICTOR.lorenzo3);
    for (let c = 0; c < u.length; c++) {
      const i = Math.floor(c / X);
      const j = c % X;
      if (i >= Y && i % Y > 0 && j > 0) expect(plane[c], `c=${c}`).toBe(0);
    }
    // the first row of a later plane: b and ab are 0, so the prediction is a + z - az (2-D over t, j)
    const c = Y * X + 2; // t = 1, y = 0, j = 2
    expect(plane[c]).toBe(0);
    // and the neighbours say so
    const n = neighbours(u, 1, X, Y, c, 0, PREDICTOR.lorenzo3);
    expect(n.b).toBe(0);
    expect(n.ab).toBe(0);
    expect(n.z).toBe(u[c - X * Y]);
    // with lorenzo2 the same cell sees its row above (the previous plane's last row)
    expect(neighbours(u, 1, X, Y, c, 0, PREDICTOR.lorenzo2).b).toBe(u[c - X]);
  });

  it("Lorenzo's inverse is a prefix sum along each axis in turn", () => {
    const rng = new Rng(caseSeed('lorenzo prefix sums'));
    for (const w of [1, 2, 4] as const) {
      const M = 2 ** (8 * w);
      const X = 7;
      const Y = 4;
      const T = 3;
      const u = makeValues(rng, w, 1, X, Y * T, false);
      for (const p of [PREDICTOR.lorenzo2, PREDICTOR.lorenzo3]) {
        const [plane] = predictResiduals(u, w, 1, X, Y, p);
        const s = Array.from(plane, (r) => unzigzag(r, w));
        const at = (t: number, y: number, j: number) => (t * Y + y) * X + j;
        // along j, then along the rows (lorenzo2: all rows; lorenzo3: the rows of a plane), then along the planes
        for (let i = 0; i < Y * T; i++) for (let j = 1; j < X; j++) s[i * X + j] = (s[i * X + j] + s[i * X + j - 1]) % M;
        if (p === PREDICTOR.lorenzo2) {
          for (let i = 1; i < Y * T; i++) for (let j = 0; j < X; j++) s[i * X + j] = (s[i * X + j] + s[(i - 1) * X + j]) % M;
        } else {
          for (let t = 0; t < T; t++)
            for (let y = 1; y < Y; y++) for (let j = 0; j < X; j++) s[at(t, y, j)] = (s[at(t, y, j)] + s[at(t, y - 1, j)]) % M;
          for (let t = 1; t < T; t++)
            for (let y = 0; y < Y; y++) for (let j = 0; j < X; j++) s[at(t, y, j)] = (s[at(t, y, j)] + s[at(t - 1, y, j)]) % M;
        }
        expect(s, `w=${w} p=${p}`).toEqual(Array.from(u));
      }
    }
  });

  it('med: hand-computed examples', () => {
    // 2x2, w = 1: [10, 20 / 30, 5]
    // c0: a=b=ab=0 -> ab >= max -> min = 0, d = 10 -> 20; c1: a=10, b=ab=0 -> ab <= min -> max = 10, d = 10 -> 20
    // c2: b=10, a=ab=0 -> 10, d = 20 -> 40; c3: a=30, b=20, ab=10 <= min -> max = 30, d = -25 -> 49
    expect(Array.from(predictResiduals([10, 20, 30, 5], 1, 1, 2, 1, PREDICTOR.med)[0])).toEqual([20, 20, 40, 49]);
    // c3: a=20, b=5, ab=10 between -> a + b - ab = 15, u = 14, d = -1 -> 1
    expect(predictResiduals([10, 5, 20, 14], 1, 1, 2, 1, PREDICTOR.med)[0][3]).toBe(1);
    // c3: a=20, b=5, ab=30 >= max -> min = 5, u = 8, d = 3 -> 6
    expect(predictResiduals([30, 5, 20, 8], 1, 1, 2, 1, PREDICTOR.med)[0][3]).toBe(6);
    // unsigned: a = 0xFFFFFFF0, b = 5, ab = 0x80000000 lies between them (signed it would not)
    const n = { a: 0xfffffff0, b: 5, z: 0, ab: 0x80000000, az: 0, bz: 0, abz: 0 };
    expect(prediction(PREDICTOR.med, n, 4)).toBe(0x7ffffff5);
    const u = [0x80000000, 5, 0xfffffff0, 0x7ffffff5 + 2];
    expect(predictResiduals(u, 4, 1, 2, 1, PREDICTOR.med)[0][3]).toBe(4);
    expect(Array.from(unpredict(predictResiduals(u, 4, 1, 2, 1, PREDICTOR.med), 4, 1, 2, 1, PREDICTOR.med))).toEqual(u);
  });

  it('left, up and none predict from a, b and 0', () => {
    const u = [1, 4, 9, 16, 25, 36]; // X = 3, 2 rows
    expect(Array.from(predictResiduals(u, 1, 1, 3, 1, PREDICTOR.none)[0])).toEqual(u.map((x) => zigzag(x, 1)));
    expect(Array.from(predictResiduals(u, 1, 1, 3, 1, PREDICTOR.left)[0])).toEqual([2, 6, 10, 32, 18, 22]);
    expect(Array.from(predictResiduals(u, 1, 1, 3, 1, PREDICTOR.up)[0])).toEqual([2, 8, 18, 30, 42, 54]);
  });

  it('fields are interleaved: field k of cell c is element c f + k', () => {
    const u = [1, 100, 2, 102, 3, 104]; // 3 cells, 2 fields, X = 3
    const planes = predictResiduals(u, 1, 2, 3, 1, PREDICTOR.left);
    expect(Array.from(planes[0])).toEqual([2, 2, 2]);
    expect(Array.from(planes[1])).toEqual([200, 4, 4]);
  });
});

describe('predict reference: maps', () => {
  it('decimal map round trips decimals and lists NaN, -0, Infinity and others as exceptions', () => {
    const values = [12.345, 0.5, -3.25, 100, 0.001, NaN, -0, 0, Infinity, 1 / 3, 3e9, -12.345];
    const elements = f32BytesOf(values);
    const { values: u, exceptions } = mapEncode(elements, TYPE_CODE.f32, MAP.decimal, 1, [3]);
    expect(u[0] | 0).toBe(12345);
    expect(u[1] | 0).toBe(500);
    expect(u[2] | 0).toBe(-3250);
    expect(u[3] | 0).toBe(100000);
    expect(u[4] | 0).toBe(1);
    expect(u[7] | 0).toBe(0);
    expect(u[11] | 0).toBe(-12345);
    expect(exceptions.indices).toEqual([5, 6, 8, 9, 10]);
    expect(exceptions.values).toEqual([5, 6, 8, 9, 10].map((i) => f32Bits(values[i])));
    // an exception's place holds the previous cell's value
    expect(u[5]).toBe(u[4]);
    expect(u[6]).toBe(u[4]);
    expect(u[8]).toBe(u[7]);
    const back = mapDecode(u, TYPE_CODE.f32, MAP.decimal, 1, [3], exceptions);
    expect(Array.from(back)).toEqual(Array.from(elements));
    // without the exceptions, their places decode to the previous values
    const bare = new Float32Array(mapDecode(u, TYPE_CODE.f32, MAP.decimal, 1, [3]).buffer);
    expect(bare[5]).toBe(Math.fround(0.001));
  });

  it('decimal map: one exponent a field; f32(f64(v) x 10^-e) exactly', () => {
    const rng = new Rng(caseSeed('decimal fields'));
    const exps = [2, 5, 0, 18];
    const values: number[] = [];
    for (let c = 0; c < 200; c++) {
      values.push(
        rng.intBetween(-99999, 99999) / 100,
        rng.intBetween(-9999999, 9999999) / 1e5,
        rng.intBetween(-1e6, 1e6),
        rng.intBetween(0, 1000) * 1e-18,
      );
    }
    const elements = f32BytesOf(values);
    const { values: u, exceptions } = mapEncode(elements, TYPE_CODE.f32, MAP.decimal, 4, exps);
    for (let i = 0; i < values.length; i++) {
      if (exceptions.indices.includes(i)) continue;
      const e = exps[i % 4];
      expect(f32Bits(Math.fround((u[i] | 0) * Number('1e-' + e)))).toBe(u32le(elements, 4 * i));
    }
    expect(exceptions.indices.length).toBeLessThan(values.length / 10);
    expect(Array.from(mapDecode(u, TYPE_CODE.f32, MAP.decimal, 4, exps, exceptions))).toEqual(Array.from(elements));
  });

  it('float order map is monotonic on sorted floats and inverts', () => {
    const rng = new Rng(caseSeed('float order'));
    const floats = new Set<number>();
    for (let i = 0; i < 2000; i++) {
      const bits = rng.nextU32();
      if ((bits & 0x7f800000) === 0x7f800000) continue; // NaN/Infinity added below
      floats.add(bits);
    }
    for (const bits of [0x00000000, 0x80000000, 0x7f800000, 0xff800000, 0x00000001, 0x80000001, 0x7f7fffff, 0xff7fffff]) floats.add(bits);
    const sorted = [...floats].sort((x, y) => {
      const a = f32FromBits(x);
      const b = f32FromBits(y);
      if (a !== b) return a - b;
      return (x === 0x80000000 ? -1 : 0) - (y === 0x80000000 ? -1 : 0); // -0 before +0
    });
    let previous = -1;
    for (const bits of sorted) {
      const u = floatOrder(bits);
      expect(u, `0x${bits.toString(16)}`).toBeGreaterThan(previous);
      expect(floatOrderInverse(u)).toBe(bits);
      previous = u;
    }
    const elements = bytesOf(Uint32Array.from(sorted));
    const { values, exceptions } = mapEncode(elements, TYPE_CODE.f32, MAP.floatOrder, 1);
    expect(exceptions.indices).toEqual([]);
    expect(Array.from(mapDecode(values, TYPE_CODE.f32, MAP.floatOrder, 1))).toEqual(Array.from(elements));
  });

  it('map none is the bits, for every type', () => {
    const rng = new Rng(caseSeed('map none'));
    for (const [type, w] of [
      [0, 1],
      [1, 2],
      [2, 4],
      [3, 4],
      [4, 4],
    ] as const) {
      const elements = new Uint8Array(40 * w).map(() => rng.nextU32() & 0xff);
      const { values } = mapEncode(elements, type, MAP.none, 1);
      expect(Array.from(mapDecode(values, type, MAP.none, 1))).toEqual(Array.from(elements));
    }
  });
});

// ---------------------------------------------------------------------------------------------
// Predicted payloads
// ---------------------------------------------------------------------------------------------

function smoothF32(rng: Rng, n: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push(Math.fround(50 * Math.sin(i / 40) + rng.nextFloat() * 1e-3));
  return out;
}

describe('predict reference: payloads', () => {
  it('a payload laid out by hand decodes (decimal map, exceptions, a stored and a piped field block)', () => {
    // 4 cells x 2 fields, f32, X = 2, Y = 1, predictor left, exponents [1, 2]
    const values = [1.5, 0.25, 1.7, NaN, 1.9, 0.75, 2.1, 1];
    // field 0 (e=1): v = 15, 17, 19, 21 -> residuals from the left: 15, 2, 19 (new row), 2 -> zigzag 30, 4, 38, 4
    // field 1 (e=2): v = 25, (NaN: previous cell's 25), 75, 100 -> 25, 0, 75, 25 -> 50, 0, 150, 50
    const f0 = bytesOf(Uint32Array.from([30, 4, 38, 4]));
    const f1 = new Uint8Array(bytesOf(Uint32Array.from([50, 0, 150, 50])));
    const payload: number[] = [2, 1, 2, 0, 2, 0, 0, 0, 1, 0, 0, 0, 1, 2, 0, 0];
    payload.push(1, 0, 0, 0, 3, 0, 0, 0, ...bytesOf(Uint32Array.from([f32Bits(NaN)])));
    payload.push(0, 0, 0, 0, 16, 0, 0, 0, ...f0);
    // the encoder writes exactly these bytes
    const viaEncoder = encodePredictedPayload(f32BytesOf(values), TYPE_CODE.f32, {
      map: MAP.decimal,
      predictor: PREDICTOR.left,
      fields: 2,
      X: 2,
      Y: 1,
      exponents: [1, 2],
      stages: [[], []],
    });
    const handStored = Uint8Array.from([...payload, 0, 0, 0, 0, 16, 0, 0, 0, ...f1]);
    expect(Array.from(viaEncoder)).toEqual(Array.from(handStored));
    expect(Array.from(decodePredictedPayload(handStored, TYPE_CODE.f32, 8))).toEqual(Array.from(f32BytesOf(values)));

    // field 1 asked as [rle]: 4 runs of 4-byte values (16 B) + lengths (4 B) + a 16 B directory are not below 16 B,
    // so the encoder writes it stored (piped field blocks are tested on larger chunks below)
    const piped = encodePredictedPayload(f32BytesOf(values), TYPE_CODE.f32, {
      map: MAP.decimal,
      predictor: PREDICTOR.left,
      fields: 2,
      X: 2,
      Y: 1,
      exponents: [1, 2],
      stages: [[], [STAGE.rle]],
    });
    // layout: 12 header, 4 exponents, 4 E, 4 index, 4 value: field 0's block at 28, field 1's at 28 + 8 + 16
    expect(u32le(piped, 52)).toBe(0); // fell back to stored
    expect(Array.from(piped)).toEqual(Array.from(handStored));
  });

  it('encode / decode round trips every map, predictor and pipeline', () => {
    const rng = new Rng(caseSeed('payload round trip'));
    let pipedBlocks = 0;
    const pipelines: number[][] = [
      [],
      [STAGE.huffman],
      [STAGE.rle, STAGE.huffman],
      [STAGE.shuffle, STAGE.huffman],
      [STAGE.delta, STAGE.shuffle, STAGE.rle, STAGE.huffman],
      [STAGE.shuffle, STAGE.rle],
    ];
    for (const type of [0, 1, 2, 3, 4] as const) {
      const w = ([1, 2, 4, 4, 4] as const)[type];
      for (const map of type === 4 ? [0, 1, 2] : [0]) {
        for (let p = 0; p <= 5; p++) {
          const fields = rng.intBetween(1, 3);
          const X = rng.intBetween(8, 40);
          const Y = rng.intBetween(1, 3);
          const rows = Y * rng.intBetween(2, 4);
          const count = X * rows * fields;
          let elements: Uint8Array;
          if (type === 4)
            elements = f32BytesOf(
              smoothF32(rng, count).map((x, i) => (map === 2 ? Math.round(x * 100) / 100 : x) * (i % 97 === 5 ? NaN : 1)),
            );
          else elements = bytesOf(Uint32Array.from(makeValues(rng, w, fields, X, rows, true))).filter((_, i) => i % 4 < w);
          const stages = Array.from({ length: fields }, () =>
            pipelines[rng.intBetween(0, pipelines.length - 1)].filter((s) => w > 1 || s !== STAGE.shuffle),
          );
          const params: PredictParams = {
            map,
            predictor: p,
            fields,
            X,
            Y,
            exponents: map === 2 ? Array.from({ length: fields }, () => 2) : undefined,
            stages,
          };
          const payload = encodePredictedPayload(elements, type, params);
          const { elements: back, info } = readPredictedPayload(payload, type, count);
          expect(Array.from(back), `type ${type} map ${map} p ${p}`).toEqual(Array.from(elements));
          expect(info.fields).toBe(fields);
          pipedBlocks += info.stages.filter((st) => st.length > 0).length;
          if (map === 2) expect(info.exceptions.indices.length).toBeGreaterThan(0);
        }
      }
    }
    expect(pipedBlocks, 'field blocks the encoder kept piped').toBeGreaterThan(10);
  });

  describe('CORRUPT', () => {
    const rng = new Rng(caseSeed('payload corrupt'));
    const n = 256; // cells, and residuals a field: 16 x 16
    const nw = 4 * n;
    const values = smoothF32(rng, 2 * n).map((x) => Math.round(x * 100) / 100);
    values[7] = NaN;
    values[20] = -0;
    const elements = f32BytesOf(values);
    const count = values.length;
    const params: PredictParams = {
      map: MAP.decimal,
      predictor: PREDICTOR.lorenzo2,
      fields: 2,
      X: 16,
      Y: 2,
      exponents: [2, 2],
      stages: [[], [STAGE.shuffle, STAGE.huffman]],
    };
    const good = encodePredictedPayload(elements, TYPE_CODE.f32, params);
    // layout: 12 header, 4 exponents, 4 E = 2, 8 indices, 8 values -> field 0 block at 36
    const fieldAt = 36;

    it('the good payload decodes, and its layout is as expected', () => {
      expect(u32le(good, 16)).toBe(2);
      expect(u32le(good, 20)).toBe(7);
      expect(u32le(good, 24)).toBe(20);
      expect(u32le(good, fieldAt)).toBe(0);
      expect(u32le(good, fieldAt + 4)).toBe(nw);
      const field1 = fieldAt + 8 + nw;
      expect(u32le(good, field1)).toBe(STAGE.shuffle | (STAGE.huffman << 8));
      expect(field1 + 8 + u32le(good, field1 + 4)).toBe(good.length);
      expect(Array.from(decodePredictedPayload(good, TYPE_CODE.f32, count))).toEqual(Array.from(elements));
    });

    const mutations: [string, (p: Uint8Array) => Uint8Array, number?][] = [
      ['map over 2', (p) => ((p[0] = 3), p)],
      ['decimal map on u32', (p) => p, TYPE_CODE.u32],
      ['predictor over 5', (p) => ((p[1] = 6), p)],
      ['f = 0', (p) => ((p[2] = 0), p)],
      ['count not a multiple of f', (p) => ((p[2] = 5), p)],
      ['byte 3 not 0', (p) => ((p[3] = 1), p)],
      ['X = 0', (p) => (setU32le(p, 4, 0), p)],
      ['Y = 0', (p) => (setU32le(p, 8, 0), p)],
      ['cells not a multiple of X', (p) => (setU32le(p, 4, 7), p)],
      ['rows not whole: X larger than the cells', (p) => (setU32le(p, 4, 512), p)],
      ['rows not a multiple of Y', (p) => (setU32le(p, 8, 3), p)],
      ['an exponent over 18', (p) => ((p[13] = 19), p)],
      ['E > count', (p) => (setU32le(p, 16, count + 1), p)],
      ['E past P', (p) => (setU32le(p, 16, count), p)],
      ['indices not increasing', (p) => (setU32le(p, 24, 7), p)],
      ['an index >= count', (p) => (setU32le(p, 24, count), p)],
      ['stored field block of the wrong length', (p) => (setU32le(p, fieldAt + 4, nw - 4), p)],
      ['field block past P', (p) => p.subarray(0, p.length - 1)],
      ['bytes after the last field block', (p) => Uint8Array.from([...p, 0])],
      ['a header past P', (p) => p.subarray(0, 10)],
      ['an unknown stage id', (p) => ((p[fieldAt] = 5), p)],
      ['a stage after a 0', (p) => ((p[fieldAt + 1] = STAGE.huffman), p)],
      ['stages out of order', (p) => (setU32le(p, fieldAt + 8 + nw, STAGE.huffman | (STAGE.shuffle << 8)), p)],
      [
        'piped field block not below n w',
        (p) => {
          const field1 = fieldAt + 8 + nw;
          const L = u32le(p, field1 + 4);
          const out = Uint8Array.from([...p.subarray(0, field1 + 8 + L), ...new Uint8Array(nw - L)]);
          setU32le(out, field1 + 4, nw);
          return out;
        },
      ],
      [
        'a piped block whose directory lies',
        (p) => {
          const field1 = fieldAt + 8 + nw;
          setU32le(p, field1 + 8, n - 1); // decoded bytes of plane 0
          return p;
        },
      ],
    ];
    for (const [name, mutate, type] of mutations) {
      it(name, () => {
        const bad = mutate(good.slice());
        expect(() => decodePredictedPayload(bad, type ?? TYPE_CODE.f32, count)).toThrow(/CORRUPT/);
      });
    }

    it('map 1 on u8, shuffle on a u8 field block', () => {
      const u8 = new Uint8Array(64).map((_, i) => i);
      const payload = encodePredictedPayload(u8, TYPE_CODE.u8, { map: 0, predictor: 1, fields: 1, X: 8, Y: 1, stages: [[STAGE.huffman]] });
      expect(Array.from(decodePredictedPayload(payload, TYPE_CODE.u8, 64))).toEqual(Array.from(u8));
      const badMap = payload.slice();
      badMap[0] = 1;
      expect(() => decodePredictedPayload(badMap, TYPE_CODE.u8, 64)).toThrow(/CORRUPT/);
      const badShuffle = payload.slice();
      badShuffle[12] = STAGE.shuffle;
      badShuffle[13] = STAGE.huffman;
      expect(() => decodePredictedPayload(badShuffle, TYPE_CODE.u8, 64)).toThrow(/CORRUPT/);
    });
  });
});

// ---------------------------------------------------------------------------------------------
// A hand-built container
// ---------------------------------------------------------------------------------------------

describe('hand-built version-4 container', () => {
  // a u8 RGB image 16 x 24 x 3, smooth, cut in 2 chunks of 8 rows (576 elements)
  const shape = [16, 24, 3];
  const image = new Uint8Array(16 * 24 * 3);
  for (let i = 0; i < 16; i++)
    for (let j = 0; j < 24; j++) for (let k = 0; k < 3; k++) image[(i * 24 + j) * 3 + k] = (20 * k + 3 * i + 5 * j) & 0xff;
  // chunk 0: field 0 stored, fields 1, 2 piped; chunk 1: all piped
  const chunk0: PredictParams = {
    map: 0,
    predictor: PREDICTOR.lorenzo2,
    fields: 3,
    X: 24,
    Y: 1,
    stages: [[], [STAGE.rle, STAGE.huffman], [STAGE.huffman]],
  };
  const chunk1: PredictParams = {
    map: 0,
    predictor: PREDICTOR.med,
    fields: 3,
    X: 24,
    Y: 4,
    stages: [[STAGE.rle, STAGE.huffman], [STAGE.rle, STAGE.huffman], [STAGE.huffman]],
  };
  const container = encodeContainer(image, {
    type: TYPE_CODE.u8,
    chunkLength: 576,
    level: 5,
    shape,
    chunks: [
      { kind: 'predicted', ...chunk0 },
      { kind: 'predicted', ...chunk1 },
    ],
  });

  it('decodes to the image, with its shape', () => {
    const decoded = decodeContainer(container);
    expect(decoded.version).toBe(4);
    expect(decoded.type).toBe(TYPE_CODE.u8);
    expect(decoded.shape).toEqual(shape);
    expect(Array.from(decoded.elements)).toEqual(Array.from(image));
    expect(decoded.chunks.map((c) => c.byte24)).toEqual([PREDICT_STAGE, PREDICT_STAGE]);
    expect(decoded.chunks[0].predicted!.stages).toEqual([[], [STAGE.rle, STAGE.huffman], [STAGE.huffman]]);
    expect(decoded.chunks[1].predicted!.stages).toEqual([[STAGE.rle, STAGE.huffman], [STAGE.rle, STAGE.huffman], [STAGE.huffman]]);
    expect(decoded.chunks[1].predicted!.predictor).toBe(PREDICTOR.med);
    expect(container.length).toBeLessThan(32 + 3 * 8 + 4 + 2 * 32 + image.length);
    expect(decoded.chunks.every((c) => c.P < 576)).toBe(true);
  });

  it('lays out the header, the shape block and the first entry as the spec says', () => {
    expect(Array.from(container.subarray(0, 8))).toEqual([0x89, 0x50, 0x41, 0x52, 0x4c, 0x45, 0x0d, 0x0a]);
    expect(container[8]).toBe(4);
    expect(container[11]).toBe(3 | 0x10); // rank 3, a chunk index
    expect(u32le(container, 12)).toBe(576);
    expect(u32le(container, 16)).toBe(1152);
    expect(u32le(container, 24)).toBe(2);
    expect(u32le(container, 28)).toBe(xxh64Low(container.subarray(0, 28)));
    expect([u32le(container, 32), u32le(container, 40), u32le(container, 48)]).toEqual(shape);
    expect(u32le(container, 56)).toBe(xxh64Low(container.subarray(32, 56)));
    const entry = 60;
    expect(u32le(container, entry)).toBe(576);
    expect(u32le(container, entry + 4)).toBe(0);
    expect(u32le(container, entry + 8)).toBe(0);
    expect(container[entry + 24]).toBe(7);
    const P = u32le(container, entry + 12);
    expect(P).toBeLessThan(576);
    const payload = container.subarray(entry + 32, entry + 32 + P);
    expect(u32le(container, entry + 16)).toBe(treeHash(payload));
    expect(u32le(container, entry + 20)).toBe(treeHash(image.subarray(0, 576)));
    expect(Array.from(payload.subarray(0, 12))).toEqual([0, 3, 3, 0, 24, 0, 0, 0, 1, 0, 0, 0]);
    expect(Array.from(decodePredictedPayload(payload, TYPE_CODE.u8, 576))).toEqual(Array.from(image.subarray(0, 576)));
    // the chunk index closes the container: both entries' offsets (u64) and their checksum
    const second = entry + 32 + P;
    const index = container.subarray(second + 32 + u32le(container, second + 12));
    expect(index.length).toBe(2 * 8 + 4);
    expect([u32le(index, 0), u32le(index, 4), u32le(index, 8), u32le(index, 12)]).toEqual([entry, 0, second, 0]);
    expect(u32le(index, 16)).toBe(xxh64Low(index.subarray(0, 16)));
  });

  it('a hand-assembled container with a stored, a piped and a predicted f32 chunk', () => {
    const rng = new Rng(caseSeed('hand f32 container'));
    const values = smoothF32(rng, 3000).map((x) => Math.round(x * 1000) / 1000);
    values[2500] = NaN;
    const elements = f32BytesOf(values);
    const header = encodeHeader(TYPE_CODE.f32, 9, 1000, 3000, [3000]);
    const parts: Uint8Array[] = [header];
    // chunk 0 stored
    const c0 = elements.subarray(0, 4000);
    parts.push(
      encodeEntry({ count: 1000, stages: [], S: 0, P: 4000, payloadHash: treeHash(c0), elementsHash: treeHash(c0), byte24: 0 }),
      c0,
    );
    // chunk 1 predicted, one field, decimal e = 3, lorenzo2 on rows of 10
    const c1 = elements.subarray(4000, 8000);
    const p1 = encodePredictedPayload(c1, TYPE_CODE.f32, {
      map: 2,
      predictor: 3,
      fields: 1,
      X: 10,
      Y: 5,
      exponents: [3],
      stages: [[STAGE.shuffle, STAGE.huffman]],
    });
    expect(p1.length).toBeLessThan(4000);
    parts.push(
      encodeEntry({ count: 1000, stages: [], S: 0, P: p1.length, payloadHash: treeHash(p1), elementsHash: treeHash(c1), byte24: 7 }),
      p1,
    );
    // chunk 2 predicted, 2 fields at e = 3, left, field 0 stored, field 1 piped; the NaN an exception
    const c2 = elements.subarray(8000, 12000);
    const p2 = encodePredictedPayload(c2, TYPE_CODE.f32, {
      map: 2,
      predictor: 1,
      fields: 2,
      X: 50,
      Y: 1,
      exponents: [3, 3],
      stages: [[], [STAGE.shuffle, STAGE.rle, STAGE.huffman]],
    });
    expect(p2.length).toBeLessThan(4000);
    parts.push(
      encodeEntry({ count: 1000, stages: [], S: 0, P: p2.length, payloadHash: treeHash(p2), elementsHash: treeHash(c2), byte24: 7 }),
      p2,
    );
    // the chunk index: each entry's offset
    const offsets: number[] = [];
    parts.reduce((at, part, i) => (i % 2 === 1 && offsets.push(at), at + part.length), 0);
    parts.push(encodeIndex(offsets));
    const bytes = Uint8Array.from(parts.flatMap((p) => Array.from(p)));
    const decoded = decodeContainer(bytes);
    expect(decoded.shape).toEqual([3000]);
    expect(Array.from(decoded.elements)).toEqual(Array.from(elements));
    expect(decoded.chunks[2].predicted!.exceptions.indices).toEqual([500]);
    expect(decoded.chunks[1].predicted!.stages).toEqual([[STAGE.shuffle, STAGE.huffman]]);
    expect(decoded.chunks[2].predicted!.stages).toEqual([[], [STAGE.shuffle, STAGE.rle, STAGE.huffman]]);
    expect(decoded.chunks.map((c) => c.byte24)).toEqual([0, 7, 7]);
  });

  describe('reader checks', () => {
    const entry = 60;
    const reseal = (bytes: Uint8Array, at: number) => setU32le(bytes, at + 28, xxh64Low(bytes.subarray(at, at + 28)));

    it('shape checksum', () => {
      const bad = container.slice();
      bad[40] = 13;
      expect(() => decodeContainer(bad)).toThrow(/CORRUPT/);
    });
    it('dims that do not multiply to N', () => {
      const bad = container.slice();
      bad[40] = 13;
      setU32le(bad, 56, xxh64Low(bad.subarray(32, 56)));
      expect(() => decodeContainer(bad)).toThrow(/CORRUPT/);
    });
    it('a dim of 0', () => {
      const c = encodeHeader(TYPE_CODE.u8, 5, 10, 0, [0, 4]);
      expect(() => decodeContainer(c)).toThrow(/CORRUPT/);
    });
    it('rank over 8', () => {
      const bad = container.slice();
      bad[11] = 9;
      reseal(bad, 0);
      expect(() => decodeContainer(bad)).toThrow(/CORRUPT/);
    });
    it('byte 24 = 7 in a version-3 container', () => {
      const v3 = encodeContainer(image, {
        type: TYPE_CODE.u8,
        chunkLength: 576,
        version: 3,
        chunks: [
          { kind: 'predicted', ...chunk0 },
          { kind: 'predicted', ...chunk1 },
        ],
      });
      expect(() => decodeContainer(v3)).toThrow(/CORRUPT: .*version 3/);
    });
    it('a version-3 container without predicted chunks decodes', () => {
      const v3 = encodeContainer(image, {
        type: TYPE_CODE.u8,
        chunkLength: 576,
        version: 3,
        chunks: [{ kind: 'piped', stages: [STAGE.delta, STAGE.huffman] }, { kind: 'stored' }],
      });
      const decoded = decodeContainer(v3);
      expect(decoded.shape).toBeUndefined();
      expect(Array.from(decoded.elements)).toEqual(Array.from(image));
    });
    it('stage ids or S on a predicted entry', () => {
      const bad = container.slice();
      bad[entry + 4] = STAGE.huffman;
      reseal(bad, entry);
      expect(() => decodeContainer(bad)).toThrow(/CORRUPT/);
      const badS = container.slice();
      setU32le(badS, entry + 8, 1);
      reseal(badS, entry);
      expect(() => decodeContainer(badS)).toThrow(/CORRUPT/);
    });
    it('byte 24 neither 0, 5 nor 7', () => {
      const bad = container.slice();
      bad[entry + 24] = 6;
      reseal(bad, entry);
      expect(() => decodeContainer(bad)).toThrow(/CORRUPT/);
    });
    it('a payload bit flipped: CHECKSUM_MISMATCH', () => {
      const bad = container.slice();
      bad[entry + 32 + 20] ^= 1;
      expect(() => decodeContainer(bad)).toThrow(/CHECKSUM_MISMATCH/);
    });
    it('a residual changed with the payload hash recomputed: the elements hash', () => {
      const bad = container.slice();
      const P = u32le(bad, entry + 12);
      bad[entry + 32 + 12 + 8 + 5] ^= 1; // field 0 is stored: residual 5
      setU32le(bad, entry + 16, treeHash(bad.subarray(entry + 32, entry + 32 + P)));
      reseal(bad, entry);
      expect(() => decodeContainer(bad)).toThrow(/CHECKSUM_MISMATCH: elements/);
    });
  });
});

// ---------------------------------------------------------------------------------------------
// The engine's version-4 writer
// ---------------------------------------------------------------------------------------------

interface EngineCase {
  name: string;
  shape: number[];
  make: (rng: Rng) => Typed;
  /** 'lt': a shape must make the container smaller; 'le': not larger; undefined: no size check. */
  smaller?: 'lt' | 'le';
}

const clampU8 = (x: number) => Math.max(0, Math.min(255, Math.round(x)));

const ENGINE_CASES: EngineCase[] = [
  {
    name: 'u8 RGB image [64, 80, 3]',
    shape: [64, 80, 3],
    smaller: 'le',
    make: (rng) => {
      const out = new Uint8Array(64 * 80 * 3);
      for (let i = 0; i < 64; i++)
        for (let j = 0; j < 80; j++)
          for (let k = 0; k < 3; k++)
            out[(i * 80 + j) * 3 + k] = clampU8(40 + 2 * i + 1.5 * j + 30 * k + 20 * Math.sin((i + j * k) / 9) + rng.intBetween(-3, 3));
      return out;
    },
  },
  {
    name: 'u8 RGBA image [50, 70, 4] with alpha 0 in a region',
    shape: [50, 70, 4],
    smaller: 'lt',
    make: (rng) => {
      const out = new Uint8Array(50 * 70 * 4);
      for (let i = 0; i < 50; i++)
        for (let j = 0; j < 70; j++) {
          const at = (i * 70 + j) * 4;
          const hole = i >= 10 && i < 30 && j >= 20 && j < 55;
          for (let k = 0; k < 3; k++)
            out[at + k] = clampU8(100 + 2 * i - j + 25 * k + 15 * Math.cos((i * (k + 1)) / 7 + j / 11) + rng.intBetween(-2, 2));
          out[at + 3] = hole ? 0 : 255;
        }
      return out;
    },
  },
  {
    name: 'u16 volume [12, 30, 40]',
    shape: [12, 30, 40],
    make: (rng) => {
      const out = new Uint16Array(12 * 30 * 40);
      for (let t = 0; t < 12; t++)
        for (let y = 0; y < 30; y++)
          for (let x = 0; x < 40; x++)
            out[(t * 30 + y) * 40 + x] = Math.round(
              20000 + 300 * Math.sin(t / 3) + 200 * Math.cos(y / 5) + 150 * Math.sin(x / 7) + rng.intBetween(-4, 4),
            );
      return out;
    },
  },
  {
    name: 'f32 grid [100, 130] of smooth values',
    shape: [100, 130],
    smaller: 'lt',
    make: () => {
      const out = new Float32Array(100 * 130);
      for (let i = 0; i < 100; i++)
        for (let j = 0; j < 130; j++) out[i * 130 + j] = 10 * Math.sin(i / 17) * Math.cos(j / 23) + 0.01 * i * j;
      return out;
    },
  },
  {
    name: 'f32 records [500, 4] of decimals (2 and 5 decimals a column)',
    shape: [500, 4],
    smaller: 'le',
    make: (rng) => {
      const out = new Float32Array(500 * 4);
      let price = 100;
      let rate = 0.5;
      for (let r = 0; r < 500; r++) {
        price += rng.intBetween(-50, 50) / 100;
        rate += rng.intBetween(-100, 100) / 1e5;
        out[r * 4] = Math.round(price * 100) / 100;
        out[r * 4 + 1] = Math.round(rate * 1e5) / 1e5;
        out[r * 4 + 2] = rng.intBetween(0, 99999) / 100;
        out[r * 4 + 3] = Math.round((rate * 2 + rng.intBetween(-10, 10) / 1e5) * 1e5) / 1e5;
      }
      return out;
    },
  },
  {
    name: 'i32 1-D array [20000]',
    shape: [20000],
    make: (rng) => {
      const out = new Int32Array(20000);
      let x = 0;
      for (let i = 0; i < out.length; i++) out[i] = x += rng.intBetween(-1000, 1000);
      return out;
    },
  },
];

describe('engine writes version 4', () => {
  let engine: Engine;
  beforeAll(async () => {
    engine = await createEngine({ workers: 1, gpu: 'off' });
  });
  afterAll(async () => {
    await engine?.destroy();
  });

  for (const c of ENGINE_CASES) {
    it(c.name, async () => {
      const seed = caseSeed(`engine v4 ${c.name}`);
      const input = c.make(new Rng(seed));
      const inputBytes = bytesOf(input).slice();
      expect(c.shape.reduce((a, b) => a * b, 1)).toBe(input.length);

      const container = await engine.compress(input, { shape: c.shape });
      // (a) the engine decodes it
      const back = (await engine.decompress(container)) as Typed;
      expect(back.constructor, describeSeed(seed)).toBe(input.constructor);
      expect(Buffer.from(bytesOf(back)).equals(Buffer.from(inputBytes)), describeSeed(seed)).toBe(true);
      // (b) the reference decodes it
      const decoded = decodeContainer(container);
      expect(decoded.version).toBe(4);
      expect(Buffer.from(decoded.elements).equals(Buffer.from(inputBytes)), describeSeed(seed)).toBe(true);
      // (c) with the shape given
      expect(decoded.shape).toEqual(c.shape);
      // (d) smaller than without a shape
      if (c.smaller) {
        const plain = await engine.compress(input);
        if (c.smaller === 'lt')
          expect(container.length, `${c.name}: ${container.length} with shape, ${plain.length} without`).toBeLessThan(plain.length);
        else
          expect(container.length, `${c.name}: ${container.length} with shape, ${plain.length} without`).toBeLessThanOrEqual(plain.length);
      }
    });
  }
});

describe('shape across the entry points', () => {
  let engine: Engine;
  beforeAll(async () => {
    engine = await createEngine({ workers: 2, gpu: 'off', calibration: 'skip' });
  });
  afterAll(async () => {
    await engine?.destroy();
  });
  // an RGB image of 90 x 120 with smooth channels and a little noise
  const image = new Uint8Array(90 * 120 * 3).map((_, i) => {
    const y = Math.floor(i / 360);
    const x = Math.floor(i / 3) % 120;
    return (Math.round(60 * Math.sin(y / 13) + 50 * Math.cos(x / 17) + 40 * (i % 3)) + ((i * 2654435761) >>> 30)) & 255;
  });
  const shape = [90, 120, 3];

  it('the streaming writer writes the bytes compress writes, fed in odd pieces', async () => {
    const options = { shape, chunkBytes: 8192 };
    const whole = await engine.compress(image, options);
    const writer = engine.createCompressor('u8', image.length, options);
    const pieces: Uint8Array[] = [];
    for (let at = 0; at < image.length; at += 7777) pieces.push(...(await writer.write(image.subarray(at, at + 7777))));
    pieces.push(...(await writer.end()));
    expect(Buffer.compare(Buffer.concat(pieces), Buffer.from(whole))).toBe(0);
    expect(writer.reports.some((r) => r.pipeline === 'predict')).toBe(true);
  });

  it('chunks are whole slabs along the first axis; inspect names the predictor', async () => {
    const packed = await engine.compress(image, { shape, chunkBytes: 8192 });
    const report = engine.inspect(packed);
    expect(report.version).toBe(4);
    expect(report.shape).toEqual(shape);
    expect(report.chunkLength % (120 * 3)).toBe(0);
    expect(report.chunks.some((c) => c.encoding.startsWith('predict('))).toBe(true);
  });

  it('the streaming reader reads a shaped container in pieces of any size', async () => {
    const packed = await engine.compress(image, { shape, chunkBytes: 8192 });
    for (const size of [1, 5, 33, 1000]) {
      const reader = engine.createDecompressor();
      const out: Uint8Array[] = [];
      for (let at = 0; at < packed.length; at += size) out.push(...(await reader.write(packed.subarray(at, at + size))));
      out.push(...(await reader.end()));
      expect(Buffer.compare(Buffer.concat(out), Buffer.from(image)), `pieces of ${size}`).toBe(0);
      expect(reader.header?.shape, `pieces of ${size}`).toEqual(shape);
    }
  });

  it('a fixed codec or an error bound keeps the shape but predicts nothing', async () => {
    for (const options of [{ codec: 'delta+huffman' }, { level: 5, codec: 'auto' }]) {
      const packed = await engine.compress(image, { shape, ...options });
      expect(engine.inspect(packed).shape).toEqual(shape);
      const predicted = engine.inspect(packed).chunks.some((c) => c.encoding.startsWith('predict'));
      expect(predicted, JSON.stringify(options)).toBe(options.codec === 'auto');
    }
    const grid = new Float32Array(64 * 64).map((_, i) => Math.sin(i / 64) * Math.cos(i % 64));
    const lossy = await engine.compress(grid, { shape: [64, 64], errorBound: { abs: 1e-3 } });
    expect(engine.inspect(lossy).chunks.every((c) => c.encoding.startsWith('quantize'))).toBe(true);
  });

  it('a compress with a plan writes the bytes a compress of its sample does, and of other arrays those of a compress planned on the sample', async () => {
    const options = { shape, chunkBytes: 8192, level: 4 };
    const plan = engine.planCompress(image, options);
    expect(plan.type).toBe('u8');
    expect(plan.length).toBe(image.length);
    expect(plan.shape).toEqual(shape);
    expect(plan.level).toBe(4);
    expect(plan.predictor).toMatch(/^predict\(/);
    expect(Object.isFrozen(plan)).toBe(true);
    const planned = await engine.compress(image, { plan });
    expect(Buffer.compare(Buffer.from(planned), Buffer.from(await engine.compress(image, options)))).toBe(0);
    // another image of the same shape: the sample's plan, its own chunks' pipelines; decodes back
    const other = image.map((v) => (v + 1) & 255);
    const packed = await engine.compress(other, { plan });
    expect(engine.inspect(packed).shape).toEqual(shape);
    const predicted = engine.inspect(packed).chunks.filter((c) => c.encoding.startsWith('predict('));
    expect(predicted.length).toBeGreaterThan(0);
    for (const c of predicted) expect(c.encoding).toBe(plan.predictor);
    expect(Buffer.compare(Buffer.from(await engine.decompress(packed)), Buffer.from(other))).toBe(0);
    // a flat array with no predictor: the plan says so and codes as without it
    const noise = new Uint8Array(50_000).map((_, i) => (i * 2654435761) >>> 24);
    const flat = engine.planCompress(noise);
    expect(flat.predictor).toBe('none');
    expect(Buffer.compare(Buffer.from(await engine.compress(noise, { plan: flat })), Buffer.from(await engine.compress(noise)))).toBe(0);
  });

  it('a plan is refused with the options it fixes, for another type or length, and when not made by planCompress', async () => {
    const plan = engine.planCompress(image, { shape });
    const codeOf = (p: Promise<unknown>) =>
      p.then(
        () => 'resolved',
        (e: ParleError) => e.code,
      );
    for (const extra of [
      { shape },
      { level: 5 },
      { codec: 'auto' },
      { chunkBytes: 8192 },
      { decoder: 'cpu' as const },
      { type: 'u8' as const },
    ])
      expect(await codeOf(engine.compress(image, { plan, ...extra })), JSON.stringify(extra)).toBe(ErrorCodes.INVALID_OPTION);
    expect(await codeOf(engine.compress(new Uint16Array(image.length), { plan }))).toBe(ErrorCodes.INVALID_ARGUMENT);
    expect(await codeOf(engine.compress(image.subarray(1), { plan }))).toBe(ErrorCodes.LENGTH_MISMATCH);
    const forged = new CompressPlan('u8', image.length, shape, 5, 'none');
    expect(await codeOf(engine.compress(image, { plan: forged }))).toBe(ErrorCodes.INVALID_OPTION);
    expect(await codeOf(engine.compress(image, { plan: { ...plan } as CompressPlan }))).toBe(ErrorCodes.INVALID_OPTION);
    expect(() => engine.planCompress(image, { shape: [7, 7] })).toThrow(ParleError);
  });

  it('decompress into an out over a SharedArrayBuffer: the workers write each chunk there', async () => {
    expect(engine.sharedMemory).toBe(true);
    // ten images stacked: over 256 KiB, so the chunks are spread over both workers
    const stack = new Uint8Array(image.length * 10);
    for (let k = 0; k < 10; k++)
      stack.set(
        image.map((v) => (v + k) & 255),
        k * image.length,
      );
    const packed = await engine.compress(stack, { shape: [900, 120, 3], chunkBytes: 16384 });
    expect(engine.inspect(packed).chunks.length).toBeGreaterThan(16);
    const out = new Uint8Array(new SharedArrayBuffer(stack.length + 64), 32, stack.length);
    const got = await engine.decompress(packed, { out });
    expect(got).toBe(out);
    expect(Buffer.compare(Buffer.from(out), Buffer.from(stack))).toBe(0);
    // the bytes around it untouched
    const all = new Uint8Array(out.buffer);
    expect(all.subarray(0, 32).every((b) => b === 0) && all.subarray(32 + stack.length).every((b) => b === 0)).toBe(true);
    // a corrupt chunk: CHECKSUM_MISMATCH as into any other out
    const bad = packed.slice();
    bad[bad.length - 40] ^= 1;
    await expect(engine.decompress(bad, { out })).rejects.toMatchObject({ code: expect.stringMatching(/CHECKSUM_MISMATCH|CORRUPT/) });
  });

  it("a compress with a shape takes the GPU path where it was asked for, unless its codec is the CPU writer's alone", () => {
    const settings = compressSettingsWith({ shape });
    expect(compressRoute('gpu', 'host', settings, { type: 'u8', length: image.length })).toBe('gpu');
    expect(compressRoute('gpu', 'device', settings, { type: 'u8', length: image.length })).toBe('gpu-to-device');
    expect(compressRoute('cpu', 'host', settings, { type: 'u8', length: image.length })).toBe('cpu');
    // 8-byte types with a fixed codec the GPU does not code: the CPU path; med (a CompressPlan's),
    // the decimal map, 8-byte types' chooser and a codec it codes, and a shaped lossy array: the
    // GPU's too
    const med = compressSettingsWith({ shape, predict: { map: 0, predictor: 5, fields: 1, rowCells: 64, planeRows: 1 } });
    expect(compressRoute('gpu', 'host', med, { type: 'u8', length: image.length })).toBe('gpu');
    const decimal = compressSettingsWith({ shape, predict: { map: 2, predictor: 3, fields: 1, rowCells: 64, planeRows: 1 } });
    expect(compressRoute('gpu', 'host', decimal, { type: 'f32', length: image.length })).toBe('gpu');
    expect(compressRoute('gpu', 'host', compressSettingsWith({ shape, errorBound: 0.1 }), { type: 'f32', length: image.length })).toBe(
      'gpu-lossy',
    );
    expect(compressRoute('gpu', 'host', compressSettingsWith({ shape }), { type: 'f64', length: image.length })).toBe('gpu');
    expect(compressRoute('gpu', 'device', compressSettingsWith({ shape }), { type: 'i64', length: image.length })).toBe('gpu-to-device');
    expect(compressRoute('gpu', 'host', compressSettingsWith({ shape, codec: [] }), { type: 'f64', length: image.length })).toBe('cpu');
    expect(
      compressRoute('gpu', 'host', compressSettingsWith({ shape, codec: [STAGE.delta, STAGE.pack] }), {
        type: 'f64',
        length: image.length,
      }),
    ).toBe('gpu');
    // f64 within a bound, flat or shaped: quantized on the GPU (the container read back, or left
    // there)
    const f64 = { type: 'f64', length: image.length } as const;
    expect(compressRoute('gpu', 'host', compressSettingsWith({ errorBound: 0.1 }), f64)).toBe('gpu-lossy');
    expect(compressRoute('gpu', 'device', compressSettingsWith({ errorBound: 0.1 }), f64)).toBe('gpu-lossy-to-device');
    expect(compressRoute('gpu', 'device', compressSettingsWith({ shape, errorBound: 0.1 }), f64)).toBe('gpu-lossy-to-device');
  });
});

describe("a flat array's record stride", () => {
  let engine: Engine;
  beforeAll(async () => {
    engine = await createEngine({ workers: 2, gpu: 'off', calibration: 'skip' });
  });
  afterAll(async () => {
    await engine?.destroy();
  });
  // interleaved RGB pixels (a 200 x 300 image, no shape given) and xyz points of a smooth curve
  const rgb = new Uint8Array(200 * 300 * 3).map((_, i) => {
    const p = Math.floor(i / 3);
    return (
      (Math.round(60 * Math.sin(Math.floor(p / 300) / 19) + 50 * Math.cos((p % 300) / 23) + 70 * (i % 3)) + ((i * 2654435761) >>> 30)) & 255
    );
  });
  const points = new Float32Array(60_000 * 3).map((_, i) => {
    const t = Math.floor(i / 3) / 500;
    return Math.round([Math.cos(t) * 100, Math.sin(t) * 100, t][i % 3] * 1000) / 1000;
  });

  it('interleaved channels and points are planned by their stride: whole records a chunk, smaller than without', async () => {
    for (const [name, array, stride] of [
      ['rgb', rgb, 3],
      ['points', points, 3],
    ] as const) {
      // chunks of 64 KiB: the chunk length is cut to whole records, the chunk count kept
      const chunkBytes = 64 << 10;
      const packed = await engine.compress(array, { chunkBytes });
      const report = engine.inspect(packed);
      expect(report.shape, name).toBeUndefined();
      expect(report.chunkLength % stride, name).toBe(0);
      expect(
        report.chunks.some((c) => c.encoding.startsWith('predict(')),
        name,
      ).toBe(true);
      expect(Buffer.compare(Buffer.from(bytesOf((await engine.decompress(packed)) as Typed)), Buffer.from(bytesOf(array))), name).toBe(0);
      // the plain pipelines' best, each fixed
      const codecs =
        name === 'rgb' ? ['delta+huffman', 'rle+huffman', 'huffman'] : ['delta+shuffle+huffman', 'shuffle+huffman', 'delta+pack'];
      const plain = Math.min(
        ...(await Promise.all(codecs.map(async (codec) => (await engine.compress(array, { chunkBytes, codec })).length))),
      );
      expect(packed.length, name).toBeLessThan(0.9 * plain);
      // within compressBound: a caller's out of exactly that size takes it
      const out = new Uint8Array(compressBound(array.length, name === 'rgb' ? 'u8' : 'f32', chunkBytes));
      expect((await engine.compress(array, { chunkBytes, out })).length, name).toBe(packed.length);
    }
  });

  it('a flat array of whole chunks off whole records keeps its stride: the chunk length rounded up to whole records and words, the count kept', async () => {
    // 3 chunks of 64 KiB exactly: cut down to whole records of whole words (65532) they would be 4 chunks
    const chunkBytes = 64 << 10;
    const array = new Uint8Array(3 * chunkBytes).map((_, i) => rgb[i % rgb.length]);
    const packed = await engine.compress(array, { chunkBytes });
    const report = engine.inspect(packed);
    expect(report.chunkLength).toBe(65544);
    expect(report.chunks.length).toBe(3);
    expect(report.chunks.every((c) => c.encoding.startsWith('predict('))).toBe(true);
    expect(Buffer.compare(Buffer.from(bytesOf((await engine.decompress(packed)) as Typed)), Buffer.from(bytesOf(array)))).toBe(0);
    const out = new Uint8Array(compressBound(array.length, 'u8', chunkBytes));
    expect((await engine.compress(array, { chunkBytes, out })).length).toBe(packed.length);
  });

  it('chunks of a flat plan: whole records of whole words; one chunk of a partial record drops the plan', () => {
    const settings = compressSettingsWith({});
    const plan = { map: 0, predictor: 3, fields: 1, rowCells: 3, planeRows: 1 } as const;
    const none = new Uint8Array(0);
    // u8 records of 3: chunks of 12 elements' multiples (3 records of 4 bytes)
    expect(chunkingOf(settings, 'u8', 100_000, 4096, plan, none)).toEqual({ chunkLength: 4092, plan });
    // one chunk: whole records keep the plan, a partial one drops it (4096: cut down to 4092 it
    // would be two chunks, rounded up to 4104 it is one of a partial record)
    expect(chunkingOf(settings, 'u8', 3000, 4096, plan, none)).toEqual({ chunkLength: 4092, plan });
    expect(chunkingOf(settings, 'u8', 4096, 4096, plan, none)).toEqual({ chunkLength: 4096, plan: undefined });
    // two chunks, the last of a partial record: kept
    expect(chunkingOf(settings, 'u8', 4099, 4096, plan, none)).toEqual({ chunkLength: 4092, plan });
    // several chunks, the last partial: kept (the others are predicted)
    expect(chunkingOf(settings, 'u8', 3 * 4096, 4096, plan, none)).toEqual({ chunkLength: 4104, plan });
  });

  it('chunks of a flat plan of 8-byte elements whose last record is partial: that chunk (stored) holds fewer elements than the count of records before it', async () => {
    const settings = compressSettingsWith({});
    // f64 records of 5 elements (10 word fields), 4096 elements a chunk
    const plan = { map: 1, predictor: 1, fields: 10, rowCells: 0, planeRows: 1 } as const;
    const none = new Uint8Array(0);
    for (const length of [4096 * 16 + 3, 4096 * 3 + 1, 4096 + 7, 5 * 4096 - 2]) {
      const { chunkLength, plan: kept } = chunkingOf(settings, 'f64', length, 4096, plan, none);
      expect(kept, `${length}`).toBe(plan);
      expect(chunkLength % 5, `${length}`).toBe(0);
      // the chunk count of 4096 (the container within compressBound), the last under 5 x the rest
      const chunks = Math.ceil(length / chunkLength);
      expect(chunks, `${length}`).toBe(Math.ceil(length / 4096));
      expect(length - (chunks - 1) * chunkLength, `${length}`).toBeLessThan(5 * (chunks - 1));
    }
    // whole records: cut down as before
    expect(chunkingOf(settings, 'f64', 5 * 4000, 4096, plan, none)).toEqual({ chunkLength: 4095, plan });
    // the whole call: an f64 array of 5-field records one element short of whole, its last chunk
    // stored and small
    const records = Float64Array.from(
      { length: 5 * 20_000 - 1 },
      (_, i) => Math.round(((i % 5) * 100 + Math.sin(i / 50) * 10) * 1000) / 1000,
    );
    const packed = await engine.compress(records, { chunkBytes: 64 << 10 });
    const report = engine.inspect(packed);
    const last = report.chunks[report.chunks.length - 1];
    expect(report.chunks.length).toBe(Math.ceil(records.length / 8192));
    expect(last.encoding).toBe('stored');
    expect(last.elementCount).toBeLessThan(5 * report.chunks.length);
    expect(report.chunks.slice(0, -1).every((c) => c.encoding.startsWith('predict('))).toBe(true);
    expect(Buffer.compare(Buffer.from(bytesOf((await engine.decompress(packed)) as Typed)), Buffer.from(bytesOf(records)))).toBe(0);
    const out = new Uint8Array(compressBound(records.length, 'f64', 64 << 10));
    expect((await engine.compress(records, { chunkBytes: 64 << 10, out })).length).toBe(packed.length);
  });

  it('level 1 keeps a flat array plain (no stride search)', async () => {
    const fast = engine.inspect(await engine.compress(rgb, { level: 1 }));
    expect(fast.chunks.some((c) => c.encoding.startsWith('predict('))).toBe(false);
    const two = engine.inspect(await engine.compress(rgb, { level: 2 }));
    expect(two.chunks.some((c) => c.encoding.startsWith('predict('))).toBe(true);
  });

  it('a smooth signal, noise and small arrays get no stride', async () => {
    const smooth = new Float32Array(100_000).map((_, i) => Math.sin(i / 300));
    const noise = new Uint8Array(200_000).map((_, i) => (i * 2654435761) >>> 24);
    const small = rgb.subarray(0, 30_000);
    for (const [name, array] of [
      ['smooth', smooth],
      ['noise', noise],
      ['small', small],
    ] as const) {
      const report = engine.inspect(await engine.compress(array as Typed));
      expect(
        report.chunks.some((c) => c.encoding.startsWith('predict(')),
        name,
      ).toBe(false);
    }
  });
});

describe('planning from a sample read back (the GPU path)', () => {
  /** `bytes` with only planSampleRanges' elements kept, as SampledBytes (the GPU path plans over them so). */
  function sampled(bytes: Uint8Array, type: ElementType, shape: readonly number[] | undefined): SampledBytes {
    const size = elementSize(type);
    let kept = 0;
    const parts = planSampleRanges(bytes.length / size, type, shape).map(([start, end]) => {
      expect(start).toBeLessThan(end);
      kept += end - start;
      return { at: start * size, bytes: bytes.slice(start * size, end * size) };
    });
    // a sample, not the array (arrays of 2^20 elements and more)
    if (bytes.length / size >= 1 << 20) expect(kept).toBeLessThan(bytes.length / size / 2);
    // with a shape: each of the 8 ranges of 1024 elements and their copies a row, a plane, and a
    // plane and a row back, for each of at most 2 geometries (a volume's span from a plane back,
    // read before, was 8 x 28k elements for a plane of 180 x 150)
    if (shape !== undefined) expect(kept).toBeLessThanOrEqual(2 * 4 * 8 * (1024 + 24));
    return new SampledBytes(bytes.length, parts);
  }
  const rng = new Rng(caseSeed('plan sample ranges'));
  /** A smooth field of `n` elements of `type` with `X` cells a row of `fields`, a little noise. */
  const field = (type: 'u8' | 'u16' | 'f32', n: number, X: number, fields: number) => {
    const out = type === 'u8' ? new Uint8Array(n) : type === 'u16' ? new Uint16Array(n) : new Float32Array(n);
    for (let e = 0; e < n; e++) {
      const c = Math.floor(e / fields);
      const v = Math.sin((c % X) / 11 + (e % fields)) + Math.cos(Math.floor(c / X) / 13);
      out[e] =
        type === 'f32'
          ? v * 100 + rng.nextFloat() / 16
          : Math.round(v * (type === 'u8' ? 50 : 9000) + (type === 'u8' ? 120 : 20000)) + rng.intBetween(0, 2);
    }
    return out;
  };
  const cases: [string, 'u8' | 'u16' | 'f32', number[] | undefined, number, number][] = [
    // [what, type, shape, row cells, fields]
    ['RGB pixels, flat', 'u8', undefined, 640, 3],
    ['RGB pixels, flat, a length off whole records', 'u8', undefined, 641, 3],
    ['an image', 'u8', [700, 1500], 1500, 1],
    ['a volume', 'u16', [40, 180, 150], 150, 1],
    ['RGBA glyphs', 'u8', [20, 128, 136, 4], 136, 4],
    ['points, flat', 'f32', undefined, 1 << 20, 3],
    ['records', 'f32', [300_000, 5], 1, 5],
    ['a grid', 'f32', [1201, 1201], 1201, 1],
  ];
  it('plans from the sampled elements as over the whole array', () => {
    let planned = 0;
    for (const [what, type, shape, X, fields] of cases) {
      const n = shape?.reduce((a, b) => a * b, 1) ?? (what.includes('off') ? 3 * 400_000 + 2 : 3 * 400_000);
      const array = field(type, n, X, fields);
      const bytes = new Uint8Array(array.buffer);
      const settings = compressSettingsWith({ ...(shape ? { shape } : {}) });
      const part = sampled(bytes, type, shape);
      const whole = predictPlanOf(settings, type, bytes);
      expect(predictPlanOf(settings, type, part), what).toEqual(whole);
      if (whole !== undefined) planned++;
    }
    // (arrays the planner predicts, so that the plans compared are not all none)
    expect(planned).toBeGreaterThanOrEqual(5);
    // its reads: the bytes held, 0 elsewhere, a prefix kept by subarray
    const held = new SampledBytes(100, [
      { at: 8, bytes: Uint8Array.from([1, 2, 3, 4, 5, 6, 7, 8]) },
      { at: 40, bytes: new Uint8Array(new Float64Array([1.5]).buffer) },
    ]);
    expect([held.getUint8(8), held.getUint16(10, true), held.getUint32(12, true), held.getUint8(16), held.getUint32(6, true)]).toEqual([
      1,
      3 + 4 * 256,
      0x08070605,
      0,
      0,
    ]);
    expect([held.getFloat64(40, true), held.subarray(0, 50).length, held.subarray(0, 500).length]).toEqual([1.5, 50, 100]);
    // a range's bytes where one range holds them all, else none (the planner then reads word by word)
    expect([...held.bytesAt(10, 4)!]).toEqual([3, 4, 5, 6]);
    expect([held.bytesAt(6, 4), held.bytesAt(12, 8), held.bytesAt(30, 4)]).toEqual([undefined, undefined, undefined]);
  });

  it('plans over bytes off a word boundary (read word by word) as over an aligned copy', () => {
    for (const [what, type, shape, X, fields] of cases.filter(([, t]) => t !== 'u8')) {
      const n = shape?.reduce((a, b) => a * b, 1) ?? 3 * 400_000;
      const aligned = new Uint8Array(field(type, n, X, fields).buffer);
      const off = new Uint8Array(aligned.length + 1).subarray(1);
      off.set(aligned);
      const settings = compressSettingsWith({ ...(shape ? { shape } : {}) });
      expect(predictPlanOf(settings, type, off), what).toEqual(predictPlanOf(settings, type, aligned));
    }
  });
});

describe("the planner's estimate of a sample range", () => {
  /** Order-0 entropy in bits of the bytes counted in `h` (the planner's rule: at least 5 % of a bit a byte, 0 for one symbol). */
  const bitsOf = (h: number[], total: number) => {
    const present = h.filter((c) => c > 0);
    const bits = present.reduce((s, c) => s - c * Math.log2(c / total), 0);
    return present.length <= 1 ? 0 : Math.max(bits, total * 0.05);
  };
  /** The estimate of residuals `r` (w bytes each): the smaller of byte planes and one byte stream, against a byte of run length and half a value a run. */
  const bytesOf = (r: number[], w: number) => {
    const planes = Array.from({ length: w }, (_, k) => {
      const h = new Array<number>(256).fill(0);
      for (const v of r) h[Math.floor(v / 256 ** k) % 256]++;
      return h;
    });
    const planeBits = planes.reduce((s, h) => s + bitsOf(h, r.length), 0);
    const whole = planes[0].map((_, i) => planes.reduce((s, h) => s + h[i], 0));
    const entropy = (w === 1 ? planeBits : Math.min(planeBits, bitsOf(whole, r.length * w))) / 8;
    const runs = r.filter((v, i) => i === 0 || v !== r[i - 1]).length;
    return Math.min(entropy, runs * (1 + w / 2));
  };
  const rng = new Rng(caseSeed("the planner's estimate"));
  // [geometry, X, Y]: cells of fields, rows of X cells, planes of Y rows (whole: one row of all cells)
  const geometries: Geometry[] = [
    { fields: 1, rowCells: 0, planeRows: 1, axes: 1 },
    { fields: 2, rowCells: 0, planeRows: 1, axes: 1 },
    { fields: 1, rowCells: 36, planeRows: 1, axes: 2 },
    { fields: 3, rowCells: 5, planeRows: 1, axes: 2 },
    { fields: 1, rowCells: 3, planeRows: 40, axes: 3 },
    { fields: 2, rowCells: 9, planeRows: 4, axes: 3 },
  ];
  it('is the entropy or runs of the residuals the reference predictors give, field by field, at every edge', () => {
    let compared = 0;
    for (const w of [1, 2, 4] as const) {
      for (const g of geometries) {
        const cells = 2880;
        const X = g.rowCells === 0 ? cells : g.rowCells;
        const Y = g.planeRows;
        const n = cells * g.fields;
        // smooth values with noise, runs and wraps around 2^(8w)
        const M = 2 ** (8 * w);
        const u = Array.from({ length: n }, (_, e) => {
          const c = Math.floor(e / g.fields);
          if (c % 97 < 9) return 7;
          const v = Math.round(Math.sin(c / 17 + (e % g.fields)) * M * 0.3 + (c % X) * 5 + rng.intBetween(0, 3));
          return ((v % M) + M) % M;
        });
        const words = Uint32Array.from(u);
        const row = g.rowCells === 0 ? n : g.rowCells * g.fields;
        const predictors = g.axes === 1 ? [PREDICTOR.none, PREDICTOR.left] : g.axes === 2 ? [1, 2, 3, 5] : [1, 2, 3, 4, 5];
        for (const p of predictors) {
          const planes = predictResiduals(u, w, g.fields, X, Y, p);
          // ranges from word 0, mid-row, at a plane's start, off a cell boundary, to the end
          for (const [first, length] of [
            [0, 1024],
            [g.fields * 53 + 1, 700],
            [g.fields * X * Y, 512],
            [n - 1000, 1000],
          ]) {
            const win = windowOf(
              fillOf((e) => words[e]),
              first,
              length,
              g,
            );
            const got = residualBytes(win, first, length, w, g, row, p);
            const c0 = Math.floor(first / g.fields);
            const per = Math.floor(length / g.fields);
            const want = planes.reduce((s, plane) => s + bytesOf([...plane.subarray(c0, c0 + per)], w), 0);
            expect(got, `w ${w}, geometry ${JSON.stringify(g)}, predictor ${p}, range at ${first}`).toBeCloseTo(want, 6);
            compared++;
          }
        }
      }
    }
    expect(compared).toBeGreaterThan(200);
  });
});
