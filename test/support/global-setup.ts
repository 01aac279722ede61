/**
 * Vitest globalSetup: one fresh temporary directory for the run (removed at its end), handed to
 * every test file (test/support/setup-file.ts makes each file's cache directory inside it), so
 * that no test reads or writes the user's calibration cache (~/.cache/parle) and no test file
 * sees what another file, or an earlier run, left there.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The run's temporary directory (test/support/global-setup.ts). */
    parleTestRoot: string;
  }
}

export default function setup(project: TestProject): () => void {
  const root = mkdtempSync(join(tmpdir(), 'parle-test-'));
  project.provide('parleTestRoot', root);
  return () => rmSync(root, { recursive: true, force: true });
}
