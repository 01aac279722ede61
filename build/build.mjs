// The build: AssemblyScript kernels -> build/*.wasm, then esbuild bundles of ts/ as ESM:
//   dist/node/index.js     the library for Node (package.json "exports" node condition)
//   dist/node/index.cjs    require('parle-codec'): an async bridge to index.js (ts/cjs/index.cjs)
//   dist/node/service.js   the HTTP service (`parle/service`; fastify, prom-client optional peers)
//   dist/node/cli.js       the `parle` command (bin/parle.mjs loads it)
//   dist/node/chunk-*.js   code the Node entries share (one copy of the library, one ParleError)
//   dist/*/worker.js       the CPU worker pool's worker script
//   dist/browser/index.js  the library for browsers (ts/platform/browser.ts swapped in)
//   dist/*/zarr.js         `parle-codec/zarr`: the Zarr codec's exports re-exported from index.js
//   dist/types/            .d.ts from tsc, and index.d.cts, checked as a consumer compiles them
//                          (skipped with --no-types)
//
// What a library user installs: comlink and xxhash-wasm (dependencies) stay imports; webgpu,
// fastify and prom-client are optional peer dependencies, loaded by import() where used
// (ts/gpu/device.ts, ts/service/load.ts); the CLI's own packages (commander, cli-progress, and
// fflate for `parle demo`) are bundled into the CLI's chunks, so `npx parle compress` works
// without them installed.
// Usage: node build/build.mjs [--quiet] [--no-types]
import * as esbuild from 'esbuild';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
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
  // maps without the sources' text, and the bundles' whitespace dropped (names kept): stack
  // traces still name ts/ files and lines and functions, and the package stays well under its
  // 5 MB install budget (test/consumers/node-esm)
  sourcemap: true,
  sourcesContent: false,
  minifyWhitespace: true,
  loader: { '.wgsl': 'text' },
  logLevel: quiet ? 'error' : 'warning',
};

/** Packages that stay imports in dist/node: dependencies and optional peer dependencies. */
const NODE_EXTERNAL = ['comlink', 'comlink/*', 'xxhash-wasm', 'webgpu', 'fastify', 'prom-client'];
// stale chunks of an earlier build would ship in the package
mkdirSync('dist/node', { recursive: true });
for (const name of readdirSync('dist/node', { withFileTypes: true }).map((e) => e.name).filter((n) => n.startsWith('chunk-'))) {
  rmSync(join('dist/node', name));
}
await esbuild.build({
  ...common,
  entryPoints: {
    index: 'ts/index.ts',
    service: 'ts/service/entry.ts',
    cli: 'ts/cli/main.ts',
    worker: 'ts/codec/cpu/worker.ts',
  },
  outdir: 'dist/node',
  platform: 'node',
  splitting: true,
  chunkNames: 'chunk-[hash]',
  external: NODE_EXTERNAL,
  // commander and cli-progress are CommonJS that require() Node built-ins: give the ES module
  // output a real require for them (esbuild's stand-in throws "Dynamic require ... not supported").
  banner: { js: "import { createRequire as __parleCreateRequire } from 'node:module';\nconst require = __parleCreateRequire(import.meta.url);" },
});
copyFileSync('ts/cjs/index.cjs', 'dist/node/index.cjs');
// `parle-codec/zarr` (ts/zarr/index.ts): the main entry's Zarr codec under its own names, a
// re-export of ./index.js so that it shares the one engine module with `parle-codec`
const ZARR_ENTRY =
  "// parle-codec/zarr: the Zarr v3 codec for zarrita.js (ts/zarr/index.ts), from the main entry.\n" +
  "export { registerZarrCodec as register, createZarrGet as createGet, zarrCodec, ParleZarrCodec, WorkerFetchStore, ZARR_CODEC_NAME, ZARR_DATA_TYPES } from './index.js';\n";
writeFileSync('dist/node/zarr.js', ZARR_ENTRY);
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
  entryPoints: { index: 'ts/index.ts', worker: 'ts/codec/cpu/worker.ts' },
  outdir: 'dist/browser',
  platform: 'browser',
  external: ['webgpu'],
  plugins: [browserPlatform],
});
writeFileSync('dist/browser/zarr.js', ZARR_ENTRY);
log('built dist/browser');

if (!process.argv.includes('--no-types')) {
  const tsc = (args) => execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', ...args], { stdio: 'inherit' });
  // declarations of a previous build's files that no longer exist would ship in the package
  rmSync('dist/types', { recursive: true, force: true });
  tsc(['--emitDeclarationOnly', '--outDir', 'dist/types']);
  copyFileSync('ts/cjs/index.d.cts', 'dist/types/index.d.cts');
  // The declarations as a strict application compiles them, with skipLibCheck off: a Node one
  // without the DOM lib and without @webgpu/types (the global types the declarations mention
  // are declared in ts/types.ts; a name missing there fails here, not in a user's build).
  // test/consumers/typescript checks the same from the packed tarball, and with those present.
  tsc([
    '--noEmit', '--strict', '--skipLibCheck', 'false', '--types', 'node', '--lib', 'es2022',
    '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022',
    'dist/types/index.d.ts', 'dist/types/index.d.cts', 'dist/types/service/index.d.ts', 'dist/types/zarr/index.d.ts',
  ]);
  log('built dist/types (checked as a strict application without the DOM lib and @webgpu/types compiles them)');
}
