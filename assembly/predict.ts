// Stage 7 of the version-4 codec, predict (docs/format.md, "Stage 7: predict"): the value maps
// (float order after fpzip, decimal floats after ALP), the predictors along an array's axes
// (left, up, 2-D and 3-D Lorenzo after SZ, LOCO-I's median edge detector) with zigzagged
// residuals, and the split of interleaved fields into planes. The chunk's layout and the
// chooser are TypeScript (ts/codec/cpu/encode.ts, ts/codec/cpu/decode.ts); these kernels allocate nothing and take
// pointers. Plain scalar loops in both builds: tests compare them with the reference in
// test/support/predict-reference.ts.
//
// The predictors work in element space: a row is `row` elements (X cells of `lead` fields),
// a plane `planeRows` rows; an element's neighbours are `lead` (left), `row` (up) and
// `row * planeRows` (back) elements before it, 0 where the chunk has none.

import { deltaDecode } from './delta';

/** Predictor ids (entry payload byte 1). */
const NONE: u32 = 0;
const LEFT: u32 = 1;
const UP: u32 = 2;
const LORENZO2: u32 = 3;
const LORENZO3: u32 = 4;
const MED: u32 = 5;

// @ts-ignore: decorator
@inline function zigzag<T>(d: u32): T {
  const bits: u32 = sizeof<T>() * 8;
  const m: u32 = bits == 32 ? 0xffffffff : (1 << bits) - 1;
  const v = d & m;
  const sign = v >> (bits - 1);
  return <T>(((v << 1) ^ (0 - sign)) & m);
}

// @ts-ignore: decorator
@inline function unzigzag(r: u32): u32 {
  return (r >>> 1) ^ (0 - (r & 1));
}

// LOCO-I's median edge detector on values of T held in u32, without branches (wasm selects)
// @ts-ignore: decorator
@inline function med<T>(a: u32, b: u32, c: u32): u32 {
  const mx = max<u32>(a, b);
  const mn = min<u32>(a, b);
  return select<u32>(mn, select<u32>(mx, a + b - c, c <= mn), c >= mx);
}

/**
 * The prediction of element `e` (at place `j` of its row in elements, in row `i`) from the
 * elements before it at `base`. `up`/`back`: the chunk has the row above / the plane before.
 */
// @ts-ignore: decorator
@inline function predictAt<T>(base: usize, e: usize, j: usize, lead: usize, row: usize, plane: usize, p: u32, up: bool, back: bool): u32 {
  const w = sizeof<T>();
  const left = j >= lead;
  const a: u32 = left ? <u32>load<T>(base + (e - lead) * w) : 0;
  if (p == LEFT) return a;
  const b: u32 = up ? <u32>load<T>(base + (e - row) * w) : 0;
  if (p == UP) return b;
  const ab: u32 = up && left ? <u32>load<T>(base + (e - row - lead) * w) : 0;
  if (p == LORENZO2) return a + b - ab;
  if (p == MED) return med<T>(a, b, ab);
  if (p == LORENZO3) {
    if (!back) return a + b - ab;
    const z: u32 = <u32>load<T>(base + (e - plane) * w);
    const az: u32 = left ? <u32>load<T>(base + (e - plane - lead) * w) : 0;
    const bz: u32 = up ? <u32>load<T>(base + (e - plane - row) * w) : 0;
    const abz: u32 = up && left ? <u32>load<T>(base + (e - plane - row - lead) * w) : 0;
    return a + b + z - ab - az - bz + abz;
  }
  return 0;
}

// v128 lanes of T: wrapping arithmetic, zigzag and unsigned comparisons at T's width
// @ts-ignore: decorator
@inline function vsub<T>(a: v128, b: v128): v128 {
  return sizeof<T>() == 1 ? i8x16.sub(a, b) : sizeof<T>() == 2 ? i16x8.sub(a, b) : i32x4.sub(a, b);
}
// @ts-ignore: decorator
@inline function vadd<T>(a: v128, b: v128): v128 {
  return sizeof<T>() == 1 ? i8x16.add(a, b) : sizeof<T>() == 2 ? i16x8.add(a, b) : i32x4.add(a, b);
}
// @ts-ignore: decorator
@inline function vzigzag<T>(d: v128): v128 {
  if (sizeof<T>() == 1) return v128.xor(i8x16.shl(d, 1), i8x16.shr_s(d, 7));
  if (sizeof<T>() == 2) return v128.xor(i16x8.shl(d, 1), i16x8.shr_s(d, 15));
  return v128.xor(i32x4.shl(d, 1), i32x4.shr_s(d, 31));
}
// @ts-ignore: decorator
@inline function vunzigzag<T>(r: v128): v128 {
  const one = sizeof<T>() == 1 ? i8x16.splat(1) : sizeof<T>() == 2 ? i16x8.splat(1) : i32x4.splat(1);
  const half = sizeof<T>() == 1 ? i8x16.shr_u(r, 1) : sizeof<T>() == 2 ? i16x8.shr_u(r, 1) : i32x4.shr_u(r, 1);
  return v128.xor(half, vsub<T>(i32x4.splat(0), v128.and(r, one)));
}
// @ts-ignore: decorator
@inline function vmed<T>(a: v128, b: v128, c: v128): v128 {
  let mx: v128, mn: v128, ge: v128, le: v128;
  if (sizeof<T>() == 1) {
    mx = i8x16.max_u(a, b); mn = i8x16.min_u(a, b); ge = i8x16.ge_u(c, mx); le = i8x16.le_u(c, mn);
  } else if (sizeof<T>() == 2) {
    mx = i16x8.max_u(a, b); mn = i16x8.min_u(a, b); ge = i16x8.ge_u(c, mx); le = i16x8.le_u(c, mn);
  } else {
    mx = i32x4.max_u(a, b); mn = i32x4.min_u(a, b); ge = i32x4.ge_u(c, mx); le = i32x4.le_u(c, mn);
  }
  return v128.bitselect(mn, v128.bitselect(mx, vsub<T>(vadd<T>(a, b), c), le), ge);
}

/**
 * SIMD residuals of elements e0 .. e1 - 1 of one row (each with a left neighbour: place j >= lead)
 * to out (out + (e - e0) * w): the row's predictor with `up` / `back` as the row has them.
 * Returns the first element not done (the scalar loop does the rest).
 */
// @ts-ignore: decorator
@inline function predictEncodeRow<T>(u: usize, out: usize, e0: usize, e1: usize, lead: usize, row: usize, plane: usize, p: u32, up: bool, back: bool): usize {
  const w = sizeof<T>();
  const lanes: usize = 16 / w;
  let e = e0;
  if (!ASC_FEATURE_SIMD) return e;
  for (; e + lanes <= e1; e += lanes) {
    const x = v128.load(u + e * w);
    const a = v128.load(u + (e - lead) * w);
    let pred: v128;
    if (p == LEFT || (!up && (p == UP || p == LORENZO2 || p == MED)) || (p == LORENZO3 && !up && !back)) {
      pred = p == UP ? i32x4.splat(0) : a;
    } else if (p == UP) {
      pred = v128.load(u + (e - row) * w);
    } else if (p == LORENZO2 || (p == LORENZO3 && !back)) {
      pred = vsub<T>(vadd<T>(a, v128.load(u + (e - row) * w)), v128.load(u + (e - row - lead) * w));
    } else if (p == MED) {
      pred = vmed<T>(a, v128.load(u + (e - row) * w), v128.load(u + (e - row - lead) * w));
    } else {
      // lorenzo3 with the plane before; b and ab only when the row above is in the plane
      const z = v128.load(u + (e - plane) * w);
      const az = v128.load(u + (e - plane - lead) * w);
      pred = vsub<T>(vadd<T>(a, z), az);
      if (up) {
        const b = v128.load(u + (e - row) * w);
        const ab = v128.load(u + (e - row - lead) * w);
        const bz = v128.load(u + (e - plane - row) * w);
        const abz = v128.load(u + (e - plane - row - lead) * w);
        pred = vadd<T>(pred, vsub<T>(vadd<T>(vsub<T>(b, ab), abz), bz));
      }
    }
    v128.store(out + (e - e0) * w, vzigzag<T>(vsub<T>(x, pred)));
  }
  return e;
}

/**
 * Residuals of rows `first` .. `first + rows - 1` of the values at `uPtr` (a chunk of rows of
 * `row` elements, planes of `planeRows` rows, cells of `lead` elements), zigzagged, written
 * interleaved at `outPtr` (element e of row first at outPtr[e - first * row]). Reads rows before
 * `first` as neighbours. `uPtr` and `outPtr` must not overlap.
 */
// @ts-ignore: decorator
@inline function predictEncode<T>(uPtr: usize, outPtr: usize, row: usize, planeRows: usize, lead: usize, p: u32, first: usize, rows: usize): void {
  const w = sizeof<T>();
  const plane = row * planeRows;
  if (row < SHORT_ROW && first == 0 && p != NONE && p != MED) {
    predictEncodeAxes<T>(uPtr, outPtr, row, planeRows, lead, p, rows);
    return;
  }
  for (let i = first; i < first + rows; i++) {
    const up = p == LORENZO3 ? i % planeRows != 0 : i > 0;
    const back = i >= planeRows;
    const start = i * row;
    const out = outPtr + (start - first * row) * w;
    if (p == NONE) {
      for (let j: usize = 0; j < row; j++) store<T>(out + j * w, zigzag<T>(<u32>load<T>(uPtr + (start + j) * w)));
      continue;
    }
    // the first cell (no left neighbour), then SIMD over the rest, then the scalar tail
    let j: usize = 0;
    for (; j < lead && j < row; j++) {
      const e = start + j;
      store<T>(out + j * w, zigzag<T>(<u32>load<T>(uPtr + e * w) - predictAt<T>(uPtr, e, j, lead, row, plane, p, up, back)));
    }
    if (j < row) j = predictEncodeRow<T>(uPtr, out + j * w, start + j, start + row, lead, row, plane, p, up, back) - start;
    for (; j < row; j++) {
      const e = start + j;
      store<T>(out + j * w, zigzag<T>(<u32>load<T>(uPtr + e * w) - predictAt<T>(uPtr, e, j, lead, row, plane, p, up, back)));
    }
  }
}

/**
 * Rows shorter than this (elements) are predicted and undone axis by axis over the whole chunk
 * instead of row by row: a row's SIMD pass and prefix sum cost more than they save on a few
 * elements (a flat array's records of 3 bytes: 170 against 400 MB/s on the VM).
 */
const SHORT_ROW: usize = 64;

/**
 * {@link predictEncode} of the linear predictors (left, up, lorenzo2, lorenzo3) from row 0, axis
 * by axis: with the neighbours outside the array taken as 0 (as the predictors do), the residual
 * is the mixed difference of u along the axes the predictor spans, and differences along one axis
 * commute with those along another. So: differences along the row (at distance `lead`) from u into
 * out, then in place from the back along the column (distance `row`; lorenzo3: within a plane)
 * and along the planes (lorenzo3, distance row x planeRows), then zigzag.
 */
// @ts-ignore: decorator
@inline function predictEncodeAxes<T>(uPtr: usize, outPtr: usize, row: usize, planeRows: usize, lead: usize, p: u32, rows: usize): void {
  const w = sizeof<T>();
  const n = row * rows;
  if (n == 0) return;
  const plane = row * planeRows;
  const alongRow = p != UP;
  for (let i: usize = 0; i < rows; i++) {
    const start = i * row;
    for (let j: usize = 0; j < row; j++) {
      const e = start + j;
      const u = <u32>load<T>(uPtr + e * w);
      store<T>(outPtr + e * w, <T>(alongRow && j >= lead ? u - <u32>load<T>(uPtr + (e - lead) * w) : u));
    }
  }
  if (p != LEFT) {
    for (let i = rows - 1; i >= 1; i--) {
      if (p == LORENZO3 && i % planeRows == 0) continue;
      const x = outPtr + i * row * w;
      for (let j: usize = 0; j < row; j++) store<T>(x + j * w, <T>(<u32>load<T>(x + j * w) - <u32>load<T>(x + (j - row) * w)));
    }
  }
  if (p == LORENZO3) {
    for (let e = n - 1; e >= plane; e--) store<T>(outPtr + e * w, <T>(<u32>load<T>(outPtr + e * w) - <u32>load<T>(outPtr + (e - plane) * w)));
  }
  const lanes: usize = 16 / w;
  let e: usize = 0;
  if (ASC_FEATURE_SIMD) for (; e + lanes <= n; e += lanes) v128.store(outPtr + e * w, vzigzag<T>(v128.load(outPtr + e * w)));
  for (; e < n; e++) store<T>(outPtr + e * w, zigzag<T>(<u32>load<T>(outPtr + e * w)));
}

/**
 * x[e] += x[e - dist] for e = from .. n - 1, in order (a running sum at distance `dist`): v128
 * where a vector's lanes all lie `dist` or more after what they add.
 */
// @ts-ignore: decorator
@inline function runningSum<T>(x: usize, from: usize, n: usize, dist: usize): void {
  const w = sizeof<T>();
  const lanes: usize = 16 / w;
  let e = from;
  if (ASC_FEATURE_SIMD && dist >= lanes)
    for (; e + lanes <= n; e += lanes) v128.store(x + e * w, vadd<T>(v128.load(x + e * w), v128.load(x + (e - dist) * w)));
  for (; e < n; e++) store<T>(x + e * w, <T>(<u32>load<T>(x + e * w) + <u32>load<T>(x + (e - dist) * w)));
}

/**
 * The inverse of {@link predictEncodeAxes}: unzigzag, then prefix sums along the planes
 * (lorenzo3), the columns (up, lorenzo2; lorenzo3 within a plane) and the rows (left, lorenzo2,
 * lorenzo3), each over the whole chunk. In place allowed.
 */
// @ts-ignore: decorator
@inline function predictDecodeAxes<T>(resPtr: usize, outPtr: usize, row: usize, planeRows: usize, lead: usize, p: u32, rows: usize): void {
  const w = sizeof<T>();
  const n = row * rows;
  const plane = row * planeRows;
  const x = outPtr;
  const lanes: usize = 16 / w;
  let e: usize = 0;
  if (ASC_FEATURE_SIMD) for (; e + lanes <= n; e += lanes) v128.store(x + e * w, vunzigzag<T>(v128.load(resPtr + e * w)));
  for (; e < n; e++) store<T>(x + e * w, <T>unzigzag(<u32>load<T>(resPtr + e * w)));
  if (p == LORENZO3) runningSum<T>(x, plane, n, plane);
  if (p == UP || p == LORENZO2) runningSum<T>(x, row, n, row);
  else if (p == LORENZO3) {
    for (let i: usize = 1; i < rows; i++) {
      if (i % planeRows == 0) continue;
      const y = x + i * row * w;
      for (let j: usize = 0; j < row; j++) store<T>(y + j * w, <T>(<u32>load<T>(y + j * w) + <u32>load<T>(y + (j - row) * w)));
    }
  }
  if (p != UP) {
    for (let i: usize = 0; i < rows; i++) {
      const y = x + i * row * w;
      for (let j = lead; j < row; j++) store<T>(y + j * w, <T>(<u32>load<T>(y + j * w) + <u32>load<T>(y + (j - lead) * w)));
    }
  }
}

/**
 * The inverse of {@link predictEncode} over `rows` whole rows: residuals at `resPtr` (interleaved,
 * zigzagged) to values at `outPtr`, row by row (each element's prediction reads only elements
 * already decoded). The linear predictors take two passes a row: SIMD over what does not depend
 * on the left neighbour (the residual, up and the plane before), then a running sum along the
 * row; med runs element by element. In place (resPtr == outPtr) is allowed; other overlap is not.
 */
// @ts-ignore: decorator
@inline function predictDecode<T>(resPtr: usize, outPtr: usize, row: usize, planeRows: usize, lead: usize, p: u32, rows: usize): void {
  const w = sizeof<T>();
  const lanes: usize = 16 / w;
  const plane = row * planeRows;
  if (row < SHORT_ROW && p != NONE && p != MED) {
    predictDecodeAxes<T>(resPtr, outPtr, row, planeRows, lead, p, rows);
    return;
  }
  for (let i: usize = 0; i < rows; i++) {
    const up = p == LORENZO3 ? i % planeRows != 0 : i > 0;
    const back = i >= planeRows;
    const start = i * row;
    const end = start + row;
    const x = outPtr + start * w;
    const r = resPtr + start * w;
    if (p == MED && up) {
      let j: usize = 0;
      for (; j < lead && j < row; j++) store<T>(x + j * w, <T>(unzigzag(<u32>load<T>(r + j * w)) + <u32>load<T>(x + (j - row) * w)));
      if (lead == 1) {
        // one field: the left and upper-left neighbours stay in registers
        let a = <u32>load<T>(x);
        let ab = <u32>load<T>(x - row * w);
        for (; j < row; j++) {
          const b = <u32>load<T>(x + (j - row) * w);
          a = <u32><T>(unzigzag(<u32>load<T>(r + j * w)) + med<T>(a, b, ab));
          store<T>(x + j * w, <T>a);
          ab = b;
        }
        continue;
      }
      for (; j < row; j++) {
        const pred = med<T>(<u32>load<T>(x + (j - lead) * w), <u32>load<T>(x + (j - row) * w), <u32>load<T>(x + (j - row - lead) * w));
        store<T>(x + j * w, <T>(unzigzag(<u32>load<T>(r + j * w)) + pred));
      }
      continue;
    }
    // what each element adds besides its left neighbour: none, up (b), or Lorenzo's b - ab
    // (and z - az - bz + abz with the plane before); the first cell has no ab, az, abz
    const withUp = up && (p == UP || p == LORENZO2 || p == LORENZO3);
    const withBack = back && p == LORENZO3;
    const withLeft = p == LEFT || p == LORENZO2 || p == LORENZO3 || p == MED;
    let j: usize = 0;
    for (; j < lead && j < row; j++) {
      let t = unzigzag(<u32>load<T>(r + j * w));
      if (withUp) t += <u32>load<T>(x + (j - row) * w);
      if (withBack) {
        t += <u32>load<T>(x + (j - plane) * w);
        if (up) t -= <u32>load<T>(x + (j - plane - row) * w);
      }
      store<T>(x + j * w, <T>t);
    }
    if (ASC_FEATURE_SIMD) {
      for (; j + lanes <= row; j += lanes) {
        let t = vunzigzag<T>(v128.load(r + j * w));
        if (withUp) {
          t = vadd<T>(t, v128.load(x + (j - row) * w));
          if (withLeft) t = vsub<T>(t, v128.load(x + (j - row - lead) * w));
        }
        if (withBack) {
          t = vsub<T>(vadd<T>(t, v128.load(x + (j - plane) * w)), v128.load(x + (j - plane - lead) * w));
          if (up) t = vadd<T>(vsub<T>(t, v128.load(x + (j - plane - row) * w)), v128.load(x + (j - plane - row - lead) * w));
        }
        v128.store(x + j * w, t);
      }
    }
    for (; j < row; j++) {
      let t = unzigzag(<u32>load<T>(r + j * w));
      if (withUp) {
        t += <u32>load<T>(x + (j - row) * w);
        if (withLeft) t -= <u32>load<T>(x + (j - row - lead) * w);
      }
      if (withBack) {
        t = t + <u32>load<T>(x + (j - plane) * w) - <u32>load<T>(x + (j - plane - lead) * w);
        if (up) t = t - <u32>load<T>(x + (j - plane - row) * w) + <u32>load<T>(x + (j - plane - row - lead) * w);
      }
      store<T>(x + j * w, <T>t);
    }
    // the running sum along the row: each element adds its left neighbour
    // (one field: the delta stage's SIMD prefix sum)
    if (withLeft && lead == 1) deltaDecode<T>(x, x, row);
    else if (withLeft) for (let e = lead; e < row; e++) store<T>(x + e * w, <T>(<u32>load<T>(x + e * w) + <u32>load<T>(x + (e - lead) * w)));
  }
}

// Interleaving and deinterleaving of v128 lanes for joinFields / splitFields (unit: bytes).
// @ts-ignore: decorator
@inline function zipLo8(a: v128, b: v128): v128 {
  return i8x16.shuffle(a, b, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
}
// @ts-ignore: decorator
@inline function zipHi8(a: v128, b: v128): v128 {
  return i8x16.shuffle(a, b, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
}
// @ts-ignore: decorator
@inline function zipLo16(a: v128, b: v128): v128 {
  return i8x16.shuffle(a, b, 0, 1, 16, 17, 2, 3, 18, 19, 4, 5, 20, 21, 6, 7, 22, 23);
}
// @ts-ignore: decorator
@inline function zipHi16(a: v128, b: v128): v128 {
  return i8x16.shuffle(a, b, 8, 9, 24, 25, 10, 11, 26, 27, 12, 13, 28, 29, 14, 15, 30, 31);
}
// @ts-ignore: decorator
@inline function zipLo32(a: v128, b: v128): v128 {
  return i8x16.shuffle(a, b, 0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23);
}
// @ts-ignore: decorator
@inline function zipHi32(a: v128, b: v128): v128 {
  return i8x16.shuffle(a, b, 8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31);
}
// @ts-ignore: decorator
@inline function zipLo64(a: v128, b: v128): v128 {
  return i8x16.shuffle(a, b, 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23);
}
// @ts-ignore: decorator
@inline function zipHi64(a: v128, b: v128): v128 {
  return i8x16.shuffle(a, b, 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31);
}
// @ts-ignore: decorator
@inline function unzipEven8(a: v128, b: v128): v128 {
  return i8x16.shuffle(a, b, 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
}
// @ts-ignore: decorator
@inline function unzipOdd8(a: v128, b: v128): v128 {
  return i8x16.shuffle(a, b, 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
}
// @ts-ignore: decorator
@inline function unzipEven16(a: v128, b: v128): v128 {
  return i8x16.shuffle(a, b, 0, 1, 4, 5, 8, 9, 12, 13, 16, 17, 20, 21, 24, 25, 28, 29);
}
// @ts-ignore: decorator
@inline function unzipOdd16(a: v128, b: v128): v128 {
  return i8x16.shuffle(a, b, 2, 3, 6, 7, 10, 11, 14, 15, 18, 19, 22, 23, 26, 27, 30, 31);
}
// @ts-ignore: decorator
@inline function unzipEven32(a: v128, b: v128): v128 {
  return i8x16.shuffle(a, b, 0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27);
}
// @ts-ignore: decorator
@inline function unzipOdd32(a: v128, b: v128): v128 {
  return i8x16.shuffle(a, b, 4, 5, 6, 7, 12, 13, 14, 15, 20, 21, 22, 23, 28, 29, 30, 31);
}
// @ts-ignore: decorator
@inline function unzipEven64(a: v128, b: v128): v128 {
  return i8x16.shuffle(a, b, 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23);
}
// @ts-ignore: decorator
@inline function unzipOdd64(a: v128, b: v128): v128 {
  return i8x16.shuffle(a, b, 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31);
}

// @ts-ignore: decorator
@inline function zipLoW<T>(a: v128, b: v128): v128 {
  return sizeof<T>() == 1 ? zipLo8(a, b) : sizeof<T>() == 2 ? zipLo16(a, b) : zipLo32(a, b);
}
// @ts-ignore: decorator
@inline function zipHiW<T>(a: v128, b: v128): v128 {
  return sizeof<T>() == 1 ? zipHi8(a, b) : sizeof<T>() == 2 ? zipHi16(a, b) : zipHi32(a, b);
}
// @ts-ignore: decorator
@inline function zipLo2W<T>(a: v128, b: v128): v128 {
  return sizeof<T>() == 1 ? zipLo16(a, b) : sizeof<T>() == 2 ? zipLo32(a, b) : zipLo64(a, b);
}
// @ts-ignore: decorator
@inline function zipHi2W<T>(a: v128, b: v128): v128 {
  return sizeof<T>() == 1 ? zipHi16(a, b) : sizeof<T>() == 2 ? zipHi32(a, b) : zipHi64(a, b);
}
// @ts-ignore: decorator
@inline function unzipEvenW<T>(a: v128, b: v128): v128 {
  return sizeof<T>() == 1 ? unzipEven8(a, b) : sizeof<T>() == 2 ? unzipEven16(a, b) : unzipEven32(a, b);
}
// @ts-ignore: decorator
@inline function unzipOddW<T>(a: v128, b: v128): v128 {
  return sizeof<T>() == 1 ? unzipOdd8(a, b) : sizeof<T>() == 2 ? unzipOdd16(a, b) : unzipOdd32(a, b);
}
// @ts-ignore: decorator
@inline function unzipEven2W<T>(a: v128, b: v128): v128 {
  return sizeof<T>() == 1 ? unzipEven16(a, b) : sizeof<T>() == 2 ? unzipEven32(a, b) : unzipEven64(a, b);
}
// @ts-ignore: decorator
@inline function unzipOdd2W<T>(a: v128, b: v128): v128 {
  return sizeof<T>() == 1 ? unzipOdd16(a, b) : sizeof<T>() == 2 ? unzipOdd32(a, b) : unzipOdd64(a, b);
}

/**
 * Interleaved cells of `fields` elements to field-major planes of `cells` elements each: 2 and 4
 * fields a vector of cells at a time (lanes deinterleaved by shuffles), the rest cell by cell.
 * No overlap.
 */
// @ts-ignore: decorator
@inline function splitFields<T>(inPtr: usize, outPtr: usize, fields: usize, cells: usize): void {
  const w = sizeof<T>();
  const per: usize = 16 / w;
  let c: usize = 0;
  if (ASC_FEATURE_SIMD && fields == 2) {
    const pb = outPtr + cells * w;
    for (; c + per <= cells; c += per) {
      const o0 = v128.load(inPtr + c * 2 * w);
      const o1 = v128.load(inPtr + c * 2 * w, 16);
      v128.store(outPtr + c * w, unzipEvenW<T>(o0, o1));
      v128.store(pb + c * w, unzipOddW<T>(o0, o1));
    }
  } else if (ASC_FEATURE_SIMD && fields == 4) {
    const plane = cells * w;
    for (; c + per <= cells; c += per) {
      const at = inPtr + c * 4 * w;
      const o0 = v128.load(at);
      const o1 = v128.load(at, 16);
      const o2 = v128.load(at, 32);
      const o3 = v128.load(at, 48);
      const ab0 = unzipEven2W<T>(o0, o1);
      const cd0 = unzipOdd2W<T>(o0, o1);
      const ab1 = unzipEven2W<T>(o2, o3);
      const cd1 = unzipOdd2W<T>(o2, o3);
      const to = outPtr + c * w;
      v128.store(to, unzipEvenW<T>(ab0, ab1));
      v128.store(to + plane, unzipOddW<T>(ab0, ab1));
      v128.store(to + 2 * plane, unzipEvenW<T>(cd0, cd1));
      v128.store(to + 3 * plane, unzipOddW<T>(cd0, cd1));
    }
  }
  for (; c < cells; c++) {
    for (let k: usize = 0; k < fields; k++) store<T>(outPtr + (k * cells + c) * w, load<T>(inPtr + (c * fields + k) * w));
  }
}

/** The inverse of {@link splitFields} (2 and 4 fields by shuffles). No overlap. */
// @ts-ignore: decorator
@inline function joinFields<T>(inPtr: usize, outPtr: usize, fields: usize, cells: usize): void {
  const w = sizeof<T>();
  const per: usize = 16 / w;
  let c: usize = 0;
  if (ASC_FEATURE_SIMD && fields == 2) {
    const pb = inPtr + cells * w;
    for (; c + per <= cells; c += per) {
      const a = v128.load(inPtr + c * w);
      const b = v128.load(pb + c * w);
      v128.store(outPtr + c * 2 * w, zipLoW<T>(a, b));
      v128.store(outPtr + c * 2 * w, zipHiW<T>(a, b), 16);
    }
  } else if (ASC_FEATURE_SIMD && fields == 4) {
    const plane = cells * w;
    for (; c + per <= cells; c += per) {
      const from = inPtr + c * w;
      const a = v128.load(from);
      const b = v128.load(from + plane);
      const cc = v128.load(from + 2 * plane);
      const d = v128.load(from + 3 * plane);
      const abLo = zipLoW<T>(a, b);
      const abHi = zipHiW<T>(a, b);
      const cdLo = zipLoW<T>(cc, d);
      const cdHi = zipHiW<T>(cc, d);
      const to = outPtr + c * 4 * w;
      v128.store(to, zipLo2W<T>(abLo, cdLo));
      v128.store(to, zipHi2W<T>(abLo, cdLo), 16);
      v128.store(to, zipLo2W<T>(abHi, cdHi), 32);
      v128.store(to, zipHi2W<T>(abHi, cdHi), 48);
    }
  }
  for (; c < cells; c++) {
    for (let k: usize = 0; k < fields; k++) store<T>(outPtr + (c * fields + k) * w, load<T>(inPtr + (k * cells + c) * w));
  }
}

export function predictEncode8(uPtr: usize, outPtr: usize, row: usize, planeRows: usize, lead: usize, p: u32, first: usize, rows: usize): void {
  predictEncode<u8>(uPtr, outPtr, row, planeRows, lead, p, first, rows);
}
export function predictEncode16(uPtr: usize, outPtr: usize, row: usize, planeRows: usize, lead: usize, p: u32, first: usize, rows: usize): void {
  predictEncode<u16>(uPtr, outPtr, row, planeRows, lead, p, first, rows);
}
export function predictEncode32(uPtr: usize, outPtr: usize, row: usize, planeRows: usize, lead: usize, p: u32, first: usize, rows: usize): void {
  predictEncode<u32>(uPtr, outPtr, row, planeRows, lead, p, first, rows);
}
export function predictDecode8(resPtr: usize, outPtr: usize, row: usize, planeRows: usize, lead: usize, p: u32, rows: usize): void {
  predictDecode<u8>(resPtr, outPtr, row, planeRows, lead, p, rows);
}
export function predictDecode16(resPtr: usize, outPtr: usize, row: usize, planeRows: usize, lead: usize, p: u32, rows: usize): void {
  predictDecode<u16>(resPtr, outPtr, row, planeRows, lead, p, rows);
}
export function predictDecode32(resPtr: usize, outPtr: usize, row: usize, planeRows: usize, lead: usize, p: u32, rows: usize): void {
  predictDecode<u32>(resPtr, outPtr, row, planeRows, lead, p, rows);
}
export function splitFields8(inPtr: usize, outPtr: usize, fields: usize, cells: usize): void {
  splitFields<u8>(inPtr, outPtr, fields, cells);
}
export function splitFields16(inPtr: usize, outPtr: usize, fields: usize, cells: usize): void {
  splitFields<u16>(inPtr, outPtr, fields, cells);
}
export function splitFields32(inPtr: usize, outPtr: usize, fields: usize, cells: usize): void {
  splitFields<u32>(inPtr, outPtr, fields, cells);
}
export function joinFields8(inPtr: usize, outPtr: usize, fields: usize, cells: usize): void {
  joinFields<u8>(inPtr, outPtr, fields, cells);
}
export function joinFields16(inPtr: usize, outPtr: usize, fields: usize, cells: usize): void {
  joinFields<u16>(inPtr, outPtr, fields, cells);
}
export function joinFields32(inPtr: usize, outPtr: usize, fields: usize, cells: usize): void {
  joinFields<u32>(inPtr, outPtr, fields, cells);
}

/**
 * fpzip's order-preserving map of `n` f32 bit patterns (Lindstrom and Isenburg 2006): b xor
 * 0x80000000 when the sign is clear, else not b. In place allowed.
 */
export function floatOrderEncode(inPtr: usize, outPtr: usize, n: usize): void {
  for (let i: usize = 0; i < n; i++) {
    const b = load<u32>(inPtr + i * 4);
    store<u32>(outPtr + i * 4, (b >> 31) != 0 ? ~b : b ^ 0x80000000);
  }
}

/** The inverse of {@link floatOrderEncode}. In place allowed. */
export function floatOrderDecode(inPtr: usize, outPtr: usize, n: usize): void {
  for (let i: usize = 0; i < n; i++) {
    const u = load<u32>(inPtr + i * 4);
    store<u32>(outPtr + i * 4, (u >> 31) != 0 ? u ^ 0x80000000 : ~u);
  }
}

/** 10^e, exact in f64 for e = 0..18 (the decimal map's scales). */
const POW10: usize = memory.data<f64>([1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18]);

/**
 * ALP's decimal map of `n` f32 elements in cells of `fields` (Afroozeh, Kuffo and Boncz 2024):
 * field k's element x becomes the i32 v = round(x 10^e_k) when f32(f64(v) F[e_k]) has x's bits
 * (`expPtr`: one byte a field, `factorPtr`: F[e] as f64 for e = 0..18). Other elements are
 * exceptions: their index and bits go to `excIndexPtr` / `excValuePtr` (at most `cap`; the count
 * is returned, and may exceed cap: then stop using the lists), and their v is the previous
 * cell's (0 in the first cell). `in` and `out` must not overlap.
 */
export function decimalEncodeF32(
  inPtr: usize,
  outPtr: usize,
  n: usize,
  fields: usize,
  expPtr: usize,
  factorPtr: usize,
  excIndexPtr: usize,
  excValuePtr: usize,
  cap: u32,
): u32 {
  let e: u32 = 0;
  let k: usize = 0;
  for (let i: usize = 0; i < n; i++, k = k + 1 == fields ? 0 : k + 1) {
    const exp = <u32>load<u8>(expPtr + k);
    const scale = load<f64>(POW10 + <usize>exp * 8);
    const factor = load<f64>(factorPtr + exp * 8);
    {
      const bits = load<u32>(inPtr + i * 4);
      const x = reinterpret<f32>(bits);
      const v = nearest(<f64>x * scale);
      let ok = v > -2147483648.0 && v < 2147483648.0;
      let iv: i32 = 0;
      if (ok) {
        iv = <i32>v;
        ok = reinterpret<u32>(<f32>(<f64>iv * factor)) == bits;
      }
      if (!ok) {
        iv = i >= fields ? load<i32>(outPtr + (i - fields) * 4) : 0;
        if (e < cap) {
          store<u32>(excIndexPtr + e * 4, <u32>i);
          store<u32>(excValuePtr + e * 4, bits);
        }
        e++;
      }
      store<i32>(outPtr + i * 4, iv);
    }
  }
  return e;
}

/**
 * The inverse of {@link decimalEncodeF32} without its exceptions (see {@link scatterBits32}):
 * field k's i32 v becomes f32(f64(v) F[e_k]). In place allowed.
 */
export function decimalDecodeF32(inPtr: usize, outPtr: usize, n: usize, fields: usize, expPtr: usize, factorPtr: usize): void {
  for (let k: usize = 0; k < fields; k++) {
    const factor = load<f64>(factorPtr + <u32>load<u8>(expPtr + k) * 8);
    for (let i = k; i < n; i += fields) store<f32>(outPtr + i * 4, <f32>(<f64>load<i32>(inPtr + i * 4) * factor));
  }
}

/**
 * Writes `e` listed u32 values (`valuePtr`) at their element indices (`indexPtr`) into `outPtr`
 * (`n` elements). Returns 0, or 1 when the indices are not strictly increasing or not below n
 * (nothing is written past the first bad index).
 */
export function scatterBits32(outPtr: usize, n: usize, indexPtr: usize, valuePtr: usize, e: usize): u32 {
  let last: i64 = -1;
  for (let j: usize = 0; j < e; j++) {
    const i = load<u32>(indexPtr + j * 4);
    if (<i64>i <= last || <usize>i >= n) return 1;
    store<u32>(outPtr + <usize>i * 4, load<u32>(valuePtr + j * 4));
    last = <i64>i;
  }
  return 0;
}

/**
 * fpzip's order-preserving map of `n` f64 elements' bits (the 64-bit twin of
 * {@link floatOrderEncode}): a negative value's bits inverted, a positive one's sign bit set.
 * In place allowed.
 */
export function floatOrderEncode64(inPtr: usize, outPtr: usize, n: usize): void {
  for (let i: usize = 0; i < n; i++) {
    const b = load<u64>(inPtr + i * 8);
    store<u64>(outPtr + i * 8, (b >> 63) != 0 ? ~b : b ^ 0x8000000000000000);
  }
}

/** The inverse of {@link floatOrderEncode64}. In place allowed. */
export function floatOrderDecode64(inPtr: usize, outPtr: usize, n: usize): void {
  for (let i: usize = 0; i < n; i++) {
    const u = load<u64>(inPtr + i * 8);
    store<u64>(outPtr + i * 8, (u >> 63) != 0 ? u ^ 0x8000000000000000 : ~u);
  }
}

/**
 * ALP's decimal map of `n` f64 elements in cells of `fields` (Afroozeh, Kuffo and Boncz 2024):
 * field k's element x becomes the i64 v = round(x 10^e_k) when |v| < 2^52 and v / 10^e_k (a
 * correctly rounded division of two exact values, so the nearest f64 to the decimal) has x's
 * bits (`expPtr`: one byte a field). Other elements are exceptions: index and bits to
 * `excIndexPtr` (u32) / `excValuePtr` (u64), at most `cap` of them (the count is returned and may
 * exceed cap), their v the previous cell's (0 in the first cell). `in` and `out` must not overlap.
 */
export function decimalEncodeF64(
  inPtr: usize,
  outPtr: usize,
  n: usize,
  fields: usize,
  expPtr: usize,
  excIndexPtr: usize,
  excValuePtr: usize,
  cap: u32,
): u32 {
  let e: u32 = 0;
  let k: usize = 0;
  for (let i: usize = 0; i < n; i++, k = k + 1 == fields ? 0 : k + 1) {
    const scale = load<f64>(POW10 + <usize>load<u8>(expPtr + k) * 8);
    const bits = load<u64>(inPtr + i * 8);
    const v = nearest(reinterpret<f64>(bits) * scale);
    let ok = v > -4503599627370496.0 && v < 4503599627370496.0;
    let iv: i64 = 0;
    if (ok) {
      iv = <i64>v;
      ok = reinterpret<u64>(<f64>iv / scale) == bits;
    }
    if (!ok) {
      iv = i >= fields ? load<i64>(outPtr + (i - fields) * 8) : 0;
      if (e < cap) {
        store<u32>(excIndexPtr + e * 4, <u32>i);
        store<u64>(excValuePtr + e * 8, bits);
      }
      e++;
    }
    store<i64>(outPtr + i * 8, iv);
  }
  return e;
}

/**
 * The inverse of {@link decimalEncodeF64} without its exceptions (see {@link scatterBits64}):
 * field k's i64 v becomes f64(v) / 10^e_k. In place allowed.
 */
export function decimalDecodeF64(inPtr: usize, outPtr: usize, n: usize, fields: usize, expPtr: usize): void {
  for (let k: usize = 0; k < fields; k++) {
    const scale = load<f64>(POW10 + <usize>load<u8>(expPtr + k) * 8);
    for (let i = k; i < n; i += fields) store<f64>(outPtr + i * 8, <f64>load<i64>(inPtr + i * 8) / scale);
  }
}

/**
 * Writes `e` listed u64 values (`valuePtr`) at their element indices (`indexPtr`, u32) into
 * `outPtr` (`n` elements). Returns 0, or 1 when the indices are not strictly increasing or not
 * below n (nothing is written past the first bad index).
 */
export function scatterBits64(outPtr: usize, n: usize, indexPtr: usize, valuePtr: usize, e: usize): u32 {
  let last: i64 = -1;
  for (let j: usize = 0; j < e; j++) {
    const i = load<u32>(indexPtr + j * 4);
    if (<i64>i <= last || <usize>i >= n) return 1;
    store<u64>(outPtr + <usize>i * 8, load<u64>(valuePtr + j * 8));
    last = <i64>i;
  }
  return 0;
}
