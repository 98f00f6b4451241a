/**
 * Trajectories for the engine tests: multi-turn, with chained (full-history) and unchained turns,
 * forced tokens, and groups, built from explicit ids so every expected datum can be written out.
 */
import type { Trajectory, Turn } from '../../src/core/types.js';

/** A turn: `prompt` ids then `action` ids with their log-probs; `forced` marks action tokens that were not choices. */
export function turn(index: number, prompt: number[], action: number[], logprobs: number[], forced: number[] = []): Turn {
  return {
    index,
    observationText: `obs ${index}`,
    promptTokens: Int32Array.from(prompt),
    actionText: `act ${index}`,
    actionTokens: Int32Array.from(action),
    actionLogprobs: Float32Array.from(logprobs),
    actionLossMask: Uint8Array.from(action.map((_, j) => (forced.includes(j) ? 0 : 1))),
    constraint: null,
    policyVersion: 0,
    reward: 0,
    invalidAction: false,
  };
}

/** A finished trajectory of `turns` in group `groupId` with terminal `reward`. */
export function trajectory(id: string, groupId: string, reward: number, turns: Turn[]): Trajectory {
  return {
    trajectoryId: id,
    taskId: 'babyai_1',
    groupId,
    step: 0,
    turns,
    reward,
    outcome: reward > 0 ? 'success' : 'failure',
    horizon: 5,
    finalObservationText: 'done',
  };
}

/**
 * Four trajectories in two groups: `a1` chains two turns (its second prompt starts with the whole
 * first turn), `a2` does not (a history window), `b1` has a forced token, `b2` one short turn.
 */
export function sampleTrajectories(): Trajectory[] {
  return [
    trajectory('a1', 'g1', 1, [turn(0, [1, 5, 6], [7, 8], [-0.5, -0.25]), turn(1, [1, 5, 6, 7, 8, 9], [10], [-1])]),
    trajectory('a2', 'g1', 0, [turn(0, [1, 5, 6], [8, 8], [-1.5, -0.5]), turn(1, [1, 9], [11, 12], [-2, -0.125])]),
    trajectory('b1', 'g2', 1, [turn(0, [1, 4], [7, 3, 8], [-0.75, 0, -1.25], [1])]),
    trajectory('b2', 'g2', 0, [turn(0, [1, 4], [9], [-3])]),
  ];
}
