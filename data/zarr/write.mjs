// Writes the Zarr v3 store the demo page opens (web/zarr-view.js): data/zarr/t1-mri.zarr/, the
// real T1 MRI volume of data/samples/t1-mri.u16 (62 x 128 x 128 u16, 1.9 MiB) as an array whose
// chunks are coded by the `parle` codec (level 5), written with zarrita's FileSystemStore.
//
//   node build/build.mjs --quiet --no-types && node data/zarr/write.mjs [OUT_DIR]
//
// OUT_DIR defaults to data/zarr/t1-mri.zarr (removed first, then written anew). Chunks are
// 4 x 64 x 64 voxels (32 KiB of u16): a slice along axis 0 spans 4 chunks (2 x 2), and the 62
// slices end in a partial edge chunk (slices 60 and 61). The provenance and licence of the data
// (data/samples/SOURCE.md) go into the array's attributes; the script reads the array back and
// checks it equals the sample before it reports the store's size.
//
// Containers depend on the codec's version: the same parle writes the same bytes (one worker, no
// GPU, the cost model's defaults), a later format or chooser may write others.
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as zarr from 'zarrita';
import { FileSystemStore } from '@zarrita/storage';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const { createEngine } = await import(join(root, 'dist/node/index.js')).catch(() => {
  throw new Error('dist/node is missing: run `node build/build.mjs --quiet --no-types` first');
});
const { register } = await import(join(root, 'dist/node/zarr.js'));

/** Voxels a chunk along each axis (z, y, x). */
export const CHUNK_SHAPE = [4, 64, 64];
/** The codec's configuration in the array's metadata. */
export const CODEC = { name: 'parle', configuration: { level: 5 } };

/** Bytes of every file under `dir`, and how many files. */
function sizeOf(dir) {
  let bytes = 0;
  let files = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    bytes += statSync(join(entry.parentPath ?? entry.path, entry.name)).size;
    files++;
  }
  return { bytes, files };
}

/** C-order strides (elements) of `shape`. */
function stridesOf(shape) {
  return shape.map((_, d) => shape.slice(d + 1).reduce((a, n) => a * n, 1));
}

/**
 * Writes the sample `t1-mri` as a Zarr v3 array at `outDir` (the store's root is the array) and
 * returns its size: `{ bytes, files, rawBytes }`.
 * @throws Error when the sample's SHA-256 is not the one data/samples/t1-mri.json records, or the
 *   array read back differs from it
 */
export async function writeStore(outDir) {
  const samples = join(root, 'data/samples');
  const description = JSON.parse(readFileSync(join(samples, 't1-mri.json'), 'utf8'));
  const raw = readFileSync(join(samples, description.file));
  const sha256 = createHash('sha256').update(raw).digest('hex');
  if (sha256 !== description.sha256) throw new Error(`${description.file}: SHA-256 ${sha256}, t1-mri.json records ${description.sha256}`);
  const data = new Uint16Array(raw.buffer, raw.byteOffset, raw.byteLength / 2);
  let min = Infinity;
  let max = -Infinity;
  for (const v of data) {
    if (v < min) min = v;
    if (v > max) max = v;
  }

  // one worker, no GPU, default rates: the chooser sees the same inputs on every machine
  const engine = await createEngine({ workers: 1, gpu: 'off', calibration: 'skip' });
  register(zarr.registry, { engine });
  try {
    rmSync(outDir, { recursive: true, force: true });
    const store = new FileSystemStore(outDir);
    const arr = await zarr.create(zarr.root(store), {
      shape: description.shape,
      chunkShape: CHUNK_SHAPE,
      dtype: 'uint16',
      codecs: [CODEC],
      fillValue: 0,
      dimensionNames: description.axes,
      attributes: {
        description: `${description.description} Written by data/zarr/write.mjs with the parle codec (level ${CODEC.configuration.level}).`,
        spacing_mm: description.spacing_mm,
        // the values a viewer maps to black and white: the volume's own range
        window: { min, max },
        source: {
          ...description.source,
          file: `data/samples/${description.file}`,
          sha256,
          licenseFile: 'data/samples/LICENSE-Apache-2.0.txt',
          provenance: 'data/samples/SOURCE.md',
        },
      },
    });
    await zarr.set(arr, null, { data, shape: description.shape, stride: stridesOf(description.shape) });

    const back = await zarr.get(await zarr.open.v3(new FileSystemStore(outDir), { kind: 'array' }));
    if (!Buffer.from(back.data.buffer, back.data.byteOffset, back.data.byteLength).equals(raw)) {
      throw new Error(`${outDir}: the array read back differs from ${description.file}`);
    }
    const expectedChunks = description.shape.reduce((n, d, i) => n * Math.ceil(d / CHUNK_SHAPE[i]), 1);
    const { bytes, files } = sizeOf(outDir);
    // every chunk is written (none equals the fill value everywhere, so zarrita keeps them all):
    // the page asks for each one's size and a missing one would be a 404 in its console
    if (files !== expectedChunks + 1) throw new Error(`${outDir}: ${files} files; expected ${expectedChunks} chunks and zarr.json`);
    return { bytes, files, rawBytes: raw.byteLength };
  } finally {
    zarr.registry.delete('parle');
    await engine.destroy();
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const outDir = process.argv[2] ?? join(root, 'data/zarr/t1-mri.zarr');
  const { bytes, files, rawBytes } = await writeStore(outDir);
  console.log(
    `${relative(process.cwd(), outDir) || '.'}: ${files} files, ${bytes} bytes ` +
      `(${rawBytes} bytes of u16: ${(rawBytes / bytes).toFixed(2)}x); read back equal to data/samples/t1-mri.u16`,
  );
}
