/**
 * Progress on stderr for long CLI work: shown only when stderr is a terminal and the work is
 * over {@link PROGRESS_MIN_BYTES} (input bytes on compress, decoded bytes on decompress, known
 * from the container's header once it is read); quiet when stderr is piped or redirected.
 */
import cliProgress from 'cli-progress';
import type { ProgressCallback } from '../node/files.js';

/** Work below this finishes too fast for a bar to help. */
export const PROGRESS_MIN_BYTES = 64 << 20;

/**
 * A progress callback and a `stop` to call when the work ends (also on failure). The bar starts
 * at the first call whose total is large enough.
 */
export function startProgress(label: string): { onProgress?: ProgressCallback; stop: () => void } {
  if (!process.stderr.isTTY) return { stop: () => undefined };
  let bar: cliProgress.SingleBar | undefined;
  let small = false;
  const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(0);
  return {
    onProgress: (done, total) => {
      if (small) return;
      if (bar === undefined) {
        if (total < PROGRESS_MIN_BYTES) {
          small = true;
          return;
        }
        bar = new cliProgress.SingleBar(
          {
            stream: process.stderr,
            format: `${label} [{bar}] {percentage}% | {doneMiB}/{totalMiB} MiB | ETA {eta_formatted}`,
            hideCursor: true,
            clearOnComplete: true,
          },
          cliProgress.Presets.shades_classic,
        );
        bar.start(total, 0, { doneMiB: '0', totalMiB: mib(total) });
      }
      bar.update(done, { doneMiB: mib(done) });
    },
    stop: () => bar?.stop(),
  };
}
