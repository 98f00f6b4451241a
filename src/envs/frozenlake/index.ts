/**
 * The FrozenLake environment (Gymnasium FrozenLake-v1 rules on generated maps): registry spec and
 * public pieces.
 */
import type { EnvironmentSpec } from '../environment.js';
import { randomPlayCorpus } from '../random-play.js';
import { createFrozenLakeCatalog } from './catalog.js';
import { FrozenLakeEnvironment } from './env.js';

/**
 * Registry entry for `frozenlake` (task ids `frozenlake_<seed>`).
 * @example frozenLakeSpec.create({ settings: { size: 4 } }).reset(0).text.includes('P') // true
 */
export const frozenLakeSpec: EnvironmentSpec = {
  name: 'frozenlake',
  description: 'FrozenLake (Gymnasium rules, slippery or not) on generated maps with a guaranteed path; text grid',
  create: (options) => new FrozenLakeEnvironment(options),
  catalog: (options) => createFrozenLakeCatalog(options),
  corpus: (options, episodes, seed) =>
    randomPlayCorpus({
      env: new FrozenLakeEnvironment(options),
      tasks: createFrozenLakeCatalog(options).indices('train'),
      episodes,
      seed,
      invalidSamples: ['jump', 'swim', 'north', 'up left'],
    }),
  // Only the last step pays (success); reward.mode sum is refused for it.
  paysTurnRewards: () => false,
};

export { createFrozenLakeCatalog, FROZENLAKE_TEST_SEEDS, frozenLakeSettings, frozenLakeSettingsSchema } from './catalog.js';
export type { FrozenLakeSettings } from './catalog.js';
export { drawLake, FROZENLAKE_INSTRUCTION, FrozenLakeEnvironment } from './env.js';
export { generateLakeMap, lakePath, moveOnLake, slipOptions, successProbability } from './map.js';
export type { LakeMap } from './map.js';
