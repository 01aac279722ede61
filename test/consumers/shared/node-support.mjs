// Helpers of the Node consumer fixtures (imported by path, not installed): installed size, a
// deterministic sample, assertions that name what failed.
import { lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/** Bytes under `dir`: apparent (file sizes) and on disk (allocated blocks, as `du` counts). */
export function treeSize(dir) {
  let apparent = 0;
  let disk = 0;
  const walk = (path) => {
    const st = lstatSync(path);
    apparent += st.isDirectory() ? 0 : st.size;
    disk += st.blocks * 512;
    if (st.isDirectory()) for (const name of readdirSync(path)) walk(join(path, name));
  };
  walk(dir);
  return { apparent, disk };
}

export const MB = 1e6;
export const fmt = (bytes) => `${(bytes / MB).toFixed(2)} MB`;

/** u16 samples in runs with a slow ramp (a shape parle's codec and the GPU path both handle). */
export function sampleU16(length) {
  const out = new Uint16Array(length);
  for (let i = 0; i < length; i++) out[i] = ((i >> 5) * 7 + ((i >> 11) & 3)) & 0xffff;
  return out;
}

export function check(condition, what) {
  if (!condition) throw new Error(`check failed: ${what}`);
  console.log(`  ok  ${what}`);
}

export function sameArray(a, b) {
  if (a.constructor !== b.constructor || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** The rejection of `promise` (fails when it resolves). */
export async function rejection(promise) {
  try {
    await promise;
  } catch (e) {
    return e;
  }
  throw new Error('expected a rejection');
}
