// A Node ESM consumer of the packed parle with none of its optional parts: the install stays
// under 5 MB, the library round-trips on its workers, the GPU path and the HTTP service say
// which package they miss, and the `parle` command works from node_modules/.bin.
import { createEngine, isParleError, ErrorCodes, ParleError } from 'parle-codec';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { check, fmt, MB, rejection, sameArray, sampleU16, treeSize } from '../shared/node-support.mjs';

const here = new URL('./', import.meta.url).pathname;
const modules = join(here, 'node_modules');

const size = treeSize(modules);
console.log(`node_modules: ${fmt(size.disk)} on disk, ${fmt(size.apparent)} apparent`);
check(size.disk < 5 * MB, `npm install parle-codec without optional parts is under 5 MB on disk (${fmt(size.disk)})`);
for (const name of ['webgpu', 'fastify', 'prom-client', 'commander', 'cli-progress', 'fflate']) {
  check(!existsSync(join(modules, name)), `${name} is not installed`);
}

const engine = await createEngine({ workers: 2, inlineBytes: 0, calibration: 'skip' });
try {
  check(engine.workers === 2, 'the engine runs 2 worker threads');
  const data = sampleU16(1 << 20);
  const packed = await engine.compress(data);
  check(packed.length < data.byteLength / 4, `compress shrinks 2 MiB of u16 (${packed.length} bytes)`);
  check(sameArray(await engine.decompress(packed), data), 'decompress gives the same Uint16Array back');
  const fixed = await engine.compress(data, { codec: 'delta+shuffle+huffman' });
  check(sameArray(await engine.decompress(fixed), data), "codec 'delta+shuffle+huffman' round-trips");
  check(engine.adapter === null, 'no GPU adapter without the webgpu package');
  const why = engine.explain('compress', data).reason;
  check(why.includes('`webgpu`') && why.includes('npm install webgpu'), `explain says why: "${why}"`);
  const onGpu = await rejection(engine.compress(data, { path: 'gpu' }));
  check(isParleError(onGpu, ErrorCodes.PATH_UNAVAILABLE) && onGpu.message.includes('npm install webgpu'), `path 'gpu': ${onGpu.message}`);
} finally {
  await engine.destroy();
}
const required = await rejection(createEngine({ workers: 0, gpu: 'require' }));
check(required instanceof ParleError && required.code === 'PATH_UNAVAILABLE' && required.message.includes('webgpu'), `gpu 'require': ${required.message}`);

const service = await rejection(import('parle-codec/service'));
check(
  isParleError(service, 'PATH_UNAVAILABLE') && service.message.includes('npm install fastify prom-client'),
  `import('parle-codec/service') without fastify: ${service.message}`,
);

// parle-codec/zarr: the main entry's Zarr codec (one module: the same functions), coding a chunk.
const zarrEntry = await import('parle-codec/zarr');
const main = await import('parle-codec');
check(zarrEntry.register === main.registerZarrCodec, 'parle-codec/zarr re-exports the main entry');
const zarrEngine = await createEngine({ workers: 1, calibration: 'skip' });
try {
  const registry = new Map();
  zarrEntry.register(registry, { engine: zarrEngine });
  const codec = (await registry.get('parle')()).fromConfig({ level: 5 }, { dataType: 'float64', shape: [20, 50] });
  const chunk = Float64Array.from({ length: 1000 }, (_, i) => Math.round(Math.sin(i / 30) * 1000) / 100);
  const decoded = await codec.decode(await codec.encode({ data: chunk, shape: [20, 50], stride: [50, 1] }));
  check(decoded.data instanceof Float64Array && decoded.data.every((v, i) => v === chunk[i]), 'a zarr chunk of f64 round trips');
} finally {
  await zarrEngine.destroy();
}

// The command line: its own packages (commander, cli-progress) are bundled into dist/node/cli.js.
const bin = join(modules, '.bin', 'parle');
const dir = mkdtempSync(join(tmpdir(), 'parle-consumer-'));
const raw = sampleU16(300_000);
writeFileSync(join(dir, 'in.u16'), raw);
execFileSync(bin, ['compress', join(dir, 'in.u16'), join(dir, 'in.parle'), '--type', 'u16', '--workers', '1'], { stdio: 'inherit' });
execFileSync(bin, ['decompress', join(dir, 'in.parle'), join(dir, 'out.u16'), '--workers', '1'], { stdio: 'inherit' });
check(Buffer.compare(readFileSync(join(dir, 'in.u16')), readFileSync(join(dir, 'out.u16'))) === 0, 'npx parle compress / decompress round-trips a file');
const serve = spawnSync(bin, ['serve', '--port', '0', '--workers', '1'], { encoding: 'utf8' });
check(serve.status === 2 && serve.stderr.trim().split('\n').length === 1 && serve.stderr.includes('npm install fastify prom-client'), `parle serve without fastify exits 2 with one line: ${serve.stderr.trim()}`);
// Pipes both ways, as with gzip: standard input to standard output.
const piped = execFileSync(bin, ['compress', '--type', 'u16', '--workers', '1'], { input: raw });
const back = execFileSync(bin, ['decompress', '--workers', '1'], { input: piped });
check(Buffer.compare(back, readFileSync(join(dir, 'in.u16'))) === 0, 'parle compress | parle decompress round-trips through pipes');
// Commands that need a clone of the repository say so in one line and exit 2.
for (const command of ['demo', 'bench']) {
  const r = spawnSync(bin, [command], { encoding: 'utf8' });
  const lines = r.stderr.trim().split('\n');
  check(r.status === 2 && lines.length === 1 && lines[0].includes('needs a clone'), `parle ${command} in the installed package exits 2: ${r.stderr.trim()}`);
}
console.log('node-esm: pass');
