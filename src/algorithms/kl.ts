/**
 * KL to the frozen reference policy: the k1/k2/k3 estimators (as a loss term or as a per-token
 * penalty in the reward), and the fixed or adaptive coefficient.
 *
 * With `d = logp − ref` per sampled token: k1 = d (verl `kl`), k2 = d²/2 (verl `mse`),
 * k3 = exp(−d) + d − 1 (verl `low_var_kl`). The difference is clamped to ±20 before `exp`, and
 * k3 to [−10, 10], as verl does, so one wild token cannot overflow float32.
 */
import { InvalidArgumentError } from '../core/errors.js';
import { tf } from '../backend/tf.js';

/** Which KL estimator. */
export type KlEstimator = 'k1' | 'k2' | 'k3';

/** verl clamps the log-ratio before `exp` so a wild token cannot overflow float32. */
export const LOG_RATIO_CLAMP = 20;
/** k3 KL per token is clamped to [−KL_CLAMP, KL_CLAMP] (verl `low_var_kl`). */
export const KL_CLAMP = 10;

const clamp = (x: number, lo: number, hi: number): number => Math.min(hi, Math.max(lo, x));

/**
 * KL estimators k1/k2/k3: Schulman 2020, "Approximating KL divergence" (blog, no arXiv id).
 * Shape: numbers → number (one token).
 * @example klValue('k3', -1, -1.5); // exp(-0.5) + 0.5 - 1 ≈ 0.1065
 */
export function klValue(estimator: KlEstimator, logprob: number, refLogprob: number): number {
  const d = clamp(logprob - refLogprob, -LOG_RATIO_CLAMP, LOG_RATIO_CLAMP);
  if (estimator === 'k1') return d;
  if (estimator === 'k2') return 0.5 * d * d;
  return clamp(Math.exp(-d) + d - 1, -KL_CLAMP, KL_CLAMP);
}

/**
 * The same estimators on tensors (differentiable through `logprobs`).
 * Shape: [N], [N] → [N].
 * @example klTensor('k2', tf.tensor1d([-1]), tf.tensor1d([-2])); // [0.5]
 */
export function klTensor(estimator: KlEstimator, logprobs: tf.Tensor1D, refLogprobs: tf.Tensor1D): tf.Tensor1D {
  return tf.tidy(() => {
    const d = tf.clipByValue(tf.sub(logprobs, refLogprobs), -LOG_RATIO_CLAMP, LOG_RATIO_CLAMP);
    if (estimator === 'k1') return d as tf.Tensor1D;
    if (estimator === 'k2') return tf.mul(tf.square(d), 0.5) as tf.Tensor1D;
    return tf.clipByValue(tf.sub(tf.add(tf.exp(tf.neg(d)), d), 1), -KL_CLAMP, KL_CLAMP) as tf.Tensor1D;
  });
}

/**
 * KL in the reward: Ziegler et al. 2019, arXiv:1909.08593 (verl `apply_kl_penalty`).
 * Shape: rewards, logprobs, refLogprobs, mask [N] → { rewards [N], meanKl }.
 *
 * `r_t − β·kl_t` on agent tokens (mask 1) only, so masked tokens keep reward 0. `logprobs` are
 * the behaviour (rollout) log-probs, as verl uses `old_log_probs`. `meanKl` is the token-mean KL
 * over agent tokens (for the adaptive controller and the `kl/reward` metric).
 * @example
 * klPenalizedRewards({ rewards: Float32Array.of(0, 1), logprobs: Float32Array.of(-1, -1),
 *   refLogprobs: Float32Array.of(-2, -1), mask: Float32Array.of(1, 1), coef: 0.5, estimator: 'k1' }).rewards; // [-0.5, 1]
 */
export function klPenalizedRewards(input: {
  readonly rewards: Float32Array;
  readonly logprobs: Float32Array;
  readonly refLogprobs: Float32Array;
  readonly mask: Float32Array;
  readonly coef: number;
  readonly estimator: KlEstimator;
}): { rewards: Float32Array; meanKl: number } {
  const n = input.rewards.length;
  for (const key of ['logprobs', 'refLogprobs', 'mask'] as const) {
    if (input[key].length !== n) throw InvalidArgumentError.format(key, `expected ${n} entries like rewards, got ${input[key].length}`);
  }
  if (!(input.coef >= 0)) throw InvalidArgumentError.format('coef', `expected ≥ 0, got ${input.coef}`);
  const rewards = new Float32Array(n);
  let count = 0;
  let sum = 0;
  for (let i = 0; i < n; i++) {
    const m = input.mask[i];
    const kl = m === 0 ? 0 : klValue(input.estimator, input.logprobs[i], input.refLogprobs[i]);
    rewards[i] = input.rewards[i] - input.coef * m * kl;
    count += m;
    sum += m * kl;
  }
  return { rewards, meanKl: count > 0 ? sum / count : 0 };
}

/** Options of the KL coefficient. `target: null` keeps it fixed. */
export interface KlControlOptions {
  /** Initial (or fixed) coefficient β. */
  readonly coef: number;
  /** Target KL per token for the adaptive controller; null = fixed coefficient. */
  readonly target: number | null;
  /** Horizon of the adaptive controller, in samples (verl default 10000). */
  readonly horizon: number;
}

/**
 * Adaptive KL coefficient: Ziegler et al. 2019, arXiv:1909.08593 (verl `AdaptiveKLController`).
 * Shape: scalar state.
 *
 * After each step, `β ← β·(1 + clip(kl/target − 1, −0.2, 0.2)·n/horizon)` with `n` the samples of
 * the step; with `target: null` β stays fixed (verl `FixedKLController`).
 * @example
 * const c = new KlController({ coef: 0.1, target: 0.01, horizon: 100 });
 * c.update(0.02, 10); c.coef; // 0.1 · (1 + 0.2 · 10/100) = 0.102
 */
export class KlController {
  coef: number;
  private readonly options: KlControlOptions;

  constructor(options: KlControlOptions) {
    if (!(options.coef >= 0)) throw InvalidArgumentError.format('coef', `expected ≥ 0, got ${options.coef}`);
    if (options.target !== null && !(options.target > 0)) throw InvalidArgumentError.format('target', `expected > 0 or null, got ${options.target}`);
    if (!(options.horizon > 0)) throw InvalidArgumentError.format('horizon', `expected > 0, got ${options.horizon}`);
    this.options = options;
    this.coef = options.coef;
  }

  /** Folds one step's measured KL (token-mean) over `samples` samples into the coefficient. */
  update(currentKl: number, samples: number): void {
    const { target, horizon } = this.options;
    if (target === null || !Number.isFinite(currentKl)) return;
    const error = clamp(currentKl / target - 1, -0.2, 0.2);
    this.coef *= 1 + (error * samples) / horizon;
  }
}
