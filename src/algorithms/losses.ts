/**
 * The actor and critic losses as pure tfjs functions: PPO-clip surrogate (optional dual clip), KL
 * to a frozen reference (k1/k2/k3), entropy bonus, and the clipped value loss, as in verl's
 * `dp_actor.update_policy` / `dp_critic.update_critic`. `losses-reference.ts` holds the same
 * arithmetic in plain JS; a test keeps the two equal.
 *
 * Aggregation: the loss terms are `Σ weights·x` with per-token `weights` from
 * {@link aggregationWeights} (token-mean, seq-mean-token-sum or seq-mean-token-mean over the whole
 * mini-batch). Without `weights` they are a token-mean: `mask / tokenCount`, where `tokenCount`
 * defaults to the trained tokens of this call; when a step is split into micro-batches, pass the
 * mini-batch's count so the micro-batch losses (and gradients) sum to the mini-batch's.
 * Diagnostics (clip fractions, approx KL) are always token-means, as in verl.
 */
import { InvalidArgumentError } from '../core/errors.js';
import { tf } from '../backend/tf.js';
import { type KlEstimator, klTensor, LOG_RATIO_CLAMP } from './kl.js';

export { KL_CLAMP, LOG_RATIO_CLAMP } from './kl.js';

/** Per-target tensors of one (micro-)batch, all [N]. */
export interface PolicyLossInput {
  /** [N] log-probs of the targets under the policy being trained (differentiable). */
  readonly logprobs: tf.Tensor1D;
  /** [N] behaviour log-probs recorded at sampling time. */
  readonly oldLogprobs: tf.Tensor1D;
  /** [N] advantages. */
  readonly advantages: tf.Tensor1D;
  /** [N] 1 = trained token, 0 = forced or padding (float). */
  readonly lossMask: tf.Tensor1D;
  /** [N] entropy of the policy's (masked) distribution at each target (differentiable). */
  readonly entropy: tf.Tensor1D;
  /** [N] log-probs under the frozen reference policy, or null when there is no KL loss. */
  readonly refLogprobs: tf.Tensor1D | null;
  /** [N] aggregation weights (0 where the mask is 0); default token-mean `mask / tokenCount`. */
  readonly weights?: tf.Tensor1D;
}

/** Loss coefficients. */
export interface PolicyLossOptions {
  /** PPO clip range ε: the ratio is clipped to [1 − ε, 1 + ε] (verl: 0.2). */
  readonly clipRatio: number;
  /** Weight of the KL loss to the reference (verl scripts: 0.001). Ignored when `refLogprobs` is null. */
  readonly klCoef: number;
  /** Weight of the entropy bonus (verl default: 0.001). */
  readonly entropyCoef: number;
  /** Token-mean denominator; default: trained tokens in this input (at least 1). */
  readonly tokenCount?: number;
  /** Dual-clip constant c > 1 (Ye et al. 2020): caps the loss of negative-advantage tokens at −A·c; null/absent = off. */
  readonly dualClip?: number | null;
  /** KL estimator of the KL loss (default k3, verl `low_var_kl`). */
  readonly klEstimator?: KlEstimator;
}

/** Loss terms. `T` is `tf.Scalar` here, `number` in the reference. */
export interface PolicyLossTerms<T> {
  /** policy + klCoef·klRef − entropyCoef·entropy: what is minimised. */
  readonly total: T;
  /** PPO-clip surrogate `max(−A·ρ, −A·clip(ρ, 1−ε, 1+ε))` (dual-clipped when on), aggregated. */
  readonly policy: T;
  /** KL to the reference (chosen estimator), aggregated; 0 without a reference. */
  readonly klRef: T;
  /** Entropy of the policy at trained tokens, aggregated. */
  readonly entropy: T;
  /** Token share where the clipped branch was the larger loss (verl `pg_clipfrac`). */
  readonly clipFrac: T;
  /** Token share where the dual clip bound the loss (verl `pg_clipfrac_lower`); 0 when off. */
  readonly dualClipFrac: T;
  /** Token-mean of old logprob − new logprob (verl `ppo_kl`). */
  readonly approxKl: T;
}

/** Validates coefficients; shared with the reference so both reject the same inputs. */
export function validateLossOptions(options: PolicyLossOptions): void {
  if (!(options.clipRatio > 0)) throw InvalidArgumentError.format('clipRatio', `expected > 0, got ${options.clipRatio}`);
  if (!(options.klCoef >= 0)) throw InvalidArgumentError.format('klCoef', `expected ≥ 0, got ${options.klCoef}`);
  if (!Number.isFinite(options.entropyCoef)) {
    throw InvalidArgumentError.format('entropyCoef', `expected a finite number, got ${options.entropyCoef}`);
  }
  if (options.tokenCount !== undefined && !(options.tokenCount > 0)) {
    throw InvalidArgumentError.format('tokenCount', `expected > 0, got ${options.tokenCount}`);
  }
  if (options.dualClip !== undefined && options.dualClip !== null && !(options.dualClip > 1)) {
    throw InvalidArgumentError.format('dualClip', `expected > 1 or null, got ${options.dualClip}`);
  }
}

/**
 * PPO: Schulman et al. 2017, arXiv:1707.06347; dual clip: Ye et al. 2020, arXiv:1912.09729.
 * Shape: [N] per input → scalars.
 *
 * Token-level PPO-clip actor loss with optional dual clip, KL loss and entropy bonus.
 * Differentiable through `logprobs`, `entropy` (and nothing else); tensors in, tensors out.
 * @example
 * const terms = ppoClipLoss({ logprobs, oldLogprobs, advantages, lossMask, entropy, refLogprobs: null },
 *   { clipRatio: 0.2, klCoef: 0, entropyCoef: 0.001, dualClip: 3 });
 * terms.total; // tf.Scalar to minimise
 */
export function ppoClipLoss(input: PolicyLossInput, options: PolicyLossOptions): PolicyLossTerms<tf.Scalar> {
  validateLossOptions(options);
  const n = input.logprobs.shape[0];
  for (const key of ['oldLogprobs', 'advantages', 'lossMask', 'entropy', 'refLogprobs', 'weights'] as const) {
    const t = input[key];
    if (t !== null && t !== undefined && t.shape[0] !== n) {
      throw InvalidArgumentError.format(key, `expected shape [${n}] like logprobs, got [${t.shape.join(', ')}]`);
    }
  }
  return tf.tidy(() => {
    const mask = input.lossMask;
    const denominator =
      options.tokenCount !== undefined ? tf.scalar(options.tokenCount) : tf.maximum(tf.sum(mask), tf.scalar(1));
    const tokenWeights = tf.div(mask, denominator);
    const weights = input.weights ?? tokenWeights;
    const tokenMean = (x: tf.Tensor): tf.Scalar => tf.sum(tf.mul(x, tokenWeights)) as tf.Scalar;
    const aggregate = (x: tf.Tensor): tf.Scalar => tf.sum(tf.mul(x, weights)) as tf.Scalar;

    const logRatio = tf.clipByValue(tf.sub(input.logprobs, input.oldLogprobs), -LOG_RATIO_CLAMP, LOG_RATIO_CLAMP);
    const ratio = tf.exp(logRatio);
    const negAdv = tf.neg(input.advantages);
    const unclipped = tf.mul(negAdv, ratio);
    const clipped = tf.mul(negAdv, tf.clipByValue(ratio, 1 - options.clipRatio, 1 + options.clipRatio));
    let perToken: tf.Tensor = tf.maximum(unclipped, clipped);
    const clipFrac = tokenMean(tf.cast(tf.greater(clipped, unclipped), 'float32'));
    let dualClipFrac = tf.scalar(0);
    const c = options.dualClip ?? null;
    if (c !== null) {
      const bound = tf.mul(negAdv, c);
      const negative = tf.less(input.advantages, 0);
      dualClipFrac = tokenMean(tf.cast(tf.logicalAnd(negative, tf.greater(perToken, bound)), 'float32'));
      perToken = tf.where(negative, tf.minimum(perToken, bound), perToken);
    }
    const policy = aggregate(perToken);
    const approxKl = tokenMean(tf.neg(logRatio));

    const klRef =
      input.refLogprobs === null ? tf.scalar(0) : aggregate(klTensor(options.klEstimator ?? 'k3', input.logprobs, input.refLogprobs));
    const entropy = aggregate(input.entropy);
    const klWeight = input.refLogprobs === null ? 0 : options.klCoef;
    const total = tf.sub(tf.add(policy, tf.mul(klRef, klWeight)), tf.mul(entropy, options.entropyCoef)) as tf.Scalar;
    return { total, policy, klRef, entropy, clipFrac, dualClipFrac, approxKl };
  });
}

/** Per-target tensors of the critic loss, all [N]. */
export interface ValueLossInput {
  /** [N] current value predictions (differentiable). */
  readonly values: tf.Tensor1D;
  /** [N] values predicted before the update (for clipping). */
  readonly oldValues: tf.Tensor1D;
  /** [N] return targets. */
  readonly returns: tf.Tensor1D;
  /** [N] aggregation weights (0 on untrained tokens). */
  readonly weights: tf.Tensor1D;
  /** [N] token-mean weights (`mask / tokenCount`) for the clip fraction. */
  readonly tokenWeights: tf.Tensor1D;
}

/** Value loss terms. */
export interface ValueLossTerms<T> {
  /** `0.5 · agg(max((V − R)², (V_clip − R)²))` (verl `vf_loss`). */
  readonly loss: T;
  /** Token share where the clipped branch was larger (verl `vf_clipfrac`). */
  readonly clipFrac: T;
}

/**
 * Clipped value loss: PPO as in Schulman et al. 2017, arXiv:1707.06347 / OpenAI baselines (verl `compute_value_loss`).
 * Shape: [N] per input → scalars.
 *
 * `V_clip = V_old + clip(V − V_old, −c, c)`; loss `0.5·Σ w·max((V − R)², (V_clip − R)²)`; with
 * `valueClip: null` the plain `0.5·Σ w·(V − R)²`.
 * @example
 * valueLoss({ values, oldValues, returns, weights, tokenWeights }, { valueClip: 0.5 }).loss; // tf.Scalar
 */
export function valueLoss(input: ValueLossInput, options: { readonly valueClip: number | null }): ValueLossTerms<tf.Scalar> {
  if (options.valueClip !== null && !(options.valueClip > 0)) throw InvalidArgumentError.format('valueClip', `expected > 0 or null, got ${options.valueClip}`);
  const n = input.values.shape[0];
  for (const key of ['oldValues', 'returns', 'weights', 'tokenWeights'] as const) {
    if (input[key].shape[0] !== n) throw InvalidArgumentError.format(key, `expected shape [${n}] like values, got [${input[key].shape.join(', ')}]`);
  }
  return tf.tidy(() => {
    const unclipped = tf.square(tf.sub(input.values, input.returns));
    if (options.valueClip === null) {
      return { loss: tf.mul(tf.sum(tf.mul(unclipped, input.weights)), 0.5) as tf.Scalar, clipFrac: tf.scalar(0) };
    }
    const c = options.valueClip;
    const clippedValues = tf.add(input.oldValues, tf.clipByValue(tf.sub(input.values, input.oldValues), -c, c));
    const clipped = tf.square(tf.sub(clippedValues, input.returns));
    const loss = tf.mul(tf.sum(tf.mul(tf.maximum(unclipped, clipped), input.weights)), 0.5) as tf.Scalar;
    const clipFrac = tf.sum(tf.mul(tf.cast(tf.greater(clipped, unclipped), 'float32'), input.tokenWeights)) as tf.Scalar;
    return { loss, clipFrac };
  });
}
