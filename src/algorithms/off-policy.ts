/**
 * Off-policy corrections for data produced by older policy versions (asynchronous training), as
 * pure tfjs functions. `off-policy-reference.ts` holds the same arithmetic in plain JS; a test
 * keeps the two equal, and hand-worked fixtures pin the numbers.
 *
 * Notation per trained token: π = the policy being trained (differentiable), μ = the behaviour
 * policy that sampled the token (its log-prob is recorded in the Turn), π_prox = the proximal
 * policy (the learner's weights before this step's update, recomputed by a forward pass).
 *
 * - `tis` — truncated importance sampling (IMPALA's truncated ρ̄, Espeholt et al. 2018,
 *   arXiv:1802.01561; verl `tis_imp_ratio_cap`): per-token loss `−A · min(ρ, C) · π/sg(π)` with
 *   `ρ = π/μ` held constant, i.e. value `−A·min(ρ, C)` and gradient `−A·min(ρ, C)·∇log π`. No
 *   extra forward pass; no trust region.
 * - `decoupled` — decoupled PPO (AReaL, Fu et al. 2025, arXiv:2505.24298): the trust region is
 *   taken around π_prox, not μ: `min(π_prox/μ, C) · max(−A·r, −A·clip(r, 1−ε, 1+ε))` with
 *   `r = π/π_prox`. The behaviour weight is a constant (no gradient).
 *
 * KL to the reference and the entropy bonus are added exactly as in {@link ppoClipLoss}.
 */
import { InvalidArgumentError } from '../core/errors.js';
import { tf } from '../backend/tf.js';
import { klTensor, LOG_RATIO_CLAMP } from './kl.js';
import { type PolicyLossInput, type PolicyLossOptions, type PolicyLossTerms, validateLossOptions } from './losses.js';

/** Which correction the learner applies; `none` is plain PPO-clip against the behaviour log-probs. */
export type OffPolicyCorrection =
  | { readonly kind: 'none' }
  | { readonly kind: 'tis'; readonly cap: number }
  | { readonly kind: 'decoupled'; readonly cap: number };

/** Names accepted in the config, in order. */
export const OFF_POLICY_CORRECTIONS = ['none', 'tis', 'decoupled'] as const;

/** Per-target tensors: those of PPO plus the proximal log-probs (decoupled only), all [N]. */
export interface OffPolicyLossInput extends PolicyLossInput {
  /** [N] log-probs under the learner's weights before this step's update; required by `decoupled`, ignored by `tis`. */
  readonly proxLogprobs: tf.Tensor1D | null;
}

/** The PPO terms plus two diagnostics of the importance weights. */
export interface OffPolicyTerms<T> extends PolicyLossTerms<T> {
  /** Token-mean of the (truncated) behaviour importance weight actually used. */
  readonly isWeight: T;
  /** Token share whose raw behaviour weight exceeded the cap C. */
  readonly truncFrac: T;
}

/**
 * Throws `InvalidArgumentError` naming the bad field.
 * @example validateCorrection({ kind: 'tis', cap: 0 }); // throws naming 'offPolicy.cap'
 */
export function validateCorrection(correction: OffPolicyCorrection): void {
  if (!OFF_POLICY_CORRECTIONS.includes(correction.kind)) {
    throw InvalidArgumentError.format('offPolicy.correction', `expected one of ${OFF_POLICY_CORRECTIONS.join(', ')}, got ${JSON.stringify(correction.kind)}`);
  }
  if (correction.kind !== 'none' && !(correction.cap > 0)) throw InvalidArgumentError.format('offPolicy.cap', `expected > 0, got ${correction.cap}`);
}

/** Identity whose gradient is zero (tfjs has no `stop_gradient`). */
const stopGradient = tf.customGrad((x, _save) => ({ value: tf.clone(x as tf.Tensor), gradFunc: (dy: tf.Tensor) => tf.zerosLike(dy) }));

/**
 * TIS: Espeholt et al. 2018, arXiv:1802.01561; decoupled PPO: Fu et al. 2025 (AReaL), arXiv:2505.24298.
 * Shape: [N] per input → scalars.
 *
 * The off-policy actor loss for `correction` (`tis` or `decoupled`), plus KL and entropy terms;
 * differentiable through `logprobs` and `entropy` only.
 * @example
 * const terms = offPolicyLoss({ logprobs, oldLogprobs, proxLogprobs, advantages, lossMask, entropy, refLogprobs: null },
 *   { clipRatio: 0.2, klCoef: 0, entropyCoef: 0 }, { kind: 'decoupled', cap: 2 });
 * terms.total; // tf.Scalar to minimise
 */
export function offPolicyLoss(input: OffPolicyLossInput, options: PolicyLossOptions, correction: OffPolicyCorrection): OffPolicyTerms<tf.Scalar> {
  validateLossOptions(options);
  validateCorrection(correction);
  if (correction.kind === 'none') throw InvalidArgumentError.format('offPolicy.correction', "offPolicyLoss needs 'tis' or 'decoupled'; use ppoClipLoss for 'none'");
  if (correction.kind === 'decoupled' && input.proxLogprobs === null) {
    throw InvalidArgumentError.format('proxLogprobs', 'the decoupled objective needs the proximal log-probs (recomputed before the update)');
  }
  const n = input.logprobs.shape[0];
  for (const key of ['oldLogprobs', 'proxLogprobs', 'advantages', 'lossMask', 'entropy', 'refLogprobs', 'weights'] as const) {
    const t = input[key];
    if (t !== null && t !== undefined && t.shape[0] !== n) {
      throw InvalidArgumentError.format(key, `expected shape [${n}] like logprobs, got [${t.shape.join(', ')}]`);
    }
  }
  const cap = correction.cap;
  return tf.tidy(() => {
    const mask = input.lossMask;
    const denominator = options.tokenCount !== undefined ? tf.scalar(options.tokenCount) : tf.maximum(tf.sum(mask), tf.scalar(1));
    const tokenWeights = tf.div(mask, denominator);
    const weights = input.weights ?? tokenWeights;
    const tokenMean = (x: tf.Tensor): tf.Scalar => tf.sum(tf.mul(x, tokenWeights)) as tf.Scalar;
    const aggregate = (x: tf.Tensor): tf.Scalar => tf.sum(tf.mul(x, weights)) as tf.Scalar;
    const expClamped = (a: tf.Tensor, b: tf.Tensor): tf.Tensor => tf.exp(tf.clipByValue(tf.sub(a, b), -LOG_RATIO_CLAMP, LOG_RATIO_CLAMP));
    const negAdv = tf.neg(input.advantages);

    let perToken: tf.Tensor;
    let rawWeight: tf.Tensor;
    let clipFrac: tf.Scalar = tf.scalar(0);
    let dualClipFrac: tf.Scalar = tf.scalar(0);
    let approxKl: tf.Scalar;
    if (correction.kind === 'tis') {
      // ρ = π/μ as a constant; π/sg(π) is 1 in value and carries ∇log π.
      rawWeight = expClamped(stopGradient(input.logprobs) as tf.Tensor, input.oldLogprobs);
      const selfRatio = tf.exp(tf.sub(input.logprobs, stopGradient(input.logprobs) as tf.Tensor));
      perToken = tf.mul(tf.mul(negAdv, tf.minimum(rawWeight, cap)), selfRatio);
      approxKl = tokenMean(tf.clipByValue(tf.sub(input.oldLogprobs, input.logprobs), -LOG_RATIO_CLAMP, LOG_RATIO_CLAMP));
    } else {
      const prox = input.proxLogprobs as tf.Tensor1D;
      rawWeight = expClamped(prox, input.oldLogprobs);
      const logRatio = tf.clipByValue(tf.sub(input.logprobs, prox), -LOG_RATIO_CLAMP, LOG_RATIO_CLAMP);
      const ratio = tf.exp(logRatio);
      const unclipped = tf.mul(negAdv, ratio);
      const clipped = tf.mul(negAdv, tf.clipByValue(ratio, 1 - options.clipRatio, 1 + options.clipRatio));
      let ppo: tf.Tensor = tf.maximum(unclipped, clipped);
      clipFrac = tokenMean(tf.cast(tf.greater(clipped, unclipped), 'float32'));
      const c = options.dualClip ?? null;
      if (c !== null) {
        const bound = tf.mul(negAdv, c);
        const negative = tf.less(input.advantages, 0);
        dualClipFrac = tokenMean(tf.cast(tf.logicalAnd(negative, tf.greater(ppo, bound)), 'float32'));
        ppo = tf.where(negative, tf.minimum(ppo, bound), ppo);
      }
      perToken = tf.mul(tf.minimum(rawWeight, cap), ppo);
      approxKl = tokenMean(tf.neg(logRatio));
    }
    const isWeight = tokenMean(tf.minimum(rawWeight, cap));
    const truncFrac = tokenMean(tf.cast(tf.greater(rawWeight, cap), 'float32'));
    const policy = aggregate(perToken);
    const klRef = input.refLogprobs === null ? tf.scalar(0) : aggregate(klTensor(options.klEstimator ?? 'k3', input.logprobs, input.refLogprobs));
    const entropy = aggregate(input.entropy);
    const klWeight = input.refLogprobs === null ? 0 : options.klCoef;
    const total = tf.sub(tf.add(policy, tf.mul(klRef, klWeight)), tf.mul(entropy, options.entropyCoef)) as tf.Scalar;
    return { total, policy, klRef, entropy, clipFrac, dualClipFrac, approxKl, isWeight, truncFrac };
  });
}
