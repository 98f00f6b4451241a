/**
 * Plain-JS references of {@link ppoClipLoss} and {@link valueLoss}: one readable loop
 * over Float32Arrays, in float64. A test runs both on seeded random inputs and requires agreement
 * within 1e-5.
 */
import { InvalidArgumentError } from '../core/errors.js';
import { klValue, LOG_RATIO_CLAMP } from './kl.js';
import type { PolicyLossOptions, PolicyLossTerms, ValueLossTerms } from './losses.js';
import { validateLossOptions } from './losses.js';

/** The same per-target inputs as {@link PolicyLossInput}, as arrays, all [N]. */
export interface PolicyLossArrays {
  readonly logprobs: Float32Array;
  readonly oldLogprobs: Float32Array;
  readonly advantages: Float32Array;
  readonly lossMask: Float32Array;
  readonly entropy: Float32Array;
  readonly refLogprobs: Float32Array | null;
  /** Aggregation weights; default token-mean. */
  readonly weights?: Float32Array;
}

const clamp = (x: number, lo: number, hi: number): number => Math.min(hi, Math.max(lo, x));

/**
 * PPO: Schulman et al. 2017, arXiv:1707.06347; dual clip: Ye et al. 2020, arXiv:1912.09729.
 * Shape: [N] per input → numbers.
 *
 * PPO-clip (+ dual clip) + KL + entropy, as a plain loop: per token, the loss as the papers write
 * it, then `Σ weight·loss`.
 * @example
 * ppoClipLossReference({ logprobs: Float32Array.of(-1), oldLogprobs: Float32Array.of(-1),
 *   advantages: Float32Array.of(2), lossMask: Float32Array.of(1), entropy: Float32Array.of(0.5), refLogprobs: null },
 *   { clipRatio: 0.2, klCoef: 0, entropyCoef: 0 }).policy; // -2 (ratio 1, loss −A)
 */
export function ppoClipLossReference(input: PolicyLossArrays, options: PolicyLossOptions): PolicyLossTerms<number> {
  validateLossOptions(options);
  const n = input.logprobs.length;
  for (const key of ['oldLogprobs', 'advantages', 'lossMask', 'entropy', 'refLogprobs', 'weights'] as const) {
    const a = input[key];
    if (a !== null && a !== undefined && a.length !== n) throw InvalidArgumentError.format(key, `expected length ${n}, got ${a.length}`);
  }
  let trained = 0;
  for (let i = 0; i < n; i++) trained += input.lossMask[i];
  const denominator = options.tokenCount ?? Math.max(trained, 1);
  const c = options.dualClip ?? null;
  let policy = 0;
  let clipped = 0;
  let dualClipped = 0;
  let approxKl = 0;
  let klRef = 0;
  let entropy = 0;
  for (let i = 0; i < n; i++) {
    const m = input.lossMask[i];
    const tokenWeight = m / denominator;
    const w = input.weights ? input.weights[i] : tokenWeight;
    const logRatio = clamp(input.logprobs[i] - input.oldLogprobs[i], -LOG_RATIO_CLAMP, LOG_RATIO_CLAMP);
    const ratio = Math.exp(logRatio);
    const a = input.advantages[i];
    const lossUnclipped = -a * ratio;
    const lossClipped = -a * clamp(ratio, 1 - options.clipRatio, 1 + options.clipRatio);
    let loss = Math.max(lossUnclipped, lossClipped);
    clipped += tokenWeight * (lossClipped > lossUnclipped ? 1 : 0);
    if (c !== null && a < 0) {
      if (loss > -a * c) dualClipped += tokenWeight;
      loss = Math.min(loss, -a * c);
    }
    policy += w * loss;
    approxKl += tokenWeight * -logRatio;
    entropy += w * input.entropy[i];
    if (input.refLogprobs !== null) klRef += w * klValue(options.klEstimator ?? 'k3', input.logprobs[i], input.refLogprobs[i]);
  }
  const klWeight = input.refLogprobs === null ? 0 : options.klCoef;
  const terms = { policy, clipFrac: clipped, dualClipFrac: dualClipped, approxKl, klRef, entropy };
  return { ...terms, total: terms.policy + klWeight * terms.klRef - options.entropyCoef * terms.entropy };
}

/**
 * Clipped value loss (PPO, arXiv:1707.06347), plain loop; see {@link valueLoss}.
 * Shape: [N] per input → numbers.
 * @example
 * valueLossReference({ values: Float32Array.of(2), oldValues: Float32Array.of(0), returns: Float32Array.of(0),
 *   weights: Float32Array.of(1), tokenWeights: Float32Array.of(1) }, { valueClip: 0.5 }).loss; // 0.5 · max(4, 0.25) = 2
 */
export function valueLossReference(
  input: { values: Float32Array; oldValues: Float32Array; returns: Float32Array; weights: Float32Array; tokenWeights: Float32Array },
  options: { readonly valueClip: number | null },
): ValueLossTerms<number> {
  let loss = 0;
  let clipFrac = 0;
  for (let i = 0; i < input.values.length; i++) {
    const v = input.values[i];
    const r = input.returns[i];
    const unclipped = (v - r) ** 2;
    let worst = unclipped;
    if (options.valueClip !== null) {
      const vClip = input.oldValues[i] + clamp(v - input.oldValues[i], -options.valueClip, options.valueClip);
      const clipped = (vClip - r) ** 2;
      if (clipped > unclipped) clipFrac += input.tokenWeights[i];
      worst = Math.max(unclipped, clipped);
    }
    loss += 0.5 * input.weights[i] * worst;
  }
  return { loss, clipFrac };
}
