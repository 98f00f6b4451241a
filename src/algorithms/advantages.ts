/**
 * Advantage estimators: one typed registry, one shared signature (verl `core_algos`, STYLE §1).
 *
 * Every estimator takes one {@link AdvantageInput} and returns `{ advantages, returns }`. Options
 * are a discriminated union on `name`, so adding an estimator (gae, rloo, reinforcePlusPlus) means
 * adding an options type to {@link EstimatorOptions}, its name to {@link EstimatorName} and one
 * entry to {@link advantageEstimators}; no caller switches on the name.
 *
 * The outcome-reward estimators (GRPO, later RLOO) work per trajectory: the learner broadcasts the
 * trajectory's advantage to each of its trained action tokens (`src/models/pack.ts`).
 */
import { InvalidArgumentError } from '../core/errors.js';

/** Names of the estimators in {@link advantageEstimators}. */
export type EstimatorName = 'grpo';

/**
 * GRPO options. `normalizeStd: false` is Dr. GRPO (Liu et al. 2025, arXiv:2503.20783): the group
 * mean is subtracted but the result is not divided by the group std, which removes the
 * difficulty bias of low-variance groups.
 */
export interface GrpoOptions {
  readonly name: 'grpo';
  /** Divide by the group's unbiased std (GRPO) or not (Dr. GRPO). */
  readonly normalizeStd: boolean;
  /** Added to the std before dividing (verl: 1e-6). */
  readonly epsilon: number;
}

/** Estimator options, discriminated by `name`. */
export type EstimatorOptions = GrpoOptions;

/** The one input every estimator takes. */
export interface AdvantageInput<O extends EstimatorOptions = EstimatorOptions> {
  /** [numTrajectories] outcome reward of each trajectory. */
  readonly rewards: Float32Array;
  /** [numTrajectories] group of each trajectory (samples of the same task in the same step). */
  readonly groupIds: readonly string[];
  readonly options: O;
}

/** What every estimator returns. */
export interface AdvantageOutput {
  /** [numTrajectories] advantage of each trajectory. */
  readonly advantages: Float32Array;
  /** [numTrajectories] return targets (for critic-free estimators: equal to the advantages, as in verl). */
  readonly returns: Float32Array;
}

/** The shared estimator signature. */
export type AdvantageEstimator<O extends EstimatorOptions = EstimatorOptions> = (input: AdvantageInput<O>) => AdvantageOutput;

/** Checks the parts of the input every estimator relies on. */
function validateInput(input: AdvantageInput): void {
  if (input.groupIds.length !== input.rewards.length) {
    throw InvalidArgumentError.format(
      'groupIds',
      `expected one group id per reward (${input.rewards.length}), got ${input.groupIds.length}`,
    );
  }
  for (let i = 0; i < input.rewards.length; i++) {
    if (!Number.isFinite(input.rewards[i])) {
      throw InvalidArgumentError.format(`rewards[${i}]`, `expected a finite number, got ${input.rewards[i]}`);
    }
  }
}

/**
 * GRPO: Shao et al. 2024, DeepSeekMath, arXiv:2402.03300 (verl `compute_grpo_outcome_advantage`).
 * Shape: rewards [numTrajectories] + groupIds [numTrajectories] → advantages [numTrajectories].
 *
 * Group-relative advantage: each trajectory's reward minus its group's mean, divided by the
 * group's unbiased std plus epsilon (or not divided, for Dr. GRPO).
 *
 * A singleton group gets advantage 0 (it carries no baseline, so no signal). verl instead uses
 * mean 0 and std 1 there, which turns a lone reward into its own advantage; we prefer no signal to
 * an unbaselined one. A group with equal rewards gets exactly 0 for every member.
 * Sums run in float64 and are rounded once into the Float32Array.
 * @example
 * grpoAdvantages({ rewards: Float32Array.of(1, 0, 0, 0), groupIds: ['a', 'a', 'b', 'b'],
 *   options: { name: 'grpo', normalizeStd: true, epsilon: 1e-6 } }).advantages;
 * // ≈ [0.7071, -0.7071, 0, 0]   (group a: mean 0.5, unbiased std √0.5)
 */
export function grpoAdvantages(input: AdvantageInput<GrpoOptions>): AdvantageOutput {
  validateInput(input);
  const { rewards, groupIds, options } = input;
  if (!(options.epsilon >= 0 && Number.isFinite(options.epsilon))) {
    throw InvalidArgumentError.format('options.epsilon', `expected a finite number ≥ 0, got ${options.epsilon}`);
  }
  const n = rewards.length;
  // Dense group index per trajectory, in order of first appearance.
  const groupIndex = new Map<string, number>();
  const groupOf = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    let g = groupIndex.get(groupIds[i]);
    if (g === undefined) {
      g = groupIndex.size;
      groupIndex.set(groupIds[i], g);
    }
    groupOf[i] = g;
  }
  const groups = groupIndex.size;
  const count = new Float64Array(groups);
  const sum = new Float64Array(groups);
  const min = new Float64Array(groups).fill(Number.POSITIVE_INFINITY);
  const max = new Float64Array(groups).fill(Number.NEGATIVE_INFINITY);
  for (let i = 0; i < n; i++) {
    const g = groupOf[i];
    count[g] += 1;
    sum[g] += rewards[i];
    min[g] = Math.min(min[g], rewards[i]);
    max[g] = Math.max(max[g], rewards[i]);
  }
  const mean = new Float64Array(groups);
  for (let g = 0; g < groups; g++) mean[g] = sum[g] / count[g];
  // Two-pass variance: numerically safer than sum of squares for near-equal rewards.
  const squares = new Float64Array(groups);
  for (let i = 0; i < n; i++) {
    const d = rewards[i] - mean[groupOf[i]];
    squares[groupOf[i]] += d * d;
  }
  const advantages = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    const g = groupOf[i];
    // Singleton group: no baseline. Equal rewards: no signal; tested exactly, because a float mean of
    // equal values can miss them by an ulp and (tiny / (tiny + ε)) would not be 0.
    if (count[g] < 2 || min[g] === max[g]) continue;
    const centred = rewards[i] - mean[g];
    if (!options.normalizeStd) {
      advantages[i] = centred;
      continue;
    }
    const std = Math.sqrt(squares[g] / (count[g] - 1));
    advantages[i] = centred / (std + options.epsilon);
  }
  return { advantages, returns: advantages.slice() };
}

/** The registry: one entry per estimator, each typed with its own options. */
type EstimatorRegistry = { readonly [K in EstimatorName]: AdvantageEstimator<Extract<EstimatorOptions, { name: K }>> };

/**
 * Every advantage estimator by name. Add an estimator here (and to {@link EstimatorOptions});
 * callers go through {@link computeAdvantages} and never switch on the name.
 * @example
 * const { advantages } = advantageEstimators.grpo({ rewards, groupIds, options: { name: 'grpo', normalizeStd: true, epsilon: 1e-6 } });
 */
export const advantageEstimators = {
  grpo: grpoAdvantages,
} satisfies EstimatorRegistry;

/** Names of the registered estimators, for error messages and config schemas. */
export const estimatorNames = Object.keys(advantageEstimators) as EstimatorName[];

/**
 * Looks up the estimator named by `input.options.name` and runs it.
 * Shape: rewards [numTrajectories] → advantages [numTrajectories].
 * @throws InvalidArgumentError naming `options.name` and listing the valid names when it is unknown.
 * @example
 * computeAdvantages({ rewards: Float32Array.of(1, 0), groupIds: ['g', 'g'],
 *   options: { name: 'grpo', normalizeStd: false, epsilon: 1e-6 } }).advantages; // [0.5, -0.5]
 */
export function computeAdvantages(input: AdvantageInput): AdvantageOutput {
  const name: string = input.options.name;
  if (!Object.hasOwn(advantageEstimators, name)) {
    throw InvalidArgumentError.format('options.name', `unknown advantage estimator '${name}'; valid names: ${estimatorNames.join(', ')}`);
  }
  // The registry type pairs each name with its options type; the lookup by a runtime name loses that
  // correlation, which the discriminant on `input.options` restores at run time.
  const estimator = advantageEstimators[name as EstimatorName] as AdvantageEstimator;
  return estimator(input);
}
