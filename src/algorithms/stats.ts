/**
 * Masked summary statistics for step metrics (advantages, returns, values).
 */

/** Mean, population std, min and max over masked-in entries (all 0 when none). */
export interface MaskedStats {
  readonly mean: number;
  readonly std: number;
  readonly min: number;
  readonly max: number;
}

/**
 * Summary of `x` where `mask` is 1. Shape: [N], [N] → numbers.
 * @example maskedStats(Float32Array.of(1, 3, 100), Float32Array.of(1, 1, 0)); // { mean: 2, std: 1, min: 1, max: 3 }
 */
export function maskedStats(x: Float32Array, mask: Float32Array): MaskedStats {
  let count = 0;
  let sum = 0;
  let min = Number.POSITIVE_INFINITY;
  let max = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < x.length; i++) {
    if (mask[i] === 0) continue;
    count++;
    sum += x[i];
    min = Math.min(min, x[i]);
    max = Math.max(max, x[i]);
  }
  if (count === 0) return { mean: 0, std: 0, min: 0, max: 0 };
  const mean = sum / count;
  let squares = 0;
  for (let i = 0; i < x.length; i++) if (mask[i] !== 0) squares += (x[i] - mean) ** 2;
  return { mean, std: Math.sqrt(squares / count), min, max };
}

/**
 * Explained variance of the value predictions, verl `critic/vf_explained_var`: `1 − Var(R − V)/Var(R)`
 * over masked-in tokens. 1 = perfect critic, 0 = no better than the mean, negative = worse. NaN
 * when the returns have no variance (nothing to explain).
 * Shape: [N], [N], [N] → number.
 * @example explainedVariance(Float32Array.of(0, 1), Float32Array.of(0, 0.5), Float32Array.of(1, 1)); // 0.75
 */
export function explainedVariance(returns: Float32Array, values: Float32Array, mask: Float32Array): number {
  const residual = Float32Array.from(returns, (r, i) => r - values[i]);
  const varReturns = maskedStats(returns, mask).std ** 2;
  if (varReturns === 0) return Number.NaN;
  return 1 - maskedStats(residual, mask).std ** 2 / varReturns;
}
