// The container bytes are part of the format's contract: the same input and options give the
// same bytes, build after build, unless the format or an encoder's choice is meant to change.
// This holds SHA-256 hashes of containers made from the shipped samples (data/samples/) and
// seeded synthetic arrays of every element type, at every level, with both Huffman layouts
// (decoder 'cpu' and 'gpu'), fixed codecs, the lossy mode and shapes, on the CPU path and (SwiftShader on
// CI) the GPU path. A refactor must leave every hash as it is. After an intended change of the
// bytes, rewrite the fixture and say why in the commit:
//   PARLE_UPDATE_HASHES=1 npx vitest run test/container-hashes.test.ts
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine, type Engine } from '../ts/engine.js';
import type { CompressOptions } from '../ts/options.js';
import type { ParleArray } from '../ts/types.js';
import { describeGpu, gpuIt } from './gpu/support.js';
import { Rng, fillRuns } from './support/random.js';

const FIXTURE = new URL('./fixtures/container-hashes.json', import.meta.url);
const SAMPLES = new URL('../data/samples/', import.meta.url);
const UPDATE = process.env.PARLE_UPDATE_HASHES === '1';

/** The inputs: the samples as shipped and seeded arrays (a fixed seed, not PARLE_SEED). */
function inputs(): Record<string, ParleArray> {
  const sample = (file: string, ctor: Uint8ArrayConstructor | Uint16ArrayConstructor) => {
    const bytes = readFileSync(new URL(file, SAMPLES));
    return new ctor(bytes.buffer, bytes.byteOffset, bytes.byteLength / ctor.BYTES_PER_ELEMENT);
  };
  const rng = new Rng(0x5a17c0de);
  const n = 300_000;
  const smooth = new Float32Array(n);
  for (let i = 0; i < n; i++) smooth[i] = Math.sin(i / 500) * 1000 + Math.round(rng.nextFloat() * 8) / 4;
  const steps = new Int32Array(n);
  for (let i = 1; i < n; i++) steps[i] = steps[i - 1] + (rng.nextU32() % 7) - 3;
  const noisyF32 = new Float32Array(n);
  for (let i = 0; i < n; i++) noisyF32[i] = (rng.nextFloat() - 0.5) * 2 ** ((rng.nextU32() % 40) - 20);
  return {
    'camera.u8': sample('camera.u8', Uint8Array),
    't1-brain-labels.u8': sample('t1-brain-labels.u8', Uint8Array),
    't1-kmeans-labels.u8': sample('t1-kmeans-labels.u8', Uint8Array),
    't1-mri.u16': sample('t1-mri.u16', Uint16Array),
    'runs.u32': fillRuns(rng, new Uint32Array(n), { kind: 'uniform', maxRun: 12 }),
    'steps.i32': steps,
    'smooth.f32': smooth,
    'noisy.f32': noisyF32,
    // version 4's element types (not in the per-level loops: {@link TYPED_INPUTS})
    'smooth.f64': Float64Array.from(smooth, (x, i) => (i % 2 === 0 ? Math.round(x * 100) / 100 : x * 1.000001)),
    'stamps.i64': BigInt64Array.from({ length: n / 4 }, (_, i) => 1_700_000_000_000_000n + BigInt(i) * 1_000_000n + BigInt(steps[i])),
    'mri.i16': Int16Array.from(sample('t1-mri.u16', Uint16Array), (v) => v - 2000),
    'noisy.u64': new BigUint64Array(noisyF32.buffer.slice(0, (n / 2) * 4)),
  };
}

/** Inputs of version 4's element types, with cases of their own ({@link typedCases}). */
const TYPED_INPUTS = ['smooth.f64', 'stamps.i64', 'mri.i16', 'noisy.u64'];

/** The element types' cases: the default, levels 1 and 9, a fixed codec, and a shape. */
function typedCases(): Case[] {
  const cases: Case[] = [];
  for (const input of TYPED_INPUTS) {
    for (const level of [1, 5, 9]) cases.push({ name: `${input} level ${level}`, input, options: { level } });
    cases.push({ name: `${input} codec delta+shuffle+huffman`, input, options: { codec: 'delta+shuffle+huffman' } });
  }
  cases.push({ name: 'smooth.f64 shape 600x500', input: 'smooth.f64', options: { shape: [600, 500] } });
  // the lossy mode on f64 (its quantize header, exceptions and codes' pipelines)
  cases.push({ name: 'smooth.f64 lossy 1e-3', input: 'smooth.f64', options: { errorBound: { abs: 1e-3 } } });
  cases.push({ name: 'smooth.f64 lossy 1e-7', input: 'smooth.f64', options: { errorBound: { abs: 1e-7 } } });
  cases.push({ name: 'mri.i16 shape 62x128x128', input: 'mri.i16', options: { shape: [62, 128, 128] } });
  return cases;
}

interface Case {
  name: string;
  input: string;
  options: CompressOptions;
}

/** The CPU path's cases: every level with each Huffman layout, fixed codecs, the lossy mode. */
function cpuCases(names: string[]): Case[] {
  const cases: Case[] = [];
  for (const input of names.filter((name) => !TYPED_INPUTS.includes(name))) {
    for (let level = 1; level <= 9; level++) {
      cases.push({ name: `${input} level ${level}`, input, options: { level } });
    }
    cases.push({ name: `${input} decoder gpu`, input, options: { decoder: 'gpu' } });
    cases.push({ name: `${input} level 9 decoder gpu`, input, options: { decoder: 'gpu', level: 9 } });
    const bytes = input.endsWith('.u8') ? ['delta+huffman', 'rle+huffman'] : ['delta+shuffle+huffman', 'shuffle+rle+huffman'];
    for (const codec of ['rle', 'delta+pack', ...bytes]) {
      cases.push({ name: `${input} codec ${codec}`, input, options: { codec } });
    }
    cases.push({ name: `${input} 64 KiB chunks`, input, options: { chunkBytes: 64 << 10 } });
  }
  cases.push({ name: 'smooth.f32 lossy 0.01', input: 'smooth.f32', options: { errorBound: { abs: 0.01 } } });
  cases.push({ name: 'noisy.f32 lossy 1e-4', input: 'noisy.f32', options: { errorBound: { abs: 1e-4 } } });
  // version 4's shape and predict stage
  for (const [input, shape] of [
    ['camera.u8', [512, 512]],
    ['t1-mri.u16', [62, 128, 128]],
    ['t1-brain-labels.u8', [62, 128, 128]],
    ['smooth.f32', [600, 500]],
    ['steps.i32', [1000, 100, 3]],
  ] as const) {
    cases.push({ name: `${input} shape ${shape.join('x')}`, input, options: { shape } });
  }
  return [...cases, ...typedCases()];
}

/** The GPU path's cases (fewer: SwiftShader is slow): the default level, both layouts, lossy. */
function gpuCases(names: string[]): Case[] {
  const cases: Case[] = [];
  for (const input of names.filter((name) => !TYPED_INPUTS.includes(name))) {
    cases.push({ name: `gpu ${input}`, input, options: {} });
    cases.push({ name: `gpu ${input} decoder gpu`, input, options: { decoder: 'gpu' } });
  }
  cases.push({ name: 'gpu smooth.f32 lossy 0.01', input: 'smooth.f32', options: { errorBound: { abs: 0.01 } } });
  return cases;
}

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
const stored: Record<string, string> = existsSync(FIXTURE) && !UPDATE ? JSON.parse(readFileSync(FIXTURE, 'utf8')) : {};
const computed: Record<string, string> = {};
const data = inputs();

afterAll(() => {
  if (UPDATE)
    writeFileSync(
      FIXTURE,
      JSON.stringify({ ...JSON.parse(existsSync(FIXTURE) ? readFileSync(FIXTURE, 'utf8') : '{}'), ...computed }, null, 2) + '\n',
    );
});

async function check(engine: Engine, c: Case, path: 'cpu' | 'gpu'): Promise<void> {
  const packed = await engine.compress(data[c.input], { ...c.options, path });
  computed[c.name] = sha256(packed);
  if (!UPDATE) expect(computed[c.name], `${c.name}: container bytes changed (${packed.length} bytes)`).toBe(stored[c.name]);
}

describe('container bytes of the CPU path are those of the fixture', () => {
  let engine: Engine;
  beforeAll(async () => {
    engine = await createEngine({ workers: 2, gpu: 'off', calibration: 'skip' });
  });
  afterAll(async () => {
    await engine?.destroy();
  });
  it('the fixture holds a hash for every case', () => {
    if (UPDATE) return;
    for (const c of [...cpuCases(Object.keys(data)), ...gpuCases(Object.keys(data))])
      expect(stored[c.name], c.name).toMatch(/^[0-9a-f]{64}$/);
  });
  for (const c of cpuCases(Object.keys(data))) it(c.name, () => check(engine, c, 'cpu'));
});

describeGpu('container bytes of the GPU path are those of the fixture', () => {
  let engine: Engine;
  beforeAll(async () => {
    engine = await createEngine({ workers: 1, gpu: 'require', calibration: 'skip' });
  });
  afterAll(async () => {
    await engine?.destroy();
  });
  for (const c of gpuCases(Object.keys(data))) gpuIt(c.name, () => check(engine, c, 'gpu'));
});
