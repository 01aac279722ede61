/**
 * Vitest setupFiles: runs in each test file's worker before the file. Points PARLE_CACHE_DIR
 * (where the engine stores calibrations: ts/platform/node.ts) at a directory of this file's own
 * inside the run's temporary directory (test/support/global-setup.ts). Every engine the file
 * makes, and every child process it starts (they inherit process.env: the CLI, `parle serve`),
 * calibrates into it: never into the user's ~/.cache/parle, never into another file's.
 */
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { inject } from 'vitest';
import type {} from './global-setup.js'; // (its ProvidedContext declaration)

process.env.PARLE_CACHE_DIR = mkdtempSync(join(inject('parleTestRoot'), 'cache-'));
