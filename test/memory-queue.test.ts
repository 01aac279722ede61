// The memory-aware queue (issue 13): operations that do not fit in the CPU path's memory now
// wait, first in first out, until earlier ones release it; TOO_LARGE only when one can never fit.
import { describe, expect, it } from 'vitest';
import { createEngine } from '../ts/engine.js';
import { ErrorCodes, ParleError } from '../ts/errors.js';
import { bytesOf } from '../ts/types.js';
import { Rng, caseSeed, fillRuns } from './support/random.js';

const MiB = 1 << 20;

function input(seed: number, bytes = 4 * MiB): Uint8Array {
  const a = new Uint8Array(bytes);
  fillRuns(new Rng(seed), a, { kind: 'uniform', maxRun: 8 });
  return a;
}

async function errorOf(promise: Promise<unknown>): Promise<ParleError> {
  const e = await promise.then(
    () => 'resolved',
    (error: unknown) => error,
  );
  if (!(e instanceof ParleError)) throw new Error(`expected a ParleError, got ${String(e)}`);
  return e;
}

describe('memory-aware queue', () => {
  it('16 concurrent compress calls, each about 12 MiB (input, payloads, two workers\' arenas), in 96 MiB: all succeed', async () => {
    const engine = await createEngine({ workers: 2, gpu: 'off', calibration: 'skip', maxMemoryBytes: 96 * MiB, inlineBytes: 0 });
    try {
      const inputs = Array.from({ length: 16 }, (_, i) => input(caseSeed(`queue ${i}`)));
      const packed = await Promise.all(inputs.map((a) => engine.compress(a)));
      const back = await Promise.all(packed.map((p) => engine.decompress(p)));
      back.forEach((b, i) => expect(Buffer.compare(bytesOf(b), inputs[i]), `call ${i}`).toBe(0));
    } finally {
      await engine.destroy();
    }
  });

  it('an operation that can never fit rejects at once with TOO_LARGE and its size', async () => {
    const engine = await createEngine({ workers: 1, gpu: 'off', calibration: 'skip', maxMemoryBytes: 16 * MiB });
    try {
      // 12 MiB of input and 12 MiB of room for its payloads: never in 16 MiB
      const e = await errorOf(engine.compress(input(1, 12 * MiB)));
      expect(e.code).toBe(ErrorCodes.TOO_LARGE);
      expect(e.message).toMatch(/needs \d+(\.\d)? MiB .* at once/);
    } finally {
      await engine.destroy();
    }
  });

  it('arrays left in the engine memory are named, with engine.free; freeing them lets work through', async () => {
    const engine = await createEngine({ workers: 1, gpu: 'off', calibration: 'skip', maxMemoryBytes: 64 * MiB });
    try {
      const held = engine.alloc('u8', 40 * MiB);
      // 16 MiB of input and 16 of payload room: more than the 24 MiB the held array leaves
      const e = await errorOf(engine.compress(input(2, 16 * MiB)));
      expect(e.code).toBe(ErrorCodes.TOO_LARGE);
      expect(e.message).toMatch(/engine\.free/);
      engine.free(held);
      const a = input(2, 16 * MiB);
      expect(Buffer.compare(bytesOf(await engine.decompress(await engine.compress(a))), a)).toBe(0);
    } finally {
      await engine.destroy();
    }
  });

  it('a waiting operation can be aborted', async () => {
    const engine = await createEngine({ workers: 1, gpu: 'off', calibration: 'skip', maxMemoryBytes: 64 * MiB, inlineBytes: 0 });
    try {
      const running = engine.compress(input(3));
      const controller = new AbortController();
      const waiting = engine.compress(input(4), { signal: controller.signal });
      controller.abort();
      expect((await errorOf(waiting)).code).toBe(ErrorCodes.ABORTED);
      await running;
    } finally {
      await engine.destroy();
    }
  });
});
