/**
 * Fuzzing the version-3 reader on the CPU path (issue #31, "Bad input"): 100,000 mutated
 * containers of every pipeline, several chunks each, mutated as stored (bit flips, random bytes,
 * cuts, inserted and deleted bytes) and as a liar would (entry fields, stream directories,
 * Huffman headers, segment offsets, LEB128 run lengths and quantize headers changed, then every
 * checksum recomputed, so only the structure checks stand between the lie and the decoder).
 * Every case must end in a ParleError with a code of the reader's table, or in exactly the
 * original elements (a mutation of bits nothing reads: padding; for the lossy sample, its
 * reconstruction); never another error, a crash or a hang. The engine's memory must not grow
 * past what the headers' element counts allow.
 * PARLE_FUZZ_CASES changes the count (CI runs the default); the seed is printed on failure.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine, type Engine } from '../ts/engine.js';
import { ErrorCodes, ParleError } from '../ts/errors.js';
import { bytesOf, type ParleArray } from '../ts/types.js';
import { FUZZ_FAILURES, makeSamples, mutate } from './support/fuzz.js';
import { Rng, caseSeed, describeSeed } from './support/random.js';

const CASES = Number(process.env.PARLE_FUZZ_CASES ?? 100_000);

let engine: Engine;
beforeAll(async () => {
  engine = await createEngine({ workers: 0, gpu: 'off', calibration: 'skip' });
});
afterAll(async () => {
  await engine?.destroy();
});

describe(`version-3 fuzz: ${CASES} mutated containers, a ParleError with a code or the exact data`, () => {
  it('every case', async () => {
    const seed = caseSeed('fuzz v3');
    const rng = new Rng(seed);
    const samples = await makeSamples(engine);
    const memory = (engine as unknown as { cpu: { heap: { buffer: ArrayBufferLike } } }).cpu.heap;
    const before = memory.buffer.byteLength;
    const seen = new Map<string, number>();
    let exact = 0;
    for (let i = 0; i < CASES; i++) {
      const s = samples[i % samples.length];
      const { bytes, what } = mutate(rng, s);
      const context = `case ${i}, ${s.name}: ${what}, ${describeSeed(seed)}`;
      let outcome: unknown;
      try {
        // the original's element count as the limit: a header that claims more is refused up front
        outcome = await engine.decompress(bytes, { maxElements: s.input.length });
      } catch (e) {
        outcome = e;
      }
      if (outcome instanceof ParleError) {
        if (!FUZZ_FAILURES.includes(outcome.code)) expect.fail(`${context}: ${outcome.code} ${outcome.message}`);
        seen.set(outcome.code, (seen.get(outcome.code) ?? 0) + 1);
      } else if (ArrayBuffer.isView(outcome)) {
        // the untouched container's element bytes (for the lossy sample its reconstruction: the
        // entries hash the decoded elements, so a mutation that decodes changed none of them;
        // the type is the header's, which a resealed lie may change between types of one width)
        const back = bytesOf(outcome as ParleArray);
        const original = bytesOf(s.decoded);
        if (Buffer.compare(Buffer.from(back), Buffer.from(original)) !== 0) {
          expect.fail(`${context}: decoded to other data`);
        }
        exact++;
      } else {
        expect.fail(`${context}: not a ParleError: ${outcome instanceof Error ? outcome.stack : String(outcome)}`);
      }
    }
    // every kind of failure shows up, and the memory did not grow for a lie
    for (const code of [ErrorCodes.CORRUPT, ErrorCodes.CHECKSUM_MISMATCH, ErrorCodes.TRUNCATED]) {
      expect(seen.get(code) ?? 0, `${code} never seen ${describeSeed(seed)}`).toBeGreaterThan(0);
    }
    expect(exact, 'most mutations are caught').toBeLessThan(CASES / 4);
    expect(memory.buffer.byteLength - before, 'the engine memory grew for a lying header').toBeLessThanOrEqual(64 << 20);
  }, 600_000);
});
