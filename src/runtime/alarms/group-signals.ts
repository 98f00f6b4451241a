/**
 * Per-step signals of the GRPO/RLOO groups (the samples of one task in one step), the inputs of
 * the reward-variance and echo-trap alarms: how many groups have zero score variance, how many are
 * solved outright, their mean within-group spread, and how alike their samples act. Pure.
 */
import { type RewardMode, trajectoryScore } from '../../algorithms/reward-modes.js';
import type { Trajectory } from '../../core/types.js';
import { actionKeyOf } from '../behaviour-metrics.js';

/** Group-level signals of one step. */
export interface GroupSignals {
  /** Groups with at least two samples (the others say nothing about spread). */
  readonly groups: number;
  /** Share of those groups whose scores are all equal. */
  readonly zeroVarianceShare: number;
  /** Share of those groups in which every sample succeeded. */
  readonly solvedShare: number;
  /** Mean over those groups of the population std of their scores. */
  readonly meanRewardStd: number;
  /** Mean over those groups of the mean pairwise action-sequence similarity in [0, 1]. */
  readonly meanSimilarity: number;
}

/**
 * Edit distance between two sequences of action keys (insert, delete, substitute: cost 1).
 * @example levenshtein(['turn left', 'move forward'], ['turn left']) // 1
 */
export function levenshtein(a: readonly string[], b: readonly string[]): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitute = (previous[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min(substitute, (previous[j] as number) + 1, (current[j - 1] as number) + 1));
    }
    previous = current;
  }
  return previous[b.length] as number;
}

/**
 * Similarity of two episodes' action sequences: 1 − edit distance / the longer length (two empty
 * sequences: 1).
 * @example actionSimilarity(['a', 'b', 'c'], ['a', 'b', 'd']) // 2 / 3
 */
export function actionSimilarity(a: readonly string[], b: readonly string[]): number {
  const longer = Math.max(a.length, b.length);
  return longer === 0 ? 1 : 1 - levenshtein(a, b) / longer;
}

/**
 * The signals of a step's trajectories, scored under `mode`; a step with no group of two or more
 * samples gives zeros (no groups to judge).
 * @example groupSignals(trajectories, 'outcome').zeroVarianceShare // 0.75
 */
export function groupSignals(trajectories: readonly Trajectory[], mode: RewardMode): GroupSignals {
  const byGroup = new Map<string, Trajectory[]>();
  for (const t of trajectories) byGroup.set(t.groupId, [...(byGroup.get(t.groupId) ?? []), t]);
  let groups = 0;
  let zeroVariance = 0;
  let solved = 0;
  let stdSum = 0;
  let similaritySum = 0;
  for (const members of byGroup.values()) {
    if (members.length < 2) continue;
    groups++;
    const scores = members.map((t) => trajectoryScore(t, mode));
    const mean = scores.reduce((a, b) => a + b, 0) / scores.length;
    if (scores.every((s) => s === scores[0])) zeroVariance++;
    if (members.every((t) => t.outcome === 'success')) solved++;
    stdSum += Math.sqrt(scores.reduce((a, s) => a + (s - mean) ** 2, 0) / scores.length);
    const actions = members.map((t) => t.turns.map(actionKeyOf));
    let pairs = 0;
    let similarity = 0;
    for (let i = 0; i < actions.length; i++) {
      for (let j = i + 1; j < actions.length; j++) {
        similarity += actionSimilarity(actions[i] as string[], actions[j] as string[]);
        pairs++;
      }
    }
    similaritySum += similarity / pairs;
  }
  if (groups === 0) return { groups: 0, zeroVarianceShare: 0, solvedShare: 0, meanRewardStd: 0, meanSimilarity: 0 };
  return { groups, zeroVarianceShare: zeroVariance / groups, solvedShare: solved / groups, meanRewardStd: stdSum / groups, meanSimilarity: similaritySum / groups };
}
