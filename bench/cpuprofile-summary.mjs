// Where the main thread's time goes in a V8 CPU profile (node --cpu-prof), for the host side of
// GPU calls (issue #14: is compress from the device bound by the GPU, by parle's JavaScript, or
// by Dawn's event polling?). Prints, over a window of the profile, the time of samples whose
// stack holds parle's code (dist/: its JavaScript and the WebGPU calls it makes), Dawn's polling
// (processImmediate: the Node binding polls its events from setImmediate while a map or a
// submission is pending), garbage collection, native work outside JavaScript ((program)) and
// idle; then parle's functions by inclusive time.
//   node --cpu-prof --cpu-prof-dir=DIR bench/compress-profile.mjs --only sparse
//   node bench/cpuprofile-summary.mjs DIR/CPU....cpuprofile [--from MS] [--to MS] [--top N]
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

const { values: args, positionals } = parseArgs({
  options: { from: { type: 'string', default: '0' }, to: { type: 'string', default: 'Infinity' }, top: { type: 'string', default: '30' } },
  allowPositionals: true,
});
if (positionals.length !== 1) {
  console.error('usage: node bench/cpuprofile-summary.mjs FILE.cpuprofile [--from MS] [--to MS] [--top N]');
  process.exit(2);
}
const profile = JSON.parse(readFileSync(positionals[0], 'utf8'));
const node = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const [fromUs, toUs] = [Number(args.from) * 1000, Number(args.to) * 1000];
const isParle = (url) => /\/dist\/(node|browser)\//.test(url);

const byKind = new Map();
const byFunction = new Map();
let windowUs = 0;
let t = profile.startTime;
for (let i = 0; i < profile.samples.length; i++) {
  const dt = profile.timeDeltas[i] ?? 0;
  t += dt;
  const since = t - profile.startTime;
  if (since < fromUs || since >= toUs) continue;
  windowUs += dt;
  const top = node.get(profile.samples[i]).callFrame;
  const names = new Set();
  for (let id = profile.samples[i]; id !== undefined; id = parent.get(id)) {
    const f = node.get(id).callFrame;
    if (isParle(f.url)) names.add(f.functionName || `(anonymous):${f.lineNumber + 1}`);
  }
  for (const name of names) byFunction.set(name, (byFunction.get(name) ?? 0) + dt);
  const kind = names.size > 0 ? "parle's JavaScript and the WebGPU calls it makes" : top.functionName || top.url || '(unknown)';
  byKind.set(kind, (byKind.get(kind) ?? 0) + dt);
}
const ms = (us) => (us / 1000).toFixed(1).padStart(9);
const share = (us) => `${((100 * us) / windowUs).toFixed(1).padStart(5)} %`;
console.log(`window ${(windowUs / 1000).toFixed(0)} ms of main-thread samples`);
for (const [k, us] of [...byKind].sort((a, b) => b[1] - a[1]).slice(0, 12)) console.log(`${ms(us)} ms ${share(us)}  ${k}`);
console.log("parle's functions, inclusive:");
for (const [k, us] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, Number(args.top)))
  console.log(`${ms(us)} ms ${share(us)}  ${k}`);
