// Load on the HTTP service (`parle serve`), in one run:
//   1. a 1 GiB body through POST /v1/compress, its response streamed straight into
//      POST /v1/decompress, the output checked byte for byte: the server's peak RSS (VmHWM);
//   2. the engine's own compress rate on the same 16 MiB body, in the server process, with
//      nothing else running (engine.compress, and the streaming compressor the service uses);
//   3. autocannon, 64 connections, 16 MiB bodies, 60 s (--quick: 10 s): zero errors,
//      throughput >= 70 % of the engine's own rate;
//   4. the same load for a shorter time with a worker killed half way (the pool's killWorker
//      test hook): only the requests it ran fail (a worker runs one chunk at a time, so at most
//      one request per kill) and the service keeps serving.
// The body is real data: the T1 brain MRI volume (u16) of data/samples, repeated to 16 MiB.
//
//   npm run build && node bench/service-load.mjs [--quick] [--workers N] [--connections N]
//     [--seconds N] [--chunk-bytes N] [--max-active N] [--rss-bytes N]
//     [--rss-only | --load-only]   (one phase alone, printed as JSON, nothing written: for tuning)
//     [--processes N]   the load (3) goes to the real command, `parle serve --processes N
//                       --workers W` (node:cluster; N = 1 is one process through the same
//                       command); phases 1 and 4 need the in-process server and are skipped.
//                       The engine's rate (2) is still one engine with W workers.
//                       Writes bench/results/service-load-processes-N[-quick].json.
//
// Prints a table and writes bench/results/service-load.json (machine, figures, pass/fail).
// The server runs in a child process (this file with --server), built from ts/ by esbuild, so
// the bench can reach the pool's killWorker without a debug route in the product.
import { outArg, outputDir } from './out-dir.mjs';
import autocannon from 'autocannon';
import { fork, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const argv = process.argv.slice(2);
const flag = (name) => argv.includes(name);
const value = (name, fallback) => {
  const at = argv.indexOf(name);
  return at >= 0 ? Number(argv[at + 1]) : fallback;
};
const MiB = 1 << 20;


// ---- the server (child process) ------------------------------------------------------------

async function runServer() {
  const { createService, CpuPath, Engine } = await import(pathToFileURL(argv[argv.indexOf('--server') + 1]).href);
  const workers = value('--workers', 2);
  const cpu = await CpuPath.create({ workers });
  const engine = new Engine(cpu, null, { maxElements: 2 ** 32 - 1, maxQueue: 1024 });
  const service = await createService(engine, { queue: 1024, timeoutMs: 600_000, chunkBytes: value('--chunk-bytes', 1 * MiB), maxActive: value('--max-active', undefined) });
  const url = await service.listen({ port: 0, host: '127.0.0.1' });
  const peakRss = async () => {
    const status = await readFile('/proc/self/status', 'utf8');
    const kib = (key) => Number(status.match(new RegExp(`${key}:\\s+(\\d+)`))?.[1] ?? NaN);
    const usage = process.memoryUsage();
    return {
      peakRssMiB: kib('VmHWM') / 1024,
      rssMiB: kib('VmRSS') / 1024,
      wasmMemoryMiB: cpu.heap.buffer.byteLength / MiB,
      jsHeapMiB: usage.heapUsed / MiB,
      arrayBuffersMiB: usage.arrayBuffers / MiB,
    };
  };
  process.on('message', async (msg) => {
    try {
      if (msg.cmd === 'kill') {
        const busy = cpu.pool.busy;
        await cpu.pool.killWorker(msg.index);
        process.send({ id: msg.id, busyBefore: busy, restarts: engine.workerRestarts });
      } else if (msg.cmd === 'engineRate') {
        process.send({ id: msg.id, ...(await engineRate(engine, msg.seconds, msg.chunkBytes)) });
      } else if (msg.cmd === 'memory') {
        process.send({ id: msg.id, ...(await peakRss()) });
      } else if (msg.cmd === 'stop') {
        await service.close();
        await engine.destroy();
        process.send({ id: msg.id });
        process.disconnect();
      }
    } catch (e) {
      process.send({ id: msg.id, error: String(e?.stack ?? e) });
    }
  });
  process.send({ url, pid: process.pid });
}

/** Input bytes per second of engine.compress and of the streaming compressor, on the 16 MiB body. */
async function engineRate(engine, seconds, chunkBytes) {
  const body = await makeBody(16 * MiB);
  const input = new Uint16Array(body.buffer, body.byteOffset, body.length / 2);
  const measure = async (run) => {
    await run(); // warm
    let bytes = 0;
    const t0 = performance.now();
    while (performance.now() - t0 < seconds * 500) {
      await run();
      bytes += body.length;
    }
    return bytes / ((performance.now() - t0) / 1000);
  };
  const whole = await measure(() => engine.compress(input));
  const streaming = await measure(async () => {
    const writer = engine.createCompressor('u16', input.length, { chunkBytes });
    for (let at = 0; at < body.length; at += 64 * 1024) await writer.write(body.subarray(at, at + 64 * 1024));
    await writer.end();
  });
  return { wholeBytesPerS: whole, streamingBytesPerS: streaming };
}

// ---- data -----------------------------------------------------------------------------------

let sample;
/** `bytes` of the T1 MRI volume (u16), repeated. */
async function makeBody(bytes) {
  sample ??= new Uint8Array(await readFile(join(root, 'data/samples/t1-mri.u16')));
  const out = new Uint8Array(bytes);
  for (let at = 0; at < bytes; at += sample.length) out.set(sample.subarray(0, Math.min(sample.length, bytes - at)), at);
  return out;
}

// ---- the bench (parent) ---------------------------------------------------------------------

async function bundleService() {
  // bench/.build/ travels to the GPU machine (pack.sh), which has no esbuild: bundle before packing
  const outfile = join(root, 'bench/.build/service.mjs');
  let esbuild;
  try {
    esbuild = await import('esbuild');
  } catch (e) {
    if (existsSync(outfile)) return outfile;
    throw e;
  }
  await esbuild.build({
    stdin: {
      contents: [
        "export { createService } from './ts/service/index.ts';",
        "export { CpuPath } from './ts/cpu/cpu-path.ts';",
        "export { Engine } from './ts/engine.ts';",
      ].join('\n'),
      resolveDir: root,
      loader: 'ts',
    },
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'es2022',
    packages: 'external',
    loader: { '.wgsl': 'text' },
    outfile,
    logLevel: 'error',
  });
  return outfile;
}

function startServer(bundle, workers, chunkBytes) {
  const child = fork(fileURLToPath(import.meta.url), ['--server', bundle, '--workers', String(workers), '--chunk-bytes', String(chunkBytes), ...(argv.includes('--max-active') ? ['--max-active', String(value('--max-active'))] : [])], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  let nextId = 1;
  const pending = new Map();
  child.on('message', (msg) => {
    if (msg.id && pending.has(msg.id)) {
      const { resolve, reject } = pending.get(msg.id);
      pending.delete(msg.id);
      if (msg.error) reject(new Error(msg.error));
      else resolve(msg);
    }
  });
  const ready = new Promise((resolve, reject) => {
    child.once('message', resolve);
    child.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
  });
  const ask = (cmd, extra = {}) =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve, reject });
      child.send({ id, cmd, ...extra });
    });
  return { child, ready, ask };
}

/** `parle serve --processes N` (the built command), with the bench's queue and timeout. */
async function startCommand(processes, workers) {
  const child = spawn(process.execPath, [join(root, 'bin/parle.mjs'), 'serve', '--port', '0', '--processes', String(processes), '--workers', String(workers), '--queue', '1024', '--timeout-ms', '600000'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let stdout = '';
  const exited = once(child, 'exit');
  const url = await new Promise((resolve, reject) => {
    child.stdout.on('data', (d) => {
      stdout += d;
      const m = stdout.match(/listening on (http:\/\/\S+)/);
      if (m) resolve(m[1]);
    });
    exited.then(([code]) => reject(new Error(`parle serve exited with ${code}: ${stdout}`)));
  });
  return {
    url,
    async stop() {
      child.kill('SIGTERM');
      const [code] = await exited;
      if (code !== 0) throw new Error(`parle serve exited with ${code} after SIGTERM: ${stdout}`);
    },
  };
}

/** Phases 2 and 3 against `parle serve --processes N`. */
async function runProcessesBench() {
  const quick = flag('--quick');
  const processes = value('--processes', 1);
  const workers = value('--workers', 2);
  const connections = value('--connections', 64);
  const seconds = value('--seconds', quick ? 10 : 60);
  const chunkBytes = 1 * MiB; // the command's default
  const mb = (bytesPerS) => (bytesPerS / 1e6).toFixed(0);
  const bundle = await bundleService();
  const server = startServer(bundle, workers, chunkBytes);
  await server.ready;
  const rate = await server.ask('engineRate', { seconds: quick ? 4 : 8, chunkBytes });
  await server.ask('stop').catch(() => undefined);
  const engineBytesPerS = Math.max(rate.wholeBytesPerS, rate.streamingBytesPerS);
  console.log(`engine compress (one engine, ${workers} workers): ${mb(rate.wholeBytesPerS)} MB/s (engine.compress), ${mb(rate.streamingBytesPerS)} MB/s (streaming)`);
  const command = await startCommand(processes, workers);
  console.log(`parle serve ${command.url} (processes ${processes}, workers ${workers})`);
  const body = await makeBody(16 * MiB);
  let main;
  try {
    main = summarize(await load(command.url, body, connections, seconds), body.length);
  } finally {
    await command.stop();
  }
  const ratio = main.inputBytesPerS / engineBytesPerS;
  const pass = main.errors === 0 && main.non2xx === 0 && main.timeouts === 0 && ratio >= 0.7;
  console.log(
    `load ${connections} x 16 MiB, ${seconds} s, ${processes} process(es): ${main.requestsPerS.toFixed(1)} req/s, ${mb(main.inputBytesPerS)} MB/s in, ` +
      `errors ${main.errors}, non-2xx ${main.non2xx}, timeouts ${main.timeouts}; p50 ${main.latencyMs.p50} ms, p99 ${main.latencyMs.p99} ms; ` +
      `${(ratio * 100).toFixed(0)} % of the engine (target 70 %): ${pass ? 'pass' : 'FAIL'}; SIGTERM: exit 0`,
  );
  const results = {
    benchmark: 'service-load-processes',
    date: new Date().toISOString(),
    quick,
    machine: { cpu: os.cpus()[0]?.model ?? 'unknown', cores: os.availableParallelism(), node: process.version, platform: `${os.platform()} ${os.arch()}`, memoryGiB: os.totalmem() / 2 ** 30 },
    note: 'Body: the T1 MRI volume (u16) of data/samples repeated to 16 MiB. Rates are input bytes per second. The load goes to `parle serve --processes N --workers W`; the engine reference is one engine with W workers. Server, client and workers share this machine.',
    settings: { processes, workers, connections, bodyBytes: 16 * MiB, seconds, chunkBytes },
    engine: { compressBytesPerS: rate.wholeBytesPerS, streamingCompressBytesPerS: rate.streamingBytesPerS, referenceBytesPerS: engineBytesPerS },
    load: { ...main, ratioToEngine: ratio, pass },
  };
  if (flag('--load-only')) {
    console.log(JSON.stringify(results));
    return;
  }
  // --quick: bench/.quick/results/ unless --out DIR (bench/out-dir.mjs)
  const out = join(outputDir({ out: outArg(), quick, committed: 'bench/results' }), `service-load-processes-${processes}${quick ? '-quick' : ''}.json`);
  await writeFile(out, JSON.stringify(results, null, 2) + '\n');
  console.log(`wrote ${out}`);
}

/** A 1 GiB round trip: compress's response is decompress's request body; checks the output. */
async function roundTrip(url, totalBytes) {
  const pattern = await makeBody(16 * MiB);
  const piece = 1 * MiB;
  const t0 = performance.now();
  const compress = http.request(new URL('/v1/compress?type=u16', url), {
    method: 'POST',
    headers: { 'content-type': 'application/octet-stream', 'content-length': totalBytes },
  });
  const decompress = http.request(new URL('/v1/decompress', url), { method: 'POST', headers: { 'content-type': 'application/x-parle' } });
  const compressed = new Promise((resolve, reject) => {
    compress.on('error', reject);
    compress.on('response', (res) => {
      if (res.statusCode !== 200) reject(new Error(`compress answered ${res.statusCode}`));
      let bytes = 0;
      res.on('data', (d) => {
        bytes += d.length;
        if (!decompress.write(d)) {
          res.pause();
          decompress.once('drain', () => res.resume());
        }
      });
      res.on('end', () => {
        decompress.end();
        resolve(bytes);
      });
      res.on('error', reject);
    });
  });
  const checked = new Promise((resolve, reject) => {
    decompress.on('error', reject);
    decompress.on('response', (res) => {
      if (res.statusCode !== 200) reject(new Error(`decompress answered ${res.statusCode}`));
      let at = 0;
      let mismatch = -1;
      res.on('data', (d) => {
        for (let i = 0; i < d.length && mismatch < 0; ) {
          const offset = (at + i) % pattern.length;
          const n = Math.min(d.length - i, pattern.length - offset);
          if (Buffer.compare(d.subarray(i, i + n), pattern.subarray(offset, offset + n)) !== 0) mismatch = at + i;
          i += n;
        }
        at += d.length;
      });
      res.on('end', () => resolve({ bytes: at, mismatch }));
      res.on('error', reject);
    });
  });
  for (let at = 0; at < totalBytes; at += piece) {
    const slice = pattern.subarray(at % pattern.length, (at % pattern.length) + Math.min(piece, totalBytes - at));
    if (!compress.write(slice)) await once(compress, 'drain');
  }
  compress.end();
  const [compressedBytes, output] = await Promise.all([compressed, checked]);
  return { seconds: (performance.now() - t0) / 1000, compressedBytes, outputBytes: output.bytes, equal: output.bytes === totalBytes && output.mismatch < 0 };
}

function load(url, body, connections, seconds) {
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: new URL('/v1/compress?type=u16', url).href,
        method: 'POST',
        headers: { 'content-type': 'application/octet-stream' },
        body: Buffer.from(body.buffer, body.byteOffset, body.length),
        connections,
        duration: seconds,
        timeout: 300,
      },
      (err, result) => (err ? reject(err) : resolve(result)),
    );
    instance.on('error', reject);
  });
}

function summarize(result, bodyBytes) {
  const completed = result['2xx'];
  return {
    seconds: result.duration,
    requests: result.requests.total,
    ok2xx: completed,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    requestsPerS: completed / result.duration,
    inputBytesPerS: (completed * bodyBytes) / result.duration,
    latencyMs: { p50: result.latency.p50, p99: result.latency.p99, max: result.latency.max },
  };
}

async function runBench() {
  const quick = flag('--quick');
  const workers = value('--workers', 2);
  const connections = value('--connections', 64);
  const seconds = value('--seconds', quick ? 10 : 60);
  const killSeconds = quick ? 6 : 15;
  const rssBytes = value('--rss-bytes', 2 ** 30);
  const chunkBytes = value('--chunk-bytes', 1 * MiB);
  const mb = (bytesPerS) => (bytesPerS / 1e6).toFixed(0);

  const bundle = await bundleService();
  const server = startServer(bundle, workers, chunkBytes);
  const { url } = await server.ready;
  console.log(`server ${url} (${workers} workers)`);
  const results = {
    benchmark: 'service-load',
    date: new Date().toISOString(),
    quick,
    machine: { cpu: os.cpus()[0]?.model ?? 'unknown', cores: os.availableParallelism(), node: process.version, platform: `${os.platform()} ${os.arch()}`, memoryGiB: os.totalmem() / 2 ** 30 },
    note: 'Body: the T1 MRI volume (u16) of data/samples repeated to 16 MiB. Rates are input bytes per second. The server, the autocannon client and the engine workers share this machine.',
    settings: { workers, connections, bodyBytes: 16 * MiB, seconds, killSeconds, chunkBytes },
  };
  try {
    // 1. 1 GiB round trip, peak RSS of the server.
    if (flag('--load-only')) {
      const rate = await server.ask('engineRate', { seconds: 4, chunkBytes });
      const body = await makeBody(16 * MiB);
      const main = summarize(await load(url, body, connections, seconds), body.length);
      console.log(JSON.stringify({ rate, main, ratio: main.inputBytesPerS / Math.max(rate.wholeBytesPerS, rate.streamingBytesPerS) }));
      return;
    }
    const before = await server.ask('memory');
    const trip = await roundTrip(url, rssBytes);
    const after = await server.ask('memory');
    results.bigBody = { bodyBytes: rssBytes, ...trip, serverRssBeforeMiB: before.rssMiB, serverPeakRssMiB: after.peakRssMiB };
    if (flag('--rss-only')) {
      console.log(JSON.stringify({ before, after, trip }));
      return;
    }
    console.log(
      `1 GiB round trip: ${trip.equal ? 'equal' : 'DIFFERENT'}, ${trip.seconds.toFixed(1)} s, container ${(trip.compressedBytes / MiB).toFixed(0)} MiB; ` +
        `server RSS ${before.rssMiB.toFixed(0)} MiB before, peak ${after.peakRssMiB.toFixed(0)} MiB`,
    );

    // 2. The engine's own rate, in the server process, nothing else running.
    const rate = await server.ask('engineRate', { seconds: quick ? 4 : 8, chunkBytes });
    const engineBytesPerS = Math.max(rate.wholeBytesPerS, rate.streamingBytesPerS);
    results.engine = { compressBytesPerS: rate.wholeBytesPerS, streamingCompressBytesPerS: rate.streamingBytesPerS, referenceBytesPerS: engineBytesPerS };
    console.log(`engine compress: ${mb(rate.wholeBytesPerS)} MB/s (engine.compress), ${mb(rate.streamingBytesPerS)} MB/s (streaming, ${chunkBytes / MiB} MiB chunks)`);

    // 3. The load.
    const body = await makeBody(16 * MiB);
    const main = summarize(await load(url, body, connections, seconds), body.length);
    const ratio = main.inputBytesPerS / engineBytesPerS;
    results.load = { ...main, ratioToEngine: ratio, pass: main.errors === 0 && main.non2xx === 0 && main.timeouts === 0 && ratio >= 0.7 };
    console.log(
      `load ${connections} x 16 MiB, ${seconds} s: ${main.requestsPerS.toFixed(1)} req/s, ${mb(main.inputBytesPerS)} MB/s in, ` +
        `errors ${main.errors}, non-2xx ${main.non2xx}, timeouts ${main.timeouts}; p50 ${main.latencyMs.p50} ms, p99 ${main.latencyMs.p99} ms; ` +
        `${(ratio * 100).toFixed(0)} % of the engine (target 70 %): ${results.load.pass ? 'pass' : 'FAIL'}`,
    );

    // 4. The same load with a worker killed half way.
    const killed = load(url, body, connections, killSeconds);
    await new Promise((resolve) => setTimeout(resolve, (killSeconds * 1000) / 2)); // half way: a point in the run, not a synchronisation
    const kill = await server.ask('kill', { index: 0 });
    const withKill = summarize(await killed, body.length);
    const failed = withKill.errors + withKill.non2xx + withKill.timeouts;
    const health = await fetch(new URL('/healthz', url)).then((r) => r.json());
    const after2 = await load(url, body, 8, 3).then((r) => summarize(r, body.length));
    results.workerKill = {
      ...withKill,
      workersBusyAtKill: kill.busyBefore,
      failedRequests: failed,
      restartsAfter: health.workerRestarts,
      afterKill: { ok2xx: after2.ok2xx, errors: after2.errors + after2.non2xx + after2.timeouts },
      pass: failed <= 1 && health.status === 'ok' && after2.ok2xx > 0 && after2.errors + after2.non2xx + after2.timeouts === 0,
    };
    console.log(
      `worker killed during load: ${failed} request(s) failed (workers busy at the kill: ${kill.busyBefore}; allowed <= 1), ` +
        `${withKill.ok2xx} succeeded; restarts ${health.workerRestarts}; afterwards ${after2.ok2xx} ok, ${results.workerKill.afterKill.errors} failed: ` +
        `${results.workerKill.pass ? 'pass' : 'FAIL'}`,
    );
    const last = await server.ask('memory');
    results.serverPeakRssMiBAfterLoad = last.peakRssMiB;
    console.log(`server peak RSS over the whole run: ${last.peakRssMiB.toFixed(0)} MiB`);
  } finally {
    await server.ask('stop').catch(() => undefined);
  }
  const out = join(outputDir({ out: outArg(), quick, committed: 'bench/results' }), quick ? 'service-load-quick.json' : 'service-load.json');
  await writeFile(out, JSON.stringify(results, null, 2) + '\n');
  console.log(`wrote ${out}`);
}

if (flag('--server')) await runServer();
else if (argv.includes('--processes')) await runProcessesBench();
else await runBench();
