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
  readonly errorRate: number;
  readonly invalidActionRate: number;
}

/**
 * Summarises episodes.
 * @example summarizeEpisodes(trajectories).successRate // 0.75
 */
export function summarizeEpisodes(trajectories: readonly Trajectory[]): EpisodeSummary {
  const n = trajectories.length;
  if (n === 0) {
    return { episodes: 0, successRate: 0, meanReward: 0, meanTurns: 0, truncationRate: 0, errorRate: 0, invalidActionRate: 0 };
  }
  let success = 0;
  let truncated = 0;
  let errors = 0;
  let reward = 0;
  let turns = 0;
  let invalid = 0;
  for (const t of trajectories) {
    if (t.outcome === 'success') success++;
    else if (t.outcome === 'truncated') truncated++;
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
    errorRate: errors / n,
    invalidActionRate: turns > 0 ? invalid / turns : 0,
  };
}

/** Rollout metrics of a training step, keyed by metric name. */
export function rolloutMetrics(trajectories: readonly Trajectory[], rolloutSec: number): Record<string, number> {
  const s = summarizeEpisodes(trajectories);
  return {
    'rollout/successRate': s.successRate,
    'rollout/meanReward': s.meanReward,
    'rollout/meanTurns': s.meanTurns,
    'rollout/truncationRate': s.truncationRate,
    'rollout/errorRate': s.errorRate,
    'rollout/invalidActionRate': s.invalidActionRate,
    'throughput/episodesPerSec': rolloutSec > 0 ? s.episodes / rolloutSec : 0,
    'time/rolloutSec': rolloutSec,
  };
}
