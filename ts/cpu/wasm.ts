/**
 * Loading of build/parle.wasm (SIMD) or build/parle-scalar.wasm (its scalar twin) and the typed
 * view of their exports. The kernels' source is assembly/; their contract is written here once.
 *
 * Every pointer is a byte offset into the one imported `WebAssembly.Memory` (shared, up to
 * 4 GiB); every count is in elements unless it says bytes. Kernels allocate nothing: TypeScript
 * owns the memory layout (ts/cpu/memory.ts) and passes pointers.
 */
import { loadBuildAsset } from '../platform/node.js';

/** Key kinds of {@link Kernels.radixSort32} (U32, I32, F32) and {@link Kernels.radixSort64} (U64, I64, F64). */
export const enum KeyKind {
  U32 = 0,
  I32 = 1,
  F32 = 2,
  U64 = 3,
  I64 = 4,
  F64 = 5,
}

/** Bytes of scratch {@link Kernels.radixSort32} needs at `scratchPtr` (4 histograms of 256 u32). */
export const SORT_SCRATCH_BYTES = 4096;

/** Bytes of scratch {@link Kernels.radixSort64} needs at `scratchPtr` (8 histograms of 256 u32). */
export const SORT64_SCRATCH_BYTES = 8192;

/**
 * Bytes of scratch {@link Kernels.huffmanEncodeLanes} needs at `scratchPtr` for segments of
 * 2^segLog2 symbols: 3 x 2^segLog2 / 2 + 640 (a u32 mask a step, 32 lanes' bits of up to 11 bits
 * a symbol with 16 bytes for 8-byte stores, 32 u32 of lane cursors).
 */
export function lanesScratchBytes(segLog2: number): number {
  return 3 * 2 ** (segLog2 - 1) + 640;
}

/** Bytes of scratch the pack kernels need at `scratchPtr`. */
export const PACK_SCRATCH_BYTES = 8192;

/** Bytes a decode kernel may write past the end of its output (splatted v128 stores). */
export const DECODE_SLACK_BYTES = 32;

/** The kernels exported by both builds (the quantize kernels' contract: QuantizeKernels below). Element widths: 8, 16 or 32 bits. */
export interface Kernels extends QuantizeKernels {
  /** Start of the free heap: TypeScript places buffers at or above it. */
  heapBase(): number;
  /** True in the SIMD build, false in the scalar twin. */
  simdEnabled(): number;

  /**
   * Run-length encode `n` elements at `inPtr`: values to `valuesPtr` (same width), run lengths
   * (u32) to `lengthsPtr`; both need room for `n` entries, and entries past the returned count
   * (up to n) may be overwritten with scratch. Returns the run count (a float64, exact).
   * in [0,2,2,9,5,5,5,8] -> values [0,2,9,5,8], lengths [1,2,1,3,1]. Elements compare as bit
   * patterns. The output buffers must not overlap the input or each other.
   */
  rleEncode8(inPtr: number, n: number, valuesPtr: number, lengthsPtr: number): number;
  rleEncode16(inPtr: number, n: number, valuesPtr: number, lengthsPtr: number): number;
  rleEncode32(inPtr: number, n: number, valuesPtr: number, lengthsPtr: number): number;
  rleEncode64(inPtr: number, n: number, valuesPtr: number, lengthsPtr: number): number;

  /**
   * Expand `runCount` runs into `outPtr`; returns the element count written. The output needs
   * sum(lengths) elements plus {@link DECODE_SLACK_BYTES} of slack, and must not overlap the
   * runs. Zero lengths are allowed and write nothing. Counts come back as float64 (exact).
   */
  rleDecode8(valuesPtr: number, lengthsPtr: number, runCount: number, outPtr: number): number;
  rleDecode16(valuesPtr: number, lengthsPtr: number, runCount: number, outPtr: number): number;
  rleDecode32(valuesPtr: number, lengthsPtr: number, runCount: number, outPtr: number): number;
  rleDecode64(valuesPtr: number, lengthsPtr: number, runCount: number, outPtr: number): number;

  /**
   * Prefix sum of `n` u32 (also i32: wrapping addition is the same) from `inPtr` to `outPtr`,
   * starting from `carryIn`; inclusive when `inclusive` is 1, exclusive when 0. `inPtr ===
   * outPtr` (in place) is allowed; other overlap is not. Returns carryIn + sum (the carry for the
   * next chunk), as a u32 bit pattern read back as a JS number (use `>>> 0`).
   */
  scanU32(inPtr: number, outPtr: number, n: number, inclusive: number, carryIn: number): number;
  /** As {@link scanU32} for f32. The SIMD build adds in a different order than the scalar one. */
  scanF32(inPtr: number, outPtr: number, n: number, inclusive: number, carryIn: number): number;

  /**
   * Stable radix sort of `n` 32-bit keys, 8-bit digits. Below 3 x 2^20 keys: LSD with all four
   * digit histograms counted in one pass and passes skipped whose digit is equal in every key.
   * From 3 x 2^20 keys: one MSD split on the most significant digit that varies (buckets over
   * 2^17 keys split again), then LSD within each bucket while it sits in L2 (pure LSD ran at
   * 62 M keys/s there, cache-bound on the scatter to main memory). `keyKind` is a
   * {@link KeyKind}; f32 keys sort in IEEE 754 totalOrder. When `valuesPtr` is not 0, `n` u32
   * values move with their keys. `keysTmpPtr` / `valuesTmpPtr` are scratch of the same size;
   * `scratchPtr` is {@link SORT_SCRATCH_BYTES} bytes. Returns 0 when the result is in
   * keysPtr/valuesPtr, 1 when it is in the tmp buffers. No buffer may overlap another.
   */
  radixSort32(
    keysPtr: number,
    keysTmpPtr: number,
    valuesPtr: number,
    valuesTmpPtr: number,
    n: number,
    keyKind: number,
    scratchPtr: number,
  ): number;
  /**
   * Stable radix sort of `n` 64-bit keys (8 bytes each; `keyKind` U64, I64 or F64, f64 in IEEE
   * 754 totalOrder), eight 8-bit digits, with optional u32 values (4 bytes each): the design of
   * {@link radixSort32}, the MSD split from 3 x 2^19 keys (the same 12 MiB) and buckets split
   * again above 2^16 keys. `scratchPtr` is {@link SORT64_SCRATCH_BYTES} bytes. Returns 0 when the
   * result is in keysPtr/valuesPtr, 1 when it is in the tmp buffers. No buffer may overlap another.
   */
  radixSort64(
    keysPtr: number,
    keysTmpPtr: number,
    valuesPtr: number,
    valuesTmpPtr: number,
    n: number,
    keyKind: number,
    scratchPtr: number,
  ): number;

  /**
   * Write (length - 1) of each of `runCount` run lengths (all >= 1) as unsigned LEB128 to
   * `outPtr` (room for 5 bytes a run). Returns the bytes written (float64).
   */
  varintEncodeLengths(lengthsPtr: number, runCount: number, outPtr: number): number;
  /**
   * Read exactly `runCount` LEB128 values from `inBytes` bytes at `inPtr` and store value + 1
   * as u32 run lengths. Returns the bytes consumed, or -1 when the input ends early or a value
   * does not fit (more than 5 bytes, or value + 1 > 2^32 - 1). Never reads past the input.
   */
  varintDecodeLengths(inPtr: number, inBytes: number, lengthsPtr: number, runCount: number): number;
  /** Sum of `runCount` u32 lengths as a float64 (exact below 2^53). */
  sumLengths(lengthsPtr: number, runCount: number): number;

  /** Wrapping sum of `n` u32 (or i32); read back with `>>> 0`. The reduce step of a parallel scan. */
  reduceU32(inPtr: number, n: number): number;
  /** float32 sum of `n` f32 (four lanes, then the lanes). */
  reduceF32(inPtr: number, n: number): number;
  /**
   * Merge path: how many of the first `diag` outputs of a stable merge of sorted A and B come
   * from A (keys in {@link KeyKind} order; ties take A first).
   */
  mergePathSplit32(aPtr: number, aLen: number, bPtr: number, bLen: number, diag: number, keyKind: number): number;
  /**
   * Stable merge of sorted A and B into out (aLen + bLen keys); values move with their keys when
   * `aValsPtr` is not 0. Outputs must not overlap inputs.
   */
  mergeRuns32(
    aKeysPtr: number,
    aValsPtr: number,
    aLen: number,
    bKeysPtr: number,
    bValsPtr: number,
    bLen: number,
    outKeysPtr: number,
    outValsPtr: number,
    keyKind: number,
  ): void;
  /** {@link mergePathSplit32} on 64-bit keys (`keyKind` U64, I64 or F64). */
  mergePathSplit64(aPtr: number, aLen: number, bPtr: number, bLen: number, diag: number, keyKind: number): number;
  /** {@link mergeRuns32} on 64-bit keys with u32 values. */
  mergeRuns64(
    aKeysPtr: number,
    aValsPtr: number,
    aLen: number,
    bKeysPtr: number,
    bValsPtr: number,
    bLen: number,
    outKeysPtr: number,
    outValsPtr: number,
    keyKind: number,
  ): void;
  /** memmove of `n` bytes (overlap allowed). */
  copyBytes(dstPtr: number, srcPtr: number, n: number): void;
  /** memmove of `n` ranges in order, listed at `listPtr` as u32 triples (destination, source, bytes). */
  copyRanges(listPtr: number, n: number): void;

  // ---- the codec's kernels (assembly/hash.ts, delta.ts, shuffle.ts, statistics.ts, huffman.ts, huffman-lanes.ts; docs/format.md) ----
  /** XXH32 of `len` bytes at `ptr` with `seed`, as a u32 bit pattern (read back with `>>> 0`). */
  xxh32(ptr: number, len: number, seed: number): number;
  /**
   * The container's tree hash of `len` bytes at `ptr` (XXH32 of 4096-byte blocks, level after
   * level). `scratchPtr`: ceil(len / 4096) x 4 bytes, not overlapping the input. Read with `>>> 0`.
   */
  treeHash(ptr: number, len: number, scratchPtr: number): number;
  /** Delta encode of `n` elements: out[0] = in[0], out[i] = in[i] - in[i-1] (wrapping). No overlap. */
  deltaEncode8(inPtr: number, outPtr: number, n: number): void;
  deltaEncode16(inPtr: number, outPtr: number, n: number): void;
  deltaEncode32(inPtr: number, outPtr: number, n: number): void;
  /** Delta decode (wrapping inclusive prefix sum) of `n` elements; in place allowed, other overlap not. */
  deltaDecode8(inPtr: number, outPtr: number, n: number): void;
  deltaDecode16(inPtr: number, outPtr: number, n: number): void;
  deltaDecode32(inPtr: number, outPtr: number, n: number): void;
  /** Byte-plane shuffle of `n` 2- or 4-byte elements into 2 or 4 planes of n bytes at `outPtr`. No overlap. */
  shuffle16(inPtr: number, outPtr: number, n: number): void;
  shuffle32(inPtr: number, outPtr: number, n: number): void;
  /** Inverse of the shuffle: planes of n bytes at `inPtr` to n elements. No overlap. */
  unshuffle16(inPtr: number, outPtr: number, n: number): void;
  unshuffle32(inPtr: number, outPtr: number, n: number): void;
  /** Byte histogram of `n` bytes into 256 u32 at `histPtr` (overwritten); `scratchPtr`: 4096 bytes. */
  histogram8(ptr: number, n: number, histPtr: number, scratchPtr: number): void;
  /**
   * The chooser's one-pass statistics of `n` elements, added to `histPtr` (2 x size x 256 u32:
   * byte histograms of each plane of the elements, then of their deltas) and `runsPtr`
   * (2 + 2 x size u32: element runs of elements and deltas, then byte runs per plane of each).
   */
  codecStats8(inPtr: number, n: number, histPtr: number, runsPtr: number): void;
  codecStats16(inPtr: number, n: number, histPtr: number, runsPtr: number): void;
  codecStats32(inPtr: number, n: number, histPtr: number, runsPtr: number): void;
  /**
   * Canonical codes of 256 code lengths (u8) into 256 u32 (bit-reversed code | length << 16).
   * Returns the Kraft sum x 2^11 (2048 = complete), or -1 for a length over 11.
   */
  huffmanBuildCodes(lengthsPtr: number, codesPtr: number): number;
  /**
   * The decode table at `tablePtr` (12 KiB, indexed by the next 11 bits: 2048 u32 of up to four
   * symbols, then 2048 u16 of total bits | (count - 1) << 6 | the first code's length << 8; read
   * only by huffmanDecode); codesPtr is 1 KiB of scratch. 0, or -1 if invalid.
   */
  /** `symbols`: the stream's length, which picks single- or multi-symbol entries. */
  huffmanBuildTable(lengthsPtr: number, codesPtr: number, tablePtr: number, symbols: number): number;
  /**
   * Huffman-encodes `n` bytes in segments of 2^segLog2 symbols (each from a byte boundary) to
   * `outPtr` (exact size plus 8 bytes of slack); segment end offsets (u32, bytes) to `offsetsPtr`.
   * Returns the bytes written.
   */
  huffmanEncode(srcPtr: number, n: number, codesPtr: number, segLog2: number, outPtr: number, offsetsPtr: number): number;
  /**
   * Decodes `n` symbols from the segments at `srcPtr` (`srcBytes` long, validated end offsets at
   * `offsetsPtr`; 8 readable bytes past the end) into `outPtr`. 0, or -1 when a segment needs bits
   * past its end.
   */
  huffmanDecode(srcPtr: number, srcBytes: number, offsetsPtr: number, segLog2: number, n: number, tablePtr: number, outPtr: number): number;
  /**
   * Huffman-encodes `n` bytes at `srcPtr` as mode-3 segments (docs/format.md, "Mode 3: interleaved
   * lanes") of 2^segLog2 symbols with the codes at `codesPtr` (256 u32 from huffmanBuildCodes) at
   * `outPtr`: each segment's 16-bit units (little-endian) in the order 32 lockstep lanes read
   * them. Segment k's end offset (u32, bytes from `outPtr`) goes to offsetsPtr[k]. Writes exactly
   * the returned bytes (no slack past them); a segment of B code bits takes at most ceil(B / 8) + 64
   * bytes, always even. `scratchPtr`: {@link lanesScratchBytes}(segLog2) bytes, 8-byte aligned
   * (the steps' lane masks and each lane's bits; 6784 at segLog2 12). No buffer may overlap
   * another. Every symbol present must have a code. Returns the bytes written (a float64, exact).
   */
  huffmanEncodeLanes(
    srcPtr: number,
    n: number,
    codesPtr: number,
    segLog2: number,
    outPtr: number,
    offsetsPtr: number,
    scratchPtr: number,
  ): number;
  /**
   * The bytes {@link huffmanEncodeLanes} would write for the same `n` bytes, codes and segLog2
   * (per segment, 2 bytes a unit of each lane's ceil(B / 16)), without writing anything: one pass
   * of code-length lookups. Returns a float64, exact.
   */
  huffmanLanesBytes(srcPtr: number, n: number, codesPtr: number, segLog2: number): number;
  /**
   * Decodes `n` symbols from mode-3 segments of 2^segLog2 symbols at `srcPtr` (`srcBytes` long;
   * segment k ends at offsetsPtr[k] bytes, u32) with the tables at `tablePtr` (huffmanBuildTable,
   * either kind; pass `symbols` 0 for the cheaper single-symbol build: only an entry's first
   * symbol and its length are read) into exactly `n` bytes at `outPtr`, nothing written past them.
   * Reads only [srcPtr, srcPtr + srcBytes), the offsets and the table, whatever the input: no
   * slack needed. Returns 0, or -1 for corrupt input: offsets decreasing or past srcBytes, a
   * segment of an odd byte length, a segment that reads past its units or leaves units unread
   * (`outPtr`'s bytes are then unspecified).
   */
  huffmanDecodeLanes(
    srcPtr: number,
    srcBytes: number,
    offsetsPtr: number,
    segLog2: number,
    n: number,
    tablePtr: number,
    outPtr: number,
  ): number;

  // ---- the pack stage (assembly/pack.ts; docs/format.md "Pack streams") ----
  /**
   * Packs `n` elements of `width` (1, 2, 4) bytes into a pack stream at `outPtr`, writing at most
   * `capacity` bytes; `scratchPtr`: {@link PACK_SCRATCH_BYTES}. Returns the stream's bytes, or -1
   * when it would not fit. No overlap.
   */
  packEncode(inPtr: number, n: number, width: number, outPtr: number, capacity: number, scratchPtr: number): number;
  /** The exact bytes {@link packEncode} writes for these elements. */
  packBytes(inPtr: number, n: number, width: number, scratchPtr: number): number;
  /**
   * The chooser's pack sizes of `n` elements (d[0] = x[0] for the deltas), added to 2 f64 at
   * `outPtr`: the elements', then their deltas'; exact, but a block of one value counts as b = 1.
   */
  packStats(inPtr: number, n: number, width: number, outPtr: number, scratchPtr: number): void;
  /**
   * Decodes a pack stream of `srcBytes` at `srcPtr` into exactly `n` elements of `width` bytes at
   * `outPtr` (nothing written past them). Returns the bytes its blocks took (a valid stream:
   * srcBytes), or -1 for a header field out of range or a block past the stream's end; never
   * reads past the stream.
   */
  packDecode(srcPtr: number, srcBytes: number, n: number, width: number, outPtr: number, scratchPtr: number): number;

  /** Counts the four 8-bit digits of `n` keys' order keys into 4 x 256 u32 at `histPtr` (digit 0 first). */
  radixHistograms32(keysPtr: number, n: number, keyKind: number, histPtr: number): void;
  /**
   * Stable scatter of `n` keys (and values when `srcValsPtr` is not 0) by the digit at bit
   * `shift` of their order keys to dst[offsets[digit]++]; `offsetsPtr`: 256 u32, advanced.
   */
  radixScatter32(
    srcKeysPtr: number,
    srcValsPtr: number,
    dstKeysPtr: number,
    dstValsPtr: number,
    n: number,
    keyKind: number,
    shift: number,
    offsetsPtr: number,
  ): void;
  /**
   * Sorts buckets first .. last - 1 in place (bucket b: elements bounds[b] .. bounds[b+1] - 1,
   * `boundsPtr` u32 offsets), with tmp buffers of the same layout and 4096 bytes of scratch.
   */
  radixSortBuckets32(
    keysPtr: number,
    tmpKeysPtr: number,
    valsPtr: number,
    tmpValsPtr: number,
    boundsPtr: number,
    first: number,
    last: number,
    keyKind: number,
    scratchPtr: number,
  ): void;
  /** {@link radixHistograms32} on 64-bit keys: 8 x 256 u32 at `histPtr`. */
  radixHistograms64(keysPtr: number, n: number, keyKind: number, histPtr: number): void;
  /** {@link radixScatter32} on 64-bit keys (`shift` 0..56) with u32 values. */
  radixScatter64(
    srcKeysPtr: number,
    srcValsPtr: number,
    dstKeysPtr: number,
    dstValsPtr: number,
    n: number,
    keyKind: number,
    shift: number,
    offsetsPtr: number,
  ): void;
  /** {@link radixSortBuckets32} on 64-bit keys, with {@link SORT64_SCRATCH_BYTES} of scratch. */
  radixSortBuckets64(
    keysPtr: number,
    tmpKeysPtr: number,
    valsPtr: number,
    tmpValsPtr: number,
    boundsPtr: number,
    first: number,
    last: number,
    keyKind: number,
    scratchPtr: number,
  ): void;
}

/** Names of the kernel functions a worker may be asked to run. */
export type KernelName = Exclude<keyof Kernels, 'heapBase' | 'simdEnabled'>;

/**
 * Which build to load: the SIMD kernels over a shared memory, their scalar twins, or the SIMD
 * kernels over an unshared memory (for runtimes without SharedArrayBuffer, where each worker
 * owns its memory and segments are transferred).
 */
export type KernelVariant = 'simd' | 'scalar' | 'simd-unshared';

const BUILD_FILES: Record<KernelVariant, string> = {
  simd: 'parle.wasm',
  scalar: 'parle-scalar.wasm',
  'simd-unshared': 'parle-unshared.wasm',
};

/** Bytes of one wasm page. */
export const WASM_PAGE_BYTES = 65536;
/** The wasm32 address space: 65536 pages = 4 GiB (the modules' declared maximum). */
export const MAX_MEMORY_PAGES = 65536;

const moduleCache = new Map<KernelVariant, Promise<WebAssembly.Module>>();

/** Compiles the module once per variant and process; later calls share it (workers get it posted). */
export function compileKernels(variant: KernelVariant = 'simd'): Promise<WebAssembly.Module> {
  let cached = moduleCache.get(variant);
  if (!cached) {
    cached = loadBuildAsset(BUILD_FILES[variant]).then((bytes) => WebAssembly.compile(bytes));
    moduleCache.set(variant, cached);
  }
  return cached;
}

/** A memory the kernels of `variant` can import; it grows on demand up to 4 GiB. */
export function createKernelMemory(initialPages = 256, variant: KernelVariant = 'simd'): WebAssembly.Memory {
  return new WebAssembly.Memory({ initial: initialPages, maximum: MAX_MEMORY_PAGES, shared: variant !== 'simd-unshared' });
}

/** Instantiates the kernels over `memory`. */
export async function instantiateKernels(module: WebAssembly.Module, memory: WebAssembly.Memory): Promise<Kernels> {
  const instance = await WebAssembly.instantiate(module, { env: { memory } });
  return instance.exports as unknown as Kernels;
}

/** The quantize kernels (assembly/quantize.ts), part of {@link Kernels}. */
export interface QuantizeKernels {
  /**
   * Quantizes `n` f32 at `inPtr`: codes (u32) to `codesPtr`, reconstructions to `reconPtr`, the
   * first `cap` exceptions' indices and bits to `excIndexPtr` / `excValuePtr`. Returns the
   * exception count (may exceed cap). Parameters from quantizeParams (ts/codec/quantize.ts).
   */
  quantizeF32(
    inPtr: number,
    n: number,
    step: number,
    inv: number,
    tol: number,
    limBits: number,
    codesPtr: number,
    reconPtr: number,
    excIndexPtr: number,
    excValuePtr: number,
    cap: number,
  ): number;
  /** Codes to f32 (exceptions as 0); returns the Code.Exception count, or -1 for an invalid code. In place allowed. */
  dequantizeF32(codesPtr: number, n: number, step: number, outPtr: number): number;
  /** Writes the exceptions over the output, checking order, range and codes; 0 or -1. */
  scatterExceptions(codesPtr: number, n: number, excIndexPtr: number, excValuePtr: number, e: number, outPtr: number): number;
  /**
   * Quantizes `n` f64 at `inPtr` (docs/format.md, "Stage 5: quantize", f64): codes (u32) to
   * `codesPtr`, reconstructions (f64) to `reconPtr`, the first `cap` exceptions' u32 indices and
   * u64 bits to `excIndexPtr` / `excValuePtr`. `lim` = step x 2^30. Returns the exception count
   * (may exceed cap). Parameters from quantizeParamsF64 (ts/codec/quantize.ts).
   */
  quantizeF64(
    inPtr: number,
    n: number,
    step: number,
    inv: number,
    tol: number,
    lim: number,
    codesPtr: number,
    reconPtr: number,
    excIndexPtr: number,
    excValuePtr: number,
    cap: number,
  ): number;
  /** Codes to f64 (exceptions as 0); returns the Code.Exception count, or -1 for an invalid code. No overlap. */
  dequantizeF64(codesPtr: number, n: number, step: number, outPtr: number): number;
  /** Writes f64 exceptions (u32 indices, u64 bits) over the output, checking order, range and codes; 0 or -1. */
  scatterExceptions64(codesPtr: number, n: number, excIndexPtr: number, excValuePtr: number, e: number, outPtr: number): number;
  /**
   * Stage 7 (assembly/predict.ts): zigzagged residuals of rows first..first+rows-1 of the values at
   * uPtr (rows of `row` elements, planes of `planeRows` rows, cells of `lead` elements) under
   * predictor `p`, interleaved at outPtr. No overlap.
   */
  predictEncode8(uPtr: number, outPtr: number, row: number, planeRows: number, lead: number, p: number, first: number, rows: number): void;
  predictEncode16(uPtr: number, outPtr: number, row: number, planeRows: number, lead: number, p: number, first: number, rows: number): void;
  predictEncode32(uPtr: number, outPtr: number, row: number, planeRows: number, lead: number, p: number, first: number, rows: number): void;
  /** The inverse over `rows` whole rows; in place allowed. */
  predictDecode8(resPtr: number, outPtr: number, row: number, planeRows: number, lead: number, p: number, rows: number): void;
  predictDecode16(resPtr: number, outPtr: number, row: number, planeRows: number, lead: number, p: number, rows: number): void;
  predictDecode32(resPtr: number, outPtr: number, row: number, planeRows: number, lead: number, p: number, rows: number): void;
  /** Interleaved cells of `fields` elements to field-major planes (split) and back (join). No overlap. */
  splitFields8(inPtr: number, outPtr: number, fields: number, cells: number): void;
  splitFields16(inPtr: number, outPtr: number, fields: number, cells: number): void;
  splitFields32(inPtr: number, outPtr: number, fields: number, cells: number): void;
  joinFields8(inPtr: number, outPtr: number, fields: number, cells: number): void;
  joinFields16(inPtr: number, outPtr: number, fields: number, cells: number): void;
  joinFields32(inPtr: number, outPtr: number, fields: number, cells: number): void;
  /** fpzip's order-preserving map of f32 bits, and its inverse; in place allowed. */
  floatOrderEncode(inPtr: number, outPtr: number, n: number): void;
  floatOrderDecode(inPtr: number, outPtr: number, n: number): void;
  /** ALP's decimal map of f32 (exponent a field at expPtr, F[e] at factorPtr); returns the exceptions (may exceed cap). */
  decimalEncodeF32(
    inPtr: number,
    outPtr: number,
    n: number,
    fields: number,
    expPtr: number,
    factorPtr: number,
    excIndexPtr: number,
    excValuePtr: number,
    cap: number,
  ): number;
  /** The decimal map's inverse (exceptions not written); in place allowed. */
  decimalDecodeF32(inPtr: number, outPtr: number, n: number, fields: number, expPtr: number, factorPtr: number): void;
  /** Writes listed u32 values at strictly increasing indices below n; 0, or 1 for bad indices. */
  scatterBits32(outPtr: number, n: number, indexPtr: number, valuePtr: number, e: number): number;
  /** fpzip's order-preserving map of f64 bits, and its inverse; in place allowed. */
  floatOrderEncode64(inPtr: number, outPtr: number, n: number): void;
  floatOrderDecode64(inPtr: number, outPtr: number, n: number): void;
  /** ALP's decimal map of f64 to i64 (exponent a field at expPtr); returns the exceptions (may exceed cap). No overlap. */
  decimalEncodeF64(
    inPtr: number,
    outPtr: number,
    n: number,
    fields: number,
    expPtr: number,
    excIndexPtr: number,
    excValuePtr: number,
    cap: number,
  ): number;
  /** The f64 decimal map's inverse (exceptions not written); in place allowed. */
  decimalDecodeF64(inPtr: number, outPtr: number, n: number, fields: number, expPtr: number): void;
  /** Writes listed u64 bits at their indices; 1 when the indices are out of order or range. */
  scatterBits64(outPtr: number, n: number, indexPtr: number, valuePtr: number, e: number): number;
}
