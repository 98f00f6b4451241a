/**
 * A curve on a logarithmic axis: only positive values have a logarithm, so zeros and negatives
 * become gaps, and the chart says how many it left out. Pure.
 */
import type { SeriesPoint } from './smoothing.js';

/**
 * The points a log axis can draw, and how many values it had to leave out (≤ 0).
 * @example forLogScale([[1, 0], [2, 0.5]]) // { points: [[1, null], [2, 0.5]], leftOut: 1 }
 */
export function forLogScale(points: readonly SeriesPoint[]): { points: [number, number | null][]; leftOut: number } {
  let leftOut = 0;
  const kept = points.map(([step, value]): [number, number | null] => {
    if (value !== null && Number.isFinite(value) && value <= 0) {
      leftOut += 1;
      return [step, null];
    }
    return [step, value];
  });
  return { points: kept, leftOut };
}
