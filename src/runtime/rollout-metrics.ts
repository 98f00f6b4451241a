/**
 * Summary metrics of a set of finished episodes (names from `src/core/metrics.ts`). Pure.
 */
import { type RewardMode, trajectoryScore } from '../algorithms/reward-modes.js';
import type { Trajectory } from '../core/types.js';
import { groupSignals } from './alarms/group-signals.js';
import { actionKeyOf, byTurnMetrics, freeTokenEntropy } from './behaviour-metrics.js';

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
   * (nats): the action's surprisal, whose expectation is the action entropy (noisy; see `actionEntropy`).
   */
  readonly actionSurprisal: number;
  /**
   * Mean over freely chosen tokens of the entropy of the distribution each was drawn from (nats,
   * `Turn.entropies`); NaN when no turn recorded entropies. Split by constrained / free decoding in
   * `tokenEntropyConstrained` / `tokenEntropyFull`.
   */
  readonly tokenEntropy: number;
  readonly tokenEntropyConstrained: number;
  readonly tokenEntropyFull: number;
  /** Mean over turns (with entropies) of the summed token entropies of the action: its chain-rule entropy estimate. */
  readonly actionEntropy: number;
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
      actionSurprisal: 0,
      tokenEntropy: Number.NaN,
      tokenEntropyConstrained: Number.NaN,
      tokenEntropyFull: Number.NaN,
      actionEntropy: Number.NaN,
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
  // Entropy sums and token counts: [constrained, free]; turns that recorded entropies and their sum.
  const entropySum = [0, 0];
  const entropyTokens = [0, 0];
  let entropyTurns = 0;
  let actionEntropySum = 0;
  for (const t of trajectories) {
    const seen = new Set<string>();
    for (const turn of t.turns) {
      const action = actionKeyOf(turn);
      if (seen.has(action)) repeated++;
      seen.add(action);
      nll += turnNll(turn.actionLogprobs, turn.actionLossMask);
      if (turn.entropies !== undefined) {
        const h = freeTokenEntropy(turn);
        const scope = turn.constraint === null ? 1 : 0;
        entropySum[scope] += h.sum;
        entropyTokens[scope] += h.count;
        entropyTurns++;
        actionEntropySum += h.sum;
      }
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
    actionSurprisal: turns > 0 ? nll / turns : 0,
    tokenEntropy: ratio((entropySum[0] as number) + (entropySum[1] as number), (entropyTokens[0] as number) + (entropyTokens[1] as number)),
    tokenEntropyConstrained: ratio(entropySum[0] as number, entropyTokens[0] as number),
    tokenEntropyFull: ratio(entropySum[1] as number, entropyTokens[1] as number),
    actionEntropy: ratio(actionEntropySum, entropyTurns),
    rewardStd: Math.sqrt(trajectories.reduce((acc, t) => acc + (t.reward - reward / n) ** 2, 0) / n),
    meanTurnsSuccess: success > 0 ? successTurns / success : Number.NaN,
    meanTurnsFailed: n - success > 0 ? (turns - successTurns) / (n - success) : Number.NaN,
  };
}

/** a / b, NaN when b is 0 (nothing to average). */
const ratio = (a: number, b: number): number => (b > 0 ? a / b : Number.NaN);

/** -log p(action) over the tokens the policy chose freely (mask 1); forced tokens carry no choice. */
function turnNll(logprobs: Float32Array, mask: Uint8Array): number {
  let sum = 0;
  for (let i = 0; i < logprobs.length; i++) if (mask[i] !== 0) sum -= logprobs[i] as number;
  return sum;
}

/**
 * Rollout metrics of a training step, keyed by metric name: outcome shares, behaviour metrics
 * (overall, per turn index and the episode-length distribution), entropies and the group signals
 * the collapse alarms read. Scores follow `rewardMode` (default `outcome`).
 * @example rolloutMetrics(trajectories, 2.5)['rollout/repeatedActionRate'] // 0.1
 */
export function rolloutMetrics(trajectories: readonly Trajectory[], rolloutSec: number, rewardMode: RewardMode = 'outcome'): Record<string, number> {
  const s = summarizeEpisodes(trajectories);
  const groups = groupSignals(trajectories, rewardMode);
  const none = groups.groups === 0;
  const n = trajectories.length;
  const shaped = trajectories.some((t) => t.turns.some((turn) => turn.shapedReward !== undefined));
  const mean = (f: (t: Trajectory) => number) => (n > 0 ? trajectories.reduce((a, t) => a + f(t), 0) / n : 0);
  return {
    'rollout/successRate': s.successRate,
    'rollout/meanReward': s.meanReward,
    'rollout/meanScore': mean((t) => trajectoryScore(t, rewardMode)),
    'rollout/meanTurnRewardSum': mean((t) => t.turns.reduce((a, turn) => a + turn.reward, 0)),
    ...(shaped ? { 'rollout/meanShapedReturn': mean((t) => t.turns.reduce((a, turn) => a + (turn.shapedReward ?? 0), 0)) } : {}),
    'rollout/meanTurns': s.meanTurns,
    'rollout/truncationRate': s.truncationRate,
    'rollout/lengthTruncationRate': s.lengthTruncationRate,
    'rollout/errorRate': s.errorRate,
    'rollout/invalidActionRate': s.invalidActionRate,
    'rollout/repeatedActionRate': s.repeatedActionRate,
    'rollout/tokenEntropy': s.tokenEntropy,
    'rollout/tokenEntropyConstrained': s.tokenEntropyConstrained,
    'rollout/tokenEntropyFull': s.tokenEntropyFull,
    'rollout/actionEntropy': s.actionEntropy,
    'rollout/actionSurprisal': s.actionSurprisal,
    'rollout/rewardStd': s.rewardStd,
    'rollout/meanTurnsSuccess': s.meanTurnsSuccess,
    'rollout/meanTurnsFailed': s.meanTurnsFailed,
    'rollout/zeroVarianceGroups': none ? Number.NaN : groups.zeroVarianceShare,
    'rollout/solvedGroups': none ? Number.NaN : groups.solvedShare,
    'rollout/groupRewardStd': none ? Number.NaN : groups.meanRewardStd,
    'rollout/groupSimilarity': none ? Number.NaN : groups.meanSimilarity,
    ...byTurnMetrics(trajectories),
    'throughput/episodesPerSec': rolloutSec > 0 ? s.episodes / rolloutSec : 0,
    'time/rolloutSec': rolloutSec,
  };
}
