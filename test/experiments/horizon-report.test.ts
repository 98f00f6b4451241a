import { describe, expect, it } from 'vitest';
import { type CurveMetric, CURVE_METRICS, type RunCurves, aggregateCurve, differencesTable, markdownTable, smoothCurve, summarizeVariants } from '../../src/experiments/horizon/report.js';
import { meanInterval, tQuantile975, wilsonInterval } from '../../src/experiments/horizon/stats.js';
import { deriveVariants, variantsOf } from '../../src/experiments/horizon/variants.js';
import { InvalidConfigError } from '../../src/core/errors.js';

function runOf(variant: string, seed: number, series: Partial<Record<CurveMetric, [number, number][]>>, extra: Partial<RunCurves> = {}): RunCurves {
  const curves = {} as Record<CurveMetric, Map<number, number>>;
  for (const m of CURVE_METRICS) curves[m] = new Map(series[m] ?? []);
  return { variant, seed, curves, ...extra };
}

describe('horizon experiment variants', () => {
  it('derives fixed short, fixed long, stepwise and adaptive from a stepwise base, all evaluated at the long horizon', () => {
    const v = deriveVariants({ schedule: 'stepwise', horizons: [3, 6, 12], every: 8 }, 24);
    expect(v.map((x) => x.name)).toEqual(['fixed-3', 'fixed-12', 'stepwise', 'adaptive']);
    expect(v[0]?.horizon).toEqual({ schedule: 'fixed', horizon: 3, evalHorizon: 12 });
    expect(v[2]?.horizon).toEqual({ schedule: 'stepwise', horizons: [3, 6, 12], every: 8, evalHorizon: 12 });
    expect(v[3]?.horizon).toMatchObject({ schedule: 'adaptive', start: 3, step: 3, max: 12, patience: 4, evalHorizon: 12 });
  });

  it('derives a ladder from a linear base and refuses a fixed one, naming the field', () => {
    const v = deriveVariants({ schedule: 'linear', start: 4, step: 4, every: 5, max: 10 }, 20);
    expect(v[2]?.horizon).toEqual({ schedule: 'stepwise', horizons: [4, 8, 10], every: 5, evalHorizon: 10 });
    expect(() => deriveVariants({ schedule: 'fixed', horizon: 5 }, 20)).toThrow(InvalidConfigError);
    expect(() => deriveVariants({ schedule: 'fixed', horizon: 5 }, 20)).toThrow(/horizon\.schedule/);
  });

  it('takes explicit variants from the experiment section, with its evalHorizon', () => {
    const v = variantsOf({ schedule: 'fixed', horizon: 5 }, { evalHorizon: 9, variants: { short: { schedule: 'fixed', horizon: 2 } } }, 10);
    expect(v).toEqual([{ name: 'short', horizon: { evalHorizon: 9, schedule: 'fixed', horizon: 2 } }]);
  });
});

describe('horizon experiment report', () => {
  const runs = [
    runOf('a', 2, { 'eval/successRate': [[0, 0.2], [5, 0.4], [10, 0.8]], 'rollout/meanTurns': [[1, 4], [2, 6]], 'horizon/current': [[1, 3], [2, 6]], 'eval/truncationRate': [[10, 0.1]] }, { finalEvalEpisodes: 10, alarms: { entropyCollapse: [7] } }),
    runOf('a', 1, { 'eval/successRate': [[0, 0.2], [5, 0.6], [10, 0.4]], 'rollout/meanTurns': [[1, 2], [2, 4]], 'horizon/current': [[1, 3], [2, 6]], 'eval/truncationRate': [[10, 0.3]] }, { finalEvalEpisodes: 10 }),
    runOf('b', 1, { 'eval/successRate': [[0, 0.2]] }),
    runOf('c', 1, { 'eval/successRate': [[0, 0.2], [10, 0.5]] }),
    runOf('c', 2, { 'eval/successRate': [[0, 0.2], [10, 0.5]] }),
  ];

  it('aggregates mean and min/max over seeds per step', () => {
    expect(aggregateCurve(runs.filter((r) => r.variant === 'a'), 'eval/successRate')).toEqual([
      { x: 0, mean: 0.2, min: 0.2, max: 0.2, n: 2 },
      { x: 5, mean: 0.5, min: 0.4, max: 0.6, n: 2 },
      { x: 10, mean: 0.6000000000000001, min: 0.4, max: 0.8, n: 2 },
    ]);
  });

  it('summarises final and peak held-out success (with its step), held-out behaviour and tail means, per seed in seed order', () => {
    const [a, b] = summarizeVariants(['a', 'b'], runs, 2);
    expect(a?.seedIds).toEqual([1, 2]);
    expect(a?.finalSuccess).toEqual([0.4, 0.8]);
    expect(a?.peakSuccess).toEqual([0.6, 0.8]);
    expect(a?.peakStep).toEqual([5, 10]);
    expect(a?.evalTruncation).toEqual([0.3, 0.1]);
    expect(a?.meanTurns).toEqual([3, 5]);
    expect(a?.finalHorizon).toEqual([6, 6]);
    expect(a?.alarmRuns).toEqual({ entropyCollapse: 1 });
    // Only the untrained evaluation: no peak after training.
    expect(b?.peakSuccess[0]).toBeNaN();
    const table = markdownTable([a, b].filter((x) => x !== undefined), 2);
    // a: final mean 0.6 ± t(1) 12.706 x sd 0.2828 / √2 = 2.541; pooled 12 of 20 episodes, Wilson [0.387, 0.781].
    expect(table).toContain('| a | 2 | 0.600 [-1.941, 3.141] | 0.600 [0.387, 0.781] (n = 20) | 0.700 [-0.571, 1.971] |');
    expect(table).toContain('| b | 1 | 0.200 | — | — |');
    expect(table).toContain('| a | 4.00 ± 1.41 |');
    expect(table).toMatch(/\| a \|.*\| entropyCollapse 1\/2 \|/);
  });

  it('pairs final held-out success by seed for the differences between variants', () => {
    const rows = summarizeVariants(['a', 'c', 'b'], runs, 2);
    const table = differencesTable(rows);
    // a − c per seed: 0.4 − 0.5, 0.8 − 0.5 → mean 0.1 ± 12.706 x 0.2828 / √2 = 2.541; a − b: only seed 1 → 0.2, no interval.
    expect(table).toContain('| a − c | 2 | 0.100 [-2.441, 2.641] | 1/2 |');
    expect(table).toContain('| a − b | 1 | 0.200 | 1/1 |');
  });
});

describe('interval statistics', () => {
  it('Student-t intervals of a mean over seeds and Wilson intervals of a pooled rate (reference values)', () => {
    expect(tQuantile975(4)).toBe(2.776);
    const i = meanInterval([0.4, 0.5, 0.6]);
    expect(i.mean).toBeCloseTo(0.5, 12);
    expect(i.lo).toBeCloseTo(0.251566, 5);
    expect(i.hi).toBeCloseTo(0.748434, 5);
    const w = wilsonInterval(640, 1280);
    expect(w.lo).toBeCloseTo(0.47265, 5);
    expect(w.hi).toBeCloseTo(0.52735, 5);
    const zero = wilsonInterval(0, 10);
    expect(zero.lo).toBeCloseTo(0, 12);
    expect(zero.hi).toBeCloseTo(0.277533, 5);
  });
});

describe('smoothing', () => {
  it('takes a trailing mean per run over the last k logged steps', () => {
    expect([...smoothCurve(new Map([[1, 0], [2, 1], [3, 1], [5, 0]]), 3).entries()]).toEqual([
      [1, 0],
      [2, 0.5],
      [3, 2 / 3],
      [5, 2 / 3],
    ]);
    expect([...smoothCurve(new Map([[1, 0.25]]), 1).entries()]).toEqual([[1, 0.25]]);
  });
});
