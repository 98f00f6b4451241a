import { describe, expect, it } from 'vitest';
import { CheckpointError } from '../../../src/core/errors.js';
import type { Trajectory, Turn } from '../../../src/core/types.js';
import { admissible, restoreStaleness, splitByStaleness, stalenessMetrics, trajectoryStaleness } from '../../../src/runtime/async/staleness.js';

/** A turn of `trained` trained tokens (plus one forced token) made by `version`. */
const turn = (version: number, trained: number): Turn => ({
  index: 0,
  observationText: '',
  promptTokens: new Int32Array(0),
  actionText: '',
  actionTokens: new Int32Array(trained + 1),
  actionLogprobs: new Float32Array(trained + 1),
  actionLossMask: Uint8Array.from({ length: trained + 1 }, (_, i) => (i < trained ? 1 : 0)),
  constraint: null,
  policyVersion: version,
  reward: 0,
  invalidAction: false,
});
const trajectory = (id: string, turns: Turn[]): Trajectory => ({ trajectoryId: id, taskId: 't_1', groupId: 'g', step: 5, turns, reward: 0, outcome: 'failure', horizon: 5, finalObservationText: '' });

describe('staleness bound', () => {
  it('admits an episode of batch b only while the samplers hold version ≥ b − η', () => {
    expect(admissible(5, 5, 0)).toBe(true);
    expect(admissible(6, 5, 0)).toBe(false);
    expect(admissible(7, 5, 2)).toBe(true);
    expect(admissible(8, 5, 2)).toBe(false);
  });

  it('measures staleness on trained tokens only, and builds the histogram by hand', () => {
    // Learner at version 5. a: 3 tokens of v5, 2 of v4 → max 1. b: 1 token of v3, and a v1 turn whose only token is forced (not trained) → max 2.
    const a = trajectory('a', [turn(5, 3), turn(4, 2)]);
    const b = trajectory('b', [turn(3, 1), turn(1, 0)]);
    expect(trajectoryStaleness(a, 5).max).toBe(1);
    expect(trajectoryStaleness(b, 5).max).toBe(2);
    expect(stalenessMetrics([a, b], 5, 2)).toEqual({
      'async/staleness/0': 3,
      'async/staleness/1': 2,
      'async/staleness/2': 1,
      'async/stalenessMax': 2,
      'async/stalenessMean': (0 * 3 + 1 * 2 + 2 * 1) / 6,
    });
    const { kept, rejected } = splitByStaleness([a, b], 5, 1);
    expect(kept.map((t) => t.trajectoryId)).toEqual(['a']);
    expect(rejected.map((t) => t.trajectoryId)).toEqual(['b']);
    // A token from a version newer than the learner is corrupt bookkeeping: rejected too.
    expect(splitByStaleness([trajectory('c', [turn(6, 1)])], 5, 4).rejected).toHaveLength(1);
  });

  it('restores the bound from a checkpoint, fresh for a sync checkpoint, and rejects bad state naming the field', () => {
    expect(restoreStaleness(undefined, 4, 2, 'ck')).toEqual({ maxStaleness: 2, learnerVersion: 4, rejectedStale: 0 });
    expect(restoreStaleness({ maxStaleness: 1, learnerVersion: 4, rejectedStale: 3 }, 4, 2, 'ck')).toEqual({ maxStaleness: 2, learnerVersion: 4, rejectedStale: 3 });
    expect(() => restoreStaleness({ maxStaleness: 1, learnerVersion: 4, rejectedStale: -1 }, 4, 2, 'ck')).toThrow(/state\.async\.rejectedStale/);
    expect(() => restoreStaleness({ maxStaleness: 1, learnerVersion: 3, rejectedStale: 0 }, 4, 2, 'ck')).toThrow(CheckpointError);
  });
});
