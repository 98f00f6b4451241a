/**
 * Public surface of `turnwise/algorithms` (package.json `exports`): explicit names only (STYLE §8).
 */
export type {
  AdvantageEstimator,
  AdvantageInput,
  AdvantageOutput,
  EstimatorName,
  EstimatorOptions,
  GrpoOptions,
} from './advantages.js';
export { advantageEstimators, computeAdvantages, estimatorNames, grpoAdvantages } from './advantages.js';
export { grpoAdvantagesReference } from './advantages-reference.js';
export { clipByGlobalNorm } from './grad-clip.js';
export type { PolicyLossInput, PolicyLossOptions, PolicyLossTerms } from './losses.js';
export { k3Kl, KL_CLAMP, LOG_RATIO_CLAMP, ppoClipLoss } from './losses.js';
export type { PolicyLossArrays } from './losses-reference.js';
export { ppoClipLossReference } from './losses-reference.js';
