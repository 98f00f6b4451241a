import { describe, expect, it } from 'vitest';
import type { Outcome, Trajectory, Turn } from '../../src/core/types.js';
import { rolloutMetrics, summarizeEpisodes } from '../../src/runtime/rollout-metrics.js';

function turn(index: number, actionText: string, logprobs: number[], mask: number[], invalidAction = false): Turn {
  return {
    index,
    observationText: '',
    promptTokens: new Int32Array(0),
    actionText,
    actionTokens: new Int32Array(logprobs.length),
    actionLogprobs: Float32Array.from(logprobs),
    actionLossMask: Uint8Array.from(mask),
    constraint: null,
    policyVersion: 0,
    reward: 0,
    invalidAction,
  };
}

function episode(id: string, outcome: Outcome, reward: number, turns: Turn[]): Trajectory {
  return { trajectoryId: id, taskId: 'babyai_0', groupId: 'g', step: 0, turns, reward, outcome, horizon: 4, finalObservationText: '' };
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
    expect(s.turnEntropy).toBeCloseTo(9 / 7, 6);
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
    expect(empty.turnEntropy).toBe(0);
  });
});
