/**
 * Return-based, critic-free estimators: REINFORCE++ (returns whitened over the global batch) and
 * plain REINFORCE with a running baseline. Both compute per-token discounted returns over agent
 * tokens only, environment tokens passing the return through (see {@link discountedReturns}).
 */
import { InvalidArgumentError } from '../core/errors.js';
import {
  type AdvantageInput,
  type AdvantageOutput,
  checkAdvantageInput,
  checkRange,
  discountedReturns,
  maskedWhiten,
  type ReinforceOptions,
  type ReinforcePlusPlusOptions,
} from './advantage-input.js';

/**
 * REINFORCE++: Hu 2025, arXiv:2501.03262 (verl `compute_reinforce_plus_plus_outcome_advantage`).
 * Shape: rewards [B·T] → advantages, returns [B·T].
 *
 * `G_t = r_t + γ·G_next` over agent tokens (the token-level KL penalty is already in `r_t` when
 * the KL is placed in the reward), then the advantages are the returns whitened over every agent
 * token of the batch (a global baseline and scale, no critic, no groups).
 * @example
 * reinforcePlusPlusAdvantages({ rewards: Float32Array.of(0, 1, 0, 0), seqLen: 2, groupIds: ['a', 'b'],
 *   options: { name: 'reinforcePlusPlus', gamma: 1 } }).advantages; // ≈ [0.866, 0.866, -0.866, -0.866]
 */
export function reinforcePlusPlusAdvantages(input: AdvantageInput<ReinforcePlusPlusOptions>): AdvantageOutput {
  const { rows, seqLen, rewards, mask } = checkAdvantageInput(input);
  checkRange('options.gamma', input.options.gamma, 0, 1);
  const returns = discountedReturns(rewards, mask, rows, seqLen, input.options.gamma);
  return { advantages: maskedWhiten(returns, mask), returns };
}

/**
 * REINFORCE with a baseline: Williams 1992, Machine Learning 8:229–256 (no arXiv id).
 * Shape: rewards [B·T] → advantages, returns [B·T].
 *
 * `A_t = G_t − b`, where `b` is a running mean of returns kept across batches in `state`: the
 * first batch uses its own token-mean return, later batches the baseline from before them, then
 * `b ← m·b + (1 − m)·mean(G)` (m = `baselineMomentum`). The new baseline comes back in `state`.
 * @example
 * const out = reinforceAdvantages({ rewards: Float32Array.of(1, 0), groupIds: ['a', 'b'],
 *   options: { name: 'reinforce', gamma: 1, baselineMomentum: 0.9 } });
 * out.advantages; // [0.5, -0.5]; out.state // { runningBaseline: 0.5, batches: 1 }
 */
export function reinforceAdvantages(input: AdvantageInput<ReinforceOptions>): AdvantageOutput {
  const { rows, seqLen, rewards, mask } = checkAdvantageInput(input);
  const { gamma, baselineMomentum } = input.options;
  checkRange('options.gamma', gamma, 0, 1);
  checkRange('options.baselineMomentum', baselineMomentum, 0, 1);
  const previous = input.state;
  if (previous !== undefined && !(Number.isFinite(previous.runningBaseline) && previous.batches >= 0)) {
    throw InvalidArgumentError.format('state', `expected a finite running baseline and batches ≥ 0, got ${JSON.stringify(previous)}`);
  }
  const returns = discountedReturns(rewards, mask, rows, seqLen, gamma);
  let count = 0;
  let sum = 0;
  for (let i = 0; i < returns.length; i++) {
    count += mask[i];
    sum += mask[i] * returns[i];
  }
  if (count === 0) return { advantages: new Float32Array(returns.length), returns, ...(previous ? { state: previous } : {}) };
  const mean = sum / count;
  const fresh = previous === undefined || previous.batches === 0;
  const baseline = fresh ? mean : previous.runningBaseline;
  const advantages = new Float32Array(returns.length);
  for (let i = 0; i < returns.length; i++) advantages[i] = mask[i] * (returns[i] - baseline);
  const runningBaseline = fresh ? mean : baselineMomentum * baseline + (1 - baselineMomentum) * mean;
  return { advantages, returns, state: { runningBaseline, batches: (previous?.batches ?? 0) + 1 } };
}
