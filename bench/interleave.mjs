// How the cost model's benchmarks (cost-model.mjs, auto-overhead.mjs) time one cell's paths:
// interleaved in rounds, a short pause after each call, each result released.
import { DeviceArray } from '../dist/node/index.js';

/**
 * The six orders of the three paths, one per round in turn: each path follows each other path
 * equally often (a GPU call's aftermath, such as SwiftShader's threads still spinning, lands on
 * every path alike).
 */
export const ORDERS = [
  ['cpu', 'gpu', 'auto'],
  ['auto', 'gpu', 'cpu'],
  ['gpu', 'cpu', 'auto'],
  ['auto', 'cpu', 'gpu'],
  ['cpu', 'auto', 'gpu'],
  ['gpu', 'auto', 'cpu'],
];

/** A short pause between calls, alike for every path: lets threads a call woke go back to sleep. */
export const settle = () => new Promise((resolve) => setTimeout(resolve, 2));

/** Destroys the DeviceArrays of a call's result (an array, or an object of them such as runs). */
export function release(x) {
  if (x instanceof DeviceArray) x.destroy();
  else if (x && typeof x === 'object' && !ArrayBuffer.isView(x)) for (const v of Object.values(x)) release(v);
}
