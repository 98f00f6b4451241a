/**
 * TextCraft's three commands, parsed and applied to an inventory, with the original's outcomes:
 *
 * - `get <n> <item>`: only items without a recipe can be fetched (`Could not find <item>`);
 * - `craft [<n>] <item> using <c> <ingredient>, ...`: the named ingredients must be in the inventory
 *   (`Could not find enough items to craft <item>`), then must match one of the item's recipes, a
 *   generic ingredient (`planks`) matched by one of its members (`Could not find a valid recipe for
 *   <item>`); every ingredient needs a count (`Wrong item format: <part>`);
 * - `inventory`.
 *
 * Anything else is `Could not execute <action>`. As in the original, the requested output count
 * is not checked (a craft yields what the recipe yields); unlike it, every ingredient count may be
 * the same whole multiple k of the recipe's (`craft 8 oak planks using 2 oak log` crafts twice).
 * Counts are whole numbers from 1 to {@link MAX_QUANTITY}.
 */
import type { RecipeBook, Stack } from './recipe-book.js';

/** Largest count a command may name (a bound the original lacks; it keeps inventories finite). */
export const MAX_QUANTITY = 1000;

/** A parsed command, or the observation explaining why it is not one. */
export type Command =
  | { readonly kind: 'get'; readonly count: number; readonly item: string }
  | { readonly kind: 'craft'; readonly output: string; readonly inputs: readonly Stack[] }
  | { readonly kind: 'inventory' }
  | { readonly kind: 'invalid'; readonly error: 'unrecognized' | 'wrong-format' | 'bad-quantity'; readonly message: string };

/** Outcome of applying a command. */
export interface CommandResult {
  readonly message: string;
  /** Item obtained by this command (for the goal check), or null. */
  readonly obtained: string | null;
  /** Error kind when the command failed, else null. */
  readonly error: string | null;
  /** True when the inventory changed. */
  readonly changed: boolean;
}

const CRAFT_RE = /^craft (.*) using (.*)$/;
const GET_RE = /^get ([0-9]+) (.*)$/;
const COUNT_RE = /^([0-9]+) (.*)$/;

function quantity(digits: string): number {
  // Digit strings longer than 4 are out of range whatever they say; this also avoids huge numbers.
  if (digits.length > 4) return 0;
  const n = Number(digits);
  return n >= 1 && n <= MAX_QUANTITY ? n : 0;
}

/**
 * Parses a normalised action (lower case, letters, digits, commas and single spaces).
 * @example
 * parseCommand('craft 4 oak planks using 1 oak log')
 * // { kind: 'craft', output: 'oak planks', inputs: [{ name: 'oak log', count: 1 }] }
 */
export function parseCommand(action: string): Command {
  const craft = CRAFT_RE.exec(action);
  if (craft !== null) {
    const head = craft[1] as string;
    const counted = COUNT_RE.exec(head);
    if (counted !== null && quantity(counted[1] as string) === 0) return badQuantity(action);
    const output = counted === null ? head : (counted[2] as string);
    const inputs: Stack[] = [];
    for (const rawPart of (craft[2] as string).split(',')) {
      const part = rawPart.trim();
      const m = COUNT_RE.exec(part);
      if (m === null) return { kind: 'invalid', error: 'wrong-format', message: `Wrong item format: ${part}` };
      const count = quantity(m[1] as string);
      if (count === 0) return badQuantity(action);
      inputs.push({ name: m[2] as string, count });
    }
    return { kind: 'craft', output, inputs };
  }
  const get = GET_RE.exec(action);
  if (get !== null) {
    const count = quantity(get[1] as string);
    if (count === 0) return badQuantity(action);
    return { kind: 'get', count, item: get[2] as string };
  }
  if (action.startsWith('inventory')) return { kind: 'inventory' };
  return { kind: 'invalid', error: 'unrecognized', message: `Could not execute ${action}` };
}

function badQuantity(action: string): Command {
  return { kind: 'invalid', error: 'bad-quantity', message: `Could not execute ${action}: counts must be whole numbers from 1 to ${MAX_QUANTITY}` };
}

/**
 * How many times the given ingredients make the recipe (k ≥ 1), or 0 when they do not match it:
 * one given ingredient per recipe ingredient, each the same multiple k of its count.
 */
export function matchRecipe(book: RecipeBook, recipeInputs: readonly Stack[], given: readonly Stack[]): number {
  if (given.length !== recipeInputs.length) return 0;
  let used = 0; // bit set over `given` (recipes have at most 9 ingredients)
  let k = 0;
  for (const want of recipeInputs) {
    let found = -1;
    for (let i = 0; i < given.length; i++) {
      if ((used & (1 << i)) === 0 && book.satisfies((given[i] as Stack).name, want.name)) {
        found = i;
        break;
      }
    }
    if (found < 0) return 0;
    const have = (given[found] as Stack).count;
    if (have % want.count !== 0) return 0;
    const m = have / want.count;
    if (k === 0) k = m;
    else if (m !== k) return 0;
    used |= 1 << found;
  }
  return k;
}

/** Inventory line: `Inventory: [oak planks] (4) [stick] (2)`. */
export function inventoryText(inventory: ReadonlyMap<string, number>): string {
  if (inventory.size === 0) return 'Inventory: You are not carrying anything.';
  let text = 'Inventory:';
  for (const [item, n] of inventory) text += ` [${item}] (${n})`;
  return text;
}

/**
 * Applies a parsed command to `inventory` (mutated on success only).
 * @example
 * const inv = new Map<string, number>();
 * applyCommand(book, inv, parseCommand('get 1 oak log')).message // 'Got 1 oak log'
 */
export function applyCommand(book: RecipeBook, inventory: Map<string, number>, command: Command): CommandResult {
  switch (command.kind) {
    case 'invalid':
      return { message: command.message, obtained: null, error: command.error, changed: false };
    case 'inventory':
      return { message: inventoryText(inventory), obtained: null, error: null, changed: false };
    case 'get': {
      const { item, count } = command;
      if (!book.isFetchable(item)) return { message: `Could not find ${item}`, obtained: null, error: 'not-found', changed: false };
      inventory.set(item, (inventory.get(item) ?? 0) + count);
      return { message: `Got ${count} ${item}`, obtained: item, error: null, changed: true };
    }
    case 'craft': {
      const { output, inputs } = command;
      if (!hasAll(inventory, inputs)) {
        return { message: `Could not find enough items to craft ${output}`, obtained: null, error: 'missing-items', changed: false };
      }
      let k = 0;
      let made = 0;
      for (const recipe of book.recipesOf(output)) {
        k = matchRecipe(book, recipe.inputs, inputs);
        if (k > 0) {
          made = k * recipe.count;
          break;
        }
      }
      if (k === 0) return { message: `Could not find a valid recipe for ${output}`, obtained: null, error: 'no-recipe', changed: false };
      for (const { name, count } of inputs) {
        const left = (inventory.get(name) as number) - count;
        if (left === 0) inventory.delete(name);
        else inventory.set(name, left);
      }
      inventory.set(output, (inventory.get(output) ?? 0) + made);
      return { message: `Crafted ${made} ${output}`, obtained: output, error: null, changed: true };
    }
  }
}

/** The inventory holds every named stack (counts of a name repeated in `stacks` add up). */
function hasAll(inventory: ReadonlyMap<string, number>, stacks: readonly Stack[]): boolean {
  for (let i = 0; i < stacks.length; i++) {
    const { name } = stacks[i] as Stack;
    let need = 0;
    for (let j = 0; j < stacks.length; j++) if ((stacks[j] as Stack).name === name) need += (stacks[j] as Stack).count;
    if ((inventory.get(name) ?? 0) < need) return false;
  }
  return true;
}
