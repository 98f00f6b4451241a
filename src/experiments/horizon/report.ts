/**
 * The horizon experiment's numbers: per-run curves read from the run stores, aggregated per
 * variant over seeds (mean, min, max per step), and the summary table. The aggregation is pure;
 * only {@link readRunCurves} touches the disk.
 */
import { RunStore } from '../../store/run-store.js';

/** Metrics the experiment reads from every run. */
export const CURVE_METRICS = [
  'eval/successRate',
  'eval/meanTurns',
  'rollout/successRate',
  'rollout/meanTurns',
  'rollout/truncationRate',
  'rollout/repeatedActionRate',
  'rollout/turnEntropy',
  'horizon/current',
] as const;

export type CurveMetric = (typeof CURVE_METRICS)[number];

/** One run's curves: metric -> (step -> value), NaN values left out. */
export interface RunCurves {
  readonly variant: string;
  readonly seed: number;
  readonly curves: Readonly<Record<CurveMetric, ReadonlyMap<number, number>>>;
}

/**
 * Reads a finished (or partial) run's curves.
 * @example const curves = readRunCurves('runs/horizon-exp/runs/stepwise-s1', 'stepwise', 1);
 */
export function readRunCurves(runDir: string, variant: string, seed: number): RunCurves {
  const store = RunStore.open(runDir, { readonly: true });
  try {
    const curves = {} as Record<CurveMetric, Map<number, number>>;
    for (const name of CURVE_METRICS) {
      curves[name] = new Map(store.metricsSeries(name).filter((p) => Number.isFinite(p.value)).map((p) => [p.step, p.value]));
    }
    return { variant, seed, curves };
  } finally {
    store.close();
  }
}

/**
 * Trailing mean over the last `k` logged steps of one curve (k = 1: unchanged). Rollout metrics of
 * 32 episodes from 4 tasks swing with the task mix of each step; smoothing each run before the
 * seed aggregate keeps the per-step pairing and makes trends readable.
 * @example smoothCurve(new Map([[1, 0], [2, 1], [3, 1]]), 2) // Map { 1 => 0, 2 => 0.5, 3 => 1 }
 */
export function smoothCurve(curve: ReadonlyMap<number, number>, k: number): Map<number, number> {
  const steps = [...curve.keys()].sort((a, b) => a - b);
  return new Map(steps.map((step, i) => [step, mean(steps.slice(Math.max(0, i - k + 1), i + 1).map((s) => curve.get(s) as number))]));
}

/** A run with one metric's curve smoothed (see {@link smoothCurve}). */
export function withSmoothed(run: RunCurves, metric: CurveMetric, k: number): RunCurves {
  return { ...run, curves: { ...run.curves, [metric]: smoothCurve(run.curves[metric], k) } };
}

/** Per-step mean and min/max over seeds. */
export interface AggregatePoint {
  readonly x: number;
  readonly mean: number;
  readonly min: number;
  readonly max: number;
  readonly n: number;
}

/**
 * Mean, min and max over the runs of one variant at each step where at least one run has a value.
 * @example aggregateCurve(runsOfVariant, 'eval/successRate') // [{ x: 0, mean: 0.35, min: 0.3, max: 0.4, n: 3 }, ...]
 */
export function aggregateCurve(runs: readonly RunCurves[], metric: CurveMetric): AggregatePoint[] {
  const steps = new Set<number>();
  for (const r of runs) for (const step of r.curves[metric].keys()) steps.add(step);
  return [...steps]
    .sort((a, b) => a - b)
    .map((x) => {
      const values = runs.map((r) => r.curves[metric].get(x)).filter((v): v is number => v !== undefined);
      return { x, mean: mean(values), min: Math.min(...values), max: Math.max(...values), n: values.length };
    });
}

function mean(xs: readonly number[]): number {
  return xs.length === 0 ? Number.NaN : xs.reduce((a, b) => a + b, 0) / xs.length;
}

function sd(xs: readonly number[]): number {
  if (xs.length < 2) return 0;
  const m = mean(xs);
  return Math.sqrt(xs.reduce((a, x) => a + (x - m) ** 2, 0) / (xs.length - 1));
}

/** Mean of a run's metric over its last `k` logged steps. */
function tailMean(curve: ReadonlyMap<number, number>, k: number): number {
  const steps = [...curve.keys()].sort((a, b) => a - b).slice(-k);
  return mean(steps.map((s) => curve.get(s) as number));
}

/** One row of the summary table: per-seed values, summarised as mean ± sd. */
export interface VariantSummary {
  readonly variant: string;
  readonly seeds: number;
  /** Held-out success at the last evaluation. */
  readonly finalSuccess: readonly number[];
  /** Best held-out success over the evaluations after step 0. */
  readonly peakSuccess: readonly number[];
  /** Rollout metrics averaged over the last `tail` training steps. */
  readonly meanTurns: readonly number[];
  readonly truncationRate: readonly number[];
  readonly repeatedActionRate: readonly number[];
  /** Horizon in force at the last step. */
  readonly finalHorizon: readonly number[];
}

/**
 * Summaries per variant, in the order given.
 * @example summarizeVariants(['fixed-3', 'stepwise'], runs, 5)
 */
export function summarizeVariants(variants: readonly string[], runs: readonly RunCurves[], tail = 5): VariantSummary[] {
  return variants.map((variant) => {
    const own = runs.filter((r) => r.variant === variant);
    const evals = own.map((r) => [...r.curves['eval/successRate'].entries()].sort((a, b) => a[0] - b[0]));
    return {
      variant,
      seeds: own.length,
      finalSuccess: evals.map((e) => e[e.length - 1]?.[1] ?? Number.NaN),
      peakSuccess: evals.map((e) => {
        const trained = e.filter(([step]) => step > 0).map(([, v]) => v);
        return trained.length > 0 ? Math.max(...trained) : Number.NaN;
      }),
      meanTurns: own.map((r) => tailMean(r.curves['rollout/meanTurns'], tail)),
      truncationRate: own.map((r) => tailMean(r.curves['rollout/truncationRate'], tail)),
      repeatedActionRate: own.map((r) => tailMean(r.curves['rollout/repeatedActionRate'], tail)),
      finalHorizon: own.map((r) => tailMean(r.curves['horizon/current'], 1)),
    };
  });
}

/** `mean ± sd` of the finite values; `—` when there are none. */
function cell(values: readonly number[], digits = 3): string {
  const xs = values.filter(Number.isFinite);
  return xs.length === 0 ? '—' : `${mean(xs).toFixed(digits)} ± ${sd(xs).toFixed(digits)}`;
}

/**
 * The Markdown table: one row per variant, mean ± sample sd over seeds.
 * @example markdownTable(summarizeVariants(names, runs), 5)
 */
export function markdownTable(rows: readonly VariantSummary[], tail = 5): string {
  const header = [
    '| variant | seeds | final held-out success | peak held-out success | mean turns | truncation rate | repeated-action rate | final horizon |',
    '|---|---|---|---|---|---|---|---|',
  ];
  const lines = rows.map(
    (r) =>
      `| ${r.variant} | ${r.seeds} | ${cell(r.finalSuccess)} | ${cell(r.peakSuccess)} | ${cell(r.meanTurns, 2)} | ${cell(r.truncationRate)} | ${cell(r.repeatedActionRate)} | ${cell(r.finalHorizon, 1)} |`,
  );
  const note = `\n\nMean ± sample standard deviation over seeds. Held-out success: \`eval/successRate\` on the test split at the common evaluation horizon; mean turns, truncation and repeated-action rates: training rollouts, averaged over each run's last ${tail} steps.`;
  return [...header, ...lines].join('\n') + note;
}
