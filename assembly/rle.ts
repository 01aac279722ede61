// Run-length encoding and decoding of 8-, 16-, 32- and 64-bit elements (compared as bit patterns).
//
// One source, two builds: `if (ASC_FEATURE_SIMD)` is a compile-time constant, so build/parle.wasm
// gets the v128 bodies and build/parle-scalar.wasm the scalar twins. Kernels allocate nothing;
// every pointer is a byte offset into the imported memory, every count is in elements.

/** Elements examined per iteration of the SIMD encode loop: two 16-element boundary masks. */
const ENCODE_BLOCK: usize = 32;

/** Bytes a decode kernel may write past the end of its output (DECODE_SLACK_BYTES in ts/cpu/wasm.ts). */
const DECODE_SLACK: usize = 32;

// ---------------------------------------------------------------------------------------------
// Encode

/**
 * Bit j of the result is set when element j of the 16 elements at `p` equals element j - 1 (the
 * element before `p` is read too); the caller inverts it, which is cheaper than a vector `ne`
 * (x64 has no not-equal compare: V8 emits eq + xor with all ones). One i8x16.bitmask covers 16
 * elements of any width: 16-bit lanes are narrowed once, 32-bit lanes twice (eq gives 0 or -1,
 * which survives signed saturation).
 */
// @ts-ignore: decorator
@inline function equalMask16<T>(p: usize): u32 {
  if (sizeof<T>() == 1) {
    return <u32>i8x16.bitmask(i8x16.eq(v128.load(p), v128.load(p - 1)));
  } else if (sizeof<T>() == 2) {
    const a = i16x8.eq(v128.load(p), v128.load(p - 2));
    const b = i16x8.eq(v128.load(p, 16), v128.load(p + 14));
    return <u32>i8x16.bitmask(i8x16.narrow_i16x8_s(a, b));
  } else {
    const a = i32x4.eq(v128.load(p), v128.load(p - 4));
    const b = i32x4.eq(v128.load(p, 16), v128.load(p + 12));
    const c = i32x4.eq(v128.load(p, 32), v128.load(p + 28));
    const d = i32x4.eq(v128.load(p, 48), v128.load(p + 44));
    return <u32>i8x16.bitmask(i8x16.narrow_i16x8_s(i16x8.narrow_i32x4_s(a, b), i16x8.narrow_i32x4_s(c, d)));
  }
}

/**
 * Records that run `run` starts at element `pos`: its start goes to lengths[run] (turned into a
 * length by {@link startsToLengths} soon after) and its value to values[run].
 */
// @ts-ignore: decorator
@inline function recordRunStart<T>(inPtr: usize, valuesPtr: usize, lengthsPtr: usize, run: usize, pos: usize): void {
  store<u32>(lengthsPtr + (run << 2), <u32>pos);
  store<T>(valuesPtr + run * sizeof<T>(), load<T>(inPtr + pos * sizeof<T>()));
}

/**
 * Replaces the run starts in lengths[from..to) by run lengths, start[r + 1] - start[r]; reads
 * lengths[to], the start of the next run. In place, front to back: each step reads entries no
 * step has written yet.
 */
// @ts-ignore: decorator
@inline function startsToLengths(lengthsPtr: usize, from: usize, to: usize): void {
  let r = from;
  if (ASC_FEATURE_SIMD) {
    for (; r + 4 <= to; r += 4) {
      const p = lengthsPtr + (r << 2);
      v128.store(p, i32x4.sub(v128.load(p, 4), v128.load(p)));
    }
  }
  for (; r < to; r++) {
    const p = lengthsPtr + (r << 2);
    store<u32>(p, load<u32>(p, 4) - load<u32>(p));
  }
}

/**
 * Elements encoded between two {@link startsToLengths} calls: the starts written meanwhile
 * (1 KiB for mean runs of 32 elements, 32 KiB when all are unique) are still in L1/L2 cache.
 */
const ENCODE_CHUNK: usize = 8192;

// @ts-ignore: decorator
@inline function rleEncode<T>(inPtr: usize, n: usize, valuesPtr: usize, lengthsPtr: usize): usize {
  if (n == 0) return 0;
  const size = sizeof<T>();
  store<T>(valuesPtr, load<T>(inPtr));
  store<u32>(lengthsPtr, 0);
  let runs: usize = 1; // runs started so far; run `runs - 1` is open
  let converted: usize = 0; // lengths[0..converted) hold lengths, lengths[converted..runs) starts
  let i: usize = 1;

  while (i < n) {
    const chunkEnd = min(n, i + ENCODE_CHUNK);
    if (ASC_FEATURE_SIMD && size < 8) {
      // Element i + j starts a run when bit j of `mask` is set. The first four set bits are
      // written unconditionally (an exhausted mask gives ctz 32, position i + 32, whose writes
      // land past the runs found so far and are overwritten later), so a block with 0..4 run
      // starts, the common case, costs no mispredicted branch. Needs i + 32 < n: reads element
      // i + 32 at most, writes values/lengths below index runs + 4 <= i + 4.
      while (i < chunkEnd && i + ENCODE_BLOCK < n) {
        const p = inPtr + i * size;
        let bits = ~(equalMask16<T>(p) | (equalMask16<T>(p + 16 * size) << 16));
        const count = <usize>popcnt(bits);
        recordRunStart<T>(inPtr, valuesPtr, lengthsPtr, runs, i + <usize>ctz(bits)); bits &= bits - 1;
        recordRunStart<T>(inPtr, valuesPtr, lengthsPtr, runs + 1, i + <usize>ctz(bits)); bits &= bits - 1;
        recordRunStart<T>(inPtr, valuesPtr, lengthsPtr, runs + 2, i + <usize>ctz(bits)); bits &= bits - 1;
        recordRunStart<T>(inPtr, valuesPtr, lengthsPtr, runs + 3, i + <usize>ctz(bits)); bits &= bits - 1;
        if (count > 4) {
          // Dense block (runs shorter than 8 elements): the remaining starts one by one.
          for (let r = runs + 4, end = runs + count; r < end; r++) {
            recordRunStart<T>(inPtr, valuesPtr, lengthsPtr, r, i + <usize>ctz(bits));
            bits &= bits - 1;
          }
        }
        runs += count;
        i += ENCODE_BLOCK;
      }
    }
    // Scalar loop (all of the scalar build; the last < 33 elements of the SIMD one), free of
    // data-dependent branches: a start and a value are stored at every element and kept (runs
    // advances) only where the element differs from its predecessor.
    let last = load<T>(inPtr + (i - 1) * size);
    for (; i < chunkEnd; i++) {
      const x = load<T>(inPtr + i * size);
      store<u32>(lengthsPtr + (runs << 2), <u32>i);
      store<T>(valuesPtr + runs * size, x);
      runs += <usize>(x != last);
      last = x;
    }
    startsToLengths(lengthsPtr, converted, runs - 1);
    converted = runs - 1;
  }
  const lastStart = lengthsPtr + ((runs - 1) << 2);
  store<u32>(lastStart, <u32>n - load<u32>(lastStart));
  return runs;
}

/**
 * Run-length encodes `n` 8-bit elements at `inPtr`: run values to `valuesPtr`, run lengths (u32)
 * to `lengthsPtr`, each with room for `n` entries. Returns the run count (a float64, exact).
 *
 * Example: in [0,2,2,9,5,5,5,8] -> values [0,2,9,5,8], lengths [1,2,1,3,1], returns 5.
 * Overlap: the outputs must not overlap the input or each other. Entries past the returned
 * count (up to n) may be overwritten with scratch.
 *
 * Algorithm (CPU, this file): 32 elements a step, each compared with its predecessor by an
 * unaligned v128 load one element back; the equal lanes become a 32-bit mask (i8x16.bitmask,
 * inverted), whose set bits are the run starts, iterated with ctz and mask &= mask - 1 (the
 * first four without a branch: 0..4 starts per 32 elements is the common case). Each start
 * writes its position to lengths[run] and its value to values[run]; every 8192 elements the
 * positions written meanwhile, still in L1, become lengths (differences of neighbours, v128).
 * This is the flag step of Balevic's PARLE done in registers; where the GPU path scans the flags
 * to find each run's slot, one core just walks them in order. Scalar twin: one element a step,
 * branch-free (a start and a value are stored at every element, kept where it differs).
 */
export function rleEncode8(inPtr: usize, n: usize, valuesPtr: usize, lengthsPtr: usize): f64 {
  return <f64>rleEncode<u8>(inPtr, n, valuesPtr, lengthsPtr);
}

/** As {@link rleEncode8} for 16-bit elements (two v128 narrowed to one 16-lane mask). */
export function rleEncode16(inPtr: usize, n: usize, valuesPtr: usize, lengthsPtr: usize): f64 {
  return <f64>rleEncode<u16>(inPtr, n, valuesPtr, lengthsPtr);
}

/**
 * As {@link rleEncode8} for 32-bit elements: u32, i32, and f32 compared as bit patterns (NaN
 * payloads and -0 survive: [-0, 0, NaN, NaN] -> values [-0, 0, NaN], lengths [1, 1, 2]).
 */
export function rleEncode32(inPtr: usize, n: usize, valuesPtr: usize, lengthsPtr: usize): f64 {
  return <f64>rleEncode<u32>(inPtr, n, valuesPtr, lengthsPtr);
}

/**
 * As {@link rleEncode8} for 64-bit elements (f64, i64, u64 as bit patterns), with the scalar
 * loop in both builds: a 16-element mask of 64-bit lanes comes out of i8x16.bitmask with each bit
 * doubled, and 64-bit arrays are rare enough in parle's users' rle calls not to pay for its unpacking.
 */
export function rleEncode64(inPtr: usize, n: usize, valuesPtr: usize, lengthsPtr: usize): f64 {
  return <f64>rleEncode<u64>(inPtr, n, valuesPtr, lengthsPtr);
}

// ---------------------------------------------------------------------------------------------
// Decode

/** `value` repeated to fill 64 bits (scalar build) */
// @ts-ignore: decorator
@inline function splat64<T>(value: T): u64 {
  if (sizeof<T>() == 1) return <u64>(<u8>value) * 0x0101010101010101;
  if (sizeof<T>() == 2) return <u64>(<u16>value) * 0x0001000100010001;
  if (sizeof<T>() == 8) return <u64>value;
  return <u64>(<u32>value) * 0x0000000100000001;
}

// @ts-ignore: decorator
@inline function splat128<T>(value: T): v128 {
  if (sizeof<T>() == 1) return i8x16.splat(<i8>value);
  if (sizeof<T>() == 2) return i16x8.splat(<i16>value);
  if (sizeof<T>() == 8) return i64x2.splat(<i64>value);
  return i32x4.splat(<i32>value);
}

// @ts-ignore: decorator
@inline function rleDecode<T>(valuesPtr: usize, lengthsPtr: usize, runCount: usize, outPtr: usize): usize {
  const size = sizeof<T>();
  let out = outPtr;
  if (ASC_FEATURE_SIMD) {
    // Every run gets two unconditional 16-byte stores (runs of up to 32 bytes, the common
    // case, take no branch that depends on the data); only longer runs loop, 32 bytes a step.
    // The stores past a run's end are overwritten by the next run or fall in the slack.
    for (let r: usize = 0; r < runCount; r++) {
      const fill = splat128<T>(load<T>(valuesPtr + r * size));
      const bytes = <usize>load<u32>(lengthsPtr + (r << 2)) * size;
      v128.store(out, fill);
      v128.store(out, fill, 16);
      if (bytes > DECODE_SLACK) {
        const end = out + bytes;
        let p = out + DECODE_SLACK;
        do {
          v128.store(p, fill);
          v128.store(p, fill, 16);
          p += DECODE_SLACK;
        } while (p < end);
      }
      out += bytes;
    }
  } else {
    // The same shape with four 8-byte stores.
    for (let r: usize = 0; r < runCount; r++) {
      const fill = splat64<T>(load<T>(valuesPtr + r * size));
      const bytes = <usize>load<u32>(lengthsPtr + (r << 2)) * size;
      store<u64>(out, fill);
      store<u64>(out, fill, 8);
      store<u64>(out, fill, 16);
      store<u64>(out, fill, 24);
      if (bytes > DECODE_SLACK) {
        const end = out + bytes;
        let p = out + DECODE_SLACK;
        do {
          store<u64>(p, fill);
          store<u64>(p, fill, 8);
          store<u64>(p, fill, 16);
          store<u64>(p, fill, 24);
          p += DECODE_SLACK;
        } while (p < end);
      }
      out += bytes;
    }
  }
  return (out - outPtr) / size;
}

/**
 * Expands `runCount` runs of 8-bit values (`valuesPtr`) and u32 lengths (`lengthsPtr`) into
 * `outPtr`. Returns the element count written, sum(lengths) (a float64, exact).
 *
 * Example: values [0,2,9,5,8], lengths [1,2,1,3,1] -> out [0,2,2,9,5,5,5,8], returns 8.
 * Zero lengths are allowed and write nothing. The output needs sum(lengths) elements plus 32
 * bytes of slack (DECODE_SLACK_BYTES; bytes in the slack get unspecified contents) and must not
 * overlap the runs.
 *
 * Algorithm (CPU, this file): each value is splatted into a v128 and written with two
 * unconditional 16-byte stores, whatever the run's length; a loop runs only for runs longer
 * than 32 bytes. Short runs thus cost no mispredicted branch; the next run's stores overwrite
 * the excess.
 */
export function rleDecode8(valuesPtr: usize, lengthsPtr: usize, runCount: usize, outPtr: usize): f64 {
  return <f64>rleDecode<u8>(valuesPtr, lengthsPtr, runCount, outPtr);
}

/** As {@link rleDecode8} for 16-bit elements. */
export function rleDecode16(valuesPtr: usize, lengthsPtr: usize, runCount: usize, outPtr: usize): f64 {
  return <f64>rleDecode<u16>(valuesPtr, lengthsPtr, runCount, outPtr);
}

/** As {@link rleDecode8} for 32-bit elements (u32, i32, f32 as bit patterns). */
export function rleDecode32(valuesPtr: usize, lengthsPtr: usize, runCount: usize, outPtr: usize): f64 {
  return <f64>rleDecode<u32>(valuesPtr, lengthsPtr, runCount, outPtr);
}

/** As {@link rleDecode8} for 64-bit elements (f64, i64, u64 as bit patterns). */
export function rleDecode64(valuesPtr: usize, lengthsPtr: usize, runCount: usize, outPtr: usize): f64 {
  return <f64>rleDecode<u64>(valuesPtr, lengthsPtr, runCount, outPtr);
}
