// The real arrays of bench/corpus/ (index.json, data/ fetched by bench/corpus/fetch.sh) as typed
// arrays, for the benchmarks that repeat them to a size.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CTORS } from './browser/measure.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));

/**
 * The corpus entries whose file name starts with one of `files` (a comma-separated list; all when
 * undefined) and whose data is present (a warning for each missing one): { entry, Ctor, raw }.
 */
export function corpusFiles(files) {
  const index = JSON.parse(readFileSync(join(root, 'bench/corpus/index.json'), 'utf8'));
  const out = [];
  for (const entry of index) {
    if (files !== undefined && !files.split(',').some((f) => entry.file.startsWith(f))) continue;
    const path = join(root, 'bench/corpus/data', entry.file);
    if (!existsSync(path)) {
      console.warn(`missing ${path} (skipped)`);
      continue;
    }
    out.push({ entry, Ctor: CTORS[entry.file.split('.').pop()], raw: readFileSync(path) });
  }
  return out;
}

/** `raw` repeated (or cut) to `mib` MiB, a whole number of elements of `Ctor`, as a new `Ctor` array. */
export function repeatTo(raw, mib, Ctor) {
  const B = Math.floor((mib << 20) / Ctor.BYTES_PER_ELEMENT) * Ctor.BYTES_PER_ELEMENT;
  const bytes = new Uint8Array(B);
  for (let at = 0; at < B; at += raw.length) bytes.set(raw.subarray(0, Math.min(raw.length, B - at)), at);
  return new Ctor(bytes.buffer, 0, B / Ctor.BYTES_PER_ELEMENT);
}
