/**
 * Public surface of `turnwise/algorithms` (package.json `exports`): explicit names only (no `export *`).
 */
export type { GroupCredit } from './advantage-input.js';
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
} from './advantages.js';
export {
  advantageEstimators,
  computeAdvantages,
  estimatorNames,
  estimatorNeedsValues,
  gaeAdvantages,
  grpoAdvantages,
  reinforceAdvantages,
  reinforcePlusPlusAdvantages,
  rlooAdvantages,
} from './advantages.js';
export { discountedReturns, maskedWhiten } from './advantage-input.js';
export {
  gaeReference,
  grpoAdvantagesReference,
  reinforcePlusPlusReference,
  reinforceReference,
  rlooAdvantagesReference,
} from './advantages-reference.js';
export type { CreditedRewards, RewardMode } from './reward-modes.js';
export { creditedRewards, REWARD_MODES, trajectoryScore } from './reward-modes.js';
export type { ProcessRewardHook, ProcessRewardInput, RewardShaperPlugin, RewardShaping } from './reward-shapers.js';
export { registerRewardShaper, rewardShaperRegistry, rewardShapingOf, shapeTrajectory } from './reward-shapers.js';
export type { LossAggregation } from './aggregation.js';
export { aggregationWeights, LOSS_AGGREGATIONS } from './aggregation.js';
export { clipByGlobalNorm, globalNormScale } from './grad-clip.js';
export type { KlControlOptions, KlEstimator } from './kl.js';
export { KlController, klPenalizedRewards, klTensor, klValue } from './kl.js';
export type { PolicyLossInput, PolicyLossOptions, PolicyLossTerms, ValueLossInput, ValueLossTerms } from './losses.js';
export { KL_CLAMP, LOG_RATIO_CLAMP, ppoClipLoss, valueLoss } from './losses.js';
export type { PolicyLossArrays } from './losses-reference.js';
export { ppoClipLossReference, valueLossReference } from './losses-reference.js';
export type { MaskedStats } from './stats.js';
export { explainedVariance, maskedStats } from './stats.js';
export type { OffPolicyCorrection, OffPolicyLossInput, OffPolicyTerms } from './off-policy.js';
export { OFF_POLICY_CORRECTIONS, offPolicyLoss, validateCorrection } from './off-policy.js';
export { offPolicyLossReference, truncatedImportanceWeights } from './off-policy-reference.js';
