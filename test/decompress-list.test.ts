/**
 * `engine.decompress([c1, c2, ...])`: a list of containers decoded to one array of their elements
 * one after another, on the GPU path in one decode of every chunk of every container
 * (ts/codec/gpu/decompress.ts decompressListToDevice), on the CPU each container into its place.
 * The lists mix one-chunk and many-chunk containers, shaped (predicted) and flat ones, an empty
 * one and one whose length leaves the next container off a 4-byte boundary (its chunks staged,
 * then placed: ts/codec/gpu/decode.ts), a med chunk (decoded on the GPU with the others), and a
 * version-1 container, which the GPU does not decode (the list through the CPU); errors keep
 * their codes. On CI the GPU is SwiftShader (test/gpu/support.ts).
 */
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, expect } from 'vitest';
import { createEngine, DeviceArray, type Engine } from '../ts/engine.js';
import { ErrorCodes } from '../ts/errors.js';
import { bytesOf } from '../ts/types.js';
import { describeGpu, gpuIt } from './gpu/support.js';
import { concat as concatBytes, sameElements } from './support/bytes.js';
import { Rng, caseSeed, describeSeed } from './support/random.js';
import { STAGE } from './support/codec-reference.js';
import { encodeContainer, MAP, PREDICTOR, TYPE_CODE } from './support/predict-reference.js';

/** Bricks of a smooth u16 volume (16 x 24 x 24 each) with noise: what a viewer fetches. */
function bricks(count: number, seed: number): Uint16Array[] {
  const rng = new Rng(seed);
  return Array.from({ length: count }, (_, b) =>
    new Uint16Array(16 * 24 * 24).map((_, i) => {
      const z = Math.floor(i / 576);
      const y = Math.floor(i / 24) % 24;
      const x = i % 24;
      return Math.round(2000 + 900 * Math.sin((x + b) / 9) * Math.cos((y + z) / 11)) + rng.intBetween(0, 7);
    }),
  );
}

/** The u16 arrays one after another. */
function concat(parts: readonly Uint16Array[]): Uint16Array {
  return new Uint16Array(concatBytes(parts.map((p) => bytesOf(p))).buffer);
}

describeGpu('decompress of a list of containers', () => {
  let engine: Engine;
  let parts: Uint16Array[];
  let list: Uint8Array[];
  let seed: number;
  beforeAll(async () => {
    engine = await createEngine({ workers: 1, gpu: 'require', calibration: 'skip' });
    seed = caseSeed('decompress list');
    parts = bricks(24, seed);
    // one chunk (shaped: predicted), several chunks (flat), empty, odd-sized
    parts[3] = new Uint16Array(0);
    parts[7] = parts[7].subarray(0, 1001); // 2002 bytes: the next container starts off a word
    list = await Promise.all(
      parts.map((p, i) =>
        i % 3 === 0 && p.length === 9216
          ? engine.compress(p, { path: 'cpu', shape: [16, 24, 24] })
          : engine.compress(p, { path: 'cpu', chunkBytes: i % 2 === 0 ? 4096 : 1 << 20 }),
      ),
    );
  });
  afterAll(async () => {
    await engine?.destroy();
  });

  gpuIt('to the device on the GPU path, to the host on either path: the containers’ elements one after another', async () => {
    const want = concat(parts);
    expect(list.some((c) => engine.inspect(c).chunks.some((k) => k.encoding.startsWith('predict')))).toBe(true);
    const aligned = [...list.slice(0, 7), ...list.slice(8)];
    const alignedWant = concat([...parts.slice(0, 7), ...parts.slice(8)]);
    for (const [which, containers, expected] of [
      ['every container on 4-byte boundaries (one decode)', aligned, alignedWant],
      ['one container of an odd byte length (staged, still one decode)', list, want],
    ] as const) {
      const onDevice = await engine.decompress(containers, { to: 'device', path: 'gpu' });
      expect(onDevice).toBeInstanceOf(DeviceArray);
      expect(sameElements(await engine.download(onDevice), expected), `${which}, ${describeSeed(seed)}`).toBe(true);
      onDevice.destroy();
      for (const path of ['gpu', 'cpu'] as const) {
        const host = await engine.decompress(containers, { path });
        expect(sameElements(host, expected), `${which}, ${path}, ${describeSeed(seed)}`).toBe(true);
      }
    }
    // one container: as decompress of it
    expect(sameElements(await engine.decompress([list[1]], { path: 'gpu' }), parts[1])).toBe(true);
    // a med chunk among others (one decode on the GPU), then a version-1 container among them,
    // which the GPU does not decode (the list through the CPU)
    const image = new Uint8Array(32 * 40 * 3).map((_, i) => (Math.floor(i / 120) * 3 + (i % 120)) & 0xff);
    const med = encodeContainer(image, {
      type: TYPE_CODE.u8,
      chunkLength: image.length,
      chunks: [{ kind: 'predicted', map: MAP.none, predictor: PREDICTOR.med, fields: 3, X: 40, Y: 1, stages: [[STAGE.huffman], [], []] }],
    });
    const bytes = new Uint8Array(5000).map((_, i) => i >> 5);
    const mixed = [await engine.compress(bytes, { chunkBytes: 1024 }), med, await engine.compress(bytes)];
    const mixedBack = await engine.decompress(mixed, { to: 'device', path: 'gpu' });
    const mixedWant = new Uint8Array(2 * bytes.length + image.length);
    mixedWant.set(bytes, 0);
    mixedWant.set(image, bytes.length);
    mixedWant.set(bytes, bytes.length + image.length);
    expect(sameElements(await engine.download(mixedBack), mixedWant)).toBe(true);
    mixedBack.destroy();
    const fixtures = new URL('./fixtures/v1/', import.meta.url);
    const v1 = new Uint8Array(await readFile(new URL('u8-runs.parle', fixtures)));
    const v1Raw = new Uint8Array(await readFile(new URL('u8-runs.raw', fixtures)));
    const withV1 = await engine.decompress([...mixed, v1], { to: 'device', path: 'gpu' });
    expect(sameElements(await engine.download(withV1), concatBytes([mixedWant, v1Raw]))).toBe(true);
    withV1.destroy();
  });

  gpuIt('errors: an empty list, mixed types, out, the total past maxElements, a damaged payload', async () => {
    await expect(engine.decompress([], { to: 'device' })).rejects.toMatchObject({ code: ErrorCodes.INVALID_ARGUMENT });
    const f32 = await engine.compress(new Float32Array(100).fill(1.5));
    for (const path of ['gpu', 'cpu'] as const) {
      await expect(engine.decompress([list[0], f32], { path })).rejects.toMatchObject({ code: ErrorCodes.INVALID_ARGUMENT });
      const total = parts.reduce((n, p) => n + p.length, 0);
      await expect(engine.decompress(list, { path, maxElements: total - 1 })).rejects.toMatchObject({ code: ErrorCodes.LIMIT_EXCEEDED });
      expect((await engine.decompress(list, { path, maxElements: total })).length).toBe(total);
    }
    await expect(engine.decompress(list, { out: new Uint16Array(10) } as never)).rejects.toMatchObject({ code: ErrorCodes.INVALID_OPTION });
    const damaged = list.map((c) => c.slice());
    const c = damaged[5];
    c[c.length - 30] ^= 0x40; // inside the last payload or the chunk index
    for (const path of ['gpu', 'cpu'] as const) {
      const error = await engine.decompress(damaged, { to: 'device', path }).catch((e: unknown) => e);
      expect([ErrorCodes.CHECKSUM_MISMATCH, ErrorCodes.CORRUPT], path).toContain((error as { code?: string }).code);
    }
    // the engine still works
    expect(sameElements(await engine.decompress(list[2]), parts[2])).toBe(true);
  });
});
