// The peers parle is measured against, in the same run: plain JS loops (RLE, scan),
// TypedArray.prototype.sort, fflate (deflate levels 1 and 6), lz4-wasm-nodejs, @bokuweb/zstd-wasm,
// CompressionStream('gzip') (a Node 20 global, zlib underneath) and @thi.ng/rle-pack.
//
// Each codec is { name, encode(u8) -> bytes, decode(bytes, byteLength) -> u8 }; encode/decode may
// return a promise (the gzip streams do). Inputs are the bytes of any typed array.
import { deflateSync, inflateSync } from 'fflate';
import lz4 from 'lz4-wasm-nodejs';
import * as zstd from '@bokuweb/zstd-wasm';
import { encodeBinary, decodeBinary } from '@thi.ng/rle-pack';
import { jsExclusiveScan, jsRleDecode, jsRleEncode } from '../lib/baselines.mjs';

export { jsExclusiveScan, jsRleDecode, jsRleEncode };

let zstdReady;
/** Loads zstd's wasm once. */
export function initPeers() {
  zstdReady ??= zstd.init();
  return zstdReady;
}

/** The bytes of a typed array, without a copy. */
export const bytesOf = (a) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);

async function streamThrough(bytes, transform) {
  const stream = new Blob([bytes]).stream().pipeThrough(transform);
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/**
 * Plain JS RLE in Rutter's format: (count, value) byte pairs, a run longer than 255 split. The
 * size his tables report; 2 bytes per run of up to 255.
 */
export function jsPairRleEncode(input) {
  const n = input.length;
  const out = new Uint8Array(Math.max(2, 2 * n));
  let o = 0;
  let i = 0;
  while (i < n) {
    const v = input[i];
    let count = 1;
    while (i + count < n && count < 255 && input[i + count] === v) count++;
    out[o++] = count;
    out[o++] = v;
    i += count;
  }
  return out.subarray(0, o);
}

export function jsPairRleDecode(pairs, byteLength) {
  const out = new Uint8Array(byteLength);
  let o = 0;
  for (let p = 0; p < pairs.length; p += 2) {
    out.fill(pairs[p + 1], o, o + pairs[p]);
    o += pairs[p];
  }
  return out;
}

/** Compressors with a size: peers of parle's .parle container. */
export const CODECS = [
  { name: 'fflate deflate-1', encode: (u8) => deflateSync(u8, { level: 1 }), decode: (b) => inflateSync(b) },
  { name: 'fflate deflate-6', encode: (u8) => deflateSync(u8, { level: 6 }), decode: (b) => inflateSync(b) },
  {
    name: "CompressionStream('gzip')",
    encode: (u8) => streamThrough(u8, new CompressionStream('gzip')),
    decode: (b) => streamThrough(b, new DecompressionStream('gzip')),
  },
  { name: 'lz4-wasm', encode: (u8) => lz4.compress(u8), decode: (b) => lz4.decompress(b) },
  { name: 'zstd-wasm -3', encode: (u8) => zstd.compress(u8, 3), decode: (b) => zstd.decompress(b) },
  { name: 'JS pair RLE (Rutter)', encode: (u8) => jsPairRleEncode(u8), decode: (b, n) => jsPairRleDecode(b, n) },
];

/** Looks a codec up by name. */
export const codec = (name) => {
  const c = CODECS.find((x) => x.name === name);
  if (!c) throw new Error(`no codec ${name}`);
  return c;
};

// ---- RLE as runs (values + lengths), the shape parle's rleEncode returns ------------------------



/** @thi.ng/rle-pack: bit-packed RLE of 8-bit words (its binary format). */
export const rlePackEncode = (u8) => encodeBinary(u8, u8.length, 8);
export const rlePackDecode = (packed) => decodeBinary(packed);

// ---- scan and sort baselines --------------------------------------------------------------------

