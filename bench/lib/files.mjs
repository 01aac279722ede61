// The arrays the benchmarks run on: the corpus (bench/corpus/index.json; its data/ is fetched by
// `bash bench/corpus/fetch.sh`) and the samples `npm start` uses (data/samples/), each file's
// element type its extension's. Also: repeating an array to a size, and comparing bytes.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CTORS, typeOfFile } from './measure.mjs';
import { ROOT } from './results.mjs';

export { CTORS, typeOfFile };

/** The samples of data/samples/ (ts/cli/demo.ts SAMPLES). */
export const SAMPLES = ['t1-brain-labels.u8', 't1-kmeans-labels.u8', 't1-mri.u16', 'camera.u8'];

/**
 * The files to run: the corpus files that are present (a warning for each missing one) when
 * `corpus`, then `samples`; with `files` (comma-separated names or their beginnings) only those;
 * with `device`, only those a DeviceArray holds (elements of 1, 2 or 4 bytes: 8-byte ones stay on
 * the CPU path; a note for each left out). Each: { name, path (absolute), rel (from the
 * repository root), type, Ctor, source, shape (corpus files: bench/corpus/index.json's) }.
 */
export function dataFiles({ corpus = true, samples = SAMPLES, files, device = false } = {}) {
  const all = [];
  if (corpus) {
    for (const { file, shape } of JSON.parse(readFileSync(join(ROOT, 'bench/corpus/index.json'), 'utf8'))) {
      all.push({ name: file, rel: `bench/corpus/data/${file}`, source: 'corpus', shape });
    }
  }
  for (const name of samples) all.push({ name, rel: `data/samples/${name}`, source: 'samples' });
  const wanted = files
    ?.split(',')
    .map((f) => f.trim())
    .filter(Boolean);
  for (const w of wanted ?? []) if (!all.some((f) => f.name.startsWith(w))) console.warn(`warning: no file matches ${w}`);
  const chosen = [];
  for (const f of all) {
    if (wanted && !wanted.some((w) => f.name.startsWith(w))) continue;
    const path = join(ROOT, f.rel);
    if (!existsSync(path)) {
      console.warn(`warning: ${f.rel} is missing (bash bench/corpus/fetch.sh fetches the corpus): skipped`);
      continue;
    }
    const type = typeOfFile(f.name);
    if (device && CTORS[type].BYTES_PER_ELEMENT > 4) {
      console.warn(`note: ${f.name} has 8-byte elements, which the GPU path does not take: skipped`);
      continue;
    }
    chosen.push({ ...f, path, type, Ctor: CTORS[type] });
  }
  return chosen;
}

/** The file's elements, over a buffer of their own (aligned, unlike a Buffer pool slice). */
export function readArray(file) {
  const raw = readFileSync(file.path);
  const bytes = new Uint8Array(raw.length);
  bytes.set(raw);
  return new file.Ctor(bytes.buffer);
}

/** `raw` repeated (the last copy cut short) to `bytes` bytes, rounded down to whole elements of `Ctor`. */
export function repeatTo(raw, bytes, Ctor = Uint8Array) {
  const B = Math.floor(bytes / Ctor.BYTES_PER_ELEMENT) * Ctor.BYTES_PER_ELEMENT;
  const out = new Uint8Array(B);
  for (let at = 0; at < B; at += raw.length) out.set(raw.subarray(0, Math.min(raw.length, B - at)), at);
  return new Ctor(out.buffer);
}

/**
 * `host` (elements of a corpus `file`, bench/corpus/index.json) cut to whole rows of the file's
 * shape, and that shape with the rows counted again: { host, shape } (a 1-D file: all of it).
 */
export function wholeRows(host, file) {
  const own = file.shape ?? [host.length];
  const rowElements = own.slice(1).reduce((a, b) => a * b, 1);
  const rows = Math.floor(host.length / rowElements);
  return { host: host.subarray(0, rows * rowElements), shape: [rows, ...own.slice(1)] };
}

/**
 * A corpus `file`'s bytes `raw` repeated (or cut) to `mib` MiB of whole elements; with
 * `withShape`, cut to whole rows of its shape: { host, shaped } (shaped: compress's `{ shape }`
 * option, or {} flat).
 */
export function repeatedArray(raw, mib, file, withShape) {
  const host = repeatTo(raw, Math.round(mib * 2 ** 20), file.Ctor);
  if (!withShape) return { host, shaped: {} };
  const rows = wholeRows(host, file);
  return { host: rows.host, shaped: { shape: rows.shape } };
}

/** A typed array's bytes (a view, no copy). */
export const bytesOf = (a) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);

/** Whether two typed arrays hold the same bytes. */
export const sameBytes = (a, b) => a.byteLength === b.byteLength && Buffer.compare(bytesOf(a), bytesOf(b)) === 0;

/** The range (max - min) of the finite values of a numeric array; 1 where there are fewer than two distinct ones. */
export function finiteRange(x) {
  let lo = Infinity;
  let hi = -Infinity;
  for (const v of x) {
    if (!Number.isFinite(v)) continue;
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  return hi > lo ? hi - lo : 1;
}
