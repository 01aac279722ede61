// Ways to rank a OneSweep tile's keys by digit (issue #14: the ranking costs 1.2-1.7 ms of a
// 4.5 ms pass on the H200, bench/results/sort-phases-nvidia-h200.log), each checked and timed:
// the onesweep kernel's ranking loop replaced by a variant, by editing its composed WGSL as the
// context builds it. Every variant is checked (a stable key-value sort of keys with many equal
// ones, a partial last tile included, against a stable reference; and the key-only sort of the
// timed keys against Array sort), then timed: GPU time of the four onesweep passes by timestamp
// queries, median of 7 runs after a sustained warm-up, as a ratio to the unedited kernel.
//   node bench/sort-rank.mjs [--log2 28] [--check-log2 22] [--only 'name|name']
// Needs bench/.build/gpu-layer.mjs (node bench/gpu.mjs --build-only) and subgroups of at most 32
// lanes of one size (the variants use one ballot word; NVIDIA: 32, SwiftShader: 4).
import { parseArgs } from 'node:util';
import { loadGpuLayer, median, timestampHooks, warmUntilSteady } from './gpu-timestamps.mjs';

const { values: args } = parseArgs({
  options: { log2: { type: 'string', default: '28' }, 'check-log2': { type: 'string', default: '22' }, only: { type: 'string' } },
});
const n = 2 ** Number(args.log2);
const checkN = 2 ** Number(args['check-log2']) + 777; // a partial last tile

const RANK_LOOP = `  for (var k = 0u; k < ITEMS; k += 1u) {
    let valid = region + k * sg + lane < params.n;
    var key = 0u;
    if (valid) {
      key = keys[k];
      if (mapIn) { key = toSortable(key, kind); }
    }
    keys[k] = key;
    ranks[k] = rankKey((key >> params.shift) & 0xFFu, valid, tid, lane, sg);
  }`;

/** Ballots of every item first (independent: in flight together), then the counters. */
const BALLOTS = (skipValidWhenFull, xor = false) => `  let ltMask = (1u << lane) - 1u;
  let allLanes = select((1u << sg) - 1u, 0xFFFFFFFFu, sg == 32u);
  let full = (tile + 1u) * TILE <= params.n;
  let cbase = group * RADIX;
  var same: array<u32, ITEMS>;
  for (var k = 0u; k < ITEMS; k += 1u) {
    let valid = region + k * sg + lane < params.n;
    var key = 0u;
    if (valid) {
      key = keys[k];
      if (mapIn) { key = toSortable(key, kind); }
    }
    keys[k] = key;
    let d = (key >> params.shift) & 0xFFu;
    ${skipValidWhenFull ? 'var m = allLanes;\n    if (!full) { m = subgroupBallot(valid).x; }' : 'var m = subgroupBallot(valid).x;'}
    for (var b = 0u; b < 8u; b += 1u) {
      ${xor
        ? 'let bit = (d >> b) & 1u;\n      m &= subgroupBallot(bit == 1u).x ^ (bit - 1u);'
        : 'let bit = ((d >> b) & 1u) == 1u;\n      let ballot = subgroupBallot(bit).x;\n      m &= select(~ballot, ballot, bit);'}
    }
    same[k] = select(0u, m, valid);
  }
`;

/** Per item: the lowest lane of each digit adds to the counter, a shuffle hands out the old count. */
const ATOMIC_SHUFFLE = `  for (var k = 0u; k < ITEMS; k += 1u) {
    let m = same[k];
    let below = countOneBits(m & ltMask);
    var old = 0u;
    if (m != 0u && below == 0u) { old = atomicAdd(&rankCount[cbase + ((keys[k] >> params.shift) & 0xFFu)], countOneBits(m)); }
    ranks[k] = subgroupShuffle(old, countTrailingZeros(m) & (sg - 1u)) + below;
  }`;

/** Every item's counter adds first, then every shuffle. */
const ATOMICS_THEN_SHUFFLES = `  for (var k = 0u; k < ITEMS; k += 1u) {
    let m = same[k];
    var old = 0u;
    if (m != 0u && (m & ltMask) == 0u) { old = atomicAdd(&rankCount[cbase + ((keys[k] >> params.shift) & 0xFFu)], countOneBits(m)); }
    ranks[k] = old;
  }
  for (var k = 0u; k < ITEMS; k += 1u) {
    let m = same[k];
    ranks[k] = subgroupShuffle(ranks[k], countTrailingZeros(m) & (sg - 1u)) + countOneBits(m & ltMask);
  }`;

/** Every lane reads the counter; the digit's highest lane stores the new count (no shuffle). */
const LOAD_STORE = `  for (var k = 0u; k < ITEMS; k += 1u) {
    let m = same[k];
    let at = cbase + ((keys[k] >> params.shift) & 0xFFu);
    let c = atomicLoad(&rankCount[at]);
    ranks[k] = c + countOneBits(m & ltMask);
    if (m != 0u && (m >> lane) == 1u) { atomicStore(&rankCount[at], c + countOneBits(m)); }
  }`;

/** The subgroup size as a constant (the adapter's only size): divisions and masks fold. */
const fixedSubgroup = (size) => [
  ['@builtin(subgroup_size) sg: u32', '@builtin(subgroup_size) sgRuntime: u32'],
  ['  if (tid == 0u) { tileNum = atomicAdd(&spine[0], 1u); }', `  let sg = ${size}u;\n  if (tid == 0u) { tileNum = atomicAdd(&spine[0], 1u); }`],
];

const layer = await loadGpuLayer();
const probe = await layer.createGpuContext();
const sgSize = probe.subgroupMinSize;
if (!probe.hasSubgroups || sgSize !== probe.subgroupMaxSize || sgSize > 32) {
  throw new Error(`needs one subgroup size of at most 32 lanes, this adapter has ${probe.subgroupMinSize}..${probe.subgroupMaxSize}`);
}
probe.destroy();

/** [name, edits, tuning] */
const VARIANTS = [
  ['unedited', [], {}],
  ['fixed subgroup size', fixedSubgroup(sgSize), {}],
  ['ballots first', [[RANK_LOOP, BALLOTS(false) + ATOMIC_SHUFFLE]], {}],
  ['ballots first, no valid ballot in full tiles', [[RANK_LOOP, BALLOTS(true) + ATOMIC_SHUFFLE]], {}],
  ['ballots first, xor', [[RANK_LOOP, BALLOTS(false, true) + ATOMIC_SHUFFLE]], {}],
  ['ballots first, atomics then shuffles', [[RANK_LOOP, BALLOTS(false) + ATOMICS_THEN_SHUFFLES]], {}],
  ['ballots first, load/store counters', [[RANK_LOOP, BALLOTS(false) + LOAD_STORE]], {}],
  ['ballots first, 12 items', [[RANK_LOOP, BALLOTS(false) + ATOMIC_SHUFFLE]], { sortItemsPerInvocation: 12 }],
  ['ballots first, 512 invocations', [[RANK_LOOP, BALLOTS(false) + ATOMIC_SHUFFLE]], { sortWorkgroupSize: 512 }],
  ['ballots first, look-back window 4', [[RANK_LOOP, BALLOTS(false) + ATOMIC_SHUFFLE]], { sortLookbackWindow: 4 }],
  ['ballots first, look-back window 16', [[RANK_LOOP, BALLOTS(false) + ATOMIC_SHUFFLE]], { sortLookbackWindow: 16 }],
  ['ballots first, load/store, xor', [[RANK_LOOP, BALLOTS(false, true) + LOAD_STORE]], {}],
].filter(([name]) => !args.only || args.only.split('|').some((o) => name === o.trim()));

function lcg(len, seed, mask = 0xffffffff) {
  const a = new Uint32Array(len);
  for (let i = 0, s = seed; i < len; i++) a[i] = (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) & mask;
  return a;
}
const keys = lcg(n, 1);
const sorted = keys.slice().sort();
// many equal keys, digits of every place in use: stability shows
const checkKeys = lcg(checkN, 7, 0x0f0f0f0f);

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
  const create = ctx.device.createShaderModule.bind(ctx.device);
  let edited = 0;
  ctx.device.createShaderModule = (desc) => {
    if (!String(desc.label).includes('sort-onesweep')) return create(desc);
    let code = desc.code;
    for (const [from, to] of edits) {
      if (!code.includes(from)) throw new Error(`${name}: "${from.trim().split('\n')[0]}" is not in the kernel`);
      code = code.replace(from, to);
    }
    edited++;
    return create({ ...desc, code });
  };
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
  const ts = timestampHooks(ctx);
  const once = async () => (await ctx.sort(d)).keys.destroy();
  const timed = async () => {
    const t0 = performance.now();
    await once();
    return performance.now() - t0;
  };
  await warmUntilSteady(timed, { sustain: once });
  const passMs = [];
  const gpuMs = [];
  const histMs = [];
  const wallMs = [];
  for (let r = 0; r < 7; r++) {
    ctx.encoderHooks = ts.hooks;
    await once();
    ctx.encoderHooks = null;
    const t = await ts.read();
    passMs.push(t.passes['parle:sort-onesweep']);
    histMs.push(t.passes['parle:sort-histogram']);
    gpuMs.push(t.ms);
    wallMs.push(await timed());
  }
  const ms = median(passMs);
  const gpu = median(gpuMs);
  base ??= ms;
  const wall = median(wallMs);
  console.log(
    `${name.padEnd(48)} checked; onesweep passes ${ms.toFixed(3)} ms (x${(ms / base).toFixed(3)}), ${(ms / 4).toFixed(3)} ms a pass; ` +
      `histogram ${median(histMs).toFixed(3)} ms, GPU ${gpu.toFixed(3)} ms, wall ${wall.toFixed(3)} ms (${(n / wall / 1e6).toFixed(2)} G keys/s)${edited ? '' : ' (kernel not edited)'}`,
  );
  d.destroy();
  ctx.destroy();
}
if (failures) {
  console.log(`${failures} variant(s) sorted wrongly`);
  process.exitCode = 1;
}
