// Bundles bench/internals/*.ts (the kernels' own entry points, outside the package's API) into
// bench/internals/dist/*.mjs for the benchmarks that time a kernel alone (bench/huffman-gpu.mjs).
// Run after `npm ci`: node bench/internals/build.mjs
import * as esbuild from 'esbuild';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
await esbuild.build({
  entryPoints: { huffman: join(here, 'huffman.ts') },
  outdir: join(here, 'dist'),
  outExtension: { '.js': '.mjs' },
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'es2022',
  loader: { '.wgsl': 'text' },
  external: ['webgpu'],
  logLevel: 'warning',
});
