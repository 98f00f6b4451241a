/**
 * The adapter of every AgentGym server type, in one typed registry (no caller switches on a type
 * name: it looks the adapter up here).
 */
import { alfworldAdapter } from './alfworld.js';
import { babyaiAdapter } from './babyai.js';
import { genericAdapter } from './generic.js';
import { mazeAdapter, wordleAdapter } from './lmrlgym.js';
import { sciworldAdapter } from './sciworld.js';
import { searchqaAdapter } from './searchqa.js';
import { sqlgymAdapter } from './sqlgym.js';
import { textcraftAdapter } from './textcraft.js';
import { academiaAdapter, movieAdapter, sheetAdapter, todoAdapter, weatherAdapter } from './tools.js';
import type { AgentGymAdapter, AgentGymType } from './types.js';
import { webarenaAdapter } from './webarena.js';
import { webshopAdapter } from './webshop.js';

/**
 * Adapters by type.
 * @example agentGymAdapters.webshop.hasClose // false
 */
export const agentGymAdapters = {
  babyai: babyaiAdapter,
  textcraft: textcraftAdapter,
  sciworld: sciworldAdapter,
  webarena: webarenaAdapter,
  searchqa: searchqaAdapter,
  webshop: webshopAdapter,
  alfworld: alfworldAdapter,
  maze: mazeAdapter,
  wordle: wordleAdapter,
  sqlgym: sqlgymAdapter,
  weather: weatherAdapter,
  movie: movieAdapter,
  todo: todoAdapter,
  sheet: sheetAdapter,
  academia: academiaAdapter,
  generic: genericAdapter,
} satisfies Record<AgentGymType, AgentGymAdapter>;

export { AGENTGYM_TYPES, type AgentGymAdapter, type AgentGymType } from './types.js';
export { babyaiActionsInText } from './babyai.js';
