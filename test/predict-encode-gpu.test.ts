// Stage 7 (predict) written on the GPU (ts/codec/gpu/predict-encode.ts,
// shaders/codec-predict-encode.wgsl, ts/codec/gpu/encode.ts): containers compressed from the
// device with each predictor (med too) and value map, over cells of 1-4 fields, rows and planes,
// chunks that end off whole words and a short last chunk, decode to the input on both paths (the
// CPU's decoder and the GPU's), and their chunks are the predicted ones the plan asks for. Also
// the rle stage over residual planes padded to whole words, a flat array's record stride, a
// fixed pipeline over chunks copied to whole words, and a container left on the device.
import { afterAll, beforeAll, expect } from 'vitest';
import { createEngine, type Engine } from '../ts/engine.js';
import { defaultRates } from '../ts/cost/model.js';
import { compressOnDevice } from '../ts/codec/gpu/encode.js';
import { encodePredictResiduals } from '../ts/codec/gpu/predict-encode.js';
import { compressSettingsWith } from '../ts/codec/settings.js';
import { chooseExponents, type PredictPlan } from '../ts/codec/predict.js';
import { readAtBytes, walkChunks } from '../ts/format/container.js';
import { Encoding } from '../ts/format/layout.js';
import { readFieldBlocks, readPredictHeader } from '../ts/format/predict.js';
import { elementSize, elementTypeOf, type ParleArray } from '../ts/types.js';
import { describeGpu, gpuIt, mainContext } from './gpu/support.js';
import { Rng, caseSeed } from './support/random.js';
import { sameElements } from './support/bytes.js';
import { mapEncode, predictResiduals, TYPE_CODE } from './support/predict-reference.js';

/** Element i of `bytes` as `width`-byte little-endian words. */
function readWord(bytes: Uint8Array, i: number, width: number): number {
  let v = 0;
  for (let b = width - 1; b >= 0; b--) v = v * 256 + bytes[i * width + b];
  return v;
}

type Ctor = Uint8ArrayConstructor | Uint16ArrayConstructor | Uint32ArrayConstructor | Int32ArrayConstructor | Float32ArrayConstructor;

/** A smooth field of `cells` cells of `fields` fields (a wave in the cell's row and column), a little noise. */
function smooth(Ctor: Ctor, cells: number, X: number, fields: number, seed: number): ParleArray {
  const rng = new Rng(seed);
  const out = new Ctor(cells * fields);
  for (let e = 0; e < out.length; e++) {
    const c = Math.floor(e / fields);
    const v = Math.sin((c % X) / 9 + (e % fields)) + Math.cos(Math.floor(c / X) / 7);
    const noise = rng.intBetween(0, 2);
    out[e] =
      Ctor === Float32Array
        ? v * 1000 + noise / 8
        : Ctor === Int32Array
          ? Math.round(v * 300_000) + noise
          : Ctor === Uint8Array
            ? Math.round(v * 50 + 120) + noise
            : Math.round((v + 2) * (Ctor === Uint16Array ? 10_000 : 1e8)) + noise;
  }
  return out;
}

/** Counts of the container's chunks by encoding, the predictors of its predicted chunks and their field blocks' pipelines. */
function chunkKinds(container: Uint8Array): { predicted: number; plain: number; predictors: Set<number>; blocks: Set<string> } {
  const { header, chunks } = walkChunks(readAtBytes(container), container.length);
  const width = elementSize(header.type);
  let predicted = 0;
  const predictors = new Set<number>();
  const blocks = new Set<string>();
  for (const c of chunks) {
    if (c.encoding !== Encoding.Predicted) continue;
    predicted++;
    const payload = container.subarray(c.payloadOffset, c.payloadOffset + c.payloadBytes);
    const head = readPredictHeader(payload, c.elementCount, width, c.index);
    predictors.add(head.predictor);
    for (const block of readFieldBlocks(payload, head, c.index)) blocks.add(block.stages.join('+'));
  }
  return { predicted, plain: chunks.length - predicted, predictors, blocks };
}

describeGpu('predicted chunks written on the GPU', () => {
  let engine: Engine;
  beforeAll(async () => {
    engine = await createEngine({ workers: 1, gpu: 'require', calibration: 'skip' });
  });
  afterAll(async () => {
    await engine?.destroy();
  });

  /** `container` decoded on the CPU path and on the GPU path (to the device) equals `input`. */
  async function decodesOnBoth(container: Uint8Array, input: ParleArray, what: string): Promise<void> {
    expect(sameElements(await engine.decompress(container, { path: 'cpu' }), input), `${what}: CPU decode`).toBe(true);
    const onDevice = await engine.decompress(container, { to: 'device', path: 'gpu' });
    try {
      expect(sameElements(await engine.download(onDevice), input), `${what}: GPU decode`).toBe(true);
    } finally {
      onDevice.destroy();
    }
  }

  /** Compresses `input` from the device with `settings` given (the plan fixed when `predict` is). */
  async function compressFromDevice(input: ParleArray, given: Parameters<typeof compressSettingsWith>[0]): Promise<Uint8Array> {
    const device = await mainContext!.upload(input);
    try {
      return await compressOnDevice(mainContext!, device, compressSettingsWith(given));
    } finally {
      device.destroy();
    }
  }

  const types: [string, Ctor][] = [
    ['u8', Uint8Array],
    ['u16', Uint16Array],
    ['u32', Uint32Array],
    ['i32', Int32Array],
    ['f32', Float32Array],
  ];
  // [X cells a row, Y rows a plane, fields, planes]: rows of 1 field and of several, rows whose
  // cells are not whole words of u8 (units padded), one plane and many
  const geometries = [
    [40, 6, 1, 9],
    [37, 5, 3, 7],
    [13, 4, 4, 12],
    [301, 3, 2, 4],
  ] as const;
  types.forEach(([name, Ctor]) => {
    const width = Ctor.BYTES_PER_ELEMENT as 1 | 2 | 4;
    gpuIt(
      `${name}: the residual planes of every predictor and value map over rows, planes and fields, chunk by chunk: the reference's`,
      async () => {
        const gpu = mainContext!;
        const seed = caseSeed(`gpu predict residuals ${name}`);
        const maps = Ctor === Float32Array ? [0, 1] : [0];
        for (const [X, Y, fields, planes] of geometries) {
          const input = smooth(Ctor, X * Y * planes, X, fields, seed + X);
          const bytes = new Uint8Array(input.buffer, input.byteOffset, input.byteLength);
          const device = await gpu.upload(input);
          // chunks of two planes (the last one short where the planes are odd), of all planes;
          // plans with rows of X cells and with a row the chunk's cells (rowCells 0)
          for (const chunkLength of [2 * X * Y * fields, input.length]) {
            const chunks = Math.ceil(input.length / chunkLength);
            const cells = chunkLength / fields;
            const stride = Math.ceil(cells / (4 / width)) * (4 / width);
            const resid = gpu.acquireStorage(chunks * fields * stride * width, 'test residuals');
            try {
              for (const map of maps) {
                for (const predictor of [0, 1, 2, 3, 4, 5]) {
                  for (const rowCells of [X, 0]) {
                    const plan: PredictPlan = { map, predictor, fields, rowCells, planeRows: rowCells === 0 ? 1 : Y };
                    const what = `${name} ${X}x${Y}x${fields} x ${planes} planes, chunks of ${chunkLength}, ${JSON.stringify(plan)}`;
                    await gpu.submit('test residuals', (s) =>
                      encodePredictResiduals(gpu, s, {
                        input: device.buffer,
                        count: input.length,
                        width,
                        chunkLength,
                        plan,
                        stride,
                        units: chunks * fields,
                        resid,
                      }),
                    );
                    const got = await gpu.readBytes(resid, chunks * fields * stride * width);
                    for (let c = 0; c < chunks; c++) {
                      const count = Math.min(chunkLength, input.length - c * chunkLength);
                      const n = count / fields;
                      const { values } = mapEncode(
                        bytes.subarray(c * chunkLength * width, (c * chunkLength + count) * width),
                        TYPE_CODE[name as 'u8'],
                        map,
                        fields,
                      );
                      const expected = predictResiduals(values, width, fields, rowCells === 0 ? n : X, plan.planeRows, predictor);
                      for (let k = 0; k < fields; k++) {
                        const at = (c * fields + k) * stride;
                        const plane = Array.from({ length: stride }, (_, i) => readWord(got, at + i, width));
                        // past the unit's cells its last residual repeats (for the rle stage's runs)
                        const want = Array.from({ length: stride }, (_, i) => expected[k][Math.min(i, n - 1)]);
                        expect(plane, `${what}: chunk ${c} field ${k}`).toEqual(want);
                      }
                    }
                  }
                }
              }
              // no plan: each chunk's elements copied to whole words (the last one repeated)
              const copyStride = Math.ceil(chunkLength / (4 / width)) * (4 / width);
              const copy = gpu.acquireStorage(chunks * copyStride * width, 'test copy');
              try {
                await gpu.submit('test copy', (s) =>
                  encodePredictResiduals(gpu, s, {
                    input: device.buffer,
                    count: input.length,
                    width,
                    chunkLength,
                    plan: undefined,
                    stride: copyStride,
                    units: chunks,
                    resid: copy,
                  }),
                );
                const got = await gpu.readBytes(copy, chunks * copyStride * width);
                for (let c = 0; c < chunks; c++) {
                  const count = Math.min(chunkLength, input.length - c * chunkLength);
                  const plane = Array.from({ length: copyStride }, (_, i) => readWord(got, c * copyStride + i, width));
                  const want = Array.from({ length: copyStride }, (_, i) =>
                    readWord(bytes, c * chunkLength + Math.min(i, count - 1), width),
                  );
                  expect(plane, `${name}: chunk ${c} copied`).toEqual(want);
                }
              } finally {
                gpu.releaseStorage(copy);
              }
            } finally {
              gpu.releaseStorage(resid);
            }
          }
          device.destroy();
        }
      },
    );

    gpuIt(`${name}: containers compressed from the device with each predictor decode to the input on both paths`, async () => {
      const seed = caseSeed(`gpu predict encode ${name}`);
      const [X, Y, fields, planes] = [37, 5, 3, 7];
      const input = smooth(Ctor, X * Y * planes, X, fields, seed);
      const chunkBytes = 2 * X * Y * fields * width;
      const seen = new Set<number>();
      for (const map of Ctor === Float32Array ? [0, 1] : [0]) {
        for (const predictor of [1, 2, 3, 4, 5]) {
          const predict: PredictPlan = { map, predictor, fields, rowCells: X, planeRows: Y };
          const what = `${name}, predictor ${predictor}, map ${map}`;
          const container = await compressFromDevice(input, {
            shape: [planes, Y, X, fields],
            predict,
            chunkBytes,
            gpuChunkBytes: chunkBytes,
          });
          await decodesOnBoth(container, input, what);
          const kinds = chunkKinds(container);
          // a chunk is predicted where that codes smaller than its plain pipelines
          if (kinds.predicted > 0) expect([...kinds.predictors], what).toEqual([predictor]);
          for (const p of kinds.predictors) seen.add(p);
        }
      }
      expect(seen.size, `${name}: predictors some chunk was coded with`).toBeGreaterThan(0);
    });
  });

  gpuIt(
    "8-byte elements: the residual planes of their u32 halves under every predictor and map the GPU writes (the reference's); containers from the device decode on both paths",
    async () => {
      const gpu = mainContext!;
      const seed = caseSeed('gpu predict residuals 8-byte');
      const [X, Y, fields, planes] = [37, 5, 3, 6];
      // doubles of both signs with low words not zero; integers of both signs past 2^32
      const base = smooth(Float32Array, X * Y * planes, X, fields, seed);
      const inputs: [string, ParleArray, number[]][] = [
        ['f64', Float64Array.from(base as Float32Array, (v) => (v - 500) * 1.0000001), [0, 1]],
        ['i64', BigInt64Array.from(base as Float32Array, (v) => BigInt(Math.round(v * 1e3)) * 3_000_001n), [0]],
      ];
      for (const [name, input, maps] of inputs) {
        const bytes = new Uint8Array(input.buffer, input.byteOffset, input.byteLength);
        const device = await gpu.upload(input);
        const wordFields = 2 * fields;
        const chunkLength = 2 * X * Y * fields; // elements: two planes
        const chunks = Math.ceil(input.length / chunkLength);
        const stride = (2 * chunkLength) / wordFields;
        const resid = gpu.acquireStorage(chunks * wordFields * stride * 4, 'test residuals');
        try {
          for (const map of maps) {
            for (const predictor of [0, 1, 2, 3, 4, 5]) {
              const plan: PredictPlan = { map, predictor, fields: wordFields, rowCells: X, planeRows: Y };
              const what = `${name}, ${JSON.stringify(plan)}`;
              await gpu.submit('test residuals', (s) =>
                encodePredictResiduals(gpu, s, {
                  input: device.buffer,
                  count: 2 * input.length,
                  width: 4,
                  pairs: true,
                  chunkLength: 2 * chunkLength,
                  plan,
                  stride,
                  units: chunks * wordFields,
                  resid,
                }),
              );
              const got = await gpu.readBytes(resid, chunks * wordFields * stride * 4);
              for (let c = 0; c < chunks; c++) {
                const count = Math.min(chunkLength, input.length - c * chunkLength);
                const n = (2 * count) / wordFields;
                const { values } = mapEncode(
                  bytes.subarray(c * chunkLength * 8, (c * chunkLength + count) * 8),
                  TYPE_CODE[name as 'f64'],
                  map,
                  wordFields,
                );
                const expected = predictResiduals(values, 4, wordFields, X, Y, predictor);
                for (let k = 0; k < wordFields; k++) {
                  const at = (c * wordFields + k) * stride;
                  const plane = Array.from({ length: n }, (_, i) => readWord(got, at + i, 4));
                  expect(plane, `${what}: chunk ${c} word field ${k}`).toEqual(Array.from(expected[k].slice(0, n)));
                }
              }
              if (predictor === 0) continue;
              // the container the GPU writes with this plan: predicted chunks, the input back on both paths
              const container = await compressFromDevice(input, {
                shape: [planes, Y, X, fields],
                predict: plan,
                chunkBytes: chunkLength * 8,
                gpuChunkBytes: chunkLength * 8,
              });
              await decodesOnBoth(container, input, what);
              const kinds = chunkKinds(container);
              if (kinds.predicted > 0) expect([...kinds.predictors], what).toEqual([predictor]);
              expect(kinds.predicted + kinds.plain, what).toBe(chunks);
            }
          }
        } finally {
          gpu.releaseStorage(resid);
          device.destroy();
        }
      }
    },
  );

  gpuIt('the rle stage over residual planes padded to whole words: runs cut at each plane end, the input back', async () => {
    // u8 RGB rows of 37 cells (a field plane of 37 x rows cells is not whole words): flat areas
    // with the left predictor are runs of zero residuals, which rle codes
    const X = 37;
    const rows = 300;
    const input = new Uint8Array(X * rows * 3);
    const rng = new Rng(caseSeed('gpu predict encode runs'));
    for (let c = 0; c < X * rows; c++) {
      const block = Math.floor(c / (X * 40));
      for (let k = 0; k < 3; k++) input[3 * c + k] = (block * 31 + k * 50) & 255;
    }
    // a few spots, so that not every plane is one run
    for (let i = 0; i < 40; i++) input[rng.intBetween(0, input.length - 1)] = rng.intBetween(0, 255);
    const predict: PredictPlan = { map: 0, predictor: 1, fields: 3, rowCells: X, planeRows: 1 };
    for (const rowsAChunk of [7, 300]) {
      const chunkBytes = rowsAChunk * X * 3;
      const container = await compressFromDevice(input, { shape: [rows, X, 3], predict, chunkBytes, gpuChunkBytes: chunkBytes });
      await decodesOnBoth(container, input, `${rowsAChunk} rows a chunk`);
      const kinds = chunkKinds(container);
      expect(kinds.predicted).toBeGreaterThan(0);
      // field blocks coded with rle (stage 3), alone or with huffman (4)
      expect([...kinds.blocks].filter((b) => b.startsWith('3')).length, [...kinds.blocks].join(', ')).toBeGreaterThan(0);
    }
  });

  gpuIt(
    'engine: a shaped array and a flat one of records compressed from the device take predicted chunks; both paths decode them',
    async () => {
      // RGB pixels of a smooth image: the shape's plan, and without it the record stride of 3
      const X = 257;
      const rows = 700;
      const input = smooth(Uint8Array, X * rows, X, 3, caseSeed('gpu predict encode engine')) as Uint8Array;
      for (const [what, data, shape] of [
        ['shaped', input, [rows, X, 3]],
        // two elements past the last whole record: the last chunk cannot be predicted
        ['flat records', Uint8Array.from([...input, 7, 9]), undefined],
      ] as const) {
        const device = await engine.upload(data);
        try {
          const container = await engine.compress(device, { path: 'gpu', chunkBytes: 128 << 10, ...(shape ? { shape: [...shape] } : {}) });
          await decodesOnBoth(container, data, what);
          const kinds = chunkKinds(container);
          expect(kinds.predicted, what).toBeGreaterThan(0);
          // the CPU path's container of the same array and chunks, against which the GPU's ratio is judged
          const cpu = await engine.compress(data, { path: 'cpu', chunkBytes: 128 << 10, ...(shape ? { shape: [...shape] } : {}) });
          expect(container.length, `${what}: GPU ${container.length} B, CPU ${cpu.length} B`).toBeLessThan(cpu.length * 1.15);
          // left on the device: the same container
          const resident = await engine.compress(device, {
            path: 'gpu',
            to: 'device',
            chunkBytes: 128 << 10,
            ...(shape ? { shape: [...shape] } : {}),
          });
          try {
            expect(Buffer.from((await engine.download(resident)) as Uint8Array).equals(Buffer.from(container)), what).toBe(true);
          } finally {
            resident.destroy();
          }
        } finally {
          device.destroy();
        }
      }
    },
  );

  gpuIt('a fixed pipeline over a shape whose chunks end off whole words: chunks copied to whole words, the pipeline kept', async () => {
    const input = smooth(Uint8Array, 37 * 11 * 9, 37, 1, caseSeed('gpu fixed pipeline shape')) as Uint8Array;
    const container = await compressFromDevice(input, {
      shape: [9, 11, 37],
      codec: [1, 4], // delta+huffman
      chunkBytes: 2 * 11 * 37,
      gpuChunkBytes: 2 * 11 * 37,
    });
    await decodesOnBoth(container, input, 'delta+huffman');
    const { header, chunks } = walkChunks(readAtBytes(container), container.length);
    expect(header.shape).toEqual([9, 11, 37]);
    expect(chunks.length).toBe(5);
    for (const c of chunks) expect((c.stages ?? []).filter((s) => s !== 0)).toEqual([1, 4]);
    expect(elementTypeOf(await engine.decompress(container))).toBe('u8');
  });

  gpuIt(
    "a shaped host array the cost model sends to the GPU stays on the CPU path (med, decimals); path: 'gpu' takes the GPU's writer",
    async () => {
      const X = 200;
      const input = smooth(Float32Array, X * 300, X, 1, caseSeed('gpu host shaped')) as Float32Array;
      const shape = [300, X];
      const saved = engine.model.rates;
      try {
        // a CPU path that the model thinks slow: auto picks the GPU for this compress
        const rates = defaultRates(true);
        rates.cpu.compress = { fixedMs: 1000, msPerByte: 1 };
        engine.model.rates = rates;
        expect(engine.explain('compress', input).path).toBe('gpu');
        const auto = await engine.compress(input, { shape });
        const cpu = await engine.compress(input, { shape, path: 'cpu' });
        expect(Buffer.from(auto).equals(Buffer.from(cpu))).toBe(true);
        const gpu = await engine.compress(input, { shape, path: 'gpu' });
        expect(Buffer.from(gpu).equals(Buffer.from(cpu))).toBe(false);
        await decodesOnBoth(gpu, input, "path: 'gpu'");
      } finally {
        engine.model.rates = saved;
      }
    },
  );

  /**
   * Compresses `input` (records of 3 fields, `X` a row) from the device under the decimal map with
   * predictors left and lorenzo2, in 3 chunks of `rows / 3` rows; checks that both paths decode it,
   * that every chunk is predicted under the decimal map (`wantDecimal`) or float order, and each
   * decimal chunk's exponents and exception count are those the CPU path finds (chooseExponents,
   * the reference map).
   */
  async function checkDecimalChunks(input: Float32Array | Float64Array, X: number, rows: number, wantDecimal: boolean, what: string) {
    const size = input.BYTES_PER_ELEMENT;
    // (8-byte elements: two word fields an element field)
    const words = size / 4;
    const chunkBytes = (rows / 3) * X * 3 * size;
    for (const predictor of [1, 3]) {
      const predict: PredictPlan = { map: 2, predictor, fields: 3 * words, rowCells: X, planeRows: 1 };
      const container = await compressFromDevice(input, { shape: [rows, X, 3], predict, chunkBytes, gpuChunkBytes: chunkBytes });
      await decodesOnBoth(container, input, `${what}, predictor ${predictor}`);
      const { header, chunks } = walkChunks(readAtBytes(container), container.length);
      const bytes = new Uint8Array(input.buffer);
      expect(chunks.length, what).toBe(3);
      for (const c of chunks) {
        expect(c.encoding, what).toBe(Encoding.Predicted);
        const payload = container.subarray(c.payloadOffset, c.payloadOffset + c.payloadBytes);
        const head = readPredictHeader(payload, c.elementCount, elementSize(header.type), c.index);
        expect(head.map, what).toBe(wantDecimal ? 2 : 1);
        if (!wantDecimal) continue;
        // the CPU path's exponents of the chunk, and the elements its map cannot write
        const floats = input.subarray(c.elementOffset, c.elementOffset + c.elementCount);
        expect(head.exponents, what).toEqual(chooseExponents(floats, floats.length, 3));
        const elements = bytes.subarray(size * c.elementOffset, size * (c.elementOffset + c.elementCount));
        const { exceptions } = mapEncode(elements, size === 8 ? TYPE_CODE.f64 : TYPE_CODE.f32, 2, 3 * words, head.exponents);
        expect(head.exceptions, what).toBe(exceptions.indices.length);
        expect(head.exceptions).toBeGreaterThan(0);
      }
    }
  }

  gpuIt(
    'the decimal map: exponents and exceptions per chunk as the CPU path finds them, the float-order map past 1 in 64; decodes to the input on both paths',
    async () => {
      // f32 records of 3 fields with 2, 3 and 0 decimals, some elements not decimals (exceptions):
      // pi multiples, -0, NaN, infinities
      const rng = new Rng(caseSeed('gpu predict encode decimal'));
      const X = 64;
      const rows = 120;
      const make = (exceptionEvery: number) => {
        const out = new Float32Array(X * rows * 3);
        for (let c = 0; c < X * rows; c++) {
          const wave = Math.sin(c / 37) * 50 + Math.cos(Math.floor(c / X) / 11) * 20;
          out[3 * c] = Math.round((wave + rng.nextFloat() / 10) * 100) / 100;
          out[3 * c + 1] = Math.round((wave * 3 + rng.nextFloat()) * 1000) / 1000;
          out[3 * c + 2] = Math.round(wave * 7);
        }
        const specials = [Math.PI, -0, NaN, Infinity, -Infinity, 1e30];
        for (let i = 5; i < out.length; i += exceptionEvery) out[i] = specials[i % specials.length] * (i % 7);
        return out;
      };
      await checkDecimalChunks(make(701), X, rows, true, 'a few exceptions');
      await checkDecimalChunks(make(20), X, rows, false, 'one element in 20 an exception: float order');
    },
  );

  gpuIt(
    "f64's decimal map: the exponents and exceptions per chunk the CPU path finds (v from the exact product of the mantissa and 5^e, checked by the decoder's long division), the float-order map past 1 in 64; decodes to the input on both paths",
    async () => {
      // f64 records of 3 fields with 2 and 14 decimals (5^14 past one u32 word) and integers, some
      // elements not decimals
      // (exceptions): pi multiples, -0, NaN, infinities, a subnormal, 0.1 + 0.2, a decimal whose
      // integer reaches 2^52 at its field's exponent, 1e300
      const rng = new Rng(caseSeed('gpu predict encode decimal f64'));
      const X = 48;
      const rows = 90;
      const make = (exceptionEvery: number) => {
        const out = new Float64Array(X * rows * 3);
        for (let c = 0; c < X * rows; c++) {
          const wave = Math.sin(c / 37) * 5000 + Math.cos(Math.floor(c / X) / 11) * 2000;
          out[3 * c] = Math.round((wave + rng.nextFloat() / 10) * 100) / 100;
          out[3 * c + 1] = Math.round((wave / 5000 + rng.nextFloat()) * 1e14) / 1e14;
          out[3 * c + 2] = Math.round(wave * 7) - 2 ** 40;
        }
        const specials = [Math.PI, -0, NaN, Infinity, -Infinity, 5e-324, 0.1 + 0.2, 4503599.627370497, 1e300];
        for (let i = 4, k = 0; i < out.length; i += exceptionEvery, k++) out[i] = specials[k % specials.length] * ((k % 5) + 1);
        return out;
      };
      await checkDecimalChunks(make(397), X, rows, true, 'a few exceptions');
      await checkDecimalChunks(make(20), X, rows, false, 'one element in 20 an exception: float order');
    },
  );
});
