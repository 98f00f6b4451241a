/**
 * Small statistics for the experiment's tables: mean, sample sd, Student-t 95% confidence
 * intervals of a mean over seeds, and Wilson 95% intervals of a pooled success rate. Pure.
 */

/** Two-sided 97.5% quantiles of Student's t for 1..30 degrees of freedom. */
const T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.16, 2.145, 2.131, 2.12, 2.11, 2.101, 2.093, 2.086, 2.08, 2.074, 2.069, 2.064, 2.06, 2.056, 2.052, 2.048, 2.045, 2.042];

/**
 * The 97.5% quantile of Student's t with `df` degrees of freedom (normal 1.96 beyond 30).
 * @example tQuantile975(4) // 2.776
 */
export function tQuantile975(df: number): number {
  if (!(Number.isInteger(df) && df >= 1)) return Number.NaN;
  return T975[df - 1] ?? 1.96;
}

/** Mean of the values (NaN for none). */
export const mean = (xs: readonly number[]): number => (xs.length === 0 ? Number.NaN : xs.reduce((a, b) => a + b, 0) / xs.length);

/** Sample standard deviation (0 for fewer than two values). */
export function sampleSd(xs: readonly number[]): number {
  if (xs.length < 2) return 0;
  const m = mean(xs);
  return Math.sqrt(xs.reduce((a, x) => a + (x - m) ** 2, 0) / (xs.length - 1));
}

/** A mean with its 95% interval. */
export interface Interval {
  readonly mean: number;
  readonly lo: number;
  readonly hi: number;
  readonly n: number;
}

/**
 * Mean over seeds with the Student-t 95% interval (n − 1 degrees of freedom); one value gives an
 * interval of NaN width.
 * @example meanInterval([0.4, 0.5, 0.6]) // { mean: 0.5, lo: 0.252, hi: 0.748, n: 3 }
 */
export function meanInterval(values: readonly number[]): Interval {
  const xs = values.filter(Number.isFinite);
  const m = mean(xs);
  const half = xs.length < 2 ? Number.NaN : (tQuantile975(xs.length - 1) * sampleSd(xs)) / Math.sqrt(xs.length);
  return { mean: m, lo: m - half, hi: m + half, n: xs.length };
}

/**
 * Wilson 95% interval of `successes` out of `trials`.
 * @example wilsonInterval(640, 1280) // { mean: 0.5, lo: 0.4727, hi: 0.5273, n: 1280 }
 */
export function wilsonInterval(successes: number, trials: number): Interval {
  if (!(trials > 0)) return { mean: Number.NaN, lo: Number.NaN, hi: Number.NaN, n: 0 };
  const z = 1.959964;
  const p = successes / trials;
  const denom = 1 + (z * z) / trials;
  const centre = (p + (z * z) / (2 * trials)) / denom;
  const half = (z * Math.sqrt((p * (1 - p)) / trials + (z * z) / (4 * trials * trials))) / denom;
  return { mean: p, lo: centre - half, hi: centre + half, n: trials };
}

/**
 * `0.512 [0.471, 0.553]`, or `—` when there is no value; an interval of NaN width prints the mean alone.
 * @example formatInterval(meanInterval([0.4, 0.6])) // '0.500 [-0.771, 1.771]'
 */
export function formatInterval(i: Interval, digits = 3): string {
  if (!Number.isFinite(i.mean)) return '—';
  if (!Number.isFinite(i.lo)) return i.mean.toFixed(digits);
  return `${i.mean.toFixed(digits)} [${i.lo.toFixed(digits)}, ${i.hi.toFixed(digits)}]`;
}
