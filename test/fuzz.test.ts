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
 *
 * A second pass feeds a twentieth as many mutated containers to the streaming reader (the one the
 * CLI and the service use), cut into pieces at random points and without a `maxElements` limit,
 * and expects the in-memory reader's outcome on the same bytes, also without a limit: the same
 * error code, or the same elements.
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

describe(`version-3 fuzz through the streaming reader: ${Math.ceil(CASES / 20)} mutated containers in random pieces, no limit`, () => {
  /** The streaming reader's outcome for `bytes` written in pieces cut at random points: the elements' bytes or the error. */
  async function viaStream(rng: Rng, bytes: Uint8Array): Promise<Uint8Array | unknown> {
    const reader = engine.createDecompressor();
    const out: Uint8Array[] = [];
    try {
      for (let at = 0; at < bytes.length; ) {
        const end = Math.min(bytes.length, at + 1 + rng.intBetween(0, rng.nextFloat() < 0.5 ? 64 : 4096));
        for (const piece of await reader.write(bytes.subarray(at, end))) out.push(piece.slice());
        at = end;
      }
      for (const piece of await reader.end()) out.push(piece.slice());
      return Buffer.concat(out);
    } catch (e) {
      return e;
    }
  }

  it('every case ends as the in-memory reader ends', async () => {
    const seed = caseSeed('fuzz v3 streaming');
    const rng = new Rng(seed);
    const samples = await makeSamples(engine);
    const cases = Math.ceil(CASES / 20);
    const seen = new Map<string, number>();
    for (let i = 0; i < cases; i++) {
      const s = samples[i % samples.length];
      const { bytes, what } = mutate(rng, s);
      const context = `case ${i}, ${s.name}: ${what}, ${describeSeed(seed)}`;
      let whole: unknown;
      try {
        whole = bytesOf(await engine.decompress(bytes));
      } catch (e) {
        whole = e;
      }
      const streamed = await viaStream(rng, bytes);
      if (whole instanceof ParleError) {
        if (!(streamed instanceof ParleError)) expect.fail(`${context}: in memory ${whole.code}, streamed ${streamed instanceof Error ? streamed.stack : 'decoded'}`);
        if (streamed.code !== whole.code) expect.fail(`${context}: in memory ${whole.code} (${whole.message}), streamed ${streamed.code} (${streamed.message})`);
        seen.set(whole.code, (seen.get(whole.code) ?? 0) + 1);
      } else if (whole instanceof Uint8Array) {
        if (!(streamed instanceof Uint8Array)) expect.fail(`${context}: decoded in memory, streamed ${String(streamed)}`);
        if (Buffer.compare(Buffer.from(streamed), Buffer.from(whole)) !== 0) expect.fail(`${context}: streamed other elements`);
      } else {
        expect.fail(`${context}: in memory not a ParleError: ${whole instanceof Error ? whole.stack : String(whole)}`);
      }
    }
    for (const code of [ErrorCodes.CORRUPT, ErrorCodes.CHECKSUM_MISMATCH, ErrorCodes.TRUNCATED]) {
      expect(seen.get(code) ?? 0, `${code} never seen ${describeSeed(seed)}`).toBeGreaterThan(0);
    }
  }, 600_000);
});
