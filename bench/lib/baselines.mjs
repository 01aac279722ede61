// Plain JavaScript baselines shared by the kernel benchmark (bench/cpu-kernels.mjs) and the
// comparison suite (bench/suite/): what a user would write by hand, measured beside parle.

/** Plain JS RLE: values and u32 lengths, like parle's rleEncode. Returns the run count. */
export function jsRleEncode(input, values, lengths) {
  const n = input.length;
  if (n === 0) return 0;
  let runs = 0;
  let last = input[0];
  let start = 0;
  for (let i = 1; i < n; i++) {
    const x = input[i];
    if (x !== last) {
      values[runs] = last;
      lengths[runs] = i - start;
      runs++;
      start = i;
      last = x;
    }
  }
  values[runs] = last;
  lengths[runs] = n - start;
  return runs + 1;
}

/** Plain JS RLE decode: TypedArray.prototype.fill per run. */
export function jsRleDecode(values, lengths, runCount, out) {
  let o = 0;
  for (let r = 0; r < runCount; r++) {
    const end = o + lengths[r];
    out.fill(values[r], o, end);
    o = end;
  }
  return o;
}

/** Plain JS exclusive scan (u32 wraps; f32 accumulates in float64, stored as float32). */
export function jsExclusiveScan(input, out) {
  let sum = 0;
  if (input instanceof Float32Array) {
    for (let i = 0; i < input.length; i++) {
      out[i] = sum;
      sum += input[i];
    }
    return sum;
  }
  for (let i = 0; i < input.length; i++) {
    out[i] = sum;
    sum = (sum + input[i]) >>> 0;
  }
  return sum;
}

/** Plain JS RLE decode: one store per element. */
export function jsRleDecodeLoop(values, lengths, runCount, out) {
  let o = 0;
  for (let r = 0; r < runCount; r++) {
    const v = values[r];
    for (let end = o + lengths[r]; o < end; o++) out[o] = v;
  }
  return o;
}
