// The public Engine API on the CPU path: every op against the plain references, across segment
// boundaries (a CPU path with tiny segments), and every bad argument with its error code.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { CpuPath } from '../ts/cpu/cpu-path.js';
import { createEngine, Engine } from '../ts/engine.js';
import { destroyAll } from '../ts/probe.js';
import { ErrorCodes, ParleError } from '../ts/errors.js';
import { createGpuContext } from '../ts/gpu/index.js';
import type { ParleArray } from '../ts/types.js';
import { Rng, caseSeed, describeSeed, fillRuns, randomF32Bits, type WordArray } from './support/random.js';
import * as ref from './support/reference.js';
import { PROCEDURES } from '../ts/codec/cpu/procedures.js';

let engine: Engine;
/** An engine whose CPU path moves 64 bytes at a time, so every op crosses many segments. */
let tinySegments: Engine;

beforeAll(async () => {
  engine = await createEngine({ workers: 1, gpu: 'off' });
  tinySegments = new Engine(await CpuPath.create({ procedures: PROCEDURES, segmentBytes: 64 }), null, { maxElements: 2 ** 32 - 1, maxQueue: 1024 });
});
afterAll(async () => {
  await engine.destroy();
  await tinySegments.destroy();
});

/** Unsigned bits of any parle array, for exact comparison (NaN payloads included). */
function bits(array: ParleArray): WordArray {
  if (array.BYTES_PER_ELEMENT === 1) return new Uint8Array(array.buffer, array.byteOffset, array.length);
  if (array.BYTES_PER_ELEMENT === 2) return array as Uint16Array;
  return new Uint32Array(array.buffer, array.byteOffset, array.length);
}

const TYPES = [
  { name: 'u8', make: (n: number) => new Uint8Array(n) },
  { name: 'u16', make: (n: number) => new Uint16Array(n) },
  { name: 'u32', make: (n: number) => new Uint32Array(n) },
  { name: 'i32', make: (n: number) => new Int32Array(n) },
  { name: 'f32', make: (n: number) => new Float32Array(n) },
] as const;

describe.each([
  ['whole segments', () => engine],
  ['64-byte segments', () => tinySegments],
])('rleEncode / rleDecode (%s)', (_label, get) => {
  for (const { name, make } of TYPES) {
    for (const n of [0, 1, 2, 15, 16, 17, 255, 256, 257, 4099]) {
      for (const shape of [{ kind: 'uniform', maxRun: 40 }, { kind: 'equal' }, { kind: 'unique' }] as const) {
        it(`${name} n=${n} ${shape.kind}`, async () => {
          const seed = caseSeed(`engine rle ${name} ${n} ${shape.kind}`);
          const input = make(n);
          fillRuns(new Rng(seed), bits(input), shape);
          const runs = await get().rleEncode(input);
          const expected = ref.rleEncode(bits(input));
          expect(runs.values.constructor, describeSeed(seed)).toBe(input.constructor);
          expect(Array.from(bits(runs.values)), describeSeed(seed)).toEqual(Array.from(expected.values));
          expect(Array.from(runs.lengths), describeSeed(seed)).toEqual(Array.from(expected.lengths));
          const back = await get().rleDecode(runs);
          expect(back.constructor).toBe(input.constructor);
          expect(Array.from(bits(back)), describeSeed(seed)).toEqual(Array.from(bits(input)));
        });
      }
    }
  }

  it('one run spanning every segment', async () => {
    const input = new Uint16Array(10_000).fill(7);
    const runs = await get().rleEncode(input);
    expect(Array.from(runs.lengths)).toEqual([10_000]);
    expect(Array.from(runs.values)).toEqual([7]);
  });

  it('f32 runs compare bit patterns: NaN payloads and -0 survive', async () => {
    const seed = caseSeed('engine f32 specials');
    const raw = randomF32Bits(new Rng(seed), 3000, 0.5);
    // Make some runs: repeat each element 1..3 times.
    const repeated: number[] = [];
    raw.forEach((b, i) => {
      for (let k = 0; k <= i % 3; k++) repeated.push(b);
    });
    const input = new Float32Array(new Uint32Array(repeated).buffer);
    const runs = await get().rleEncode(input);
    const expected = ref.rleEncode(bits(input));
    expect(Array.from(bits(runs.values)), describeSeed(seed)).toEqual(Array.from(expected.values));
    const back = await get().rleDecode(runs);
    expect(Array.from(bits(back)), describeSeed(seed)).toEqual(repeated);
  });

  it('decode of zero lengths and of a run longer than a segment', async () => {
    const values = new Uint8Array([1, 2, 3, 4]);
    const lengths = new Uint32Array([0, 300, 0, 2]);
    const back = await get().rleDecode({ values, lengths });
    expect(back.length).toBe(302);
    expect(back[0]).toBe(2);
    expect(back[299]).toBe(2);
    expect(Array.from(back.subarray(300))).toEqual([4, 4]);
  });
});

describe('scan', () => {
  for (const inclusive of [false, true]) {
    for (const n of [0, 1, 15, 16, 17, 257, 5000]) {
      it(`u32 and i32 wrap, ${inclusive ? 'inclusive' : 'exclusive'} n=${n}`, async () => {
        const seed = caseSeed(`engine scan ${inclusive} ${n}`);
        const rng = new Rng(seed);
        const u = new Uint32Array(n).map(() => rng.nextU32());
        for (const e of [engine, tinySegments]) {
          const got = await e.scan(u, { inclusive });
          expect(Array.from(got), describeSeed(seed)).toEqual(Array.from(ref.scan(u, { inclusive }).out));
          const i = new Int32Array(u.buffer);
          const gotI = await e.scan(i, { inclusive });
          expect(gotI).toBeInstanceOf(Int32Array);
          expect(Array.from(gotI), describeSeed(seed)).toEqual(Array.from(ref.scan(i, { inclusive }).out));
        }
      });
    }
  }

  it('f32 within float32 rounding of a float64 sum, across segments', async () => {
    const seed = caseSeed('engine scan f32');
    const rng = new Rng(seed);
    const input = new Float32Array(3001).map(() => rng.nextFloat() * 2 - 1);
    for (const e of [engine, tinySegments]) {
      const got = await e.scan(input, { inclusive: true });
      let exact = 0;
      let magnitude = 0;
      for (let i = 0; i < input.length; i++) {
        exact += input[i];
        magnitude += Math.abs(input[i]);
        expect(Math.abs(got[i] - exact), `${describeSeed(seed)} at ${i}`).toBeLessThanOrEqual(magnitude * 2 ** -20 + 1e-6);
      }
    }
  });

  it('default is exclusive: [3,1,4,1,5] -> [0,3,4,8,9]', async () => {
    expect(Array.from(await engine.scan(new Uint32Array([3, 1, 4, 1, 5])))).toEqual([0, 3, 4, 8, 9]);
  });
});

describe('sort', () => {
  for (const kind of ['u32', 'i32', 'f32'] as const) {
    for (const n of [0, 1, 2, 255, 256, 257, 20_000]) {
      it(`${kind} n=${n}, key-value stable`, async () => {
        const seed = caseSeed(`engine sort ${kind} ${n}`);
        const rng = new Rng(seed);
        // Few distinct keys, so stability is visible.
        const keyBits = kind === 'f32' ? randomF32Bits(rng, n, 0.2) : new Uint32Array(n).map(() => rng.nextU32() % 50 * 0x01010101);
        const values = new Uint32Array(n).map((_, i) => i);
        const keys = kind === 'u32' ? keyBits.slice() : kind === 'i32' ? new Int32Array(keyBits.slice().buffer) : new Float32Array(keyBits.slice().buffer);
        const expected = ref.stableSort(keyBits, kind, values);
        const sortedOnly = await engine.sort(keys);
        expect(sortedOnly.constructor).toBe(keys.constructor);
        expect(Array.from(new Uint32Array(sortedOnly.buffer)), describeSeed(seed)).toEqual(Array.from(expected.keys));
        const pairs = await engine.sort(keys, { values });
        expect(Array.from(new Uint32Array(pairs.keys.buffer)), describeSeed(seed)).toEqual(Array.from(expected.keys));
        expect(Array.from(pairs.values), describeSeed(seed)).toEqual(Array.from(expected.values ?? []));
        // The input is untouched.
        expect(Array.from(new Uint32Array(keys.buffer))).toEqual(Array.from(keyBits));
      });
    }
  }

  it('f32 order: -NaN < -Inf < -1 < -0 < +0 < denormal < 1 < +Inf < NaN', async () => {
    const order = [0xffc00000, 0xff800000, 0xbf800000, 0x80000000, 0x00000000, 0x00000001, 0x3f800000, 0x7f800000, 0x7fc00000];
    const shuffled = new Uint32Array([order[4], order[8], order[0], order[6], order[2], order[7], order[1], order[5], order[3]]);
    const sorted = await engine.sort(new Float32Array(shuffled.buffer));
    expect(Array.from(new Uint32Array(sorted.buffer))).toEqual(order);
  });
});

describe('bad arguments throw ParleError with a code naming the argument', () => {
  const cases: [string, () => Promise<unknown>, string, RegExp][] = [
    ['rleEncode of a plain array', () => engine.rleEncode([1, 2, 3] as unknown as Uint8Array), ErrorCodes.INVALID_ARGUMENT, /input/],
    ['rleEncode of a Uint8ClampedArray', () => engine.rleEncode(new Uint8ClampedArray(2) as unknown as Uint8Array), ErrorCodes.INVALID_ARGUMENT, /input/],
    ['rleEncode of null', () => engine.rleEncode(null as unknown as Uint8Array), ErrorCodes.INVALID_ARGUMENT, /input/],
    ['rleEncode with path NaN', () => engine.rleEncode(new Uint8Array(1), { path: NaN as unknown as 'cpu' }), ErrorCodes.INVALID_OPTION, /options\.path/],
    ['rleEncode on the GPU path', () => engine.rleEncode(new Uint8Array(1), { path: 'gpu' }), ErrorCodes.PATH_UNAVAILABLE, /gpu/],
    ['rleDecode with lengths of another type', () => engine.rleDecode({ values: new Uint8Array(1), lengths: new Int32Array(1) as unknown as Uint32Array }), ErrorCodes.UNSUPPORTED_TYPE, /runs\.lengths/],
    ['rleDecode with mismatched lengths', () => engine.rleDecode({ values: new Uint8Array(2), lengths: new Uint32Array(1) }), ErrorCodes.LENGTH_MISMATCH, /runs\.values/],
    ['rleDecode beyond 2^32 - 1 elements', () => engine.rleDecode({ values: new Uint8Array(2), lengths: new Uint32Array([0xffffffff, 1]) }), ErrorCodes.TOO_LARGE, /2\^32/],
    ['sort of Uint8Array keys', () => engine.sort(new Uint8Array(3) as unknown as Uint32Array), ErrorCodes.UNSUPPORTED_TYPE, /keys/],
    ['sort with values of another length', () => engine.sort(new Uint32Array(3), { values: new Uint32Array(2) }), ErrorCodes.LENGTH_MISMATCH, /options\.values/],
    ['scan of Uint16Array', () => engine.scan(new Uint16Array(3) as unknown as Uint32Array), ErrorCodes.UNSUPPORTED_TYPE, /input/],
    ['scan with inclusive "yes"', () => engine.scan(new Uint32Array(3), { inclusive: 'yes' as unknown as boolean }), ErrorCodes.INVALID_OPTION, /options\.inclusive/],
    ['compress with chunkBytes -1', () => engine.compress(new Uint8Array(3), { chunkBytes: -1 }), ErrorCodes.INVALID_OPTION, /options\.chunkBytes/],
    ['compress with chunkBytes NaN', () => engine.compress(new Uint8Array(3), { chunkBytes: NaN }), ErrorCodes.INVALID_OPTION, /options\.chunkBytes/],
    ['decompress with maxElements -5', () => engine.decompress(new Uint8Array(3), { maxElements: -5 }), ErrorCodes.INVALID_OPTION, /options\.maxElements/],
    ['options that are a number', () => engine.scan(new Uint32Array(1), 5 as unknown as object), ErrorCodes.INVALID_OPTION, /options/],
  ];
  for (const [label, call, code, message] of cases) {
    it(label, async () => {
      const error = await call().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(ParleError);
      expect((error as ParleError).code).toBe(code);
      expect((error as ParleError).message).toMatch(message);
    });
  }

  it('a detached input', async () => {
    const input = new Uint8Array(16);
    structuredClone(input.buffer, { transfer: [input.buffer] });
    await expect(engine.rleEncode(input)).rejects.toMatchObject({ code: ErrorCodes.DETACHED_BUFFER });
    await expect(engine.compress(input)).rejects.toMatchObject({ code: ErrorCodes.DETACHED_BUFFER });
  });

  it('createEngine validates its options', async () => {
    await expect(createEngine({ workers: -1 })).rejects.toMatchObject({ code: ErrorCodes.INVALID_OPTION, message: /options\.workers/ });
    await expect(createEngine({ workers: 1.5 })).rejects.toMatchObject({ code: ErrorCodes.INVALID_OPTION });
    await expect(createEngine({ workers: NaN })).rejects.toMatchObject({ code: ErrorCodes.INVALID_OPTION });
    await expect(createEngine({ gpu: 'yes' as 'auto' })).rejects.toMatchObject({ code: ErrorCodes.INVALID_OPTION, message: /options\.gpu/ });
    await expect(createEngine({ gpuPoolBytes: -5 })).rejects.toMatchObject({ code: ErrorCodes.INVALID_OPTION, message: /options\.gpuPoolBytes/ });
    // gpu: 'require' succeeds exactly when an adapter exists.
    const context = await createGpuContext();
    if (context === null) {
      await expect(createEngine({ gpu: 'require', workers: 0 })).rejects.toMatchObject({ code: ErrorCodes.PATH_UNAVAILABLE });
    } else {
      context.destroy();
      const withGpu = await createEngine({ gpu: 'require', workers: 0 });
      expect(withGpu.adapter).not.toBeNull();
      await withGpu.destroy();
    }
  });

  it('a destroyed engine refuses work', async () => {
    const e = await createEngine({ workers: 1, gpu: 'off' });
    await e.destroy();
    await expect(e.rleEncode(new Uint8Array(1))).rejects.toMatchObject({ code: ErrorCodes.DESTROYED });
  });
});

describe('destroyAll (the calibration probes release results with it)', () => {
  it("does not walk a typed array's elements (a GPU compress's container)", () => {
    const values = vi.spyOn(Object, 'values');
    try {
      destroyAll(new Uint8Array(1 << 16));
      destroyAll(new Uint32Array(16));
      expect(values).not.toHaveBeenCalled();
      destroyAll({ keys: new Uint32Array(4) });
      expect(values).toHaveBeenCalledTimes(1);
    } finally {
      values.mockRestore();
    }
  });
});

describe('explain', () => {
  it('names the path, the predictions and the reason', () => {
    const x = engine.explain('rleEncode', new Uint8Array(1 << 20));
    expect(x.path).toBe('cpu');
    expect(x.predictedMs.cpu).toBeGreaterThan(0);
    expect(x.predictedMs.gpu).toBeNull();
    expect(x.reason).toMatch(/GPU/);
    expect(() => engine.explain('zip' as 'scan', new Uint8Array(1))).toThrow(ParleError);
  });
});
