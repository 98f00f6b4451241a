/**
 * Plain-JS reference of {@link ppoClipLoss} (STYLE §2): one readable loop over Float32Arrays, in
 * float64. A test runs both on seeded random inputs and requires agreement within 1e-5.
 */
import { InvalidArgumentError } from '../core/errors.js';
import { KL_CLAMP, LOG_RATIO_CLAMP, type PolicyLossOptions, type PolicyLossTerms, validateLossOptions } from './losses.js';

/** The same per-target inputs as {@link PolicyLossInput}, as arrays, all [N]. */
export interface PolicyLossArrays {
  readonly logprobs: Float32Array;
  readonly oldLogprobs: Float32Array;
  readonly advantages: Float32Array;
  readonly lossMask: Float32Array;
  readonly entropy: Float32Array;
  readonly refLogprobs: Float32Array | null;
}

const clamp = (x: number, lo: number, hi: number): number => Math.min(hi, Math.max(lo, x));

/**
 * PPO: Schulman et al. 2017, arXiv:1707.06347; k3 KL: Schulman 2020 (verl `low_var_kl`).
 * Shape: [N] per input → numbers.
 *
 * PPO-clip + k3 KL + entropy, token-mean over trained tokens, as a plain loop.
 * @example
 * ppoClipLossReference({ logprobs: Float32Array.of(-1), oldLogprobs: Float32Array.of(-1),
 *   advantages: Float32Array.of(2), lossMask: Float32Array.of(1), entropy: Float32Array.of(0.5), refLogprobs: null },
 *   { clipRatio: 0.2, klCoef: 0, entropyCoef: 0 }).policy; // -2 (ratio 1, loss −A)
 */
export function ppoClipLossReference(input: PolicyLossArrays, options: PolicyLossOptions): PolicyLossTerms<number> {
  validateLossOptions(options);
  const n = input.logprobs.length;
  for (const key of ['oldLogprobs', 'advantages', 'lossMask', 'entropy', 'refLogprobs'] as const) {
    const a = input[key];
    if (a !== null && a.length !== n) throw InvalidArgumentError.format(key, `expected length ${n}, got ${a.length}`);
  }
  let trained = 0;
  let policy = 0;
  let clipped = 0;
  let approxKl = 0;
  let klRef = 0;
  let entropy = 0;
  for (let i = 0; i < n; i++) {
    const m = input.lossMask[i];
    trained += m;
    const logRatio = clamp(input.logprobs[i] - input.oldLogprobs[i], -LOG_RATIO_CLAMP, LOG_RATIO_CLAMP);
    const ratio = Math.exp(logRatio);
    const a = input.advantages[i];
    const lossUnclipped = -a * ratio;
    const lossClipped = -a * clamp(ratio, 1 - options.clipRatio, 1 + options.clipRatio);
    policy += m * Math.max(lossUnclipped, lossClipped);
    clipped += m * (lossClipped > lossUnclipped ? 1 : 0);
    approxKl += m * -logRatio;
    entropy += m * input.entropy[i];
    if (input.refLogprobs !== null) {
      const diff = clamp(input.refLogprobs[i] - input.logprobs[i], -LOG_RATIO_CLAMP, LOG_RATIO_CLAMP);
      klRef += m * clamp(Math.exp(diff) - diff - 1, -KL_CLAMP, KL_CLAMP);
    }
  }
  const denominator = options.tokenCount ?? Math.max(trained, 1);
  const klWeight = input.refLogprobs === null ? 0 : options.klCoef;
  const terms = {
    policy: policy / denominator,
    clipFrac: clipped / denominator,
    approxKl: approxKl / denominator,
    klRef: klRef / denominator,
    entropy: entropy / denominator,
  };
  return { ...terms, total: terms.policy + klWeight * terms.klRef - options.entropyCoef * terms.entropy };
}
