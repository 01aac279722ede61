// The layers of ts/ (../docs/architecture in README's "Layout"; issue: one codec layer for both
// paths). A layer imports only the layers below it; no file imports itself through others.
//
//   cli, service, node, zarr, index   the user's entry points
//   engine, options, probe            the facade: dispatch only (its options; its calibration probe)
//   codec                             pipelines of both paths, drivers, streaming, the chooser
//   format | cpu | gpu                the container's bytes | the CPU runtime | the GPU runtime
//   cost, platform, errors, types     below everything
//
// Run by test/layout.test.ts (so `npm test` and CI fail on a new upward import or a cycle) and
// by hand: npx depcruise ts --config .dependency-cruiser.cjs
const ABOVE_ENGINE = '^ts/(cli|service|node|zarr)/|^ts/index\\.ts$|^ts/cjs/';
const ENGINE = '^ts/(engine|options|probe)\\.ts$';
const CODEC = '^ts/codec/';
const RUNTIMES = '^ts/(format|cpu|gpu)/';
const BASE = '^ts/(cost|platform)/|^ts/(errors|types)\\.ts$';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    { name: 'no-circular', severity: 'error', comment: 'a cycle between files', from: {}, to: { circular: true } },
    {
      name: 'base-imports-above',
      severity: 'error',
      comment: 'cost, platform, errors and types import nothing of the layers above them',
      from: { path: BASE },
      to: { path: `${RUNTIMES}|${CODEC}|${ENGINE}|${ABOVE_ENGINE}` },
    },
    {
      name: 'runtime-imports-above',
      severity: 'error',
      comment: 'format, cpu and gpu import only cost, platform, errors and types',
      from: { path: RUNTIMES },
      to: { path: `${CODEC}|${ENGINE}|${ABOVE_ENGINE}` },
    },
    {
      name: 'format-imports-runtime',
      severity: 'error',
      comment: 'format is bytes only: no CPU or GPU runtime',
      from: { path: '^ts/format/' },
      to: { path: '^ts/(cpu|gpu)/' },
    },
    {
      name: 'cpu-imports-sibling',
      severity: 'error',
      comment: 'the CPU runtime knows neither the container nor the GPU',
      from: { path: '^ts/cpu/' },
      to: { path: '^ts/(format|gpu)/' },
    },
    {
      name: 'gpu-imports-sibling',
      severity: 'error',
      comment: 'the GPU runtime knows neither the container nor the CPU',
      from: { path: '^ts/gpu/' },
      to: { path: '^ts/(format|cpu)/' },
    },
    {
      name: 'codec-imports-above',
      severity: 'error',
      comment: 'the codec does not import the engine or its callers',
      from: { path: CODEC },
      to: { path: `${ENGINE}|${ABOVE_ENGINE}` },
    },
    {
      name: 'engine-imports-above',
      severity: 'error',
      comment: 'the engine does not import its callers',
      from: { path: ENGINE },
      to: { path: ABOVE_ENGINE },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '\\.wgsl$' },
    // type-only imports count: a layer must not name the types of the layers above it either
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
