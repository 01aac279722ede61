// How the cost model's benchmark (cost-model.mjs) times one cell's paths:
// interleaved in rounds, a short pause after each call, each result released.
import { DeviceArray } from '../dist/node/index.js';

/**
 * The six orders of the three paths, one per round in turn, each round starting with the path
 * the round before ended with: over the six rounds every path follows every path (itself
 * included) exactly twice, across rounds too, so a call's aftermath lands on every path alike
 * (SwiftShader's threads still spinning after a GPU call; an H100's clock fallen after a long
 * CPU call: a GPU call after one took 2-5x as long). The orders before, each path once per round
 * in all six orders, put the 'gpu' path after 'cpu' three times in six rounds and 'auto' twice,
 * and 'auto' measured faster than 'gpu' on the same path (a 256 MiB scan of device data: 1.49
 * ms against 4.10; a 16 MiB sort: 4.7-14 against 16-34). Run the rounds in multiples of six.
 */
export const ORDERS = [
  ['cpu', 'gpu', 'auto'],
  ['auto', 'cpu', 'gpu'],
  ['gpu', 'auto', 'cpu'],
  ['cpu', 'auto', 'gpu'],
  ['gpu', 'cpu', 'auto'],
  ['auto', 'gpu', 'cpu'],
];

/** A short pause between calls, alike for every path: lets threads a call woke go back to sleep. */
export const settle = () => new Promise((resolve) => setTimeout(resolve, 2));

/** Destroys the DeviceArrays of a call's result (an array, or an object of them such as runs). */
export function release(x) {
  if (x instanceof DeviceArray) x.destroy();
  else if (x && typeof x === 'object' && !ArrayBuffer.isView(x)) for (const v of Object.values(x)) release(v);
}
