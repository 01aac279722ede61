/**
 * Node specifics behind one small interface; ts/platform/browser.ts is its twin, swapped in by
 * the browser bundle (build/build.mjs).
 */
import { readFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';

/** Reads a build output (e.g. `parle.wasm`) from the package's build/ folder. */
export async function loadBuildAsset(name: string): Promise<Uint8Array<ArrayBuffer>> {
  // ts/<dir>/x.ts and dist/<target>/x.js are both two levels below the package root.
  return new Uint8Array(await readFile(new URL(`../../build/${name}`, import.meta.url)));
}

/** Number of logical cores the runtime reports. */
export function hardwareConcurrency(): number {
  return availableParallelism();
}

export const platformName = 'node' as const;
