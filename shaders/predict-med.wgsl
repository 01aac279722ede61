// LOCO-I's median edge detector of stage 7 (docs/format.md, "Stage 7: predict", predictor 5),
// shared by codec-predict.wgsl (decode, by wavefronts) and codec-predict-encode.wgsl (the
// residuals): the prediction from left a, up b and upper-left c, values held in u32 (the CPU's
// twin: assembly/predict.ts med).

// min(a, b) when c >= max(a, b), max(a, b) when c <= min(a, b), else a + b - c (wrapping).
fn medPredict(a: u32, b: u32, c: u32) -> u32 {
  let mx = max(a, b);
  let mn = min(a, b);
  return select(select(a + b - c, mx, c <= mn), mn, c >= mx);
}
