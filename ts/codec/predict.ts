/**
 * The predict stage's plan (docs/format.md, "Stage 7: predict"): which value map, predictor and
 * fields a shaped array's chunks are coded with, picked once a call from a sample of whole rows
 * (as Blosc2 picks one filter pipeline an array), and the decimal exponents of a chunk's fields
 * (ALP's sampling, Afroozeh, Kuffo and Boncz 2024). Plain TypeScript over the input's bytes; the
 * kernels that apply a plan are in assembly/predict.ts, the chunk coder in ./cpu/encode.ts.
 *
 * The plan is ranked by order-0 entropy of the residuals' bytes (each field's bytes, or its byte
 * planes for 2- and 4-byte elements, whichever is smaller), which is what the pipelines after
 * it (shuffle, huffman) can reach; run-length gains are not modelled, so a plan is kept only
 * where it beats the elements' and their deltas' estimates by {@link PLAN_MARGIN}.
 */
import type { ElementType } from '../types.js';
import { elementSize } from '../types.js';
import { MAX_DECIMAL_EXPONENT, Predictor, ValueMap, type PredictParams } from '../format/predict.js';

/** A plan for every chunk of a call: PredictParams less the chunk's own (rowCells 0: a row is the chunk's cells; exponents per chunk). */
export type PredictPlan = Omit<PredictParams, 'exponents'>;

/** A plan must promise at most this share of the plain codec's estimate to be used. */
const PLAN_MARGIN = 0.97;
/** Elements a plan's sample holds at most, in {@link PLAN_PARTS} ranges spread over the array. */
const PLAN_SAMPLE_ELEMENTS = 1 << 13;
const PLAN_PARTS = 8;
/**
 * The share of the best linear predictor's size that med must save to be picked below level 8:
 * its decode is serial (about 150 MB/s a worker on the corpus's images against 600 for
 * Lorenzo's), and it saved 0.5-2 % on two of the three images (11 % on icons).
 */
const MED_MARGIN = 0.03;
/** A sample the plain codec is estimated to code to 1 / PLAIN_ENOUGH of its bytes is not planned (ts/codec/cpu/encode.ts uses the same share a chunk). */
export const PLAIN_ENOUGH = 12;
/** Most fields a record stride or channel axis may have to be coded as planes. */
const MAX_PLANE_FIELDS = 16;

/** F[e]: the f64 nearest 10^-e, the decimal map's factor (index e = 0..18). */
export const DECIMAL_FACTORS: Float64Array = Float64Array.from({ length: MAX_DECIMAL_EXPONENT + 1 }, (_, e) => Number(`1e-${e}`));

/** A way to see the array: cells of `fields` elements, rows of `rowCells` cells, planes of `planeRows` rows (exported for the tests). */
export interface Geometry {
  fields: number;
  /** Cells a row; 0: the chunk's cells (records in one row). */
  rowCells: number;
  planeRows: number;
  /** Axes the cells span (1: a sequence, 2: rows, 3: planes of rows). */
  axes: number;
}

/**
 * The geometries a shape offers: the grid of elements (the last axis a row, the one before it a
 * plane's rows), and where the last axis is short (2..16) channels or record fields as cells.
 */
function geometries(shape: readonly number[]): Geometry[] {
  const r = shape.length;
  const out: Geometry[] = [];
  if (r >= 2) out.push({ fields: 1, rowCells: shape[r - 1], planeRows: r >= 3 ? shape[r - 2] : 1, axes: Math.min(r, 3) });
  const last = shape[r - 1];
  if (r >= 2 && last >= 2 && last <= MAX_PLANE_FIELDS) {
    if (r === 2) out.push({ fields: last, rowCells: 0, planeRows: 1, axes: 1 });
    else out.push({ fields: last, rowCells: shape[r - 2], planeRows: r >= 4 ? shape[r - 3] : 1, axes: Math.min(r - 1, 3) });
  }
  return out;
}

/**
 * Predictors worth trying over cells that span `axes` axes (both paths' writers code them all:
 * ts/codec/cpu/encode.ts, ts/codec/gpu/predict-encode.ts).
 */
function predictorsFor(axes: number, isFloat: boolean): Predictor[] {
  if (axes === 1) return [Predictor.Left];
  const out = [Predictor.Left, Predictor.Up, Predictor.Lorenzo2];
  if (axes >= 3) out.push(Predictor.Lorenzo3);
  if (!isFloat) out.push(Predictor.Med);
  return out;
}

/** The histogram of all byte planes together, kept for {@link planesBytes}. */
const WHOLE_HISTOGRAM = new Int32Array(256);

/** c log2 c for counts c up to 2^13 (a field's byte planes together: 4 x 1024 bytes at most); larger ones computed. */
const C_LOG2_C = Float64Array.from({ length: 1 << 13 }, (_, c) => (c > 0 ? c * Math.log2(c) : 0));

/**
 * Order-0 entropy in bits of the `total` bytes counted in `h[at, at + 256)`: total log2 total -
 * sum of c log2 c (a table lookup a count, where -c log2(c / total) a count had been a third of a
 * plan's time); a symbol costs at least a bit a byte under Huffman, unless one symbol fills the
 * stream.
 */
function histogramBits(h: Int32Array, at: number, total: number): number {
  let sum = 0;
  let present = 0;
  for (let i = at; i < at + 256; i++) {
    const c = h[i];
    if (c === 0) continue;
    sum += c < C_LOG2_C.length ? C_LOG2_C[c] : c * Math.log2(c);
    present++;
  }
  const all = total < C_LOG2_C.length ? C_LOG2_C[total] : total * Math.log2(total);
  return present <= 1 ? 0 : Math.max(all - sum, total * 0.05);
}

/**
 * Order-0 entropy in bytes of `n` values of `w` bytes whose byte planes are counted in
 * `planes[at + 256 k, at + 256 (k + 1))` (plane k: the values' byte k): the smaller of their bytes
 * as one stream and as w byte planes.
 */
function planesBytes(planes: Int32Array, at: number, n: number, w: number): number {
  let planeBits = 0;
  for (let k = 0; k < w; k++) planeBits += histogramBits(planes, at + 256 * k, n);
  if (w === 1) return planeBits / 8;
  const whole = WHOLE_HISTOGRAM.fill(0);
  for (let k = 0; k < w; k++) for (let i = 0; i < 256; i++) whole[i] += planes[at + 256 * k + i];
  return Math.min(planeBits, histogramBits(whole, 0, n * w)) / 8;
}

/** The byte-plane histograms of a field's residuals, kept for {@link residualsBytes} (w planes of 256 counts). */
const FIELD_HISTOGRAMS = new Int32Array(4 * 256);

/** fpzip's order-preserving map of one f32's bits. */
function floatOrder(b: number): number {
  return (b >>> 31 !== 0 ? ~b : b ^ 0x80000000) >>> 0;
}

/** fpzip's order map of f32 bits in place: `out[from..]`. */
function floatOrderFrom(out: Uint32Array, from: number): void {
  for (let i = from; i < out.length; i++) out[i] = floatOrder(out[i]);
}

/** The reads the planner makes of an array's bytes (a DataView's, little-endian). */
interface ByteView {
  getUint8(at: number): number;
  getUint16(at: number, littleEndian: boolean): number;
  getUint32(at: number, littleEndian: boolean): number;
  getFloat32(at: number, littleEndian: boolean): number;
  getFloat64(at: number, littleEndian: boolean): number;
}

/**
 * An array's bytes held only where the planner reads them ({@link planSampleRanges}): `length`
 * bytes in all, reads outside the ranges given read 0 (as in a zero-filled array of the whole
 * length, which would cost an allocation of its size). What a writer whose elements are
 * elsewhere (the GPU path) plans over.
 */
export class SampledBytes implements ByteView {
  /** Bytes of the whole array. */
  readonly length: number;
  readonly #parts: readonly { at: number; bytes: Uint8Array }[];
  readonly #starts: number[];
  readonly #views: DataView[];

  /** `parts`: each range's first byte and its bytes, in order, not overlapping. */
  constructor(length: number, parts: readonly { at: number; bytes: Uint8Array }[]) {
    this.length = length;
    this.#parts = parts;
    this.#starts = parts.map((p) => p.at);
    this.#views = parts.map((p) => new DataView(p.bytes.buffer, p.bytes.byteOffset, p.bytes.byteLength));
  }

  /** The first `end` bytes (a flat array's whole records); `start` must be 0. */
  subarray(start: number, end: number): SampledBytes {
    if (start !== 0) throw new RangeError('SampledBytes.subarray takes a prefix');
    return new SampledBytes(Math.min(end, this.length), this.#parts);
  }

  /** The range the last read found (reads come in runs over one range). */
  #last = 0;

  /** The index of the range holding bytes [at, at + size), or -1: not held. */
  #part(at: number, size: number): number {
    const starts = this.#starts;
    let lo = this.#last;
    if (!(lo < starts.length && starts[lo] <= at && (lo + 1 === starts.length || starts[lo + 1] > at))) {
      lo = 0;
      let hi = starts.length - 1;
      while (lo < hi) {
        const mid = (lo + hi + 1) >> 1;
        if (starts[mid] <= at) lo = mid;
        else hi = mid - 1;
      }
      this.#last = lo;
    }
    const view = this.#views[lo];
    const offset = at - (starts[lo] ?? 0);
    return view !== undefined && offset >= 0 && offset + size <= view.byteLength ? lo : -1;
  }

  /** Bytes [at, at + length) where one range holds them all (a view, no copy), else undefined. */
  bytesAt(at: number, length: number): Uint8Array | undefined {
    const i = this.#part(at, length);
    if (i < 0) return undefined;
    const from = at - this.#starts[i];
    return this.#parts[i].bytes.subarray(from, from + length);
  }

  getUint8(at: number): number {
    const i = this.#part(at, 1);
    return i < 0 ? 0 : this.#views[i].getUint8(at - this.#starts[i]);
  }
  getUint16(at: number, littleEndian: boolean): number {
    const i = this.#part(at, 2);
    return i < 0 ? 0 : this.#views[i].getUint16(at - this.#starts[i], littleEndian);
  }
  getUint32(at: number, littleEndian: boolean): number {
    const i = this.#part(at, 4);
    return i < 0 ? 0 : this.#views[i].getUint32(at - this.#starts[i], littleEndian);
  }
  getFloat32(at: number, littleEndian: boolean): number {
    const i = this.#part(at, 4);
    return i < 0 ? 0 : this.#views[i].getFloat32(at - this.#starts[i], littleEndian);
  }
  getFloat64(at: number, littleEndian: boolean): number {
    const i = this.#part(at, 8);
    return i < 0 ? 0 : this.#views[i].getFloat64(at - this.#starts[i], littleEndian);
  }
}

/** An array's bytes as the planner takes them: all of them, or a sample ({@link SampledBytes}). */
export type PlanBytes = Uint8Array | SampledBytes;

/** The planner's view of `bytes`. */
function viewOf(bytes: PlanBytes): ByteView {
  return bytes instanceof SampledBytes ? bytes : new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** Word i of the bytes `view` reads (words of `w` bytes, little-endian), unsigned. */
function wordReader(view: ByteView, w: number): (i: number) => number {
  return (i) => (w === 1 ? view.getUint8(i) : w === 2 ? view.getUint16(2 * i, true) : view.getUint32(4 * i, true));
}

/**
 * Word e of fpzip's order map of the f64 elements `view` holds (their low halves at even e, high
 * at odd): a negative element's bits inverted, a positive one's sign bit set.
 */
function floatOrderWord64(view: ByteView, e: number): number {
  const v = view.getUint32(4 * e, true);
  if (view.getUint32(8 * (e >> 1) + 4, true) >>> 31 !== 0) return ~v >>> 0;
  return e % 2 === 1 ? (v ^ 0x80000000) >>> 0 : v;
}

/** The first words of the {@link PLAN_PARTS} sample ranges of `length` words spread over `n` words (whole elements of `per` words). */
function partStarts(n: number, length: number, per: number): number[] {
  return Array.from({ length: PLAN_PARTS }, (_, q) => Math.floor((q * (n - length)) / Math.max(1, PLAN_PARTS - 1) / per) * per);
}

/**
 * How far back (words) the neighbours of a geometry's predictors lie: the element itself (0), a
 * row back, a plane back, and a plane and a row back; each read also a cell (`fields` words)
 * further back. Cells with no rows (rowCells 0) read only along their row.
 */
function shiftsOf(g: Geometry): number[] {
  if (g.axes === 1) return [0];
  const row = g.rowCells * g.fields;
  if (g.axes === 2) return [0, row];
  const plane = row * g.planeRows;
  return [0, row, plane, plane + row];
}

/**
 * Words a window's segment holds before its sample range's first word, shifted: the cell the
 * range's first word lies in, the cell before it, and a little more.
 */
const marginOf = (g: Geometry) => 2 * g.fields + 16;

/**
 * The values (under a map) that the residuals of a sample range of `length` words from `first`
 * read under a geometry: for each of its shifts d ({@link shiftsOf}), words [first - d - margin,
 * first + length - d), 0 before word 0. Only these, not the span from a plane back: a volume's
 * plane of 640 x 480 made the span 300 times the range, and the GPU path read it back.
 */
export interface Window {
  first: number;
  margin: number;
  /** By shift, as {@link shiftsOf} lists them: word x read through shift d lies at x + d + margin - first. */
  segments: Uint32Array[];
}

/**
 * Fills `out` with words [lo, lo + out.length) of an array under a map, where lo + out.length
 * is at most the array's words; those before word 0 are left as they are (0 in a new array).
 */
export type WordsFill = (out: Uint32Array, lo: number) => void;

/** The {@link WordsFill} of `u` (word e's value under a map), word by word. */
export const fillOf =
  (u: (e: number) => number): WordsFill =>
  (out, lo) => {
    for (let i = Math.max(0, -lo); i < out.length; i++) out[i] = u(lo + i);
  };

/**
 * The {@link WordsFill} of the words of `bytes` as they are (`w` bytes, little-endian, unsigned,
 * as `bitsAt` reads them one by one): one typed-array copy where the words lie in one array on a
 * w-byte boundary (a Uint8Array; one range of a {@link SampledBytes}), else word by word (a
 * word at a time through the reader had been a third of a plan's time); then `map`, when given,
 * maps the words filled in place: `out[from..]`, words lo + from on.
 */
function bitsFill(
  bytes: PlanBytes,
  w: number,
  bitsAt: (e: number) => number,
  map?: (out: Uint32Array, from: number, lo: number) => void,
): WordsFill {
  return (out, lo) => {
    const from = Math.max(0, -lo);
    const count = out.length - from;
    if (count <= 0) return;
    const at = (lo + from) * w;
    const src = bytes instanceof SampledBytes ? bytes.bytesAt(at, count * w) : bytes.subarray(at, at + count * w);
    if (src === undefined || src.length !== count * w || src.byteOffset % w !== 0) fillOf(bitsAt)(out, lo);
    else
      out.set(
        w === 1 ? src : w === 2 ? new Uint16Array(src.buffer, src.byteOffset, count) : new Uint32Array(src.buffer, src.byteOffset, count),
        from,
      );
    map?.(out, from, lo);
  };
}

/** The window of the map `fill` fills over the range [first, first + length) for geometry `g`. */
export function windowOf(fill: WordsFill, first: number, length: number, g: Geometry): Window {
  const margin = marginOf(g);
  const segments = shiftsOf(g).map((d) => {
    const values = new Uint32Array(length + margin);
    fill(values, first - d - margin);
    return values;
  });
  return { first, margin, segments };
}

/** The word ranges [start, end) that {@link windowOf} reads for geometry `g` and a range of `length` words from `first`. */
function windowRanges(first: number, length: number, g: Geometry): [number, number][] {
  const margin = marginOf(g);
  return shiftsOf(g).map((d) => [first - d - margin, first + length - d]);
}

/** Residuals of {@link residualBytes} before their mask, kept (a sample range's words). */
let residuals = new Int32Array(1 << 10);

/** LOCO-I's median edge detector: of the left (a), upper (b) and upper-left (ab) neighbours. */
function med(a: number, b: number, ab: number): number {
  const mx = a > b ? a : b;
  const mn = a > b ? b : a;
  return ab >= mx ? mn : ab <= mn ? mx : a + b - ab;
}

/**
 * The prediction under `p` of the word at x in a window's segments `[own, up1, plane, planeUp]`
 * ({@link Window}), in row i, with a cell before it in its row (`left`) or not: what the
 * writers' predictors give, zeros for the neighbours past an edge (a row's first cell, the
 * array's first row; for Lorenzo3 a plane's first row, and its first plane).
 */
function predictionAt(
  seg: readonly Uint32Array[],
  x: number,
  left: boolean,
  i: number,
  lead: number,
  planeRows: number,
  p: Predictor,
): number {
  const [own, up1, plane, planeUp] = seg;
  const up = p === Predictor.Lorenzo3 ? i % planeRows !== 0 : i > 0;
  const a = left ? own[x - lead] : 0;
  if (p === Predictor.None) return 0;
  if (p === Predictor.Left) return a;
  const b = up ? up1[x] : 0;
  const ab = up && left ? up1[x - lead] : 0;
  if (p === Predictor.Up) return b;
  if (p === Predictor.Lorenzo2) return a + b - ab;
  if (p === Predictor.Med) return med(a, b, ab);
  if (i < planeRows) return a + b - ab;
  const z = plane[x];
  const az = left ? plane[x - lead] : 0;
  const bz = up ? planeUp[x] : 0;
  const abz = up && left ? planeUp[x - lead] : 0;
  return a + b + z - ab - az - bz + abz;
}

/**
 * `res[t]` = word x0 + t of `seg[0]` less its prediction under `p` (t < count), as if no word
 * lay on an edge ({@link predictionAt} with every neighbour present). The sums are exact in
 * doubles; the store keeps them mod 2^32.
 */
function predictResiduals(res: Int32Array, seg: readonly Uint32Array[], x0: number, count: number, lead: number, p: Predictor): void {
  const [own, up1, plane, planeUp] = seg;
  if (p === Predictor.None) for (let t = 0, x = x0; t < count; t++, x++) res[t] = own[x];
  else if (p === Predictor.Left) for (let t = 0, x = x0; t < count; t++, x++) res[t] = own[x] - own[x - lead];
  else if (p === Predictor.Up) for (let t = 0, x = x0; t < count; t++, x++) res[t] = own[x] - up1[x];
  else if (p === Predictor.Lorenzo2) for (let t = 0, x = x0; t < count; t++, x++) res[t] = own[x] - own[x - lead] - up1[x] + up1[x - lead];
  else if (p === Predictor.Lorenzo3) {
    for (let t = 0, x = x0; t < count; t++, x++) {
      const y = x - lead;
      res[t] = own[x] - own[y] - up1[x] - plane[x] + up1[y] + plane[y] + planeUp[x] - planeUp[y];
    }
  } else for (let t = 0, x = x0; t < count; t++, x++) res[t] = own[x] - med(own[x - lead], up1[x], up1[x - lead]);
}

/**
 * The bytes of `count` residuals `res` (w bytes each after the mask, zigzagged; fields of
 * `lead` interleaved): each field's smaller of its order-0 entropy ({@link planesBytes}) and what
 * rle (+ huffman) would take from its runs, summed.
 */
function residualsBytes(res: Int32Array, count: number, w: number, lead: number): number {
  const bits = 8 * w;
  const mask = w === 4 ? -1 : (1 << bits) - 1;
  const per = count / lead;
  let total = 0;
  // field by field, its run count and last residual in locals (kept in arrays by field, each
  // residual's store and the next one's load had made this loop three times slower)
  for (let k = 0; k < lead; k++) {
    const hist = FIELD_HISTOGRAMS.fill(0, 0, 256 * w);
    let runs = 0;
    let last = 0;
    for (let t = k; t < count; t += lead) {
      const d = res[t] & mask;
      const r = ((d << 1) ^ -(d >>> (bits - 1))) & mask;
      hist[r & 255]++;
      if (w > 1) {
        hist[256 + ((r >>> 8) & 255)]++;
        if (w === 4) {
          hist[512 + ((r >>> 16) & 255)]++;
          hist[768 + (r >>> 24)]++;
        }
      }
      if (t === k || r !== last) runs++;
      last = r;
    }
    total += Math.min(planesBytes(hist, 0, per, w), runs * (1 + w / 2));
  }
  return total;
}

/**
 * The entropy bytes of the residuals (zigzagged, w bytes) of elements [first, first + n) of the
 * values in `win` (its range's, under a map) under predictor `p` over geometry `g` (rows of
 * `row` elements, cells of `lead`), field by field, summed: neighbours come from the whole
 * array, so a sample needs no whole rows. A field's bytes are the smaller of its order-0 entropy
 * ({@link planesBytes}) and what rle (+ huffman) would take from its runs: a run's value at half
 * its width (Huffman over values that repeat) and a byte of length (label volumes and icons with
 * flat backgrounds are made of runs, which the entropy of single values misses).
 * The residuals are made by a loop a predictor as if no word lay on an edge, then the words on
 * an edge again by {@link predictionAt} (a loop that asked at each word which predictor and
 * which edges had been half of a plan's time), and counted field by field (byte planes, runs).
 * Exported for the tests (test/predict.test.ts holds the word-by-word reference).
 */
export function residualBytes(win: Window, first: number, n: number, w: number, g: Geometry, row: number, p: Predictor): number {
  const lead = g.fields;
  const planeRows = g.planeRows;
  const per = Math.floor(n / lead);
  if (per <= 0) return Infinity;
  const count = per * lead;
  if (residuals.length < count) residuals = new Int32Array(count);
  const res = residuals;
  // word e and its neighbours through each shift: e's index in every segment is e - e0 + x0
  const seg = win.segments;
  const own = seg[0];
  const e0 = first - (first % lead);
  const x0 = e0 + win.margin - win.first;
  predictResiduals(res, seg, x0, count, lead, p);
  // the words on an edge the loop read past: a row's first cell (its left neighbours are the
  // row before's last), and for Lorenzo3 every word of a plane's first row (its up neighbours
  // are the plane before's last row). Neighbours before word 0 are 0 in the window, as the
  // array's first row and plane take them.
  const end = e0 + count;
  for (let i = Math.floor(e0 / row), at = i * row; at < end; i++, at += row) {
    const edgeRow = p === Predictor.Lorenzo3 && i % planeRows === 0;
    const from = Math.max(at, e0);
    const to = Math.min(edgeRow ? at + row : at + lead, end);
    for (let e = from; e < to; e++) res[e - e0] = own[e - e0 + x0] - predictionAt(seg, e - e0 + x0, e - at >= lead, i, lead, planeRows, p);
  }
  return residualsBytes(res, count, w, lead);
}

/**
 * The cells {@link chooseExponents} tries of `cells` (every step-th from cell 0): the step, at
 * least 1, that leaves `sample` to 2 x sample - 1 of them. The GPU path reads back just those.
 */
export function exponentSampleStep(cells: number, sample = 64): number {
  return Math.max(1, Math.floor(cells / sample));
}

/**
 * The decimal exponents of `fields` interleaved fields of `count` float elements (`values`: f32
 * or f64): for each field the smallest e (0..MAX) under which most of a sample's values
 * round-trip (f32: as f32(round(x 10^e) F[e]) with |round(x 10^e)| < 2^31; f64: as
 * round(x 10^e) / 10^e with |round(x 10^e)| < 2^52, the kernels' tests), or undefined when some
 * field has none for all but 1 in 64 of its sample (the float-order map codes it better).
 */
export function chooseExponents(values: Float32Array | Float64Array, count: number, fields: number, sample = 64): number[] | undefined {
  const wide = values instanceof Float64Array;
  const exps: number[] = [];
  const cells = Math.floor(count / fields);
  const step = exponentSampleStep(cells, sample);
  for (let k = 0; k < fields; k++) {
    let best = -1;
    let tried = 0;
    for (let e = 0; e <= MAX_DECIMAL_EXPONENT && best < 0; e++) {
      const scale = 10 ** e;
      let ok = 0;
      tried = 0;
      for (let c = 0; c < cells; c += step) {
        const x = values[c * fields + k];
        tried++;
        const v = Math.round(x * scale);
        const exact = wide ? Math.abs(v) < 2 ** 52 && v / scale === x : Math.abs(v) < 2 ** 31 && Math.fround(v * DECIMAL_FACTORS[e]) === x;
        if (exact && !Object.is(x, -0)) ok++;
      }
      // an exception costs 4 + width bytes where a value costs one or two: the chunk coder gives
      // up past 1 in 64 (ts/codec/cpu/encode.ts), so a sample must have at most that share
      if (ok >= tried - Math.floor(tried / 64)) best = e;
    }
    if (best < 0) return undefined;
    exps.push(best);
  }
  return exps;
}

/** Most elements a record stride of a flat array may span (the chooser tries 2..MAX_STRIDE). */
export const MAX_STRIDE = 16;
/** Bytes a flat array needs for a stride search: below this its fixed cost is a large share of the call. */
export const STRIDE_MIN_BYTES = 128 << 10;
/**
 * Elements the stride search samples (in {@link PLAN_PARTS} ranges): 17 lags of them each call,
 * about 0.2 ms (u8) to 0.4 ms (f32) on the VM, against 2-4 ms to compress 1 MiB.
 */
const STRIDE_SAMPLE_ELEMENTS = 2048;

/**
 * The record stride of a flat array of `type` (8-byte elements as their two u32 words,
 * differenced word by word as the predictor takes them): the lag s in
 * 2..{@link MAX_STRIDE} whose differences u[i] - u[i - s] (u: the bits, fpzip's order map for
 * f32) have the smallest order-0 entropy on a sample of {@link PLAN_PARTS} ranges, when it is below
 * {@link PLAN_MARGIN} of the lag-1 differences' (and of the values'); else 1. Interleaved channels
 * (RGB pixels as u8), points (x, y, z as f32) and records of a few fields have one; a smooth
 * signal's nearest neighbour is its best.
 */
export function detectStride(bytes: PlanBytes, type: ElementType): number {
  const size = elementSize(type);
  // the values as words: an 8-byte element's two u32 halves (under f64's order map), two words a lag
  const per = size === 8 ? 2 : 1;
  const w = size === 8 ? 4 : size;
  const n = bytes.length / w;
  if (bytes.length < STRIDE_MIN_BYTES) return 1;
  const view = viewOf(bytes);
  const isFloat = type === 'f32' || type === 'f64';
  const back = MAX_STRIDE * per;
  const partLength = Math.floor((STRIDE_SAMPLE_ELEMENTS * per) / PLAN_PARTS / per) * per;
  const span = back + partLength;
  // the sample's values (each range with the MAX_STRIDE elements before it), read once
  const values = new Uint32Array(PLAN_PARTS * span);
  const wordAt = wordReader(view, w);
  const fill = !isFloat
    ? bitsFill(bytes, w, wordAt)
    : per === 1
      ? bitsFill(bytes, w, wordAt, floatOrderFrom)
      : fillOf((e: number) => floatOrderWord64(view, e));
  const starts = partStarts(n, span, per);
  for (let q = 0; q < PLAN_PARTS; q++) fill(values.subarray(q * span, (q + 1) * span), starts[q]);
  const bits = 8 * w;
  const mask = w === 4 ? 0xffffffff : (1 << bits) - 1;
  const hist = new Uint32Array(256 * w);
  const total = PLAN_PARTS * partLength;
  /** Order-0 entropy (bytes) of the byte planes of the zigzagged lag-s differences (s 0: the values). */
  const bytesAt = (s: number) => {
    const lag = s * per;
    hist.fill(0);
    for (let q = 0; q < PLAN_PARTS; q++) {
      for (let i = q * span + back, end = (q + 1) * span; i < end; i++) {
        const d = (values[i] - (lag === 0 ? 0 : values[i - lag])) & mask;
        const r = ((d << 1) ^ -(d >>> (bits - 1))) & mask;
        hist[r & 255]++;
        if (w > 1) hist[256 + ((r >>> 8) & 255)]++;
        if (w > 2) {
          hist[512 + ((r >>> 16) & 255)]++;
          hist[768 + (r >>> 24)]++;
        }
      }
    }
    let sum = 0;
    for (let k = 0; k < 256 * w; k++) if (hist[k] > 0) sum -= hist[k] * Math.log2(hist[k] / total);
    return sum / 8;
  };
  const plain = Math.min(bytesAt(0), bytesAt(1));
  let best = 1;
  let bestBytes = plain;
  for (let s = 2; s <= MAX_STRIDE; s++) {
    const b = bytesAt(s);
    if (b < bestBytes) {
      best = s;
      bestBytes = b;
    }
  }
  return bestBytes < PLAN_MARGIN * plain ? best : 1;
}

/**
 * The lowest level that searches a flat array's record stride: a predicted flat array of records
 * of 3 bytes compresses at a third of the plain pipelines' speed (photos_rgb.u8 on the VM: 150
 * against 500 MB/s, for a 1.78 ratio against 1.43), which level 1 does not trade.
 */
const FLAT_PLAN_MIN_LEVEL = 2;

/**
 * The plan of a flat array (no shape, or one axis): with a record stride s ({@link
 * detectStride}; from level {@link FLAT_PLAN_MIN_LEVEL}), the plan of its first whole records
 * seen as a shape [records, s], else undefined. Its chunks must hold whole records ({@link planRecord}).
 */
export function planFlat(bytes: PlanBytes, type: ElementType, level = 5): PredictPlan | undefined {
  // level 1 keeps a flat array's plain pipelines (lz4's place: the speed first)
  if (level < FLAT_PLAN_MIN_LEVEL) return undefined;
  const s = detectStride(bytes, type);
  if (s === 1) return undefined;
  const size = elementSize(type);
  const records = Math.floor(bytes.length / size / s);
  return planPredict(bytes.subarray(0, records * s * size), type, [records, s], level);
}

/**
 * Elements of `type` a chunk coded with `plan` must be a multiple of: a record of fields x row
 * cells x plane rows words (a row of 0 cells: 1), two words an element of 8 bytes.
 */
export function planRecord(plan: PredictPlan, type: ElementType): number {
  return (plan.fields * Math.max(1, plan.rowCells) * plan.planeRows) / (elementSize(type) === 8 ? 2 : 1);
}

/**
 * The element ranges `[start, end)` that planning `length` elements of `type` reads
 * ({@link planPredict} over `shape`, or without one, {@link planFlat}'s stride search and plan;
 * with {@link predictPlanOf}'s choice between them), merged and in order: a writer whose elements
 * are elsewhere (on the GPU) reads only these and plans over an array that holds them in their
 * places (zeros elsewhere), with the same plan as over the whole array. Tens of KiB: each sample
 * range and its copies a row, a plane, and a plane and a row back ({@link windowOf}; a flat
 * array's, the span two records back).
 */
export function planSampleRanges(length: number, type: ElementType, shape: readonly number[] | undefined): [number, number][] {
  const size = elementSize(type);
  const per = size === 8 ? 2 : 1;
  const n = length * per;
  const flat = shape === undefined || shape.length < 2;
  const words: [number, number][] = [];
  // a flat array's plan is planPredict's over [records, s] of its first records (fewer words
  // than n by less than a record: the parts move by less than MAX_STRIDE words), with
  // neighbours at most two records back
  const slack = flat ? 2 * MAX_STRIDE * per : 0;
  const options = flat
    ? [{ fields: 1, rowCells: MAX_STRIDE * per, planeRows: 1, axes: 2 }]
    : size === 8
      ? wordGeometries(shape)
      : geometries(shape);
  const partLength = Math.max(per, Math.floor(Math.min(PLAN_SAMPLE_ELEMENTS, n) / PLAN_PARTS / per) * per);
  for (const first of partStarts(n, partLength, per)) {
    // a flat array's parts move (its records' plan): the whole span two records back
    if (flat) words.push([first - 2 * MAX_STRIDE * per - marginOf(options[0]) - slack, first + partLength + slack]);
    else for (const g of options) words.push(...windowRanges(first, partLength, g));
  }
  if (flat) {
    const span = MAX_STRIDE * per + Math.floor((STRIDE_SAMPLE_ELEMENTS * per) / PLAN_PARTS / per) * per;
    for (const lo of partStarts(n, span, per)) words.push([lo, lo + span]);
  }
  words.sort((a, b) => a[0] - b[0]);
  const out: [number, number][] = [];
  for (const [a, b] of words) {
    const start = Math.max(0, Math.floor(a / per));
    const end = Math.min(length, Math.ceil(b / per));
    if (end <= start) continue;
    const last = out[out.length - 1];
    if (last !== undefined && start <= last[1]) last[1] = Math.max(last[1], end);
    else out.push([start, end]);
  }
  return out;
}

/**
 * The geometries of an 8-byte type's words (an element's low and high u32 halves, each a field):
 * the element shape's geometries with twice the fields, and the sequence of elements.
 */
function wordGeometries(shape: readonly number[]): Geometry[] {
  const out: Geometry[] = [{ fields: 2, rowCells: 0, planeRows: 1, axes: 1 }];
  for (const g of geometries(shape)) if (2 * g.fields <= MAX_PLANE_FIELDS) out.push({ ...g, fields: 2 * g.fields });
  return out;
}

/**
 * The plan of an 8-byte type's chunks without a search (a fixed codec): each element's halves
 * coded as two planes, unpredicted.
 */
export const WORD_PLANES_PLAN: PredictPlan = { map: ValueMap.None, predictor: Predictor.None, fields: 2, rowCells: 0, planeRows: 1 };

/**
 * The plan for compressing `bytes` (elements of `type`, little-endian) of this `shape` (C order),
 * or undefined when none promises less than the plain codec (or the shape offers no geometry).
 * Ranks every geometry x predictor x value map (f32, f64: float order, and decimal where a
 * sample's values are decimals) on a sample; `level` (1..9) weighs med's slower decode below 8.
 * It reads only the elements
 * {@link planSampleRanges} names.
 * 8-byte types (f64, i64, u64) always get a plan (their chunks have no plain pipeline): their
 * words are ranked, each element's halves as two fields, unpredicted ({@link WORD_PLANES_PLAN})
 * among the candidates.
 */
export function planPredict(bytes: PlanBytes, type: ElementType, shape: readonly number[], level = 5): PredictPlan | undefined {
  const size = elementSize(type);
  const wide = size === 8;
  const w = wide ? 4 : size;
  const n = bytes.length / w;
  const options = wide ? wordGeometries(shape) : geometries(shape);
  if (wide && n < 64) return WORD_PLANES_PLAN;
  if (options.length === 0 || n < 64) return undefined;
  const isFloat = type === 'f32' || type === 'f64';
  const view = viewOf(bytes);
  const bitsAt = wordReader(view, w);
  // the sample: PLAN_PARTS ranges spread over the array (neighbours are read from the whole array)
  // (8-byte types: whole elements, two words each)
  const per = wide ? 2 : 1;
  const partLength = Math.max(per, Math.floor(Math.min(PLAN_SAMPLE_ELEMENTS, n) / PLAN_PARTS / per) * per);
  const parts = partStarts(n, partLength, per);
  const wordsFill = bitsFill(bytes, w, bitsAt);
  const maps: { map: ValueMap; fill: WordsFill }[] = [{ map: ValueMap.None, fill: wordsFill }];
  if (isFloat) {
    // element i's value, and (8-byte types) word e's half of a 64-bit value v
    const floatAt = wide ? (i: number) => view.getFloat64(8 * i, true) : (i: number) => view.getFloat32(4 * i, true);
    const half = (e: number, lo: number, hi: number) => (e % 2 === 0 ? lo : hi) >>> 0;
    maps[0] = {
      map: ValueMap.FloatOrder,
      fill: wide ? fillOf((e) => floatOrderWord64(view, e)) : bitsFill(bytes, w, bitsAt, floatOrderFrom),
    };
    // decimal exponents from the sample's values (an element field a geometry with fields)
    const elements = n / per;
    for (const g of options) {
      const ef = g.fields / per;
      const sample = new (wide ? Float64Array : Float32Array)((parts.length * partLength) / per);
      const partElements = partLength / per;
      parts.forEach((first, q) => {
        const at = first / per - ((first / per) % ef);
        for (let i = 0; i < partElements && at + i < elements; i++) sample[q * partElements + i] = floatAt(at + i);
      });
      const exps = chooseExponents(sample, sample.length - (sample.length % ef), ef);
      if (exps === undefined) continue;
      const scales = exps.map((e) => 10 ** e);
      const decimal = wide
        ? fillOf((e: number) => {
            const i = e >> 1;
            const v = Math.round(floatAt(i) * scales[i % ef]);
            return half(e, v % 2 ** 32, Math.floor(v / 2 ** 32));
          })
        : bitsFill(bytes, w, bitsAt, (out, from, lo) => {
            // the words' bits as f32 values, each scaled in place
            const values = new Float32Array(out.buffer, out.byteOffset, out.length);
            for (let i = from; i < out.length; i++) out[i] = Math.round(values[i] * scales[(lo + i) % ef]) >>> 0;
          });
      maps.push({ map: ValueMap.Decimal, fill: decimal });
      break;
    }
  }
  const whole: Geometry = { fields: wide ? 2 : 1, rowCells: 0, planeRows: 1, axes: 1 };
  let plain = 0;
  for (const first of parts) {
    // the plain codec's estimate: the elements or their deltas, as they are (8-byte types: the
    // words planes unpredicted, which is a candidate below)
    const win = windowOf(wordsFill, first, partLength, whole);
    plain += Math.min(
      residualBytes(win, first, partLength, w, whole, n, Predictor.None),
      wide ? Infinity : residualBytes(win, first, partLength, w, whole, n, Predictor.Left),
    );
  }
  // an array the plain pipelines code to a twelfth is not predicted (as a chunk is not: runs of
  // labels and backgrounds), and its plan is not worth its time
  if (!wide && plain * PLAIN_ENOUGH <= parts.length * partLength * w) return undefined;
  let best: { plan: PredictPlan; bytes: number } | undefined = wide ? { plan: WORD_PLANES_PLAN, bytes: plain } : undefined;
  for (const g of options) {
    const row = g.rowCells === 0 ? n : g.rowCells * g.fields;
    for (const { map, fill } of maps) {
      // each part's values under the map, with the neighbours the geometry's predictors read
      const windows = parts.map((first) => windowOf(fill, first, partLength, g));
      for (const predictor of predictorsFor(g.axes, isFloat)) {
        let bytes = 0;
        parts.forEach((first, q) => (bytes += residualBytes(windows[q], first, partLength, w, g, row, predictor)));
        // med decodes element by element (the linear predictors in v128 lanes and a prefix sum):
        // below level 8 it must save MED_MARGIN over the best of the others
        if (predictor === Predictor.Med && level < 8) bytes /= 1 - MED_MARGIN;
        // (8-byte types: a predicted plan must beat the word planes by the margin too)
        if (wide && !(bytes < PLAN_MARGIN * plain)) continue;
        if (best === undefined || bytes < best.bytes)
          best = { plan: { map, predictor, fields: g.fields, rowCells: g.rowCells, planeRows: g.planeRows }, bytes };
      }
    }
  }
  if (wide) return best!.plan;
  if (best === undefined || !(best.bytes < PLAN_MARGIN * plain)) return undefined;
  return best.plan;
}
