/**
 * Trajectories → the `[B·T]` per-token layout the advantage estimators read
 * (`src/algorithms/advantage-input.ts`): one row per trajectory, one slot per ACTION token, turn
 * by turn (the same order as `TargetSignal.tokenIndex`).
 *
 * Only action tokens are targets here: observation tokens are context in the next turn's prompt,
 * not slots of the row. That is the estimators' pass-through rule applied in advance — a masked
 * environment token carries the recursion unchanged, so leaving it out changes nothing.
 * Mask: 1 on action tokens that train (`actionLossMask`), 0 on forced tokens and padding.
 * Rewards: the trajectory's outcome reward on its LAST TRAINED token; a trajectory with no trained
 * token has nothing to credit, so its reward is not placed (it is counted in `unplacedRewards`).
 */
import type { Trajectory } from '../core/types.js';

/** The per-token view of a batch of trajectories. */
export interface TokenLayout {
  /** B: trajectories. */
  readonly rows: number;
  /** T: action-token slots per row (the longest trajectory's count, at least 1). */
  readonly seqLen: number;
  /** [B·T] 1 = trained action token. */
  readonly mask: Float32Array;
  /** [B·T] outcome reward on each row's last trained token, 0 elsewhere. */
  readonly rewards: Float32Array;
  /** [B·T] turn index of each slot (−1 on padding). */
  readonly turnIds: Int32Array;
  /** [B·T] behaviour log-prob of each action token (0 on padding). */
  readonly oldLogprobs: Float32Array;
  /** [B] group id of each row. */
  readonly groupIds: string[];
  /** Trajectories whose non-zero reward had no trained token to sit on. */
  readonly unplacedRewards: number;
}

/**
 * Builds the layout. Shape: trajectories [B] → arrays [B·T].
 * @example
 * const layout = tokenLayout(trajectories);
 * computeAdvantages({ rewards: layout.rewards, mask: layout.mask, seqLen: layout.seqLen, groupIds: layout.groupIds, options });
 */
export function tokenLayout(trajectories: readonly Trajectory[]): TokenLayout {
  const rows = trajectories.length;
  const lengths = trajectories.map((t) => t.turns.reduce((sum, turn) => sum + turn.actionTokens.length, 0));
  const seqLen = Math.max(1, ...lengths);
  const mask = new Float32Array(rows * seqLen);
  const rewards = new Float32Array(rows * seqLen);
  const turnIds = new Int32Array(rows * seqLen).fill(-1);
  const oldLogprobs = new Float32Array(rows * seqLen);
  let unplacedRewards = 0;
  trajectories.forEach((trajectory, b) => {
    let slot = b * seqLen;
    let lastTrained = -1;
    for (const turn of trajectory.turns) {
      for (let j = 0; j < turn.actionTokens.length; j++, slot++) {
        mask[slot] = turn.actionLossMask[j] ? 1 : 0;
        turnIds[slot] = turn.index;
        oldLogprobs[slot] = turn.actionLogprobs[j];
        if (mask[slot] === 1) lastTrained = slot;
      }
    }
    if (lastTrained >= 0) rewards[lastTrained] = trajectory.reward;
    else if (trajectory.reward !== 0) unplacedRewards++;
  });
  return { rows, seqLen, mask, rewards, turnIds, oldLogprobs, groupIds: trajectories.map((t) => t.groupId), unplacedRewards };
}
