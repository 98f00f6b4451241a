import { describe, expect, it } from 'vitest';
import type { Outcome, Trajectory, Turn } from '../../src/core/types.js';
import { rolloutMetrics, summarizeEpisodes } from '../../src/runtime/rollout-metrics.js';

/** A turn; `entropies` defaults to 0.5 nats per token (forced ones 0, as the sampler records them). */
function turn(index: number, actionText: string, logprobs: number[], mask: number[], invalidAction = false, entropies?: number[]): Turn {
  return {
    index,
    observationText: '',
    promptTokens: new Int32Array(0),
    actionText,
    actionTokens: new Int32Array(logprobs.length),
    actionLogprobs: Float32Array.from(logprobs),
    actionLossMask: Uint8Array.from(mask),
    constraint: { allowedOffsets: new Int32Array(logprobs.length + 1), allowedIds: new Int32Array(0) },
    policyVersion: 0,
    reward: 0,
    invalidAction,
    entropies: Float32Array.from(entropies ?? mask.map((m) => (m ? 0.5 : 0))),
  };
}

function episode(id: string, outcome: Outcome, reward: number, turns: Turn[], groupId = 'g'): Trajectory {
  return { trajectoryId: id, taskId: 'babyai_0', groupId, step: 0, turns, reward, outcome, horizon: 4, finalObservationText: '' };
}

describe('behaviour metrics', () => {
  // Episode 1 (success, 3 turns): "go to red ball" twice (second is a repeat, case/space-insensitive).
  // Episode 2 (truncated, 4 turns): "turn left" x3 (2 repeats) + "toggle" (invalid).
  const episodes = [
    episode('e1', 'success', 1, [turn(0, 'go to red ball', [-0.5, -0.25], [1, 1]), turn(1, 'turn left', [-1, -3], [1, 0]), turn(2, ' Go to red ball', [-0.25], [1])]),
    episode('e2', 'truncated', 0, [turn(0, 'turn left', [-2], [1]), turn(1, 'turn left', [-2], [1]), turn(2, 'turn left', [-2], [1]), turn(3, 'toggle', [-1], [1], true)]),
  ];

  it('computes repeated-action, invalid, entropy-estimate, reward-std and success/failure turn means by hand', () => {
    const s = summarizeEpisodes(episodes);
    expect(s.repeatedActionRate).toBeCloseTo(3 / 7, 12);
    expect(s.invalidActionRate).toBeCloseTo(1 / 7, 12);
    // -log p per turn over free tokens: 0.75, 1 (masked -3 ignored), 0.25, 2, 2, 2, 1 -> 9 / 7
    expect(s.actionSurprisal).toBeCloseTo(9 / 7, 6);
    expect(s.rewardStd).toBeCloseTo(0.5, 12);
    expect(s.meanTurnsSuccess).toBe(3);
    expect(s.meanTurnsFailed).toBe(4);
    expect(s.truncationRate).toBe(0.5);
  });

  it('gives NaN turn means for an absent outcome class and zeros for no episodes', () => {
    const m = rolloutMetrics([episodes[0] as Trajectory], 1);
    expect(m['rollout/meanTurnsSuccess']).toBe(3);
    expect(m['rollout/meanTurnsFailed']).toBeNaN();
    expect(m['rollout/rewardStd']).toBe(0);
    const empty = summarizeEpisodes([]);
    expect(empty.repeatedActionRate).toBe(0);
    expect(empty.actionSurprisal).toBe(0);
    expect(empty.tokenEntropy).toBeNaN();
  });

  it('averages the recorded token entropies over freely chosen tokens, split by constrained / free decoding', () => {
    const free = (t: Turn): Turn => ({ ...t, constraint: null });
    const batch = [
      // e1: constrained turns; token entropies 1.2, 0.4 (free) and a forced token (0, left out).
      episode('e1', 'success', 1, [turn(0, 'a', [-1, -1], [1, 1], false, [1.2, 0.4]), turn(1, 'b', [-1, 0], [1, 0], false, [0.8, 0])]),
      // e2: one free-generation turn with two tokens of entropy 3 and 2.
      episode('e2', 'failure', 0, [free(turn(0, 'c', [-1, -1], [1, 1], false, [3, 2]))]),
    ];
    const s = summarizeEpisodes(batch);
    expect(s.tokenEntropyConstrained).toBeCloseTo((1.2 + 0.4 + 0.8) / 3, 6);
    expect(s.tokenEntropyFull).toBeCloseTo(2.5, 6);
    expect(s.tokenEntropy).toBeCloseTo((1.2 + 0.4 + 0.8 + 3 + 2) / 5, 6);
    // per turn: 1.6, 0.8, 5 -> chain-rule action entropy
    expect(s.actionEntropy).toBeCloseTo((1.6 + 0.8 + 5) / 3, 6);
    // A turn without recorded entropies (a text policy) counts for none of them.
    const { entropies: _, ...bare } = turn(0, 'x', [-1], [1]);
    expect(summarizeEpisodes([episode('e3', 'failure', 0, [bare])]).tokenEntropy).toBeNaN();
  });

  it('breaks behaviour down by turn index and gives the distribution of episode lengths', () => {
    const m = rolloutMetrics(episodes, 1);
    // Turn 0: both episodes; turn 1: both (e2's "turn left" repeats); turn 2: both (both repeat); turn 3: e2 only (invalid).
    expect(m['byTurn/reached/0']).toBe(1);
    expect(m['byTurn/reached/3']).toBe(0.5);
    expect(m['byTurn/reached/4']).toBeUndefined();
    expect([0, 1, 2, 3].map((k) => m[`byTurn/repeatedActionRate/${k}`])).toEqual([0, 0.5, 1, 0]);
    expect([0, 1, 2, 3].map((k) => m[`byTurn/invalidActionRate/${k}`])).toEqual([0, 0, 0, 1]);
    // Free tokens all carry 0.5 nats in this batch.
    expect(m['byTurn/tokenEntropy/0']).toBeCloseTo(0.5, 6);
    expect([0, 1, 2, 3, 4].map((n) => m[`episodeLength/${n}`])).toEqual([0, 0, 0, 0.5, 0.5]);
  });

  it('reports zero-variance, solved and similar groups (scores per reward.mode)', () => {
    const acting = (id: string, outcome: Outcome, reward: number, actions: string[], group: string) =>
      episode(id, outcome, reward, actions.map((a, k) => turn(k, a, [-1], [1])), group);
    const batch = [
      acting('a1', 'success', 1, ['x', 'y'], 'A'),
      acting('a2', 'success', 1, ['x', 'y'], 'A'), // solved, identical: similarity 1
      acting('b1', 'failure', 0, ['x', 'y', 'z'], 'B'),
      acting('b2', 'success', 1, ['x', 'q', 'z'], 'B'), // spread 0.5, similarity 1 - 1/3
      acting('c1', 'failure', 0, ['p'], 'C'),
      acting('c2', 'failure', 0, [], 'C'), // all failed: zero variance, not solved; similarity 0
      acting('d1', 'failure', 0, ['p'], 'D'), // a group of one: not counted
    ];
    const m = rolloutMetrics(batch, 1);
    expect(m['rollout/zeroVarianceGroups']).toBeCloseTo(2 / 3, 12);
    expect(m['rollout/solvedGroups']).toBeCloseTo(1 / 3, 12);
    expect(m['rollout/groupRewardStd']).toBeCloseTo(0.5 / 3, 12);
    expect(m['rollout/groupSimilarity']).toBeCloseTo((1 + 2 / 3 + 0) / 3, 12);
    expect(rolloutMetrics([batch[6] as Trajectory], 1)['rollout/groupSimilarity']).toBeNaN();
  });
});
