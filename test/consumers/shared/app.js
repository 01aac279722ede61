// The page of the browser consumer fixtures (copied into <fixture>/src/app.js by ../run.mjs):
// an application that imports parle as any would, through its bundler, and round-trips the file
// the test puts in <input type=file> on the CPU workers and on WebGPU, writing what it saw as JSON
// into #result for test/consumers/run.mjs.
import { createEngine, isParleError } from 'parle-codec';

function equal(a, b) {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Compress and decompress `data` on `path` with a fresh engine; what happened, as plain data. */
async function roundTrip(data, path, engineOptions, codec) {
  const engine = await createEngine({ calibration: 'skip', ...engineOptions });
  try {
    const t0 = performance.now();
    const packed = await engine.compress(data, { path, ...(codec ? { codec } : {}) });
    const back = await engine.decompress(packed, { path });
    return {
      ok: back instanceof Uint8Array && equal(back, data),
      packedBytes: packed.length,
      workers: engine.workers,
      adapter: engine.adapter ? engine.adapter.description || engine.adapter.vendor || 'unnamed adapter' : null,
      ms: Math.round(performance.now() - t0),
    };
  } finally {
    await engine.destroy();
  }
}

async function run(file) {
  const data = new Uint8Array(await file.arrayBuffer());
  const result = {
    file: file.name,
    bytes: data.length,
    crossOriginIsolated: globalThis.crossOriginIsolated === true,
    webgpu: 'gpu' in navigator,
  };
  // inlineBytes 0: every op goes to the two workers (below 4 MiB they would run on this thread)
  result.cpu = await roundTrip(data, 'cpu', { workers: 2, inlineBytes: 0, gpu: 'off' });
  result.cpuCodec = await roundTrip(data, 'cpu', { workers: 2, inlineBytes: 0, gpu: 'off' }, 'delta+huffman');
  try {
    result.gpu = await roundTrip(data, 'gpu', { workers: 2, gpu: 'require' });
  } catch (e) {
    result.gpu = { ok: false, error: isParleError(e) ? `${e.code}: ${e.message}` : String(e) };
  }
  return result;
}

const input = document.querySelector('#file');
const output = document.querySelector('#result');
input.addEventListener('change', async () => {
  try {
    output.textContent = JSON.stringify(await run(input.files[0]));
  } catch (e) {
    output.textContent = JSON.stringify({ error: String(e && e.stack ? e.stack : e) });
  }
});
output.textContent = 'ready';
