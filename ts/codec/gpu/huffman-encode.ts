/// <reference types="@webgpu/types" />
/**
 * The encode of mode-2 and mode-3 Huffman streams (docs/format.md, "Huffman streams") on the GPU
 * with the caller's code lengths, as PAVLE does it (Balevic 2009): the bits of each block of
 * symbols, their scan into segment end offsets and bit offsets, then every code placed in
 * parallel. Dispatch of shaders/codec-huffman-encode.wgsl, with shaders/read-src.wgsl
 * appended; headers are written on the host (ts/codec/huffman.ts writeHeader). The bytes equal
 * the CPU's (assembly/huffman.ts huffmanEncode, assembly/huffman-lanes.ts for mode 3). Buffers
 * and bindings follow the rules of ./common.ts.
 */
import { ErrorCodes, ParleError } from '../../errors.js';
import {
  canonicalCodeTable,
  headerBytes,
  HuffmanMode,
  LANES,
  MAX_CODE_BITS,
  MAX_SEGMENT_LOG2,
  MIN_SEGMENT_LOG2,
  segmentCount,
  writeHeader,
} from '../huffman.js';
import huffmanEncodeSource from '../../../shaders/codec-huffman-encode.wgsl';
import readSrcSource from '../../../shaders/read-src.wgsl';
import { WORKGROUP_SIZE } from '../../gpu/compose.js';
import type { GpuContext, Submission } from '../../gpu/context.js';
import {
  alignment,
  bindWindow,
  checkBuffer,
  checkCount,
  checkSpan,
  groupBySpans,
  maxBinding,
  pipeline,
  roundUp4,
  storageWords,
  type Window,
} from './common.js';
import { HUFFMAN_TABLE_ENTRIES } from './huffman-decode.js';

/** The kernel, with shaders/read-src.wgsl appended (it reads bytes of its `src` binding). */
const huffmanEncodeCode = `${huffmanEncodeSource}\n${readSrcSource}`;

/** Symbols of a block of the encode (BLOCK_LOG2 in codec-huffman-encode.wgsl): the smallest segment. */
const ENCODE_BLOCK = 1 << MIN_SEGMENT_LOG2;
/**
 * Most symbols of one encoded stream: bit offsets are u32 on the GPU, and 2^28 codes of 11 bits
 * (plus a pad byte a segment) stay below 2^32 bits. Chunks are at most 64 MiB.
 */
export const HUFFMAN_ENCODE_MAX_BYTES = 2 ** 28;

/**
 * A MAP_READ buffer receiving byte ranges of buffers, packed one after the other in order (each
 * range from a multiple of 4, its length rounded up to 4), at the end of what `s` recorded so
 * far; the returned function, called after the submit, maps and reads it and destroys it.
 * Offsets must be multiples of 4 (copyBufferToBuffer).
 */
function readPacked(
  ctx: GpuContext,
  s: Submission,
  ranges: readonly { buffer: GPUBuffer; byteOffset: number; byteLength: number }[],
): () => Promise<Uint8Array> {
  let size = 0;
  for (const r of ranges) size += roundUp4(r.byteLength);
  const rb = ctx.device.createBuffer({
    label: 'parle:codec-readback',
    size: Math.max(4, size),
    usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST,
  });
  s.onFailure.push(rb);
  let at = 0;
  for (const r of ranges) {
    const bytes = roundUp4(r.byteLength);
    if (bytes > 0) s.encoder.copyBufferToBuffer(r.buffer, r.byteOffset, rb, at, bytes);
    at += bytes;
  }
  return async () => new Uint8Array(await mapAndRead(ctx, rb));
}

/** Maps a MAP_READ buffer (after its submission), copies its contents out and destroys it. */
async function mapAndRead(ctx: GpuContext, rb: GPUBuffer): Promise<ArrayBuffer> {
  try {
    await ctx.guard(rb.mapAsync(GPUMapMode.READ));
    const copy = rb.getMappedRange().slice(0);
    rb.unmap();
    return copy;
  } finally {
    rb.destroy();
  }
}

/** One stream of a {@link huffmanEncodeStreams} call. */
export interface HuffmanEncodeJob {
  /** Byte offset of the symbols (bytes) in the source buffer; any alignment. */
  srcByteOffset: number;
  /** Symbols n (bytes), 0 to {@link HUFFMAN_ENCODE_MAX_BYTES}. */
  byteLength: number;
  /**
   * Code lengths of symbols 0..255 (ts/codec/huffman.ts codeLengths): at most 11 bits, at least
   * two symbols, a complete code (Kraft sum exactly 1). Every byte of the range needs a code.
   */
  lengths: Uint8Array;
  /**
   * log2 of the symbols per segment, g: 10..20 (ts/codec/huffman.ts DEFAULT_SEGMENT_LOG2); with
   * `mode` 3, 10..12 (LANES_SEGMENT_LOG2).
   */
  segmentLog2: number;
  /**
   * The stream mode to write: 2 (default) or 3, 32 interleaved lanes a segment (docs/format.md,
   * "Mode 3: interleaved lanes"). Every job of a call has the same mode.
   */
  mode?: 2 | 3;
}

/** Largest g of a mode-3 job: the kernel keeps 2^g / 32 steps of masks in workgroup memory. */
const LANES_MAX_SEGMENT_LOG2 = 12;

/** Where a job's output (end offsets, then bitstreams) lies in its group's output buffer. */
interface EncodeSlot {
  /** Byte offset in the virtual layout of all jobs (the group's window base subtracted later). */
  at: number;
  /** Worst-case bytes: 4 K end offsets + the bitstreams' bound, rounded up to words. */
  bytes: number;
  segments: number;
  blocks: number;
}

function checkEncodeJob(srcSize: number, j: HuffmanEncodeJob, i: number): void {
  if (typeof j !== 'object' || j === null) throw new ParleError(ErrorCodes.INVALID_ARGUMENT, `jobs[${i}] must be an object`);
  checkCount(j.srcByteOffset, `jobs[${i}].srcByteOffset`);
  checkCount(j.byteLength, `jobs[${i}].byteLength`);
  if (j.byteLength > HUFFMAN_ENCODE_MAX_BYTES) {
    throw new ParleError(ErrorCodes.TOO_LARGE, `jobs[${i}]: ${j.byteLength} bytes exceed one Huffman stream (${HUFFMAN_ENCODE_MAX_BYTES})`);
  }
  checkSpan(srcSize, j.srcByteOffset, j.byteLength, `jobs[${i}] source`);
  if (j.mode !== undefined && j.mode !== 2 && j.mode !== 3)
    throw new ParleError(ErrorCodes.INVALID_ARGUMENT, `jobs[${i}].mode must be 2 or 3`);
  const g = j.segmentLog2;
  const maxG = j.mode === 3 ? LANES_MAX_SEGMENT_LOG2 : MAX_SEGMENT_LOG2;
  if (!Number.isInteger(g) || g < MIN_SEGMENT_LOG2 || g > maxG) {
    throw new ParleError(ErrorCodes.INVALID_ARGUMENT, `jobs[${i}].segmentLog2 must be an integer in ${MIN_SEGMENT_LOG2}..${maxG}`);
  }
  const lengths = j.lengths;
  if (!(lengths instanceof Uint8Array) || lengths.length !== 256) {
    throw new ParleError(ErrorCodes.INVALID_ARGUMENT, `jobs[${i}].lengths must be a Uint8Array of 256 code lengths`);
  }
  let kraft = 0;
  let present = 0;
  for (let sym = 0; sym < 256; sym++) {
    const len = lengths[sym];
    if (len === 0) continue;
    if (len > MAX_CODE_BITS)
      throw new ParleError(ErrorCodes.INVALID_ARGUMENT, `jobs[${i}].lengths: code length ${len} of symbol ${sym} over ${MAX_CODE_BITS}`);
    present++;
    kraft += HUFFMAN_TABLE_ENTRIES >> len;
  }
  if (present < 2) throw new ParleError(ErrorCodes.INVALID_ARGUMENT, `jobs[${i}].lengths: ${present} symbols in the code (at least 2)`);
  if (kraft !== HUFFMAN_TABLE_ENTRIES) {
    throw new ParleError(
      ErrorCodes.INVALID_ARGUMENT,
      `jobs[${i}].lengths: the code is ${kraft < HUFFMAN_TABLE_ENTRIES ? 'incomplete' : 'over-full'} (Kraft sum ${kraft}/${HUFFMAN_TABLE_ENTRIES})`,
    );
  }
}

/**
 * Huffman-encodes byte ranges of `srcBuf` on the GPU into complete mode-2 Huffman streams
 * (docs/format.md, "Huffman streams": mode 2, g, last symbol m, the 4-bit lengths of 0..m, the K
 * segment end offsets, the segments' bitstreams), one per job, with the caller's code lengths.
 * The bytes equal what the CPU writes for the same lengths and g (ts/codec/huffman.ts
 * writeHeader, then assembly/huffman.ts huffmanEncode): segments of 2^g symbols, each from a byte
 * boundary and zero-padded, bits least significant first, canonical codes stored first bit
 * lowest. A job of 0 bytes gives the header alone (K = 0). The mode (0 raw, 1 one symbol, 2) is
 * the caller's choice: this always writes mode 2.
 * Example: bytes [0, 1, 2, 0] with lengths {0: 1, 1: 2, 2: 2}, g = 10 -> codes 0, 10, 11, 0 ->
 * [2, 10, 2, 0x21, 0x02, 1, 0, 0, 0, 0x1a] (a header of 5 bytes, K = 1 end offset, one byte of
 * bits: 0 | 1 0 | 1 1 | 0 read from bit 0 up).
 *
 * PAVLE (Balevic 2009) on blocks of 1024 symbols, three dispatches per group of jobs in one
 * submission (shaders/codec-huffman-encode.wgsl): the bits of each block; per job, the segment
 * sizes scanned into the end offsets and each block's bit offset; each block's codes placed by a
 * workgroup scan, assembled in workgroup memory with atomicOr and written out (atomicOr only on
 * the words shared with neighbouring blocks). That submission reads back 4 bytes per job (the
 * bitstreams' lengths) and an 8-byte status; a second one copies exactly each stream's end
 * offsets and bitstreams (4 K + its bitstream bytes, rounded up to 4) into one readback buffer
 * ({@link huffmanEncodeOnDevice} is the first alone). Headers are written on the host. GPU scratch: per job about 4 K + n x (longest code) / 8 bytes
 * (the worst case) of output, 1 KiB of codes, 4 bytes per 1024 symbols.
 * @returns one stream per job, in job order (fresh Uint8Arrays).
 * @throws ParleError INVALID_ARGUMENT (not a storage buffer, a range outside it, lengths that
 *   are not a complete code of 2 to 256 symbols of at most 11 bits, g outside 10..20, a byte of a
 *   range without a code: the first such job and byte value are named), TOO_LARGE (a job over
 *   {@link HUFFMAN_ENCODE_MAX_BYTES}, a range beyond one storage binding), DEVICE_LOST
 */
export async function huffmanEncodeStreams(ctx: GpuContext, srcBuf: GPUBuffer, jobs: readonly HuffmanEncodeJob[]): Promise<Uint8Array[]> {
  const { streams, release } = await huffmanEncodeOnDevice(ctx, srcBuf, jobs);
  try {
    // submission 2: exactly the end offsets and bitstreams of every stream, packed in job order
    const bodies = streams.flatMap((st) => (st.body === null ? [] : [st.body]));
    let all: Uint8Array = new Uint8Array(0);
    if (bodies.length > 0) {
      let read: () => Promise<Uint8Array> = async () => new Uint8Array(0);
      await ctx.submit('huffman-encode-read', (s) => {
        read = readPacked(ctx, s, bodies);
      });
      all = await read();
    }
    let packed = 0;
    return streams.map(({ header, body }) => {
      if (body === null) return header;
      const stream = new Uint8Array(header.length + body.byteLength);
      stream.set(header, 0);
      stream.set(all.subarray(packed, packed + body.byteLength), header.length);
      packed += roundUp4(body.byteLength);
      return stream;
    });
  } finally {
    release();
  }
}

/** A Huffman stream of {@link huffmanEncodeOnDevice}: its header on the host, the rest on the GPU. */
export interface DeviceHuffmanStream {
  /** The stream's first bytes: mode 2, g, the last symbol m and the 4-bit code lengths. */
  header: Uint8Array;
  /**
   * Where the rest lies (the K segment end offsets, then the bitstreams): `byteLength` bytes at
   * byte `byteOffset` (a multiple of 4) of `buffer`; null for a job of 0 bytes (K = 0).
   */
  body: { buffer: GPUBuffer; byteOffset: number; byteLength: number } | null;
}

/**
 * {@link huffmanEncodeStreams} without the readback of the streams: the same bytes, left in GPU
 * buffers for the caller to gather (the container's payloads, ts/codec/gpu/encode.ts). One
 * submission and one small readback (the status and 4 bytes per job). The buffers stay valid
 * until `release()`; the caller must call it once.
 * @returns per job (in job order) its stream, as a header and a GPU range.
 * @throws as huffmanEncodeStreams
 */
export async function huffmanEncodeOnDevice(
  ctx: GpuContext,
  srcBuf: GPUBuffer,
  jobs: readonly HuffmanEncodeJob[],
): Promise<{ streams: DeviceHuffmanStream[]; release(): void }> {
  const run = await encodeHuffmanJobs(ctx, srcBuf, jobs);
  return { streams: run.headers.map((header, i) => ({ header, body: run.bodies.get(i) ?? null })), release: run.release };
}

/** The outcome of {@link encodeHuffmanJobs}: the jobs' streams, their bitstream parts still on the GPU. */
interface EncodedJobs {
  /** Each job's header (written on the host). */
  headers: Uint8Array[];
  /** Per job of more than 0 bytes (by job index): where its end offsets and bitstreams lie on the GPU. */
  bodies: Map<number, { buffer: GPUBuffer; byteOffset: number; byteLength: number }>;
  /** Gives the output buffers back to the pool. */
  release(): void;
}

/**
 * Submission 1 of {@link huffmanEncodeStreams}: encodes every job into output buffers and reads
 * back the status and the bitstreams' lengths. On failure the outputs are released.
 */
async function encodeHuffmanJobs(ctx: GpuContext, srcBuf: GPUBuffer, jobs: readonly HuffmanEncodeJob[]): Promise<EncodedJobs> {
  checkBuffer(srcBuf, 'srcBuf');
  if (!Array.isArray(jobs)) throw new ParleError(ErrorCodes.INVALID_ARGUMENT, 'jobs must be an array');
  const srcSize = srcBuf.size;
  jobs.forEach((j, i) => checkEncodeJob(srcSize, j, i));
  const m = jobs.length;
  const lanes = m > 0 && jobs[0].mode === 3;
  jobs.forEach((j, i) => {
    if ((j.mode === 3) !== lanes) throw new ParleError(ErrorCodes.INVALID_ARGUMENT, `jobs[${i}].mode differs from jobs[0].mode`);
  });
  const headers = jobs.map((j) => {
    const h = new Uint8Array(headerBytes(j.lengths));
    writeHeader(h, 0, j.lengths, j.segmentLog2, lanes ? HuffmanMode.Lanes : HuffmanMode.Huffman);
    return h;
  });
  const live = jobs.map((_, i) => i).filter((i) => jobs[i].byteLength > 0);
  if (live.length === 0) return { headers, bodies: new Map(), release: () => undefined };

  // Layout: each live job's output slot, one after the other in a virtual space that the groups
  // cut into windows of one storage binding each.
  const slots = new Map<number, EncodeSlot>();
  let at = 0;
  for (const i of live) {
    const j = jobs[i];
    const segments = segmentCount(j.byteLength, j.segmentLog2);
    let longest = 0;
    for (let b = 0; b < 256; b++) if (j.lengths[b] > longest) longest = j.lengths[b];
    // a segment's bits padded to a byte (mode 2) or each of 32 lanes' to 16 bits (mode 3)
    const bytes = 4 * segments + roundUp4(Math.ceil((j.byteLength * longest) / 8) + (lanes ? 2 * LANES : 1) * segments);
    if (bytes > maxBinding(ctx) - alignment(ctx)) {
      throw new ParleError(
        ErrorCodes.TOO_LARGE,
        `jobs[${i}]: its output (up to ${bytes} bytes) exceeds one storage binding (${maxBinding(ctx)} bytes)`,
      );
    }
    slots.set(i, { at, bytes, segments, blocks: lanes ? segments : Math.ceil(j.byteLength / ENCODE_BLOCK) });
    at += bytes;
  }
  const groups = groupBySpans(
    ctx,
    live.length,
    (k) => {
      const i = live[k];
      const slot = slots.get(i)!;
      return [
        [jobs[i].srcByteOffset, jobs[i].srcByteOffset + jobs[i].byteLength],
        [slot.at, slot.at + slot.bytes],
      ];
    },
    'Huffman encode',
  );

  // Submission 1: encode into one output buffer per group; read back the lengths and status.
  const outputs: { buffer: GPUBuffer; base: number }[] = [];
  const slotOutput = new Map<number, { buffer: GPUBuffer; byteOffset: number }>();
  const release = () => {
    for (const o of outputs.splice(0)) ctx.releaseStorage(o.buffer);
  };
  try {
    let readMeta: () => Promise<Uint32Array> = async () => new Uint32Array(0);
    await ctx.submit('huffman-encode', (s) => {
      const meta = s.temp(4 * (2 + m), 'huffman-encode-meta');
      s.encoder.clearBuffer(meta, 0, roundUp4(4 * (2 + m)));
      const pipe = (entry: string) => pipeline(ctx, 'codec-huffman-encode', huffmanEncodeCode, entry);
      for (const group of groups) {
        const [srcWin, outWin] = group.windows as Window[];
        const outBytes = roundUp4(outWin.end - outWin.base);
        const out = ctx.acquireStorage(outBytes, 'huffman-encode-out');
        outputs.push({ buffer: out, base: outWin.base });
        s.encoder.clearBuffer(out, 0, outBytes);
        const table = new Uint32Array(group.items.length * 8);
        const codes = new Uint32Array(group.items.length * 256);
        let blocks = 0;
        group.items.forEach((k, e) => {
          const i = live[k];
          const j = jobs[i];
          const slot = slots.get(i)!;
          table.set(
            [blocks, j.byteLength, j.segmentLog2, j.srcByteOffset - srcWin.base, (slot.at - outWin.base) / 4, slot.segments, e * 256, i],
            e * 8,
          );
          codes.set(canonicalCodeTable(j.lengths), e * 256);
          slotOutput.set(i, { buffer: out, byteOffset: slot.at - outWin.base });
          blocks += slot.blocks;
        });
        const params = s.uniform([blocks, group.items.length, lanes ? 1 : 0, 0]);
        // mode 3: blocks are segments, WG / 32 a workgroup
        const blockGroups = lanes ? Math.ceil(blocks / (WORKGROUP_SIZE / LANES)) : blocks;
        const jobsBuf = storageWords(ctx, s, table, 'huffman-encode-jobs');
        const codesBuf = storageWords(ctx, s, codes, 'huffman-encode-codes');
        const blocksBuf = s.temp(4 * blocks, 'huffman-encode-blocks');
        const src = bindWindow(ctx, srcBuf, srcWin, 'Huffman encode source');
        const dst: GPUBufferBinding = { buffer: out, offset: 0, size: outBytes };
        const metaBinding: GPUBufferBinding = { buffer: meta, offset: 0, size: roundUp4(4 * (2 + m)) };
        s.dispatch(
          pipe(lanes ? 'countLanes' : 'countBits'),
          [
            { binding: 0, resource: { buffer: params } },
            { binding: 1, resource: { buffer: jobsBuf } },
            { binding: 2, resource: { buffer: codesBuf } },
            { binding: 3, resource: src },
            { binding: 4, resource: { buffer: blocksBuf } },
            { binding: 6, resource: metaBinding },
          ],
          blockGroups,
          'parle:huffman-count-bits',
        );
        s.dispatch(
          pipe('placeSegments'),
          [
            { binding: 0, resource: { buffer: params } },
            { binding: 1, resource: { buffer: jobsBuf } },
            { binding: 4, resource: { buffer: blocksBuf } },
            { binding: 5, resource: dst },
            { binding: 6, resource: metaBinding },
          ],
          group.items.length,
          'parle:huffman-place-segments',
        );
        s.dispatch(
          pipe(lanes ? 'writeLanes' : 'writeBits'),
          [
            { binding: 0, resource: { buffer: params } },
            { binding: 1, resource: { buffer: jobsBuf } },
            { binding: 2, resource: { buffer: codesBuf } },
            { binding: 3, resource: src },
            { binding: 4, resource: { buffer: blocksBuf } },
            { binding: 5, resource: dst },
          ],
          blockGroups,
          'parle:huffman-write-bits',
        );
      }
      readMeta = s.readAfter(meta, 4 * (2 + m));
    });
    const meta = await readMeta();
    if (meta[0] !== 0) {
      const key = 0xffffffff - meta[1];
      const job = key >>> 8;
      throw new ParleError(
        ErrorCodes.INVALID_ARGUMENT,
        `jobs[${job}]: byte value ${key & 0xff} has no code (length 0) in jobs[${job}].lengths (${meta[0]} invocation${meta[0] === 1 ? '' : 's'} found bytes without a code)`,
      );
    }
    const bodies = new Map(live.map((i) => [i, { ...slotOutput.get(i)!, byteLength: 4 * slots.get(i)!.segments + meta[2 + i] }]));
    return { headers, bodies, release };
  } catch (e) {
    release();
    throw e;
  }
}
