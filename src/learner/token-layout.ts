/**
 * Trajectories → the `[B·T]` per-token layout the advantage estimators read
 * (`src/algorithms/advantage-input.ts`): one row per trajectory, one slot per ACTION token, turn
 * by turn (the same order as `TargetSignal.tokenIndex`).
 *
 * Only action tokens are targets here: observation tokens are context in the next turn's prompt,
 * not slots of the row. That is the estimators' pass-through rule applied in advance — a masked
 * environment token carries the recursion unchanged, so leaving it out changes nothing.
 * Mask: 1 on action tokens that train (`actionLossMask`), 0 on forced tokens and padding.
 * Rewards (which ones: `reward.mode`, `src/algorithms/reward-modes.ts`):
 * - turn k's reward on the LAST TRAINED token of turn k; a turn with no trained token (every token
 *   forced) made no choice, so its reward moves back to the last trained token before it — the
 *   return seen by every earlier token is unchanged;
 * - the terminal (outcome) reward on the trajectory's LAST TRAINED token.
 * A reward with no trained token at or before it has nothing to credit: it is not placed, and its
 * trajectory is counted in `unplacedRewards`.
 */
import { creditedRewards, type RewardMode } from '../algorithms/reward-modes.js';
import type { Trajectory } from '../core/types.js';

/** The per-token view of a batch of trajectories. */
export interface TokenLayout {
  /** B: trajectories. */
  readonly rows: number;
  /** T: action-token slots per row (the longest trajectory's count, at least 1). */
  readonly seqLen: number;
  /** [B·T] 1 = trained action token. */
  readonly mask: Float32Array;
  /** [B·T] credited rewards (per `reward.mode`) on trained tokens, 0 elsewhere. */
  readonly rewards: Float32Array;
  /** [B·T] turn index of each slot (−1 on padding). */
  readonly turnIds: Int32Array;
  /** [B·T] behaviour log-prob of each action token (0 on padding). */
  readonly oldLogprobs: Float32Array;
  /** [B] group id of each row. */
  readonly groupIds: string[];
  /** Trajectories with a non-zero reward that had no trained token to sit on. */
  readonly unplacedRewards: number;
}

/**
 * Builds the layout. Shape: trajectories [B] → arrays [B·T]. `mode` defaults to `outcome`
 * (AgentGym-RL: the last step's reward on the last trained token, nothing per turn).
 * @example
 * const layout = tokenLayout(trajectories, 'sum');
 * computeAdvantages({ rewards: layout.rewards, mask: layout.mask, seqLen: layout.seqLen, groupIds: layout.groupIds, options });
 */
export function tokenLayout(trajectories: readonly Trajectory[], mode: RewardMode = 'outcome'): TokenLayout {
  const rows = trajectories.length;
  const lengths = trajectories.map((t) => t.turns.reduce((sum, turn) => sum + turn.actionTokens.length, 0));
  const seqLen = Math.max(1, ...lengths);
  const mask = new Float32Array(rows * seqLen);
  const rewards = new Float32Array(rows * seqLen);
  const turnIds = new Int32Array(rows * seqLen).fill(-1);
  const oldLogprobs = new Float32Array(rows * seqLen);
  let unplacedRewards = 0;
  trajectories.forEach((trajectory, b) => {
    const credited = creditedRewards(trajectory, mode);
    // Sums in float64 per slot, rounded once (several rewards can share a slot).
    const placed = new Map<number, number>();
    const place = (slot: number, reward: number): boolean => {
      if (reward === 0) return true;
      if (slot < 0) return false;
      placed.set(slot, (placed.get(slot) ?? 0) + reward);
      return true;
    };
    let slot = b * seqLen;
    let lastTrained = -1;
    let unplaced = false;
    trajectory.turns.forEach((turn, k) => {
      for (let j = 0; j < turn.actionTokens.length; j++, slot++) {
        mask[slot] = turn.actionLossMask[j] ? 1 : 0;
        turnIds[slot] = turn.index;
        oldLogprobs[slot] = turn.actionLogprobs[j];
        if (mask[slot] === 1) lastTrained = slot;
      }
      if (!place(lastTrained, credited.perTurn[k] as number)) unplaced = true;
    });
    if (!place(lastTrained, credited.terminal)) unplaced = true;
    for (const [at, reward] of placed) rewards[at] = reward;
    if (unplaced) unplacedRewards++;
  });
  return { rows, seqLen, mask, rewards, turnIds, oldLogprobs, groupIds: trajectories.map((t) => t.groupId), unplacedRewards };
}
