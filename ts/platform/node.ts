/**
 * Node specifics behind one small interface; ts/platform/browser.ts is its twin, swapped in by
 * the browser bundle (build/build.mjs).
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';

/**
 * Reads a build output (e.g. `parle.wasm`) from the package's build/ folder: the nearest
 * build/ above this module (ts/platform/ and dist/node/ are two levels down; other bundles of
 * the sources, such as benchmarks, may sit elsewhere).
 */
export async function loadBuildAsset(name: string): Promise<Uint8Array<ArrayBuffer>> {
  let url = new URL(`../build/${name}`, import.meta.url);
  for (let up = 0; up < 4 && !existsSync(url); up++) url = new URL(`../${'../'.repeat(up + 1)}build/${name}`, import.meta.url);
  return new Uint8Array(await readFile(url));
}

/** Number of logical cores the runtime reports. */
export function hardwareConcurrency(): number {
  return availableParallelism();
}

export const platformName = 'node' as const;
