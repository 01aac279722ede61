#!/usr/bin/env node
// Streaming .parle files larger than memory with bounded memory: compresses and decompresses a
// file of SIZE bytes (default 4 GiB; u8 with mean run 16) with the `parle` CLI in a child
// process, and reports each child's peak RSS (from /usr/bin/time -v when present, else the
// child's own process.resourceUsage) against the target: under 300 MiB.
// Writes bench/results/<machine>/format-stream.json.
//
//   node bench/format-stream.mjs [--size-gib 4] [--quick] [--keep] [--out DIR]      (--quick: 0.25 GiB)
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, mkdirSync, openSync, closeSync, writeSync, statSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { machineInfo, ROOT as root, writeResults } from './lib/results.mjs';

const { values: args } = parseArgs({
  options: {
    'size-gib': { type: 'string' },
    quick: { type: 'boolean', default: false },
    keep: { type: 'boolean', default: false },
    out: { type: 'string' },
  },
});
const sizeGiB = Number(args['size-gib'] ?? (args.quick ? 0.25 : 4));
if (!(sizeGiB > 0)) throw new Error('--size-gib must be a positive number');
const totalBytes = Math.round(sizeGiB * 2 ** 30);
const TARGET_RSS_MIB = 300;
const bin = join(root, 'bin/parle.mjs');
const dir = join(tmpdir(), `parle-stream-${process.pid}`);
mkdirSync(dir, { recursive: true });
const raw = join(dir, 'input.u8');
const packed = `${raw}.parle`;
const back = join(dir, 'output.u8');

// Input: runs of uniform length 1..31 (mean 16), written in 64 MiB pieces, each piece varied.
console.log(`writing ${sizeGiB} GiB of u8 runs to ${raw} ...`);
{
  const piece = new Uint8Array(64 << 20);
  let seed = 12345;
  const next = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0);
  let i = 0;
  let value = 0;
  while (i < piece.length) {
    const len = 1 + (next() % 31);
    value = (value + 1 + (next() % 254)) & 0xff;
    piece.fill(value, i, i + len);
    i += len;
  }
  const fd = openSync(raw, 'w');
  for (let written = 0, k = 0; written < totalBytes; k++) {
    const n = Math.min(piece.length, totalBytes - written);
    piece[k % piece.length] ^= 0x5a; // each piece differs a little
    writeSync(fd, piece, 0, n);
    written += n;
  }
  closeSync(fd);
}

const haveTime = existsSync('/usr/bin/time');
function run(label, cliArgs) {
  const started = performance.now();
  const cmd = haveTime ? '/usr/bin/time' : process.execPath;
  const argv = haveTime ? ['-v', process.execPath, bin, ...cliArgs] : [bin, ...cliArgs];
  const result = spawnSync(cmd, argv, { encoding: 'utf8', maxBuffer: 1 << 24 });
  const seconds = (performance.now() - started) / 1000;
  if (result.status !== 0) throw new Error(`${label} failed (${result.status}): ${result.stderr}`);
  const match = /Maximum resident set size \(kbytes\): (\d+)/.exec(result.stderr ?? '');
  const peakRssMiB = match ? Number(match[1]) / 1024 : NaN;
  return { label, seconds, peakRssMiB, throughputGBps: totalBytes / seconds / 1e9 };
}

async function sha256(path) {
  const hash = createHash('sha256');
  for await (const piece of createReadStream(path, { highWaterMark: 1 << 22 })) hash.update(piece);
  return hash.digest('hex');
}

const compress = run('compress', ['compress', raw, packed, '--force']);
const decompress = run('decompress', ['decompress', packed, back, '--force']);
const packedBytes = statSync(packed).size;
const same = (await sha256(raw)) === (await sha256(back));

const rows = [compress, decompress].map((r) => ({
  ...r,
  pass: r.peakRssMiB < TARGET_RSS_MIB,
}));
console.log('');
console.log(`input ${sizeGiB} GiB u8, mean run 16 -> ${(packedBytes / 2 ** 20).toFixed(1)} MiB (ratio ${(totalBytes / packedBytes).toFixed(2)}); round trip ${same ? 'equal' : 'DIFFERS'}`);
console.log('step        seconds   GB/s   peak RSS MiB   target < 300 MiB');
for (const r of rows) {
  console.log(
    `${r.label.padEnd(10)}  ${r.seconds.toFixed(1).padStart(7)}  ${r.throughputGBps.toFixed(2).padStart(5)}  ${r.peakRssMiB.toFixed(0).padStart(13)}   ${r.pass ? 'PASS' : 'MISS'}`,
  );
}

writeResults(
  {
    'format-stream.json': {
      machine: machineInfo(),
      input: { bytes: totalBytes, type: 'u8', meanRun: 16 },
      packedBytes,
      roundTripEqual: same,
      targetPeakRssMiB: TARGET_RSS_MIB,
      steps: rows,
    },
  },
  { quick: args.quick, out: args.out },
);
if (!args.keep) rmSync(dir, { recursive: true, force: true });
if (!same || rows.some((r) => !r.pass)) process.exitCode = 1;
