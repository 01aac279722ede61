/// <reference types="@webgpu/types" />
/**
 * The decode of Huffman streams (docs/format.md, "Huffman streams": modes 0 raw, 1 one symbol,
 * 2 Huffman and 3 Huffman in 32 interleaved lanes) on the GPU, with their host-side parse and
 * checks: dispatch of shaders/codec-huffman.wgsl, with shaders/read-src.wgsl and one of
 * shaders/huffman-lanes-ballot.wgsl (subgroups of 32, 64 or 128) or huffman-lanes-shared.wgsl
 * (workgroup memory) appended. Segments are found through each stream's segment end offsets
 * (Haugen's offset table) and decoded in parallel as in Weißenberger and Schmidt 2018 (mode 3:
 * 32 lanes a segment, after DietGPU's interleaved lanes); see {@link encodeHuffmanDecode}. The CPU's twins are assembly/huffman.ts and
 * assembly/huffman-lanes.ts. Buffers and bindings follow the rules of ./common.ts.
 */
import { ErrorCodes, ParleError } from '../../errors.js';
import { LANES, MAX_CODE_BITS, readLayout } from '../huffman.js';
import huffmanSource from '../../../shaders/codec-huffman.wgsl';
import readSrcSource from '../../../shaders/read-src.wgsl';
import lanesBallotSource from '../../../shaders/huffman-lanes-ballot.wgsl';
import lanesSharedSource from '../../../shaders/huffman-lanes-shared.wgsl';
import { WORKGROUP_SIZE } from '../../gpu/compose.js';
import type { GpuContext, Submission } from '../../gpu/context.js';
import {
  bindWindow,
  checkBuffer,
  checkCount,
  checkSpan,
  checkWordOffset,
  corrupt,
  groupBySpans,
  pipeline,
  roundUp4,
  storageWords,
} from './common.js';

/** The kernel, with shaders/read-src.wgsl (it reads bytes of its `src` binding) and a lanes piece appended. */
const huffmanDecodeCode = (ballot: boolean): string =>
  `${huffmanSource}\n${readSrcSource}\n${ballot ? lanesBallotSource : lanesSharedSource}`;

/** Entries of a Huffman decode table: one per 11-bit window. */
export const HUFFMAN_TABLE_ENTRIES = 1 << MAX_CODE_BITS;
/** log2 of the bytes per invocation of raw (mode 0) and one-symbol (mode 1) streams. */
const FLAT_SEGMENT_LOG2 = 9;

/** A parsed Huffman stream (docs/format.md, "Huffman streams"), checked against its bytes. */
export interface HuffmanStreamInfo {
  /** 0 raw, 1 one symbol, 2 Huffman, 3 Huffman in 32 interleaved lanes (version 3). */
  mode: 0 | 1 | 2 | 3;
  /** Decoded bytes D (symbols). */
  decodedBytes: number;
  /** Encoded bytes E: the stream's length, mode byte included. */
  encodedBytes: number;
  /** Mode 2: the segment size log2 g (10..20); 0 for modes 0 and 1. */
  segmentLog2: number;
  /** Mode 2: segments K = ceil(D / 2^g); 0 for modes 0 and 1. */
  segments: number;
  /** Mode 1: the symbol; 0 otherwise. */
  symbol: number;
  /** Mode 2: byte offset of the segment end table from the stream's start; 0 otherwise. */
  offsetsAt: number;
  /** Byte offset of the data from the stream's start: mode 2 the bitstreams, mode 0 the raw bytes (1); mode 1: 0. */
  bitsAt: number;
}

/**
 * Parses one Huffman stream (`stream`: its E = `encodedBytes` bytes, mode byte first, or only
 * its first min(3, E) bytes when `encodedBytes` is given) that must decode to `decodedBytes`
 * bytes, with the checks of docs/format.md that need only its fixed fields
 * (unknown mode, a length that disagrees with mode 0 or 1, a truncated header or segment end
 * table, g outside 10..20): O(1) a stream, since a decode plans thousands. The GPU decode checks
 * the rest (shaders/codec-huffman.wgsl, reported by {@link encodeHuffmanDecode}'s check as
 * CORRUPT): code lengths over 11, fewer than two symbols, an incomplete or over-full code,
 * segment end offsets decreasing or not ending at the stream's end, a segment that needs bits
 * past its end. Checking the lengths and offsets here had cost a 64 MiB f32 decode of 2048
 * streams 3.6 ms of the main thread on the H200 host.
 * Example: [1, 7] with decodedBytes 3 -> { mode: 1, symbol: 7, ... }.
 * @throws ParleError CORRUPT (with the reason), INVALID_ARGUMENT (not a Uint8Array, a bad count)
 */
export function parseHuffmanStream(stream: Uint8Array, decodedBytes: number, encodedBytes = stream?.length): HuffmanStreamInfo {
  if (!(stream instanceof Uint8Array)) throw new ParleError(ErrorCodes.INVALID_ARGUMENT, 'stream must be a Uint8Array');
  checkCount(decodedBytes, 'decodedBytes');
  checkCount(encodedBytes, 'encodedBytes');
  if (stream.length < Math.min(3, encodedBytes)) {
    throw new ParleError(ErrorCodes.INVALID_ARGUMENT, `stream must hold at least the first ${Math.min(3, encodedBytes)} bytes`);
  }
  if (encodedBytes < 1) corrupt('empty Huffman stream');
  const mode = stream[0];
  // one object shape for every mode (thousands of streams a call)
  const info: HuffmanStreamInfo = {
    mode: 0,
    decodedBytes,
    encodedBytes,
    segmentLog2: 0,
    segments: 0,
    symbol: 0,
    offsetsAt: 0,
    bitsAt: 0,
  };
  if (mode === 0) {
    if (encodedBytes !== 1 + decodedBytes) corrupt(`raw Huffman stream of ${encodedBytes} bytes for ${decodedBytes} bytes`);
    info.bitsAt = 1;
    return info;
  }
  if (mode === 1) {
    if (encodedBytes !== 2) corrupt(`one-symbol Huffman stream of ${encodedBytes} bytes`);
    info.mode = 1;
    info.symbol = stream[1];
    return info;
  }
  if (mode !== 2 && mode !== 3) corrupt(`unknown Huffman mode ${mode}`);
  const layout = readLayout(stream, decodedBytes, encodedBytes);
  if (typeof layout === 'string') corrupt(layout);
  info.mode = mode;
  info.segmentLog2 = layout.segmentLog2;
  info.segments = layout.segments;
  info.offsetsAt = layout.offsetsAt;
  info.bitsAt = layout.bitsAt;
  return info;
}

/**
 * The 2048-entry decode table of a canonical code (docs/format.md): entry w (an 11-bit window of
 * the bitstream, first bit lowest) = symbol | length << 8 of the code that starts the window.
 * Codes are canonical (sorted by length, then symbol) and stored bit-reversed (first bit lowest),
 * so a code c of length L fills the entries reverse(c) + k 2^L, k < 2^(11-L).
 * Example: lengths {0: 1, 1: 2, 2: 2} -> codes 0, 10, 11 -> entries 0bxx0 = 0 | 1 << 8,
 * 0b001 = 1 | 2 << 8, 0b011 = 2 | 2 << 8 (x: any bits).
 * @param lengths code lengths of symbols 0..255 (0 = absent), each at most 11.
 * @throws ParleError CORRUPT (a length over 11, fewer than two symbols, an incomplete or
 *   over-full code)
 */
export function buildHuffmanDecodeTable(lengths: Uint8Array): Uint32Array {
  checkCodeLengths(lengths);
  const order: number[] = [];
  for (let sym = 0; sym < lengths.length && sym < 256; sym++) if (lengths[sym] > 0) order.push(sym);
  order.sort((a, b) => lengths[a] - lengths[b] || a - b);
  const table = new Uint32Array(HUFFMAN_TABLE_ENTRIES);
  let code = 0;
  let previous = lengths[order[0]];
  for (let i = 0; i < order.length; i++) {
    const sym = order[i];
    const len = lengths[sym];
    if (i > 0) code = (code + 1) << (len - previous);
    previous = len;
    let reversed = 0;
    for (let b = 0; b < len; b++) reversed |= ((code >> b) & 1) << (len - 1 - b);
    const entry = sym | (len << 8);
    for (let w = reversed; w < HUFFMAN_TABLE_ENTRIES; w += 1 << len) table[w] = entry;
  }
  return table;
}

/**
 * Checks code lengths as a reader must (each at most 11, at least two symbols, a complete code).
 * The table itself is built where it is used: in each workgroup of the GPU decode kernel
 * (shaders/codec-huffman.wgsl), by {@link buildHuffmanDecodeTable} in tests.
 * @throws ParleError CORRUPT (as {@link buildHuffmanDecodeTable})
 */
export function checkCodeLengths(lengths: Uint8Array): void {
  let symbols = 0;
  let kraft = 0;
  for (let sym = 0; sym < lengths.length && sym < 256; sym++) {
    const len = lengths[sym];
    if (len === 0) continue;
    if (len > MAX_CODE_BITS) corrupt(`code length ${len} of symbol ${sym} over ${MAX_CODE_BITS}`);
    symbols++;
    kraft += HUFFMAN_TABLE_ENTRIES >> len;
  }
  if (symbols < 2) corrupt(`${symbols} symbols in a Huffman code (at least 2)`);
  if (kraft !== HUFFMAN_TABLE_ENTRIES)
    corrupt(`Huffman code is ${kraft < HUFFMAN_TABLE_ENTRIES ? 'incomplete' : 'over-full'} (Kraft sum ${kraft}/${HUFFMAN_TABLE_ENTRIES})`);
}

/** Words of a stream's entry in the decode kernel's stream table (codec-huffman.wgsl `Stream`). */
const STREAM_WORDS = 9;

/** One stream of a {@link encodeHuffmanDecode} call. */
export interface HuffmanDecodeJob {
  /** The stream, parsed and checked by {@link parseHuffmanStream}. */
  stream: HuffmanStreamInfo;
  /** Byte offset of the stream (its mode byte) in the source buffer; any alignment. */
  srcByteOffset: number;
  /**
   * Byte offset of the decoded bytes in the destination buffer: a multiple of 4. The stream
   * writes ceil(D / 4) whole words there (the last one padded with zero bytes).
   */
  dstByteOffset: number;
}

/**
 * Records the decode of Huffman streams (modes 0, 1 and 2) from `srcBuf` into `dstBuf` in `s`,
 * one dispatch for all of them (more only where the streams span more than one storage binding).
 * Mode 2: one invocation per segment of 2^g symbols, found through the stream's segment end
 * offsets (Haugen's offset table; segment-parallel decoding as in Weißenberger and Schmidt 2018),
 * decoded with one lookup of an 11-bit window in the stream's 2048-entry table per symbol and
 * written 4 symbols a word; a workgroup decodes 256 segments of one stream and first builds that
 * table in workgroup memory from the code lengths in the stream's header in `srcBuf` (which must
 * hold the bytes `stream` was parsed from). Modes 0 and 1 are copied or filled, 128 KiB a
 * workgroup, a word an invocation at a time (shaders/codec-huffman.wgsl).
 * Returns a function to call after the submission: it reads back the 12-byte status and throws
 * CORRUPT naming the first stream and segment that failed and why (a code that is not complete or
 * longer than 11 bits, segment end offsets that decrease or do not end at the stream's end, bits
 * past a segment's end: the checks {@link parseHuffmanStream} leaves to the kernel); the output
 * is then unspecified.
 * Destination ranges (rounded up to words) must not overlap each other; the source may hold
 * anything besides the streams.
 * @throws ParleError INVALID_ARGUMENT (buffers, offsets, overlapping outputs, the same buffer for
 *   both), TOO_LARGE (one stream beyond one storage binding)
 */
export function encodeHuffmanDecode(
  ctx: GpuContext,
  s: Submission,
  srcBuf: GPUBuffer,
  dstBuf: GPUBuffer,
  jobs: readonly HuffmanDecodeJob[],
): () => Promise<void> {
  checkBuffer(srcBuf, 'srcBuf');
  checkBuffer(dstBuf, 'dstBuf');
  if (srcBuf === dstBuf) throw new ParleError(ErrorCodes.INVALID_ARGUMENT, 'srcBuf and dstBuf must be different buffers');
  if (!Array.isArray(jobs)) throw new ParleError(ErrorCodes.INVALID_ARGUMENT, 'jobs must be an array');
  const srcSize = srcBuf.size;
  const dstSize = dstBuf.size;
  jobs.forEach((j, i) => {
    const st = j?.stream;
    if (typeof st !== 'object' || st === null || ![0, 1, 2, 3].includes(st.mode)) {
      throw new ParleError(ErrorCodes.INVALID_ARGUMENT, `jobs[${i}].stream must come from parseHuffmanStream`);
    }
    checkCount(j.srcByteOffset, `jobs[${i}].srcByteOffset`);
    checkWordOffset(j.dstByteOffset, `jobs[${i}].dstByteOffset`);
    checkSpan(srcSize, j.srcByteOffset, st.encodedBytes, `jobs[${i}] source`);
    checkSpan(dstSize, j.dstByteOffset, roundUp4(st.decodedBytes), `jobs[${i}] destination`);
  });
  const live = jobs.map((_, i) => i).filter((i) => jobs[i].stream.decodedBytes > 0);
  const byDst = [...live].sort((a, b) => jobs[a].dstByteOffset - jobs[b].dstByteOffset);
  for (let k = 1; k < byDst.length; k++) {
    const prev = jobs[byDst[k - 1]];
    if (prev.dstByteOffset + roundUp4(prev.stream.decodedBytes) > jobs[byDst[k]].dstByteOffset) {
      throw new ParleError(ErrorCodes.INVALID_ARGUMENT, `jobs[${byDst[k - 1]}] and jobs[${byDst[k]}] write overlapping bytes`);
    }
  }
  if (live.length === 0) return async () => undefined;

  // workgroups of a stream: mode 2, WG segments each; mode 3, WG / 32 (32 lanes a segment); modes
  // 0 and 1, pieces of WG x 2^FLAT_SEGMENT_LOG2 bytes
  const groupsOf = (st: HuffmanStreamInfo): number =>
    st.mode === 3
      ? Math.ceil(st.segments / (WORKGROUP_SIZE / LANES))
      : Math.ceil((st.mode === 2 ? st.segments : Math.ceil(st.decodedBytes / 2 ** FLAT_SEGMENT_LOG2)) / WORKGROUP_SIZE);
  // the global slot (WG a workgroup, over every dispatch) of each live job's first segment, for the error message
  const firstSlot = new Map<number, number>();
  let totalGroups = 0;
  for (const i of live) {
    firstSlot.set(i, totalGroups * WORKGROUP_SIZE);
    totalGroups += groupsOf(jobs[i].stream);
  }
  const status = s.temp(16, 'huffman-status');
  s.encoder.clearBuffer(status);
  // mode 3's lanes take their units by a subgroup ballot where every subgroup is 32, 64 or 128
  // wide, else through workgroup memory (shaders/huffman-lanes-*.wgsl)
  const ballot = ctx.hasSubgroups && ctx.subgroupMinSize >= 32 && ctx.subgroupMaxSize <= 128;
  const decodePipe = pipeline(ctx, 'codec-huffman', huffmanDecodeCode(ballot), 'decode', {}, ballot);

  const groups = groupBySpans(
    ctx,
    live.length,
    (k) => {
      const j = jobs[live[k]];
      const src: [number, number] | null = j.stream.mode === 1 ? null : [j.srcByteOffset, j.srcByteOffset + j.stream.encodedBytes];
      return [src, [j.dstByteOffset, j.dstByteOffset + roundUp4(j.stream.decodedBytes)]];
    },
    'Huffman decode',
  );
  for (const group of groups) {
    const [srcWin, dstWin] = group.windows;
    const srcBase = srcWin?.base ?? 0;
    const dstBase = dstWin!.base;
    const entries = new Uint32Array(group.items.length * STREAM_WORDS);
    let workgroups = 0;
    group.items.forEach((k, e) => {
      const i = live[k];
      const { stream: st, srcByteOffset, dstByteOffset } = jobs[i];
      const coded = st.mode >= 2;
      const o = e * STREAM_WORDS;
      entries[o] = workgroups;
      entries[o + 1] = st.decodedBytes;
      entries[o + 2] = coded ? st.segmentLog2 : FLAT_SEGMENT_LOG2;
      entries[o + 3] = st.mode;
      entries[o + 4] = st.mode === 1 ? st.symbol : srcByteOffset + (coded ? st.offsetsAt : st.bitsAt) - srcBase;
      entries[o + 5] = coded ? srcByteOffset + st.bitsAt - srcBase : 0;
      entries[o + 6] = (dstByteOffset - dstBase) / 4;
      entries[o + 7] = coded ? srcByteOffset - srcBase : 0;
      entries[o + 8] = coded ? st.encodedBytes - st.bitsAt : 0;
      workgroups += groupsOf(st);
    });
    const streamsBuf = storageWords(ctx, s, entries, 'huffman-streams');
    s.dispatch(
      decodePipe,
      [
        { binding: 0, resource: { buffer: s.uniform([workgroups, group.items.length, firstSlot.get(live[group.items[0]])!, 0]) } },
        { binding: 1, resource: { buffer: streamsBuf } },
        // only one-symbol streams: nothing is read, the stream table stands in
        { binding: 2, resource: srcWin === null ? { buffer: streamsBuf } : bindWindow(ctx, srcBuf, srcWin, 'Huffman source') },
        { binding: 3, resource: bindWindow(ctx, dstBuf, dstWin!, 'Huffman destination') },
        { binding: 4, resource: { buffer: status, offset: 0, size: 12 } },
      ],
      workgroups,
      'parle:huffman-decode',
    );
  }
  const read = s.readAfter(status, 12);
  return async () => {
    const [bad, lowest, reasons] = await read();
    if (bad === 0) return;
    const g = 0xffffffff - lowest;
    let job = live[0];
    for (const i of live) if (firstSlot.get(i)! <= g) job = i;
    const seg = g - firstSlot.get(job)!;
    const why = [
      reasons & 2 ? 'code lengths that are not a complete code of at most 11 bits' : '',
      reasons & 4 ? 'segment end offsets that decrease or do not end at the stream end' : '',
      reasons & 1 ? 'bits past its end' : '',
      reasons & 8 ? 'lanes that read past its units or leave units unread' : '',
    ].filter(Boolean);
    corrupt(`Huffman stream ${job}: segment ${seg} is corrupt: ${why.join('; ')} (${bad} failure${bad === 1 ? '' : 's'})`);
  };
}

/**
 * Decodes Huffman streams (modes 0, 1 and 2) from `srcBuf` into `dstBuf` in one submission;
 * see {@link encodeHuffmanDecode}. Reads back 12 bytes (the status), nothing else.
 * @throws ParleError CORRUPT (a bad code, bad segment offsets, bits past a segment's end), INVALID_ARGUMENT, TOO_LARGE,
 *   DEVICE_LOST
 */
export async function huffmanDecode(
  ctx: GpuContext,
  srcBuf: GPUBuffer,
  dstBuf: GPUBuffer,
  jobs: readonly HuffmanDecodeJob[],
): Promise<void> {
  let check: () => Promise<void> = async () => undefined;
  await ctx.submit('huffman-decode', (s) => {
    check = encodeHuffmanDecode(ctx, s, srcBuf, dstBuf, jobs);
  });
  await check();
}
