/**
 * A TextCraft solver from the true recipes: proves a goal reachable and gives its optimal number of
 * turns, plus a plan that uses only the listed actions (what a constrained-decoding policy can do).
 *
 * Optimality: every distinct item a successful episode uses needs at least one turn of its own (a
 * `get` or a `craft` makes one item kind), and using one recipe per item and one member per generic
 * ingredient never needs more items than mixing them. So the optimum is the smallest set of items
 * over such choices; a branch-and-bound search finds it. The optimal plan reaches it exactly:
 * each base item is fetched once in the total amount needed and each intermediate is crafted once
 * as a multiple (`craft 8 oak planks using 2 oak log`).
 */
import { MAX_QUANTITY } from './commands.js';
import type { Recipe, RecipeBook } from './recipe-book.js';
import { recipeText } from './recipe-book.js';

/** A solution: the choices made and the two plans. */
export interface Solution {
  readonly goal: string;
  /** Optimal number of turns (crafts in multiples, fetches in any amount). */
  readonly optimalTurns: number;
  /** Actions of the optimal plan, in order. */
  readonly plan: readonly string[];
  /** A plan using only listed actions: one craft at a time, fetches in the counts recipes ask for. */
  readonly listPlan: readonly string[];
}

/** Per crafted item: the recipe used; per generic ingredient: the member used. */
interface Choices {
  readonly recipe: ReadonlyMap<string, Recipe>;
  readonly member: ReadonlyMap<string, string>;
}

/**
 * Solves `goal` (a craftable item). Throws when it is not craftable.
 * @example solveGoal(book, 'blue dye').plan // ['get 1 lapis lazuli', 'craft 1 blue dye using 1 lapis lazuli']
 */
export function solveGoal(book: RecipeBook, goal: string): Solution {
  if (book.recipesOf(goal).length === 0) throw new Error(`TextCraft solver: ${JSON.stringify(goal)} has no recipe`);
  const choices = bestChoices(book, goal);
  const order = postOrder(book, goal, choices);
  const resolve = (name: string): string => (book.isGeneric(name) ? (choices.member.get(name) as string) : name);

  // Demand, goal first (reverse post-order is a topological order of the chosen DAG).
  const demand = new Map<string, number>([[goal, 1]]);
  const times = new Map<string, number>(); // crafts needed per crafted item
  const perUse: { item: string; count: number; times: number }[] = []; // fetch uses, for the list plan
  for (let i = order.length - 1; i >= 0; i--) {
    const item = order[i] as string;
    const recipe = choices.recipe.get(item);
    if (recipe === undefined) continue;
    const k = Math.ceil((demand.get(item) ?? 0) / recipe.count);
    times.set(item, k);
    for (const input of recipe.inputs) {
      const used = resolve(input.name);
      demand.set(used, (demand.get(used) ?? 0) + k * input.count);
      if (book.isFetchable(used)) perUse.push({ item: used, count: input.count, times: k });
    }
  }

  const plan: string[] = [];
  const listPlan: string[] = [];
  for (const item of order) {
    if (book.isFetchable(item)) {
      let left = demand.get(item) ?? 0;
      while (left > 0) {
        const n = Math.min(left, MAX_QUANTITY);
        plan.push(`get ${n} ${item}`);
        left -= n;
      }
      for (const use of perUse) if (use.item === item) for (let t = 0; t < use.times; t++) listPlan.push(`get ${use.count} ${item}`);
      continue;
    }
    const recipe = choices.recipe.get(item) as Recipe;
    const k = times.get(item) as number;
    const once = recipe.inputs.map((s) => ({ name: resolve(s.name), count: s.count }));
    plan.push(recipeText(item, k * recipe.count, once.map((s) => ({ name: s.name, count: k * s.count }))));
    const single = recipeText(item, recipe.count, once);
    for (let t = 0; t < k; t++) listPlan.push(single);
  }
  return { goal, optimalTurns: plan.length, plan, listPlan };
}

/** Items of the chosen tree, every input before the item that uses it. */
function postOrder(book: RecipeBook, goal: string, choices: Choices): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  const visit = (name: string): void => {
    const item = book.isGeneric(name) ? (choices.member.get(name) as string) : name;
    if (seen.has(item)) return;
    seen.add(item);
    const recipe = choices.recipe.get(item);
    if (recipe !== undefined) for (const input of recipe.inputs) visit(input.name);
    out.push(item);
  };
  visit(goal);
  return out;
}

/** Branch and bound over recipe and member choices, minimising the number of distinct items. */
function bestChoices(book: RecipeBook, goal: string): Choices {
  let best = Number.POSITIVE_INFINITY;
  let bestChoices: Choices | null = null;
  const search = (recipe: Map<string, Recipe>, member: Map<string, string>, stackIn: string[], closureIn: Set<string>): void => {
    const stack = [...stackIn];
    const closure = new Set(closureIn);
    while (stack.length > 0) {
      const name = stack.pop() as string;
      if (book.isGeneric(name)) {
        const chosen = member.get(name);
        if (chosen !== undefined) {
          stack.push(chosen);
          continue;
        }
        for (const m of book.membersOf(name)) search(recipe, new Map(member).set(name, m), [...stack, m], closure);
        return;
      }
      if (closure.has(name)) continue;
      closure.add(name);
      if (closure.size >= best) return;
      const options = book.recipesOf(name);
      if (options.length === 0) continue; // fetchable
      if (options.length === 1) {
        recipe.set(name, options[0] as Recipe);
        for (const input of (options[0] as Recipe).inputs) stack.push(input.name);
        continue;
      }
      for (const option of options) {
        search(new Map(recipe).set(name, option), member, [...stack, ...option.inputs.map((s) => s.name)], closure);
      }
      return;
    }
    if (closure.size < best) {
      best = closure.size;
      bestChoices = { recipe: new Map(recipe), member: new Map(member) };
    }
  };
  search(new Map(), new Map(), [goal], new Set());
  if (bestChoices === null) throw new Error(`TextCraft solver: no plan for ${JSON.stringify(goal)}`);
  return bestChoices;
}
