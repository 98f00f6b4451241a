import { describe, expect, it } from 'vitest';
import { forLogScale } from '../../../src/ui/format/log-scale.js';

describe('forLogScale', () => {
  it('turns zeros and negatives into gaps and counts them', () => {
    expect(forLogScale([[1, 0], [2, 0.5], [3, -2], [4, 1e-8], [5, null]])).toEqual({ points: [[1, null], [2, 0.5], [3, null], [4, 1e-8], [5, null]], leftOut: 2 });
  });

  it('leaves a positive curve as it is', () => {
    expect(forLogScale([[1, 3], [2, 30]])).toEqual({ points: [[1, 3], [2, 30]], leftOut: 0 });
  });
});
