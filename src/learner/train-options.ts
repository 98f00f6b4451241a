/**
 * What one training step is told (per-step options) and what it reports (metric names from
 * `src/core/metrics.ts`). Kept apart from the trainer so that the options read as a list.
 */
import type { AnyEstimatorOptions } from '../algorithms/advantage-input.js';
import { estimatorNeedsValues } from '../algorithms/advantages.js';
import type { LossAggregation } from '../algorithms/aggregation.js';
import type { KlEstimator } from '../algorithms/kl.js';
import { type OffPolicyCorrection, validateCorrection } from '../algorithms/off-policy.js';
import type { RewardMode } from '../algorithms/reward-modes.js';
import { InvalidArgumentError } from '../core/errors.js';
import type { MetricName } from '../core/metrics.js';
import type { PackOptions } from './pack.js';

/** Per-step options. Defaults follow the GRPO recipe that learned (learnability probe §1). */
export interface TrainStepOptions {
  /** Advantage estimator and its options. */
  readonly estimator: AnyEstimatorOptions;
  /** Which rewards the token layout credits (`reward.mode`); absent = `outcome`. */
  readonly rewardMode?: RewardMode;
  /** PPO clip range ε. */
  readonly clipRatio: number;
  /** Dual-clip constant c > 1 (verl `clip_ratio_c`, 3); null = off. */
  readonly dualClip: number | null;
  /** How per-token losses are reduced (verl `loss_agg_mode`). */
  readonly lossAggregation: LossAggregation;
  /** KL weight (initial value when the trainer adapts it); > 0 needs a reference model. */
  readonly klCoef: number;
  /** KL estimator: k1, k2 or k3 (verl `kl`, `mse`, `low_var_kl`). */
  readonly klEstimator: KlEstimator;
  /** `loss`: KL term in the actor loss (verl `use_kl_loss`); `reward`: per-token penalty in the reward (verl `use_kl_in_reward`). */
  readonly klPlacement: 'loss' | 'reward';
  /** Entropy bonus weight (verl default 0.001; the probe used 0). */
  readonly entropyCoef: number;
  /** Passes over the step's data (verl `ppo_epochs`). */
  readonly epochs: number;
  /** Optimizer updates per epoch; trajectories are split into this many contiguous chunks. */
  readonly miniBatches: number;
  /** Max global gradient norm (verl `grad_clip`), applied to the actor and the critic separately; Infinity = no clipping. */
  readonly gradClip: number;
  /** Padded tokens per micro-batch (memory bound; does not change the math). */
  readonly maxTokensPerBatch: number;
  /** The count of micro-batches per mini-batch is a multiple of this, cut to equal work (`micro-batch-cuts.ts`). */
  readonly microBatchMultiple: number;
  /** The model's attention break-even length, for that work estimate (Infinity: padded tokens). */
  readonly attentionBreakEven: number;
  /** Softmax temperature of the sampler, so ratios compare like with like. */
  readonly temperature: number;
  /** Leave out trajectories whose advantages are all exactly 0 (never with a critic, which still learns from them). */
  readonly dropZeroAdvantage: boolean;
  /** Value clip range around the pre-update values (verl `cliprange_value` 0.5); null = unclipped. */
  readonly valueClip: number | null;
  /** Weight of the value loss in the shared-trunk loss (a separate critic minimises its own loss). */
  readonly valueCoef: number;
  /** Steps at the start during which only the critic learns (verl `critic_warmup`). */
  readonly criticWarmupSteps: number;
  /** Off-policy correction of the actor loss (`src/algorithms/off-policy.ts`); `none` = PPO-clip on behaviour log-probs. */
  readonly offPolicy: OffPolicyCorrection;
  /** Registered policy loss and its settings (`src/algorithms/policy-loss-registry.ts`); default `ppo-clip`. */
  readonly policyLoss?: { readonly name: string; readonly settings: unknown };
}

/** Defaults: GRPO, clip 0.2, no KL, no entropy bonus, one epoch, one update, clip norm 1. */
export const DEFAULT_TRAIN_STEP_OPTIONS: TrainStepOptions = Object.freeze<TrainStepOptions>({
  estimator: { name: 'grpo', normalizeStd: true, epsilon: 1e-6 },
  clipRatio: 0.2,
  dualClip: null,
  lossAggregation: 'token-mean',
  klCoef: 0,
  klEstimator: 'k3',
  klPlacement: 'loss',
  entropyCoef: 0,
  epochs: 1,
  miniBatches: 1,
  gradClip: 1,
  maxTokensPerBatch: 8192,
  microBatchMultiple: 1,
  attentionBreakEven: Number.POSITIVE_INFINITY,
  temperature: 1,
  dropZeroAdvantage: false,
  valueClip: 0.5,
  valueCoef: 1,
  criticWarmupSteps: 0,
  offPolicy: { kind: 'none' },
});

/** The metrics every {@link PolicyTrainer.trainStep} returns. */
export const TRAIN_STEP_METRICS = [
  'loss/policy',
  'loss/clipFrac',
  'loss/dualClipFrac',
  'loss/approxKl',
  'loss/klRef',
  'loss/entropy',
  'loss/total',
  'optim/gradNorm',
  'optim/lr',
  'kl/coef',
  'kl/reward',
  'advantage/mean',
  'advantage/absMean',
  'advantage/std',
  'advantage/min',
  'advantage/max',
  'return/mean',
  'return/std',
  'return/min',
  'return/max',
  'policy/staleness',
  'policy/version',
  'throughput/trainTokensPerSec',
] as const satisfies readonly MetricName[];

/** The metrics a step adds when the trainer has a critic. */
export const CRITIC_STEP_METRICS = [
  'loss/value',
  'loss/valueClipFrac',
  'critic/explainedVariance',
  'critic/valueMean',
  'optim/criticGradNorm',
  'optim/criticLr',
] as const satisfies readonly MetricName[];

/** The metrics a step adds when an off-policy correction is on. */
export const OFF_POLICY_STEP_METRICS = ['offpolicy/isWeight', 'offpolicy/truncFrac'] as const satisfies readonly MetricName[];

/** One step's metrics: all of {@link TRAIN_STEP_METRICS}, plus {@link CRITIC_STEP_METRICS} with a critic. */
export type TrainStepMetrics = Record<(typeof TRAIN_STEP_METRICS)[number], number> &
  Partial<Record<(typeof CRITIC_STEP_METRICS)[number], number>> &
  Partial<Record<(typeof OFF_POLICY_STEP_METRICS)[number], number>>;

/**
 * Throws `InvalidArgumentError` naming the first bad option.
 * @example checkTrainStepOptions({ ...DEFAULT_TRAIN_STEP_OPTIONS, epochs: 0 }, false, false); // throws naming 'epochs'
 */
export function checkTrainStepOptions(o: TrainStepOptions, hasReference: boolean, hasCritic: boolean): void {
  const positiveInt = (key: 'epochs' | 'miniBatches' | 'maxTokensPerBatch' | 'microBatchMultiple'): void => {
    if (!(Number.isInteger(o[key]) && o[key] > 0)) throw InvalidArgumentError.format(key, `expected a positive integer, got ${o[key]}`);
  };
  positiveInt('epochs');
  positiveInt('miniBatches');
  positiveInt('maxTokensPerBatch');
  positiveInt('microBatchMultiple');
  if (!(o.gradClip > 0)) throw InvalidArgumentError.format('gradClip', `expected > 0, got ${o.gradClip}`);
  if (!(o.temperature > 0)) throw InvalidArgumentError.format('temperature', `expected > 0, got ${o.temperature}`);
  if (!(o.klCoef >= 0)) throw InvalidArgumentError.format('klCoef', `expected ≥ 0, got ${o.klCoef}`);
  if (o.klCoef > 0 && !hasReference) throw InvalidArgumentError.format('reference', `a reference model is required when klCoef > 0 (got ${o.klCoef})`);
  if (!(o.valueCoef >= 0)) throw InvalidArgumentError.format('valueCoef', `expected ≥ 0, got ${o.valueCoef}`);
  if (!(Number.isInteger(o.criticWarmupSteps) && o.criticWarmupSteps >= 0)) {
    throw InvalidArgumentError.format('criticWarmupSteps', `expected an integer ≥ 0, got ${o.criticWarmupSteps}`);
  }
  validateCorrection(o.offPolicy);
  if (estimatorNeedsValues(o.estimator) && !hasCritic) {
    throw InvalidArgumentError.format('critic', `the '${o.estimator.name}' estimator needs critic values, but the trainer has no critic`);
  }
}

/**
 * How the trainer packs a mini-batch (`src/learner/pack.ts`), from its step options.
 * @example packTrajectories(trajectories, advantages, packOptionsOf(options))
 */
export function packOptionsOf(o: TrainStepOptions): PackOptions {
  return { maxTokensPerBatch: o.maxTokensPerBatch, microBatchMultiple: o.microBatchMultiple, attentionBreakEven: o.attentionBreakEven };
}
