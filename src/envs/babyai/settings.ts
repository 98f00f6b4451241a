/**
 * BabyAI's `env.settings`: which levels, which generator and which text. Unknown keys are refused
 * by name (a misspelt `level:` once trained on all 40 levels without a word).
 */
import { z } from 'zod';
import { InvalidConfigError } from '../../core/errors.js';
import type { EnvironmentOptions } from '../environment.js';
import { parseEnvSettings } from '../settings.js';

/** The text the environment speaks: AgentGym's server's, byte for byte, or turnwise's. */
export type BabyAITextProfile = 'agentgym' | 'turnwise';

/** `env.settings` of BabyAI. */
export const babyaiSettingsSchema = z
  .object({
    levels: z
      .array(z.string())
      .min(1)
      .optional()
      .describe('Levels the catalog draws from, by short name or gym id (default: all 40, AgentGym order).'),
    textProfile: z
      .enum(['agentgym', 'turnwise'])
      .default('turnwise')
      .describe("Observation and action text: 'agentgym' reproduces AgentGym's BabyAI server byte for byte (with its quirks); 'turnwise' is clearer and keeps every level solvable."),
    generator: z
      .enum(['minigrid', 'turnwise'])
      .default('minigrid')
      .describe("Level generation: 'minigrid' draws every world as Minigrid 2.4.0 does for the seed (the same babyai_<i> as AgentGym); 'turnwise' is turnwise's earlier generator (its own stream, unwinnable seeds regenerated)."),
    sequenceWords: z
      .boolean()
      .default(false)
      .describe('turnwise text only: keep "then" / "after you" in goals (AgentGym rewrites both to "and", losing the order).'),
    restateGoal: z
      .boolean()
      .default(false)
      .describe('turnwise text only: repeat the goal line in every observation (AgentGym states it in the first only, which a policy without history cannot see after turn 1).'),
  })
  .strict();

/** Parsed BabyAI settings. */
export type BabyAISettings = z.output<typeof babyaiSettingsSchema>;

/**
 * Reads and checks `env.settings`.
 * @example babyaiSettings({ settings: { textProfile: 'agentgym' } }).generator // 'minigrid'
 */
export function babyaiSettings(options?: EnvironmentOptions): BabyAISettings {
  const settings = parseEnvSettings(babyaiSettingsSchema, options);
  if (settings.textProfile === 'agentgym' && settings.generator !== 'minigrid') {
    throw new InvalidConfigError('env.settings.generator', "the agentgym text profile needs the minigrid generator (AgentGym's server plays Minigrid's worlds)");
  }
  if (settings.textProfile === 'agentgym' && settings.sequenceWords) {
    throw new InvalidConfigError('env.settings.sequenceWords', 'the agentgym text profile writes goals as AgentGym does (sequence words become "and"); use textProfile: turnwise to keep them');
  }
  if (settings.textProfile === 'agentgym' && settings.restateGoal) {
    throw new InvalidConfigError('env.settings.restateGoal', "the agentgym text profile shows the goal as AgentGym's server does (first observation only); use textProfile: turnwise to restate it");
  }
  return settings;
}
