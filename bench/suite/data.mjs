// Data sets of the comparison suite, generated deterministically from fixed seeds, and the real
// samples of data/samples/ (sources and licenses in data/samples/SOURCE.md).
//
// Every generator is pure: same arguments, same bytes (test/bench-suite.test.ts checks it).
//
//   Rutter's four files (MSc report, 2011): zeroVolume, sequenceVolume(period 254 | 255),
//     voxelVolume (a sparse 8-bit volume of splatted, clustered particles like his Voxel3D
//     potential: mostly zero).
//   Haugen's seismic cubes (MSc thesis, 2009): seismicVolume (float32, depth fastest: layered
//     reflectivity convolved in depth with a Ricker wavelet, plus a little noise), quantized with
//     quantizeDeadZone (his equations 2.1 and 2.2a: mid-tread uniform threshold quantizer with a
//     dead zone, beta 0.6 as is common for seismic data) to 8 or 16 bits.
//   Keys for sort: random u32, random f32 (mixed sign and magnitude), already sorted, few
//     distinct values. Arrays for scan: random u32 and f32.
//   runsBytes: u8 with run lengths uniform in 1..2m-1 (mean m), neighbouring runs differ (the
//     RLE workload of bench/cpu-kernels.mjs).
import { readFile } from 'node:fs/promises';

/** A seeded mulberry32 generator: returns uniform u32s. */
export function rng(seed) {
  let s = seed >>> 0;
  return () => {
    let t = (s = (s + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
}

/** Uniform in [0, 1) from a generator. */
const unit = (next) => next() / 4294967296;

/** FNV-1a over bytes: a cheap fingerprint for determinism checks (not a checksum to trust). */
export function fingerprint(view) {
  const bytes = new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
  let h = 0x811c9dc5;
  for (let i = 0; i < bytes.length; i++) h = Math.imul(h ^ bytes[i], 0x01000193);
  return (h >>> 0).toString(16).padStart(8, '0');
}

// ---- Rutter's files ----------------------------------------------------------------------------

/** Rutter's "Zero": edge^3 bytes, all 0 (his best case). */
export function zeroVolume(edge) {
  return new Uint8Array(edge ** 3);
}

/**
 * Rutter's "Sequence254" / "Sequence255": bytes counting 0..period-1 over and over (his worst
 * case: no two neighbours are equal). period 254 -> 0..253, period 255 -> 0..254.
 */
export function sequenceVolume(edge, period) {
  const n = edge ** 3;
  const out = new Uint8Array(n);
  const first = Math.min(n, period);
  for (let i = 0; i < first; i++) out[i] = i;
  // doubling copies: log2(n / period) memmoves instead of n modulo operations
  for (let have = first; have < n; have *= 2) out.copyWithin(have, 0, Math.min(have, n - have));
  return out;
}

/**
 * A sparse voxel volume like Rutter's "Voxel3D potential" (a 512^3 render of an n-body
 * simulation: mostly black, grey points): `edge`^3 bytes, x fastest. Particles are drawn around
 * cluster centres (galaxies cluster) and splatted as 3x3x3 blobs whose intensity falls off from
 * the centre; overlapping splats keep the brighter value. The particle count scales with the
 * volume (2^17 at 512^3), so the fraction of non-zero voxels (about 2 %) does not depend on size.
 */
export function voxelVolume(edge, seed = 3) {
  const next = rng(seed);
  const out = new Uint8Array(edge ** 3);
  const particles = Math.max(16, Math.round(2 ** 17 * (edge / 512) ** 3));
  const clusters = Math.max(4, Math.round(512 * (edge / 512) ** 2));
  const centres = [];
  for (let c = 0; c < clusters; c++) centres.push([unit(next) * edge, unit(next) * edge, unit(next) * edge, 2 + unit(next) * edge * 0.03]);
  const plane = edge * edge;
  for (let p = 0; p < particles; p++) {
    const [cx, cy, cz, spread] = centres[next() % clusters];
    // a sum of three uniforms: a cheap bell-shaped scatter around the centre
    const dx = (unit(next) + unit(next) + unit(next) - 1.5) * spread;
    const dy = (unit(next) + unit(next) + unit(next) - 1.5) * spread;
    const dz = (unit(next) + unit(next) + unit(next) - 1.5) * spread;
    const x = Math.floor(cx + dx);
    const y = Math.floor(cy + dy);
    const z = Math.floor(cz + dz);
    const peak = 64 + (next() % 192);
    for (let k = -1; k <= 1; k++) {
      const zz = z + k;
      if (zz < 0 || zz >= edge) continue;
      for (let j = -1; j <= 1; j++) {
        const yy = y + j;
        if (yy < 0 || yy >= edge) continue;
        for (let i = -1; i <= 1; i++) {
          const xx = x + i;
          if (xx < 0 || xx >= edge) continue;
          const d = Math.abs(i) + Math.abs(j) + Math.abs(k);
          const v = peak >> d;
          const at = zz * plane + yy * edge + xx;
          if (v > out[at]) out[at] = v;
        }
      }
    }
  }
  return out;
}

/** Rutter's four files at edge^3 bytes, in his order. */
export function rutterFiles(edge) {
  return [
    { name: 'Zero', data: () => zeroVolume(edge) },
    { name: 'Sequence254', data: () => sequenceVolume(edge, 254) },
    { name: 'Sequence255', data: () => sequenceVolume(edge, 255) },
    { name: 'Voxel3D-like', data: () => voxelVolume(edge) },
  ];
}

// ---- Haugen's seismic cubes -------------------------------------------------------------------

/** Samples of a Ricker wavelet of peak frequency `f` (cycles per sample), centred, +-1.5/f long. */
export function rickerWavelet(f) {
  const half = Math.ceil(1.5 / f);
  const w = new Float64Array(2 * half + 1);
  for (let t = -half; t <= half; t++) {
    const a = (Math.PI * f * t) ** 2;
    w[t + half] = (1 - 2 * a) * Math.exp(-a);
  }
  return w;
}

/**
 * A seismic-like float32 cube of edge^3 samples, laid out as Haugen describes his data:
 * consecutive values run in depth, then the next trace (index = (x * edge + y) * edge + z).
 * Each trace is a layered reflectivity series (interfaces at gently folded, dipping depths,
 * reflection coefficients of either sign that vary slowly sideways) convolved with a Ricker
 * wavelet of peak frequency `f` cycles per sample, plus uniform noise of `noise` times the
 * largest reflection coefficient.
 */
export function seismicVolume(edge, { seed = 5, layers = Math.max(4, Math.round(edge / 32)), f = 0.08, noise = 0.004 } = {}) {
  const next = rng(seed);
  const wavelet = rickerWavelet(f);
  const half = (wavelet.length - 1) / 2;
  const iface = [];
  for (let k = 0; k < layers; k++) {
    iface.push({
      depth: ((k + 0.5 + (unit(next) - 0.5) * 0.6) / layers) * edge,
      fold: (0.5 + unit(next)) * (edge / layers) * 0.4,
      kx: (2 * Math.PI * (0.5 + unit(next))) / edge,
      ky: (2 * Math.PI * (0.5 + unit(next))) / edge,
      phase: unit(next) * 2 * Math.PI,
      dip: (unit(next) - 0.5) * 0.1,
      r: (unit(next) < 0.5 ? -1 : 1) * (0.2 + 0.8 * unit(next)),
    });
  }
  const out = new Float32Array(edge ** 3);
  const trace = new Float64Array(edge);
  const noiseNext = rng(seed ^ 0x5eed);
  for (let x = 0; x < edge; x++) {
    for (let y = 0; y < edge; y++) {
      trace.fill(0);
      for (const L of iface) {
        const z0 = Math.round(L.depth + L.fold * Math.sin(L.kx * x + L.phase) * Math.cos(L.ky * y) + L.dip * (x - y));
        const r = L.r * (1 + 0.2 * Math.sin(L.ky * x + L.phase));
        const lo = Math.max(0, z0 - half);
        const hi = Math.min(edge - 1, z0 + half);
        for (let z = lo; z <= hi; z++) trace[z] += r * wavelet[z - z0 + half];
      }
      const base = (x * edge + y) * edge;
      for (let z = 0; z < edge; z++) out[base + z] = trace[z] + (unit(noiseNext) - 0.5) * 2 * noise;
    }
  }
  return out;
}

/**
 * Haugen's quantizer (equations 2.1 and 2.2a, after Rosten): scale by the largest magnitude to
 * `bits` bits, then a mid-tread uniform threshold quantizer with a dead zone of total width
 * T = 2 * beta * step around zero. Index I/2 is zero; indices clamp to 0..I-1. `stepScale` > 1
 * coarsens the step (more of the signal falls in the dead zone: lower SNR, longer runs).
 * @returns Uint8Array (bits 8) or Uint16Array (bits 16) of quantizer indices, and the step.
 */
export function quantizeDeadZone(values, bits, beta = 0.6, stepScale = 1) {
  const I = 2 ** bits;
  let max = 0;
  for (let i = 0; i < values.length; i++) max = Math.max(max, Math.abs(values[i]));
  const step = (max > 0 ? max / (I / 2) : 1) * stepScale;
  const T = 2 * beta * step;
  const out = bits === 8 ? new Uint8Array(values.length) : new Uint16Array(values.length);
  const mid = I / 2;
  for (let i = 0; i < values.length; i++) {
    const y = values[i];
    let q;
    if (y <= -T / 2) q = mid + Math.floor((y + T / 2) / step);
    else if (y >= T / 2) q = mid + Math.ceil((y - T / 2) / step);
    else q = mid;
    out[i] = q < 0 ? 0 : q > I - 1 ? I - 1 : q;
  }
  return { indices: out, step };
}

/** Signal-to-noise ratio in dB (his equation 5.1, RMS amplitudes) of indices against `values`. */
export function snrDb(values, indices, step, stride = 1) {
  const mid = indices instanceof Uint8Array ? 128 : 32768;
  let s = 0;
  let e = 0;
  for (let i = 0; i < values.length; i += stride) {
    const y = values[i];
    const d = y - (indices[i] - mid) * step;
    s += y * y;
    e += d * d;
  }
  return 10 * Math.log10(s / Math.max(e, 1e-30));
}

/**
 * The coarsest power-of-two step scale whose 8-bit quantization keeps an SNR of at least `db`
 * (Haugen reports 24.67 dB for his cube): estimated on every 61st sample.
 */
export function stepScaleForSnr(values, db, bits = 8) {
  const probe = new Float32Array(Math.ceil(values.length / 61));
  for (let i = 0, j = 0; i < values.length; i += 61) probe[j++] = values[i];
  let best = 1;
  for (let scale = 2; scale <= 256; scale *= 2) {
    const q = quantizeDeadZone(probe, bits, 0.6, scale);
    if (snrDb(probe, q.indices, q.step) < db) break;
    best = scale;
  }
  return best;
}

// ---- keys and scan arrays ---------------------------------------------------------------------

/** `n` uniform u32 from `next`. */
function randomU32(n, next) {
  const a = new Uint32Array(n);
  for (let i = 0; i < n; i++) a[i] = next();
  return a;
}

/** Sort keys of a kind: 'random-u32', 'random-f32', 'sorted-u32', 'few-distinct-u32' (16 values). */
export function sortKeys(kind, n, seed = 11) {
  const next = rng(seed);
  if (kind === 'random-u32') return randomU32(n, next);
  if (kind === 'random-f32') {
    const a = new Float32Array(n);
    for (let i = 0; i < n; i++) a[i] = (unit(next) - 0.5) * 2 ** ((next() % 40) - 20);
    return a;
  }
  if (kind === 'sorted-u32') {
    const a = new Uint32Array(n);
    const stride = Math.max(1, Math.floor(2 ** 32 / Math.max(1, n)));
    for (let i = 0; i < n; i++) a[i] = i * stride;
    return a;
  }
  if (kind === 'few-distinct-u32') {
    const palette = new Uint32Array(16).map(() => next());
    const a = new Uint32Array(n);
    for (let i = 0; i < n; i++) a[i] = palette[next() & 15];
    return a;
  }
  throw new Error(`unknown key kind ${kind}`);
}

export const SORT_KEY_KINDS = ['random-u32', 'random-f32', 'sorted-u32', 'few-distinct-u32'];

/** Scan input: 'random-u32' (any u32, sums wrap) or 'random-f32' (uniform in [0, 1)). */
export function scanArray(kind, n, seed = 13) {
  const next = rng(seed);
  if (kind === 'random-u32') return randomU32(n, next);
  if (kind === 'random-f32') {
    const a = new Float32Array(n);
    for (let i = 0; i < n; i++) a[i] = unit(next);
    return a;
  }
  throw new Error(`unknown scan kind ${kind}`);
}

/** u8 runs: lengths uniform in 1..2*meanRun-1, each run's value differs from the last one's. */
export function runsBytes(n, meanRun = 16, seed = 1) {
  const next = rng(seed);
  const a = new Uint8Array(n);
  for (let i = 0, value = 0; i < n; ) {
    const len = 1 + (next() % (2 * meanRun - 1));
    value = (value + 1 + (next() % 255)) & 0xff;
    a.fill(value, i, Math.min(n, i + len));
    i += len;
  }
  return a;
}

// ---- real samples -------------------------------------------------------------------------------

const SAMPLE_DIR = new URL('../../data/samples/', import.meta.url);
const TYPED = { u8: Uint8Array, u16: Uint16Array, u32: Uint32Array, i32: Int32Array, f32: Float32Array };

/**
 * The real samples shipped in data/samples/ (from Debian packages insighttoolkit5-examples and
 * python3-skimage): each with its typed array and its recorded source and license.
 */
export async function loadSamples(dir = SAMPLE_DIR) {
  const names = ['t1-brain-labels', 't1-kmeans-labels', 't1-mri', 'camera'];
  const out = [];
  for (const name of names) {
    const meta = JSON.parse(await readFile(new URL(`${name}.json`, dir), 'utf8'));
    const raw = await readFile(new URL(meta.file, dir));
    const Ctor = TYPED[meta.dtype];
    const copy = new Uint8Array(raw.byteLength);
    copy.set(raw);
    out.push({
      name,
      type: meta.dtype,
      shape: meta.shape,
      data: new Ctor(copy.buffer, 0, copy.byteLength / Ctor.BYTES_PER_ELEMENT),
      source: `${meta.source.package} ${meta.source.version} (${meta.source.distribution}): ${meta.source.pathInPackage}`,
      license: meta.source.license,
      description: meta.description,
    });
  }
  return out;
}

/** Rutter's Voxel3D-like volume: 512^3 bytes, zero but for splatted particles (balls of radius 2..5). */
export function sparseVolume(side = 512, particles = 4000) {
  const v = new Uint8Array(side * side * side);
  let s = 99;
  const rnd = (m) => ((s = (Math.imul(s, 1103515245) + 12345) >>> 0) >>> 8) % m;
  for (let p = 0; p < particles; p++) {
    const [cx, cy, cz, r, value] = [rnd(side), rnd(side), rnd(side), 2 + rnd(4), 1 + rnd(255)];
    for (let z = Math.max(0, cz - r); z <= Math.min(side - 1, cz + r); z++)
      for (let y = Math.max(0, cy - r); y <= Math.min(side - 1, cy + r); y++)
        for (let x = Math.max(0, cx - r); x <= Math.min(side - 1, cx + r); x++)
          if ((x - cx) ** 2 + (y - cy) ** 2 + (z - cz) ** 2 <= r * r) v[(z * side + y) * side + x] = value;
  }
  return v;
}

/**
 * Bytes in runs of 1..31 (mean 16) of pseudo-random values, each value 1..200 above the one
 * before (mod 256): what the engine's calibration measures (Engine.probe, from a 1 MiB pattern)
 * and the cost-model benchmark's RLE and codec cells run on.
 */
export function probeRunsBytes(n) {
  const u8 = new Uint8Array(n);
  for (let i = 0, s = 1, v = 0; i < n;) {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    const len = 1 + ((s >>> 8) % 31);
    v = (v + 1 + (s % 200)) & 255;
    u8.fill(v, i, Math.min(n, i + len));
    i += len;
  }
  return u8;
}

/** The engine's calibration data (Engine.probe): probeRunsBytes' first 1 MiB, repeated to `n` bytes. */
export function calibrationBytes(n) {
  const pattern = probeRunsBytes(1 << 20);
  const u8 = new Uint8Array(n);
  u8.set(pattern.subarray(0, Math.min(n, pattern.length)));
  for (let filled = Math.min(n, pattern.length); filled < n; filled *= 2) u8.copyWithin(filled, 0, Math.min(filled, n - filled));
  return u8;
}
