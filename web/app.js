// The demo page: a plain module script that imports the browser bundle as any site would.
// The bundle finds its worker script (./worker.js) and kernels (../../build/*.wasm) from its own
// URL, and chooses shared memory or transferred segments from `crossOriginIsolated`.
import { createEngine, elementSize, isParleError } from '/dist/browser/index.js';
import { drawTimesChart } from './chart.js';
import { runSelfTest } from './selftest.js';
import { openZarrView } from './zarr-view.js';

const $ = (id) => document.getElementById(id);

/** Bytes handed to the streaming compressor / decompressor at a time (the progress bar's step). */
const PIECE_BYTES = 1 << 20;
/** Chunk size of the containers the page writes (smaller than the 4 MiB default: a finer progress bar). */
const CHUNK_BYTES = 1 << 20;
/** Per-path timings run on at most this many leading bytes of the file. */
const SAMPLE_BYTES = 2 << 20;
const MAGIC = [0x89, 0x50, 0x41, 0x52, 0x4c, 0x45, 0x0d, 0x0a];
const TYPE_NAMES = { u8: 'Uint8Array', u16: 'Uint16Array', u32: 'Uint32Array', i32: 'Int32Array', f32: 'Float32Array' };
const CONSTRUCTORS = { u8: Uint8Array, u16: Uint16Array, u32: Uint32Array, i32: Int32Array, f32: Float32Array };

let engine;
/** The chosen file: { file, bytes, isContainer }. */
let source;
/** The last compression: { blob, bytes, type }. */
let packed;
let busy = false;

// ---- small helpers ------------------------------------------------------------------------

function formatBytes(n) {
  if (n < 1024) return `${n} B`;
  if (n < 1 << 20) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / (1 << 20)).toFixed(2)} MiB`;
}

/** MB/s with MB = 10^6 bytes. */
function rate(bytes, ms) {
  return ms > 0 ? (bytes / 1e6 / (ms / 1e3)).toFixed(1) : '∞';
}

function setProgress(fraction, label) {
  $('progress').value = fraction;
  $('progress-label').textContent = label;
}

function showError(e) {
  const text = isParleError(e) ? `${e.code}: ${e.message}` : (e?.message ?? String(e));
  $('error').textContent = text;
  $('error').hidden = false;
  console.error('parle demo:', e);
}

function clearError() {
  $('error').hidden = true;
  $('error').textContent = '';
}

function addRow(table, cells) {
  const row = document.createElement('tr');
  for (const cell of cells) {
    const td = document.createElement('td');
    td.textContent = cell;
    row.append(td);
  }
  $(table).querySelector('tbody').append(row);
  $(table).hidden = false;
}

function sameBytes(a, b) {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Concatenates byte pieces. */
function concat(pieces) {
  const out = new Uint8Array(pieces.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of pieces) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

function offerDownload(blob, name) {
  const link = $('download');
  if (link.href) URL.revokeObjectURL(link.href);
  link.href = URL.createObjectURL(blob);
  link.download = name;
  link.textContent = `Download ${name} (${formatBytes(blob.size)})`;
  link.hidden = false;
}

function updateButtons() {
  const type = $('type').value;
  const aligned = source && (source.isContainer || source.bytes.length % elementSize(type) === 0);
  $('compress').disabled = busy || !source || source.isContainer || !aligned;
  $('decompress').disabled = busy || !source || !(source.isContainer || packed);
  $('type').disabled = busy || source?.isContainer === true;
  $('try-sample').disabled = busy || !engine;
  if (source && !aligned) {
    $('file-info').textContent =
      `${source.file.name}: ${source.bytes.length} bytes is not a whole number of ${type} elements (${elementSize(type)} bytes each); choose another type`;
  } else if (source) {
    const what = source.isContainer ? 'a .parle container' : `${source.bytes.length / elementSize(type)} ${type} elements`;
    $('file-info').textContent = `${source.file.name}: ${formatBytes(source.bytes.length)}, ${what}`;
  }
}

// ---- the environment ------------------------------------------------------------------------

function showEnvironment() {
  const shared = engine.alloc('u8', 1);
  const isShared = typeof SharedArrayBuffer === 'function' && shared.buffer instanceof SharedArrayBuffer;
  engine.free(shared);
  $('env-isolation').textContent = globalThis.crossOriginIsolated
    ? 'cross-origin isolated: the workers share one WebAssembly.Memory (zero copy)'
    : 'not cross-origin isolated: segments are transferred to the workers (serve with COOP/COEP headers for the fast path)';
  $('env-isolation').dataset.shared = String(isShared);
  $('env-cpu').textContent = `${engine.workers} WebAssembly SIMD workers`;
  const adapter = engine.adapter;
  $('env-gpu').textContent = adapter
    ? `WebGPU: ${[adapter.vendor, adapter.architecture, adapter.description].filter(Boolean).join(' ') || 'adapter'}`
    : navigator.gpu
      ? 'WebGPU present, but no adapter: the CPU path runs'
      : 'no WebGPU in this browser: the CPU path runs';
}

// ---- choosing a file ------------------------------------------------------------------------

async function chooseFile(file) {
  if (!file || busy) return;
  delete document.body.dataset.sample;
  await setSource(file);
}

/** Makes `file` the page's input (a .parle container when it starts with the magic). */
async function setSource(file) {
  clearError();
  packed = undefined;
  $('download').hidden = true;
  $('verdict').textContent = '';
  $('stats').querySelector('tbody').replaceChildren();
  $('stats').hidden = true;
  const bytes = new Uint8Array(await file.arrayBuffer());
  const isContainer = bytes.length >= 8 && MAGIC.every((b, i) => bytes[i] === b);
  source = { file, bytes, isContainer };
  $('drop-text').textContent = `${file.name} (${formatBytes(file.size)}); drop or choose another`;
  setProgress(0, 'ready');
  updateButtons();
}

/**
 * Fetches a sample of the repository (data/samples/, served at /samples/ by web/serve.mjs), sets
 * the element type to the sample's and makes it the input, as a chosen file would be.
 */
async function loadSample(name, type) {
  setProgress(0, `fetching ${name}…`);
  const response = await fetch(`/samples/${encodeURIComponent(name)}`);
  if (!response.ok) throw new Error(`sample ${name}: HTTP ${response.status} ${(await response.text()).trim()}`);
  const file = new File([await response.blob()], name, { type: 'application/octet-stream' });
  $('type').value = type;
  await setSource(file);
  document.body.dataset.sample = name;
}

// ---- compress, decompress ---------------------------------------------------------------------

async function compress() {
  const type = $('type').value;
  const input = source.bytes;
  const codec = $('codec').value;
  const writer = engine.createCompressor(type, input.length / elementSize(type), { chunkBytes: CHUNK_BYTES, codec });
  const pieces = [];
  setProgress(0, 'compressing…');
  const t0 = performance.now();
  for (let at = 0; at < input.length; at += PIECE_BYTES) {
    const end = Math.min(input.length, at + PIECE_BYTES);
    pieces.push(...(await writer.write(input.subarray(at, end))));
    setProgress(end / input.length, `compressing… ${formatBytes(end)} of ${formatBytes(input.length)}`);
  }
  pieces.push(...(await writer.end()));
  const ms = performance.now() - t0;
  const blob = new Blob(pieces, { type: 'application/octet-stream' });
  packed = { blob, bytes: concat(pieces), type, codec, ms };
  const explained = engine.explain('compress', { byteLength: input.length });
  addRow('stats', [
    `compress (${type}${codec === 'auto' ? '' : `, ${codec}`})`,
    formatBytes(input.length),
    formatBytes(blob.size),
    `${(input.length / Math.max(1, blob.size)).toFixed(2)}×`,
    ms.toFixed(1),
    rate(input.length, ms),
    explained.path,
  ]);
  setProgress(1, `compressed in ${ms.toFixed(0)} ms`);
  offerDownload(blob, `${source.file.name}.parle`);
}

async function decompress() {
  const container = source.isContainer ? source.bytes : packed.bytes;
  const reader = engine.createDecompressor();
  const pieces = [];
  setProgress(0, 'decompressing…');
  const t0 = performance.now();
  for (let at = 0; at < container.length; at += PIECE_BYTES) {
    const end = Math.min(container.length, at + PIECE_BYTES);
    pieces.push(...(await reader.write(container.subarray(at, end))));
    setProgress(end / container.length, `decompressing… ${formatBytes(end)} of ${formatBytes(container.length)}`);
  }
  pieces.push(...(await reader.end()));
  const ms = performance.now() - t0;
  const out = concat(pieces);
  const type = reader.header.type;
  const explained = engine.explain('decompress', { byteLength: container.length });
  addRow('stats', [
    `decompress (${type})`,
    formatBytes(container.length),
    formatBytes(out.length),
    `${(out.length / Math.max(1, container.length)).toFixed(2)}×`,
    ms.toFixed(1),
    rate(out.length, ms),
    explained.path,
  ]);
  setProgress(1, `decompressed in ${ms.toFixed(0)} ms`);
  if (source.isContainer) {
    $('verdict').className = 'ok';
    $('verdict').textContent = `${out.length / elementSize(type)} ${type} elements; every chunk matched its checksums`;
    offerDownload(new Blob([out]), source.file.name.replace(/\.parle$/, '') + `.${type}`);
    return out;
  }
  const same = sameBytes(out, source.bytes);
  $('verdict').className = same ? 'ok' : 'error';
  $('verdict').textContent = same
    ? `round trip OK: ${out.length} bytes identical`
    : `round trip FAILED: the decompressed bytes differ from the file`;
  $('verdict').dataset.roundTrip = same ? 'ok' : 'failed';
  return out;
}

// ---- beside gzip: the browser's CompressionStream ---------------------------------------------

/** All bytes of `stream`. */
async function readAll(stream) {
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/**
 * The file through CompressionStream('gzip') and back, beside parle's compression of it (the
 * streaming compressor's time above; decompress timed here, whole container at once).
 */
async function compareWithGzip(input) {
  const t0 = performance.now();
  await engine.decompress(packed.bytes);
  const parleDecompressMs = performance.now() - t0;
  const t1 = performance.now();
  const gz = await readAll(new Blob([input]).stream().pipeThrough(new CompressionStream('gzip')));
  const gzipMs = performance.now() - t1;
  const t2 = performance.now();
  const gunzipped = await readAll(new Blob([gz]).stream().pipeThrough(new DecompressionStream('gzip')));
  const gunzipMs = performance.now() - t2;
  if (!sameBytes(gunzipped, input)) throw new Error('gzip round trip differs (a browser bug?)');
  $('vs-gzip').querySelector('tbody').replaceChildren();
  const row = (name, outBytes, compressMs, decompressMs) =>
    addRow('vs-gzip', [
      name,
      formatBytes(input.length),
      formatBytes(outBytes),
      `${(input.length / Math.max(1, outBytes)).toFixed(2)}×`,
      rate(input.length, compressMs),
      rate(input.length, decompressMs),
    ]);
  row(`parle (${packed.type}, ${packed.codec})`, packed.bytes.length, packed.ms, parleDecompressMs);
  row('gzip (CompressionStream)', gz.length, gzipMs, gunzipMs);
}

// ---- where it runs: explain and per-path timings --------------------------------------------

/** Milliseconds of `fn`, the faster of two runs (the first one pays pipeline and JIT warm-up). */
async function timeBest(fn) {
  let best = Infinity;
  for (let i = 0; i < 2; i++) {
    const t0 = performance.now();
    await fn();
    best = Math.min(best, performance.now() - t0);
  }
  return best;
}

async function comparePaths(type, bytes) {
  const size = elementSize(type);
  const length = Math.floor(Math.min(bytes.length, SAMPLE_BYTES) / size);
  const sample = new CONSTRUCTORS[type](bytes.slice(0, length * size).buffer);
  const ops = ['rleEncode', 'rleDecode', ...(['u32', 'i32', 'f32'].includes(type) ? ['scan', 'sort'] : []), 'compress', 'decompress'];
  const runs = await engine.rleEncode(sample, { path: 'cpu' });
  const container = await engine.compress(sample, { path: 'cpu' });
  const inputOf = { rleDecode: runs.values, decompress: container };
  const run = {
    rleEncode: (path) => engine.rleEncode(sample, { path }),
    rleDecode: (path) => engine.rleDecode(runs, { path }),
    scan: (path) => engine.scan(sample, { path }),
    sort: (path) => engine.sort(sample, { path }),
    compress: (path) => engine.compress(sample, { path }),
    decompress: (path) => engine.decompress(container, { path }),
  };
  const gpuOps = ['rleEncode', 'rleDecode', 'scan', 'sort'];
  const rows = [];
  $('explain').querySelector('tbody').replaceChildren();
  const steps = ops.length * (engine.adapter ? 2 : 1);
  let done = 0;
  for (const op of ops) {
    const explained = engine.explain(op, inputOf[op] ?? sample);
    const row = { op, cpu: null, gpu: null, auto: explained.path };
    for (const path of ['cpu', 'gpu']) {
      if (path === 'gpu' && (!engine.adapter || !gpuOps.includes(op))) continue;
      setProgress(done / steps, `timing ${op} on ${path}…`);
      row[path] = await timeBest(() => run[op](path));
      done++;
    }
    rows.push(row);
    const predicted = (ms) => (ms === null ? 'n/a' : ms.toFixed(2));
    addRow('explain', [op, explained.path, predicted(explained.predictedMs.cpu), predicted(explained.predictedMs.gpu), explained.reason]);
  }
  $('explain-note').textContent =
    `On the first ${formatBytes(length * size)} (${length} ${type} elements, a ${TYPE_NAMES[type]}); bars are measured, the best of two runs.`;
  drawTimesChart($('chart'), rows);
  setProgress(1, 'done');
  return rows;
}

// ---- wiring -------------------------------------------------------------------------------

async function act(work) {
  if (busy) return;
  busy = true;
  clearError();
  updateButtons();
  try {
    await work();
  } catch (e) {
    setProgress(0, 'failed');
    showError(e);
  } finally {
    busy = false;
    updateButtons();
  }
}

function wireUi() {
  $('file').addEventListener('change', () => chooseFile($('file').files?.[0]).catch(showError));
  const drop = $('drop');
  drop.addEventListener('dragover', (e) => {
    e.preventDefault();
    drop.classList.add('over');
  });
  drop.addEventListener('dragleave', () => drop.classList.remove('over'));
  drop.addEventListener('drop', (e) => {
    e.preventDefault();
    drop.classList.remove('over');
    chooseFile(e.dataTransfer?.files?.[0]).catch(showError);
  });
  $('codec').addEventListener('change', () => {
    packed = undefined;
    $('download').hidden = true;
    updateButtons();
  });
  $('type').addEventListener('change', () => {
    packed = undefined;
    $('download').hidden = true;
    updateButtons();
  });
  const compressAndCompare = async () => {
    await compress();
    if (typeof CompressionStream === 'function') await compareWithGzip(source.bytes);
    await comparePaths(packed.type, source.bytes);
    document.body.dataset.state = 'compressed';
  };
  const decompressAndCheck = async () => {
    await decompress();
    document.body.dataset.state = 'decompressed';
  };
  $('compress').addEventListener('click', () => act(compressAndCompare));
  $('decompress').addEventListener('click', () => act(decompressAndCheck));
  // A sample: fetched from the server, then the same two steps as a chosen file's two buttons.
  $('try-sample').addEventListener('click', () =>
    act(async () => {
      const option = $('sample').selectedOptions[0];
      delete document.body.dataset.state;
      await loadSample(option.value, option.dataset.type);
      await compressAndCompare();
      await decompressAndCheck();
    }),
  );
}

async function selfTest() {
  $('selftest-panel').hidden = false;
  // inlineBytes 0: even the self-test's small inputs go to the workers.
  const testEngine = await createEngine({ workers: 2, inlineBytes: 0, calibration: 'skip' });
  const seed = new URLSearchParams(location.search).get('seed');
  let summary;
  try {
    summary = await runSelfTest(testEngine, {
      ...(seed !== null && /^\d+$/.test(seed) ? { seed: Number(seed) >>> 0 } : {}),
      onResult: (r) => ($('selftest-status').textContent = `running… ${r.op} on ${r.path}: ${r.ok ? 'ok' : 'FAILED'}`),
    });
  } catch (e) {
    summary = { status: 'fail', results: [], error: e?.message ?? String(e) };
  } finally {
    await testEngine.destroy();
  }
  const gpu = summary.results.some((r) => r.path === 'gpu');
  $('selftest-status').textContent =
    `${summary.status}: ${summary.results.filter((r) => r.ok).length} of ${summary.results.length} round trips${gpu ? '' : ' (no WebGPU adapter: CPU only)'}`;
  $('selftest-status').className = summary.status === 'pass' ? 'ok' : 'error';
  $('selftest').textContent = JSON.stringify(summary, null, 1);
  if (summary.status !== 'pass') console.error('parle self-test failed', summary);
}

async function main() {
  wireUi();
  if (new URLSearchParams(location.search).has('selftest')) await selfTest();
  // ?calibration=skip: the cost model's default rates instead of measuring them (seconds on a
  // software GPU, more on a loaded machine); the page's flows are the same
  const skipCalibration = new URLSearchParams(location.search).get('calibration') === 'skip';
  engine = await createEngine(skipCalibration ? { calibration: 'skip' } : {});
  showEnvironment();
  if (engine.adapter && !skipCalibration) {
    setProgress(0, 'calibrating the cost model…');
    await engine.calibrate({ onProgress: (done, total) => setProgress(done / total, 'calibrating the cost model…') });
  }
  setProgress(0, 'ready');
  document.body.dataset.ready = 'true';
  updateButtons();
  // the Zarr section reads on the same engine, after calibration (whose timings it would disturb);
  // it shows its own errors
  void openZarrView(engine);
}

main().catch((e) => {
  showError(e);
  const panel = $('selftest');
  if (new URLSearchParams(location.search).has('selftest') && !panel.textContent) {
    panel.textContent = JSON.stringify({ status: 'fail', results: [], error: e?.message ?? String(e) });
  }
});
