// decompress with `place` (ts/codec/place.ts): a block of a container's elements written at its
// place in a larger array, by the workers into a SharedArrayBuffer-backed out, by the calling
// thread into a plain one, on an engine without workers, and its checks. Compared with a plain
// loop over the block.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine, ErrorCodes, type Engine, type Placement } from '../ts/index.js';
import { placeRuns } from '../ts/codec/place.js';

let engine: Engine;
let lone: Engine;
beforeAll(async () => {
  [engine, lone] = await Promise.all([
    createEngine({ workers: 2, gpu: 'off', calibration: 'skip' }),
    createEngine({ workers: 0, gpu: 'off', calibration: 'skip' }),
  ]);
});
afterAll(async () => {
  await Promise.all([engine?.destroy(), lone?.destroy()]);
});

const SHAPE = [40, 64, 32];
const COUNT = SHAPE[0] * SHAPE[1] * SHAPE[2];
const volume = Uint16Array.from({ length: COUNT }, (_, i) => (i * 7 + (i >> 9)) & 0xffff);

/** What `place` writes, by a loop over every index of the block. */
function expected(place: Placement, outLength: number, fill: number): Uint16Array {
  const out = new Uint16Array(outLength).fill(fill);
  const [s0, s1, s2] = place.start;
  const [c0, c1, c2] = place.count;
  for (let i = 0; i < c0; i++)
    for (let j = 0; j < c1; j++)
      for (let k = 0; k < c2; k++) {
        const from = ((s0 + i) * SHAPE[1] + (s1 + j)) * SHAPE[2] + (s2 + k);
        out[place.outOffset + i * place.outStrides[0] + j * place.outStrides[1] + k * place.outStrides[2]] = volume[from];
      }
  return out;
}

// an out of shape [30, 50, 40]; blocks that cross chunk boundaries, an axis of one index
// (stride 0), and one whose last axis steps 2 in out
const PLACES: [string, Placement][] = [
  ['a block', { shape: SHAPE, start: [3, 10, 4], count: [25, 40, 20], outOffset: 2 * 2000 + 5 * 40 + 7, outStrides: [2000, 40, 1] }],
  ['one index along the first axis', { shape: SHAPE, start: [17, 0, 0], count: [1, 64, 32], outOffset: 11, outStrides: [0, 32, 1] }],
  ['every element', { shape: SHAPE, start: [0, 0, 0], count: SHAPE, outOffset: 0, outStrides: [2048, 32, 1] }],
  ['a last axis stepping 2', { shape: SHAPE, start: [0, 1, 3], count: [4, 5, 6], outOffset: 1, outStrides: [200, 12, 2] }],
];

describe('decompress with place', () => {
  let packed: Uint8Array;
  beforeAll(async () => {
    packed = await engine.compress(volume, { shape: SHAPE, chunkBytes: 16384 });
    expect(engine.inspect(packed).chunks.length).toBeGreaterThan(8);
  });

  for (const [what, place] of PLACES) {
    const outLength = Math.max(60_000, COUNT);
    it(`${what}: into shared memory by the workers, into a plain array, without workers`, async () => {
      const want = expected(place, outLength, 0xabcd);
      const shared = new Uint16Array(new SharedArrayBuffer(outLength * 2)).fill(0xabcd);
      expect(await engine.decompress(packed, { out: shared, place })).toBe(shared);
      expect(Buffer.compare(Buffer.from(shared.buffer), Buffer.from(want.buffer))).toBe(0);
      const plain = new Uint16Array(outLength).fill(0xabcd);
      await engine.decompress(packed, { out: plain, place });
      expect(Buffer.compare(Buffer.from(plain.buffer), Buffer.from(want.buffer))).toBe(0);
      const alone = new Uint16Array(outLength).fill(0xabcd);
      await lone.decompress(packed, { out: alone, place });
      expect(Buffer.compare(Buffer.from(alone.buffer), Buffer.from(want.buffer))).toBe(0);
    });
  }

  // runs of 4 KiB or more are moved in the engine's memory to out's alignment before the copy
  // (placeFromMemory): into a gap after them of 7 bytes or more, never into the next run's bytes
  const LONG = [6, 3, 2100];
  const longRows = Uint16Array.from({ length: LONG[0] * LONG[1] * LONG[2] }, (_, i) => (i * 13 + (i >> 11)) & 0xffff);
  const LONG_PLACES: [string, Placement][] = [
    [
      'rows of 4198 bytes, 2 bytes apart',
      { shape: LONG, start: [0, 0, 1], count: [6, 3, 2099], outOffset: 3, outStrides: [6300, 2100, 1] },
    ],
    [
      'rows of 4180 bytes, 20 bytes apart',
      { shape: LONG, start: [1, 0, 5], count: [5, 3, 2090], outOffset: 1, outStrides: [6400, 2101, 1] },
    ],
    ['every element, out at an odd element', { shape: LONG, start: [0, 0, 0], count: LONG, outOffset: 5, outStrides: [6300, 2100, 1] }],
  ];
  for (const [what, place] of LONG_PLACES) {
    it(`${what}: the same elements in their places whatever out's alignment`, async () => {
      const long = await engine.compress(longRows, { shape: LONG, chunkBytes: 16384 });
      const outLength = 45_000;
      const want = new Uint16Array(outLength).fill(0x5555);
      placeRuns(place, 0, longRows.length, (from, to, n) => {
        for (let k = 0; k < n; k++) want[to + k] = longRows[from + k];
      });
      for (const e of [engine, lone]) {
        const shared = new Uint16Array(new SharedArrayBuffer(outLength * 2)).fill(0x5555);
        await e.decompress(long, { out: shared, place });
        expect(Buffer.compare(Buffer.from(shared.buffer), Buffer.from(want.buffer))).toBe(0);
      }
    });
  }

  it('placeRuns visits each run of the block once, in order, cut at the chunk bounds', () => {
    const place = PLACES[0][1];
    const runs: number[][] = [];
    for (const [first, end] of [
      [0, 30_000],
      [30_000, COUNT],
    ])
      placeRuns(place, first, end, (from, to, n) => runs.push([from, to, n]));
    const elements = runs.reduce((a, [, , n]) => a + n, 0);
    expect(elements).toBe(25 * 40 * 20);
    for (let r = 1; r < runs.length; r++) expect(runs[r][0]).toBeGreaterThanOrEqual(runs[r - 1][0] + runs[r - 1][2]);
    // a block of whole rows lying side by side in out: one run a chunk, not one a row
    const whole: number[][] = [];
    placeRuns(PLACES[2][1], 1000, 30_000, (from, to, n) => whole.push([from, to, n]));
    expect(whole).toEqual([[1000, 1000, 29_000]]);
    const rows: number[][] = [];
    placeRuns({ shape: [100, 5], start: [10, 0], count: [50, 5], outOffset: 7, outStrides: [5, 1] }, 0, 500, (from, to, n) =>
      rows.push([from, to, n]),
    );
    expect(rows).toEqual([[50, 7, 250]]);
  });

  it('is refused for a block outside the shape, a write past out, a shape of another count, or without out', async () => {
    const out = new Uint16Array(COUNT);
    const codeOf = (p: Promise<unknown>) =>
      p.then(
        () => 'resolved',
        (e: { code: string }) => e.code,
      );
    const base = PLACES[2][1];
    expect(await codeOf(engine.decompress(packed, { out, place: { ...base, start: [1, 0, 0] } }))).toBe(ErrorCodes.INVALID_OPTION);
    expect(await codeOf(engine.decompress(packed, { out, place: { ...base, outOffset: 1 } }))).toBe(ErrorCodes.INVALID_OPTION);
    expect(await codeOf(engine.decompress(packed, { out, place: { ...base, shape: [40, 64, 31] } }))).toBe(ErrorCodes.LENGTH_MISMATCH);
    expect(await codeOf(engine.decompress(packed, { out, place: { ...base, count: [1, 2] } }))).toBe(ErrorCodes.INVALID_OPTION);
    expect(await codeOf(engine.decompress(packed, { place: base }))).toBe(ErrorCodes.INVALID_OPTION);
    expect(await codeOf(engine.decompress(packed, { out: new Uint8Array(COUNT * 2), place: base }))).toBe(ErrorCodes.INVALID_ARGUMENT);
    // a corrupt chunk: its code, as without a placement
    const bad = packed.slice();
    bad[bad.length - 100] ^= 0x10;
    expect(await codeOf(engine.decompress(bad, { out: new Uint16Array(new SharedArrayBuffer(COUNT * 2)), place: base }))).toMatch(
      /CHECKSUM_MISMATCH|CORRUPT/,
    );
  });
});
