// A/B of two builds of parle on the corpus and the samples, in one process: this checkout's
// dist/ (B) against another checkout's (A, `--baseline DIR`, built there with `npm run build`),
// CPU path, one worker each, levels 1, 5 and 9. Rounds alternate A and B (A B B A ...) so that
// a drift of the machine (a clock, a neighbour) falls on both; each round times compress and
// decompress of every array with bench/lib/measure.mjs timeCalls. Also checks that both builds
// write the same container bytes and decode each other's containers.
//
//   node bench/ab.mjs --baseline ../parle-main [--rounds 4] [--files name,...] [--quick] [--out DIR]
//
// Prints a table of B's time over A's per array, level and direction (median of the rounds;
// below 1: B faster), and writes bench/results/<machine>/ab.json.
import { parseArgs } from 'node:util';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { dataFiles, readArray, sameBytes } from './lib/files.mjs';
import { timeCalls } from './lib/measure.mjs';
import { machineInfo, median, outArg, printTable, writeResults } from './lib/results.mjs';

const { values: args } = parseArgs({
  options: {
    baseline: { type: 'string' },
    rounds: { type: 'string', default: '4' },
    files: { type: 'string' },
    quick: { type: 'boolean', default: false },
    out: { type: 'string' },
  },
});
if (!args.baseline) {
  console.error('usage: node bench/ab.mjs --baseline DIR [--rounds N] [--files name,...] [--quick] [--out DIR]');
  process.exit(2);
}
const rounds = Math.max(2, Number(args.rounds));
const LEVELS = [1, 5, 9];
const timing = args.quick ? { minRuns: 3, minMs: 100, warmups: 1 } : { minRuns: 5, minMs: 400, warmups: 1 };

const load = async (dir) => import(pathToFileURL(join(resolve(dir), 'dist/node/index.js')).href);
const builds = {
  A: await load(args.baseline),
  B: await load(new URL('..', import.meta.url).pathname),
};
const engines = {};
for (const [name, lib] of Object.entries(builds)) {
  engines[name] = await lib.createEngine({ workers: 1, gpu: 'off', calibration: 'skip' });
}

const files = dataFiles({ corpus: !args.quick, files: args.files });
const rows = [];
const checks = [];
try {
  for (const file of files) {
    const data = readArray(file);
    for (const level of LEVELS) {
      const packed = { A: await engines.A.compress(data, { level }), B: await engines.B.compress(data, { level }) };
      const same = sameBytes(packed.A, packed.B);
      const cross = sameBytes(await engines.A.decompress(packed.B), data) && sameBytes(await engines.B.decompress(packed.A), data);
      checks.push({ file: file.name, level, sameBytes: same, crossDecode: cross });
      const times = { A: { compress: [], decompress: [] }, B: { compress: [], decompress: [] } };
      for (let r = 0; r < rounds; r++) {
        // A B, then B A: each build goes first half of the time
        for (const name of r % 2 === 0 ? ['A', 'B'] : ['B', 'A']) {
          const engine = engines[name];
          times[name].compress.push((await timeCalls(() => engine.compress(data, { level }), timing)).medianMs);
          times[name].decompress.push((await timeCalls(() => engine.decompress(packed[name]), timing)).medianMs);
        }
      }
      for (const op of ['compress', 'decompress']) {
        const a = median(times.A[op]);
        const b = median(times.B[op]);
        rows.push({ file: file.name, level, op, aMs: +a.toFixed(3), bMs: +b.toFixed(3), ratio: +(b / a).toFixed(3) });
      }
      console.error(`${file.name} level ${level}: done`);
    }
  }
} finally {
  for (const engine of Object.values(engines)) await engine.destroy();
}

printTable(
  rows.map((r) => ({ array: r.file, level: r.level, op: r.op, 'A ms': r.aMs, 'B ms': r.bMs, 'B / A': r.ratio })),
  `B (this checkout) against A (${args.baseline}): time, median of ${rounds} rounds, 1 worker`,
);
const ratios = rows.map((r) => r.ratio);
console.log(
  `B / A over all ${rows.length} cells: median ${median(ratios).toFixed(3)}, min ${Math.min(...ratios).toFixed(3)}, max ${Math.max(...ratios).toFixed(3)}`,
);
const differ = checks.filter((c) => !c.sameBytes || !c.crossDecode);
console.log(
  differ.length === 0
    ? `containers: the same bytes from both builds, each decodes the other's (${checks.length} cases)`
    : `containers differ: ${JSON.stringify(differ)}`,
);
writeResults(
  { 'ab.json': { machine: machineInfo(), baseline: args.baseline, rounds, quick: args.quick, rows, checks } },
  { quick: args.quick, out: outArg() },
);
if (differ.length > 0) process.exitCode = 1;
