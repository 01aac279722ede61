// The cost model alone: predictions from the lines, the tie rule, and both levels of the online
// history (StarPU-style medians of ratios), which a change of rates clears.
import { describe, expect, it, vi } from 'vitest';
import { calibrate, CALIBRATION_SIZES, CPU_WARM_RUNS, lineFromPoints, READBACK_MID_RUNS, SMALL_RUNS, type CalibrationProbe } from '../ts/cost/calibration.js';
import { CHOICE_REUSE, CostModel, SWITCH_GAIN, defaultRates, fitLine, lineThrough, movesNothing, withUpper, type CallShape, type CostOp, type Line } from '../ts/cost/model.js';

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

  it('history keeps the last 5 samples of a shape: older ones stop counting; kernel history refines other location pairs', () => {
    const m = new CostModel(defaultRates(true));
    const shape = call({ op: 'sort', inputLocation: 'device', resultLocation: 'device' });
    const base = m.predict(shape).predictedMs.cpu;
    // ratios 50, 50, 50, then 2, 2, 2: the median of the last five is 2 after the sixth sample
    for (const r of [50, 50, 50, 2, 2]) m.observeCall(shape, 'cpu', base * r);
    expect(m.predict(shape).predictedMs.cpu / base).toBeCloseTo(50, 6); // 50 50 50 2 2
    m.observeCall(shape, 'cpu', base * 2);
    expect(m.predict(shape).predictedMs.cpu / base).toBeCloseTo(2, 6); // 50 50 2 2 2
    // the other path and another size bucket of the same shape are untouched
    expect(m.predict(shape).predictedMs.gpu).toBeCloseTo(new CostModel(defaultRates(true)).predict(shape).predictedMs.gpu!, 9);
    const bigger = call({ op: 'sort', inputBytes: 64 << 20, resultBytes: 64 << 20, inputLocation: 'device', resultLocation: 'device' });
    expect(m.predict(bigger).predictedMs.cpu).toBeCloseTo(new CostModel(defaultRates(true)).predict(bigger).predictedMs.cpu, 9);
    // kernel history (observe): scales the kernel of a location pair with no call history
    const kernel = m.kernelMs('sort', 'cpu', 1 << 20)!;
    for (let i = 0; i < 3; i++) m.observe('sort', 'cpu', 1 << 20, kernel * 3);
    expect(m.kernelMs('sort', 'cpu', 1 << 20)! / kernel).toBeCloseTo(3, 6);
    const hostShape = call({ op: 'sort' });
    const fresh = new CostModel(defaultRates(true)).predict(hostShape).predictedMs.cpu;
    expect(m.predict(hostShape).predictedMs.cpu - fresh).toBeCloseTo(2 * kernel, 6); // the kernel part, tripled
    // rates without a GPU: no GPU prediction, and the kernel of a missing line is null
    const cpuOnly = new CostModel(defaultRates(false));
    expect(cpuOnly.predict(shape).predictedMs.gpu).toBeNull();
    expect(cpuOnly.kernelMs('sort', 'gpu', 1 << 20)).toBeNull();
  });

  it('observeCall() feeds the kernel history only from calls that move nothing on their path', () => {
    expect(movesNothing(call(), 'cpu')).toBe(true);
    expect(movesNothing(call({ resultLocation: 'device' }), 'cpu')).toBe(false);
    expect(movesNothing(call({ inputLocation: 'device', resultLocation: 'device' }), 'gpu')).toBe(true);
    expect(movesNothing(call({ resultLocation: 'device' }), 'gpu')).toBe(false);
    expect(movesNothing(call({ op: 'compress', inputLocation: 'device' }), 'gpu')).toBe(true); // its line ends on the host
    expect(movesNothing(call({ op: 'decompress', resultLocation: 'device' }), 'gpu')).toBe(true); // its line starts there
    expect(movesNothing(call({ op: 'decompress' }), 'gpu')).toBe(false);
    const m = new CostModel(defaultRates(true));
    const kernel = m.kernelMs('scan', 'gpu', 16 << 20)!;
    const big = { inputBytes: 16 << 20, resultBytes: 16 << 20 };
    // host data uploaded for the GPU (its kernel waits for the copy): no kernel sample
    for (let i = 0; i < 3; i++) m.observeCall(call({ ...big, resultLocation: 'device' }), 'gpu', 100 * kernel);
    expect(m.kernelMs('scan', 'gpu', 16 << 20)).toBeCloseTo(kernel, 9);
    // device to device: the call is the kernel's line, so its ratio refines the other pairs
    const devDev = call({ ...big, inputLocation: 'device', resultLocation: 'device' });
    const predicted = m.predict(devDev).predictedMs.gpu!;
    for (let i = 0; i < 3; i++) m.observeCall(devDev, 'gpu', 2 * predicted);
    expect(m.kernelMs('scan', 'gpu', 16 << 20)! / kernel).toBeCloseTo(2, 6);
    const devHost = call({ ...big, inputLocation: 'device' });
    expect(m.predict(devHost).predictedMs.gpu! - new CostModel(defaultRates(true)).predict(devHost).predictedMs.gpu!).toBeCloseTo(kernel, 6);
  });

  it("choose() reuses a shape's choice for CHOICE_REUSE calls, predicting again sooner when a history median it rests on moves", () => {
    const m = new CostModel(defaultRates(true));
    const predict = vi.spyOn(m, 'predict');
    const shape = call({ inputBytes: 256 << 20, resultBytes: 256 << 20, inputLocation: 'device', resultLocation: 'device' });
    const predictions = () => predict.mock.calls.length;
    // one prediction serves CHOICE_REUSE calls of the same byte counts
    for (let i = 0; i < CHOICE_REUSE; i++) expect(m.choose(shape)).toBe('gpu');
    expect(predictions()).toBe(1);
    expect(m.choose(shape)).toBe('gpu');
    expect(predictions()).toBe(2);
    // other byte counts of the same bucket, and calls with gpuHostMs, are predicted anew
    m.choose({ ...shape, inputBytes: shape.inputBytes + 4 });
    m.choose({ ...shape, gpuHostMs: 0 });
    expect(predictions()).toBe(4);
    // the GPU observed 1000x slower than predicted: once its median appears, choose() turns at once
    const m2 = new CostModel(defaultRates(true));
    const gpuMs = m2.predict(shape).predictedMs.gpu!;
    expect(m2.choose(shape)).toBe('gpu');
    m2.observeCall(shape, 'gpu', gpuMs * 1000);
    m2.observeCall(shape, 'gpu', gpuMs * 1000);
    expect(m2.choose(shape)).toBe('gpu'); // 2 samples: no median yet
    m2.observeCall(shape, 'gpu', gpuMs * 1000);
    expect(m2.choose(shape)).toBe('cpu');
    // a median that moves by 10 % or less keeps the remembered choice; more makes it predict again
    const spy2 = vi.spyOn(m2, 'predict');
    m2.observeCall(shape, 'gpu', gpuMs * 1050);
    m2.choose(shape);
    expect(spy2.mock.calls.length).toBe(0);
    for (let i = 0; i < 3; i++) m2.observeCall(shape, 'gpu', gpuMs * 2000);
    m2.choose(shape);
    expect(spy2.mock.calls.length).toBe(1);
    // new rates: the remembered choices go with the history
    const m3 = new CostModel(defaultRates(true));
    expect(m3.choose(shape)).toBe('gpu');
    m3.rates = { ...defaultRates(true), gpu: null };
    expect(m3.choose(shape)).toBe('cpu');
  });

  it('choose() keeps the path a shape ran on unless the other is predicted SWITCH_GAIN faster', () => {
    const m = new CostModel(defaultRates(true));
    const shape = call({ inputBytes: 256 << 20, resultBytes: 256 << 20, inputLocation: 'device', resultLocation: 'device' });
    const { cpu, gpu } = m.predict(shape).predictedMs;
    expect(m.choose(shape)).toBe('gpu');
    // the GPU observed 5 % slower than the CPU's prediction: predict() says cpu, choose() stays
    for (let i = 0; i < 3; i++) m.observeCall(shape, 'gpu', cpu * 1.05);
    expect(m.predict(shape).path).toBe('cpu');
    expect(m.choose(shape)).toBe('gpu');
    // 25 % slower: the CPU is predicted more than SWITCH_GAIN faster, choose() moves
    expect(1 / 1.25).toBeLessThan(1 - SWITCH_GAIN);
    for (let i = 0; i < 3; i++) m.observeCall(shape, 'gpu', cpu * 1.25);
    expect(m.choose(shape)).toBe('cpu');
    // a first choice of other byte counts has nothing to keep: predict()'s path
    const other = { ...shape, inputBytes: shape.inputBytes - 64 };
    for (let i = 0; i < 3; i++) m.observeCall(other, 'gpu', cpu * 1.05);
    expect(m.predict(other).path).toBe('cpu');
    expect(m.choose(other)).toBe('cpu');
    expect(gpu).toBeLessThan(cpu);
  });

  it("compress on the GPU path adds no readback of the container (its line covers the call to the host's container)", () => {
    const m = new CostModel(defaultRates(true));
    const shape = call({ op: 'compress', inputBytes: 1 << 20, resultBytes: 1 << 18, inputLocation: 'device', resultLocation: 'host' });
    const line = defaultRates(true).gpu!.compress!;
    expect(m.predict(shape, false).predictedMs.gpu).toBeCloseTo(line.fixedMs + line.msPerByte * (1 << 20), 9);
    // a scan's result on the host is read back
    const scan = defaultRates(true).gpu!.scan!;
    expect(m.predict({ ...shape, op: 'scan' }, false).predictedMs.gpu).toBeGreaterThan(scan.fixedMs + scan.msPerByte * (1 << 20) + 0.1);
  });

  it("gpuHostMs (rleDecode's sum of host run lengths) goes into the GPU path's prediction only", () => {
    const m = new CostModel(defaultRates(true));
    const shape = call({ op: 'rleDecode', inputBytes: 1 << 20, workBytes: 1 << 22, resultBytes: 1 << 22 });
    const without = m.predict(shape, false).predictedMs;
    const withSum = m.predict({ ...shape, gpuHostMs: 7 }, false).predictedMs;
    expect(withSum.gpu! - without.gpu!).toBeCloseTo(7, 9);
    expect(withSum.cpu).toBe(without.cpu);
  });

  it("a line's floor holds below its smallest point, and nowhere else", () => {
    const line = lineFromPoints(
      [
        [16 << 10, 0.1],
        [1 << 20, 7.5],
      ],
      { fixedMs: 0, msPerByte: 0 },
    );
    expect(line.floorMs).toBe(0.1);
    const rates = defaultRates(false);
    const m = new CostModel({ ...rates, cpu: { ...rates.cpu, sort: line } });
    const cpuSort = (bytes: number) =>
      m.predict(call({ op: 'sort', inputBytes: bytes, resultBytes: bytes, inputLocation: 'host', resultLocation: 'host' }), false).predictedMs.cpu;
    expect(cpuSort(4 << 10)).toBeCloseTo(0.1, 9); // the line alone: about 0.03
    expect(cpuSort(1 << 20)).toBeCloseTo(7.5, 1); // (the line: its fixed part clamped at 0)
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

  it('fitLine splits two points into a fixed cost and a slope', () => {
    // 14 ms at 16 KiB and 25 ms at 16 MiB (an H200's GPU compress): mostly fixed cost
    const l = fitLine([16 << 10, 14], [16 << 20, 25]);
    const slope = 11 / ((16 << 20) - (16 << 10));
    expect(l.msPerByte).toBeCloseTo(slope, 15);
    expect(l.fixedMs).toBeCloseTo(14 - slope * (16 << 10), 9);
    expect(l.fixedMs).toBeGreaterThan(13.9);
    // the points in either order
    expect(fitLine([16 << 20, 25], [16 << 10, 14])).toEqual(l);
  });

  it('fitLine and lineThrough never give a negative, NaN or infinite part', () => {
    const odd = [NaN, Infinity, -Infinity, -5, 0, 1e-300, 3, 1e12];
    const ok = (line: Line) => Number.isFinite(line.fixedMs) && line.fixedMs >= 0 && Number.isFinite(line.msPerByte) && line.msPerByte >= 0;
    for (const b1 of odd)
      for (const t1 of odd)
        for (const t2 of odd) {
          expect(ok(fitLine([b1, t1], [1 << 20, t2])), `fitLine([${b1}, ${t1}], [1 MiB, ${t2}])`).toBe(true);
          expect(ok(fitLine([1 << 20, t1], [1 << 20, t2])), 'equal sizes').toBe(true);
          expect(ok(lineThrough([b1, t1], t2)), `lineThrough([${b1}, ${t1}], ${t2})`).toBe(true);
        }
  });

  it('one point: its time is fixed cost less a default slope, never all of it in the slope', () => {
    // the failure this guards against: 14.6 ms at 16 KiB put in the slope predicted 15 s at 16 MiB
    const l = lineThrough([16 << 10, 14.6], 1e-6);
    expect(l.msPerByte).toBe(1e-6);
    expect(l.fixedMs).toBeCloseTo(14.6 - 1e-6 * (16 << 10), 9);
    const atMiB16 = l.fixedMs + l.msPerByte * (16 << 20);
    expect(atMiB16).toBeLessThan(40);
    // a slope whose part alone passes the time: through the origin and the point
    const steep = lineThrough([1000, 1], 0.01);
    expect(steep).toEqual({ fixedMs: 0, msPerByte: 0.001 });
  });

  it('lineFromPoints: straight through the first two points, an upper segment through the last two', () => {
    const fallback = { fixedMs: 0.5, msPerByte: 1e-6 };
    expect(lineFromPoints([], fallback)).toEqual(fallback);
    expect(lineFromPoints([[1000, 3]], fallback)).toEqual(lineThrough([1000, 3], 1e-6));
    expect(
      lineFromPoints(
        [
          [NaN, 3],
          [1000, NaN],
        ],
        fallback,
      ),
    ).toEqual(fallback);
    const two = lineFromPoints(
      [
        [4000, 5],
        [1000, 2],
      ],
      fallback,
    );
    expect(two.fixedMs).toBeCloseTo(1, 9);
    expect(two.msPerByte).toBeCloseTo(1e-3, 12);
    expect(two.upper).toBeUndefined();
    const four = lineFromPoints(
      [
        [1000, 2],
        [4000, 5],
        [16000, 10],
        [64000, 20],
      ],
      fallback,
    );
    expect(four.fixedMs).toBeCloseTo(1, 9);
    expect(four.upper!.fromBytes).toBe(16000);
    expect(four.upper!.msPerByte).toBeCloseTo(10 / 48000, 12);
    expect(four.upper!.fixedMs + four.upper!.msPerByte * 64000).toBeCloseTo(20, 9);
    const three = lineFromPoints(
      [
        [1000, 2],
        [4000, 5],
        [16000, 8],
      ],
      fallback,
    );
    expect(three.upper!.fromBytes).toBe(4000);
    expect(three.upper!.fixedMs + three.upper!.msPerByte * 4000).toBeCloseTo(5, 9);
  });

  it('an upper segment passes through its first point even where its intercept is negative (a readback past reused memory); CPU results past 32 MiB pay its extra rate', () => {
    const line = lineFromPoints(
      [
        [16 << 10, 0.28],
        [1 << 20, 0.62],
        [16 << 20, 5.5],
        [64 << 20, 43],
      ],
      { fixedMs: 0, msPerByte: 0 },
    );
    expect(line.upper!.fixedMs).toBeLessThan(0);
    const m = new CostModel({ ...defaultRates(true), readback: line });
    // (compress: a small result, so the readback of the input is the only move)
    const readback = (bytes: number) =>
      m.predict(call({ op: 'compress', inputBytes: bytes, resultBytes: bytes / 8, inputLocation: 'device', resultLocation: 'host' }), false)
        .predictedMs.cpu;
    const compress = defaultRates(true).cpu.compress;
    const kernel = (bytes: number) => compress.fixedMs + compress.msPerByte * bytes;
    expect(readback(16 << 20) - kernel(16 << 20)).toBeCloseTo(5.5, 6); // 12.5 with the intercept clamped at 0
    expect(readback(64 << 20) - kernel(64 << 20)).toBeCloseTo(43, 6);

    // a CPU sort's result past 32 MiB pays the fresh pages at the readback's extra rate past 16 MiB
    const sort = (bytes: number) => m.predict(call({ op: 'sort', inputBytes: bytes, resultBytes: bytes }), false).predictedMs.cpu;
    const sortLine = defaultRates(true).cpu.sort;
    const extraPerByte = line.upper!.msPerByte - line.msPerByte;
    expect(sort(16 << 20)).toBeCloseTo(sortLine.fixedMs + sortLine.msPerByte * (16 << 20), 9);
    expect(sort(256 << 20) - (sortLine.fixedMs + sortLine.msPerByte * (256 << 20))).toBeCloseTo(extraPerByte * (224 << 20), 6);
    // not for compress and decompress (their lines reach 64 MiB), nor for a result wanted on the GPU
    const decompress = defaultRates(true).cpu.decompress;
    expect(m.predict(call({ op: 'decompress', inputBytes: 256 << 20, resultBytes: 256 << 20 }), false).predictedMs.cpu).toBeCloseTo(
      decompress.fixedMs + decompress.msPerByte * (256 << 20),
      9,
    );
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

  it("runs move as two arrays, each paying the transfer's fixed cost", () => {
    const rates = defaultRates(true);
    rates.readback = { fixedMs: 0.2, msPerByte: 1e-6 };
    rates.upload = { fixedMs: 0.05, msPerByte: 1e-6, floorMs: 0.08 };
    const m = new CostModel(rates);
    const cpuMs = (shape: CallShape) => m.predict(shape, false).predictedMs.cpu;
    const gpuMs = (shape: CallShape) => m.predict(shape, false).predictedMs.gpu!;
    const kernel = (line: Line, bytes: number) => Math.max(line.fixedMs + line.msPerByte * bytes, line.floorMs ?? 0);
    // the CPU path of device runs reads back values and lengths: two fixed costs
    const decode = call({ op: 'rleDecode', inputBytes: 1000, workBytes: 4000, resultBytes: 4000, inputLocation: 'device' });
    expect(cpuMs(decode)).toBeCloseTo(2 * 0.2 + 1000 * 1e-6 + kernel(rates.cpu.rleDecode, 4000), 9);
    // a scan's one array: one
    const scan = call({ op: 'scan', inputBytes: 1000, resultBytes: 1000, inputLocation: 'device' });
    expect(cpuMs(scan)).toBeCloseTo(0.2 + 1000 * 1e-6 + kernel(rates.cpu.scan, 1000), 9);
    // rleEncode's result: two readbacks from the GPU path, two uploads (each at least the floor) from the CPU path
    const encode = call({ op: 'rleEncode', inputBytes: 4000, resultBytes: 1000, inputLocation: 'device', resultLocation: 'host' });
    expect(gpuMs(encode)).toBeCloseTo(kernel(rates.gpu!.rleEncode!, 4000) + 2 * 0.2 + 1000 * 1e-6, 9);
    const toDevice = call({ op: 'rleEncode', inputBytes: 4000, resultBytes: 1000, inputLocation: 'host', resultLocation: 'device' });
    expect(cpuMs(toDevice)).toBeCloseTo(kernel(rates.cpu.rleEncode, 4000) + 0.08 + 0.08, 9);
  });

  it("a GPU path's extra round trips cost the readback's fixed cost each, on the GPU path only", () => {
    const rates = defaultRates(true);
    rates.readback = { fixedMs: 0.2, msPerByte: 1e-6, floorMs: 0.25 };
    const m = new CostModel(rates);
    const shape = call({ op: 'rleDecode', inputBytes: 1000, workBytes: 4000, resultBytes: 4000, inputLocation: 'device', resultLocation: 'device' });
    const before = m.predict(shape, false).predictedMs;
    const after = m.predict({ ...shape, gpuRoundTrips: 1 }, false).predictedMs;
    expect(after.gpu! - before.gpu!).toBeCloseTo(0.25, 9); // the line at 0 bytes: its floor
    expect(after.cpu).toBe(before.cpu);
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
  const { cpuSmall, small, large, mid, top } = CALIBRATION_SIZES;
  /**
   * A machine like the H200 host with 16 workers (figures from bench/results/nvidia-h200/cost-model.json
   * and a sweep there): the CPU's compress runs on one worker up to one chunk (4 MiB), 3x faster
   * per byte past it (the workers' speed-up is smaller than their number), the GPU's compress costs about 14 ms whatever the size below 1 MiB, and each GPU op's
   * first call at a size pays for pipelines and buffers (150 ms).
   */
  const cpuMs = (bytes: number) => 0.05 + Math.min(bytes, 4 << 20) / 1e6 + Math.max(0, bytes - (4 << 20)) / 3e6;
  const gpuMs = (bytes: number) => 14 + bytes / 1.5e9;
  const uploadMs = (bytes: number) => 0.02 + bytes / 9e6;
  function fakeProbe(calls: string[], firstUseMs = 150): CalibrationProbe {
    const seen = new Set<string>();
    const ms = async (what: string, bytes: number, t: number, firstUse = 0) => {
      calls.push(`${what} ${bytes}`);
      const first = !seen.has(`${what} ${bytes}`);
      seen.add(`${what} ${bytes}`);
      return first ? t + firstUse : t;
    };
    return {
      cpu: (op: CostOp, bytes: number) => ms(`cpu ${op}`, bytes, cpuMs(bytes)),
      gpu: (op: CostOp, bytes: number) => ms(`gpu ${op}`, bytes, gpuMs(bytes), firstUseMs),
      upload: (bytes: number) => ms('upload', bytes, uploadMs(bytes), 5),
      readback: (bytes: number) => ms('readback', bytes, uploadMs(bytes) * 3),
      warmUp: async () => void calls.push('warm-up'),
      poolBytes: 16 * (4 << 20),
    };
  }
  const off = (predicted: number, actual: number) => Math.max(predicted / actual, actual / predicted);

  it('warms every op up at the first size before the budget, and pays no first-use cost into a line', async () => {
    const calls: string[] = [];
    const { rates } = await calibrate(fakeProbe(calls), { budgetMs: 10_000 });
    const ops = ['rleEncode', 'rleDecode', 'scan', 'sort', 'compress', 'decompress'];
    // (the measurements open with SMALL_RUNS uploads and then readbacks at `small`)
    const firstMeasure = calls.lastIndexOf(`readback ${small}`) + 1 - 2 * SMALL_RUNS;
    expect(calls.slice(firstMeasure, firstMeasure + 2 * SMALL_RUNS)).toEqual([
      ...Array<string>(SMALL_RUNS).fill(`upload ${small}`),
      ...Array<string>(SMALL_RUNS).fill(`readback ${small}`),
    ]);
    // the CPU's first, so that the GPU's warm-up leads into the measurements (the transfers' first)
    expect(calls.slice(0, firstMeasure)).toEqual([
      ...ops.flatMap((op) => Array<string>(1 + CPU_WARM_RUNS).fill(`cpu ${op} ${cpuSmall}`)),
      'warm-up',
      ...ops.map((op) => `gpu ${op} ${small}`),
      ...ops.map((op) => `gpu ${op} ${small}`),
      ...ops.flatMap((op) => [`gpu ${op} ${large}`, `gpu ${op} ${large}`]),
      `upload ${large}`,
      `readback ${large}`,
      `upload ${64 << 20}`, // the staging piece of uploads past the ring
      // each transfer at `small` until the host's code is compiled
      ...Array<string>(CPU_WARM_RUNS).fill(`upload ${small}`),
      ...Array<string>(CPU_WARM_RUNS).fill(`readback ${small}`),
    ]);
    // the 150 ms of each first use are nowhere in the GPU lines
    for (const op of ops) {
      const line = rates.gpu![op as CostOp]!;
      for (const bytes of [4 << 10, 1 << 20, 16 << 20, 256 << 20]) {
        const upper = line.upper && bytes >= line.upper.fromBytes ? line.upper : line;
        expect(off(upper.fixedMs + upper.msPerByte * bytes, gpuMs(bytes)), `${op} at ${bytes}`).toBeLessThan(1.05);
      }
    }
  });

  it('measures the main job up to the pool size and the upload past the ring: right from 1 MiB to 1 GiB', async () => {
    const calls: string[] = [];
    const { rates } = await calibrate(fakeProbe(calls), { budgetMs: 10_000 });
    for (const op of ['compress', 'decompress'] as const) {
      expect(calls).toContain(`cpu ${op} ${mid}`);
      expect(calls).toContain(`cpu ${op} ${top}`);
      expect(calls).toContain(`gpu ${op} ${top}`);
      expect(rates.cpu[op].upper?.fromBytes).toBe(mid);
    }
    expect(calls).toContain(`upload ${top}`);
    // the GPU's other ops too (at `mid` a GPU call is mostly fixed cost: the slope comes from `top`)
    for (const op of ['rleEncode', 'rleDecode', 'scan', 'sort']) expect(calls).toContain(`gpu ${op} ${top}`);
    // the readback at `mid` until earlier runs' arrays are collected (the best of its runs)
    expect(calls.filter((c) => c === `readback ${mid}`)).toHaveLength(READBACK_MID_RUNS);
    expect(calls.filter((c) => c.startsWith('cpu sort'))).toEqual([
      ...Array<string>(1 + CPU_WARM_RUNS + SMALL_RUNS).fill(`cpu sort ${cpuSmall}`),
      `cpu sort ${large}`,
      `cpu sort ${large}`,
      `cpu sort ${mid}`,
      `cpu sort ${mid}`,
    ]); // the first at `cpuSmall`: the warm-up; `mid` late, where the budget allows
    expect(calls.indexOf(`cpu sort ${mid}`)).toBeGreaterThan(calls.lastIndexOf(`cpu compress ${top}`));
    expect(calls.indexOf(`cpu sort ${mid}`)).toBeLessThan(calls.indexOf(`readback ${top}`));
    const m = new CostModel(rates);
    // (between 1 and 16 MiB the line through 16 KiB and 1 MiB goes on: one worker's throughput)
    for (const bytes of [1 << 20, 16 << 20, 64 << 20, 256 << 20, 1 << 30]) {
      const p = m.predict(call({ op: 'compress', inputBytes: bytes, resultBytes: bytes * 0.25 }), false).predictedMs;
      expect(off(p.cpu, cpuMs(bytes)), `cpu compress at ${bytes}`).toBeLessThan(1.5);
      // (the GPU compress's line includes the container's readback: none added)
      expect(off(p.gpu!, uploadMs(bytes) + gpuMs(bytes)), `gpu compress at ${bytes}`).toBeLessThan(1.5);
      const up = m.predict(call({ op: 'scan', inputBytes: bytes, inputLocation: 'host', resultLocation: 'device' }), false);
      expect(off(up.predictedMs.gpu!, uploadMs(bytes) + gpuMs(bytes)), `upload at ${bytes}`).toBeLessThan(1.1);
    }
  });

  it('skips points whose predicted time would not fit the budget, keeping every line finite', async () => {
    const calls: string[] = [];
    const probe = fakeProbe(calls);
    const slow: CalibrationProbe = { ...probe, gpu: (op, bytes) => probe.gpu!(op, bytes).then((t) => t * 100) };
    const { rates } = await calibrate(slow, { budgetMs: 50 });
    // 1.4 s at 16 KiB: no GPU run past `small` (not even the warm-up's guess at `large`)
    expect(calls.filter((c) => c.startsWith('gpu') && Number(c.split(' ')[2]) > small)).toEqual([]);
    expect(rates.gpu!.compress?.upper).toBeUndefined();
    // nor is its time put in the slope alone: 1.4 s fixed cost, about as much at 1 MiB
    expect(rates.gpu!.compress!.fixedMs).toBeGreaterThan(1000);
    const lines: Line[] = [...Object.values(rates.cpu), ...Object.values(rates.gpu!), rates.upload!, rates.readback!];
    for (const l of lines) {
      for (const part of [l.fixedMs, l.msPerByte, l.upper?.msPerByte ?? 0]) {
        expect(Number.isFinite(part) && part >= 0).toBe(true);
      }
      // an upper segment's intercept may be negative; its times from where it starts may not
      if (l.upper) expect(l.upper.fixedMs + l.upper.msPerByte * l.upper.fromBytes).toBeGreaterThanOrEqual(0);
    }
  });

  it('a step starts where two of its runs fit and makes each further run that fits, predicted from its own runs', async () => {
    const calls: string[] = [];
    const probe = fakeProbe(calls);
    // (the fake probe's times pass no wall clock: what is left stays about the budget, 1 s)
    const gpu = (op: CostOp, bytes: number) => (op === 'sort' && bytes === mid ? probe.gpu!(op, bytes).then(() => 2000) : probe.gpu!(op, bytes));
    await calibrate({ ...probe, gpu }, { budgetMs: 1000 });
    // predicted from 16 KiB and 1 MiB, two runs of each GPU op at `mid` fit; the sort's took 2 s
    // each, so its third, predicted from them, did not
    expect(calls.filter((c) => c === `gpu scan ${mid}`)).toHaveLength(3);
    expect(calls.filter((c) => c === `gpu sort ${mid}`)).toHaveLength(2);
  });

  it("a line whose mid point does not fit the budget goes through the warm-up's better run at `large`, not its first", async () => {
    const calls: string[] = [];
    const probe = fakeProbe(calls);
    // 10 ms a MB: 10.2 ms at 16 KiB (64x fits twice the budget), 178 ms at 16 MiB (twice does not fit)
    const slowGpuMs = (bytes: number) => 10 + bytes / 1e5;
    const seen = new Set<string>();
    const gpu = async (op: CostOp, bytes: number) => {
      calls.push(`gpu ${op} ${bytes}`);
      const first = !seen.has(`${op} ${bytes}`);
      seen.add(`${op} ${bytes}`);
      return slowGpuMs(bytes) + (first ? 150 : 0);
    };
    const { rates } = await calibrate({ ...probe, gpu }, { budgetMs: 340 });
    expect(calls.filter((c) => c === `gpu compress ${large}`)).toHaveLength(2);
    expect(calls).not.toContain(`gpu compress ${mid}`);
    const line = rates.gpu!.compress!;
    for (const bytes of [mid, 256 << 20]) {
      expect(off(line.fixedMs + line.msPerByte * bytes, slowGpuMs(bytes)), `gpu compress at ${bytes}`).toBeLessThan(1.1);
    }
  });

  it("the CPU's small points are the median of runs after a pause, not the warm-up's first use nor a tight loop's best", async () => {
    const probe = fakeProbe([]);
    // a small call costs 0.03 ms right after another, 0.07 ms after an idle pause (the workers
    // and the thread wake up), 2 ms the first time; one of the spaced runs is slow (a hiccup)
    let lastEnd = -Infinity;
    let calls = 0;
    let idleCalls = 0;
    const cpu = async (op: CostOp, bytes: number) => {
      const idle = performance.now() - lastEnd >= 1; // (a tight run follows within microseconds)
      calls++;
      if (idle && calls > 1) idleCalls++;
      const t = bytes !== cpuSmall ? cpuMs(bytes) : calls === 1 ? 2 : idleCalls === 2 ? 1 : idle ? 0.07 : 0.03;
      lastEnd = performance.now();
      return t;
    };
    const { rates } = await calibrate({ ...probe, cpu: (op, bytes) => (op === 'scan' ? cpu(op, bytes) : probe.cpu(op, bytes)) }, { budgetMs: 10_000 });
    const line = rates.cpu.scan;
    expect(line.fixedMs + line.msPerByte * cpuSmall).toBeCloseTo(0.07, 9);
  });

  it("the main job's CPU lines gain no throughput past the pool's size (a worker pool busy at its last point)", async () => {
    const probe = fakeProbe([]);
    // 16 workers of 4 MiB chunks: at 16 MiB 4 of them work; at 64 MiB all, 27 ms; past it the time
    // grows in proportion (H200 host: 106 ms at 256 MiB), where the segment through 16 and 64 MiB
    // (14 and 27 ms) would put 256 MiB at 79 ms
    const compressMs = (bytes: number) =>
      bytes <= large
        ? cpuMs(bytes)
        : bytes <= mid
          ? cpuMs(large) + ((bytes - large) * (14 - cpuMs(large))) / (mid - large)
          : bytes <= top
            ? 14 + ((bytes - mid) * 13) / (top - mid)
            : (27 * bytes) / top;
    const cpu = (op: CostOp, bytes: number) => (op === 'compress' ? Promise.resolve(compressMs(bytes)) : probe.cpu(op, bytes));
    const { rates } = await calibrate({ ...probe, cpu }, { budgetMs: 10_000 });
    const m = new CostModel(rates);
    for (const bytes of [top, 256 << 20, 1 << 30]) {
      const p = m.predict(call({ op: 'compress', inputBytes: bytes, resultBytes: bytes / 8 }), false).predictedMs.cpu;
      expect(off(p, compressMs(bytes)), `cpu compress at ${bytes}`).toBeLessThan(1.05);
    }
    // below the pool's size the segment holds
    expect(off(m.predict(call({ op: 'compress', inputBytes: 32 << 20, resultBytes: 4 << 20 }), false).predictedMs.cpu, compressMs(32 << 20))).toBeLessThan(1.05);
  });

  it('a GPU op without a kernel (the probe gives Infinity) has no GPU line', async () => {
    const probe = fakeProbe([]);
    const { rates } = await calibrate(
      { ...probe, gpu: (op, bytes) => (op === 'sort' ? Promise.resolve(Infinity) : probe.gpu!(op, bytes)) },
      { budgetMs: 10_000 },
    );
    expect(rates.gpu!.sort).toBeUndefined();
    expect(rates.gpu!.scan).toBeDefined();
  });
});
