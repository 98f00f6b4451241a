/**
 * The horizon experiment's numbers: per-run curves read from the run stores (logged metrics, plus
 * held-out behaviour derived from the stored evaluation episodes at the common horizon), aggregated
 * per variant over seeds, and the summary tables with 95% confidence intervals. The aggregation is
 * pure; only {@link readRunCurves} touches the disk.
 */
import type { Turn } from '../../core/types.js';
import { actionKeyOf, freeTokenEntropy } from '../../runtime/behaviour-metrics.js';
import { RunStore } from '../../store/run-store.js';
import { formatInterval, meanInterval, sampleSd, wilsonInterval } from './stats.js';

/** Metrics logged by every run that the experiment reads. */
export const LOGGED_METRICS = [
  'eval/successRate',
  'eval/meanTurns',
  'rollout/successRate',
  'rollout/meanTurns',
  'rollout/truncationRate',
  'rollout/repeatedActionRate',
  'rollout/tokenEntropy',
  'horizon/current',
] as const;

/** Held-out behaviour at the common horizon, derived from the stored test-split episodes. */
export const EVAL_DERIVED_METRICS = ['eval/truncationRate', 'eval/repeatedActionRate', 'eval/tokenEntropy'] as const;

/** Every curve of a run. */
export const CURVE_METRICS = [...LOGGED_METRICS, ...EVAL_DERIVED_METRICS] as const;

export type CurveMetric = (typeof CURVE_METRICS)[number];

/** One run's curves: metric -> (step -> value), NaN values left out; its alarms and final evaluation size. */
export interface RunCurves {
  readonly variant: string;
  readonly seed: number;
  readonly curves: Readonly<Record<CurveMetric, ReadonlyMap<number, number>>>;
  /** Alarm name -> steps it fired at (`alarm/<name>` events). */
  readonly alarms?: Readonly<Record<string, readonly number[]>>;
  /** Episodes in the last held-out evaluation (for pooled intervals). */
  readonly finalEvalEpisodes?: number;
}

/** Held-out behaviour of one evaluation's episodes. */
function evalBehaviour(episodes: readonly { outcome: string; turns: readonly Turn[] }[]): Record<(typeof EVAL_DERIVED_METRICS)[number], number> {
  let truncated = 0;
  let turns = 0;
  let repeated = 0;
  let entropy = 0;
  let tokens = 0;
  for (const e of episodes) {
    if (e.outcome === 'truncated') truncated++;
    const seen = new Set<string>();
    for (const turn of e.turns) {
      turns++;
      const key = actionKeyOf(turn);
      if (seen.has(key)) repeated++;
      seen.add(key);
      const h = freeTokenEntropy(turn);
      entropy += h.sum;
      tokens += h.count;
    }
  }
  return {
    'eval/truncationRate': episodes.length > 0 ? truncated / episodes.length : Number.NaN,
    'eval/repeatedActionRate': turns > 0 ? repeated / turns : Number.NaN,
    'eval/tokenEntropy': tokens > 0 ? entropy / tokens : Number.NaN,
  };
}

/**
 * Reads a finished (or partial) run's curves.
 * @example const curves = readRunCurves('runs/horizon-exp/runs/stepwise-s1', 'stepwise', 1);
 */
export function readRunCurves(runDir: string, variant: string, seed: number): RunCurves {
  const store = RunStore.open(runDir, { readonly: true });
  try {
    const curves = {} as Record<CurveMetric, Map<number, number>>;
    for (const name of LOGGED_METRICS) {
      curves[name] = new Map(store.metricsSeries(name).filter((p) => Number.isFinite(p.value)).map((p) => [p.step, p.value]));
    }
    for (const name of EVAL_DERIVED_METRICS) curves[name] = new Map();
    let finalEvalEpisodes = 0;
    const evalSteps = [...curves['eval/successRate'].keys()].sort((a, b) => a - b);
    for (const step of evalSteps) {
      const episodes = store.episodes({ split: 'test', step, limit: 100_000 }).map((e) => ({ outcome: e.outcome, turns: store.episodeTurns(e.id) as unknown as Turn[] }));
      const behaviour = evalBehaviour(episodes);
      for (const name of EVAL_DERIVED_METRICS) if (Number.isFinite(behaviour[name])) curves[name].set(step, behaviour[name]);
      finalEvalEpisodes = episodes.length;
    }
    const alarms: Record<string, number[]> = {};
    for (const e of store.events()) {
      if (!e.kind.startsWith('alarm/')) continue;
      const name = e.kind.slice('alarm/'.length);
      alarms[name] = [...(alarms[name] ?? []), e.step];
    }
    return { variant, seed, curves, alarms, finalEvalEpisodes };
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

/** Mean of a run's metric over its last `k` logged steps. */
function tailMean(curve: ReadonlyMap<number, number>, k: number): number {
  const steps = [...curve.keys()].sort((a, b) => a - b).slice(-k);
  return mean(steps.map((s) => curve.get(s) as number));
}

/** The value at the last logged step. */
const lastValue = (curve: ReadonlyMap<number, number>): number => tailMean(curve, 1);

/** One row of the summary tables: per-seed values (one entry per run, seed order). */
export interface VariantSummary {
  readonly variant: string;
  readonly seeds: number;
  /** The seed of each entry below. */
  readonly seedIds: readonly number[];
  /** Held-out success at the last evaluation. */
  readonly finalSuccess: readonly number[];
  /** Best held-out success over the evaluations after step 0, and the step it was reached at. */
  readonly peakSuccess: readonly number[];
  readonly peakStep: readonly number[];
  /** Held-out truncation, repeated-action rate and token entropy at the last evaluation. */
  readonly evalTruncation: readonly number[];
  readonly evalRepeated: readonly number[];
  readonly evalEntropy: readonly number[];
  /** Rollout metrics averaged over the last `tail` training steps. */
  readonly meanTurns: readonly number[];
  readonly truncationRate: readonly number[];
  readonly repeatedActionRate: readonly number[];
  readonly tokenEntropy: readonly number[];
  /** Horizon in force at the last step. */
  readonly finalHorizon: readonly number[];
  /** Episodes of each run's last evaluation (for the pooled interval). */
  readonly finalEvalEpisodes: readonly number[];
  /** Alarm name -> runs of this variant in which it fired at least once. */
  readonly alarmRuns: Readonly<Record<string, number>>;
}

/**
 * Summaries per variant, in the order given; seeds of a variant in seed order.
 * @example summarizeVariants(['fixed-3', 'stepwise'], runs, 5)
 */
export function summarizeVariants(variants: readonly string[], runs: readonly RunCurves[], tail = 5): VariantSummary[] {
  return variants.map((variant) => {
    const own = runs.filter((r) => r.variant === variant).sort((a, b) => a.seed - b.seed);
    const evals = own.map((r) => [...r.curves['eval/successRate'].entries()].sort((a, b) => a[0] - b[0]));
    const peaks = evals.map((e) => e.filter(([step]) => step > 0).reduce<[number, number] | null>((best, p) => (best === null || p[1] > best[1] ? p : best), null));
    const alarmRuns: Record<string, number> = {};
    for (const r of own) for (const [name, steps] of Object.entries(r.alarms ?? {})) if (steps.length > 0) alarmRuns[name] = (alarmRuns[name] ?? 0) + 1;
    return {
      variant,
      seeds: own.length,
      seedIds: own.map((r) => r.seed),
      finalSuccess: evals.map((e) => e[e.length - 1]?.[1] ?? Number.NaN),
      peakSuccess: peaks.map((p) => p?.[1] ?? Number.NaN),
      peakStep: peaks.map((p) => p?.[0] ?? Number.NaN),
      evalTruncation: own.map((r) => lastValue(r.curves['eval/truncationRate'])),
      evalRepeated: own.map((r) => lastValue(r.curves['eval/repeatedActionRate'])),
      evalEntropy: own.map((r) => lastValue(r.curves['eval/tokenEntropy'])),
      meanTurns: own.map((r) => tailMean(r.curves['rollout/meanTurns'], tail)),
      truncationRate: own.map((r) => tailMean(r.curves['rollout/truncationRate'], tail)),
      repeatedActionRate: own.map((r) => tailMean(r.curves['rollout/repeatedActionRate'], tail)),
      tokenEntropy: own.map((r) => tailMean(r.curves['rollout/tokenEntropy'], tail)),
      finalHorizon: own.map((r) => lastValue(r.curves['horizon/current'])),
      finalEvalEpisodes: own.map((r) => r.finalEvalEpisodes ?? 0),
      alarmRuns,
    };
  });
}

/** `mean ± sd` of the finite values; `—` when there are none. */
function cell(values: readonly number[], digits = 3): string {
  const xs = values.filter(Number.isFinite);
  return xs.length === 0 ? '—' : `${mean(xs).toFixed(digits)} ± ${sampleSd(xs).toFixed(digits)}`;
}

/** Mean with its t 95% interval over seeds. */
const ci = (values: readonly number[], digits = 3): string => formatInterval(meanInterval(values), digits);

/** Success pooled over every episode of the variant's final evaluations, with its Wilson interval. */
function pooled(r: VariantSummary): string {
  let k = 0;
  let n = 0;
  r.finalSuccess.forEach((s, i) => {
    const episodes = r.finalEvalEpisodes[i] ?? 0;
    if (!Number.isFinite(s) || episodes === 0) return;
    k += Math.round(s * episodes);
    n += episodes;
  });
  return n === 0 ? '—' : `${formatInterval(wilsonInterval(k, n))} (n = ${n})`;
}

/**
 * The Markdown tables: held-out results at the common horizon (mean [95% t interval] over seeds,
 * and success pooled over every final evaluation episode with its Wilson interval), training
 * behaviour over the last `tail` steps (mean ± sd), and alarms.
 * @example markdownTable(summarizeVariants(names, runs), 5)
 */
export function markdownTable(rows: readonly VariantSummary[], tail = 5): string {
  const heldOut = [
    '| variant | seeds | final held-out success | pooled final success | peak held-out success | step of peak | held-out truncation | held-out repeated actions | held-out token entropy |',
    '|---|---|---|---|---|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.variant} | ${r.seeds} | ${ci(r.finalSuccess)} | ${pooled(r)} | ${ci(r.peakSuccess)} | ${ci(r.peakStep, 0)} | ${ci(r.evalTruncation)} | ${ci(r.evalRepeated)} | ${ci(r.evalEntropy)} |`,
    ),
  ];
  const training = [
    '| variant | mean turns | truncation rate | repeated-action rate | token entropy | final horizon | alarms (runs with one) |',
    '|---|---|---|---|---|---|---|',
    ...rows.map((r) => {
      const alarms = Object.entries(r.alarmRuns).map(([name, n]) => `${name} ${n}/${r.seeds}`);
      return `| ${r.variant} | ${cell(r.meanTurns, 2)} | ${cell(r.truncationRate)} | ${cell(r.repeatedActionRate)} | ${cell(r.tokenEntropy)} | ${cell(r.finalHorizon, 1)} | ${alarms.length > 0 ? alarms.join(', ') : 'none'} |`;
    }),
  ];
  return [
    ...heldOut,
    '',
    'Held-out: the last evaluation (and the best one after step 0) on the test split at the common evaluation horizon; mean [95% Student-t interval] over seeds; pooled: every final-evaluation episode of the variant, Wilson 95% interval.',
    '',
    ...training,
    '',
    `Training rollouts at the horizon in force, averaged over each run's last ${tail} steps, mean ± sample sd over seeds; alarms: collapse alarms fired (warn only) and in how many runs.`,
  ].join('\n');
}

/**
 * Paired differences of final held-out success between variants (same seeds, same evaluation
 * tasks): mean [95% t interval] over the seeds both have, and in how many seeds the first is ahead.
 * @example differencesTable(summaries) // '| stepwise − fixed-12 | 5 | 0.041 [-0.010, 0.092] | 4/5 |' ...
 */
export function differencesTable(rows: readonly VariantSummary[]): string {
  const lines = ['| difference (final held-out success) | seeds | mean [95% CI] | first ahead in |', '|---|---|---|---|'];
  for (let i = 0; i < rows.length; i++) {
    for (let j = i + 1; j < rows.length; j++) {
      const a = rows[i] as VariantSummary;
      const b = rows[j] as VariantSummary;
      const diffs = a.seedIds.flatMap((seed, k) => {
        const other = b.seedIds.indexOf(seed);
        return other < 0 ? [] : [(a.finalSuccess[k] as number) - (b.finalSuccess[other] as number)];
      }).filter(Number.isFinite);
      lines.push(`| ${a.variant} − ${b.variant} | ${diffs.length} | ${ci(diffs)} | ${diffs.filter((d) => d > 0).length}/${diffs.length} |`);
    }
  }
  return lines.join('\n');
}
