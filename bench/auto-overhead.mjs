// Where `auto` spends its time over the fixed path in the cost model's small cells (issue #14:
// in bench/cost-model.mjs's warm cells at 4 KiB, auto's median sat 20-30 us above the CPU path's
// although both ran the CPU path). Times the cells the way cost-model.mjs does (cpu, gpu and auto
// calls interleaved in the six orders, a 2 ms pause after each), and for every call the engine's
// route (validation and, for auto, the cost model's choice) by wrapping it; prints per path the
// median whole call and the median route, how many of auto's calls ran on the GPU, and how far
// apart the medians of the even and the odd rounds' calls of one path are (the noise a cell's
// 10 % judgement meets).
//   npm run build && node bench/auto-overhead.mjs [--rounds 36]
import { parseArgs } from 'node:util';
import { probeRunsBytes } from './suite/data.mjs';
import { ORDERS, release, settle } from './interleave.mjs';
import { createEngine } from '../dist/node/index.js';

const { values: args } = parseArgs({ options: { rounds: { type: 'string', default: '36' } } });
const engine = await createEngine({ gpu: 'require' });
await engine.calibrate();
console.log(`adapter: ${JSON.stringify(engine.adapter)}, workers ${engine.workers}`);

let routeMs = null;
let routedPath = null;
const route = engine.route;
engine.route = async function (...a) {
  const t0 = performance.now();
  const r = await route.apply(this, a);
  routeMs = performance.now() - t0;
  routedPath = r.path;
  return r;
};

// auto's choice inside the route: the cost model's choose()
let chooseMs = null;
const choose = engine.model.choose;
engine.model.choose = function (...a) {
  const t0 = performance.now();
  const r = choose.apply(this, a);
  chooseMs = performance.now() - t0;
  return r;
};

const median = (xs) => (xs.length === 0 ? NaN : [...xs].sort((a, b) => a - b)[xs.length >> 1]);
const keys = (n) => Uint32Array.from({ length: n }, (_, i) => Math.imul(i + 7, 2654435761) >>> 0);

const runs = await engine.rleEncode(probeRunsBytes(4096), { path: 'cpu' });
const bigRuns = await engine.rleEncode(probeRunsBytes(16 << 20), { path: 'cpu' });
const packed = await engine.compress(probeRunsBytes(4096), { path: 'cpu' });
const CELLS = [
  ['rleEncode 4 KiB host -> host', (o) => engine.rleEncode(probeRunsBytes(4096), o)],
  ['rleDecode 4 KiB host -> host', (o) => engine.rleDecode(runs, o)],
  ['scan 4 KiB host -> host', (o) => engine.scan(keys(1024), o)],
  ['sort 4 KiB host -> device', (o) => engine.sort(keys(1024), { ...o, to: 'device' })],
  ['decompress 4 KiB host -> host', (o) => engine.decompress(packed, o)],
  // a cell where auto's median came out above both fixed paths' in two cost-model runs
  ['rleDecode 16 MiB host -> host', (o) => engine.rleDecode(bigRuns, o)],
];

for (const [name, call] of CELLS) {
  const total = { cpu: [], gpu: [], auto: [] };
  const routed = { cpu: [], gpu: [], auto: [] };
  const choice = [];
  const explainMs = [];
  let autoOnGpu = 0;
  const trace = []; // calls of a cell over 1 ms: path (auto's choice) and ms, in order
  for (let rep = 0; rep < Number(args.rounds); rep++) {
    for (const path of ORDERS[rep % ORDERS.length]) {
      const t0 = performance.now();
      const result = await call({ path });
      total[path].push(performance.now() - t0);
      routed[path].push(routeMs);
      if (path === 'auto' && routedPath === 'gpu') autoOnGpu++;
      if (path === 'auto') choice.push(chooseMs);
      trace.push(`${path === 'auto' ? `auto:${routedPath}` : path} ${total[path].at(-1).toFixed(2)}`);
      release(result);
      await settle();
    }
    const t0 = performance.now();
    engine.explain(name.split(' ')[0], runs.values); // the model's view, after a pause (cold caches)
    explainMs.push(performance.now() - t0);
    await settle();
  }
  if (median(total.cpu) > 1) console.log(`${name}: every call in order (path ms): ${trace.join(', ')}`);
  const us = (x) => `${(1000 * x).toFixed(1).padStart(7)} us`;
  // the noise of a cell's median: the same path's calls of even and of odd rounds, apart
  const halves = (xs) => {
    const even = median(xs.filter((_, i) => i % 2 === 0));
    const odd = median(xs.filter((_, i) => i % 2 === 1));
    return `${((100 * Math.abs(even - odd)) / Math.min(even, odd)).toFixed(0)} %`;
  };
  console.log(
    `${name.padEnd(30)} call: cpu ${us(median(total.cpu))} gpu ${us(median(total.gpu))} auto ${us(median(total.auto))}; ` +
      `route: cpu ${us(median(routed.cpu))} auto ${us(median(routed.auto))} (its choose() ${us(median(choice))}); auto ran on the GPU ${autoOnGpu} of ${total.auto.length}; ` +
      `explain after a pause ${us(median(explainMs))}; halves apart: cpu ${halves(total.cpu)}, auto ${halves(total.auto)}`,
  );
}
await engine.destroy();
