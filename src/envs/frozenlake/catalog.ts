/**
 * FrozenLake settings, task ids and splits: task `frozenlake_<n>` is the map generated from seed
 * `n` at the configured size; test = seeds 0-199, train = seeds 1000-20999. Small maps repeat
 * (a 4 x 4 map has 14 free cells), so some train maps equal test maps, as in any generator of
 * small maps; the seeds never overlap.
 */
import { z } from 'zod';
import type { Split } from '../../core/types.js';
import type { EnvironmentOptions, TaskCatalog } from '../environment.js';
import { parseEnvSettings } from '../settings.js';

/** `env.settings` of FrozenLake. */
export const frozenLakeSettingsSchema = z
  .object({
    size: z.number().int().min(2).max(16).default(4).describe('Side of the square map (Gymnasium: 4 or 8).'),
    slippery: z.boolean().default(false).describe('Slippery ice: the intended or a perpendicular move, 1/3 each (Gymnasium is_slippery).'),
    frozenProbability: z.number().gt(0).max(1).default(0.8).describe('Chance that a generated cell is frozen rather than a hole (Gymnasium p).'),
    maxSteps: z.number().int().positive().default(100).describe('Moves before the episode ends unsolved (Gymnasium TimeLimit: 100 for 4x4).'),
    seed: z.number().int().default(0).describe('Seed of the slip stream (slippery only); every reset restarts it, forked by the task index.'),
  })
  .strict();

/** Parsed FrozenLake settings. */
export type FrozenLakeSettings = z.output<typeof frozenLakeSettingsSchema>;

/** Test seeds: [0, TEST_SEEDS). */
export const FROZENLAKE_TEST_SEEDS = 200;
/** Train seeds: [TRAIN_START, TRAIN_START + TRAIN_SEEDS). */
export const FROZENLAKE_TRAIN_START = 1000;
export const FROZENLAKE_TRAIN_SEEDS = 20000;

/**
 * Reads and checks `env.settings`.
 * @example frozenLakeSettings({ settings: { slippery: true } }).size // 4
 */
export function frozenLakeSettings(options?: EnvironmentOptions): FrozenLakeSettings {
  return parseEnvSettings(frozenLakeSettingsSchema, options);
}

const range = (first: number, count: number): readonly number[] => Object.freeze(Array.from({ length: count }, (_, i) => first + i));

/**
 * @example createFrozenLakeCatalog().indices('test').length // 200
 */
export function createFrozenLakeCatalog(options?: EnvironmentOptions): TaskCatalog {
  const settings = frozenLakeSettings(options);
  const test = range(0, FROZENLAKE_TEST_SEEDS);
  const train = range(FROZENLAKE_TRAIN_START, FROZENLAKE_TRAIN_SEEDS);
  const category = `${settings.size}x${settings.size}${settings.slippery ? '-slippery' : ''}`;
  return { indices: (split: Split) => (split === 'test' ? test : train), category: () => category };
}
