/**
 * The payload layout of a predicted chunk (docs/format.md, "Stage 7: predict"; version 4): the
 * predict header (value map, predictor, fields, the cells' geometry), a decimal map's exponents
 * and exceptions, then a block a field with its own pipeline. Bytes only: the kernels are in
 * assembly/predict.ts, the chunk coder in ts/codec/cpu/encode.ts and ts/codec/cpu/decode.ts.
 */
import { ErrorCodes, ParleError } from '../errors.js';
import { pipelineProblem } from './stages.js';

/** Bytes of the fixed predict header. */
export const PREDICT_HEADER_BYTES = 12;
/** Bytes in front of each field block: its stage ids (4) and its length (4). */
export const FIELD_BLOCK_HEADER_BYTES = 8;
/** Largest decimal exponent a reader accepts (10^-18 is the smallest factor). */
export const MAX_DECIMAL_EXPONENT = 18;
/** Most fields a chunk may split into. */
export const MAX_FIELDS = 255;

/** How elements become the unsigned values the predictor sees (payload byte 0). */
export const enum ValueMap {
  /** The elements' bits. */
  None = 0,
  /** fpzip's order-preserving map of f32 or f64 bits (Lindstrom and Isenburg 2006). */
  FloatOrder = 1,
  /**
   * ALP's decimal floats (Afroozeh, Kuffo and Boncz 2024): f32 = f32(i32 x F[e]), f64 = i64 / 10^e,
   * exceptions listed.
   */
  Decimal = 2,
}

/** The predictor (payload byte 1). */
export const enum Predictor {
  None = 0,
  /** The previous cell's value. */
  Left = 1,
  /** The value a row before. */
  Up = 2,
  /** 2-D Lorenzo: left + up - upper left (SZ). */
  Lorenzo2 = 3,
  /** 3-D Lorenzo over planes of Y rows. */
  Lorenzo3 = 4,
  /** LOCO-I's median edge detector. */
  Med = 5,
}

/** Map and predictor names, as `parle inspect` and the chooser's reasons write them. */
export const VALUE_MAP_NAMES = ['bits', 'float-order', 'decimal'] as const;
export const PREDICTOR_NAMES = ['none', 'left', 'up', 'lorenzo2', 'lorenzo3', 'med'] as const;

/**
 * The words a predicted chunk's predictor and fields see for `count` elements of `width` bytes:
 * an 8-byte element is two u32 words (its low, then its high half: the elements' own little-endian
 * bytes), every other element one word of its width.
 */
export function predictWords(count: number, width: number): { words: number; wordWidth: 1 | 2 | 4 } {
  return width === 8 ? { words: 2 * count, wordWidth: 4 } : { words: count, wordWidth: width as 1 | 2 | 4 };
}

/** A predicted chunk's parameters (its payload's header). */
export interface PredictParams {
  map: ValueMap;
  predictor: Predictor;
  /**
   * Words a cell (1..255): channels or record fields, each coded as its own plane (8-byte
   * elements: two words an element field, so an even count).
   */
  fields: number;
  /** Cells a row (>= 1). */
  rowCells: number;
  /** Rows a plane (>= 1; the 3-D Lorenzo's third axis). */
  planeRows: number;
  /** Decimal map: an exponent an element field (0..18; fields / 2 of them for 8-byte elements). */
  exponents?: number[];
}

/** Element fields of a cell of `fields` words of `width`-byte elements. */
export function elementFields(fields: number, width: number): number {
  return width === 8 ? fields / 2 : fields;
}

/** Bytes of a decimal map's exponents: one an element field, padded to a multiple of 4. */
export function exponentBytes(elementFieldCount: number): number {
  return Math.ceil(elementFieldCount / 4) * 4;
}

/** Bytes a decimal map's exception takes: its u32 index and the element's bits. */
export function exceptionBytes(width: number): number {
  return 4 + width;
}

/** Bytes of the predict header with its map's parameters and `exceptions` exceptions of `width`-byte elements, before the field blocks. */
export function predictPrefixBytes(params: PredictParams, exceptions: number, width: number): number {
  if (params.map !== ValueMap.Decimal) return PREDICT_HEADER_BYTES;
  return PREDICT_HEADER_BYTES + exponentBytes(elementFields(params.fields, width)) + 4 + exceptionBytes(width) * exceptions;
}

/** `inspect`'s name of a predicted chunk: `predict(lorenzo2, float-order, 3 fields)`. */
export function predictName(params: PredictParams): string {
  const parts: string[] = [PREDICTOR_NAMES[params.predictor]];
  if (params.map !== ValueMap.None) parts.push(VALUE_MAP_NAMES[params.map]);
  if (params.fields > 1) parts.push(`${params.fields} fields`);
  return `predict(${parts.join(', ')})`;
}

/**
 * Writes the predict header (and a decimal map's exponents and exception count; the caller
 * writes the exception lists after) at the start of `target`. Returns the bytes written.
 */
export function writePredictHeader(target: Uint8Array, params: PredictParams, exceptions: number): number {
  const exponents = params.exponents ?? [];
  const view = new DataView(target.buffer, target.byteOffset, target.byteLength);
  view.setUint8(0, params.map);
  view.setUint8(1, params.predictor);
  view.setUint8(2, params.fields);
  view.setUint8(3, 0);
  view.setUint32(4, params.rowCells, true);
  view.setUint32(8, params.planeRows, true);
  if (params.map !== ValueMap.Decimal) return PREDICT_HEADER_BYTES;
  const eb = exponentBytes(exponents.length);
  target.fill(0, PREDICT_HEADER_BYTES, PREDICT_HEADER_BYTES + eb);
  target.set(exponents, PREDICT_HEADER_BYTES);
  view.setUint32(PREDICT_HEADER_BYTES + eb, exceptions, true);
  return PREDICT_HEADER_BYTES + eb + 4;
}

/** A predict header as read: its parameters, its exceptions and where the lists and blocks are. */
export interface PredictHeader extends PredictParams {
  /** Words of the chunk ({@link predictWords}) and their width in bytes. */
  words: number;
  wordWidth: 1 | 2 | 4;
  exceptions: number;
  /** Byte offset of the exception indices (E u32), then their values (E elements' bits). */
  exceptionsAt: number;
  /** Byte offset of the first field block. */
  blocksAt: number;
}

/**
 * Bytes at the start of a predicted payload that hold its header at most: the header, a decimal
 * map's exponents of {@link MAX_FIELDS} fields and its exception count (not the exception lists).
 */
export const PREDICT_HEAD_MAX_BYTES = PREDICT_HEADER_BYTES + exponentBytes(MAX_FIELDS) + 4;

/**
 * Reads and checks a predicted chunk's header from `payload` of a chunk of `count` elements of
 * `width` bytes (the float maps need 4 or 8: the container's type is not checked here, a map of
 * integer bits decodes to other bits, which the elements' hash rejects). `payload` is the whole
 * payload, or its first min(`payloadBytes`, {@link PREDICT_HEAD_MAX_BYTES}) bytes when the
 * payload's length `payloadBytes` is given (a plan that reads only what it needs).
 * @throws ParleError CORRUPT naming chunk `index`
 */
export function readPredictHeader(
  payload: Uint8Array,
  count: number,
  width: number,
  index: number,
  payloadBytes = payload.length,
): PredictHeader {
  const corrupt = (why: string) => new ParleError(ErrorCodes.CORRUPT, `corrupt .parle chunk ${index}: ${why}`);
  if (payloadBytes < PREDICT_HEADER_BYTES || payload.length < Math.min(payloadBytes, PREDICT_HEAD_MAX_BYTES))
    throw corrupt('predict header past the payload');
  const view = new DataView(payload.buffer, payload.byteOffset, payload.byteLength);
  const map = view.getUint8(0);
  const predictor = view.getUint8(1);
  const fields = view.getUint8(2);
  const rowCells = view.getUint32(4, true);
  const planeRows = view.getUint32(8, true);
  if (map > ValueMap.Decimal) throw corrupt(`unknown value map ${map}`);
  if (map !== ValueMap.None && width !== 4 && width !== 8) throw corrupt(`value map ${VALUE_MAP_NAMES[map]} on ${width}-byte elements`);
  if (predictor > Predictor.Med) throw corrupt(`unknown predictor ${predictor}`);
  if (view.getUint8(3) !== 0) throw corrupt('predict header byte 3 is not zero');
  const { words, wordWidth } = predictWords(count, width);
  if (fields === 0 || words % fields !== 0 || (width === 8 && fields % 2 !== 0))
    throw corrupt(`${fields} fields for ${count} elements of ${width} bytes`);
  const cells = words / fields;
  if (rowCells === 0 || planeRows === 0 || cells % rowCells !== 0 || (cells / rowCells) % planeRows !== 0) {
    throw corrupt(`rows of ${rowCells} cells in planes of ${planeRows} rows for ${cells} cells`);
  }
  const head: PredictHeader = {
    map,
    predictor,
    fields,
    rowCells,
    planeRows,
    words,
    wordWidth,
    exceptions: 0,
    exceptionsAt: PREDICT_HEADER_BYTES,
    blocksAt: PREDICT_HEADER_BYTES,
  };
  if (map === ValueMap.Decimal) {
    const ef = elementFields(fields, width);
    const eb = exponentBytes(ef);
    if (payloadBytes < PREDICT_HEADER_BYTES + eb + 4) throw corrupt('decimal exponents past the payload');
    const exponents = Array.from(payload.subarray(PREDICT_HEADER_BYTES, PREDICT_HEADER_BYTES + ef));
    if (exponents.some((e) => e > MAX_DECIMAL_EXPONENT)) throw corrupt(`a decimal exponent over ${MAX_DECIMAL_EXPONENT}`);
    const exceptions = view.getUint32(PREDICT_HEADER_BYTES + eb, true);
    if (exceptions > count) throw corrupt(`${exceptions} exceptions for ${count} elements`);
    const at = PREDICT_HEADER_BYTES + eb + 4;
    const listBytes = exceptionBytes(width) * exceptions;
    if (at + listBytes > payloadBytes) throw corrupt('exceptions past the payload');
    Object.assign(head, { exponents, exceptions, exceptionsAt: at, blocksAt: at + listBytes });
  }
  return head;
}

/** One field block as read: its pipeline, and where its bytes lie in the payload. */
export interface FieldBlock {
  stages: number[];
  /** Byte offset of the block's bytes (after its 8-byte head) in the payload. */
  at: number;
  bytes: number;
}

/**
 * Reads and checks the `fields` block heads of a predicted payload from `head.blocksAt`: each
 * pipeline valid for the header's word width, a stored block exactly a plane's bytes (its words
 * / fields x word width), a piped one below it, and nothing after the last block. The blocks' own
 * payloads are checked by their decoder.
 * @throws ParleError CORRUPT naming chunk `index`
 */
export function readFieldBlocks(payload: Uint8Array, head: PredictHeader, index: number): FieldBlock[] {
  return readFieldBlocksAt((offset, length) => payload.subarray(offset, offset + length), payload.length, head, index);
}

/**
 * {@link readFieldBlocks} of a payload of `payloadBytes` bytes that `read` serves (`read(offset,
 * length)`: its bytes from `offset`, fewer past its end): only the blocks' 8-byte heads are read,
 * one after another (each block's length gives the next one's place).
 * @throws ParleError CORRUPT naming chunk `index`
 */
export function readFieldBlocksAt(
  read: (offset: number, length: number) => Uint8Array,
  payloadBytes: number,
  head: PredictHeader,
  index: number,
): FieldBlock[] {
  const corrupt = (why: string) => new ParleError(ErrorCodes.CORRUPT, `corrupt .parle chunk ${index}: ${why}`);
  const width = head.wordWidth;
  const raw = (head.words / head.fields) * width;
  const blocks: FieldBlock[] = [];
  let at = head.blocksAt;
  for (let k = 0; k < head.fields; k++) {
    const blockHead = at + FIELD_BLOCK_HEADER_BYTES > payloadBytes ? undefined : read(at, FIELD_BLOCK_HEADER_BYTES);
    if (blockHead === undefined || blockHead.length < FIELD_BLOCK_HEADER_BYTES) throw corrupt(`field ${k}'s block past the payload`);
    const view = new DataView(blockHead.buffer, blockHead.byteOffset, FIELD_BLOCK_HEADER_BYTES);
    const stages: number[] = [];
    for (let i = 0; i < 4; i++) {
      const id = view.getUint8(i);
      if (id === 0) {
        for (let j = i + 1; j < 4; j++) if (view.getUint8(j) !== 0) throw corrupt(`field ${k}: stage id after the end of the pipeline`);
        break;
      }
      stages.push(id);
    }
    const problem = pipelineProblem(stages, width);
    if (problem) throw corrupt(`field ${k}: ${problem}`);
    const bytes = view.getUint32(4, true);
    if (stages.length === 0 ? bytes !== raw : bytes >= raw)
      throw corrupt(`field ${k}: block of ${bytes} bytes for ${raw} bytes of residuals`);
    at += FIELD_BLOCK_HEADER_BYTES;
    if (at + bytes > payloadBytes) throw corrupt(`field ${k}'s block past the payload`);
    blocks.push({ stages, at, bytes });
    at += bytes;
  }
  if (at !== payloadBytes) throw corrupt(`${payloadBytes - at} bytes after the last field block`);
  return blocks;
}
