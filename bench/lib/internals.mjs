// Parts of ts/ that the package does not export, bundled with esbuild for the benchmarks that need
// them into bench/.build/<name>.mjs (git-ignored):
//   gpu-layer  the WebGPU layer alone (ts/gpu/): bench/gpu-layer.mjs
//   huffman    the Huffman code lengths the library computes (ts/codec/huffman.ts): codec.mjs, huffman-kernels.mjs
//   service    the service, the CPU path and the engine: bench/service-load.mjs's server
// A bundle is rebuilt on every load where esbuild is installed (a dev dependency), so it follows
// ts/; where it is not (the GPU machine), the bundle built before is used:
//   node bench/lib/internals.mjs        builds them all (bench/gpu-machine.sh pack does)
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ROOT } from './results.mjs';

const ENTRIES = {
  'gpu-layer': ["export * from './ts/gpu/index.ts';"],
  huffman: ["export { codeLengths, codedBits, DEFAULT_SEGMENT_LOG2 } from './ts/codec/huffman.ts';"],
  service: [
    "export { createService } from './ts/service/index.ts';",
    "export { CpuPath } from './ts/cpu/cpu-path.ts';",
    "export { PROCEDURES } from './ts/codec/cpu/procedures.ts';",
    "export { Engine } from './ts/engine.ts';",
  ],
};

let esbuild;
try {
  esbuild = await import('esbuild');
} catch {
  esbuild = null;
}

/** Builds bench/.build/<name>.mjs where esbuild is installed; returns its path. */
export async function bundle(name) {
  if (!ENTRIES[name]) throw new Error(`no internal bundle ${name} (${Object.keys(ENTRIES).join(', ')})`);
  const outfile = join(ROOT, 'bench/.build', `${name}.mjs`);
  if (esbuild) {
    await esbuild.build({
      stdin: { contents: ENTRIES[name].join('\n'), resolveDir: ROOT, loader: 'ts' },
      bundle: true,
      format: 'esm',
      platform: 'node',
      target: 'es2022',
      packages: 'external',
      loader: { '.wgsl': 'text' },
      outfile,
      logLevel: 'error',
    });
  } else if (!existsSync(outfile)) {
    throw new Error(`${outfile} is missing and esbuild is not installed: run \`node bench/lib/internals.mjs\` where it is`);
  }
  return outfile;
}

/** Imports bundle `name` (built first where esbuild is installed). */
export async function loadInternals(name) {
  return import(pathToFileURL(await bundle(name)).href);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  for (const name of Object.keys(ENTRIES)) console.log(await bundle(name));
}
