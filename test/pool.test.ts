// The worker pool: every op on 1, 2, 3 and 7 workers (more than the 2 cores here) equals the
// one-thread path, with segments so small that runs cross every boundary; abort while queued and
// while running; a worker killed mid-task; queue overflow; memory growth during a run; and the
// fallback without SharedArrayBuffer. Synchronised with promises, never with sleeps or polling:
// the faults' tests hold their op's task running until they release it (test/support/pool.ts),
// so an abort or a kill always lands on a running task, however fast the worker.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CpuPath, type CpuPathOptions } from '../ts/cpu/cpu-path.js';
import { Engine } from '../ts/engine.js';
import { ErrorCodes } from '../ts/errors.js';
import type { ParleArray } from '../ts/types.js';
import { holdNextTask, nextRun } from './support/pool.js';
import { within } from './support/wait.js';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Rng, caseSeed, describeSeed, fillRuns, randomF32Bits } from './support/random.js';
import { PROCEDURES } from '../ts/codec/cpu/procedures.js';

async function engineWith(options: CpuPathOptions, maxQueue = 1024): Promise<Engine> {
  return new Engine(await CpuPath.create({ procedures: PROCEDURES, ...options }), null, { maxElements: 2 ** 32 - 1, maxQueue });
}

/** Bytes of any array, for exact comparison. */
function bytes(a: ParleArray): Uint8Array {
  return new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
}
function same(a: ParleArray, b: ParleArray): boolean {
  return a.length === b.length && a.constructor === b.constructor && Buffer.compare(bytes(a), bytes(b)) === 0;
}

let single: Engine;
beforeAll(async () => {
  single = await engineWith({ workers: 0 });
});
afterAll(() => single.destroy());

describe.each([1, 2, 3, 7])('%i workers, 4 KiB segments', (workers) => {
  let pooled: Engine;
  beforeAll(async () => {
    pooled = await engineWith({ workers, segmentBytes: 4096, inlineBytes: 0 });
  });
  afterAll(() => pooled.destroy());

  const sizes = [1, 1000, 4097, 70_001];

  for (const n of sizes) {
    it(`rleEncode / rleDecode, host and resident, n=${n}`, async () => {
      const seed = caseSeed(`pool rle ${workers} ${n}`);
      const input = new Uint16Array(n);
      fillRuns(new Rng(seed), input, { kind: 'uniform', maxRun: 3000 });
      const expected = await single.rleEncode(input);
      const runs = await pooled.rleEncode(input);
      expect(same(runs.values, expected.values), describeSeed(seed)).toBe(true);
      expect(same(runs.lengths, expected.lengths), describeSeed(seed)).toBe(true);
      expect(same(await pooled.rleDecode(runs), input), describeSeed(seed)).toBe(true);

      const resident = pooled.alloc('u16', n);
      resident.set(input);
      const residentRuns = await pooled.rleEncode(resident);
      expect(same(residentRuns.values, expected.values), describeSeed(seed)).toBe(true);
      expect(same(residentRuns.lengths, expected.lengths), describeSeed(seed)).toBe(true);
      const back = await pooled.rleDecode(residentRuns);
      expect(same(back, input), describeSeed(seed)).toBe(true);
      for (const a of [resident, residentRuns.values, residentRuns.lengths, back]) pooled.free(a);
    });

    it(`scan u32 / f32, host and resident, n=${n}`, async () => {
      const seed = caseSeed(`pool scan ${workers} ${n}`);
      const rng = new Rng(seed);
      const u = new Uint32Array(n).map(() => rng.nextU32());
      for (const inclusive of [false, true]) {
        expect(same(await pooled.scan(u, { inclusive }), await single.scan(u, { inclusive })), describeSeed(seed)).toBe(true);
        const resident = pooled.alloc('u32', n);
        resident.set(u);
        const out = await pooled.scan(resident, { inclusive });
        expect(same(out, await single.scan(u, { inclusive })), describeSeed(seed)).toBe(true);
        pooled.free(resident);
        pooled.free(out);
      }
      // f32: per-segment sums change the order of additions; compare within float rounding.
      const f = new Float32Array(n).map(() => rng.nextFloat());
      const got = await pooled.scan(f, { inclusive: true });
      const want = await single.scan(f, { inclusive: true });
      for (let i = 0; i < n; i += 97) expect(Math.abs(got[i] - want[i]), describeSeed(seed)).toBeLessThanOrEqual(1e-4 * (i + 1));
    });

    it(`sort u32 / i32 / f32 key-value, host and resident, n=${n}`, async () => {
      const seed = caseSeed(`pool sort ${workers} ${n}`);
      const rng = new Rng(seed);
      const values = new Uint32Array(n).map((_, i) => i);
      for (const keys of [
        new Uint32Array(n).map(() => rng.nextU32() % 300),
        new Int32Array(new Uint32Array(n).map(() => rng.nextU32()).buffer),
        new Float32Array(randomF32Bits(rng, n, 0.2).buffer),
      ]) {
        const expected = await single.sort(keys, { values });
        const got = await pooled.sort(keys, { values });
        expect(same(got.keys, expected.keys), describeSeed(seed)).toBe(true);
        expect(same(got.values, expected.values), describeSeed(seed)).toBe(true);
        const type = keys instanceof Uint32Array ? 'u32' : keys instanceof Int32Array ? 'i32' : 'f32';
        const resident = pooled.alloc(type, n);
        bytes(resident).set(bytes(keys));
        const sorted = await pooled.sort(resident);
        expect(same(sorted, expected.keys), describeSeed(seed)).toBe(true);
        expect(same(resident, keys)).toBe(true); // the input is untouched
        pooled.free(resident);
        pooled.free(sorted);
      }
    });
  }

  it('sort of 300 000 keys: split by the top digit, skewed keys merged, equal keys kept', async () => {
    const seed = caseSeed(`pool big sort ${workers}`);
    const rng = new Rng(seed);
    const n = 300_000;
    const values = new Uint32Array(n).map((_, i) => i);
    const cases = {
      random: new Uint32Array(n).map(() => rng.nextU32()),
      skewed: new Uint32Array(n).map(() => (rng.nextU32() % 7 === 0 ? rng.nextU32() : rng.nextU32() & 0xffff)),
      equal: new Uint32Array(n).fill(42),
      floats: new Float32Array(randomF32Bits(rng, n, 0.05).buffer),
      signed: new Int32Array(new Uint32Array(n).map(() => rng.nextU32() % 1000).buffer),
    };
    for (const [name, keys] of Object.entries(cases)) {
      const expected = await single.sort(keys, { values });
      const got = await pooled.sort(keys, { values });
      expect(same(got.keys, expected.keys), `${name} ${describeSeed(seed)}`).toBe(true);
      expect(same(got.values, expected.values), `${name} ${describeSeed(seed)}`).toBe(true);
      const resident = pooled.alloc(keys instanceof Float32Array ? 'f32' : keys instanceof Int32Array ? 'i32' : 'u32', n);
      bytes(resident).set(bytes(keys));
      const sorted = await pooled.sort(resident);
      expect(same(sorted, expected.keys), `${name} resident ${describeSeed(seed)}`).toBe(true);
      pooled.free(resident);
      pooled.free(sorted);
    }
  });

  it('one run spanning every segment', async () => {
    const input = pooled.alloc('u8', 50_000);
    input.fill(9);
    const runs = await pooled.rleEncode(input);
    expect(Array.from(runs.lengths)).toEqual([50_000]);
    expect(Array.from(runs.values)).toEqual([9]);
    expect(same(await pooled.rleDecode(runs), input)).toBe(true);
  });

  it('compress / decompress write the same bytes as one thread', async () => {
    const seed = caseSeed(`pool compress ${workers}`);
    const input = new Uint32Array(100_003);
    fillRuns(new Rng(seed), input, { kind: 'uniform', maxRun: 50 });
    const packed = await pooled.compress(input, { chunkBytes: 4096 });
    expect(Buffer.compare(packed, await single.compress(input, { chunkBytes: 4096 })), describeSeed(seed)).toBe(0);
    expect(same(await pooled.decompress(packed), input)).toBe(true);
  });
});

describe('scheduling and faults', () => {
  let engine: Engine;
  let cpu: CpuPath;
  beforeAll(async () => {
    cpu = await CpuPath.create({ procedures: PROCEDURES, workers: 1, inlineBytes: 0 });
    engine = new Engine(cpu, null, { maxElements: 2 ** 32 - 1, maxQueue: 3 });
  });
  afterAll(() => engine.destroy());

  /** Keys whose sort keeps the one worker busy for a while. */
  const bigKeys = () => new Uint32Array(1 << 22).map((_, i) => Math.imul(i, 2654435761) >>> 0);

  it('abort while queued: the queued op fails with ABORTED, the running one completes', async () => {
    const held = holdNextTask(cpu.pool!);
    try {
      const first = engine.sort(bigKeys());
      await held.started();
      expect(cpu.pool!.busy).toBe(1);
      const controller = new AbortController();
      const queued = nextRun(cpu.pool!);
      const second = engine.scan(new Uint32Array(1000), { signal: controller.signal });
      await queued;
      expect(cpu.pool!.queued).toBe(1); // waiting for the one worker, which the sort holds
      controller.abort();
      await expect(second).rejects.toMatchObject({ code: ErrorCodes.ABORTED });
      expect(cpu.pool!.queued).toBe(0);
      held.release();
      const sorted = await first;
      expect(sorted[0]).toBeLessThanOrEqual(sorted[1]);
    } finally {
      held.release();
    }
  });

  it('abort while running: the worker is replaced and the pool keeps serving', async () => {
    const restarts = cpu.pool!.restarts;
    const held = holdNextTask(cpu.pool!);
    try {
      const controller = new AbortController();
      const running = engine.sort(bigKeys(), { signal: controller.signal });
      await held.started();
      expect(cpu.pool!.busy).toBe(1);
      controller.abort();
      await expect(running).rejects.toMatchObject({ code: ErrorCodes.ABORTED });
      expect(cpu.pool!.restarts).toBe(restarts + 1);
      expect(Array.from(await engine.scan(new Uint32Array([1, 2, 3])))).toEqual([0, 1, 3]);
    } finally {
      held.release();
    }
  });

  it('an already aborted signal rejects at once', async () => {
    await expect(engine.rleEncode(new Uint8Array(10), { signal: AbortSignal.abort() })).rejects.toMatchObject({ code: ErrorCodes.ABORTED });
  });

  it('a worker killed mid-task fails only that op, with WORKER_FAILED; the pool recovers', async () => {
    const held = holdNextTask(cpu.pool!);
    try {
      const running = engine.sort(bigKeys());
      await held.started();
      expect(cpu.pool!.busy).toBe(1);
      await cpu.pool!.killWorker(0);
      await expect(running).rejects.toMatchObject({ code: ErrorCodes.WORKER_FAILED });
      const after = await engine.rleEncode(new Uint8Array([1, 1, 2]));
      expect(Array.from(after.lengths)).toEqual([2, 1]);
    } finally {
      held.release();
    }
  });

  it("requests on a worker (fetchBytes): a kill fails the one in flight with WORKER_FAILED, an abort ends the worker's request too", async () => {
    // a server that answers /ok at once and holds /held until the client goes away
    const closed: string[] = [];
    let arrived: () => void = () => undefined;
    const server = createServer((request, response) => {
      if (request.url === '/ok') return void response.end('ok');
      arrived();
      request.on('close', () => closed.push(request.url ?? ''));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const ok = await engine.fetchBytes(`${origin}/ok`);
      expect([ok.status, new TextDecoder().decode(ok.body)]).toEqual([200, 'ok']);
      // a kill while the worker waits for the response
      let reached = new Promise<void>((resolve) => (arrived = resolve));
      const held = engine.fetchBytes(`${origin}/held`);
      await within(reached, 10_000, 'the held request at the server');
      await cpu.pool!.killWorker(0);
      await expect(held).rejects.toMatchObject({ code: ErrorCodes.WORKER_FAILED });
      // an abort: the caller is answered at once and the worker's request is aborted
      reached = new Promise<void>((resolve) => (arrived = resolve));
      const controller = new AbortController();
      const aborted = engine.fetchBytes(`${origin}/held2`, { signal: controller.signal });
      await within(reached, 10_000, 'the second held request at the server');
      controller.abort();
      await expect(aborted).rejects.toMatchObject({ code: ErrorCodes.ABORTED });
      await within(
        (async () => {
          while (!closed.includes('/held2')) await new Promise((r) => setTimeout(r, 10));
        })(),
        10_000,
        "the worker's request closed",
      );
      expect((await engine.fetchBytes(`${origin}/ok`)).status).toBe(200);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('a full queue rejects with QUEUE_FULL', async () => {
    const ops = [engine.sort(bigKeys()), engine.sort(bigKeys()), engine.sort(bigKeys())];
    await expect(engine.scan(new Uint32Array(4))).rejects.toMatchObject({ code: ErrorCodes.QUEUE_FULL });
    await Promise.all(ops);
    expect(engine.pending).toBe(0);
  });

  it('memory grows while an op runs on a worker', async () => {
    const keys = bigKeys();
    // (the task is held running from the pool's side; its worker is, in practice, still sorting
    // 16 MiB when the memory grows)
    const held = holdNextTask(cpu.pool!);
    try {
      const running = engine.sort(keys);
      await held.started();
      const before = cpu.heap.buffer.byteLength;
      const big = engine.alloc('u8', before + (64 << 20)); // forces memory.grow
      expect(cpu.heap.buffer.byteLength).toBeGreaterThan(before);
      held.release();
      const sorted = await running;
      const expected = keys.slice().sort();
      expect(same(sorted, expected)).toBe(true);
      engine.free(big);
    } finally {
      held.release();
    }
  });
});

describe('sumLengths: the exact total of run lengths', () => {
  it('host arrays over several windows, resident arrays in place, values near 2^32, and no block free', async () => {
    const cpu = await CpuPath.create({ procedures: PROCEDURES, workers: 0 });
    try {
      const rng = new Rng(caseSeed('sumLengths'));
      const serial = (a: Uint32Array) => a.reduce((x, v) => x + v, 0);
      for (const n of [0, 1, 3, 4, 5, 1000, (1 << 18) - 1, 1 << 18, (1 << 18) + 7, 3 * (1 << 18) + 5]) {
        const a = new Uint32Array(n).map(() => (rng.nextU32() % 8 === 0 ? rng.nextU32() : rng.nextU32() % 64));
        expect(cpu.sumLengths(a), `n=${n}`).toBe(serial(a));
      }
      // past 2^32 and 2^40: exact as a number
      const big = new Uint32Array(600).fill(0xffffffff);
      expect(cpu.sumLengths(big)).toBe(600 * 0xffffffff);
      const resident = cpu.alloc('u32', 70_001) as Uint32Array;
      for (let i = 0; i < resident.length; i++) resident[i] = i % 97;
      expect(cpu.sumLengths(resident)).toBe(serial(resident));
      expect(cpu.sumLengths(resident.subarray(5, 60_000))).toBe(serial(resident.subarray(5, 60_000)));
      cpu.free(resident);
      // no block free: the loop on this thread, same total
      const heap = cpu['heap'];
      const tryAlloc = heap.tryAlloc;
      heap.tryAlloc = () => undefined;
      try {
        const a = new Uint32Array(5000).map(() => rng.nextU32());
        expect(cpu.sumLengths(a)).toBe(serial(a));
      } finally {
        heap.tryAlloc = tryAlloc;
      }
    } finally {
      await cpu.destroy();
    }
  });
});

describe('copies between host arrays and the shared memory (writeBytes, readBytes)', () => {
  it('every alignment of source and destination, below and above the aligned-copy size; nothing outside the room touched', async () => {
    const cpu = await CpuPath.create({ procedures: PROCEDURES, workers: 0 });
    try {
      expect(cpu.heap.buffer).toBeInstanceOf(SharedArrayBuffer);
      const rng = new Rng(caseSeed('writeBytes'));
      const block = cpu.heap.alloc(80_000);
      const guard = 0xa5;
      try {
        for (const n of [0, 5, 4095, 4096, 4101, 70_001]) {
          for (let src = 0; src < 8; src++) {
            for (let dst = 0; dst < 8; dst += 3) {
              const host = new Uint8Array(n + 16).map(() => rng.nextU32() & 0xff);
              const bytes = host.subarray(src, src + n);
              const heap = cpu.heap.bytes(block.ptr, 80_000);
              heap.fill(guard);
              const ptr = block.ptr + 8 + dst;
              cpu.writeBytes(ptr, bytes);
              const label = `n=${n} src+${src} dst+${dst}`;
              expect(Buffer.compare(cpu.heap.bytes(ptr, n), bytes), label).toBe(0);
              // before the destination and past its 7 bytes of room: untouched
              expect(
                heap.subarray(0, 8 + dst).every((b) => b === guard),
                label,
              ).toBe(true);
              expect(
                heap.subarray(8 + dst + n + 7).every((b) => b === guard),
                label,
              ).toBe(true);

              // and back out to a host array at every offset, from scratch bytes
              const out = new Uint8Array(n + 16).fill(guard);
              cpu.readBytes(ptr, n, out, src);
              expect(Buffer.compare(out.subarray(src, src + n), bytes), label).toBe(0);
              expect(out.subarray(0, src).every((b) => b === guard) && out.subarray(src + n).every((b) => b === guard), label).toBe(true);
            }
          }
        }
        // into a view of the kernels' memory (a resident target), and a fresh copy
        const n = 9999;
        const bytes = new Uint8Array(n).map(() => rng.nextU32() & 0xff);
        cpu.writeBytes(block.ptr + 3, bytes);
        const resident = cpu.alloc('u8', n + 8) as Uint8Array;
        try {
          cpu.readBytes(block.ptr + 3, n, resident, 5);
          expect(Buffer.compare(resident.subarray(5, 5 + n), bytes)).toBe(0);
        } finally {
          cpu.free(resident);
        }
        cpu.writeBytes(block.ptr + 1, bytes);
        const copy = cpu.copyOfBytes(block.ptr + 1, n);
        expect(copy.buffer).toBeInstanceOf(ArrayBuffer);
        expect(Buffer.compare(copy, bytes)).toBe(0);
      } finally {
        cpu.heap.release(block);
      }
    } finally {
      await cpu.destroy();
    }
  });
});

describe('without SharedArrayBuffer: segments are transferred', () => {
  it.each([1, 2, 3])('%i workers give the same results', async (workers) => {
    const transfer = await engineWith({ workers, shareMemory: false, segmentBytes: 4096, inlineBytes: 0 });
    try {
      const seed = caseSeed(`transfer ${workers}`);
      const rng = new Rng(seed);
      const input = new Uint8Array(30_001);
      fillRuns(rng, input, { kind: 'uniform', maxRun: 700 });
      const runs = await transfer.rleEncode(input);
      const expected = await single.rleEncode(input);
      expect(same(runs.values, expected.values), describeSeed(seed)).toBe(true);
      expect(same(runs.lengths, expected.lengths), describeSeed(seed)).toBe(true);
      expect(same(await transfer.rleDecode(runs), input)).toBe(true);
      const keys = new Float32Array(randomF32Bits(rng, 20_000, 0.1).buffer);
      expect(same(await transfer.sort(keys), await single.sort(keys))).toBe(true);
      const u = new Uint32Array(20_000).map(() => rng.nextU32());
      expect(same(await transfer.scan(u), await single.scan(u))).toBe(true);
      const packed = await transfer.compress(input, { chunkBytes: 2048 });
      expect(Buffer.compare(packed, await single.compress(input, { chunkBytes: 2048 }))).toBe(0);
      expect(same(await transfer.decompress(packed), input)).toBe(true);
      // alloc gives plain arrays when nothing is shared.
      expect(transfer.alloc('u8', 4).buffer).toBeInstanceOf(ArrayBuffer);
    } finally {
      await transfer.destroy();
    }
  });
});

describe('workers started from `node -e`', () => {
  it('do not run the parent script again (workers inherit execArgv, -e removed)', async () => {
    const { spawn } = await import('node:child_process');
    const index = new URL('../dist/node/index.js', import.meta.url).href;
    const code = `const { createEngine } = await import(${JSON.stringify(index)});
      const e = await createEngine({ workers: 2, gpu: 'off' });
      const runs = await e.rleEncode(new Uint8Array(8 << 20).fill(5));
      console.log('runs', runs.lengths.length);
      await e.destroy();`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', code], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const exit = await new Promise<number | null>((resolve) => {
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      child.on('exit', (c) => {
        clearTimeout(timer);
        resolve(c);
      });
    });
    expect(out.trim()).toBe('runs 1'); // printed once: the workers did not run the script
    expect(exit).toBe(0);
  }, 40_000);
});
