/**
 * Critic-free estimators with a group baseline: GRPO (and Dr. GRPO) and RLOO.
 *
 * `credit: 'trajectory'` (default, verl): a trajectory's score is the sum of its token rewards
 * (terminal reward, turn rewards, any per-token KL penalty); it is compared with the other samples
 * of its group and the one advantage is broadcast to every agent token of the trajectory.
 *
 * `credit: 'turn'`: per turn k, the trajectory's return-to-go `G_i(k)` (sum of its rewards from
 * turn k on) is compared with the group's `G_j(k)` at the same turn index, where a sample that
 * ended before turn k counts `G_j(k) = 0`. Why zero-padding: normalising turn rewards per turn
 * index over the samples still running, then summing them to the trajectory's own end (MT-GRPO
 * style), subtracts one baseline term per remaining turn of the trajectory itself — a baseline
 * that depends on the trajectory's own stopping turn, hence on its actions, which biases the
 * gradient by the accumulated intermediate-reward mean (verl issue #7244). Here the baseline at
 * turn k is a function of turn index k and the other samples only. With outcome rewards alone,
 * `G_i(0)` is the trajectory's score, so turn 0 gets the trajectory-level advantage.
 */
import { InvalidArgumentError } from '../core/errors.js';
import {
  type AdvantageInput,
  type AdvantageOutput,
  broadcastRows,
  checkAdvantageInput,
  type CheckedInput,
  type GrpoOptions,
  groupIndex,
  type RlooOptions,
  rowScores,
  type TurnSpan,
  turnSpans,
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
  const checked = checkAdvantageInput(input);
  const { rows, seqLen, rewards, mask } = checked;
  const { options } = input;
  if (!(options.epsilon >= 0 && Number.isFinite(options.epsilon))) {
    throw InvalidArgumentError.format('options.epsilon', `expected a finite number ≥ 0, got ${options.epsilon}`);
  }
  if (options.credit === 'turn') {
    return turnCredit(input, checked, (own, group) => {
      if (group.length < 2) return 0;
      let min = Number.POSITIVE_INFINITY;
      let max = Number.NEGATIVE_INFINITY;
      let sum = 0;
      for (const g of group) {
        min = Math.min(min, g);
        max = Math.max(max, g);
        sum += g;
      }
      if (min === max) return 0;
      const mean = sum / group.length;
      if (!options.normalizeStd) return own - mean;
      let squares = 0;
      for (const g of group) squares += (g - mean) ** 2;
      return (own - mean) / (Math.sqrt(squares / (group.length - 1)) + options.epsilon);
    });
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
  const checked = checkAdvantageInput(input);
  const { rows, seqLen, rewards, mask } = checked;
  if (input.options.credit === 'turn') {
    return turnCredit(input, checked, (own, group) => {
      if (group.length < 2) return 0;
      let sum = 0;
      for (const g of group) sum += g;
      return own - (sum - own) / (group.length - 1);
    });
  }
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

/**
 * Turn-level credit shared by GRPO and RLOO (see the module comment): for every turn k of every
 * row, `advantageOf(G_i(k), [G_j(k) for j in the group, i included])` on that turn's agent tokens.
 * Shape: rewards, turnIds [B·T] → advantages [B·T]; float64 sums.
 */
function turnCredit(input: AdvantageInput, checked: CheckedInput, advantageOf: (own: number, group: readonly number[]) => number): AdvantageOutput {
  const { rows, seqLen, rewards, mask } = checked;
  const turnIds = input.turnIds;
  if (turnIds === undefined) throw InvalidArgumentError.format('turnIds', "credit 'turn' needs the turn index of every token (got none)");
  const spans: TurnSpan[][] = [];
  for (let b = 0; b < rows; b++) spans.push(turnSpans(b * seqLen, seqLen, mask, turnIds, rewards));
  // Return-to-go of row b from turn index k: its rewards in turns with id >= k (0 once it has ended).
  const returnToGo = (b: number, k: number): number => {
    let sum = 0;
    for (const span of spans[b] as TurnSpan[]) if (span.id >= k) sum += span.reward;
    return sum;
  };
  const { groupOf, groups } = groupIndex(input.groupIds);
  const members: number[][] = Array.from({ length: groups }, () => []);
  for (let b = 0; b < rows; b++) members[groupOf[b] as number]?.push(b);
  const advantages = new Float32Array(rows * seqLen);
  for (let b = 0; b < rows; b++) {
    const group = members[groupOf[b] as number] as number[];
    for (const span of spans[b] as TurnSpan[]) {
      const value = advantageOf(returnToGo(b, span.id), group.map((j) => returnToGo(j, span.id)));
      for (let i = span.first; i <= span.last; i++) if (mask[i] === 1) advantages[i] = value;
    }
  }
  return { advantages, returns: advantages.slice() };
}
