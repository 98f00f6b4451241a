/**
 * BabyAI task ids and splits, as AgentGym maps them: task index `i` plays level
 * `BABYAI_LEVELS[i % 40]` with seed `floor(i / 40)`. Test = seeds 0..999 of each selected level,
 * train = seeds 1000..20999, so the two never share an episode.
 */
import { InvalidConfigError } from '../../core/errors.js';
import type { Split } from '../../core/types.js';
import type { EnvironmentOptions, TaskCatalog } from '../environment.js';
import type { LevelSpec } from './levels/level.js';
import { BABYAI_LEVELS, implementedLevelNames, levelIndexOf, NUM_BABYAI_LEVELS } from './levels/index.js';
import { babyaiSettings } from './settings.js';

/** Seeds of the test split: [0, TEST_SEEDS). */
export const TEST_SEEDS = 1000;
/** First train seed. */
export const TRAIN_SEED_START = 1000;
/** Train seeds per level: [TRAIN_SEED_START, TRAIN_SEED_START + TRAIN_SEEDS). */
export const TRAIN_SEEDS = 20000;

/**
 * Task index of (level position, seed).
 * @example babyaiTaskIndex(1, 3) // 121 -> GoToRedBall, seed 3
 */
export function babyaiTaskIndex(levelIndex: number, seed: number): number {
  return levelIndex + NUM_BABYAI_LEVELS * seed;
}

/**
 * Level and seed of a task index.
 * @example babyaiTaskOf(121) // { level: <GoToRedBall spec>, levelIndex: 1, seed: 3 }
 */
export function babyaiTaskOf(index: number): { level: LevelSpec; levelIndex: number; seed: number } {
  const levelIndex = index % NUM_BABYAI_LEVELS;
  return { level: BABYAI_LEVELS[levelIndex] as LevelSpec, levelIndex, seed: Math.floor(index / NUM_BABYAI_LEVELS) };
}

/**
 * Level positions selected by `settings.levels` (short names or gym ids); defaults to every
 * implemented level, so that a default run never draws a level it cannot play.
 * @example selectedLevelIndices({ settings: { levels: ['GoToRedBall'] } }) // [1]
 */
export function selectedLevelIndices(options?: EnvironmentOptions): number[] {
  const names = babyaiSettings(options).levels ?? implementedLevelNames();
  const indices = names.map((n: string) => {
    const at = levelIndexOf(n);
    if (at < 0) throw new InvalidConfigError('env.settings.levels', `unknown BabyAI level ${JSON.stringify(n)}; valid: ${BABYAI_LEVELS.map((l) => l.name).join(', ')}`);
    return at;
  });
  return [...new Set(indices)].sort((a, b) => a - b);
}

/** The BabyAI catalog: splits, categories, and each item's default horizon. */
export interface BabyAICatalog extends TaskCatalog {
  /**
   * Default horizon (turns) of a task's level (`levels/horizons.ts`); the run's horizon schedule
   * still caps every episode. Undefined for an invalid index.
   */
  horizon(index: number): number | undefined;
}

/**
 * Default horizon of task `index`'s level.
 * @example babyaiHorizonOf(31) // 40 (KeyCorridorS6R3)
 */
export function babyaiHorizonOf(index: number): number {
  return babyaiTaskOf(index).level.horizon;
}

/**
 * The task catalog of the selected levels: indices ordered by seed, then level.
 * @example createBabyAICatalog().indices('test').length // 1000 x implemented levels
 */
export function createBabyAICatalog(options?: EnvironmentOptions): BabyAICatalog {
  const levels = selectedLevelIndices(options);
  const cache = new Map<Split, readonly number[]>();
  const build = (first: number, count: number): number[] => {
    const out = new Array<number>(count * levels.length);
    let k = 0;
    for (let seed = first; seed < first + count; seed++) for (const l of levels) out[k++] = babyaiTaskIndex(l, seed);
    return out;
  };
  return {
    indices(split: Split): readonly number[] {
      let found = cache.get(split);
      if (found === undefined) {
        found = Object.freeze(split === 'test' ? build(0, TEST_SEEDS) : build(TRAIN_SEED_START, TRAIN_SEEDS));
        cache.set(split, found);
      }
      return found;
    },
    category(index: number): string | undefined {
      if (!Number.isInteger(index) || index < 0) return undefined;
      return babyaiTaskOf(index).level.category;
    },
    horizon(index: number): number | undefined {
      if (!Number.isInteger(index) || index < 0) return undefined;
      return babyaiHorizonOf(index);
    },
  };
}
