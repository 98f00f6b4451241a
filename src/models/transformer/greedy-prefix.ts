/**
 * The greedy pick when every id below `count` is allowed (free generation, no trie): what
 * `greedyToken(logits, [0, 1, ..., count - 1])` returns, without the candidate list. Why: that
 * general form builds a float64 log-prob array and runs two exp passes per logit; at 64 rows x
 * 49152 ids that was ~110 ms of a ~450 ms B = 64 decode step. Here one max pass and one exp pass:
 * with `e = exp(z - m)`, `S = Σ e` and `T = Σ e·(z - m)`, the best id's log-prob is `-log S` and
 * the entropy `log S - T / S` (the same quantities, within float rounding) — natively
 * (`native/greedy.c`, vectorised) when the addon is loaded, else in JS.
 */
import { nativeHostKernels } from '../../backend/native.js';
import type { TokenChoice } from './sampling.js';

const ids = new Int32Array(1);
const stats = new Float32Array(2);

/**
 * The most likely of ids `[0, count)` of one logits row (ties: lower id), its log-prob under
 * softmax over those ids, and that distribution's entropy.
 * @example greedyPrefix(new Float32Array([1, 3, 3, 9]), 3) // { tokenId: 1, ... } (id 3 not allowed)
 */
export function greedyPrefix(logits: Float32Array, count: number): TokenChoice {
  const blas = nativeHostKernels();
  if (blas !== null) {
    blas.greedyRows(logits, 1, logits.length, count, ids, stats);
    return { tokenId: ids[0] as number, logprob: stats[0] as number, entropy: stats[1] as number };
  }
  return greedyPrefixJs(logits, count);
}

/**
 * {@link greedyPrefix} in plain JS (float64 sums): the path without the addon, and its reference.
 * @example greedyPrefixJs(new Float32Array([0, 0]), 2) // { tokenId: 0, logprob: -log 2, entropy: log 2 }
 */
export function greedyPrefixJs(logits: Float32Array, count: number): TokenChoice {
  let best = 0;
  let max = logits[0] as number;
  for (let j = 1; j < count; j++) {
    const z = logits[j] as number;
    if (z > max) {
      max = z;
      best = j;
    }
  }
  let total = 0;
  let weighted = 0;
  for (let j = 0; j < count; j++) {
    const d = (logits[j] as number) - max;
    const e = Math.exp(d);
    total += e;
    weighted += e * d;
  }
  const logTotal = Math.log(total);
  return { tokenId: best, logprob: -logTotal, entropy: logTotal - weighted / total };
}
