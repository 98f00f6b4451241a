/**
 * Per-turn rewards end to end through the token layout and every estimator, with numbers worked
 * by hand. One group of three trajectories (slots = action tokens, m = loss mask):
 *
 *   A: turn 0 [m1 m0] reward 0.5 · turn 1 [m0] reward 0.25 (all forced) · turn 2 [m1 m1] reward 1 (success)
 *      slots 0 1 | 2 | 3 4      → sum mode: 0.75 on slot 0 (turn 1's reward moves back), 1 on slot 4
 *   B: turn 0 [m1] reward 0 (failure)                                  → nothing placed
 *   C: turn 0 [m1] reward 0.5 · turn 1 [m1] reward 0 (truncated)       → 0.5 on slot 0
 *
 * Scores under `sum`: A 1.75, B 0, C 0.5; under `outcome` (last reward): A 1, B 0, C 0.
 */
import { describe, expect, it } from 'vitest';
import { computeAdvantages } from '../../src/algorithms/advantages.js';
import type { EstimatorOptions } from '../../src/algorithms/advantage-input.js';
import { trajectoryScore } from '../../src/algorithms/reward-modes.js';
import type { Outcome, Trajectory, Turn } from '../../src/core/types.js';
import { tokenLayout } from '../../src/learner/token-layout.js';

function turn(index: number, mask: number[], reward: number, shapedReward?: number): Turn {
  return {
    index,
    observationText: `obs ${index}`,
    promptTokens: Int32Array.of(1, 2),
    actionText: `act ${index}`,
    actionTokens: Int32Array.from(mask, (_, j) => 10 + j),
    actionLogprobs: Float32Array.from(mask, (m) => (m ? -0.5 : 0)),
    actionLossMask: Uint8Array.from(mask),
    constraint: null,
    policyVersion: 0,
    reward,
    invalidAction: false,
    ...(shapedReward === undefined ? {} : { shapedReward }),
  };
}

function trajectory(id: string, turns: Turn[], outcome: Outcome): Trajectory {
  return { trajectoryId: id, taskId: 'babyai_1', groupId: 'g', step: 0, turns, reward: turns.at(-1)?.reward ?? 0, outcome, horizon: 3, finalObservationText: '' };
}

const batch = [
  trajectory('A', [turn(0, [1, 0], 0.5, -0.1), turn(1, [0], 0.25, 0.3), turn(2, [1, 1], 1, 0.2)], 'success'),
  trajectory('B', [turn(0, [1], 0, 0)], 'failure'),
  trajectory('C', [turn(0, [1], 0.5, 0), turn(1, [1], 0, -0.1)], 'truncated'),
];
const T = 5;
/** Row b's values on its trained slots, in slot order. */
const trained = (x: Float32Array, b: number, mask: Float32Array): number[] => {
  const out: number[] = [];
  for (let t = 0; t < T; t++) if (mask[b * T + t] === 1) out.push(x[b * T + t] as number);
  return out;
};

function advantages(options: EstimatorOptions, mode: 'outcome' | 'sum' = 'sum', values?: Float32Array) {
  const layout = tokenLayout(batch, mode);
  const out = computeAdvantages({ rewards: layout.rewards, mask: layout.mask, seqLen: layout.seqLen, groupIds: layout.groupIds, turnIds: layout.turnIds, ...(values ? { values } : {}), options });
  return { layout, perRow: [0, 1, 2].map((b) => trained(out.advantages, b, layout.mask)), returns: [0, 1, 2].map((b) => trained(out.returns, b, layout.mask)) };
}

const close = (got: number[][], want: number[][]) => {
  expect(got.map((r) => r.length)).toEqual(want.map((r) => r.length));
  got.forEach((row, b) => {
    row.forEach((x, j) => {
      expect(x, `row ${b} token ${j}`).toBeCloseTo(want[b]?.[j] as number, 5);
    });
  });
};

describe('the token layout places each turn reward on that turn’s last trained token', () => {
  it('sum: turn rewards on each turn’s last trained token; a fully forced turn’s reward moves back', () => {
    const layout = tokenLayout(batch, 'sum');
    expect(layout.seqLen).toBe(T);
    expect(Array.from(layout.rewards)).toEqual([0.75, 0, 0, 0, 1, /* B */ 0, 0, 0, 0, 0, /* C */ 0.5, 0, 0, 0, 0]);
    expect(Array.from(layout.turnIds.slice(0, 5))).toEqual([0, 0, 1, 2, 2]);
    expect(layout.unplacedRewards).toBe(0);
    expect(batch.map((t) => trajectoryScore(t, 'sum'))).toEqual([1.75, 0, 0.5]);
  });

  it('outcome (the default): only the last reward, on the last trained token, as before', () => {
    const layout = tokenLayout(batch);
    expect(Array.from(layout.rewards)).toEqual([0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
  });

  it('outcome+shaped: the outcome plus every turn’s shaped reward', () => {
    const layout = tokenLayout(batch, 'outcome+shaped');
    // A: slot 0 = -0.1 + 0.3 (turn 1's, moved back); slot 4 = 0.2 + outcome 1. C: slot 1 = -0.1.
    close([Array.from(layout.rewards)], [[0.2, 0, 0, 0, 1.2, 0, 0, 0, 0, 0, 0, -0.1, 0, 0, 0]]);
    close([batch.map((t) => trajectoryScore(t, 'outcome+shaped'))], [[1.4, 0, -0.1]]);
  });

  it('counts a reward with no trained token at or before it as unplaced', () => {
    const forcedFirst = trajectory('D', [turn(0, [0], 0.5), turn(1, [1], 0)], 'failure');
    expect(tokenLayout([forcedFirst], 'sum').unplacedRewards).toBe(1);
    expect(tokenLayout([forcedFirst], 'outcome').unplacedRewards).toBe(0); // outcome 0: nothing to place
  });
});

describe('a per-turn reward reaches the right tokens with every estimator (hand-worked)', () => {
  it('GRPO per trajectory: the summed score, group-normalised, on every trained token', () => {
    // scores 1.75, 0, 0.5: mean 0.75, unbiased std √0.8125 = 0.901388
    const a = 1 / 0.901388;
    close(advantages({ name: 'grpo', normalizeStd: true, epsilon: 1e-6 }).perRow, [[a, a, a], [-0.75 / 0.901388], [-0.25 / 0.901388, -0.25 / 0.901388]]);
    close(advantages({ name: 'grpo', normalizeStd: false, epsilon: 1e-6 }).perRow, [[1, 1, 1], [-0.75], [-0.25, -0.25]]);
  });

  it('GRPO per turn: return-to-go against the group’s at the same turn index (ended samples count 0)', () => {
    // G(0) = [1.75, 0, 0.5] mean 0.75; G(1) = [1, 0, 0] (A's turn 2 counts from turn 1 on); G(2) = [1, 0, 0].
    close(advantages({ name: 'grpo', normalizeStd: false, epsilon: 1e-6, credit: 'turn' }).perRow, [[1, 2 / 3, 2 / 3], [-0.75], [-0.25, -1 / 3]]);
    close(advantages({ name: 'grpo', normalizeStd: true, epsilon: 1e-6, credit: 'turn' }).perRow, [
      [1.1093992, 1.1546985, 1.1546985],
      [-0.8320494],
      [-0.2773498, -0.5773493],
    ]);
  });

  it('RLOO per trajectory and per turn: leave-one-out means of scores / returns-to-go', () => {
    close(advantages({ name: 'rloo' }).perRow, [[1.5, 1.5, 1.5], [-1.125], [-0.375, -0.375]]);
    close(advantages({ name: 'rloo', credit: 'turn' }).perRow, [[1.5, 1, 1], [-1.125], [-0.375, -0.5]]);
  });

  it('REINFORCE++: discounted returns per trained token, whitened over the batch', () => {
    const undiscounted = advantages({ name: 'reinforcePlusPlus', gamma: 1 });
    close(undiscounted.returns, [[1.75, 1, 1], [0], [0.5, 0]]);
    close(undiscounted.perRow, [[1.5351586, 0.4298444, 0.4298444], [-1.0439078], [-0.3070317, -1.0439078]]);
    // gamma per agent token: A slot 3 = 0.5 * 1, slot 0 = 0.75 + 0.5 * 0.5.
    close(advantages({ name: 'reinforcePlusPlus', gamma: 0.5 }).returns, [[1, 0.5, 1], [0], [0.5, 0]]);
  });

  it('REINFORCE: returns minus the running baseline (the first batch’s token-mean return, 4.25 / 6)', () => {
    const b = 4.25 / 6;
    close(advantages({ name: 'reinforce', gamma: 1, baselineMomentum: 0.9 }).perRow, [[1.75 - b, 1 - b, 1 - b], [-b], [0.5 - b, -b]]);
  });

  it('GAE per token and per turn: the turn reward enters the TD error of its own token / turn', () => {
    const values = new Float32Array(3 * T);
    values.set([0.5, 0, 0, 0.2, 0.4], 0); // row A (slots 1-2 masked)
    const token = advantages({ name: 'gae', gamma: 1, lambda: 0.5, level: 'token', whiten: false }, 'sum', values);
    // A: δ4 = 1 - 0.4 = 0.6; δ3 = 0.4 - 0.2 = 0.2, A3 = 0.2 + 0.5 * 0.6 = 0.5; δ0 = 0.75 + 0.2 - 0.5 = 0.45, A0 = 0.45 + 0.25 = 0.7
    close(token.perRow, [[0.7, 0.5, 0.6], [0], [0.5, 0]]);
    close(token.returns, [[1.2, 0.7, 1.0], [0], [0.5, 0]]);
    const turnLevel = advantages({ name: 'gae', gamma: 1, lambda: 0.5, level: 'turn', whiten: false }, 'sum', values);
    // A: turn 2 (V 0.2 at its first token): δ = 1 - 0.2 = 0.8; turn 0: δ = 0.75 + 0.2 - 0.5 = 0.45, A = 0.45 + 0.5 * 0.8 = 0.85
    close(turnLevel.perRow, [[0.85, 0.8, 0.8], [0], [0.5, 0]]);
  });

  it('outcome mode keeps AgentGym-RL’s credit: intermediate rewards never reach an estimator', () => {
    close(advantages({ name: 'rloo' }, 'outcome').perRow, [[1, 1, 1], [-0.5], [-0.5, -0.5]]);
    close(advantages({ name: 'reinforcePlusPlus', gamma: 1 }, 'outcome').returns, [[1, 1, 1], [0], [0, 0]]);
  });
});
