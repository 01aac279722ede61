/**
 * Self-test of the version-2 codec reference (test/support/codec-reference.ts): XXH32 against
 * xxhash-wasm, the tree hash against a hand-composed tree, round trips of every stage and of
 * every pipeline, the code-length builder's optimality and limit, and the Huffman decoder's
 * rejection of each corruption the spec lists. Seeded; the seed is in every failure message.
 */
import xxhash from 'xxhash-wasm';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  STAGE,
  canonicalCodes,
  decodePayload,
  deltaDecode,
  deltaEncode,
  encodePayload,
  huffmanCodeLengths,
  huffmanDecodeStream,
  huffmanEncodeStream,
  rleExpand,
  rleStreams,
  shuffle,
  streamCount,
  treeHash,
  unshuffle,
  xxh32,
} from './support/codec-reference.js';
import { Rng, caseSeed, describeSeed } from './support/random.js';
import { le32, randomBytes, skewedBytes } from './support/bytes.js';

type Width = 1 | 2 | 4;
const WIDTHS: readonly Width[] = [1, 2, 4];

let h32Raw: (bytes: Uint8Array, seed?: number) => number;
beforeAll(async () => {
  const api = await xxhash();
  h32Raw = (bytes, seed = 0) => api.h32Raw(bytes, seed) >>> 0;
});

/** `count` elements of `width` bytes in runs of 1..maxRun equal elements. */
function runElements(rng: Rng, count: number, width: Width, maxRun: number): Uint8Array {
  const out = new Uint8Array(count * width);
  let i = 0;
  while (i < count) {
    const len = rng.intBetween(1, maxRun);
    const value = randomBytes(rng, width);
    for (let k = 0; k < len && i < count; k++, i++) out.set(value, i * width);
  }
  return out;
}

describe('xxh32', () => {
  it('matches xxhash-wasm on both sides of every stripe and block size', () => {
    const seed = caseSeed('xxh32');
    const rng = new Rng(seed);
    for (const n of [0, 1, 3, 4, 15, 16, 17, 31, 32, 33, 100, 4095, 4096, 4097, 10000]) {
      const bytes = randomBytes(rng, n);
      for (const hashSeed of [0, 1, 0x9e3779b1, rng.nextU32()]) {
        expect(xxh32(bytes, hashSeed), `n=${n} hashSeed=${hashSeed} ${describeSeed(seed)}`).toBe(h32Raw(bytes, hashSeed));
      }
    }
  });

  it('hashes no bytes to 0x02CC5D05', () => {
    expect(xxh32(new Uint8Array(0))).toBe(0x02cc5d05);
  });
});

describe('treeHash', () => {
  it('is XXH32 itself up to 4096 bytes', () => {
    const rng = new Rng(caseSeed('treeHash small'));
    expect(treeHash(new Uint8Array(0))).toBe(0x02cc5d05);
    const block = randomBytes(rng, 4096);
    expect(treeHash(block)).toBe(h32Raw(block));
  });

  it('hashes 4097 bytes as two leaves', () => {
    const rng = new Rng(caseSeed('treeHash 4097'));
    const bytes = randomBytes(rng, 4097);
    const expected = h32Raw(le32([h32Raw(bytes.subarray(0, 4096)), h32Raw(bytes.subarray(4096))]));
    expect(treeHash(bytes)).toBe(expected);
  });

  it('hashes 3 x 4096 x 1024 + 5 bytes in three levels', () => {
    const rng = new Rng(caseSeed('treeHash large'));
    const n = 3 * 4096 * 1024 + 5;
    const bytes = randomBytes(rng, n);
    const leaves: number[] = [];
    for (let at = 0; at < n; at += 4096) leaves.push(h32Raw(bytes.subarray(at, Math.min(n, at + 4096))));
    expect(leaves.length).toBe(3073);
    const level1 = le32(leaves); // 12292 bytes: 4 blocks
    const level2: number[] = [];
    for (let at = 0; at < level1.length; at += 4096) level2.push(h32Raw(level1.subarray(at, Math.min(level1.length, at + 4096))));
    expect(level2.length).toBe(4);
    expect(treeHash(bytes)).toBe(h32Raw(le32(level2)));
  });
});

describe('stages', () => {
  it('delta: worked example and round trips', () => {
    expect([...deltaEncode(Uint8Array.of(5, 7, 6), 1)]).toEqual([5, 2, 255]);
    expect([...deltaEncode(Uint8Array.of(0xff, 0xff, 0x00, 0x00), 2)]).toEqual([0xff, 0xff, 0x01, 0x00]);
    expect([...deltaEncode(le32([1, 0]), 4)]).toEqual([1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff]);
    const rng = new Rng(caseSeed('delta'));
    for (const width of WIDTHS) {
      for (const count of [0, 1, 2, 1000]) {
        const bytes = randomBytes(rng, count * width);
        expect(deltaDecode(deltaEncode(bytes, width), width)).toEqual(bytes);
      }
    }
  });

  it('shuffle: worked example and round trips', () => {
    expect(shuffle(Uint8Array.of(1, 2, 3, 4), 2).map((p) => [...p])).toEqual([
      [1, 3],
      [2, 4],
    ]);
    const rng = new Rng(caseSeed('shuffle'));
    for (const width of [2, 4] as const) {
      for (const count of [0, 1, 2, 1000]) {
        const bytes = randomBytes(rng, count * width);
        const planes = shuffle(bytes, width);
        expect(planes.length).toBe(width);
        expect(unshuffle(planes, width)).toEqual(bytes);
      }
    }
  });

  it('rle: worked example, long runs and round trips', () => {
    const { values, lengths } = rleStreams(Uint8Array.of(0, 2, 2, 9, 5, 5, 5, 8), 1);
    expect([...values]).toEqual([0, 2, 9, 5, 8]);
    expect([...lengths]).toEqual([0, 1, 0, 2, 0]);
    const long = rleStreams(new Uint8Array(300).fill(7), 1);
    expect([...long.lengths]).toEqual([(299 % 128) | 128, 2]);
    const rng = new Rng(caseSeed('rle'));
    for (const width of WIDTHS) {
      for (const count of [0, 1, 2, 1000]) {
        const bytes = runElements(rng, count, width, 200);
        const streams = rleStreams(bytes, width);
        expect(rleExpand(streams.values, streams.lengths, width, count)).toEqual(bytes);
      }
    }
  });

  it('rle: rejects bad LEB128, wrong count and wrong sum', () => {
    expect(() => rleExpand(Uint8Array.of(1, 2), Uint8Array.of(0x80), 1, 2)).toThrow(/corrupt/); // unterminated
    expect(() => rleExpand(Uint8Array.of(1), Uint8Array.of(0xff, 0xff, 0xff, 0xff, 0x7f), 1, 1)).toThrow(/corrupt/); // over u32
    expect(() => rleExpand(Uint8Array.of(1, 2), Uint8Array.of(0), 1, 1)).toThrow(/corrupt/); // 1 length, 2 values
    expect(() => rleExpand(Uint8Array.of(1), Uint8Array.of(0, 0), 1, 2)).toThrow(/corrupt/); // 2 lengths, 1 value
    expect(() => rleExpand(Uint8Array.of(1, 2), Uint8Array.of(0, 1), 1, 2)).toThrow(/corrupt/); // sums to 3
    expect(() => rleExpand(Uint8Array.of(1, 2, 3), Uint8Array.of(0), 2, 1)).toThrow(/corrupt/); // not whole elements
  });
});

/** Sum of 2^-length over present symbols, times 2^maxLength. */
function kraftUnits(lengths: Uint8Array, maxLength: number): number {
  let sum = 0;
  for (const l of lengths) if (l > 0) sum += 2 ** (maxLength - l);
  return sum;
}

function cost(histogram: ArrayLike<number>, lengths: Uint8Array): number {
  let bits = 0;
  for (let s = 0; s < histogram.length; s++) bits += histogram[s] * lengths[s];
  return bits;
}

/** Cost in bits of an unlimited Huffman code: the sum of all merged weights. */
function unlimitedHuffmanCost(histogram: ArrayLike<number>): { bits: number; depth: number } {
  let nodes: { weight: number; depth: number }[] = [];
  for (let s = 0; s < histogram.length; s++) if (histogram[s] > 0) nodes.push({ weight: histogram[s], depth: 0 });
  let bits = 0;
  while (nodes.length > 1) {
    nodes.sort((a, b) => a.weight - b.weight);
    const [a, b] = nodes;
    bits += a.weight + b.weight;
    nodes = [{ weight: a.weight + b.weight, depth: Math.max(a.depth, b.depth) + 1 }, ...nodes.slice(2)];
  }
  return { bits, depth: nodes[0].depth };
}

describe('huffmanCodeLengths and canonicalCodes', () => {
  it('worked examples', () => {
    const lengths = huffmanCodeLengths([1, 1, 2, 4]);
    expect([...lengths.subarray(0, 4)]).toEqual([3, 3, 2, 1]);
    expect([...canonicalCodes(Uint8Array.of(2, 1, 3, 3)).subarray(0, 4)]).toEqual([2, 0, 6, 7]);
    // Gaps between lengths: lengths 1, 3, 3, 3, 4, 4 -> 0, 100, 101, 110, 1110, 1111.
    expect([...canonicalCodes(Uint8Array.of(1, 3, 3, 3, 4, 4)).subarray(0, 6)]).toEqual([0, 4, 5, 6, 14, 15]);
  });

  it('needs two present symbols', () => {
    expect(() => huffmanCodeLengths([5])).toThrow();
    expect(() => huffmanCodeLengths(new Array(256).fill(0))).toThrow();
  });

  it('limits a Fibonacci histogram to 11 bits with a complete code', () => {
    const fib = [1, 1];
    while (fib.length < 30) fib.push(fib[fib.length - 1] + fib[fib.length - 2]);
    expect(unlimitedHuffmanCost(fib).depth).toBeGreaterThan(11);
    const lengths = huffmanCodeLengths(fib);
    expect(Math.max(...lengths)).toBe(11);
    expect(kraftUnits(lengths, 11)).toBe(2048);
    for (const limit of [5, 8]) {
      const limited = huffmanCodeLengths(fib, limit);
      expect(Math.max(...limited)).toBeLessThanOrEqual(limit);
      expect(kraftUnits(limited, limit)).toBe(2 ** limit);
    }
  });

  it('is optimal (as unlimited Huffman) when the code fits, and complete', () => {
    const seed = caseSeed('huffman lengths');
    const rng = new Rng(seed);
    for (let trial = 0; trial < 200; trial++) {
      const symbols = rng.intBetween(2, 256);
      const histogram = new Array<number>(256).fill(0);
      for (let s = 0; s < symbols; s++)
        histogram[rng.intBetween(0, 255)] += trial % 2 ? rng.intBetween(1, 1000) : rng.intBetween(1, 2 ** rng.intBetween(0, 12));
      const present = histogram.filter((c) => c > 0).length;
      if (present < 2) continue;
      const lengths = huffmanCodeLengths(histogram);
      const message = `trial ${trial} ${describeSeed(seed)}`;
      expect(kraftUnits(lengths, 11), message).toBe(2048);
      for (let s = 0; s < 256; s++) expect(lengths[s] > 0, message).toBe(histogram[s] > 0);
      const unlimited = unlimitedHuffmanCost(histogram);
      if (unlimited.depth <= 11) expect(cost(histogram, lengths), message).toBe(unlimited.bits);
      else expect(cost(histogram, lengths), message).toBeGreaterThanOrEqual(unlimited.bits);
    }
  });

  it('canonical codes are prefix-free and ordered', () => {
    const lengths = huffmanCodeLengths(Array.from({ length: 256 }, (_, s) => 1 + ((s * 37) % 101)));
    const codes = canonicalCodes(lengths);
    const strings = [...lengths.keys()].filter((s) => lengths[s] > 0).map((s) => codes[s].toString(2).padStart(lengths[s], '0'));
    for (const a of strings) for (const b of strings) if (a !== b) expect(b.startsWith(a)).toBe(false);
  });
});

describe('Huffman streams', () => {
  const rng = new Rng(caseSeed('huffman streams'));
  const seedNote = describeSeed(caseSeed('huffman streams'));

  function roundTrip(bytes: Uint8Array, segmentLog2?: number): Uint8Array {
    const stream = huffmanEncodeStream(bytes, segmentLog2);
    expect(huffmanDecodeStream(stream, bytes.length), `n=${bytes.length} ${seedNote}`).toEqual(bytes);
    return stream;
  }

  it('picks mode 0 when empty, 1 for one symbol, 2 otherwise', () => {
    expect([...roundTrip(new Uint8Array(0))]).toEqual([0]);
    expect([...roundTrip(Uint8Array.of(9))]).toEqual([1, 9]);
    expect([...roundTrip(new Uint8Array(100000).fill(3))]).toEqual([1, 3]);
    expect(roundTrip(Uint8Array.of(1, 2))[0]).toBe(2);
  });

  it('lays out a small mode-2 stream byte for byte', () => {
    // Symbols 0 (x1), 1 (x1), 2 (x2): lengths 2, 2, 1; codes 0 -> 10, 1 -> 11, 2 -> 0.
    // Header 2, g=14, m=2, nibbles 0x22 0x01, one end offset (1). Bits from bit 0 up, each code
    // first bit first: 2 -> 0, 0 -> 1 0, 1 -> 1 1, 2 -> 0 = bits [0,1,0,1,1,0] = 0b011010 = 0x1a.
    const stream = huffmanEncodeStream(Uint8Array.of(2, 0, 1, 2));
    expect([...stream]).toEqual([2, 14, 2, 0x22, 0x01, 1, 0, 0, 0, 0x1a]);
  });

  it('round trips random skewed data, all 256 symbols and 2 symbols at every size', () => {
    for (const n of [0, 1, 2, 3, 2 ** 14 - 1, 2 ** 14, 2 ** 14 + 1, 3 * 2 ** 14 + 77]) {
      roundTrip(skewedBytes(rng, n));
      roundTrip(randomBytes(rng, n));
      const two = new Uint8Array(n);
      for (let i = 0; i < n; i++) two[i] = rng.nextU32() & 1 ? 200 : 17;
      roundTrip(two);
    }
    const all = new Uint8Array(5000);
    for (let i = 0; i < all.length; i++) all[i] = i % 256;
    expect(roundTrip(all)[2]).toBe(255);
    const fibBytes: number[] = [];
    let a = 1;
    let b = 1;
    for (let s = 0; s < 20; s++, [a, b] = [b, a + b]) for (let k = 0; k < a; k++) fibBytes.push(s);
    const fibStream = roundTrip(Uint8Array.from(fibBytes));
    expect(fibStream[0]).toBe(2);
  });

  it('round trips many segments at every segment size', () => {
    for (const g of [10, 11, 14, 20]) {
      const bytes = skewedBytes(rng, (g < 20 ? 5 : 1) * 2 ** g + 3, 40);
      const stream = roundTrip(bytes, g);
      expect(stream[1]).toBe(g);
    }
  });

  describe('rejects', () => {
    const bytes = skewedBytes(new Rng(caseSeed('huffman reject')), 3 * 2 ** 10 + 5, 30);
    const stream = huffmanEncodeStream(bytes, 10); // K = 4 segments
    const m = stream[2];
    const offsetsAt = 3 + Math.ceil((m + 1) / 2);
    const bitsAt = offsetsAt + 16;
    const withChange = (change: (s: Uint8Array) => void): Uint8Array => {
      const copy = stream.slice();
      change(copy);
      return copy;
    };
    const decode =
      (s: Uint8Array, n = bytes.length) =>
      () =>
        huffmanDecodeStream(s, n);

    it('the unchanged stream', () => {
      expect(huffmanDecodeStream(stream, bytes.length)).toEqual(bytes);
    });
    it('an unknown mode', () => {
      expect(decode(withChange((s) => (s[0] = 3)))).toThrow(/^corrupt: /);
    });
    it('a truncated stream, at every length', () => {
      for (let len = 0; len < stream.length; len++) expect(decode(stream.subarray(0, len)), `len=${len}`).toThrow(/^corrupt: /);
    });
    it('bit-flipped lengths that leave the code incomplete or over-full', () => {
      for (let byte = 3; byte < offsetsAt; byte++) {
        for (let bit = 0; bit < 8; bit++) {
          const flipped = withChange((s) => (s[byte] ^= 1 << bit));
          if (isUnusedNibble(byte, bit, m)) continue;
          // Changing one length always changes the Kraft sum (or exceeds 11 bits).
          expect(decode(flipped), `byte ${byte} bit ${bit}`).toThrow(/^corrupt: /);
        }
      }
    });
    it('fewer than two symbols', () => {
      expect(decode(Uint8Array.of(2, 10, 0, 0x01, 0, 0, 0, 0), 0)).toThrow(/^corrupt: /);
    });
    it('decreasing offsets', () => {
      const bad = withChange((s) => {
        const view = new DataView(s.buffer);
        view.setUint32(offsetsAt + 4, view.getUint32(offsetsAt, true) - 1, true);
      });
      expect(decode(bad)).toThrow(/^corrupt: /);
    });
    it('a last offset that is not the bitstreams length', () => {
      const bad = withChange((s) => new DataView(s.buffer).setUint32(offsetsAt + 12, stream.length - bitsAt - 1, true));
      expect(decode(bad)).toThrow(/^corrupt: /);
      const extra = new Uint8Array(stream.length + 1);
      extra.set(stream);
      expect(decode(extra)).toThrow(/^corrupt: /);
    });
    it('a segment that needs bits past its end', () => {
      const view = new DataView(stream.buffer, stream.byteOffset);
      const end0 = view.getUint32(offsetsAt, true);
      const bad = withChange((s) => new DataView(s.buffer).setUint32(offsetsAt, end0 - 1, true));
      expect(decode(bad)).toThrow(/^corrupt: /);
    });
    it('g out of range', () => {
      for (const g of [0, 9, 21, 255]) expect(decode(withChange((s) => (s[1] = g)))).toThrow(/^corrupt: /);
    });
    it('a raw or one-symbol stream of the wrong length', () => {
      expect(decode(Uint8Array.of(0, 1, 2), 3)).toThrow(/^corrupt: /);
      expect(decode(Uint8Array.of(1), 3)).toThrow(/^corrupt: /);
      expect(decode(Uint8Array.of(1, 5, 5), 3)).toThrow(/^corrupt: /);
    });
  });
});

/** The unused high nibble of the last table byte when m is even: not checked by the reference. */
function isUnusedNibble(byte: number, bit: number, m: number): boolean {
  return m % 2 === 0 && byte === 3 + (m >> 1) && bit >= 4;
}

/** Every valid pipeline: subsequences of [1, 2, 3, 4], shuffle only for width > 1. */
function pipelines(width: Width): number[][] {
  const all: number[][] = [];
  for (let mask = 0; mask < 16; mask++) {
    const stages = [STAGE.delta, STAGE.shuffle, STAGE.rle, STAGE.huffman].filter((_, i) => mask & (1 << i));
    if (width === 1 && stages.includes(STAGE.shuffle)) continue;
    all.push(stages);
  }
  return all;
}

describe('payloads', () => {
  it('round trip every pipeline at every width on runs and on noise', () => {
    const seed = caseSeed('payloads');
    const rng = new Rng(seed);
    for (const width of WIDTHS) {
      for (const count of [1, 2, 1000, 20000]) {
        const inputs = { runs: runElements(rng, count, width, 50), noise: randomBytes(rng, count * width) };
        for (const [name, elements] of Object.entries(inputs)) {
          for (const stages of pipelines(width)) {
            const message = `width ${width} count ${count} ${name} stages [${stages}] ${describeSeed(seed)}`;
            const payload = encodePayload(stages, elements, width);
            const streams = streamCount(stages, width);
            const view = new DataView(payload.buffer, payload.byteOffset);
            let encoded = 0;
            for (let j = 0; j < streams; j++) encoded += view.getUint32(8 * j + 4, true);
            expect(8 * streams + encoded, message).toBe(payload.length);
            expect(decodePayload(stages, payload, width, count), message).toEqual(elements);
          }
        }
      }
    }
  });

  it('lays out delta+rle of a small u16 array byte for byte', () => {
    // [5, 5, 5, 6] -> delta [5, 0, 0, 1] -> values [5, 0, 1], lengths [0, 1, 0].
    const elements = Uint8Array.of(5, 0, 5, 0, 5, 0, 6, 0);
    const payload = encodePayload([STAGE.delta, STAGE.rle], elements, 2);
    expect([...payload]).toEqual([6, 0, 0, 0, 6, 0, 0, 0, 3, 0, 0, 0, 3, 0, 0, 0, 5, 0, 0, 0, 1, 0, 0, 1, 0]);
  });

  it('orders streams values_j, lengths_j per plane', () => {
    const elements = Uint8Array.of(1, 2, 1, 2, 1, 3); // u16 0x0201 x2, 0x0301
    const payload = encodePayload([STAGE.shuffle, STAGE.rle], elements, 2);
    // plane 0 [1,1,1] -> values [1], lengths [2]; plane 1 [2,2,3] -> values [2,3], lengths [1,0]
    expect([...payload.subarray(32)]).toEqual([1, 2, 2, 3, 1, 0]);
  });

  it('rejects corrupt directories and pipelines', () => {
    const rng = new Rng(caseSeed('payload reject'));
    const elements = runElements(rng, 500, 4, 20);
    const stages = [STAGE.delta, STAGE.shuffle, STAGE.rle, STAGE.huffman];
    const payload = encodePayload(stages, elements, 4);
    const change = (at: number, delta: number) => {
      const copy = payload.slice();
      const view = new DataView(copy.buffer);
      view.setUint32(at, view.getUint32(at, true) + delta, true);
      return copy;
    };
    expect(() => decodePayload(stages, payload.subarray(0, 40), 4, 500)).toThrow(/^corrupt: /);
    expect(() => decodePayload(stages, change(4, 1), 4, 500)).toThrow(/^corrupt: /); // E sum
    expect(() => decodePayload(stages, change(0, 1), 4, 500)).toThrow(/^corrupt: /); // D of values_0
    expect(() => decodePayload(stages, change(8, 5 * 1000), 4, 500)).toThrow(/^corrupt: /); // D of lengths_0 > 5R
    expect(() => decodePayload(stages, payload, 4, 499)).toThrow(/^corrupt: /);
    expect(() => decodePayload([STAGE.rle, STAGE.delta], payload, 4, 500)).toThrow(/^corrupt: /);
    expect(() => decodePayload([STAGE.shuffle], payload, 1, 500)).toThrow(/^corrupt: /);
    expect(() => decodePayload([5], payload, 4, 500)).toThrow(/^corrupt: /);
    const raw = encodePayload([STAGE.delta], elements, 4);
    expect(() => decodePayload([STAGE.delta], raw, 4, 501)).toThrow(/^corrupt: /);
  });
});
