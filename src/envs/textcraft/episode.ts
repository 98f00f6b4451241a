/**
 * What a TextCraft episode shows: the goal, its "gold" recipes (the whole crafting tree) and up to
 * {@link MAX_DISTRACTORS} distractors (other recipes that use an ingredient of the tree), shuffled,
 * as TextCraft's `reset` builds them:
 *
 *     Crafting commands:
 *     craft 1 blue dye using 1 lapis lazuli
 *     ...
 *
 *     Goal: craft blue dye.
 *
 * The setup depends only on the goal's position in the goal list (TextCraft seeds its sampler with
 * a constant, so one goal always gets the same text); it is built once per position and cached.
 */
import { Rng } from '../../core/rng.js';
import { getActions } from './actions.js';
import type { Goal, Recipe, RecipeBook } from './recipe-book.js';

/** Distractor recipes shown at most (TextCraft's `max_distractor`). */
export const MAX_DISTRACTORS = 10;
/** Uses sampled per ingredient of the tree before picking distractors (TextCraft's 10). */
const USES_PER_INGREDIENT = 10;

/** The fixed part of an episode. */
export interface EpisodeSetup {
  /** Position in the goal list (task index modulo the number of goals). */
  readonly position: number;
  readonly goal: Goal;
  /** Recipes in the order shown. */
  readonly shown: readonly Recipe[];
  /** How many of `shown` are distractors. */
  readonly distractors: number;
  /** The first observation. */
  readonly text: string;
  /** The `get` actions of the episode (see `actions.ts`). */
  readonly gets: readonly string[];
  /** The actions listed whatever the inventory: the gets, then `inventory`. */
  readonly idleActions: readonly string[];
}

const cache = new WeakMap<RecipeBook, Map<number, EpisodeSetup>>();

/**
 * The setup of goal position `position` (0 ≤ position < goals().length).
 * @example episodeSetup(book, 0).text.endsWith('Goal: craft acacia planks.')
 */
export function episodeSetup(book: RecipeBook, position: number): EpisodeSetup {
  let byPosition = cache.get(book);
  if (byPosition === undefined) {
    byPosition = new Map();
    cache.set(book, byPosition);
  }
  let setup = byPosition.get(position);
  if (setup === undefined) {
    setup = buildSetup(book, position);
    byPosition.set(position, setup);
  }
  return setup;
}

function buildSetup(book: RecipeBook, position: number): EpisodeSetup {
  const goal = book.goals()[position] as Goal;
  const rng = Rng.fromSeed(position).fork('textcraft/setup');
  const gold = book.recipeTree(goal.item);
  const goldTexts = new Set(gold.map((r) => r.text));
  // Candidates: for each ingredient of each gold recipe, up to 10 of the recipes that use it.
  const candidates: Recipe[] = [];
  const candidateTexts = new Set<string>();
  for (const r of gold) {
    for (const input of r.inputs) {
      for (const u of sample(rng, book.usesOfName(input.name), USES_PER_INGREDIENT)) {
        if (!goldTexts.has(u.text) && !candidateTexts.has(u.text)) {
          candidateTexts.add(u.text);
          candidates.push(u);
        }
      }
    }
  }
  const distractors = sample(rng, candidates, MAX_DISTRACTORS);
  const shown = rng.shuffle([...gold, ...distractors]);
  const text = `Crafting commands:\n${shown.map((r) => r.text).join('\n')}\n\nGoal: craft ${goal.item}.`;
  const gets = Object.freeze(getActions(book, shown, new Set(gold)));
  const idleActions = Object.freeze([...gets, 'inventory']);
  return Object.freeze({ position, goal, shown: Object.freeze(shown), distractors: distractors.length, text, gets, idleActions });
}

/** `k` items drawn without replacement (a partial Fisher–Yates shuffle of a copy). */
function sample<T>(rng: Rng, items: readonly T[], k: number): T[] {
  const pool = [...items];
  const n = Math.min(k, pool.length);
  for (let i = 0; i < n; i++) {
    const j = i + rng.int(pool.length - i);
    const tmp = pool[i] as T;
    pool[i] = pool[j] as T;
    pool[j] = tmp;
  }
  return pool.slice(0, n);
}
