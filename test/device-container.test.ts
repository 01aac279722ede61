// Containers that live on the GPU (u8 DeviceArrays). Decompress of one (ts/codec/gpu/device-container.ts):
// the same result, or the same error code, as the container decoded from host memory, for every
// pipeline, the fixtures of every version, a fuzz sample of mutated containers and tables longer
// than one walk. Compress to one (`to: 'device'`; ts/codec/gpu/encode.ts compressToDevice): the
// bytes the host gets. On CI the GPU is SwiftShader (test/gpu/support.ts: no silent skip).
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, expect } from 'vitest';
import { decompressDeviceContainer } from '../ts/codec/gpu/device-container.js';
import type { CpuPath } from '../ts/cpu/cpu-path.js';
import { createEngine, DeviceArray, type Engine } from '../ts/engine.js';
import type { GpuContext } from '../ts/gpu/context.js';
import { ErrorCodes } from '../ts/errors.js';
import { bytesOf, type ParleArray } from '../ts/types.js';
import { describeGpu, gpuIt, remakeBuffers } from './gpu/support.js';
import { DEVICE_FUZZ_FAILURES, makeSamples, mutate } from './support/fuzz.js';
import { Rng, caseSeed, describeSeed, fillRuns } from './support/random.js';

const equalBytes = (a: ParleArray, b: ParleArray) => a.constructor === b.constructor && Buffer.compare(bytesOf(a), bytesOf(b)) === 0;

describeGpu('decompress of a container on the device', () => {
  let engine: Engine;
  beforeAll(async () => {
    engine = await createEngine({ workers: 1, gpu: 'require', calibration: 'skip' });
  });
  afterAll(async () => {
    await engine?.destroy();
  });

  /** Decodes `packed` uploaded by `decode` (default: engine.decompress); the outcome is the decoded host array or the error's code. */
  async function fromDevice(
    packed: Uint8Array,
    options: { maxElements?: number } = {},
    decode = (container: DeviceArray) => engine.decompress(container, options),
  ): Promise<ParleArray | string> {
    const container = await engine.upload(packed);
    try {
      const out = await decode(container);
      expect(out).toBeInstanceOf(DeviceArray);
      const host = await engine.download(out);
      out.destroy();
      return host;
    } catch (e) {
      return String((e as { code?: string }).code ?? e);
    } finally {
      container.destroy();
    }
  }

  /** The same from host memory on the GPU path. */
  async function fromHost(packed: Uint8Array, options: { maxElements?: number } = {}): Promise<ParleArray | string> {
    try {
      const out = await engine.decompress(packed, { ...options, path: 'gpu', to: 'device' });
      const host = await engine.download(out);
      out.destroy();
      return host;
    } catch (e) {
      return String((e as { code?: string }).code ?? e);
    }
  }

  gpuIt('every pipeline of the fuzz samples decodes to the host decode, from a container of any length', async () => {
    for (const s of await makeSamples(engine)) {
      const back = await fromDevice(s.packed);
      expect(typeof back === 'string' ? back : equalBytes(back, s.decoded), s.name).toBe(true);
    }
  });

  gpuIt('fixtures of versions 1 and 2 decode from the device (read back whole: version 1)', async () => {
    const dirs: [string, string[]][] = [
      ['v1', ['u8-runs', 'u16-noisy', 'f32-nan', 'i32-steps']],
      ['v2', ['u8-camera', 'u16-mri', 'i32-steps', 'f32-nan', 'f32-lossy']],
    ];
    for (const [version, names] of dirs) {
      for (const name of names) {
        const dir = new URL(`./fixtures/${version}/`, import.meta.url);
        const packed = new Uint8Array(await readFile(new URL(`${name}.parle`, dir)));
        const raw = new Uint8Array(await readFile(new URL(`${name}.raw`, dir)));
        const back = await fromDevice(packed);
        expect(typeof back === 'string' ? back : Buffer.compare(bytesOf(back), raw), `${version}/${name}`).toBe(0);
      }
    }
  });

  gpuIt('a mutated container fails with the code it fails with from host memory, or decodes exactly', async () => {
    const seed = caseSeed('device container fuzz');
    const rng = new Rng(seed);
    const samples = await makeSamples(engine);
    const cases = Number(process.env.PARLE_GPU_FUZZ_CASES ?? 300) / 2;
    for (let i = 0; i < cases; i++) {
      const s = samples[i % samples.length];
      const { bytes, what } = mutate(rng, s);
      const context = `case ${i}, ${s.name}: ${what}, ${describeSeed(seed)}`;
      const [device, host] = [
        await fromDevice(bytes, { maxElements: s.input.length }),
        await fromHost(bytes, { maxElements: s.input.length }),
      ];
      if (typeof host === 'string') {
        expect(DEVICE_FUZZ_FAILURES, context).toContain(host);
        expect(device, context).toBe(host);
      } else {
        expect(typeof device === 'string' ? device : equalBytes(device, host), context).toBe(true);
        // and both are the original's elements (its reconstruction for the lossy sample): the
        // entries hash the decoded elements, so a mutation that decodes changed none of them
        expect(Buffer.compare(bytesOf(host), bytesOf(s.decoded)), `${context}: decoded to other data`).toBe(0);
      }
    }
  });

  gpuIt('a table of up to 1024 chunks and its index are read in one readback; of more, in two and the index in a third', async () => {
    const { cpu, gpuContext: gpu } = engine as unknown as { cpu: CpuPath; gpuContext: GpuContext & { submit: GpuContext['submit'] } };
    const input = new Uint16Array(640 * 1024);
    fillRuns(new Rng(caseSeed('device container one readback')), input, { kind: 'uniform', maxRun: 12 });
    for (const [chunkBytes, want] of [
      [4096, ['decompress: chunk table', 'decompress']], // 320 chunks
      [1024, ['decompress: chunk table', 'decompress: chunk table', 'decompress: plan reads', 'decompress']], // 1280
    ] as const) {
      const packed = await engine.compress(input, { chunkBytes, path: 'cpu' });
      const container = await engine.upload(packed);
      const labels: string[] = [];
      const submit = gpu.submit;
      gpu.submit = function (label, encode) {
        labels.push(label);
        return submit.call(this, label, encode);
      } as GpuContext['submit'];
      try {
        const out = await decompressDeviceContainer(cpu, gpu, container, 2 ** 32 - 1);
        expect(equalBytes(await engine.download(out), input), `chunks of ${chunkBytes} bytes`).toBe(true);
        out.destroy();
      } finally {
        gpu.submit = submit;
        container.destroy();
      }
      expect(labels, `chunks of ${chunkBytes} bytes`).toEqual(want);
    }
  });

  gpuIt('a chunk table read in several walks; empty, tiny and junk containers', async () => {
    const { cpu, gpuContext: gpu } = engine as unknown as { cpu: CpuPath; gpuContext: GpuContext };
    const input = new Uint8Array(30 * 1024 + 77);
    fillRuns(new Rng(caseSeed('device container long table')), input, { kind: 'uniform', maxRun: 30 });
    for (let i = 0; i < input.length; i++) input[i] %= 50;
    const packed = await engine.compress(input, { chunkBytes: 1024, level: 9 });
    /** Decodes `bytes` from the device, 4 chunks a walk. */
    const inWalksOf4 = (bytes: Uint8Array) =>
      fromDevice(bytes, {}, (container) => decompressDeviceContainer(cpu, gpu, container, 2 ** 32 - 1, undefined, 4));
    const back = await inWalksOf4(packed);
    expect(typeof back === 'string' ? back : equalBytes(back, input)).toBe(true);
    // with a shape block (the table walked again from the entries after it), in walks of 4
    const shaped = await engine.compress(input, { chunkBytes: 1024, shape: [13, 2369] });
    expect(engine.inspect(shaped).chunks.length).toBeGreaterThan(8);
    const shapedBack = await inWalksOf4(shaped);
    expect(typeof shapedBack === 'string' ? shapedBack : equalBytes(shapedBack, input)).toBe(true);
    // bytes of the table's last chunks flipped (entries or payloads of the last walks), a cut end
    for (const at of [packed.length - 40, packed.length - 700, packed.length - 1500]) {
      const flipped = packed.slice();
      flipped[at] ^= 1;
      const host = await fromHost(flipped);
      expect([ErrorCodes.CORRUPT, ErrorCodes.CHECKSUM_MISMATCH], `byte ${at}`).toContain(host);
      expect(await inWalksOf4(flipped), `byte ${at}`).toBe(host);
    }
    expect(await inWalksOf4(packed.subarray(0, packed.length - 1))).toBe(ErrorCodes.TRUNCATED);
    for (const tiny of [new Uint8Array(0), new Uint16Array(0), new Uint8Array([7])]) {
      const small = await engine.compress(tiny);
      const got = await fromDevice(small);
      expect(typeof got === 'string' ? got : equalBytes(got, tiny)).toBe(true);
    }
    for (const junk of [new Uint8Array(40), new Uint8Array(100), new Uint8Array(3), packed.subarray(0, 20), packed.subarray(0, 70)]) {
      const host = await fromHost(junk);
      expect([ErrorCodes.NOT_PARLE, ErrorCodes.TRUNCATED]).toContain(host);
      expect(await fromDevice(junk)).toBe(host);
    }
  });

  gpuIt("compress to: 'device' gives the bytes compress gives the host, on every path; decompress takes them", async () => {
    const rng = new Rng(caseSeed('device container compress'));
    const u16 = fillRuns(rng, new Uint16Array(70_001), { kind: 'uniform', maxRun: 9 }) as Uint16Array;
    for (let i = 0; i < u16.length; i++) u16[i] %= 700;
    const f32 = new Float32Array(40_000).map((_, i) => Math.sin(i / 70) * 50);
    const cases: [string, ParleArray, Record<string, unknown>][] = [
      ['u16 auto, 3 chunks', u16, { chunkBytes: 65536 }],
      ['u16 shuffle+huffman, mode 3', u16, { codec: 'shuffle+huffman', chunkBytes: 32768, decoder: 'gpu' }],
      ['u16 rle', u16, { codec: 'rle', chunkBytes: 32768 }],
      ['f32 delta+shuffle+huffman, one chunk', f32, { codec: 'delta+shuffle+huffman' }],
      ['f32 stored', f32, { codec: 'stored', chunkBytes: 16384 }],
      ['empty', new Uint8Array(0), {}],
    ];
    for (const [name, input, options] of cases) {
      const device = await engine.upload(input);
      const onHost = await engine.compress(device, { ...options, path: 'gpu' });
      const resident = await engine.compress(device, { ...options, path: 'gpu', to: 'device' });
      expect(resident, name).toBeInstanceOf(DeviceArray);
      expect(resident.type, name).toBe('u8');
      expect(Buffer.compare(bytesOf(await engine.download(resident)), onHost), name).toBe(0);
      const back = await engine.decompress(resident);
      expect(equalBytes(await engine.download(back), input), name).toBe(true);
      // the CPU path and the lossy mode build on the host and upload
      const viaCpu = await engine.compress(input, { ...options, path: 'cpu', to: 'device' });
      expect(Buffer.compare(bytesOf(await engine.download(viaCpu)), await engine.compress(input, { ...options, path: 'cpu' })), name).toBe(
        0,
      );
      for (const d of [device, resident, back, viaCpu]) d.destroy();
    }
    const lossy = await engine.compress(f32, { errorBound: { abs: 0.01 }, path: 'gpu', to: 'device' });
    expect(
      Buffer.compare(bytesOf(await engine.download(lossy)), await engine.compress(f32, { errorBound: { abs: 0.01 }, path: 'gpu' })),
    ).toBe(0);
    lossy.destroy();
    await expect(engine.compress(u16, { to: 'device', out: new Uint8Array(1 << 20) })).rejects.toMatchObject({
      code: ErrorCodes.INVALID_OPTION,
    });
  });

  gpuIt('out of GPU memory: auto decodes a device container on the CPU instead; path gpu fails with OUT_OF_MEMORY', async () => {
    // gpuPoolBytes 0: every buffer is made anew (a kept one would be handed out instead)
    const e = await createEngine({ workers: 0, gpu: 'require', calibration: 'skip', gpuPoolBytes: 0 });
    try {
      const input = new Uint16Array(40_000).map((_, i) => (i >> 5) % 300);
      const container = await e.compress(input, { to: 'device', path: 'gpu' });
      const ctx = (e as unknown as { gpuContext: GpuContext }).gpuContext;
      const swiftShader = /swiftshader/i.test(JSON.stringify(ctx.adapterInfo));
      // the chunk table walk's scratch made at 1 GiB: more than SwiftShader can allocate
      const restore = remakeBuffers(ctx.device, 'parle:chunk table walk', Math.min(1 << 30, ctx.limits.maxBufferSize));
      try {
        const viaAuto = await e.decompress(container);
        expect(viaAuto).toBeInstanceOf(DeviceArray);
        expect(equalBytes(await e.download(viaAuto), input)).toBe(true);
        viaAuto.destroy();
        const gpu = e.decompress(container, { path: 'gpu' });
        if (swiftShader) await expect(gpu).rejects.toMatchObject({ code: ErrorCodes.OUT_OF_MEMORY });
        else (await gpu).destroy(); // a GPU that has the memory
      } finally {
        restore();
      }
      container.destroy();
    } finally {
      await e.destroy();
    }
  });

  gpuIt("options: to 'host', out, path 'cpu', maxElements; a container that is not u8", async () => {
    const input = new Float32Array(30_000).map((_, i) => Math.round(Math.sin(i / 50) * 1000));
    const packed = await engine.compress(input, { chunkBytes: 16384, decoder: 'gpu' });
    const container = await engine.upload(packed);
    const host = await engine.decompress(container, { to: 'host' });
    expect(equalBytes(host, input)).toBe(true);
    const out = new Float32Array(input.length);
    expect(await engine.decompress(container, { out })).toBe(out);
    expect(equalBytes(out, input)).toBe(true);
    const viaCpu = await engine.decompress(container, { path: 'cpu' });
    expect(viaCpu).toBeInstanceOf(DeviceArray);
    expect(equalBytes(await engine.download(viaCpu), input)).toBe(true);
    viaCpu.destroy();
    await expect(engine.decompress(container, { maxElements: 10 })).rejects.toMatchObject({ code: ErrorCodes.LIMIT_EXCEEDED });
    // explain says what decompress does with it
    expect(engine.explain('decompress', container)).toMatchObject({ path: 'gpu', inputLocation: 'device', reason: /lives on the GPU/ });
    await expect(engine.decompress(container, { out, to: 'device' })).rejects.toMatchObject({ code: ErrorCodes.INVALID_OPTION });
    // the container is untouched
    expect(Buffer.compare(bytesOf(await engine.download(container)), packed)).toBe(0);
    // a lossy container whose chunks list exceptions (NaN and values the bound cannot meet): read back in a second piece
    const lossy = new Float32Array(20_000).map((_, i) => (i % 97 === 0 ? NaN : i % 89 === 0 ? 3e38 : Math.sin(i / 30)));
    const lossyPacked = await engine.compress(lossy, { errorBound: { abs: 0.01 }, chunkBytes: 8192 });
    const lossyBack = await fromDevice(lossyPacked);
    expect(typeof lossyBack === 'string' ? lossyBack : equalBytes(lossyBack, await engine.decompress(lossyPacked, { path: 'cpu' }))).toBe(
      true,
    );
    const words = await engine.upload(new Uint32Array(packed.buffer.slice(0, packed.length - (packed.length % 4))));
    await expect(engine.decompress(words)).rejects.toMatchObject({ code: ErrorCodes.UNSUPPORTED_TYPE });
    for (const d of [container, words]) d.destroy();
  });
});
