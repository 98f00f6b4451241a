/**
 * Picking one token from a row of logits on the CPU, under the same masked, temperature-scaled
 * distribution that `TransformerModel.forwardTrain` scores: `log_softmax(logits / T)` restricted
 * to the allowed ids. The recorded log-prob is always under that distribution (not the top-p
 * truncated one), so the PPO ratio is exactly 1 before the first update when topP = 1.
 */

/** A chosen token, its log-prob and the entropy (nats) of the masked, temperature-scaled distribution. */
export interface TokenChoice {
  readonly tokenId: number;
  readonly logprob: number;
  /** Entropy of the distribution `logprob` is under (the allowed set only, before top-p truncation). */
  readonly entropy: number;
  /** The most likely candidates of the same distribution, when asked for (`topK` > 0). */
  readonly top?: TopCandidates;
}

/** The k most likely candidates of a distribution, most likely first (ties: lower id first). */
export interface TopCandidates {
  /** [min(k, candidates)] ids. */
  readonly ids: Int32Array;
  /** [min(k, candidates)] their log-probs. */
  readonly logprobs: Float64Array;
}

/**
 * The `k` most likely of `candidates` given their log-probs `logp` (aligned with `candidates`):
 * one pass keeping a sorted list of at most k, so O(candidates x k) for the small k an API asks.
 * @example topCandidates(Float64Array.of(-2, -0.5, -1), Int32Array.of(4, 5, 6), 2) // ids [5, 6]
 */
export function topCandidates(logp: Float64Array, candidates: Int32Array, k: number): TopCandidates {
  const keep = Math.min(k, candidates.length);
  const order: number[] = []; // indices into candidates, best first
  const better = (a: number, b: number) => logp[a] > logp[b] || (logp[a] === logp[b] && candidates[a] < candidates[b]);
  for (let j = 0; j < candidates.length && keep > 0; j++) {
    if (order.length === keep && !better(j, order[keep - 1])) continue;
    let at = order.length === keep ? keep - 1 : order.length;
    while (at > 0 && better(j, order[at - 1])) at--;
    order.splice(at, 0, j);
    if (order.length > keep) order.pop();
  }
  return { ids: Int32Array.from(order, (j) => candidates[j]), logprobs: Float64Array.from(order, (j) => logp[j]) };
}

/**
 * Entropy `-Σ p log p` (nats) of a distribution given as log-probs.
 * @example entropyOf(Float64Array.of(Math.log(0.5), Math.log(0.5))) // ≈ 0.6931
 */
export function entropyOf(logp: Float64Array): number {
  let h = 0;
  for (let j = 0; j < logp.length; j++) if (logp[j] > Number.NEGATIVE_INFINITY) h -= Math.exp(logp[j]) * logp[j];
  return h;
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
 * With `topK` > 0 the choice also carries the `topK` most likely candidates.
 * @example sampleToken(row, allowed, 1.0, 0.95, rng.next())
 */
export function sampleToken(logits: Float32Array, candidates: Int32Array, temperature: number, topP: number, u: number, topK = 0): TokenChoice {
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
  return withTop({ tokenId: candidates[pick], logprob: logp[pick], entropy: entropyOf(logp) }, logp, candidates, topK);
}

/**
 * The most likely candidate (ties: lower id) and its log-prob at temperature 1 (with `topK` > 0,
 * also the `topK` most likely candidates).
 * @example greedyToken(new Float32Array([1, 3, 3]), new Int32Array([0, 1, 2])) // { tokenId: 1, ... }
 */
export function greedyToken(logits: Float32Array, candidates: Int32Array, topK = 0): TokenChoice {
  const logp = maskedLogProbs(logits, candidates, 1);
  let best = 0;
  for (let j = 1; j < candidates.length; j++) {
    if (logp[j] > logp[best] || (logp[j] === logp[best] && candidates[j] < candidates[best])) best = j;
  }
  return withTop({ tokenId: candidates[best], logprob: logp[best], entropy: entropyOf(logp) }, logp, candidates, topK);
}

function withTop(choice: TokenChoice, logp: Float64Array, candidates: Int32Array, topK: number): TokenChoice {
  return topK > 0 ? { ...choice, top: topCandidates(logp, candidates, topK) } : choice;
}
