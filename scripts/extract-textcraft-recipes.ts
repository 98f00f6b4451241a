/**
 * Extracts TextCraft's recipe set from `minecraft-data` into `src/envs/textcraft/data/recipes.json`.
 *
 *     node --import tsx scripts/extract-textcraft-recipes.ts           # writes the file
 *     node --import tsx scripts/extract-textcraft-recipes.ts --check   # exits 1 if it is stale
 *
 * Why Minecraft 1.16.5: TextCraft (archiki/ADaPT, used unchanged by AgentGym) reads the vanilla
 * recipe files of 1.16.5 (its README points at minecraft-assets `1.16.5/data/minecraft/recipes`).
 * minecraft-data serves 1.16.5 from its `pc/1.16.2` recipe table (no crafting changes in between).
 *
 * minecraft-data differs from the vanilla files in two ways this script undoes:
 * - it has no item tags: a recipe with a tag ingredient ("any planks") is expanded into one recipe
 *   per tag member. We fold such expansions back (see {@link TAGS}): generic tags become a generic
 *   ingredient the agent may specialise, as TextCraft does for `planks` and `wool`; the tags
 *   TextCraft turns into fetchable pseudo-items (`oak logs`) become their first member (`oak log`);
 * - it has no recipe groups or file names, so the order recipes are read in (which decides which
 *   recipe of a cycle TextCraft keeps) is ours: by output name, then minecraft-data's order.
 *
 * Then TextCraft's own clean-up is applied: shaped recipes count each ingredient, recipes whose
 * only ingredient is a `*_block` are dropped (un-crafting blocks), and a recipe that would close a
 * cycle (its output is already needed to make one of its inputs) is dropped.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

/** Minecraft version the recipes are taken from. */
export const GAME_VERSION = '1.16.5';
/** Where the extracted recipes are committed. */
export const RECIPES_PATH = new URL('../src/envs/textcraft/data/recipes.json', import.meta.url);

/** minecraft-data's shape of one recipe entry (pc 1.16: numbers, or null for an empty cell). */
type RawItem = number | null | readonly (number | null)[] | { readonly id: number | null; readonly count?: number };
interface RawRecipe {
  readonly result: RawItem;
  readonly inShape?: readonly (readonly RawItem[])[];
  readonly ingredients?: readonly RawItem[];
}
/** What the extraction reads from minecraft-data. */
export interface RawRecipeSource {
  readonly items: readonly { readonly id: number; readonly name: string }[];
  readonly recipes: Readonly<Record<string, readonly RawRecipe[]>>;
}

/** An ingredient or product with its count, names in plain words (`oak planks`). */
export type Stack = readonly [name: string, count: number];
/** One recipe: output name, output count, inputs in the order they first appear in the grid. */
export type RecipeRow = readonly [output: string, count: number, inputs: readonly Stack[]];
/** The committed file. */
export interface RecipeFile {
  readonly source: string;
  readonly gameVersion: string;
  /** Generic ingredients (TextCraft's craftable tags): name -> member items. */
  readonly generic: Readonly<Record<string, readonly string[]>>;
  /**
   * Items named only by dropped recipes (as outputs): TextCraft still lets the agent `get` them,
   * since it knows every item any recipe file names. Every other item appears in `recipes`.
   */
  readonly otherItems: readonly string[];
  readonly recipes: readonly RecipeRow[];
}

interface TagRule {
  /** Plain name; for a generic tag the name shown in recipes. */
  readonly name: string;
  /** Generic: shown as the tag and specialised by the agent. Otherwise folded to `members[0]`. */
  readonly generic: boolean;
  readonly members: (itemNames: readonly string[]) => string[];
}

const WOODS = ['oak', 'spruce', 'birch', 'jungle', 'acacia', 'dark_oak'];
const FUNGI = ['crimson', 'warped'];
const logFamily = (w: string): string[] => [`${w}_log`, `${w}_wood`, `stripped_${w}_log`, `stripped_${w}_wood`];
const stemFamily = (f: string): string[] => [`${f}_stem`, `${f}_hyphae`, `stripped_${f}_stem`, `stripped_${f}_hyphae`];

/**
 * The Minecraft 1.16 item tags crafting recipes use, that minecraft-data expanded. Folded in this
 * order (the widest first, so `logs` is not first split into its families). Other variant sets
 * (coal or charcoal, cobblestone or blackstone, the two blue dyes) stay separate recipes, which is
 * what the game does with them too.
 */
const TAGS: readonly TagRule[] = [
  { name: 'logs', generic: false, members: () => [...WOODS.flatMap(logFamily), ...FUNGI.flatMap(stemFamily)] },
  ...WOODS.map((w) => ({ name: `${w} logs`, generic: false, members: () => logFamily(w) })),
  ...FUNGI.map((f) => ({ name: `${f} stems`, generic: false, members: () => stemFamily(f) })),
  { name: 'planks', generic: true, members: (names) => names.filter((n) => n.endsWith('_planks')) },
  {
    name: 'wooden slabs',
    generic: true,
    members: (names) => names.filter((n) => n.endsWith('_slab') && names.includes(n.replace(/_slab$/, '_planks'))),
  },
  { name: 'wool', generic: true, members: (names) => names.filter((n) => n.endsWith('_wool')) },
];

const plain = (id: string): string => id.replace(/_/g, ' ');

function itemId(raw: RawItem): { id: number; count: number } | null {
  if (raw === null) return null;
  if (typeof raw === 'number') return raw < 0 ? null : { id: raw, count: 1 };
  if (Array.isArray(raw)) {
    const id = raw[0];
    return typeof id === 'number' && id >= 0 ? { id, count: 1 } : null;
  }
  const obj = raw as { id: number | null; count?: number };
  return obj.id === null || obj.id < 0 ? null : { id: obj.id, count: obj.count ?? 1 };
}

/** Ingredients of one raw recipe with counts, in first-appearance order (row-major for shapes). */
function ingredientsOf(raw: RawRecipe, name: (id: number) => string): [string, number][] {
  const cells = raw.inShape ? raw.inShape.flat() : (raw.ingredients ?? []);
  const out: [string, number][] = [];
  for (const cell of cells) {
    const item = itemId(cell);
    if (item === null) continue;
    const n = name(item.id);
    const found = out.find((s) => s[0] === n);
    if (found) found[1]++;
    else out.push([n, 1]);
  }
  return out;
}

interface Working {
  readonly output: string;
  readonly count: number;
  inputs: [string, number][];
}

/** Folds the expansions of one tag within recipes of the same output and count. */
function foldTag(recipes: Working[], tag: string, members: readonly string[], generic: boolean): Working[] {
  if (members.length < 2) return recipes;
  const memberSet = new Set(members);
  const token = generic ? tag : (members[0] as string);
  const classes = new Map<string, { first: Working; canonical: [string, number][]; used: Set<string>; all: Working[] }>();
  const order: (string | Working)[] = [];
  for (const r of recipes) {
    const inTag = r.inputs.filter(([n]) => memberSet.has(n));
    if (inTag.length !== 1) {
      order.push(r);
      continue;
    }
    const used = (inTag[0] as [string, number])[0];
    const canonical = r.inputs.map(([n, c]): [string, number] => [memberSet.has(n) ? token : n, c]);
    const key = `${r.output}|${r.count}|${canonical
      .map(([n, c]) => `${n}*${c}`)
      .sort()
      .join(',')}`;
    let cls = classes.get(key);
    if (cls === undefined) {
      cls = { first: r, canonical, used: new Set(), all: [] };
      classes.set(key, cls);
      order.push(key);
    }
    cls.used.add(used);
    cls.all.push(r);
  }
  const out: Working[] = [];
  for (const entry of order) {
    if (typeof entry !== 'string') {
      out.push(entry);
      continue;
    }
    const cls = classes.get(entry)!;
    // Only a complete expansion (every member seen) is a tag; a partial set is separate recipes.
    if (cls.used.size === memberSet.size) out.push({ output: cls.first.output, count: cls.first.count, inputs: cls.canonical });
    else out.push(...cls.all);
  }
  return out;
}

/**
 * The extraction, pure: minecraft-data's items and recipes in, the committed file's content out.
 * @example
 * const file = extractTextcraftRecipes(minecraftData('1.16.5'), 'minecraft-data 3.119.0');
 * file.recipes.find(([out]) => out === 'crafting table') // ['crafting table', 1, [['planks', 4]]]
 */
export function extractTextcraftRecipes(source: RawRecipeSource, sourceLabel: string): RecipeFile {
  const names = new Map(source.items.map((i) => [i.id, i.name]));
  const nameOf = (id: number): string => {
    const n = names.get(id);
    if (n === undefined) throw new Error(`minecraft-data: recipe refers to unknown item id ${id}`);
    return n;
  };
  const allNames = [...names.values()];

  // 1. Raw recipes, grouped by output in name order (our stand-in for TextCraft's file order).
  let working: Working[] = [];
  const outputIds = Object.keys(source.recipes).sort((a, b) => nameOf(Number(a)).localeCompare(nameOf(Number(b))));
  for (const key of outputIds) {
    for (const raw of source.recipes[key] ?? []) {
      const result = itemId(raw.result);
      if (result === null) continue;
      const inputs = ingredientsOf(raw, nameOf);
      if (inputs.length === 0) continue;
      working.push({ output: nameOf(result.id), count: result.count, inputs });
    }
  }
  const everyItem = new Set<string>();
  for (const r of working) {
    everyItem.add(r.output);
    for (const [n] of r.inputs) everyItem.add(n);
  }

  // 2. Fold tag expansions.
  const generic: Record<string, string[]> = {};
  for (const rule of TAGS) {
    const members = rule.members(allNames).filter((n) => everyItem.has(n));
    working = foldTag(working, rule.name, members, rule.generic);
    if (rule.generic) generic[rule.name] = members.map(plain);
  }
  // Identical recipes can appear twice after folding (same output from two members): keep one.
  const seen = new Set<string>();
  working = working.filter((r) => {
    const key = `${r.output}|${r.count}|${JSON.stringify(r.inputs)}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });

  // 3. TextCraft's clean-up: no un-crafting of blocks, no cycles (first recipe read wins).
  const tagOf = new Map<string, string>();
  for (const [tag, members] of Object.entries(generic)) for (const m of members) tagOf.set(m.replace(/ /g, '_'), tag);
  const deps = new Map<string, Set<string>>();
  const depsOfName = (n: string): Set<string> | undefined => deps.get(n);
  const kept: Working[] = [];
  for (const r of working) {
    if (r.inputs.length === 1 && (r.inputs[0] as [string, number])[0].endsWith('_block')) continue;
    const inputKeys = r.inputs.map(([n]) => n);
    if (inputKeys.some((n) => n === r.output || depsOfName(n)?.has(r.output))) continue;
    let own = deps.get(r.output);
    if (own === undefined) {
      own = new Set();
      deps.set(r.output, own);
    }
    for (const n of inputKeys) {
      own.add(n);
      for (const d of depsOfName(n) ?? []) own.add(d);
    }
    // A tag output is a dependency carrier too: planks depend on logs.
    const tag = tagOf.get(r.output);
    if (tag !== undefined) {
      let tagDeps = deps.get(tag);
      if (tagDeps === undefined) {
        tagDeps = new Set();
        deps.set(tag, tagDeps);
      }
      tagDeps.add(r.output);
      for (const d of own) tagDeps.add(d);
    }
    kept.push(r);
  }

  const recipes: RecipeRow[] = kept.map((r) => [plain(r.output), r.count, r.inputs.map(([n, c]): Stack => [plain(n), c])]);
  const named = new Set(recipes.flatMap(([out, , inputs]) => [out, ...inputs.map(([n]) => n)]));
  const otherItems = [...everyItem].map(plain).filter((n) => !named.has(n)).sort();
  return { source: sourceLabel, gameVersion: GAME_VERSION, generic, otherItems, recipes };
}

/** Serialises the file: one recipe per line so diffs stay readable. */
export function formatRecipeFile(file: RecipeFile): string {
  const lines = [
    '{',
    `  "source": ${JSON.stringify(file.source)},`,
    `  "gameVersion": ${JSON.stringify(file.gameVersion)},`,
    `  "generic": ${JSON.stringify(file.generic)},`,
    `  "otherItems": ${JSON.stringify(file.otherItems)},`,
    '  "recipes": [',
    file.recipes.map((r) => `    ${JSON.stringify(r)}`).join(',\n'),
    '  ]',
    '}',
    '',
  ];
  return lines.join('\n');
}

/**
 * Reads the installed minecraft-data (a devDependency; never loaded at run time) and extracts.
 * @example formatRecipeFile(extractFromInstalledMinecraftData()) // the committed JSON text
 */
export function extractFromInstalledMinecraftData(): RecipeFile {
  const require = createRequire(import.meta.url);
  const pkg = require('minecraft-data/package.json') as { version: string };
  const minecraftData = require('minecraft-data') as (version: string) => { itemsArray: RawRecipeSource['items']; recipes: RawRecipeSource['recipes'] } | null;
  const data = minecraftData(GAME_VERSION);
  if (data === null) throw new Error(`minecraft-data ${pkg.version} has no data for Minecraft ${GAME_VERSION}`);
  return extractTextcraftRecipes({ items: data.itemsArray, recipes: data.recipes }, `minecraft-data ${pkg.version}, Minecraft ${GAME_VERSION}`);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const text = formatRecipeFile(extractFromInstalledMinecraftData());
  if (process.argv.includes('--check')) {
    const current = readFileSync(RECIPES_PATH, 'utf8');
    if (current !== text) {
      console.error(`${RECIPES_PATH.pathname} is stale: run node --import tsx scripts/extract-textcraft-recipes.ts`);
      process.exit(1);
    }
    console.log('recipes.json is up to date');
  } else {
    writeFileSync(RECIPES_PATH, text);
    const file = JSON.parse(text) as RecipeFile;
    console.log(`wrote ${file.recipes.length} recipes, other items: ${file.otherItems.join(', ')}; generic: ${Object.keys(file.generic).join(', ')}`);
  }
}
