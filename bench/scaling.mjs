#!/usr/bin/env node
/**
 * The main job on every core (issue 13): compress and decompress of 256 MiB of u8 with mean run
 * 16 from 1 to 16 workers (as many as the machine has), CPU only, beside the host's
 * single-thread memcpy measured in the same run:
 *   - resident: input, container and result in the engine's memory (`engine.alloc`): chunks are
 *     read and written in place by the workers;
 *   - host: plain arrays (one copy in, one copy out), decompress into a reused `out`;
 *   - 64 concurrent `compress` calls of 16 MiB host arrays (the memory-aware queue);
 *   - RSS over 10 repeated decompresses into the same `out` (nothing allocated).
 * Medians of REPS runs after a warm-up. Writes $OUT/scaling.json (or bench/results/scaling-local.json).
 * Usage: node bench/scaling.mjs [--quick]
 */
import os from 'node:os';
import { writeFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { rng as rngU32 } from './suite/data.mjs';
import { outArg, outputDir } from './out-dir.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { createEngine } = await import(join(root, 'dist/node/index.js'));
const quick = process.argv.includes('--quick');
const MiB = 1 << 20;
const N = (quick ? 32 : 256) * MiB;
const REPS = quick ? 3 : 5;
const cores = os.cpus().length;
const workerCounts = [1, 2, 4, 8, 16].filter((w) => w <= cores);

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[s.length >> 1];
}
async function time(fn) {
  await fn();
  const ts = [];
  for (let i = 0; i < REPS; i++) {
    const t0 = performance.now();
    await fn();
    ts.push(performance.now() - t0);
  }
  return median(ts);
}
function fillRuns(a, seed) {
  const next = rngU32(seed);
  for (let i = 0; i < a.length; ) {
    const len = 1 + (next() % 31);
    a.fill(next() & 255, i, Math.min(a.length, i + len));
    i += len;
  }
  return a;
}
const gbps = (bytes, ms) => bytes / ms / 1e6;

const results = { machine: { cpu: os.cpus()[0]?.model, cores, node: process.version }, bytes: N, rows: [] };
// the host's single-thread memcpy between paged-in arrays
{
  const a = fillRuns(new Uint8Array(N), 1);
  const b = new Uint8Array(N);
  b.set(a);
  const ms = await time(async () => b.set(a));
  results.memcpyGBps = gbps(N, ms);
  console.log(`memcpy, one thread: ${results.memcpyGBps.toFixed(2)} GB/s`);
}
const hostInput = fillRuns(new Uint8Array(N), 2);
for (const workers of workerCounts) {
  const engine = await createEngine({ workers, gpu: 'off', calibration: 'skip' });
  try {
    const input = engine.alloc('u8', N);
    input.set(hostInput);
    const packed = await engine.compress(input);
    const container = engine.alloc('u8', packed.length);
    container.set(packed);
    const out = engine.alloc('u8', N);
    const residentCompress = await time(() => engine.compress(input));
    const residentDecompress = await time(() => engine.decompress(container, { out }));
    if (Buffer.compare(out, hostInput) !== 0) throw new Error('resident round trip differs');
    const hostOut = new Uint8Array(N);
    const hostCompress = await time(() => engine.compress(hostInput));
    const hostDecompress = await time(() => engine.decompress(packed, { out: hostOut }));
    if (Buffer.compare(hostOut, hostInput) !== 0) throw new Error('host round trip differs');
    const row = {
      workers,
      resident: { compressMs: residentCompress, decompressMs: residentDecompress },
      host: { compressMs: hostCompress, decompressMs: hostDecompress },
    };
    results.rows.push(row);
    console.log(
      `workers ${String(workers).padStart(2)}: resident compress ${gbps(N, residentCompress).toFixed(2)} GB/s, decompress ${gbps(N, residentDecompress).toFixed(2)} GB/s; ` +
        `host compress ${gbps(N, hostCompress).toFixed(2)} GB/s, decompress into out ${gbps(N, hostDecompress).toFixed(2)} GB/s`,
    );
    if (workers === workerCounts[workerCounts.length - 1]) {
      // RSS over repeated decompresses into the same out
      const before = process.memoryUsage().rss;
      for (let i = 0; i < 10; i++) await engine.decompress(packed, { out: hostOut });
      results.rssGrowthBytes = process.memoryUsage().rss - before;
      console.log(`RSS growth over 10 decompresses into one out: ${(results.rssGrowthBytes / MiB).toFixed(1)} MiB`);
      // 64 concurrent compress calls of 16 MiB host arrays
      const arrays = Array.from({ length: 64 }, (_, i) => fillRuns(new Uint8Array(16 * MiB), 100 + i));
      const t0 = performance.now();
      const settled = await Promise.allSettled(arrays.map((a) => engine.compress(a)));
      const ms = performance.now() - t0;
      const ok = settled.filter((s) => s.status === 'fulfilled').length;
      results.concurrent = { calls: 64, bytesEach: 16 * MiB, ok, ms, gbps: gbps(64 * 16 * MiB, ms), errors: settled.filter((s) => s.status === 'rejected').map((s) => String(s.reason?.code ?? s.reason)).slice(0, 3) };
      console.log(`64 concurrent compress calls of 16 MiB: ${ok} of 64 succeeded, ${results.concurrent.gbps.toFixed(2)} GB/s`);
    }
  } finally {
    await engine.destroy();
  }
}
const first = results.rows[0];
const last = results.rows[results.rows.length - 1];
results.speedup = {
  workers: `${first.workers} -> ${last.workers}`,
  residentCompress: first.resident.compressMs / last.resident.compressMs,
  residentDecompress: first.resident.decompressMs / last.resident.decompressMs,
};
console.log(
  `speed-up ${results.speedup.workers} workers: resident compress ${results.speedup.residentCompress.toFixed(2)}x, decompress ${results.speedup.residentDecompress.toFixed(2)}x; ` +
    `host (one copy each way) at ${last.workers}: compress ${(gbps(N, last.host.compressMs) / results.memcpyGBps).toFixed(2)}x, decompress ${(gbps(N, last.host.decompressMs) / results.memcpyGBps).toFixed(2)}x of memcpy`,
);
// quick runs go to bench/.quick/ unless --out says otherwise (bench/out-dir.mjs)
const outFile = process.env.OUT
  ? join(process.env.OUT, 'scaling.json')
  : join(outputDir({ out: outArg(), quick, committed: 'bench/results' }), 'scaling-local.json');
writeFileSync(outFile, JSON.stringify(results, null, 2));
console.log('wrote', outFile);
