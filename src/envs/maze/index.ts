/**
 * The maze environment (LMRL-Gym double-T maze, plus random perfect mazes): registry spec and
 * public pieces.
 */
import type { EnvironmentSpec } from '../environment.js';
import { randomPlayCorpus } from '../random-play.js';
import { createMazeCatalog } from './catalog.js';
import { MazeEnvironment } from './env.js';

/**
 * Registry entry for `maze` (task ids `maze_<index>`).
 * @example mazeSpec.create().reset(0).text.startsWith('Find the goal.') // true
 */
export const mazeSpec: EnvironmentSpec = {
  name: 'maze',
  description: "LMRL-Gym's double-T maze (25 starts, goal (8, 6)) or random perfect mazes; coordinate observations, four moves",
  create: (options) => new MazeEnvironment(options),
  catalog: (options) => createMazeCatalog(options),
  corpus: (options, episodes, seed) =>
    randomPlayCorpus({
      env: new MazeEnvironment(options),
      tasks: createMazeCatalog(options).indices('train'),
      episodes,
      seed,
      invalidSamples: ['jump', 'move north', 'go to the goal', 'up up'],
    }),
  // Only the last step pays (success); reward.mode sum is refused for it.
  paysTurnRewards: () => false,
};

export { createMazeCatalog, DOUBLE_T_GAMES, mazeSettings, mazeSettingsSchema, mazeTask, RANDOM_TEST_SEEDS } from './catalog.js';
export type { MazeSettings } from './catalog.js';
export { describePosition, MAZE_ACTIONS, MAZE_INSTRUCTION, MazeEnvironment, mazeAction } from './env.js';
export { DOUBLE_T_GOAL, DOUBLE_T_GRID, DOUBLE_T_STARTS, isWall, randomMaze } from './layout.js';
export type { MazeLayout, Placement, Position } from './layout.js';
export { solveMaze } from './solver.js';
