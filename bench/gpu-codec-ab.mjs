/**
 * The GPU path's whole public calls, this build against a baseline build, interleaved in one
 * process: two engines (two GPU devices on the same card), calls alternating A B B A ..., so
 * that the GPU's clock governor and the host's noise fall on both alike. Per corpus file
 * (bench/corpus) repeated to each size:
 *   - decompress: to the device (`path: 'gpu', to: 'device'`: upload of the container, decode,
 *     checks) of a CPU-path container, each build its own: this build's laid out for
 *     `--decoder` (default gpu: Huffman mode 3; cpu: mode 2), the baseline's with its defaults
 *     or `--baseline-decoder` (both containers' sizes are saved);
 *   - decompress-device: the same containers uploaded first (a u8 DeviceArray: nvCOMP's case,
 *     #45's "device container -> device"), decoded to the device;
 *   - compress: from the device (the input uploaded to each engine) into a reused `out` array
 *     (`path: 'gpu'`: the container read back to the host), chunks of each build's default or
 *     of `--chunk-bytes` / `--baseline-chunk-bytes` (the baseline may be this build's dist/, to
 *     weigh a chunk size); the CPU path's container of the same array (decoder gpu) is sized
 *     beside both (`cpuBytes`: #45's "ratio within 1 % of the CPU path").
 *
 * Usage: node bench/gpu-codec-ab.mjs --baseline DIR [--mib 4,64] [--rounds 15] [--files a,b]
 *                                    [--ops compress,decompress] [--workers 16] [--out DIR]
 *                                    [--decoder gpu|cpu] [--baseline-decoder gpu|cpu] [--shape]
 *                                    [--chunk-bytes N] [--baseline-chunk-bytes N] [--error-bound REL]
 * --ops: any of decompress, decompress-device, compress. --shape: the CPU path's containers of
 * whole rows of the array's shape (bench/corpus/index.json; predicted chunks). --error-bound: the
 * lossy mode (f32 and f64 files) in every compress, the bound REL times the range of the array's
 * finite values.
 * DIR: another build's dist/ (e.g. from a git worktree at the baseline commit). Writes
 * bench/results/<machine>/gpu-codec-ab.json (the machine is the GPU's): per file, size and op the
 * medians of both builds' wall clock (ms), GB/s (of output for decompress, of input for compress),
 * and this build's time as a ratio of the baseline's.
 */
import os from 'node:os';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import { dataFiles, finiteRange, repeatedArray } from './lib/files.mjs';
import { machineInfo, median, ROOT as root, writeResults } from './lib/results.mjs';

const { values: args } = parseArgs({
  options: {
    baseline: { type: 'string' },
    mib: { type: 'string' },
    rounds: { type: 'string' },
    files: { type: 'string' },
    workers: { type: 'string' },
    out: { type: 'string' },
    quick: { type: 'boolean' },
    ops: { type: 'string' },
    decoder: { type: 'string' },
    'baseline-decoder': { type: 'string' },
    shape: { type: 'boolean' },
    'chunk-bytes': { type: 'string' },
    'baseline-chunk-bytes': { type: 'string' },
    'error-bound': { type: 'string' },
  },
});
if (args.baseline === undefined) throw new Error('--baseline DIR (a build of parle: its dist/) is required');
const quick = args.quick === true;
const MIBS = (args.mib ?? (quick ? '1' : '4,64')).split(',').map(Number);
const ROUNDS = Number(args.rounds ?? (quick ? 3 : 15));
const workers = Number(args.workers ?? Math.min(16, os.cpus().length));
const OPS = (args.ops ?? 'decompress,compress').split(',');
const DECODER = args.decoder ?? 'gpu';
/** --baseline-decoder: the baseline's containers laid out for that decoder too (a baseline that has the option); default: its defaults. */
const BASELINE_DECODER = args['baseline-decoder'] === undefined ? {} : { decoder: args['baseline-decoder'] };
/** --chunk-bytes, --baseline-chunk-bytes: the compress op's chunk size a build (default: the build's own). */
const chunkOption = (name) => (args[name] === undefined ? {} : { chunkBytes: Number(args[name]) });
const CHUNKS = { current: chunkOption('chunk-bytes'), baseline: chunkOption('baseline-chunk-bytes') };
const load = (dist) => import(pathToFileURL(join(dist, 'node/index.js')).href);
const current = await load(join(root, 'dist'));
const { compressBound } = current;
const engines = {
  current: await current.createEngine({ workers, gpu: 'require', calibration: 'skip' }),
  baseline: await (await load(resolve(args.baseline))).createEngine({ workers, gpu: 'require', calibration: 'skip' }),
};
/** Median wall ms of `call(which)` for both builds, interleaved (after 3 calls each). */
async function ab(call) {
  for (let i = 0; i < 3; i++) for (const which of ['current', 'baseline']) await call(which);
  const times = { current: [], baseline: [] };
  for (let r = 0; r < ROUNDS; r++) {
    for (const which of r % 2 === 0 ? ['current', 'baseline'] : ['baseline', 'current']) {
      const t0 = performance.now();
      await call(which);
      times[which].push(performance.now() - t0);
    }
  }
  return { current: median(times.current), baseline: median(times.baseline) };
}

const rows = [];
for (const file of dataFiles({ samples: [], files: args.files })) {
  const raw = readFileSync(file.path);
  for (const mib of MIBS) {
    // the file repeated (or cut) to `mib` MiB; --shape: whole rows of its shape, which the CPU
    // path's containers record (predicted chunks, stage 7)
    const { host, shaped: shape } = repeatedArray(raw, mib, file, args.shape === true);
    const shaped =
      args['error-bound'] === undefined ? shape : { ...shape, errorBound: { abs: Number(args['error-bound']) * finiteRange(host) } };
    const B = host.byteLength;
    for (const op of OPS) {
      let ms;
      let containerBytes;
      let baselineBytes;
      let cpuBytes;
      if (op === 'decompress' || op === 'decompress-device') {
        const containers = {
          current: await engines.current.compress(host, { path: 'cpu', decoder: DECODER, ...shaped }),
          baseline: await engines.baseline.compress(host, { path: 'cpu', ...BASELINE_DECODER, ...shaped }),
        };
        containerBytes = containers.current.length;
        baselineBytes = containers.baseline.length;
        if (op === 'decompress') {
          ms = await ab(async (which) => (await engines[which].decompress(containers[which], { path: 'gpu', to: 'device' })).destroy());
        } else {
          const resident = {
            current: await engines.current.upload(containers.current),
            baseline: await engines.baseline.upload(containers.baseline),
          };
          ms = await ab(async (which) => (await engines[which].decompress(resident[which])).destroy());
          for (const d of Object.values(resident)) d.destroy();
        }
      } else if (op === 'compress') {
        const inputs = { current: await engines.current.upload(host), baseline: await engines.baseline.upload(host) };
        // a bound for chunks down to 1 KiB
        const outs = { current: new Uint8Array(compressBound(host.length, file.type, 1024)), baseline: null };
        outs.current.fill(1);
        outs.baseline = outs.current.slice();
        const options = (which) => ({ path: 'gpu', ...shaped, ...CHUNKS[which] });
        containerBytes = (await engines.current.compress(inputs.current, options('current'))).length;
        baselineBytes = (await engines.baseline.compress(inputs.baseline, options('baseline'))).length;
        cpuBytes = (await engines.current.compress(host, { path: 'cpu', decoder: 'gpu', ...shaped })).length;
        ms = await ab((which) => engines[which].compress(inputs[which], { ...options(which), out: outs[which] }));
        for (const d of Object.values(inputs)) d.destroy();
      } else throw new Error(`--ops: unknown op ${op} (decompress, decompress-device, compress)`);
      const row = { file: file.name, mib, op, shape: shaped.shape, bytes: B, containerBytes, baselineBytes, cpuBytes, ...CHUNKS };
      for (const which of ['current', 'baseline']) row[which] = { wallMs: ms[which], gbps: B / ms[which] / 1e6 };
      row.ratio = ms.current / ms.baseline;
      rows.push(row);
      console.log(
        `${file.name.padEnd(26)} ${String(mib).padStart(4)} MiB ${op.padEnd(10)} current ${ms.current.toFixed(2).padStart(7)} ms ` +
          `(${row.current.gbps.toFixed(2)} GB/s)  baseline ${ms.baseline.toFixed(2).padStart(7)} ms  ratio ${row.ratio.toFixed(2)}  ` +
          `size ${containerBytes} / ${baselineBytes}${cpuBytes === undefined ? '' : ` (the CPU path's ${cpuBytes})`}`,
      );
    }
  }
}
for (const e of Object.values(engines)) await e.destroy();

writeResults(
  {
    'gpu-codec-ab.json': {
      machine: machineInfo(),
      baseline: args.baseline,
      workers,
      rounds: ROUNDS,
      unit: 'wall ms of the call (median of rounds); ratio = current / baseline',
      rows,
    },
  },
  { quick, out: args.out, gpu: true },
);
