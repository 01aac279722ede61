/**
 * Element types and the typed arrays that carry them.
 */
import { ErrorCodes, ParleError } from './errors.js';

// Global types that parle's published declarations (dist/types) mention, declared empty so that
// they compile in a strict application (skipLibCheck off) without the libraries that define them:
// WebGPU's from @webgpu/types (absent in a CPU-only application, or on Node without the `webgpu`
// package), WebAssembly's from TypeScript's DOM lib (absent in a Node application with `lib:
// ["es2022"]`). Where those are present, these merge with their full interfaces. Only interfaces
// merge: a type alias of theirs (GPUPowerPreference, GPUFeatureName) must not appear in a public
// declaration. build/build.mjs compiles dist/types without either library to catch a name
// missing here.
declare global {
  interface GPUBuffer {}
  interface GPUDevice {}
  interface GPUCommandEncoder {}
  interface GPUComputePipeline {}
  interface GPUComputePassTimestampWrites {}
  interface GPUBindGroupEntry {}
  interface GPUBindGroupLayout {}
  interface GPUBufferDescriptor {}
  namespace WebAssembly {
    interface Memory {}
    interface Module {}
  }
}

/** Element type names, as in the CLI's `--type`. */
export type ElementType = 'u8' | 'u16' | 'u32' | 'i32' | 'f32';

/** The typed arrays parle accepts and returns. */
export type ParleArray = Uint8Array | Uint16Array | Uint32Array | Int32Array | Float32Array;

/** Sort keys: 32-bit elements. */
export type SortKeys = Uint32Array | Int32Array | Float32Array;

/** Maps an element type name to its typed array. */
export interface ArrayOf {
  u8: Uint8Array;
  u16: Uint16Array;
  u32: Uint32Array;
  i32: Int32Array;
  f32: Float32Array;
}

type ArrayConstructorOf<T extends ElementType> = {
  new (length: number): ArrayOf[T];
  new (buffer: ArrayBufferLike, byteOffset?: number, length?: number): ArrayOf[T];
  readonly BYTES_PER_ELEMENT: number;
};

const constructors: { [T in ElementType]: ArrayConstructorOf<T> } = {
  u8: Uint8Array,
  u16: Uint16Array,
  u32: Uint32Array,
  i32: Int32Array,
  f32: Float32Array,
};

/** All element types, in the order of their codes in the .parle header. */
export const ELEMENT_TYPES: readonly ElementType[] = ['u8', 'u16', 'u32', 'i32', 'f32'];

/** Bytes per element of `type`. */
export function elementSize(type: ElementType): 1 | 2 | 4 {
  return constructors[type].BYTES_PER_ELEMENT as 1 | 2 | 4;
}

/** The typed array constructor of `type`. */
export function arrayConstructor<T extends ElementType>(type: T): ArrayConstructorOf<T> {
  return constructors[type];
}

/** True when `value` names an element type. */
export function isElementType(value: unknown): value is ElementType {
  return typeof value === 'string' && (ELEMENT_TYPES as readonly string[]).includes(value);
}

/** The element type of a typed array, or undefined for arrays parle does not take. */
export function elementTypeOf(array: unknown): ElementType | undefined {
  if (array instanceof Uint8Array) return 'u8';
  if (array instanceof Uint16Array) return 'u16';
  if (array instanceof Uint32Array) return 'u32';
  if (array instanceof Int32Array) return 'i32';
  if (array instanceof Float32Array) return 'f32';
  return undefined;
}

/** True when `buffer` was detached (transferred); a detached buffer has byteLength 0 and cannot be viewed. */
export function isDetached(buffer: ArrayBufferLike): boolean {
  if (buffer.byteLength !== 0) return false;
  try {
    new Uint8Array(buffer);
    return false;
  } catch {
    return true;
  }
}

/**
 * Checks that `value` is a typed array parle takes, not detached, and returns its element type.
 * @throws ParleError INVALID_ARGUMENT (not a supported typed array), DETACHED_BUFFER
 */
export function checkArray(value: unknown, name: string, allowed: readonly ElementType[] = ELEMENT_TYPES): ElementType {
  const type = elementTypeOf(value);
  if (type === undefined) {
    const got = value === null ? 'null' : typeof value === 'object' ? (value as object).constructor?.name ?? 'object' : typeof value;
    throw new ParleError(
      ErrorCodes.INVALID_ARGUMENT,
      `${name} must be one of ${allowed.map(typedArrayName).join(', ')}; got ${got}`,
    );
  }
  if (!allowed.includes(type)) {
    throw new ParleError(
      ErrorCodes.UNSUPPORTED_TYPE,
      `${name} must be one of ${allowed.map(typedArrayName).join(', ')}; got ${typedArrayName(type)}`,
    );
  }
  if (isDetached((value as ParleArray).buffer)) {
    throw new ParleError(ErrorCodes.DETACHED_BUFFER, `${name} is backed by a detached ArrayBuffer`);
  }
  return type;
}

/** The constructor name of `type`'s typed array, e.g. 'Uint8Array'. */
export function typedArrayName(type: ElementType): string {
  return constructors[type].name;
}

/** A byte view of the same memory as `array` (no copy). */
export function bytesOf(array: ParleArray): Uint8Array {
  return new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
}
