/**
 * The stream directory of a piped payload (docs/format.md, "Payloads": for each stream its
 * decoded and encoded bytes, 8 S bytes before the streams), read and checked against the chunk
 * before any stream is decoded ("What a reader checks"), and what a decoder derives from it: the
 * width a pack stream is coded at ("Pack streams") and where an rle chunk's runs go ("RLE
 * streams (stage 3)"). Bytes only, no kernels: shared by the CPU decoder (./decode.ts), the
 * CPU path's arena sizing (./chunks.ts) and the GPU decoder (ts/codec/gpu/decode.ts).
 */
import { ErrorCodes, ParleError } from '../../errors.js';
import { entropyStage, StageId, streamCount, type Pipeline } from '../../format/stages.js';

/** The stream directory of a version-2 payload, checked against the chunk. */
export interface Directory {
  /** Decoded bytes of each stream. */
  decoded: number[];
  /** Encoded bytes of each stream. */
  encoded: number[];
  /** Offset of each encoded stream in the payload. */
  at: number[];
}

/**
 * Reads and checks the directory at the start of a version-2 payload (`dir`: at least its first
 * 8 S bytes; `payloadBytes`: the payload's length) for a chunk of `count` elements of `width`
 * bytes with pipeline `stages`. Every decoded size is bounded by the chunk, so a reader may size
 * its buffers from them.
 * @throws ParleError CORRUPT
 */
export function readDirectory(
  dir: Uint8Array,
  payloadBytes: number,
  stages: Pipeline,
  width: 1 | 2 | 4,
  count: number,
  index: number,
): Directory {
  const corrupt = (why: string) => new ParleError(ErrorCodes.CORRUPT, `corrupt .parle chunk ${index}: ${why}`);
  const S = streamCount(stages, width);
  if (8 * S > payloadBytes || dir.length < 8 * S) throw corrupt(`payload of ${payloadBytes} bytes cannot hold ${S} stream sizes`);
  const view = new DataView(dir.buffer, dir.byteOffset, 8 * S);
  const shuffle = stages.includes(StageId.Shuffle);
  const rle = stages.includes(StageId.Rle);
  const entropy = entropyStage(stages);
  const streamWidth = shuffle ? 1 : width;
  const streamElems = count; // a plane holds count bytes; an unshuffled stream count elements
  const decoded: number[] = [];
  const encoded: number[] = [];
  const at: number[] = [];
  let offset = 8 * S;
  for (let j = 0; j < S; j++) {
    const D = view.getUint32(8 * j, true);
    const E = view.getUint32(8 * j + 4, true);
    if (!rle) {
      if (D !== streamElems * streamWidth) throw corrupt(`stream ${j} decodes to ${D} bytes, expected ${streamElems * streamWidth}`);
    } else if (j % 2 === 0) {
      const R = D / streamWidth;
      if (!Number.isInteger(R) || R < 1 || R > streamElems) throw corrupt(`rle stream ${j} holds ${D} bytes of run values`);
    } else if (D > 5 * (decoded[j - 1] / streamWidth) || D < decoded[j - 1] / streamWidth) {
      throw corrupt(`rle stream ${j} holds ${D} bytes of run lengths for ${decoded[j - 1] / streamWidth} runs`);
    }
    if (entropy === undefined && E !== D) throw corrupt(`stream ${j}: ${E} bytes stored for ${D}`);
    if (entropy === StageId.Huffman && E < 1) throw corrupt(`stream ${j} is empty`);
    decoded.push(D);
    encoded.push(E);
    at.push(offset);
    offset += E;
    if (offset > payloadBytes) throw corrupt(`streams run past the payload's ${payloadBytes} bytes`);
  }
  if (offset !== payloadBytes) throw corrupt(`streams end ${payloadBytes - offset} bytes before the payload does`);
  return { decoded, encoded, at };
}

/**
 * The element width a pack stream j of a payload is coded at (docs/format.md, "Pack streams"):
 * 1 for the run lengths (the odd streams of an rle pipeline, LEB128 bytes) and for shuffle
 * planes, else the element width `width`. Shared by the CPU and GPU decoders.
 */
export function packStreamWidth(stages: Pipeline, width: 1 | 2 | 4, j: number): 1 | 2 | 4 {
  if (stages.includes(StageId.Rle) && j % 2 === 1) return 1;
  return stages.includes(StageId.Shuffle) ? 1 : width;
}

/** Where decodeRunsAt (./decode.ts) puts one rle stream pair's runs. */
export interface RunsSlot {
  /** Runs of the stream, and the element width of its values. */
  runs: number;
  width: 1 | 2 | 4;
  /** Elements of a zero-valued pad run after it (0..3), so that its expansion ends on a 4-byte boundary. */
  pad: number;
  /** Offset of its values in bytes, and of its lengths in runs, in the chunk's blocks. */
  valuesAt: number;
  lengthsAt: number;
}

/**
 * The layout of a version-2 rle chunk's runs for decodeRunsAt (./decode.ts; the GPU decoder
 * too): one slot a stream pair (a plane, or the one stream), values and lengths back to back,
 * pad runs included.
 */
export function runsLayout(
  directory: Directory,
  stages: Pipeline,
  width: 1 | 2 | 4,
  count: number,
): { slots: RunsSlot[]; valueBytes: number; runs: number } {
  const streamWidth = stages.includes(StageId.Shuffle) ? 1 : width;
  const slots: RunsSlot[] = [];
  let valueBytes = 0;
  let runs = 0;
  for (let k = 0; k < directory.decoded.length; k += 2) {
    const R = directory.decoded[k] / streamWidth;
    const bytes = count * streamWidth;
    const pad = (Math.ceil(bytes / 4) * 4 - bytes) / streamWidth;
    slots.push({ runs: R, width: streamWidth, pad, valuesAt: valueBytes, lengthsAt: runs });
    valueBytes += (R + (pad > 0 ? 1 : 0)) * streamWidth;
    runs += R + (pad > 0 ? 1 : 0);
  }
  return { slots, valueBytes, runs };
}
