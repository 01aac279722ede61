/**
 * Decoding of one version-2 chunk on the CPU kernels (assembly/: hash.ts, delta.ts, shuffle.ts,
 * huffman.ts, huffman-lanes.ts, pack.ts, quantize.ts and the RLE / LEB128 kernels), run by one
 * thread (a worker, or the engine's thread for small inputs) on the kernels' memory: the
 * payload's tree hash, its streams after the stream directory (./directory.ts), the stages
 * undone, and the elements' tree hash; or an rle chunk's streams down to its runs, for a GPU to
 * expand ({@link decodeRunsAt}). It reads what docs/format.md specifies in "Payloads" ("RLE
 * streams (stage 3)", "Huffman streams", "Mode 3: interleaved lanes", "Pack streams"),
 * "Pipelines and stages", "Stage 5: quantize" and "Tree hash", with the checks of "What a
 * reader checks". Plain functions of pointers: all scratch comes from one arena the caller
 * allocates ({@link decodeArenaBytes}, {@link decodeArenaBytesFor}; ./arena.ts).
 */
import { ErrorCodes, ParleError } from '../../errors.js';
import type { ChunkEntry } from '../../format/layout.js';
import { PACK_SCRATCH_BYTES } from '../../cpu/wasm.js';
import { HuffmanMode, readHeader } from '../huffman.js';
import { entropyStage, pipelineProblem, StageId, streamCount, type Pipeline } from '../../format/stages.js';
import { readQuantizeHeader } from '../../format/quantize.js';
import { Arena, decimalTablesAt, exponentsAt, SLACK, SMALL_SCRATCH, treeHashAt, u32, u8, type CodecContext } from './arena.js';
import { exceptionBytes, readFieldBlocks, readPredictHeader, ValueMap } from '../../format/predict.js';
import { packStreamWidth, readDirectory, runsLayout, type Directory } from './directory.js';

/** Arena bytes {@link decodeChunkAt} needs for a chunk with this directory. */
export function decodeArenaBytes(directory: Directory, count: number, width: number): number {
  let streams = 0;
  for (const d of directory.decoded) streams += d + 16;
  return (
    SMALL_SCRATCH + streams + SLACK + 4 * count + SLACK + count * width + SLACK + Math.ceil(Math.max(count * width, 1) / 4096) * 4 + SLACK
  );
}

/**
 * Arena bytes {@link decodeChunkAt} needs for chunk `index` (its entry passed `readEntry`) with
 * this payload: of its stream directory, and for a quantized chunk of its codes too.
 * @throws ParleError CORRUPT (the directory or the quantize header)
 */
export function decodeArenaBytesFor(payload: Uint8Array, entry: ChunkEntry, width: 1 | 2 | 4 | 8, index: number): number {
  const stages = (entry.stages ?? []) as Pipeline;
  const count = entry.elementCount;
  if (entry.predict === true) {
    // the planes, and the largest field block's decode
    const head = readPredictHeader(payload, count, width, index);
    const n = head.words / head.fields;
    let most = 0;
    for (const block of readFieldBlocks(payload, head, index)) {
      if (block.stages.length === 0) continue;
      const stream = payload.subarray(block.at, block.at + block.bytes);
      most = Math.max(
        most,
        decodeArenaBytes(readDirectory(stream, block.bytes, block.stages as Pipeline, head.wordWidth, n, index), n, head.wordWidth),
      );
    }
    const lists = exceptionBytes(width) * head.exceptions;
    return most + count * width + lists + 4 * SLACK + SMALL_SCRATCH + Math.ceil(Math.max(count * width, 1) / 4096) * 4;
  }
  if (stages.length === 0) return 4096 + Math.ceil(Math.max(payload.length, 1) / 4096) * 4 + 64;
  if (entry.quantize !== true) {
    const w = pipelineWidth(width, index);
    return decodeArenaBytes(readDirectory(payload, payload.length, stages, w, count, index), count, w);
  }
  const head = readQuantizeHeader(payload, payload.length, count, 8 * streamCount(stages, 4), index, quantizedWidth(width, index));
  const codes = payload.subarray(head.codesAt);
  return decodeArenaBytes(readDirectory(codes, codes.length, stages, 4, count, index), count, 4) + 4 * count + 2 * SLACK;
}

/**
 * The element width of a quantized chunk: 4 (f32) or 8 (f64; ts/format/layout.ts allows
 * quantize on no other type, this guards a caller that did not read the entry).
 * @throws ParleError CORRUPT naming chunk `index`
 */
function quantizedWidth(width: 1 | 2 | 4 | 8, index: number): 4 | 8 {
  if (width !== 4 && width !== 8)
    throw new ParleError(ErrorCodes.CORRUPT, `corrupt .parle chunk ${index}: quantize stage on elements that are not f32 or f64`);
  return width;
}

/**
 * The element width a version-2 pipeline runs at: 8-byte elements have none (their chunks are
 * stored or predicted; ts/format/layout.ts rejects the entry, this guards a caller that did not read it).
 * @throws ParleError CORRUPT naming chunk `index`
 */
function pipelineWidth(width: 1 | 2 | 4 | 8, index: number): 1 | 2 | 4 {
  if (width === 8) throw new ParleError(ErrorCodes.CORRUPT, `corrupt .parle chunk ${index}: a pipeline on 8-byte elements`);
  return width;
}

/** What every chunk decode procedure takes: the chunk, its payload and an arena of scratch. */
export interface ChunkDecodeBase {
  elementSize: 1 | 2 | 4 | 8;
  entry: ChunkEntry;
  index: number;
  /** The payload, with at least 16 readable bytes after it. */
  payloadPtr: number;
  arenaPtr: number;
  arenaBytes: number;
}

/** Parameters of {@link decodeChunkAt}. */
export interface DecodeChunkParams extends ChunkDecodeBase {
  /** Room for entry.elementCount elements plus 32 bytes of slack. */
  outPtr: number;
  /** Check the payload hash and decode, but leave the elements' hash unchecked (a GPU checks it). */
  skipElementsHash?: boolean;
  /**
   * Write nothing past the chunk's elements at outPtr (they lie in place in a larger array whose
   * next chunk another thread may be writing): the RLE expand, which overshoots by up to 32
   * bytes, then goes to the arena (which needs count x size + 96 more bytes).
   */
  exactOut?: boolean;
}

/**
 * Decodes one version-2 chunk whose entry passed `readEntry`: checks the payload's tree hash,
 * decodes every stream, undoes the stages and checks the elements' tree hash.
 * @throws ParleError CHECKSUM_MISMATCH, CORRUPT
 */
export function decodeChunkAt(ctx: CodecContext, p: DecodeChunkParams): null {
  const { kernels } = ctx;
  const { entry, index } = p;
  const width = p.elementSize;
  const count = entry.elementCount;
  const raw = count * width;
  const stages = (entry.stages ?? []) as Pipeline;
  const corrupt = (why: string) => new ParleError(ErrorCodes.CORRUPT, `corrupt .parle chunk ${index}: ${why}`);
  const arena = new Arena(p.arenaPtr, p.arenaPtr + p.arenaBytes);
  if (treeHashAt(ctx, arena, p.payloadPtr, entry.payloadBytes) !== Number(entry.payloadChecksum)) {
    throw new ParleError(ErrorCodes.CHECKSUM_MISMATCH, `chunk ${index}: payload checksum mismatch`);
  }
  if (entry.predict === true) {
    decodePredicted(ctx, arena, p);
  } else if (stages.length === 0) {
    kernels.copyBytes(p.outPtr, p.payloadPtr, raw);
  } else if (entry.quantize === true) {
    // f32 or f64: the u32 codes decoded at width 4, mapped to elements, the exceptions written over them
    const f64 = quantizedWidth(width, index) === 8;
    const head = readQuantizeHeader(
      u8(ctx, p.payloadPtr, entry.payloadBytes),
      entry.payloadBytes,
      count,
      8 * streamCount(stages, 4),
      index,
      f64 ? 8 : 4,
    );
    const codes = arena.alloc(4 * count + SLACK);
    decodePipelineTo(ctx, arena, p.payloadPtr + head.codesAt, entry.payloadBytes - head.codesAt, stages, 4, count, codes, false, index);
    const found = (f64 ? kernels.dequantizeF64 : kernels.dequantizeF32)(codes, count, head.step, p.outPtr);
    if (found < 0) throw corrupt('a code that is neither a quantized value nor a reserved one');
    if (found !== head.exceptions) throw corrupt(`${found} exception codes, ${head.exceptions} exceptions listed`);
    const indices = p.payloadPtr + head.indicesAt;
    const values = p.payloadPtr + head.valuesAt;
    if ((f64 ? kernels.scatterExceptions64 : kernels.scatterExceptions)(codes, count, indices, values, head.exceptions, p.outPtr) !== 0) {
      throw corrupt('exception indices out of order, out of range, or not at exception codes');
    }
  } else {
    const w = pipelineWidth(width, index);
    decodePipelineTo(ctx, arena, p.payloadPtr, entry.payloadBytes, stages, w, count, p.outPtr, p.exactOut === true, index);
  }
  if (p.skipElementsHash !== true && treeHashAt(ctx, arena, p.outPtr, raw) !== Number(entry.elementsChecksum)) {
    throw new ParleError(ErrorCodes.CHECKSUM_MISMATCH, `chunk ${index}: decoded elements checksum mismatch`);
  }
  return null;
}

/**
 * Decodes a pipeline's payload (`payloadBytes` at `payloadPtr`: stream directory and streams) of
 * `count` elements of `width` bytes into `outPtr`, undoing the stages. `exactOut`: write nothing
 * past the elements (see {@link DecodeChunkParams}).
 * @throws ParleError CORRUPT
 */
function decodePipelineTo(
  ctx: CodecContext,
  arena: Arena,
  payloadPtr: number,
  payloadBytes: number,
  stages: Pipeline,
  width: 1 | 2 | 4,
  count: number,
  outPtr: number,
  exactOut: boolean,
  index: number,
): void {
  const { kernels } = ctx;
  const raw = count * width;
  const corrupt = (why: string) => new ParleError(ErrorCodes.CORRUPT, `corrupt .parle chunk ${index}: ${why}`);
  const problem = pipelineProblem(stages, width);
  if (problem) throw corrupt(problem);
  const dir = readDirectory(u8(ctx, payloadPtr, payloadBytes), payloadBytes, stages, width, count, index);
  const shuffle = stages.includes(StageId.Shuffle);
  const rle = stages.includes(StageId.Rle);
  const delta = stages.includes(StageId.Delta);
  // 1. the streams, decoded one after another into the arena (planes end up contiguous)
  const ptrs = decodeStreams(ctx, arena, payloadPtr, dir, stages, width, index);
  // 2. runs back to streams: into out, or into a temp when planes still need unshuffling
  const planes = shuffle ? width : 1;
  const streamWidth = shuffle ? 1 : width;
  let planesPtr = ptrs[0];
  if (rle) {
    const target = shuffle || exactOut ? arena.alloc(raw + SLACK) : outPtr;
    const lengths = arena.alloc(4 * count + SLACK);
    for (let k = 0; k < planes; k++) {
      const R = dir.decoded[2 * k] / streamWidth;
      const lebBytes = dir.decoded[2 * k + 1];
      const consumed = kernels.varintDecodeLengths(ptrs[2 * k + 1], lebBytes, lengths, R);
      if (consumed !== lebBytes) throw corrupt(`stream ${2 * k + 1}: run lengths are not ${R} LEB128 values`);
      const total = kernels.sumLengths(lengths, R);
      if (total !== count) throw corrupt(`stream ${2 * k + 1}: run lengths sum to ${total}, expected ${count}`);
      const decode = streamWidth === 1 ? kernels.rleDecode8 : streamWidth === 2 ? kernels.rleDecode16 : kernels.rleDecode32;
      decode(ptrs[2 * k], lengths, R, target + k * count * streamWidth);
    }
    planesPtr = target;
  }
  // 3. planes back to elements, 4. deltas back to elements (in place in out)
  if (shuffle) {
    (width === 2 ? kernels.unshuffle16 : kernels.unshuffle32)(planesPtr, outPtr, count);
  } else if (delta) {
    // straight from the streams (or the expanded runs) into out: the sum needs no copy first
    (width === 1 ? kernels.deltaDecode8 : width === 2 ? kernels.deltaDecode16 : kernels.deltaDecode32)(planesPtr, outPtr, count);
  } else if (planesPtr !== outPtr) {
    kernels.copyBytes(outPtr, planesPtr, raw);
  }
  if (shuffle && delta)
    (width === 1 ? kernels.deltaDecode8 : width === 2 ? kernels.deltaDecode16 : kernels.deltaDecode32)(outPtr, outPtr, count);
}

/**
 * Decodes every stream of a payload (pipeline `stages` over elements of `width` bytes) into the
 * arena, one after another; returns their pointers.
 * @throws ParleError CORRUPT
 */
function decodeStreams(
  ctx: CodecContext,
  arena: Arena,
  payloadPtr: number,
  dir: Directory,
  stages: Pipeline,
  width: 1 | 2 | 4,
  index: number,
): number[] {
  const entropy = entropyStage(stages);
  const streamsPtr = arena.alloc(dir.decoded.reduce((a, d) => a + d, 0) + SLACK);
  const packScratch = entropy === StageId.Pack ? arena.alloc(PACK_SCRATCH_BYTES) : 0;
  const ptrs: number[] = [];
  let cursor = streamsPtr;
  for (let j = 0; j < dir.decoded.length; j++) {
    const D = dir.decoded[j];
    const src = payloadPtr + dir.at[j];
    ptrs.push(cursor);
    if (entropy === undefined) {
      ctx.kernels.copyBytes(cursor, src, D);
    } else if (entropy === StageId.Huffman) {
      decodeHuffmanStream(ctx, arena, u8(ctx, src, dir.encoded[j]), src, D, cursor, index, j);
    } else {
      const w = packStreamWidth(stages, width, j);
      const E = dir.encoded[j];
      if (ctx.kernels.packDecode(src, E, D / w, w, cursor, packScratch) !== E) {
        throw new ParleError(
          ErrorCodes.CORRUPT,
          `corrupt .parle chunk ${index}, stream ${j}: pack stream does not decode to ${D} bytes in its ${E}`,
        );
      }
    }
    cursor += D;
  }
  return ptrs;
}

/** Parameters of {@link decodeRunsAt}. */
export interface DecodeRunsParams extends ChunkDecodeBase {
  /** Room for the layout's valueBytes, and for its runs u32 lengths ({@link runsLayout}). */
  valuesPtr: number;
  lengthsPtr: number;
}

/**
 * Decodes a version-2 rle chunk's streams down to its runs (for an expand elsewhere, the GPU):
 * run values and u32 run lengths of each stream pair at the places {@link runsLayout} gives,
 * each followed by a pad run when its expansion would not end on a 4-byte boundary. Checks the
 * run lengths (LEB128, count, sum) but no hash: the caller checks the payload's hash before
 * and the elements' hash after.
 * @throws ParleError CORRUPT
 */
export function decodeRunsAt(ctx: CodecContext, p: DecodeRunsParams): null {
  const { kernels } = ctx;
  const { entry, index } = p;
  const width = pipelineWidth(p.elementSize, index);
  const count = entry.elementCount;
  const stages = (entry.stages ?? []) as Pipeline;
  const corrupt = (why: string) => new ParleError(ErrorCodes.CORRUPT, `corrupt .parle chunk ${index}: ${why}`);
  const problem = pipelineProblem(stages, width);
  if (problem) throw corrupt(problem);
  if (!stages.includes(StageId.Rle)) throw corrupt('no rle stage');
  const arena = new Arena(p.arenaPtr, p.arenaPtr + p.arenaBytes);
  const dir = readDirectory(u8(ctx, p.payloadPtr, entry.payloadBytes), entry.payloadBytes, stages, width, count, index);
  const ptrs = decodeStreams(ctx, arena, p.payloadPtr, dir, stages, width, index);
  const { slots } = runsLayout(dir, stages, width, count);
  for (let k = 0; k < slots.length; k++) {
    const slot = slots[k];
    const lengths = p.lengthsPtr + 4 * slot.lengthsAt;
    const lebBytes = dir.decoded[2 * k + 1];
    const consumed = kernels.varintDecodeLengths(ptrs[2 * k + 1], lebBytes, lengths, slot.runs);
    if (consumed !== lebBytes) throw corrupt(`stream ${2 * k + 1}: run lengths are not ${slot.runs} LEB128 values`);
    const total = kernels.sumLengths(lengths, slot.runs);
    if (total !== count) throw corrupt(`stream ${2 * k + 1}: run lengths sum to ${total}, expected ${count}`);
    kernels.copyBytes(p.valuesPtr + slot.valuesAt, ptrs[2 * k], slot.runs * slot.width);
    if (slot.pad > 0) {
      u8(ctx, p.valuesPtr + slot.valuesAt + slot.runs * slot.width, slot.width).fill(0);
      u32(ctx, lengths + 4 * slot.runs, 1)[0] = slot.pad;
    }
  }
  return null;
}

/** Decodes one Huffman stream (`stream`, at `streamPtr` in memory) of `D` bytes to `outPtr`. */
function decodeHuffmanStream(
  ctx: CodecContext,
  arena: Arena,
  stream: Uint8Array,
  streamPtr: number,
  D: number,
  outPtr: number,
  index: number,
  j: number,
): void {
  const { kernels } = ctx;
  const corrupt = (why: string) => new ParleError(ErrorCodes.CORRUPT, `corrupt .parle chunk ${index}, stream ${j}: ${why}`);
  const mode = stream[0];
  if (mode === HuffmanMode.Raw) {
    if (stream.length !== 1 + D) throw corrupt(`raw stream of ${stream.length - 1} bytes for ${D}`);
    kernels.copyBytes(outPtr, streamPtr + 1, D);
    return;
  }
  if (mode === HuffmanMode.OneSymbol) {
    if (stream.length !== 2) throw corrupt('one-symbol stream is not 2 bytes');
    u8(ctx, outPtr, D).fill(stream[1]);
    return;
  }
  // mode 3 is version 3's, but the chunk decoder does not know the container's version: accepted in any
  if (mode !== HuffmanMode.Huffman && mode !== HuffmanMode.Lanes) throw corrupt(`unknown Huffman mode ${mode}`);
  const lanes = mode === HuffmanMode.Lanes;
  const header = readHeader(stream, D);
  if (typeof header === 'string') throw corrupt(header);
  const mark = arena.mark();
  try {
    const lengthsPtr = arena.alloc(256);
    const codesPtr = arena.alloc(1024);
    const tablePtr = arena.alloc(12 << 10);
    u8(ctx, lengthsPtr, 256).set(header.lengths);
    // mode 3 reads one symbol a lookup: the single-symbol table (symbols 0) is cheaper to build
    if (kernels.huffmanBuildTable(lengthsPtr, codesPtr, tablePtr, lanes ? 0 : D) !== 0)
      throw corrupt('code lengths do not form a complete code of two or more symbols');
    const bitsBytes = stream.length - header.bitsAt;
    if (lanes) {
      if (
        kernels.huffmanDecodeLanes(
          streamPtr + header.bitsAt,
          bitsBytes,
          streamPtr + header.offsetsAt,
          header.segmentLog2,
          D,
          tablePtr,
          outPtr,
        ) !== 0
      )
        throw corrupt('a mode-3 segment is of an odd length, reads past its units or leaves units unread');
      return;
    }
    if (
      kernels.huffmanDecode(streamPtr + header.bitsAt, bitsBytes, streamPtr + header.offsetsAt, header.segmentLog2, D, tablePtr, outPtr) !==
      0
    ) {
      throw corrupt('a segment needs bits past its end');
    }
  } finally {
    arena.reset(mark);
  }
}

/**
 * Decodes a predicted chunk (docs/format.md, "Stage 7: predict") into `p.outPtr`: each field's
 * block into its plane (stored, or its pipeline decoded), the planes joined into cells, the
 * predictor undone row by row, the value map undone and the exceptions written over it.
 * @throws ParleError CORRUPT
 */
function decodePredicted(ctx: CodecContext, arena: Arena, p: DecodeChunkParams): void {
  const { kernels } = ctx;
  const { entry, index } = p;
  const width = p.elementSize;
  const count = entry.elementCount;
  const payload = u8(ctx, p.payloadPtr, entry.payloadBytes);
  const head = readPredictHeader(payload, count, width, index);
  const blocks = readFieldBlocks(payload, head, index);
  // the predictor's words: the elements, or an 8-byte element's two u32 halves
  const { fields, words, wordWidth } = head;
  const cells = words / fields;
  const planeBytes = cells * wordWidth;
  // one field: its block decodes straight into the output; several: into planes, then joined
  const planes = fields === 1 ? p.outPtr : arena.alloc(count * width + SLACK);
  for (let k = 0; k < fields; k++) {
    const block = blocks[k];
    const target = planes + k * planeBytes;
    if (block.stages.length === 0) kernels.copyBytes(target, p.payloadPtr + block.at, block.bytes);
    else {
      const mark = arena.mark();
      decodePipelineTo(ctx, arena, p.payloadPtr + block.at, block.bytes, block.stages as Pipeline, wordWidth, cells, target, true, index);
      arena.reset(mark);
    }
  }
  if (fields > 1)
    (wordWidth === 1 ? kernels.joinFields8 : wordWidth === 2 ? kernels.joinFields16 : kernels.joinFields32)(
      planes,
      p.outPtr,
      fields,
      cells,
    );
  const rows = cells / head.rowCells;
  const predict = wordWidth === 1 ? kernels.predictDecode8 : wordWidth === 2 ? kernels.predictDecode16 : kernels.predictDecode32;
  predict(p.outPtr, p.outPtr, head.rowCells * fields, head.planeRows, fields, head.predictor, rows);
  if (head.map === ValueMap.FloatOrder) (width === 8 ? kernels.floatOrderDecode64 : kernels.floatOrderDecode)(p.outPtr, p.outPtr, count);
  if (head.map === ValueMap.Decimal) {
    const mark = arena.mark();
    const at = p.payloadPtr + head.exceptionsAt;
    let bad: number;
    if (width === 8) {
      kernels.decimalDecodeF64(p.outPtr, p.outPtr, count, fields / 2, exponentsAt(ctx, arena, head.exponents!));
      bad = kernels.scatterBits64(p.outPtr, count, at, at + 4 * head.exceptions, head.exceptions);
    } else {
      const { expPtr, factorPtr } = decimalTablesAt(ctx, arena, head.exponents!);
      kernels.decimalDecodeF32(p.outPtr, p.outPtr, count, fields, expPtr, factorPtr);
      bad = kernels.scatterBits32(p.outPtr, count, at, at + 4 * head.exceptions, head.exceptions);
    }
    if (bad !== 0)
      throw new ParleError(ErrorCodes.CORRUPT, `corrupt .parle chunk ${index}: exception indices out of order or out of range`);
    arena.reset(mark);
  }
}
