/**
 * The host side of the Huffman stage (ts/codec/huffman.ts): code lengths from a histogram and
 * the encoder's canonical code table, against the package-merge and canonical-code references
 * in test/support/codec-reference.ts.
 */
import { describe, expect, it } from 'vitest';
import { MAX_CODE_BITS, canonicalCodeTable, codeLengths, codedBits } from '../ts/codec/huffman.js';
import * as ref from './support/codec-reference.js';
import { Rng, caseSeed, describeSeed } from './support/random.js';

/** The Kraft sum of `lengths` x 2^11 (2048: a complete code). */
function kraft(lengths: Uint8Array): number {
  let sum = 0;
  for (const l of lengths) if (l > 0) sum += 2 ** (MAX_CODE_BITS - l);
  return sum;
}

/** A histogram of `present` symbols at random places, counts drawn by `count`. */
function histogram(rng: Rng, present: number, count: () => number): number[] {
  const hist = new Array<number>(256).fill(0);
  const symbols = Array.from({ length: 256 }, (_, s) => s);
  for (let i = 0; i < present; i++) {
    const k = i + (rng.nextU32() % (256 - i));
    [symbols[i], symbols[k]] = [symbols[k], symbols[i]];
    hist[symbols[i]] = count();
  }
  return hist;
}

describe('codeLengths', () => {
  it('gives a complete code within 11 bits, as short as the optimum where the optimum fits in 11 bits', () => {
    const seed = caseSeed('huffman codeLengths');
    const rng = new Rng(seed);
    // counts of every scale: the sort keys of counts from 2^22 on take another path
    const scales: [string, () => number][] = [
      ['small counts', () => rng.intBetween(1, 100)],
      ['counts to 2^20', () => rng.intBetween(1, 2 ** 20)],
      ['mixed, some from 2^22', () => (rng.nextFloat() < 0.1 ? rng.intBetween(2 ** 22, 2 ** 32 - 1) : rng.intBetween(1, 5000))],
      ['all from 2^22', () => rng.intBetween(2 ** 22, 2 ** 32 - 1)],
      ['one value dominant', () => (rng.nextFloat() < 0.02 ? 4_000_000 : rng.intBetween(1, 3))],
    ];
    for (const [name, count] of scales) {
      for (let round = 0; round < 40; round++) {
        const present = 2 + (rng.nextU32() % 255);
        const hist = histogram(rng, present, count);
        const context = `${name}, ${present} symbols, round ${round} ${describeSeed(seed)}`;
        const lengths = codeLengths(hist);
        expect(kraft(lengths), context).toBe(2048);
        for (let s = 0; s < 256; s++) {
          expect(lengths[s] > 0, `${context}: symbol ${s}`).toBe(hist[s] > 0);
          expect(lengths[s], context).toBeLessThanOrEqual(MAX_CODE_BITS);
        }
        // package-merge without a binding limit is an optimal code: where its longest code fits
        // in 11 bits, the two-queue code is optimal too, so it codes the histogram in as many bits
        const optimum = ref.huffmanCodeLengths(hist, 40);
        const limited = ref.huffmanCodeLengths(hist, MAX_CODE_BITS);
        if (Math.max(...optimum) <= MAX_CODE_BITS) expect(codedBits(hist, lengths), context).toBe(codedBits(hist, optimum));
        else expect(codedBits(hist, lengths), context).toBeGreaterThanOrEqual(codedBits(hist, limited));
      }
    }
  });

  it('reads a shorter array as zeros past its end, at counts past 2^32 too', () => {
    const counts = Array.from({ length: 40 }, (_, v) => 2 ** (40 - v));
    const lengths = codeLengths(counts);
    const padded = codeLengths([...counts, ...new Array<number>(216).fill(0)]);
    expect(Array.from(lengths)).toEqual(Array.from(padded));
    expect(Array.from(lengths.subarray(0, 8))).toEqual([1, 2, 3, 4, 5, 7, 8, 9]);
    expect(lengths.subarray(40).every((l) => l === 0)).toBe(true);
    expect(kraft(lengths)).toBe(2048);
  });

  it('takes equal counts in symbol order, below and from 2^22', () => {
    for (const count of [3, 2 ** 22, 2 ** 30 + 7]) {
      // leaves by (count, symbol): 5 (count 1), 10, 77, 150, 200; the lightest two, 5 and 10,
      // are merged first and get 3 bits, the other three 2 bits (a sort that broke the tie
      // another way would give 3 bits to another of the four)
      const hist = new Array<number>(256).fill(0);
      for (const s of [200, 10, 77, 150]) hist[s] = count;
      hist[5] = 1;
      const lengths = codeLengths(hist);
      expect([lengths[5], lengths[10], lengths[77], lengths[150], lengths[200]], `count ${count}`).toEqual([3, 3, 2, 2, 2]);
    }
  });
});

describe('canonicalCodeTable', () => {
  it("equals the reference's canonical codes, bit-reversed, with their lengths in bits 16..31", () => {
    const seed = caseSeed('huffman canonicalCodeTable');
    const rng = new Rng(seed);
    for (let round = 0; round < 100; round++) {
      const present = 2 + (rng.nextU32() % 255);
      const hist = histogram(rng, present, () => (rng.nextFloat() < 0.3 ? rng.intBetween(1, 10) : rng.intBetween(1, 100_000)));
      const lengths = codeLengths(hist);
      const canonical = ref.canonicalCodes(lengths);
      const expected = Array.from(lengths, (l, s) => (l === 0 ? 0 : ref.reverseBits(canonical[s], l) | (l << 16)));
      expect(Array.from(canonicalCodeTable(lengths)), `round ${round} ${describeSeed(seed)}`).toEqual(expected);
    }
  });
});
