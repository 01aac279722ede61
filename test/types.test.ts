/**
 * The element types of container version 4 (docs/format.md, "Element types"): i8, i16, f16,
 * f64, i64, u64 through compress / decompress (with and without a shape, special values and
 * NaN payloads kept bit for bit), the plain reference reading the engine's containers and the
 * engine reading the reference's (8-byte elements as word planes under every map and
 * predictor), rle of every type, the `type` option for f16 bits, and what the format and the
 * engine refuse (a new type in version 3, a pipeline on 8-byte elements, an odd word field
 * count, the GPU's and scan's kernels on types they do not take).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine, ErrorCodes, type Engine, type ParleArray } from '../ts/index.js';
import { treeHash } from './support/codec-reference.js';
import {
  MAP,
  PREDICTOR,
  PREDICT_STAGE,
  TYPE_CODE,
  decodeContainer,
  encodeContainer,
  encodeEntry,
  encodeHeader,
  encodePredictedPayload,
  f64Bits,
} from './support/predict-reference.js';
import { Rng, caseSeed } from './support/random.js';

function bytesOf(array: ArrayBufferView): Uint8Array {
  return new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
}

function sameBits(a: ArrayBufferView, b: ArrayBufferView): boolean {
  return Buffer.compare(bytesOf(a), bytesOf(b)) === 0;
}

/** f64 values with the edge cases: NaN payloads, -0, infinities, subnormals, extremes. */
const SPECIAL_F64_BITS: readonly bigint[] = [
  0x7ff8000000000000n, // NaN
  0x7ff0000000000001n, // signalling NaN payload
  0xfff8000000000123n, // negative NaN with a payload
  0x8000000000000000n, // -0
  0x7ff0000000000000n, // +Infinity
  0xfff0000000000000n, // -Infinity
  0x0000000000000001n, // smallest subnormal
  0x7fefffffffffffffn, // largest finite
];

/** Arrays of `n` elements of each new type, of three kinds: smooth, decimal, random with edge values. */
function arraysOf(rng: Rng, n: number): Record<string, ParleArray> {
  const random = () => rng.nextU32() / 2 ** 32;
  const f64Random = new Float64Array(n).map(() => (random() - 0.5) * 10 ** Math.floor(random() * 20 - 10));
  const bits = new BigUint64Array(f64Random.buffer);
  for (let i = 0; i < n; i += 97) bits[i] = SPECIAL_F64_BITS[(i / 97) % SPECIAL_F64_BITS.length];
  const decimal = Float64Array.from({ length: n }, (_, i) => Math.round((20 + 10 * Math.sin(i / 300) + random()) * 1000) / 1000);
  for (let i = 5; i < n; i += 301) decimal[i] = Math.PI * i; // exceptions: not decimals of 3 digits
  return {
    i8: Int8Array.from({ length: n }, (_, i) => Math.round(100 * Math.sin(i / 40)) + (rng.nextU32() % 3)),
    i16: Int16Array.from({ length: n }, (_, i) => Math.round(-20000 + 30000 * Math.sin(i / 200)) + (rng.nextU32() % 9)),
    f64smooth: Float64Array.from({ length: n }, (_, i) => Math.sin(i / 500) * 1e3 - 1e3 * Math.cos(i / 77)),
    f64decimal: decimal,
    f64random: f64Random,
    i64: BigInt64Array.from({ length: n }, (_, i) => -(2n ** 62n) + BigInt(i) * 1_000_003n + BigInt(rng.nextU32() % 7)),
    u64: BigUint64Array.from({ length: n }, () => (BigInt(rng.nextU32()) << 32n) | BigInt(rng.nextU32() % 5)),
  };
}

const TYPE_OF: Record<string, number> = {
  Int8Array: TYPE_CODE.i8,
  Int16Array: TYPE_CODE.i16,
  Float64Array: TYPE_CODE.f64,
  BigInt64Array: TYPE_CODE.i64,
  BigUint64Array: TYPE_CODE.u64,
};

describe('element types of version 4', () => {
  let engine: Engine;
  beforeAll(async () => {
    engine = await createEngine({ workers: 2, gpu: 'off', calibration: 'skip' });
  });
  afterAll(async () => {
    await engine.destroy();
  });

  const n = 6000;
  for (const [name, shape] of [
    ['flat', undefined],
    ['shaped [60, 100]', [60, 100]],
    ['records [1500, 4]', [1500, 4]],
    ['volume [6, 20, 50]', [6, 20, 50]],
  ] as const) {
    it(`every new type round trips bit for bit (${name}), and the reference reads the same elements`, async () => {
      const arrays = arraysOf(new Rng(caseSeed(`types ${name}`)), n);
      for (const [kind, array] of Object.entries(arrays)) {
        // small chunks: several a call, each a slab of the shape
        const packed = await engine.compress(array, { chunkBytes: 8192, ...(shape ? { shape } : {}) });
        const back = await engine.decompress(packed);
        expect(back.constructor, kind).toBe(array.constructor);
        expect(sameBits(back, array), kind).toBe(true);
        const ref = decodeContainer(packed);
        expect(ref.type, kind).toBe(TYPE_OF[array.constructor.name]);
        expect(ref.shape, kind).toEqual(shape);
        expect(Buffer.compare(ref.elements, bytesOf(array)), kind).toBe(0);
        // 8-byte elements: every chunk predicted or stored, never piped
        if (array.BYTES_PER_ELEMENT === 8) for (const c of ref.chunks) expect(c.stages, kind).toEqual([]);
      }
    });
  }

  it('8-byte arrays compress: decimals through the decimal map, timestamps, small integers', async () => {
    const n2 = 1 << 15;
    const decimal = Float64Array.from({ length: n2 }, (_, i) => Math.round(5000 * Math.sin(i / 1000)) / 100);
    const stamps = BigInt64Array.from({ length: n2 }, (_, i) => 1_700_000_000_000n + BigInt(1000 * i));
    const small = BigUint64Array.from({ length: n2 }, (_, i) => BigInt(i % 50));
    for (const [array, least] of [
      [decimal, 4],
      [stamps, 50],
      [small, 50],
    ] as const) {
      const packed = await engine.compress(array);
      expect(array.byteLength / packed.length, array.constructor.name).toBeGreaterThan(least);
      expect(sameBits(await engine.decompress(packed), array)).toBe(true);
    }
    const reports = await engine.explainCodec(decimal);
    expect(reports[0].reason).toMatch(/decimal/);
  });

  it('a flat f64 array of records is planned by its record stride (its words in fields), level 1 keeps the sequence', async () => {
    // 40,000 records of x, y, z with 3 decimals and a flag: 1.25 MB, no shape given
    const records = Float64Array.from({ length: 40_000 * 4 }, (_, i) => {
      const t = Math.floor(i / 4) / 300;
      return [Math.round(Math.cos(t) * 5e4) / 1000, Math.round(Math.sin(t) * 5e4) / 1000, Math.round(t * 1000) / 1000, 1][i % 4];
    });
    const packed = await engine.compress(records, { chunkBytes: 256 << 10 });
    const report = engine.inspect(packed);
    expect(report.shape).toBeUndefined();
    expect(report.chunkLength % 4).toBe(0);
    expect(report.chunks[0].encoding).toMatch(/^predict\(.*8 fields\)$/);
    expect(sameBits(await engine.decompress(packed), records)).toBe(true);
    const sequence = await engine.compress(records, { chunkBytes: 256 << 10, level: 1 });
    expect(engine.inspect(sequence).chunks[0].encoding).not.toMatch(/8 fields/);
    expect(packed.length).toBeLessThan(sequence.length);
  });

  it("the engine decodes the reference's 8-byte predicted chunks under every map and predictor", async () => {
    const rows = 8;
    const cols = 32;
    const values = Float64Array.from({ length: rows * cols }, (_, i) => Math.round(1000 * Math.cos(i / 17)) / 8);
    values[3] = -0;
    values[40] = NaN;
    values[77] = 1 / 3;
    const i64 = BigInt64Array.from({ length: rows * cols }, (_, i) => BigInt(i * i) - 5000n);
    for (const predictor of Object.values(PREDICTOR)) {
      for (const [array, type, maps] of [
        [values, TYPE_CODE.f64, [MAP.none, MAP.floatOrder, MAP.decimal]],
        [i64, TYPE_CODE.i64, [MAP.none]],
      ] as const) {
        for (const map of maps) {
          const params = {
            map,
            predictor,
            fields: 2,
            X: cols,
            Y: predictor === PREDICTOR.lorenzo3 ? 2 : 1,
            ...(map === MAP.decimal ? { exponents: [3] } : {}),
            stages: [[1, 3], [3]],
          };
          const container = encodeContainer(bytesOf(array), {
            type,
            chunkLength: rows * cols,
            shape: [rows, cols],
            chunks: [{ kind: 'predicted', ...params }],
          });
          const back = await engine.decompress(container);
          expect(sameBits(back, array), `map ${map} predictor ${predictor} type ${type}`).toBe(true);
        }
      }
    }
  });

  it('rle encodes and decodes every type as bit patterns', async () => {
    const f64 = new Float64Array(12);
    new BigUint64Array(f64.buffer).set([...SPECIAL_F64_BITS, SPECIAL_F64_BITS[0], 0n, 0n, 1n]);
    const cases: ParleArray[] = [
      Int8Array.from([-1, -1, 3, 3, 3, -128]),
      Int16Array.from([-300, -300, 7, -300]),
      f64,
      BigInt64Array.from([-1n, -1n, 2n ** 62n, 2n ** 62n, 0n]),
      BigUint64Array.from({ length: 5000 }, (_, i) => BigInt(Math.floor(i / 700)) << 40n),
    ];
    for (const array of cases) {
      const runs = await engine.rleEncode(array);
      expect(runs.values.constructor).toBe(array.constructor);
      expect(sameBits(await engine.rleDecode(runs), array), array.constructor.name).toBe(true);
    }
    const runs = await engine.rleEncode(f64);
    // NaN and its repeat are one run (bit patterns), -0 and 0 two
    expect(Array.from(runs.lengths)).toEqual([1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 1]);
  });

  it("type: 'f16' records half-precision bits from a Uint16Array; decompress gives them back, into out too", async () => {
    const halves = Uint16Array.from({ length: 4000 }, (_, i) => 0x3c00 + (i % 500));
    const packed = await engine.compress(halves, { type: 'f16', shape: [40, 100] });
    expect(engine.inspect(packed).type).toBe('f16');
    expect(decodeContainer(packed).type).toBe(TYPE_CODE.f16);
    const back = await engine.decompress(packed);
    expect(sameBits(back, halves)).toBe(true);
    const out = new Uint16Array(halves.length);
    expect(await engine.decompress(packed, { out })).toBe(out);
    expect(sameBits(out, halves)).toBe(true);
    // the option must name the array's own type, or f16 for a Uint16Array
    await expect(engine.compress(halves, { type: 'f32' })).rejects.toMatchObject({ code: ErrorCodes.INVALID_OPTION, option: 'type' });
    await expect(engine.compress(new Float32Array(4), { type: 'f16' })).rejects.toMatchObject({ code: ErrorCodes.INVALID_OPTION });
    expect(engine.inspect(await engine.compress(new Float32Array(4), { type: 'f32' })).type).toBe('f32');
  });

  it('a streaming writer of f64 with a shape writes what compress writes', async () => {
    const grid = Float64Array.from({ length: 50 * 80 }, (_, i) => Math.round(100 * Math.sin(i / 80) * Math.cos(i / 900)) / 100);
    const writer = engine.createCompressor('f64', grid.length, { shape: [50, 80], chunkBytes: 8 * 800 });
    const bytes = bytesOf(grid);
    const parts = [
      ...(await writer.write(bytes.subarray(0, 10_000))),
      ...(await writer.write(bytes.subarray(10_000))),
      ...(await writer.end()),
    ];
    const container = Buffer.concat(parts);
    expect(sameBits(await engine.decompress(new Uint8Array(container)), grid)).toBe(true);
    expect(decodeContainer(new Uint8Array(container)).shape).toEqual([50, 80]);
  });

  it('the kernels that take five types refuse the others with UNSUPPORTED_TYPE', async () => {
    const f64 = new Float64Array(16);
    await expect(engine.scan(f64 as never)).rejects.toMatchObject({ code: ErrorCodes.UNSUPPORTED_TYPE });
    // sort takes 64-bit keys on the CPU path only (test/sort64.test.ts), and no 8- or 16-bit keys
    await expect(engine.sort(new BigUint64Array(4), { path: 'gpu' })).rejects.toMatchObject({ code: ErrorCodes.UNSUPPORTED_TYPE });
    await expect(engine.sort(new Int16Array(4) as never)).rejects.toMatchObject({ code: ErrorCodes.UNSUPPORTED_TYPE });
    await expect(engine.rleEncode(f64, { path: 'gpu' })).rejects.toMatchObject({ code: ErrorCodes.UNSUPPORTED_TYPE });
  });

  it('the reader refuses a new type in version 3, a pipeline on 8-byte elements and an odd word field count (CORRUPT)', async () => {
    const elements = bytesOf(Float64Array.from({ length: 64 }, (_, i) => i / 4));
    // a type code of version 4 in a version-3 header
    const v3 = encodeContainer(elements, { type: TYPE_CODE.f64, chunkLength: 64, version: 3, chunks: [{ kind: 'stored' }] });
    await expect(engine.decompress(v3)).rejects.toMatchObject({ code: ErrorCodes.CORRUPT });
    expect(() => decodeContainer(v3)).toThrow(/CORRUPT/);
    // a container of one chunk with this payload and entry
    const single = (payload: Uint8Array, stages: number[], S: number, byte24: number) =>
      Buffer.concat([
        encodeHeader(TYPE_CODE.f64, 5, 64, 64),
        encodeEntry({ count: 64, stages, S, P: payload.length, payloadHash: treeHash(payload), elementsHash: treeHash(elements), byte24 }),
        payload,
      ]);
    const piped = single(new Uint8Array(100), [1], 1, 0);
    await expect(engine.decompress(new Uint8Array(piped))).rejects.toMatchObject({ code: ErrorCodes.CORRUPT });
    const params = { map: MAP.none, predictor: PREDICTOR.left, fields: 2, X: 64, Y: 1, stages: [[3], [3]] };
    const payload = encodePredictedPayload(elements, TYPE_CODE.f64, params);
    const good = single(payload, [], 0, PREDICT_STAGE);
    expect(sameBits(await engine.decompress(new Uint8Array(good)), new Float64Array(elements.buffer))).toBe(true);
    const odd = payload.slice();
    odd[2] = 1; // one word field: half an element
    await expect(engine.decompress(new Uint8Array(single(odd, [], 0, PREDICT_STAGE)))).rejects.toMatchObject({ code: ErrorCodes.CORRUPT });
    expect(() => decodeContainer(new Uint8Array(single(odd, [], 0, PREDICT_STAGE)))).toThrow(/CORRUPT/);
  });

  it('f64 exceptions keep their bits: NaN payloads and -0 inside decimal data', async () => {
    const n3 = 4096;
    const data = Float64Array.from({ length: n3 }, (_, i) => Math.round(i * 1.5) / 10);
    const bits = new BigUint64Array(data.buffer);
    bits[100] = 0x7ff0000000000abcn;
    bits[200] = 0x8000000000000000n;
    const packed = await engine.compress(data);
    const back = (await engine.decompress(packed)) as Float64Array;
    expect(new BigUint64Array(back.buffer, back.byteOffset, back.length)[100]).toBe(0x7ff0000000000abcn);
    expect(f64Bits(back[200])).toBe(0x8000000000000000n);
    expect(sameBits(back, data)).toBe(true);
  });
});
