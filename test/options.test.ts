// Strict options: every options object of the public API refuses keys it does not know with
// INVALID_OPTION, a message that starts `options.<path>` (a "did you mean" for a near miss) and
// ParleError.option set to the path as the caller wrote it; known keys set to undefined still
// mean "the default". CPU path only, no workers: small and fast.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine, type Engine } from '../ts/engine.js';
import { checkKeys, closestName, ErrorCodes, isParleError, ParleError } from '../ts/errors.js';
import { createGpuContext } from '../ts/gpu/index.js';
import type { DeviceArray } from '../ts/gpu/index.js';

let engine: Engine;
beforeAll(async () => {
  engine = await createEngine({ workers: 0, gpu: 'off', calibration: 'skip' });
});
afterAll(async () => {
  await engine.destroy();
});

/** The ParleError that `fn` throws or rejects with. */
async function errorOf(fn: () => unknown): Promise<ParleError> {
  try {
    await fn();
  } catch (e) {
    if (e instanceof ParleError) return e;
    throw e;
  }
  throw new Error('expected a ParleError; nothing was thrown');
}

/** Anything with extra keys, past the compiler (as JavaScript callers pass it). */
const loose = <T>(options: Record<string, unknown>): T => options as T;

const bytes = new Uint8Array([1, 1, 2, 2, 2, 3]);
const f32 = new Float32Array([0.5, 1.5, 2.5, 3.5]);

describe('unknown keys', () => {
  it('name the key as written, the call, and the key it was probably meant to be', async () => {
    const e = await errorOf(() => engine.compress(bytes, loose({ levle: 9 })));
    expect(e.code).toBe(ErrorCodes.INVALID_OPTION);
    expect(e.message).toBe('options.levle is not an option of compress (did you mean level?)');
    expect(e.option).toBe('levle');
  });

  it('list the options when no key is close', async () => {
    const e = await errorOf(() => engine.decompress(new Uint8Array(8), loose({ zzz: 1 })));
    expect(e.message).toBe('options.zzz is not an option of decompress; it takes path, to, signal, maxElements, out, place');
    expect(e.option).toBe('zzz');
  });

  it('are refused even when their value is undefined (a misspelt key set from a variable)', async () => {
    const e = await errorOf(() => engine.compress(bytes, loose({ chunkbytes: undefined })));
    expect(e).toMatchObject({ code: ErrorCodes.INVALID_OPTION, option: 'chunkbytes', message: /did you mean chunkBytes\?/ });
  });

  // [call, what runs it, the misspelt key, the key suggested]
  const cases: [string, () => unknown, string, string][] = [
    ['createEngine', () => createEngine(loose({ workrs: 0 })), 'workrs', 'workers'],
    ['rleEncode', () => engine.rleEncode(bytes, loose({ pth: 'cpu' })), 'pth', 'path'],
    [
      'rleDecode',
      () => engine.rleDecode({ values: new Uint8Array(1), lengths: new Uint32Array([1]) }, loose({ oot: undefined })),
      'oot',
      'out',
    ],
    ['sort', () => engine.sort(new Uint32Array(3), loose({ value: new Uint32Array(3) })), 'value', 'values'],
    ['scan', () => engine.scan(new Uint32Array(3), loose({ inclusiv: true })), 'inclusiv', 'inclusive'],
    ['compress', () => engine.compress(bytes, loose({ codecs: 'rle' })), 'codecs', 'codec'],
    ['decompress', () => engine.decompress(new Uint8Array(8), loose({ maxElement: 5 })), 'maxElement', 'maxElements'],
    ['createCompressor', () => engine.createCompressor('u8', 4, loose({ chunkSize: 4096, levels: 3 })), 'chunkSize', ''],
    ['createDecompressor', () => engine.createDecompressor(loose({ sginal: undefined })), 'sginal', 'signal'],
    ['explain', () => engine.explain('compress', bytes, loose({ too: 'host' })), 'too', 'to'],
    ['explainCodec', () => engine.explainCodec(bytes, loose({ Level: 3 })), 'Level', 'level'],
    ['calibrate', () => engine.calibrate(loose({ forced: true })), 'forced', 'force'],
    ['download', () => engine.download({} as DeviceArray, loose({ inot: new Uint8Array(1) })), 'inot', 'into'],
    ['createGpuContext', () => createGpuContext(loose({ tunning: {} })), 'tunning', 'tuning'],
  ];
  it.each(cases)('%s', async (call, run, key, near) => {
    const e = await errorOf(run);
    expect(e.code).toBe(ErrorCodes.INVALID_OPTION);
    expect(e.option).toBe(key);
    expect(e.message.startsWith(`options.${key} is not an option of ${call}`)).toBe(true);
    if (near !== '') expect(e.message).toContain(`(did you mean ${near}?)`);
  });

  it('calibrate rejects (does not throw) for a bad key', () => {
    let promise: Promise<void> | undefined;
    expect(() => (promise = engine.calibrate(loose({ forced: true })))).not.toThrow();
    return expect(promise).rejects.toMatchObject({ code: ErrorCodes.INVALID_OPTION, option: 'forced' });
  });

  it('nested: GPU tuning', async () => {
    const e = await errorOf(() => createGpuContext({ tuning: loose({ sortItems: 8 }) }));
    expect(e.option).toBe('tuning.sortItems');
    expect(e.message).toMatch(/^options\.tuning\.sortItems is not supported: tuning takes \{ .*sortItemsPerInvocation.* \}/);
  });

  it('options that are not an object', async () => {
    for (const bad of [5, 'fast', null, [1]]) {
      const e = await errorOf(() => engine.compress(bytes, bad as unknown as object));
      expect(e).toMatchObject({ code: ErrorCodes.INVALID_OPTION, message: /^options of compress must be an object/ });
      expect(e.option).toBeUndefined();
    }
  });
});

describe('errorBound', () => {
  it('{ rel } is not supported (not "abs must be a finite number")', async () => {
    for (const run of [
      () => engine.compress(f32, { errorBound: loose({ rel: 0.01 }) }),
      () => engine.createCompressor('f32', 4, { errorBound: loose({ rel: 0.01 }) }),
      () => engine.explainCodec(f32, { errorBound: loose({ rel: 0.01 }) }),
    ]) {
      const e = await errorOf(run);
      expect(e.code).toBe(ErrorCodes.INVALID_OPTION);
      expect(e.message).toBe('options.errorBound.rel is not supported: errorBound takes { abs }');
      expect(e.option).toBe('errorBound.rel');
    }
  });

  it('{ abs, rel } too, and a misspelt abs gets a suggestion', async () => {
    expect(await errorOf(() => engine.compress(f32, { errorBound: loose({ abs: 0.1, rel: 0.01 }) }))).toMatchObject({
      option: 'errorBound.rel',
    });
    const e = await errorOf(() => engine.compress(f32, { errorBound: loose({ ab: 0.1 }) }));
    expect(e.message).toBe('options.errorBound.ab is not supported: errorBound takes { abs } (did you mean abs?)');
  });

  it('a bad abs names errorBound.abs', async () => {
    const e = await errorOf(() => engine.compress(f32, { errorBound: { abs: -1 } }));
    expect(e).toMatchObject({
      code: ErrorCodes.INVALID_OPTION,
      option: 'errorBound.abs',
      message: /^options\.errorBound\.abs must be a finite number > 0/,
    });
  });

  it('{ abs: undefined } is a missing bound, not an unknown key', async () => {
    const e = await errorOf(() => engine.compress(f32, { errorBound: { abs: undefined as unknown as number } }));
    expect(e.option).toBe('errorBound.abs');
  });
});

describe('decoder', () => {
  it("compress, createCompressor and explainCodec refuse a bad decoder alike (INVALID_OPTION, option 'decoder')", async () => {
    for (const bad of ['GPU', 'wasm', '', 3, null]) {
      for (const run of [
        () => engine.compress(bytes, { decoder: bad as never }),
        () => engine.createCompressor('u8', 6, { decoder: bad as never }),
        () => engine.explainCodec(bytes, { decoder: bad as never }),
      ]) {
        const e = await errorOf(run);
        expect(e, String(bad)).toMatchObject({
          code: ErrorCodes.INVALID_OPTION,
          option: 'decoder',
          message: /^options\.decoder must be 'cpu', 'gpu'; got /,
        });
      }
    }
  });

  it("explainCodec reports the payload sizes of the decoder's Huffman streams", async () => {
    // skewed bytes (geometric: the leading zeros of an LCG's words): coded with huffman; mode 3
    // adds its segment offsets and lane bits
    let x = 1;
    const input = Uint8Array.from({ length: 50_000 }, () => Math.clz32((x = (Math.imul(x, 1664525) + 1013904223) | 0)));
    for (const codec of ['huffman', undefined]) {
      const cpu = await engine.explainCodec(input, { codec, decoder: 'cpu' });
      const gpu = await engine.explainCodec(input, { codec, decoder: 'gpu' });
      const packed = await engine.compress(input, { codec, decoder: 'gpu' });
      expect(cpu.map((r) => r.pipeline)).toEqual(gpu.map((r) => r.pipeline));
      expect(gpu[0].pipeline).toContain('huffman');
      expect(gpu[0].payloadBytes, String(codec)).toBeGreaterThan(cpu[0].payloadBytes);
      expect(
        (await engine.explainCodec(input, { codec })).map((r) => r.payloadBytes),
        'the default is cpu',
      ).toEqual(cpu.map((r) => r.payloadBytes));
      // one chunk: the container is its header, one entry and the payload
      expect(packed.length - gpu[0].payloadBytes).toBe((await engine.compress(input, { codec })).length - cpu[0].payloadBytes);
    }
  });
});

describe('ParleError.option', () => {
  it('is the path of every INVALID_OPTION about an option', async () => {
    const cases: [() => unknown, string][] = [
      [() => engine.compress(bytes, { chunkBytes: -1 }), 'chunkBytes'],
      [() => engine.compress(bytes, { level: 0 }), 'level'],
      [() => engine.compress(bytes, { codec: 'bogus' }), 'codec'],
      [() => engine.compress(bytes, { to: 'gpu' as 'device' }), 'to'],
      [() => engine.scan(new Uint32Array(2), { inclusive: 'yes' as unknown as boolean }), 'inclusive'],
      [() => engine.rleEncode(bytes, { signal: {} as AbortSignal }), 'signal'],
      [() => createEngine({ workers: -1 }), 'workers'],
      [() => createGpuContext({ tuning: { scanWorkgroupSize: 384 as 512 } }), 'tuning.scanWorkgroupSize'],
    ];
    for (const [run, option] of cases) {
      const e = await errorOf(run);
      expect(e.code).toBe(ErrorCodes.INVALID_OPTION);
      expect(e.option).toBe(option);
      expect(e.message.startsWith(`options.${option}`)).toBe(true);
    }
  });

  it('is undefined for a positional argument and for other codes', async () => {
    const type = await errorOf(() => engine.createCompressor('u128' as 'u8', 1));
    expect(type).toMatchObject({ code: ErrorCodes.INVALID_OPTION, option: undefined });
    const arg = await errorOf(() => engine.compress([1, 2] as unknown as Uint8Array));
    expect(arg).toMatchObject({ code: ErrorCodes.INVALID_ARGUMENT, option: undefined });
  });

  it('comes from the message, or is given', () => {
    expect(new ParleError(ErrorCodes.INVALID_OPTION, 'options.tuning.x must be 4').option).toBe('tuning.x');
    expect(new ParleError(ErrorCodes.INVALID_OPTION, 'bad', { option: 'level' }).option).toBe('level');
    expect(new ParleError(ErrorCodes.CORRUPT, 'options.level is fine').option).toBeUndefined();
    const e: unknown = new ParleError(ErrorCodes.INVALID_OPTION, 'options.level must be 1..9');
    if (isParleError(e, ErrorCodes.INVALID_OPTION)) expect(e.option).toBe('level');
    else expect.unreachable();
  });
});

describe('known keys set to undefined mean the default', () => {
  it('createEngine and the ops', async () => {
    const e = await createEngine({
      workers: 0,
      gpu: 'off',
      calibration: 'skip',
      kernels: undefined,
      maxElements: undefined,
      inlineBytes: undefined,
      maxQueue: undefined,
      maxMemoryBytes: undefined,
      sharedMemory: undefined,
      gpuPoolBytes: undefined,
    });
    try {
      const op = { path: undefined, to: undefined, signal: undefined };
      const packed = await e.compress(bytes, {
        ...op,
        chunkBytes: undefined,
        level: undefined,
        codec: undefined,
        decoder: undefined,
        errorBound: undefined,
        out: undefined,
      });
      expect(Array.from(await e.decompress(packed, { ...op, maxElements: undefined, out: undefined }))).toEqual(Array.from(bytes));
      const runs = await e.rleEncode(bytes, op);
      expect(Array.from(runs.lengths)).toEqual([2, 3, 1]);
      expect(Array.from(await e.rleDecode(runs, { ...op, out: undefined }))).toEqual(Array.from(bytes));
      expect(
        Array.from(await e.sort(new Uint32Array([3, 1, 2]), { ...op, values: undefined, out: undefined, outValues: undefined })),
      ).toEqual([1, 2, 3]);
      expect(Array.from(await e.scan(new Uint32Array([3, 1, 2]), { ...op, inclusive: undefined, out: undefined }))).toEqual([0, 3, 4]);
      expect(e.explain('compress', bytes, { to: undefined }).path).toBe('cpu');
      expect(
        (
          await e.explainCodec(bytes, {
            chunkBytes: undefined,
            codec: undefined,
            errorBound: undefined,
            level: undefined,
            decoder: undefined,
            signal: undefined,
          })
        ).length,
      ).toBe(1);
      await e.calibrate({ force: undefined, onProgress: undefined });
      const writer = e.createCompressor('u8', bytes.length, {
        chunkBytes: undefined,
        codec: undefined,
        errorBound: undefined,
        level: undefined,
        decoder: undefined,
        explain: undefined,
        signal: undefined,
      });
      const container = [...(await writer.write(bytes)), ...(await writer.end())];
      const reader = e.createDecompressor({ maxElements: undefined, out: undefined, signal: undefined });
      const out: Uint8Array[] = [];
      for (const piece of container) out.push(...(await reader.write(piece)));
      out.push(...(await reader.end()));
      expect(Array.from(Buffer.concat(out))).toEqual(Array.from(bytes));
    } finally {
      await e.destroy();
    }
  });
});

describe('checkKeys and closestName', () => {
  it('suggest by case, a typo or a swap, and nothing far off', () => {
    expect(closestName('LEVEL', ['level', 'codec'])).toBe('level');
    expect(closestName('lvel', ['level', 'codec'])).toBe('level');
    expect(closestName('lveel', ['level', 'codec'])).toBe('level');
    expect(closestName('to', ['to', 'path'])).toBe('to');
    expect(closestName('xyz', ['to', 'path'])).toBeUndefined();
    expect(closestName('pat', ['to', 'path'])).toBe('path');
  });

  it('accepts known keys, and inherited ones are not own keys', () => {
    expect(() => checkKeys({ level: 1 }, ['level'], 'compress')).not.toThrow();
    expect(() => checkKeys(Object.create({ levle: 1 }) as object, ['level'], 'compress')).not.toThrow();
  });
});

describe('shape', () => {
  it("compress, createCompressor and explainCodec refuse a bad shape alike (INVALID_OPTION, option 'shape')", async () => {
    const input = new Uint8Array(12);
    for (const bad of [[], [0, 12], [5, 2], [1.5, 8], ['3', 4], [1, 1, 1, 1, 1, 1, 1, 1, 12], 12, 'x', null]) {
      for (const run of [
        () => engine.compress(input, { shape: bad as never }),
        () => engine.createCompressor('u8', 12, { shape: bad as never }),
        () => engine.explainCodec(input, { shape: bad as never }),
      ]) {
        const e = await errorOf(run);
        expect(e, JSON.stringify(bad)).toMatchObject({ code: ErrorCodes.INVALID_OPTION, option: 'shape', message: /^options\.shape / });
      }
    }
  });

  it('a shape whose product is the element count is taken, and recorded', async () => {
    for (const shape of [[12], [3, 4], [2, 3, 2], [1, 1, 12]]) {
      const packed = await engine.compress(new Uint8Array(12), { shape });
      expect(engine.inspect(packed).shape).toEqual(shape);
    }
    expect(engine.inspect(await engine.compress(new Uint8Array(12))).shape).toBeUndefined();
  });
});
