// Bytes of a kernel's `src` binding (`var<storage, read> src: array<u32>`, declared by the
// kernel): words past the binding read as 0, so a lying offset reads zeros, never out of bounds.
// Shared piece: appended to codec-huffman.wgsl, codec-huffman-encode.wgsl and
// codec-pack-decode.wgsl by ts/codec/gpu/ (huffman-decode.ts, huffman-encode.ts, pack.ts) (WGSL has no includes).

fn srcWord(i: u32) -> u32 {
  if (i < arrayLength(&src)) { return src[i]; }
  return 0u;
}

// The byte at byte p of `src`.
fn read8(p: u32) -> u32 {
  return (srcWord(p >> 2u) >> ((p & 3u) * 8u)) & 0xFFu;
}

// Little-endian u32 at byte p of `src` (any alignment).
fn read32(p: u32) -> u32 {
  let s = (p & 3u) * 8u;
  let lo = srcWord(p >> 2u);
  if (s == 0u) { return lo; }
  return (lo >> s) | (srcWord((p >> 2u) + 1u) << (32u - s));
}
