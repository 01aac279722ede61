// Zarr v3 arrays through zarrita.js (issue #46): real arrays written and read with the `parle`
// codec (parle-codec/zarr, the engine's workers) and with zarrita's own numcodecs codecs (zstd
// level 1, blosc with zstd and byte shuffle; zarrita's gzip does not encode), same chunking, in
// one run. For each: the store's size ratio, the time to write the whole array, to read it whole,
// and to read a sub-region of a few chunks (medians, MB/s of the array's raw bytes). parle's
// stores are read two ways: zarrita's get, and parle's createGet (the workers read each chunk's
// file, decode it and write it into its place: one message a worker for a whole read).
//
// The arrays as the targets state them: at least 64 MiB (a corpus array stacked along its
// first axis, as a series of volumes or tiles is, until it reaches --min-mib), chunks of about
// --chunk-mib (whole rows of the axes after the first). Every codec sees the same chunks.
//
// Targets (issue #46, the 2-core VM, 2 workers): a whole read >= 3x zarrita with numcodecs zstd
// at >= its ratio; writing >= 3x numcodecs zstd level 1; a sub-region no slower than the fastest.
//
// Usage: node bench/zarr.mjs [--workers 2] [--chunk-mib 1] [--min-mib 64] [--quick] [--out DIR];
// needs the corpus (bash bench/corpus/fetch.sh) and `npm run build`. Writes zarr.json and zarr.md
// into bench/results/<machine>/ (quick: bench/.quick/).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import * as zarr from 'zarrita';
import { FileSystemStore } from '@zarrita/storage';
import { createEngine } from '../dist/node/index.js';
import { createGet, register } from '../dist/node/zarr.js';
import { timeCalls } from './lib/measure.mjs';
import { machineInfo, ROOT, writeResults } from './lib/results.mjs';
import { codecsOf, stackedArray, storeBytes, ZARR_CODECS, zarrFiles } from './lib/zarr-arrays.mjs';

const { values: args } = parseArgs({
  options: {
    workers: { type: 'string', default: '2' },
    'chunk-mib': { type: 'string', default: '1' },
    'min-mib': { type: 'string', default: '64' },
    files: { type: 'string' },
    quick: { type: 'boolean' },
    out: { type: 'string' },
  },
});
const workers = Number(args.workers);
const chunkBytes = Number(args['chunk-mib']) * 2 ** 20;
const minBytes = Number(args['min-mib']) * 2 ** 20;
const engine = await createEngine({ workers, gpu: 'off', calibration: 'skip' });
register(zarr.registry, { engine });
// zarrita's get with each chunk decoded by a worker into its place in the result (parle-codec/zarr)
const parleGet = createGet(zarr, { engine });

const files = zarrFiles({ files: args.files, quick: args.quick });

const rows = [];
const dir = mkdtempSync(join(tmpdir(), 'parle-zarr-bench-'));
try {
  for (const file of files) {
    const { data, shape, stride, chunkShape, dtype, region: bounds } = stackedArray(file, { minBytes, chunkBytes });
    const bytes = data.byteLength;
    const region = bounds.map(([start, stop]) => zarr.slice(start, stop));
    for (const name of Object.keys(ZARR_CODECS)) {
      const codecList = codecsOf(name, data.BYTES_PER_ELEMENT);
      let n = 0;
      const fresh = async () => {
        const path = join(dir, `${file.name}-${name.replace(/\W+/g, '-')}-${n++}`);
        const store = new FileSystemStore(path);
        const arr = await zarr.create(zarr.root(store).resolve('a'), { shape, chunkShape, dtype, codecs: codecList, fillValue: 0 });
        return { path, arr };
      };
      const write = await timeCalls(
        async () => {
          const { path, arr } = await fresh();
          await zarr.set(arr, null, { data, shape, stride });
          rmSync(path, { recursive: true, force: true });
        },
        { minRuns: args.quick ? 2 : 3, minMs: 0 },
      );
      const { path, arr } = await fresh();
      await zarr.set(arr, null, { data, shape, stride });
      const stored = storeBytes(path);
      const back = await zarr.get(arr);
      const same =
        Buffer.compare(Buffer.from(back.data.buffer, back.data.byteOffset, back.data.byteLength), Buffer.from(data.buffer)) === 0;
      if (!same) throw new Error(`${file.name} ${name}: the read differs from the written array`);
      const read = await timeCalls(() => zarr.get(arr), { minRuns: args.quick ? 2 : 5, minMs: 0 });
      const sub = await timeCalls(() => zarr.get(arr, region), { minRuns: args.quick ? 3 : 9, minMs: 0 });
      // the parle codec's arrays read again through createGet (the workers place the chunks)
      let placed;
      if (name.startsWith('parle')) {
        const got = await parleGet(arr);
        if (Buffer.compare(Buffer.from(got.data.buffer, got.data.byteOffset, got.data.byteLength), Buffer.from(data.buffer)) !== 0)
          throw new Error(`${file.name} ${name}: createGet's read differs from the written array`);
        placed = {
          read: await timeCalls(() => parleGet(arr), { minRuns: args.quick ? 2 : 5, minMs: 0 }),
          sub: await timeCalls(() => parleGet(arr, region), { minRuns: args.quick ? 3 : 9, minMs: 0 }),
        };
      }
      rmSync(path, { recursive: true, force: true });
      const row = {
        file: file.name,
        codec: name,
        shape,
        mib: bytes / 2 ** 20,
        chunkShape,
        ratio: bytes / stored,
        writeMBps: bytes / write.medianMs / 1e3,
        readMBps: bytes / read.medianMs / 1e3,
        regionMs: sub.medianMs,
      };
      const more = placed
        ? [{ ...row, codec: `${name}, createGet`, readMBps: bytes / placed.read.medianMs / 1e3, regionMs: placed.sub.medianMs }]
        : [];
      for (const r of [row, ...more]) {
        rows.push(r);
        console.log(
          `${file.name.padEnd(26)} ${r.codec.padEnd(32)} ratio ${r.ratio.toFixed(3).padStart(7)}  write ${r.writeMBps.toFixed(0).padStart(5)}  read ${r.readMBps.toFixed(0).padStart(5)} MB/s  region ${r.regionMs.toFixed(1).padStart(6)} ms`,
        );
      }
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
  await engine.destroy();
}

// PASS / MISS against the targets, per file
const checks = [];
for (const file of new Set(rows.map((r) => r.file))) {
  const z = rows.find((r) => r.file === file && r.codec === 'numcodecs zstd 1');
  const peers = rows.filter((r) => r.file === file && r.codec.startsWith('numcodecs'));
  const fastestRegion = Math.min(...peers.map((r) => r.regionMs));
  for (const p of rows.filter((r) => r.file === file && r.codec.startsWith('parle'))) {
    checks.push([
      `${file}, ${p.codec}: whole read >= 3x numcodecs zstd at >= its ratio`,
      p.readMBps >= 3 * z.readMBps && p.ratio >= z.ratio,
      `${(p.readMBps / z.readMBps).toFixed(2)}x, ratio ${p.ratio.toFixed(2)} vs ${z.ratio.toFixed(2)}`,
    ]);
    checks.push([
      `${file}, ${p.codec}: write >= 3x numcodecs zstd 1`,
      p.writeMBps >= 3 * z.writeMBps,
      `${(p.writeMBps / z.writeMBps).toFixed(2)}x`,
    ]);
    checks.push([
      `${file}, ${p.codec}: sub-region no slower than the fastest peer`,
      p.regionMs <= fastestRegion,
      `${p.regionMs.toFixed(1)} vs ${fastestRegion.toFixed(1)} ms`,
    ]);
  }
}
for (const [what, ok, detail] of checks) console.log(`${ok ? 'PASS' : 'MISS'} ${what}: ${detail}`);

const machine = machineInfo({ workers });
const md = [
  '# Zarr arrays through zarrita.js: the parle codec against numcodecs',
  '',
  `${machine.cpu}, ${machine.cores} cores, Node ${machine.node}, ${machine.date.slice(0, 10)}, commit ${machine.commit}; parle on ${workers} workers; zarrita ${JSON.parse(readFileSync(join(ROOT, 'node_modules/zarrita/package.json'), 'utf8')).version}, a FileSystemStore in the temporary directory. MB/s of the array's raw bytes, medians. Each array is a corpus array stacked along its first axis to at least ${args['min-mib']} MiB; chunks of about ${args['chunk-mib']} MiB; region: two chunks' rows, the middle half of the other axes.`,
  '',
  '| file | shape | codec | chunk shape | ratio | write MB/s | read MB/s | region ms |',
  '| --- | --- | --- | --- | ---: | ---: | ---: | ---: |',
  ...rows.map(
    (r) =>
      `| ${r.file} | [${r.shape}] (${r.mib.toFixed(0)} MiB) | ${r.codec} | [${r.chunkShape}] | ${r.ratio.toFixed(3)} | ${r.writeMBps.toFixed(0)} | ${r.readMBps.toFixed(0)} | ${r.regionMs.toFixed(1)} |`,
  ),
  '',
  ...checks.map(([what, ok, detail]) => `- ${ok ? 'PASS' : 'MISS'} ${what}: ${detail}`),
  '',
].join('\n');
writeResults({ 'zarr.json': { machine, rows, checks }, 'zarr.md': md }, { quick: args.quick, out: args.out });
