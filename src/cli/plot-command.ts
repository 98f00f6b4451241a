/**
 * `turnwise plot <runDir...> --metric <name> [--out curves.svg|curves.png]`: offline learning
 * curves of one metric over several runs (overlaid, or as a mean with a min/max band), with the
 * first run's horizon stage changes and collapse alarms marked. A metric family
 * (`byTurn/tokenEntropy`, `episodeLength`, ...) is drawn by turn index instead: one line per run and
 * step window (`--at`, `--window`). Reads the run stores read-only.
 */
import { writeFile } from 'node:fs/promises';
import { basename, extname, resolve } from 'node:path';
import { InvalidArgumentError } from '../core/errors.js';
import { RunStore } from '../store/run-store.js';
import { FAMILY_PREFIXES, familyProfile, familySteps, readFamilySeries } from '../ui/by-turn.js';
import { type PlotMarker, type PlotSeries, plotSeries, svgToPng } from '../ui/plot.js';

/** Short names for the metrics people plot most (`--metric success`). */
export const METRIC_ALIASES: Readonly<Record<string, string>> = {
  success: 'rollout/successRate',
  'eval-success': 'eval/successRate',
  reward: 'rollout/meanReward',
  turns: 'rollout/meanTurns',
  truncation: 'rollout/truncationRate',
  horizon: 'horizon/current',
  kl: 'loss/approxKl',
  entropy: 'loss/entropy',
  'policy-entropy': 'rollout/tokenEntropy',
  'turn-entropy': 'byTurn/tokenEntropy',
  'turn-invalid': 'byTurn/invalidActionRate',
  'turn-repeated': 'byTurn/repeatedActionRate',
  'turn-reached': 'byTurn/reached',
  lengths: 'episodeLength',
  staleness: 'policy/staleness',
  'tokens-per-sec': 'throughput/sampleTokensPerSec',
};

/** Options of {@link plotCommand}. */
export interface PlotCommandOptions {
  readonly metric: string;
  /** `.svg` or `.png`. Default `curves.svg`. */
  readonly out?: string;
  readonly title?: string;
  /** One mean curve with a min/max band over the runs, instead of one curve per run. */
  readonly band?: boolean;
  readonly width?: number;
  readonly height?: number;
  /** Families only: last steps of the windows to draw (default: the first and the last window). */
  readonly at?: readonly number[];
  /** Families only: steps averaged per window (default 5). */
  readonly window?: number;
  /** EMA weight in [0, 1) for the step curves (TensorBoard's smoothing). Default 0. */
  readonly smooth?: number;
  /** Logarithmic y axis (values ≤ 0 left out). */
  readonly logY?: boolean;
}

/** One run's series of the metric, with its label and horizon stage changes. */
interface RunCurve {
  readonly label: string;
  readonly points: { x: number; y: number }[];
  readonly markers: PlotMarker[];
}

function readCurves(runDirs: readonly string[], metric: string): RunCurve[] {
  const curves: RunCurve[] = [];
  for (const dir of runDirs) {
    const store = RunStore.open(dir, { readonly: true });
    try {
      const runs = store.runs();
      if (runs.length === 0) throw InvalidArgumentError.format('runDir', `${dir} holds no run yet`);
      for (const run of runs) {
        store.useRun(run.id);
        const names = store.metricNames();
        if (!names.includes(metric)) {
          throw InvalidArgumentError.format('--metric', `run '${run.id}' in ${dir} has no metric '${metric}'; it has: ${names.join(', ')}`);
        }
        const markers = store.events('horizon/stage').map((e) => {
          const data = e.data as { horizon?: number } | null;
          return { x: e.step, label: data?.horizon !== undefined ? `H=${data.horizon}` : e.message };
        });
        // Collapse alarms about this metric (their data names it), marked like stage changes.
        for (const e of store.events()) {
          const data = e.data as { metric?: string; alarm?: string } | null;
          if (e.kind.startsWith('alarm/') && data?.metric === metric) markers.push({ x: e.step, label: `⚠ ${data.alarm ?? e.kind}` });
        }
        const label = runs.length > 1 ? `${basename(resolve(dir))}:${run.id}` : basename(resolve(dir));
        curves.push({ label, points: store.metricsSeries(metric).map((p) => ({ x: p.step, y: p.value })), markers });
      }
    } finally {
      store.close();
    }
  }
  return curves;
}

/** Mean and min/max over runs at each step every run logged. */
function bandOf(curves: readonly RunCurve[], label: string): PlotSeries {
  const bySteps = curves.map((c) => new Map(c.points.filter((p) => Number.isFinite(p.y)).map((p) => [p.x, p.y])));
  const steps = [...(bySteps[0]?.keys() ?? [])].filter((x) => bySteps.every((m) => m.has(x))).sort((a, b) => a - b);
  const values = (x: number) => bySteps.map((m) => m.get(x) as number);
  return {
    label,
    points: steps.map((x) => ({ x, y: values(x).reduce((a, b) => a + b, 0) / curves.length })),
    band: steps.map((x) => ({ x, min: Math.min(...values(x)), max: Math.max(...values(x)) })),
  };
}

/**
 * Writes the figure and returns its path.
 * @example await plotCommand(['runs/a', 'runs/b'], { metric: 'success', out: 'curves.png' });
 */
export async function plotCommand(runDirs: readonly string[], options: PlotCommandOptions): Promise<string> {
  if (runDirs.length === 0) throw InvalidArgumentError.format('runDir', 'give at least one run folder');
  const metric = METRIC_ALIASES[options.metric] ?? options.metric;
  const out = options.out ?? 'curves.svg';
  const format = extname(out).toLowerCase();
  if (format !== '.svg' && format !== '.png') throw InvalidArgumentError.format('--out', `expected a .svg or .png file, got ${JSON.stringify(out)}`);
  if (FAMILY_PREFIXES.includes(metric)) {
    const svg = byTurnFigure(runDirs, metric, options);
    await writeFile(out, format === '.png' ? svgToPng(svg) : svg);
    return out;
  }
  const curves = readCurves(runDirs, metric);
  const series: PlotSeries[] = options.band ? [bandOf(curves, `mean of ${curves.length} runs (min–max band)`)] : curves.map((c) => ({ label: c.label, points: c.points }));
  const svg = plotSeries({
    series,
    title: options.title ?? metric,
    xLabel: 'step',
    yLabel: metric,
    markers: curves[0]?.markers ?? [],
    ...(options.smooth !== undefined ? { smoothing: options.smooth } : {}),
    ...(options.logY ? { logY: true } : {}),
    ...(options.width !== undefined ? { width: options.width } : {}),
    ...(options.height !== undefined ? { height: options.height } : {}),
  });
  await writeFile(out, format === '.png' ? svgToPng(svg) : svg);
  return out;
}

/** A family by turn index (or episode length): one line per run and step window. */
function byTurnFigure(runDirs: readonly string[], family: string, options: PlotCommandOptions): string {
  const window = options.window ?? 5;
  if (!(Number.isInteger(window) && window > 0)) throw InvalidArgumentError.format('--window', `expected a positive integer, got ${window}`);
  const series: PlotSeries[] = [];
  for (const dir of runDirs) {
    const store = RunStore.open(dir, { readonly: true });
    try {
      const run = store.run();
      if (run === null) throw InvalidArgumentError.format('runDir', `${dir} holds no run yet`);
      const indexSeries = readFamilySeries(store, family);
      const steps = familySteps(indexSeries);
      if (steps.length === 0) throw InvalidArgumentError.format('--metric', `run '${run.id}' in ${dir} logged no ${family}/<k> metric (runs from before per-turn metrics have none)`);
      const ends = options.at ?? [...new Set([steps[Math.min(window, steps.length) - 1] as number, steps[steps.length - 1] as number])];
      for (const end of ends) {
        const points = familyProfile(indexSeries, end - window + 1, end);
        if (points.length === 0) throw InvalidArgumentError.format('--at', `run '${run.id}' logged no ${family} between steps ${end - window + 1} and ${end}`);
        series.push({ label: `${basename(resolve(dir))} · steps ${Math.max(1, end - window + 1)}–${end}`, points });
      }
    } finally {
      store.close();
    }
  }
  const xLabel = family === 'episodeLength' ? 'episode length (turns)' : 'turn index (0 = first turn)';
  return plotSeries({
    series,
    title: options.title ?? `${family} by ${family === 'episodeLength' ? 'length' : 'turn index'}`,
    xLabel,
    yLabel: family,
    ...(options.width !== undefined ? { width: options.width } : {}),
    ...(options.height !== undefined ? { height: options.height } : {}),
  });
}
