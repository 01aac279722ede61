// Where the scan kernel's GPU time goes (issue #14: a 2^28 u32 scan takes 0.95 ms of GPU time
// on the H200, where a copy kernel of the same tile shape takes 0.53: bench/scan-state.mjs): the
// scan kernel with one phase taken out at a time, by editing its composed WGSL as the context
// builds it (editShaderModules), and other tile shapes (tuning). The outputs of the edited
// kernels are wrong; the timing is what counts. GPU time by timestamp queries, median of 9 runs
// after a sustained warm-up (timePasses), each as a ratio to the unedited default. Then the look-back's walk,
// counted by an instrumented kernel (atomic counters in the spine's spare words): windows read
// per tile, windows without progress (spins), and decoupled fallbacks.
//   node bench/scan-phases.mjs [--log2 28] [--only REGEX]
// Needs bench/.build/gpu-layer.mjs (node bench/gpu.mjs --build-only).
import { parseArgs } from 'node:util';
import { editShaderModules, lcgKeys, loadGpuLayer, timePasses } from './gpu-timestamps.mjs';

const { values: args } = parseArgs({ options: { log2: { type: 'string', default: '28' }, only: { type: 'string' } } });
const n = 2 ** Number(args.log2);

const NO_LOOKBACK = ['  let tilePrefix = lookbackPublished(tile, tileSum, tid, lane, sg);', '  let tilePrefix = T(0);'];
// the tile's sum published after its scan instead of before (the order before session 10)
const LATE_PUBLISH = [
  '  lbPublishAggregate(tile, tileSum, tid);\n  var prefix: array<T, VPT>;\n  tileScan(tid, lane, sg, &v, &prefix);',
  '  var prefix: array<T, VPT>;\n  tileScan(tid, lane, sg, &v, &prefix);\n  lbPublishAggregate(tile, tileSum, tid);',
];
const NO_GROUP_SCANS = ['    let ex = groupExclusiveScan(x.x + x.y + x.z + x.w, tid, lane, sg, &loadTotal);', '    let ex = T(0); loadTotal = x.x;'];
const NO_WG_SCAN = ['  let groupPrefix = wgExclusiveScan(select(T(0), run, lane == sg - 1u), tid, lane, sg, &tileSum);', '  let groupPrefix = T(0); tileSum = run;'];
const NO_STORES = ['    if (vi < nVecs) { dst[vi] = bitcast<vec4<u32>>(o); }', '    if (vi == 0xFFFFFFFFu) { dst[0] = bitcast<vec4<u32>>(o); }'];

/** [name, edits of the scan module, tuning] */
const VARIANTS = [
  ['unedited (1024 x 4 vec4)', [], {}],
  ['sum published after the scan', [LATE_PUBLISH], {}],
  ['no look-back', [NO_LOOKBACK], {}],
  ['no subgroup scans of the loads', [NO_GROUP_SCANS], {}],
  ['no workgroup scan', [NO_WG_SCAN], {}],
  ['no scans at all', [NO_GROUP_SCANS, NO_WG_SCAN], {}],
  ['no scans, no look-back', [NO_GROUP_SCANS, NO_WG_SCAN, NO_LOOKBACK], {}],
  ['no stores', [NO_STORES], {}],
  ['1024 x 2 vec4', [], { scanVecsPerInvocation: 2 }],
  ['512 x 8 vec4', [], { scanWorkgroupSize: 512, scanVecsPerInvocation: 8 }],
  ['256 x 8 vec4', [], { scanWorkgroupSize: 256, scanVecsPerInvocation: 8 }],
  ['512 x 2 vec4', [], { scanWorkgroupSize: 512, scanVecsPerInvocation: 2 }],
  ['512 x 2 vec4, no look-back', [NO_LOOKBACK], { scanWorkgroupSize: 512, scanVecsPerInvocation: 2 }],
].filter(([name]) => args.only === undefined || new RegExp(args.only).test(name));

const layer = await loadGpuLayer();
const keys = lcgKeys(n);
let base;
for (const [name, edits, tuning] of VARIANTS) {
  const ctx = await layer.createGpuContext({ tuning });
  if (!ctx.hasTimestamps) throw new Error('this adapter has no timestamp queries');
  const edited = editShaderModules(ctx, 'scan', edits, name);
  const d = await ctx.upload(keys);
  const { passes } = await timePasses(ctx, async () => (await ctx.scan(d, { inclusive: true })).destroy(), 9);
  const ms = passes['parle:scan'];
  base ??= ms;
  console.log(`${name.padEnd(40)} scan pass ${ms.toFixed(3)} ms (x${(ms / base).toFixed(3)}), ${((8 * n) / 1e6 / ms).toFixed(0)} GB/s${edits.length > 0 && !edited() ? ' (kernel not edited)' : ''}`);
  d.destroy();
  ctx.destroy();
}

// the look-back's walk, counted (spine words 1..3 are spare: LB_BASE = 4), and how many
// workgroups are resident at once (the most seen between a workgroup's start and its end)
const WALK = [
  ['  while (spin < LB_MAX_SPIN) {', '  while (spin < LB_MAX_SPIN) {\n    if (lane == 0u) { atomicAdd(&lb_spine[1], 1u); }'],
  ['      spin += 1u;', '      spin += 1u;\n      if (lane == 0u) { atomicAdd(&lb_spine[2], 1u); }'],
];
const RESIDENT = [
  ['  let tile = lbAcquireTile(tid);', '  if (tid == 0u) { atomicMax(&lb_spine[3], atomicAdd(&lb_spine[2], 1u) + 1u); }\n  let tile = lbAcquireTile(tid);'],
  ['  if (tile == params.numTiles - 1u && tid == 0u)', '  workgroupBarrier();\n  if (tid == 0u) { atomicSub(&lb_spine[2], 1u); }\n  if (tile == params.numTiles - 1u && tid == 0u)'],
];
const SHAPES = [
  ['1024 x 4 vec4', {}],
  ['512 x 4 vec4', { scanWorkgroupSize: 512 }],
  ['256 x 4 vec4', { scanWorkgroupSize: 256 }],
  ['512 x 2 vec4', { scanWorkgroupSize: 512, scanVecsPerInvocation: 2 }],
  ['1024 x 8 vec4', { scanVecsPerInvocation: 8 }],
];
for (const [what, edits] of [['walk', WALK], ['resident', RESIDENT]]) {
  for (const [name, tuning] of what === 'walk' ? SHAPES.slice(0, 1).concat(SHAPES.slice(3, 4)) : SHAPES) {
    const ctx = await layer.createGpuContext({ tuning });
    editShaderModules(ctx, 'scan', edits, `look-back ${what}`);
    let spine;
    const acquire = ctx.acquireStorage.bind(ctx);
    ctx.acquireStorage = (bytes, label, ...rest) => {
      const b = acquire(bytes, label, ...rest);
      if (label === 'scan-spine') spine = b;
      return b;
    };
    const d = await ctx.upload(keys);
    const counts = [];
    for (let r = 0; r < 5; r++) {
      (await ctx.scan(d, { inclusive: true })).destroy();
      const rb = ctx.device.createBuffer({ size: 16, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
      const enc = ctx.device.createCommandEncoder();
      enc.copyBufferToBuffer(spine, 0, rb, 0, 16);
      ctx.device.queue.submit([enc.finish()]);
      await rb.mapAsync(GPUMapMode.READ);
      counts.push(Array.from(new Uint32Array(rb.getMappedRange().slice(0))));
      rb.destroy();
    }
    const tiles = counts[0][0];
    const per = (i) => counts.map((c) => (c[i] / tiles).toFixed(2)).join(' ');
    if (what === 'walk') console.log(`look-back walk, ${name}: ${tiles} tiles; windows read per tile ${per(1)}; spins per tile ${per(2)}`);
    else console.log(`resident, ${name}: at most ${counts.map((c) => c[3]).join(' ')} workgroups at once`);
    d.destroy();
    ctx.destroy();
  }
}
