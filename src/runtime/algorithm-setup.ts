/**
 * From the config's `algorithm` section to what the trainer takes: the estimator options (one
 * table entry per algorithm name — the only place that maps config names to estimators), the
 * per-step options, the trainer's optimizer settings and the critic settings.
 */
import type { AnyEstimatorOptions, EstimatorOptions } from '../algorithms/advantage-input.js';
import type { ResolvedConfig } from '../core/config.js';
import { type AlgorithmConfig, BUILT_IN_ALGORITHMS, type CustomAlgorithmConfig } from '../core/config/algorithm-schema.js';
import type { DeepReadonly } from '../core/config/resolve.js';
import type { TrainerConfig, TrainStepOptions } from '../learner/trainer.js';
import { microBatchCutsOf } from './gradient-workers.js';

type Algorithm = DeepReadonly<AlgorithmConfig>;
type AnyAlgorithm = Algorithm | DeepReadonly<CustomAlgorithmConfig>;

function isBuiltIn(algorithm: AnyAlgorithm): algorithm is Algorithm {
  return BUILT_IN_ALGORITHMS.includes(algorithm.name);
}

/** Config algorithm name → estimator options; typed so every algorithm has exactly one entry. */
const ESTIMATORS: { readonly [K in Algorithm['name']]: (a: Extract<Algorithm, { name: K }>) => EstimatorOptions } = {
  grpo: (a) => ({ name: 'grpo', normalizeStd: a.normalizeStd, epsilon: 1e-6, credit: a.credit }),
  rloo: (a) => ({ name: 'rloo', credit: a.credit }),
  reinforce_pp: (a) => ({ name: 'reinforcePlusPlus', gamma: a.gamma }),
  reinforce: (a) => ({ name: 'reinforce', gamma: a.gamma, baselineMomentum: a.baselineMomentum }),
  ppo: (a) => ({ name: 'gae', gamma: a.gamma, lambda: a.lambda, level: a.gaeLevel, whiten: a.whitenAdvantages }),
};

/**
 * The estimator options of the configured algorithm.
 * @example estimatorOptionsOf({ name: 'rloo', ... }); // { name: 'rloo' }
 */
export function estimatorOptionsOf(algorithm: AnyAlgorithm): AnyEstimatorOptions {
  // A registered estimator is named by the algorithm and gets its parsed settings.
  if (!isBuiltIn(algorithm)) return { name: algorithm.name, settings: algorithm.settings };
  // The table pairs each name with its own config type; indexing by a runtime name loses that pairing.
  const build = ESTIMATORS[algorithm.name] as (a: Algorithm) => EstimatorOptions;
  return build(algorithm);
}

/** The critic section, for algorithms that have one (ppo); null otherwise. */
export function criticConfigOf(algorithm: AnyAlgorithm): Extract<Algorithm, { name: 'ppo' }>['critic'] | null {
  return isBuiltIn(algorithm) && 'critic' in algorithm ? algorithm.critic : null;
}

/**
 * Per-step trainer options from the config.
 * @example await trainer.trainStep(trajectories, trainStepOptionsOf(config));
 */
export function trainStepOptionsOf(config: ResolvedConfig): TrainStepOptions {
  const a = config.algorithm;
  const critic = criticConfigOf(a);
  return {
    estimator: estimatorOptionsOf(a),
    rewardMode: config.reward.mode,
    clipRatio: a.clipRatio,
    dualClip: a.dualClip,
    lossAggregation: a.lossAgg,
    klCoef: a.klCoef,
    klEstimator: a.klEstimator,
    klPlacement: a.klPlacement,
    entropyCoef: a.entropyCoef,
    epochs: a.epochs,
    miniBatches: a.miniBatches,
    gradClip: a.gradClip ?? Number.POSITIVE_INFINITY,
    maxTokensPerBatch: a.maxTokensPerMicroBatch,
    ...microBatchCutsOf(config),
    temperature: config.sampling.temperature,
    dropZeroAdvantage: a.dropZeroAdvantage,
    valueClip: critic?.valueClip ?? null,
    valueCoef: critic?.valueCoef ?? 1,
    criticWarmupSteps: critic?.warmupSteps ?? 0,
    offPolicy: config.offPolicy.correction === 'none' ? { kind: 'none' } : { kind: config.offPolicy.correction, cap: config.offPolicy.cap },
    policyLoss: { name: a.policyLoss, settings: a.policyLossSettings },
  };
}

/**
 * Trainer construction settings from the config (everything but the models).
 * @example new PolicyTrainer({ policy, reference, critic, ...trainerSettingsOf(config) });
 */
export function trainerSettingsOf(config: ResolvedConfig): Omit<TrainerConfig, 'policy' | 'reference' | 'critic' | 'initialVersion' | 'clock'> {
  const a = config.algorithm;
  const critic = criticConfigOf(a);
  return {
    lr: a.lr,
    beta1: a.beta1,
    beta2: a.beta2,
    weightDecay: a.weightDecay,
    ...(critic !== null ? { criticLr: critic.lr } : {}),
    schedule: { warmupSteps: a.warmupSteps, kind: a.lrSchedule, totalSteps: config.train.steps, minLrRatio: a.minLrRatio },
    klTarget: a.klTarget,
    klHorizon: a.klHorizon,
  };
}
