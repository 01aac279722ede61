// The Huffman kernels of assembly/statistics.ts and assembly/huffman.ts on one thread, raw: histogram8, huffmanEncode and
// huffmanDecode of build/parle.wasm (the SIMD build) called directly on streams that are already
// in wasm memory, in GB/s of input (histogram, encode) and of output (decode).
//
//   node build/build.mjs --quiet --no-types && node bench/huffman-kernels.mjs [--quick]
//        [--runs N] [--wasm FILE] [--baseline FILE | --baseline-rev GITREV] [--out DIR]
//
// Streams (4 MiB each): camera.u8's deltas (tiled), the low byte plane of t1-mri.u16 (tiled), a
// skewed stream of 90% zeros (the rest uniform over 1..255), the exponential stream of
// an exponential (mean 6, about 4 bits a symbol) and uniform random bytes (8-bit codes); then
// the first 256 KiB of each (the codec's default chunk), where per-call costs show. Code lengths
// come from ts/codec/huffman.ts (codeLengths, bundled by bench/lib/internals.mjs), as
// the library calls it; segments of 2^10 symbols (DEFAULT_SEGMENT_LOG2).
//
// Each figure is the median of --runs samples (default 21; --quick: 7) after a warm-up (V8 tiers
// wasm up from Liftoff to TurboFan in the background); a sample times one call on 4 MiB, 8 on
// 256 KiB. Samples of the kernels (and of the baseline's) are taken round-robin, so load from
// other processes hits them alike; the JSON keeps min and max too, and the load average.
// "hist+enc" is the time of one histogram8 and one huffmanEncode of the same bytes: what the
// writer pays per stream. Checks: the histogram against a JS count, the encoded size against the
// code lengths, the last offset against the bytes written, decode == input (before and after the
// timed calls). With --baseline FILE (another SIMD build of the kernels), or --baseline-rev REV
// (assembly/ at that git revision, compiled here with build/wasm.mjs's flags), the same figures
// are taken for it on the same bytes, and its bitstreams and offsets must equal those of --wasm
// byte for byte (the format must not move).
//
// Prints a table and writes bench/results/<machine>/huffman-kernels.json (machine, figures).
import { mkdtemp, readFile } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';
import { join, resolve } from 'node:path';
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import { bytesOf, repeatTo as tile, sameBytes } from './lib/files.mjs';
import { loadInternals } from './lib/internals.mjs';
import { machineInfo, ROOT as root, writeResults } from './lib/results.mjs';
import { kernels as instance, warmUp as warmUpRounds } from './lib/wasm.mjs';
import { rng } from './suite/data.mjs';

const argv = process.argv.slice(2);
const quick = argv.includes('--quick');
const argValue = (name) => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
};
const RUNS = Number(argValue('--runs') ?? (quick ? 7 : 21));
const WASM = resolve(root, argValue('--wasm') ?? 'build/parle.wasm');
const BASELINE_REV = argValue('--baseline-rev');
let BASELINE = argValue('--baseline') !== undefined ? resolve(root, argValue('--baseline')) : undefined;
if (BASELINE_REV !== undefined) {
  // assembly/ at that revision, compiled as build/wasm.mjs compiles build/parle.wasm
  const { commonFlags } = await import(pathToFileURL(join(root, 'build/wasm.mjs')).href);
  const { default: asc } = await import('assemblyscript/asc');
  const dir = await mkdtemp(join(os.tmpdir(), 'parle-huffman-baseline-'));
  execFileSync('sh', ['-c', `git -C "${root}" archive "${BASELINE_REV}" assembly | tar -x -C "${dir}"`]);
  BASELINE = join(dir, 'parle.wasm');
  const flags = commonFlags.map((f) => (f === 'assembly/index.ts' ? join(dir, 'assembly/index.ts') : f));
  const { error, stderr } = await asc.main(
    [...flags, '--enable', 'simd', '--sharedMemory', '--enable', 'threads', '--outFile', BASELINE],
    {},
  );
  if (error) throw new Error(`asc failed for the baseline at ${BASELINE_REV}: ${error.message}\n${stderr.toString()}`);
}
const STREAM_BYTES = 4 << 20;

const { codeLengths, codedBits, DEFAULT_SEGMENT_LOG2 } = await loadInternals('huffman');

const camera = new Uint8Array(await readFile(join(root, 'data/samples/camera.u8')));
const mri = new Uint8Array(await readFile(join(root, 'data/samples/t1-mri.u16')));

const STREAMS = [
  {
    name: 'camera deltas',
    note: 'camera.u8 tiled to 4 MiB, then byte deltas (x[i] - x[i-1] mod 256, as deltaEncode8)',
    make: () => {
      const t = tile(camera, STREAM_BYTES);
      const out = new Uint8Array(t.length);
      let prev = 0;
      for (let i = 0; i < t.length; i++) {
        out[i] = (t[i] - prev) & 0xff;
        prev = t[i];
      }
      return out;
    },
  },
  {
    name: 'mri low plane',
    note: 'byte 0 of each u16 of t1-mri.u16 (its values), tiled to 4 MiB',
    make: () => {
      const plane = new Uint8Array(mri.length >> 1);
      for (let i = 0; i < plane.length; i++) plane[i] = mri[2 * i];
      return tile(plane, STREAM_BYTES);
    },
  },
  {
    name: '90% zeros',
    note: 'rng(11): 0 with probability 0.9, else uniform over 1..255',
    make: () => {
      const next = rng(11);
      const out = new Uint8Array(STREAM_BYTES);
      for (let i = 0; i < out.length; i++) {
        const r = next();
        out[i] = r % 10 === 0 ? 1 + ((r >>> 8) % 255) : 0;
      }
      return out;
    },
  },
  {
    name: 'exponential',
    note: 'floor(exponential, mean 6) clamped to 255, rng(7): about 4 bits a symbol (bench/codec.mjs)',
    make: () => {
      const next = rng(7);
      const out = new Uint8Array(STREAM_BYTES);
      for (let i = 0; i < out.length; i++) out[i] = Math.min(255, Math.floor(-Math.log(1 - next() / 4294967296) * 6));
      return out;
    },
  },
  {
    name: 'uniform random',
    note: 'rng(3) bytes: 8-bit codes, no pair fits 11 bits',
    make: () => {
      const next = rng(3);
      const out = new Uint8Array(STREAM_BYTES);
      for (let i = 0; i < out.length; i++) out[i] = next() & 0xff;
      return out;
    },
  },
];

// ---------------------------------------------------------------------------------------------
// timing

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

/** Takes `runs` samples of each fn (each `reps` calls), round-robin so that drift hits all alike; ms per call. */
function timeAll(fns, runs, reps) {
  const times = fns.map(() => []);
  for (let r = 0; r < runs; r++) {
    for (let f = 0; f < fns.length; f++) {
      const fn = fns[f];
      const t0 = performance.now();
      for (let i = 0; i < reps; i++) fn();
      times[f].push((performance.now() - t0) / reps);
    }
  }
  return times;
}

async function warmUp(fns) {
  await warmUpRounds(fns, 5);
  for (const fn of fns) fn();
}

// ---------------------------------------------------------------------------------------------
// one stream on one instance: set up, check, and return the calls to time

const problems = [];

function prepare(inst, stream, input) {
  const { k, alloc, view } = inst;
  const n = input.length;
  const segLog2 = DEFAULT_SEGMENT_LOG2;
  const segments = Math.ceil(n / 2 ** segLog2);
  inst.reset();
  const srcPtr = alloc(n);
  const histPtr = alloc(1024);
  const scratchPtr = alloc(4096);
  const lengthsPtr = alloc(256);
  const codesPtr = alloc(1024);
  const tablePtr = alloc(12 << 10);
  const offsetsPtr = alloc(segments * 4);
  const encCap = Math.ceil((n * 11) / 8) + segments + 8;
  const encPtr = alloc(encCap);
  const outPtr = alloc(n + 64);
  view(Uint8Array, srcPtr, n).set(input);
  const where = `${stream.name}, ${n} bytes (${inst.file === WASM ? 'wasm' : 'baseline'})`;

  k.histogram8(srcPtr, n, histPtr, scratchPtr);
  const hist = view(Uint32Array, histPtr, 256).slice();
  const jsHist = new Uint32Array(256);
  for (let i = 0; i < n; i++) jsHist[input[i]]++;
  if (hist.some((x, i) => x !== jsHist[i])) problems.push(`${where}: histogram8 differs from a JS count`);
  const lengths = codeLengths(jsHist);
  view(Uint8Array, lengthsPtr, 256).set(lengths);
  if (k.huffmanBuildTable(lengthsPtr, codesPtr, tablePtr, n) !== 0) problems.push(`${where}: huffmanBuildTable failed`);
  if (k.huffmanBuildCodes(lengthsPtr, codesPtr) !== 2048) problems.push(`${where}: huffmanBuildCodes is not complete`);
  const encBytes = k.huffmanEncode(srcPtr, n, codesPtr, segLog2, encPtr, offsetsPtr);
  const offsets = view(Uint32Array, offsetsPtr, segments).slice();
  if (offsets[segments - 1] !== encBytes) problems.push(`${where}: last offset ${offsets[segments - 1]} != ${encBytes} bytes written`);
  const predicted = codedBits(jsHist, lengths) / 8;
  if (encBytes < predicted || encBytes > Math.ceil(predicted) + segments)
    problems.push(`${where}: encoded ${encBytes} bytes, the code lengths predict ${predicted.toFixed(0)}`);
  const output = view(Uint8Array, outPtr, n);
  output.fill(0xa5);
  const status = k.huffmanDecode(encPtr, encBytes, offsetsPtr, segLog2, n, tablePtr, outPtr);
  if (status !== 0) problems.push(`${where}: huffmanDecode returned ${status}`);
  else if (!sameBytes(view(Uint8Array, outPtr, n), input)) problems.push(`${where}: decode differs from the input`);

  let entropy = 0;
  for (const c of jsHist) if (c) entropy -= (c / n) * Math.log2(c / n);
  return {
    n,
    encBytes,
    entropy,
    symbols: jsHist.filter((c) => c > 0).length,
    longest: Math.max(...lengths),
    bits: () => view(Uint8Array, encPtr, encBytes).slice(),
    offsets,
    verify: () => {
      if (!sameBytes(view(Uint8Array, outPtr, n), input)) problems.push(`${where}: decode differs from the input after the timed calls`);
    },
    histogram: () => k.histogram8(srcPtr, n, histPtr, scratchPtr),
    encode: () => k.huffmanEncode(srcPtr, n, codesPtr, segLog2, encPtr, offsetsPtr),
    decode: () => k.huffmanDecode(encPtr, encBytes, offsetsPtr, segLog2, n, tablePtr, outPtr),
  };
}

// ---------------------------------------------------------------------------------------------
// run

const main = await instance(WASM);
const base = BASELINE ? await instance(BASELINE) : undefined;
/** Stream sizes: the 4 MiB streams, then their first 256 KiB (the codec's default chunk; 8 calls a sample). */
const SIZES = [
  { bytes: STREAM_BYTES, reps: 1 },
  { bytes: 256 << 10, reps: 8 },
];
const rows = [];
const loadBefore = os.loadavg();

for (const stream of STREAMS) {
  const full = stream.make();
  for (const { bytes, reps } of SIZES) {
    const input = full.subarray(0, bytes);
    const a = prepare(main, stream, input);
    const b = base ? prepare(base, stream, input) : undefined;
    if (b) {
      if (b.encBytes !== a.encBytes || !sameBytes(a.bits(), b.bits()) || !sameBytes(bytesOf(a.offsets), bytesOf(b.offsets)))
        problems.push(`${stream.name}, ${bytes} bytes: the bitstreams differ from the baseline's`);
    }
    const fns = [a.histogram, a.encode, a.decode, ...(b ? [b.histogram, b.encode, b.decode] : [])];
    await warmUp(fns);
    const t = timeAll(fns, RUNS, reps);
    a.verify();
    b?.verify();
    const gbps = (ms, n) => n / (ms * 1e6);
    const figures = (p, off) => {
      const [h, e, d] = [0, 1, 2].map((i) => median(t[off + i]));
      return {
        histogram8: gbps(h, p.n),
        huffmanEncode: gbps(e, p.n),
        histogramPlusEncode: gbps(h + e, p.n),
        huffmanDecode: gbps(d, p.n),
        msPerCall: { histogram8: h, huffmanEncode: e, huffmanDecode: d },
        spread: Object.fromEntries(
          ['histogram8', 'huffmanEncode', 'huffmanDecode'].map((name, i) => [
            name,
            { min: gbps(Math.max(...t[off + i]), p.n), max: gbps(Math.min(...t[off + i]), p.n) },
          ]),
        ),
      };
    };
    rows.push({
      stream: stream.name,
      note: stream.note,
      bytes: a.n,
      symbols: a.symbols,
      longestCode: a.longest,
      entropyBitsPerSymbol: a.entropy,
      codedBitsPerSymbol: (a.encBytes * 8) / a.n,
      after: figures(a, 0),
      ...(b ? { before: figures(b, 3) } : {}),
    });
  }
}
const loadAfter = os.loadavg();

// ---------------------------------------------------------------------------------------------
// report

const f2 = (x) => x.toFixed(2);
const header = ['stream', 'bits/sym', 'histogram8', 'encode', 'hist+enc', 'decode'];
for (const { bytes } of SIZES) {
  const table = rows
    .filter((r) => r.bytes === bytes)
    .map((r) => {
      const cell = (key) => (r.before ? `${f2(r.before[key])} -> ${f2(r.after[key])}` : f2(r.after[key]));
      return [
        r.stream,
        `${f2(r.codedBitsPerSymbol)}`,
        cell('histogram8'),
        cell('huffmanEncode'),
        cell('histogramPlusEncode'),
        cell('huffmanDecode'),
      ];
    });
  const widths = header.map((h, i) => Math.max(h.length, ...table.map((row) => row[i].length)));
  const line = (cells) => cells.map((c, i) => c.padEnd(widths[i])).join(' | ');
  const size = bytes >= 1 << 20 ? `${bytes >> 20} MiB` : `${bytes >> 10} KiB`;
  console.log(`\nHuffman kernels, GB/s (median of ${RUNS} samples, one thread, ${size} streams)${base ? ', baseline -> wasm' : ''}`);
  console.log(line(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('-|-'));
  for (const row of table) console.log(line(row));
}
console.log(`\nload average (1 min) ${f2(loadBefore[0])} before, ${f2(loadAfter[0])} after, on ${os.cpus().length} cores`);
if (problems.length) {
  console.log('\nPROBLEMS:');
  for (const p of problems) console.log(`  ${p}`);
} else console.log('checks: histograms, sizes, offsets and decode == input all pass' + (base ? '; bitstreams equal the baseline' : ''));

writeResults(
  {
    'huffman-kernels.json': {
      machine: machineInfo({ loadAverage: { before: loadBefore, after: loadAfter } }),
      wasm: WASM.replace(root, ''),
      baseline:
        BASELINE_REV !== undefined
          ? `assembly/ at ${BASELINE_REV} (${execFileSync('git', ['-C', root, 'rev-parse', BASELINE_REV]).toString().trim()})`
          : BASELINE,
      runs: RUNS,
      segmentLog2: DEFAULT_SEGMENT_LOG2,
      unit: 'GB/s (1e9 bytes/s) of input for histogram8 and huffmanEncode, of output for huffmanDecode; median of the samples (spread: min, max)',
      streams: rows,
      problems,
    },
  },
  { quick },
);
if (problems.length) process.exitCode = 1;
