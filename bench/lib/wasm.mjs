// The wasm kernels called directly, for the benchmarks that time a kernel alone (cpu-kernels.mjs,
// huffman-kernels.mjs): a SIMD build of assembly/ (build/parle.wasm) on a shared memory of its
// own, with a bump allocator, so the data is already in wasm memory when a kernel runs.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ROOT } from './results.mjs';

/**
 * An instance of the kernels of `file` (default build/parle.wasm): { file, k (the exports),
 * alloc(bytes) -> a 64-byte aligned offset (the memory grows as needed), reset() (frees
 * everything allocated), view(Ctor, ptr, length) }.
 */
export async function kernels(file = join(ROOT, 'build/parle.wasm')) {
  const memory = new WebAssembly.Memory({ initial: 256, maximum: 65536, shared: true });
  const module = await WebAssembly.compile(await readFile(file));
  const { exports: k } = await WebAssembly.instantiate(module, { env: { memory } });
  if (!k.simdEnabled()) throw new Error(`${file} is not the SIMD build`);
  const heapBase = (k.heapBase() + 63) & ~63;
  let top = heapBase;
  return {
    file,
    k,
    reset() {
      top = heapBase;
    },
    alloc(bytes) {
      const ptr = Math.ceil(top / 64) * 64;
      top = ptr + bytes;
      const have = memory.buffer.byteLength;
      if (top > have) memory.grow(Math.ceil((top - have) / 65536));
      return ptr;
    },
    view: (Ctor, ptr, length) => new Ctor(memory.buffer, ptr, length),
  };
}

/**
 * V8 runs a wasm function in its baseline compiler (Liftoff, 2-4x slower for these kernels) until
 * it has used a budget, then compiles it with TurboFan in the background and switches at a later
 * call. A few rounds of calls and a pause first, so that every timed call runs optimized code.
 */
export async function warmUp(fns, rounds = 3) {
  for (let round = 0; round < rounds; round++) for (const fn of fns) await fn();
  await new Promise((resolve) => setTimeout(resolve, 300));
}
