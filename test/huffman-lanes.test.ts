/**
 * Huffman stream mode 3, interleaved lanes (docs/format.md, "Mode 3: interleaved lanes"): the
 * kernels huffmanEncodeLanes / huffmanDecodeLanes (assembly/huffman-lanes.ts) of both builds against the
 * plain reference (test/support/codec-reference.ts: huffmanEncodeLanesStream, and
 * huffmanDecodeStream's mode 3), byte for byte; corrupt segments (cut, extended, odd, lying
 * offsets, random mutations) get the reference's verdict, with the units placed at the very end
 * of the memory so that any read past them traps. Then the pipeline and the engine: compress
 * with `decoder: 'gpu'` writes mode-3 streams that decompress.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lanesScratchBytes, type Kernels } from '../ts/cpu/wasm.js';
import { createEngine, type Engine } from '../ts/engine.js';
import { ErrorCodes } from '../ts/errors.js';
import { inspectContainer, readAtBytes } from '../ts/format/container.js';
import { bytesOf, elementSize, type ElementType, type ParleArray } from '../ts/types.js';
import * as ref from './support/codec-reference.js';
import { concat, expectSameBytes, expectUntouched, le32, placeAtMemoryEnd, randomBytes, SENTINEL, skewedBytes } from './support/bytes.js';
import { KernelHarness, loadBothBuilds, type TestedVariant } from './support/kernels.js';
import { Rng, caseSeed, describeSeed } from './support/random.js';

const VARIANTS: readonly TestedVariant[] = ['simd', 'scalar'];
const GUARD = 64;

let builds: Record<TestedVariant, KernelHarness>;
beforeAll(async () => {
  builds = await loadBothBuilds();
});

// ---------------------------------------------------------------------------------------------
// Data
// ---------------------------------------------------------------------------------------------

/** Fibonacci-weighted bytes over 21 symbols: the 11-bit limit binds, codes up to 11 bits. */
function fibonacciBytes(rng: Rng, n: number): Uint8Array {
  const weights: number[] = [];
  let a = 1;
  let b = 1;
  for (let s = 0; s < 21; s++) {
    weights.push(a);
    [a, b] = [b, a + b];
  }
  const total = weights.reduce((x, y) => x + y, 0);
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    let r = rng.nextFloat() * total;
    let s = 0;
    while (s < 20 && r >= weights[s]) r -= weights[s++];
    out[i] = 3 * s + 1;
  }
  return out;
}

/** Every shape, each with at least two distinct symbols (one symbol is mode 1). */
function shapes(rng: Rng, n: number): [string, Uint8Array][] {
  const list: [string, Uint8Array][] = [
    ['random', randomBytes(rng, n)],
    ['skewed', skewedBytes(rng, n)],
    ['one symbol 99 %', Uint8Array.from({ length: n }, () => (rng.nextFloat() < 0.99 ? 42 : rng.nextU32() & 0xff))],
    ['two symbols', Uint8Array.from({ length: n }, () => (rng.nextFloat() < 0.9 ? 17 : 200))],
    ['Fibonacci (11-bit codes)', fibonacciBytes(rng, n)],
  ];
  for (const [, data] of list) if (new Set(data).size < 2) data[n - 1] = data[0] ^ 1;
  return list.filter(([, data]) => data.length >= 2);
}

// ---------------------------------------------------------------------------------------------
// Streams
// ---------------------------------------------------------------------------------------------

interface Parts {
  mode: number;
  g: number;
  lengths: Uint8Array;
  /** The header before the offsets: mode, g, m, the nibbles. */
  head: Uint8Array;
  ends: number[];
  units: Uint8Array;
}

/** The parts of a mode-2 or mode-3 stream of `n` symbols. */
function parse(stream: Uint8Array, n: number): Parts {
  const g = stream[1];
  const last = stream[2];
  const lengths = new Uint8Array(256);
  for (let s = 0; s <= last; s++) lengths[s] = (stream[3 + (s >> 1)] >> ((s & 1) * 4)) & 15;
  const offsetsAt = 3 + Math.ceil((last + 1) / 2);
  const segments = Math.ceil(n / 2 ** g);
  const view = new DataView(stream.buffer, stream.byteOffset);
  const ends = Array.from({ length: segments }, (_, k) => view.getUint32(offsetsAt + 4 * k, true));
  return { mode: stream[0], g, lengths, head: stream.slice(0, offsetsAt), ends, units: stream.slice(offsetsAt + 4 * segments) };
}

function assemble(head: Uint8Array, ends: ArrayLike<number>, units: Uint8Array): Uint8Array {
  return concat([head, le32(ends), units]);
}

/** The reference decoder's verdict: the bytes, or the error it threw. */
function referenceDecode(stream: Uint8Array, n: number): Uint8Array | Error {
  try {
    return ref.huffmanDecodeStream(stream, n);
  } catch (e) {
    return e as Error;
  }
}

// ---------------------------------------------------------------------------------------------
// Kernels
// ---------------------------------------------------------------------------------------------

/** The canonical codes of `lengths` as huffmanBuildCodes writes them (bit-reversed | length << 16). */
function codeWords(lengths: Uint8Array): Uint32Array {
  const canonical = ref.canonicalCodes(lengths);
  return Uint32Array.from(lengths, (l, s) => (l === 0 ? 0 : ref.reverseBits(canonical[s], l) | (l << 16)));
}

/** huffmanEncodeLanes of `data` with `lengths`: the whole stream (the reference's header), guards checked. */
function kernelEncode(h: KernelHarness, data: Uint8Array, lengths: Uint8Array, g: number, context: string): Uint8Array {
  h.reset();
  const k = h.kernels;
  const n = data.length;
  const segments = Math.ceil(n / 2 ** g);
  let bits = 0;
  for (const b of data) bits += lengths[b];
  const bound = Math.ceil(bits / 8) + 64 * segments;
  const srcPtr = h.copyIn(data, 0, 1);
  const codesPtr = h.copyIn(codeWords(lengths));
  const outPtr = h.allocFilled(bound + GUARD, SENTINEL);
  const offsetsPtr = h.allocFilled(4 * segments + GUARD, SENTINEL);
  const scratchBytes = lanesScratchBytes(g);
  const scratchPtr = h.allocFilled(scratchBytes + GUARD, SENTINEL);
  const written = k.huffmanEncodeLanes(srcPtr, n, codesPtr, g, outPtr, offsetsPtr, scratchPtr);
  expect(written, `bytes written within the bound, ${context}`).toBeLessThanOrEqual(bound);
  expect(k.huffmanLanesBytes(srcPtr, n, codesPtr, g), `huffmanLanesBytes, ${context}`).toBe(written);
  expectUntouched(h, outPtr + written, bound - written + GUARD, `output past the bytes written, ${context}`);
  expectUntouched(h, offsetsPtr + 4 * segments, GUARD, `offsets, ${context}`);
  expectUntouched(h, scratchPtr + scratchBytes, GUARD, `scratch, ${context}`);
  const ends = Array.from(h.view(Uint32Array, offsetsPtr, segments));
  const head = ref.huffmanEncodeLanesStream(data, g).subarray(0, 3 + Math.ceil((lastSymbol(lengths) + 1) / 2));
  return assemble(head, ends, h.bytes(outPtr, written).slice());
}

function lastSymbol(lengths: Uint8Array): number {
  let last = 255;
  while (last > 0 && lengths[last] === 0) last--;
  return last;
}

/**
 * huffmanDecodeLanes of a stream's parts, the units ending exactly at the end of the memory, the
 * output guarded. `symbols` picks the table: below 8192 single-symbol entries, else multi-symbol.
 */
function kernelDecode(h: KernelHarness, parts: Parts, n: number, symbols = 0): { result: number; out: Uint8Array } {
  h.reset();
  const k = h.kernels;
  const lengthsPtr = h.copyIn(parts.lengths);
  const codesPtr = h.alloc(1024);
  const tablePtr = h.alloc(12 << 10);
  expect(k.huffmanBuildTable(lengthsPtr, codesPtr, tablePtr, symbols)).toBe(0);
  const offsetsPtr = h.copyIn(le32(parts.ends));
  const outPtr = h.allocFilled(n + GUARD, SENTINEL);
  const srcPtr = placeAtMemoryEnd(h, parts.units);
  const result = k.huffmanDecodeLanes(srcPtr, parts.units.length, offsetsPtr, parts.g, n, tablePtr, outPtr);
  expectUntouched(h, outPtr + n, GUARD, 'huffmanDecodeLanes output');
  return { result, out: h.bytes(outPtr, n).slice() };
}

/**
 * The kernel's verdict equals the reference's: -1 where it throws, else the same bytes. Offsets
 * whose last is not the units' length are the header's check (readHeader, before the kernel):
 * the kernel then only has to return 0 or -1 without a trap or a write past its output.
 */
function expectVerdict(h: KernelHarness, parts: Parts, n: number, context: string): 'ok' | 'corrupt' {
  const expected = referenceDecode(assemble(parts.head, parts.ends, parts.units), n);
  for (const symbols of [0, 8192]) {
    const { result, out } = kernelDecode(h, parts, n, symbols);
    if (parts.ends[parts.ends.length - 1] !== parts.units.length) {
      expect(expected, context).toBeInstanceOf(Error);
      expect([0, -1], context).toContain(result);
      continue;
    }
    if (expected instanceof Error) {
      expect(result, `${context} (reference: ${expected.message}), table ${symbols}`).toBe(-1);
    } else {
      expect(result, `${context}, table ${symbols}`).toBe(0);
      expectSameBytes(out, expected, `${context}, table ${symbols}`);
    }
  }
  return expected instanceof Error ? 'corrupt' : 'ok';
}

/** Lengths of 2..300 symbols not a multiple of 4, short last segments, both sides of 128 (a step group) and of a segment. */
const SIZES = [
  2,
  3,
  4,
  5,
  7,
  31,
  100,
  127,
  128,
  129,
  130,
  131,
  255,
  257,
  1000,
  1023,
  1024,
  1025,
  1153,
  4095,
  4096,
  4097,
  4096 + 130,
  3 * 4096 + 1,
  20_000,
];

describe('reference: mode 3', () => {
  it('round-trips and costs at most 64 bytes a segment over mode 2 at the same g', () => {
    const seed = caseSeed('lanes reference');
    const rng = new Rng(seed);
    for (const n of [2, 5, 129, 4097, 20_000]) {
      for (const [shape, data] of shapes(rng, n)) {
        for (const g of [10, 12]) {
          const stream = ref.huffmanEncodeLanesStream(data, g);
          const context = `${shape} n=${n} g=${g} ${describeSeed(seed)}`;
          expect(stream[0], context).toBe(3);
          expectSameBytes(ref.huffmanDecodeStream(stream, n), data, context);
          const two = ref.huffmanEncodeStream(data, g);
          expect(stream.length - two.length, context).toBeLessThanOrEqual(64 * Math.ceil(n / 2 ** g));
          // same header but the mode
          expectSameBytes(stream.subarray(1, 3), two.subarray(1, 3), context);
        }
      }
    }
  });

  it('rejects a cut unit, an extra unit and an odd segment', () => {
    const data = skewedBytes(new Rng(caseSeed('lanes reference corrupt')), 5000);
    const p = parse(ref.huffmanEncodeLanesStream(data, 10), data.length);
    const cut = assemble(
      p.head,
      p.ends.map((e) => e - 2),
      concat([p.units.subarray(0, p.ends[0] - 2), p.units.subarray(p.ends[0])]),
    );
    expect(() => ref.huffmanDecodeStream(cut, data.length)).toThrow(/corrupt: .*past its/);
    const extra = assemble(
      p.head,
      p.ends.map((e) => e + 2),
      concat([p.units.subarray(0, p.ends[0]), Uint8Array.of(0, 0), p.units.subarray(p.ends[0])]),
    );
    expect(() => ref.huffmanDecodeStream(extra, data.length)).toThrow(/corrupt: .*unread/);
    const odd = assemble(
      p.head,
      p.ends.map((e) => e + 1),
      concat([p.units.subarray(0, p.ends[0]), Uint8Array.of(0), p.units.subarray(p.ends[0])]),
    );
    expect(() => ref.huffmanDecodeStream(odd, data.length)).toThrow(/corrupt: .*16-bit units/);
  });
});

describe.each(VARIANTS)('%s build', (variant) => {
  let h: KernelHarness;
  let k: Kernels;
  beforeAll(() => {
    h = builds[variant];
    k = h.kernels;
    expect(k.simdEnabled() !== 0).toBe(variant === 'simd');
  });

  it("huffmanEncodeLanes writes the reference encoder's streams; huffmanDecodeLanes decodes them (both tables)", () => {
    const seed = caseSeed(`lanes kernels ${variant}`);
    const rng = new Rng(seed);
    for (const g of [10, 12, 14]) {
      for (const n of SIZES) {
        for (const [shape, data] of shapes(rng, n)) {
          const context = `${shape} n=${n} g=${g} ${describeSeed(seed)}`;
          const expected = ref.huffmanEncodeLanesStream(data, g);
          const parts = parse(expected, n);
          const stream = kernelEncode(h, data, parts.lengths, g, context);
          expectSameBytes(stream, expected, context);
          for (const symbols of [0, 8192]) {
            const { result, out } = kernelDecode(h, parts, n, symbols);
            expect(result, context).toBe(0);
            expectSameBytes(out, data, `${context}, table ${symbols}`);
          }
        }
      }
    }
  });

  it('a large segment (g = 20) and n = 0', () => {
    const rng = new Rng(caseSeed(`lanes g20 ${variant}`));
    const data = skewedBytes(rng, (1 << 20) + 333);
    const expected = ref.huffmanEncodeLanesStream(data, 20);
    const parts = parse(expected, data.length);
    expectSameBytes(kernelEncode(h, data, parts.lengths, 20, 'g=20'), expected, 'g=20');
    expect(kernelDecode(h, parts, data.length).result).toBe(0);
    expectSameBytes(kernelDecode(h, parts, data.length).out, data, 'g=20 decode');
    expect(k.huffmanDecodeLanes(h.alloc(16), 0, h.alloc(16), 12, 0, h.alloc(12 << 10), h.alloc(16))).toBe(0);
  });

  it('a segment cut by a unit, extended by a unit or by one byte, and empty segments return -1', () => {
    const seed = caseSeed(`lanes truncated ${variant}`);
    const rng = new Rng(seed);
    for (const n of [300, 5000, 9 * 1024 + 7]) {
      const data = skewedBytes(rng, n);
      const p = parse(ref.huffmanEncodeLanesStream(data, 10), n);
      for (let s = 0; s < p.ends.length; s++) {
        const at = p.ends[s];
        const context = `n=${n} segment ${s} of ${p.ends.length} ${describeSeed(seed)}`;
        const edit = (drop: number, insert: Uint8Array): Parts => ({
          ...p,
          ends: p.ends.map((e, j) => (j >= s ? e - drop + insert.length : e)),
          units: concat([p.units.subarray(0, at - drop), insert, p.units.subarray(at)]),
        });
        expect(expectVerdict(h, edit(2, new Uint8Array(0)), n, `cut, ${context}`)).toBe('corrupt');
        expect(expectVerdict(h, edit(0, Uint8Array.of(0, 0)), n, `extra unit, ${context}`)).toBe('corrupt');
        expect(expectVerdict(h, edit(1, new Uint8Array(0)), n, `one byte short, ${context}`)).toBe('corrupt');
        expect(expectVerdict(h, edit(0, Uint8Array.of(0)), n, `one byte more, ${context}`)).toBe('corrupt');
      }
      const empty = { ...p, ends: p.ends.map(() => 0), units: new Uint8Array(0) };
      expect(expectVerdict(h, empty, n, `empty, n=${n}`)).toBe('corrupt');
    }
  });

  it('offsets past the units, decreasing or shifted by a unit get the reference verdict, reading nothing past the units', () => {
    const seed = caseSeed(`lanes offsets ${variant}`);
    const rng = new Rng(seed);
    for (const n of [1000, 5000, 20 * 1024 + 9]) {
      const data = fibonacciBytes(rng, n);
      const p = parse(ref.huffmanEncodeLanesStream(data, 10), n);
      const size = p.units.length;
      for (let s = 0; s < p.ends.length; s++) {
        const context = `n=${n} segment ${s} ${describeSeed(seed)}`;
        const withEnds = (ends: number[]) => kernelDecode(h, { ...p, ends }, n).result;
        expect(withEnds(p.ends.map((e, j) => (j >= s ? size + 2 + 2 * (j - s) : e))), `past the end, ${context}`).toBe(-1);
        expect(withEnds(p.ends.map((e, j) => (j >= s ? 2 ** 31 + 2 * j : e))), `far past, ${context}`).toBe(-1);
        expect(withEnds(p.ends.map((e, j) => (j >= s ? 2 ** 32 - 2 : e))), `at 2^32 - 2, ${context}`).toBe(-1);
        if (s > 0) expect(withEnds(p.ends.map((e, j) => (j === s ? p.ends[s - 1] - 2 : e))), `decreasing, ${context}`).toBe(-1);
        if (s < p.ends.length - 1) {
          for (const shift of [-2, 2])
            expectVerdict(h, { ...p, ends: p.ends.map((e, j) => (j === s ? e + shift : e)) }, n, `end shifted by ${shift}, ${context}`);
        }
      }
      const lastOnly = p.ends.map((_, j) => (j === p.ends.length - 1 ? size : 0));
      expectVerdict(h, { ...p, ends: lastOnly }, n, `all units in the last segment, n=${n}`);
    }
  });

  it('random mutations of valid streams: the reference verdict, never a trap', () => {
    const seed = caseSeed(`lanes mutations ${variant}`);
    const rng = new Rng(seed);
    let corrupt = 0;
    let decoded = 0;
    for (let trial = 0; trial < 300; trial++) {
      const n = rng.intBetween(2, 6000);
      const [, data] = shapes(rng, n)[trial % 5];
      const p = parse(ref.huffmanEncodeLanesStream(data, 10), n);
      const units = p.units.slice();
      const ends = p.ends.slice();
      const edits = rng.intBetween(1, 4);
      for (let e = 0; e < edits; e++) {
        const what = rng.intBetween(0, 9);
        if (what < 7 && units.length > 0) units[rng.intBetween(0, units.length - 1)] ^= 1 << rng.intBetween(0, 7);
        else if (what < 9 && ends.length > 0) ends[rng.intBetween(0, ends.length - 1)] += 2 * rng.intBetween(-3, 3);
        else if (units.length > 0) units[rng.intBetween(0, units.length - 1)] = rng.nextU32() & 0xff;
      }
      const verdict = expectVerdict(
        h,
        { ...p, ends: ends.map((x) => Math.max(0, x)), units },
        n,
        `trial ${trial} n=${n} ${describeSeed(seed)}`,
      );
      if (verdict === 'corrupt') corrupt++;
      else decoded++;
    }
    // both outcomes occur (bit flips inside codes often still decode)
    expect(corrupt).toBeGreaterThan(0);
    expect(decoded).toBeGreaterThan(0);
  });
});

// ---------------------------------------------------------------------------------------------
// The engine: compress(x, { decoder: 'gpu' }) on the CPU path
// ---------------------------------------------------------------------------------------------

describe("engine: decoder 'gpu' on the CPU path", () => {
  let engine: Engine;
  beforeAll(async () => {
    engine = await createEngine({ workers: 2, gpu: 'off' });
  });
  afterAll(async () => {
    await engine.destroy();
  });

  /** Every Huffman stream's mode in a container, and each huffman chunk checked by the reference decoder. */
  function huffmanModes(packed: Uint8Array, input: ParleArray): number[] {
    const report = inspectContainer(readAtBytes(packed), packed.length);
    const width = elementSize(report.type as ElementType) as 1 | 2 | 4;
    const bytes = bytesOf(input);
    const modes: number[] = [];
    report.chunks.forEach((c, i) => {
      const names = c.encoding.split('+');
      if (!names.includes('huffman')) return;
      const payload = packed.subarray(c.payloadOffset, c.payloadOffset + c.payloadBytes);
      const view = new DataView(payload.buffer, payload.byteOffset);
      let at = 8 * c.streamCount!;
      for (let j = 0; j < c.streamCount!; j++) {
        modes.push(payload[at]);
        at += view.getUint32(8 * j + 4, true);
      }
      // the reference decodes the chunk's payload (its mode-3 streams included) to the elements
      const stages = names.map((n) => ref.STAGE[n as keyof typeof ref.STAGE]);
      const count = c.elementCount;
      const start = i * report.chunkLength * width;
      expect(
        sameBytes(ref.decodePayload(stages, payload, width, count), bytes.subarray(start, start + count * width)),
        `chunk ${i}`,
      ).toBe(true);
    });
    return modes;
  }

  function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
    return a.length === b.length && a.every((x, i) => x === b[i]);
  }

  const rng = new Rng(caseSeed('lanes engine'));
  /**
   * Inputs of each type: one chunk (the engine's thread) and several (the workers); the u16 walk
   * with a fixed pipeline (the chooser picks pack for it).
   */
  const inputs: [string, () => ParleArray, { codec?: string }][] = [
    ['u8 skewed, 100 KB', () => skewedBytes(rng, 100_000, 40), {}],
    ['u8 skewed, 1.5 MB', () => skewedBytes(rng, 1_500_000, 60), {}],
    [
      'u16 random walk, 600 K, delta+shuffle+huffman',
      () => {
        const a = new Uint16Array(600_000);
        for (let i = 1; i < a.length; i++) a[i] = a[i - 1] + rng.intBetween(-40, 40);
        return a;
      },
      { codec: 'delta+shuffle+huffman' },
    ],
    [
      'f32 smooth with noise, 400 K',
      () => Float32Array.from({ length: 400_000 }, (_, i) => Math.sin(i / 300) * 1000 + rng.nextFloat() * 0.01),
      {},
    ],
  ];

  for (const [name, make, options] of inputs) {
    // mode 3 adds about 32 bytes a 4096-symbol segment (less 12 bytes of offsets): 0.5 % of the
    // streams' symbols, so 1-2 % of the size of data that compresses 3:1
    it(`${name}: round-trips, its Huffman streams are mode 3, and it is at most 0.8 % of the input larger than decoder 'cpu'`, async () => {
      const input = make();
      const lanes = await engine.compress(input, { ...options, decoder: 'gpu' });
      const plain = await engine.compress(input, { ...options, decoder: 'cpu' });
      expect(sameBytes(await engine.compress(input, options), plain), 'the default is decoder cpu').toBe(true);
      const back = await engine.decompress(lanes);
      expect(back.constructor).toBe(input.constructor);
      expect(sameBytes(bytesOf(back), bytesOf(input))).toBe(true);
      const lanesModes = huffmanModes(lanes, input);
      const plainModes = huffmanModes(plain, input);
      expect(lanesModes, 'mode-3 streams').toContain(3);
      expect(lanesModes.filter((m) => m === 2)).toEqual([]);
      expect(plainModes.filter((m) => m === 3)).toEqual([]);
      const context = `${lanes.length} against ${plain.length} of ${bytesOf(input).length}`;
      expect((lanes.length - plain.length) / bytesOf(input).length, context).toBeLessThan(0.008);
      expect(lanes.length / plain.length, context).toBeLessThan(1.02);
    });
  }

  it('a fixed huffman pipeline, levels 1 and 9 and 1 KiB chunks write mode 3 too', async () => {
    const input = skewedBytes(rng, 300_000, 30);
    for (const options of [{ codec: 'huffman' }, { codec: 'delta+huffman' }, { level: 1 }, { level: 9 }, { chunkBytes: 1024 }] as const) {
      const packed = await engine.compress(input, { ...options, decoder: 'gpu' });
      expect(sameBytes(bytesOf(await engine.decompress(packed)), input), JSON.stringify(options)).toBe(true);
      expect(huffmanModes(packed, input), JSON.stringify(options)).toContain(3);
    }
  });

  it('bad decoder values throw INVALID_OPTION', async () => {
    for (const bad of ['GPU', 'wasm', '', 3, null, true, {}]) {
      await expect(engine.compress(new Uint8Array(100), { decoder: bad as never }), String(bad)).rejects.toMatchObject({
        code: ErrorCodes.INVALID_OPTION,
        message: /^options\.decoder must be 'cpu', 'gpu'/,
      });
    }
  });
});
