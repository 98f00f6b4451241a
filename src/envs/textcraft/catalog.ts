/**
 * TextCraft task ids and splits. Task `textcraft_<i>` plays goal `goals()[i % n]` (TextCraft's
 * `data_idx` rule over the depth-sorted goal list of n = 547 craftable items), so the catalog
 * lists i in [0, n).
 *
 * Split (ours; AgentGym-RL's item lists are not public in a form we can use): the test split is
 * {@link TEST_SIZE} positions spread evenly over the depth-sorted list, `floor((2j + 1) n / 200)`
 * for j = 0..99, so it covers every depth in proportion; train is every other position.
 * Reporting category: `depth-<d>`, the goal's minimum recipe depth.
 *
 * Setting `depths` (e.g. `[1]`) keeps only goals of those depths in both splits; `testRepeats: r`
 * lists each test goal r times (ids i, i + n, ..., the same episode) so that a small test set can
 * be sampled several times per evaluation.
 */
import { z } from 'zod';
import { InvalidConfigError } from '../../core/errors.js';
import type { Split } from '../../core/types.js';
import type { EnvironmentOptions, TaskCatalog } from '../environment.js';
import { parseEnvSettings } from '../settings.js';
import type { RecipeBook } from './recipe-book.js';
import { defaultRecipeBook } from './recipe-book.js';

/** Size of the test split over all depths (AgentGym-RL's TextCraft test set has 100 items too). */
export const TEST_SIZE = 100;

/**
 * The test positions over `n` goals, ascending.
 * @example testPositions(547).slice(0, 3) // [2, 8, 13]
 */
export function testPositions(n: number): number[] {
  const size = Math.min(TEST_SIZE, n);
  const out: number[] = [];
  for (let j = 0; j < size; j++) out.push(Math.floor(((2 * j + 1) * n) / (2 * size)));
  return out;
}

/** `env.settings` of the TextCraft environment. */
export const textcraftSettingsSchema = z
  .object({
    depths: z
      .array(z.number().int().min(1))
      .min(1)
      .optional()
      .describe('Keep only goals of these minimum recipe depths (1-4) in both splits, e.g. [1] for the easiest; default all.'),
    listActions: z
      .boolean()
      .default(true)
      .describe('List the valid commands as available actions (for constrained decoding); false = free mode: the agent writes each command itself (text or the get / craft / inventory tools).'),
    recap: z
      .boolean()
      .optional()
      .describe('Repeat the goal, the recipes and the inventory in every observation, so a context without history still holds them. Default: on in free mode, off when actions are listed.'),
    turnRewards: z
      .boolean()
      .default(false)
      .describe('Pay 0.1 × (1 / size of the goal’s recipe tree) the first time each item of the tree is obtained (a shaped per-turn reward, for reward.mode sum); the goal still pays 1.'),
    testRepeats: z
      .number()
      .int()
      .min(1)
      .max(50)
      .default(1)
      .describe('List each test goal this many times (ids i + 547k: same goal, same text), so evaluation samples small test sets repeatedly.'),
  })
  .strict();

/** Parsed TextCraft settings. */
export type TextcraftSettings = z.output<typeof textcraftSettingsSchema>;

/**
 * Reads and checks `env.settings`; a depth no goal has is an error naming `env.settings.depths`.
 * @example textcraftSettings({ settings: { depths: [1] } }).depths // [1]
 */
export function textcraftSettings(options?: EnvironmentOptions, book: RecipeBook = defaultRecipeBook()): TextcraftSettings {
  const settings = parseEnvSettings(textcraftSettingsSchema, options);
  if (settings.depths !== undefined) {
    const known = new Set(book.goals().map((g) => g.depth));
    const missing = settings.depths.filter((d) => !known.has(d));
    if (missing.length > 0) {
      throw new InvalidConfigError('env.settings.depths', `no TextCraft goal has depth ${missing.join(', ')}; depths present: ${[...known].sort((a, b) => a - b).join(', ')}`);
    }
  }
  return settings;
}

/**
 * The task catalog (indices are goal positions; categories are depths).
 * @example createTextcraftCatalog().indices('test').length // 100
 */
export function createTextcraftCatalog(options?: EnvironmentOptions, book: RecipeBook = defaultRecipeBook()): TaskCatalog {
  const { depths: selected, testRepeats } = textcraftSettings(options, book);
  const depths = selected === undefined ? null : new Set(selected);
  const goals = book.goals();
  const test = new Set(testPositions(goals.length));
  const keep = (i: number): boolean => depths === null || depths.has((goals[i] as { depth: number }).depth);
  const all = goals.map((_, i) => i).filter(keep);
  const splits: Record<Split, readonly number[]> = {
    test: Object.freeze(
      Array.from({ length: testRepeats }, (_, k) => all.filter((i) => test.has(i)).map((i) => i + k * goals.length)).flat(),
    ),
    train: Object.freeze(all.filter((i) => !test.has(i))),
  };
  return {
    indices: (split: Split) => splits[split],
    category(index: number): string | undefined {
      if (!Number.isInteger(index) || index < 0) return undefined;
      return `depth-${(goals[index % goals.length] as { depth: number }).depth}`;
    },
  };
}
