/**
 * Maze settings, task ids and splits.
 *
 * - `layout: double_t` (default, LMRL-Gym / AgentGym `lmrlgym_maze`): task `maze_<g>` starts at
 *   start position `g` (0-24) of the one double-T maze. There is one maze, so train and test hold
 *   the same 25 starts, as AgentEval's 25-item maze test set does; game 25 (the goal itself) is
 *   listed by AgentGym but refused.
 * - `layout: random`: task `maze_<n>` is the random perfect maze of seed `n` at `size`; test =
 *   seeds 0-199, train = seeds 1000-20999, so held-out success measures new layouts.
 */
import { z } from 'zod';
import type { Split } from '../../core/types.js';
import type { EnvironmentOptions, TaskCatalog } from '../environment.js';
import { parseEnvSettings } from '../settings.js';
import { DOUBLE_T_GOAL, DOUBLE_T_GRID, DOUBLE_T_STARTS, type MazeLayout, randomMaze } from './layout.js';

/** `env.settings` of the maze environment. */
export const mazeSettingsSchema = z
  .object({
    layout: z.enum(['double_t', 'random']).default('double_t').describe("Which mazes: LMRL-Gym's double-T maze, or random perfect mazes."),
    size: z
      .number()
      .int()
      .min(5)
      .max(31)
      .refine((n) => n % 2 === 1, { message: 'must be odd' })
      .default(7)
      .describe('Side of a random maze including its border (odd); ignored for double_t.'),
    placement: z
      .enum(['random', 'corners'])
      .default('random')
      .describe("Random mazes only: start and goal drawn at random, or start top-left and goal bottom-right (the easiest setting)."),
    maxSteps: z.number().int().positive().default(50).describe('Moves before the episode ends unsolved (LMRL-Gym: 50).'),
  })
  .strict();

/** Parsed maze settings. */
export type MazeSettings = z.output<typeof mazeSettingsSchema>;

/** Double-T games that can be played (all but the one that starts on the goal). */
export const DOUBLE_T_GAMES = 25;
/** Test seeds of random mazes: [0, RANDOM_TEST_SEEDS). */
export const RANDOM_TEST_SEEDS = 200;
/** Train seeds of random mazes: [RANDOM_TRAIN_START, RANDOM_TRAIN_START + RANDOM_TRAIN_SEEDS). */
export const RANDOM_TRAIN_START = 1000;
export const RANDOM_TRAIN_SEEDS = 20000;

/**
 * Reads and checks `env.settings`.
 * @example mazeSettings({ settings: { layout: 'random', size: 5 } }).size // 5
 */
export function mazeSettings(options?: EnvironmentOptions): MazeSettings {
  return parseEnvSettings(mazeSettingsSchema, options);
}

/**
 * The layout of task `index`, or a reason it has none.
 * @example mazeTask(mazeSettings(), 0) // { ok: true, layout: { start: [1, 1], goal: [8, 6], ... } }
 */
export function mazeTask(settings: MazeSettings, index: number): { ok: true; layout: MazeLayout } | { ok: false; reason: string } {
  if (!Number.isInteger(index) || index < 0) return { ok: false, reason: `task index must be a non-negative integer, got ${index}` };
  if (settings.layout === 'random') return { ok: true, layout: randomMaze(settings.size, index, settings.placement) };
  if (index >= DOUBLE_T_STARTS.length) return { ok: false, reason: `double-T game ${index} does not exist; games are 0-${DOUBLE_T_STARTS.length - 1}` };
  if (index === DOUBLE_T_STARTS.length - 1) return { ok: false, reason: `double-T game ${index} starts on the goal (8, 6); LMRL-Gym refuses it too. Playable games: 0-${DOUBLE_T_GAMES - 1}` };
  return { ok: true, layout: { grid: DOUBLE_T_GRID, start: DOUBLE_T_STARTS[index] as MazeLayout['start'], goal: DOUBLE_T_GOAL } };
}

const range = (first: number, count: number): readonly number[] => Object.freeze(Array.from({ length: count }, (_, i) => first + i));

/**
 * Train and test task indices for the chosen layout.
 * @example createMazeCatalog().indices('test').length // 25
 */
export function createMazeCatalog(options?: EnvironmentOptions): TaskCatalog {
  const settings = mazeSettings(options);
  const random = settings.layout === 'random';
  const test = random ? range(0, RANDOM_TEST_SEEDS) : range(0, DOUBLE_T_GAMES);
  const train = random ? range(RANDOM_TRAIN_START, RANDOM_TRAIN_SEEDS) : test;
  return {
    indices: (split: Split) => (split === 'test' ? test : train),
    category: () => (random ? `random${settings.size}-${settings.placement}` : 'double_t'),
  };
}
