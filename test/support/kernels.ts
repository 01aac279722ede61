/**
 * Test harness for the wasm kernels: instantiates one build ('simd' or 'scalar') over its own
 * shared memory and offers a bump allocator with copy-in / copy-out helpers. Views are made
 * from `memory.buffer` at each call, since a grown memory has a new buffer object.
 */
import { compileKernels, createKernelMemory, instantiateKernels, WASM_PAGE_BYTES, type Kernels, type KernelVariant } from '../../ts/cpu/wasm.js';

type AnyTypedArray = Uint8Array | Uint16Array | Uint32Array | Int32Array | Float32Array | Float64Array;
/** Any of the typed array constructors (a union of them is fine: the result is the union). */
type TypedArrayConstructor = {
  readonly BYTES_PER_ELEMENT: number;
  new (length: number): AnyTypedArray;
  new (buffer: ArrayBufferLike, byteOffset: number, length: number): AnyTypedArray;
};

export class KernelHarness {
  private top: number;

  private constructor(
    readonly variant: KernelVariant,
    readonly kernels: Kernels,
    readonly memory: WebAssembly.Memory,
  ) {
    this.top = this.base;
  }

  static async create(variant: KernelVariant): Promise<KernelHarness> {
    const memory = createKernelMemory(16, variant);
    const kernels = await instantiateKernels(await compileKernels(variant), memory);
    return new KernelHarness(variant, kernels, memory);
  }

  /** First allocatable byte: the module's heap base rounded up to 64. */
  get base(): number {
    return (this.kernels.heapBase() + 63) & ~63;
  }

  /** Frees everything allocated so far (the memory keeps its size). */
  reset(): void {
    this.top = this.base;
  }

  /** Reserves `bytes` at an `align`-byte boundary, growing the memory if needed. */
  alloc(bytes: number, align = 64): number {
    const ptr = Math.ceil(this.top / align) * align;
    this.top = ptr + bytes;
    this.ensure(this.top);
    return ptr;
  }

  /** Grows the memory so that bytes below `end` exist. */
  ensure(end: number): void {
    const have = this.memory.buffer.byteLength;
    if (end > have) this.memory.grow(Math.ceil((end - have) / WASM_PAGE_BYTES));
  }

  /** Current size of the memory in bytes. */
  get byteLength(): number {
    return this.memory.buffer.byteLength;
  }

  /** A live view of `length` elements at `ptr` (invalid after the memory grows). */
  view<C extends TypedArrayConstructor>(ctor: C, ptr: number, length: number): InstanceType<C> {
    return new ctor(this.memory.buffer, ptr, length) as InstanceType<C>;
  }

  bytes(ptr: number, length: number): Uint8Array {
    return new Uint8Array(this.memory.buffer, ptr, length);
  }

  /** Allocates room for `data` plus `extraBytes`, copies it in, returns the pointer. */
  copyIn(data: AnyTypedArray, extraBytes = 0, align = 64): number {
    const ptr = this.alloc(data.byteLength + extraBytes, align);
    this.bytes(ptr, data.byteLength).set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
    return ptr;
  }

  /** A copy (not shared) of `length` elements at `ptr`. */
  copyOut<C extends TypedArrayConstructor>(ctor: C, ptr: number, length: number): InstanceType<C> {
    const out = new ctor(length);
    new Uint8Array(out.buffer).set(this.bytes(ptr, length * ctor.BYTES_PER_ELEMENT));
    return out as InstanceType<C>;
  }

  /** Allocates `bytes` filled with `fill` (sentinel-prefilled outputs). */
  allocFilled(bytes: number, fill: number, align = 64): number {
    const ptr = this.alloc(bytes, align);
    this.bytes(ptr, bytes).fill(fill);
    return ptr;
  }
}

/** The two builds every kernel test runs on; 'simd-unshared' is the SIMD source again. */
export type TestedVariant = Extract<KernelVariant, 'simd' | 'scalar'>;

/** Both builds, loaded once per test file. */
export async function loadBothBuilds(): Promise<Record<TestedVariant, KernelHarness>> {
  const [simd, scalar] = await Promise.all([KernelHarness.create('simd'), KernelHarness.create('scalar')]);
  return { simd, scalar };
}
