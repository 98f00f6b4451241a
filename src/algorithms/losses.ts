/**
 * The actor loss as pure tfjs functions: PPO-clip surrogate, k3 KL to a frozen reference and an
 * entropy bonus, each a masked token-mean over trained (action, non-forced) tokens, as in verl's
 * `dp_actor.update_policy`. `losses-reference.ts` holds the same arithmetic in plain JS; a test
 * keeps the two equal.
 *
 * Token-mean normaliser: by default the number of trained tokens in this call. When a step is
 * split into micro-batches, pass `tokenCount` = trained tokens of the whole (mini-)batch, so the
 * sum of the micro-batch losses (and of their gradients) equals the loss of the whole batch.
 */
import { InvalidArgumentError } from '../core/errors.js';
import { tf } from '../models/backend/tf.js';

/** verl clamps the log-ratio before `exp` so a wild token cannot overflow float32. */
export const LOG_RATIO_CLAMP = 20;
/** k3 KL per token is clamped to [−KL_CLAMP, KL_CLAMP] (verl `low_var_kl`). */
export const KL_CLAMP = 10;

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
  /** [N] log-probs under the frozen reference policy, or null when there is no KL term. */
  readonly refLogprobs: tf.Tensor1D | null;
}

/** Loss coefficients. */
export interface PolicyLossOptions {
  /** PPO clip range ε: the ratio is clipped to [1 − ε, 1 + ε] (verl: 0.2). */
  readonly clipRatio: number;
  /** Weight of the k3 KL to the reference (verl scripts: 0.001). Ignored when `refLogprobs` is null. */
  readonly klCoef: number;
  /** Weight of the entropy bonus (verl default: 0.001). */
  readonly entropyCoef: number;
  /** Token-mean denominator; default: trained tokens in this input (at least 1). */
  readonly tokenCount?: number;
}

/** Loss terms, all token-means over trained tokens. `T` is `tf.Scalar` here, `number` in the reference. */
export interface PolicyLossTerms<T> {
  /** policy + klCoef·klRef − entropyCoef·entropy: what is minimised. */
  readonly total: T;
  /** PPO-clip surrogate `max(−A·ρ, −A·clip(ρ, 1−ε, 1+ε))`. */
  readonly policy: T;
  /** k3 KL to the reference, `exp(ref − logp) − (ref − logp) − 1` clamped to [−10, 10]; 0 without a reference. */
  readonly klRef: T;
  /** Entropy of the policy at trained tokens. */
  readonly entropy: T;
  /** Share of trained tokens where the clipped branch was the larger loss. */
  readonly clipFrac: T;
  /** old logprob − new logprob (verl `ppo_kl`). */
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
}

/**
 * k3 KL: Schulman 2020, "Approximating KL divergence" (blog, no arXiv id); verl `low_var_kl`.
 * Shape: [N], [N] → [N].
 *
 * Per token `exp(ref − logp) − (ref − logp) − 1`, with the difference clamped to ±20 before
 * `exp` (so the gradient stays finite) and the result clamped to [−10, 10], as verl does.
 * @example
 * k3Kl(tf.tensor1d([-1]), tf.tensor1d([-1.5])); // exp(-0.5) + 0.5 - 1 ≈ 0.1065
 */
export function k3Kl(logprobs: tf.Tensor1D, refLogprobs: tf.Tensor1D): tf.Tensor1D {
  return tf.tidy(() => {
    const diff = tf.clipByValue(tf.sub(refLogprobs, logprobs), -LOG_RATIO_CLAMP, LOG_RATIO_CLAMP);
    const kl = tf.sub(tf.sub(tf.exp(diff), diff), 1);
    return tf.clipByValue(kl, -KL_CLAMP, KL_CLAMP) as tf.Tensor1D;
  });
}

/**
 * PPO: Schulman et al. 2017, arXiv:1707.06347; token-mean as in verl / DAPO (arXiv:2503.14476).
 * Shape: [N] per input → scalars.
 *
 * Token-level PPO-clip actor loss with optional k3 KL and entropy bonus.
 * Differentiable through `logprobs`, `entropy` (and nothing else); tensors in, tensors out.
 * @example
 * const terms = ppoClipLoss({ logprobs, oldLogprobs, advantages, lossMask, entropy, refLogprobs: null },
 *   { clipRatio: 0.2, klCoef: 0, entropyCoef: 0.001 });
 * terms.total; // tf.Scalar to minimise
 */
export function ppoClipLoss(input: PolicyLossInput, options: PolicyLossOptions): PolicyLossTerms<tf.Scalar> {
  validateLossOptions(options);
  const n = input.logprobs.shape[0];
  for (const key of ['oldLogprobs', 'advantages', 'lossMask', 'entropy', 'refLogprobs'] as const) {
    const t = input[key];
    if (t !== null && t.shape[0] !== n) {
      throw InvalidArgumentError.format(key, `expected shape [${n}] like logprobs, got [${t.shape.join(', ')}]`);
    }
  }
  return tf.tidy(() => {
    const mask = input.lossMask;
    const denominator =
      options.tokenCount !== undefined ? tf.scalar(options.tokenCount) : tf.maximum(tf.sum(mask), tf.scalar(1));
    const maskedMean = (x: tf.Tensor): tf.Scalar => tf.div(tf.sum(tf.mul(x, mask)), denominator) as tf.Scalar;

    const logRatio = tf.clipByValue(tf.sub(input.logprobs, input.oldLogprobs), -LOG_RATIO_CLAMP, LOG_RATIO_CLAMP);
    const ratio = tf.exp(logRatio);
    const negAdv = tf.neg(input.advantages);
    const unclipped = tf.mul(negAdv, ratio);
    const clipped = tf.mul(negAdv, tf.clipByValue(ratio, 1 - options.clipRatio, 1 + options.clipRatio));
    const policy = maskedMean(tf.maximum(unclipped, clipped));
    const clipFrac = maskedMean(tf.cast(tf.greater(clipped, unclipped), 'float32'));
    const approxKl = maskedMean(tf.neg(logRatio));

    const klRef = input.refLogprobs === null ? tf.scalar(0) : maskedMean(k3Kl(input.logprobs, input.refLogprobs));
    const entropy = maskedMean(input.entropy);
    const klWeight = input.refLogprobs === null ? 0 : options.klCoef;
    const total = tf.sub(tf.add(policy, tf.mul(klRef, klWeight)), tf.mul(entropy, options.entropyCoef)) as tf.Scalar;
    return { total, policy, klRef, entropy, clipFrac, approxKl };
  });
}
