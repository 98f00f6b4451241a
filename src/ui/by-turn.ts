/**
 * Profiles of a per-turn-index metric family (`byTurn/<quantity>/<k>`, `episodeLength/<n>`, see
 * `src/core/metrics.ts`): for a window of training steps, the mean of each index's metric over the
 * steps in the window that logged it — "entropy by turn index early vs late in training". Pure
 * over series; {@link readFamilySeries} reads them from a run store.
 */
import { METRIC_FAMILIES, parseFamilyMetric } from '../core/metrics.js';
import type { MetricPoint, RunStore } from '../store/run-store.js';
import type { PlotPoint } from './plot.js';

/** The family prefixes (`byTurn/tokenEntropy`, `episodeLength`, ...). */
export const FAMILY_PREFIXES: readonly string[] = Object.keys(METRIC_FAMILIES).map((f) => f.replace(/\/<[kn]>$/, ''));

/** One index's series of a family. */
export interface IndexSeries {
  readonly index: number;
  readonly points: readonly MetricPoint[];
}

/**
 * Every index's series of `family` in the store's active run, by index.
 * @example readFamilySeries(store, 'byTurn/tokenEntropy')[0].index // 0
 */
export function readFamilySeries(store: RunStore, family: string): IndexSeries[] {
  return store
    .metricNames()
    .flatMap((name) => {
      const parsed = parseFamilyMetric(name);
      return parsed !== null && parsed.family === family ? [{ index: parsed.index, points: store.metricsSeries(name) }] : [];
    })
    .sort((a, b) => a.index - b.index);
}

/**
 * Mean of each index over the steps in [fromStep, toStep] (finite values only); indices with no
 * value there are left out.
 * @example familyProfile(series, 1, 5) // [{ x: 0, y: 1.2 }, { x: 1, y: 0.9 }]
 */
export function familyProfile(series: readonly IndexSeries[], fromStep: number, toStep: number): PlotPoint[] {
  const out: PlotPoint[] = [];
  for (const { index, points } of series) {
    const values = points.filter((p) => p.step >= fromStep && p.step <= toStep && Number.isFinite(p.value)).map((p) => p.value);
    if (values.length > 0) out.push({ x: index, y: values.reduce((a, b) => a + b, 0) / values.length });
  }
  return out;
}

/**
 * Steps that logged any index of the family, ascending.
 * @example familySteps(readFamilySeries(store, 'episodeLength')) // [1, 2, 3, ...]
 */
export function familySteps(series: readonly IndexSeries[]): number[] {
  return [...new Set(series.flatMap((s) => s.points.map((p) => p.step)))].sort((a, b) => a - b);
}
