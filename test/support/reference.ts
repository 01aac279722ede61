/**
 * Ten-line plain TypeScript references the kernels are checked against. Written for clarity,
 * not speed; 32-bit floats are handled as their bit patterns (Uint32Array) wherever the kernels
 * compare bits.
 */
export type WordArray = Uint8Array | Uint16Array | Uint32Array;

/** Runs of equal bit patterns: in [0,2,2,9,5,5,5,8] -> values [0,2,9,5,8], lengths [1,2,1,3,1]. */
export function rleEncode<A extends WordArray>(input: A): { values: A; lengths: Uint32Array } {
  const values: number[] = [];
  const lengths: number[] = [];
  for (let i = 0; i < input.length; i++) {
    if (i > 0 && input[i] === input[i - 1]) lengths[lengths.length - 1]++;
    else (values.push(input[i]), lengths.push(1));
  }
  const ctor = input.constructor as { new (items: number[]): A };
  return { values: new ctor(values), lengths: Uint32Array.from(lengths) };
}

/** The inverse of {@link rleEncode}; zero lengths write nothing. */
export function rleDecode<A extends WordArray>(values: A, lengths: Uint32Array): A {
  const total = lengths.reduce((sum, len) => sum + len, 0);
  const out = new (values.constructor as { new (n: number): A })(total);
  let at = 0;
  for (let r = 0; r < lengths.length; r++) for (let k = 0; k < lengths[r]; k++) out[at++] = values[r];
  return out;
}

export interface ScanOptions {
  inclusive: boolean;
  carryIn?: number;
}

/** Sequential prefix sum, wrapping for Uint32Array/Int32Array, f32 rounding for Float32Array. */
export function scan<A extends Uint32Array | Int32Array | Float32Array>(
  input: A,
  { inclusive, carryIn = 0 }: ScanOptions,
): { out: A; carryOut: number } {
  const add =
    input instanceof Float32Array
      ? (a: number, b: number) => Math.fround(a + b)
      : input instanceof Int32Array
        ? (a: number, b: number) => (a + b) | 0
        : (a: number, b: number) => (a + b) >>> 0;
  const out = new (input.constructor as { new (n: number): A })(input.length);
  let carry = input instanceof Float32Array ? Math.fround(carryIn) : carryIn;
  for (let i = 0; i < input.length; i++) {
    if (inclusive) out[i] = carry = add(carry, input[i]);
    else ((out[i] = carry), (carry = add(carry, input[i])));
  }
  return { out, carryOut: carry };
}

export type SortKeyKind = 'u32' | 'i32' | 'f32';

/** A u32 whose unsigned order is the key's order (f32: IEEE 754 totalOrder on the bit pattern). */
export function orderKey(bits: number, kind: SortKeyKind): number {
  if (kind === 'u32') return bits >>> 0;
  if (kind === 'i32') return (bits ^ 0x80000000) >>> 0;
  return (bits & 0x80000000 ? ~bits : bits ^ 0x80000000) >>> 0;
}

/** Stable sort of 32-bit keys (given as bit patterns) and optional u32 values, via sorted indices. */
export function stableSort(keyBits: Uint32Array, kind: SortKeyKind, values?: Uint32Array): { keys: Uint32Array; values?: Uint32Array } {
  const n = keyBits.length;
  // Sort (orderKey, index) pairs: ties by index make it stable whatever the engine's sort does.
  // Packed as orderKey * 2^21 + index in a float64 (exact while n <= 2^21), else a comparator.
  const order: ArrayLike<number> =
    n <= 2 ** 21
      ? Float64Array.from(keyBits, (bits, i) => orderKey(bits, kind) * 2 ** 21 + i)
          .sort()
          .map((packed) => packed % 2 ** 21)
      : Array.from(keyBits, (_, i) => i).sort((a, b) => orderKey(keyBits[a], kind) - orderKey(keyBits[b], kind) || a - b);
  return { keys: Uint32Array.from(order, (i) => keyBits[i]), values: values && Uint32Array.from(order, (i) => values[i]) };
}

export type SortKey64Kind = 'u64' | 'i64' | 'f64';

const SIGN64 = 1n << 63n;
const MASK64 = (1n << 64n) - 1n;

/** A u64 whose unsigned order is the 64-bit key's order (f64: IEEE 754 totalOrder on the bit pattern). */
export function orderKey64(bits: bigint, kind: SortKey64Kind): bigint {
  if (kind === 'u64') return bits;
  if (kind === 'i64') return bits ^ SIGN64;
  return bits & SIGN64 ? ~bits & MASK64 : bits ^ SIGN64;
}

/**
 * Stable sort of 64-bit keys (given as bit patterns) and optional u32 values: the indices sorted
 * by Array.prototype.sort with a comparator on the order keys, ties by index.
 */
export function stableSort64(
  keyBits: BigUint64Array,
  kind: SortKey64Kind,
  values?: Uint32Array,
): { keys: BigUint64Array; values?: Uint32Array } {
  const order = Array.from(keyBits, (bits) => orderKey64(bits, kind));
  const index = Array.from(keyBits, (_, i) => i).sort((a, b) => (order[a] < order[b] ? -1 : order[a] > order[b] ? 1 : a - b));
  return { keys: BigUint64Array.from(index, (i) => keyBits[i]), values: values && Uint32Array.from(index, (i) => values[i]) };
}

/** Unsigned LEB128 of (length - 1) for each length. */
export function varintEncodeLengths(lengths: Uint32Array): Uint8Array {
  const bytes: number[] = [];
  for (const len of lengths) {
    let v = len - 1;
    for (; v >= 0x80; v = Math.floor(v / 128)) bytes.push((v % 128) | 0x80);
    bytes.push(v);
  }
  return Uint8Array.from(bytes);
}

/** Decodes `runCount` values as the kernel's contract says: bytes consumed, or -1. */
export function varintDecodeLengths(bytes: Uint8Array, runCount: number): { consumed: number; lengths: Uint32Array } {
  const lengths = new Uint32Array(runCount);
  let pos = 0;
  for (let r = 0; r < runCount; r++) {
    let value = 0;
    for (let k = 0; ; k++) {
      if (k === 5 || pos >= bytes.length) return { consumed: -1, lengths };
      const b = bytes[pos++];
      value += (b & 0x7f) * 2 ** (7 * k);
      if (b < 0x80) break;
    }
    if (value + 1 > 0xffffffff) return { consumed: -1, lengths };
    lengths[r] = value + 1;
  }
  return { consumed: pos, lengths };
}
