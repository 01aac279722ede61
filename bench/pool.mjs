// The worker pool: each op with 1 worker beside the same op with 2 workers, in one run, on the
// library's public API (dist/node). Inputs live in the engine's shared memory (engine.alloc),
// so the figures are the pool's, not those of copying host arrays in and out (on this VM a
// fresh 64 MiB JS array costs ~40 ms of page faults alone). Also: the per-call overhead of a
// 1 KiB op (runs on the calling thread), and the 1 KiB op sent through a worker for comparison.
//
//   npm run build && node bench/pool.mjs [--quick] [--out DIR]
//
// Prints a table and writes bench/results/<machine>/pool.json (machine, min / median / max per figure).
import { Bench } from 'tinybench';
import { createEngine } from '../dist/node/index.js';
import { machineInfo, writeResults } from './lib/results.mjs';

const quick = process.argv.includes('--quick');
const scale = quick ? 4 : 1;
const iterations = quick ? 3 : 8;

const SIZES = { rleBytes: (256 << 20) / scale, sortKeys: (1 << 24) / scale, scanElements: (1 << 26) / scale };

function fillRuns(array, meanRun, seed) {
  let s = seed >>> 0;
  let i = 0;
  let v = 0;
  while (i < array.length) {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    const len = 1 + ((s >>> 8) % (2 * meanRun - 1)); // uniform 1 .. 2 mean - 1
    v = (v + 1 + (s % 200)) & 0xff;
    array.fill(v, i, i + len);
    i += len;
  }
}

function stats(task) {
  const l = task.result.latency;
  return { minMs: l.min, medianMs: l.p50, maxMs: l.max, samples: l.samples?.length ?? task.result.runs ?? 0 };
}

async function measure(workers) {
  const engine = await createEngine({ workers, gpu: 'off' });
  const rle = engine.alloc('u8', SIZES.rleBytes);
  fillRuns(rle, 16, 1);
  const keys = engine.alloc('u32', SIZES.sortKeys);
  for (let i = 0, s = 7; i < keys.length; i++) keys[i] = s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
  const scanIn = engine.alloc('u32', SIZES.scanElements);
  scanIn.fill(3);
  const bench = new Bench({ iterations, time: 0, warmupIterations: 1, warmupTime: 0 });
  const free = (r) => {
    if (r?.values) engine.free(r.values);
    if (r?.lengths) engine.free(r.lengths);
    else engine.free(r);
  };
  bench
    .add('rleEncode', async () => free(await engine.rleEncode(rle)))
    .add('sort', async () => free(await engine.sort(keys)))
    .add('scan', async () => free(await engine.scan(scanIn)));
  await bench.run();
  const out = Object.fromEntries(bench.tasks.map((t) => [t.name, stats(t)]));
  await engine.destroy();
  return out;
}

/** Median ms of rleEncode of `bytes` u8 on the calling thread and through a worker. */
async function roundTrip(bytes) {
  const result = {};
  for (const [where, inlineBytes] of [
    ['inline', Infinity],
    ['worker', 0],
  ]) {
    const engine = await createEngine({ workers: 2, inlineBytes: inlineBytes === Infinity ? 2 ** 40 : 0 });
    const input = new Uint8Array(bytes);
    fillRuns(input, 16, 3);
    const bench = new Bench({ time: 300, warmupTime: 50 });
    bench.add(where, async () => engine.rleEncode(input));
    await bench.run();
    result[where] = stats(bench.tasks[0]);
    await engine.destroy();
  }
  return result;
}

const one = await measure(1);
const two = await measure(2);
const call = await roundTrip(1024);

const bytesOf = { rleEncode: SIZES.rleBytes, sort: SIZES.sortKeys * 4, scan: SIZES.scanElements * 4 };
const targets = { rleEncode: 1.7, sort: 1.7, scan: 1.3 };
const rows = Object.keys(targets).map((op) => {
  const speedup = one[op].medianMs / two[op].medianMs;
  return {
    op,
    inputBytes: bytesOf[op],
    oneWorker: one[op],
    twoWorkers: two[op],
    speedup,
    target: targets[op],
    pass: speedup >= targets[op],
  };
});

const machine = machineInfo();
console.log(`worker pool, ${machine.cores} cores (${machine.cpu}), node ${machine.node}${quick ? ', --quick (1/4 sizes)' : ''}`);
console.log('op          input      1 worker ms   2 workers ms   speedup   target');
for (const r of rows) {
  console.log(
    `${r.op.padEnd(10)}  ${(r.inputBytes / 2 ** 20).toFixed(0).padStart(5)} MiB  ${r.oneWorker.medianMs.toFixed(1).padStart(11)}   ${r.twoWorkers.medianMs
      .toFixed(1)
      .padStart(12)}   ${r.speedup.toFixed(2).padStart(6)}x   >= ${r.target}x ${r.pass ? 'PASS' : 'MISS'}`,
  );
}
const overheadUs = call.inline.medianMs * 1000;
console.log(
  `per-call overhead, rleEncode of 1 KiB: median ${overheadUs.toFixed(1)} us (target <= 50 us) ${overheadUs <= 50 ? 'PASS' : 'MISS'}; through a worker ${(call.worker.medianMs * 1000).toFixed(1)} us`,
);

writeResults(
  {
    'pool.json': {
      benchmark: 'pool',
      quick,
      machine,
      note: 'inputs are engine.alloc arrays in shared memory; medians over iterations; speedup = 1-worker median / 2-worker median',
      rows,
      perCallOverhead: { op: 'rleEncode 1 KiB u8', inline: call.inline, worker: call.worker, targetUs: 50 },
    },
  },
  { quick },
);
