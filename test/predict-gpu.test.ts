/**
 * Predicted chunks (docs/format.md, "Stage 7: predict") decoded on the GPU: containers written by
 * the plain reference (test/support/predict-reference.ts) with every predictor (none, left, up,
 * lorenzo2, lorenzo3, med: its wavefronts over bands of 256 rows), every value map (bits, float
 * order, decimal), one field or several, short rows (an invocation a row) and long ones (the
 * delta chunk scan), short and long columns (an invocation or a workgroup a column), each
 * field's own pipeline, beside a stored chunk, decoded to the device from host memory and from
 * the device and compared with the input; 8-byte elements (f64, i64) as their u32 halves, with
 * the bits and float-order maps. On CI the GPU is SwiftShader (test/gpu/support.ts).
 */
import { afterAll, beforeAll, expect } from 'vitest';
import { createEngine, type Engine } from '../ts/engine.js';
import { chunksOnDevice } from '../ts/codec/gpu/decode.js';
import { decompressDeviceContainer } from '../ts/codec/gpu/device-container.js';
import type { CpuPath } from '../ts/cpu/cpu-path.js';
import type { GpuContext } from '../ts/gpu/context.js';
import { readAtBytes, walkChunks } from '../ts/format/container.js';
import { bytesOf, type ParleArray } from '../ts/types.js';
import { STAGE } from './support/codec-reference.js';
import { encodeContainer, MAP, PREDICTOR, TYPE_CODE, type ChunkPlan } from './support/predict-reference.js';
import { describeGpu, gpuIt } from './gpu/support.js';
import { Rng, caseSeed, describeSeed } from './support/random.js';
import { sameElements } from './support/bytes.js';
import { reseal } from './support/fuzz.js';
import { ErrorCodes } from '../ts/errors.js';
import { ENTRY_BYTES, HEADER_BYTES } from '../ts/format/layout.js';

type Ctor = Uint8ArrayConstructor | Uint16ArrayConstructor | Uint32ArrayConstructor | Int32ArrayConstructor | Float32ArrayConstructor;

/**
 * A smooth array of `X` cells a row, `rows` rows, `fields` fields a cell: a slow wave on about 25
 * levels with a little noise, so the fields' pipelines code it under every predictor (not stored).
 */
function smooth(Ctor: Ctor, rows: number, X: number, fields: number, seed: number): ParleArray {
  const rng = new Rng(seed);
  const n = rows * X * fields;
  const out = new Ctor(n);
  for (let e = 0; e < n; e++) {
    const c = Math.floor(e / fields);
    const k = e % fields;
    const level = Math.round((Math.sin((c % X) / 7 + k) + Math.cos(Math.floor(c / X) / 5)) * 6 + 12);
    const noise = rng.intBetween(0, 1);
    out[e] =
      Ctor === Float32Array
        ? e % 97 === 5
          ? Math.PI * level // not a decimal of 2 digits: an exception of the decimal map
          : level * 1.25 - 7.5
        : Ctor === Int32Array
          ? (level - 12) * 40_000 + noise
          : Ctor === Uint8Array
            ? level * 9 + noise
            : level * 2500 + noise;
  }
  return out;
}

/** A smooth gradient of `rows` x `X` with noise of a few units: what the CPU path's chooser predicts. */
function gradient(Ctor: Ctor, rows: number, X: number, seed: number): ParleArray {
  const rng = new Rng(seed);
  const top = Ctor === Uint8Array ? 200 : Ctor === Uint16Array ? 50_000 : 1e6;
  return new Ctor(rows * X).map((_, e) => {
    const v = (Math.sin((e % X) / 17) * Math.cos(Math.floor(e / X) / 13) + 1) / 2;
    return Ctor === Float32Array ? v * 300 - 100 : Math.round(v * top) + rng.intBetween(0, 3);
  });
}

describeGpu('predicted chunks decoded on the GPU', () => {
  let engine: Engine;
  beforeAll(async () => {
    engine = await createEngine({ workers: 1, gpu: 'require', calibration: 'skip' });
  });
  afterAll(async () => {
    await engine?.destroy();
  });

  /** Decodes `container` to the device from host memory and from the device; both must equal `input`. */
  async function decodesOnDevice(container: Uint8Array, input: ParleArray, what: string): Promise<void> {
    const fromHost = await engine.decompress(container, { to: 'device', path: 'gpu' });
    const onDevice = await engine.upload(container);
    const fromDevice = await engine.decompress(onDevice, { to: 'device' });
    try {
      expect(sameElements(await engine.download(fromHost), input), `${what}: from host memory`).toBe(true);
      expect(sameElements(await engine.download(fromDevice), input), `${what}: from the device`).toBe(true);
    } finally {
      fromHost.destroy();
      fromDevice.destroy();
      onDevice.destroy();
    }
  }

  const onDevice = (container: Uint8Array) => {
    const { header, chunks } = walkChunks(readAtBytes(container), container.length, Infinity);
    return chunksOnDevice(readAtBytes(container), header, chunks);
  };

  const types: [string, Ctor, number][] = [
    ['u8', Uint8Array, TYPE_CODE.u8],
    ['u16', Uint16Array, TYPE_CODE.u16],
    ['u32', Uint32Array, TYPE_CODE.u32],
    ['i32', Int32Array, TYPE_CODE.i32],
    ['f32', Float32Array, TYPE_CODE.f32],
  ];

  /**
   * The geometries (X cells a row, Y rows a plane, fields): short rows (an invocation a row) and
   * long ones (the delta chunk scan); rows of 3 cells give chunks of 1368 rows, whose columns
   * (up, lorenzo2) are long (a workgroup a column).
   */
  const geometries = [
    [12, 2, 1],
    [10, 3, 3],
    [7, 4, 4],
    [300, 2, 1],
    [260, 3, 2],
    [3, 2, 1],
  ] as const;
  types.forEach(([name, Ctor, type], t) => {
    gpuIt(`${name}: every predictor, one field and several, short and long rows, each field its own pipeline: the input`, async () => {
      const seed = caseSeed(`gpu predict decode ${name}`);
      const width = Ctor.BYTES_PER_ELEMENT;
      // the pipelines the fields take in turn (shuffle only where a word has bytes to split)
      const pipelines: number[][] = [
        [STAGE.huffman],
        [STAGE.rle, STAGE.huffman],
        [],
        width > 1 ? [STAGE.shuffle, STAGE.huffman] : [STAGE.delta, STAGE.huffman],
        [STAGE.delta, STAGE.rle],
      ];
      for (const predictor of [PREDICTOR.none, PREDICTOR.left, PREDICTOR.up, PREDICTOR.lorenzo2, PREDICTOR.lorenzo3, PREDICTOR.med]) {
        // two geometries a predictor, a different pair for each type: every pair over the types
        for (const [gi, g] of [(predictor + t) % geometries.length, (predictor + t + 2) % geometries.length].entries()) {
          const [X, Y, fields] = geometries[g];
          // two chunks of a multiple of 12 rows (planes of 2, 3 or 4 rows), then a stored chunk
          const rows = Math.max(24, Math.ceil(4096 / (X * fields * 12)) * 12);
          const chunkLength = rows * X * fields;
          const input = smooth(Ctor, 2 * rows + 4, X, fields, seed + predictor * 7 + X);
          // f32: every map, over the two geometries
          const maps = Ctor === Float32Array ? (gi === 0 ? [MAP.none, MAP.decimal] : [MAP.floatOrder]) : [MAP.none];
          for (const map of maps) {
            const predicted = (shift: number): ChunkPlan => ({
              kind: 'predicted',
              map,
              predictor,
              fields,
              X,
              Y,
              ...(map === MAP.decimal ? { exponents: Array.from({ length: fields }, (_, k) => 2 + (k % 2)) } : {}),
              stages: Array.from({ length: fields }, (_, k) => pipelines[(k + shift) % pipelines.length]),
            });
            const container = encodeContainer(bytesOf(input), {
              type,
              chunkLength,
              shape: [2 * rows + 4, X * fields],
              chunks: [predicted(0), predicted(1), { kind: 'stored' }],
            });
            const what = `${name}, predictor ${predictor}, map ${map}, X ${X}, Y ${Y}, ${fields} fields, ${describeSeed(seed)}`;
            expect(onDevice(container), what).toBe(true);
            await decodesOnDevice(container, input, what);
          }
        }
      }
    });
  });

  gpuIt(
    '8-byte elements: every predictor on their u32 halves (two word fields an element field), every map (decimals with exceptions): the input',
    async () => {
      const seed = caseSeed('gpu predict decode 8-byte');
      const pipelines: number[][] = [[STAGE.huffman], [STAGE.shuffle, STAGE.rle, STAGE.huffman], [], [STAGE.delta, STAGE.huffman]];
      for (const [name, type] of [
        ['f64', TYPE_CODE.f64],
        ['i64', TYPE_CODE.i64],
      ] as const) {
        for (const predictor of [PREDICTOR.none, PREDICTOR.left, PREDICTOR.up, PREDICTOR.lorenzo2, PREDICTOR.lorenzo3, PREDICTOR.med]) {
          const [X, Y, fields] = geometries[(predictor + (name === 'f64' ? 0 : 3)) % geometries.length];
          const rows = Math.max(24, Math.ceil(2048 / (X * fields * 12)) * 12);
          // doubles of both signs whose low words are not zero; integers of both signs past 2^32
          const base = smooth(name === 'f64' ? Float32Array : Int32Array, 2 * rows + 4, X, fields, seed + predictor);
          const doubles = Float64Array.from(base as Float32Array, (v) => v * 1.000001);
          // decimals of 3 and 4 digits (smooth()'s multiples of pi: exceptions)
          const decimals = Float64Array.from(base as Float32Array, (v, e) =>
            Number.isInteger(v * 4) ? Math.round(v * 1000.37) / (e % fields === 1 ? 10_000 : 1000) : v,
          );
          for (const map of name === 'f64' ? [MAP.none, MAP.floatOrder, MAP.decimal] : [MAP.none]) {
            const input =
              name === 'i64'
                ? BigInt64Array.from(base as Int32Array, (v) => BigInt(v) * 3_000_001n)
                : map === MAP.decimal
                  ? decimals
                  : doubles;
            const predicted = (shift: number): ChunkPlan => ({
              kind: 'predicted',
              map,
              predictor,
              fields: 2 * fields,
              X,
              Y,
              ...(map === MAP.decimal ? { exponents: Array.from({ length: fields }, (_, k) => (k % 2 === 1 ? 4 : 3)) } : {}),
              stages: Array.from({ length: 2 * fields }, (_, k) => pipelines[(k + shift) % pipelines.length]),
            });
            const container = encodeContainer(bytesOf(input), {
              type,
              chunkLength: rows * X * fields,
              shape: [2 * rows + 4, X * fields],
              chunks: [predicted(0), predicted(1), { kind: 'stored' }],
            });
            const what = `${name}, predictor ${predictor}, map ${map}, X ${X}, Y ${Y}, ${fields} fields, ${describeSeed(seed)}`;
            expect(onDevice(container), what).toBe(true);
            await decodesOnDevice(container, input, what);
          }
        }
      }
    },
  );

  gpuIt(
    'from the device, a shaped container is planned in one walk of its table (its index, the predict headers) and one of its field blocks, nothing read between or after (without the blocks walk: a block a round, then planned again)',
    async () => {
      // the first walk copies the shape block and starts after it; the blocks walk copies each
      // stream's head and gathers a decimal map's exceptions beside it: a mutation of either
      // sends the plan to more readbacks (the plan still decodes: only the count shows it)
      const gpu = (engine as unknown as { gpuContext: { submit: (label: string, encode: unknown) => Promise<unknown> } }).gpuContext;
      const seed = caseSeed('gpu predict plan readbacks');
      const [X, Y, fields] = [40, 3, 2];
      const rows = 48;
      for (const [Ctor, type, map] of [
        [Float32Array, TYPE_CODE.f32, MAP.decimal],
        [Uint16Array, TYPE_CODE.u16, MAP.none],
      ] as const) {
        const input = smooth(Ctor, 2 * rows, X, fields, seed);
        const predicted = (stages: number[][]): ChunkPlan => ({
          kind: 'predicted',
          map,
          predictor: PREDICTOR.lorenzo2,
          fields,
          X,
          Y,
          ...(map === MAP.decimal ? { exponents: [2, 2] } : {}),
          stages,
        });
        const container = encodeContainer(bytesOf(input), {
          type,
          chunkLength: rows * X * fields,
          shape: [2 * rows, X * fields],
          chunks: [
            predicted([[STAGE.shuffle, STAGE.rle, STAGE.huffman], [STAGE.huffman]]),
            predicted([
              [STAGE.rle, STAGE.huffman],
              [STAGE.shuffle, STAGE.huffman],
            ]),
          ],
        });
        const labels: string[] = [];
        const submit = gpu.submit;
        gpu.submit = function (label, encode) {
          labels.push(label);
          return submit.call(this, label, encode);
        };
        try {
          await decodesOnDevice(container, input, `${Ctor.name}, ${describeSeed(seed)}`);
        } finally {
          gpu.submit = submit;
        }
        // decodesOnDevice decodes from host memory first (its one submission 'decompress'), then
        // from the device: the table's walk (with each payload's first bytes and the chunk index),
        // the blocks' walk, the decode
        const fromDevice = labels.slice(labels.indexOf('decompress') + 1);
        expect(fromDevice, Ctor.name).toEqual(['decompress: chunk table', 'decompress: field blocks', 'decompress']);
        // without the blocks walk the first plan misses the blocks' heads: they are read a block
        // a round (missingPredictedReads), then the plan is made again, from every byte it reads
        const { cpu, gpuContext: ctx } = engine as unknown as { cpu: CpuPath; gpuContext: GpuContext };
        const resident = await engine.upload(container);
        labels.length = 0;
        gpu.submit = function (label, encode) {
          labels.push(label);
          return submit.call(this, label, encode);
        };
        try {
          const out = await decompressDeviceContainer(cpu, ctx, resident, Infinity, undefined, undefined, false);
          expect(sameElements(await engine.download(out), input), `${Ctor.name} without the blocks walk`).toBe(true);
          out.destroy();
        } finally {
          gpu.submit = submit;
          resident.destroy();
        }
        expect(labels.filter((l) => l === 'decompress: plan reads').length, Ctor.name).toBeGreaterThan(fields + 1);
        expect(labels, Ctor.name).not.toContain('decompress: field blocks');
      }
    },
  );

  gpuIt(
    'records of many chunks whose rle fields lie apart: over 64 expanded ranges, gathered to their planes (not copied one by one)',
    async () => {
      // 6 fields, every other one rle: 3 ranges a chunk that do not follow each other (the planes
      // between are Huffman's), 48 chunks: 144 ranges of one value width
      const seed = caseSeed('gpu predict decode gathered ranges');
      const [X, fields, rows] = [16, 6, 8];
      const chunks = 48;
      // even fields constant along each row (their residuals runs of zeros: rle pays), odd ones noisy
      const rng = new Rng(seed);
      const input = new Uint16Array(chunks * rows * X * fields).map((_, e) => {
        const k = e % fields;
        const row = Math.floor(e / (X * fields));
        return k % 2 === 0 ? (row * 37 + k) & 0xffff : rng.intBetween(0, 4000);
      });
      const stages = Array.from({ length: fields }, (_, k) => (k % 2 === 0 ? [STAGE.rle, STAGE.huffman] : [STAGE.huffman]));
      const container = encodeContainer(bytesOf(input), {
        type: TYPE_CODE.u16,
        chunkLength: rows * X * fields,
        shape: [chunks * rows, X * fields],
        chunks: [{ kind: 'predicted', map: MAP.none, predictor: PREDICTOR.left, fields, X, Y: 1, stages }],
      });
      const what = `${chunks} chunks of ${fields} fields, ${describeSeed(seed)}`;
      expect(onDevice(container), what).toBe(true);
      await decodesOnDevice(container, input, what);
    },
  );

  gpuIt("the CPU path's own predicted containers: the input, decoded on the GPU", async () => {
    const seed = caseSeed('gpu predict decode engine');
    for (const [name, Ctor] of types) {
      const input = gradient(Ctor, 64, 96, seed);
      const container = await engine.compress(input, { shape: [64, 96], chunkBytes: 8192, path: 'cpu' });
      expect(
        engine.inspect(container).chunks.some((c) => c.encoding.startsWith('predict')),
        name,
      ).toBe(true);
      await decodesOnDevice(container, input, `${name}, ${describeSeed(seed)}`);
    }
    // a flat array of RGB cells: the chooser finds the 3 fields and predicts along the chunk, a
    // row of 21845 cells (the delta chunk scan's rows)
    const rng = new Rng(seed);
    const rgb = new Uint8Array(3 * 60_000).map(
      (_, i) => ((i % 3) * 60 + Math.round(Math.sin(i / 3 / 700) * 50) + rng.intBetween(0, 2)) & 255,
    );
    const flat = await engine.compress(rgb, { chunkBytes: 65_535, path: 'cpu' });
    expect(engine.inspect(flat).chunks.some((c) => c.encoding.startsWith('predict'))).toBe(true);
    await decodesOnDevice(flat, rgb, `flat rgb, ${describeSeed(seed)}`);
  });

  gpuIt('chunks that start off a 4-byte boundary (odd planes of u8, odd chunk lengths of u16): staged, then placed', async () => {
    const seed = caseSeed('gpu predict decode staged');
    // a u8 volume of planes of 17 x 13 = 221 elements: the CPU path cuts its chunks at whole planes
    const volume = gradient(Uint8Array, 40 * 17, 13, seed) as Uint8Array;
    const shaped = await engine.compress(volume, { shape: [40, 17, 13], chunkBytes: 1500, path: 'cpu' });
    const report = engine.inspect(shaped);
    expect(report.chunks.length).toBeGreaterThan(2);
    expect(report.chunkLength % 4).not.toBe(0);
    await decodesOnDevice(shaped, volume, `u8 volume, ${describeSeed(seed)}`);
    // flat chunks of 1001 u16 elements (2002 bytes), every pipeline the chooser likes
    const flat = gradient(Uint16Array, 30, 240, seed);
    const odd = await engine.compress(flat, { chunkBytes: 2002, path: 'cpu' });
    expect(engine.inspect(odd).chunkLength).toBe(1001);
    await decodesOnDevice(odd, flat, `u16 chunks of 1001, ${describeSeed(seed)}`);
  });

  gpuIt('med of an RGB image with its first row and column, the decimal map (every exponent, exceptions): the input', async () => {
    const seed = caseSeed('gpu predict decode cpu');
    const image = smooth(Uint8Array, 32, 40, 3, seed);
    const med = encodeContainer(bytesOf(image), {
      type: TYPE_CODE.u8,
      chunkLength: image.length,
      chunks: [
        {
          kind: 'predicted',
          map: MAP.none,
          predictor: PREDICTOR.med,
          fields: 3,
          X: 40,
          Y: 1,
          stages: [[STAGE.huffman], [], [STAGE.huffman]],
        },
      ],
    });
    expect(onDevice(med), 'med').toBe(true);
    await decodesOnDevice(med, image, 'med');
    // decimals of e digits for every e the format allows, negative and positive, up to 2^31 / 10^e
    // (the largest i32 the map takes), a few of them so the pipelines code them, every 50th
    // element an exception (pi)
    const rng = new Rng(seed);
    for (let e = 0; e <= 18; e++) {
      const scale = 10 ** e;
      const top = Math.min(2 ** 31 - 1, 10 ** (e + 3));
      const decimals = new Float32Array(2000).map((_, i) =>
        i % 50 === 7 ? Math.PI * i : (rng.intBetween(0, 15) * Math.floor(top / 8) - top + rng.intBetween(0, 1)) / scale,
      );
      const piped = [STAGE.shuffle, STAGE.huffman];
      const decimal = encodeContainer(bytesOf(decimals), {
        type: TYPE_CODE.f32,
        chunkLength: 1000,
        chunks: [
          {
            kind: 'predicted',
            map: MAP.decimal,
            predictor: PREDICTOR.none,
            fields: 2,
            X: 500,
            Y: 1,
            exponents: [e, e],
            stages: [piped, piped],
          },
        ],
      });
      const what = `decimal, e = ${e}, ${describeSeed(seed)}`;
      expect(onDevice(decimal), what).toBe(true);
      await decodesOnDevice(decimal, decimals, what);
      if (e !== 2) continue;
      // exception indices out of order (the payload resealed): CORRUPT on both paths
      const bad = decimal.slice();
      const list = HEADER_BYTES + ENTRY_BYTES + 12 + 4 + 4; // the predict header, 2 exponents padded to 4, the count
      const view = new DataView(bad.buffer);
      const [first, second] = [view.getUint32(list, true), view.getUint32(list + 4, true)];
      view.setUint32(list, second, true);
      view.setUint32(list + 4, first, true);
      reseal(bad, HEADER_BYTES);
      for (const path of ['cpu', 'gpu'] as const) {
        await expect(engine.decompress(bad, { to: 'device', path }), path).rejects.toMatchObject({ code: ErrorCodes.CORRUPT });
      }
    }
  });
});
