// The kernels of build/parle.wasm (SIMD) and build/parle-scalar.wasm (scalar twins), one
// family a file. Their contract, as TypeScript sees it, is the Kernels interface in
// ts/cpu/wasm.ts. Counts returned as f64 are exact up to 2^53 (a u32 return would read back
// negative in JS above 2^31).

/** Start of the free heap: TypeScript places buffers at or above it. */
export function heapBase(): usize {
  return __heap_base;
}
/** True in the SIMD build, false in the scalar twin. */
export function simdEnabled(): bool {
  return ASC_FEATURE_SIMD;
}

export { rleEncode8, rleEncode16, rleEncode32, rleEncode64, rleDecode8, rleDecode16, rleDecode32, rleDecode64 } from './rle';
export { scanU32, scanF32 } from './scan';
export { radixSort32, radixSort64 } from './radix-sort';
export { varintEncodeLengths, varintDecodeLengths, sumLengths } from './varint';
export {
  reduceU32,
  reduceF32,
  mergePathSplit32,
  mergeRuns32,
  copyBytes,
  copyRanges,
  radixHistograms32,
  radixScatter32,
  radixSortBuckets32,
  mergePathSplit64,
  mergeRuns64,
  radixHistograms64,
  radixScatter64,
  radixSortBuckets64,
} from './parallel';
export { xxh32, treeHash } from './hash';
export { deltaEncode8, deltaEncode16, deltaEncode32, deltaDecode8, deltaDecode16, deltaDecode32 } from './delta';
export { shuffle16, shuffle32, unshuffle16, unshuffle32 } from './shuffle';
export { histogram8, codecStats8, codecStats16, codecStats32 } from './statistics';
export { huffmanBuildCodes, huffmanBuildTable, huffmanEncode, huffmanDecode } from './huffman';
export { huffmanEncodeLanes, huffmanLanesBytes, huffmanDecodeLanes } from './huffman-lanes';
export { quantizeF32, dequantizeF32, scatterExceptions, quantizeF64, dequantizeF64, scatterExceptions64 } from './quantize';
export { packEncode, packBytes, packStats, packDecode } from './pack';
export {
  predictEncode8,
  predictEncode16,
  predictEncode32,
  predictDecode8,
  predictDecode16,
  predictDecode32,
  splitFields8,
  splitFields16,
  splitFields32,
  joinFields8,
  joinFields16,
  joinFields32,
  floatOrderEncode,
  floatOrderDecode,
  decimalEncodeF32,
  decimalDecodeF32,
  scatterBits32,
  floatOrderEncode64,
  floatOrderDecode64,
  decimalEncodeF64,
  decimalDecodeF64,
  scatterBits64,
} from './predict';
