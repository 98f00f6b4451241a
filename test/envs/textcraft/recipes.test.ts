import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { extractFromInstalledMinecraftData, formatRecipeFile, RECIPES_PATH } from '../../../scripts/extract-textcraft-recipes.js';
import { defaultRecipeBook } from '../../../src/envs/textcraft/recipe-book.js';

describe('TextCraft recipes extracted from minecraft-data', () => {
  it('matches the committed recipes.json exactly (re-extracted from the installed package)', () => {
    const committed = readFileSync(RECIPES_PATH, 'utf8');
    expect(formatRecipeFile(extractFromInstalledMinecraftData())).toBe(committed);
  });

  const book = defaultRecipeBook();
  const texts = (item: string): string[] => book.recipesOf(item).map((r) => r.text);

  it('folds tag expansions back into generic ingredients and first members', () => {
    expect(book.gameVersion).toBe('1.16.5');
    expect(texts('crafting table')).toEqual(['craft 1 crafting table using 4 planks']);
    expect(texts('barrel')).toEqual(['craft 1 barrel using 6 planks, 2 wooden slabs']);
    expect(texts('oak planks')).toEqual(['craft 4 oak planks using 1 oak log']);
    expect(texts('white bed')).toEqual(['craft 1 white bed using 3 white wool, 3 planks']);
    expect(book.membersOf('planks').size).toBe(8);
    expect(book.membersOf('wool').size).toBe(16);
  });

  it('keeps separate recipes separate', () => {
    expect(texts('blue dye')).toEqual(['craft 1 blue dye using 1 lapis lazuli', 'craft 1 blue dye using 1 cornflower']);
    expect(texts('stick')).toEqual(['craft 4 stick using 2 planks', 'craft 1 stick using 2 bamboo']);
  });

  it("applies TextCraft's clean-up: no un-crafting of blocks, one side of each cycle", () => {
    expect(texts('iron ingot')).toEqual(['craft 1 iron ingot using 9 iron nugget']); // not from iron block
    expect(texts('iron nugget')).toEqual([]); // the cycle back to the ingot is dropped
    expect(book.isFetchable('iron nugget')).toBe(true);
    expect(book.isFetchable('iron ingot')).toBe(false);
    expect(book.isFetchable('snow')).toBe(true); // named only by a dropped recipe: still fetchable
  });

  it('computes minimum recipe depths and the depth-sorted goal list', () => {
    expect(book.depth('oak log')).toBe(0);
    expect(book.depth('oak planks')).toBe(1);
    expect(book.depth('planks')).toBe(1);
    expect(book.depth('crafting table')).toBe(2);
    const goals = book.goals();
    expect(goals.length).toBe(547);
    expect(goals.map((g) => g.depth)).toEqual([...goals.map((g) => g.depth)].sort((a, b) => a - b));
    expect(goals[0]).toEqual({ item: 'acacia planks', depth: 1 });
  });
});
