// Ways to rank a OneSweep tile's keys by digit (issue #14: the ranking cost 1.2-1.7 ms of a
// 4.5 ms pass on the H200, bench/results/sort-phases-nvidia-h200.log), each checked and timed:
// rankTile (shaders/radix-rank-subgroup.wgsl) edited in the composed WGSL as the context builds
// it, and tuning shapes with the default ranking. bench/results/sort-rank-nvidia-h200.log was
// made by this script's first version (commit 20eb91b), which edited the ranking of before.
// Every variant is checked (a stable key-value sort of keys with many equal ones, a partial last
// tile included, against a stable reference; and the key-only sort of the timed keys against
// Array sort), then timed: GPU time of the four onesweep passes by timestamp queries, median of
// 7 runs after a sustained warm-up, as a ratio to the unedited kernel; the histogram pass, the
// sort's whole GPU time and its wall clock beside.
//   node bench/sort-rank.mjs [--log2 28] [--check-log2 22] [--only 'name|name']
// Needs bench/.build/gpu-layer.mjs (node bench/gpu.mjs --build-only) and subgroups of at most 32
// lanes (the edits are to the one-word ballot path; NVIDIA: 32, SwiftShader: 4).
import { parseArgs } from 'node:util';
import { editShaderModules, lcgKeys, loadGpuLayer, timeSort } from './gpu-timestamps.mjs';

const { values: args } = parseArgs({
  options: { log2: { type: 'string', default: '28' }, 'check-log2': { type: 'string', default: '22' }, only: { type: 'string' } },
});
const n = 2 ** Number(args.log2);
const checkN = 2 ** Number(args['check-log2']) + 777; // a partial last tile

/** rankTile's counter loop (shaders/radix-rank-subgroup.wgsl), subgroups of at most 32 lanes. */
const COUNTER_LOOP = `  for (var k = 0u; k < ITEMS; k += 1u) {
    let m = same[k];
    let at = counts + (((*keys)[k] >> params.shift) & 0xFFu);
    let c = atomicLoad(&rankCount[at]);
    (*ranks)[k] = c + countOneBits(m & below);
    // the digit's highest lane (m >> lane == 1: no higher lane holds it)
    if (m != 0u && (m >> lane) == 1u) { atomicStore(&rankCount[at], c + countOneBits(m)); }
  }`;

/** Per item: the digit's lowest lane adds to the counter, a shuffle hands out the old count. */
const ATOMIC_SHUFFLE = `  for (var k = 0u; k < ITEMS; k += 1u) {
    let m = same[k];
    let lower = countOneBits(m & below);
    var old = 0u;
    if (m != 0u && lower == 0u) { old = atomicAdd(&rankCount[counts + (((*keys)[k] >> params.shift) & 0xFFu)], countOneBits(m)); }
    (*ranks)[k] = subgroupShuffle(old, countTrailingZeros(m) & (sg - 1u)) + lower;
  }`;

/** Every item's counter adds first, then every shuffle. */
const ATOMICS_THEN_SHUFFLES = `  for (var k = 0u; k < ITEMS; k += 1u) {
    let m = same[k];
    var old = 0u;
    if (m != 0u && (m & below) == 0u) { old = atomicAdd(&rankCount[counts + (((*keys)[k] >> params.shift) & 0xFFu)], countOneBits(m)); }
    (*ranks)[k] = old;
  }
  for (var k = 0u; k < ITEMS; k += 1u) {
    let m = same[k];
    (*ranks)[k] = subgroupShuffle((*ranks)[k], countTrailingZeros(m) & (sg - 1u)) + countOneBits(m & below);
  }`;

/** rankTile's ballots loop (one item's ballots after another's: all first). */
const BALLOT_LOOP_HEAD = `  var same: array<u32, ITEMS>;
  for (var k = 0u; k < ITEMS; k += 1u) {`;

/**
 * The ranking before (session 8): per item its ballots, the lowest lane's atomicAdd and a
 * shuffle, one item after another (the ballots and the counter loop of rankTile replaced).
 */
const PER_ITEM = `  let below = (1u << lane) - 1u;
  for (var k = 0u; k < ITEMS; k += 1u) {
    let valid = region + k * sg + lane < params.n;
    let d = ((*keys)[k] >> params.shift) & 0xFFu;
    var m = subgroupBallot(valid).x;
    for (var b = 0u; b < 8u; b += 1u) {
      let bit = ((d >> b) & 1u) == 1u;
      let ballot = subgroupBallot(bit).x;
      m &= select(~ballot, ballot, bit);
    }
    let lower = countOneBits(m & below);
    var old = 0u;
    if (valid && lower == 0u) { old = atomicAdd(&rankCount[counts + d], countOneBits(m)); }
    (*ranks)[k] = subgroupShuffle(old, countTrailingZeros(m) & (sg - 1u)) + lower;
  }
}`;

const layer = await loadGpuLayer();
const probe = await layer.createGpuContext();
if (!probe.hasSubgroups || probe.subgroupMaxSize > 32) {
  throw new Error(`needs subgroups of at most 32 lanes, this adapter has ${probe.hasSubgroups ? `${probe.subgroupMinSize}..${probe.subgroupMaxSize}` : 'none'}`);
}
probe.destroy();

/** The onesweep kernel's staging of the keys by digit (shaders/radix-sort.wgsl). */
const STAGING = `  for (var k = 0u; k < ITEMS; k += 1u) {
    let i = region + k * sg + lane;
    if (i < params.n) {
      let d = (keys[k] >> params.shift) & 0xFFu;
      let local = tileStart[d] + atomicLoad(&rankCount[group * RADIX + d]) + ranks[k];
      stage[local] = keys[k];
      ranks[k] = local;
    }
  }`;

/** The kernel's look-back, then its staging. */
const LOOKBACK_THEN_STAGE = `  if (tile != 0u) { lookbackDigits(tile, tid, kind, mapIn); }\n${STAGING}\n  workgroupBarrier();`;

/** The staging first, then the look-back (as CUB's OneSweep orders them; the kernel before). */
const STAGE_THEN_LOOKBACK = `${STAGING}
  if (tile == 0u) {
    workgroupBarrier();
  } else {
    lookbackDigits(tile, tid, kind, mapIn);
  }`;

const LOOKBACK_CALL = '  if (tile != 0u) { lookbackDigits(tile, tid, kind, mapIn); }\n';
const SCAN_CALL = '  scanDigits(tid, lane, sg);\n';

/**
 * Early counts (CUB's OneSweep): the tile's digit histogram by workgroup atomics (fbCount, zero
 * at the workgroup's start), published before the ranking instead of from the ranking's sums.
 * On the H200 a pass took 3.92 ms against 3.77 (sort-rank-nvidia-h200-early-counts.log), so the
 * kernel keeps publishing after the ranking.
 */
const EARLY_COUNTS = [
  [
    '  rankTile(&keys, &ranks, region, tid, lane, sg);\n',
    `  for (var k = 0u; k < ITEMS; k += 1u) {
    if (region + k * sg + lane < params.n) { atomicAdd(&fbCount[(keys[k] >> params.shift) & 0xFFu], 1u); }
  }
  workgroupBarrier();
  for (var d = tid; d < RADIX; d += SORT_WG) {
    atomicStore(&spine[statusIndex(tile, d)], select(ST_READY, ST_INCLUSIVE, tile == 0u) | atomicLoad(&fbCount[d]));
  }
  rankTile(&keys, &ranks, region, tid, lane, sg);\n`,
  ],
  ['    atomicStore(&spine[statusIndex(tile, d)], select(ST_READY, ST_INCLUSIVE, tile == 0u) | sum);\n', ''],
];

/** [name, edits, tuning]; edits are [from, to] or [from, to, 'to end of function'] (from `from` to the next "\n}\n") */
const VARIANTS = [
  ['unedited (ballots first, load/store counters)', [], {}],
  ['early counts, before the ranking (tried)', EARLY_COUNTS, {}],
  ['ballots first, atomicAdd and shuffle per item', [[COUNTER_LOOP, ATOMIC_SHUFFLE]], {}],
  ['ballots first, atomics then shuffles', [[COUNTER_LOOP, ATOMICS_THEN_SHUFFLES]], {}],
  ['per item: ballots, atomicAdd, shuffle (before)', [[BALLOT_LOOP_HEAD, PER_ITEM, 'to end of function']], {}],
  ['the wide ranking (vec4 ballots, per item)', [['if (MAX_SG > 32u) {', 'if (sg > 0u) {']], {}],
  ['12 items', [], { sortItemsPerInvocation: 12 }],
  ['16 items', [], { sortItemsPerInvocation: 16 }],
  ['512 invocations', [], { sortWorkgroupSize: 512 }],
  ['look-back window 4', [], { sortLookbackWindow: 4 }],
  ['look-back window 16', [], { sortLookbackWindow: 16 }],
  ['the staging before the look-back (before)', [[LOOKBACK_THEN_STAGE, STAGE_THEN_LOOKBACK]], {}],
  ['the look-back before the digit scan too', [[LOOKBACK_CALL, ''], [SCAN_CALL, LOOKBACK_CALL + SCAN_CALL]], {}],
].filter(([name]) => !args.only || args.only.split('|').some((o) => name === o.trim()));

const keys = lcgKeys(n, 1);
const sorted = keys.slice().sort();
// many equal keys, digits of every place in use: stability shows
const checkKeys = lcgKeys(checkN, 7, 0x0f0f0f0f);

/** Stable key-value sort check: keys in order, values (input indices) ascending within equal keys. */
function checkStable(outK, outV) {
  for (let i = 0; i < checkN; i++) {
    const v = outV[i];
    if (v >= checkN || checkKeys[v] !== outK[i]) return `element ${i}: value ${v} does not carry key ${outK[i]}`;
    if (i > 0 && (outK[i] < outK[i - 1] || (outK[i] === outK[i - 1] && v <= outV[i - 1]))) return `element ${i}: out of order`;
  }
  return null;
}

let base;
let failures = 0;
for (const [name, edits, tuning] of VARIANTS) {
  const ctx = await layer.createGpuContext({ tuning });
  if (!ctx.hasTimestamps) throw new Error('this adapter has no timestamp queries');
  const edited = editShaderModules(ctx, 'sort-onesweep', edits, name);
  // check: stable key-value sort, then key-only sort of the timed keys
  const ck = await ctx.upload(checkKeys);
  const cv = await ctx.upload(Uint32Array.from({ length: checkN }, (_, i) => i));
  const cs = await ctx.sort(ck, cv);
  let problem = checkStable(await ctx.download(cs.keys), await ctx.download(cs.values));
  for (const a of [ck, cv, cs.keys, cs.values]) a.destroy();
  const d = await ctx.upload(keys);
  const first = await ctx.sort(d);
  const back = await ctx.download(first.keys);
  first.keys.destroy();
  if (problem === null) {
    for (let i = 0; i < n; i++) {
      if (back[i] !== sorted[i]) { problem = `key-only sort differs at ${i}`; break; }
    }
  }
  if (problem !== null) {
    failures++;
    console.log(`${name.padEnd(48)} WRONG: ${problem}`);
    d.destroy();
    ctx.destroy();
    continue;
  }
  const { passesMs: ms, histogramMs, gpuMs: gpu, wallMs: wall } = await timeSort(ctx, d);
  base ??= ms;
  console.log(
    `${name.padEnd(48)} checked; onesweep passes ${ms.toFixed(3)} ms (x${(ms / base).toFixed(3)}), ${(ms / 4).toFixed(3)} ms a pass; ` +
      `histogram ${histogramMs.toFixed(3)} ms, GPU ${gpu.toFixed(3)} ms, wall ${wall.toFixed(3)} ms (${(n / wall / 1e6).toFixed(2)} G keys/s)${edited() ? '' : ' (kernel not edited)'}`,
  );
  d.destroy();
  ctx.destroy();
}
if (failures) {
  console.log(`${failures} variant(s) sorted wrongly`);
  process.exitCode = 1;
}
