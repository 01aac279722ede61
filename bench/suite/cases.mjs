// The cases of the suite, grouped as the report shows them. Each group takes a run context
// ({ engine, policy, sizes, gpuCap, record, skip, log }) and records figures into it.
//
// parle's CPU cases run on arrays from engine.alloc (zero copy: the kernels read them where they
// are); "gpu, device-resident" cases upload once and time the op from a DeviceArray to a
// DeviceArray (the kernel plus submit and completion, the GPU-kernel-only figure); "gpu, host
// in/out" cases pass host arrays with path 'gpu' (upload, kernel, readback).
import { DeviceArray } from '../../dist/node/index.js';
import * as data from './data.mjs';
import { CODECS, bytesOf, codec, jsExclusiveScan, jsRleDecode, jsRleEncode, rlePackDecode, rlePackEncode } from './peers.mjs';
import { measure, timeOnce } from './measure.mjs';

const MiB = 2 ** 20;
export const sizeName = (bytes) =>
  bytes >= 2 ** 30 ? `${bytes / 2 ** 30} GiB` : bytes >= MiB ? `${+(bytes / MiB).toFixed(2)} MiB` : bytes >= 1024 ? `${+(bytes / 1024).toFixed(2)} KiB` : `${bytes} B`;

/** Copies a host array into the engine's shared memory (zero-copy input of parle's CPU path). */
function toEngine(engine, type, array) {
  const a = engine.alloc(type, array.length);
  a.set(array);
  return a;
}

const typeOf = (a) =>
  a instanceof Uint8Array ? 'u8' : a instanceof Uint16Array ? 'u16' : a instanceof Uint32Array ? 'u32' : a instanceof Int32Array ? 'i32' : 'f32';

function release(engine, x) {
  if (!x) return;
  if (x instanceof DeviceArray) x.destroy();
  else if (ArrayBuffer.isView(x)) engine.free(x);
  else if (typeof x === 'object') for (const v of Object.values(x)) release(engine, v);
}

/** Measures `fn` once to pick the repetition policy, then properly. */
async function timed(ctx, fn, opts = {}) {
  const probe = await timeOnce(fn);
  opts.afterProbe?.(probe.out);
  return measure(fn, { policy: ctx.policy, expectMs: probe.ms, ...opts });
}

/** Should a GPU case of `bytes` run here? Records the skip when not. */
function gpuAllowed(ctx, label, bytes) {
  if (!ctx.engine.adapter) return false;
  if (bytes > ctx.gpuCap) {
    ctx.skip(label, `GPU case of ${sizeName(bytes)} skipped: above this run's GPU cap of ${sizeName(ctx.gpuCap)} (${ctx.gpuCapWhy})`);
    return false;
  }
  return true;
}

/** The cost model's choice for a call, as recorded beside the figures. */
function explainOf(engine, op, input, to) {
  try {
    const e = engine.explain(op, input, to ? { to } : {});
    return { path: e.path, predictedMs: e.predictedMs, inputLocation: e.inputLocation, resultLocation: e.resultLocation, reason: e.reason };
  } catch (e) {
    return { error: String(e.message ?? e) };
  }
}

// ---- 1. throughput against size ----------------------------------------------------------------

/**
 * Every op at every size of `ctx.sizes.sweep` (bytes), each path of parle and each peer. A peer
 * or path whose call took over ctx.policy.giveUpMs at one size is not run at larger sizes.
 */
export async function sweep(ctx) {
  const { engine } = ctx;
  const slowAt = new Map();
  const run = async (op, impl, bytes, fn, extra = {}) => {
    const key = `${op}|${impl}`;
    if (slowAt.has(key)) {
      ctx.skip(`sweep ${op} ${impl} ${sizeName(bytes)}`, `not run: ${sizeName(slowAt.get(key))} already took over ${ctx.policy.giveUpMs / 1000} s a call`);
      return;
    }
    const ms = await timed(ctx, fn, extra.opts);
    if (ms.median > ctx.policy.giveUpMs) slowAt.set(key, bytes);
    ctx.record({ group: 'sweep', op, dataset: extra.dataset, impl, path: extra.path, location: extra.location, bytes, workBytes: extra.workBytes ?? bytes, unit: extra.unit, ms, explain: extra.explain });
  };

  for (const bytes of ctx.sizes.sweep) {
    ctx.log(`sweep ${sizeName(bytes)}`);
    // RLE encode / decode: u8, mean run 16
    {
      const host = data.runsBytes(bytes, 16, 1);
      const mine = toEngine(engine, 'u8', host);
      const ds = 'u8 runs, mean 16';
      await run('rleEncode', 'parle cpu', bytes, async () => release(engine, await engine.rleEncode(mine, { path: 'cpu' })), {
        dataset: ds, path: 'cpu', location: 'host', unit: 'GB/s of input', explain: explainOf(engine, 'rleEncode', mine),
      });
      const values = new Uint8Array(bytes);
      const lengths = new Uint32Array(bytes);
      await run('rleEncode', 'JS loop', bytes, () => jsRleEncode(host, values, lengths), { dataset: ds, unit: 'GB/s of input' });
      if (bytes <= ctx.sizes.rlePackMax) await run('rleEncode', '@thi.ng/rle-pack', bytes, () => rlePackEncode(host), { dataset: ds, unit: 'GB/s of input' });
      else ctx.skip(`sweep rleEncode @thi.ng/rle-pack ${sizeName(bytes)}`, `not run above ${sizeName(ctx.sizes.rlePackMax)} (bit-level JS, seconds a call)`);

      const runs = await engine.rleEncode(mine, { path: 'cpu' });
      const runBytes = runs.values.byteLength + runs.lengths.byteLength;
      await run('rleDecode', 'parle cpu', bytes, async () => release(engine, await engine.rleDecode(runs, { path: 'cpu' })), {
        dataset: ds, path: 'cpu', location: 'host', unit: 'GB/s of output', explain: explainOf(engine, 'rleDecode', runs.values),
      });
      const count = jsRleEncode(host, values, lengths);
      const out = new Uint8Array(bytes);
      await run('rleDecode', 'JS fill per run', bytes, () => jsRleDecode(values, lengths, count, out), { dataset: ds, unit: 'GB/s of output' });
      if (bytes <= ctx.sizes.rlePackMax) {
        const packed = rlePackEncode(host);
        await run('rleDecode', '@thi.ng/rle-pack', bytes, () => rlePackDecode(packed), { dataset: ds, unit: 'GB/s of output' });
      }

      if (gpuAllowed(ctx, `sweep rle gpu ${sizeName(bytes)}`, bytes)) {
        const dev = await engine.upload(host);
        await run('rleEncode', 'parle gpu, device-resident', bytes, async () => release(engine, await engine.rleEncode(dev, { path: 'gpu' })), {
          dataset: ds, path: 'gpu', location: 'device', unit: 'GB/s of input', explain: explainOf(engine, 'rleEncode', dev),
        });
        await run('rleEncode', 'parle gpu, host in/out', bytes, async () => engine.rleEncode(host, { path: 'gpu' }), {
          dataset: ds, path: 'gpu', location: 'host', unit: 'GB/s of input',
        });
        const devRuns = await engine.rleEncode(dev, { path: 'gpu' });
        await run('rleDecode', 'parle gpu, device-resident', bytes, async () => release(engine, await engine.rleDecode(devRuns, { path: 'gpu' })), {
          dataset: ds, path: 'gpu', location: 'device', unit: 'GB/s of output', explain: explainOf(engine, 'rleDecode', devRuns.values),
        });
        const hostRuns = { values: runs.values.slice(), lengths: runs.lengths.slice() };
        await run('rleDecode', 'parle gpu, host in/out', bytes, async () => engine.rleDecode(hostRuns, { path: 'gpu' }), {
          dataset: ds, path: 'gpu', location: 'host', unit: 'GB/s of output',
        });
        release(engine, devRuns);
        dev.destroy();
      }
      void runBytes;
      release(engine, runs);

      // compress / decompress: the .parle container against the peers' formats
      await run('compress', 'parle .parle', bytes, () => engine.compress(mine), {
        dataset: ds, path: 'cpu', location: 'host', unit: 'GB/s of input', explain: explainOf(engine, 'compress', mine),
      });
      const packed = await engine.compress(mine);
      await run('decompress', 'parle .parle', bytes, async () => release(engine, await engine.decompress(packed)), {
        dataset: ds, path: 'cpu', location: 'host', unit: 'GB/s of output', explain: explainOf(engine, 'decompress', packed),
      });
      for (const c of CODECS) {
        if (c.name.startsWith('JS pair')) continue;
        if (bytes > ctx.sizes.peerSweepMax) {
          ctx.skip(`sweep compress/decompress ${c.name} ${sizeName(bytes)}`, `peer codecs not run above ${sizeName(ctx.sizes.peerSweepMax)} in this mode (time limit)`);
          continue;
        }
        await run('compress', c.name, bytes, () => c.encode(host), { dataset: ds, unit: 'GB/s of input' });
        const enc = await c.encode(host);
        await run('decompress', c.name, bytes, () => c.decode(enc, bytes), { dataset: ds, unit: 'GB/s of output' });
      }
      engine.free(mine);
    }

    // sort: random u32 keys; scan: random u32
    {
      const n = bytes / 4;
      const keys = data.sortKeys('random-u32', n, 2);
      const mine = toEngine(engine, 'u32', keys);
      const ds = 'random u32';
      await run('sort', 'parle cpu', bytes, async () => release(engine, await engine.sort(mine, { path: 'cpu' })), {
        dataset: ds, path: 'cpu', location: 'host', unit: 'GB/s of keys', explain: explainOf(engine, 'sort', mine),
      });
      const work = new Uint32Array(n);
      await run('sort', 'TypedArray.prototype.sort', bytes, () => work.sort(), { dataset: ds, unit: 'GB/s of keys', opts: { beforeEach: () => work.set(keys) } });
      const scanIn = data.scanArray('random-u32', n, 4);
      const scanMine = toEngine(engine, 'u32', scanIn);
      await run('scan', 'parle cpu', bytes, async () => release(engine, await engine.scan(scanMine, { path: 'cpu' })), {
        dataset: ds, path: 'cpu', location: 'host', unit: 'GB/s of input', explain: explainOf(engine, 'scan', scanMine),
      });
      const scanOut = new Uint32Array(n);
      await run('scan', 'JS loop', bytes, () => jsExclusiveScan(scanIn, scanOut), { dataset: ds, unit: 'GB/s of input' });
      if (gpuAllowed(ctx, `sweep sort/scan gpu ${sizeName(bytes)}`, bytes)) {
        const dev = await engine.upload(keys);
        await run('sort', 'parle gpu, device-resident', bytes, async () => release(engine, await engine.sort(dev, { path: 'gpu' })), {
          dataset: ds, path: 'gpu', location: 'device', unit: 'GB/s of keys', explain: explainOf(engine, 'sort', dev),
        });
        await run('sort', 'parle gpu, host in/out', bytes, () => engine.sort(keys, { path: 'gpu' }), { dataset: ds, path: 'gpu', location: 'host', unit: 'GB/s of keys' });
        dev.destroy();
        const devScan = await engine.upload(scanIn);
        await run('scan', 'parle gpu, device-resident', bytes, async () => release(engine, await engine.scan(devScan, { path: 'gpu' })), {
          dataset: ds, path: 'gpu', location: 'device', unit: 'GB/s of input', explain: explainOf(engine, 'scan', devScan),
        });
        await run('scan', 'parle gpu, host in/out', bytes, () => engine.scan(scanIn, { path: 'gpu' }), { dataset: ds, path: 'gpu', location: 'host', unit: 'GB/s of input' });
        devScan.destroy();
      }
      engine.free(mine);
      engine.free(scanMine);
    }
  }
}

// ---- 2. keys of every kind, scan of u32 and f32 -------------------------------------------------

export async function keyKinds(ctx) {
  const { engine } = ctx;
  const n = ctx.sizes.kindKeys;
  ctx.log(`sort keys of each kind, ${n} keys; scan u32 / f32`);
  for (const kind of data.SORT_KEY_KINDS) {
    const keys = data.sortKeys(kind, n, 21);
    const type = typeOf(keys);
    const mine = toEngine(engine, type, keys);
    const base = { group: 'kinds', op: 'sort', dataset: kind, bytes: keys.byteLength, workBytes: keys.byteLength, unit: 'GB/s of keys' };
    ctx.record({ ...base, impl: 'parle cpu', path: 'cpu', location: 'host', ms: await timed(ctx, async () => release(engine, await engine.sort(mine, { path: 'cpu' }))), explain: explainOf(engine, 'sort', mine) });
    const work = keys.slice();
    ctx.record({ ...base, impl: 'TypedArray.prototype.sort', ms: await timed(ctx, () => work.sort(), { beforeEach: () => work.set(keys) }) });
    const gn = Math.min(n, ctx.gpuCap / 4, ctx.sizes.kindGpuKeys);
    if (ctx.engine.adapter && gn >= 1024) {
      const gkeys = keys.subarray(0, gn);
      const dev = await engine.upload(gkeys);
      ctx.record({ ...base, bytes: gn * 4, workBytes: gn * 4, impl: 'parle gpu, device-resident', path: 'gpu', location: 'device', ms: await timed(ctx, async () => release(engine, await engine.sort(dev, { path: 'gpu' }))), explain: explainOf(engine, 'sort', dev), note: gn < n ? `GPU at ${gn} keys (cap)` : undefined });
      dev.destroy();
    }
    engine.free(mine);
  }
  for (const kind of ['random-u32', 'random-f32']) {
    const input = data.scanArray(kind, n, 23);
    const mine = toEngine(engine, typeOf(input), input);
    const base = { group: 'kinds', op: 'scan', dataset: kind, bytes: input.byteLength, workBytes: input.byteLength, unit: 'GB/s of input' };
    ctx.record({ ...base, impl: 'parle cpu', path: 'cpu', location: 'host', ms: await timed(ctx, async () => release(engine, await engine.scan(mine, { path: 'cpu' }))), explain: explainOf(engine, 'scan', mine) });
    const out = input instanceof Float32Array ? new Float32Array(n) : new Uint32Array(n);
    ctx.record({ ...base, impl: 'JS loop', ms: await timed(ctx, () => jsExclusiveScan(input, out)) });
    const gn = Math.min(n, ctx.gpuCap / 4, ctx.sizes.kindGpuKeys);
    if (ctx.engine.adapter && gn >= 1024) {
      const dev = await engine.upload(input.subarray(0, gn));
      ctx.record({ ...base, bytes: gn * 4, workBytes: gn * 4, impl: 'parle gpu, device-resident', path: 'gpu', location: 'device', ms: await timed(ctx, async () => release(engine, await engine.scan(dev, { path: 'gpu' }))), explain: explainOf(engine, 'scan', dev), note: gn < n ? `GPU at ${gn} elements (cap)` : undefined });
      dev.destroy();
    }
    engine.free(mine);
  }
}

// ---- 3. Gruber: scan at 2^26, sort at 2^25 and 2^26 --------------------------------------------

export async function gruber(ctx) {
  const { engine } = ctx;
  const cases = [
    { op: 'scan', log2: ctx.sizes.gruberScanLog2, paper: 26 },
    ...ctx.sizes.gruberSortLog2.map((log2, i) => ({ op: 'sort', log2, paper: [25, 26][i] })),
  ];
  for (const c of cases) {
    const n = 2 ** c.log2;
    ctx.log(`gruber ${c.op} 2^${c.log2}`);
    const input = c.op === 'scan' ? data.scanArray('random-u32', n, 31) : data.sortKeys('random-u32', n, 32);
    const bytes = input.byteLength;
    const base = { group: 'gruber', op: c.op, dataset: `random u32, 2^${c.log2}`, paperLog2: c.paper, bytes, workBytes: bytes, unit: c.op === 'sort' ? 'GB/s of keys' : 'GB/s of input' };
    const call = (x, o) => (c.op === 'scan' ? engine.scan(x, o) : engine.sort(x, o));
    const mine = toEngine(engine, 'u32', input);
    ctx.record({ ...base, impl: 'parle cpu', path: 'cpu', location: 'host', ms: await timed(ctx, async () => release(engine, await call(mine, { path: 'cpu' }))), explain: explainOf(engine, c.op, mine) });
    engine.free(mine);
    if (c.op === 'scan') {
      const out = new Uint32Array(n);
      ctx.record({ ...base, impl: 'JS loop', ms: await timed(ctx, () => jsExclusiveScan(input, out)) });
    } else {
      const work = new Uint32Array(n);
      ctx.record({ ...base, impl: 'TypedArray.prototype.sort', ms: await timed(ctx, () => work.sort(), { beforeEach: () => work.set(input) }) });
    }
    if (gpuAllowed(ctx, `gruber ${c.op} 2^${c.log2} gpu`, bytes)) {
      let dev;
      const up = await timed(ctx, async () => {
        dev?.destroy();
        dev = await engine.upload(input);
      });
      ctx.record({ ...base, impl: 'upload (host to GPU)', path: 'gpu', ms: up });
      ctx.record({ ...base, impl: 'parle gpu, kernel only (device-resident)', path: 'gpu', location: 'device', ms: await timed(ctx, async () => release(engine, await call(dev, { path: 'gpu' }))), explain: explainOf(engine, c.op, dev) });
      const result = await call(dev, { path: 'gpu' });
      const resultDev = result instanceof DeviceArray ? result : result.keys;
      ctx.record({ ...base, impl: 'download (GPU to host)', path: 'gpu', ms: await timed(ctx, () => engine.download(resultDev)) });
      release(engine, result);
      dev.destroy();
      ctx.record({ ...base, impl: 'parle gpu, with transfers (host in/out)', path: 'gpu', location: 'host', ms: await timed(ctx, () => call(input, { path: 'gpu' })), explain: explainOf(engine, c.op, input) });
    }
  }
}

// ---- 4. Rutter: the four files ------------------------------------------------------------------

export async function rutter(ctx) {
  const { engine } = ctx;
  const edge = ctx.sizes.rutterEdge;
  for (const file of data.rutterFiles(edge)) {
    ctx.log(`rutter ${file.name} ${edge}^3`);
    const host = file.data();
    const bytes = host.length;
    const base = { group: 'rutter', dataset: file.name, edge, bytes, workBytes: bytes, unit: 'GB/s of input' };
    const mine = toEngine(engine, 'u8', host);
    let runs;
    ctx.record({ ...base, op: 'rleEncode', impl: 'parle rleEncode cpu (runs: u8 values + u32 lengths)', path: 'cpu', location: 'host', ms: await timed(ctx, async () => release(engine, await engine.rleEncode(mine, { path: 'cpu' }))), explain: explainOf(engine, 'rleEncode', mine) });
    runs = await engine.rleEncode(mine, { path: 'cpu' });
    const runsBytes = runs.values.byteLength + runs.lengths.byteLength;
    const runCount = runs.values.length;
    ctx.last().outBytes = runsBytes;
    ctx.last().runs = runCount;
    release(engine, runs);
    ctx.record({ ...base, op: 'compress', impl: 'parle .parle (RLE, LEB128 lengths)', path: 'cpu', location: 'host', ms: await timed(ctx, () => engine.compress(mine)), explain: explainOf(engine, 'compress', mine) });
    ctx.last().outBytes = (await engine.compress(mine)).byteLength;
    for (const name of ['JS pair RLE (Rutter)', "CompressionStream('gzip')", 'zstd-wasm -3', 'lz4-wasm']) {
      const c = codec(name);
      ctx.record({ ...base, op: 'compress', impl: name, ms: await timed(ctx, () => c.encode(host)) });
      ctx.last().outBytes = (await c.encode(host)).byteLength;
    }
    engine.free(mine);
  }
  // CPU vs GPU where the data is on the GPU (Rutter's setting: the renderer's volume is in GPU
  // memory; the compressed result is wanted on the host).
  const gEdge = ctx.sizes.rutterGpuEdge;
  if (!ctx.engine.adapter) {
    ctx.skip('rutter CPU vs GPU', 'no WebGPU adapter');
    return;
  }
  if (!gpuAllowed(ctx, `rutter CPU vs GPU ${gEdge}^3`, gEdge ** 3)) return;
  for (const file of data.rutterFiles(gEdge)) {
    ctx.log(`rutter CPU vs GPU ${file.name} ${gEdge}^3`);
    const host = file.data();
    const bytes = host.length;
    const dev = await engine.upload(host);
    const base = { group: 'rutter-gpu', op: 'rleEncode', dataset: file.name, edge: gEdge, bytes, workBytes: bytes, unit: 'GB/s of input' };
    ctx.record({ ...base, impl: 'gpu: volume on GPU, runs to host', path: 'gpu', location: 'device', ms: await timed(ctx, () => engine.rleEncode(dev, { path: 'gpu', to: 'host' })), explain: explainOf(engine, 'rleEncode', dev, 'host') });
    ctx.record({ ...base, impl: 'cpu: volume read back, then CPU RLE', path: 'cpu', location: 'device', ms: await timed(ctx, async () => release(engine, await engine.rleEncode(dev, { path: 'cpu', to: 'host' }))) });
    ctx.record({ ...base, impl: 'gpu kernel only: volume on GPU, runs stay there', path: 'gpu', location: 'device', ms: await timed(ctx, async () => release(engine, await engine.rleEncode(dev, { path: 'gpu', to: 'device' }))) });
    const mine = toEngine(engine, 'u8', host);
    ctx.record({ ...base, impl: 'cpu: volume already on host', path: 'cpu', location: 'host', ms: await timed(ctx, async () => release(engine, await engine.rleEncode(mine, { path: 'cpu' }))) });
    ctx.record({ ...base, impl: 'readback of the raw volume alone', path: 'gpu', ms: await timed(ctx, () => engine.download(dev)) });
    engine.free(mine);
    dev.destroy();
  }
}

// ---- 5. Haugen: RLE of quantized seismic cubes ---------------------------------------------------

export async function haugen(ctx) {
  const { engine } = ctx;
  for (const edge of ctx.sizes.haugenEdges) {
    ctx.log(`haugen seismic ${edge}^3`);
    const raw = data.seismicVolume(edge);
    const rawBytes = raw.byteLength;
    const variants = [
      { name: 'float32 raw', array: raw },
      ...[8, 16].map((bits) => {
        const q = data.quantizeDeadZone(raw, bits);
        return { name: `quantized ${bits}-bit`, array: q.indices, snrDb: data.snrDb(raw, q.indices, q.step) };
      }),
    ];
    // Haugen's cube kept 24.67 dB: the same SNR from a coarser step (more samples in the dead zone)
    const scale = data.stepScaleForSnr(raw, 24.67);
    const coarse = data.quantizeDeadZone(raw, 8, 0.6, scale);
    variants.push({ name: `quantized 8-bit, step x${scale} (SNR near Haugen's 24.67 dB)`, array: coarse.indices, snrDb: data.snrDb(raw, coarse.indices, coarse.step) });
    let rawUploaded = false;
    for (const v of variants) {
      const bytes = v.array.byteLength;
      const base = { group: 'haugen', dataset: `${edge}^3 ${v.name}`, edge, variant: v.name, rawFloatBytes: rawBytes, snrDb: v.snrDb, bytes, workBytes: bytes, unit: 'GB/s of input' };
      const mine = toEngine(engine, typeOf(v.array), v.array);
      ctx.record({ ...base, op: 'compress', impl: 'parle .parle (RLE, LEB128 lengths)', path: 'cpu', location: 'host', ms: await timed(ctx, () => engine.compress(mine)), explain: explainOf(engine, 'compress', mine) });
      const packed = await engine.compress(mine);
      ctx.last().outBytes = packed.byteLength;
      ctx.record({ ...base, op: 'decompress', impl: 'parle .parle (RLE, LEB128 lengths)', path: 'cpu', location: 'host', unit: 'GB/s of output', ms: await timed(ctx, async () => release(engine, await engine.decompress(packed))) });
      const runs = await engine.rleEncode(mine, { path: 'cpu' });
      ctx.record({ ...base, op: 'rleEncode', impl: 'parle rleEncode cpu (runs: values + u32 lengths)', path: 'cpu', location: 'host', ms: await timed(ctx, async () => release(engine, await engine.rleEncode(mine, { path: 'cpu' }))), outBytes: runs.values.byteLength + runs.lengths.byteLength, runs: runs.values.length });
      // Haugen's rule: decoding on the GPU must beat uploading the raw floats it replaces
      if (v.name.startsWith('quantized 8-bit') && gpuAllowed(ctx, `haugen ${base.dataset} gpu decode`, bytes)) {
        const hostRuns = { values: runs.values.slice(), lengths: runs.lengths.slice() };
        const runBytes = hostRuns.values.byteLength + hostRuns.lengths.byteLength;
        ctx.record({ ...base, op: 'rleDecode', impl: 'parle gpu: runs uploaded, decoded on the GPU', path: 'gpu', location: 'host', unit: 'GB/s of output', outBytes: runBytes, ms: await timed(ctx, async () => release(engine, await engine.rleDecode(hostRuns, { path: 'gpu', to: 'device' }))), explain: explainOf(engine, 'rleDecode', hostRuns.values, 'device') });
        if (!rawUploaded) {
          ctx.record({ ...base, op: 'upload', impl: 'upload of the raw float32 cube', path: 'gpu', bytes: rawBytes, workBytes: rawBytes, ms: await timed(ctx, async () => (await engine.upload(raw)).destroy()) });
          rawUploaded = true;
        }
      }
      release(engine, runs);
      engine.free(mine);
      const u8 = bytesOf(v.array);
      if (bytes > ctx.sizes.haugenPeerMax) {
        ctx.skip(`haugen ${base.dataset} peers`, `peer codecs not run above ${sizeName(ctx.sizes.haugenPeerMax)} in this mode (time limit)`);
        continue;
      }
      for (const name of ['lz4-wasm', 'zstd-wasm -3', ...(bytes <= ctx.sizes.deflateMax ? ['fflate deflate-1'] : [])]) {
        const c = codec(name);
        ctx.record({ ...base, op: 'compress', impl: name, ms: await timed(ctx, () => c.encode(u8)) });
        ctx.last().outBytes = (await c.encode(u8)).byteLength;
      }
      if (bytes > ctx.sizes.deflateMax) ctx.skip(`haugen ${base.dataset} fflate deflate-1`, `not run above ${sizeName(ctx.sizes.deflateMax)} (tens of seconds)`);
    }
  }
}

// ---- 6. real samples ----------------------------------------------------------------------------

export async function real(ctx) {
  const { engine } = ctx;
  const samples = await data.loadSamples();
  ctx.samples = samples.map(({ data: d, ...meta }) => ({ ...meta, bytes: d.byteLength }));
  for (const s of samples) {
    ctx.log(`real ${s.name}`);
    const bytes = s.data.byteLength;
    const base = { group: 'real', dataset: s.name, sampleType: s.type, bytes, workBytes: bytes };
    const mine = toEngine(engine, s.type, s.data);
    ctx.record({ ...base, op: 'compress', impl: 'parle .parle', path: 'cpu', location: 'host', unit: 'GB/s of input', ms: await timed(ctx, () => engine.compress(mine)), explain: explainOf(engine, 'compress', mine) });
    const packed = await engine.compress(mine);
    ctx.last().outBytes = packed.byteLength;
    ctx.record({ ...base, op: 'decompress', impl: 'parle .parle', path: 'cpu', location: 'host', unit: 'GB/s of output', ms: await timed(ctx, async () => release(engine, await engine.decompress(packed))), outBytes: packed.byteLength });
    engine.free(mine);
    const u8 = bytesOf(s.data);
    for (const c of CODECS) {
      ctx.record({ ...base, op: 'compress', impl: c.name, unit: 'GB/s of input', ms: await timed(ctx, () => c.encode(u8)) });
      const enc = await c.encode(u8);
      ctx.last().outBytes = enc.byteLength;
      ctx.record({ ...base, op: 'decompress', impl: c.name, unit: 'GB/s of output', ms: await timed(ctx, () => c.decode(enc, bytes)), outBytes: enc.byteLength });
    }
    if (gpuAllowed(ctx, `real ${s.name} gpu`, bytes)) {
      const dev = await engine.upload(s.data);
      ctx.record({ ...base, op: 'rleEncode', impl: 'parle gpu, device-resident', path: 'gpu', location: 'device', unit: 'GB/s of input', ms: await timed(ctx, async () => release(engine, await engine.rleEncode(dev, { path: 'gpu' }))), explain: explainOf(engine, 'rleEncode', dev) });
      dev.destroy();
    }
    const mine2 = toEngine(engine, s.type, s.data);
    ctx.record({ ...base, op: 'rleEncode', impl: 'parle cpu', path: 'cpu', location: 'host', unit: 'GB/s of input', ms: await timed(ctx, async () => release(engine, await engine.rleEncode(mine2, { path: 'cpu' }))), explain: explainOf(engine, 'rleEncode', mine2) });
    engine.free(mine2);
  }
}
