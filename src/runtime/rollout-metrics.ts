/**
 * Summary metrics of a set of finished episodes (names from `src/core/metrics.ts`). Pure.
 */
import type { Trajectory } from '../core/types.js';

/** Outcome shares and means over `trajectories`; NaN-free for an empty list (all zeros). */
export interface EpisodeSummary {
  readonly episodes: number;
  readonly successRate: number;
  readonly meanReward: number;
  readonly meanTurns: number;
  readonly truncationRate: number;
  /** Share of episodes truncated by length (no room left in the context for another reply). */
  readonly lengthTruncationRate: number;
  readonly errorRate: number;
  readonly invalidActionRate: number;
  /** Share of turns whose action (trimmed, lower-cased) the same episode already took. */
  readonly repeatedActionRate: number;
  /**
   * Mean over turns of the chosen action's negative log-prob, summed over its freely chosen tokens
   * (nats). The sampler keeps only the chosen tokens' log-probs, not whole distributions, so this is
   * the Monte-Carlo estimate of the per-turn action entropy (E[-log p(a)] = H), not the exact value.
   */
  readonly turnEntropy: number;
  /** Population standard deviation of the episodes' outcome rewards. */
  readonly rewardStd: number;
  /** Mean turns of successful episodes; NaN when none succeeded. */
  readonly meanTurnsSuccess: number;
  /** Mean turns of the other episodes (failure, truncated, error); NaN when all succeeded. */
  readonly meanTurnsFailed: number;
}

/**
 * Summarises episodes.
 * @example summarizeEpisodes(trajectories).successRate // 0.75
 */
export function summarizeEpisodes(trajectories: readonly Trajectory[]): EpisodeSummary {
  const n = trajectories.length;
  if (n === 0) {
    return {
      episodes: 0,
      successRate: 0,
      meanReward: 0,
      meanTurns: 0,
      truncationRate: 0,
      lengthTruncationRate: 0,
      errorRate: 0,
      invalidActionRate: 0,
      repeatedActionRate: 0,
      turnEntropy: 0,
      rewardStd: 0,
      meanTurnsSuccess: Number.NaN,
      meanTurnsFailed: Number.NaN,
    };
  }
  let success = 0;
  let truncated = 0;
  let lengthCut = 0;
  let errors = 0;
  let reward = 0;
  let turns = 0;
  let invalid = 0;
  let repeated = 0;
  let nll = 0;
  let successTurns = 0;
  for (const t of trajectories) {
    const seen = new Set<string>();
    for (const turn of t.turns) {
      const action = turn.actionText.trim().toLowerCase();
      if (seen.has(action)) repeated++;
      seen.add(action);
      nll += turnNll(turn.actionLogprobs, turn.actionLossMask);
    }
    if (t.outcome === 'success') successTurns += t.turns.length;
    if (t.outcome === 'success') success++;
    else if (t.outcome === 'truncated') truncated++;
    else if (t.outcome === 'length') lengthCut++;
    else if (t.outcome === 'error') errors++;
    reward += t.reward;
    turns += t.turns.length;
    for (const turn of t.turns) if (turn.invalidAction) invalid++;
  }
  return {
    episodes: n,
    successRate: success / n,
    meanReward: reward / n,
    meanTurns: turns / n,
    truncationRate: truncated / n,
    lengthTruncationRate: lengthCut / n,
    errorRate: errors / n,
    invalidActionRate: turns > 0 ? invalid / turns : 0,
    repeatedActionRate: turns > 0 ? repeated / turns : 0,
    turnEntropy: turns > 0 ? nll / turns : 0,
    rewardStd: Math.sqrt(trajectories.reduce((acc, t) => acc + (t.reward - reward / n) ** 2, 0) / n),
    meanTurnsSuccess: success > 0 ? successTurns / success : Number.NaN,
    meanTurnsFailed: n - success > 0 ? (turns - successTurns) / (n - success) : Number.NaN,
  };
}

/** -log p(action) over the tokens the policy chose freely (mask 1); forced tokens carry no choice. */
function turnNll(logprobs: Float32Array, mask: Uint8Array): number {
  let sum = 0;
  for (let i = 0; i < logprobs.length; i++) if (mask[i] !== 0) sum -= logprobs[i] as number;
  return sum;
}

/**
 * Rollout metrics of a training step, keyed by metric name (behaviour metrics included).
 * @example rolloutMetrics(trajectories, 2.5)['rollout/repeatedActionRate'] // 0.1
 */
export function rolloutMetrics(trajectories: readonly Trajectory[], rolloutSec: number): Record<string, number> {
  const s = summarizeEpisodes(trajectories);
  return {
    'rollout/successRate': s.successRate,
    'rollout/meanReward': s.meanReward,
    'rollout/meanTurns': s.meanTurns,
    'rollout/truncationRate': s.truncationRate,
    'rollout/lengthTruncationRate': s.lengthTruncationRate,
    'rollout/errorRate': s.errorRate,
    'rollout/invalidActionRate': s.invalidActionRate,
    'rollout/repeatedActionRate': s.repeatedActionRate,
    'rollout/turnEntropy': s.turnEntropy,
    'rollout/rewardStd': s.rewardStd,
    'rollout/meanTurnsSuccess': s.meanTurnsSuccess,
    'rollout/meanTurnsFailed': s.meanTurnsFailed,
    'throughput/episodesPerSec': rolloutSec > 0 ? s.episodes / rolloutSec : 0,
    'time/rolloutSec': rolloutSec,
  };
}
