/**
 * The BabyAI environment: its registry spec and public pieces.
 */
import type { EnvironmentSpec } from '../environment.js';
import { createBabyAICatalog } from './catalog.js';
import { babyaiCorpus } from './corpus.js';
import { BabyAIEnvironment } from './env.js';

/**
 * Registry entry for `babyai` (task ids `babyai_<index>`).
 * @example babyaiSpec.create().reset(1).text.startsWith('Your goal:') // true
 */
export const babyaiSpec: EnvironmentSpec = {
  name: 'babyai',
  description: 'BabyAI grid-world levels (MiniGrid) as text, with AgentGym task ids and actions',
  create: (options) => new BabyAIEnvironment(options),
  catalog: (options) => createBabyAICatalog(options),
  corpus: (options, episodes, seed) => babyaiCorpus(options, episodes, seed),
  // Only the last step pays (success); reward.mode sum is refused for it.
  paysTurnRewards: () => false,
};

export type { BabyAICatalog } from './catalog.js';
export { babyaiHorizonOf, babyaiTaskIndex, babyaiTaskOf, createBabyAICatalog, selectedLevelIndices, TEST_SEEDS, TRAIN_SEED_START, TRAIN_SEEDS } from './catalog.js';
export { babyaiCorpus } from './corpus.js';
export type { AgentGymStep } from './agentgym/episode.js';
export { AgentGymEpisode, agentGymGoal } from './agentgym/episode.js';
export type { BabyAIGenerator } from './level-random.js';
export type { BabyAISettings, BabyAITextProfile } from './settings.js';
export { babyaiSettings, babyaiSettingsSchema } from './settings.js';
export { BABYAI_INSTRUCTION, BabyAIEnvironment } from './env.js';
export type { LevelCategory, LevelSpec } from './levels/level.js';
export { AGENTGYM_BABYAI_HORIZON, LONG_LEVEL_HORIZONS, levelHorizon } from './levels/horizons.js';
export { generateLevel } from './levels/level.js';
export { AGENTGYM_RL_CATEGORIES, BABYAI_LEVELS, implementedLevelNames, levelIndexOf, NUM_BABYAI_LEVELS } from './levels/index.js';
export type { BotView, Goal } from './bot/bot.js';
export { BabyAIBot } from './bot/bot.js';
export type { BotEpisode } from './bot/play.js';
export { playBot } from './bot/play.js';
export type { ParsedGoal } from './oracle.js';
export { BabyAIOracle, extractGoal, parseGoal, targetAction } from './oracle.js';
export { renderWorld } from './render.js';
export type { SearchOptions, SearchResult } from './solver/search.js';
export { searchTurns } from './solver/search.js';
