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
  interface GPUBindGroup {}
  interface GPUBufferDescriptor {}
  namespace WebAssembly {
    interface Memory {}
    interface Module {}
  }
}

/**
 * Element type names, as in the CLI's `--type`. `f16` is IEEE half precision: a Float16Array
 * where the runtime has one, else a Uint16Array of its bits (passed with `type: 'f16'`).
 */
export type ElementType = 'u8' | 'u16' | 'u32' | 'i32' | 'f32' | 'i8' | 'i16' | 'f16' | 'f64' | 'i64' | 'u64';

/** The 1-, 2- and 4-byte element types before version 4: the GPU path's scan and sort take their 32-bit ones ({@link GpuCodecType}: its codec and rle). */
export type KernelType = 'u8' | 'u16' | 'u32' | 'i32' | 'f32';

/**
 * The element types the GPU codec compresses (from the device; it decodes these and 8-byte
 * elements) and the GPU's rle takes: every type of 1, 2 or 4 bytes, the kernel types and the
 * version-4 types i8, i16 and f16, whose kernels work on the elements' bits as the CPU codec's do.
 * A DeviceArray holds any type.
 */
export type GpuCodecType = KernelType | 'i8' | 'i16' | 'f16';

/** The typed arrays parle accepts and returns (compress and decompress take every one; the kernels {@link KERNEL_TYPES}' only). */
export type ParleArray =
  | Uint8Array
  | Uint16Array
  | Uint32Array
  | Int32Array
  | Float32Array
  | Int8Array
  | Int16Array
  | Float64Array
  | BigInt64Array
  | BigUint64Array;

/** Sort keys: 32-bit elements (both paths) and 64-bit elements (the CPU path). */
export type SortKeys = Uint32Array | Int32Array | Float32Array | BigUint64Array | BigInt64Array | Float64Array;

/** Maps an element type name to its typed array. */
export interface ArrayOf {
  u8: Uint8Array;
  u16: Uint16Array;
  u32: Uint32Array;
  i32: Int32Array;
  f32: Float32Array;
  i8: Int8Array;
  i16: Int16Array;
  /** A Uint16Array of the halves' bits (a Float16Array's type is not in TypeScript's lib yet). */
  f16: Uint16Array;
  f64: Float64Array;
  i64: BigInt64Array;
  u64: BigUint64Array;
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
  i8: Int8Array,
  i16: Int16Array,
  f16: Uint16Array,
  f64: Float64Array,
  i64: BigInt64Array,
  u64: BigUint64Array,
};

/** The runtime's Float16Array (Node 24, recent browsers), or undefined. */
const Float16: (new (buffer: ArrayBufferLike, byteOffset?: number, length?: number) => ArrayBufferView) | undefined = (
  globalThis as { Float16Array?: new (buffer: ArrayBufferLike, byteOffset?: number, length?: number) => ArrayBufferView }
).Float16Array;
if (Float16 !== undefined) (constructors as Record<string, unknown>).f16 = Float16;

/**
 * All element types, in the order of their codes in the .parle header (codes 5 and up: version 4).
 */
export const ELEMENT_TYPES: readonly ElementType[] = ['u8', 'u16', 'u32', 'i32', 'f32', 'i8', 'i16', 'f16', 'f64', 'i64', 'u64'];

/** The element types of {@link KernelType}: a host array the GPU path's scan and sort take is of one of these (of 32 bits). */
export const KERNEL_TYPES: readonly KernelType[] = ['u8', 'u16', 'u32', 'i32', 'f32'];

/** The element types of {@link GpuCodecType}: the kernel types, then i8, i16, f16. */
export const GPU_CODEC_TYPES: readonly GpuCodecType[] = [...KERNEL_TYPES, 'i8', 'i16', 'f16'];

/** The element types of sort keys ({@link SortKeys}): 32-bit on both paths, 64-bit on the CPU path. */
export const SORT_KEY_TYPES: readonly ElementType[] = ['u32', 'i32', 'f32', 'u64', 'i64', 'f64'];

/** Bytes per element of `type`. */
export function elementSize(type: ElementType): 1 | 2 | 4 | 8 {
  return ELEMENT_SIZES[type];
}

const ELEMENT_SIZES: { [T in ElementType]: 1 | 2 | 4 | 8 } = {
  u8: 1,
  u16: 2,
  u32: 4,
  i32: 4,
  f32: 4,
  i8: 1,
  i16: 2,
  f16: 2,
  f64: 8,
  i64: 8,
  u64: 8,
};

/**
 * Bytes per element of `type` where a kernel of 1-, 2- and 4-byte lanes works on it (rle, scan,
 * the GPU path, versions 1-3 of the format).
 * @throws ParleError UNSUPPORTED_TYPE for 8-byte types
 */
export function kernelSize(type: ElementType): 1 | 2 | 4 {
  const size = ELEMENT_SIZES[type];
  if (size === 8) throw new ParleError(ErrorCodes.UNSUPPORTED_TYPE, `${type} elements are not taken here (only 1-, 2- and 4-byte ones)`);
  return size;
}

/** True for the element types the kernels take ({@link KERNEL_TYPES}). */
export function isKernelType(type: ElementType): type is KernelType {
  return (KERNEL_TYPES as readonly string[]).includes(type);
}

/** True for the element types the GPU codec compresses ({@link GPU_CODEC_TYPES}: those of 1, 2 or 4 bytes). */
export function isGpuCodecType(type: ElementType): type is GpuCodecType {
  return (GPU_CODEC_TYPES as readonly string[]).includes(type);
}

/** The typed array constructor of `type` (f16: Float16Array where the runtime has it, else Uint16Array). */
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
  if (array instanceof Int8Array) return 'i8';
  if (array instanceof Int16Array) return 'i16';
  if (array instanceof Float64Array) return 'f64';
  if (array instanceof BigInt64Array) return 'i64';
  if (array instanceof BigUint64Array) return 'u64';
  if (Float16 !== undefined && array instanceof Float16) return 'f16';
  return undefined;
}

/** True when `array` can hold elements of `type`: its own type, or an f16's array (a Uint16Array where the runtime has no Float16Array). */
export function holdsType(array: ParleArray, type: ElementType): boolean {
  return elementTypeOf(array) === type || (type === 'f16' && array instanceof constructors.f16);
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
    const got = value === null ? 'null' : typeof value === 'object' ? ((value as object).constructor?.name ?? 'object') : typeof value;
    throw new ParleError(ErrorCodes.INVALID_ARGUMENT, `${name} must be one of ${allowed.map(typedArrayName).join(', ')}; got ${got}`);
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
  return type === 'f16' && Float16 === undefined ? 'Uint16Array (f16)' : constructors[type].name;
}

/** A byte view of the same memory as `array` (no copy). */
export function bytesOf(array: ParleArray): Uint8Array {
  return new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
}
