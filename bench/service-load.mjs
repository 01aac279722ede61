// Load on the HTTP service (`parle serve`), in one run:
//   1. a 1 GiB body through POST /v1/compress, its response streamed straight into
//      POST /v1/decompress, the output checked byte for byte: the server's peak RSS (VmHWM);
//   2. the engine's own rates on the same 16 MiB bodies, in the server process, with nothing
//      else running: 8 concurrent engine.compress / engine.decompress calls, and 8 concurrent
//      streaming compressors / decompressors (the service's code path), bytes of input per second;
//   3. the load: 64 connections, each posting 16 MiB bodies back to back for 60 s (--quick:
//      10 s), on POST /v1/compress (real data, then synthetic runs) and POST /v1/decompress (the
//      containers the compress route made). Targets (issue 34): input rate >= 70 % of the
//      engine's own rate on this 2-core machine (80 % on the 16-core host), no client timeouts
//      (every request answered within --client-timeout-s: 2xx, or 503 within 100 ms), p99 of
//      admitted requests <= 3 s;
//   4. bad input under the same load: a slow client (1 KiB/s), one that disconnects mid-body and
//      one whose Content-Length lies, beside the load; the others' p99 against phase 3's, and the
//      codes the bad ones got (status, or closed);
//   5. the same load for a shorter time with a worker killed half way (the pool's killWorker
//      test hook): only the requests it ran fail and the service keeps serving.
//
// Bodies (--body): photos: bench/corpus/data/photos_rgb.u8 (six photographs, u8; `bash
// bench/corpus/fetch.sh` builds it) repeated to 16 MiB, the default; mri: data/samples/t1-mri.u16
// repeated; runs: synthetic u8 runs of mean length 16 (seeded). Phase 3 runs --body and then
// `runs` (the synthetic one) on compress, and --body on decompress.
//
// The load client is this file's own (node:http, one keep-alive socket per connection): it
// tells 2xx, 503 (with their latency: shed requests must be answered at once) and other
// statuses apart, honours Retry-After after a 503, and counts a request unanswered after
// --client-timeout-s (default 10) as a timeout. autocannon could not tell a fast 503 from a slow one.
//
//   npm run build && node bench/service-load.mjs [--quick] [--workers N] [--connections N]
//     [--seconds N] [--chunk-bytes N] [--max-active N] [--max-wait-ms N] [--rss-bytes N]
//     [--body photos|mri|runs] [--client-timeout-s N] [--expect-continue 0|1] [--backoff 0|1]
//     [--loads ROUTE:BODY,...]   the load phases (default compress:BODY,compress:runs,decompress:BODY)
//     [--clients N]     load client processes (default one per 8 cores)
//     [--rss-only | --load-only]   (one phase alone, printed as JSON, nothing written: for tuning;
//                                  --load-only takes --route compress|decompress, default compress)
//     [--processes N]   the load (3) goes to the real command, `parle serve --processes N
//                       --workers W` (node:cluster; N = 1 is one process through the same
//                       command); phases 1, 4 and 5 need the in-process server and are skipped.
//                       The engine's rate (2) is still one engine with W workers.
//                       Writes service-load-processes-N.json.
//     [--bad-only [--bad-seconds N]]   phase 4 alone (printed as JSON)
//     [--hostile-only [--bad-seconds N] [--idle N]]   the load alone, then beside N idle sockets
//                       (default 10000), 100 decompression bombs of 4 KiB claiming 1 TiB and
//                       32 clients trickling 1 KiB/s (issue #47; printed as JSON)
//     [--cpu-prof DIR]  V8 CPU profiles of the server process(es) into DIR (node --cpu-prof).
//
// Prints a table and writes bench/results/<machine>/service-load.json (machine, figures,
// pass/fail; --quick: bench/.quick/). The server runs in a child process (this file with
// --server), built from ts/ by esbuild (bench/lib/internals.mjs), so the bench can reach the
// pool's killWorker without a debug route in the product.
import { bundle } from './lib/internals.mjs';
import { machineInfo, outArg, writeResults } from './lib/results.mjs';
import { fork, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { readFile, unlink, writeFile } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { metricSum } from './metrics-text.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const argv = process.argv.slice(2);
const flag = (name) => argv.includes(name);
const value = (name, fallback) => {
  const at = argv.indexOf(name);
  return at >= 0 ? Number(argv[at + 1]) : fallback;
};
const text = (name, fallback) => {
  const at = argv.indexOf(name);
  return at >= 0 ? argv[at + 1] : fallback;
};
const MiB = 1 << 20;
const BODY_BYTES = 16 * MiB;
/**
 * Whether the load client sends `Expect: 100-continue` and its body only after the 100 (as curl
 * does for bodies over 1 MiB), so a shed request costs no body bytes; --expect-continue 0: the
 * body follows the headers at once, and a shed request's body is read and dropped by the server.
 */
const EXPECT_CONTINUE = value('--expect-continue', 1) !== 0;
/**
 * Whether a load client waits Retry-After after a 503 (a polite client, the default); --backoff 0:
 * it sends its next request at once, as naive clients and retry loops do (issue #47's storm).
 */
const BACKOFF = value('--backoff', 1) !== 0;
/** Concurrent calls the engine's own rate is measured with (the reference). */
const ENGINE_CONCURRENCY = 8;

// ---- data -----------------------------------------------------------------------------------

/** The bodies: element type, and where their bytes come from. */
const BODIES = {
  photos: {
    type: 'u8',
    file: 'bench/corpus/data/photos_rgb.u8',
    what: 'bench/corpus photos_rgb.u8 (six photographs, u8) repeated to 16 MiB',
  },
  mri: { type: 'u16', file: 'data/samples/t1-mri.u16', what: 'data/samples T1 MRI volume (u16) repeated to 16 MiB' },
  runs: { type: 'u8', file: undefined, what: 'synthetic u8 runs of mean length 16 (seeded), 16 MiB' },
};

/** `bytes` of body `kind` (see BODIES). */
async function makeBody(kind, bytes) {
  const spec = BODIES[kind];
  if (!spec) throw new Error(`--body must be one of ${Object.keys(BODIES).join(', ')}; got ${kind}`);
  const out = new Uint8Array(bytes);
  if (spec.file === undefined) {
    // runs of 1..31 elements (mean 16) of random values; xorshift32, seed 34
    let s = 34;
    const next = () => ((s ^= s << 13), (s ^= s >>> 17), (s ^= s << 5), s >>> 0);
    for (let at = 0; at < bytes;) {
      const length = 1 + (next() % 31);
      out.fill(next() & 255, at, Math.min(bytes, at + length));
      at += length;
    }
    return out;
  }
  const path = join(root, spec.file);
  if (!existsSync(path)) throw new Error(`${spec.file} is missing: run \`bash bench/corpus/fetch.sh\` first`);
  const sample = new Uint8Array(await readFile(path));
  for (let at = 0; at < bytes; at += sample.length) out.set(sample.subarray(0, Math.min(sample.length, bytes - at)), at);
  return out;
}

// ---- the server (child process) ------------------------------------------------------------

async function runServer() {
  const { createService, CpuPath, Engine, PROCEDURES } = await import(pathToFileURL(argv[argv.indexOf('--server') + 1]).href);
  const workers = value('--workers', 2);
  const cpu = await CpuPath.create({ procedures: PROCEDURES, workers });
  const engine = new Engine(cpu, null, { maxElements: 2 ** 32 - 1, maxQueue: 1024 });
  const options = { queue: 1024, timeoutMs: 600_000 };
  if (flag('--chunk-bytes')) options.chunkBytes = value('--chunk-bytes');
  if (flag('--max-active')) options.maxActive = value('--max-active');
  if (flag('--max-wait-ms')) options.maxWaitMs = value('--max-wait-ms');
  const service = await createService(engine, options);
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
        process.send({ id: msg.id, ...(await engineRate(engine, msg.body, msg.seconds, options.chunkBytes)) });
      } else if (msg.cmd === 'memory') {
        process.send({ id: msg.id, ...(await peakRss()) });
      } else if (msg.cmd === 'metrics') {
        process.send({ id: msg.id, text: await service.metrics.registry.metrics() });
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

/**
 * Input bytes per second of the engine on body `kind` with ENGINE_CONCURRENCY calls at once:
 * engine.compress and the streaming compressor (64 KiB writes, as a socket hands them over),
 * engine.decompress and the streaming decompressor on the container.
 */
async function engineRate(engine, kind, seconds, chunkBytes) {
  const body = await makeBody(kind, BODY_BYTES);
  const type = BODIES[kind].type;
  const options = chunkBytes !== undefined ? { chunkBytes } : {};
  const Array_ = { u8: Uint8Array, u16: Uint16Array }[type];
  const input = new Array_(body.buffer, body.byteOffset, body.length / Array_.BYTES_PER_ELEMENT);
  const container = await engine.compress(input, { ...options, path: 'cpu' });
  const measure = async (bytesPerCall, run) => {
    await run(); // warm
    let bytes = 0;
    const t0 = performance.now();
    while (performance.now() - t0 < seconds * 250) {
      await Promise.all(Array.from({ length: ENGINE_CONCURRENCY }, run));
      bytes += bytesPerCall * ENGINE_CONCURRENCY;
    }
    return bytes / ((performance.now() - t0) / 1000);
  };
  const piece = 64 * 1024;
  const compressWhole = await measure(body.length, () => engine.compress(input, { ...options, path: 'cpu' }));
  const compressStreaming = await measure(body.length, async () => {
    const writer = engine.createCompressor(type, input.length, options);
    for (let at = 0; at < body.length; at += piece) await writer.write(body.subarray(at, at + piece));
    await writer.end();
  });
  const decompressWhole = await measure(container.length, () => engine.decompress(container, { path: 'cpu' }));
  const decompressStreaming = await measure(container.length, async () => {
    const reader = engine.createDecompressor();
    for (let at = 0; at < container.length; at += piece) await reader.write(container.subarray(at, at + piece));
    await reader.end();
  });
  return {
    ratio: body.length / container.length,
    compress: {
      wholeBytesPerS: compressWhole,
      streamingBytesPerS: compressStreaming,
      referenceBytesPerS: Math.max(compressWhole, compressStreaming),
    },
    decompress: {
      wholeBytesPerS: decompressWhole,
      streamingBytesPerS: decompressStreaming,
      referenceBytesPerS: Math.max(decompressWhole, decompressStreaming),
    },
  };
}

// ---- the server, started -----------------------------------------------------------------------

/** The server's bundle: the service, the CPU path and the engine from ts/ (bench/lib/internals.mjs). */
const bundleService = () => bundle('service');

/** node flags of the server process(es): a CPU profile into --cpu-prof DIR. */
function profileFlags() {
  const dir = text('--cpu-prof', undefined);
  return dir === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', dir];
}

const passOn = (name) => (flag(name) ? [name, String(value(name))] : []);

function startServer(bundle, workers) {
  const child = fork(
    fileURLToPath(import.meta.url),
    ['--server', bundle, '--workers', String(workers), ...passOn('--chunk-bytes'), ...passOn('--max-active'), ...passOn('--max-wait-ms')],
    { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], execArgv: profileFlags() },
  );
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
  const args = [
    'serve',
    '--port',
    '0',
    '--processes',
    String(processes),
    '--workers',
    String(workers),
    '--queue',
    '1024',
    '--timeout-ms',
    '600000',
  ];
  if (flag('--max-wait-ms')) args.push('--max-wait-ms', String(value('--max-wait-ms')));
  const child = spawn(process.execPath, [...profileFlags(), join(root, 'bin/parle.mjs'), ...args], {
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

// ---- the load client ---------------------------------------------------------------------------

/** The p-th percentile (0..100) of sorted numbers, 0 when there are none. */
function percentile(sorted, p) {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/**
 * One request: resolves to { status, ms, headersMs, bytesOut, retryAfter } or { status: 'timeout' |
 * 'error' }. The body is written as one buffer; when the answer comes before the body went out
 * (a 503 before the body is read), the rest is not sent.
 */
function request(agent, url, path, contentType, body, timeoutMs, expectContinue) {
  return new Promise((resolve) => {
    const t0 = performance.now();
    let settled = false;
    const finish = (result) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(result);
    };
    const req = http.request(new URL(path, url), {
      method: 'POST',
      agent,
      headers: { 'content-type': contentType, 'content-length': body.length, ...(expectContinue ? { expect: '100-continue' } : {}) },
    });
    const timer = setTimeout(() => {
      finish({ status: 'timeout', ms: performance.now() - t0 });
      req.destroy();
    }, timeoutMs);
    req.on('error', () => finish({ status: 'error', ms: performance.now() - t0 }));
    // a new connection (a 503 closes its connection): when it was established, from the request's start
    let connectMs = 0;
    req.once('socket', (socket) => {
      if (socket.connecting) socket.once('connect', () => (connectMs = performance.now() - t0));
    });
    req.on('response', (res) => {
      const headersMs = performance.now() - t0;
      let bytesOut = 0;
      res.on('data', (d) => (bytesOut += d.length));
      res.on('error', () => finish({ status: 'error', ms: performance.now() - t0 }));
      res.on('end', () => {
        const done = {
          status: res.statusCode,
          ms: performance.now() - t0,
          headersMs,
          connectMs,
          bytesOut,
          retryAfter: Number(res.headers['retry-after'] ?? 0),
        };
        finish(done);
        if (!req.writableFinished) req.destroy(); // answered before the body went out: stop sending
      });
    });
    if (expectContinue) req.once('continue', () => req.end(body));
    else req.end(body);
  });
}

/**
 * `connections` clients, each posting `body` to `path` back to back for `seconds` (and waiting
 * Retry-After after a 503). A request answered after `timeoutMs` counts as a timeout.
 */
async function loadRaw(url, { path, contentType, body, connections, seconds, timeoutMs, expectContinue, backoff = true }) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  const until = performance.now() + seconds * 1000;
  const raw = { ok: [], shed: [], shedConnect: [], other: {}, timeouts: 0, errors: 0, bytesOut: 0, seconds: 0, cpuSeconds: 0 };
  // the client's own event-loop delay: a late 'response' event counts in the latencies it measures
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const client = async () => {
    while (performance.now() < until) {
      const r = await request(agent, url, path, contentType, body, timeoutMs, expectContinue);
      if (r.status === 'timeout') raw.timeouts++;
      else if (r.status === 'error') raw.errors++;
      else if (r.status >= 200 && r.status < 300) {
        raw.ok.push(r.ms);
        raw.bytesOut += r.bytesOut;
      } else if (r.status === 503) {
        raw.shed.push(r.headersMs);
        raw.shedConnect.push(r.connectMs);
        if (backoff) {
          const wait = Math.min(Math.max(0, until - performance.now()), (r.retryAfter || 1) * 1000);
          await new Promise((resolve) => setTimeout(resolve, wait));
        }
      } else raw.other[r.status] = (raw.other[r.status] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: connections }, client));
  raw.seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  raw.cpuSeconds = (cpu.user + cpu.system) / 1e6;
  loop.disable();
  raw.loopDelayMs = { p99: loop.percentile(99) / 1e6, max: loop.max / 1e6 };
  agent.destroy();
  return raw;
}

/** Client processes the load is spread over (--clients; default one per 8 cores, so the client is never the limit). */
const CLIENTS = value('--clients', Math.max(1, Math.floor(os.availableParallelism() / 8)));

/** A load client process (this file with --client): runs loadRaw on the options it is sent, the body read from a file. */
async function runClient() {
  process.once('message', async ({ url, options, bodyFile }) => {
    const body = new Uint8Array(await readFile(bodyFile));
    process.send(await loadRaw(url, { ...options, body }));
    process.disconnect();
  });
}

/**
 * `connections` clients, each posting `body` to `path` back to back for `seconds` (and waiting
 * Retry-After after a 503), spread over CLIENTS processes. A request answered after `timeoutMs`
 * counts as a timeout.
 */
async function loadRun(url, { body, connections, expectContinue = EXPECT_CONTINUE, backoff = BACKOFF, ...options }) {
  let parts;
  if (CLIENTS <= 1) parts = [await loadRaw(url, { ...options, body, connections, expectContinue, backoff })];
  else {
    const bodyFile = join(os.tmpdir(), `parle-service-load-${process.pid}.body`);
    await writeFile(bodyFile, body);
    try {
      parts = await Promise.all(
        Array.from({ length: CLIENTS }, (_, i) => {
          const share = Math.floor(connections / CLIENTS) + (i < connections % CLIENTS ? 1 : 0);
          const child = fork(fileURLToPath(import.meta.url), ['--client'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
          child.send({ url, options: { ...options, connections: share, expectContinue, backoff }, bodyFile });
          return new Promise((resolve, reject) => {
            child.once('message', resolve);
            child.once('exit', (code) => (code !== 0 ? reject(new Error(`load client exited with ${code}`)) : undefined));
          });
        }),
      );
    } finally {
      await unlink(bodyFile).catch(() => undefined);
    }
  }
  const ok = parts.flatMap((p) => p.ok).sort((a, b) => a - b);
  const shed = parts.flatMap((p) => p.shed).sort((a, b) => a - b);
  const shedConnect = parts.flatMap((p) => p.shedConnect).sort((a, b) => a - b);
  const otherStatuses = {};
  for (const p of parts) for (const [status, n] of Object.entries(p.other)) otherStatuses[status] = (otherStatuses[status] ?? 0) + n;
  const elapsed = Math.max(...parts.map((p) => p.seconds));
  const sum = (key) => parts.reduce((a, p) => a + p[key], 0);
  const ms = (x) => Math.round(x);
  return {
    seconds: elapsed,
    clients: parts.length,
    ok2xx: ok.length,
    shed503: shed.length,
    otherStatuses,
    errors: sum('errors'),
    timeouts: sum('timeouts'),
    // CPU the load client(s) used, in cores (seconds of CPU per second)
    clientCores: sum('cpuSeconds') / elapsed,
    requestsPerS: ok.length / elapsed,
    inputBytesPerS: (ok.length * body.length) / elapsed,
    outputBytesPerS: sum('bytesOut') / elapsed,
    latencyMs: { p50: ms(percentile(ok, 50)), p99: ms(percentile(ok, 99)), max: ms(ok.at(-1) ?? 0) },
    shedLatencyMs: { p50: ms(percentile(shed, 50)), p99: ms(percentile(shed, 99)), max: ms(shed.at(-1) ?? 0) },
    // of the 503s' latency: the part until their (new) connection was established
    shedConnectMs: { p50: ms(percentile(shedConnect, 50)), p99: ms(percentile(shedConnect, 99)), max: ms(shedConnect.at(-1) ?? 0) },
    clientLoopDelayMs: {
      p99: ms(Math.max(...parts.map((p) => p.loopDelayMs.p99))),
      max: ms(Math.max(...parts.map((p) => p.loopDelayMs.max))),
    },
  };
}

/**
 * The service's own account of a load run, from GET /metrics before and after (summed over the
 * processes): requests admitted, shed, timed out, failed by code, and the mean milliseconds an
 * admitted request spent in each phase (gate wait, body reading and the part of it waiting for
 * the client, coding, sending).
 */
function serviceProfile(before, after, route) {
  const delta = (name, labels) => metricSum(after, name, labels) - metricSum(before, name, labels);
  const admitted = delta('parle_service_admitted_requests_total', { route });
  // a shed request spends no time in these phases: the means are over the admitted ones
  const phases = {};
  for (const phase of ['wait', 'body', 'body_client', 'coding', 'send']) {
    phases[phase] = Math.round((delta('parle_service_request_phase_seconds_total', { route, phase }) * 1000) / Math.max(1, admitted));
  }
  return {
    admitted,
    shed: delta('parle_service_shed_requests_total', { route }),
    timedOut: delta('parle_service_timed_out_requests_total', { route }),
    failed: delta('parle_service_failed_requests_total', { route }) - delta('parle_service_shed_requests_total', { route }),
    // CPU of the server process(es), workers included, over the run (both scrapes' times: the run's length)
    serverCpuSeconds: delta('parle_process_cpu_seconds_total', {}),
    meanPhaseMsPerRequest: phases,
    rateBytesPerS: metricSum(after, 'parle_service_rate_bytes_per_second'),
    // prom-client's event-loop delay since the last scrape (the one before the run); with several
    // processes, summed over them
    eventLoopDelayMs: {
      p99: Math.round(metricSum(after, 'parle_nodejs_eventloop_lag_p99_seconds') * 1000),
      max: Math.round(metricSum(after, 'parle_nodejs_eventloop_lag_max_seconds') * 1000),
    },
  };
}

/** Whether a load run met the targets: `minRatio` of the engine, no timeouts or errors, 503s at once, p99 <= 3 s. */
function judge(run, engineBytesPerS, minRatio) {
  const ratio = run.inputBytesPerS / engineBytesPerS;
  const otherCount = Object.values(run.otherStatuses).reduce((a, b) => a + b, 0);
  const pass =
    ratio >= minRatio &&
    run.timeouts === 0 &&
    run.errors === 0 &&
    otherCount === 0 &&
    run.shedLatencyMs.max <= 100 &&
    run.latencyMs.p99 <= 3000;
  return { ratioToEngine: ratio, targetRatio: minRatio, pass };
}

const mb = (bytesPerS) => (bytesPerS / 1e6).toFixed(0);

function describeRun(name, run) {
  return (
    `${name}: ${run.requestsPerS.toFixed(1)} req/s, ${mb(run.inputBytesPerS)} MB/s in (${(run.ratioToEngine * 100).toFixed(0)} % of the engine, target ${run.targetRatio * 100} %), ` +
    `2xx ${run.ok2xx}, 503 ${run.shed503} (max ${run.shedLatencyMs.max} ms, p99 ${run.shedLatencyMs.p99}; connecting: max ${run.shedConnectMs.max} ms; ` +
    `client event-loop delay p99 ${run.clientLoopDelayMs.p99} ms, max ${run.clientLoopDelayMs.max}), other ${JSON.stringify(run.otherStatuses)}, errors ${run.errors}, timeouts ${run.timeouts}; ` +
    `p50 ${run.latencyMs.p50} ms, p99 ${run.latencyMs.p99} ms: ${run.pass ? 'pass' : 'FAIL'}`
  );
}

const machine = () => machineInfo({ cores: os.availableParallelism() });

/** The container the compress route makes of `body` (the decompress route's request body). */
async function compressOnce(url, type, body) {
  const res = await fetch(new URL(`/v1/compress?type=${type}`, url), {
    method: 'POST',
    headers: { 'content-type': 'application/octet-stream' },
    body,
  });
  if (res.status !== 200) throw new Error(`compress answered ${res.status}: ${await res.text()}`);
  return new Uint8Array(await res.arrayBuffer());
}

/**
 * The load phases (3): [route, body] pairs, from --loads (e.g. `compress:photos,decompress:photos`)
 * or by default compress on --body and on synthetic runs, decompress on --body (--load-only: the
 * --route on --body).
 */
function loadsOf(kind) {
  if (flag('--loads'))
    return text('--loads')
      .split(',')
      .map((pair) => pair.split(':'));
  if (flag('--load-only')) return [[text('--route', 'compress'), kind]];
  return [...new Set([kind, 'runs'])].map((k) => ['compress', k]).concat([['decompress', kind]]);
}

/** The load phases (3) against `url`, see {@link loadsOf}. */
async function loadPhases(url, rates, { kind, connections, seconds, timeoutMs, minRatio }) {
  const out = {};
  const bodies = {};
  for (const [route, k] of loadsOf(kind)) {
    bodies[k] ??= await makeBody(k, BODY_BYTES);
    const type = BODIES[k].type;
    const body = route === 'compress' ? bodies[k] : await compressOnce(url, type, bodies[k]);
    const metricsBefore = await fetch(new URL('/metrics', url)).then((r) => r.text());
    const run = await loadRun(url, {
      path: route === 'compress' ? `/v1/compress?type=${type}` : '/v1/decompress',
      contentType: route === 'compress' ? 'application/octet-stream' : 'application/x-parle',
      body,
      connections,
      seconds,
      timeoutMs,
    });
    const metricsAfter = await fetch(new URL('/metrics', url)).then((r) => r.text());
    const profile = serviceProfile(metricsBefore, metricsAfter, `/v1/${route}`);
    const reference = rates[k][route].referenceBytesPerS;
    const result = {
      route,
      body: k,
      bodyBytes: body.length,
      engineBytesPerS: reference,
      ...run,
      ...judge(run, reference, minRatio),
      service: profile,
    };
    out[`${route}-${k}`] = result;
    console.log(describeRun(`load ${route} ${k}, ${connections} x ${(body.length / MiB).toFixed(1)} MiB, ${seconds} s`, result));
    const p = profile.meanPhaseMsPerRequest;
    result.service.serverCores = profile.serverCpuSeconds / run.seconds;
    console.log(
      `  service: admitted ${profile.admitted}, shed ${profile.shed}, timed out ${profile.timedOut}, failed ${profile.failed}; ` +
        `mean ms a request: gate ${p.wait}, body ${p.body} (client ${p.body_client}), coding ${p.coding}, send ${p.send}; ` +
        `rate estimate ${mb(profile.rateBytesPerS)} MB/s; CPU: server ${result.service.serverCores.toFixed(2)} cores (workers included), client ${run.clientCores.toFixed(2)}; event-loop delay p99 ${profile.eventLoopDelayMs.p99} ms, max ${profile.eventLoopDelayMs.max} ms`,
    );
  }
  return out;
}

/** The engine's rates on each body the load phases use. */
async function engineRates(server, kind, seconds) {
  const rates = {};
  for (const k of new Set(loadsOf(kind).map(([, body]) => body))) {
    rates[k] = await server.ask('engineRate', { body: k, seconds });
    const r = rates[k];
    console.log(
      `engine (${k}, ${ENGINE_CONCURRENCY} calls at once, ratio ${r.ratio.toFixed(2)}): compress ${mb(r.compress.wholeBytesPerS)} MB/s whole, ${mb(r.compress.streamingBytesPerS)} MB/s streaming; ` +
        `decompress ${mb(r.decompress.wholeBytesPerS)} MB/s whole, ${mb(r.decompress.streamingBytesPerS)} MB/s streaming (of container bytes)`,
    );
  }
  return rates;
}

// ---- bad input (phase 4) ----------------------------------------------------------------------

/** Raw HTTP/1.1 request head for POST `path`. */
function head(url, path, type, length) {
  const { host } = new URL(url);
  return `POST ${path} HTTP/1.1\r\nHost: ${host}\r\nContent-Type: ${type}\r\nContent-Length: ${length}\r\n\r\n`;
}

/** Reads what the server answers on `socket` until it closes: the status line's code, or 'closed'. */
function answerOf(socket) {
  return new Promise((resolve) => {
    let got = '';
    socket.on('data', (d) => (got += d.toString('latin1', 0, Math.min(d.length, 256))));
    socket.on('error', () => undefined);
    socket.on('close', () => resolve(/^HTTP\/1\.1 (\d{3})/.exec(got)?.[1] ?? 'closed'));
  });
}

/**
 * The three bad clients, each once, running beside the load (each retries after a 503 until
 * admitted): resolves to what each got.
 *   slow: 16 MiB announced, 1 KiB/s sent until the server closes the connection (60 s at most);
 *   disconnect: 16 MiB announced, 4 MiB sent, socket destroyed;
 *   lying: 16 MiB announced, 1 MiB sent, then the client half-closes (its side ends early).
 */
async function badClients(url, body, seconds) {
  const { hostname, port } = new URL(url);
  const path = '/v1/compress?type=u8';
  const until = performance.now() + seconds * 1000;
  /**
   * Connects and sends the head with `Expect: 100-continue` until the service admits the request
   * (its 100 Continue), waiting Retry-After after each 503 as a client should; resolves to the
   * socket, the 503s it got, and `answer`: the status lines the server sent after the 100 once
   * the connection closes ('closed' when none).
   */
  const admitted = async () => {
    for (let shed = 0; ; shed++) {
      const socket = net.connect(Number(port), hostname);
      socket.on('error', () => undefined);
      let got = '';
      const closed = new Promise((resolve) => socket.on('close', resolve));
      const first = new Promise((resolve) => {
        socket.on('data', (d) => {
          got += d.toString('latin1', 0, Math.min(d.length, 512));
          if (/\r\n\r\n/.test(got)) resolve(got);
        });
        socket.on('close', () => resolve(got));
      });
      socket.write(head(url, path, 'application/octet-stream', body.length).replace('\r\n\r\n', '\r\nExpect: 100-continue\r\n\r\n'));
      const line = /^HTTP\/1\.1 (\d{3})/.exec(await first)?.[1];
      if (line === '100' || performance.now() > until) {
        const answer = closed.then(
          () =>
            [...got.matchAll(/HTTP\/1\.1 (\d{3})/g)]
              .map((m) => m[1])
              .filter((s) => s !== '100')
              .join(',') || 'closed',
        );
        return { socket, shed, answer, admitted: line === '100' };
      }
      socket.destroy();
      const retryAfter = Number(/retry-after: (\d+)/i.exec(got)?.[1] ?? 1);
      await new Promise((resolve) => setTimeout(resolve, retryAfter * 1000));
    }
  };
  const results = {};
  const slow = (async () => {
    const { socket, shed, answer, admitted: ok } = await admitted();
    const t0 = performance.now();
    let sent = 0;
    // until the server closes the connection (a minute at most: a server with no floor never would)
    while (ok && performance.now() < t0 + 60_000 && !socket.destroyed && !socket.readableEnded) {
      socket.write(body.subarray(sent, sent + 1024));
      sent += 1024;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    const servedForS = (performance.now() - t0) / 1000;
    socket.destroy();
    results.slow = { shed503: shed, admitted: ok, sentBytes: sent, secondsUntilClosed: servedForS, answer: await answer };
  })();
  const disconnect = (async () => {
    const { socket, shed, answer, admitted: ok } = await admitted();
    if (ok) await new Promise((resolve) => socket.write(body.subarray(0, 4 * MiB), resolve));
    socket.destroy();
    results.disconnect = { shed503: shed, admitted: ok, sentBytes: 4 * MiB, answer: await answer };
  })();
  const lying = (async () => {
    const { socket, shed, answer, admitted: ok } = await admitted();
    socket.end(ok ? body.subarray(0, MiB) : undefined);
    results.lying = { shed503: shed, admitted: ok, sentBytes: MiB, announcedBytes: body.length, answer: await answer };
  })();
  await Promise.all([slow, disconnect, lying]);
  return results;
}

/**
 * A decompression bomb of `bytes` bytes: a version-4 header (checksum right) that declares 2^40 u8
 * elements (1 TiB) in chunks of 64 MiB, then filler. The service must refuse it from the header
 * (413 LIMIT_EXCEEDED) before any output.
 */
async function bombOf(bytes) {
  const { h64Raw } = await (await import('xxhash-wasm')).default();
  const out = new Uint8Array(bytes).fill(0x5a);
  const view = new DataView(out.buffer);
  out.set([0x89, 0x50, 0x41, 0x52, 0x4c, 0x45, 0x0d, 0x0a], 0);
  view.setUint8(8, 4); // version
  view.setUint8(9, 0); // u8
  view.setUint8(10, 5); // level
  view.setUint8(11, 0x10); // no shape, a chunk index
  const chunk = 64 * MiB;
  view.setUint32(12, chunk, true);
  view.setBigUint64(16, 2n ** 40n, true);
  view.setUint32(24, 2 ** 40 / chunk, true);
  view.setUint32(28, Number(h64Raw(out.subarray(0, 28), 0n) & 0xffffffffn), true);
  return out;
}

/**
 * The hostile clients of issue #47, beside the load for `seconds`: `idle` sockets connected at
 * the start that never send a byte (how many the server closed, and when), `bombs` decompression
 * bombs of 4 KiB spread over the phase (each one's status and time to answer), and `tricklers`
 * clients that announce 16 MiB to /v1/compress and send 1 KiB a second (what each got and after
 * how long). Resolves to a summary of each.
 */
async function hostileClients(url, seconds, { idle, bombs, tricklers }) {
  const { hostname, port } = new URL(url);
  const t0 = performance.now();
  // idle connections
  const idleClosedAt = [];
  let idleOpened = 0;
  let idleRefused = 0;
  const sockets = [];
  for (let i = 0; i < idle; i++) {
    const socket = net.connect(Number(port), hostname);
    socket.on('connect', () => idleOpened++);
    socket.on('error', () => idleRefused++);
    socket.on('close', () => idleClosedAt.push((performance.now() - t0) / 1000));
    sockets.push(socket);
    if (i % 500 === 499) await new Promise((resolve) => setImmediate(resolve));
  }
  // bombs, spread over the phase
  const bomb = await bombOf(4096);
  const bombResults = [];
  const bombing = (async () => {
    for (let i = 0; i < bombs; i++) {
      const started = performance.now();
      const r = await fetch(new URL('/v1/decompress', url), {
        method: 'POST',
        headers: { 'content-type': 'application/x-parle' },
        body: bomb,
        // (a bomb that cannot get a connection, or an answer, within 5 s counts as 'timeout')
        signal: AbortSignal.timeout(5000),
      }).then(
        async (res) => ({ status: res.status, code: (await res.json().catch(() => ({})))?.error?.code }),
        (e) => ({ status: e?.name === 'TimeoutError' ? 'timeout' : 'error' }),
      );
      bombResults.push({ ...r, ms: performance.now() - started });
      await new Promise((resolve) => setTimeout(resolve, (seconds * 1000) / (bombs + 1)));
    }
  })();
  // tricklers: 16 MiB announced, 1 KiB a second, until the server closes (or the phase ends)
  const trickle = async () => {
    const socket = net.connect(Number(port), hostname);
    const answer = answerOf(socket);
    const started = performance.now();
    socket.write(head(url, '/v1/compress?type=u8', 'application/octet-stream', BODY_BYTES));
    while (!socket.destroyed && !socket.readableEnded && performance.now() < t0 + seconds * 1000) {
      socket.write(new Uint8Array(1024));
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    const held = (performance.now() - started) / 1000;
    socket.destroy();
    return { answer: await answer, heldSeconds: held };
  };
  const trickling = Promise.all(Array.from({ length: tricklers }, trickle));
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  await bombing;
  const trickled = await trickling;
  const stillOpen = sockets.filter((x) => !x.destroyed).length;
  for (const x of sockets) x.destroy();
  const sortedMs = bombResults.map((b) => b.ms).sort((a, b) => a - b);
  const statuses = (list) => list.reduce((acc, x) => ((acc[x] = (acc[x] ?? 0) + 1), acc), {});
  return {
    idle: {
      asked: idle,
      connected: idleOpened,
      refusedOrReset: idleRefused,
      closedByServer: idleClosedAt.length,
      closedWithinS: idleClosedAt.length ? Math.max(...idleClosedAt) : null,
      stillOpen,
    },
    bombs: {
      sent: bombResults.length,
      statuses: statuses(bombResults.map((b) => `${b.status} ${b.code ?? ''}`.trim())),
      ms: { p50: Math.round(percentile(sortedMs, 0.5)), max: Math.round(sortedMs.at(-1) ?? 0) },
    },
    tricklers: {
      count: tricklers,
      answers: statuses(trickled.map((t) => t.answer)),
      heldSeconds: { max: Math.max(...trickled.map((t) => t.heldSeconds)) },
    },
  };
}

/**
 * The load on POST /v1/compress of --body (`s.kind`) that phases 4 and 5 and --hostile-only run:
 * loadRun's options (add `seconds` where the phase does not set it) and the body.
 */
async function compressLoadOf(s, seconds) {
  const body = await makeBody(s.kind, BODY_BYTES);
  return {
    path: `/v1/compress?type=${BODIES[s.kind].type}`,
    contentType: 'application/octet-stream',
    body,
    connections: s.connections,
    ...(seconds !== undefined ? { seconds } : {}),
    timeoutMs: s.timeoutMs,
  };
}

/**
 * --hostile-only: the load on compress (--body) for --bad-seconds alone, then again beside the
 * hostile clients (--idle N, default 10000; 100 bombs; 32 tricklers): goodput both ways (allowed
 * to move by 10 %), what the hostile clients got, the server's peak RSS.
 */
async function hostilePhase(url, s, server) {
  const loadOptions = await compressLoadOf(s, s.badSeconds);
  const alone = await loadRun(url, loadOptions);
  const options = { idle: value('--idle', 10_000), bombs: 100, tricklers: 32 };
  const [beside, hostile] = await Promise.all([loadRun(url, loadOptions), hostileClients(url, s.badSeconds, options)]);
  const memory = await server.ask('memory');
  const change = beside.inputBytesPerS / alone.inputBytesPerS - 1;
  const result = {
    seconds: s.badSeconds,
    alone: { inputMBPerS: alone.inputBytesPerS / 1e6, ok2xx: alone.ok2xx, timeouts: alone.timeouts, errors: alone.errors },
    beside: { inputMBPerS: beside.inputBytesPerS / 1e6, ok2xx: beside.ok2xx, timeouts: beside.timeouts, errors: beside.errors },
    goodputChange: change,
    hostile,
    serverPeakRssMiB: memory.peakRssMiB,
    pass: Math.abs(change) <= 0.1 && hostile.bombs.ms.max <= 100 && beside.timeouts === 0,
  };
  console.log(
    `hostile clients beside the load (${s.badSeconds} s): ${result.alone.inputMBPerS.toFixed(0)} MB/s alone, ` +
      `${result.beside.inputMBPerS.toFixed(0)} MB/s beside them (${(change * 100).toFixed(0)} %, allowed 10 %); ` +
      `idle ${JSON.stringify(hostile.idle)}; bombs ${JSON.stringify(hostile.bombs)}; tricklers ${JSON.stringify(hostile.tricklers)}; ` +
      `server peak RSS ${memory.peakRssMiB.toFixed(0)} MiB: ${result.pass ? 'pass' : 'FAIL'}`,
  );
  return result;
}

/** Counters of GET /metrics that tell what happened to requests (statuses, shed, timed out). */
function requestCounters(metricsText) {
  return metricsText
    .split('\n')
    .filter((line) => /^parle_(http_requests_total|service_(admitted|shed|timed_out|failed)_requests_total)/.test(line))
    .join('\n');
}

// ---- the runs -----------------------------------------------------------------------------------

function settingsOf() {
  const quick = flag('--quick');
  return {
    quick,
    workers: value('--workers', 2),
    connections: value('--connections', 64),
    seconds: value('--seconds', quick ? 10 : 60),
    timeoutMs: value('--client-timeout-s', 10) * 1000,
    kind: text('--body', 'photos'),
    chunkBytes: flag('--chunk-bytes') ? value('--chunk-bytes') : 'library default',
    maxWaitMs: flag('--max-wait-ms') ? value('--max-wait-ms') : 'service default',
    expectContinue: EXPECT_CONTINUE,
    backoff: BACKOFF,
    minRatio: os.availableParallelism() >= 16 ? 0.8 : 0.7,
    badSeconds: value('--bad-seconds', quick ? 10 : 30),
  };
}

/** Phases 2 and 3 against `parle serve --processes N`. */
async function runProcessesBench() {
  const s = settingsOf();
  const processes = value('--processes', 1);
  const bundle = await bundleService();
  const server = startServer(bundle, s.workers);
  await server.ready;
  const rates = await engineRates(server, s.kind, s.quick ? 4 : 8);
  await server.ask('stop').catch(() => undefined);
  const command = await startCommand(processes, s.workers);
  console.log(`parle serve ${command.url} (processes ${processes}, workers ${s.workers})`);
  let load;
  try {
    load = await loadPhases(command.url, rates, s);
  } finally {
    await command.stop();
  }
  const results = {
    benchmark: 'service-load-processes',
    date: new Date().toISOString(),
    machine: machine(),
    note: 'Rates are input bytes per second (decompress: container bytes). The load goes to `parle serve --processes N --workers W`; the engine reference is one engine with W workers, 8 calls at once. Server, client and workers share this machine.',
    settings: { ...s, processes, bodies: Object.fromEntries(Object.entries(BODIES).map(([k, v]) => [k, v.what])) },
    engine: rates,
    load,
  };
  console.log(JSON.stringify(results));
  if (flag('--load-only')) return;
  writeResults({ [`service-load-processes-${processes}.json`]: results }, { quick: s.quick, out: outArg() });
}

/** A 1 GiB round trip: compress's response is decompress's request body; checks the output. */
async function roundTrip(url, totalBytes) {
  const pattern = await makeBody('mri', 16 * MiB);
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
        for (let i = 0; i < d.length && mismatch < 0;) {
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
  return {
    seconds: (performance.now() - t0) / 1000,
    compressedBytes,
    outputBytes: output.bytes,
    equal: output.bytes === totalBytes && output.mismatch < 0,
  };
}

/**
 * Phase 4: the load on compress (--body) for --bad-seconds alone, then again beside the three bad
 * clients ({@link badClients}); the others' p99 both ways, what the bad ones got, the counters.
 */
async function badPhase(url, s, results, server) {
  const badSeconds = s.badSeconds;
  const loadOptions = await compressLoadOf(s, badSeconds);
  const alone = await loadRun(url, loadOptions);
  const [withBad, bad] = await Promise.all([loadRun(url, loadOptions), badClients(url, loadOptions.body, badSeconds)]);
  const slowdown = withBad.latencyMs.p99 / Math.max(1, alone.latencyMs.p99) - 1;
  const metricsText = requestCounters((await server.ask('metrics')).text);
  results.badInput = {
    seconds: badSeconds,
    alone: { p99Ms: alone.latencyMs.p99, requestsPerS: alone.requestsPerS, timeouts: alone.timeouts },
    withBadClients: { p99Ms: withBad.latencyMs.p99, requestsPerS: withBad.requestsPerS, timeouts: withBad.timeouts },
    p99Slowdown: slowdown,
    clients: bad,
    metrics: metricsText,
    pass: slowdown <= 0.1 && withBad.timeouts === 0,
  };
  console.log(
    `bad clients beside the load (${badSeconds} s): p99 ${alone.latencyMs.p99} ms alone, ${withBad.latencyMs.p99} ms with them (${(slowdown * 100).toFixed(0)} %, allowed 10 %); ` +
      `slow: ${bad.slow.answer} after ${bad.slow.secondsUntilClosed?.toFixed(1)} s, disconnect: ${bad.disconnect.answer}, lying Content-Length: ${bad.lying.answer} ` +
      `(503s before admission: ${bad.slow.shed503}, ${bad.disconnect.shed503}, ${bad.lying.shed503}): ${results.badInput.pass ? 'pass' : 'FAIL'}`,
  );
  console.log(metricsText);
}

async function runBench() {
  const s = settingsOf();
  const killSeconds = s.quick ? 6 : 15;
  const rssBytes = value('--rss-bytes', 2 ** 30);

  const bundle = await bundleService();
  const server = startServer(bundle, s.workers);
  const { url } = await server.ready;
  console.log(
    `server ${url} (${s.workers} workers); load average ${os
      .loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}`,
  );
  const results = {
    benchmark: 'service-load',
    date: new Date().toISOString(),
    machine: machine(),
    note: 'Rates are input bytes per second (decompress: container bytes). The server, the load client and the engine workers share this machine.',
    settings: { ...s, killSeconds, bodies: Object.fromEntries(Object.entries(BODIES).map(([k, v]) => [k, v.what])) },
  };
  try {
    if (flag('--hostile-only')) {
      const hostile = await hostilePhase(url, s, server);
      console.log(JSON.stringify({ settings: s, machine: machine(), hostile }));
      return;
    }
    if (flag('--bad-only')) {
      await badPhase(url, s, results, server);
      console.log(JSON.stringify(results.badInput));
      return;
    }
    if (flag('--load-only')) {
      const rates = await engineRates(server, s.kind, 4);
      const load = await loadPhases(url, rates, s);
      const metrics = requestCounters((await server.ask('metrics')).text);
      console.log(JSON.stringify({ settings: s, machine: machine(), rates, load, metrics }));
      return;
    }
    // 1. 1 GiB round trip, peak RSS of the server.
    const before = await server.ask('memory');
    const trip = await roundTrip(url, rssBytes);
    const after = await server.ask('memory');
    results.bigBody = {
      bodyBytes: rssBytes,
      ...trip,
      serverRssBeforeMiB: before.rssMiB,
      serverPeakRssMiB: after.peakRssMiB,
      pass: trip.equal && after.peakRssMiB < 300,
    };
    console.log(
      `1 GiB round trip: ${trip.equal ? 'equal' : 'DIFFERENT'}, ${trip.seconds.toFixed(1)} s, container ${(trip.compressedBytes / MiB).toFixed(0)} MiB; ` +
        `server RSS ${before.rssMiB.toFixed(0)} MiB before, peak ${after.peakRssMiB.toFixed(0)} MiB (target < 300)`,
    );
    if (flag('--rss-only')) {
      console.log(JSON.stringify({ before, after, trip }));
      return;
    }

    // 2. The engine's own rates, in the server process, nothing else running.
    const rates = await engineRates(server, s.kind, s.quick ? 4 : 8);
    results.engine = rates;

    // 3. The load.
    results.load = await loadPhases(url, rates, s);

    // 4. Bad clients beside the load (compress, --body).
    await badPhase(url, s, results, server);

    // 5. The same load with a worker killed half way.
    const loadOptions = await compressLoadOf(s);
    const killed = loadRun(url, { ...loadOptions, seconds: killSeconds });
    await new Promise((resolve) => setTimeout(resolve, (killSeconds * 1000) / 2)); // half way: a point in the run, not a synchronisation
    const kill = await server.ask('kill', { index: 0 });
    const withKill = await killed;
    const failed = withKill.errors + withKill.timeouts + Object.values(withKill.otherStatuses).reduce((a, b) => a + b, 0);
    const health = await fetch(new URL('/healthz', url)).then((r) => r.json());
    const after2 = await loadRun(url, { ...loadOptions, connections: 8, seconds: 3 });
    const after2Failed = after2.errors + after2.timeouts + Object.values(after2.otherStatuses).reduce((a, b) => a + b, 0);
    results.workerKill = {
      ...withKill,
      workersBusyAtKill: kill.busyBefore,
      failedRequests: failed,
      restartsAfter: health.workerRestarts,
      afterKill: { ok2xx: after2.ok2xx, failed: after2Failed },
      pass: failed <= 1 && health.status === 'ok' && after2.ok2xx > 0 && after2Failed === 0,
    };
    console.log(
      `worker killed during load: ${failed} request(s) failed (workers busy at the kill: ${kill.busyBefore}; allowed <= 1), ` +
        `${withKill.ok2xx} succeeded; restarts ${health.workerRestarts}; afterwards ${after2.ok2xx} ok, ${after2Failed} failed: ` +
        `${results.workerKill.pass ? 'pass' : 'FAIL'}`,
    );
    const last = await server.ask('memory');
    results.serverPeakRssMiBAfterLoad = last.peakRssMiB;
    console.log(`server peak RSS over the whole run: ${last.peakRssMiB.toFixed(0)} MiB`);
  } finally {
    await server.ask('stop').catch(() => undefined);
  }
  writeResults({ 'service-load.json': results }, { quick: s.quick, out: outArg() });
}

if (flag('--server')) await runServer();
else if (flag('--client')) await runClient();
else if (argv.includes('--processes')) await runProcessesBench();
else await runBench();
