// A Node consumer with parle's optional peer dependencies installed: the GPU path lights up
// (Dawn on SwiftShader in CI: VK_ICD_FILENAMES), and parle/service serves HTTP.
import { createEngine } from 'parle-codec';
import { createService } from 'parle-codec/service';
import { check, fmt, sameArray, sampleU16, treeSize } from '../shared/node-support.mjs';

const size = treeSize(new URL('./node_modules', import.meta.url).pathname);
console.log(`node_modules with webgpu, fastify, prom-client: ${fmt(size.disk)} on disk, ${fmt(size.apparent)} apparent`);

const data = sampleU16(1 << 18);
const gpu = await createEngine({ workers: 1, gpu: 'require', calibration: 'skip' });
try {
  check(gpu.adapter !== null, `the webgpu package gives an adapter: ${gpu.adapter?.description || gpu.adapter?.vendor}`);
  const packed = await gpu.compress(data, { path: 'gpu' });
  check(sameArray(await gpu.decompress(packed, { path: 'gpu' }), data), "compress and decompress with path 'gpu' round-trip");
  const keys = new Uint32Array(50_000).map((_, i) => (i * 2654435761) >>> 0);
  const sorted = await gpu.sort(keys, { path: 'gpu' });
  check(sameArray(sorted, keys.slice().sort()), "sort with path 'gpu' sorts");
} finally {
  await gpu.destroy();
}

const engine = await createEngine({ workers: 1, gpu: 'off', calibration: 'skip' });
const service = await createService(engine);
try {
  const url = await service.listen({ port: 0, host: '127.0.0.1' });
  const body = new Uint8Array(data.buffer);
  const compressed = await fetch(`${url}/v1/compress?type=u16`, { method: 'POST', body, headers: { 'Content-Type': 'application/octet-stream' } });
  check(compressed.status === 200, 'parle-codec/service: POST /v1/compress answers 200');
  const container = new Uint8Array(await compressed.arrayBuffer());
  const decompressed = await fetch(`${url}/v1/decompress`, { method: 'POST', body: container, headers: { 'Content-Type': 'application/x-parle' } });
  const back = new Uint16Array(await decompressed.arrayBuffer());
  check(decompressed.status === 200 && sameArray(back, data), 'parle-codec/service: POST /v1/decompress gives the elements back');
  const metrics = await (await fetch(`${url}/metrics`)).text();
  check(metrics.includes('parle_http_requests_total'), 'parle-codec/service: GET /metrics (prom-client) answers');
} finally {
  await service.close();
  await engine.destroy();
}
console.log('node-full: pass');
