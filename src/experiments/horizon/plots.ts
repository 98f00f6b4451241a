/**
 * The horizon experiment's figures, drawn with the shared `src/ui/plot.ts` (ECharts SSR + resvg):
 * one figure per metric, one line per variant (mean over seeds) with a min/max band over seeds.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { plotSeries, svgToPng } from '../../ui/plot.js';
import { type CurveMetric, type RunCurves, aggregateCurve, withSmoothed } from './report.js';

/** The figures written: file stem, metric, title and y label. */
export const FIGURES: readonly {
  readonly file: string;
  readonly metric: CurveMetric;
  readonly title: string;
  readonly yLabel: string;
  /** Trailing mean over this many steps per run before aggregating (rollout metrics are noisy). */
  readonly smooth?: number;
}[] = [
  { file: 'heldout-success', metric: 'eval/successRate', title: 'Held-out success (common eval horizon)', yLabel: 'success rate' },
  { file: 'heldout-truncation', metric: 'eval/truncationRate', title: 'Held-out truncation rate (common eval horizon)', yLabel: 'share of episodes' },
  { file: 'heldout-repeated-actions', metric: 'eval/repeatedActionRate', title: 'Held-out repeated-action rate (common eval horizon)', yLabel: 'share of turns' },
  { file: 'heldout-entropy', metric: 'eval/tokenEntropy', title: 'Held-out policy entropy per action token (common eval horizon)', yLabel: 'nats' },
  { file: 'rollout-success', metric: 'rollout/successRate', title: 'Training rollout success, horizon in force (3-step trailing mean)', yLabel: 'success rate', smooth: 3 },
  { file: 'mean-turns', metric: 'rollout/meanTurns', title: 'Mean turns per training episode (3-step trailing mean)', yLabel: 'turns', smooth: 3 },
  { file: 'truncation-rate', metric: 'rollout/truncationRate', title: 'Truncation rate: episodes cut at the horizon (3-step trailing mean)', yLabel: 'share of episodes', smooth: 3 },
  { file: 'repeated-action-rate', metric: 'rollout/repeatedActionRate', title: 'Repeated-action rate within an episode (3-step trailing mean)', yLabel: 'share of turns', smooth: 3 },
  { file: 'token-entropy', metric: 'rollout/tokenEntropy', title: 'Policy entropy per action token, training rollouts (3-step trailing mean)', yLabel: 'nats', smooth: 3 },
  { file: 'horizon', metric: 'horizon/current', title: 'Horizon in force', yLabel: 'max turns' },
];

/**
 * SVG of one metric: a line per variant with its min/max band over seeds.
 * @example const svg = variantFigure(['fixed-3', 'stepwise'], runs, FIGURES[0]);
 */
export function variantFigure(variants: readonly string[], runs: readonly RunCurves[], figure: (typeof FIGURES)[number]): string {
  const series = variants
    .map((variant) => {
      const own = runs.filter((r) => r.variant === variant).map((r) => (figure.smooth ? withSmoothed(r, figure.metric, figure.smooth) : r));
      const points = aggregateCurve(own, figure.metric);
      return {
        label: variant,
        points: points.map((p) => ({ x: p.x, y: p.mean })),
        band: points.map((p) => ({ x: p.x, min: p.min, max: p.max })),
      };
    })
    .filter((s) => s.points.length > 0);
  return plotSeries({ series, title: figure.title, xLabel: 'training step', yLabel: figure.yLabel });
}

/**
 * Writes every figure as `<dir>/<file>.svg` and `.png`; returns the PNG paths.
 * @example writeFigures('bench/horizon', variants, runs)
 */
export function writeFigures(dir: string, variants: readonly string[], runs: readonly RunCurves[]): string[] {
  const written: string[] = [];
  for (const figure of FIGURES) {
    const svg = variantFigure(variants, runs, figure);
    writeFileSync(join(dir, `${figure.file}.svg`), svg);
    const png = join(dir, `${figure.file}.png`);
    writeFileSync(png, svgToPng(svg));
    written.push(png);
  }
  return written;
}
