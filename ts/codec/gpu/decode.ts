/**
 * Decompression of a version-2, -3 or -4 container in host memory into a DeviceArray, with the
 * work on the GPU (Haugen's case: a compressed file on the host, its elements wanted on the GPU):
 *
 *   1. the container is uploaded as it is (the compressed size crosses the bus: its copy is
 *      under way while the plan is made), unless it is on the device already (a u8 DeviceArray:
 *      ts/codec/gpu/device-container.ts reads back what step 2 needs);
 *   2. the CPU walks the chunk table, each chunk's stream directory, its Huffman headers (code
 *      lengths checked; the decode tables are built on the GPU) and its pack streams' block
 *      headers (every check a reader makes there);
 *   3. one op holds the rest, submitted in up to three parts so the GPU starts on one while the
 *      host records the next (the hashes and stream decodes; the rle stages; the rest): every
 *      payload's tree hash; every Huffman (or raw) stream of every chunk decoded, one
 *      invocation per segment, and every pack stream, a workgroup per block
 *      (ts/codec/gpu/huffman-decode.ts, pack.ts): straight to its place for chunks without an rle
 *      stage; for chunks with one, run values into one buffer per value width and LEB128
 *      lengths into another, the lengths decoded and checked (shaders/codec-leb-decode.wgsl),
 *      and each width's runs expanded in one dispatch into what the chunks hold (nothing is
 *      allocated for what a corrupt stream claims); the planes of all shuffled chunks
 *      unshuffled in one dispatch and the deltas of all delta chunks summed in place in three
 *      (a quantized chunk's codes in a codes buffer, then dequantized into the output with its
 *      exceptions written over them: shaders/codec-quantize.wgsl, f64's codec-quantize-f64.wgsl);
 *      a predicted chunk's field
 *      blocks decoded as chunks of their own into residual planes, then every predicted chunk's
 *      predictor and value map undone in one set of passes, a decimal map's exceptions written
 *      over them (./predict.ts: 8-byte elements as their u32 halves, two word fields an element
 *      field); every chunk's elements' tree hash. Only hashes,
 *      status words and run totals come back, read after it and checked in the order a
 *      stage-by-stage decode would meet them. Every kernel bounds its
 *      reads and writes, so the stages after a corrupt one stay inside their buffers.
 *
 * The profile that shaped this (bench/gpu-codec-profile.mjs, H200, 64 MiB of real data): a
 * submission and three dispatches per chunk for the deltas, one per chunk for the planes, host-
 * built Huffman tables (8 KiB a stream through writeBuffer) and 5-19 submissions a call had made
 * decompress run at 0.3-1.3 GB/s with the GPU busy a third of the time.
 *
 * The kernels write whole words, so a chunk's output must start on a 4-byte boundary: where one
 * does not (a chunk length x element size that is not a multiple of 4: u8 volumes cut at whole
 * planes of odd size), every chunk is decoded into a staging buffer from a word of its own, then
 * gathered into the output at its byte offset (./gather.ts) before the elements' hashes.
 */
import { packStreamWidth, readDirectory, runsLayout } from '../cpu/directory.js';
import { quantizeHeaderBytes, readQuantizeHeader } from '../../format/quantize.js';
import { StageId, streamCount, type Pipeline } from '../../format/stages.js';
import { abortError } from '../../cpu/pool.js';
import { ErrorCodes, ParleError } from '../../errors.js';
import { encodeDeltaDecodeChunks } from './delta.js';
import { encodeTreeHashes } from './hash.js';
import { encodeHuffmanDecode, parseHuffmanStream, type HuffmanDecodeJob, type HuffmanStreamInfo } from './huffman-decode.js';
import { encodePackDecode, type PackDecodeJob } from './pack.js';
import { encodeShuffleChunks } from './shuffle.js';
import { encodePredictDecodeChunks, predictOnDevice, type PredictChunk } from './predict.js';
import { encodeGather, type GatherJob } from './gather.js';
import {
  exceptionBytes as exceptionEntryBytes,
  PREDICT_HEAD_MAX_BYTES,
  predictName,
  readFieldBlocksAt,
  readPredictHeader,
  ValueMap,
} from '../../format/predict.js';
import { composeKernel, WORKGROUP_SIZE } from '../../gpu/compose.js';
import type { GpuContext, Submission } from '../../gpu/context.js';
import type { DeviceArray } from '../../gpu/device-array.js';
import { getPipeline } from '../../gpu/pipelines.js';
import { DEQUANTIZE_STATUS_BYTES, encodeDequantize } from './quantize.js';
import { encodeRleDecodeExpected } from '../../gpu/rle.js';
import { encodeScan } from '../../gpu/scan.js';
import lebDecodeSource from '../../../shaders/codec-leb-decode.wgsl';
import { debug } from '../../platform/node.js';
import { elementSize } from '../../types.js';
import type { Header, LocatedChunk } from '../../format/layout.js';
import type { ReadAt } from '../../format/container.js';

/** `n` rounded up to a multiple of 4 (arithmetic: sizes pass 2^31, past 32-bit bitwise operators). */
const roundUp4 = (n: number) => Math.ceil(n / 4) * 4;

/** A raw stream of `bytes`, as a mode-0 job (the kernel skips one mode byte before the data). */
function rawStream(bytes: number): HuffmanStreamInfo {
  return {
    mode: 0,
    decodedBytes: bytes,
    encodedBytes: bytes + 1,
    segmentLog2: 0,
    segments: 0,
    symbol: 0,
    offsetsAt: 0,
    bitsAt: 1,
  };
}

/**
 * True when {@link decodeContainerOnDevice} decodes every chunk of a container (walked: `header`,
 * `chunks`; `readAt` serves each predicted chunk's first {@link PREDICT_HEAD_MAX_BYTES} bytes):
 * every predicted chunk has a predict header it decodes (./predict.ts predictOnDevice: every
 * predictor and map of the format; quantized chunks of f32 and f64 too). A header that does not
 * read (CORRUPT) says false: the CPU decode then reports it in its own order (the payload's
 * checksum first).
 */
export function chunksOnDevice(readAt: ReadAt, header: Header, chunks: readonly LocatedChunk[]): boolean {
  const size = elementSize(header.type);
  for (const c of chunks) {
    if (c.elementCount === 0 || c.predict !== true) continue;
    try {
      const prefix = readAt(c.payloadOffset, Math.min(c.payloadBytes, PREDICT_HEAD_MAX_BYTES));
      if (!predictOnDevice(readPredictHeader(prefix, c.elementCount, size, c.index, c.payloadBytes), size)) return false;
    } catch (e) {
      if (e instanceof ParleError) return false;
      throw e;
    }
  }
  return true;
}

/**
 * Where a decoded stream goes: the output, the work buffer, the quantized chunks' codes or the
 * predicted chunks' residual planes, at a byte offset.
 */
interface Target {
  buf: 'out' | 'work' | 'codes' | 'resid';
  at: number;
}

/** The stages after the streams of one chunk: unshuffle and / or delta decode. */
interface StagePlan {
  chunk: LocatedChunk;
  stages: Pipeline;
  /** Work-buffer offsets of the decoded byte planes of a shuffled chunk (roundUp4(count) each); none otherwise (its stream lies at `dest`). */
  streams: number[];
  /** Where the chunk's elements (a quantized chunk: its codes) go. */
  dest: Target;
}

/** A quantized chunk: its codes (in the codes buffer), its step and its exceptions. */
interface QuantizePlan {
  chunk: LocatedChunk;
  codesAt: number;
  step: number;
  /** Bytes of an element: 4 (f32) or 8 (f64). */
  width: 4 | 8;
  exceptions: number;
  /** Byte offset of its indices, then bits, in the exceptions upload. */
  exceptionsAt: number;
}

/**
 * One rle stream pair (a plane, or the one stream) in its value width's group: its runs are
 * entries [at, at + entries) of the group's values and lengths (values at byte at x width, a
 * multiple of 4: the Huffman decode writes whole words), R real runs, then a pad run when its
 * expansion would not end on a 4-byte boundary, then zero-length runs to fill the words.
 */
interface RunsSlot {
  chunk: LocatedChunk;
  runs: number;
  pad: number;
  at: number;
  entries: number;
  /** Its LEB128 stream in the group's byte buffer (4-byte aligned start) and its bytes. */
  lebAt: number;
  lebBytes: number;
  target: Target;
}

/** The rle slots of one value width, decoded and expanded together. */
interface RunsGroup {
  width: 1 | 2 | 4;
  slots: RunsSlot[];
  entries: number;
  lebBytes: number;
  /** Expanded bytes: each slot's count x width rounded up to 4. */
  expandedBytes: number;
  valueJobs: StreamJob[];
  lebJobs: StreamJob[];
}

/** A stream to decode: Huffman (modes 0, 1, 2; a raw stream as mode 0) or pack. */
type StreamJob = HuffmanDecodeJob | (PackDecodeJob & { pack: true });

/**
 * Records the decode of `jobs` (streams of the container uploaded as `src`) into `dst` in `s`:
 * the Huffman streams in one dispatch, the pack streams in two (their headers walked, then their
 * blocks). Returns the functions that read their status back after the submission (CORRUPT).
 * @throws ParleError INVALID_ARGUMENT, TOO_LARGE
 */
function encodeStreams(
  gpu: GpuContext,
  s: Submission,
  src: GPUBuffer,
  dst: GPUBuffer,
  jobs: readonly StreamJob[],
): (() => Promise<void>)[] {
  const huffman = jobs.filter((j): j is HuffmanDecodeJob => !('pack' in j));
  const pack = jobs.filter((j): j is PackDecodeJob & { pack: true } => 'pack' in j);
  const checks: (() => Promise<void>)[] = [];
  if (huffman.length > 0) checks.push(encodeHuffmanDecode(gpu, s, src, dst, huffman));
  // a block header the walk rejects is reported by the check, after the payload hashes, as the
  // CPU path would (a damaged payload is CHECKSUM_MISMATCH)
  if (pack.length > 0) checks.push(encodePackDecode(gpu, s, src, dst, pack));
  return checks;
}

/**
 * Ranges of expanded rle streams copied to their targets by copyBufferToBuffer at most; more go
 * through one gather dispatch a target buffer (the host's cost of a copy is a few us).
 */
const COPIES_AT_MOST = 64;

/** Words per slot of the LEB128 decode's slot table (codec-leb-decode.wgsl SLOT_WORDS). */
const SLOT_WORDS = 8;

function lebPipeline(gpu: GpuContext, entryPoint: 'lebFlags' | 'lebValues' | 'lebCheck'): GPUComputePipeline {
  return getPipeline(gpu.device, `codec-leb-decode:${entryPoint}`, () => ({
    code: composeKernel(lebDecodeSource, { subgroups: false, scalar: 'u32' }),
    entryPoint,
  }));
}

/**
 * Records the decode of `group`'s LEB128 streams (in `leb`) into run lengths (in `lengths`,
 * zeroed before, the pad runs included) with the CPU decoder's checks
 * (shaders/codec-leb-decode.wgsl) into `s`; the returned function, called after the
 * submission, reads the status back.
 * @throws ParleError CORRUPT (from the returned function)
 */
function encodeLebLengths(gpu: GpuContext, s: Submission, group: RunsGroup, leb: GPUBuffer, lengths: GPUBuffer): () => Promise<void> {
  const bytes = group.lebBytes;
  const table = new Uint32Array(group.slots.length * SLOT_WORDS);
  group.slots.forEach((slot, i) => {
    table.set([slot.lebAt, slot.lebBytes, slot.runs, slot.at, slot.pad, slot.chunk.elementCount, 0, 0], i * SLOT_WORDS);
  });
  const slotsBuf = s.temp(table.byteLength, 'leb slots');
  gpu.device.queue.writeBuffer(slotsBuf, 0, table);
  const params = s.uniform([bytes, group.slots.length, 0, 0]);
  const flags = s.temp(Math.max(4, bytes * 4), 'leb flags');
  const idx = s.temp(Math.max(4, bytes * 4), 'leb value index');
  const total = s.temp(16, 'leb values');
  const status = s.temp(16, 'leb status');
  s.encoder.clearBuffer(total);
  s.encoder.clearBuffer(status);
  // codec-leb-decode.wgsl's bindings by number; each entry point takes the ones it uses
  const bind = [params, slotsBuf, leb, flags, idx, lengths, status, total].map((buffer, binding): GPUBindGroupEntry => ({
    binding,
    resource: { buffer },
  }));
  if (bytes > 0) {
    s.dispatch(lebPipeline(gpu, 'lebFlags'), [bind[0], bind[1], bind[2], bind[3]], Math.ceil(bytes / WORKGROUP_SIZE), 'parle:leb-flags');
    encodeScan(gpu, s, flags, idx, bytes, 'u32', false, total);
    s.dispatch(
      lebPipeline(gpu, 'lebValues'),
      [bind[0], bind[1], bind[2], bind[3], bind[4], bind[5], bind[6]],
      Math.ceil(bytes / WORKGROUP_SIZE),
      'parle:leb-values',
    );
  }
  s.dispatch(
    lebPipeline(gpu, 'lebCheck'),
    [bind[0], bind[1], bind[2], bind[4], bind[5], bind[6], bind[7]],
    Math.ceil(group.slots.length / WORKGROUP_SIZE),
    'parle:leb-check',
  );
  const readStatus = s.readAfter(status, 4);
  return async () => {
    const bits = (await readStatus())[0];
    if (bits !== 0) {
      const why = [
        bits & 1 ? 'a run length longer than 5 LEB128 bytes or past 2^32 - 2' : '',
        bits & 2 ? 'a lengths stream that is not exactly its runs, each terminated' : '',
        bits & 4 ? "a run longer than its chunk's elements" : '',
      ].filter(Boolean);
      throw new ParleError(ErrorCodes.CORRUPT, `corrupt .parle rle chunk: ${why.join('; ')}`);
    }
  };
}

/**
 * Records the dequantize of every quantized chunk's codes (in `workBuf`) into its elements (in
 * `outBuf`) with its exceptions written over them (shaders/codec-quantize.wgsl, f64's
 * codec-quantize-f64.wgsl) into `s`; the
 * returned function, called after the submission, reads the status back and fails as the CPU
 * decoder would.
 * @throws ParleError CORRUPT (from the returned function)
 */
function encodeDequantizeChunks(
  gpu: GpuContext,
  s: Submission,
  plans: readonly QuantizePlan[],
  exceptionWords: readonly Uint32Array<ArrayBuffer>[],
  exceptionBytes: number,
  workBuf: GPUBuffer,
  outBuf: GPUBuffer,
  outAtOf: (c: LocatedChunk) => number,
): () => Promise<void> {
  const exceptions = s.temp(Math.max(4, exceptionBytes), 'decompress exceptions');
  const status = s.temp(DEQUANTIZE_STATUS_BYTES, 'decompress dequantize status');
  plans.forEach((p, i) => {
    if (exceptionWords[i].byteLength > 0) gpu.device.queue.writeBuffer(exceptions, p.exceptionsAt, exceptionWords[i]);
  });
  s.encoder.clearBuffer(status);
  for (const p of plans) {
    encodeDequantize(gpu, s, {
      codes: workBuf,
      codesByteOffset: p.codesAt,
      out: outBuf,
      outByteOffset: outAtOf(p.chunk),
      count: p.chunk.elementCount,
      step: p.step,
      width: p.width,
      exceptions,
      exceptionsByteOffset: p.exceptionsAt,
      exceptionCount: p.exceptions,
      status,
    });
  }
  const readStatus = s.readAfter(status, DEQUANTIZE_STATUS_BYTES);
  return async () => {
    const words = await readStatus();
    const listed = plans.reduce((a, p) => a + p.exceptions, 0);
    const [invalid, found, refused] = [words[0], words[64], words[65]];
    const why = [
      invalid !== 0 ? 'a code that is neither a quantized value nor a reserved one' : '',
      refused !== 0 ? 'exception indices out of order, out of range, or not at exception codes' : '',
      refused === 0 && found !== listed ? `${found} exception codes, ${listed} exceptions listed` : '',
    ].filter(Boolean);
    if (why.length > 0) throw new ParleError(ErrorCodes.CORRUPT, `corrupt .parle quantized chunk: ${why.join('; ')}`);
  };
}

/** Bytes of a Huffman stream's header that the plan reads: its mode, segment size log2 and last symbol ({@link parseHuffmanStream}). */
export const STREAM_HEAD_BYTES = 3;

/**
 * A container in a GPU buffer (from byte 0; not destroyed here) and a reader of the bytes the
 * plan reads (the container in host memory it was uploaded from, or what
 * ts/codec/gpu/device-container.ts read back of one that lives on the device): the header, the
 * entries, each chunk's first 16 payload bytes, its stream directory, a quantized chunk's
 * exceptions, the first {@link STREAM_HEAD_BYTES} bytes of each Huffman stream; of a predicted
 * chunk its first {@link PREDICT_HEAD_MAX_BYTES} bytes, a decimal map's exceptions, and each field
 * block's head, directory and stream heads.
 */
export interface ResidentContainer {
  buffer: GPUBuffer;
  readAt: ReadAt;
}

/**
 * Decodes the version-2 to -4 container `container` (already walked: `header`, `chunks`; on the
 * GPU, a {@link ResidentContainer}) into a new DeviceArray as described above.
 * @throws ParleError CORRUPT, CHECKSUM_MISMATCH, TOO_LARGE (beyond one storage binding),
 *   INVALID_ARGUMENT (a chunk {@link chunksOnDevice} refuses), DEVICE_LOST, ABORTED
 */
export async function decodeContainerOnDevice(
  gpu: GpuContext,
  container: ResidentContainer,
  header: Header,
  chunks: readonly LocatedChunk[],
  signal?: AbortSignal,
): Promise<DeviceArray> {
  const t0 = performance.now();
  const readAt = container.readAt;
  const size = elementSize(header.type);
  /** Bytes of the words the pipelines code: the elements', or an 8-byte element's u32 halves (the only pipelines of 8-byte elements are in predicted chunks' field blocks). */
  const wordSize = size === 8 ? 4 : size;
  const outBytes = header.elementCount * size;
  gpu.checkBindable(roundUp4(Math.max(outBytes, 4)), 'decompress output');
  const jobs: (StreamJob & { target: Target })[] = [];
  const stagePlans: StagePlan[] = [];
  const groups = new Map<number, RunsGroup>();
  let rleChunks = 0;
  const quantized: QuantizePlan[] = [];
  const exceptionWords: Uint32Array<ArrayBuffer>[] = [];
  let exceptionBytes = 0;
  let work = 0;
  let codesBytes = 0;
  const predicted: PredictChunk[] = [];
  let residBytes = 0;
  /** Checks the plan found failing, reported after the payload hashes. */
  const planChecks: (() => Promise<void>)[] = [];
  // where each chunk's elements are decoded: at their place in the output, or where a chunk
  // starts off a 4-byte boundary, every chunk from a word of its own in a staging buffer
  const staged = chunks.some((c) => (c.elementOffset * size) % 4 !== 0);
  const outAtMap = new Map<LocatedChunk, number>();
  let stagingBytes = 0;
  for (const c of chunks) {
    outAtMap.set(c, staged ? stagingBytes : c.elementOffset * size);
    stagingBytes += roundUp4(c.elementCount * size);
  }
  if (staged) gpu.checkBindable(Math.max(stagingBytes, 4), 'decompress staged chunks');
  const outAtOf = (c: LocatedChunk): number => outAtMap.get(c)!;
  /**
   * Plans the decode of one pipeline's streams: the chunk `c` (or a field block of it: `c` with
   * its cells as elementCount), its payload bytes at `payloadOffset`, into `dest`; reads its
   * directory and stream heads.
   */
  const planPipeline = (c: LocatedChunk, stages: Pipeline, payloadOffset: number, payloadBytes: number, dest: Target): void => {
    const count = c.elementCount;
    const directory = readAt(payloadOffset, Math.min(8 * streamCount(stages, wordSize), payloadBytes));
    const dir = readDirectory(directory, payloadBytes, stages, wordSize, count, c.index);
    const shuffle = stages.includes(StageId.Shuffle);
    // where the decoded (or expanded) streams go: `dest` itself (a delta stream too: it is
    // decoded there in place), or the work buffer (byte planes, unshuffled into `dest`)
    const targets: Target[] = [];
    const streams: number[] = [];
    const streamBytes = (shuffle ? 1 : wordSize) * count;
    if (!shuffle) targets.push(dest);
    else {
      for (let k = 0; k < wordSize; k++) {
        targets.push({ buf: 'work', at: work });
        streams.push(work);
        work += roundUp4(streamBytes);
      }
    }
    const huffman = stages.includes(StageId.Huffman);
    const rle = stages.includes(StageId.Rle);
    /** The stream job of stream j of this chunk, to `dstByteOffset` of its buffer. */
    const streamJob = (j: number, dstByteOffset: number): StreamJob => {
      let stream: HuffmanStreamInfo;
      let src = payloadOffset + dir.at[j];
      if (stages.includes(StageId.Pack)) {
        const width = packStreamWidth(stages, wordSize, j);
        return { pack: true, srcByteOffset: src, encodedBytes: dir.encoded[j], decodedBytes: dir.decoded[j], width, dstByteOffset };
      }
      if (huffman) {
        try {
          const head = readAt(src, Math.min(STREAM_HEAD_BYTES, dir.encoded[j]));
          stream = parseHuffmanStream(head, dir.decoded[j], dir.encoded[j]);
        } catch (e) {
          if (e instanceof ParleError) throw new ParleError(e.code, `chunk ${c.index}, stream ${j}: ${e.message}`);
          throw e;
        }
      } else {
        stream = rawStream(dir.decoded[j]);
        src -= 1;
      }
      return { stream, srcByteOffset: src, dstByteOffset };
    };
    if (rle) {
      rleChunks++;
      const layout = runsLayout(dir, stages, wordSize, count);
      const width = layout.slots[0].width;
      let group = groups.get(width);
      if (group === undefined) {
        group = { width, slots: [], entries: 0, lebBytes: 0, expandedBytes: 0, valueJobs: [], lebJobs: [] };
        groups.set(width, group);
      }
      layout.slots.forEach((slot, k) => {
        const g = group!;
        const entries = roundUp4((slot.runs + (slot.pad > 0 ? 1 : 0)) * width) / width;
        const lebBytes = dir.decoded[2 * k + 1];
        g.slots.push({ chunk: c, runs: slot.runs, pad: slot.pad, at: g.entries, entries, lebAt: g.lebBytes, lebBytes, target: targets[k] });
        g.valueJobs.push(streamJob(2 * k, g.entries * width));
        g.lebJobs.push(streamJob(2 * k + 1, g.lebBytes));
        g.entries += entries;
        g.lebBytes += roundUp4(lebBytes);
        g.expandedBytes += roundUp4(streamBytes);
      });
    } else {
      for (let j = 0; j < dir.decoded.length; j++) jobs.push({ ...streamJob(j, 0), target: targets[j] });
    }
    if (shuffle || stages.includes(StageId.Delta)) stagePlans.push({ chunk: c, stages, streams, dest });
  };
  for (const c of chunks) {
    const stages = (c.stages ?? []) as Pipeline;
    const count = c.elementCount;
    const raw = count * size;
    const outAt = outAtOf(c);
    if (count === 0) continue;
    if (c.predict === true) {
      // a predicted chunk: each field block into its residual plane (stored, or its pipeline),
      // then the predictor undone into the output (./predict.ts)
      // only what the plan needs is read: the header, each field block's head, directory and
      // stream heads, a decimal map's exceptions (from the payload's own offsets)
      const inPayload = (offset: number, length: number) => readAt(c.payloadOffset + offset, length);
      const prefix = inPayload(0, Math.min(c.payloadBytes, PREDICT_HEAD_MAX_BYTES));
      const head = readPredictHeader(prefix, count, size, c.index, c.payloadBytes);
      const blocks = readFieldBlocksAt(inPayload, c.payloadBytes, head, c.index);
      if (!predictOnDevice(head, size)) {
        throw new ParleError(ErrorCodes.INVALID_ARGUMENT, `chunk ${c.index}: ${predictName(head)} is not decoded on the GPU`);
      }
      const cells = head.words / head.fields;
      const stride = roundUp4(cells * head.wordWidth);
      const cellsChunk: LocatedChunk = { ...c, elementCount: cells };
      blocks.forEach((block, k) => {
        const dest: Target = { buf: 'resid', at: residBytes + k * stride };
        if (block.stages.length === 0) {
          jobs.push({ stream: rawStream(block.bytes), srcByteOffset: c.payloadOffset + block.at - 1, dstByteOffset: 0, target: dest });
        } else planPipeline(cellsChunk, block.stages as Pipeline, c.payloadOffset + block.at, block.bytes, dest);
      });
      // a decimal map's exceptions, checked here as the CPU decoder checks them (reported after
      // the payload hashes, as a sequential decode meets them)
      let exceptions: PredictChunk['exceptions'];
      if (head.map === ValueMap.Decimal && head.exceptions > 0) {
        // u32 indices, then the elements' bits (an 8-byte element's two words)
        const list = inPayload(head.exceptionsAt, exceptionEntryBytes(size) * head.exceptions).slice();
        const indices = new Uint32Array(list.buffer, 0, head.exceptions);
        const bits = new Uint32Array(list.buffer, 4 * head.exceptions, (head.exceptions * size) / 4);
        if (indices.some((x, j) => x >= count || (j > 0 && x <= indices[j - 1]))) {
          planChecks.push(async () => {
            throw new ParleError(ErrorCodes.CORRUPT, `corrupt .parle chunk ${c.index}: exception indices out of order or out of range`);
          });
        } else exceptions = { indices, bits };
      }
      predicted.push({
        residByteOffset: residBytes,
        planeByteStride: stride,
        outByteOffset: outAt,
        head,
        ...(exceptions ? { exceptions } : {}),
      });
      residBytes += head.fields * stride;
      continue;
    }
    if (stages.length === 0) {
      jobs.push({ stream: rawStream(raw), srcByteOffset: c.payloadOffset - 1, dstByteOffset: 0, target: { buf: 'out', at: outAt } });
      continue;
    }
    // a quantized chunk: the codes' payload after the quantize header and the exceptions; the
    // codes decode into the codes buffer, then dequantize into the output
    let codesAt = 0;
    let dest: Target = { buf: 'out', at: outAt };
    if (c.quantize === true) {
      // f32 or f64 (the only types quantized): the header, then u32 indices and the bits of the
      // exceptions, then the u32 codes' streams
      const width = size as 4 | 8;
      const headerBytes = quantizeHeaderBytes(width);
      const quantizeHeader = readAt(c.payloadOffset, Math.min(headerBytes, c.payloadBytes));
      const head = readQuantizeHeader(quantizeHeader, c.payloadBytes, count, 8 * streamCount(stages, 4), c.index, width);
      codesAt = head.codesAt;
      dest = { buf: 'codes', at: codesBytes };
      codesBytes += 4 * count;
      const list = new Uint32Array(((4 + width) * head.exceptions) / 4);
      if (head.exceptions > 0) new Uint8Array(list.buffer).set(readAt(c.payloadOffset + headerBytes, list.byteLength));
      quantized.push({ chunk: c, codesAt: dest.at, step: head.step, width, exceptions: head.exceptions, exceptionsAt: exceptionBytes });
      exceptionWords.push(list);
      exceptionBytes += list.byteLength;
    }
    planPipeline(c, stages, c.payloadOffset + codesAt, c.payloadBytes - codesAt, dest);
  }
  gpu.checkBindable(roundUp4(Math.max(work, 4)), 'decompress streams');
  gpu.checkBindable(roundUp4(Math.max(codesBytes, 4)), 'decompress codes');
  gpu.checkBindable(roundUp4(Math.max(residBytes, 4)), 'decompress residuals');
  const containerBuf = container.buffer;
  const t1 = performance.now();
  const outBuf = gpu.acquireStorage(roundUp4(Math.max(outBytes, 4)), 'decompress output');
  let out: DeviceArray | undefined = gpu.owned(outBuf, header.type, header.elementCount);
  const buffers = { out: outBuf, work: outBuf, codes: outBuf, resid: outBuf };
  try {
    if (signal?.aborted) throw abortError(signal);
    // Everything in one op (its parts submitted as they are recorded), every status read back
    // after it, checked in the order a sequential decode meets them: payload hashes, streams,
    // run lengths, run totals, dequantize, element hashes. The kernels bound every read and
    // write, so a stage that works on what a corrupt earlier one left stays inside its buffers.
    let payloadHashes: () => Promise<Uint32Array> = async () => new Uint32Array(0);
    let elementHashes: () => Promise<Uint32Array> = async () => new Uint32Array(0);
    const checks: (() => Promise<void>)[] = [...planChecks];
    await gpu.submit('decompress', (s) => {
      payloadHashes = encodeTreeHashes(
        gpu,
        s,
        containerBuf,
        chunks.map((c) => ({ byteOffset: c.payloadOffset, byteLength: c.payloadBytes })),
      );
      buffers.work = s.temp(roundUp4(Math.max(work, 4)), 'decompress streams');
      if (staged) buffers.out = s.temp(Math.max(stagingBytes, 4), 'decompress staged chunks');
      if (codesBytes > 0) buffers.codes = s.temp(codesBytes, 'decompress codes');
      if (residBytes > 0) buffers.resid = s.temp(residBytes, 'decompress residuals');
      // streams of chunks without rle
      for (const to of ['out', 'work', 'codes', 'resid'] as const) {
        const some = jobs.filter((j) => j.target.buf === to).map(({ target, ...job }) => ({ ...job, dstByteOffset: target.at }));
        checks.push(...encodeStreams(gpu, s, containerBuf, buffers[to], some));
      }
      // the GPU starts on the hashes and stream decodes while the rest is encoded
      s.flush();
      // chunks with rle: streams decoded and run lengths checked, one expand a value width
      for (const group of groups.values()) {
        const { width } = group;
        const valuesBuf = s.temp(Math.max(4, group.entries * width), 'decompress run values');
        const lengthsBuf = s.temp(Math.max(4, group.entries * 4), 'decompress run lengths');
        const lebBuf = s.temp(Math.max(4, group.lebBytes), 'decompress run lengths LEB128');
        const Type = width === 1 ? 'u8' : width === 2 ? 'u16' : 'u32';
        // zeros: the pad and filler runs' values and lengths, and the bytes between LEB128 streams
        s.encoder.clearBuffer(valuesBuf);
        s.encoder.clearBuffer(lengthsBuf);
        s.encoder.clearBuffer(lebBuf);
        checks.push(...encodeStreams(gpu, s, containerBuf, valuesBuf, group.valueJobs));
        checks.push(...encodeStreams(gpu, s, containerBuf, lebBuf, group.lebJobs));
        checks.push(encodeLebLengths(gpu, s, group, lebBuf, lengthsBuf));
        const expandedBuf = s.temp(group.expandedBytes, 'decompress expanded runs');
        const dValues = gpu.wrap(valuesBuf, Type, group.entries);
        const dLengths = gpu.wrap(lengthsBuf, 'u32', group.entries);
        checks.push(encodeRleDecodeExpected(gpu, s, dValues, dLengths, group.expandedBytes / width, expandedBuf));
        // each stream's expansion (padded to 4 bytes by its pad run) to its target, a range a run
        // of streams whose targets follow each other in one buffer (a shuffled chunk's planes,
        // consecutive chunks); up to COPIES_AT_MOST ranges a copy each, more in one gather a
        // target buffer (./gather.ts): a copy a stream had cost a 64 MiB f32 decode of 1024 rle
        // streams 1.8 ms of the main thread on the H200 host (and a barrier a copy on the GPU),
        // a copy a range a 64 MiB f64 decode of records (10 word fields a chunk) 4.8 ms
        const ranges: { buf: Target['buf']; job: GatherJob }[] = [];
        let from = 0;
        for (const slot of group.slots) {
          const streamBytes = roundUp4(slot.chunk.elementCount * width);
          const last = ranges[ranges.length - 1];
          if (last !== undefined && last.buf === slot.target.buf && last.job.dstByteOffset + last.job.byteLength === slot.target.at) {
            last.job.byteLength += streamBytes;
          } else
            ranges.push({ buf: slot.target.buf, job: { srcByteOffset: from, dstByteOffset: slot.target.at, byteLength: streamBytes } });
          from += streamBytes;
        }
        if (ranges.length <= COPIES_AT_MOST) {
          for (const { buf, job } of ranges) {
            if (job.byteLength > 0)
              s.encoder.copyBufferToBuffer(expandedBuf, job.srcByteOffset, buffers[buf], job.dstByteOffset, job.byteLength);
          }
        } else {
          for (const to of ['out', 'work', 'codes', 'resid'] as const) {
            const jobs = ranges.filter((r) => r.buf === to).map((r) => r.job);
            if (jobs.length > 0) encodeGather(gpu, s, expandedBuf, buffers[to], jobs);
          }
        }
      }
      if (groups.size > 0) s.flush();
      // planes, unshuffled into their place, then every delta chunk of a buffer decoded in place at once
      for (const to of ['out', 'codes', 'resid'] as const) {
        const planes = stagePlans
          .filter((p) => p.dest.buf === to && p.stages.includes(StageId.Shuffle))
          .map((p) => ({ elementsByteOffset: p.dest.at, planeByteOffsets: p.streams, count: p.chunk.elementCount }));
        if (planes.length > 0) encodeShuffleChunks(gpu, s, 'unshuffle', buffers[to], buffers.work, wordSize as 2 | 4, planes);
        const deltas = stagePlans
          .filter((p) => p.dest.buf === to && p.stages.includes(StageId.Delta))
          .map((p) => ({ byteOffset: p.dest.at, count: p.chunk.elementCount }));
        if (deltas.length > 0) encodeDeltaDecodeChunks(gpu, s, buffers[to], wordSize, deltas);
      }
      // quantized chunks: codes to elements, exceptions over them, with the CPU decoder's checks
      if (quantized.length > 0) {
        checks.push(encodeDequantizeChunks(gpu, s, quantized, exceptionWords, exceptionBytes, buffers.codes, buffers.out, outAtOf));
      }
      // predicted chunks: residual planes to elements (unzigzag, the predictor's sums, fields joined, the value map undone)
      if (predicted.length > 0) encodePredictDecodeChunks(gpu, s, buffers.resid, buffers.out, size, predicted);
      // staged chunks to their byte offsets in the output (ORed into a cleared output)
      if (staged) {
        s.encoder.clearBuffer(outBuf);
        encodeGather(
          gpu,
          s,
          buffers.out,
          outBuf,
          chunks.map((c) => ({ srcByteOffset: outAtOf(c), dstByteOffset: c.elementOffset * size, byteLength: c.elementCount * size })),
        );
      }
      elementHashes = encodeTreeHashes(
        gpu,
        s,
        outBuf,
        chunks.map((c) => ({ byteOffset: c.elementOffset * size, byteLength: c.elementCount * size })),
      );
    });
    const t2 = performance.now();
    // every readback mapped at once (one after another, each waited for, they had been a round
    // trip each), then judged in order
    const quiet = <T>(p: Promise<T>): Promise<T> => {
      p.catch(() => undefined);
      return p;
    };
    const payloadRead = quiet(payloadHashes());
    const checksRead = checks.map((check) => quiet(check()));
    const elementsRead = quiet(elementHashes());
    const payload = await payloadRead;
    for (const c of chunks) {
      if (payload[c.index] !== Number(c.payloadChecksum)) {
        throw new ParleError(ErrorCodes.CHECKSUM_MISMATCH, `chunk ${c.index}: payload checksum mismatch`);
      }
    }
    for (const check of checksRead) await check;
    const elements = await elementsRead;
    for (const c of chunks) {
      if (elements[c.index] !== Number(c.elementsChecksum)) {
        throw new ParleError(ErrorCodes.CHECKSUM_MISMATCH, `chunk ${c.index}: decoded elements checksum mismatch`);
      }
    }
    debug(
      () =>
        `decompress to the GPU: ${chunks.length} chunks (${rleChunks} with rle); plan ${(t1 - t0).toFixed(2)} ms, ` +
        `the decode's submissions ${(t2 - t1).toFixed(2)} ms, checks ${(performance.now() - t2).toFixed(2)} ms`,
    );
    const result = out;
    out = undefined;
    return result;
  } finally {
    out?.destroy();
  }
}
