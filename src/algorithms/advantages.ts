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
import type { AdvantageEstimator, AdvantageInput, AdvantageOutput, AnyEstimatorOptions, EstimatorName, EstimatorOptions } from './advantage-input.js';
import { estimatorRegistry } from './estimator-registry.js';
import { gaeAdvantages } from './gae.js';
import { grpoAdvantages, rlooAdvantages } from './group-baselines.js';
import { reinforceAdvantages, reinforcePlusPlusAdvantages } from './returns-estimators.js';

export type {
  AdvantageEstimator,
  AnyEstimatorOptions,
  CustomEstimatorOptions,
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

/** Names of the built-in estimators. */
export const estimatorNames = Object.keys(advantageEstimators) as EstimatorName[];

/** What the learner must provide per estimator: `values` means a critic runs before the estimator. */
const needsValues = { gae: true, grpo: false, rloo: false, reinforcePlusPlus: false, reinforce: false } satisfies Record<EstimatorName, boolean>;
const descriptions = {
  gae: 'GAE (Schulman et al. 2016) on critic values',
  grpo: 'GRPO (Shao et al. 2024): group-normalised outcome advantages',
  rloo: 'RLOO (Ahmadian et al. 2024): leave-one-out group baseline',
  reinforcePlusPlus: 'REINFORCE++ (Hu 2025): returns whitened over the batch',
  reinforce: 'REINFORCE (Williams 1992) with a running mean-return baseline',
} satisfies Record<EstimatorName, string>;

// The built-ins enter the same registry as user estimators (src/algorithms/estimator-registry.ts).
for (const name of estimatorNames) {
  estimatorRegistry.register({
    name,
    description: descriptions[name],
    needsValues: needsValues[name],
    builtIn: true,
    // The entry pairs the name with its own options type; the registry holds every estimator under one signature.
    estimate: advantageEstimators[name] as (input: AdvantageInput<AnyEstimatorOptions>) => AdvantageOutput,
  });
}

/**
 * Whether the estimator reads critic values (so the learner must run a critic first).
 * @example estimatorNeedsValues({ name: 'rloo' }); // false
 */
export function estimatorNeedsValues(options: AnyEstimatorOptions): boolean {
  return estimatorRegistry.has(options.name) && estimatorRegistry.get(options.name).needsValues;
}

/**
 * Looks up the estimator named by `input.options.name` in the registry and runs it.
 * Shape: rewards [B·T] → advantages, returns [B·T].
 * @throws InvalidArgumentError naming `options.name` and listing the valid names when it is unknown.
 * @example
 * computeAdvantages({ rewards: Float32Array.of(1, 0), groupIds: ['g', 'g'],
 *   options: { name: 'grpo', normalizeStd: false, epsilon: 1e-6 } }).advantages; // [0.5, -0.5]
 */
export function computeAdvantages(input: AdvantageInput<AnyEstimatorOptions>): AdvantageOutput {
  const name: string = input.options.name;
  if (!estimatorRegistry.has(name)) {
    throw InvalidArgumentError.format('options.name', `unknown advantage estimator '${name}'; valid names: ${estimatorRegistry.names().join(', ')}`);
  }
  return estimatorRegistry.get(name).estimate(input);
}
