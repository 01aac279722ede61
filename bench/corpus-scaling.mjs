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
 * corpus-scaling.json to --out (default bench/results/).
 *   node bench/corpus-scaling.mjs [--quick] [--workers 1,4,16] [--mib 64] [--out DIR]
 */
import os from 'node:os';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { createEngine, compressBound } from '../dist/node/index.js';
import { outArg, outputDir } from './out-dir.mjs';
import { CTORS, timeCalls } from './browser/measure.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
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
const cores = os.cpus().length;
const workerCounts = (args.workers ?? [1, 4, 16].join(',')).split(',').map(Number).filter((w) => w <= cores);
const MIN_BYTES = Number(args.mib ?? (quick ? 8 : 64)) << 20;
const REPS = quick ? 3 : 7;

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
/** Median ms of REPS calls of `fn` after one warm-up (the timing module bench/browser.mjs shares with its page). */
const timeMs = async (fn) => (await timeCalls(fn, { minRuns: REPS, minMs: 0, warmups: 1 })).medianMs;

const index = JSON.parse(readFileSync(join(root, 'bench/corpus/index.json'), 'utf8'));
const files = index
  .filter((e) => args.files === undefined || args.files.split(',').some((f) => e.file.startsWith(f)))
  .filter((e) => {
    const ok = existsSync(join(root, 'bench/corpus/data', e.file));
    if (!ok) console.warn(`missing bench/corpus/data/${e.file}: run bench/corpus/fetch.sh (skipped)`);
    return ok;
  });

/** The file's bytes repeated (the last copy cut at an element) to at least MIN_BYTES. */
function tiled(entry) {
  const raw = readFileSync(join(root, 'bench/corpus/data', entry.file));
  const size = CTORS[entry.file.split('.').pop()].BYTES_PER_ELEMENT;
  const copies = Math.ceil(MIN_BYTES / raw.length);
  const out = new Uint8Array(Math.floor((copies * raw.length) / size) * size);
  for (let at = 0; at < out.length; at += raw.length) out.set(raw.subarray(0, Math.min(raw.length, out.length - at)), at);
  return out;
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
console.log(`machine: ${os.cpus()[0].model}, ${cores} cores, node ${process.version}; memcpy ${memcpy.toFixed(1)} GB/s one thread`);

const rows = [];
for (const w of workerCounts) {
  const engine = await createEngine({ workers: w, gpu: 'off', calibration: 'skip' });
  for (const entry of files) {
    const type = entry.file.split('.').pop();
    const Ctor = CTORS[type];
    const bytes = tiled(entry);
    const host = new Ctor(bytes.buffer, 0, bytes.length / Ctor.BYTES_PER_ELEMENT);
    const B = bytes.length;
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
    if (Buffer.compare(Buffer.from(result.buffer, result.byteOffset, B), Buffer.from(bytes)) !== 0) throw new Error(`${entry.file}: round trip`);
    // host: plain arrays, reused outputs
    const out = new Ctor(host.length);
    const cHost = await timeMs(() => engine.compress(host, { out: bound }));
    const dHost = await timeMs(() => engine.decompress(packed, { out }));
    for (const a of [input, container, result, residentBound]) engine.free(a);
    const row = {
      file: entry.file,
      bytes: B,
      workers: w,
      ratio: B / packed.length,
      resident: { compress: B / cRes / 1e6, decompress: B / dRes / 1e6 },
      host: { compress: B / cHost / 1e6, decompress: B / dHost / 1e6 },
    };
    rows.push(row);
    console.log(
      `${entry.file.padEnd(26)} ${String(w).padStart(2)}w ratio ${row.ratio.toFixed(2).padStart(6)}  resident c ${row.resident.compress.toFixed(2).padStart(6)} d ${row.resident.decompress.toFixed(2).padStart(6)}  host c ${row.host.compress.toFixed(2).padStart(6)} d ${row.host.decompress.toFixed(2).padStart(6)} GB/s`,
    );
  }
  await engine.destroy();
}

const checks = [];
const lo = Math.min(...workerCounts);
const hi = Math.max(...workerCounts);
if (hi > lo) {
  for (const entry of files) {
    const a = rows.find((r) => r.file === entry.file && r.workers === lo);
    const b = rows.find((r) => r.file === entry.file && r.workers === hi);
    for (const dir of ['compress', 'decompress']) {
      const x = b.resident[dir] / a.resident[dir];
      checks.push({ what: `${entry.file}: ${dir} ${hi} vs ${lo} workers (resident) >= 12x`, pass: x >= 12, value: `${x.toFixed(1)}x` });
    }
  }
  const top = rows.filter((r) => r.workers === hi);
  const mc = median(top.map((r) => r.resident.compress));
  const md = median(top.map((r) => r.resident.decompress));
  checks.push({ what: `median file: compress ${hi} workers >= 8 GB/s`, pass: mc >= 8, value: `${mc.toFixed(2)} GB/s` });
  checks.push({ what: `median file: decompress ${hi} workers >= 20 GB/s`, pass: md >= 20, value: `${md.toFixed(2)} GB/s` });
}
for (const c of checks) console.log(`${c.pass ? 'PASS' : 'MISS'} ${c.what}: ${c.value}`);
const dir = outputDir({ out: outArg() ?? args.out, quick, committed: 'bench/results' });
const machine = { cpu: os.cpus()[0].model, cores, node: process.version, memcpyGBps: memcpy, date: new Date().toISOString() };
writeFileSync(join(dir, 'corpus-scaling.json'), JSON.stringify({ machine, minBytes: MIN_BYTES, rows, checks }, null, 2) + '\n');
console.log(`wrote ${join(dir, 'corpus-scaling.json')}`);
