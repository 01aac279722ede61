// The engine with a GPU: device in -> device out, host in -> device out and back, CPU encode ->
// GPU decode and GPU encode -> CPU decode, the cost model's choice and its explanation, and
// calibration stored and reused. On CI the GPU is SwiftShader; without an adapter these tests
// fail when PARLE_REQUIRE_GPU=1 and are reported as skipped otherwise (test/gpu/support.ts).
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { createEngine, DeviceArray, type Engine } from '../ts/engine.js';
import { CALIBRATION_FORMAT, type CalibrationProbe, type CalibrationRecord } from '../ts/cost/calibration.js';
import type { CostOp } from '../ts/cost/model.js';
import { ErrorCodes } from '../ts/errors.js';
import { compressBound, Encoding, ENTRY_BYTES, HEADER_BYTES, makeHeader, writeEntry, writeHeader } from '../ts/format/layout.js';
import { readAtBytes, walkChunks } from '../ts/format/container.js';
import { chunksOnDevice } from '../ts/codec/gpu/decode.js';
import * as ref from './support/codec-reference.js';
import { bytesOf, type ParleArray } from '../ts/types.js';
import { describeGpu, gpuIt, remakeBuffers } from './gpu/support.js';
import { DEVICE_FUZZ_FAILURES, makeSamples, mutate, reseal } from './support/fuzz.js';
import { Rng, caseSeed, describeSeed, fillRuns } from './support/random.js';
import { sameElements } from './support/bytes.js';

describeGpu('engine with a GPU', () => {
  let engine: Engine;
  // this suite's own calibration cache (the calibration test counts its records), inside the
  // file's (test/support/setup-file.ts), which is put back after
  let cacheDir: string;
  let fileCacheDir: string | undefined;
  beforeAll(async () => {
    fileCacheDir = process.env.PARLE_CACHE_DIR;
    cacheDir = await mkdtemp(join(fileCacheDir ?? tmpdir(), 'parle-cache-'));
    process.env.PARLE_CACHE_DIR = cacheDir;
    engine = await createEngine({ workers: 1, gpu: 'require', calibration: 'skip' });
  });
  afterAll(async () => {
    await engine?.destroy();
    if (fileCacheDir === undefined) delete process.env.PARLE_CACHE_DIR;
    else process.env.PARLE_CACHE_DIR = fileCacheDir;
    await rm(cacheDir, { recursive: true, force: true });
  });

  gpuIt('device in -> device out, and each path decodes what the other encoded', async () => {
    const seed = caseSeed('engine gpu rle');
    const input = new Uint16Array(50_001);
    fillRuns(new Rng(seed), input, { kind: 'uniform', maxRun: 40 });
    const device = await engine.upload(input);
    const gpuRuns = await engine.rleEncode(device, { path: 'gpu' });
    expect(gpuRuns.values).toBeInstanceOf(DeviceArray);
    const cpuRuns = await engine.rleEncode(input, { path: 'cpu' });
    const gpuValues = await engine.download(gpuRuns.values);
    expect(sameElements(gpuValues, cpuRuns.values), describeSeed(seed)).toBe(true);
    expect(sameElements(await engine.download(gpuRuns.lengths), cpuRuns.lengths), describeSeed(seed)).toBe(true);
    // GPU encode -> CPU decode (device runs, CPU path, host result).
    const viaCpu = await engine.rleDecode(gpuRuns, { path: 'cpu', to: 'host' });
    expect(sameElements(viaCpu as ParleArray, input), describeSeed(seed)).toBe(true);
    // CPU encode -> GPU decode (host runs, GPU path, host result).
    const viaGpu = await engine.rleDecode(cpuRuns, { path: 'gpu' });
    expect(sameElements(viaGpu, input), describeSeed(seed)).toBe(true);
    for (const d of [device, gpuRuns.values, gpuRuns.lengths]) d.destroy();
  });

  gpuIt('scan and sort: host in, device out; device in, host out', async () => {
    const rng = new Rng(caseSeed('engine gpu scan sort'));
    const u = new Uint32Array(9999).map(() => rng.nextU32());
    const onDevice = await engine.scan(u, { path: 'gpu', to: 'device', inclusive: true });
    expect(onDevice).toBeInstanceOf(DeviceArray);
    expect(sameElements(await engine.download(onDevice as DeviceArray), await engine.scan(u, { inclusive: true, path: 'cpu' }))).toBe(true);
    const keys = await engine.upload(new Float32Array(u.buffer.slice(0)));
    const values = await engine.upload(new Uint32Array(9999).map((_, i) => i));
    const sorted = await engine.sort(keys, { values, path: 'gpu', to: 'host' });
    const expected = await engine.sort(new Float32Array(u.buffer.slice(0)), {
      values: new Uint32Array(9999).map((_, i) => i),
      path: 'cpu',
    });
    expect(sameElements(sorted.keys as ParleArray, expected.keys)).toBe(true);
    expect(sameElements(sorted.values as ParleArray, expected.values)).toBe(true);
    for (const d of [onDevice as DeviceArray, keys, values]) d.destroy();
  });

  gpuIt('compress of a DeviceArray reads it back; decompress to the device on either path', async () => {
    const input = new Uint8Array(20_000);
    fillRuns(new Rng(caseSeed('engine gpu compress')), input, { kind: 'uniform', maxRun: 20 });
    const device = await engine.upload(input);
    const packed = await engine.compress(device);
    expect(Buffer.compare(packed, await engine.compress(input))).toBe(0);
    const back = await engine.decompress(packed, { to: 'device' });
    expect(back).toBeInstanceOf(DeviceArray);
    expect(sameElements(await engine.download(back), input)).toBe(true);
    // the GPU path's chooser sizes its candidates exactly, the CPU path's at level 5 from a sample:
    // with 'auto' they may differ; a fixed pipeline is the same bytes on both
    const onGpu = await engine.compress(device, { path: 'gpu' });
    expect(sameElements(await engine.decompress(onGpu, { path: 'cpu' }), input)).toBe(true);
    expect(onGpu[10]).toBe(5); // the level, in both
    const fixed = { codec: 'rle+huffman', chunkBytes: 8192 };
    expect(
      Buffer.compare(await engine.compress(device, { ...fixed, path: 'gpu' }), await engine.compress(input, { ...fixed, path: 'cpu' })),
    ).toBe(0);
    device.destroy();
    back.destroy();
  });

  // compress on the GPU path: one test per input (each compiles the GPU pipelines of its type's
  // codecs, seconds apiece on SwiftShader: all of them in one test took 120 s on a loaded host)
  const compressInputs: [string, ParleArray, number][] = [];
  {
    const rng = new Rng(caseSeed('engine gpu compress path'));
    for (const [Ctor, n, maxRun] of [
      [Uint8Array, 70_003, 3000],
      [Uint16Array, 33_001, 25],
      [Uint32Array, 20_000, 700],
      [Int32Array, 5, 2],
      [Float32Array, 12_345, 40],
    ] as const) {
      const a = new Ctor(n);
      fillRuns(rng, a, { kind: 'uniform', maxRun });
      compressInputs.push([`${Ctor.name} runs <= ${maxRun}`, a, 1024]);
    }
    const noise = new Uint8Array(9000).map(() => rng.nextU32() & 0xff); // stored chunks
    compressInputs.push(['u8 noise', noise, 1024]);
    const walk = new Uint8Array(20_000);
    for (let i = 1, v = 100; i < walk.length; i++) walk[i] = v = (v + (rng.nextU32() % 7) - 3) & 0xff; // delta pays
    compressInputs.push(['u8 random walk', walk, 4096]);
    compressInputs.push(['one run over many chunks', new Uint16Array(40_000).fill(7), 2048]);
    compressInputs.push(['empty', new Uint8Array(0), 1024]);
    compressInputs.push(['odd chunks (the runs way)', new Uint8Array(5000).map((_, i) => i >> 5), 1025]);
  }
  // (the codecs in two tests an input: with rle after every transform, one was 64 s here)
  const codecGroups = [
    {
      name: 'auto and the transforms',
      codecs: (wide: boolean) => ['auto', 'huffman', 'delta+huffman', ...(wide ? ['shuffle+huffman', 'delta+shuffle+huffman'] : [])],
    },
    {
      name: 'rle after each transform',
      codecs: (wide: boolean) => [
        'rle',
        'rle+huffman',
        'delta+rle',
        'delta+rle+huffman',
        ...(wide ? ['shuffle+rle+huffman', 'delta+shuffle+rle+huffman'] : []),
      ],
    },
    { name: 'pack', codecs: () => ['pack', 'delta+pack'] },
  ];
  for (const [what, input, chunkBytes] of compressInputs) {
    for (const group of codecGroups)
      gpuIt(
        `compress on the GPU path, ${what}, chunks of ${chunkBytes} B: ${group.name}; fixed pipelines write the CPU path's bytes`,
        async () => {
          const device = await engine.upload(input);
          const codecs = group.codecs(input.BYTES_PER_ELEMENT > 1);
          // a caller-owned out, reused by every codec: the same bytes, written into it
          const out = new Uint8Array(compressBound(input.length, device.type, chunkBytes) + 3);
          for (const codec of codecs) {
            const viaGpu = await engine.compress(device, { path: 'gpu', chunkBytes, codec });
            expect(sameElements(await engine.decompress(viaGpu, { path: 'cpu' }), input), `${what} ${codec}`).toBe(true);
            out.fill(0xa5);
            const into = await engine.compress(device, { path: 'gpu', chunkBytes, codec, out });
            expect(into.buffer === out.buffer && into.byteOffset === 0, `${what} ${codec}: into out`).toBe(true);
            expect(Buffer.compare(into, viaGpu), `${what} ${codec}: the same bytes into out`).toBe(0);
            if (codec !== 'auto') {
              const viaCpu = await engine.compress(input, { path: 'cpu', chunkBytes, codec });
              expect(Buffer.compare(viaGpu, viaCpu), `${what} ${codec}: same bytes as the CPU path`).toBe(0);
            }
            if (codec === 'rle+huffman') {
              // Huffman mode 3 (decoder 'gpu'): the same bytes on both paths too
              const forGpu = await engine.compress(device, { path: 'gpu', chunkBytes, codec, decoder: 'gpu' });
              const viaCpu = await engine.compress(input, { path: 'cpu', chunkBytes, codec, decoder: 'gpu' });
              expect(Buffer.compare(forGpu, viaCpu), `${what} ${codec}, decoder 'gpu': same bytes as the CPU path`).toBe(0);
              expect(
                sameElements(await engine.decompress(forGpu, { path: 'cpu' }), input),
                `${what} ${codec}, decoder 'gpu': CPU decode`,
              ).toBe(true);
            }
          }
          if (codecs.includes('auto')) {
            // auto from host data, uploaded first: a container the CPU decodes
            const fromHost = await engine.compress(input, { path: 'gpu', chunkBytes });
            expect(sameElements(await engine.decompress(fromHost, { path: 'cpu' }), input), `${what} from the host`).toBe(true);
          }
          device.destroy();
        },
      );
  }

  gpuIt("auto on the GPU path takes pack where it is smallest (the pack stage's plan sized on the GPU)", async () => {
    const rng = new Rng(caseSeed('engine gpu auto pack'));
    // an audio-like random walk of i16 (small deltas, a few jumps: exceptions) and u32 noise of 6
    // bits on a base that steps every 256 elements (a frame of reference a block beats one
    // Huffman code a chunk): delta+pack and pack beat every other candidate there
    const walk = new Int16Array(300_000);
    for (let i = 1; i < walk.length; i++) walk[i] = walk[i - 1] + (rng.nextU32() % 61) - 30 + (rng.nextU32() % 500 === 0 ? 9000 : 0);
    const steps = new Uint32Array(100_000).map((_, i) => 1_000_000 + (i >> 8) * 5003 + (rng.nextU32() % 64));
    for (const [what, input, want] of [
      ['i16 random walk', walk, 'delta+pack'],
      ['u32 steps', steps, 'pack'],
    ] as const) {
      const device = await engine.upload(input);
      const viaGpu = await engine.compress(device, { path: 'gpu', chunkBytes: 64 << 10 });
      const viaCpu = await engine.compress(input, { path: 'cpu', chunkBytes: 64 << 10 });
      const encodings = engine.inspect(viaGpu).chunks.map((c) => c.encoding);
      expect(
        encodings.every((e) => e === want),
        `${what}: ${encodings.join(', ')}`,
      ).toBe(true);
      expect(viaGpu.length, what).toBeLessThanOrEqual(viaCpu.length * 1.01);
      expect(sameElements(await engine.decompress(viaGpu, { path: 'cpu' }), input), `${what}: CPU decode`).toBe(true);
      const back = await engine.decompress(viaGpu, { path: 'gpu', to: 'device' });
      expect(sameElements(await engine.download(back), input), `${what}: GPU decode`).toBe(true);
      back.destroy();
      device.destroy();
    }
  });

  gpuIt('GPU-path compress and decompress with workers that do not share memory (regions copied)', async () => {
    const e = await createEngine({ workers: 2, gpu: 'require', calibration: 'skip', sharedMemory: false });
    try {
      // 4 MiB chunks: at the inline threshold, so the first chunk runs on a worker
      const input = new Uint16Array(2_500_001);
      fillRuns(new Rng(caseSeed('engine gpu unshared')), input, { kind: 'uniform', maxRun: 300 });
      const packed = await e.compress(input, { path: 'cpu', chunkBytes: 4 << 20, codec: 'rle+huffman' });
      expect(Buffer.compare(await e.compress(input, { path: 'gpu', chunkBytes: 4 << 20, codec: 'rle+huffman' }), packed)).toBe(0);
      const back = await e.decompress(packed, { to: 'device', path: 'gpu' });
      expect(sameElements(await e.download(back), input)).toBe(true);
      back.destroy();
    } finally {
      await e.destroy();
    }
  });

  gpuIt('i8, i16 and f16 on the GPU path: device arrays, compress from them, decode to them', async () => {
    const rng = new Rng(caseSeed('engine gpu v4 types'));
    const i8 = new Int8Array(30_001);
    fillRuns(rng, i8, { kind: 'uniform', maxRun: 12 });
    // an i16 image of 96 x 80 x 2 (a smooth ramp with noise: the shape's predictor pays)
    const i16 = new Int16Array(96 * 80 * 2).map((_, i) => ((i >> 1) % 80) * 40 - Math.floor(i / 160) * 30 - 2000 + (rng.nextU32() % 5));
    // f16 bits: half-precision values of a slow wave, as a Uint16Array recorded as f16
    const f16 = new Uint16Array(20_000).map((_, i) => 0x3c00 + Math.round(200 * Math.sin(i / 90)));
    const cases: [string, ParleArray, { type?: 'f16'; shape?: number[] }, string][] = [
      ['i8', i8, {}, 'i8'],
      ['i16 with a shape', i16, { shape: [96, 80, 2] }, 'i16'],
      ['f16 bits', f16, { type: 'f16' }, 'f16'],
    ];
    for (const [what, input, opts, type] of cases) {
      const device = await engine.upload(input);
      expect(device.type, what).toBe(input instanceof Uint16Array ? 'u16' : type);
      expect(sameElements(await engine.download(device), input), `${what}: download`).toBe(true);
      const viaGpu = await engine.compress(device, { path: 'gpu', chunkBytes: 8192, ...opts });
      const report = engine.inspect(viaGpu);
      expect(report.type, what).toBe(type);
      if (opts.shape !== undefined)
        expect(
          report.chunks.some((c) => c.encoding.startsWith('predict')),
          `${what}: predicted chunks`,
        ).toBe(true);
      // the CPU decodes what the GPU wrote, the GPU what either wrote
      const viaCpu = await engine.compress(input, { path: 'cpu', chunkBytes: 8192, ...opts });
      for (const [from, container] of [
        ['gpu', viaGpu],
        ['cpu', viaCpu],
      ] as const) {
        expect(sameElements(await engine.decompress(container, { path: 'cpu' }), input), `${what}, ${from}'s: CPU decode`).toBe(true);
        const back = await engine.decompress(container, { path: 'gpu', to: 'device' });
        expect(back.type, `${what}, ${from}'s`).toBe(type);
        expect(sameElements(await engine.download(back), input), `${what}, ${from}'s: GPU decode`).toBe(true);
        back.destroy();
      }
      // a fixed pipeline: the CPU path's bytes; a container on the device decodes there
      const fixed = { path: 'gpu', chunkBytes: 8192, codec: 'delta+rle+huffman', ...opts } as const;
      expect(Buffer.compare(await engine.compress(device, fixed), await engine.compress(input, { ...fixed, path: 'cpu' })), what).toBe(0);
      const resident = await engine.compress(device, { path: 'gpu', to: 'device', chunkBytes: 8192, ...opts });
      const back = await engine.decompress(resident, { to: 'device' });
      expect(sameElements(await engine.download(back), input), `${what}: device container`).toBe(true);
      for (const d of [device, resident, back]) d.destroy();
    }
    // the GPU's scan keeps its 32-bit types
    const i16Device = await engine.upload(i16);
    await expect(engine.scan(i16Device as never, { path: 'gpu' })).rejects.toMatchObject({ code: ErrorCodes.UNSUPPORTED_TYPE });
    i16Device.destroy();
  });

  gpuIt(
    '8-byte elements on the GPU: compressed (their words predicted, bits, float order and decimal maps; f64 quantized) and decoded (every map, quantized chunks); the primitives through the CPU',
    async () => {
      const rng = new Rng(caseSeed('engine gpu 8-byte'));
      // a grid of doubles that are not decimals (float order), records of signed integers (bits),
      // coordinates of three decimals (the decimal map), the grid within an error bound (quantized
      // chunks of f64: quantized and decoded on the GPU)
      const grid = Float64Array.from({ length: 64 * 100 }, (_, i) => Math.sin(i / 70) * Math.exp((i % 100) / 50) * (i % 7 === 0 ? -1 : 1));
      const records = BigInt64Array.from(
        { length: 6000 },
        (_, i) => BigInt((i >> 1) * (i % 2 === 0 ? 3 : -7) + (rng.nextU32() % 4)) << 20n,
      );
      // (with a few exceptions: NaN, -0, a value that is no decimal of 3 digits)
      const decimals = Float64Array.from({ length: 6000 }, (_, i) =>
        i % 1001 === 500 ? [NaN, -0, Math.PI][i % 3] : Math.round(1000 * (50 * Math.sin(i / 30) + (rng.nextU32() % 100) / 10)) / 1000,
      );
      const cases: [string, ParleArray, { shape?: number[]; errorBound?: { abs: number } }, string][] = [
        ['f64 grid', grid, { shape: [64, 100] }, 'float-order'],
        ['i64 records', records, { shape: [3000, 2] }, 'predict('],
        ['f64 decimals', decimals, {}, 'decimal'],
        ['f64 within 0.001', grid, { errorBound: { abs: 1e-3 } }, 'quantize'],
      ];
      for (const [what, original, opts, expected] of cases) {
        const container = await engine.compress(original, { chunkBytes: 16384, ...opts });
        // what the CPU decodes: the input (lossless), or the quantized grid
        const input = (await engine.decompress(container, { path: 'cpu' })) as ParleArray;
        if (opts.errorBound === undefined) expect(sameElements(input, original), `${what}: the CPU's decode`).toBe(true);
        expect(
          engine.inspect(container).chunks.some((c) => c.encoding.includes(expected)),
          `${what}: ${expected}`,
        ).toBe(true);
        // the GPU's own decode takes it (none through the CPU)
        const { header, chunks } = walkChunks(readAtBytes(container), container.length);
        expect(chunksOnDevice(readAtBytes(container), header, chunks), `${what}: decoded on the GPU`).toBe(true);
        const back = await engine.decompress(container, { path: 'gpu', to: 'device' });
        expect(back.type, what).toBe(engine.inspect(container).type);
        expect(sameElements(await engine.download(back), input), `${what}: to the device`).toBe(true);
        // a container on the device; a list of two into one array
        const resident = await engine.upload(container);
        const fromResident = await engine.decompress(resident, { to: 'device' });
        expect(sameElements(await engine.download(fromResident), input), `${what}: a device container`).toBe(true);
        const both = await engine.decompress([container, container], { to: 'device' });
        const twice = await engine.download(both);
        expect(sameElements(twice.subarray(0, input.length) as ParleArray, input), `${what}: a list`).toBe(true);
        expect(sameElements(twice.subarray(input.length) as ParleArray, input), `${what}: a list`).toBe(true);
        // compress from a device array of 8-byte elements on the GPU path: its predicted chunks
        // written there (bits, float order, decimal), f64's quantized too; to the device, the same
        // bytes
        const device = await engine.upload(original);
        const onGpu = await engine.compress(device, { path: 'gpu', chunkBytes: 16384, ...opts });
        const encodings = engine.inspect(onGpu).chunks.map((c) => c.encoding);
        expect(encodings.filter((e) => e.includes(expected)).length, `${what}: the GPU's chunks`).toBeGreaterThan(0);
        expect(onGpu.length, `${what}: within 1 % of the CPU path's size`).toBeLessThan(container.length * 1.01);
        for (const path of ['cpu', 'gpu'] as const) {
          expect(
            sameElements((await engine.decompress(onGpu, { path })) as ParleArray, input),
            `${what}: the GPU's container, ${path}`,
          ).toBe(true);
        }
        const toDevice = await engine.compress(device, { path: 'gpu', to: 'device', chunkBytes: 16384, ...opts });
        expect(Buffer.compare(bytesOf(await engine.download(toDevice)), onGpu), `${what}: to the device`).toBe(0);
        for (const d of [back, resident, fromResident, both, device, toDevice]) d.destroy();
      }
      // a fixed codec the GPU codes, on each word plane of 8-byte elements (flat and shaped): the
      // CPU path's bytes
      for (const [original, shape] of [
        [grid, undefined],
        [records, [3000, 2]],
        [decimals, [60, 100]],
      ] as const) {
        const device = await engine.upload(original);
        for (const codec of ['huffman', 'delta+shuffle+huffman', 'delta+pack', 'rle+huffman']) {
          const opts = { codec, chunkBytes: 16384, ...(shape ? { shape: [...shape] } : {}) };
          const cpu = await engine.compress(original, { ...opts, path: 'cpu' });
          const gpu = await engine.compress(device, { ...opts, path: 'gpu' });
          expect(Buffer.compare(gpu, cpu), `${original.constructor.name} ${codec}: the CPU path's bytes`).toBe(0);
          expect(
            engine.inspect(gpu).chunks.some((c) => c.encoding.startsWith('predict(')),
            `${codec}: word planes`,
          ).toBe(true);
        }
        device.destroy();
      }
      // the primitives on a DeviceArray of 8-byte elements: the CPU path's (read back first),
      // results delivered to the device; path 'gpu' is UNSUPPORTED_TYPE
      const keys = await engine.upload(grid);
      // compress of a host array of 8-byte elements stays on the CPU path under auto
      expect(engine.explain('compress', grid).reason).toMatch(/f64 elements on the host runs on the CPU path/);
      expect(engine.explain('compress', keys).predictedMs.gpu).not.toBeNull();
      const sorted = await engine.sort(keys);
      expect(sorted).toBeInstanceOf(DeviceArray);
      expect(
        sameElements(
          await engine.download(sorted as DeviceArray),
          grid.slice().sort((a, b) => a - b),
        ),
      ).toBe(true);
      expect(engine.explain('sort', keys).reason).toMatch(/f64 elements has no GPU kernel/);
      await expect(engine.sort(keys, { path: 'gpu' })).rejects.toMatchObject({ code: ErrorCodes.UNSUPPORTED_TYPE });
      const runs = await engine.rleEncode(keys);
      expect((await engine.download(runs.values)).length).toBe(grid.length);
      for (const d of [keys, sorted as DeviceArray, runs.values, runs.lengths]) d.destroy();
      // i16 runs on the GPU's rle from the host, as the CPU path's
      const pcm = new Int16Array(5000).map((_, i) => (i >> 4) - 100);
      const gpuRuns = await engine.rleEncode(pcm, { path: 'gpu' });
      const cpuRuns = await engine.rleEncode(pcm, { path: 'cpu' });
      expect(sameElements(gpuRuns.values, cpuRuns.values) && sameElements(gpuRuns.lengths, cpuRuns.lengths)).toBe(true);
    },
  );

  gpuIt('decompress on the GPU path: every type, rle and stored chunks, equal to the CPU decode', async () => {
    const rng = new Rng(caseSeed('engine gpu decompress'));
    const make: [string, ParleArray][] = [];
    for (const [Ctor, n] of [
      [Uint8Array, 70_003],
      [Uint16Array, 33_001],
      [Uint32Array, 20_000],
      [Int32Array, 5],
      [Float32Array, 12_345],
    ] as const) {
      const a = new Ctor(n);
      fillRuns(rng, a, { kind: 'uniform', maxRun: 25 });
      make.push([Ctor.name, a]);
    }
    // one chunk of noise between runs: the writer stores it raw (a stored chunk)
    const mixed = new Uint8Array(3 * 4096);
    fillRuns(rng, mixed, { kind: 'uniform', maxRun: 30 });
    for (let i = 4096; i < 8192; i++) mixed[i] = rng.nextU32() & 0xff;
    make.push(['u8 with a stored chunk', mixed]);
    make.push(['empty', new Uint32Array(0)]);
    for (const [what, input] of make) {
      const packed = await engine.compress(input, { chunkBytes: 4096 });
      const back = await engine.decompress(packed, { to: 'device', path: 'gpu' });
      expect(back, what).toBeInstanceOf(DeviceArray);
      expect(sameElements(await engine.download(back), input), what).toBe(true);
      back.destroy();
      const toHost = await engine.decompress(packed, { path: 'gpu' });
      expect(sameElements(toHost as ParleArray, input), `${what} to the host`).toBe(true);
    }
  });

  gpuIt(
    'Huffman chunks with hashes that pass: a bad code or bad segment offsets are CORRUPT on the GPU path (its kernel checks them), as on the CPU path',
    async () => {
      // one chunk of 5000 u8 coded huffman: a directory (decoded, encoded bytes) and the stream
      const input = new Uint8Array(5000).map((_, i) => (i * 7) % 23);
      const good = ref.huffmanEncodeStream(input, 10);
      expect(good[0]).toBe(2);
      const container = (stream: Uint8Array) => {
        const dir = new DataView(new ArrayBuffer(8));
        dir.setUint32(0, input.length, true);
        dir.setUint32(4, stream.length, true);
        const payload = Buffer.concat([new Uint8Array(dir.buffer), stream]);
        const entry = writeEntry({
          elementCount: input.length,
          encoding: Encoding.Pipeline,
          runCount: 0,
          payloadBytes: payload.length,
          payloadChecksum: BigInt(ref.treeHash(payload)),
          elementsChecksum: BigInt(ref.treeHash(input)),
          stages: [4],
          streamCount: 1,
        });
        return Buffer.concat([writeHeader(makeHeader('u8', input.length, input.length)), entry, payload]);
      };
      const back = await engine.decompress(container(good), { to: 'device', path: 'gpu' });
      expect(sameElements(await engine.download(back), input)).toBe(true);
      back.destroy();
      // symbol 0's code length changed (the code is no longer complete); a length of 12; the last
      // segment's end offset one short of the stream's end (its last byte dropped)
      const kraft = good.slice();
      kraft[3] = (kraft[3] & 0xf0) | (((kraft[3] & 15) % 11) + 1);
      const long = good.slice();
      long[3] = (long[3] & 0xf0) | 12;
      const offsetsAt = 3 + ((good[2] + 2) >> 1);
      const short = good.slice(0, good.length - 1);
      const lastEnd = offsetsAt + 4 * (Math.ceil(input.length / 1024) - 1);
      new DataView(short.buffer).setUint32(lastEnd, new DataView(short.buffer).getUint32(lastEnd, true) - 1, true);
      for (const [what, stream, why] of [
        ['an incomplete or over-full code', kraft, /code lengths/],
        ['a code length of 12', long, /code lengths/],
        ['a last segment that ends before the stream', short, /segment end offsets|bits past its end/],
      ] as [string, Uint8Array, RegExp][]) {
        const bytes = container(stream);
        await expect(engine.decompress(bytes, { path: 'cpu' }), `CPU: ${what}`).rejects.toMatchObject({ code: ErrorCodes.CORRUPT });
        await expect(engine.decompress(bytes, { to: 'device', path: 'gpu' }), `GPU: ${what}`).rejects.toMatchObject({
          code: ErrorCodes.CORRUPT,
          message: expect.stringMatching(why),
        });
      }
      // and the next decode is right
      const again = await engine.decompress(container(good), { to: 'device', path: 'gpu' });
      expect(sameElements(await engine.download(again), input)).toBe(true);
      again.destroy();
    },
  );

  gpuIt('rle chunks decoded on the GPU: hostile run lengths are CORRUPT, as on the CPU path; non-minimal LEB128 decodes', async () => {
    // one chunk of 64 u8: 32 x 5 then 32 x 7, coded rle: values [5, 7], lengths - 1 as LEB128
    const input = new Uint8Array(64).map((_, i) => (i < 32 ? 5 : 7));
    const container = (leb: number[], values = [5, 7], payloadChecksum?: bigint) => {
      const dir = new DataView(new ArrayBuffer(16));
      dir.setUint32(0, values.length, true);
      dir.setUint32(4, values.length, true);
      dir.setUint32(8, leb.length, true);
      dir.setUint32(12, leb.length, true);
      const payload = Buffer.concat([new Uint8Array(dir.buffer), Uint8Array.from(values), Uint8Array.from(leb)]);
      const entry = writeEntry({
        elementCount: 64,
        encoding: Encoding.Pipeline,
        runCount: 0,
        payloadBytes: payload.length,
        payloadChecksum: payloadChecksum ?? BigInt(ref.treeHash(payload)),
        elementsChecksum: BigInt(ref.treeHash(input)),
        stages: [3],
        streamCount: 2,
      });
      return Buffer.concat([writeHeader(makeHeader('u8', 64, 64)), entry, payload]);
    };
    const good = container([31, 31]);
    expect(sameElements(await engine.decompress(good, { path: 'cpu' }), input)).toBe(true);
    const back = await engine.decompress(good, { to: 'device', path: 'gpu' });
    expect(sameElements(await engine.download(back), input)).toBe(true);
    back.destroy();
    // (length - 1) = 31 as the non-minimal [0x9f 0x00], which the CPU decoder accepts too
    const loose = await engine.decompress(container([0x80 | 31, 0x00, 31]), { to: 'device', path: 'gpu' });
    expect(sameElements(await engine.download(loose), input)).toBe(true);
    loose.destroy();
    for (const [what, leb] of [
      ['lengths that sum past the chunk', [31, 32]],
      ['lengths that sum short of it', [31, 30]],
      ['a run longer than the chunk', [31, 99]],
      ['an unterminated value', [31, 0x83]],
      ['six LEB128 bytes', [31, 0x80 | 31, 0x80, 0x80, 0x80, 0x80, 0x00]],
      ['a value of 2^32 - 1', [31, 0xff, 0xff, 0xff, 0xff, 0x0f]],
      ['a fifth byte past 32 bits', [31, 0x80, 0x80, 0x80, 0x80, 0x10]],
      ['three values for two runs', [30, 0, 31]],
      ['one value for two runs', [63]],
      // only the LEB128 check sees this one: the lengths themselves are right
      ['a continuation byte after the last value', [31, 31, 0x80]],
    ] as [string, number[]][]) {
      const bytes = container(leb);
      await expect(engine.decompress(bytes, { path: 'cpu' }), `CPU: ${what}`).rejects.toMatchObject({ code: ErrorCodes.CORRUPT });
      await expect(engine.decompress(bytes, { to: 'device', path: 'gpu' }), `GPU: ${what}`).rejects.toMatchObject({
        code: ErrorCodes.CORRUPT,
      });
    }
    // lengths that lie in a payload whose hash fails are reported as the hash (checked first), on
    // both paths, and the next decode is right
    const both = container([31, 32], [5, 7], 12345n);
    await expect(engine.decompress(both, { path: 'cpu' })).rejects.toMatchObject({ code: ErrorCodes.CHECKSUM_MISMATCH });
    await expect(engine.decompress(both, { to: 'device', path: 'gpu' })).rejects.toMatchObject({ code: ErrorCodes.CHECKSUM_MISMATCH });
    const after = await engine.decompress(good, { to: 'device', path: 'gpu' });
    expect(sameElements(await engine.download(after), input)).toBe(true);
    after.destroy();
  });

  gpuIt('version 2 on the GPU path: every pipeline of every type decodes to the CPU result, hashes checked on the GPU', async () => {
    const rng = new Rng(caseSeed('engine gpu decompress v2'));
    const stagesFor = (width: number) => {
      const names = width === 1 ? ['delta', 'rle', 'huffman'] : ['delta', 'shuffle', 'rle', 'huffman'];
      const out: string[] = [];
      for (let mask = 1; mask < 1 << names.length; mask++) out.push(names.filter((_, i) => mask & (1 << i)).join('+'));
      return [...out, 'stored', 'auto'];
    };
    for (const [Ctor, n] of [
      [Uint8Array, 30_003],
      [Uint16Array, 12_001],
      [Uint32Array, 7_000],
      [Float32Array, 5_001],
    ] as const) {
      const input = new Ctor(n);
      fillRuns(rng, input, { kind: 'uniform', maxRun: 6 });
      for (const codec of stagesFor(Ctor.BYTES_PER_ELEMENT)) {
        const packed = await engine.compress(input, { codec, chunkBytes: 8192 });
        const back = await engine.decompress(packed, { to: 'device', path: 'gpu' });
        expect(sameElements(await engine.download(back), input), `${Ctor.name} ${codec}`).toBe(true);
        back.destroy();
      }
    }
    // a flipped bit in a decoded element is caught by the GPU's element hash: flip one inside a
    // Huffman payload of a one-chunk container and recompute nothing (the payload hash catches it)
    const input = new Uint8Array(20_000).map((_, i) => (i * 7) & 63);
    const packed = await engine.compress(input, { codec: 'huffman' });
    const bad = packed.slice();
    bad[bad.length - 5] ^= 1;
    await expect(engine.decompress(bad, { to: 'device', path: 'gpu' })).rejects.toMatchObject({ code: ErrorCodes.CHECKSUM_MISMATCH });
    // odd chunk lengths (outputs off 4-byte boundaries) are staged on the GPU and still decode
    const odd = new Uint8Array(5000).map((_, i) => i >> 4);
    const oddPacked = await engine.compress(odd, { chunkBytes: 1025 });
    expect(sameElements(await engine.download(await engine.decompress(oddPacked, { to: 'device', path: 'gpu' })), odd)).toBe(true);
  });

  gpuIt('pack chunks decode on the GPU path: every pack pipeline of every type, exceptions, zigzag, partial blocks', async () => {
    const rng = new Rng(caseSeed('engine gpu decompress pack'));
    const pipelines = (width: number) => {
      const names = width === 1 ? ['delta', 'rle'] : ['delta', 'shuffle', 'rle'];
      const out = ['pack'];
      for (let mask = 1; mask < 1 << names.length; mask++) out.push([...names.filter((_, i) => mask & (1 << i)), 'pack'].join('+'));
      return out;
    };
    for (const [Ctor, n] of [
      [Uint8Array, 30_003],
      [Uint16Array, 12_001],
      [Int32Array, 7_001],
      [Float32Array, 5_001],
    ] as const) {
      const w = Ctor.BYTES_PER_ELEMENT;
      // a slow walk up and down (small deltas of both signs: zigzag), with outliers (exceptions) and runs
      const bytes = new Uint8Array(n * w);
      let v = 1000;
      for (let i = 0; i < bytes.length; i++) {
        if (rng.intBetween(0, 7) !== 0) v += rng.intBetween(-3, 3);
        bytes[i] = rng.intBetween(0, 49) === 0 ? rng.intBetween(0, 255) : v & (i % w === w - 1 ? 3 : 0xff);
      }
      const input = new Ctor(bytes.buffer);
      for (const codec of pipelines(w)) {
        const container = await engine.compress(input, { codec, chunkBytes: 8192 });
        const back = await engine.decompress(container, { to: 'device', path: 'gpu' });
        expect(sameElements(await engine.download(back), input), `${Ctor.name} ${codec}`).toBe(true);
        back.destroy();
      }
    }
    // a block header a reader rejects (bit 6 of the first block's first byte, payload hash not
    // made right again): the payload hash speaks first, as on the CPU path
    const input = new Uint16Array(5000).map((_, i) => 1000 + (i % 37));
    const container = await engine.compress(input, { codec: 'delta+pack' });
    const firstBlock = HEADER_BYTES + ENTRY_BYTES + 8; // after the first entry and its one-stream directory
    expect(container[firstBlock] & 0x40).toBe(0);
    const bad = container.slice();
    bad[firstBlock] |= 0x40;
    await expect(engine.decompress(bad, { to: 'device', path: 'gpu' })).rejects.toMatchObject({ code: ErrorCodes.CHECKSUM_MISMATCH });
    await expect(engine.decompress(bad, { path: 'cpu' })).rejects.toMatchObject({ code: ErrorCodes.CHECKSUM_MISMATCH });
    // the same lies with the hashes made right again: the walk of the block headers (on the GPU)
    // rejects them, CORRUPT naming the stream, as the CPU decoder does
    const lies: [string, (b: Uint8Array) => void][] = [
      ['bit 6 set', (b) => (b[firstBlock] |= 0x40)],
      ['a bit width over 16', (b) => (b[firstBlock] = (b[firstBlock] & 0x80) | 17)],
      ['more exceptions than elements', (b) => (b[firstBlock + 1] = 255)],
      ['a wider first block (past the stream)', (b) => (b[firstBlock] = (b[firstBlock] & 0x80) | 16)],
    ];
    for (const [what, lie] of lies) {
      const liar = container.slice();
      lie(liar);
      reseal(liar, HEADER_BYTES);
      const e = await engine.decompress(liar, { to: 'device', path: 'gpu' }).then(
        () => undefined,
        (err: unknown) => err as { code?: string; message?: string },
      );
      expect(e?.code, `GPU: ${what}`).toBe(ErrorCodes.CORRUPT);
      expect(e?.message, `GPU: ${what}`).toMatch(/pack stream \d+/);
      await expect(engine.decompress(liar, { path: 'cpu' }), `CPU: ${what}`).rejects.toMatchObject({ code: ErrorCodes.CORRUPT });
    }
  });

  /** Each fixture of test/fixtures/<version>/ decodes on the GPU path to its .raw. */
  async function decodeFixturesOnGpu(
    version: 'v1' | 'v2',
    fixtures: readonly (readonly [
      string,
      Uint8ArrayConstructor | Uint16ArrayConstructor | Int32ArrayConstructor | Float32ArrayConstructor,
    ])[],
  ): Promise<void> {
    const dir = new URL(`./fixtures/${version}/`, import.meta.url);
    for (const [name, Ctor] of fixtures) {
      const packed = new Uint8Array(await readFile(new URL(`${name}.parle`, dir)));
      const raw = new Uint8Array(await readFile(new URL(`${name}.raw`, dir)));
      const back = await engine.decompress(packed, { to: 'device', path: 'gpu' });
      expect(
        sameElements(await engine.download(back), new Ctor(raw.buffer, raw.byteOffset, raw.byteLength / Ctor.BYTES_PER_ELEMENT)),
        name,
      ).toBe(true);
      back.destroy();
    }
  }

  gpuIt(
    'version-2 fixtures decode on the GPU path; mutated version-3 containers (a fuzz sample) fail with a code or decode exactly',
    async () => {
      await decodeFixturesOnGpu('v2', [
        ['u8-camera', Uint8Array],
        ['u16-mri', Uint16Array],
        ['i32-steps', Int32Array],
        ['f32-nan', Float32Array],
        ['f32-lossy', Float32Array],
      ]);
      const seed = caseSeed('engine gpu fuzz v3');
      const rng = new Rng(seed);
      const samples = await makeSamples(engine);
      const cases = Number(process.env.PARLE_GPU_FUZZ_CASES ?? 300);
      for (let i = 0; i < cases; i++) {
        const s = samples[i % samples.length];
        const { bytes, what } = mutate(rng, s);
        const context = `case ${i}, ${s.name}: ${what}, ${describeSeed(seed)}`;
        const outcome = await engine.decompress(bytes, { to: 'device', path: 'gpu', maxElements: s.input.length }).then(
          (d) => d,
          (e: unknown) => e,
        );
        if (outcome instanceof DeviceArray) {
          const back = await engine.download(outcome);
          outcome.destroy();
          // exactly the untouched container's element bytes (the lossy sample's reconstruction;
          // the type is the header's, which a resealed lie may change between types of one width)
          expect(Buffer.compare(bytesOf(back), bytesOf(s.decoded)), `${context}: decoded to other data`).toBe(0);
        } else {
          const code = (outcome as { code?: string }).code;
          expect(DEVICE_FUZZ_FAILURES, `${context}: ${String(outcome)}`).toContain(code);
        }
      }
      // the device still works
      const check = new Uint8Array(1000).map((_, i) => i >> 3);
      const round = await engine.decompress(await engine.compress(check), { to: 'device', path: 'gpu' });
      expect(sameElements(await engine.download(round), check)).toBe(true);
      round.destroy();
    },
  );

  gpuIt('version-1 fixtures decode on the GPU path', async () => {
    await decodeFixturesOnGpu('v1', [
      ['u8-runs', Uint8Array],
      ['u16-noisy', Uint16Array],
      ['f32-nan', Float32Array],
      ['i32-steps', Int32Array],
    ]);
  });

  gpuIt(
    'version-4 containers with a shape decode on the GPU path, predicted chunks or not, from host memory and from the device',
    async () => {
      // a label-like volume: runs the plain pipelines code to a twelfth, so no chunk is predicted
      const labels = new Uint16Array(8 * 40 * 64).map((_, i) => (Math.floor(i / 5000) % 3) * 7 + (i % 64 > 40 ? 1 : 0));
      // a smooth grid: predicted (stage 7)
      const grid = new Float32Array(96 * 128).map((_, i) => Math.sin(Math.floor(i / 128) / 11) * Math.cos((i % 128) / 13) * 300);
      for (const [input, shape, predicted] of [
        [labels, [8, 40, 64], false],
        [grid, [96, 128], true],
      ] as const) {
        const packed = await engine.compress(input, { shape, chunkBytes: 8192, path: 'cpu' });
        expect(engine.inspect(packed).shape).toEqual(shape);
        expect(
          engine.inspect(packed).chunks.some((c) => c.encoding.startsWith('predict')),
          JSON.stringify(shape),
        ).toBe(predicted);
        const fromHost = await engine.decompress(packed, { to: 'device', path: 'gpu' });
        const onDevice = await engine.upload(packed);
        const fromDevice = await engine.decompress(onDevice, { to: 'device' });
        try {
          for (const back of [fromHost, fromDevice]) {
            const host = await engine.download(back);
            expect(Buffer.compare(Buffer.from(bytesOf(host)), Buffer.from(bytesOf(input))), JSON.stringify(shape)).toBe(0);
          }
        } finally {
          fromHost.destroy();
          fromDevice.destroy();
          onDevice.destroy();
        }
      }
    },
  );

  gpuIt('decompress on the GPU path checks payload checksums and the table like the CPU path', async () => {
    const input = new Uint8Array(50_000);
    fillRuns(new Rng(caseSeed('engine gpu decompress corrupt')), input, { kind: 'uniform', maxRun: 20 });
    const packed = await engine.compress(input, { chunkBytes: 8192 });
    const flipped = packed.slice();
    const index = 8 * Math.ceil(input.length / 8192) + 4; // the chunk index after the last payload
    flipped[packed.length - index - 3] ^= 0x10; // inside the last payload
    await expect(engine.decompress(flipped, { to: 'device', path: 'gpu' })).rejects.toMatchObject({ code: ErrorCodes.CHECKSUM_MISMATCH });
    const badIndex = packed.slice();
    badIndex[packed.length - index + 1] ^= 0x10; // an offset in the chunk index
    await expect(engine.decompress(badIndex, { to: 'device', path: 'gpu' })).rejects.toMatchObject({ code: ErrorCodes.CORRUPT });
    await expect(engine.decompress(packed.subarray(0, packed.length - 1), { to: 'device', path: 'gpu' })).rejects.toMatchObject({
      code: ErrorCodes.TRUNCATED,
    });
    await expect(engine.decompress(packed, { to: 'device', path: 'gpu', maxElements: 10 })).rejects.toMatchObject({
      code: ErrorCodes.LIMIT_EXCEEDED,
    });
    await expect(engine.decompress(new Uint8Array(40), { to: 'device', path: 'gpu' })).rejects.toMatchObject({
      code: ErrorCodes.NOT_PARLE,
    });
    // explain sizes a container by its header: the decoded bytes
    const e = engine.explain('decompress', packed, { to: 'device' });
    expect(e.predictedMs.gpu).not.toBeNull();
    expect(e.predictedMs.cpu).toBeGreaterThan(0);
  });

  gpuIt("out on the GPU path: scan, rleDecode and decompress download into the caller's array", async () => {
    const input = new Uint16Array(30_001);
    fillRuns(new Rng(caseSeed('engine gpu out')), input, { kind: 'uniform', maxRun: 12 });
    const runs = await engine.rleEncode(input, { path: 'cpu' });
    const out = new Uint16Array(input.length);
    expect(await engine.rleDecode(runs, { path: 'gpu', out })).toBe(out);
    expect(sameElements(out, input)).toBe(true);
    const packed = await engine.compress(input);
    const out2 = new Uint16Array(input.length);
    expect(await engine.decompress(packed, { path: 'gpu', out: out2 })).toBe(out2);
    expect(sameElements(out2, input)).toBe(true);
    const u = new Uint32Array(5000).map((_, i) => i);
    const sums = new Uint32Array(5000);
    expect(await engine.scan(u, { path: 'gpu', inclusive: true, out: sums })).toBe(sums);
    expect(sameElements(sums, await engine.scan(u, { path: 'cpu', inclusive: true }))).toBe(true);
  });

  gpuIt('download into a caller array, and zero-copy downloadMapped until release', async () => {
    const input = new Float32Array(10_003).map((_, i) => i * 0.5 - 7);
    const device = await engine.upload(input);
    const into = new Float32Array(input.length + 5).fill(-1);
    expect(await engine.download(device, { into })).toBe(into);
    expect(sameElements(into.subarray(0, input.length), input)).toBe(true);
    expect(into[input.length]).toBe(-1); // nothing past the array's length is written
    await expect(engine.download(device, { into: new Float32Array(3) })).rejects.toMatchObject({ code: ErrorCodes.INVALID_ARGUMENT });
    await expect(engine.download(device, { into: new Uint32Array(input.length) })).rejects.toMatchObject({
      code: ErrorCodes.INVALID_ARGUMENT,
    });
    const lease = await engine.downloadMapped(device);
    expect(lease.array).toBeInstanceOf(Float32Array);
    expect(sameElements(lease.array, input)).toBe(true);
    lease.release();
    expect(lease.array.length).toBe(0); // detached: the mapping is gone
    lease.release(); // a second release is harmless
    // the kept buffer serves the next call of the same size, with the new contents
    const scanned = await engine.scan(await engine.upload(new Uint32Array(10_003).fill(1)), { path: 'gpu', inclusive: true });
    const again = await engine.downloadMapped(scanned as DeviceArray);
    expect(again.array[10_002]).toBe(10_003);
    again.release();
    device.destroy();
    await expect(engine.downloadMapped(device)).rejects.toMatchObject({ code: ErrorCodes.INVALID_ARGUMENT });
  });

  gpuIt('gpuPoolBytes: 0 keeps no GPU buffers after ops', async () => {
    const e = await createEngine({ workers: 0, gpu: 'require', calibration: 'skip', gpuPoolBytes: 0 });
    try {
      const d = await e.upload(new Uint32Array(5000).fill(2));
      const out = await e.scan(d, { path: 'gpu' });
      expect(Array.from((await e.download(out)).subarray(0, 3))).toEqual([0, 2, 4]); // exclusive by default
      out.destroy();
      d.destroy();
      expect((e as unknown as { gpuContext: { poolStats: { keptBytes: number; limitBytes: number } } }).gpuContext.poolStats).toMatchObject(
        {
          keptBytes: 0,
          limitBytes: 0,
        },
      );
    } finally {
      await e.destroy();
    }
  });

  gpuIt('explain gives both predictions and a reason; auto follows it', async () => {
    const input = new Uint32Array(1 << 16);
    const host = engine.explain('scan', input);
    expect(host.inputLocation).toBe('host');
    expect(host.predictedMs.gpu).not.toBeNull();
    expect(host.predictedMs.cpu).toBeGreaterThan(0);
    expect(host.reason).toMatch(/ms/);
    const device = await engine.upload(input);
    const fromDevice = engine.explain('scan', device, { to: 'device' });
    expect(fromDevice.inputLocation).toBe('device');
    expect(fromDevice.resultLocation).toBe('device');
    // A host input and host result need two transfers on the GPU path, none on the CPU path;
    // a device input and result need two on the CPU path, none on the GPU path.
    expect(host.predictedMs.gpu! - host.predictedMs.cpu).toBeGreaterThan(fromDevice.predictedMs.gpu! - fromDevice.predictedMs.cpu);
    const result = await engine.scan(device);
    expect(result).toBeInstanceOf(DeviceArray);
    (result as DeviceArray).destroy();
    device.destroy();
  });

  gpuIt('rleDecode is predicted from the decoded size; its moves from the runs', async () => {
    const e = await createEngine({ workers: 0, gpu: 'require', calibration: 'skip' });
    try {
      const line = { fixedMs: 0, msPerByte: 1e-6 };
      const move = { fixedMs: 0, msPerByte: 1e-3 };
      e.model.rates = { ...e.model.rates, cpu: { ...e.model.rates.cpu, rleDecode: line }, readback: move, upload: move };
      const values = new Uint16Array(1000).map((_, i) => i);
      const lengths = new Uint32Array(1000).fill(64); // decodes to 64000 u16: 128000 bytes
      const host = e.explain('rleDecode', { values, lengths });
      expect(host.predictedMs.cpu).toBeCloseTo(128_000 * 1e-6, 9);
      const onDevice = { values: await e.upload(values), lengths: await e.upload(lengths) };
      // device runs, host result on the CPU path: a readback of the runs (6000 bytes) + the decode
      const fromDevice = e.explain('rleDecode', onDevice, { to: 'host' });
      expect(fromDevice.predictedMs.cpu).toBeGreaterThan(6000 * 1e-3);
      await expect(e.rleDecode(onDevice, { path: 'cpu', to: 'host' })).resolves.toHaveLength(64_000);
      onDevice.values.destroy();
      onDevice.lengths.destroy();
      expect(() => e.explain('scan', { values, lengths } as never)).toThrow(expect.objectContaining({ code: ErrorCodes.INVALID_ARGUMENT }));
    } finally {
      await e.destroy();
    }
  });

  gpuIt(
    "rleDecode: rleEncode's runs sized exactly, other device runs charged their sum's round trip, host runs in one submission",
    async () => {
      const e = await createEngine({ workers: 0, gpu: 'require', calibration: 'skip' });
      try {
        e.model.rates = {
          ...e.model.rates,
          gpu: { ...e.model.rates.gpu, rleDecode: { fixedMs: 1, msPerByte: 1e-9 } },
          readback: { fixedMs: 5, msPerByte: 0 },
        };
        const input = new Uint16Array(30_000).map((_, i) => i >> 5); // 938 runs, 60000 bytes decoded
        const encoded = await e.rleEncode(await e.upload(input), { path: 'gpu' });
        const known = e.explain('rleDecode', encoded, { to: 'device' }).predictedMs.gpu!;
        expect(known).toBeCloseTo(1 + 60_000 * 1e-9, 9); // the decoded size exact, no round trip
        const host = { values: await e.download(encoded.values), lengths: await e.download(encoded.lengths) };
        const uploaded = { values: await e.upload(host.values), lengths: await e.upload(host.lengths) };
        const unknown = e.explain('rleDecode', uploaded, { to: 'device' }).predictedMs.gpu!;
        expect(unknown - 1).toBeGreaterThanOrEqual(5); // the sum's readback
        expect(unknown - 1).toBeLessThan(5.01);
        // submissions of the GPU path: host runs (summed on the host) and rleEncode's in one; uploaded runs in two
        const ctx = (e as unknown as { gpuContext: { encoderHooks: unknown } }).gpuContext;
        const labels: string[] = [];
        ctx.encoderHooks = { begin: (enc: GPUCommandEncoder) => labels.push(enc.label), end: () => undefined };
        const decoded = [
          await e.rleDecode(host, { path: 'gpu', to: 'host' }),
          await e.download(await e.rleDecode(encoded, { path: 'gpu' })),
          await e.download(await e.rleDecode(uploaded, { path: 'gpu' })),
        ];
        ctx.encoderHooks = null;
        for (const d of decoded) expect(sameElements(d, input)).toBe(true);
        const decodes = labels.filter((l) => /rle-decode/.test(l));
        expect(decodes).toEqual(['parle:rle-decode', 'parle:rle-decode', 'parle:rle-decode-scan', 'parle:rle-decode-expand']);
      } finally {
        await e.destroy();
      }
    },
  );

  gpuIt('a device lost under an op auto sent to the GPU: host data falls back to the CPU', async () => {
    const lossy = await createEngine({ workers: 0, gpu: 'require', calibration: 'skip' });
    try {
      // Make the model prefer the GPU even for host data.
      const fast = { fixedMs: 0, msPerByte: 1e-12 };
      lossy.model.rates = {
        ...lossy.model.rates,
        upload: fast,
        readback: fast,
        gpu: { rleEncode: fast, rleDecode: fast, scan: fast, sort: fast },
      };
      const input = new Uint32Array(5000).map((_, i) => i >> 3);
      expect(lossy.explain('scan', input).path).toBe('gpu');
      const pending = lossy.scan(input, { inclusive: true });
      (lossy as unknown as { gpuContext: { device: GPUDevice } }).gpuContext.device.destroy();
      const result = await pending;
      expect(sameElements(result, await engine.scan(input, { inclusive: true, path: 'cpu' }))).toBe(true);
      // An explicit GPU path fails with DEVICE_LOST; device data cannot fall back.
      await expect(lossy.scan(input, { path: 'gpu' })).rejects.toMatchObject({ code: ErrorCodes.DEVICE_LOST });
    } finally {
      await lossy.destroy();
    }
  });

  gpuIt('out of GPU memory: an op auto sent to the GPU runs on the CPU; path gpu fails with OUT_OF_MEMORY', async () => {
    // gpuPoolBytes 0: every buffer is made anew (a kept one would be handed out instead)
    const e = await createEngine({ workers: 0, gpu: 'require', calibration: 'skip', gpuPoolBytes: 0 });
    try {
      const fast = { fixedMs: 0, msPerByte: 1e-12 };
      e.model.rates = { ...e.model.rates, upload: fast, readback: fast, gpu: { ...e.model.rates.gpu, rleEncode: fast } };
      const input = new Uint16Array(40_000).map((_, i) => i >> 4);
      expect(e.explain('rleEncode', input).path).toBe('gpu');
      const want = await e.rleEncode(input, { path: 'cpu' });
      type Context = { device: GPUDevice; adapterInfo: unknown; limits: { maxBufferSize: number } };
      const ctx = (e as unknown as { gpuContext: Context }).gpuContext;
      const swiftShader = /swiftshader/i.test(JSON.stringify(ctx.adapterInfo));
      // RLE encode's scratch made at 1 GiB: more than SwiftShader can allocate
      const restore = remakeBuffers(ctx.device, 'parle:rle-ends', Math.min(1 << 30, ctx.limits.maxBufferSize));
      try {
        const viaAuto = await e.rleEncode(input);
        expect(sameElements(viaAuto.values, want.values) && sameElements(viaAuto.lengths, want.lengths)).toBe(true);
        const gpu = e.rleEncode(input, { path: 'gpu' });
        if (swiftShader) await expect(gpu).rejects.toMatchObject({ code: ErrorCodes.OUT_OF_MEMORY });
        else expect(sameElements((await gpu).values, want.values)).toBe(true); // a GPU that has the memory
      } finally {
        restore();
      }
      const again = await e.rleEncode(input, { path: 'gpu' });
      expect(sameElements(again.lengths, want.lengths)).toBe(true);
    } finally {
      await e.destroy();
    }
  });

  // One real calibration (this machine's probes on the GPU, sizes capped at 1 MiB and their
  // times scaled up to the size asked: the sizes up to 256 MiB took 40-50 s of SwiftShader, and
  // past the 120 s test timeout on a loaded machine), then stand-in probes where the test is
  // about what the engine does with a calibration (load, force, redo an old record), not about
  // measuring: no timing is asserted.
  gpuIt(
    'calibration: measured once and stored; loaded by a second engine; a forced one and a record of an older format are measured again',
    async () => {
      const file = join(cacheDir, 'calibration.json');
      const engines: Engine[] = [];
      const make = async () => {
        const e = await createEngine({ workers: 1, gpu: 'require' });
        engines.push(e);
        return e;
      };
      try {
        const first = await make();
        const real = first as unknown as { probe: (gpu: unknown) => CalibrationProbe; gpuContext: unknown };
        useProbe(first, capped(real.probe(real.gpuContext), 1 << 20));
        await first.calibrate();
        expect(first.lastCalibration, 'measured').not.toBeNull();
        const stored = JSON.parse(await readFile(file, 'utf8')) as Record<string, CalibrationRecord>;
        const records = Object.values(stored);
        expect(records).toHaveLength(1);
        expect(records[0].format).toBe(CALIBRATION_FORMAT);
        expect(records[0].rates.gpu).not.toBeNull();
        const [id] = Object.keys(stored);

        // a second engine of the same key loads the record: nothing measured
        const second = await make();
        await second.calibrate();
        expect(second.lastCalibration, 'loaded, not measured').toBeNull();
        expect(second.model.rates).toEqual(first.model.rates);

        // a forced calibration measures again, and an op with a choice to make waits for it
        // (the stand-in is what measures: the engine calibrates through its probe method)
        let calls = 0;
        const fake = fakeProbe(1);
        useProbe(second, { ...fake, cpu: (op, bytes) => (calls++, fake.cpu(op, bytes)) });
        const order: string[] = [];
        const forced = second.calibrate({ force: true }).then(() => order.push('calibrated'));
        await second.scan(new Uint32Array(1000).fill(1)).then(() => order.push('scan'));
        await forced;
        expect(order).toEqual(['calibrated', 'scan']);
        expect(calls).toBeGreaterThan(0);
        expect(second.lastCalibration, 'measured').not.toBeNull();
        const forcedRecord = (JSON.parse(await readFile(file, 'utf8')) as Record<string, CalibrationRecord>)[id];
        expect(forcedRecord.measuredAt).not.toBe(stored[id].measuredAt);
        expect(forcedRecord.rates).toEqual(JSON.parse(JSON.stringify(second.model.rates)));
        expect(second.model.rates).not.toEqual(first.model.rates);

        // a record of an older format (6: the transfers' small points from their first calls,
        // before the host's code was compiled) is measured again, not used
        await writeFile(file, JSON.stringify({ [id]: { ...forcedRecord, format: 6, measuredAt: 'old' } }));
        const third = await make();
        useProbe(third, fakeProbe(2));
        await third.calibrate();
        expect(third.lastCalibration, 'measured, not loaded').not.toBeNull();
        expect(third.model.rates).not.toEqual(second.model.rates);
        const after = (JSON.parse(await readFile(file, 'utf8')) as Record<string, CalibrationRecord>)[id];
        expect(after.format).toBe(CALIBRATION_FORMAT);
        expect(after.measuredAt).not.toBe('old');
      } finally {
        for (const e of engines) await e.destroy();
      }
    },
  );
});

/**
 * A stand-in for the engine's measurements (ts/cost/calibration.ts's CalibrationProbe): times
 * on fixed lines, `scale` times (so two probes give two sets of rates), each answered a turn of
 * the event loop later, as a real measurement is.
 */
function fakeProbe(scale: number): CalibrationProbe {
  const turn = <T>(value: T) => new Promise<T>((resolve) => setImmediate(() => resolve(value)));
  return {
    cpu: (_op, bytes) => turn(scale * (0.05 + bytes * 1e-6)),
    gpu: (_op, bytes) => turn(scale * (0.5 + bytes * 1e-7)),
    upload: (bytes) => turn(scale * (0.1 + bytes * 3e-7)),
    readback: (bytes) => turn(scale * (0.1 + bytes * 3e-7)),
    warmUp: () => turn(undefined),
  };
}

/** Makes `engine`'s calibrations use `probe` instead of its own measurements. */
/** Has `engine` calibrate with `probe` (the engine's private `probe` method, replaced). */
function useProbe(engine: Engine, probe: CalibrationProbe): void {
  (engine as unknown as { probe: () => CalibrationProbe }).probe = () => probe;
}

/** `probe` measuring at most `cap` bytes a point, its time scaled to the size asked (rates as if linear). */
function capped(probe: CalibrationProbe, cap: number): CalibrationProbe {
  const scaled = async (bytes: number, measure: (at: number) => Promise<number>) => {
    const at = Math.min(bytes, cap);
    return ((await measure(at)) * bytes) / at;
  };
  const { gpu, upload, readback, warmUp, poolBytes } = probe;
  return {
    cpu: (op: CostOp, bytes: number) => scaled(bytes, (at) => probe.cpu(op, at)),
    ...(gpu ? { gpu: (op: CostOp, bytes: number) => scaled(bytes, (at) => gpu.call(probe, op, at)) } : {}),
    ...(upload ? { upload: (bytes: number) => scaled(bytes, (at) => upload.call(probe, at)) } : {}),
    ...(readback ? { readback: (bytes: number) => scaled(bytes, (at) => readback.call(probe, at)) } : {}),
    ...(warmUp ? { warmUp: () => warmUp.call(probe) } : {}),
    ...(poolBytes !== undefined ? { poolBytes } : {}),
  };
}
