/**
 * The plain reference of container version 4 (docs/format.md, "Version 4: shape and stage 7
 * (predict)"): the maps (none, float order, decimal), the predictors (none, left, up, lorenzo2,
 * lorenzo3, med) with the zigzagged residuals, a predicted chunk's payload (encode and decode)
 * and a whole-container reader of versions 3 and 4 (header, shape block, entries, stored, piped
 * and predicted chunks, tree hashes). Tests use it as an oracle for the engine's writer.
 *
 * Written to be read, not to be fast: one element at a time, every neighbour looked up by its
 * definition, arithmetic on plain numbers (all values stay below 2^53) reduced mod 2^(8w).
 *
 * Errors: the decoders throw `Error('CORRUPT: ...')` on every check the spec lists,
 * `Error('CHECKSUM_MISMATCH: ...')` on a tree hash that differs, `TRUNCATED`, `NOT_PARLE` and
 * `UNSUPPORTED_VERSION` as docs/format.md names them; quantized f64 chunks (entry byte 24 = 5) are
 * written and read through test/support/quantize-reference.ts, quantized f32 chunks throw
 * 'unsupported in reference'. Encoders throw plain errors on parameters the spec does not allow.
 *
 * Choices where the spec leaves room (the writer's):
 * - decimal map: v = round(x / F[e]), else v - 1, else v + 1, the first that gives back x's bits
 *   with |v| < 2^31; -0, NaN, +-Infinity and every other x are exceptions, and the value written
 *   at an exception's place is the previous cell's value of its field (0 at cell 0), as parle's.
 * - a field block whose piped payload is not smaller than n w is written stored instead; pack is
 *   not offered (the codec reference does not encode pack streams).
 * - the reader does not check the exponents' zero padding (the spec lists no such check); it does
 *   check that the shape's dims multiply to N.
 */
import { xxh64 } from '../../ts/format/checksum.js';
import { concat } from './bytes.js';
import { STAGE, decodePayload, encodePayload, readU32, streamCount, treeHash, writeU32 } from './codec-reference.js';
import { refDequantizePayloadF64, refQuantizedPayloadF64 } from './quantize-reference.js';

// ---------------------------------------------------------------------------------------------
// Constants and small helpers
// ---------------------------------------------------------------------------------------------

/** Element type codes of the header (byte 9); 5 and up only in version 4. */
export type TypeCode = 0 | 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8 | 9 | 10;
/** A word's width: the pipelines' and the predictor's (an 8-byte element is two 4-byte words). */
export type Width = 1 | 2 | 4;
export type ElementWidth = Width | 8;
export const TYPE_CODE = { u8: 0, u16: 1, u32: 2, i32: 3, f32: 4, i8: 5, i16: 6, f16: 7, f64: 8, i64: 9, u64: 10 } as const;
/** Element width of each type code. */
export const TYPE_WIDTH: readonly ElementWidth[] = [1, 2, 4, 4, 4, 1, 2, 2, 8, 8, 8];

export const MAP = { none: 0, floatOrder: 1, decimal: 2 } as const;
export const PREDICTOR = { none: 0, left: 1, up: 2, lorenzo2: 3, lorenzo3: 4, med: 5 } as const;
/** Entry byte 24 of a quantized chunk and of a predicted one. */
export const QUANTIZE_STAGE = 5;
export const PREDICT_STAGE = 7;

export const MAGIC = [0x89, 0x50, 0x41, 0x52, 0x4c, 0x45, 0x0d, 0x0a];
export const HEADER_BYTES = 32;
export const ENTRY_BYTES = 32;
/** Byte size of the predicted payload's fixed header (m, p, f, 0, X, Y). */
export const PREDICT_HEADER_BYTES = 12;

function corrupt(what: string): never {
  throw new Error(`CORRUPT: ${what}`);
}

function widthOf(type: number): ElementWidth {
  const w = TYPE_WIDTH[type];
  if (w === undefined) throw new Error(`unknown element type code ${type}`);
  return w;
}

function readU64(bytes: Uint8Array, at: number): number {
  return readU32(bytes, at) + readU32(bytes, at + 4) * 2 ** 32;
}

function writeU64(bytes: Uint8Array, at: number, value: number): void {
  writeU32(bytes, at, value % 2 ** 32);
  writeU32(bytes, at + 4, Math.floor(value / 2 ** 32));
}

/** Element `index` of little-endian `width`-byte elements, unsigned. */
function readWord(bytes: Uint8Array, index: number, width: number): number {
  let value = 0;
  for (let k = width - 1; k >= 0; k--) value = value * 256 + bytes[index * width + k];
  return value;
}

function writeWord(bytes: Uint8Array, index: number, width: number, value: number): void {
  for (let k = 0; k < width; k++) {
    bytes[index * width + k] = value % 256;
    value = Math.floor(value / 256);
  }
}

/** Low 32 bits of XXH64 (seed 0) of `bytes`: the header, entry and shape checksums. */
export function xxh64Low(bytes: Uint8Array): number {
  return Number(xxh64(bytes) & 0xffffffffn);
}

// f32 <-> bits
const scratchF32 = new Float32Array(1);
const scratchU32 = new Uint32Array(scratchF32.buffer);
export function f32Bits(x: number): number {
  scratchF32[0] = x;
  return scratchU32[0];
}
export function f32FromBits(bits: number): number {
  scratchU32[0] = bits >>> 0;
  return scratchF32[0];
}

// ---------------------------------------------------------------------------------------------
// Maps
// ---------------------------------------------------------------------------------------------

/** F[e]: the f64 nearest 10^-e (JavaScript's number parsing rounds correctly). */
export function decimalFactor(e: number): number {
  return Number('1e-' + e);
}

/** fpzip's order-preserving map of f32 bits: sign clear -> b xor 0x80000000, else not b. */
export function floatOrder(bits: number): number {
  bits >>>= 0;
  return (bits & 0x80000000) === 0 ? (bits ^ 0x80000000) >>> 0 : ~bits >>> 0;
}

/** The inverse of {@link floatOrder}. */
export function floatOrderInverse(u: number): number {
  u >>>= 0;
  return (u & 0x80000000) !== 0 ? (u ^ 0x80000000) >>> 0 : ~u >>> 0;
}

/** The f32 bits the decimal map gives for the i32 v at exponent e: f32(f64(v) x F[e]). */
export function decimalValueBits(v: number, e: number): number {
  return f32Bits(Math.fround(v * decimalFactor(e)));
}

/**
 * A v with f32(f64(v) x F[e]) = the f32 of `bits` and |v| < 2^31, or undefined (an exception):
 * always for -0, NaN and +-Infinity.
 */
export function decimalEncodeOne(bits: number, e: number): number | undefined {
  bits >>>= 0;
  if (bits === 0x80000000) return undefined; // -0
  if ((bits & 0x7f800000) === 0x7f800000) return undefined; // NaN, +-Infinity
  const x = f32FromBits(bits);
  const v0 = Math.round(x / decimalFactor(e));
  for (const v of [v0, v0 - 1, v0 + 1]) {
    if (!Number.isFinite(v) || Math.abs(v) >= 2 ** 31) continue;
    if (decimalValueBits(v, e) === bits) return v;
  }
  return undefined;
}

export interface Exceptions {
  /** Element indices, strictly increasing. */
  indices: number[];
  /** The elements' bits (u32), one per index; 8-byte elements: their bits as a BigInt in bigValues. */
  values: number[];
  bigValues?: bigint[];
}

/** 8-byte element `index` of little-endian bytes, unsigned. */
function readBig(bytes: Uint8Array, index: number): bigint {
  return BigInt(readWord(bytes, 2 * index, 4)) | (BigInt(readWord(bytes, 2 * index + 1, 4)) << 32n);
}

function writeBig(bytes: Uint8Array, index: number, value: bigint): void {
  writeWord(bytes, 2 * index, 4, Number(value & 0xffffffffn));
  writeWord(bytes, 2 * index + 1, 4, Number((value >> 32n) & 0xffffffffn));
}

const F64 = new Float64Array(1);
const F64_BITS = new BigUint64Array(F64.buffer);
export function f64Bits(x: number): bigint {
  F64[0] = x;
  return F64_BITS[0];
}
export function f64FromBits(bits: bigint): number {
  F64_BITS[0] = BigInt.asUintN(64, bits);
  return F64[0];
}

/** fpzip's order map of f64 bits: sign clear -> b xor 2^63, else not b. */
export function floatOrder64(bits: bigint): bigint {
  return bits >> 63n === 0n ? bits ^ (1n << 63n) : BigInt.asUintN(64, ~bits);
}

export function floatOrder64Inverse(u: bigint): bigint {
  return u >> 63n !== 0n ? u ^ (1n << 63n) : BigInt.asUintN(64, ~u);
}

/**
 * A v with v / 10^e = the f64 of `bits` (a correctly rounded division) and |v| < 2^52, or
 * undefined (an exception): always for -0, NaN and +-Infinity.
 */
export function decimalEncodeOne64(bits: bigint, e: number): number | undefined {
  const x = f64FromBits(bits);
  if (!Number.isFinite(x) || Object.is(x, -0)) return undefined;
  const v0 = Math.round(x * 10 ** e);
  for (const v of [v0, v0 - 1, v0 + 1]) {
    if (!Number.isFinite(v) || Math.abs(v) >= 2 ** 52) continue;
    if (f64Bits(v / 10 ** e) === bits) return v;
  }
  return undefined;
}

function checkExponents(fields: number, exponents: readonly number[] | undefined): readonly number[] {
  if (exponents === undefined || exponents.length !== fields) throw new Error(`decimal map needs ${fields} exponents`);
  for (const e of exponents) if (!Number.isInteger(e) || e < 0 || e > 18) throw new Error(`exponent ${e} outside 0..18`);
  return exponents;
}

/**
 * The map of `elements` (little-endian bytes of `type`): each element's w-byte unsigned value u,
 * in element order. Map 0: the bits; 1: float order (f32); 2: decimal (f32; field k = element
 * index mod `fields` at exponent `exponents[k]`), with the elements it cannot write as exceptions
 * (their place in `values` holds the previous cell's value of the field, 0 at cell 0).
 */
export function mapEncode(
  elements: Uint8Array,
  type: number,
  m: number,
  fields: number,
  exponents?: readonly number[],
): { values: Uint32Array; exceptions: Exceptions } {
  const w = widthOf(type);
  if (w === 8) return mapEncodeWide(elements, type, m, fields, exponents);
  if (elements.length % w !== 0) throw new Error('not whole elements');
  const count = elements.length / w;
  if (fields < 1 || count % fields !== 0) throw new Error(`count ${count} not a multiple of ${fields} fields`);
  if (m !== 0 && type !== TYPE_CODE.f32) throw new Error(`map ${m} on type ${type}`);
  const values = new Uint32Array(count);
  const exceptions: Exceptions = { indices: [], values: [] };
  if (m === MAP.none) {
    for (let i = 0; i < count; i++) values[i] = readWord(elements, i, w);
  } else if (m === MAP.floatOrder) {
    for (let i = 0; i < count; i++) values[i] = floatOrder(readWord(elements, i, 4));
  } else if (m === MAP.decimal) {
    const exps = checkExponents(fields, exponents);
    for (let i = 0; i < count; i++) {
      const bits = readWord(elements, i, 4);
      const v = decimalEncodeOne(bits, exps[i % fields]);
      if (v === undefined) {
        exceptions.indices.push(i);
        exceptions.values.push(bits);
        values[i] = i >= fields ? values[i - fields] : 0; // the previous cell's value of this field
      } else {
        values[i] = v >>> 0;
      }
    }
  } else {
    throw new Error(`unknown map ${m}`);
  }
  return { values, exceptions };
}

/** The inverse of {@link mapEncode}: the elements' little-endian bytes, the exceptions written last. */
export function mapDecode(
  values: ArrayLike<number>,
  type: number,
  m: number,
  fields: number,
  exponents?: readonly number[],
  exceptions?: Exceptions,
): Uint8Array {
  const w = widthOf(type);
  if (w === 8) return mapDecodeWide(values, type, m, fields, exponents, exceptions);
  const count = values.length;
  const out = new Uint8Array(count * w);
  if (m === MAP.none) {
    for (let i = 0; i < count; i++) writeWord(out, i, w, values[i]);
  } else if (m === MAP.floatOrder) {
    if (type !== TYPE_CODE.f32) throw new Error(`map ${m} on type ${type}`);
    for (let i = 0; i < count; i++) writeWord(out, i, 4, floatOrderInverse(values[i]));
  } else if (m === MAP.decimal) {
    if (type !== TYPE_CODE.f32) throw new Error(`map ${m} on type ${type}`);
    const exps = checkExponents(fields, exponents);
    for (let i = 0; i < count; i++) writeWord(out, i, 4, decimalValueBits(values[i] | 0, exps[i % fields]));
  } else {
    throw new Error(`unknown map ${m}`);
  }
  if (exceptions) {
    for (let x = 0; x < exceptions.indices.length; x++) writeWord(out, exceptions.indices[x], w, exceptions.values[x] >>> 0);
  }
  return out;
}

/**
 * {@link mapEncode} of 8-byte elements (f64, i64, u64): two u32 words an element (low, high) of
 * its 64-bit value u, `fields` counting words (two an element field). Map 0: the bits; 1: f64
 * order; 2: decimal (f64; element field k = (element index mod fields / 2) at exponents[k]), v as
 * a two's complement i64.
 */
function mapEncodeWide(
  elements: Uint8Array,
  type: number,
  m: number,
  fields: number,
  exponents?: readonly number[],
): { values: Uint32Array; exceptions: Exceptions } {
  const count = elements.length / 8;
  if (fields % 2 !== 0 || (2 * count) % fields !== 0) throw new Error(`${fields} word fields for ${count} 8-byte elements`);
  if (m !== 0 && type !== TYPE_CODE.f64) throw new Error(`map ${m} on type ${type}`);
  const ef = fields / 2;
  const big = new Array<bigint>(count);
  const exceptions: Exceptions = { indices: [], values: [], bigValues: [] };
  for (let i = 0; i < count; i++) {
    const bits = readBig(elements, i);
    if (m === MAP.none) big[i] = bits;
    else if (m === MAP.floatOrder) big[i] = floatOrder64(bits);
    else if (m === MAP.decimal) {
      const exps = checkExponents(ef, exponents);
      const v = decimalEncodeOne64(bits, exps[i % ef]);
      if (v === undefined) {
        exceptions.indices.push(i);
        exceptions.bigValues!.push(bits);
        big[i] = i >= ef ? big[i - ef] : 0n;
      } else big[i] = BigInt.asUintN(64, BigInt(v));
    } else throw new Error(`unknown map ${m}`);
  }
  const values = new Uint32Array(2 * count);
  for (let i = 0; i < count; i++) {
    values[2 * i] = Number(big[i] & 0xffffffffn);
    values[2 * i + 1] = Number(big[i] >> 32n);
  }
  return { values, exceptions };
}

/** The inverse of {@link mapEncodeWide}. */
function mapDecodeWide(
  values: ArrayLike<number>,
  type: number,
  m: number,
  fields: number,
  exponents?: readonly number[],
  exceptions?: Exceptions,
): Uint8Array {
  const count = values.length / 2;
  const out = new Uint8Array(8 * count);
  if (m !== 0 && type !== TYPE_CODE.f64) throw new Error(`map ${m} on type ${type}`);
  const ef = fields / 2;
  for (let i = 0; i < count; i++) {
    const u = BigInt(values[2 * i]) | (BigInt(values[2 * i + 1]) << 32n);
    let bits: bigint;
    if (m === MAP.none) bits = u;
    else if (m === MAP.floatOrder) bits = floatOrder64Inverse(u);
    else if (m === MAP.decimal) bits = f64Bits(Number(BigInt.asIntN(64, u)) / 10 ** checkExponents(ef, exponents)[i % ef]);
    else throw new Error(`unknown map ${m}`);
    writeBig(out, i, bits);
  }
  if (exceptions) for (let x = 0; x < exceptions.indices.length; x++) writeBig(out, exceptions.indices[x], exceptions.bigValues![x]);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Predictors and residuals
// ---------------------------------------------------------------------------------------------

/** x mod 2^(8w), in 0 .. 2^(8w) - 1. */
function wrap(x: number, w: Width): number {
  const M = 2 ** (8 * w);
  return ((x % M) + M) % M;
}

/** zigzag of the w-byte d read as signed: (d << 1) xor (d >> (8w - 1)) mod 2^(8w). */
export function zigzag(d: number, w: Width): number {
  const M = 2 ** (8 * w);
  d = wrap(d, w);
  const s = d >= M / 2 ? d - M : d;
  return s >= 0 ? 2 * s : -2 * s - 1;
}

/** The inverse of {@link zigzag}: d mod 2^(8w). */
export function unzigzag(r: number, w: Width): number {
  const s = r % 2 === 0 ? r / 2 : -(r + 1) / 2;
  return wrap(s, w);
}

/** The neighbours of a cell, each 0 where the spec says missing. */
export interface Neighbours {
  a: number;
  b: number;
  z: number;
  ab: number;
  az: number;
  bz: number;
  abz: number;
}

/**
 * The neighbours of field k at cell c, read from `u` (element order: cell c field k at c f + k),
 * exactly as the spec defines them; for lorenzo3 (`predictor` 4) b and ab are 0 at a plane's first
 * row (i mod Y = 0).
 */
export function neighbours(
  u: ArrayLike<number>,
  fields: number,
  X: number,
  Y: number,
  c: number,
  k: number,
  predictor: number,
): Neighbours {
  const i = Math.floor(c / X);
  const j = c % X;
  const at = (cell: number) => u[cell * fields + k];
  const n: Neighbours = {
    a: j > 0 ? at(c - 1) : 0,
    b: i > 0 ? at(c - X) : 0,
    z: i >= Y ? at(c - X * Y) : 0,
    ab: i > 0 && j > 0 ? at(c - X - 1) : 0,
    az: i >= Y && j > 0 ? at(c - X * Y - 1) : 0,
    bz: i >= Y && i % Y > 0 ? at(c - X * Y - X) : 0,
    abz: i >= Y && i % Y > 0 && j > 0 ? at(c - X * Y - X - 1) : 0,
  };
  if (predictor === PREDICTOR.lorenzo3 && i % Y === 0) {
    n.b = 0;
    n.ab = 0;
  }
  return n;
}

/** The prediction of predictor p from the neighbours, mod 2^(8w) (the spec's table). */
export function prediction(p: number, n: Neighbours, w: Width): number {
  switch (p) {
    case PREDICTOR.none:
      return 0;
    case PREDICTOR.left:
      return n.a;
    case PREDICTOR.up:
      return n.b;
    case PREDICTOR.lorenzo2:
      return wrap(n.a + n.b - n.ab, w);
    case PREDICTOR.lorenzo3:
      return wrap(n.a + n.b + n.z - n.ab - n.az - n.bz + n.abz, w);
    case PREDICTOR.med: {
      const lo = Math.min(n.a, n.b);
      const hi = Math.max(n.a, n.b);
      if (n.ab >= hi) return lo;
      if (n.ab <= lo) return hi;
      return wrap(n.a + n.b - n.ab, w);
    }
    default:
      throw new Error(`unknown predictor ${p}`);
  }
}

function checkGeometry(count: number, fields: number, X: number, Y: number): number {
  if (!Number.isInteger(fields) || fields < 1 || fields > 255 || count % fields !== 0)
    throw new Error(`count ${count} is not a multiple of ${fields} fields`);
  const cells = count / fields;
  if (!Number.isInteger(X) || X < 1 || cells % X !== 0) throw new Error(`${cells} cells are not rows of X = ${X}`);
  if (!Number.isInteger(Y) || Y < 1 || (cells / X) % Y !== 0) throw new Error(`${cells / X} rows are not planes of Y = ${Y}`);
  return cells;
}

/**
 * The residual planes of `u` (w-byte unsigned values in element order: cell c field k at c f + k):
 * plane k holds field k's zigzagged residuals r = zigzag(u - prediction) in cell order.
 */
export function predictResiduals(u: ArrayLike<number>, w: Width, fields: number, X: number, Y: number, predictor: number): Uint32Array[] {
  const cells = checkGeometry(u.length, fields, X, Y);
  const planes: Uint32Array[] = [];
  for (let k = 0; k < fields; k++) {
    const plane = new Uint32Array(cells);
    for (let c = 0; c < cells; c++) {
      const pred = prediction(predictor, neighbours(u, fields, X, Y, c, k, predictor), w);
      plane[c] = zigzag(u[c * fields + k] - pred, w);
    }
    planes.push(plane);
  }
  return planes;
}

/** The inverse of {@link predictResiduals}: u in element order, cell by cell. */
export function unpredict(
  planes: readonly ArrayLike<number>[],
  w: Width,
  fields: number,
  X: number,
  Y: number,
  predictor: number,
): Uint32Array {
  if (planes.length !== fields) throw new Error(`${planes.length} planes for ${fields} fields`);
  const cells = planes[0].length;
  for (const plane of planes) if (plane.length !== cells) throw new Error('planes of different lengths');
  checkGeometry(cells * fields, fields, X, Y);
  const u = new Uint32Array(cells * fields);
  for (let c = 0; c < cells; c++) {
    for (let k = 0; k < fields; k++) {
      const pred = prediction(predictor, neighbours(u, fields, X, Y, c, k, predictor), w);
      u[c * fields + k] = wrap(pred + unzigzag(planes[k][c], w), w);
    }
  }
  return u;
}

// ---------------------------------------------------------------------------------------------
// Pipelines as entry bytes
// ---------------------------------------------------------------------------------------------

/** The 4 stage-id bytes of a pipeline as one u32 (byte i = stage i, 0 after the last). */
export function stageIdsWord(stages: readonly number[]): number {
  if (stages.length > 4) throw new Error('more than 4 stages');
  let word = 0;
  for (let i = 0; i < stages.length; i++) word += stages[i] * 2 ** (8 * i);
  return word;
}

/**
 * The pipeline the 4 stage-id bytes name, checked (CORRUPT): no id after a 0, only known ids
 * (1, 2, 3, 4, 6) in order and once each, not huffman and pack both, no shuffle at width 1.
 */
export function parsePipeline(ids: ArrayLike<number>, w: Width): number[] {
  const stages: number[] = [];
  let ended = false;
  for (let i = 0; i < 4; i++) {
    const id = ids[i];
    if (id === 0) {
      ended = true;
      continue;
    }
    if (ended) corrupt(`stage id ${id} after a 0`);
    stages.push(id);
  }
  let previous = 0;
  for (const id of stages) {
    if (![STAGE.delta, STAGE.shuffle, STAGE.rle, STAGE.huffman, STAGE.pack].includes(id as 1)) corrupt(`unknown stage id ${id}`);
    if (id <= previous) corrupt(`stage ${id} out of order or repeated`);
    if (id === STAGE.pack && previous === STAGE.huffman) corrupt('huffman and pack in one pipeline');
    if (id === STAGE.shuffle && w === 1) corrupt('shuffle on a 1-byte type');
    previous = id;
  }
  return stages;
}

/** decodePayload with its errors as CORRUPT. */
function decodePiped(stages: readonly number[], payload: Uint8Array, w: Width, count: number): Uint8Array {
  try {
    return decodePayload(stages, payload, w, count);
  } catch (error) {
    corrupt(`piped payload: ${(error as Error).message}`);
  }
}

// ---------------------------------------------------------------------------------------------
// A predicted chunk's payload
// ---------------------------------------------------------------------------------------------

export interface PredictParams {
  map: number;
  predictor: number;
  fields: number;
  X: number;
  Y: number;
  /** Decimal map only: one exponent (0..18) per field. */
  exponents?: readonly number[];
  /** One pipeline per field ([] = stored). */
  stages: readonly (readonly number[])[];
}

/** Plane of w-byte values as little-endian bytes. */
function planeBytes(plane: ArrayLike<number>, w: Width): Uint8Array {
  const out = new Uint8Array(plane.length * w);
  for (let i = 0; i < plane.length; i++) writeWord(out, i, w, plane[i]);
  return out;
}

/**
 * The whole payload of a predicted chunk of `elementBytes` (little-endian elements of `type`),
 * laid out as the spec's: m, p, f, 0, X, Y; for the decimal map the exponents (padded to 4 bytes),
 * E, indices, values; then one block per field (u32 stage ids, u32 L, L bytes), stored when its
 * pipeline is [] or the piped payload is not smaller than n w. It does not check that the whole
 * payload is smaller than count x w (the container writer's job).
 */
export function encodePredictedPayload(elementBytes: Uint8Array, type: number, params: PredictParams): Uint8Array {
  const ew = widthOf(type);
  // the words: the elements, or an 8-byte element's two u32 halves
  const w: Width = ew === 8 ? 4 : ew;
  const { map, predictor, fields, X, Y } = params;
  if (elementBytes.length % ew !== 0) throw new Error('not whole elements');
  const count = elementBytes.length / w;
  if (ew === 8 && fields % 2 !== 0) throw new Error(`${fields} word fields of 8-byte elements`);
  checkGeometry(count, fields, X, Y);
  if (map < 0 || map > 2) throw new Error(`map ${map}`);
  if (predictor < 0 || predictor > 5) throw new Error(`predictor ${predictor}`);
  if (params.stages.length !== fields) throw new Error(`${params.stages.length} pipelines for ${fields} fields`);
  const { values, exceptions } = mapEncode(elementBytes, type, map, fields, params.exponents);
  const planes = predictResiduals(values, w, fields, X, Y, predictor);

  const parts: Uint8Array[] = [];
  const header = new Uint8Array(PREDICT_HEADER_BYTES);
  header[0] = map;
  header[1] = predictor;
  header[2] = fields;
  header[3] = 0;
  writeU32(header, 4, X);
  writeU32(header, 8, Y);
  parts.push(header);
  if (map === MAP.decimal) {
    const ef = ew === 8 ? fields / 2 : fields;
    const exps = checkExponents(ef, params.exponents);
    const padded = new Uint8Array(Math.ceil(ef / 4) * 4);
    padded.set(exps);
    parts.push(padded);
    const E = exceptions.indices.length;
    const list = new Uint8Array(4 + (4 + ew) * E);
    writeU32(list, 0, E);
    for (let x = 0; x < E; x++) {
      writeU32(list, 4 + 4 * x, exceptions.indices[x]);
      if (ew === 8) writeBig(list.subarray(4 + 4 * E), x, exceptions.bigValues![x]);
      else writeU32(list, 4 + 4 * E + 4 * x, exceptions.values[x]);
    }
    parts.push(list);
  }
  for (let k = 0; k < fields; k++) {
    if (params.stages[k].includes(STAGE.pack)) throw new Error('the codec reference decodes pack streams but does not encode them');
    const raw = planeBytes(planes[k], w);
    let stages = params.stages[k];
    let body = raw;
    if (stages.length > 0) {
      const piped = encodePayload(stages, raw, w);
      if (piped.length < raw.length) body = piped;
      else stages = [];
    }
    const blockHeader = new Uint8Array(8);
    writeU32(blockHeader, 0, stageIdsWord(stages));
    writeU32(blockHeader, 4, body.length);
    parts.push(blockHeader, body);
  }
  return concat(parts);
}

/** What {@link readPredictedPayload} finds in a predicted payload besides the elements. */
export interface PredictedPayloadInfo extends Omit<PredictParams, 'stages'> {
  stages: number[][];
  exceptions: Exceptions;
  /** Byte length of each field block's body (L). */
  lengths: number[];
}

/**
 * The elements (little-endian bytes of `type`, `count` of them) of a predicted payload, with the
 * parameters it holds; throws CORRUPT on every check the spec lists for the payload.
 */
export function readPredictedPayload(
  payload: Uint8Array,
  type: number,
  count: number,
): { elements: Uint8Array; info: PredictedPayloadInfo } {
  const ew = widthOf(type);
  // the words: the elements, or an 8-byte element's two u32 halves
  const w: Width = ew === 8 ? 4 : ew;
  const words = (count * ew) / w;
  const P = payload.length;
  if (P < PREDICT_HEADER_BYTES) corrupt(`predicted payload of ${P} bytes is shorter than its header`);
  const map = payload[0];
  const predictor = payload[1];
  const fields = payload[2];
  if (map > 2) corrupt(`map ${map}`);
  if (map !== MAP.none && type !== TYPE_CODE.f32 && type !== TYPE_CODE.f64) corrupt(`map ${map} on element type ${type}`);
  if (predictor > 5) corrupt(`predictor ${predictor}`);
  if (fields === 0 || words % fields !== 0 || (ew === 8 && fields % 2 !== 0)) corrupt(`${fields} fields for ${words} words`);
  if (payload[3] !== 0) corrupt('byte 3 not 0');
  const X = readU32(payload, 4);
  const Y = readU32(payload, 8);
  if (X === 0 || Y === 0) corrupt(`X = ${X}, Y = ${Y}`);
  const n = words / fields; // cells, and residuals a field
  if (n % X !== 0) corrupt(`${n} cells are not whole rows of ${X}`);
  if ((n / X) % Y !== 0) corrupt(`${n / X} rows are not whole planes of ${Y}`);

  let at = PREDICT_HEADER_BYTES;
  let exponents: number[] | undefined;
  const exceptions: Exceptions = { indices: [], values: [] };
  if (map === MAP.decimal) {
    const ef = ew === 8 ? fields / 2 : fields;
    const padded = Math.ceil(ef / 4) * 4;
    if (at + padded > P) corrupt('exponents past P');
    exponents = Array.from(payload.subarray(at, at + ef));
    for (const e of exponents) if (e > 18) corrupt(`exponent ${e} over 18`);
    at += padded;
    if (at + 4 > P) corrupt('exception count past P');
    const E = readU32(payload, at);
    at += 4;
    if (E > count) corrupt(`${E} exceptions in ${count} elements`);
    if (at + (4 + ew) * E > P) corrupt('exceptions past P');
    let last = -1;
    if (ew === 8) exceptions.bigValues = [];
    for (let x = 0; x < E; x++) {
      const index = readU32(payload, at + 4 * x);
      if (index <= last || index >= count) corrupt(`exception index ${index} after ${last} in ${count} elements`);
      last = index;
      exceptions.indices.push(index);
      if (ew === 8) exceptions.bigValues!.push(readBig(payload.subarray(at + 4 * E), x));
      else exceptions.values.push(readU32(payload, at + 4 * E + 4 * x));
    }
    at += (4 + ew) * E;
  }

  const planes: Uint32Array[] = [];
  const stagesOf: number[][] = [];
  const lengths: number[] = [];
  for (let k = 0; k < fields; k++) {
    if (at + 8 > P) corrupt(`field block ${k} header past P`);
    const stages = parsePipeline(payload.subarray(at, at + 4), w);
    const L = readU32(payload, at + 4);
    at += 8;
    if (L > P - at) corrupt(`field block ${k} of ${L} bytes past P`);
    const body = payload.subarray(at, at + L);
    at += L;
    let bytes: Uint8Array;
    if (stages.length === 0) {
      if (L !== n * w) corrupt(`stored field block ${k} of ${L} bytes, expected ${n * w}`);
      bytes = body;
    } else {
      if (L >= n * w) corrupt(`piped field block ${k} of ${L} bytes, not below ${n * w}`);
      bytes = decodePiped(stages, body, w, n);
    }
    const plane = new Uint32Array(n);
    for (let c = 0; c < n; c++) plane[c] = readWord(bytes, c, w);
    planes.push(plane);
    stagesOf.push(stages);
    lengths.push(L);
  }
  if (at !== P) corrupt(`${P - at} bytes after the last field block`);

  const u = unpredict(planes, w, fields, X, Y, predictor);
  const elements = mapDecode(u, type, map, fields, exponents, exceptions);
  return { elements, info: { map, predictor, fields, X, Y, exponents, stages: stagesOf, exceptions, lengths } };
}

/** The `count` elements' little-endian bytes of a predicted payload (CORRUPT on any check). */
export function decodePredictedPayload(payload: Uint8Array, type: number, count: number): Uint8Array {
  return readPredictedPayload(payload, type, count).elements;
}

// ---------------------------------------------------------------------------------------------
// Containers
// ---------------------------------------------------------------------------------------------

/** How the reference writer codes one chunk (quantized: f64 only, its codes by `stages`). */
export type ChunkPlan =
  | { kind: 'stored' }
  | { kind: 'piped'; stages: readonly number[] }
  | ({ kind: 'predicted' } & PredictParams)
  | { kind: 'quantized'; abs: number; stages: readonly number[] };

export interface ContainerPlan {
  type: number;
  /** Elements a chunk (C). */
  chunkLength: number;
  /** 1..9; 5 by default. */
  level?: number;
  /** The shape for the header (rank 0 when undefined or []). */
  shape?: readonly number[];
  /** Version byte: 4 by default (3 only without shape and predicted chunks). */
  version?: number;
  /** One plan per chunk (the last repeats for chunks past the list). */
  chunks: readonly ChunkPlan[];
}

/** The 32-byte header and the shape block (when rank > 0); version 4 with two chunks or more sets the index flag. */
export function encodeHeader(
  type: number,
  level: number,
  chunkLength: number,
  count: number,
  shape?: readonly number[],
  version = 4,
): Uint8Array {
  const rank = shape?.length ?? 0;
  if (rank > 8) throw new Error(`rank ${rank} over 8`);
  const header = new Uint8Array(HEADER_BYTES + (rank > 0 ? 8 * rank + 4 : 0));
  header.set(MAGIC, 0);
  header[8] = version;
  header[9] = type;
  header[10] = level;
  const K = count === 0 ? 0 : Math.ceil(count / chunkLength);
  // version 4: bit 4 of byte 11 says a chunk index follows the last payload (written for K >= 2)
  header[11] = rank | (version === 4 && K >= 2 ? 0x10 : 0);
  writeU32(header, 12, chunkLength);
  writeU64(header, 16, count);
  writeU32(header, 24, count === 0 ? 0 : Math.ceil(count / chunkLength));
  writeU32(header, 28, xxh64Low(header.subarray(0, 28)));
  if (rank > 0) {
    for (let d = 0; d < rank; d++) writeU64(header, HEADER_BYTES + 8 * d, shape![d]);
    writeU32(header, HEADER_BYTES + 8 * rank, xxh64Low(header.subarray(HEADER_BYTES, HEADER_BYTES + 8 * rank)));
  }
  return header;
}

/** One 32-byte entry, its checksum computed. */
export function encodeEntry(fields: {
  count: number;
  stages: readonly number[];
  S: number;
  P: number;
  payloadHash: number;
  elementsHash: number;
  byte24: number;
}): Uint8Array {
  const entry = new Uint8Array(ENTRY_BYTES);
  writeU32(entry, 0, fields.count);
  writeU32(entry, 4, stageIdsWord(fields.stages));
  writeU32(entry, 8, fields.S);
  writeU32(entry, 12, fields.P);
  writeU32(entry, 16, fields.payloadHash);
  writeU32(entry, 20, fields.elementsHash);
  entry[24] = fields.byte24;
  writeU32(entry, 28, xxh64Low(entry.subarray(0, 28)));
  return entry;
}

/**
 * A whole container of `elementBytes` (little-endian elements of `plan.type`) coded as `plan`
 * says, chunk by chunk. Throws when a planned piped or predicted payload is not smaller than its
 * chunk's elements (the spec would not allow it).
 */
export function encodeContainer(elementBytes: Uint8Array, plan: ContainerPlan): Uint8Array {
  const w = widthOf(plan.type);
  if (w === 8 && plan.chunks.some((c) => c.kind === 'piped')) throw new Error('8-byte elements have no piped chunks');
  if (elementBytes.length % w !== 0) throw new Error('not whole elements');
  const N = elementBytes.length / w;
  const C = plan.chunkLength;
  const K = N === 0 ? 0 : Math.ceil(N / C);
  const parts: Uint8Array[] = [encodeHeader(plan.type, plan.level ?? 5, C, N, plan.shape, plan.version ?? 4)];
  const entryOffsets: number[] = [];
  let offset = parts[0].length;
  for (let i = 0; i < K; i++) {
    const chunkPlan = plan.chunks[Math.min(i, plan.chunks.length - 1)];
    const chunk = elementBytes.subarray(i * C * w, Math.min(N, (i + 1) * C) * w);
    const count = chunk.length / w;
    let payload: Uint8Array;
    let stages: readonly number[] = [];
    let S = 0;
    let byte24 = 0;
    let elementsHash = treeHash(chunk);
    if (chunkPlan.kind === 'stored') {
      payload = chunk;
    } else if (chunkPlan.kind === 'quantized') {
      if (plan.type !== TYPE_CODE.f64) throw new Error('the reference quantizes f64 chunks only');
      const quantized = refQuantizedPayloadF64(chunk, chunkPlan.abs, chunkPlan.stages);
      if (quantized === undefined) throw new Error(`chunk ${i}: the writer would code it losslessly`);
      payload = quantized.payload;
      elementsHash = treeHash(quantized.recon);
      stages = chunkPlan.stages;
      S = streamCount(stages, 4);
      byte24 = QUANTIZE_STAGE;
    } else if (chunkPlan.kind === 'piped') {
      stages = chunkPlan.stages;
      S = streamCount(stages, w as Width);
      payload = encodePayload(stages, chunk, w as Width);
    } else {
      byte24 = PREDICT_STAGE;
      payload = encodePredictedPayload(chunk, plan.type, chunkPlan);
    }
    if (chunkPlan.kind !== 'stored' && payload.length >= chunk.length)
      throw new Error(`chunk ${i}: ${chunkPlan.kind} payload of ${payload.length} bytes is not below ${chunk.length}`);
    parts.push(encodeEntry({ count, stages, S, P: payload.length, payloadHash: treeHash(payload), elementsHash, byte24 }), payload);
    entryOffsets.push(offset);
    offset += ENTRY_BYTES + payload.length;
  }
  if ((plan.version ?? 4) === 4 && K >= 2) parts.push(encodeIndex(entryOffsets));
  return concat(parts);
}

/** The chunk index of version 4 (two chunks or more): u64 entry offsets, then the low 32 bits of their XXH64. */
export function encodeIndex(entryOffsets: readonly number[]): Uint8Array {
  const K = entryOffsets.length;
  const index = new Uint8Array(8 * K + 4);
  entryOffsets.forEach((o, i) => writeU64(index, 8 * i, o));
  writeU32(index, 8 * K, xxh64Low(index.subarray(0, 8 * K)));
  return index;
}

export interface DecodedChunk {
  count: number;
  stages: number[];
  S: number;
  P: number;
  /** Entry byte 24: 0, 5 (quantize) or 7 (predict). */
  byte24: number;
  /** Offset of the chunk's entry in the container. */
  at: number;
  /** Predicted chunks: what the payload holds. */
  predicted?: PredictedPayloadInfo;
}

export interface DecodedContainer {
  version: number;
  type: number;
  level: number;
  chunkLength: number;
  count: number;
  shape: number[] | undefined;
  elements: Uint8Array;
  chunks: DecodedChunk[];
}

/**
 * Reads a whole version-3 or version-4 container: the header and its checksum, the shape block
 * (version 4, rank > 0) and its checksum, every entry (checksum, count, pipeline, S, P, byte 24),
 * every payload's tree hash, then decodes stored, piped, predicted and quantized f64 chunks and
 * checks the elements' tree hashes. Quantized f32 chunks throw 'unsupported in reference'.
 */
export function decodeContainer(bytes: Uint8Array): DecodedContainer {
  if (bytes.length === 0) throw new Error('NOT_PARLE: empty input');
  for (let i = 0; i < Math.min(8, bytes.length); i++) if (bytes[i] !== MAGIC[i]) throw new Error('NOT_PARLE: bad magic');
  if (bytes.length < HEADER_BYTES) throw new Error('TRUNCATED: shorter than the header');
  const version = bytes[8];
  if (version !== 3 && version !== 4) throw new Error(`UNSUPPORTED_VERSION: version ${version} (the reference reads 3 and 4)`);
  if (version === 3 && bytes[11] !== 0) throw new Error('UNSUPPORTED_VERSION: version 3 with byte 11 not 0');
  if (xxh64Low(bytes.subarray(0, 28)) !== readU32(bytes, 28)) corrupt('header checksum');
  const type = bytes[9];
  const level = bytes[10];
  if (level < 1 || level > 9) corrupt(`level ${level}`);
  if (type > 10 || (type > 4 && version < 4)) corrupt(`element type ${type} in version ${version}`);
  const w = widthOf(type);
  const C = readU32(bytes, 12);
  const N = readU64(bytes, 16);
  const K = readU32(bytes, 24);
  if (C === 0 || C * w > 64 * 2 ** 20) corrupt(`chunk length ${C}`);
  if (N >= 2 ** 53) corrupt(`element count ${N}`);
  if (K !== (N === 0 ? 0 : Math.ceil(N / C))) corrupt(`chunk count ${K} for ${N} elements of ${C} a chunk`);

  const rank = version === 4 ? bytes[11] & 0x0f : 0;
  const indexed = version === 4 && (bytes[11] & 0x10) !== 0;
  if (version === 4 && (bytes[11] & 0xe0) !== 0) throw new Error('UNSUPPORTED_VERSION: byte 11 bits 5..7 not 0');
  let shape: number[] | undefined;
  let at = HEADER_BYTES;
  if (rank > 8) corrupt(`rank ${rank} over 8`);
  if (rank > 0) {
    if (bytes.length < at + 8 * rank + 4) throw new Error('TRUNCATED: inside the shape block');
    shape = [];
    for (let d = 0; d < rank; d++) shape.push(readU64(bytes, at + 8 * d));
    if (xxh64Low(bytes.subarray(at, at + 8 * rank)) !== readU32(bytes, at + 8 * rank)) corrupt('shape checksum');
    for (const d of shape) if (d < 1) corrupt(`dim ${d}`);
    if (shape.reduce((a, b) => a * b, 1) !== N) corrupt(`shape ${shape.join('x')} is not ${N} elements`);
    at += 8 * rank + 4;
  }

  // walk the entries
  const chunks: DecodedChunk[] = [];
  for (let i = 0; i < K; i++) {
    if (bytes.length < at + ENTRY_BYTES) throw new Error(`TRUNCATED: inside entry ${i}`);
    const entry = bytes.subarray(at, at + ENTRY_BYTES);
    if (xxh64Low(entry.subarray(0, 28)) !== readU32(entry, 28)) corrupt(`entry ${i} checksum`);
    const count = readU32(entry, 0);
    const expected = i < K - 1 ? C : N - (K - 1) * C;
    if (count !== expected) corrupt(`entry ${i}: count ${count}, expected ${expected}`);
    const stages = parsePipeline(entry.subarray(4, 8), w === 8 ? 4 : w);
    const byte24 = entry[24];
    if (w === 8 && stages.length > 0 && !(byte24 === QUANTIZE_STAGE && type === TYPE_CODE.f64))
      corrupt(`entry ${i}: a pipeline on 8-byte elements`);
    const S = readU32(entry, 8);
    const P = readU32(entry, 12);
    if (entry[25] !== 0 || entry[26] !== 0 || entry[27] !== 0) corrupt(`entry ${i}: bytes 25..27 not 0`);
    if (byte24 === PREDICT_STAGE) {
      if (version < 4) corrupt(`entry ${i}: predict in version ${version}`);
      if (stages.length !== 0 || S !== 0) corrupt(`entry ${i}: predicted with stage ids or S`);
      if (P >= count * w) corrupt(`entry ${i}: predicted P ${P} not below ${count * w}`);
    } else if (byte24 === QUANTIZE_STAGE && type === TYPE_CODE.f64) {
      if (stages.length === 0) corrupt(`entry ${i}: quantized without a pipeline`);
      if (S !== streamCount(stages, 4)) corrupt(`entry ${i}: S = ${S}, the codes' pipeline's is ${streamCount(stages, 4)}`);
      if (P >= count * 8) corrupt(`entry ${i}: quantized P ${P} not below ${count * 8}`);
      if (P < 24 + 8 * S) corrupt(`entry ${i}: P ${P} below its quantize header and directory`);
    } else if (byte24 === QUANTIZE_STAGE) {
      if (type !== TYPE_CODE.f32) corrupt(`entry ${i}: quantize on type ${type}`);
      throw new Error(`unsupported in reference: entry ${i} is quantized`);
    } else if (byte24 !== 0) {
      corrupt(`entry ${i}: byte 24 = ${byte24}`);
    } else if (stages.length === 0) {
      if (S !== 0) corrupt(`entry ${i}: stored with S = ${S}`);
      if (P !== count * w) corrupt(`entry ${i}: stored P ${P}, expected ${count * w}`);
    } else {
      if (S !== streamCount(stages, w as Width)) corrupt(`entry ${i}: S = ${S}, the pipeline's is ${streamCount(stages, w as Width)}`);
      if (P >= count * w) corrupt(`entry ${i}: piped P ${P} not below ${count * w}`);
      if (P < 8 * S) corrupt(`entry ${i}: P ${P} below its directory`);
    }
    if (bytes.length - (at + ENTRY_BYTES) < P) throw new Error(`TRUNCATED: inside payload ${i}`);
    chunks.push({ count, stages, S, P, byte24, at });
    at += ENTRY_BYTES + P;
  }
  if (indexed) {
    if (bytes.length - at < 8 * K + 4) throw new Error('TRUNCATED: inside the chunk index');
    const index = bytes.subarray(at, at + 8 * K + 4);
    if (xxh64Low(index.subarray(0, 8 * K)) !== readU32(index, 8 * K)) corrupt('chunk index checksum');
    for (let i = 0; i < K; i++) if (readU64(index, 8 * i) !== chunks[i].at) corrupt(`chunk index: chunk ${i}`);
    at += 8 * K + 4;
  }
  if (at !== bytes.length) corrupt(`${bytes.length - at} bytes after the last payload`);

  // decode
  const elements = new Uint8Array(N * w);
  for (let i = 0; i < K; i++) {
    const chunk = chunks[i];
    const entry = bytes.subarray(chunk.at, chunk.at + ENTRY_BYTES);
    const payload = bytes.subarray(chunk.at + ENTRY_BYTES, chunk.at + ENTRY_BYTES + chunk.P);
    if (treeHash(payload) !== readU32(entry, 16)) throw new Error(`CHECKSUM_MISMATCH: payload ${i}`);
    let decoded: Uint8Array;
    if (chunk.byte24 === PREDICT_STAGE) {
      const { elements: e, info } = readPredictedPayload(payload, type, chunk.count);
      decoded = e;
      chunk.predicted = info;
    } else if (chunk.byte24 === QUANTIZE_STAGE) {
      try {
        decoded = refDequantizePayloadF64(payload, chunk.stages, chunk.count);
      } catch (error) {
        corrupt(`quantized payload: ${(error as Error).message}`);
      }
    } else if (chunk.stages.length === 0) {
      decoded = payload;
    } else {
      decoded = decodePiped(chunk.stages, payload, w as Width, chunk.count);
    }
    if (treeHash(decoded) !== readU32(entry, 20)) throw new Error(`CHECKSUM_MISMATCH: elements of chunk ${i}`);
    elements.set(decoded, i * C * w);
  }
  return { version, type, level, chunkLength: C, count: N, shape, elements, chunks };
}
