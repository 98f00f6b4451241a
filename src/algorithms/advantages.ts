/**
 * Advantage estimators: one typed registry, one shared signature (after verl's
 * `core_algos`); no caller switches on an estimator's name.
 *
 * Every estimator takes one {@link AdvantageInput} (per-token rewards over a `[B·T]` layout with a
 * mask of agent tokens, group ids, optional critic values, turn ids and running state) and returns
 * `{ advantages, returns }` per token. Options are a discriminated union on `name`; adding an
 * estimator means adding its options type to `EstimatorOptions` and one entry here. No caller
 * switches on the name: they call {@link computeAdvantages}.
 *
 * | name | source | baseline | needs |
 * |---|---|---|---|
 * | `gae` | Schulman et al. 2016, arXiv:1506.02438 | critic V(s) | values (+ turnIds at turn level) |
 * | `grpo` | Shao et al. 2024, arXiv:2402.03300 (Dr. GRPO: arXiv:2503.20783) | group mean (/ std) | groupIds |
 * | `rloo` | Ahmadian et al. 2024, arXiv:2402.14740 | mean of the other group samples | groupIds |
 * | `reinforcePlusPlus` | Hu 2025, arXiv:2501.03262 | batch whitening | — |
 * | `reinforce` | Williams 1992 | running mean return | state |
 */
import { InvalidArgumentError } from '../core/errors.js';
import type { AdvantageEstimator, AdvantageInput, AdvantageOutput, EstimatorName, EstimatorOptions } from './advantage-input.js';
import { gaeAdvantages } from './gae.js';
import { grpoAdvantages, rlooAdvantages } from './group-baselines.js';
import { reinforceAdvantages, reinforcePlusPlusAdvantages } from './returns-estimators.js';

export type {
  AdvantageEstimator,
  AdvantageInput,
  AdvantageOutput,
  EstimatorName,
  EstimatorOptions,
  EstimatorState,
  GaeOptions,
  GrpoOptions,
  ReinforceOptions,
  ReinforcePlusPlusOptions,
  RlooOptions,
} from './advantage-input.js';
export { gaeAdvantages, grpoAdvantages, reinforceAdvantages, reinforcePlusPlusAdvantages, rlooAdvantages };

/** The registry: one entry per estimator, each typed with its own options. */
type EstimatorRegistry = { readonly [K in EstimatorName]: AdvantageEstimator<Extract<EstimatorOptions, { name: K }>> };

/**
 * Every advantage estimator by name. Add an estimator here (and to `EstimatorOptions`);
 * callers go through {@link computeAdvantages} and never switch on the name.
 * @example
 * const { advantages } = advantageEstimators.rloo({ rewards, groupIds, options: { name: 'rloo' } });
 */
export const advantageEstimators = {
  gae: gaeAdvantages,
  grpo: grpoAdvantages,
  rloo: rlooAdvantages,
  reinforcePlusPlus: reinforcePlusPlusAdvantages,
  reinforce: reinforceAdvantages,
} satisfies EstimatorRegistry;

/** Names of the registered estimators, for error messages and config schemas. */
export const estimatorNames = Object.keys(advantageEstimators) as EstimatorName[];

/** What the learner must provide per estimator: `values` means a critic runs before the estimator. */
const needsValues = { gae: true, grpo: false, rloo: false, reinforcePlusPlus: false, reinforce: false } satisfies Record<EstimatorName, boolean>;

/**
 * Whether the estimator reads critic values (so the learner must run a critic first).
 * @example estimatorNeedsValues({ name: 'rloo' }); // false
 */
export function estimatorNeedsValues(options: EstimatorOptions): boolean {
  return needsValues[options.name];
}

/**
 * Looks up the estimator named by `input.options.name` and runs it.
 * Shape: rewards [B·T] → advantages, returns [B·T].
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
