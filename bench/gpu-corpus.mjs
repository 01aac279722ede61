#!/usr/bin/env node
/**
 * Container version 3 on a real GPU, on real data (issues #31 and #32): each array of the corpus
 * (bench/corpus/), as it is and repeated to 64 MiB, through the public API:
 *   - compress from the device (`path: 'gpu'`, the container read back to the host; and left on
 *     the device, `to: 'device'`) beside readback + the CPU path (16 workers or as many as there are);
 *   - decompress to the device (`path: 'gpu'`) of the CPU path's container laid out for the GPU
 *     (`decoder: 'gpu'`: Huffman mode 3) beside the CPU decode of its default container + upload;
 *     and of the same container already on the device (a u8 DeviceArray: nothing uploaded), and
 *     the container uploaded then decoded from the device, timed as one call (#45's "host
 *     container to the device" against that: `uploadThenDevice`);
 *   - the array with its shape (stacked copies along the first axis): compressed from the device
 *     on the GPU path (predicted chunks written there) beside readback + the CPU path; the CPU
 *     path's container (predicted chunks, stage 7) decoded to the device from the host and from
 *     the device, beside the CPU decode + upload; at 64 MiB also a list of containers of about 256 KiB
 *     (whole rows, 256 at most) decoded to one device buffer in one call, beside a call each;
 *   - checks: every decode on either path equals the input; a fixed pipeline the GPU codes writes
 *     the CPU path's bytes at the same chunk size and decoder (byte-identical containers); each
 *     path decodes the other's containers (CPU: 256 KiB chunks, modes 2 and 3; GPU: 4 MiB, mode 2);
 *   - the GPU path's ratio at the CPU path's chunk size too (`ratioGpuCpuChunks`, flat and
 *     shaped): its default 4 MiB chunks trade ratio for speed (#45's "ratio within 1 %").
 * Medians of REPS calls, wall clock, GB/s of input (compress) or output (decompress), each
 * figure measured warm: its call made back to back for SUSTAIN_MS first (an H200's SM clock
 * idles at 345 MHz and rises only under sustained load: bench/lib/gpu.mjs warmUntilSteady), and
 * the median SM clock of its timed calls recorded beside it (`smMhz`, nvidia-smi; null where
 * there is none). Writes bench/results/<machine>/gpu-corpus.json (the machine is the GPU's) and
 * gpu-corpus.md: #45's table (flat and with the shape, GB/s: decompress a device container to the
 * device / a host container to the device / CPU + upload, compress from the device to a device
 * container / to the host, the ratio of the GPU path / the CPU path), printed at the end too;
 * --table FILE prints and writes it from a json of this benchmark (runs merged by hand) instead.
 *   node bench/gpu-corpus.mjs [--quick] [--files a,b] [--workers 16] [--out DIR] [--table FILE]
 */
import os from 'node:os';
import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { createEngine } from '../dist/node/index.js';
import { dataFiles, repeatTo, sameBytes as same } from './lib/files.mjs';
import { timeCalls } from './lib/measure.mjs';
import { startClockSampler } from './lib/gpu.mjs';
import { machineInfo, writeResults } from './lib/results.mjs';

const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean' },
    files: { type: 'string' },
    workers: { type: 'string' },
    out: { type: 'string' },
    table: { type: 'string' },
  },
});

/** #45's table of `rows` (this benchmark's json rows) as markdown: the flat arrays, then with the shape. */
function issueTable(rows) {
  const head =
    '| array | decompress: device container -> device | host container -> device | CPU + upload | compress: device -> device container | device -> host | ratio GPU path / CPU path |\n| --- | --- | --- | --- | --- | --- | --- |';
  const line = (name, d, c, gpuRatio, cpuRatio) =>
    `| ${name} | ${[d.gpuResident, d.gpu, d.cpuUpload, c.gpuResident, c.gpu].map((v) => v.toFixed(1)).join(' | ')} | ${gpuRatio.toFixed(3)} / ${cpuRatio.toFixed(3)} |`;
  const flat = rows.map((r) => line(r.file, r.decompress, r.compress, r.ratioGpu, r.ratioCpu));
  const shaped = rows.map((r) => line(r.file, r.shaped.decompress, r.shaped.compress, r.shaped.ratioGpu, r.shaped.ratio));
  return `GB/s of elements, medians (bench/gpu-corpus.mjs); flat:\n\n${head}\n${flat.join('\n')}\n\nWith the shape:\n\n${head}\n${shaped.join('\n')}\n`;
}

if (args.table !== undefined) {
  const table = issueTable(JSON.parse(readFileSync(args.table, 'utf8')).rows);
  console.log(table);
  writeFileSync(args.table.replace(/\.json$/, '.md'), table);
  process.exit(0);
}
const quick = args.quick === true;
const REPS = quick ? 3 : 7;
/**
 * A pipeline the GPU path codes itself, per element width (its container must equal the CPU
 * path's); 8-byte elements have none (their chunks are predicted or stored; f64's decimal map is
 * compressed on the CPU path: pdb_atoms_f64's GPU compress is a readback and the CPU path).
 */
const FIXED = { 1: 'delta+huffman', 2: 'shuffle+huffman', 4: 'delta+shuffle+huffman', 8: undefined };
/** ms of calls made back to back before each figure's timed ones (the GPU's clock rises under load). */
const SUSTAIN_MS = quick ? 150 : 600;
const clocks = await startClockSampler();
/** Each figure's median SM clock (MHz) during its timed calls, by name, for the row being measured. */
let rowClocks = {};
/**
 * Median ms of REPS calls of `fn` (bench/lib/measure.mjs) after SUSTAIN_MS of calls back to back;
 * the median SM clock of the timed calls goes to rowClocks[name].
 */
const timeMs = async (name, fn) => {
  for (const t0 = performance.now(); performance.now() - t0 < SUSTAIN_MS;) await fn();
  const start = Date.now();
  const { medianMs } = await timeCalls(fn, { minRuns: REPS, minMs: 0, warmups: 0 });
  rowClocks[name] = await clocks.smMhzDuring(start, Date.now());
  return medianMs;
};

const workers = Number(args.workers ?? Math.min(16, os.cpus().length));
const engine = await createEngine({ workers, gpu: 'require', calibration: 'skip' });
const rows = [];
const problems = [];
for (const file of dataFiles({ samples: [], files: args.files })) {
  const { Ctor } = file;
  const raw = readFileSync(file.path);
  for (const mib of quick ? [0] : [0, 64]) {
    // as it is, or whole copies of it to at least `mib` MiB
    const host = repeatTo(raw, mib === 0 ? raw.length : Math.ceil((mib << 20) / raw.length) * raw.length, Ctor);
    const B = host.byteLength;
    const name = `${file.name}${mib > 0 ? ` x${Math.round(B / raw.length)}` : ''}`;
    const device = await engine.upload(host);
    // checks
    const fixed = FIXED[Ctor.BYTES_PER_ELEMENT];
    // the same chunk size on both paths (their defaults differ: 128 KiB and 4 MiB)
    // (and the same Huffman mode: here mode 3, decoder 'gpu', the less tested one)
    if (fixed !== undefined) {
      const cpuFixed = await engine.compress(host, { codec: fixed, path: 'cpu', chunkBytes: 1 << 17, decoder: 'gpu' });
      const gpuFixed = await engine.compress(device, { codec: fixed, path: 'gpu', chunkBytes: 1 << 17, decoder: 'gpu' });
      if (!same(cpuFixed, gpuFixed)) problems.push(`${name}: ${fixed} containers differ between the paths`);
    }
    const cpuAuto = await engine.compress(host, { path: 'cpu' });
    // a CPU-path container laid out for the GPU decoder (Huffman mode 3): what the GPU decodes below
    const cpuForGpu = await engine.compress(host, { path: 'cpu', decoder: 'gpu' });
    const gpuAuto = await engine.compress(device, { path: 'gpu' });
    // the GPU path at the CPU path's chunk size (its default level's)
    const cpuChunks = { chunkBytes: engine.inspect(cpuForGpu).chunkLength * Ctor.BYTES_PER_ELEMENT };
    const gpuCpuChunks = await engine.compress(device, { path: 'gpu', ...cpuChunks });
    for (const [what, container] of [
      ['cpu auto', cpuAuto],
      ['cpu auto for the gpu', cpuForGpu],
      ['gpu auto', gpuAuto],
    ]) {
      const back = await engine.decompress(container, { path: 'gpu', to: 'device' });
      if (!same(await engine.download(back), host)) problems.push(`${name}: the GPU decode of the ${what} container differs`);
      back.destroy();
      const cpuBack = await engine.decompress(container, { path: 'cpu' });
      if (!same(cpuBack, host)) problems.push(`${name}: the CPU decode of the ${what} container differs`);
    }
    const gpuResident = await engine.compress(device, { path: 'gpu', to: 'device' });
    if (!same(await engine.download(gpuResident), gpuAuto))
      problems.push(`${name}: the container compressed to the device differs from the host's`);
    gpuResident.destroy();
    const resident = await engine.upload(cpuForGpu);
    const fromResident = await engine.decompress(resident);
    if (!same(await engine.download(fromResident), host)) problems.push(`${name}: the GPU decode of a container on the device differs`);
    fromResident.destroy();
    // the array with its shape (copies stacked along the first axis): the CPU path predicts
    // (stage 7), and the GPU decodes the linear predictors itself
    const own = file.shape ?? [raw.length / Ctor.BYTES_PER_ELEMENT];
    const shape = [own[0] * Math.round(B / raw.length), ...own.slice(1)];
    const shaped = await engine.compress(host, { path: 'cpu', shape });
    const shapedForGpu = await engine.compress(host, { path: 'cpu', shape, decoder: 'gpu' });
    const encodings = engine.inspect(shapedForGpu).chunks.map((c) => c.encoding);
    const predicted = encodings.filter((e) => e.startsWith('predict'));
    const predictedOnCpu = predicted.filter((e) => /med/.test(e)).length;
    // the GPU path's own container with the shape (predicted chunks written on the GPU)
    const gpuShaped = await engine.compress(device, { path: 'gpu', shape });
    for (const [what, back] of [
      ['GPU', async () => engine.download(await engine.decompress(gpuShaped, { path: 'gpu', to: 'device' }))],
      ['CPU', () => engine.decompress(gpuShaped, { path: 'cpu' })],
    ]) {
      if (!same(await back(), host)) problems.push(`${name}: the ${what} decode of the GPU path's shaped container differs`);
    }
    const gpuShapedCpuChunks = await engine.compress(device, {
      path: 'gpu',
      shape,
      chunkBytes: engine.inspect(shapedForGpu).chunkLength * Ctor.BYTES_PER_ELEMENT,
    });
    for (const [what, container] of [
      ['flat', gpuCpuChunks],
      ['shaped', gpuShapedCpuChunks],
    ]) {
      if (!same(await engine.decompress(container, { path: 'cpu' }), host))
        problems.push(`${name}: the CPU decode of the GPU path's ${what} container in the CPU path's chunks differs`);
    }
    const gpuShapedPredicted = engine.inspect(gpuShaped).chunks.filter((c) => c.encoding.startsWith('predict')).length;
    const shapedResident = await engine.upload(shapedForGpu);
    for (const [what, back] of [
      ['host', await engine.decompress(shapedForGpu, { path: 'gpu', to: 'device' })],
      ['device', await engine.decompress(shapedResident)],
    ]) {
      if (!same(await engine.download(back), host))
        problems.push(`${name}: the GPU decode of the shaped container (from the ${what}) differs`);
      back.destroy();
    }
    // timings
    rowClocks = {};
    const cGpu = await timeMs('cGpu', () => engine.compress(device, { path: 'gpu' }));
    const cResident = await timeMs('cResident', async () => (await engine.compress(device, { path: 'gpu', to: 'device' })).destroy());
    const cCpu = await timeMs('cCpu', async () => engine.compress(await engine.download(device), { path: 'cpu' }));
    const dGpu = await timeMs('dGpu', async () => (await engine.decompress(cpuForGpu, { path: 'gpu', to: 'device' })).destroy());
    const dResident = await timeMs('dResident', async () => (await engine.decompress(resident)).destroy());
    /** The container uploaded, then decoded from the device (its upload destroyed after). */
    const uploadThenDecode = async (container) => {
      const up = await engine.upload(container);
      (await engine.decompress(up)).destroy();
      up.destroy();
    };
    const uResident = await timeMs('uResident', () => uploadThenDecode(cpuForGpu));
    const dCpu = await timeMs('dCpu', async () => (await engine.upload(await engine.decompress(cpuAuto, { path: 'cpu' }))).destroy());
    const cShaped = await timeMs('cShaped', () => engine.compress(device, { path: 'gpu', shape }));
    const cShapedResident = await timeMs('cShapedResident', async () =>
      (await engine.compress(device, { path: 'gpu', shape, to: 'device' })).destroy(),
    );
    const cShapedCpu = await timeMs('cShapedCpu', async () => engine.compress(await engine.download(device), { path: 'cpu', shape }));
    const dShaped = await timeMs('dShaped', async () => (await engine.decompress(shapedForGpu, { path: 'gpu', to: 'device' })).destroy());
    const dShapedResident = await timeMs('dShapedResident', async () => (await engine.decompress(shapedResident)).destroy());
    const uShapedResident = await timeMs('uShapedResident', () => uploadThenDecode(shapedForGpu));
    const dShapedCpu = await timeMs('dShapedCpu', async () =>
      (await engine.upload(await engine.decompress(shaped, { path: 'cpu' }))).destroy(),
    );
    // a viewer's batch: the array cut into containers of about 256 KiB (whole rows, with their
    // shape), 256 of them at most, decoded to one device buffer in one call, beside a call a
    // container and the CPU decode of the list + upload
    let batch;
    if (mib > 0) {
      const rowElements = own.slice(1).reduce((a, b) => a * b, 1);
      const rowsEach = Math.max(1, Math.round((256 << 10) / (rowElements * Ctor.BYTES_PER_ELEMENT)));
      const pieces = [];
      for (let row = 0; row < shape[0] && pieces.length < 256; row += rowsEach) {
        const rows = Math.min(rowsEach, shape[0] - row);
        const piece = host.subarray(row * rowElements, (row + rows) * rowElements);
        pieces.push({ piece, container: await engine.compress(piece, { path: 'cpu', shape: [rows, ...own.slice(1)], decoder: 'gpu' }) });
      }
      const list = pieces.map((p) => p.container);
      const elements = pieces.reduce((n, p) => n + p.piece.length, 0);
      const want = host.subarray(0, elements);
      const back = await engine.decompress(list, { path: 'gpu', to: 'device' });
      if (!same(await engine.download(back), want)) problems.push(`${name}: the GPU decode of a list of ${list.length} containers differs`);
      back.destroy();
      const bytesOut = elements * Ctor.BYTES_PER_ELEMENT;
      const tBatch = await timeMs('tBatch', async () => (await engine.decompress(list, { path: 'gpu', to: 'device' })).destroy());
      const tEach = await timeMs('tEach', async () => {
        for (const c of list) (await engine.decompress(c, { path: 'gpu', to: 'device' })).destroy();
      });
      const tCpu = await timeMs('tCpu', async () => (await engine.decompress(list, { path: 'cpu', to: 'device' })).destroy());
      batch = {
        containers: list.length,
        containerBytes: Math.round(bytesOut / list.length),
        decompress: { gpu: bytesOut / tBatch / 1e6, gpuEach: bytesOut / tEach / 1e6, cpuUpload: bytesOut / tCpu / 1e6 },
      };
    }
    device.destroy();
    resident.destroy();
    shapedResident.destroy();
    const row = {
      file: name,
      bytes: B,
      ratioCpu: B / cpuAuto.length,
      ratioCpuForGpu: B / cpuForGpu.length,
      ratioGpu: B / gpuAuto.length,
      ratioGpuCpuChunks: B / gpuCpuChunks.length,
      compress: { gpu: B / cGpu / 1e6, gpuResident: B / cResident / 1e6, readbackCpu: B / cCpu / 1e6 },
      decompress: {
        gpu: B / dGpu / 1e6,
        gpuResident: B / dResident / 1e6,
        uploadThenDevice: B / uResident / 1e6,
        cpuUpload: B / dCpu / 1e6,
      },
      shaped: {
        shape,
        ratio: B / shaped.length,
        ratioForGpu: B / shapedForGpu.length,
        ratioGpu: B / gpuShaped.length,
        ratioGpuCpuChunks: B / gpuShapedCpuChunks.length,
        chunksGpu: engine.inspect(gpuShaped).chunks.length,
        predictedGpu: gpuShapedPredicted,
        compress: { gpu: B / cShaped / 1e6, gpuResident: B / cShapedResident / 1e6, readbackCpu: B / cShapedCpu / 1e6 },
        chunks: encodings.length,
        predicted: predicted.length,
        predictedOnCpu,
        decompress: {
          gpu: B / dShaped / 1e6,
          gpuResident: B / dShapedResident / 1e6,
          uploadThenDevice: B / uShapedResident / 1e6,
          cpuUpload: B / dShapedCpu / 1e6,
        },
      },
      ...(batch !== undefined ? { batch } : {}),
      // the median SM clock (MHz) of each figure's timed calls, by the figure's variable here
      smMhz: rowClocks,
    };
    rows.push(row);
    console.log(
      `${name.padEnd(30)} ratio cpu ${row.ratioCpu.toFixed(3)} (for the gpu ${row.ratioCpuForGpu.toFixed(3)}) gpu ${row.ratioGpu.toFixed(3)} (in the CPU path's chunks ${row.ratioGpuCpuChunks.toFixed(3)})  compress gpu ${row.compress.gpu.toFixed(2)} (to the device ${row.compress.gpuResident.toFixed(2)}) / readback+cpu ${row.compress.readbackCpu.toFixed(2)}  decompress gpu ${row.decompress.gpu.toFixed(2)} (on the device ${row.decompress.gpuResident.toFixed(2)}, upload then on the device ${row.decompress.uploadThenDevice.toFixed(2)}) / cpu+upload ${row.decompress.cpuUpload.toFixed(2)} GB/s`,
    );
    const sh = row.shaped;
    console.log(
      `${''.padEnd(30)} shaped ${JSON.stringify(shape)}: ratio cpu ${sh.ratio.toFixed(3)} (for the gpu ${sh.ratioForGpu.toFixed(3)}) gpu ${sh.ratioGpu.toFixed(3)} (in the CPU path's chunks ${sh.ratioGpuCpuChunks.toFixed(3)}), ${sh.predicted}/${sh.chunks} chunks predicted (${sh.predictedOnCpu} on the CPU; the gpu's ${sh.predictedGpu}/${sh.chunksGpu})  compress gpu ${sh.compress.gpu.toFixed(2)} (to the device ${sh.compress.gpuResident.toFixed(2)}) / readback+cpu ${sh.compress.readbackCpu.toFixed(2)}  decompress gpu ${sh.decompress.gpu.toFixed(2)} (on the device ${sh.decompress.gpuResident.toFixed(2)}, upload then on the device ${sh.decompress.uploadThenDevice.toFixed(2)}) / cpu+upload ${sh.decompress.cpuUpload.toFixed(2)} GB/s`,
    );
    const mhz = Object.values(rowClocks).filter((v) => v !== null);
    if (mhz.length > 0) console.log(`${''.padEnd(30)} SM clock during the timed calls: ${Math.min(...mhz)}-${Math.max(...mhz)} MHz`);
    if (batch !== undefined) {
      console.log(
        `${''.padEnd(30)} a list of ${batch.containers} containers of ${(batch.containerBytes / 1024).toFixed(0)} KiB to the device: one call ${batch.decompress.gpu.toFixed(2)} / a call each ${batch.decompress.gpuEach.toFixed(2)} / cpu+upload ${batch.decompress.cpuUpload.toFixed(2)} GB/s`,
      );
    }
  }
}
await engine.destroy();
clocks.stop();
for (const p of problems) console.log(`PROBLEM ${p}`);
console.log(problems.length === 0 ? 'all checks passed' : `${problems.length} problems`);
const table = issueTable(rows);
console.log(`\n${table}`);
writeResults(
  { 'gpu-corpus.json': { machine: machineInfo(), workers, rows, problems }, 'gpu-corpus.md': table },
  { quick, out: args.out, gpu: true },
);
if (problems.length > 0) process.exitCode = 1;
