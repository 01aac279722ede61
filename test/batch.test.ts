/**
 * Chunks as the unit of parallel work (ts/codec/cpu/batch.ts): inputs of 256 KiB or more spread
 * over every worker, which take chunks from one job table, the input copied in while they start.
 * The same bytes as the calling thread makes, in memory and streaming, at every level; a corrupt
 * chunk anywhere fails the call with its code and leaves the pool working.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine, type Engine } from '../ts/engine.js';
import { ErrorCodes, ParleError } from '../ts/errors.js';
import { ENTRY_BYTES, HEADER_BYTES } from '../ts/format/layout.js';
import { bytesOf, type ParleArray } from '../ts/types.js';
import type { WorkerPool } from '../ts/cpu/pool.js';
import { holdNextTask } from './support/pool.js';
import { Rng, caseSeed, describeSeed, fillRuns } from './support/random.js';

let workers: Engine;
let inline: Engine;
beforeAll(async () => {
  workers = await createEngine({ workers: 2, gpu: 'off', calibration: 'skip' });
  inline = await createEngine({ workers: 0, gpu: 'off', calibration: 'skip' });
});
afterAll(async () => {
  await workers?.destroy();
  await inline?.destroy();
});

const same = (a: Uint8Array, b: Uint8Array) => a.length === b.length && Buffer.compare(Buffer.from(a), Buffer.from(b)) === 0;

/** A mix a chunk at a time: runs, noise, smooth values, so that chunks take different pipelines and times. */
function mixed(n: number, seed: number): Uint16Array {
  const rng = new Rng(seed);
  const out = new Uint16Array(n);
  const chunk = 65536; // 128 KiB of u16: two kinds in a 256 KiB chunk
  for (let at = 0; at < n; at += chunk) {
    const part = out.subarray(at, Math.min(n, at + chunk));
    const kind = (at / chunk) % 3;
    if (kind === 0) fillRuns(rng, part, { kind: 'uniform', maxRun: 30 });
    else if (kind === 1) for (let i = 0; i < part.length; i++) part[i] = rng.nextU32() & 0xffff;
    else for (let i = 0; i < part.length; i++) part[i] = 1000 + Math.round(300 * Math.sin((at + i) / 500));
  }
  return out;
}

async function decodeStreaming(engine: Engine, packed: Uint8Array, piece: number): Promise<Uint8Array> {
  const reader = engine.createDecompressor();
  const parts: Uint8Array[] = [];
  for (let at = 0; at < packed.length; at += piece) parts.push(...(await reader.write(packed.subarray(at, at + piece))));
  parts.push(...(await reader.end()));
  return Buffer.concat(parts);
}

describe('chunks spread over the workers', () => {
  it('every level and a fixed pipeline: the same container as the calling thread, decoded by either', async () => {
    const seed = caseSeed('batch levels');
    const input = mixed(1_500_001, seed); // 3 MB: 12 chunks, the last one short
    for (const options of [{}, { level: 1 }, { level: 9 }, { codec: 'delta+shuffle+huffman' }, { codec: 'stored' }]) {
      const context = `${JSON.stringify(options)} ${describeSeed(seed)}`;
      const a = await workers.compress(input, options);
      const b = await inline.compress(input, options);
      expect(same(a, b), `${context}: workers and the calling thread write the same bytes`).toBe(true);
      expect(same(bytesOf(await workers.decompress(a)), bytesOf(input)), context).toBe(true);
      expect(same(bytesOf(await inline.decompress(a)), bytesOf(input)), context).toBe(true);
    }
  });

  it('a resident input and result are read and written in place', async () => {
    const input = mixed(700_000, caseSeed('batch resident'));
    const resident = workers.alloc('u16', input.length) as Uint16Array;
    resident.set(input);
    const packed = await workers.compress(resident);
    expect(same(packed, await inline.compress(input))).toBe(true);
    const out = workers.alloc('u16', input.length) as Uint16Array;
    out.fill(0xdead);
    await workers.decompress(packed, { out });
    expect(same(bytesOf(out), bytesOf(input))).toBe(true);
    workers.free(resident);
    workers.free(out);
  });

  it('streaming: the writer and the reader code batches on the workers, in any piece size', async () => {
    const input = mixed(2_300_000, caseSeed('batch streaming'));
    const bytes = bytesOf(input);
    const expected = await inline.compress(input);
    for (const piece of [4093, 65_537, 1 << 20, bytes.length]) {
      const writer = workers.createCompressor('u16', input.length);
      const parts: Uint8Array[] = [];
      for (let at = 0; at < bytes.length; at += piece) parts.push(...(await writer.write(bytes.subarray(at, at + piece))));
      parts.push(...(await writer.end()));
      const streamed = Buffer.concat(parts);
      expect(same(streamed, expected), `writer, pieces of ${piece}`).toBe(true);
      expect(writer.reports.map((r) => r.index)).toEqual(writer.reports.map((_, i) => i));
      expect(same(await decodeStreaming(workers, streamed, piece), bytes), `reader, pieces of ${piece}`).toBe(true);
    }
  });

  it('a corrupt chunk in the middle fails the call with its code; the pool keeps working', async () => {
    const input = mixed(1_000_000, caseSeed('batch corrupt'));
    const packed = await workers.compress(input, { codec: 'shuffle+huffman' });
    // the payload of chunk 5 of 8: walk the entries
    const view = new DataView(packed.buffer, packed.byteOffset);
    let at = HEADER_BYTES;
    for (let i = 0; i < 5; i++) at += ENTRY_BYTES + view.getUint32(at + 12, true);
    const bad = packed.slice();
    bad[at + ENTRY_BYTES + 40] ^= 0x20;
    const error = await workers.decompress(bad).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ParleError);
    expect((error as ParleError).code).toBe(ErrorCodes.CHECKSUM_MISMATCH);
    expect((error as ParleError).message).toContain('chunk 5');
    expect(same(bytesOf(await workers.decompress(packed)), bytesOf(input))).toBe(true);
  });

  it('an abort while the workers run fails with ABORTED and leaves the engine usable', async () => {
    const input = mixed(3_000_000, caseSeed('batch abort'));
    // the call's first task on a worker is held running until released (test/support/pool.ts):
    // the abort lands while it runs, however fast the worker, never after the call is done
    const pool = (workers as unknown as { cpu: { pool: WorkerPool } }).cpu.pool;
    const held = holdNextTask(pool);
    try {
      const controller = new AbortController();
      const call = workers.compress(input, { signal: controller.signal, level: 9 });
      await held.started();
      controller.abort();
      await expect(call).rejects.toMatchObject({ code: ErrorCodes.ABORTED });
    } finally {
      held.release();
    }
    const again = await workers.compress(input.subarray(0, 300_000));
    expect(same(bytesOf((await workers.decompress(again)) as ParleArray), bytesOf(input.subarray(0, 300_000)))).toBe(true);
  });
});
