/**
 * The layout of the kernels' shared `WebAssembly.Memory`, owned by TypeScript: a first-fit
 * allocator with coalescing over the heap above the module's static data. Kernels get pointers
 * and allocate nothing (the AssemblyScript runtime is not thread-safe, so it is compiled out).
 *
 * The memory grows on demand; a grown shared memory keeps its old `SharedArrayBuffer` valid but
 * short, so views are always made from {@link WasmHeap.buffer}, read after any allocation.
 */
import { ErrorCodes, ParleError } from '../errors.js';
import { MAX_MEMORY_PAGES, WASM_PAGE_BYTES } from './wasm.js';

/** Alignment of every block: a cache line, which also suits v128 loads. */
const ALIGN = 64;
const MAX_BYTES = MAX_MEMORY_PAGES * WASM_PAGE_BYTES;

interface FreeBlock {
  ptr: number;
  bytes: number;
}

/** A block of the heap: `ptr` is a byte offset into the memory. */
export interface HeapBlock {
  readonly ptr: number;
  readonly bytes: number;
}

export class WasmHeap {
  readonly memory: WebAssembly.Memory;
  private readonly base: number;
  /** Free blocks below `top`, sorted by address, never adjacent (coalesced). */
  private free: FreeBlock[] = [];
  /** Everything at and above `top` is free. */
  private top: number;
  private readonly live = new Map<number, number>();

  /** Bytes the heap may reach (the memory's top address): at most the 4 GiB of wasm32. */
  readonly limit: number;

  constructor(memory: WebAssembly.Memory, heapBase: number, limitBytes = MAX_BYTES) {
    this.memory = memory;
    this.base = alignUp(heapBase);
    this.top = this.base;
    this.limit = Math.min(MAX_BYTES, Math.max(this.base, limitBytes));
  }

  /** Bytes the heap can hand out in all (above the module's static data). */
  get capacity(): number {
    return this.limit - this.base;
  }

  /** Bytes in live blocks. */
  get liveBytes(): number {
    let sum = 0;
    for (const bytes of this.live.values()) sum += bytes;
    return sum;
  }

  /** The bytes a block of `bytes` takes (rounded up to the alignment). */
  static blockBytes(bytes: number): number {
    return Math.max(ALIGN, alignUp(bytes));
  }

  /** The memory's current buffer; re-read after every allocation (growth replaces it). */
  get buffer(): ArrayBuffer | SharedArrayBuffer {
    return this.memory.buffer;
  }

  /**
   * Allocates `bytes` (rounded up to 64), growing the memory when needed.
   * @throws ParleError TOO_LARGE when the block does not fit below the heap's limit (at most the
   *   4 GiB wasm32 address space).
   */
  alloc(bytes: number): HeapBlock {
    const block = this.tryAlloc(bytes);
    if (block === undefined) {
      throw new ParleError(
        ErrorCodes.TOO_LARGE,
        `the CPU path needs ${formatBytes(this.top + alignUp(bytes))} of WebAssembly memory, beyond its limit of ${formatBytes(this.limit)}` +
          (this.limit === MAX_BYTES ? ' (the 4 GiB wasm32 address space)' : ''),
      );
    }
    return block;
  }

  /**
   * {@link alloc}, or undefined when the block does not fit below the limit now (other blocks
   * may be released later). @throws ParleError TOO_LARGE when the memory cannot grow.
   */
  tryAlloc(bytes: number): HeapBlock | undefined {
    const size = Math.max(ALIGN, alignUp(bytes));
    for (let i = 0; i < this.free.length; i++) {
      const block = this.free[i];
      if (block.bytes >= size) {
        const ptr = block.ptr;
        if (block.bytes === size) this.free.splice(i, 1);
        else {
          block.ptr += size;
          block.bytes -= size;
        }
        this.live.set(ptr, size);
        return { ptr, bytes: size };
      }
    }
    const ptr = this.top;
    const end = ptr + size;
    if (end > this.limit) return undefined;
    const have = this.memory.buffer.byteLength;
    if (end > have) {
      // Grow by at least half of what we have, so many small growths do not each copy page tables.
      const wantPages = Math.ceil(end / WASM_PAGE_BYTES);
      const havePages = have / WASM_PAGE_BYTES;
      const pages = Math.min(Math.ceil(this.limit / WASM_PAGE_BYTES), MAX_MEMORY_PAGES, Math.max(wantPages, Math.ceil(havePages * 1.5)));
      try {
        this.memory.grow(pages - havePages);
      } catch (cause) {
        throw new ParleError(ErrorCodes.TOO_LARGE, `growing WebAssembly memory to ${formatBytes(pages * WASM_PAGE_BYTES)} failed`, {
          cause,
        });
      }
    }
    this.top = end;
    this.live.set(ptr, size);
    return { ptr, bytes: size };
  }

  /** True while `block` is allocated. */
  isLive(block: HeapBlock): boolean {
    return this.live.has(block.ptr);
  }

  /** Returns a block to the heap. Freeing a block twice is a bug and throws. */
  release(block: HeapBlock): void {
    const size = this.live.get(block.ptr);
    if (size === undefined) throw new Error(`heap block ${block.ptr} is not live`);
    this.live.delete(block.ptr);
    let i = 0;
    while (i < this.free.length && this.free[i].ptr < block.ptr) i++;
    this.free.splice(i, 0, { ptr: block.ptr, bytes: size });
    // Coalesce with the next and previous blocks.
    const next = this.free[i + 1];
    if (next && block.ptr + size === next.ptr) {
      this.free[i].bytes += next.bytes;
      this.free.splice(i + 1, 1);
    }
    const prev = this.free[i - 1];
    if (prev && prev.ptr + prev.bytes === block.ptr) {
      prev.bytes += this.free[i].bytes;
      this.free.splice(i, 1);
      i--;
    }
    // A free block that ends at the top gives its space back to the top.
    const last = this.free[this.free.length - 1];
    if (last && last.ptr + last.bytes === this.top) {
      this.top = last.ptr;
      this.free.pop();
    }
  }

  /** Runs `fn` with blocks of the given byte sizes and releases them afterwards, even on throw. */
  with<R>(sizes: readonly number[], fn: (...blocks: HeapBlock[]) => R): R {
    const blocks: HeapBlock[] = [];
    try {
      for (const bytes of sizes) blocks.push(this.alloc(bytes));
      return fn(...blocks);
    } finally {
      for (const block of blocks) this.release(block);
    }
  }

  /** A byte view of a block (valid until the next allocation). */
  bytes(ptr: number, byteLength: number): Uint8Array {
    return new Uint8Array(this.memory.buffer, ptr, byteLength);
  }
}

function alignUp(n: number): number {
  return Math.ceil(n / ALIGN) * ALIGN;
}

/** Human-readable bytes, e.g. `64 MiB`. */
export function formatBytes(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${Number.isInteger(value) ? value : value.toFixed(1)} ${units[unit]}`;
}
