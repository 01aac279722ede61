/**
 * `parle demo` (`npm start`): the main job on real data shipped in data/samples/ (brain MRI
 * volumes and a photograph from Debian packages; sources and licenses in
 * data/samples/SOURCE.md). Each sample is compressed and decompressed, the round trip is
 * checked byte for byte, and parle is printed beside a plain-JS RLE of the same payload layout
 * and fflate's deflate at level 1.
 */
import { deflateSync, inflateSync } from 'fflate';
import { readFile } from 'node:fs/promises';
import type { Engine } from '../engine.js';
import { inspectContainer, readAtBytes } from '../format/container.js';
import { ErrorCodes, ParleError } from '../errors.js';
import { arrayConstructor, bytesOf, type ElementType, type ParleArray } from '../types.js';

/** A sample in data/samples/: its raw file and its element type. */
export interface Sample {
  name: string;
  file: string;
  type: ElementType;
  /** C order, as data/samples/<name>.json gives it. */
  shape: readonly number[];
  note: string;
}

export const SAMPLES: readonly Sample[] = [
  {
    name: 't1-brain-labels',
    file: 't1-brain-labels.u8',
    type: 'u8',
    shape: [62, 128, 128],
    note: 'skull-stripped label volume 128x128x62',
  },
  {
    name: 't1-kmeans-labels',
    file: 't1-kmeans-labels.u8',
    type: 'u8',
    shape: [62, 128, 128],
    note: 'k-means tissue segmentation 128x128x62',
  },
  { name: 't1-mri', file: 't1-mri.u16', type: 'u16', shape: [62, 128, 128], note: 'T1 MRI volume 128x128x62' },
  { name: 'camera', file: 'camera.u8', type: 'u8', shape: [512, 512], note: 'photograph 512x512 (not RLE-friendly)' },
];

/** Where the samples live: ts/cli and dist/node are both two levels below the package root. */
const SAMPLE_DIR = new URL('../../data/samples/', import.meta.url);

/** One row of the demo's table. */
export interface DemoRow {
  sample: string;
  type: ElementType;
  codec: string;
  inputBytes: number;
  outputBytes: number;
  ratio: number;
  encodeMBps: number;
  decodeMBps: number;
  path: string;
}

/** Median wall time in ms of `fn` over at least `minReps` calls and `minMs` of running. */
function timeMedian(fn: () => unknown, minReps = 5, minMs = 150): number {
  const times: number[] = [];
  const start = performance.now();
  while (times.length < minReps || performance.now() - start < minMs) {
    const t0 = performance.now();
    fn();
    times.push(performance.now() - t0);
    if (times.length >= 1000) break;
  }
  times.sort((a, b) => a - b);
  return times[times.length >> 1];
}

async function timeMedianAsync(fn: () => Promise<unknown>, minReps = 5, minMs = 150): Promise<number> {
  const times: number[] = [];
  const start = performance.now();
  while (times.length < minReps || performance.now() - start < minMs) {
    const t0 = performance.now();
    await fn();
    times.push(performance.now() - t0);
    if (times.length >= 1000) break;
  }
  times.sort((a, b) => a - b);
  return times[times.length >> 1];
}

/**
 * A plain JavaScript RLE with parle's payload layout (values raw, then (length - 1) as LEB128),
 * the baseline a user would write by hand. Works on the unsigned bit view of the elements.
 */
export function plainRleEncode(elements: Uint8Array | Uint16Array | Uint32Array): Uint8Array {
  const n = elements.length;
  const values: number[] = [];
  const varints: number[] = [];
  let i = 0;
  while (i < n) {
    const v = elements[i];
    let j = i + 1;
    while (j < n && elements[j] === v) j++;
    values.push(v);
    let rest = j - i - 1;
    while (rest >= 0x80) {
      varints.push((rest & 0x7f) | 0x80);
      rest >>>= 7;
    }
    varints.push(rest);
    i = j;
  }
  const Ctor = elements.constructor as typeof Uint8Array;
  const valueBytes = new Uint8Array(new Ctor(values).buffer);
  const out = new Uint8Array(4 + valueBytes.length + varints.length);
  new DataView(out.buffer).setUint32(0, values.length, true);
  out.set(valueBytes, 4);
  out.set(varints, 4 + valueBytes.length);
  return out;
}

/** Inverse of {@link plainRleEncode}, into `out`. */
export function plainRleDecode(payload: Uint8Array, out: Uint8Array | Uint16Array | Uint32Array): void {
  const runs = new DataView(payload.buffer, payload.byteOffset).getUint32(0, true);
  const size = out.BYTES_PER_ELEMENT;
  const Ctor = out.constructor as typeof Uint8Array;
  const values = new Ctor(payload.slice(4, 4 + runs * size).buffer);
  let p = 4 + runs * size;
  let o = 0;
  for (let r = 0; r < runs; r++) {
    let length = 0;
    let shift = 0;
    let byte: number;
    do {
      byte = payload[p++];
      length |= (byte & 0x7f) << shift;
      shift += 7;
    } while (byte & 0x80);
    length += 1;
    const v = values[r];
    for (let k = 0; k < length; k++) out[o++] = v;
  }
}

function unsignedView(array: ParleArray): Uint8Array | Uint16Array | Uint32Array {
  if (array.BYTES_PER_ELEMENT === 1) return bytesOf(array);
  if (array.BYTES_PER_ELEMENT === 2) return new Uint16Array(array.buffer, array.byteOffset, array.length);
  return new Uint32Array(array.buffer, array.byteOffset, array.length);
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  return Buffer.compare(a, b) === 0;
}

/** Runs the demo; returns the rows it printed. Throws ParleError CORRUPT if a round trip differs. */
export async function runDemo(engine: Engine, print: (line: string) => void = console.log): Promise<DemoRow[]> {
  const rows: DemoRow[] = [];
  print('parle demo: compress and decompress real data (data/samples/SOURCE.md), one thread');
  print('');
  for (const sample of SAMPLES) {
    const raw = await readFile(new URL(sample.file, SAMPLE_DIR));
    const Ctor = arrayConstructor(sample.type);
    // Copy into a fresh, aligned buffer: Buffer pool slices need not be aligned for u16/u32.
    const data = new Ctor(new Uint8Array(raw).buffer) as ParleArray;
    const bytes = bytesOf(data);

    // the sample's shape (data/samples/<name>.json): predictors along its axes
    const packed = await engine.compress(data, { shape: sample.shape });
    const back = await engine.decompress(packed);
    if (!sameBytes(bytesOf(back), bytes)) {
      throw new ParleError(ErrorCodes.CORRUPT, `round trip of ${sample.name} differs`);
    }
    const encodeMs = await timeMedianAsync(() => engine.compress(data, { shape: sample.shape }));
    const decodeMs = await timeMedianAsync(() => engine.decompress(packed));
    const path = engine.explain('compress', data).path;
    // the pipelines the chooser picked, from the chunk table
    const pipelines = [...new Set(inspectContainer(readAtBytes(packed), packed.length).chunks.map((c) => c.encoding))].join(', ');
    rows.push(row(sample, `parle ${pipelines}`, bytes.length, packed.length, encodeMs, decodeMs, path));

    const elements = unsignedView(data);
    const plain = plainRleEncode(elements);
    const plainOut = new (elements.constructor as typeof Uint8Array)(elements.length);
    plainRleDecode(plain, plainOut);
    if (!sameBytes(bytesOf(plainOut), bytes)) throw new Error(`plain RLE round trip of ${sample.name} differs`);
    rows.push(
      row(
        sample,
        'plain JS RLE',
        bytes.length,
        plain.length,
        timeMedian(() => plainRleEncode(elements)),
        timeMedian(() => plainRleDecode(plain, plainOut)),
        'js',
      ),
    );

    const deflated = deflateSync(bytes, { level: 1 });
    if (!sameBytes(inflateSync(deflated), bytes)) throw new Error(`fflate round trip of ${sample.name} differs`);
    rows.push(
      row(
        sample,
        'fflate deflate-1',
        bytes.length,
        deflated.length,
        timeMedian(() => deflateSync(bytes, { level: 1 })),
        timeMedian(() => inflateSync(deflated)),
        'js',
      ),
    );
  }
  printTable(rows, print);
  print('');
  print('round trips: all equal byte for byte. MB/s = 10^6 bytes of decoded data per second, median of repeated runs.');
  return rows;

  function row(
    sample: Sample,
    codec: string,
    inputBytes: number,
    outputBytes: number,
    encodeMs: number,
    decodeMs: number,
    path: string,
  ): DemoRow {
    return {
      sample: sample.name,
      type: sample.type,
      codec,
      inputBytes,
      outputBytes,
      ratio: inputBytes / outputBytes,
      encodeMBps: inputBytes / 1e3 / encodeMs,
      decodeMBps: inputBytes / 1e3 / decodeMs,
      path,
    };
  }
}

function printTable(rows: DemoRow[], print: (line: string) => void): void {
  const header = ['sample', 'type', 'codec', 'input', 'compressed', 'ratio', 'encode MB/s', 'decode MB/s', 'path'];
  const cells = rows.map((r) => [
    r.sample,
    r.type,
    r.codec,
    r.inputBytes.toLocaleString('en-US'),
    r.outputBytes.toLocaleString('en-US'),
    r.ratio.toFixed(2),
    r.encodeMBps.toFixed(0),
    r.decodeMBps.toFixed(0),
    r.path,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i].length)));
  const line = (c: string[]) => c.map((v, i) => (i <= 2 || i === 8 ? v.padEnd(widths[i]) : v.padStart(widths[i]))).join('  ');
  print(line(header));
  print(widths.map((w) => '-'.repeat(w)).join('  '));
  let last = '';
  for (const c of cells) {
    if (last && c[0] !== last) print('');
    print(line(c));
    last = c[0];
  }
}
