/**
 * The TextCraft environment: its registry spec and public pieces (`register.ts` adds it to the
 * registry).
 */
import type { EnvironmentSpec } from '../environment.js';
import { createTextcraftCatalog, textcraftSettings } from './catalog.js';
import { textcraftCorpus } from './corpus.js';
import { randomTextcraftAction, TextCraftEnvironment } from './env.js';

/**
 * Registry entry for `textcraft` (task ids `textcraft_<index>`).
 * @example textcraftSpec.create().reset(0).text.startsWith('Crafting commands:') // true
 */
export const textcraftSpec: EnvironmentSpec = {
  name: 'textcraft',
  description: 'TextCraft (Minecraft 1.16.5 recipes from minecraft-data): craft a goal item with get/craft/inventory, AgentGym task ids',
  create: (options) => new TextCraftEnvironment(options),
  catalog: (options) => createTextcraftCatalog(options),
  corpus: (options, episodes, seed) => textcraftCorpus(options, episodes, seed),
  randomAction: randomTextcraftAction,
  paysTurnRewards: (options) => textcraftSettings(options).turnRewards,
};

export { craftActions, getActions, MAX_VARIANTS } from './actions.js';
export type { TextcraftSettings } from './catalog.js';
export { createTextcraftCatalog, TEST_SIZE, testPositions, textcraftSettings, textcraftSettingsSchema } from './catalog.js';
export type { Command, CommandResult } from './commands.js';
export { applyCommand, inventoryText, MAX_QUANTITY, matchRecipe, parseCommand } from './commands.js';
export { textcraftCorpus } from './corpus.js';
export { randomTextcraftAction, TEXTCRAFT_INSTRUCTION, TEXTCRAFT_TOOLS, TEXTCRAFT_TREE_BONUS, TextCraftEnvironment } from './env.js';
export type { EpisodeSetup } from './episode.js';
export { episodeSetup, MAX_DISTRACTORS } from './episode.js';
export type { Goal, Recipe, RecipeFileData, Stack } from './recipe-book.js';
export { defaultRecipeBook, RecipeBook, recipeText } from './recipe-book.js';
export type { Solution } from './solver.js';
export { solveGoal } from './solver.js';
