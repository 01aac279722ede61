// Compiles assembly/ with AssemblyScript into two modules with the same exports:
//   build/parle.wasm         128-bit SIMD kernels (the one the library runs)
//   build/parle-scalar.wasm  the scalar twins (ASC_FEATURE_SIMD is false), compared in tests
//   build/parle-unshared.wasm  SIMD over an unshared memory (no SharedArrayBuffer)
// The shared builds import their memory (env.memory, shared, up to 4 GiB) so that one WebAssembly.Memory
// can be shared by a pool of workers; kernels allocate nothing and take pointers.
import asc from 'assemblyscript/asc';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Flags common to both builds. 65536 pages of 64 KiB = 4 GiB, the wasm32 limit. */
export const commonFlags = [
  'assembly/index.ts',
  '-O3',
  '--noAssert',
  '--runtime', 'stub',
  '--importMemory',
  '--initialMemory', '1',
  '--maximumMemory', '65536',
  '--use', 'abort=',
];

/** A memory that a pool of workers can share. */
const shared = ['--sharedMemory', '--enable', 'threads'];

export async function buildWasm({ quiet = false } = {}) {
  const variants = [
    { out: 'build/parle.wasm', flags: ['--enable', 'simd', ...shared] },
    { out: 'build/parle-scalar.wasm', flags: ['--disable', 'simd', ...shared] },
    // For runtimes without SharedArrayBuffer (a page that is not cross-origin isolated).
    { out: 'build/parle-unshared.wasm', flags: ['--enable', 'simd'] },
  ];
  for (const v of variants) {
    const { error, stderr } = await asc.main([...commonFlags, ...v.flags, '--outFile', v.out, '--textFile', v.out.replace(/\.wasm$/, '.wat')], {
      stdout: process.stdout,
      stderr: process.stderr,
      // asc resolves paths against the working directory
    });
    if (error) {
      throw new Error(`asc failed for ${v.out}: ${error.message}\n${stderr.toString()}`);
    }
    if (!quiet) console.log(`built ${v.out}`);
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  process.chdir(root);
  await buildWasm({ quiet: process.argv.includes('--quiet') });
}
