/**
 * Behaviour by turn index, under the curves: for each metric family (`byTurn/<quantity>/<k>`,
 * `episodeLength/<n>`) one chart with, per selected run, the mean over its first and its last
 * WINDOW logged steps — how entropy, invalid and repeated actions at each turn index, and the
 * distribution of episode lengths, changed over training.
 */
import type { Point } from '../api';
import { IndexChart, type IndexLine } from '../charts';
import { h } from '../dom';

/** Steps averaged per window. */
const WINDOW = 5;

/** The families, in display order. */
export const FAMILIES = ['byTurn/tokenEntropy', 'byTurn/invalidActionRate', 'byTurn/repeatedActionRate', 'byTurn/reached', 'episodeLength'];

const FAMILY_NAME = /^(byTurn\/[A-Za-z]+|episodeLength)\/(\d+)$/;

/** True for a member of a family (kept out of the step-curve metric list). */
export const isFamilyMetric = (name: string): boolean => FAMILY_NAME.test(name);

/** Mean of each index over steps [from, to]: `[index, mean]` pairs, ascending. */
function profile(series: Record<string, Point[]>, family: string, from: number, to: number): [number, number][] {
  const out: [number, number][] = [];
  for (const [name, points] of Object.entries(series)) {
    const m = FAMILY_NAME.exec(name);
    if (!m || m[1] !== family) continue;
    const values = points.filter(([step, v]) => step >= from && step <= to && v !== null && Number.isFinite(v)).map(([, v]) => v as number);
    if (values.length > 0) out.push([Number(m[2]), values.reduce((a, b) => a + b, 0) / values.length]);
  }
  return out.sort((a, b) => a[0] - b[0]);
}

/** The first and last windows of a run's family: one line each (one when they coincide). */
function linesOf(run: string, series: Record<string, Point[]>, family: string): IndexLine[] {
  const steps = [...new Set(Object.entries(series).flatMap(([name, points]) => (FAMILY_NAME.exec(name)?.[1] === family ? points.map(([s]) => s) : [])))].sort((a, b) => a - b);
  if (steps.length === 0) return [];
  const first = steps[Math.min(WINDOW, steps.length) - 1] as number;
  const last = steps[steps.length - 1] as number;
  const windows = first === last ? [last] : [first, last];
  return windows.map((end) => ({ label: `${run} · steps ${Math.max(1, end - WINDOW + 1)}–${end}`, points: profile(series, family, end - WINDOW + 1, end) }));
}

/** Keeps one index chart per family with data, below the step curves. */
export class ByTurnPanel {
  readonly el = h('section', { class: 'by-turn', 'data-testid': 'by-turn' });
  private readonly grid = h('div', { class: 'charts' });
  private readonly charts = new Map<string, IndexChart>();

  constructor() {
    this.el.append(h('h2', {}, 'Behaviour by turn index'), h('p', { class: 'muted' }, `Mean over each run's first and last ${WINDOW} logged steps.`), this.grid);
  }

  update(runs: { run: string; series: Record<string, Point[]> }[]): void {
    for (const family of FAMILIES) {
      const lines = runs.flatMap((r) => linesOf(r.run, r.series, family));
      let chart = this.charts.get(family);
      if (lines.length === 0) {
        chart?.dispose();
        chart?.el.remove();
        this.charts.delete(family);
        continue;
      }
      if (!chart) {
        const el = h('div', { class: 'chart', 'data-testid': 'index-chart', 'data-family': family });
        this.grid.append(el);
        chart = new IndexChart(el, family);
        this.charts.set(family, chart);
      }
      chart.update(lines);
    }
    this.el.hidden = this.charts.size === 0;
  }

  dispose(): void {
    for (const chart of this.charts.values()) chart.dispose();
  }
}
