/**
 * Progress on stderr for long CLI work: shown only when stderr is a terminal and the input is
 * over {@link PROGRESS_MIN_BYTES}; quiet when piped or redirected.
 */
import cliProgress from 'cli-progress';
import type { ProgressCallback } from '../node/files.js';

/** Inputs below this finish too fast for a bar to help. */
export const PROGRESS_MIN_BYTES = 64 << 20;

/** A progress callback and a `stop` to call when the work ends (also on failure). */
export function startProgress(label: string, totalBytes: number): { onProgress?: ProgressCallback; stop: () => void } {
  if (!process.stderr.isTTY || totalBytes < PROGRESS_MIN_BYTES) return { stop: () => undefined };
  const bar = new cliProgress.SingleBar(
    {
      stream: process.stderr,
      format: `${label} [{bar}] {percentage}% | {doneMiB}/{totalMiB} MiB | ETA {eta_formatted}`,
      hideCursor: true,
      clearOnComplete: true,
    },
    cliProgress.Presets.shades_classic,
  );
  const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(0);
  bar.start(totalBytes, 0, { doneMiB: '0', totalMiB: mib(totalBytes) });
  return {
    onProgress: (done) => bar.update(done, { doneMiB: mib(done) }),
    stop: () => bar.stop(),
  };
}
