import { describe, expect, it } from 'vitest';
import { emaSmooth } from '../../../src/ui/format/smoothing.js';

describe('emaSmooth', () => {
  it('returns the values unchanged at weight 0', () => {
    expect(emaSmooth([[1, 0.2], [2, 0.8], [3, 0.4]], 0)).toEqual([[1, 0.2], [2, 0.8], [3, 0.4]]);
  });

  it('matches a hand-computed debiased moving average', () => {
    // w = 0.5: raw averages 0.5, 0.75 (0.5*0.5 + 0.5*1); debias 1 - 0.5, 1 - 0.25.
    const [a, b] = emaSmooth([[1, 1], [2, 1]], 0.5);
    expect(a).toEqual([1, 1]);
    expect(b?.[1]).toBeCloseTo(1, 12);
    const [, c] = emaSmooth([[1, 0], [2, 1]], 0.5);
    expect(c?.[1]).toBeCloseTo(0.5 / 0.75, 12);
  });

  it('starts at the first value (debiased, not pulled towards 0) and lags a step change', () => {
    const points: [number, number][] = [[1, 10], [2, 10], [3, 10], [4, 20], [5, 20]];
    const smoothed = emaSmooth(points, 0.9).map(([, v]) => v as number);
    expect(smoothed[0]).toBeCloseTo(10, 12);
    expect(smoothed[2]).toBeCloseTo(10, 12);
    expect(smoothed[3]).toBeGreaterThan(10);
    expect(smoothed[4]).toBeLessThan(20);
    expect(smoothed[4]).toBeGreaterThan(smoothed[3] as number);
  });

  it('keeps gaps as gaps without moving the average', () => {
    const out = emaSmooth([[1, 2], [2, null], [3, Number.NaN], [4, 2]], 0.8);
    expect(out[1]).toEqual([2, null]);
    expect(out[2]).toEqual([3, null]);
    expect(out[3]?.[1]).toBeCloseTo(2, 12);
  });

  it('leaves a constant curve exactly constant', () => {
    const third = 1 / 12;
    expect(emaSmooth([[0, third], [1, third], [2, null], [3, third]], 0.6)).toEqual([[0, third], [1, third], [2, null], [3, third]]);
  });

  it('refuses a weight outside [0, 1)', () => {
    expect(() => emaSmooth([[1, 1]], 1)).toThrow(/\[0, 1\)/);
    expect(() => emaSmooth([[1, 1]], -0.1)).toThrow(/smoothing weight/);
  });
});
