/**
 * The `reward` section of the config: which rewards the learner trains on (`mode`) and an
 * optional process-reward hook (`shaper`, a name in the registry of
 * `src/algorithms/reward-shapers.ts`, with its `settings`). The default, `mode: outcome` without a
 * shaper, is AgentGym-RL's: the last step's reward on the last trained token, nothing per turn.
 */
import { z } from 'zod';
import { REWARD_MODES } from '../reward-mode.js';

/** The reward section. Cross-field rules (a shaper needs `outcome+shaped` and the reverse) are checked in `schema.ts`. */
export const rewardSchema = z
  .object({
    mode: z
      .enum(REWARD_MODES)
      .default('outcome')
      .describe(
        "What the learner is credited with: outcome (AgentGym-RL: the last step's reward on the last trained token), sum (every step's environment reward on its turn's last trained token), or outcome+shaped (the outcome plus each turn's shaped reward from reward.shaper).",
      ),
    shaper: z
      .string()
      .min(1)
      .nullable()
      .default(null)
      .describe('Process-reward hook called once per turn with the turn and the turns before it (built-in: turn-penalty, invalid-action-penalty, repeated-action-penalty; others via registerRewardShaper); required by and only used with mode outcome+shaped.'),
    settings: z.record(z.string(), z.unknown()).default({}).describe("Settings of the shaper, checked by its own schema (the built-ins take { penalty }: default 0.01 for turn-penalty, 0.1 for the others)."),
  })
  .strict();
