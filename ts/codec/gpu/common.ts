/// <reference types="@webgpu/types" />
/**
 * Shared plumbing of the GPU kernels of the version-2 codec (docs/format.md, "Version 2: the
 * codec pipeline"), whose drivers are one file per shader family beside this one: hash.ts (the
 * tree hash), huffman-decode.ts, pack.ts, delta.ts, shuffle.ts, gather.ts, histogram.ts (byte
 * histograms and their code lengths), huffman-encode.ts and rle-streams.ts. Here: compiled
 * pipelines, argument checks, windows of buffers bound at aligned offsets, scratch buffers and
 * the one-submission form of the encode* functions.
 *
 * Every op works on raw GPUBuffers at byte offsets, so that a container's streams, planes and
 * chunks can live side by side in one buffer. Shared rules:
 * - Buffers need STORAGE usage. Kernels bind a window of each buffer at a 256-byte aligned offset
 *   (minStorageBufferOffsetAlignment) covering the bytes they touch; a window beyond one storage
 *   binding throws TOO_LARGE (chunks are at most 64 MiB, far below).
 * - Outputs are written in whole u32 words: output byte offsets must be multiples of 4, and the
 *   bytes from an output's end up to the next multiple of 4 are overwritten with zeros.
 * - Inputs and outputs are distinct buffers (WebGPU forbids binding one buffer as read-only and
 *   writable storage in one dispatch).
 * - Each `encode*` function records its passes into a Submission (one command buffer, no
 *   readback in between); the async functions of the same name without `encode` run one
 *   submission each.
 */
import { ErrorCodes, ParleError } from '../../errors.js';
import { composeKernel } from '../../gpu/compose.js';
import type { GpuContext, Submission } from '../../gpu/context.js';
import { getPipeline } from '../../gpu/pipelines.js';

export function pipeline(
  ctx: GpuContext,
  file: string,
  source: string,
  entryPoint: string,
  consts: Record<string, string> = {},
  subgroups = false,
): GPUComputePipeline {
  const key = `${file}:${entryPoint}:${Object.values(consts).join(',')}:${subgroups ? 'sg' : ''}`;
  return getPipeline(ctx.device, key, () => ({
    code: composeKernel(source, { subgroups, scalar: 'u32', consts }),
    entryPoint,
  }));
}

export function checkBuffer(buffer: unknown, name: string): GPUBuffer {
  if (typeof buffer !== 'object' || buffer === null || typeof (buffer as GPUBuffer).size !== 'number') {
    throw new ParleError(ErrorCodes.INVALID_ARGUMENT, `${name} must be a GPUBuffer`);
  }
  const b = buffer as GPUBuffer;
  if ((b.usage & GPUBufferUsage.STORAGE) === 0) throw new ParleError(ErrorCodes.INVALID_ARGUMENT, `${name} needs GPUBufferUsage.STORAGE`);
  return b;
}

export function checkCount(value: unknown, name: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new ParleError(ErrorCodes.INVALID_ARGUMENT, `${name} must be a non-negative integer`);
  }
  return value;
}

export function checkWordOffset(value: unknown, name: string): number {
  const v = checkCount(value, name);
  if (v % 4 !== 0)
    throw new ParleError(ErrorCodes.INVALID_ARGUMENT, `${name} must be a multiple of 4 (outputs are written in whole words)`);
  return v;
}

/**
 * Throws INVALID_ARGUMENT where bytes [offset, offset + bytes) lie past a buffer of `size` bytes
 * (its `size`, read once by a caller that checks many spans: a property of Dawn's objects costs
 * a call into the binding).
 */
export function checkSpan(size: number, offset: number, bytes: number, name: string): void {
  if (offset + bytes > size) {
    throw new ParleError(ErrorCodes.INVALID_ARGUMENT, `${name}: bytes ${offset}..${offset + bytes} lie past the buffer's ${size} bytes`);
  }
}

export function roundUp4(n: number): number {
  return Math.ceil(n / 4) * 4;
}

/** A window [start, end) of a buffer bound at an aligned offset: `base` is that offset. */
export interface Window {
  base: number;
  end: number;
}

export function alignment(ctx: GpuContext): number {
  return ctx.limits.minStorageBufferOffsetAlignment;
}

export function maxBinding(ctx: GpuContext): number {
  return Math.min(ctx.limits.maxStorageBufferBindingSize, ctx.limits.maxBufferSize);
}

/** The window of `buffer` covering bytes [start, end), bound from an aligned offset. */
export function windowOf(ctx: GpuContext, start: number, end: number): Window {
  const align = alignment(ctx);
  return { base: Math.floor(start / align) * align, end };
}

/** The binding of a window (at least 4 bytes, rounded up to a word; `buffer` holds them). */
export function bindWindow(ctx: GpuContext, buffer: GPUBuffer, w: Window, what: string): GPUBufferBinding {
  const size = Math.min(buffer.size - w.base, Math.max(4, roundUp4(w.end - w.base)));
  if (size > maxBinding(ctx)) {
    throw new ParleError(ErrorCodes.TOO_LARGE, `${what}: a window of ${size} bytes exceeds one storage binding (${maxBinding(ctx)} bytes)`);
  }
  return { buffer, offset: w.base, size };
}

/**
 * Splits items, in order, into groups whose spans (one [start, end) per bound buffer, or null
 * where an item does not touch that buffer) each fit one storage binding from an aligned offset.
 */
export function groupBySpans(
  ctx: GpuContext,
  count: number,
  spans: (i: number) => ([number, number] | null)[],
  what: string,
): { items: number[]; windows: (Window | null)[] }[] {
  const align = alignment(ctx);
  const limit = maxBinding(ctx);
  const groups: { items: number[]; windows: (Window | null)[] }[] = [];
  // the open group's windows, a base and an end a buffer (base -1: no item touches it yet);
  // numbers, not objects, since this runs once an item (a stream, a region: thousands a call)
  let bases: number[] = [];
  let ends: number[] = [];
  let items: number[] = [];
  const close = () => {
    if (items.length > 0) groups.push({ items, windows: bases.map((base, k) => (base < 0 ? null : { base, end: ends[k] })) });
  };
  for (let i = 0; i < count; i++) {
    const s = spans(i);
    let fits = items.length > 0;
    for (let k = 0; k < s.length; k++) {
      const x = s[k];
      if (x === null) continue;
      const base = Math.floor(x[0] / align) * align;
      if (roundUp4(x[1] - base) > limit)
        throw new ParleError(ErrorCodes.TOO_LARGE, `${what}: item ${i} spans more than one storage binding (${limit} bytes)`);
      if (fits && bases[k] >= 0 && roundUp4(Math.max(ends[k], x[1]) - Math.min(bases[k], base)) > limit) fits = false;
    }
    if (!fits) {
      close();
      bases = s.map(() => -1);
      ends = s.map(() => 0);
      items = [];
    }
    items.push(i);
    for (let k = 0; k < s.length; k++) {
      const x = s[k];
      if (x === null) continue;
      const base = Math.floor(x[0] / align) * align;
      if (bases[k] < 0) {
        bases[k] = base;
        ends[k] = x[1];
      } else {
        bases[k] = Math.min(bases[k], base);
        ends[k] = Math.max(ends[k], x[1]);
      }
    }
  }
  close();
  return groups;
}

/** A scratch storage buffer of `s` holding `words` (uploaded before the submission runs). */
export function storageWords(ctx: GpuContext, s: Submission, words: Uint32Array, label: string): GPUBuffer {
  const b = s.temp(Math.max(16, words.byteLength), label);
  if (words.length > 0) ctx.device.queue.writeBuffer(b, 0, words.buffer, words.byteOffset, words.byteLength);
  return b;
}

/** Records `encode` in one submission, then runs the reader it returned (the one-call forms of the encode* functions). */
export async function submitThenRead<R>(ctx: GpuContext, label: string, encode: (s: Submission) => () => Promise<R>): Promise<R> {
  let read: (() => Promise<R>) | undefined;
  await ctx.submit(label, (s) => {
    read = encode(s);
  });
  return read!();
}

export function corrupt(message: string): never {
  throw new ParleError(ErrorCodes.CORRUPT, message);
}

/**
 * Reads byte ranges of GPU buffers (any alignment) back to the host in one submission and one
 * mapping: gathered into one scratch buffer at 4-byte-aligned places, then cut apart.
 */
export async function readRanges(
  gpu: GpuContext,
  ranges: readonly { buffer: GPUBuffer; offset: number; length: number }[],
): Promise<Uint8Array[]> {
  const spans = ranges.map((r) => {
    const start = Math.floor(r.offset / 4) * 4;
    return { start, span: roundUp4(r.offset + r.length) - start };
  });
  const total = spans.reduce((a, s) => a + s.span, 0);
  if (total === 0) return ranges.map(() => new Uint8Array(0));
  const temp = gpu.acquireStorage(total, 'compress readback');
  try {
    // the gather and the readback's copy in one submission (a round trip each had been two)
    const words = await submitThenRead(gpu, 'compress readback', (s) => {
      let at = 0;
      ranges.forEach((r, i) => {
        if (spans[i].span > 0) s.encoder.copyBufferToBuffer(r.buffer, spans[i].start, temp, at, spans[i].span);
        at += spans[i].span;
      });
      return s.readAfter(temp, total);
    });
    const bytes = new Uint8Array(words.buffer, words.byteOffset, words.byteLength);
    let at = 0;
    return ranges.map((r, i) => {
      const from = at + (r.offset - spans[i].start);
      at += spans[i].span;
      return bytes.slice(from, from + r.length);
    });
  } finally {
    gpu.releaseStorage(temp);
  }
}
