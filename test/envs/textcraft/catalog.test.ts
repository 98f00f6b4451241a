import { describe, expect, it } from 'vitest';
import { InvalidConfigError } from '../../../src/core/errors.js';
import { createTextcraftCatalog, testPositions } from '../../../src/envs/textcraft/catalog.js';
import { defaultRecipeBook } from '../../../src/envs/textcraft/recipe-book.js';

describe('TextCraft catalog', () => {
  const book = defaultRecipeBook();

  it('splits the 547 goals into 100 test and 447 train positions, disjoint and complete', () => {
    const catalog = createTextcraftCatalog();
    const test = catalog.indices('test');
    const train = catalog.indices('train');
    expect(test.length).toBe(100);
    expect(train.length).toBe(447);
    expect(new Set([...test, ...train]).size).toBe(547);
    expect(testPositions(547).slice(0, 3)).toEqual([2, 8, 13]); // floor((2j+1) * 547 / 200)
    expect(test.at(-1)).toBe(544);
  });

  it('spreads the test split over every depth in proportion', () => {
    const catalog = createTextcraftCatalog();
    const count = (split: 'train' | 'test', d: number): number => catalog.indices(split).filter((i) => book.goals()[i]?.depth === d).length;
    for (const d of [1, 2, 3]) expect(count('test', d)).toBeGreaterThan(10);
    expect(count('test', 1) + count('train', 1)).toBe(124);
  });

  it('reports the goal depth as the category, also for ids past the goal count', () => {
    const catalog = createTextcraftCatalog();
    expect(catalog.category?.(0)).toBe('depth-1');
    expect(catalog.category?.(546)).toBe('depth-4');
    expect(catalog.category?.(547)).toBe('depth-1');
    expect(catalog.category?.(-1)).toBeUndefined();
  });

  it('keeps only the selected depths', () => {
    const catalog = createTextcraftCatalog({ settings: { depths: [1] } });
    expect(catalog.indices('test').length + catalog.indices('train').length).toBe(124);
    expect(catalog.indices('test').every((i) => book.goals()[i]?.depth === 1)).toBe(true);
  });

  it('rejects bad settings naming the field', () => {
    expect(() => createTextcraftCatalog({ settings: { depths: [9] } })).toThrow(/env\.settings\.depths.*depth 9/);
    expect(() => createTextcraftCatalog({ settings: { depths: [] } })).toThrow(InvalidConfigError);
    expect(() => createTextcraftCatalog({ settings: { depth: 1 } })).toThrow(/env\.settings/);
  });
});

describe('TextCraft catalog repeats', () => {
  it('lists each test goal testRepeats times under ids that wrap to the same goal', () => {
    const once = createTextcraftCatalog({ settings: { depths: [1] } }).indices('test');
    const thrice = createTextcraftCatalog({ settings: { depths: [1], testRepeats: 3 } });
    expect(thrice.indices('test')).toEqual([...once, ...once.map((i) => i + 547), ...once.map((i) => i + 1094)]);
    expect(thrice.indices('train').length).toBe(101);
    expect(thrice.category?.((once[0] as number) + 547)).toBe('depth-1');
  });
});
