// The comparison suite's pure parts (bench/suite/): deterministic data generators, the peers'
// plain-JS codecs, and the report writer (markdown tables, SVG charts). No timing is asserted.
import { describe, expect, it } from 'vitest';
// @ts-expect-error plain .mjs without types
import * as data from '../bench/suite/data.mjs';
// @ts-expect-error plain .mjs without types
import { jsPairRleDecode, jsPairRleEncode, jsExclusiveScan, jsRleDecode, jsRleEncode } from '../bench/suite/peers.mjs';
// @ts-expect-error plain .mjs without types
import { parseCudaAnchors, table, writeReport } from '../bench/suite/report.mjs';
// @ts-expect-error plain .mjs without types
import { escapeXml, lineChart, scatterChart } from '../bench/suite/svg.mjs';

type Typed = Uint8Array | Uint16Array | Uint32Array | Float32Array;

/** Well-formedness of the SVG we write: one root, every tag closed in order, no stray '<' or '&'. */
function checkSvg(svg: string): void {
  expect(svg.startsWith('<?xml')).toBe(true);
  const body = svg.replace(/^<\?xml[^>]*\?>\s*/, '');
  const stack: string[] = [];
  let roots = 0;
  const tag = /<(\/?)([a-zA-Z][\w:-]*)((?:\s+[\w:-]+="[^"<]*")*)\s*(\/?)>/g;
  let last = 0;
  for (let m = tag.exec(body); m; m = tag.exec(body)) {
    const text = body.slice(last, m.index);
    expect(text).not.toMatch(/[<>]/);
    expect(text).not.toMatch(/&(?!(amp|lt|gt|quot|apos);)/);
    last = tag.lastIndex;
    const [, close, name, , selfClose] = m;
    if (close) expect(stack.pop()).toBe(name);
    else if (!selfClose) {
      if (stack.length === 0) roots++;
      stack.push(name);
    } else if (stack.length === 0) roots++;
  }
  expect(body.slice(last).trim()).toBe('');
  expect(stack).toEqual([]);
  expect(roots).toBe(1);
}

/** Every markdown table row has as many cells as its header. */
function checkMarkdownTables(md: string): number {
  const lines = md.split('\n');
  let tables = 0;
  for (let i = 0; i < lines.length; i++) {
    if (!lines[i].startsWith('| ') || !lines[i + 1]?.startsWith('| ---')) continue;
    tables++;
    const cells = (l: string) => l.replace(/\\\|/g, '').split('|').length;
    const width = cells(lines[i]);
    expect(cells(lines[i + 1])).toBe(width);
    for (let j = i + 2; j < lines.length && lines[j].startsWith('|'); j++) expect(cells(lines[j])).toBe(width);
  }
  return tables;
}

describe('data generators are deterministic', () => {
  const cases: Array<[string, () => Typed]> = [
    ['zeroVolume', () => data.zeroVolume(16)],
    ['sequenceVolume 254', () => data.sequenceVolume(16, 254)],
    ['voxelVolume', () => data.voxelVolume(32)],
    ['seismicVolume', () => data.seismicVolume(16)],
    ['quantizeDeadZone 8', () => data.quantizeDeadZone(data.seismicVolume(16), 8).indices],
    ['quantizeDeadZone 16', () => data.quantizeDeadZone(data.seismicVolume(16), 16).indices],
    ...data.SORT_KEY_KINDS.map((k: string) => [`sortKeys ${k}`, () => data.sortKeys(k, 1000)] as [string, () => Typed]),
    ['scanArray u32', () => data.scanArray('random-u32', 1000)],
    ['scanArray f32', () => data.scanArray('random-f32', 1000)],
    ['runsBytes', () => data.runsBytes(5000, 16)],
  ];
  for (const [name, make] of cases) {
    it(`${name}: same bytes twice`, () => {
      const a = make();
      const b = make();
      expect(a.constructor).toBe(b.constructor);
      expect(a.length).toBe(b.length);
      expect(data.fingerprint(a)).toBe(data.fingerprint(b));
    });
  }

  it('other seeds give other data', () => {
    expect(data.fingerprint(data.voxelVolume(32, 1))).not.toBe(data.fingerprint(data.voxelVolume(32, 2)));
    expect(data.fingerprint(data.seismicVolume(16, { seed: 1 }))).not.toBe(data.fingerprint(data.seismicVolume(16, { seed: 2 })));
    expect(data.fingerprint(data.sortKeys('random-u32', 64, 1))).not.toBe(data.fingerprint(data.sortKeys('random-u32', 64, 2)));
  });
});

describe("Rutter's files", () => {
  it('Sequence254 / Sequence255 count 0..period-1 over and over, at sizes on both sides of the period', () => {
    for (const edge of [0, 1, 5, 6, 7, 13]) {
      for (const period of [254, 255]) {
        const v = data.sequenceVolume(edge, period);
        expect(v.length).toBe(edge ** 3);
        for (let i = 0; i < v.length; i++) if (v[i] !== i % period) throw new Error(`edge ${edge} period ${period}: [${i}] = ${v[i]}`);
      }
    }
  });

  it('Zero is all zero; the voxel volume is mostly zero with some particles', () => {
    expect(data.zeroVolume(8).every((x: number) => x === 0)).toBe(true);
    const v = data.voxelVolume(64);
    const nonZero = v.reduce((n: number, x: number) => n + (x ? 1 : 0), 0) / v.length;
    expect(nonZero).toBeGreaterThan(0.001);
    expect(nonZero).toBeLessThan(0.1);
  });

  it('rutterFiles names his four files', () => {
    expect(data.rutterFiles(4).map((f: { name: string }) => f.name)).toEqual(['Zero', 'Sequence254', 'Sequence255', 'Voxel3D-like']);
  });
});

describe("Haugen's cubes and quantizer", () => {
  it('the seismic cube is finite float32, edge^3 samples, not constant', () => {
    const s = data.seismicVolume(12);
    expect(s).toBeInstanceOf(Float32Array);
    expect(s.length).toBe(12 ** 3);
    expect(s.every((x: number) => Number.isFinite(x))).toBe(true);
    expect(new Set(s).size).toBeGreaterThan(100);
  });

  it('the dead zone maps small values to I/2, the extremes clamp to 0 and I-1', () => {
    const y = Float32Array.from([0, 0.001, -0.001, 1, -1, 0.5, -0.5]);
    const { indices, step } = data.quantizeDeadZone(y, 8);
    expect(step).toBeCloseTo(1 / 128, 10);
    expect(Array.from(indices.slice(0, 3))).toEqual([128, 128, 128]);
    expect(indices[3]).toBe(255);
    expect(indices[4]).toBe(0);
    expect(indices[5]).toBeGreaterThan(128);
    expect(indices[6]).toBeLessThan(128);
    const q16 = data.quantizeDeadZone(y, 16).indices;
    expect(q16).toBeInstanceOf(Uint16Array);
    expect(q16[0]).toBe(32768);
    expect(q16[3]).toBe(65535);
  });

  it('a coarser step lowers the SNR', () => {
    const s = data.seismicVolume(16);
    const fine = data.quantizeDeadZone(s, 8);
    const coarse = data.quantizeDeadZone(s, 8, 0.6, 8);
    expect(data.snrDb(s, coarse.indices, coarse.step)).toBeLessThan(data.snrDb(s, fine.indices, fine.step));
    expect(data.stepScaleForSnr(s, 1000)).toBe(1);
  });
});

describe('keys, scan arrays, runs', () => {
  it('sorted keys ascend, few-distinct keys have at most 16 values, f32 keys are finite', () => {
    const sorted = data.sortKeys('sorted-u32', 5000);
    for (let i = 1; i < sorted.length; i++) expect(sorted[i]).toBeGreaterThanOrEqual(sorted[i - 1]);
    expect(new Set(data.sortKeys('few-distinct-u32', 5000)).size).toBeLessThanOrEqual(16);
    expect(data.sortKeys('random-f32', 1000).every((x: number) => Number.isFinite(x))).toBe(true);
    expect(() => data.sortKeys('nope', 1)).toThrow();
  });

  it('runsBytes: neighbouring runs differ, mean run near the asked one', () => {
    const a = data.runsBytes(1 << 16, 16);
    const values = new Uint8Array(a.length);
    const lengths = new Uint32Array(a.length);
    const runs = jsRleEncode(a, values, lengths);
    expect(a.length / runs).toBeGreaterThan(14);
    expect(a.length / runs).toBeLessThan(18);
    const back = new Uint8Array(a.length);
    expect(jsRleDecode(values, lengths, runs, back)).toBe(a.length);
    expect(back).toEqual(a);
  });
});

describe('plain-JS peers', () => {
  it("Rutter's pair RLE round-trips and splits runs at 255", () => {
    for (const input of [new Uint8Array(0), new Uint8Array(1), new Uint8Array(255), new Uint8Array(256), data.sequenceVolume(7, 254), data.runsBytes(3000, 40)]) {
      const pairs = jsPairRleEncode(input);
      expect(jsPairRleDecode(pairs, input.length)).toEqual(input);
    }
    expect(Array.from(jsPairRleEncode(new Uint8Array(256)))).toEqual([255, 0, 1, 0]);
  });

  it('the JS scan is exclusive and wraps u32', () => {
    const out = new Uint32Array(4);
    expect(jsExclusiveScan(Uint32Array.from([3, 1, 4, 0xffffffff]), out)).toBe(7);
    expect(Array.from(out)).toEqual([0, 3, 4, 8]);
  });
});

describe('report writer', () => {
  const ms = (m: number) => ({ min: m * 0.9, median: m, max: m * 1.2, samples: 5 });
  const rate = (bytes: number, m: number) => ({ min: bytes / (m * 1.2) / 1e6, median: bytes / m / 1e6, max: bytes / (m * 0.9) / 1e6 });
  const fig = (f: Record<string, unknown> & { bytes: number; m: number }) => ({ ...f, workBytes: f.bytes, ms: ms(f.m), rate: rate(f.bytes, f.m) });
  const explain = { path: 'cpu', predictedMs: { cpu: 1, gpu: 2 }, inputLocation: 'host', resultLocation: 'host', reason: 'x' };
  const results = {
    mode: 'quick',
    date: '2026-01-01T00:00:00.000Z',
    tookS: 1,
    machine: { cpu: 'Test <CPU> & co', logicalCores: 2, totalMemoryBytes: 2 ** 33, loadAverageAtStart: [1, 1, 1], platform: 'linux', arch: 'x64', node: 'v20' },
    adapter: null,
    workers: 2,
    policy: { iterations: 3, slowIterations: 2, slowMs: 400 },
    gpuCapBytes: 262144,
    gpuCapWhy: 'test',
    figures: [
      ...[4096, 65536].flatMap((b) => [
        fig({ group: 'sweep', op: 'rleEncode', impl: 'parle cpu', path: 'cpu', location: 'host', bytes: b, m: 1, unit: 'GB/s of input', explain }),
        fig({ group: 'sweep', op: 'rleEncode', impl: 'parle gpu, host in/out', path: 'gpu', location: 'host', bytes: b, m: 3, unit: 'GB/s of input' }),
        fig({ group: 'sweep', op: 'rleEncode', impl: 'JS | loop', bytes: b, m: 2, unit: 'GB/s of input' }),
      ]),
      ...['Zero', 'Sequence254', 'Sequence255', 'Voxel3D-like'].flatMap((d) => [
        fig({ group: 'rutter', dataset: d, edge: 16, op: 'rleEncode', impl: 'parle rleEncode cpu (runs)', bytes: 4096, m: 1, outBytes: 100 }),
        fig({ group: 'rutter', dataset: d, edge: 16, op: 'compress', impl: "CompressionStream('gzip')", bytes: 4096, m: 5, outBytes: 50 }),
      ]),
      fig({ group: 'gruber', op: 'scan', dataset: 'random u32, 2^10', paperLog2: 26, impl: 'parle cpu', bytes: 4096, m: 1, explain }),
      fig({ group: 'haugen', op: 'compress', dataset: '16^3 quantized 8-bit', variant: 'q8', rawFloatBytes: 16384, snrDb: 30, impl: 'parle .parle', bytes: 4096, m: 1, outBytes: 1000 }),
      fig({ group: 'real', op: 'compress', dataset: 'camera', impl: 'parle .parle', bytes: 4096, m: 1, outBytes: 4000 }),
      fig({ group: 'real', op: 'decompress', dataset: 'camera', impl: 'parle .parle', bytes: 4096, m: 1, outBytes: 4000 }),
      fig({ group: 'kinds', op: 'sort', dataset: 'sorted-u32', impl: 'parle cpu', bytes: 4096, m: 1 }),
    ],
    samples: [{ name: 'camera', type: 'u8', shape: [64, 64], bytes: 4096, source: 'test', license: 'CC0-1.0' }],
    skipped: [{ what: 'a case', why: 'a reason' }],
    notes: ['sweep: 1 s'],
  };

  it('writes markdown whose tables are well formed, with the papers beside ours', () => {
    const { markdown, charts } = writeReport(results, { cuda: parseCudaAnchors('NVIDIA H200\nscan int32 n=2^20 ms=0.029 Gelem/s=35.69\n') });
    expect(markdown).toContain('# parle comparison benchmarks');
    expect(markdown).toContain('GeForce GTX 460M');
    expect(markdown).toContain('Radeon HD 5650');
    expect(markdown).toContain('Quadro FX 5800');
    expect(markdown).toContain('NVIDIA H200');
    expect(checkMarkdownTables(markdown)).toBeGreaterThanOrEqual(6);
    for (const name of Object.keys(charts)) expect(markdown).toContain(`](${name})`);
    expect(Object.keys(charts)).toContain('throughput-rleEncode.svg');
    for (const svg of Object.values(charts) as string[]) checkSvg(svg);
  });

  it('charts are valid SVG, also with awkward names and empty series', () => {
    checkSvg(lineChart({ title: 'a <b> & "c"', xLabel: 'x', yLabel: 'y', series: [{ name: "it's <1>", points: [[1024, 0.5], [4096, 2]] }, { name: 'empty', points: [] }] }));
    checkSvg(lineChart({ title: 'nothing', xLabel: 'x', yLabel: 'y', series: [] }));
    checkSvg(scatterChart({ title: 't', xLabel: 'x', yLabel: 'y', series: [{ name: 'a&b', points: [{ x: 0.1, y: 3, label: '<x>' }, { x: -1, y: 0, label: 'dropped' }] }] }));
    expect(escapeXml(`<&>"'`)).toBe('&lt;&amp;&gt;&quot;&apos;');
  });

  it('table() escapes pipes; the CUDA anchors parse', () => {
    expect(table(['a', 'b'], [['x|y', 1]])).toBe('| a | b |\n| --- | ---: |\n| x\\|y | 1 |');
    const c = parseCudaAnchors('NVIDIA H200\nsort int32 n=2^24 ms=0.848 Gkeys/s=19.79\nh2d 256MiB pinned=False ms=36.110 GB/s=7.43\n');
    expect(c.device).toBe('NVIDIA H200');
    expect(c.rows).toEqual([
      { what: 'sort int32', log2: 24, ms: 0.848, unit: 'Gkeys/s', rate: 19.79 },
      { what: 'h2d 256MiB pinned=False', log2: null, ms: 36.11, unit: 'GB/s', rate: 7.43 },
    ]);
  });
});
