/**
 * Loss aggregation modes (verl `agg_loss`, `loss_agg_mode`) as per-token weights, so that a
 * (mini-)batch cut into micro-batches still sums to exactly the aggregate of the whole batch.
 *
 * A "sequence" is one trajectory: all its agent tokens over all its turns.
 */
import { InvalidArgumentError } from '../core/errors.js';

/** How per-token losses are reduced to one number. */
export type LossAggregation = 'token-mean' | 'seq-mean-token-sum' | 'seq-mean-token-mean';

/** The valid aggregation modes, for error messages and the config schema. */
export const LOSS_AGGREGATIONS = ['token-mean', 'seq-mean-token-sum', 'seq-mean-token-mean'] as const satisfies readonly LossAggregation[];

/**
 * Aggregation weights: token-mean (DAPO, Yu et al. 2025, arXiv:2503.14476); seq-mean-token-mean
 * (GRPO as published, arXiv:2402.03300); seq-mean-token-sum (Dr. GRPO, arXiv:2503.20783, without its constant).
 * Shape: mask [N], sequenceIds [N] → weights [N], with `Σ weights·loss` the aggregate.
 *
 * token-mean: `m / Σm`; seq-mean-token-sum: `m / S`; seq-mean-token-mean: `m / (S·n_s)`, where S
 * counts sequences with at least one trained token and n_s is sequence s's trained tokens.
 * @example
 * aggregationWeights(Float32Array.of(1, 1, 1), Int32Array.of(0, 0, 1), 'seq-mean-token-mean'); // [0.25, 0.25, 0.5]
 */
export function aggregationWeights(mask: Float32Array, sequenceIds: Int32Array, mode: LossAggregation): Float32Array {
  if (sequenceIds.length !== mask.length) throw InvalidArgumentError.format('sequenceIds', `expected ${mask.length} entries like mask, got ${sequenceIds.length}`);
  if (!LOSS_AGGREGATIONS.includes(mode)) throw InvalidArgumentError.format('mode', `unknown loss aggregation '${mode}'; valid: ${LOSS_AGGREGATIONS.join(', ')}`);
  const perSequence = new Map<number, number>();
  let tokens = 0;
  for (let i = 0; i < mask.length; i++) {
    if (mask[i] === 0) continue;
    tokens += mask[i];
    perSequence.set(sequenceIds[i], (perSequence.get(sequenceIds[i]) ?? 0) + mask[i]);
  }
  const sequences = perSequence.size;
  const weights = new Float32Array(mask.length);
  for (let i = 0; i < mask.length; i++) {
    if (mask[i] === 0) continue;
    if (mode === 'token-mean') weights[i] = mask[i] / tokens;
    else if (mode === 'seq-mean-token-sum') weights[i] = mask[i] / sequences;
    else weights[i] = mask[i] / (sequences * (perSequence.get(sequenceIds[i]) ?? 1));
  }
  return weights;
}
