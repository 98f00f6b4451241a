import { describe, expect, it } from 'vitest';
import { trajectoryDatums } from '../../src/engines/engine-datums.js';
import { sampleTrajectories } from './fixtures.js';

const list = (a: ArrayLike<number>): number[] => Array.from(a);

describe('trajectoryDatums', () => {
  const located = trajectoryDatums(sampleTrajectories());
  const byTrajectory = (t: number) => located.filter((l) => l.trajectoryIndex[0] === t);

  it('makes one datum per training sequence, chaining full-history turns as the local packer does', () => {
    // a1: two turns chained into one sequence; a2: two unchained turns; b1, b2: one each.
    expect(byTrajectory(0)).toHaveLength(1);
    expect(byTrajectory(1)).toHaveLength(2);
    expect(located).toHaveLength(5);
  });

  it('shifts the sequence: the input drops the last id, the target drops the first', () => {
    const [a1] = byTrajectory(0);
    // prompt [1 5 6] + [7 8], then turn 1: prompt [1 5 6 7 8 9] + [10] → sequence 1 5 6 7 8 9 10.
    expect(list(a1?.datum.inputTokens ?? [])).toEqual([1, 5, 6, 7, 8, 9]);
    expect(list(a1?.datum.targetTokens ?? [])).toEqual([5, 6, 7, 8, 9, 10]);
  });

  it('weights only the sampled tokens, with their behaviour log-probs at the same positions', () => {
    const [a1] = byTrajectory(0);
    // Targets 7, 8 (turn 0) and 10 (turn 1) train; 5, 6 (prompt) and 9 (observation) do not.
    expect(list(a1?.datum.weights ?? [])).toEqual([0, 0, 1, 1, 0, 1]);
    expect(list(a1?.datum.samplingLogprobs ?? [])).toEqual([0, 0, -0.5, -0.25, 0, -1]);
    expect(list(a1?.tokenIndex ?? [])).toEqual([0, 1, 2]);
    expect(list(a1?.positions ?? [])).toEqual([2, 3, 5]);
  });

  it('gives a forced token weight 0 but keeps its slot in the token layout', () => {
    const [b1] = byTrajectory(2);
    expect(list(b1?.datum.weights ?? [])).toEqual([0, 1, 0, 1]);
    expect(list(b1?.lossMask ?? [])).toEqual([1, 0, 1]);
    expect(list(b1?.tokenIndex ?? [])).toEqual([0, 1, 2]);
  });

  it('numbers the action tokens of unchained turns on from the earlier turns', () => {
    const second = byTrajectory(1).find((l) => l.datum.inputTokens[1] === 9);
    expect(list(second?.datum.inputTokens ?? [])).toEqual([1, 9, 11]);
    expect(list(second?.tokenIndex ?? [])).toEqual([2, 3]);
  });
});
