// The cost model alone: predictions from the lines, the tie rule, and both levels of the online
// history (StarPU-style medians of ratios), which a change of rates clears.
import { describe, expect, it } from 'vitest';
import { CostModel, defaultRates, fitLine, type CallShape } from '../ts/cost/model.js';

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
});
