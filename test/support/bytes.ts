/**
 * Byte helpers of the kernel tests (test/codec-kernels.test.ts, test/huffman-lanes.test.ts):
 * test data, little-endian packing, and checks of the kernels' memory (their outputs, the guard
 * bytes around them, reads at the very end of the memory); the engine tests' comparison of
 * decoded arrays.
 */
import { expect } from 'vitest';
import type { KernelHarness } from './kernels.js';
import type { Rng } from './random.js';
import { bytesOf, type ParleArray } from '../../ts/types.js';

/** The byte the guards around a kernel's outputs are filled with. */
export const SENTINEL = 0xa5;

export function randomBytes(rng: Rng, n: number): Uint8Array {
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = rng.nextU32() & 0xff;
  return out;
}

/** Bytes over `alphabet` symbols, roughly geometric (symbol s with probability ~ 0.4 x 0.6^s). */
export function skewedBytes(rng: Rng, n: number, alphabet = 256): Uint8Array {
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    let s = 0;
    while (s < alphabet - 1 && rng.nextFloat() < 0.6) s++;
    out[i] = s;
  }
  return out;
}

export function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((a, p) => a + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** `values` as little-endian u32s. */
export function le32(values: ArrayLike<number>): Uint8Array {
  const out = new Uint8Array(4 * values.length);
  const view = new DataView(out.buffer);
  for (let i = 0; i < values.length; i++) view.setUint32(4 * i, values[i], true);
  return out;
}

export function expectSameBytes(actual: Uint8Array, expected: Uint8Array, context: string): void {
  if (actual.length !== expected.length) expect.fail(`${context}: ${actual.length} bytes, expected ${expected.length}`);
  for (let i = 0; i < expected.length; i++) {
    if (actual[i] !== expected[i]) expect.fail(`${context}: first difference at byte ${i}: got ${actual[i]}, expected ${expected[i]}`);
  }
}

/** Fails unless every byte in [ptr, ptr + length) is still the {@link SENTINEL}. */
export function expectUntouched(h: KernelHarness, ptr: number, length: number, context: string): void {
  const at = h.bytes(ptr, length).findIndex((b) => b !== SENTINEL);
  if (at >= 0) expect.fail(`${context}: byte ${at} of the guard was written`);
}

/**
 * Copies `data` followed by `slack` bytes of `slackFill` so that they end exactly at the end of
 * the memory (a read past them traps); returns where `data` starts.
 */
export function placeAtMemoryEnd(h: KernelHarness, data: Uint8Array, slack = 0, slackFill = 0): number {
  const start = h.alloc(0);
  h.ensure(start + data.length + slack + 16);
  const ptr = h.byteLength - data.length - slack;
  h.bytes(ptr, data.length).set(data);
  h.bytes(ptr + data.length, slack).fill(slackFill);
  h.alloc(h.byteLength - start, 1);
  expect(ptr + data.length + slack).toBe(h.byteLength);
  return ptr;
}

/** Whether `a` and `b` are arrays of one type holding the same elements, bit for bit (NaN payloads and -0 included). */
export function sameElements(a: ParleArray, b: ParleArray): boolean {
  return a.length === b.length && a.constructor === b.constructor && Buffer.compare(bytesOf(a), bytesOf(b)) === 0;
}
