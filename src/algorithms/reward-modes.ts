/**
 * What a trajectory is credited with, per `reward.mode` — pure, over a finished {@link Trajectory}.
 *
 * | mode | per-turn rewards | terminal reward | score |
 * |---|---|---|---|
 * | `outcome` (AgentGym-RL, the default) | none | the last step's reward | last reward |
 * | `sum` | each step's environment reward, on its turn | none | Σ turn rewards |
 * | `outcome+shaped` | each turn's shaped reward (the process-reward hook's) | the last step's reward | last + Σ shaped |
 *
 * The token layout (`src/learner/token-layout.ts`) puts turn k's reward on the last trained token
 * of turn k and the terminal reward on the trajectory's last trained token.
 */
import { InvalidArgumentError } from '../core/errors.js';
import { REWARD_MODES, type RewardMode } from '../core/reward-mode.js';
import type { Trajectory } from '../core/types.js';

export { REWARD_MODES, type RewardMode };

/** A trajectory's rewards under one mode: one per turn (in turn order) and one at the very end. */
export interface CreditedRewards {
  /** [turns] reward credited to each turn (0 where the mode gives none). */
  readonly perTurn: Float64Array;
  /** Reward credited to the trajectory's last trained token. */
  readonly terminal: number;
}

/**
 * The rewards `mode` credits a trajectory with (table in the module comment).
 * @throws InvalidArgumentError naming `reward.mode` for an unknown mode, or the turn whose shaped reward is not finite.
 * @example creditedRewards(trajectory, 'sum').perTurn // Float64Array [0, 0.2, 1]
 */
export function creditedRewards(trajectory: Trajectory, mode: RewardMode): CreditedRewards {
  const turns = trajectory.turns;
  const perTurn = new Float64Array(turns.length);
  switch (mode) {
    case 'outcome':
      return { perTurn, terminal: trajectory.reward };
    case 'sum':
      turns.forEach((turn, k) => {
        perTurn[k] = turn.reward;
      });
      return { perTurn, terminal: 0 };
    case 'outcome+shaped':
      turns.forEach((turn, k) => {
        const shaped = turn.shapedReward ?? 0;
        if (!Number.isFinite(shaped)) {
          throw InvalidArgumentError.format(`${trajectory.trajectoryId}.turns[${k}].shapedReward`, `expected a finite number, got ${shaped}`);
        }
        perTurn[k] = shaped;
      });
      return { perTurn, terminal: trajectory.reward };
    default:
      throw InvalidArgumentError.format('reward.mode', `unknown reward mode ${JSON.stringify(mode)}; valid: ${REWARD_MODES.join(', ')}`);
  }
}

/**
 * The score a trajectory is trained on under `mode`: its terminal reward plus its turn rewards.
 * @example trajectoryScore(trajectory, 'outcome') === trajectory.reward // true
 */
export function trajectoryScore(trajectory: Trajectory, mode: RewardMode): number {
  const { perTurn, terminal } = creditedRewards(trajectory, mode);
  let score = terminal;
  for (const r of perTurn) score += r;
  return score;
}
