/**
 * Plain-JS reference of {@link offPolicyLoss}: one readable loop in float64, the loss
 * per token as the papers write it, then `Σ weight·loss`. Also the per-token importance weights
 * alone, for diagnostics and hand-worked tests.
 */
import { InvalidArgumentError } from '../core/errors.js';
import { klValue, LOG_RATIO_CLAMP } from './kl.js';
import type { PolicyLossOptions } from './losses.js';
import { validateLossOptions } from './losses.js';
import type { PolicyLossArrays } from './losses-reference.js';
import { type OffPolicyCorrection, type OffPolicyTerms, validateCorrection } from './off-policy.js';

const clamp = (x: number, lo: number, hi: number): number => Math.min(hi, Math.max(lo, x));

/**
 * TIS: Espeholt et al. 2018, arXiv:1802.01561.
 * Shape: [N] log-probs → [N] weights.
 *
 * Truncated importance weights `min(exp(target − behaviour), C)` (log-ratio clamped to ±20 as in
 * the losses).
 * @example truncatedImportanceWeights(Float32Array.of(0), Float32Array.of(Math.log(0.25)), 2); // [2]: raw 4, capped at 2
 */
export function truncatedImportanceWeights(targetLogprobs: Float32Array, behaviourLogprobs: Float32Array, cap: number): Float64Array {
  if (!(cap > 0)) throw InvalidArgumentError.format('cap', `expected > 0, got ${cap}`);
  if (targetLogprobs.length !== behaviourLogprobs.length) {
    throw InvalidArgumentError.format('behaviourLogprobs', `expected length ${targetLogprobs.length}, got ${behaviourLogprobs.length}`);
  }
  return Float64Array.from(targetLogprobs, (t, i) => Math.min(Math.exp(clamp(t - behaviourLogprobs[i], -LOG_RATIO_CLAMP, LOG_RATIO_CLAMP)), cap));
}

/**
 * TIS: Espeholt et al. 2018, arXiv:1802.01561; decoupled PPO: Fu et al. 2025, arXiv:2505.24298.
 * Shape: [N] per input → numbers.
 *
 * Same terms as {@link offPolicyLoss}; `oldLogprobs` are the behaviour log-probs μ.
 * @example
 * offPolicyLossReference({ logprobs: Float32Array.of(-1), oldLogprobs: Float32Array.of(-2), proxLogprobs: null,
 *   advantages: Float32Array.of(1), lossMask: Float32Array.of(1), entropy: Float32Array.of(0), refLogprobs: null },
 *   { clipRatio: 0.2, klCoef: 0, entropyCoef: 0 }, { kind: 'tis', cap: 2 }).policy; // −2 (ρ = e ≈ 2.72, capped at 2)
 */
export function offPolicyLossReference(
  input: PolicyLossArrays & { readonly proxLogprobs: Float32Array | null },
  options: PolicyLossOptions,
  correction: OffPolicyCorrection,
): OffPolicyTerms<number> {
  validateLossOptions(options);
  validateCorrection(correction);
  if (correction.kind === 'none') throw InvalidArgumentError.format('offPolicy.correction', "expected 'tis' or 'decoupled'");
  const prox = input.proxLogprobs;
  if (correction.kind === 'decoupled' && prox === null) throw InvalidArgumentError.format('proxLogprobs', 'the decoupled objective needs the proximal log-probs');
  const n = input.logprobs.length;
  let trained = 0;
  for (let i = 0; i < n; i++) trained += input.lossMask[i];
  const denominator = options.tokenCount ?? Math.max(trained, 1);
  const cap = correction.cap;
  const eps = options.clipRatio;
  const c = options.dualClip ?? null;
  const t = { policy: 0, clipFrac: 0, dualClipFrac: 0, approxKl: 0, klRef: 0, entropy: 0, isWeight: 0, truncFrac: 0 };
  for (let i = 0; i < n; i++) {
    const tokenWeight = input.lossMask[i] / denominator;
    const w = input.weights ? input.weights[i] : tokenWeight;
    const a = input.advantages[i];
    const logp = input.logprobs[i];
    const mu = input.oldLogprobs[i];
    let loss: number;
    let raw: number;
    if (correction.kind === 'tis') {
      raw = Math.exp(clamp(logp - mu, -LOG_RATIO_CLAMP, LOG_RATIO_CLAMP));
      loss = -a * Math.min(raw, cap);
      t.approxKl += tokenWeight * clamp(mu - logp, -LOG_RATIO_CLAMP, LOG_RATIO_CLAMP);
    } else {
      const p = (prox as Float32Array)[i];
      raw = Math.exp(clamp(p - mu, -LOG_RATIO_CLAMP, LOG_RATIO_CLAMP));
      const logRatio = clamp(logp - p, -LOG_RATIO_CLAMP, LOG_RATIO_CLAMP);
      const r = Math.exp(logRatio);
      const unclipped = -a * r;
      const clipped = -a * clamp(r, 1 - eps, 1 + eps);
      let ppo = Math.max(unclipped, clipped);
      if (clipped > unclipped) t.clipFrac += tokenWeight;
      if (c !== null && a < 0) {
        if (ppo > -a * c) t.dualClipFrac += tokenWeight;
        ppo = Math.min(ppo, -a * c);
      }
      loss = Math.min(raw, cap) * ppo;
      t.approxKl += tokenWeight * -logRatio;
    }
    t.isWeight += tokenWeight * Math.min(raw, cap);
    if (raw > cap) t.truncFrac += tokenWeight;
    t.policy += w * loss;
    t.entropy += w * input.entropy[i];
    if (input.refLogprobs !== null) t.klRef += w * klValue(options.klEstimator ?? 'k3', logp, input.refLogprobs[i]);
  }
  const klWeight = input.refLogprobs === null ? 0 : options.klCoef;
  return { ...t, total: t.policy + klWeight * t.klRef - options.entropyCoef * t.entropy };
}
