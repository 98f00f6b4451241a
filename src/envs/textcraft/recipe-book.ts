/**
 * TextCraft's crafting knowledge, indexed for play: which recipes make an item, which items can be
 * fetched with `get`, generic ingredients (`planks` = any of the eight planks), recipe depth, the
 * recipes that use an item (distractor candidates) and the goal list.
 *
 * Built once from the committed `data/recipes.json` (extracted from minecraft-data by
 * `scripts/extract-textcraft-recipes.ts`); everything here is read-only after construction.
 */
import recipeData from './data/recipes.json' with { type: 'json' };

/** An ingredient or product with its count. Names are plain words (`oak planks`). */
export interface Stack {
  readonly name: string;
  readonly count: number;
}

/** One recipe as TextCraft shows it. */
export interface Recipe {
  readonly output: string;
  /** Items one craft produces. */
  readonly count: number;
  /** Ingredients in display order; a name may be a generic ingredient (`planks`). */
  readonly inputs: readonly Stack[];
  /** `craft 4 oak planks using 1 oak log`. */
  readonly text: string;
}

/** A craftable item with its minimum recipe depth (1 = made directly from fetchable items). */
export interface Goal {
  readonly item: string;
  readonly depth: number;
}

/** Shape of `data/recipes.json` (see the extraction script). */
export interface RecipeFileData {
  readonly source: string;
  readonly gameVersion: string;
  readonly generic: Readonly<Record<string, readonly string[]>>;
  readonly otherItems: readonly string[];
  readonly recipes: readonly (readonly [string, number, readonly (readonly [string, number])[]])[];
}

/** `craft <n> <output> using <c> <in>, <c> <in>`: TextCraft's recipe line. */
export function recipeText(output: string, count: number, inputs: readonly Stack[]): string {
  return `craft ${count} ${output} using ${inputs.map((s) => `${s.count} ${s.name}`).join(', ')}`;
}

const EMPTY: readonly Recipe[] = Object.freeze([]);

/**
 * The indexed recipe set.
 * @example
 * const book = defaultRecipeBook();
 * book.recipesOf('crafting table')[0].text // 'craft 1 crafting table using 4 planks'
 * book.isFetchable('oak log') // true
 */
export class RecipeBook {
  /** Minecraft version the recipes come from. */
  readonly gameVersion: string;
  readonly source: string;
  private readonly byOutput = new Map<string, Recipe[]>();
  private readonly genericMembers = new Map<string, ReadonlySet<string>>();
  private readonly tagOfItem = new Map<string, string>();
  private readonly usesOf = new Map<string, Recipe[]>();
  private readonly known = new Set<string>();
  private readonly depthMemo = new Map<string, number>();
  private goalList: readonly Goal[] | null = null;

  constructor(data: RecipeFileData) {
    this.gameVersion = data.gameVersion;
    this.source = data.source;
    for (const [tag, members] of Object.entries(data.generic)) {
      this.genericMembers.set(tag, new Set(members));
      for (const m of members) this.tagOfItem.set(m, tag);
    }
    for (const [output, count, rawInputs] of data.recipes) {
      const inputs = rawInputs.map(([name, c]) => ({ name, count: c }));
      const recipe: Recipe = Object.freeze({ output, count, inputs: Object.freeze(inputs), text: recipeText(output, count, inputs) });
      push(this.byOutput, output, recipe);
      this.known.add(output);
      for (const input of inputs) {
        push(this.usesOf, input.name, recipe);
        if (!this.genericMembers.has(input.name)) this.known.add(input.name);
      }
    }
    for (const item of data.otherItems) this.known.add(item);
  }

  /** Recipes whose output is `item` (an item, not a generic ingredient). */
  recipesOf(item: string): readonly Recipe[] {
    return this.byOutput.get(item) ?? EMPTY;
  }

  /** For a generic ingredient: the recipes of all its members (TextCraft's tag recipes). */
  recipesOfGeneric(tag: string): readonly Recipe[] {
    const members = this.genericMembers.get(tag);
    if (members === undefined) return EMPTY;
    return [...members].flatMap((m) => this.recipesOf(m));
  }

  /** Recipes of an item or of a generic ingredient. */
  recipesFor(name: string): readonly Recipe[] {
    return this.genericMembers.has(name) ? this.recipesOfGeneric(name) : this.recipesOf(name);
  }

  /** Recipes that take `name` (an item or a generic ingredient) as an input. */
  usesOfName(name: string): readonly Recipe[] {
    return this.usesOf.get(name) ?? EMPTY;
  }

  /** True for a generic ingredient name (`planks`, `wool`, `wooden slabs`). */
  isGeneric(name: string): boolean {
    return this.genericMembers.has(name);
  }

  /** Members of a generic ingredient (empty for anything else). */
  membersOf(tag: string): ReadonlySet<string> {
    return this.genericMembers.get(tag) ?? new Set();
  }

  /** True when `item` satisfies an ingredient `name`: the same item, or a member of that generic ingredient. */
  satisfies(item: string, name: string): boolean {
    return item === name || this.tagOfItem.get(item) === name;
  }

  /** An item the game knows (not a generic ingredient). */
  isKnownItem(name: string): boolean {
    return this.known.has(name);
  }

  /** Has at least one recipe (items) or a member with one (generic ingredients). */
  isCraftable(name: string): boolean {
    return this.recipesFor(name).length > 0;
  }

  /** `get` works on it: a known item without any recipe (TextCraft's base items). */
  isFetchable(name: string): boolean {
    return this.known.has(name) && !this.byOutput.has(name);
  }

  /**
   * Minimum recipe depth: 0 for fetchable items, else the best recipe's deepest input plus one
   * (TextCraft's `get_min_depth`).
   */
  depth(name: string): number {
    const memo = this.depthMemo.get(name);
    if (memo !== undefined) return memo;
    const recipes = this.recipesFor(name);
    let best = 0;
    if (recipes.length > 0) {
      best = Number.POSITIVE_INFINITY;
      for (const r of recipes) {
        let deepest = 0;
        for (const input of r.inputs) deepest = Math.max(deepest, this.depth(input.name) + 1);
        best = Math.min(best, deepest);
      }
    }
    this.depthMemo.set(name, best);
    return best;
  }

  /**
   * Every craftable item, sorted by depth (stable over the recipe file's order), as TextCraft's
   * `sorted(item_recipes_min_depth(1), key=depth)`. Goal `i` of the task list is `goals()[i % n]`.
   */
  goals(): readonly Goal[] {
    if (this.goalList === null) {
      const items = [...this.byOutput.keys()].map((item, order) => ({ item, depth: this.depth(item), order }));
      items.sort((a, b) => a.depth - b.depth || a.order - b.order);
      this.goalList = Object.freeze(items.map(({ item, depth }) => Object.freeze({ item, depth })));
    }
    return this.goalList;
  }

  /**
   * All recipes in the crafting tree of `item` (its recipes, then recursively those of every
   * input, generic inputs through all their members), each once, in discovery order. These are
   * TextCraft's "gold" recipes shown for a goal.
   */
  recipeTree(item: string): Recipe[] {
    const out: Recipe[] = [];
    const seenRecipes = new Set<Recipe>();
    const seenNames = new Set<string>();
    const visit = (name: string): void => {
      if (seenNames.has(name)) return;
      seenNames.add(name);
      for (const r of this.recipesFor(name)) {
        if (!seenRecipes.has(r)) {
          seenRecipes.add(r);
          out.push(r);
        }
        for (const input of r.inputs) visit(input.name);
      }
    };
    visit(item);
    return out;
  }
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list === undefined) map.set(key, [value]);
  else list.push(value);
}

let shared: RecipeBook | null = null;

/**
 * The recipe book of the committed recipe file, built once per process.
 * @example defaultRecipeBook().goals().length // 547 craftable items
 */
export function defaultRecipeBook(): RecipeBook {
  // JSON imports type tuples as arrays; the file's shape is pinned by the extraction test.
  shared ??= new RecipeBook(recipeData as unknown as RecipeFileData);
  return shared;
}
