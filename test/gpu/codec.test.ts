/// <reference types="@webgpu/types" />
/**
 * The codec's GPU kernels (ts/codec/gpu/, one file per shader family) against the plain reference of docs/format.md
 * (test/support/codec-reference.ts): tree hash, Huffman decode, delta, shuffle, byte histograms,
 * Huffman encode (against the CPU kernel of build/parle.wasm too). Outputs land in
 * buffers pre-filled with a sentinel, so bytes written past an output's words show.
 */
import { expect } from 'vitest';
import { type GpuContext } from '../../ts/gpu/index.js';
import { deltaDecode, deltaEncode, encodeDeltaDecodeChunks } from '../../ts/codec/gpu/delta.js';
import { encodeGather, type GatherJob } from '../../ts/codec/gpu/gather.js';
import { treeHash, treeHashes } from '../../ts/codec/gpu/hash.js';
import {
  encodeHistogramCodes,
  histogramCodes8,
  histograms8,
  type HistogramCode,
  type HistogramSource,
} from '../../ts/codec/gpu/histogram.js';
import { submitThenRead } from '../../ts/codec/gpu/common.js';
import { buildHuffmanDecodeTable, huffmanDecode, parseHuffmanStream, type HuffmanDecodeJob } from '../../ts/codec/gpu/huffman-decode.js';
import {
  HUFFMAN_ENCODE_MAX_BYTES,
  huffmanEncodeOnDevice,
  huffmanEncodeStreams,
  type HuffmanEncodeJob,
} from '../../ts/codec/gpu/huffman-encode.js';
import { rleChunkStreams } from '../../ts/codec/gpu/rle-streams.js';
import { encodePackSizes, encodePackWrite, paddedBytes, type PackSizing } from '../../ts/codec/gpu/pack-encode.js';
import { PACK_SCRATCH_BYTES } from '../../ts/cpu/wasm.js';
import { encodeShuffleChunks, shuffle, unshuffle } from '../../ts/codec/gpu/shuffle.js';
import { encodePredictDecodeChunks } from '../../ts/codec/gpu/predict.js';
import { Predictor, ValueMap } from '../../ts/format/predict.js';
import { canonicalCodeTable, codedBits, codeLengths, headerBytes, segmentCount, writeHeader } from '../../ts/codec/huffman.js';
import { KernelHarness } from '../support/kernels.js';
import { composeKernel } from '../../ts/gpu/compose.js';
import huffmanSource from '../../shaders/codec-huffman.wgsl';
import readSrcSource from '../../shaders/read-src.wgsl';
import lanesBallotSource from '../../shaders/huffman-lanes-ballot.wgsl';
import { ParleError } from '../../ts/errors.js';
import * as ref from '../support/codec-reference.js';
import { describeGpu, gpuTest, type Rng } from './support.js';

const SENTINEL = 0xab;

/** A storage buffer of `size` bytes (rounded up to 4) holding `bytes` at `offset`, the rest SENTINEL. */
function bufferWith(ctx: GpuContext, size: number, parts: [number, Uint8Array][] = []): GPUBuffer {
  const b = ctx.device.createBuffer({
    label: 'test:codec',
    size: Math.max(4, Math.ceil(size / 4) * 4),
    usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST,
    mappedAtCreation: true,
  });
  const view = new Uint8Array(b.getMappedRange());
  view.fill(SENTINEL);
  for (const [offset, bytes] of parts) view.set(bytes, offset);
  b.unmap();
  return b;
}

/** The whole contents of `buffer`. */
async function readAll(ctx: GpuContext, buffer: GPUBuffer): Promise<Uint8Array> {
  const rb = ctx.device.createBuffer({ label: 'test:read', size: buffer.size, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  const enc = ctx.device.createCommandEncoder();
  enc.copyBufferToBuffer(buffer, 0, rb, 0, buffer.size);
  ctx.device.queue.submit([enc.finish()]);
  await rb.mapAsync(GPUMapMode.READ);
  const out = new Uint8Array(rb.getMappedRange().slice(0));
  rb.unmap();
  rb.destroy();
  return out;
}

function randomBytes(n: number, rng: Rng): Uint8Array {
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = rng.u32() & 0xff;
  return out;
}

/** Bytes with a skewed distribution (Huffman codes of many lengths): geometric-ish over 0..k. */
function skewedBytes(n: number, rng: Rng, symbols = 40): Uint8Array {
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    let s = 0;
    while (s < symbols - 1 && rng.below(3) !== 0) s++;
    out[i] = (s * 37 + 11) & 0xff;
  }
  return out;
}

function expectBytes(got: Uint8Array, want: Uint8Array, what: string): void {
  expect(got.length, `${what}: length`).toBe(want.length);
  for (let i = 0; i < want.length; i++) {
    if (got[i] !== want[i]) throw new Error(`${what}: first difference at byte ${i} of ${want.length}: got ${got[i]}, want ${want[i]}`);
  }
}

/** Bytes [end, roundUp4(end)) are zero and [roundUp4(end), limit) still SENTINEL. */
function expectPadding(all: Uint8Array, end: number, limit: number, what: string): void {
  const word = Math.ceil(end / 4) * 4;
  for (let i = end; i < word; i++) expect(all[i], `${what}: pad byte ${i}`).toBe(0);
  for (let i = word; i < limit; i++) if (all[i] !== SENTINEL) throw new Error(`${what}: byte ${i} past the output was written`);
}

async function expectCorrupt(p: Promise<unknown>, what: string): Promise<ParleError> {
  try {
    await p;
  } catch (e) {
    expect(e, what).toBeInstanceOf(ParleError);
    expect((e as ParleError).code, `${what}: ${(e as Error).message}`).toBe('CORRUPT');
    return e as ParleError;
  }
  throw new Error(`${what}: no CORRUPT thrown`);
}

function expectCorruptSync(fn: () => unknown, what: string): void {
  try {
    fn();
  } catch (e) {
    expect(e, what).toBeInstanceOf(ParleError);
    expect((e as ParleError).code, what).toBe('CORRUPT');
    return;
  }
  throw new Error(`${what}: no CORRUPT thrown`);
}

const HASH_SIZES = [0, 1, 2, 3, 4, 5, 15, 16, 17, 31, 63, 64, 4095, 4096, 4097, 2 * 4096 + 5, 1_000_003];

describeGpu('GPU tree hash (XXH32 blocks, docs/format.md)', () => {
  gpuTest(`single ranges at offsets 0..3 and 257, sizes ${HASH_SIZES.join(', ')}`, async (ctx, rng) => {
    for (const n of HASH_SIZES) {
      const bytes = randomBytes(n, rng);
      const want = ref.treeHash(bytes);
      for (const offset of [0, 1, 2, 3, 257]) {
        const buf = bufferWith(ctx, offset + n + 3, [[offset, bytes]]);
        expect((await treeHash(ctx, buf, offset, n)) >>> 0, `n=${n} offset=${offset}`).toBe(want);
        buf.destroy();
      }
    }
  });

  gpuTest('empty input is XXH32 of no bytes (0x02CC5D05); 4096 bytes are one XXH32', async (ctx, rng) => {
    const buf = bufferWith(ctx, 4096, [[0, randomBytes(4096, rng)]]);
    expect(await treeHash(ctx, buf, 17, 0)).toBe(0x02cc5d05);
    const bytes = (await readAll(ctx, buf)).subarray(0, 4096);
    expect(await treeHash(ctx, buf, 0, 4096)).toBe(ref.xxh32(bytes, 0));
  });

  gpuTest('three levels: 4096 * 4096 + 7 bytes at offset 5', async (ctx, rng) => {
    const n = 4096 * 4096 + 7;
    const bytes = randomBytes(n, rng);
    const buf = bufferWith(ctx, n + 5, [[5, bytes]]);
    expect(await treeHash(ctx, buf, 5, n)).toBe(ref.treeHash(bytes));
  });

  gpuTest('two levels just past one: 4096 * 1024 + 1 bytes', async (ctx, rng) => {
    const n = 4096 * 1024 + 1;
    const bytes = randomBytes(n, rng);
    const buf = bufferWith(ctx, n, [[0, bytes]]);
    expect(await treeHash(ctx, buf, 0, n)).toBe(ref.treeHash(bytes));
    expect(await treeHash(ctx, buf, 0, n - 1)).toBe(ref.treeHash(bytes.subarray(0, n - 1)));
  });

  const manyRanges = async (ctx: GpuContext, rng: Rng): Promise<void> => {
    const size = 3 << 20;
    const bytes = randomBytes(size, rng);
    const buf = bufferWith(ctx, size, [[0, bytes]]);
    const ranges = [
      { byteOffset: 0, byteLength: 0 },
      { byteOffset: 1, byteLength: 4097 },
      { byteOffset: 100_003, byteLength: 2 << 20 }, // > 1024 blocks: two levels
      { byteOffset: 7, byteLength: 4096 },
      { byteOffset: size - 3, byteLength: 3 },
      { byteOffset: size, byteLength: 0 },
      { byteOffset: 12_345, byteLength: 70_001 },
    ];
    for (let i = 0; i < 20; i++) {
      const len = rng.below(50_000);
      ranges.push({ byteOffset: rng.below(size - len), byteLength: len });
    }
    const got = await treeHashes(ctx, buf, ranges);
    expect(got.length).toBe(ranges.length);
    ranges.forEach((r, i) => {
      expect(got[i], `range ${i} (${r.byteOffset}, ${r.byteLength})`).toBe(
        ref.treeHash(bytes.subarray(r.byteOffset, r.byteOffset + r.byteLength)),
      );
    });
    expect((await treeHashes(ctx, buf, [])).length).toBe(0);
  };
  gpuTest('many ranges in one submission (overlapping, empty, unaligned)', manyRanges);
  gpuTest(
    'many ranges split over storage bindings of 64 KiB',
    async (ctx, rng) => {
      // the 2 MiB range cannot fit one binding: ranges up to the binding limit only
      const size = 1 << 20;
      const bytes = randomBytes(size, rng);
      const buf = bufferWith(ctx, size, [[0, bytes]]);
      const ranges: { byteOffset: number; byteLength: number }[] = [];
      for (let i = 0; i < 40; i++) {
        const len = rng.below(60_000);
        ranges.push({ byteOffset: rng.below(size - len), byteLength: len });
      }
      const got = await treeHashes(ctx, buf, ranges);
      ranges.forEach((r, i) => expect(got[i], `range ${i}`).toBe(ref.treeHash(bytes.subarray(r.byteOffset, r.byteOffset + r.byteLength))));
      await expect(treeHash(ctx, buf, 0, 1 << 17)).rejects.toMatchObject({ code: 'TOO_LARGE' });
    },
    { maxStorageBindingBytes: 1 << 16 },
  );

  gpuTest('bad arguments: a range past the buffer, a buffer without STORAGE', async (ctx) => {
    const buf = bufferWith(ctx, 64);
    await expect(treeHash(ctx, buf, 60, 8)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    await expect(treeHash(ctx, buf, -1, 8)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    const plain = ctx.device.createBuffer({ size: 64, usage: GPUBufferUsage.COPY_DST });
    await expect(treeHash(ctx, plain, 0, 8)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
  });
});

/** Uploads streams (at `srcOffsets`) and decodes them into one buffer at `dstOffsets`; returns it. */
async function decodeStreams(
  ctx: GpuContext,
  streams: Uint8Array[],
  decoded: number[],
  srcOffsets: number[],
  dstOffsets: number[],
): Promise<{ all: Uint8Array; dstSize: number }> {
  const srcSize = Math.max(4, ...streams.map((st, i) => srcOffsets[i] + st.length + 5));
  const dstSize = Math.max(4, ...decoded.map((d, i) => dstOffsets[i] + Math.ceil(d / 4) * 4 + 16));
  const src = bufferWith(
    ctx,
    srcSize,
    streams.map((st, i) => [srcOffsets[i], st]),
  );
  const dst = bufferWith(ctx, dstSize);
  const jobs: HuffmanDecodeJob[] = streams.map((st, i) => ({
    stream: parseHuffmanStream(st, decoded[i]),
    srcByteOffset: srcOffsets[i],
    dstByteOffset: dstOffsets[i],
  }));
  try {
    await huffmanDecode(ctx, src, dst, jobs);
    return { all: await readAll(ctx, dst), dstSize };
  } finally {
    src.destroy();
    dst.destroy();
  }
}

const HUFFMAN_SIZES = [1, 2, 3, 5, 1023, 1024, 1025, 4096, 16_384 + 3, 100_001];

/**
 * Offsets of byte ranges of `sizes` laid out in order from `start`, each rounded up to a multiple
 * of `align` and followed by `gap()` bytes.
 */
function layOut(sizes: number[], start: number, gap: () => number, align = 1): number[] {
  const offsets: number[] = [];
  let at = start;
  for (const size of sizes) {
    offsets.push(at);
    at += Math.ceil(size / align) * align + gap();
  }
  return offsets;
}

/**
 * `stream` (or its first `length` bytes) with the end offsets of `segments` one byte lower: each
 * such segment loses its last byte to the next (or, the last, to the stream's end).
 */
function cutSegmentEnds(stream: Uint8Array, offsetsAt: number, segments: number[], length = stream.length): Uint8Array {
  const cut = stream.slice(0, length);
  const view = new DataView(cut.buffer);
  for (const k of segments) view.setUint32(offsetsAt + 4 * k, view.getUint32(offsetsAt + 4 * k, true) - 1, true);
  return cut;
}

/**
 * Decodes `streams` laid out at random (unaligned sources with gaps; outputs adjacent or a word
 * apart) and checks each output against `inputs`: the bytes before the first output untouched,
 * every output exact, the padding after each zero.
 */
async function decodeLaidOut(ctx: GpuContext, rng: Rng, streams: Uint8Array[], inputs: Uint8Array[], what: string): Promise<void> {
  const srcOffsets = layOut(
    streams.map((st) => st.length),
    rng.below(4),
    () => rng.below(5),
  );
  const dstOffsets = layOut(
    inputs.map((b) => b.length),
    4 * rng.below(2),
    () => 4 * rng.below(2),
    4,
  );
  const { all, dstSize } = await decodeStreams(
    ctx,
    streams,
    inputs.map((b) => b.length),
    srcOffsets,
    dstOffsets,
  );
  for (let i = 0; i < dstOffsets[0]; i++) expect(all[i], `${what}: byte ${i} before the outputs`).toBe(SENTINEL);
  inputs.forEach((b, i) => {
    const stream = `${what} stream ${i} (mode ${streams[i][0]}, ${b.length} bytes)`;
    expectBytes(all.subarray(dstOffsets[i], dstOffsets[i] + b.length), b, stream);
    expectPadding(all, dstOffsets[i] + b.length, i + 1 < inputs.length ? dstOffsets[i + 1] : dstSize, stream);
  });
}

/**
 * Streams of `encode` (of skewed bytes) with 1..3 bits of their bitstreams flipped (the header
 * stays valid) decode on the GPU to what the reference decodes, or are CORRUPT where the
 * reference rejects them. Both outcomes must occur: `rounds` rounds, then more until each kind
 * has (any seed: PARLE_TEST_SEED=random).
 */
async function agreesOnFlippedStreams(ctx: GpuContext, rng: Rng, rounds: number, encode: (bytes: Uint8Array) => Uint8Array): Promise<void> {
  let flagged = 0;
  let round = 0;
  for (; round < rounds || ((flagged === 0 || flagged === round) && round < 10 * rounds); round++) {
    const n = 1 + rng.below(20_000);
    const bytes = skewedBytes(n, rng, 2 + rng.below(60));
    const stream = encode(bytes);
    const info = parseHuffmanStream(stream, n);
    const bad = stream.slice();
    const flips = 1 + rng.below(3);
    for (let f = 0; f < flips && info.bitsAt < bad.length; f++) {
      const k = info.bitsAt + rng.below(bad.length - info.bitsAt);
      bad[k] ^= 1 << rng.below(8);
    }
    let want: Uint8Array | undefined;
    try {
      want = ref.huffmanDecodeStream(bad, n);
    } catch {
      want = undefined;
    }
    if (want === undefined) {
      flagged++;
      await expectCorrupt(decodeStreams(ctx, [bad], [n], [1], [0]), `round ${round}: reference rejects`);
    } else {
      const { all } = await decodeStreams(ctx, [bad], [n], [1], [0]);
      expectBytes(all.subarray(0, n), want, `round ${round}`);
    }
  }
  expect(flagged, `rounds rejected by the reference, of ${round}`).toBeGreaterThan(0);
  expect(flagged, `rounds rejected by the reference, of ${round}`).toBeLessThan(round);
}

describeGpu('GPU Huffman decode (docs/format.md, Huffman streams)', () => {
  gpuTest('decode table: canonical, bit-reversed, every window', async () => {
    const lengths = new Uint8Array(256);
    lengths[0] = 1;
    lengths[1] = 2;
    lengths[2] = 2;
    const t = buildHuffmanDecodeTable(lengths);
    for (let w = 0; w < 2048; w++) {
      if ((w & 1) === 0) expect(t[w]).toBe(0 | (1 << 8));
      else if ((w & 3) === 1) expect(t[w]).toBe(1 | (2 << 8));
      else expect(t[w]).toBe(2 | (2 << 8));
    }
    lengths[2] = 3;
    expectCorruptSync(() => buildHuffmanDecodeTable(lengths), 'incomplete code');
    lengths[2] = 1;
    expectCorruptSync(() => buildHuffmanDecodeTable(lengths), 'over-full code');
    expectCorruptSync(() => buildHuffmanDecodeTable(Uint8Array.of(1)), 'one symbol');
  });

  gpuTest('decode tables built in the kernel: 40 codes (random, skewed, two-symbol, all 256) decode their streams', async (ctx, rng) => {
    const inputs: Uint8Array[] = [];
    const streams: Uint8Array[] = [];
    for (let t = 0; t < 40; t++) {
      const n = t === 0 ? 2 : t === 1 ? 256 : 2 + rng.below(200);
      const bytes = t % 3 === 2 ? skewedBytes(5000, rng, n) : randomBytes(5000, rng).map((b) => b % n);
      const stream = ref.huffmanEncodeStream(bytes, 10);
      expect(stream[0], `code ${t}: mode`).toBe(2);
      inputs.push(bytes);
      streams.push(stream);
    }
    const srcOffsets = layOut(
      streams.map((st) => st.length),
      0,
      () => 0,
    );
    const dstOffsets = inputs.map((_, i) => i * 5000);
    const { all } = await decodeStreams(
      ctx,
      streams,
      inputs.map((b) => b.length),
      srcOffsets,
      dstOffsets,
    );
    inputs.forEach((b, t) => expectBytes(all.subarray(dstOffsets[t], dstOffsets[t] + b.length), b, `code ${t}`));
  });

  gpuTest('header checks: mode, lengths and g on the host; code lengths, Kraft sum and offsets in the kernel', async (ctx, rng) => {
    const bytes = skewedBytes(3000, rng, 10);
    const stream = ref.huffmanEncodeStream(bytes, 10);
    expectCorruptSync(() => parseHuffmanStream(new Uint8Array(0), 5), 'empty');
    expectCorruptSync(() => parseHuffmanStream(Uint8Array.of(3, 1, 2), 5), 'mode 3');
    expectCorruptSync(() => parseHuffmanStream(Uint8Array.of(0, 1, 2), 5), 'raw of the wrong length');
    expectCorruptSync(() => parseHuffmanStream(Uint8Array.of(1, 1, 2), 5), 'one-symbol of 3 bytes');
    const g9 = stream.slice();
    g9[1] = 9;
    expectCorruptSync(() => parseHuffmanStream(g9, 3000), 'g = 9');
    expectCorruptSync(() => parseHuffmanStream(stream, 3000 + 1024 * 1000), 'more segments than the stream holds');
    expect(parseHuffmanStream(stream, 3000).mode).toBe(2);
    // from its first 3 bytes and its length (a container on the device): the same fields and checks
    expect(parseHuffmanStream(stream.subarray(0, 3), 3000, stream.length)).toEqual(parseHuffmanStream(stream, 3000));
    expect(parseHuffmanStream(Uint8Array.of(1, 9), 5, 2)).toEqual(parseHuffmanStream(Uint8Array.of(1, 9), 5));
    expectCorruptSync(() => parseHuffmanStream(stream.subarray(0, 3), 3000 + 1024 * 1000, stream.length), 'more segments, from 3 bytes');
    expectCorruptSync(() => parseHuffmanStream(Uint8Array.of(0, 1, 2), 5, 7), 'raw of the wrong length, from 3 bytes');
    expect(() => parseHuffmanStream(stream.subarray(0, 2), 3000, stream.length)).toThrow(/first 3 bytes/);
    // what the kernel checks: each case parses, then fails to decode with its reason
    const long = stream.slice();
    long[3] = (long[3] & 0xf0) | 12;
    const kraft = stream.slice();
    kraft[3] = (kraft[3] & 0xf0) | (((kraft[3] & 15) % 11) + 1); // symbol 0's length changed, still 1..11
    const one = stream.slice();
    for (let k = 3; k < parseHuffmanStream(stream, 3000).offsetsAt; k++) one[k] = 0;
    one[3] = 1; // symbol 0 alone, of length 1
    // [stream, what, the segment named (a code fails from segment 0, the end offset at the last), reason]
    const cases: [Uint8Array, string, number, RegExp][] = [
      [long, 'a length of 12', 0, /code lengths/],
      [kraft, 'a changed length breaks the Kraft sum', 0, /code lengths/],
      [one, 'one symbol', 0, /code lengths/],
      [stream.subarray(0, stream.length - 1), 'offsets not ending at the end', 2, /segment end offsets/],
    ];
    for (const [bad, what, segment, why] of cases) {
      expect(parseHuffmanStream(bad, 3000).mode, what).toBe(2);
      const e = await expectCorrupt(decodeStreams(ctx, [stream, bad], [3000, 3000], [0, stream.length], [0, 4096]), what);
      expect(e.message, what).toMatch(new RegExp(`stream 1: segment ${segment} `));
      expect(e.message, what).toMatch(why);
    }
  });
});

/** The Huffman decode kernel's tests. */
function huffmanDecodeTests(): void {
  gpuTest(
    `more segments than one workgroup: a stream of 2^10-symbol segments over two workgroups among streams of modes 0, 1 and 2, g = 10..13`,
    async (ctx, rng) => {
      for (let round = 0; round < 2; round++) {
        const inputs: Uint8Array[] = [];
        const streams: Uint8Array[] = [];
        for (let i = 0; i < 24; i++) {
          const n = 1 + rng.below(60_000);
          // streams 0 and 1 are of modes 1 (one symbol) and 0 (raw), so that every round has all
          // three modes (drawn at random, 24 streams miss one of them in about 2 % of rounds)
          const kind = i < 2 ? i + 1 : rng.below(6);
          const b =
            kind === 0 ? randomBytes(n, rng) : kind === 1 ? new Uint8Array(n).fill(rng.below(256)) : skewedBytes(n, rng, 2 + rng.below(60));
          inputs.push(b);
          if (kind === 2) {
            const raw = new Uint8Array(n + 1); // mode 0, 16 KiB virtual segments
            raw.set(b, 1);
            streams.push(raw);
          } else {
            streams.push(ref.huffmanEncodeStream(b, 10 + rng.below(4)));
          }
        }
        // one mode-2 stream of more than 256 segments (its last one short), somewhere among them
        const big = skewedBytes(300 * 1024 + 1 + rng.below(1000), rng, 30);
        const at = rng.below(inputs.length + 1);
        inputs.splice(at, 0, big);
        streams.splice(at, 0, ref.huffmanEncodeStream(big, 10));
        expect(parseHuffmanStream(streams[at], big.length).segments).toBe(301);
        // a raw and a one-symbol stream over more than two workgroups' pieces (128 KiB each),
        // their last words partial
        const raw = randomBytes(2 * 128 * 1024 + 4 * rng.below(1000) + 1 + rng.below(3), rng);
        const fill = new Uint8Array(3 * 128 * 1024 + 5 + rng.below(2)).fill(1 + rng.below(255));
        const at2 = rng.below(inputs.length + 1);
        inputs.splice(at2, 0, raw, fill);
        const rawStream = new Uint8Array(1 + raw.length);
        rawStream.set(raw, 1);
        streams.splice(at2, 0, rawStream, Uint8Array.of(1, fill[0]));
        expect(new Set(streams.map((st) => st[0])), `round ${round}: modes`).toEqual(new Set([0, 1, 2]));
        await decodeLaidOut(ctx, rng, streams, inputs, `round ${round}`);
      }
    },
  );

  gpuTest(`bad segments past the first workgroup: CORRUPT names the first, counts every one`, async (ctx, rng) => {
    const n = 600 * 1024 + 77;
    const bytes = skewedBytes(n, rng, 30);
    const stream = ref.huffmanEncodeStream(bytes, 10);
    const info = parseHuffmanStream(stream, n);
    expect(info.segments).toBe(601);
    // segments 300 and 450 lose their last byte to the next segment: both run out of bits
    const cut = cutSegmentEnds(stream, info.offsetsAt, [450, 300]);
    const e = await expectCorrupt(
      decodeStreams(ctx, [stream, cut], [n, n], [0, stream.length], [0, 4 * 160_000]),
      'segments 300 and 450 cut',
    );
    expect(e.message).toMatch(/stream 1: segment 300 /);
    expect(e.message).toMatch(/bits past its end/);
    expect(Number(/\((\d+) failures\)/.exec(e.message)?.[1])).toBeGreaterThanOrEqual(2);
    // segment 520 ends before it starts: found by the kernel (the host reads no offsets), here
    // with the stream parsed before its bytes changed
    const back = stream.slice();
    new DataView(back.buffer).setUint32(info.offsetsAt + 4 * 520, 0, true);
    const src = bufferWith(ctx, back.length + 8, [[3, back]]);
    const dst = bufferWith(ctx, n + 8);
    try {
      const e2 = await expectCorrupt(
        huffmanDecode(ctx, src, dst, [{ stream: info, srcByteOffset: 3, dstByteOffset: 0 }]),
        'segment 520 ends at 0',
      );
      expect(e2.message).toMatch(/stream 0: segment 520 .*segment end offsets that decrease/);
    } finally {
      src.destroy();
      dst.destroy();
    }
  });

  gpuTest(`bitstreams in the first words of the source (two symbols at random: a header of 8 bytes)`, async (ctx, rng) => {
    for (let offset = 0; offset < 8; offset++) {
      const n = 900 + rng.below(100);
      const bytes = new Uint8Array(n).map(() => rng.below(2));
      const stream = ref.huffmanEncodeStream(bytes, 10);
      const { all } = await decodeStreams(ctx, [stream], [n], [offset], [0]);
      expectBytes(all.subarray(0, n), bytes, `source offset ${offset}`);
    }
  });

  for (const g of [10, 14, 20]) {
    gpuTest(`single streams, g=${g}, sizes ${HUFFMAN_SIZES.join(', ')}, random and skewed bytes`, async (ctx, rng) => {
      for (const n of HUFFMAN_SIZES) {
        for (const kind of ['random', 'skewed', 'two symbols'] as const) {
          const bytes = kind === 'random' ? randomBytes(n, rng) : kind === 'skewed' ? skewedBytes(n, rng) : skewedBytes(n, rng, 2);
          const stream = ref.huffmanEncodeStream(bytes, g);
          const dstOffset = 4 * rng.below(3);
          const { all } = await decodeStreams(ctx, [stream], [n], [rng.below(8)], [dstOffset]);
          const what = `g=${g} n=${n} ${kind} (mode ${stream[0]})`;
          for (let i = 0; i < dstOffset; i++) expect(all[i], `${what}: byte ${i} before the output`).toBe(SENTINEL);
          expectBytes(all.subarray(dstOffset, dstOffset + n), bytes, what);
          expectPadding(all, dstOffset + n, all.length, what);
        }
      }
    });
  }

  gpuTest(`modes 0, 1 and 2 side by side, unaligned sources, outputs sharing words around them`, async (ctx, rng) => {
    for (let round = 0; round < 4; round++) {
      const inputs: Uint8Array[] = [];
      for (let i = 0; i < 9; i++) {
        const n = [0, 1, 3, 1024, 1025, 5000, 40_000, 70_001][rng.below(8)];
        const kind = rng.below(4);
        inputs.push(kind === 0 ? randomBytes(n, rng) : kind === 1 ? new Uint8Array(n).fill(rng.below(256)) : skewedBytes(n, rng));
      }
      const streams = inputs.map((b) => (rng.below(5) === 0 ? Uint8Array.of(0, ...b) : ref.huffmanEncodeStream(b, 10 + rng.below(6))));
      const srcOffsets = layOut(
        streams.map((st) => st.length),
        rng.below(4),
        () => rng.below(5),
      );
      // adjacent outputs, or a gap of one word
      const dstOffsets = layOut(
        inputs.map((b) => b.length),
        0,
        () => 4 * rng.below(2),
        4,
      );
      const { all, dstSize } = await decodeStreams(
        ctx,
        streams,
        inputs.map((b) => b.length),
        srcOffsets,
        dstOffsets,
      );
      inputs.forEach((b, i) => {
        expectBytes(
          all.subarray(dstOffsets[i], dstOffsets[i] + b.length),
          b,
          `round ${round} stream ${i} (mode ${streams[i][0]}, ${b.length} bytes)`,
        );
        const next = i + 1 < inputs.length ? dstOffsets[i + 1] : dstSize;
        if (b.length > 0) expectPadding(all, dstOffsets[i] + b.length, next, `round ${round} stream ${i}`);
      });
    }
  });

  gpuTest(`agrees with the reference decoder on random and bit-flipped streams`, (ctx, rng) =>
    agreesOnFlippedStreams(ctx, rng, 40, (bytes) => ref.huffmanEncodeStream(bytes, 10 + rng.below(3))),
  );

  gpuTest(`a segment needing bits past its end is CORRUPT, naming the first bad segment`, async (ctx, rng) => {
    const n = 5 * 1024 + 100;
    const bytes = skewedBytes(n, rng, 30);
    const stream = ref.huffmanEncodeStream(bytes, 10);
    const info = parseHuffmanStream(stream, n);
    expect(info.segments).toBe(6);
    // move segment 2's last byte to segment 3: segment 2 runs out of bits
    const cut = cutSegmentEnds(stream, info.offsetsAt, [2]);
    const e = await expectCorrupt(decodeStreams(ctx, [cut], [n], [0], [0]), 'shortened segment 2');
    expect(e.message).toMatch(/stream 0: segment 2 /);
    expect(() => ref.huffmanDecodeStream(cut, n)).toThrow(/corrupt/);

    // the last segment truncated: one byte less in the stream and in its end offset
    const short = cutSegmentEnds(stream, info.offsetsAt, [5], stream.length - 1);
    const e2 = await expectCorrupt(decodeStreams(ctx, [short], [n], [3], [0]), 'truncated last segment');
    expect(e2.message).toMatch(/segment 5 /);

    // a bad stream among good ones: the error names it
    const good = ref.huffmanEncodeStream(bytes, 10);
    const e3 = await expectCorrupt(
      decodeStreams(ctx, [good, good, cut], [n, n, n], [0, good.length, 2 * good.length], [0, 8192, 16384]),
      'third stream',
    );
    expect(e3.message).toMatch(/stream 2: segment 2 /);
  });
}

describeGpu('GPU Huffman decode, a workgroup of segments a stream', () => {
  huffmanDecodeTests();
});

/**
 * `stream` with segment k's end offset moved by `delta` bytes (the bytes of the segments stay
 * where they are): segment k gains or loses bytes at its end and segment k + 1 at its start.
 */
function moveSegmentEnd(stream: Uint8Array, offsetsAt: number, k: number, delta: number): Uint8Array {
  const moved = stream.slice();
  const view = new DataView(moved.buffer);
  view.setUint32(offsetsAt + 4 * k, view.getUint32(offsetsAt + 4 * k, true) + delta, true);
  return moved;
}

describeGpu('GPU Huffman decode and encode of mode 3 (docs/format.md, "Mode 3: interleaved lanes")', () => {
  gpuTest(
    'decode: streams of modes 0-3 side by side, mode 3 at g = 10..13 over several workgroups (8 segments each), unaligned sources',
    async (ctx, rng) => {
      for (let round = 0; round < 3; round++) {
        const inputs: Uint8Array[] = [];
        const streams: Uint8Array[] = [];
        for (let i = 0; i < 14; i++) {
          const n = [1, 3, 100, 127, 128, 129, 1024, 4097, 40_000, 70_001][rng.below(10)];
          // streams 0-3 of modes 0 (raw), 1 (one symbol), 2 and 3; then at random
          const kind = i < 4 ? i : rng.below(5);
          const b =
            kind === 0 ? randomBytes(n, rng) : kind === 1 ? new Uint8Array(n).fill(rng.below(256)) : skewedBytes(n, rng, 2 + rng.below(80));
          if (kind >= 2 && b.length > 1 && b.every((x) => x === b[0])) b[1] ^= 1;
          inputs.push(b);
          if (kind === 0) streams.push(Uint8Array.of(0, ...b));
          else if (kind === 2) streams.push(ref.huffmanEncodeStream(b, 10 + rng.below(4)));
          else streams.push(ref.huffmanEncodeLanesStream(b, 10 + rng.below(4)));
        }
        // one mode-3 stream of 75 segments of 2^12 (10 workgroups, the last one short)
        const big = skewedBytes(75 * 4096 - 1 - rng.below(4000), rng, 40);
        inputs.push(big);
        streams.push(ref.huffmanEncodeLanesStream(big, 12));
        expect(parseHuffmanStream(streams[streams.length - 1], big.length)).toMatchObject({ mode: 3, segments: 75 });
        expect(new Set(streams.map((st) => st[0])), `round ${round}: modes`).toEqual(new Set([0, 1, 2, 3]));
        await decodeLaidOut(ctx, rng, streams, inputs, `round ${round}`);
      }
    },
  );

  gpuTest('decode agrees with the reference decoder on bit-flipped mode-3 streams', (ctx, rng) =>
    agreesOnFlippedStreams(ctx, rng, 30, (bytes) => ref.huffmanEncodeLanesStream(bytes, 10 + rng.below(3))),
  );

  gpuTest('decode: lying segment ends are CORRUPT, naming the first bad segment and the reason', async (ctx, rng) => {
    const n = 20 * 4096 + 300;
    const bytes = skewedBytes(n, rng, 30);
    const stream = ref.huffmanEncodeLanesStream(bytes, 12);
    const info = parseHuffmanStream(stream, n);
    expect(info.segments).toBe(21);
    // segment 9 one unit short (its lanes read past its units), segment 10 one unit long (left unread)
    const e1 = await expectCorrupt(decodeStreams(ctx, [moveSegmentEnd(stream, info.offsetsAt, 9, -2)], [n], [2], [0]), 'a unit moved');
    expect(e1.message).toMatch(/stream 0: segment 9 .*read past its units or leave units unread/);
    expect(Number(/\((\d+) failures?\)/.exec(e1.message)?.[1])).toBeGreaterThanOrEqual(2);
    // one unit more: segment 12 leaves it unread, segment 13 misses it
    const e2 = await expectCorrupt(decodeStreams(ctx, [moveSegmentEnd(stream, info.offsetsAt, 12, 2)], [n], [0], [0]), 'a unit gained');
    expect(e2.message).toMatch(/stream 0: segment 12 /);
    // an odd length
    const e3 = await expectCorrupt(decodeStreams(ctx, [moveSegmentEnd(stream, info.offsetsAt, 15, 1)], [n], [1], [0]), 'odd length');
    expect(e3.message).toMatch(/stream 0: segment 15 .*segment end offsets/);
    // the last segment not ending at the stream's end
    const e4 = await expectCorrupt(decodeStreams(ctx, [moveSegmentEnd(stream, info.offsetsAt, 20, -2)], [n], [3], [0]), 'last end');
    expect(e4.message).toMatch(/segment 20 /);
    for (const [k, d] of [
      [9, -2],
      [12, 2],
      [15, 1],
    ])
      expect(() => ref.huffmanDecodeStream(moveSegmentEnd(stream, info.offsetsAt, k, d), n), `reference, segment ${k} moved ${d}`).toThrow(
        /corrupt/,
      );
  });

  gpuTest(
    'encode equals the reference encoder: g = 10, 11, 12, sizes around the lanes and segments, many jobs a call',
    async (ctx, rng) => {
      const sizes = [1, 2, 5, 127, 128, 129, 1023, 1024, 4095, 4096, 4097, 16_387, 100_001];
      for (const g of [10, 11, 12]) {
        const inputs = sizes.map((n, i) => (i % 3 === 0 ? randomBytes(n, rng) : skewedBytes(n, rng, 2 + rng.below(100))));
        for (const b of inputs) if (b.length > 1 && b.every((x) => x === b[0])) b[1] ^= 1;
        const offsets = layOut(sizes, rng.below(4), () => rng.below(5));
        const buf = bufferWith(
          ctx,
          offsets[offsets.length - 1] + sizes[sizes.length - 1] + 8,
          inputs.map((b, i) => [offsets[i], b]),
        );
        try {
          const jobs: HuffmanEncodeJob[] = inputs.map((b, i) => ({
            srcByteOffset: offsets[i],
            byteLength: b.length,
            lengths: b.length > 1 ? ref.huffmanCodeLengths(Array.from(countBytes(b))) : lengthsFor(b),
            segmentLog2: g,
            mode: 3,
          }));
          const got = await huffmanEncodeStreams(ctx, buf, jobs);
          inputs.forEach((b, i) => {
            const what = `g=${g} n=${b.length}`;
            if (b.length > 1) expectBytes(got[i], ref.huffmanEncodeLanesStream(b, g), what);
            expect(got[i][0], `${what}: mode`).toBe(3);
            expectBytes(ref.huffmanDecodeStream(got[i], b.length), b, `${what}: reference decode`);
          });
        } finally {
          buf.destroy();
        }
      }
    },
  );

  gpuTest('the ballot variant of the decode (subgroups of 32 or more: real GPUs, not SwiftShader) compiles', async (ctx) => {
    // SwiftShader's subgroups are 4 wide, so the tests above run the workgroup-memory variant;
    // the ballot variant's results are checked on a real GPU (bench/gpu-corpus.mjs decodes and
    // compares every container), its WGSL here
    if (!ctx.hasSubgroups) return; // no subgroups: the variant is never chosen
    const code = composeKernel(`${huffmanSource}\n${readSrcSource}\n${lanesBallotSource}`, { subgroups: true, scalar: 'u32' });
    ctx.device.pushErrorScope('validation');
    const module = ctx.device.createShaderModule({ code });
    const errors = (await module.getCompilationInfo()).messages.filter((m) => m.type === 'error');
    ctx.device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'decode' } });
    expect(await ctx.device.popErrorScope()).toBeNull();
    expect(errors.map((m) => m.message)).toEqual([]);
  });

  gpuTest('encode: jobs of two modes in one call, mode 3 beyond g = 12 and a bad mode are refused', async (ctx) => {
    const buf = bufferWith(ctx, 64, [[0, new Uint8Array(64).map((_, i) => i & 3)]]);
    const lengths = lengthsFor(new Uint8Array(64).map((_, i) => i & 3));
    const job = (mode: unknown, g = 12) => ({ srcByteOffset: 0, byteLength: 64, lengths, segmentLog2: g, mode }) as HuffmanEncodeJob;
    await expect(huffmanEncodeStreams(ctx, buf, [job(3), job(2)])).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      message: /jobs\[1\]\.mode/,
    });
    await expect(huffmanEncodeStreams(ctx, buf, [job(3, 13)])).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', message: /10\.\.12/ });
    await expect(huffmanEncodeStreams(ctx, buf, [job(4)])).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      message: /mode must be 2 or 3/,
    });
    // a byte without a code is named in mode 3 as in mode 2
    const partial = new Uint8Array(256);
    partial[0] = 1;
    partial[1] = 1;
    await expect(
      huffmanEncodeStreams(ctx, buf, [{ srcByteOffset: 0, byteLength: 64, lengths: partial, segmentLog2: 10, mode: 3 }]),
    ).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', message: /byte value 2 has no code/ });
    buf.destroy();
  });
});

const DELTA_COUNTS = [0, 1, 2, 3, 4, 5, 7, 8, 9, 4095, 4096, 4097, 16_385, 70_001, 300_007];

describeGpu('GPU delta encode and decode', () => {
  for (const width of [1, 2, 4] as const) {
    gpuTest(`width ${width}, counts ${DELTA_COUNTS.join(', ')}, unaligned word offsets`, async (ctx, rng) => {
      for (const count of DELTA_COUNTS) {
        const bytes = randomBytes(count * width, rng);
        const srcOff = 4 * rng.below(100);
        const dstOff = 4 * rng.below(100);
        const outBytes = Math.ceil(bytes.length / 4) * 4;
        // garbage in the input's pad bytes must not leak into the sums
        const src = bufferWith(ctx, srcOff + outBytes + 8, [[srcOff, bytes]]);
        for (const [dir, fn, want] of [
          ['encode', deltaEncode, ref.deltaEncode(bytes, width)],
          ['decode', deltaDecode, ref.deltaDecode(bytes, width)],
        ] as const) {
          const dst = bufferWith(ctx, dstOff + outBytes + 8);
          await fn(ctx, { src, srcByteOffset: srcOff, dst, dstByteOffset: dstOff, width, count });
          const all = await readAll(ctx, dst);
          for (let i = 0; i < dstOff; i++)
            if (all[i] !== SENTINEL) throw new Error(`${dir} n=${count}: byte ${i} before the output written`);
          expectBytes(all.subarray(dstOff, dstOff + bytes.length), want, `${dir} width ${width} n=${count}`);
          expectPadding(all, dstOff + bytes.length, all.length, `${dir} width ${width} n=${count}`);
          dst.destroy();
        }
        src.destroy();
      }
    });
  }

  gpuTest('round trip of smooth data, and many tiles (> 4096 tile sums: two carry batches)', async (ctx, rng) => {
    const count = 4096 * 4096 * 4 + 1001; // width 1: 4097 tiles of 16 KiB
    const bytes = new Uint8Array(count);
    for (let i = 0; i < count; i++) bytes[i] = (i * 7 + (rng.u32() & 3)) & 0xff;
    const a = bufferWith(ctx, count, [[0, bytes]]);
    const b = bufferWith(ctx, count);
    const c = bufferWith(ctx, count);
    await deltaEncode(ctx, { src: a, dst: b, width: 1, count });
    await deltaDecode(ctx, { src: b, dst: c, width: 1, count });
    const back = await readAll(ctx, c);
    expectBytes(back.subarray(0, count), bytes, 'round trip');
    const enc = await readAll(ctx, b);
    expectBytes(enc.subarray(0, count), ref.deltaEncode(bytes, 1), 'encode');
  });

  gpuTest('chunkLength: every chunk encoded on its own, in one dispatch', async (ctx, rng) => {
    for (const width of [1, 2, 4] as const) {
      for (const [count, chunkLength] of [
        [1000, 4 / width],
        [70_001, 4096],
        [70_001, 16_388 / width],
        [12, 1000],
      ]) {
        const bytes = randomBytes(count * width, rng);
        const srcOff = 4 * rng.below(10);
        const outBytes = Math.ceil(bytes.length / 4) * 4;
        const src = bufferWith(ctx, srcOff + outBytes + 8, [[srcOff, bytes]]);
        const dst = bufferWith(ctx, outBytes + 8);
        await deltaEncode(ctx, { src, srcByteOffset: srcOff, dst, width, count, chunkLength });
        const want = new Uint8Array(bytes.length);
        for (let start = 0; start < count; start += chunkLength) {
          const part = bytes.subarray(start * width, Math.min(count, start + chunkLength) * width);
          want.set(ref.deltaEncode(part, width), start * width);
        }
        const all = await readAll(ctx, dst);
        expectBytes(all.subarray(0, bytes.length), want, `width ${width} n=${count} chunk ${chunkLength}`);
        expectPadding(all, bytes.length, outBytes, `width ${width} n=${count} chunk ${chunkLength}`);
        src.destroy();
        dst.destroy();
      }
    }
    const a = bufferWith(ctx, 64);
    const b = bufferWith(ctx, 64);
    // chunks must start at whole words, and only an encode takes them
    await expect(deltaEncode(ctx, { src: a, dst: b, width: 1, count: 16, chunkLength: 6 })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
    await expect(deltaDecode(ctx, { src: a, dst: b, width: 1, count: 16, chunkLength: 4 })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
  });

  gpuTest('many chunks decoded in place in one submission, in any order, gaps and neighbours kept', async (ctx, rng) => {
    for (const width of [1, 2, 4] as const) {
      // chunks of 0..3 tiles and odd sizes (the last word of a chunk partly its own), gaps between some
      const counts = [1, 3, 4097, 16_385, 5, 0, 70_001 - (70_001 % (4 / width)), 8192, 7];
      const chunks: { byteOffset: number; count: number; bytes: Uint8Array }[] = [];
      let at = 0;
      for (const count of counts) {
        at += 4 * rng.below(3);
        chunks.push({ byteOffset: at, count, bytes: randomBytes(count * width, rng) });
        at += Math.ceil((count * width) / 4) * 4;
      }
      const data = bufferWith(
        ctx,
        at + 8,
        chunks.map((c) => [c.byteOffset, ref.deltaEncode(c.bytes, width)] as [number, Uint8Array]),
      );
      const before = await readAll(ctx, data);
      const shuffled = [...chunks].sort(() => rng.below(3) - 1);
      await ctx.submit('test delta chunks', (s) => encodeDeltaDecodeChunks(ctx, s, data, width, shuffled));
      const after = await readAll(ctx, data);
      const want = before.slice();
      for (const c of chunks) want.set(c.bytes, c.byteOffset);
      expectBytes(after, want, `width ${width}`);
      data.destroy();
    }
    const d = bufferWith(ctx, 64);
    await expect(
      ctx.submit('test', (s) =>
        encodeDeltaDecodeChunks(ctx, s, d, 1, [
          { byteOffset: 0, count: 8 },
          { byteOffset: 4, count: 4 },
        ]),
      ),
    ).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    await expect(ctx.submit('test', (s) => encodeDeltaDecodeChunks(ctx, s, d, 1, [{ byteOffset: 2, count: 4 }]))).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
    await expect(ctx.submit('test', (s) => encodeDeltaDecodeChunks(ctx, s, d, 4, [{ byteOffset: 0, count: 17 }]))).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
    d.destroy();
  });

  gpuTest('bad arguments', async (ctx) => {
    const a = bufferWith(ctx, 64);
    await expect(deltaDecode(ctx, { src: a, dst: a, width: 1, count: 4 })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    const b = bufferWith(ctx, 64);
    await expect(deltaDecode(ctx, { src: a, dst: b, width: 3 as 1, count: 4 })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    await expect(deltaDecode(ctx, { src: a, dst: b, dstByteOffset: 2, width: 1, count: 4 })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
    await expect(deltaDecode(ctx, { src: a, dst: b, width: 4, count: 17 })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
  });
});

const SHUFFLE_COUNTS = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 1023, 4097, 100_003];

/**
 * Chunks of random elements (counts around words and a large one, one empty) laid out with
 * gaps of 0-8 bytes: each chunk's elements at elementsByteOffset and its planes (their bytes:
 * `planes`) at planeByteOffsets. `elemAt` and `planeAt`: the bytes each layout takes.
 */
function shuffleChunkLayout(width: 2 | 4, rng: Rng) {
  let planeAt = 0;
  let elemAt = 0;
  const chunks = [1, 3, 4, 5, 1023, 0, 70_001, 8, 7].map((count) => {
    const bytes = randomBytes(count * width, rng);
    const planes = ref.shuffle(bytes, width);
    const planeByteOffsets = planes.map(() => {
      planeAt += 4 * rng.below(3);
      const at = planeAt;
      planeAt += Math.ceil(count / 4) * 4;
      return at;
    });
    elemAt += 4 * rng.below(3);
    const chunk = { bytes, planes, planeByteOffsets, elementsByteOffset: elemAt, count };
    elemAt += Math.ceil((count * width) / 4) * 4;
    return chunk;
  });
  return { chunks, planeAt, elemAt };
}

describeGpu('GPU byte-plane shuffle and unshuffle', () => {
  for (const width of [2, 4] as const) {
    gpuTest(`width ${width}, counts ${SHUFFLE_COUNTS.join(', ')}`, async (ctx, rng) => {
      for (const count of SHUFFLE_COUNTS) {
        const bytes = randomBytes(count * width, rng);
        const planeWords = Math.ceil(count / 4) * 4;
        // planes in scrambled order with gaps
        const order = Array.from({ length: width }, (_, k) => k).sort(() => rng.below(3) - 1);
        const planeOffsets = new Array<number>(width);
        let at = 4 * rng.below(80);
        for (const k of order) {
          planeOffsets[k] = at;
          at += planeWords + 4 * rng.below(2);
        }
        const planesSize = at + 8;
        const elemOff = 4 * rng.below(80);
        const elemBytes = Math.ceil((count * width) / 4) * 4;

        // shuffle
        const elements = bufferWith(ctx, elemOff + elemBytes + 8, [[elemOff, bytes]]);
        const planes = bufferWith(ctx, planesSize);
        await shuffle(ctx, { elements, elementsByteOffset: elemOff, planes, planeByteOffsets: planeOffsets, width, count });
        const gotPlanes = await readAll(ctx, planes);
        const wantPlanes = ref.shuffle(bytes, width);
        for (let k = 0; k < width; k++) {
          expectBytes(
            gotPlanes.subarray(planeOffsets[k], planeOffsets[k] + count),
            wantPlanes[k],
            `shuffle w=${width} n=${count} plane ${k}`,
          );
          for (let i = planeOffsets[k] + count; i < planeOffsets[k] + planeWords; i++) expect(gotPlanes[i]).toBe(0);
        }
        // gaps between planes untouched
        const covered = new Uint8Array(planesSize);
        for (const o of planeOffsets) covered.fill(1, o, o + planeWords);
        for (let i = 0; i < planesSize; i++)
          if (count > 0 && !covered[i] && gotPlanes[i] !== SENTINEL) throw new Error(`shuffle: byte ${i} outside the planes written`);

        // unshuffle the planes back (from the reference's planes, placed with sentinel pads)
        const src = bufferWith(
          ctx,
          planesSize,
          wantPlanes.map((p, k) => [planeOffsets[k], p] as [number, Uint8Array]),
        );
        const out = bufferWith(ctx, elemOff + elemBytes + 8);
        await unshuffle(ctx, { elements: out, elementsByteOffset: elemOff, planes: src, planeByteOffsets: planeOffsets, width, count });
        const all = await readAll(ctx, out);
        expectBytes(all.subarray(elemOff, elemOff + bytes.length), ref.unshuffle(wantPlanes, width), `unshuffle w=${width} n=${count}`);
        expectPadding(all, elemOff + bytes.length, all.length, `unshuffle w=${width} n=${count}`);
        for (let i = 0; i < elemOff; i++) if (all[i] !== SENTINEL) throw new Error(`unshuffle: byte ${i} before the output written`);
        for (const b of [elements, planes, src, out]) b.destroy();
      }
    });
  }

  gpuTest('many chunks shuffled in one dispatch: planes anywhere, gaps kept, each plane padded with zeros', async (ctx, rng) => {
    for (const width of [2, 4] as const) {
      const { chunks, planeAt, elemAt } = shuffleChunkLayout(width, rng);
      const elements = bufferWith(
        ctx,
        elemAt + 8,
        chunks.map((c) => [c.elementsByteOffset, c.bytes] as [number, Uint8Array]),
      );
      const planesBuf = bufferWith(ctx, planeAt + 4);
      const before = await readAll(ctx, planesBuf);
      await ctx.submit('test shuffle chunks', (s) =>
        encodeShuffleChunks(ctx, s, 'shuffle', elements, planesBuf, width, [...chunks].reverse()),
      );
      const want = before.slice();
      for (const c of chunks) {
        c.planes.forEach((plane, k) => {
          const at = c.planeByteOffsets[k];
          want.fill(0, at, at + Math.ceil(c.count / 4) * 4);
          want.set(plane, at);
        });
      }
      expectBytes(await readAll(ctx, planesBuf), want, `width ${width}`);
      planesBuf.destroy();
      elements.destroy();
    }
  });

  gpuTest('many chunks unshuffled in one dispatch: planes anywhere, elements in any order, neighbours kept', async (ctx, rng) => {
    for (const width of [2, 4] as const) {
      const { chunks, planeAt, elemAt } = shuffleChunkLayout(width, rng);
      const planesBuf = bufferWith(
        ctx,
        planeAt + 4,
        chunks.flatMap((c) => c.planes.map((p, k) => [c.planeByteOffsets[k], p] as [number, Uint8Array])),
      );
      const elements = bufferWith(ctx, elemAt + 8);
      const before = await readAll(ctx, elements);
      await ctx.submit('test unshuffle chunks', (s) =>
        encodeShuffleChunks(ctx, s, 'unshuffle', elements, planesBuf, width, [...chunks].reverse()),
      );
      const want = before.slice();
      for (const c of chunks) {
        const end = c.elementsByteOffset + Math.ceil((c.count * width) / 4) * 4;
        want.fill(0, c.elementsByteOffset, end); // bytes past a chunk's end in its last word: zero
        want.set(c.bytes, c.elementsByteOffset);
      }
      expectBytes(await readAll(ctx, elements), want, `width ${width}`);
      planesBuf.destroy();
      elements.destroy();
    }
  });

  gpuTest('bad arguments', async (ctx) => {
    const a = bufferWith(ctx, 64);
    const b = bufferWith(ctx, 64);
    await expect(shuffle(ctx, { elements: a, planes: b, planeByteOffsets: [0, 4], width: 2, count: 8 })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
    await expect(shuffle(ctx, { elements: a, planes: b, planeByteOffsets: [0], width: 2, count: 8 })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
    await expect(shuffle(ctx, { elements: a, planes: a, planeByteOffsets: [0, 8], width: 2, count: 8 })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
  });
});

/** 256 counts of `bytes`, counted in JavaScript. */
function countBytes(bytes: Uint8Array): Uint32Array {
  const counts = new Uint32Array(256);
  for (const b of bytes) counts[b]++;
  return counts;
}

function expectCounts(got: Uint32Array, want: Uint32Array, what: string): void {
  for (let v = 0; v < 256; v++) if (got[v] !== want[v]) throw new Error(`${what}: count of byte ${v} is ${got[v]}, want ${want[v]}`);
}

const HISTOGRAM_SIZES = [0, 1, 2, 3, 4, 5, 7, 8, 9, 1023, 65_535, 65_536, 65_537, 200_003];

describeGpu('GPU byte histograms', () => {
  gpuTest(`single ranges at offsets 0..3 and 1001, sizes ${HISTOGRAM_SIZES.join(', ')}: random, one value, skewed`, async (ctx, rng) => {
    for (const n of HISTOGRAM_SIZES) {
      for (const kind of ['random', 'one value', 'skewed'] as const) {
        const bytes =
          kind === 'random' ? randomBytes(n, rng) : kind === 'one value' ? new Uint8Array(n).fill(rng.below(256)) : skewedBytes(n, rng);
        for (const offset of [0, 1, 2, 3, 1001]) {
          // sentinel bytes on both sides must not be counted
          const buf = bufferWith(ctx, offset + n + 7, [[offset, bytes]]);
          const got = await histograms8(ctx, buf, [{ byteOffset: offset, byteLength: n }]);
          expect(got.length).toBe(256);
          expectCounts(got, countBytes(bytes), `${kind} n=${n} offset=${offset}`);
          buf.destroy();
        }
      }
    }
  });

  const manyRanges = async (ctx: GpuContext, rng: Rng, size: number, maxLength: number): Promise<void> => {
    const bytes = skewedBytes(size, rng, 200);
    bytes.fill(77, 1000, 30_000); // a long run of one value
    const buf = bufferWith(ctx, size, [[0, bytes]]);
    const ranges = [
      { byteOffset: 0, byteLength: 0 },
      { byteOffset: 3, byteLength: 1 },
      { byteOffset: size, byteLength: 0 },
      { byteOffset: size - 5, byteLength: 5 },
      { byteOffset: 999, byteLength: 29_003 },
    ];
    for (let i = 0; i < 40; i++) {
      const len = rng.below(maxLength);
      ranges.push({ byteOffset: rng.below(size - len), byteLength: len });
    }
    const got = await histograms8(ctx, buf, ranges);
    expect(got.length).toBe(256 * ranges.length);
    ranges.forEach((r, i) => {
      expectCounts(
        got.subarray(256 * i, 256 * i + 256),
        countBytes(bytes.subarray(r.byteOffset, r.byteOffset + r.byteLength)),
        `range ${i} (${r.byteOffset}, ${r.byteLength})`,
      );
    });
    expect((await histograms8(ctx, buf, [])).length).toBe(0);
  };
  gpuTest('many ranges in one submission (overlapping, empty, unaligned, a run of one value)', (ctx, rng) =>
    manyRanges(ctx, rng, 1 << 20, 300_000),
  );
  gpuTest(
    'many ranges split over storage bindings of 64 KiB',
    async (ctx, rng) => {
      await manyRanges(ctx, rng, 1 << 20, 60_000);
      const buf = bufferWith(ctx, 1 << 18);
      await expect(histograms8(ctx, buf, [{ byteOffset: 0, byteLength: 1 << 17 }])).rejects.toMatchObject({ code: 'TOO_LARGE' });
    },
    { maxStorageBindingBytes: 1 << 16 },
  );

  gpuTest('bad arguments: a range past the buffer, a negative offset, a buffer without STORAGE', async (ctx) => {
    const buf = bufferWith(ctx, 64);
    await expect(histograms8(ctx, buf, [{ byteOffset: 60, byteLength: 8 }])).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    await expect(histograms8(ctx, buf, [{ byteOffset: -1, byteLength: 8 }])).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    const plain = ctx.device.createBuffer({ size: 64, usage: GPUBufferUsage.COPY_DST });
    await expect(histograms8(ctx, plain, [{ byteOffset: 0, byteLength: 8 }])).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
  });
});

/** Bytes with the counts of `hist`, in a shuffled order. */
function bytesWithCounts(hist: readonly number[], rng: Rng): Uint8Array {
  const bytes = new Uint8Array(hist.reduce((a, b) => a + b, 0));
  let at = 0;
  hist.forEach((count, v) => {
    bytes.fill(v, at, at + count);
    at += count;
  });
  for (let i = bytes.length - 1; i > 0; i--) {
    const k = rng.below(i + 1);
    [bytes[i], bytes[k]] = [bytes[k], bytes[i]];
  }
  return bytes;
}

describeGpu('GPU Huffman code lengths of byte histograms', () => {
  gpuTest("each range's lengths and coded bits equal the host's codeLengths and codedBits", async (ctx, rng) => {
    // counts as Fibonacci numbers: an unlimited code 24 bits deep, clamped to 11
    const fibonacci = Array.from({ length: 256 }, () => 0);
    for (let i = 0, a = 1, b = 1; i < 24; i++, [a, b] = [b, a + b]) fibonacci[i * 7] = a;
    const pieces: [string, Uint8Array][] = [
      ['Fibonacci counts (clamped to 11 bits)', bytesWithCounts(fibonacci, rng)],
      [
        'all 256 values equally',
        bytesWithCounts(
          Array.from({ length: 256 }, () => 40),
          rng,
        ),
      ],
      [
        'two values',
        bytesWithCounts(
          Array.from({ length: 256 }, (_, v) => (v === 3 ? 1000 : v === 250 ? 1 : 0)),
          rng,
        ),
      ],
      ['one value', new Uint8Array(5000).fill(9)],
      ['random', randomBytes(70_000, rng)],
      ['skewed', skewedBytes(100_000, rng)],
      [
        'a few values, one dominant',
        bytesWithCounts(
          Array.from({ length: 256 }, (_, v) => (v === 0 ? 90_000 : v % 17 === 0 ? 1 + rng.below(30) : 0)),
          rng,
        ),
      ],
    ];
    // long tails: geometric counts (ratio 0.5..0.9) over a random order of the symbols, deeper
    // than 11 bits, so that the clamp's over-full and under-full steps both run
    for (let k = 0; k < 24; k++) {
      const ratio = 0.5 + (0.4 * k) / 23;
      const order = Array.from({ length: 256 }, (_, v) => v).sort(() => rng.below(3) - 1);
      const counts = Array.from({ length: 256 }, () => 0);
      const symbols = 20 + rng.below(237);
      for (let i = 0; i < symbols; i++) counts[order[i]] = Math.max(1, Math.floor(20_000 * ratio ** i)) + rng.below(3);
      pieces.push([`geometric counts, ratio ${ratio.toFixed(2)}, ${symbols} symbols`, bytesWithCounts(counts, rng)]);
    }
    const bytes = new Uint8Array(pieces.reduce((a, [, p]) => a + p.length, 0));
    const ranges: { byteOffset: number; byteLength: number; what: string }[] = [];
    let at = 0;
    for (const [what, piece] of pieces) {
      bytes.set(piece, at);
      ranges.push({ byteOffset: at, byteLength: piece.length, what });
      at += piece.length;
    }
    ranges.push({ byteOffset: 0, byteLength: 0, what: 'empty' });
    for (let i = 0; i < 30; i++) {
      const len = rng.below(60_000);
      ranges.push({ byteOffset: rng.below(bytes.length - len), byteLength: len, what: `random range ${i}` });
    }
    const buf = bufferWith(ctx, bytes.length + 3, [[0, bytes]]);
    const got = await histogramCodes8(ctx, buf, ranges);
    expect(got.length).toBe(ranges.length);
    ranges.forEach((r, i) => {
      const counts = countBytes(bytes.subarray(r.byteOffset, r.byteOffset + r.byteLength));
      const what = `${r.what} (${r.byteOffset}, ${r.byteLength})`;
      expectCounts(got[i].counts, counts, what);
      const present = counts.filter((c) => c > 0).length;
      const want = present >= 2 ? codeLengths(counts) : new Uint8Array(256);
      expect(Array.from(got[i].lengths), what).toEqual(Array.from(want));
      expect(got[i].codedBits, what).toBe(codedBits(counts, want));
    });
    expect(Math.max(...got[0].lengths)).toBe(11);
    expect(await histogramCodes8(ctx, buf, [])).toEqual([]);
    buf.destroy();
  });

  gpuTest('runs of 1-, 2- and 4-byte elements counted with the histograms: equal to a plain loop', async (ctx, rng) => {
    // runs of a few elements and of thousands (across 64 KiB tiles), of values that differ in
    // one byte only (a 2- or 4-byte element equal in its low byte to the one before)
    const bytes = new Uint8Array(400_000);
    for (let i = 0; i < bytes.length;) {
      const len = rng.below(5) === 0 ? rng.below(20_000) : 1 + rng.below(9);
      const v = rng.below(3);
      bytes.fill(v, i, i + len);
      if (rng.below(2) === 0) bytes[Math.min(i + len, bytes.length) - 1] ^= 1 << rng.below(8);
      i += len;
    }
    const runsOf = (a: Uint8Array, width: number) => {
      let runs = 0;
      for (let e = 0; e < a.length; e += width) {
        if (e === 0 || a.subarray(e, e + width).some((x, k) => x !== a[e - width + k])) runs++;
      }
      return runs;
    };
    const buf = bufferWith(ctx, bytes.length, [[0, bytes]]);
    for (const width of [1, 2, 4] as const) {
      const ranges = [
        { byteOffset: 0, byteLength: bytes.length },
        { byteOffset: 0, byteLength: 0 },
        { byteOffset: width, byteLength: width },
      ];
      for (let i = 0; i < 12; i++) {
        const at = rng.below(bytes.length / width - 1) * width;
        ranges.push({ byteOffset: at, byteLength: rng.below((bytes.length - at) / width) * width });
      }
      const got = await histogramCodes8(ctx, buf, ranges, width);
      ranges.forEach((r, i) =>
        expect(got[i].runs, `width ${width}, range (${r.byteOffset}, ${r.byteLength})`).toBe(
          runsOf(bytes.subarray(r.byteOffset, r.byteOffset + r.byteLength), width),
        ),
      );
      expect((await histogramCodes8(ctx, buf, ranges))[0].runs).toBeUndefined();
    }
    await expect(histogramCodes8(ctx, buf, [{ byteOffset: 2, byteLength: 8 }], 4)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    await expect(histogramCodes8(ctx, buf, [{ byteOffset: 0, byteLength: 6 }], 4)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    buf.destroy();
  });

  gpuTest('several sources in one submission: each as it is alone (counts, lengths, bits, runs)', async (ctx, rng) => {
    const a = skewedBytes(300_000, rng);
    const b = randomBytes(90_000, rng);
    const bufA = bufferWith(ctx, a.length, [[0, a]]);
    const bufB = bufferWith(ctx, b.length, [[0, b]]);
    const rangesA = [
      { byteOffset: 0, byteLength: 100_000 },
      { byteOffset: 100_000, byteLength: 0 },
      { byteOffset: 100_000, byteLength: 200_000 },
    ];
    const rangesB = Array.from({ length: 5 }, (_, i) => ({ byteOffset: 4 * i * 4000, byteLength: 4 * (3000 + 500 * i) }));
    const sources: HistogramSource[] = [
      { buffer: bufA, ranges: rangesA },
      { buffer: bufB, ranges: [] },
      { buffer: bufB, ranges: rangesB, runWidth: 4 },
    ];
    const got = await submitThenRead(ctx, 'histogram codes of three sources', (s) => encodeHistogramCodes(ctx, s, sources));
    expect(got.map((x) => x.length)).toEqual([3, 0, 5]);
    const alone = [await histogramCodes8(ctx, bufA, rangesA), [], await histogramCodes8(ctx, bufB, rangesB, 4)];
    got.forEach((codes, k) =>
      codes.forEach((code, i) => {
        const want = alone[k][i];
        expect([Array.from(code.counts), Array.from(code.lengths), code.codedBits, code.runs], `source ${k}, range ${i}`).toEqual([
          Array.from(want.counts),
          Array.from(want.lengths),
          want.codedBits,
          want.runs,
        ]);
      }),
    );
    // (and the codes are the host's)
    const counts = countBytes(a.subarray(100_000, 300_000));
    expect(Array.from(got[0][2].lengths)).toEqual(Array.from(codeLengths(counts)));
    expect(got[2][0].runs).toBeGreaterThan(0);
    bufA.destroy();
    bufB.destroy();
  });

  gpuTest('a range of 2^28 bytes or more is refused (its coded bits could pass a u32)', async (ctx) => {
    const buf = bufferWith(ctx, 64);
    await expect(histogramCodes8(ctx, buf, [{ byteOffset: 0, byteLength: 2 ** 28 }])).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    buf.destroy();
  });
});

let cpuKernels: KernelHarness | undefined;

/** The stream the CPU writes: ts/codec/huffman.ts writeHeader, then assembly/huffman.ts huffmanEncode (build/parle.wasm). */
async function cpuHuffmanStream(bytes: Uint8Array, lengths: Uint8Array, g: number): Promise<Uint8Array> {
  cpuKernels ??= await KernelHarness.create('simd');
  const h = cpuKernels;
  h.reset();
  const n = bytes.length;
  const k = segmentCount(n, g);
  const srcPtr = h.copyIn(bytes, 8);
  const lengthsPtr = h.copyIn(lengths);
  const codesPtr = h.alloc(1024);
  h.kernels.huffmanBuildCodes(lengthsPtr, codesPtr);
  const outPtr = h.alloc(Math.ceil((n * 11) / 8) + k + 16);
  const offsetsPtr = h.alloc(4 * k + 4);
  const bitsBytes = h.kernels.huffmanEncode(srcPtr, n, codesPtr, g, outPtr, offsetsPtr);
  const head = headerBytes(lengths);
  const stream = new Uint8Array(head + 4 * k + bitsBytes);
  writeHeader(stream, 0, lengths, g);
  stream.set(h.bytes(offsetsPtr, 4 * k), head);
  stream.set(h.bytes(outPtr, bitsBytes), head + 4 * k);
  return stream;
}

/**
 * Code lengths (ts/codec/huffman.ts codeLengths) for `bytes`: from their counts, plus 1 for
 * `extra` symbols (absent ones get codes too: 'all' gives all 256), and a second symbol when
 * fewer than two are present.
 */
function lengthsFor(bytes: Uint8Array, extra: 'none' | 'all' = 'none'): Uint8Array {
  const hist = Array.from(countBytes(bytes));
  if (extra === 'all') for (let v = 0; v < 256; v++) hist[v]++;
  const present = hist.filter((c) => c > 0).length;
  if (present === 0) hist[0] = hist[1] = 1;
  else if (present === 1) hist[(hist.findIndex((c) => c > 0) + 1) & 0xff] = 1;
  return codeLengths(hist);
}

/** Uploads `bytes` at `offset` and encodes them as one stream. */
async function gpuHuffmanStream(ctx: GpuContext, bytes: Uint8Array, offset: number, lengths: Uint8Array, g: number): Promise<Uint8Array> {
  const buf = bufferWith(ctx, offset + bytes.length + 5, [[offset, bytes]]);
  try {
    const [stream] = await huffmanEncodeStreams(ctx, buf, [{ srcByteOffset: offset, byteLength: bytes.length, lengths, segmentLog2: g }]);
    return stream;
  } finally {
    buf.destroy();
  }
}

const ENCODE_SIZES = [0, 1, 2, 3, 4, 5, 1023, 1024, 1025, 4095, 4096, 16_387, 100_001];

describeGpu('GPU Huffman encode (docs/format.md, Huffman streams; PAVLE)', () => {
  gpuTest('canonicalCodeTable equals the CPU kernel huffmanBuildCodes', async (_ctx, rng) => {
    cpuKernels ??= await KernelHarness.create('simd');
    const h = cpuKernels;
    for (let round = 0; round < 30; round++) {
      const hist = Array.from({ length: 256 }, () => (rng.below(3) === 0 ? 0 : rng.below(1 << rng.below(20))));
      hist[rng.below(128)] += 1;
      hist[128 + rng.below(128)] += 1;
      const lengths = codeLengths(hist);
      h.reset();
      const lengthsPtr = h.copyIn(lengths);
      const codesPtr = h.alloc(1024);
      h.kernels.huffmanBuildCodes(lengthsPtr, codesPtr);
      expect(Array.from(canonicalCodeTable(lengths)), `round ${round}`).toEqual(Array.from(h.copyOut(Uint32Array, codesPtr, 256)));
    }
  });

  gpuTest('the worked example: [0, 1, 2, 0] with lengths {0: 1, 1: 2, 2: 2}, g = 10', async (ctx) => {
    const lengths = new Uint8Array(256);
    lengths.set([1, 2, 2]);
    const stream = await gpuHuffmanStream(ctx, Uint8Array.of(0, 1, 2, 0), 1, lengths, 10);
    expect(Array.from(stream)).toEqual([2, 10, 2, 0x21, 0x02, 1, 0, 0, 0, 0x1a]);
  });

  for (const g of [10, 12, 14]) {
    gpuTest(
      `single streams, g=${g}, sizes ${ENCODE_SIZES.join(', ')}: 256 symbols, skewed, two symbols; unaligned sources`,
      async (ctx, rng) => {
        for (const n of ENCODE_SIZES) {
          for (const kind of ['256 symbols', 'skewed', 'two symbols'] as const) {
            const bytes = kind === '256 symbols' ? randomBytes(n, rng) : kind === 'skewed' ? skewedBytes(n, rng) : skewedBytes(n, rng, 2);
            const lengths = lengthsFor(bytes, kind === '256 symbols' ? 'all' : 'none');
            const offset = rng.below(4) + 4 * rng.below(2);
            const what = `g=${g} n=${n} ${kind} offset=${offset}`;
            const got = await gpuHuffmanStream(ctx, bytes, offset, lengths, g);
            expectBytes(got, await cpuHuffmanStream(bytes, lengths, g), `${what}: GPU vs CPU kernel`);
            expectBytes(ref.huffmanDecodeStream(got, n), bytes, `${what}: reference decode`);
            expect(parseHuffmanStream(got, n).segments).toBe(segmentCount(n, g));
          }
        }
      },
    );
  }

  gpuTest('with the reference code lengths, the streams equal the reference encoder', async (ctx, rng) => {
    for (let round = 0; round < 12; round++) {
      const n = 2 + rng.below(40_000);
      const bytes = round % 3 === 0 ? randomBytes(n, rng) : skewedBytes(n, rng, 2 + rng.below(100));
      if (bytes.every((b) => b === bytes[0])) bytes[1] ^= 1;
      const g = 10 + rng.below(5);
      const lengths = ref.huffmanCodeLengths(Array.from(countBytes(bytes)));
      const got = await gpuHuffmanStream(ctx, bytes, rng.below(4), lengths, g);
      expectBytes(got, ref.huffmanEncodeStream(bytes, g), `round ${round}: n=${n} g=${g}`);
    }
  });

  gpuTest('large streams: 2^20 + 5 bytes at g = 10 (1025 segments), 14 and 20', async (ctx, rng) => {
    const n = (1 << 20) + 5;
    const bytes = skewedBytes(n, rng, 60);
    const lengths = lengthsFor(bytes);
    for (const g of [10, 14, 20]) {
      const got = await gpuHuffmanStream(ctx, bytes, 3, lengths, g);
      expectBytes(got, await cpuHuffmanStream(bytes, lengths, g), `g=${g}`);
      if (g === 10) expectBytes(ref.huffmanDecodeStream(got, n), bytes, 'reference decode');
    }
  });

  /** Many jobs over one buffer (overlapping, empty, unaligned), each checked against the CPU kernel; twice (pooled buffers reused). */
  const manyJobs = async (ctx: GpuContext, rng: Rng, maxLength: number): Promise<void> => {
    const size = 1 << 19;
    const bytes = skewedBytes(size, rng, 90);
    for (let i = 0; i < size; i += 4096) if (rng.below(4) === 0) bytes.set(randomBytes(4096, rng), i);
    const buf = bufferWith(ctx, size, [[0, bytes]]);
    const jobs: HuffmanEncodeJob[] = [];
    for (let i = 0; i < 40; i++) {
      const len = i % 13 === 0 ? 0 : rng.below(maxLength);
      const off = rng.below(size - len);
      const range = bytes.subarray(off, off + len);
      jobs.push({
        srcByteOffset: off,
        byteLength: len,
        lengths: lengthsFor(range, rng.below(3) === 0 ? 'all' : 'none'),
        segmentLog2: 10 + rng.below(6),
      });
    }
    for (let pass = 0; pass < 2; pass++) {
      const got = await huffmanEncodeStreams(ctx, buf, jobs);
      expect(got.length).toBe(jobs.length);
      for (let i = 0; i < jobs.length; i++) {
        const j = jobs[i];
        const range = bytes.subarray(j.srcByteOffset, j.srcByteOffset + j.byteLength);
        const what = `pass ${pass} job ${i} (offset ${j.srcByteOffset}, ${j.byteLength} bytes, g=${j.segmentLog2})`;
        expectBytes(got[i], await cpuHuffmanStream(range, j.lengths, j.segmentLog2), what);
        expectBytes(ref.huffmanDecodeStream(got[i], j.byteLength), range, `${what}: reference decode`);
      }
    }
    expect(await huffmanEncodeStreams(ctx, buf, [])).toEqual([]);
  };
  gpuTest('many jobs in one call: mixed g, lengths, offsets, empty jobs', (ctx, rng) => manyJobs(ctx, rng, 150_000));
  gpuTest(
    'many jobs split over storage bindings of 64 KiB',
    async (ctx, rng) => {
      await manyJobs(ctx, rng, 30_000);
      // one job whose worst-case output (60 000 codes of up to 11 bits) cannot fit one binding
      const buf = bufferWith(ctx, 60_000);
      const long = codeLengths(Array.from({ length: 40 }, (_, v) => 2 ** (40 - v)));
      expect(Math.max(...long)).toBe(11);
      await expect(
        huffmanEncodeStreams(ctx, buf, [{ srcByteOffset: 0, byteLength: 60_000, lengths: long, segmentLog2: 14 }]),
      ).rejects.toMatchObject({ code: 'TOO_LARGE' });
    },
    { maxStorageBindingBytes: 1 << 16 },
  );

  gpuTest('reads back only the status, the lengths and the coded bytes (histograms: 1 KiB a range)', async (ctx, rng) => {
    const n = 300_001;
    const bytes = skewedBytes(n, rng, 30);
    const buf = bufferWith(ctx, n + 3, [[3, bytes]]);
    // the bytes each readback maps (kept readback buffers may be larger than what they carry)
    const mapped: number[] = [];
    const original = GPUBuffer.prototype.mapAsync;
    GPUBuffer.prototype.mapAsync = function (this: GPUBuffer, mode: number, offset = 0, size?: number): Promise<undefined> {
      mapped.push(size ?? this.size - offset);
      return original.call(this, mode, offset, size);
    };
    try {
      const hist = await histograms8(ctx, buf, [
        { byteOffset: 3, byteLength: n },
        { byteOffset: 0, byteLength: 5 },
      ]);
      expect(mapped).toEqual([2048]);
      mapped.length = 0;
      const lengths = lengthsFor(bytes);
      expect(Array.from(lengths)).toEqual(Array.from(codeLengths(hist.subarray(0, 256))));
      const [stream] = await huffmanEncodeStreams(ctx, buf, [{ srcByteOffset: 3, byteLength: n, lengths, segmentLog2: 12 }]);
      const coded = stream.length - headerBytes(lengths); // end offsets and bitstreams
      expect(mapped).toEqual([4 * 3, Math.ceil(coded / 4) * 4]);
      expectBytes(stream, await cpuHuffmanStream(bytes, lengths, 12), 'stream');
    } finally {
      GPUBuffer.prototype.mapAsync = original;
    }
  });

  gpuTest('a byte without a code names the first job and byte value', async (ctx, rng) => {
    const bytes = skewedBytes(5000, rng, 20);
    const lengths = lengthsFor(bytes);
    const buf = bufferWith(ctx, 10_000, [
      [0, bytes],
      [6000, Uint8Array.of(1, 2, 3)],
    ]);
    const ok = { srcByteOffset: 0, byteLength: 5000, lengths, segmentLog2: 10 };
    const bad = { srcByteOffset: 5998, byteLength: 6, lengths, segmentLog2: 10 }; // sentinel 0xab and bytes 1, 2, 3
    const missing = [0xab, 1, 2, 3].filter((v) => lengths[v] === 0).sort((a, b) => a - b);
    expect(missing.length).toBeGreaterThan(0);
    const e = await huffmanEncodeStreams(ctx, buf, [ok, bad, bad]).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ParleError);
    expect((e as ParleError).code).toBe('INVALID_ARGUMENT');
    expect((e as ParleError).message).toMatch(new RegExp(`^jobs\\[1\\]: byte value ${missing[0]} has no code`));
    // the context still works afterwards
    expectBytes((await huffmanEncodeStreams(ctx, buf, [ok]))[0], await cpuHuffmanStream(bytes, lengths, 10), 'after the error');
  });

  gpuTest('bad arguments: lengths, g, ranges, buffers', async (ctx) => {
    const buf = bufferWith(ctx, 4096);
    const good = new Uint8Array(256);
    good.set([1, 2, 2]);
    const job = { srcByteOffset: 0, byteLength: 100, lengths: good, segmentLog2: 10 };
    const reject = (jobs: unknown, code = 'INVALID_ARGUMENT', buffer: GPUBuffer = buf) =>
      expect(huffmanEncodeStreams(ctx, buffer, jobs as HuffmanEncodeJob[])).rejects.toMatchObject({ code });
    const incomplete = good.slice();
    incomplete[2] = 3;
    const overFull = good.slice();
    overFull[3] = 2;
    const tooLong = new Uint8Array(256);
    tooLong.set([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 12]);
    const one = new Uint8Array(256);
    one[5] = 1;
    for (const lengths of [incomplete, overFull, tooLong, one, good.subarray(0, 255), [1, 1] as unknown as Uint8Array])
      await reject([{ ...job, lengths }]);
    for (const segmentLog2 of [9, 21, 12.5]) await reject([{ ...job, segmentLog2 }]);
    await reject([{ ...job, srcByteOffset: 4000 }]);
    await reject([{ ...job, byteLength: -1 }]);
    await reject([{ ...job, byteLength: HUFFMAN_ENCODE_MAX_BYTES + 1 }], 'TOO_LARGE');
    await reject({});
    const plain = ctx.device.createBuffer({ size: 4096, usage: GPUBufferUsage.COPY_DST });
    await reject([job], 'INVALID_ARGUMENT', plain);
  });
});

// hashTiles (shaders/codec-hash.wgsl) stages tiles of 8 stripes (128 bytes) of each of a
// workgroup's 64 blocks (256 KiB): sizes around a tile, a block and a workgroup.
const TILE_SIZES = [
  127,
  128,
  129,
  143,
  255,
  256,
  257,
  271,
  383,
  4095 - 16,
  4096 - 16,
  4096 + 127,
  4096 + 256 + 3,
  63 * 4096 + 17,
  64 * 4096 - 1,
  64 * 4096,
  64 * 4096 + 1,
  64 * 4096 + 18,
  65 * 4096 + 131,
  128 * 4096 + 300,
];

describeGpu('GPU tree hash: level-1 tiles', () => {
  gpuTest(`sizes around tiles, blocks and workgroups at offsets 0..3: ${TILE_SIZES.join(', ')}`, async (ctx, rng) => {
    for (const n of TILE_SIZES) {
      const bytes = randomBytes(n, rng);
      const want = ref.treeHash(bytes);
      for (const offset of [0, 1, 2, 3]) {
        const buf = bufferWith(ctx, offset + n + 3, [[offset, bytes]]);
        expect((await treeHash(ctx, buf, offset, n)) >>> 0, `n=${n} offset=${offset}`).toBe(want);
        buf.destroy();
      }
    }
  });

  gpuTest('ranges whose blocks share workgroups (partial blocks mid-workgroup, mixed alignment)', async (ctx, rng) => {
    const size = 4 << 20;
    const bytes = randomBytes(size, rng);
    const buf = bufferWith(ctx, size, [[0, bytes]]);
    const ranges: { byteOffset: number; byteLength: number }[] = [];
    let at = 0;
    for (let i = 0; at < size - 200_000; i++) {
      // 1..100 blocks, a partial last block of any length (or none), any offset
      const len = (1 + rng.below(100)) * 4096 + (i % 3 === 0 ? 0 : rng.below(4096));
      const byteOffset = at + rng.below(4);
      ranges.push({ byteOffset, byteLength: Math.min(len, size - byteOffset) });
      at = byteOffset + len;
      if (i % 5 === 0) ranges.push({ byteOffset: rng.below(size - 300), byteLength: rng.below(300) });
    }
    const got = await treeHashes(ctx, buf, ranges);
    expect(got.length).toBe(ranges.length);
    ranges.forEach((r, i) =>
      expect(got[i], `range ${i} (${r.byteOffset}, ${r.byteLength})`).toBe(
        ref.treeHash(bytes.subarray(r.byteOffset, r.byteOffset + r.byteLength)),
      ),
    );
  });
});

describeGpu('GPU rle streams of every chunk (values raw, lengths - 1 as LEB128)', () => {
  /** Per chunk: the runs' value bytes and the LEB128 bytes of (length - 1), by plain loops. */
  function reference(bytes: Uint8Array, w: number, chunkLength: number): { values: Uint8Array; leb: Uint8Array }[] {
    const n = bytes.length / w;
    const out: { values: Uint8Array; leb: Uint8Array }[] = [];
    for (let start = 0; start < n || (n === 0 && start === 0); start += chunkLength) {
      const end = Math.min(n, start + chunkLength);
      const values: number[] = [];
      const leb: number[] = [];
      for (let i = start; i < end;) {
        let j = i + 1;
        const same = (a: number, b: number) => bytes.subarray(a * w, a * w + w).every((x, k) => x === bytes[b * w + k]);
        while (j < end && same(j, i)) j++;
        values.push(...bytes.subarray(i * w, i * w + w));
        let v = j - i - 1;
        while (v >= 0x80) {
          leb.push((v & 0x7f) | 0x80);
          v = Math.floor(v / 128);
        }
        leb.push(v);
        i = j;
      }
      out.push({ values: Uint8Array.from(values), leb: Uint8Array.from(leb) });
      if (n === 0) break;
    }
    return out;
  }

  gpuTest('u8, u16, u32 inputs: runs cut at chunks, LEB128 of 1..3 bytes, equal to the plain loops', async (ctx, rng) => {
    for (const [type, w] of [
      ['u8', 1],
      ['u16', 2],
      ['u32', 4],
    ] as const) {
      for (const [n, chunkLength] of [
        [1, 1024],
        [4099, 1024],
        [70_001, 4096],
        [300_000, 300_000], // one chunk
        [200_003, 65_536],
      ]) {
        // runs of mixed lengths: short ones, some past 2^7 and 2^14 (two- and three-byte LEB128),
        // and one across chunk edges
        const bytes = new Uint8Array(n * w);
        for (let i = 0; i < n;) {
          const len = rng.below(8) === 0 ? 1 + rng.below(20_000) : 1 + rng.below(12);
          const v = rng.below(4);
          for (let k = i; k < Math.min(n, i + len); k++) bytes.fill(v, k * w, k * w + w);
          i += len;
        }
        const input = await ctx.upload(new (type === 'u8' ? Uint8Array : type === 'u16' ? Uint16Array : Uint32Array)(bytes.buffer));
        const chunks = Math.ceil(n / chunkLength);
        const got = await rleChunkStreams(ctx, input, chunkLength, chunks);
        try {
          const want = reference(bytes, w, chunkLength);
          const values = new Uint8Array(await ctx.download(got.values).then((a) => a.buffer));
          const leb = await readAll(ctx, got.leb);
          expect(got.firstRun.length).toBe(chunks + 1);
          expect(got.runs).toBe(want.reduce((a, c) => a + c.values.length / w, 0));
          for (let c = 0; c < chunks; c++) {
            const what = `${type} n=${n} C=${chunkLength} chunk ${c}`;
            expect(Buffer.compare(values.subarray(got.firstRun[c] * w, got.firstRun[c + 1] * w), want[c].values), what).toBe(0);
            expect(got.endRun[c], what).toBe(got.firstRun[c + 1]);
            expect(Buffer.compare(leb.subarray(got.lebStart[c], got.lebStart[c + 1]), want[c].leb), what).toBe(0);
          }
          expect(got.lebStart[chunks]).toBe(want.reduce((a, c) => a + c.leb.length, 0));
        } finally {
          got.release();
          input.destroy();
        }
      }
    }
  });

  gpuTest('a run of 2^21 elements or more: four LEB128 bytes', async (ctx) => {
    const bytes = new Uint8Array(2_200_000);
    bytes.fill(9, 2_199_997);
    bytes[2_199_999] = 1;
    for (const chunkLength of [1 << 22, 1 << 20]) {
      const chunks = Math.ceil(bytes.length / chunkLength);
      const input = await ctx.upload(bytes);
      const got = await rleChunkStreams(ctx, input, chunkLength, chunks);
      try {
        const leb = await readAll(ctx, got.leb);
        const want = reference(bytes, 1, chunkLength);
        for (let c = 0; c < chunks; c++) {
          expect(Buffer.compare(leb.subarray(got.lebStart[c], got.lebStart[c + 1]), want[c].leb), `C=${chunkLength} chunk ${c}`).toBe(0);
        }
        if (chunks === 1) expect(Array.from(leb.subarray(0, 4))).toEqual([0xbc, 0xa3, 0x86, 0x01]); // 2199996 in LEB128
      } finally {
        got.release();
        input.destroy();
      }
    }
  });

  gpuTest('units shorter than the chunk length: runs cut at their end, runs in the padding dropped', async (ctx, rng) => {
    // byte planes of ts/codec/gpu/encode.ts: units of `cells` bytes (the last `shortCells`) `stride` apart,
    // the padding between them of any bytes (its first run, and the runs after it, dropped), or
    // of the unit's last byte (its last run goes on into it and is cut)
    for (const [units, stride, cells, shortCells, padding] of [
      [5, 1024, 1021, 700, 'random'],
      [5, 1024, 1021, 700, 'last'],
      [3, 4096, 4096, 3, 'random'], // full units, one of 3 bytes
      [4, 256, 253, 0, 'random'], // an empty last unit: all its runs dropped
      [1, 64, 64, 61, 'random'], // one unit
    ] as const) {
      const bytes = new Uint8Array(units * stride);
      const want: { values: Uint8Array; leb: Uint8Array }[] = [];
      for (let u = 0; u < units; u++) {
        const n = u === units - 1 ? shortCells : cells;
        const unit = bytes.subarray(u * stride, (u + 1) * stride);
        for (let i = 0; i < n;) {
          const len = 1 + rng.below(rng.below(4) === 0 ? 300 : 6);
          unit.fill(rng.below(3), i, Math.min(n, i + len));
          i += len;
        }
        for (let i = n; i < stride; i++) unit[i] = padding === 'last' && n > 0 ? unit[n - 1] : rng.below(3);
        want.push(reference(unit.subarray(0, n), 1, stride)[0]);
      }
      const what = `${units} units of ${cells} (${shortCells}) every ${stride}, padding ${padding}`;
      const input = await ctx.upload(bytes);
      const got = await rleChunkStreams(ctx, input, stride, units, { cells, shortFrom: units - 1, shortCells });
      try {
        const values = new Uint8Array(await ctx.download(got.values).then((a) => a.buffer));
        const leb = await readAll(ctx, got.leb);
        expect(got.runs, what).toBe(want.reduce((a, c) => a + c.values.length, 0));
        for (let u = 0; u < units; u++) {
          expect(Buffer.compare(values.subarray(got.firstRun[u], got.endRun[u]), want[u].values), `${what}: unit ${u}`).toBe(0);
          expect(Buffer.compare(leb.subarray(got.lebStart[u], got.lebStart[u + 1]), want[u].leb), `${what}: unit ${u}`).toBe(0);
        }
      } finally {
        got.release();
        input.destroy();
      }
    }
  });

  /** The host's code of `bytes`: counts, lengths (none for fewer than two symbols), coded bits. */
  function hostCode(bytes: Uint8Array): [number[], number[], number] {
    const counts = countBytes(bytes);
    const lengths = counts.filter((c) => c > 0).length >= 2 ? codeLengths(counts) : new Uint8Array(256);
    return [Array.from(counts), Array.from(lengths), codedBits(counts, lengths)];
  }

  gpuTest("with the runs counted: one submission, the same streams, and each stream's code", async (ctx, rng) => {
    // units as the compress's byte planes and field planes: `cells` a unit (the last `shortCells`)
    // `stride` apart; runs given for some units only (the others' elements bound the runs)
    for (const [type, w, units, stride, cells, shortCells, given] of [
      ['u8', 1, 6, 1024, 1021, 700, 'all'],
      ['u8', 1, 6, 1024, 1021, 700, 'some'],
      ['u16', 2, 4, 2048, 2048, 1500, 'all'],
      ['u32', 4, 5, 4096, 4000, 4000, 'some'],
      ['u8', 1, 1, 64, 64, 61, 'all'], // one unit
      ['u8', 1, 3, 256, 253, 0, 'all'], // an empty last unit
    ] as const) {
      const bytes = new Uint8Array(units * stride * w);
      const want: { values: Uint8Array; leb: Uint8Array }[] = [];
      for (let u = 0; u < units; u++) {
        const n = u === units - 1 ? shortCells : cells;
        const unit = bytes.subarray(u * stride * w, (u + 1) * stride * w);
        for (let i = 0; i < n;) {
          const len = 1 + rng.below(rng.below(4) === 0 ? 3000 : 6);
          const v = rng.below(3);
          for (let k = i; k < Math.min(n, i + len); k++) unit.fill(v, k * w, k * w + w);
          i += len;
        }
        for (let i = n * w; i < stride * w; i++) unit[i] = rng.below(3);
        want.push(reference(unit.subarray(0, n * w), w, stride)[0]);
      }
      const runs = want.map((x, u) => (given === 'some' && u % 2 === 1 ? undefined : x.values.length / w));
      const what = `${type}: ${units} units of ${cells} (${shortCells}) every ${stride}, runs of ${given}`;
      const input = await ctx.upload(new (type === 'u8' ? Uint8Array : type === 'u16' ? Uint16Array : Uint32Array)(bytes.buffer));
      // command buffers recorded (one a submission)
      let encoders = 0;
      ctx.encoderHooks = { begin: () => void encoders++, end: () => undefined };
      const got = await rleChunkStreams(ctx, input, stride, units, { cells, shortFrom: units - 1, shortCells }, runs).finally(
        () => (ctx.encoderHooks = null),
      );
      try {
        expect(encoders, what).toBe(1);
        const values = new Uint8Array(await ctx.download(got.values).then((a) => a.buffer));
        const leb = await readAll(ctx, got.leb);
        expect(got.runs, what).toBe(want.reduce((a, c) => a + c.values.length / w, 0));
        for (let u = 0; u < units; u++) {
          const unit = `${what}: unit ${u}`;
          expect(Buffer.compare(values.subarray(got.firstRun[u] * w, got.endRun[u] * w), want[u].values), unit).toBe(0);
          expect(Buffer.compare(leb.subarray(got.lebStart[u], got.lebStart[u + 1]), want[u].leb), unit).toBe(0);
          const code = (c: HistogramCode) => [Array.from(c.counts), Array.from(c.lengths), c.codedBits];
          if (runs[u] === undefined) {
            expect(code(got.codes!.values[u]), unit).toEqual(hostCode(new Uint8Array(0)));
            continue;
          }
          expect(code(got.codes!.values[u]), unit).toEqual(hostCode(want[u].values));
          expect(code(got.codes!.lengths[u]), unit).toEqual(hostCode(want[u].leb));
        }
      } finally {
        got.release();
        input.destroy();
      }
    }
  });

  gpuTest('runs counted that the GPU does not find are a GPU_ERROR; runs that cannot be are refused', async (ctx) => {
    const bytes = new Uint8Array(2048);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i >> 4) & 3; // 64 runs a unit of 1024
    const input = await ctx.upload(bytes);
    // too few runs counted in one unit (the bound on all of them is then too low as well)
    await expect(rleChunkStreams(ctx, input, 1024, 2, undefined, [64, 63])).rejects.toMatchObject({ code: 'GPU_ERROR' });
    // too many in one, the right total: the bound holds, the unit's count does not
    await expect(rleChunkStreams(ctx, input, 1024, 2, undefined, [65, 63])).rejects.toMatchObject({ code: 'GPU_ERROR' });
    for (const runs of [[64], [64, 1025], [64, 0], [64, 1.5]])
      await expect(rleChunkStreams(ctx, input, 1024, 2, undefined, runs)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    const ok = await rleChunkStreams(ctx, input, 1024, 2, undefined, [64, 64]);
    expect(ok.runs).toBe(128);
    ok.release();
    input.destroy();
  });

  gpuTest('a chunk length that is not a multiple of the elements per word is refused', async (ctx) => {
    const input = await ctx.upload(new Uint8Array(100));
    await expect(rleChunkStreams(ctx, input, 10, 10)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    input.destroy();
  });
});

describeGpu('GPU byte gather (payload layout)', () => {
  /** Runs the jobs on a cleared destination of `dstBytes` and returns it, with what the host would write. */
  async function gather(
    ctx: GpuContext,
    src: Uint8Array,
    dstBytes: number,
    jobs: GatherJob[],
  ): Promise<{ got: Uint8Array; want: Uint8Array }> {
    const srcBuf = bufferWith(ctx, src.length, [[0, src]]);
    const dstBuf = bufferWith(ctx, dstBytes);
    try {
      await ctx.submit('test gather', (s) => {
        s.encoder.clearBuffer(dstBuf);
        encodeGather(ctx, s, srcBuf, dstBuf, jobs);
      });
      const want = new Uint8Array(dstBuf.size);
      for (const j of jobs) want.set(src.subarray(j.srcByteOffset, j.srcByteOffset + j.byteLength), j.dstByteOffset);
      return { got: await readAll(ctx, dstBuf), want };
    } finally {
      srcBuf.destroy();
      dstBuf.destroy();
    }
  }

  gpuTest('every source and destination alignment, lengths 0..13, packed back to back', async (ctx, rng) => {
    const src = randomBytes(4099, rng);
    const jobs: GatherJob[] = [];
    let dst = 0;
    for (let sa = 0; sa < 4; sa++) {
      for (let len = 0; len <= 13; len++) {
        jobs.push({ srcByteOffset: 100 * sa + sa + len, dstByteOffset: dst, byteLength: len });
        dst += len + (len % 3); // gaps of 0..2 bytes between some jobs, none between others
      }
    }
    const { got, want } = await gather(ctx, src, dst + 8, jobs);
    expect(Buffer.compare(got, want)).toBe(0);
  });

  gpuTest('large unaligned ranges in reverse order, past one workgroup grid row', async (ctx, rng) => {
    const src = randomBytes(3 << 20, rng);
    const a = { srcByteOffset: 1, dstByteOffset: (1 << 20) + 3, byteLength: (1 << 20) + 5 };
    const b = { srcByteOffset: (2 << 20) + 2, dstByteOffset: 7, byteLength: (1 << 20) - 6 };
    const { got, want } = await gather(ctx, src, 3 << 20, [a, b]);
    expect(Buffer.compare(got, want)).toBe(0);
  });

  gpuTest('bad arguments: a range past the buffer, one buffer as both', async (ctx) => {
    const src = bufferWith(ctx, 64);
    const dst = bufferWith(ctx, 16);
    try {
      await ctx.submit('test gather', (s) => {
        expect(() => encodeGather(ctx, s, src, src, [])).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
        expect(() => encodeGather(ctx, s, src, dst, [{ srcByteOffset: 60, dstByteOffset: 0, byteLength: 5 }])).toThrow(
          expect.objectContaining({ code: 'INVALID_ARGUMENT' }),
        );
        expect(() => encodeGather(ctx, s, src, dst, [{ srcByteOffset: 0, dstByteOffset: 14, byteLength: 3 }])).toThrow(
          expect.objectContaining({ code: 'INVALID_ARGUMENT' }),
        );
      });
    } finally {
      src.destroy();
      dst.destroy();
    }
  });
});

describeGpu('GPU Huffman encode left on the device', () => {
  gpuTest("headers and bodies joined equal huffmanEncodeStreams's streams", async (ctx, rng) => {
    const bytes = skewedBytes(300_000, rng);
    const lengths = lengthsFor(bytes);
    const buf = bufferWith(ctx, bytes.length + 8, [[5, bytes]]);
    const jobs: HuffmanEncodeJob[] = [
      { srcByteOffset: 5, byteLength: 200_000, lengths, segmentLog2: 12 },
      { srcByteOffset: 9, byteLength: 0, lengths, segmentLog2: 10 },
      { srcByteOffset: 200_005, byteLength: 100_000, lengths, segmentLog2: 10 },
    ];
    const want = await huffmanEncodeStreams(ctx, buf, jobs);
    const { streams, release } = await huffmanEncodeOnDevice(ctx, buf, jobs);
    try {
      expect(streams[1].body).toBeNull();
      for (let i = 0; i < jobs.length; i++) {
        const { header, body } = streams[i];
        let joined = header;
        if (body !== null) {
          expect(body.byteOffset % 4).toBe(0);
          const all = await readAll(ctx, body.buffer);
          joined = new Uint8Array(header.length + body.byteLength);
          joined.set(header);
          joined.set(all.subarray(body.byteOffset, body.byteOffset + body.byteLength), header.length);
        }
        expect(Buffer.compare(joined, want[i]), `job ${i}`).toBe(0);
      }
    } finally {
      release();
      buf.destroy();
    }
  });
});

describeGpu('kept uniform and readback buffers', () => {
  gpuTest('a repeated op makes no new uniform or small readback buffer; releaseStaging frees them', async (ctx, rng) => {
    const bytes = randomBytes(50_000, rng);
    const buf = bufferWith(ctx, bytes.length, [[0, bytes]]);
    const made: number[] = [];
    const original = ctx.device.createBuffer;
    ctx.device.createBuffer = function (this: GPUDevice, desc: GPUBufferDescriptor): GPUBuffer {
      made.push(desc.usage);
      return original.call(ctx.device, desc);
    };
    try {
      const ranges = [{ byteOffset: 1, byteLength: 40_000 }];
      const first = await histograms8(ctx, buf, ranges);
      const kinds = (usage: number) => made.filter((u) => (u & usage) !== 0).length;
      expect(kinds(GPUBufferUsage.UNIFORM)).toBeGreaterThan(0);
      expect(kinds(GPUBufferUsage.MAP_READ)).toBeGreaterThan(0);
      made.length = 0;
      for (let i = 0; i < 3; i++) expect(Array.from(await histograms8(ctx, buf, ranges))).toEqual(Array.from(first));
      expect(kinds(GPUBufferUsage.UNIFORM), 'uniform buffers made again').toBe(0);
      expect(kinds(GPUBufferUsage.MAP_READ), 'readback buffers made again').toBe(0);
      await ctx.releaseStaging();
      made.length = 0;
      await histograms8(ctx, buf, ranges);
      expect(kinds(GPUBufferUsage.UNIFORM), 'made anew after releaseStaging').toBeGreaterThan(0);
    } finally {
      ctx.device.createBuffer = original;
      buf.destroy();
    }
  });
});

describeGpu('GPU decimal map of f64 (codec-predict.wgsl, decimal-f64.wgsl)', () => {
  gpuTest('every i64 word pair at every exponent: the bits of f64(v) / 10^e, both roundings to nearest even', async (ctx, rng) => {
    // values the encoder writes (|v| < 2^52), and what only a hostile container holds: |v| of 53
    // to 64 bits (rounded to f64 first, ties both ways), the least i64, 0
    const values: bigint[] = [0n, 1n, -1n, -(2n ** 63n), 2n ** 63n - 1n, 2n ** 53n + 1n, 2n ** 53n + 3n, 2n ** 54n + 2n, -(2n ** 60n) - 5n];
    const u64 = () => (BigInt(rng.u32()) << 32n) | BigInt(rng.u32());
    for (let i = 0; i < 400; i++) {
      const bits = 1 + rng.below(64);
      values.push(BigInt.asIntN(64, u64() >> BigInt(64 - bits)) * (rng.below(2) === 0 ? 1n : -1n));
    }
    // the powers of ten themselves (quotients 1, 10^-k, 10^k), the encoder's largest |v|
    for (let e = 1n; e <= 18n; e++) values.push(10n ** e, 1n - 10n ** e, 2n ** 52n - 1n, 1n - 2n ** 52n);
    const count = values.length;
    const zigzag = (w: number) => ((w << 1) ^ (w >> 31)) >>> 0;
    // two word fields (an element field's low and high words), no predictor: the residuals are the words
    const resid = new Uint32Array(2 * count);
    values.forEach((v, i) => {
      const u = BigInt.asUintN(64, v);
      resid[i] = zigzag(Number(u & 0xffffffffn) | 0);
      resid[count + i] = zigzag(Number(u >> 32n) | 0);
    });
    for (let e = 0; e <= 18; e++) {
      const residBuf = bufferWith(ctx, resid.byteLength, [[0, new Uint8Array(resid.buffer)]]);
      const out = bufferWith(ctx, 8 * count);
      await ctx.submit('test decimal f64', (s) =>
        encodePredictDecodeChunks(ctx, s, residBuf, out, 8, [
          {
            residByteOffset: 0,
            planeByteStride: 4 * count,
            outByteOffset: 0,
            head: {
              fields: 2,
              rowCells: count,
              planeRows: 1,
              predictor: Predictor.None,
              map: ValueMap.Decimal,
              words: 2 * count,
              exponents: [e],
            },
          },
        ]),
      );
      const got = new Float64Array((await readAll(ctx, out)).buffer, 0, count);
      const scale = 10 ** e;
      values.forEach((v, i) => {
        const want = Number(v) / scale; // Number(bigint) rounds to nearest even, as the CPU's f64(i64)
        if (!Object.is(got[i], want)) expect(`${got[i]}`, `v = ${v}, e = ${e}`).toBe(`${want}`);
      });
      residBuf.destroy();
      out.destroy();
    }
  });
});

/** The pack stream the CPU writes for `bytes` (elements of `w` bytes): assembly/pack.ts packEncode (build/parle.wasm). */
async function cpuPackStream(bytes: Uint8Array, w: 1 | 2 | 4): Promise<Uint8Array> {
  cpuKernels ??= await KernelHarness.create('simd');
  const h = cpuKernels;
  h.reset();
  const n = bytes.length / w;
  const inPtr = h.copyIn(bytes, 16);
  const room = Math.ceil(n / 256) * 20 + n * w + 64;
  const outPtr = h.alloc(room);
  const written = h.kernels.packEncode(inPtr, n, w, outPtr, room, h.alloc(PACK_SCRATCH_BYTES));
  expect(written).toBeGreaterThan(0);
  return h.bytes(outPtr, written).slice();
}

/** Elements of `w` bytes (little-endian) of one of the pack tests' shapes: exceptions, zigzag, both, none. */
function packData(rng: Rng, shape: string, n: number, w: 1 | 2 | 4): Uint8Array {
  const top = 2 ** (8 * w);
  const v = (i: number): number => {
    switch (shape) {
      case 'zeros':
        return 0;
      case 'max':
        return top - 1;
      case 'outlier':
        return i % 256 === 77 ? top - 1 - (rng.u32() % 3) : rng.u32() % 4;
      case 'small-negative':
        return ((rng.u32() % 9) - 4 + top) % top;
      case 'random':
        return rng.u32() % top;
      case 'ramp':
        return (1000 + 3 * i) % top;
      case 'narrow':
        return (rng.u32() % 16) + (rng.u32() % 100 < 3 ? rng.u32() % top : 0);
      default: // many exceptions: a fifth of the values far out, some past 255 a block
        return rng.u32() % 5 === 0 ? top - 1 - (rng.u32() % 1000) : rng.u32() % 8;
    }
  };
  const bytes = new Uint8Array(n * w);
  for (let i = 0; i < n; i++) {
    const x = v(i) % top;
    for (let k = 0; k < w; k++) bytes[i * w + k] = Math.floor(x / 2 ** (8 * k)) & 0xff;
  }
  return bytes;
}

describeGpu('GPU pack encode (docs/format.md, "Pack streams"; codec-pack-encode.wgsl)', () => {
  const SHAPES = ['zeros', 'max', 'outlier', 'small-negative', 'random', 'ramp', 'narrow', 'many-exceptions'];
  const COUNTS = [1, 3, 4, 5, 255, 256, 257, 1000, 4099];

  gpuTest(
    `every shape, widths 1, 2, 4, counts ${COUNTS.join(', ')}: the CPU encoder's sizes and bytes, streams at odd offsets`,
    async (ctx, rng) => {
      for (const w of [1, 2, 4] as const) {
        // the streams back to back from byte 3 of the source, written to the destination in
        // reverse order from byte 5, so that each block lands at every alignment
        const cases = SHAPES.flatMap((shape) => COUNTS.map((n) => ({ shape, n, bytes: packData(rng, shape, n, w) })));
        const parts: [number, Uint8Array][] = [];
        let at = 3;
        const streams = cases.map((c) => {
          parts.push([at, c.bytes]);
          const stream = { srcByteOffset: at, count: c.n, width: w };
          at += c.bytes.length;
          return stream;
        });
        const src = bufferWith(ctx, at + 8, parts);
        const blocks = streams.reduce((a, x) => a + Math.ceil(x.count / 256), 0);
        const sizes = ctx.acquireStorage(paddedBytes(blocks), 'test pack sizes');
        let read: () => Promise<Uint32Array> = async () => new Uint32Array(0);
        let sizing: PackSizing | undefined;
        await ctx.submit('test pack plan', (s) => {
          ({ sizing, read } = encodePackSizes(ctx, s, src, streams, sizes));
        });
        const totals = await read();
        const want = await Promise.all(cases.map((c) => cpuPackStream(c.bytes, w)));
        cases.forEach((c, i) => expect(totals[i], `w ${w} ${c.shape} n ${c.n}`).toBe(want[i].length));
        let out = 5;
        const writes = cases
          .map((_, i) => i)
          .reverse()
          .map((i) => {
            const x = { stream: i, dstByteOffset: out, byteLength: totals[i] };
            out += totals[i];
            return x;
          });
        const dst = bufferWith(ctx, out + 9);
        await ctx.submit('test pack write', (s) => encodePackWrite(ctx, s, sizing!, writes, dst));
        const got = await readAll(ctx, dst);
        expect(got.subarray(0, 5).every((b) => b === 0)).toBe(true);
        expect(got.subarray(out).every((b) => b === 0)).toBe(true);
        for (const x of writes) {
          const c = cases[x.stream];
          const stream = got.subarray(x.dstByteOffset, x.dstByteOffset + x.byteLength);
          expect(Buffer.from(stream).equals(Buffer.from(want[x.stream])), `w ${w} ${c.shape} n ${c.n}`).toBe(true);
          expect(ref.packDecodeStream(stream, c.n * w, w)).toEqual(c.bytes);
        }
        ctx.releaseStorage(sizes);
        src.destroy();
        dst.destroy();
      }
    },
  );

  gpuTest('arguments: widths, empty and outside streams, a small sizes buffer, a write of no plan stream', async (ctx) => {
    const src = bufferWith(ctx, 64);
    const sizes = bufferWith(ctx, 16);
    // every check comes before anything is recorded: no submission needed
    const code = (f: () => void) => {
      try {
        f();
      } catch (e) {
        return (e as ParleError).code;
      }
      return 'ok';
    };
    const plan = (streams: { srcByteOffset: number; count: number; width: 1 | 2 | 4 }[], buffer = sizes) =>
      code(() => encodePackSizes(ctx, undefined as never, src, streams, buffer));
    expect(plan([{ srcByteOffset: 0, count: 4, width: 3 as 4 }])).toBe('INVALID_ARGUMENT');
    expect(plan([{ srcByteOffset: 0, count: 0, width: 1 }])).toBe('INVALID_ARGUMENT');
    expect(plan([{ srcByteOffset: 60, count: 2, width: 4 }])).toBe('INVALID_ARGUMENT');
    expect(plan(Array.from({ length: 5 }, () => ({ srcByteOffset: 0, count: 1, width: 1 as const })))).toBe('INVALID_ARGUMENT');
    const sizing: PackSizing = { src, streams: [{ srcByteOffset: 0, count: 4, width: 1 }], firstBlock: [0], blocks: 1, sizes };
    const dst = bufferWith(ctx, 16);
    expect(code(() => encodePackWrite(ctx, undefined as never, sizing, [{ stream: 1, dstByteOffset: 0, byteLength: 4 }], dst))).toBe(
      'INVALID_ARGUMENT',
    );
    expect(code(() => encodePackWrite(ctx, undefined as never, sizing, [{ stream: 0, dstByteOffset: 14, byteLength: 4 }], dst))).toBe(
      'INVALID_ARGUMENT',
    );
    sizes.destroy();
    src.destroy();
    dst.destroy();
  });
});
