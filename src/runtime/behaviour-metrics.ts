/**
 * Behaviour metrics of a step's episodes by turn index, and the distribution of episode lengths
 * (names from the metric families in `src/core/metrics.ts`). Pure.
 *
 * Entropy here is the true entropy the sampler recorded for each freely chosen token
 * (`Turn.entropies`: the distribution it was drawn from), never the chosen token's -log p.
 */
import { actionKeyOf } from '../algorithms/reward-shapers.js';
import { byLengthMetric, byTurnMetric } from '../core/metrics.js';
import type { Trajectory, Turn } from '../core/types.js';

export { actionKeyOf };

/**
 * Sum and count of the recorded entropies of a turn's freely chosen tokens (mask 1); zeros when
 * the turn recorded none.
 * @example freeTokenEntropy(turn) // { sum: 1.6, count: 2 }
 */
export function freeTokenEntropy(turn: Turn): { sum: number; count: number } {
  const h = turn.entropies;
  if (h === undefined) return { sum: 0, count: 0 };
  let sum = 0;
  let count = 0;
  for (let j = 0; j < h.length; j++) {
    if (turn.actionLossMask[j] === 0) continue;
    sum += h[j] as number;
    count++;
  }
  return { sum, count };
}

/** Per turn index k: how many episodes reached it and what happened there. */
interface TurnIndexTally {
  reached: number;
  invalid: number;
  repeated: number;
  entropySum: number;
  entropyTokens: number;
}

/**
 * `byTurn/<metric>/<k>` for every turn index some episode reached, and `episodeLength/<n>` for
 * n = 0 .. the longest episode: the share of episodes with exactly n turns.
 * @example byTurnMetrics(trajectories)['byTurn/repeatedActionRate/3'] // 0.4
 */
export function byTurnMetrics(trajectories: readonly Trajectory[]): Record<string, number> {
  const tallies: TurnIndexTally[] = [];
  const lengths: number[] = [];
  for (const t of trajectories) {
    const seen = new Set<string>();
    lengths[t.turns.length] = (lengths[t.turns.length] ?? 0) + 1;
    t.turns.forEach((turn, k) => {
      if (tallies[k] === undefined) tallies[k] = { reached: 0, invalid: 0, repeated: 0, entropySum: 0, entropyTokens: 0 };
      const tally = tallies[k] as TurnIndexTally;
      tally.reached++;
      if (turn.invalidAction) tally.invalid++;
      const key = actionKeyOf(turn);
      if (seen.has(key)) tally.repeated++;
      seen.add(key);
      const h = freeTokenEntropy(turn);
      tally.entropySum += h.sum;
      tally.entropyTokens += h.count;
    });
  }
  const out: Record<string, number> = {};
  const n = trajectories.length;
  if (n === 0) return out;
  tallies.forEach((tally, k) => {
    out[byTurnMetric('reached', k)] = tally.reached / n;
    out[byTurnMetric('invalidActionRate', k)] = tally.invalid / tally.reached;
    out[byTurnMetric('repeatedActionRate', k)] = tally.repeated / tally.reached;
    out[byTurnMetric('tokenEntropy', k)] = tally.entropyTokens > 0 ? tally.entropySum / tally.entropyTokens : Number.NaN;
  });
  for (let len = 0; len < lengths.length; len++) out[byLengthMetric(len)] = (lengths[len] ?? 0) / n;
  return out;
}
