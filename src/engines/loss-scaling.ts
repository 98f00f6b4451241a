/**
 * Making turnwise's loss aggregation (`algorithm.lossAgg`) come out as configured under a server's
 * own reduction rule, by what is sent.
 *
 * turnwise wants the gradient of `Σ_k a_k · ℓ_k`, with `a_k` the aggregation weight of trained
 * token k (`src/algorithms/aggregation.ts`: token-mean, seq-mean-token-mean, …). The engine's
 * per-token losses (`importance_sampling`: −w·r·A; `ppo`: −w·min(r·A, clip(r)·A)) are positively
 * homogeneous in the advantage A, so scaling A by s_k > 0 scales ℓ_k by s_k. Weights stay the
 * 0/1 loss mask (SkyRL's rule divides each sequence by its weight sum, so scaling weights would
 * cancel out), and:
 * - `sum` (Tinker): the server minimises `Σ_d Σ_t ℓ`, so s_k = a_k;
 * - `sequence-mean` (SkyRL tx): the server minimises `(1/D) Σ_d Σ_t ℓ / max(W_d, 1e-9)` over the D
 *   data of the optimizer step, W_d the weight sum of datum d, so s_k = a_k · D · max(W_d, 1e-9).
 */
import type { LossReduction } from './engine.js';

/** SkyRL's floor on a sequence's weight sum. */
const MIN_WEIGHT_SUM = 1e-9;

/**
 * The advantage multiplier of a trained token under `rule`.
 * @example reductionScale('sequence-mean', 0.25, 4, 3) // 0.25 · 4 · 3 = 3
 */
export function reductionScale(rule: LossReduction, aggregationWeight: number, dataInStep: number, datumWeightSum: number): number {
  return rule === 'sum' ? aggregationWeight : aggregationWeight * dataInStep * Math.max(datumWeightSum, MIN_WEIGHT_SUM);
}

/**
 * The objective the server minimised, from its per-token losses: what `Σ_k a_k · ℓ_k` came out as.
 * Shape: losses [data][n], weightSums [data] → a scalar.
 * @example reducedLoss('sum', [Float32Array.of(0.5, 0.25)], [2]) // 0.75
 */
export function reducedLoss(rule: LossReduction, losses: readonly Float32Array[], weightSums: readonly number[]): number {
  let total = 0;
  losses.forEach((loss, d) => {
    let sum = 0;
    for (const x of loss) sum += x;
    total += rule === 'sum' ? sum : sum / Math.max(weightSums[d] ?? 0, MIN_WEIGHT_SUM);
  });
  return rule === 'sum' || losses.length === 0 ? total : total / losses.length;
}
