/**
 * TensorBoard's curve smoothing: an exponential moving average with debiasing, so the first
 * points are not pulled towards 0 (TensorBoard's `vz_line_chart2` `resmoothDataset`). Pure.
 */

/** A `[step, value]` point; value null is a gap. */
export type SeriesPoint = readonly [number, number | null];

/**
 * Smooths `[step, value]` points (in step order) with weight `weight` in [0, 1): 0 returns the
 * values unchanged; 0.9 averages over roughly the last 10 points. Gaps (null, NaN, ±Infinity) stay
 * gaps and do not move the average; a constant curve is returned as it is.
 * @example emaSmooth([[1, 0], [2, 1]], 0.5) // [[1, 0], [2, 0.6666666666666666]]
 */
export function emaSmooth(points: readonly SeriesPoint[], weight: number): [number, number | null][] {
  if (!(weight >= 0 && weight < 1)) throw new RangeError(`smoothing weight: expected a number in [0, 1), got ${weight}`);
  // As TensorBoard does: a constant curve stays exactly constant (the average's rounding noise
  // would otherwise become the whole range of an auto-scaled axis).
  const finite = points.filter(([, v]) => v !== null && Number.isFinite(v));
  if (finite.every(([, v]) => v === finite[0]?.[1])) return points.map(([step, v]) => [step, v !== null && Number.isFinite(v) ? v : null]);
  let last = 0;
  let count = 0;
  return points.map(([step, value]) => {
    if (value === null || !Number.isFinite(value)) return [step, null];
    last = last * weight + (1 - weight) * value;
    count += 1;
    // Debias: the average started at 0, so divide by the weight the real points carry.
    const debias = weight === 0 ? 1 : 1 - weight ** count;
    return [step, last / debias];
  });
}
