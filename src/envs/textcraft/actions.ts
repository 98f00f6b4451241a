/**
 * The finite action list offered for constrained decoding (TextCraft itself lists none; a policy
 * trained from scratch needs one). Built from the recipes shown in the first observation:
 *
 * 1. `craft ...` for each shown recipe the inventory can make once now, with every generic
 *    ingredient replaced by a held member (one action per held member choice, at most
 *    {@link MAX_VARIANTS} per recipe);
 * 2. `get <c> <item>` for each fetchable ingredient of a shown recipe, with the counts the goal's
 *    recipes ask for (see {@link getActions}; fixed for the episode);
 * 3. `inventory`.
 *
 * Crafts come first because they are the few that depend on the state.
 */
import type { Recipe, RecipeBook, Stack } from './recipe-book.js';
import { recipeText } from './recipe-book.js';

/** Most craft actions listed per shown recipe (choices of held members for generic ingredients). */
export const MAX_VARIANTS = 4;

/**
 * The `get` actions of an episode: each fetchable ingredient of the shown recipes with the counts
 * the goal's own recipes ask for (an ingredient only distractors use: their smallest count), in
 * order of first appearance.
 * @example getActions(book, shown, gold) // ['get 1 lapis lazuli', 'get 1 cornflower', ...]
 */
export function getActions(book: RecipeBook, shown: readonly Recipe[], gold: ReadonlySet<Recipe>): string[] {
  const goldCounts = new Map<string, Set<number>>();
  const smallest = new Map<string, number>();
  for (const r of shown) {
    for (const { name, count } of r.inputs) {
      if (!book.isFetchable(name)) continue;
      smallest.set(name, Math.min(smallest.get(name) ?? count, count));
      if (gold.has(r)) goldCounts.set(name, (goldCounts.get(name) ?? new Set()).add(count));
    }
  }
  const out: string[] = [];
  for (const [name, least] of smallest) for (const count of goldCounts.get(name) ?? [least]) out.push(`get ${count} ${name}`);
  return out;
}

/**
 * The craft actions the inventory allows now, over the shown recipes.
 * @example craftActions(book, shown, new Map([['lapis lazuli', 1]])) // ['craft 1 blue dye using 1 lapis lazuli']
 */
export function craftActions(book: RecipeBook, shown: readonly Recipe[], inventory: ReadonlyMap<string, number>): string[] {
  const out: string[] = [];
  let seen: Set<string> | null = null;
  for (const r of shown) {
    // Quick reject: a non-generic ingredient not held in the count needed.
    let possible = true;
    let generic = false;
    for (const input of r.inputs) {
      if (book.isGeneric(input.name)) generic = true;
      else if ((inventory.get(input.name) ?? 0) < input.count) {
        possible = false;
        break;
      }
    }
    if (!possible) continue;
    if (!generic) {
      // Nothing to specialise: the recipe line is the action (shown lines are distinct).
      if (hasSums(r.inputs, inventory)) out.push(r.text);
      continue;
    }
    seen ??= new Set(out);
    for (const inputs of specialisations(book, r.inputs, inventory)) {
      const text = recipeText(r.output, r.count, inputs);
      if (!seen.has(text)) {
        seen.add(text);
        out.push(text);
      }
    }
  }
  return out;
}

/** Ways to fill a recipe's ingredients from the inventory (generic ones by a held member). */
function specialisations(book: RecipeBook, inputs: readonly Stack[], inventory: ReadonlyMap<string, number>): Stack[][] {
  let partial: Stack[][] = [[]];
  for (const input of inputs) {
    const choices: string[] = [];
    if (book.isGeneric(input.name)) {
      for (const [item, n] of inventory) if (n >= input.count && book.satisfies(item, input.name)) choices.push(item);
    } else choices.push(input.name);
    if (choices.length === 0) return [];
    const next: Stack[][] = [];
    for (const p of partial) for (const c of choices) if (next.length < MAX_VARIANTS) next.push([...p, { name: c, count: input.count }]);
    partial = next;
  }
  return partial.filter((stacks) => hasSums(stacks, inventory));
}

/** Two ingredients may name the same item: the inventory must hold their sum. */
function hasSums(stacks: readonly Stack[], inventory: ReadonlyMap<string, number>): boolean {
  for (let i = 1; i < stacks.length; i++) {
    const { name } = stacks[i] as Stack;
    let need = 0;
    let repeated = false;
    for (let j = 0; j < stacks.length; j++) {
      if ((stacks[j] as Stack).name !== name) continue;
      need += (stacks[j] as Stack).count;
      if (j !== i) repeated = true;
    }
    if (repeated && (inventory.get(name) ?? 0) < need) return false;
  }
  return true;
}
