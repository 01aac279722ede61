#!/usr/bin/env node
/**
 * The main job on real data on every core (issue #31's parallel targets): each array of the
 * corpus (bench/corpus/, bench/corpus/fetch.sh) repeated to at least 64 MiB, compressed and
 * decompressed at the default level on the CPU path with 1, 4, 16 workers (as many as the
 * machine has), two ways:
 *   - resident: input, container and result in the engine's memory (`engine.alloc`), so the
 *     workers read and write in place: the engine's own rate;
 *   - host: plain arrays as a caller has them (one copy in and one copy out by the calling
 *     thread), the container and the result into reused `out` arrays.
 * Beside them the host's single-thread memcpy of the same bytes, measured in the same run.
 * Medians of REPS calls after a warm-up. Prints a table and the targets (16 vs 1 worker >= 12x
 * both ways, compress >= 8 GB/s, decompress >= 20 GB/s: resident, median file); writes
 * bench/results/<machine>/corpus-scaling.json.
 *   node bench/corpus-scaling.mjs [--quick] [--workers 1,4,16] [--mib 64] [--files a,b] [--out DIR]
 */
import os from 'node:os';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { createEngine, compressBound } from '../dist/node/index.js';
import { dataFiles, repeatTo, sameBytes } from './lib/files.mjs';
import { timeCalls } from './lib/measure.mjs';
import { machineInfo, median, writeResults } from './lib/results.mjs';

const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean' },
    workers: { type: 'string' },
    mib: { type: 'string' },
    out: { type: 'string' },
    files: { type: 'string' },
  },
});
const quick = args.quick === true;
const cores = os.availableParallelism();
const workerCounts = (args.workers ?? [1, 4, 16].join(',')).split(',').map(Number).filter((w) => w <= cores);
const MIN_BYTES = Number(args.mib ?? (quick ? 8 : 64)) << 20;
const REPS = quick ? 3 : 7;

/** Median ms of REPS calls of `fn` after one warm-up (bench/lib/measure.mjs). */
const timeMs = async (fn) => (await timeCalls(fn, { minRuns: REPS, minMs: 0, warmups: 1 })).medianMs;

const files = dataFiles({ samples: [], files: args.files });

/** The file's bytes repeated (the last copy cut at an element) to at least MIN_BYTES. */
function tiled(file) {
  const raw = readFileSync(file.path);
  return repeatTo(raw, Math.ceil(MIN_BYTES / raw.length) * raw.length, file.Ctor);
}

const memcpy = (() => {
  const a = new Uint8Array(MIN_BYTES).fill(1);
  const b = new Uint8Array(MIN_BYTES);
  b.set(a);
  const t = [];
  for (let i = 0; i < 5; i++) {
    const t0 = performance.now();
    b.set(a);
    t.push(performance.now() - t0);
  }
  return MIN_BYTES / median(t) / 1e6;
})();
const machine = machineInfo({ memcpyGBps: memcpy });
console.log(`machine: ${machine.cpu}, ${cores} cores, node ${machine.node}; memcpy ${memcpy.toFixed(1)} GB/s one thread`);

const rows = [];
for (const w of workerCounts) {
  const engine = await createEngine({ workers: w, gpu: 'off', calibration: 'skip' });
  for (const file of files) {
    const { type, Ctor } = file;
    const host = tiled(file);
    const B = host.byteLength;
    // resident: everything in the engine's memory
    const input = engine.alloc(type, host.length);
    input.set(host);
    const packed = await engine.compress(input);
    const container = engine.alloc('u8', packed.length);
    container.set(packed);
    const result = engine.alloc(type, host.length);
    const bound = new Uint8Array(compressBound(host.length, type));
    const residentBound = engine.alloc('u8', bound.length);
    const cRes = await timeMs(() => engine.compress(input, { out: residentBound }));
    const dRes = await timeMs(() => engine.decompress(container, { out: result }));
    if (!sameBytes(result, host)) throw new Error(`${file.name}: round trip`);
    // host: plain arrays, reused outputs
    const out = new Ctor(host.length);
    const cHost = await timeMs(() => engine.compress(host, { out: bound }));
    const dHost = await timeMs(() => engine.decompress(packed, { out }));
    for (const a of [input, container, result, residentBound]) engine.free(a);
    const row = {
      file: file.name,
      bytes: B,
      workers: w,
      ratio: B / packed.length,
      resident: { compress: B / cRes / 1e6, decompress: B / dRes / 1e6 },
      host: { compress: B / cHost / 1e6, decompress: B / dHost / 1e6 },
    };
    rows.push(row);
    console.log(
      `${file.name.padEnd(26)} ${String(w).padStart(2)}w ratio ${row.ratio.toFixed(2).padStart(6)}  resident c ${row.resident.compress.toFixed(2).padStart(6)} d ${row.resident.decompress.toFixed(2).padStart(6)}  host c ${row.host.compress.toFixed(2).padStart(6)} d ${row.host.decompress.toFixed(2).padStart(6)} GB/s`,
    );
  }
  await engine.destroy();
}

const checks = [];
const lo = Math.min(...workerCounts);
const hi = Math.max(...workerCounts);
if (hi > lo) {
  for (const { name } of files) {
    const a = rows.find((r) => r.file === name && r.workers === lo);
    const b = rows.find((r) => r.file === name && r.workers === hi);
    for (const dir of ['compress', 'decompress']) {
      const x = b.resident[dir] / a.resident[dir];
      checks.push({ what: `${name}: ${dir} ${hi} vs ${lo} workers (resident) >= 12x`, pass: x >= 12, value: `${x.toFixed(1)}x` });
    }
  }
  const top = rows.filter((r) => r.workers === hi);
  const mc = median(top.map((r) => r.resident.compress));
  const md = median(top.map((r) => r.resident.decompress));
  checks.push({ what: `median file: compress ${hi} workers >= 8 GB/s`, pass: mc >= 8, value: `${mc.toFixed(2)} GB/s` });
  checks.push({ what: `median file: decompress ${hi} workers >= 20 GB/s`, pass: md >= 20, value: `${md.toFixed(2)} GB/s` });
}
for (const c of checks) console.log(`${c.pass ? 'PASS' : 'MISS'} ${c.what}: ${c.value}`);
writeResults({ 'corpus-scaling.json': { machine, minBytes: MIN_BYTES, rows, checks } }, { quick, out: args.out });
