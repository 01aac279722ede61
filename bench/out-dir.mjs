// Where a benchmark writes its results: the folder after `--out DIR` when given; for a quick run
// (`--quick`) bench/.quick/ (git-ignored), so that a smoke run never overwrites the committed
// figures in bench/results/ and bench/report/; otherwise `committed`, the full run's place.
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

/** The quick runs' folder, bench/.quick/<name>. */
export const quickDir = (name = '') => join(root, 'bench/.quick', name);

/**
 * The output folder (created). `out`: the --out value or undefined; `quick`: a quick run;
 * `committed`: the full run's folder (absolute, or relative to the repository root).
 */
export function outputDir({ out, quick, committed }) {
  const dir = out !== undefined ? resolve(out) : quick ? quickDir(committed.replace(/^.*bench\//, '')) : resolve(root, committed);
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** The value after `--out` in argv, or undefined. */
export function outArg(argv = process.argv) {
  const i = argv.indexOf('--out');
  if (i >= 0 && argv[i + 1] !== undefined) return argv[i + 1];
  const eq = argv.find((a) => a.startsWith('--out='));
  return eq?.slice('--out='.length);
}
