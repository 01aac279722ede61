/**
 * groupBySpans (ts/codec/gpu/common.ts), which splits a dispatch's items into groups whose spans
 * fit one storage binding each, against a reference written from its contract: items in order,
 * a new group where adding an item would make one buffer's window (from an aligned base to the
 * largest end, rounded up to a word) exceed the binding limit. Only the context's limits are read,
 * so no adapter is needed.
 */
import { describe, expect, it } from 'vitest';
import { groupBySpans, type Window } from '../../ts/codec/gpu/common.js';
import type { GpuContext } from '../../ts/gpu/context.js';
import { ParleError } from '../../ts/errors.js';

const ALIGN = 256;
const LIMIT = 4096;
const ctx = {
  limits: { minStorageBufferOffsetAlignment: ALIGN, maxStorageBufferBindingSize: LIMIT, maxBufferSize: 1 << 30 },
} as unknown as GpuContext;

type Span = [number, number] | null;

/** The contract, an item at a time with a window object a buffer. */
function reference(spans: Span[][]): { items: number[]; windows: (Window | null)[] }[] {
  const groups: { items: number[]; windows: (Window | null)[] }[] = [];
  const own = (x: Span): Window | null => (x === null ? null : { base: Math.floor(x[0] / ALIGN) * ALIGN, end: x[1] });
  const fits = (w: Window | null) => w === null || Math.ceil((w.end - w.base) / 4) * 4 <= LIMIT;
  spans.forEach((s, i) => {
    const mine = s.map(own);
    const last = groups[groups.length - 1];
    if (last !== undefined) {
      const merged = last.windows.map((w, k) => {
        const o = mine[k];
        if (w === null || o === null) return w ?? o;
        return { base: Math.min(w.base, o.base), end: Math.max(w.end, o.end) };
      });
      if (merged.every(fits)) {
        last.items.push(i);
        last.windows = merged;
        return;
      }
    }
    groups.push({ items: [i], windows: mine });
  });
  return groups;
}

describe('groupBySpans', () => {
  it('opens a group where a window would pass the binding limit, per buffer', () => {
    const spans: Span[][] = [
      [[0, 1000], null],
      [
        [1000, 3000],
        [10, 20],
      ],
      [
        [3000, 4200],
        [20, 30],
      ], // the first buffer's window would be 0..4200: a new group from 2816
      [[4200, 6000], null], // 2816..6000 fits
      [null, [5000, 5004]], // the second buffer's window would be 0..5004: a new group
      [[9000, 9100], null], // this group has no window of the first buffer yet: it opens one
    ];
    const got = groupBySpans(ctx, spans.length, (i) => spans[i], 'test');
    expect(got).toEqual([
      {
        items: [0, 1],
        windows: [
          { base: 0, end: 3000 },
          { base: 0, end: 20 },
        ],
      },
      {
        items: [2, 3],
        windows: [
          { base: 2816, end: 6000 },
          { base: 0, end: 30 },
        ],
      },
      {
        items: [4, 5],
        windows: [
          { base: 8960, end: 9100 },
          { base: 4864, end: 5004 },
        ],
      },
    ]);
    expect(got).toEqual(reference(spans));
  });

  it('matches the reference on random spans', () => {
    let seed = 7;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) >>> 0;
      return seed % n;
    };
    for (let round = 0; round < 200; round++) {
      const buffers = 1 + rand(3);
      const spans: Span[][] = Array.from({ length: rand(40) }, () =>
        Array.from({ length: buffers }, (): Span => {
          if (rand(4) === 0) return null;
          const start = rand(20000);
          return [start, start + rand(LIMIT - 256)];
        }),
      );
      expect(groupBySpans(ctx, spans.length, (i) => spans[i], 'test')).toEqual(reference(spans));
    }
  });

  it('refuses an item that spans more than one binding (TOO_LARGE)', () => {
    const spans: Span[][] = [[[0, 10]], [[300, 300 + LIMIT]]];
    expect(() => groupBySpans(ctx, 2, (i) => spans[i], 'test')).toThrow(ParleError);
    expect(() => groupBySpans(ctx, 2, (i) => spans[i], 'test')).toThrow(/item 1 spans more than one storage binding/);
  });

  it('gives no group for no items', () => {
    expect(groupBySpans(ctx, 0, () => [], 'test')).toEqual([]);
  });
});
