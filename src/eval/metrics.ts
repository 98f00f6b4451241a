/**
 * Evaluation metrics, as AgentGym-RL's `main_generation.py` prints them (reference §6.2):
 *
 * - **Avg@n** = mean task score over every sample (items × n), the score being the episode's
 *   outcome reward (last step's reward);
 * - **Pass@n** = mean over items of `[max score over the item's n samples > 0]`;
 *
 * plus the AgentGym `Evaluator`'s success rate (§1.8: share of samples the environment judged
 * solved), mean agent turns, and truncation / error rates. Per category when the environment's
 * catalog names categories (the category files of AgentGym's eval folders). Pure functions.
 */
import type { Outcome, Trajectory } from '../core/types.js';

/** One evaluated episode, reduced to what the metrics need. */
export interface EvalSample {
  /** Task item id (`babyai_12`): the n samples of one item share it. */
  readonly item: string;
  /** Reporting category of the item, if any. */
  readonly category?: string;
  /** Task score: the episode's outcome reward. */
  readonly reward: number;
  readonly outcome: Outcome;
  /** Agent turns taken. */
  readonly turns: number;
}

/** Metrics of a set of samples. NaN-free: an empty set gives zeros. */
export interface EvalMetrics {
  /** Distinct items. */
  readonly items: number;
  /** Episodes (items × samples per item). */
  readonly samples: number;
  /** Mean score over all samples. */
  readonly avgAtN: number;
  /** Share of items with at least one sample scoring > 0. */
  readonly passAtN: number;
  /** Share of samples that ended in success. */
  readonly successRate: number;
  readonly meanTurns: number;
  /** Share of samples cut at the horizon. */
  readonly truncationRate: number;
  /** Share of samples truncated by length (the context had no room for another reply). */
  readonly lengthTruncationRate: number;
  /** Share of samples that ended in an environment or policy error. */
  readonly errorRate: number;
}

/** Overall and per-category metrics. */
export interface EvalSummary {
  readonly overall: EvalMetrics;
  /** Sorted by category name. */
  readonly perCategory: Readonly<Record<string, EvalMetrics>>;
}

/**
 * The sample of a finished trajectory.
 * @example sampleOf(trajectory, 'GoTo') // { item: 'babyai_3', category: 'GoTo', reward: 0.9, outcome: 'success', turns: 2 }
 */
export function sampleOf(trajectory: Trajectory, category?: string): EvalSample {
  const base = { item: trajectory.taskId, reward: trajectory.reward, outcome: trajectory.outcome, turns: trajectory.turns.length };
  return category === undefined ? base : { ...base, category };
}

/**
 * Avg@n: mean score over all samples.
 * @example avgAtN([{ item: 'a', reward: 1, … }, { item: 'a', reward: 0, … }]) // 0.5
 */
export function avgAtN(samples: readonly EvalSample[]): number {
  if (samples.length === 0) return 0;
  let sum = 0;
  for (const s of samples) sum += s.reward;
  return sum / samples.length;
}

/**
 * Pass@n: share of items whose best sample scores > 0.
 * @example passAtN([{ item: 'a', reward: 0, … }, { item: 'a', reward: 1, … }, { item: 'b', reward: 0, … }]) // 0.5
 */
export function passAtN(samples: readonly EvalSample[]): number {
  const best = new Map<string, number>();
  for (const s of samples) best.set(s.item, Math.max(best.get(s.item) ?? Number.NEGATIVE_INFINITY, s.reward));
  if (best.size === 0) return 0;
  let passed = 0;
  for (const score of best.values()) if (score > 0) passed++;
  return passed / best.size;
}

/**
 * Every metric of a set of samples.
 * @example evalMetrics(samples).passAtN
 */
export function evalMetrics(samples: readonly EvalSample[]): EvalMetrics {
  const n = samples.length;
  const share = (outcome: Outcome) => (n === 0 ? 0 : samples.filter((s) => s.outcome === outcome).length / n);
  return {
    items: new Set(samples.map((s) => s.item)).size,
    samples: n,
    avgAtN: avgAtN(samples),
    passAtN: passAtN(samples),
    successRate: share('success'),
    meanTurns: n === 0 ? 0 : samples.reduce((sum, s) => sum + s.turns, 0) / n,
    truncationRate: share('truncated'),
    lengthTruncationRate: share('length'),
    errorRate: share('error'),
  };
}

/**
 * Overall metrics and one set per category (samples without a category count only overall).
 * @example summarizeEval(samples).perCategory.GoTo?.avgAtN
 */
export function summarizeEval(samples: readonly EvalSample[]): EvalSummary {
  const groups = new Map<string, EvalSample[]>();
  for (const s of samples) {
    if (s.category === undefined) continue;
    const list = groups.get(s.category) ?? [];
    list.push(s);
    groups.set(s.category, list);
  }
  const perCategory: Record<string, EvalMetrics> = {};
  for (const name of [...groups.keys()].sort()) perCategory[name] = evalMetrics(groups.get(name) as EvalSample[]);
  return { overall: evalMetrics(samples), perCategory };
}
