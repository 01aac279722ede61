// Where a benchmark's results go and what they say about the machine.
//
// Results: bench/results/<machine>/<bench>.json, the latest run of each benchmark on each
// machine (git keeps the earlier ones). A --quick run writes to bench/.quick/<machine>/
// (git-ignored) instead, so a smoke run never replaces a committed figure; --out DIR writes to
// DIR/<machine>/ (on the GPU machine: --out "$OUT", then `bash bench/gpu-machine.sh store`).
//
// Machine names: vm-2core (the development VM), nvidia-h200 / nvidia-h100 (a GPU benchmark on that
// card), nvidia-h200-host (a CPU-only benchmark on the host of that card); elsewhere
// host-<N>core or vm-<N>core. PARLE_BENCH_MACHINE overrides the name.
//
//   node bench/lib/results.mjs machine [--gpu]     prints the name (for bench/gpu-machine.sh)
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root (with a trailing slash). */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The NVIDIA card's name from nvidia-smi ("NVIDIA H200"), or null on other machines. */
export function nvidiaCard() {
  try {
    return execFileSync('nvidia-smi', ['--query-gpu=name', '--format=csv,noheader'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })
      .split('\n')[0]
      .trim();
  } catch {
    return null;
  }
}

/**
 * This machine's name for result folders. `gpu`: the benchmark runs on the GPU, so on an NVIDIA
 * machine it is named after the card ("NVIDIA H100 80GB HBM3" -> nvidia-h100), else after its host.
 */
export function machineName({ gpu = false } = {}) {
  if (process.env.PARLE_BENCH_MACHINE) return process.env.PARLE_BENCH_MACHINE;
  const card = nvidiaCard();
  if (card) {
    const words = card.toLowerCase().split(/[^a-z0-9]+/).filter(Boolean);
    const end = words.findIndex((w, i) => i > 1 && /^(\d+gb|hbm\d*|pcie|sxm\d*|nvl)$/.test(w));
    const slug = words.slice(0, end < 0 ? words.length : end).join('-');
    return gpu ? slug : `${slug}-host`;
  }
  const vm = existsSync('/proc/cpuinfo') && / hypervisor( |$)/m.test(readFileSync('/proc/cpuinfo', 'utf8'));
  return `${vm ? 'vm' : 'host'}-${os.availableParallelism()}core`;
}

/** The commit measured, with '+dirty' when tracked files differ from it (null outside git). */
export function gitDescribe() {
  try {
    const git = (...a) => execFileSync('git', a, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    return git('rev-parse', '--short', 'HEAD') + (git('status', '--porcelain', '--untracked-files=no') ? '+dirty' : '');
  } catch {
    return null;
  }
}

/** The machine as every result file records it. */
export function machineInfo(extra = {}) {
  return {
    cpu: os.cpus()[0]?.model ?? 'unknown',
    cores: os.availableParallelism(),
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
    gpu: nvidiaCard(),
    node: process.version,
    v8: process.versions.v8,
    loadAverage: os.loadavg().map((x) => Math.round(x * 100) / 100),
    date: new Date().toISOString(),
    commit: gitDescribe(),
    ...extra,
  };
}

/** The value after `--out` (or `--out=DIR`) in argv, or undefined. */
export function outArg(argv = process.argv) {
  const i = argv.indexOf('--out');
  if (i >= 0 && argv[i + 1] !== undefined) return argv[i + 1];
  return argv.find((a) => a.startsWith('--out='))?.slice('--out='.length);
}

/**
 * The folder for this run's results (created): DIR/<machine> for `out` (default: the --out of
 * process.argv), bench/.quick/<machine> for a quick run, else bench/results/<machine>.
 */
export function resultsDir({ quick = false, out = outArg(), gpu = false } = {}) {
  const base = out !== undefined ? resolve(out) : join(ROOT, quick ? 'bench/.quick' : 'bench/results');
  const dir = join(base, machineName({ gpu }));
  mkdirSync(dir, { recursive: true });
  return dir;
}

/**
 * Writes `files` ({ 'name.json': object or string, ... }) into resultsDir(options) and prints
 * where; returns the folder. Objects are written as indented JSON.
 */
export function writeResults(files, options = {}) {
  const dir = resultsDir(options);
  for (const [name, content] of Object.entries(files)) {
    writeFileSync(join(dir, name), typeof content === 'string' ? content : JSON.stringify(content, null, 2) + '\n');
  }
  console.log(`wrote ${Object.keys(files).join(', ')} in ${relative(process.cwd(), dir) || '.'}`);
  return dir;
}

/** Prints rows (objects with the same keys) as a table with a header line. */
export function printTable(rows, title) {
  if (title) console.log(`\n${title}`);
  if (rows.length === 0) return;
  const columns = Object.keys(rows[0]);
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((row) => String(row[c]).length)));
  const line = (cells) => cells.map((cell, i) => String(cell).padEnd(widths[i])).join(' | ');
  console.log(line(columns));
  console.log(widths.map((w) => '-'.repeat(w)).join('-|-'));
  for (const row of rows) console.log(line(columns.map((c) => row[c])));
}

/** The median of numbers (the upper one of an even count). */
export const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  if (process.argv[2] !== 'machine') {
    console.error('usage: node bench/lib/results.mjs machine [--gpu]');
    process.exit(2);
  }
  console.log(machineName({ gpu: process.argv.includes('--gpu') }));
}
