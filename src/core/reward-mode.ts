/**
 * The names of the reward modes (`reward.mode`), shared by the config schema and the algorithms
 * that credit rewards (`src/algorithms/reward-modes.ts` says what each one credits).
 */

/** The reward modes, in the order the config lists them. */
export const REWARD_MODES = ['outcome', 'sum', 'outcome+shaped'] as const;

/** How per-turn rewards reach the learner. */
export type RewardMode = (typeof REWARD_MODES)[number];
