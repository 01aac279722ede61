// The report: markdown tables (ours beside the papers', hardware named) and SVG charts, from the
// results object of a run. writeReport is pure (results in, text out); findCompanions reads the
// figures of other runs to fold in (a --gpu-machine run, the CUDA anchors, the GPU layer's H200 run).
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { GRUBER, HAUGEN, RUTTER } from './papers.mjs';
import { lineChart, scatterChart } from './svg.mjs';

const MiB = 2 ** 20;

// ---- number formatting --------------------------------------------------------------------------

/** 3 significant digits, no exponent for ordinary magnitudes. */
export function sig(x, digits = 3) {
  if (x === null || x === undefined || !Number.isFinite(x)) return 'n/a';
  if (x === 0) return '0';
  const a = Math.abs(x);
  if (a >= 10 ** digits) return Math.round(x).toLocaleString('en-US');
  if (a < 1e-3) return x.toExponential(1);
  return `${+x.toPrecision(digits)}`;
}
const ms3 = (ms) => (ms ? `${sig(ms.median)} (${sig(ms.min)}..${sig(ms.max)})` : 'n/a');
const rate3 = (r) => (r ? `${sig(r.median)} (${sig(r.min)}..${sig(r.max)})` : 'n/a');
const mb = (bytes) => (bytes === undefined ? 'n/a' : sig(bytes / 1e6));
const sizeName = (bytes) =>
  bytes >= 2 ** 30 ? `${bytes / 2 ** 30} GiB` : bytes >= MiB ? `${+(bytes / MiB).toFixed(2)} MiB` : bytes >= 1024 ? `${+(bytes / 1024).toFixed(2)} KiB` : `${bytes} B`;

/** A markdown table from a header and rows (cells are escaped for pipes). */
export function table(header, rows) {
  const cell = (c) => String(c ?? '').replace(/\|/g, '\\|').replace(/\n/g, ' ');
  const lines = [`| ${header.map(cell).join(' | ')} |`, `| ${header.map((_, i) => (i === 0 ? '---' : '---:')).join(' | ')} |`];
  for (const r of rows) lines.push(`| ${r.map(cell).join(' | ')} |`);
  return lines.join('\n');
}

const find = (results, pred) => (results?.figures ?? []).find(pred);
const filter = (results, pred) => (results?.figures ?? []).filter(pred);

function machineLine(r) {
  const m = r.machine;
  const gpu = r.adapter ? `${[r.adapter.vendor, r.adapter.architecture, r.adapter.device, r.adapter.description].filter(Boolean).join(' / ')}` : 'none';
  return `${m.cpu}, ${m.logicalCores} logical cores, ${sig(m.totalMemoryBytes / 2 ** 30)} GiB, ${m.platform} ${m.arch}, Node ${m.node}; GPU adapter: ${gpu}; parle workers: ${r.workers}`;
}

// ---- companions -----------------------------------------------------------------------------------

/** Parses the text bench/cuda-anchors.py prints. */
export function parseCudaAnchors(text) {
  const lines = text.split('\n').map((l) => l.trim()).filter(Boolean);
  const device = lines[0] && !lines[0].includes('=') ? lines[0] : null;
  const rows = [];
  for (const l of lines) {
    const m = l.match(/^(.*?)\s+(?:n=2\^(\d+)\s+)?ms=([\d.]+)\s+(\S+?)=([\d.]+)/);
    if (m) rows.push({ what: m[1], log2: m[2] ? Number(m[2]) : null, ms: Number(m[3]), unit: m[4], rate: Number(m[5]) });
  }
  return { device, rows };
}

/**
 * Other runs to fold in, from bench/results/<machine>/: a --gpu-machine run of this suite
 * (suite.json), CUDA anchors (cuda-anchors.txt beside the output, else beside that run) and the
 * GPU layer's own run on an NVIDIA card (gpu-layer.json, bench/gpu-layer.mjs).
 */
export async function findCompanions({ root, outDir, mode }) {
  const out = {};
  const results = join(root, 'bench/results');
  const machines = existsSync(results) ? (await readdir(results, { withFileTypes: true })).filter((d) => d.isDirectory()).map((d) => d.name) : [];
  const json = async (file) => JSON.parse(await readFile(file, 'utf8'));
  let gpuDir;
  for (const m of machines) {
    const file = join(results, m, 'suite.json');
    if (mode === 'gpu-machine' || !existsSync(file)) continue;
    const run = await json(file);
    if (run.mode === 'gpu-machine') [out.gpuMachine, gpuDir] = [run, m];
  }
  const cudaFile = [join(outDir, 'cuda-anchors.txt'), ...[gpuDir, ...machines].filter(Boolean).map((m) => join(results, m, 'cuda-anchors.txt'))].find(existsSync);
  if (cudaFile) out.cuda = { file: cudaFile.slice(root.length), ...parseCudaAnchors(await readFile(cudaFile, 'utf8')) };
  const layer = machines.filter((m) => m.startsWith('nvidia-')).map((m) => join(results, m, 'gpu-layer.json')).find(existsSync);
  if (layer) out.gpuLayer = { file: layer.slice(root.length), ...(await json(layer)) };
  return out;
}

// ---- sections ---------------------------------------------------------------------------------------

function rutterSection(r, comp) {
  const out = [];
  const rows = filter(r, (f) => f.group === 'rutter');
  if (!rows.length) return out;
  const edge = rows[0].edge;
  const scale = (512 / edge) ** 3;
  out.push(`## Rutter (2011): compressing a 512^3 volume before a 10 MB/s link`);
  out.push(`${RUTTER.cite}. His hardware: CPU figures on ${RUTTER.hardware.cpuSingle} and ${RUTTER.hardware.cpuParallel}; GPU figures on ${RUTTER.hardware.gpu}.`);
  out.push(
    `Ours: the four files generated at ${edge}^3 bytes (${sizeName(edge ** 3)})${edge !== 512 ? ` (a 1/${scale} scale model of his 512^3: times and sizes are not scaled up)` : ''}; "Voxel3D-like" is a sparse volume of clustered, splatted particles like his rendered potential, not his file. Transfer time = size / 10 MB/s; MB = 10^6 bytes (his "128MB" volume is 2^27 bytes = 134 MB).`,
  );
  out.push(`### His options table (Voxel3D), and ours`);
  const vox = rows.filter((f) => f.dataset === 'Voxel3D-like');
  const bytes = vox[0]?.bytes ?? edge ** 3;
  const t1 = [['uncompressed', '0', mb(bytes), sig(bytes / 1e6 / RUTTER.linkMBps), 'uncompressed', '0', '128', '12.8']];
  const paper = Object.fromEntries(RUTTER.options.map((o) => [o.method, o]));
  for (const f of vox) {
    const p = f.impl.startsWith('parle') || f.impl.startsWith('JS pair') ? paper.RLE : f.impl.includes('gzip') ? paper.gzip : null;
    t1.push([f.impl, ms3(f.ms), mb(f.outBytes), sig(f.outBytes / 1e6 / RUTTER.linkMBps), p?.method ?? '', p ? `~${p.timeMs}` : '', p ? `~${p.sizeMB}` : '', p ? `${p.transferS}` : '']);
  }
  t1.push(['', '', '', '', 'JPEG (lossy)', '~6400', '~1.7', '0.17']);
  out.push(table(['ours', 'time ms, median (min..max)', 'size MB', 'transfer s at 10 MB/s', 'Rutter', 'time ms', 'size MB', 'transfer s'], t1));
  out.push(`### Per file: ours on the CPU beside his single-threaded CPU and gzip times`);
  const t2 = [];
  for (const name of ['Zero', 'Sequence254', 'Sequence255', 'Voxel3D-like']) {
    const get = (pre) => rows.find((f) => f.dataset === name && f.impl.startsWith(pre));
    const parleRuns = get('parle rleEncode');
    const parleBox = get('parle .parle');
    const pair = get('JS pair');
    const gz = get('CompressionStream');
    const zs = get('zstd');
    const [hisRle, hisGz] = RUTTER.cpuSingleS[name];
    t2.push([
      name,
      `${ms3(parleRuns?.ms)}; ${mb(parleRuns?.outBytes)} MB`,
      `${ms3(parleBox?.ms)}; ${mb(parleBox?.outBytes)} MB`,
      `${ms3(pair?.ms)}; ${mb(pair?.outBytes)} MB`,
      `${ms3(gz?.ms)}; ${mb(gz?.outBytes)} MB`,
      `${ms3(zs?.ms)}; ${mb(zs?.outBytes)} MB`,
      `${Math.round(hisRle * 1000)}`,
      `${Math.round(hisGz * 1000)}`,
      `${RUTTER.gpuMs[name].column}`,
      `${RUTTER.cpuOpenMpMs}`,
    ]);
  }
  out.push(
    table(
      ['file', 'parle rleEncode (runs) ms; size', 'parle .parle ms; size', 'JS pair RLE ms; size', "CompressionStream('gzip') ms; size", 'zstd -3 ms; size', 'Rutter CPU 1 thread ms', 'Rutter gzip ms', 'Rutter CUDA column ms', 'Rutter OpenMP ms'],
      t2,
    ),
  );
  out.push(
    `parle's runs are u8 values + u32 lengths (5 bytes a run); the .parle container stores lengths as LEB128 and falls back to raw chunks (so Sequence254/255 cost their size plus headers); Rutter's format is (count, value) byte pairs, the "JS pair RLE" column.`,
  );
  out.push(gpuRutterTable(r, comp));
  return out;
}

function gpuRutterTable(r, comp) {
  const out = [];
  const sources = [[r, 'this run']];
  if (comp.gpuMachine) sources.push([comp.gpuMachine, 'GPU machine run']);
  out.push(`### CPU vs GPU where the volume lives on the GPU (his section 3.1)`);
  out.push(
    `His setting: the renderer's volume is already in GPU memory and the compressed result is wanted on the host. His totals: GPU ${RUTTER.totalsMs.gpu} ms (51-60 ms column-compressed + ~1.5 ms readback of the runs) against CPU ${RUTTER.totalsMs.cpu} ms (~32 ms readback of the raw 128 MB + 91 ms OpenMP), except Sequence254 (1865 ms on his GPU).`,
  );
  let any = false;
  for (const [res, label] of sources) {
    const rows = filter(res, (f) => f.group === 'rutter-gpu');
    if (!rows.length) continue;
    any = true;
    const edge = rows[0].edge;
    const impls = [...new Set(rows.map((f) => f.impl))];
    const t = [];
    for (const name of ['Zero', 'Sequence254', 'Sequence255', 'Voxel3D-like']) {
      const cells = impls.map((i) => ms3(rows.find((f) => f.dataset === name && f.impl === i)?.ms));
      const ex = rows.find((f) => f.dataset === name && f.explain)?.explain;
      const his = RUTTER.gpuMs[name].column;
      t.push([name, ...cells, ex ? `${ex.path} (cpu ${sig(ex.predictedMs.cpu)} / gpu ${sig(ex.predictedMs.gpu)} ms)` : 'n/a', `${his} + 1.5 / 91 + 32`]);
    }
    out.push(`${label}: ${machineLine(res)}; files at ${edge}^3 (${sizeName(edge ** 3)}). Times in ms, median (min..max).`);
    out.push(table(['file', ...impls, 'cost model picks (predicted)', 'Rutter GPU / CPU ms'], t));
  }
  if (!any) out.push('_No GPU figures: no adapter in this run, and no GPU machine run in bench/results/<machine>/suite.json._');
  return out.join('\n\n');
}

function gruberSection(r, comp) {
  const out = [];
  const rows = filter(r, (f) => f.group === 'gruber');
  if (!rows.length) return out;
  out.push(`## Gruber (2013): scan of 2^26 and radix sort of 2^25 / 2^26 u32`);
  out.push(`${GRUBER.cite}. His hardware: ${GRUBER.hardware.cpu}; ${GRUBER.hardware.gpu}. Times in ms, median (min..max).`);
  const sources = [[r, 'this run']];
  if (comp.gpuMachine) sources.push([comp.gpuMachine, 'GPU machine run']);
  const gs = GRUBER.scan26;
  const paper = {
    scan26: {
      'parle cpu': `${gs.cpu} (CPU, sequential C)`,
      'JS loop': '',
      'upload (host to GPU)': `${gs.uploadMs}`,
      'parle gpu, kernel only (device-resident)': `${gs.gpuKernelOnly} (recursive vector scan)`,
      'download (GPU to host)': `${gs.downloadMs}`,
      'parle gpu, with transfers (host in/out)': `${gs.gpuRecursiveVectorTotal} (77 % transfers)`,
    },
    sort25: { 'parle cpu': `${Math.round(GRUBER.sort25.cpuRadix * 1000)} (CPU radix, 16-bit digits)`, 'parle gpu, kernel only (device-resident)': `${Math.round(GRUBER.sort25.gpuRadixVector * 1000)} (GPU radix, vector fetches)` },
    sort26: {
      'parle cpu': `${Math.round(GRUBER.sort26.cpuRadix * 1000)} (CPU radix)`,
      'TypedArray.prototype.sort': `${Math.round(GRUBER.sort26.stdSort * 1000)} (std::sort); ${Math.round(GRUBER.sort26.qsort * 1000)} (qsort)`,
      'parle gpu, kernel only (device-resident)': `${Math.round(GRUBER.sort26.gpuBitonicFused * 1000)} (fused bitonic; his GPU radix sort ran out of memory)`,
    },
  };
  for (const [res, label] of sources) {
    const rs = filter(res, (f) => f.group === 'gruber');
    if (!rs.length) continue;
    const keys = [...new Set(rs.map((f) => `${f.op}|${f.dataset}|${f.paperLog2}`))];
    for (const k of keys) {
      const [op, dataset, plog] = k.split('|');
      const sub = rs.filter((f) => f.op === op && f.dataset === dataset);
      const pk = `${op}${plog}`;
      const t = sub.map((f) => [f.impl, ms3(f.ms), f.impl.startsWith('up') || f.impl.startsWith('down') ? '' : rate3(f.rate), paper[pk]?.[f.impl] ?? '']);
      const kernel = sub.find((f) => f.impl.includes('kernel only'));
      const withT = sub.find((f) => f.impl.includes('with transfers'));
      if (kernel && withT) t.push(['transfer share of the GPU call', `${sig(100 * (1 - kernel.ms.median / withT.ms.median))} %`, '', op === 'scan' ? '77 %' : '']);
      const cpu = sub.find((f) => f.impl === 'parle cpu');
      if (cpu?.explain?.path) t.push(['cost model picks (host keys)', cpu.explain.path, '', '']);
      out.push(`### ${op} of ${dataset} (${label}; Gruber's size: 2^${plog})`);
      if (label === 'this run') out.push(machineLine(res));
      out.push(table(['ours', 'ms', 'GB/s', `Gruber at 2^${plog}, ms`], t));
    }
  }
  if (!comp.gpuMachine && comp.gpuLayer && r.mode !== 'gpu-machine') {
    const g = comp.gpuLayer.figures ?? {};
    const s26 = g['scan_u32_2^26'];
    const o26 = g['sort_u32_2^26'];
    const up = g.uploadWholeStaging256MiB;
    const down = g.readbackRing256MiB;
    if (s26 || o26) {
      out.push(`### The GPU layer on a real GPU (${comp.gpuLayer.file}, bench/gpu-layer.mjs, device-resident)`);
      out.push(
        `Not this suite: an earlier run of parle's WebGPU layer on ${comp.gpuLayer.adapter?.device ?? 'an NVIDIA GPU'} (Dawn through Vulkan). "GPU time" from timestamp queries, "wall" from the call to the resolved promise. Transfers of 256 MiB were measured separately: upload ${sig(up?.GBps)} GB/s, readback ${sig(down?.GBps)} GB/s, so "with transfers" below is derived (wall + 256 MiB up + 256 MiB down), not measured in one call. Run this suite with --gpu-machine for measured figures.`,
      );
      const t = [];
      const derive = (f) => (up && down && f ? `${sig(f.wallMs + up.ms + down.ms)} (derived)` : 'n/a');
      if (s26) t.push(['scan u32 2^26', sig(s26.gpuMs), sig(s26.wallMs), derive(s26), `${gs.gpuKernelOnly} / ${gs.gpuRecursiveVectorTotal}`]);
      if (o26) t.push(['sort u32 2^26', sig(o26.gpuMs), sig(o26.wallMs), derive(o26), `${Math.round(GRUBER.sort26.gpuBitonicFused * 1000)} (bitonic) / n/a`]);
      out.push(table(['op', 'GPU time ms', 'wall ms', 'with 256 MiB transfers ms', 'Gruber GPU kernel / with transfers ms'], t));
    }
  }
  return out;
}

function haugenSection(r) {
  const out = [];
  const rows = filter(r, (f) => f.group === 'haugen');
  if (!rows.length) return out;
  out.push(`## Haugen (2009): RLE of quantized seismic cubes`);
  out.push(`${HAUGEN.cite}. His method: ${HAUGEN.method}. Hardware: ${HAUGEN.hardware}.`);
  out.push(
    `Ours: seismic-like float32 cubes (depth fastest; layered reflectivity convolved in depth with a Ricker wavelet of 0.08 cycles/sample, plus noise of 0.4 % of the strongest reflector), quantized with his dead-zone quantizer (beta 0.6) **directly, without his subband transform** (parle has none). Ratio = compressed / raw float32 bytes (his definition; smaller is better); "vs input" divides by the bytes actually compressed.`,
  );
  const datasets = [...new Set(rows.map((f) => f.dataset))];
  const t = [];
  for (const ds of datasets) {
    const sub = rows.filter((f) => f.dataset === ds && f.op === 'compress');
    for (const f of sub) {
      t.push([ds, f.snrDb ? sig(f.snrDb) : '', f.impl, mb(f.outBytes), sig(f.outBytes / f.rawFloatBytes), sig(f.outBytes / f.bytes), rate3(f.rate)]);
    }
    const runs = rows.find((f) => f.dataset === ds && f.op === 'rleEncode');
    if (runs) {
      const width = ds.includes('16-bit') ? 2 : ds.includes('float32') ? 4 : 1;
      t.push([ds, '', `${runs.impl}: ${runs.runs} runs, mean run ${sig(runs.bytes / width / runs.runs)} elements`, mb(runs.outBytes), sig(runs.outBytes / runs.rawFloatBytes), sig(runs.outBytes / runs.bytes), rate3(runs.rate)]);
    }
    const dec = rows.find((f) => f.dataset === ds && f.op === 'decompress');
    if (dec) t.push([ds, '', 'parle .parle decompress', '', '', '', `${rate3(dec.rate)} (of output)`]);
  }
  for (const p of HAUGEN.ratios) t.push([`Haugen ${p.cube} (subband + 8-bit)`, '24.67 (64^3)', 'his RLE', sig(p.rleKiB * 1024 / 1e6), sig(p.rle), '', '']);
  for (const p of HAUGEN.ratios) t.push([`Haugen ${p.cube} (subband + 8-bit)`, '', 'his RLE + Huffman', sig(p.rleHuffmanKiB * 1024 / 1e6), sig(p.rleHuffman), '', '']);
  out.push(table(['cube', 'SNR dB', 'codec', 'size MB', 'ratio vs raw f32', 'ratio vs input', 'encode GB/s, median (min..max)'], t));
  const rule = [];
  for (const up of rows.filter((f) => f.op === 'upload')) {
    for (const dec of rows.filter((f) => f.op === 'rleDecode' && f.edge === up.edge)) {
      rule.push([dec.dataset, sig(dec.outBytes / 1e6), ms3(dec.ms), `${sig(up.bytes / 1e6)} MB: ${ms3(up.ms)}`, dec.ms.median < up.ms.median ? 'yes' : 'no', dec.explain?.path ?? '']);
    }
  }
  if (rule.length) {
    out.push(`His rule, measured: upload the RLE runs and decode them on the GPU (result on the GPU) against uploading the raw float32 cube. (The decoded u8 indices still need dequantizing; his dequantization took 1.42 ms at 128^3.)`);
    out.push(table(['cube', 'runs MB', 'runs up + GPU decode ms', 'raw float32 upload', 'decode beats upload', 'cost model picks'], rule));
  }
  out.push(
    `His rule: GPU decode must beat the raw transfer it replaces (his 128^3 floats took ${HAUGEN.uploadMs128} ms to upload). Without the subband stage, direct quantization leaves most samples non-zero, so RLE alone cannot reach his ratios; the 8-bit cube's ratio against raw floats is bounded by 0.25 before RLE.`,
  );
  return out;
}

function sweepSection(r, charts) {
  const out = [];
  const rows = filter(r, (f) => f.group === 'sweep');
  if (!rows.length) return out;
  out.push(`## Throughput against size, per path and peer`);
  out.push(
    `Medians in GB/s (the bytes named by each op: input for encode/compress/sort/scan, output for decode/decompress). RLE data: u8 runs of mean length 16; sort: random u32 keys; scan: random u32 (exclusive). "parle cpu" runs on arrays from engine.alloc (zero copy) with ${r.workers} workers; "gpu, device-resident" times a DeviceArray in and out (the kernel, its submit and completion); "gpu, host in/out" includes upload and readback. The last row of each table is the cost model's choice (engine.explain) for a host array of that size.${r.gpuCapBytes ? ` GPU cases above ${sizeName(r.gpuCapBytes)} were skipped (${r.gpuCapWhy}).` : ''}`,
  );
  const ops = [...new Set(rows.map((f) => f.op))];
  for (const op of ops) {
    const sub = rows.filter((f) => f.op === op);
    const sizes = [...new Set(sub.map((f) => f.bytes))].sort((a, b) => a - b);
    const impls = [...new Set(sub.map((f) => f.impl))];
    const t = impls.map((i) => [i, ...sizes.map((s) => sig(sub.find((f) => f.impl === i && f.bytes === s)?.rate.median))]);
    t.push([
      'cost model picks (host input)',
      ...sizes.map((s) => {
        const ex = sub.find((f) => f.bytes === s && f.location === 'host' && f.explain)?.explain;
        return ex?.path ?? 'n/a';
      }),
    ]);
    out.push(`### ${op} (${sub[0].unit})`);
    out.push(table(['implementation', ...sizes.map(sizeName)], t));
    const name = `throughput-${op}.svg`;
    charts[name] = lineChart({
      title: `${op}: throughput against size`,
      xLabel: 'size (bytes)',
      yLabel: sub[0].unit,
      series: impls.map((i) => ({ name: i, points: sub.filter((f) => f.impl === i).map((f) => [f.bytes, f.rate.median]) })),
    });
    out.push(`![${op} throughput](${name})`);
  }
  return out;
}

function costModelSection(r) {
  const out = [];
  const rows = filter(r, (f) => f.group === 'sweep' && (f.impl === 'parle cpu' || f.impl === 'parle gpu, host in/out'));
  const keys = [...new Set(rows.map((f) => `${f.op}|${f.bytes}`))];
  const t = [];
  for (const k of keys) {
    const [op, b] = k.split('|');
    const cpu = rows.find((f) => f.op === op && f.bytes === +b && f.impl === 'parle cpu');
    const gpu = rows.find((f) => f.op === op && f.bytes === +b && f.impl === 'parle gpu, host in/out');
    if (!cpu?.explain || !gpu) continue;
    const faster = cpu.ms.median <= gpu.ms.median ? 'cpu' : 'gpu';
    const ex = cpu.explain;
    const picked = ex.path === 'cpu' ? cpu.ms.median : gpu.ms.median;
    const best = Math.min(cpu.ms.median, gpu.ms.median);
    t.push([op, sizeName(+b), ex.path, `${sig(ex.predictedMs.cpu)} / ${sig(ex.predictedMs.gpu)}`, `${sig(cpu.ms.median)} / ${sig(gpu.ms.median)}`, faster, ex.path === faster ? 'yes' : `no (${sig(picked / best)}x)`]);
  }
  if (!t.length) return out;
  out.push(`## The cost model's choices, against the measured times (host input, host result)`);
  out.push(`engine.explain(op, input) before the runs; predicted and measured ms as cpu / gpu (gpu includes upload and readback).`);
  out.push(table(['op', 'size', 'picks', 'predicted ms cpu / gpu', 'measured ms cpu / gpu', 'faster', 'agrees'], t));
  return out;
}

function kindsSection(r) {
  const rows = filter(r, (f) => f.group === 'kinds');
  if (!rows.length) return [];
  const t = rows.map((f) => [f.op, f.dataset, sizeName(f.bytes), f.impl, ms3(f.ms), rate3(f.rate), f.explain?.path ?? '', f.note ?? '']);
  return [`## Sort keys of each kind; scan of u32 and f32`, table(['op', 'data', 'size', 'implementation', 'ms', 'GB/s', 'cost model picks', 'note'], t)];
}

function realSection(r, charts) {
  const rows = filter(r, (f) => f.group === 'real');
  if (!rows.length) return [];
  const out = [`## Real data: the demo's samples (data/samples/)`];
  if (r.samples) out.push(table(['sample', 'type', 'shape', 'bytes', 'source', 'license'], r.samples.map((s) => [s.name, s.type, s.shape.join(' x '), s.bytes, s.source, s.license])));
  const t = [];
  for (const ds of [...new Set(rows.map((f) => f.dataset))]) {
    for (const impl of [...new Set(rows.filter((f) => f.dataset === ds && f.op === 'compress').map((f) => f.impl))]) {
      const c = rows.find((f) => f.dataset === ds && f.op === 'compress' && f.impl === impl);
      const d = rows.find((f) => f.dataset === ds && f.op === 'decompress' && f.impl === impl);
      t.push([ds, impl, sig(c.bytes / c.outBytes), `${mb(c.outBytes)} MB`, sig(c.rate.median * 1000), d ? sig(d.rate.median * 1000) : '']);
    }
    const gpu = rows.find((f) => f.dataset === ds && f.op === 'rleEncode' && f.path === 'gpu');
    const cpu = rows.find((f) => f.dataset === ds && f.op === 'rleEncode' && f.path === 'cpu');
    if (cpu) t.push([ds, `parle rleEncode cpu${cpu.explain ? ` (model picks ${cpu.explain.path})` : ''}`, '', '', sig(cpu.rate.median * 1000), '']);
    if (gpu) t.push([ds, 'parle rleEncode gpu, device-resident', '', '', sig(gpu.rate.median * 1000), '']);
  }
  out.push(table(['sample', 'codec', 'factor (in / out)', 'size', 'encode MB/s', 'decode MB/s'], t));
  return out;
}

function ratioCharts(r, charts, out) {
  const groups = [
    ['real', 'real samples', (f) => f.dataset],
    ['rutter', "Rutter's files", (f) => f.dataset],
    ['haugen', "Haugen-like cubes", (f) => f.dataset.replace('quantized ', 'q').replace('float32 ', 'f32 ')],
  ];
  for (const [g, title, label] of groups) {
    const rows = filter(r, (f) => f.group === g && f.op === 'compress' && f.outBytes);
    if (!rows.length) continue;
    const impls = [...new Set(rows.map((f) => f.impl))];
    const name = `ratio-vs-speed-${g}.svg`;
    charts[name] = scatterChart({
      title: `compression factor against encode speed: ${title}`,
      xLabel: 'encode GB/s (median)',
      yLabel: 'compression factor (input / output)',
      series: impls.map((i) => ({ name: i, points: rows.filter((f) => f.impl === i).map((f) => ({ x: f.rate.median, y: f.bytes / f.outBytes, label: label(f) })) })),
    });
    out.push(`![compression factor against speed, ${title}](${name})`);
  }
}

function cudaSection(comp) {
  if (!comp.cuda?.rows.length) return [];
  return [
    `## CUDA anchors on the GPU machine (${comp.cuda.file})`,
    `Native CUDA through PyTorch on ${comp.cuda.device ?? 'the GPU machine'} (bench/cuda-anchors.py): the ceiling a WebGPU path can be held against.`,
    table(['op', 'n', 'ms', 'rate'], comp.cuda.rows.map((x) => [x.what, x.log2 !== null ? `2^${x.log2}` : '', sig(x.ms), `${sig(x.rate)} ${x.unit}`])),
  ];
}

function skippedSection(r) {
  if (!r.skipped?.length) return [];
  const byWhy = new Map();
  for (const s of r.skipped) {
    const key = s.why.replace(/of [\d.]+ [KMG]?i?B /, 'of SIZE ').replace(/\d+(\.\d+)? [KMG]iB already/, 'SIZE already');
    if (!byWhy.has(key)) byWhy.set(key, []);
    byWhy.get(key).push(s.what);
  }
  return [`## Skipped cases`, table(['why', 'cases'], [...byWhy].map(([why, whats]) => [why, `${whats.length}: ${whats.slice(0, 6).join('; ')}${whats.length > 6 ? '; ...' : ''}`]))];
}

/** The markdown report and the charts of a run. companions: see findCompanions. */
export function writeReport(r, companions = {}) {
  const charts = {};
  const parts = [];
  parts.push(`# parle comparison benchmarks (${r.mode} run)`);
  parts.push(
    `Run ${r.date}, ${sig(r.tookS)} s. ${machineLine(r)}. Load average at the start: ${r.machine.loadAverageAtStart.map((x) => sig(x, 2)).join(', ')} (the development machine is shared: CPU figures are contended). Every figure is the median (min..max) over repetitions with tinybench (${r.policy.iterations} or more, ${r.policy.slowIterations} for calls over ${r.policy.slowMs} ms), after a warm-up call. Raw figures: ${r.resultsFile ?? 'results.json'}.`,
  );
  if (r.adapter && r.gpuDriver?.includes('swiftshader')) {
    parts.push(
      `**The GPU here is SwiftShader** (a software Vulkan driver, ${r.gpuDriver}): GPU figures of this run check the path end to end and show its fixed costs, not GPU speed. GPU cases above ${sizeName(r.gpuCapBytes)} were skipped. Real-GPU figures come from a --gpu-machine run${companions.gpuMachine ? ' (folded in below)' : ' (not folded in yet: see "GPU machine" in bench/suite/README.md)'}.`,
    );
  }
  parts.push(...rutterSection(r, companions));
  parts.push(...gruberSection(r, companions));
  parts.push(...haugenSection(r));
  const ratioOut = [];
  ratioCharts(r, charts, ratioOut);
  parts.push(...realSection(r, charts));
  if (ratioOut.length) parts.push(`## Compression factor against speed`, ...ratioOut);
  parts.push(...sweepSection(r, charts));
  parts.push(...kindsSection(r));
  parts.push(...costModelSection(r));
  parts.push(...cudaSection(companions));
  parts.push(...skippedSection(r));
  if (r.notes?.length) parts.push(`## Time per group`, r.notes.map((n) => `- ${n}`).join('\n'));
  return { markdown: parts.filter(Boolean).join('\n\n') + '\n', charts };
}
