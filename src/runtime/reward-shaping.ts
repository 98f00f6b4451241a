/**
 * The run's process-reward hook from its config (`reward.shaper` + `reward.settings`), as the
 * rollout options take it; every assembly that builds a `RolloutRunner` for training (in-process,
 * NATS episodes workers) uses this, so shaped rewards are the same wherever episodes run.
 */
import { type RewardShaping, rewardShapingOf } from '../algorithms/reward-shapers.js';
import type { ResolvedConfig } from '../core/config.js';

/**
 * `{ shaping }` when the config names a shaper, `{}` otherwise (spread into `RolloutOptions`).
 * @throws InvalidConfigError naming `reward.shaper` or `reward.settings.<key>`.
 * @example new RolloutRunner({ ...options, ...rolloutShapingOf(config) });
 */
export function rolloutShapingOf(config: Pick<ResolvedConfig, 'reward'>): { shaping?: RewardShaping } {
  const { shaper, settings } = config.reward;
  return shaper === null ? {} : { shaping: rewardShapingOf(shaper, settings as Record<string, unknown>) };
}
