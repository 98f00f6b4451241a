/**
 * Critic-free, outcome-level estimators with a group baseline: GRPO (and Dr. GRPO) and RLOO. Both
 * score a trajectory by the sum of its token rewards (the terminal reward, plus any per-token KL
 * penalty), compare it with the other samples of its group, and broadcast the one advantage to
 * every agent token of the trajectory (no per-turn credit, as in verl).
 */
import { InvalidArgumentError } from '../core/errors.js';
import {
  type AdvantageInput,
  type AdvantageOutput,
  broadcastRows,
  checkAdvantageInput,
  type GrpoOptions,
  groupIndex,
  type RlooOptions,
  rowScores,
} from './advantage-input.js';

/**
 * GRPO: Shao et al. 2024, DeepSeekMath, arXiv:2402.03300 (verl `compute_grpo_outcome_advantage`).
 * Shape: rewards [B·T] + groupIds [B] → advantages [B·T] (one value per row, on its agent tokens).
 *
 * Each row's score minus its group's mean, divided by the group's unbiased std plus epsilon (or
 * not divided: Dr. GRPO, Liu et al. 2025, arXiv:2503.20783, which removes the difficulty bias of
 * low-variance groups). A singleton group gets 0 (no baseline, so no signal; verl uses mean 0,
 * std 1 there, turning a lone reward into its own advantage). A group of equal scores gets exactly
 * 0. Sums in float64, rounded once.
 * @example
 * grpoAdvantages({ rewards: Float32Array.of(1, 0, 0, 0), groupIds: ['a', 'a', 'b', 'b'],
 *   options: { name: 'grpo', normalizeStd: true, epsilon: 1e-6 } }).advantages;
 * // ≈ [0.7071, -0.7071, 0, 0]   (group a: mean 0.5, unbiased std √0.5)
 */
export function grpoAdvantages(input: AdvantageInput<GrpoOptions>): AdvantageOutput {
  const { rows, seqLen, rewards, mask } = checkAdvantageInput(input);
  const { options } = input;
  if (!(options.epsilon >= 0 && Number.isFinite(options.epsilon))) {
    throw InvalidArgumentError.format('options.epsilon', `expected a finite number ≥ 0, got ${options.epsilon}`);
  }
  const scores = rowScores(rewards, rows, seqLen);
  const { groupOf, groups } = groupIndex(input.groupIds);
  const count = new Float64Array(groups);
  const sum = new Float64Array(groups);
  const min = new Float64Array(groups).fill(Number.POSITIVE_INFINITY);
  const max = new Float64Array(groups).fill(Number.NEGATIVE_INFINITY);
  for (let i = 0; i < rows; i++) {
    const g = groupOf[i];
    count[g] += 1;
    sum[g] += scores[i];
    min[g] = Math.min(min[g], scores[i]);
    max[g] = Math.max(max[g], scores[i]);
  }
  // Two-pass variance: numerically safer than the sum of squares for near-equal scores.
  const squares = new Float64Array(groups);
  for (let i = 0; i < rows; i++) squares[groupOf[i]] += (scores[i] - sum[groupOf[i]] / count[groupOf[i]]) ** 2;
  const perRow = new Float64Array(rows);
  for (let i = 0; i < rows; i++) {
    const g = groupOf[i];
    // Equal scores are tested exactly: a float mean of equal values can miss them by an ulp.
    if (count[g] < 2 || min[g] === max[g]) continue;
    const centred = scores[i] - sum[g] / count[g];
    perRow[i] = options.normalizeStd ? centred / (Math.sqrt(squares[g] / (count[g] - 1)) + options.epsilon) : centred;
  }
  const advantages = broadcastRows(perRow, mask, rows, seqLen);
  return { advantages, returns: advantages.slice() };
}

/**
 * RLOO: Ahmadian et al. 2024, "Back to Basics", arXiv:2402.14740 (after Kool et al. 2019).
 * Shape: rewards [B·T] + groupIds [B] → advantages [B·T] (one value per row, on its agent tokens).
 *
 * Leave-one-out baseline: each row's score minus the mean score of the OTHER rows of its group,
 * `A_i = s_i − (Σ_g s − s_i)/(n − 1)` (= verl's `s_i·n/(n−1) − mean·n/(n−1)`). A singleton group
 * has no other sample and gets 0.
 * @example
 * rlooAdvantages({ rewards: Float32Array.of(1, 0, 0), groupIds: ['a', 'a', 'a'], options: { name: 'rloo' } }).advantages;
 * // [1, -0.5, -0.5]
 */
export function rlooAdvantages(input: AdvantageInput<RlooOptions>): AdvantageOutput {
  const { rows, seqLen, rewards, mask } = checkAdvantageInput(input);
  const scores = rowScores(rewards, rows, seqLen);
  const { groupOf, groups } = groupIndex(input.groupIds);
  const count = new Float64Array(groups);
  const sum = new Float64Array(groups);
  for (let i = 0; i < rows; i++) {
    count[groupOf[i]] += 1;
    sum[groupOf[i]] += scores[i];
  }
  const perRow = new Float64Array(rows);
  for (let i = 0; i < rows; i++) {
    const g = groupOf[i];
    if (count[g] < 2) continue;
    perRow[i] = scores[i] - (sum[g] - scores[i]) / (count[g] - 1);
  }
  const advantages = broadcastRows(perRow, mask, rows, seqLen);
  return { advantages, returns: advantages.slice() };
}
