// The build: AssemblyScript kernels -> build/*.wasm, then esbuild bundles of ts/ as ESM:
//   dist/node/index.js     the library for Node (package.json "exports" node condition)
//   dist/node/cli.js       the `parle` command (bin/parle.mjs loads it)
//   dist/*/worker.js       the CPU worker pool's worker script
//   dist/browser/index.js  the library for browsers (ts/platform/browser.ts swapped in)
//   dist/types/            .d.ts from tsc (skipped with --no-types)
// Usage: node build/build.mjs [--quiet] [--no-types]
import * as esbuild from 'esbuild';
import { execFileSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildWasm } from './wasm.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
process.chdir(root);
const quiet = process.argv.includes('--quiet');
const log = (msg) => quiet || console.log(msg);

await buildWasm({ quiet });

const common = {
  bundle: true,
  format: 'esm',
  target: 'es2022',
  sourcemap: true,
  loader: { '.wgsl': 'text' },
  logLevel: quiet ? 'error' : 'warning',
};

await esbuild.build({
  ...common,
  entryPoints: { index: 'ts/index.ts', cli: 'ts/cli/main.ts', worker: 'ts/cpu/worker-entry.ts' },
  outdir: 'dist/node',
  platform: 'node',
  packages: 'external',
});
log('built dist/node');

/** Swaps ts/platform/node.ts for its browser twin. */
const browserPlatform = {
  name: 'browser-platform',
  setup(build) {
    build.onResolve({ filter: /platform\/node\.js$/ }, (args) => ({
      path: join(args.resolveDir, args.path.replace(/node\.js$/, 'browser.ts')),
    }));
  },
};
await esbuild.build({
  ...common,
  entryPoints: { index: 'ts/index.ts', worker: 'ts/cpu/worker-entry.ts' },
  outdir: 'dist/browser',
  platform: 'browser',
  external: ['webgpu'],
  plugins: [browserPlatform],
});
log('built dist/browser');

if (!process.argv.includes('--no-types')) {
  execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '--emitDeclarationOnly', '--outDir', 'dist/types'], { stdio: 'inherit' });
  log('built dist/types');
}
