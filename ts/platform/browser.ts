/**
 * Browser specifics; the twin of ts/platform/node.ts (same exports), chosen by the browser bundle.
 */

/** Fetches a build output (e.g. `parle.wasm`) that sits beside the bundle's build/ folder. */
export async function loadBuildAsset(name: string): Promise<Uint8Array<ArrayBuffer>> {
  const response = await fetch(new URL(`../../build/${name}`, import.meta.url));
  if (!response.ok) throw new Error(`fetching ${name} failed: HTTP ${response.status}`);
  return new Uint8Array(await response.arrayBuffer());
}

/** Number of logical cores the browser reports. */
export function hardwareConcurrency(): number {
  return navigator.hardwareConcurrency ?? 1;
}

export const platformName = 'browser' as const;
