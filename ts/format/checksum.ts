/**
 * XXH64 through xxhash-wasm (a well-kept WebAssembly build of xxHash). Measured here: about
 * 5 GB/s for 4 MiB inputs, copy into its memory included; XXH32 from the same package was
 * slower (3.5 GB/s), so the container stores 64-bit checksums.
 */
import xxhash from 'xxhash-wasm';

const api = await xxhash();

/** XXH64 of `bytes` with seed 0, as an unsigned 64-bit bigint. */
export function xxh64(bytes: Uint8Array): bigint {
  return api.h64Raw(bytes);
}
