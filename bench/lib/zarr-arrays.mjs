// The arrays and codecs of the Zarr benchmarks (issue #46): bench/zarr.mjs writes and reads them
// in Node, bench/zarr-browser.mjs writes them in Node and reads them in Chromium.
//
// The arrays as the targets state them: at least 64 MiB (a corpus array stacked along its
// first axis, as a series of volumes or tiles is, until it reaches `minBytes`), chunks of about
// `chunkBytes` (whole rows of the axes after the first). Every codec sees the same chunks.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { dataFiles, readArray, repeatTo } from './files.mjs';
import { ROOT } from './results.mjs';

/** Zarr's data type of each corpus element type. */
export const ZARR_DTYPES = { u8: 'uint8', u16: 'uint16', u32: 'uint32', i16: 'int16', f32: 'float32', f64: 'float64' };

/** The 2-D and 3-D corpus arrays of a full run, and of --quick. */
export const ZARR_FILES = ['mri_colin27_t1.u8', 'macaque_atlas_labels.u16', 'dem_trinidad.f32', 'pdb_atoms.f32'];
export const ZARR_QUICK_FILES = ['dem_trinidad.f32'];

/**
 * The codecs compared, by name: parle at levels 5 and 1, the floor of any codec's read (zarrita
 * allocating the array and copying each chunk into it; on the VM a fresh 64 MiB array costs about
 * 270 ms of page faults on first touch) and zarrita's numcodecs codecs (zarrita's gzip does not
 * encode). Blosc's `typesize` is the array's element size: codecsOf fills it.
 */
export const ZARR_CODECS = {
  parle: [{ name: 'parle', configuration: { level: 5 } }],
  'parle level 1': [{ name: 'parle', configuration: { level: 1 } }],
  'uncompressed (bytes)': [{ name: 'bytes', configuration: { endian: 'little' } }],
  'numcodecs zstd 1': [
    { name: 'bytes', configuration: { endian: 'little' } },
    { name: 'zstd', configuration: { level: 1, checksum: false } },
  ],
  'numcodecs blosc zstd 5 shuffle': [
    { name: 'bytes', configuration: { endian: 'little' } },
    { name: 'blosc', configuration: { cname: 'zstd', clevel: 5, shuffle: 'shuffle', typesize: 4, blocksize: 0 } },
  ],
};

/** The codec list of ZARR_CODECS[name] for elements of `bytesPerElement` bytes. */
export function codecsOf(name, bytesPerElement) {
  return ZARR_CODECS[name].map((c) =>
    c.name === 'blosc' ? { ...c, configuration: { ...c.configuration, typesize: bytesPerElement } } : c,
  );
}

/**
 * The corpus files to run: `files` (comma-separated exact names), else --quick's one, else
 * ZARR_FILES; those present. Throws when none is (bash bench/corpus/fetch.sh fetches them).
 */
export function zarrFiles({ files, quick = false } = {}) {
  const wanted = files?.split(',') ?? (quick ? ZARR_QUICK_FILES : ZARR_FILES);
  const chosen = dataFiles({ samples: [] }).filter((f) => wanted.includes(f.name));
  if (chosen.length === 0) throw new Error('no corpus file found: run bash bench/corpus/fetch.sh');
  return chosen;
}

let index;

/**
 * The corpus file's array stacked along its first axis (whole copies) to at least `minBytes`,
 * with chunks of about `chunkBytes`: { data, shape, stride, chunkShape, dtype, region }. `region`
 * is the sub-region the benchmarks read, [start, stop) per axis: two chunks' rows from a third of
 * the way in, the middle half of the other axes.
 */
export function stackedArray(file, { minBytes, chunkBytes }) {
  index ??= JSON.parse(readFileSync(join(ROOT, 'bench/corpus/index.json'), 'utf8'));
  const one = readArray(file);
  const oneShape = index.find((e) => e.file === file.name).shape;
  const copies = Math.max(1, Math.ceil(minBytes / one.byteLength));
  const data = repeatTo(new Uint8Array(one.buffer), copies * one.byteLength, file.Ctor);
  const shape = [oneShape[0] * copies, ...oneShape.slice(1)];
  const rowBytes = (one.byteLength / oneShape[0]) | 0;
  const chunkShape = [Math.max(1, Math.min(shape[0], Math.round(chunkBytes / rowBytes))), ...shape.slice(1)];
  const stride = shape.map((_, d) => shape.slice(d + 1).reduce((a, x) => a * x, 1));
  const region = shape.map((d, i) =>
    i === 0 ? [Math.floor(d / 3), Math.min(d, Math.floor(d / 3) + 2 * chunkShape[0])] : [Math.floor(d / 4), Math.floor((3 * d) / 4)],
  );
  return { data, shape, stride, chunkShape, dtype: ZARR_DTYPES[file.type], region };
}

/**
 * The elements of `region` ([start, stop) per axis) of `data` (C order, `shape`), as a new typed
 * array in C order: what zarrita's get of that region gives.
 */
export function regionOf(data, shape, region) {
  const dims = region.map(([a, b]) => b - a);
  const out = new data.constructor(dims.reduce((a, x) => a * x, 1));
  const stride = shape.map((_, d) => shape.slice(d + 1).reduce((a, x) => a * x, 1));
  const last = shape.length - 1;
  let at = 0;
  const walk = (d, offset) => {
    if (d === last) {
      const from = offset + region[d][0];
      out.set(data.subarray(from, from + dims[d]), at);
      at += dims[d];
      return;
    }
    for (let i = region[d][0]; i < region[d][1]; i++) walk(d + 1, offset + i * stride[d]);
  };
  walk(0, 0);
  return out;
}

/** The bytes of a store's chunks (every file under `dir` but the zarr.json metadata). */
export function storeBytes(dir) {
  let total = 0;
  const walk = (d) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name !== 'zarr.json') total += statSync(p).size;
    }
  };
  walk(dir);
  return total;
}
