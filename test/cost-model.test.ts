// The cost model alone: predictions from the lines, the tie rule, and both levels of the online
// history (StarPU-style medians of ratios), which a change of rates clears.
import { describe, expect, it } from 'vitest';
import { calibrate, CALIBRATION_SIZES, type CalibrationProbe } from '../ts/cost/calibration.js';
import { CostModel, defaultRates, fitLine, withUpper, type CallShape, type CostOp } from '../ts/cost/model.js';

const call = (over: Partial<CallShape> = {}): CallShape => ({
  op: 'scan',
  inputBytes: 1 << 20,
  resultBytes: 1 << 20,
  inputLocation: 'host',
  resultLocation: 'host',
  ...over,
});

describe('cost model', () => {
  it('adds the transfers a path needs: none for data already where the path runs', () => {
    const m = new CostModel(defaultRates(true));
    const hostHost = m.predict(call());
    const devDev = m.predict(call({ inputLocation: 'device', resultLocation: 'device' }));
    // host data: the GPU pays an upload and a readback; device data: the CPU pays them
    expect(hostHost.predictedMs.gpu! - hostHost.predictedMs.cpu).toBeGreaterThan(devDev.predictedMs.gpu! - devDev.predictedMs.cpu);
    expect(hostHost.path).toBe('cpu');
    expect(hostHost.reason).toMatch(/ms/);
    expect(m.predict(call(), false).reason).toBe('');
  });

  it('call-level history scales a path by the median observed ratio, after 3 samples', () => {
    const m = new CostModel(defaultRates(true));
    const shape = call({ inputLocation: 'device', resultLocation: 'host' });
    const before = m.predict(shape);
    const other = m.predict(call()).predictedMs.gpu!;
    m.observeCall(shape, 'gpu', before.predictedMs.gpu! * 100);
    m.observeCall(shape, 'gpu', before.predictedMs.gpu! * 100);
    expect(m.predict(shape).predictedMs.gpu).toBeCloseTo(before.predictedMs.gpu!, 6); // 2 samples: not yet
    m.observeCall(shape, 'gpu', before.predictedMs.gpu! * 1e6); // an outlier
    const after = m.predict(shape);
    expect(after.predictedMs.gpu! / before.predictedMs.gpu!).toBeCloseTo(100, 6); // the median, not the outlier
    expect(after.reason).toMatch(/earlier calls/);
    // another location pair of the same op is not touched by call-level history
    expect(m.predict(call()).predictedMs.gpu).toBeCloseTo(other, 9);
    // new rates clear the history
    m.rates = defaultRates(true);
    expect(m.predict(shape).predictedMs.gpu).toBeCloseTo(before.predictedMs.gpu!, 6);
  });

  it('decompress on the GPU path adds no upload of the input (its line covers the whole decode)', () => {
    const m = new CostModel(defaultRates(true));
    const host = m.predict(call({ op: 'decompress', resultLocation: 'device' }));
    const line = defaultRates(true).gpu!.decompress!;
    expect(host.predictedMs.gpu).toBeCloseTo(line.fixedMs + line.msPerByte * (1 << 20), 9);
  });

  it('fitLine keeps slope and intercept non-negative', () => {
    expect(fitLine([100, 5], [1000, 1])).toMatchObject({ fixedMs: expect.any(Number) });
    const l = fitLine([100, 5], [1000, 1]);
    expect(l.fixedMs).toBeGreaterThanOrEqual(0);
    expect(l.msPerByte).toBeGreaterThan(0);
    const up = fitLine([1000, 1], [2000, 2]);
    expect(up.msPerByte).toBeCloseTo(0.001, 9);
    expect(up.fixedMs).toBeCloseTo(0, 9);
  });

  it('an upper segment takes over from its first point, continuous there', () => {
    const base = { fixedMs: 1, msPerByte: 1e-3 };
    const line = withUpper(base, [1000, 2], [5000, 3]);
    const rates = defaultRates(true);
    rates.cpu.compress = line;
    const m = new CostModel(rates);
    const at = (bytes: number) => m.predict(call({ op: 'compress', inputBytes: bytes }), false).predictedMs.cpu;
    expect(at(500)).toBeCloseTo(1.5, 9); // the base line below 1000 bytes
    expect(at(1000)).toBeCloseTo(2, 9); // both agree at the joint
    expect(at(5000)).toBeCloseTo(3, 9);
    expect(at(9000)).toBeCloseTo(4, 9); // the upper line extrapolated
  });

  it('kernel lines scale with workBytes, transfers with inputBytes (rleDecode)', () => {
    const rates = defaultRates(true);
    rates.cpu.rleDecode = { fixedMs: 0, msPerByte: 1e-6 };
    rates.readback = { fixedMs: 0, msPerByte: 1e-3 };
    const m = new CostModel(rates);
    const shape = call({ op: 'rleDecode', inputBytes: 1000, workBytes: 16000, resultBytes: 16000, inputLocation: 'device' });
    // readback of the runs (1000 B) + the decode of 16000 decoded bytes
    expect(m.predict(shape, false).predictedMs.cpu).toBeCloseTo(1000 * 1e-3 + 16000 * 1e-6, 9);
  });
});

describe('calibration', () => {
  /**
   * A machine whose throughput rises past 1 MiB (the second calibration size), as a GPU's and a
   * worker pool's do: ms = 0.05 + bytes / small rate up to 1 MiB, then the large rate on.
   */
  const kink = 1 << 20;
  const curve = (bytes: number, gbpsSmall: number, gbpsLarge: number) =>
    0.05 + Math.min(bytes, kink) / (gbpsSmall * 1e6) + Math.max(0, bytes - kink) / (gbpsLarge * 1e6);
  function fakeProbe(calls: string[]): CalibrationProbe {
    const ms = async (what: string, bytes: number, t: number) => {
      calls.push(`${what} ${bytes}`);
      return t;
    };
    return {
      cpu: (op: CostOp, bytes: number) => ms(`cpu ${op}`, bytes, curve(bytes, 1, 4)),
      gpu: (op: CostOp, bytes: number) => ms(`gpu ${op}`, bytes, 0.5 + curve(bytes, 2, 20)),
      upload: (bytes: number) => ms('upload', bytes, curve(bytes, 10, 10)),
      readback: (bytes: number) => ms('readback', bytes, curve(bytes, 10, 10)),
      warmUp: async () => void calls.push('warm-up'),
    };
  }

  it('warms the CPU ops up first, then measures the main job at a third size for an upper segment', async () => {
    const calls: string[] = [];
    const { rates } = await calibrate(fakeProbe(calls), { budgetMs: 10_000 });
    const { small, huge } = CALIBRATION_SIZES;
    // the CPU ops' first runs come before any measurement
    const firstMeasure = calls.findIndex((c) => c.startsWith('upload'));
    expect(calls.slice(0, firstMeasure)).toEqual([
      'warm-up',
      ...['rleEncode', 'rleDecode', 'scan', 'sort', 'compress', 'decompress'].map((op) => `cpu ${op} ${small}`),
    ]);
    for (const op of ['compress', 'decompress'] as const) {
      expect(calls).toContain(`cpu ${op} ${huge}`);
      expect(calls).toContain(`gpu ${op} ${huge}`);
      expect(rates.cpu[op].upper).toBeDefined();
      expect(rates.gpu![op]!.upper).toBeDefined();
    }
    expect(calls).not.toContain(`cpu sort ${huge}`); // only the main job's lines get a third point
    // 256 MiB: the upper segment predicts the fake machine's time; the two-point line alone would not
    const bytes = 256 << 20;
    const shape = call({ op: 'compress', inputBytes: bytes, inputLocation: 'device', resultLocation: 'device' });
    const p = new CostModel(rates).predict(shape, false);
    expect(p.predictedMs.gpu! / (0.5 + curve(bytes, 2, 20))).toBeCloseTo(1, 6);
    const onHost = new CostModel(rates).predict(call({ op: 'compress', inputBytes: bytes }), false);
    expect(onHost.predictedMs.cpu / curve(bytes, 1, 4)).toBeCloseTo(1, 6);
    const twoPoint = { ...rates, gpu: { ...rates.gpu, compress: { ...rates.gpu!.compress!, upper: undefined } } };
    expect(new CostModel(twoPoint).predict(shape, false).predictedMs.gpu! / (0.5 + curve(bytes, 2, 20))).toBeGreaterThan(5);
  });

  it('skips a third point that would not fit the budget', async () => {
    const calls: string[] = [];
    const probe = fakeProbe(calls);
    const slow: CalibrationProbe = {
      ...probe,
      gpu: (op, bytes) => probe.gpu!(op, bytes).then((t) => (bytes >= CALIBRATION_SIZES.huge ? t : t * 100)),
    };
    const { rates } = await calibrate(slow, { budgetMs: 50 });
    expect(calls.filter((c) => c.startsWith('gpu') && c.endsWith(` ${CALIBRATION_SIZES.huge}`))).toEqual([]);
    expect(rates.gpu!.compress?.upper).toBeUndefined();
  });
});
