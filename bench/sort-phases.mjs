// Where a OneSweep pass of the radix sort spends its GPU time (issue #14: the sort's passes take
// 4.5 ms at 2^28 keys against CUB's 2.9): the onesweep kernel with one phase taken out at a time,
// by editing its composed WGSL as the context builds it. The outputs of the edited kernels are
// wrong (the timing is what counts); later passes read those outputs, so their keys are not the
// random ones of the first pass. GPU time of the four onesweep passes by timestamp queries,
// median of 7 runs after a sustained warm-up, each as a ratio to the unedited kernel.
//   node bench/sort-phases.mjs [--log2 28]
// Needs bench/.build/gpu-layer.mjs (node bench/gpu.mjs --build-only).
import { parseArgs } from 'node:util';
import { editShaderModules, lcgKeys, loadGpuLayer, timeSort } from './gpu-timestamps.mjs';

const { values: args } = parseArgs({ options: { log2: { type: 'string', default: '28' } } });
const n = 2 ** Number(args.log2);

/** [name, [from, to] text replacements in the onesweep module]; each `from` must occur. */
const VARIANTS = [
  ['unedited', []],
  ['no look-back (digitBase from this tile only)', [['  if (tile != 0u) { lookbackDigits(tile, tid, kind, mapIn); }', '']]],
  ['no scatter to global memory', [['      keysOut[p] = select(key, fromSortable(key, kind), mapOut);', '      if (p == 0xFFFFFFFFu) { keysOut[0] = key; }']]],
  [
    'no ranking (ballots and counters)',
    [['  rankTile(&keys, &ranks, region, tid, lane, sg);', '  for (var k = 0u; k < ITEMS; k += 1u) { ranks[k] = select(0u, k * sg + lane, region + k * sg + lane < params.n); }']],
  ],
  [
    'no look-back, no scatter',
    [
      ['  if (tile != 0u) { lookbackDigits(tile, tid, kind, mapIn); }', ''],
      ['      keysOut[p] = select(key, fromSortable(key, kind), mapOut);', '      if (p == 0xFFFFFFFFu) { keysOut[0] = key; }'],
    ],
  ],
  [
    'no look-back, no scatter, no status stores',
    [
      ['  if (tile != 0u) { lookbackDigits(tile, tid, kind, mapIn); }', ''],
      ['      keysOut[p] = select(key, fromSortable(key, kind), mapOut);', '      if (p == 0xFFFFFFFFu) { keysOut[0] = key; }'],
      [
        '    atomicStore(&spine[statusIndex(tile, d)], select(ST_READY, ST_INCLUSIVE, tile == 0u) | sum);',
        '    if (sum == 0xFFFFFFFFu) { atomicStore(&spine[statusIndex(tile, d)], sum); }',
      ],
    ],
  ],
  [
    'no ranking, no look-back, no scatter',
    [
      ['  rankTile(&keys, &ranks, region, tid, lane, sg);', '  for (var k = 0u; k < ITEMS; k += 1u) { ranks[k] = select(0u, k * sg + lane, region + k * sg + lane < params.n); }'],
      ['  if (tile != 0u) { lookbackDigits(tile, tid, kind, mapIn); }', ''],
      ['      keysOut[p] = select(key, fromSortable(key, kind), mapOut);', '      if (p == 0xFFFFFFFFu) { keysOut[0] = key; }'],
    ],
  ],
];

const layer = await loadGpuLayer();
const keys = lcgKeys(n);
let base;
for (const [name, edits] of VARIANTS) {
  const ctx = await layer.createGpuContext();
  if (!ctx.hasTimestamps) throw new Error('this adapter has no timestamp queries');
  const edited = editShaderModules(ctx, 'sort-onesweep', edits, name);
  const d = await ctx.upload(keys);
  const { passesMs: ms } = await timeSort(ctx, d);
  base ??= ms;
  console.log(`${name.padEnd(48)} onesweep passes ${ms.toFixed(3)} ms (x${(ms / base).toFixed(3)}), ${(ms / 4).toFixed(3)} ms a pass${edited() ? '' : ' (kernel not edited)'}`);
  d.destroy();
  ctx.destroy();
}
