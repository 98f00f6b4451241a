/**
 * Picking one token from a row of logits on the CPU, under the same masked, temperature-scaled
 * distribution that `TransformerModel.forwardTrain` scores: `log_softmax(logits / T)` restricted
 * to the allowed ids. The recorded log-prob is always under that distribution (not the top-p
 * truncated one), so the PPO ratio is exactly 1 before the first update when topP = 1.
 */

/** A chosen token and its log-prob under the masked, temperature-scaled distribution. */
export interface TokenChoice {
  readonly tokenId: number;
  readonly logprob: number;
}

/**
 * Log-probs of the candidate ids under `softmax(logits / temperature)` over the candidates only.
 * @example maskedLogProbs(new Float32Array([1, 2, 3]), new Int32Array([0, 2]), 1) // [-2.127, -0.127]
 */
export function maskedLogProbs(logits: Float32Array, candidates: Int32Array, temperature: number): Float64Array {
  const out = new Float64Array(candidates.length);
  let max = Number.NEGATIVE_INFINITY;
  for (let j = 0; j < candidates.length; j++) {
    out[j] = logits[candidates[j]] / temperature;
    if (out[j] > max) max = out[j];
  }
  let sum = 0;
  for (let j = 0; j < candidates.length; j++) sum += Math.exp(out[j] - max);
  const lse = max + Math.log(sum);
  for (let j = 0; j < candidates.length; j++) out[j] -= lse;
  return out;
}

/**
 * Samples from the masked distribution with nucleus (top-p) truncation, using one uniform `u`
 * in [0, 1). Candidates are ranked by probability (ties: lower id first) only when topP < 1.
 * @example sampleToken(row, allowed, 1.0, 0.95, rng.next())
 */
export function sampleToken(logits: Float32Array, candidates: Int32Array, temperature: number, topP: number, u: number): TokenChoice {
  const logp = maskedLogProbs(logits, candidates, temperature);
  let order: number[] | null = null;
  let keptMass = 1;
  if (topP < 1) {
    order = [...candidates.keys()].sort((a, b) => logp[b] - logp[a] || candidates[a] - candidates[b]);
    keptMass = 0;
    let kept = 0;
    while (kept < order.length && keptMass < topP) keptMass += Math.exp(logp[order[kept++]]);
    order.length = kept;
  }
  const count = order === null ? candidates.length : order.length;
  const target = u * keptMass;
  let cumulative = 0;
  let pick = order === null ? count - 1 : order[count - 1];
  for (let k = 0; k < count; k++) {
    const j = order === null ? k : order[k];
    cumulative += Math.exp(logp[j]);
    if (target < cumulative) {
      pick = j;
      break;
    }
  }
  return { tokenId: candidates[pick], logprob: logp[pick] };
}

/**
 * The most likely candidate (ties: lower id) and its log-prob at temperature 1.
 * @example greedyToken(new Float32Array([1, 3, 3]), new Int32Array([0, 1, 2])) // { tokenId: 1, ... }
 */
export function greedyToken(logits: Float32Array, candidates: Int32Array): TokenChoice {
  const logp = maskedLogProbs(logits, candidates, 1);
  let best = 0;
  for (let j = 1; j < candidates.length; j++) {
    if (logp[j] > logp[best] || (logp[j] === logp[best] && candidates[j] < candidates[best])) best = j;
  }
  return { tokenId: candidates[best], logprob: logp[best] };
}
