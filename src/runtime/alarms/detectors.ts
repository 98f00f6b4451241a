/**
 * Collapse detectors: pure functions of the recent steps' metrics (oldest first, the step just
 * completed last) and their thresholds from the `alarms` config section. Each returns a finding
 * (the metric it is about, its value, the threshold crossed and a sentence) or null.
 *
 * | detector | reads | fires when |
 * |---|---|---|
 * | `entropyCollapse` | `rollout/tokenEntropy` | rolling mean over `window` steps < `ratio` × the run's first-window mean (or < `below` nats) |
 * | `rewardVariance` | `rollout/zeroVarianceGroups` (− `rollout/solvedGroups`) | rolling share of zero-variance groups ≥ `above` |
 * | `echoTrap` | `rollout/groupSimilarity`, `rollout/groupRewardStd` | last window's similarity ≥ `similarityAbove`, up ≥ `minRise` on the window before, while the in-group spread fell |
 * | `gradNormSpike` | `optim/gradNorm` | this step's norm > `factor` × the median of the `window` before |
 * | `klBlowUp` | `loss/approxKl`, `loss/klRef` | this step's value > `approxKlAbove` / `klRefAbove` |
 */
import type { AlarmName, AlarmsConfig } from '../../core/config/alarm-schema.js';

/** One completed step's metrics, as the monitor keeps them. */
export interface StepSample {
  /** The step the metrics were logged at (1-based: completed steps). */
  readonly step: number;
  readonly metrics: Readonly<Record<string, number>>;
}

/** What a detector found. */
export interface AlarmFinding {
  /** The metric whose curve the alarm is marked on. */
  readonly metric: string;
  readonly value: number;
  readonly threshold: number;
  /** One sentence with the numbers, for the CLI line and the run event. */
  readonly message: string;
}

/** What the run remembers for the detectors beyond the recent steps. */
export interface DetectorMemory {
  /** Mean rollout/tokenEntropy of the run's first `entropyCollapse.window` steps (null until known). */
  readonly entropyStart: number | null;
}

/** Metrics the detectors read (the monitor keeps only these). */
export const ALARM_METRICS = [
  'rollout/tokenEntropy',
  'rollout/zeroVarianceGroups',
  'rollout/solvedGroups',
  'rollout/groupSimilarity',
  'rollout/groupRewardStd',
  'optim/gradNorm',
  'loss/approxKl',
  'loss/klRef',
] as const;

type Detector<K extends AlarmName> = (history: readonly StepSample[], settings: AlarmsConfig[K], memory: DetectorMemory) => AlarmFinding | null;

/** The finite values of `metric`, oldest first. */
const valuesOf = (history: readonly StepSample[], metric: string): number[] => history.flatMap((s) => (Number.isFinite(s.metrics[metric]) ? [s.metrics[metric] as number] : []));
const mean = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
const median = (xs: readonly number[]): number => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
};
const f3 = (x: number): string => x.toFixed(3);

/**
 * Policy entropy collapse.
 * @example entropyCollapse(history, config.alarms.entropyCollapse, { entropyStart: 1.6 })
 */
export const entropyCollapse: Detector<'entropyCollapse'> = (history, s, memory) => {
  const values = valuesOf(history, 'rollout/tokenEntropy').slice(-s.window);
  if (values.length < s.window || memory.entropyStart === null) return null;
  const rolling = mean(values);
  const relative = s.ratio * memory.entropyStart;
  const threshold = Math.max(relative, s.below ?? Number.NEGATIVE_INFINITY);
  if (!(rolling < threshold)) return null;
  const why = threshold === relative ? `${s.ratio} x the run's start ${f3(memory.entropyStart)}` : `the floor ${s.below}`;
  return { metric: 'rollout/tokenEntropy', value: rolling, threshold, message: `entropy collapse: rollout/tokenEntropy ${f3(rolling)} nats (${s.window}-step mean) < ${f3(threshold)} (${why})` };
};

/**
 * In-group reward-variance collapse.
 * @example rewardVariance(history, config.alarms.rewardVariance, memory)
 */
export const rewardVariance: Detector<'rewardVariance'> = (history, s) => {
  const shares = history.flatMap((h) => {
    const zero = h.metrics['rollout/zeroVarianceGroups'];
    if (!Number.isFinite(zero)) return [];
    const solved = s.ignoreSolved ? (h.metrics['rollout/solvedGroups'] ?? 0) : 0;
    return [(zero as number) - (Number.isFinite(solved) ? solved : 0)];
  });
  const recent = shares.slice(-s.window);
  if (recent.length < s.window) return null;
  const rolling = mean(recent);
  if (!(rolling >= s.above)) return null;
  const which = s.ignoreSolved ? 'unsolved groups with zero score variance' : 'groups with zero score variance';
  return { metric: 'rollout/zeroVarianceGroups', value: rolling, threshold: s.above, message: `reward-variance collapse: ${f3(rolling)} of ${which} (${s.window}-step mean) >= ${s.above}: GRPO/RLOO get almost no signal` };
};

/**
 * Echo trap: samples of a group converge on one action sequence while their scores stop differing.
 * @example echoTrap(history, config.alarms.echoTrap, memory)
 */
export const echoTrap: Detector<'echoTrap'> = (history, s) => {
  const pairs = history.flatMap((h) => {
    const sim = h.metrics['rollout/groupSimilarity'];
    const std = h.metrics['rollout/groupRewardStd'];
    return Number.isFinite(sim) && Number.isFinite(std) ? [{ sim: sim as number, std: std as number }] : [];
  });
  if (pairs.length < 2 * s.window) return null;
  const recent = pairs.slice(-s.window);
  const before = pairs.slice(-2 * s.window, -s.window);
  const simNow = mean(recent.map((p) => p.sim));
  const simBefore = mean(before.map((p) => p.sim));
  const stdNow = mean(recent.map((p) => p.std));
  const stdBefore = mean(before.map((p) => p.std));
  if (!(simNow >= s.similarityAbove && simNow - simBefore >= s.minRise && stdNow < stdBefore)) return null;
  return {
    metric: 'rollout/groupSimilarity',
    value: simNow,
    threshold: s.similarityAbove,
    message: `echo trap: within-group action similarity ${f3(simBefore)} -> ${f3(simNow)} (${s.window}-step means, >= ${s.similarityAbove}) while the in-group score spread fell ${f3(stdBefore)} -> ${f3(stdNow)}`,
  };
};

/**
 * Gradient-norm spike.
 * @example gradNormSpike(history, config.alarms.gradNormSpike, memory)
 */
export const gradNormSpike: Detector<'gradNormSpike'> = (history, s) => {
  const latest = history.at(-1);
  const now = latest?.metrics['optim/gradNorm'];
  if (latest === undefined || !Number.isFinite(now)) return null;
  const previous = valuesOf(history.slice(0, -1), 'optim/gradNorm').slice(-s.window);
  if (previous.length < s.window) return null;
  const reference = median(previous);
  const threshold = s.factor * reference;
  if (!(reference > 0 && (now as number) > threshold)) return null;
  return { metric: 'optim/gradNorm', value: now as number, threshold, message: `gradient-norm spike: optim/gradNorm ${f3(now as number)} > ${s.factor} x the median ${f3(reference)} of the previous ${s.window} steps` };
};

/**
 * KL blow-up.
 * @example klBlowUp(history, config.alarms.klBlowUp, memory)
 */
export const klBlowUp: Detector<'klBlowUp'> = (history, s) => {
  const latest = history.at(-1)?.metrics ?? {};
  const checks = [
    ['loss/approxKl', s.approxKlAbove, 'the update moved the policy too far'],
    ['loss/klRef', s.klRefAbove, 'the policy drifted from the reference'],
  ] as const;
  for (const [metric, limit, why] of checks) {
    const value = latest[metric];
    if (limit !== null && Number.isFinite(value) && (value as number) > limit) {
      return { metric, value: value as number, threshold: limit, message: `KL blow-up: ${metric} ${f3(value as number)} > ${limit}: ${why}` };
    }
  }
  return null;
};

/** Every detector by name (the order alarms are checked and reported in). */
export const DETECTORS: { readonly [K in AlarmName]: Detector<K> } = { entropyCollapse, rewardVariance, echoTrap, gradNormSpike, klBlowUp };
