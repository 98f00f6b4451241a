import { describe, expect, it } from 'vitest';
import { InvalidConfigError } from '../../../src/core/errors.js';
import { babyaiTaskIndex, babyaiTaskOf, createBabyAICatalog } from '../../../src/envs/babyai/catalog.js';
import { babyaiSpec } from '../../../src/envs/babyai/index.js';
import { implementedLevelNames } from '../../../src/envs/babyai/levels/index.js';

describe('BabyAI task ids', () => {
  it('maps an index to level index % 40 and seed floor(index / 40), as AgentGym does', () => {
    expect(babyaiTaskOf(0)).toMatchObject({ levelIndex: 0, seed: 0, level: { gymId: 'BabyAI-GoToRedBallGrey-v0' } });
    expect(babyaiTaskOf(41)).toMatchObject({ levelIndex: 1, seed: 1, level: { name: 'GoToRedBall' } });
    expect(babyaiTaskOf(39)).toMatchObject({ seed: 0, level: { gymId: 'BabyAI-BossLevelNoUnlock-v0' } });
    expect(babyaiTaskOf(40 * 1234 + 12)).toMatchObject({ seed: 1234, level: { name: 'OpenRedDoor' } });
    expect(babyaiTaskIndex(12, 1234)).toBe(40 * 1234 + 12);
  });
});

describe('BabyAI catalog', () => {
  it('puts seeds 0..999 in test and 1000..20999 in train for the selected levels', () => {
    const catalog = createBabyAICatalog({ settings: { levels: ['GoToRedBall'] } });
    const test = catalog.indices('test');
    const train = catalog.indices('train');
    expect(test).toHaveLength(1000);
    expect(test.slice(0, 3)).toEqual([1, 41, 81]);
    expect(test.at(-1)).toBe(1 + 40 * 999);
    expect(train).toHaveLength(20000);
    expect(train[0]).toBe(1 + 40 * 1000);
    expect(train.at(-1)).toBe(1 + 40 * 20999);
  });

  it('keeps train and test disjoint across several levels', () => {
    const catalog = createBabyAICatalog({ settings: { levels: ['GoToRedBall', 'BabyAI-OpenRedDoor-v0'] } });
    const test = new Set(catalog.indices('test'));
    expect(test.size).toBe(2000);
    expect(catalog.indices('train').some((i) => test.has(i))).toBe(false);
  });

  it('defaults to the implemented levels', () => {
    const catalog = createBabyAICatalog();
    expect(catalog.indices('test')).toHaveLength(1000 * implementedLevelNames().length);
    const levels = new Set(catalog.indices('test').slice(0, 40).map((i) => babyaiTaskOf(i).level.name));
    expect([...levels].sort()).toEqual([...implementedLevelNames()].sort());
  });

  it('rejects an unknown level name, naming the setting and the valid names', () => {
    expect(() => createBabyAICatalog({ settings: { levels: ['GoToMoon'] } })).toThrow(InvalidConfigError);
    expect(() => createBabyAICatalog({ settings: { levels: ['GoToMoon'] } })).toThrow(/settings\.levels.*GoToRedBall/);
    expect(() => createBabyAICatalog({ settings: { levels: 'GoToRedBall' } })).toThrow(/settings\.levels/);
  });

  it('reports a category per task', () => {
    const catalog = createBabyAICatalog();
    expect(catalog.category?.(1)).toBe('GoTo');
    expect(catalog.category?.(12 + 40)).toBe('Open');
    expect(catalog.category?.(19)).toBe('Pickup');
    expect(catalog.category?.(-3)).toBeUndefined();
  });
});

describe('BabyAI corpus', () => {
  it('is deterministic in the seed and holds instruction, observations and actions', () => {
    const a = babyaiSpec.corpus(undefined, 5, 3);
    const b = babyaiSpec.corpus(undefined, 5, 3);
    const c = babyaiSpec.corpus(undefined, 5, 4);
    expect(a).toEqual(b);
    expect(a).not.toEqual(c);
    expect(a[0]).toBe(babyaiSpec.create().instruction());
    expect(a.some((t) => t.startsWith('Your goal:'))).toBe(true);
    expect(a.some((t) => /Action:\n(turn left|turn right|move forward)/.test(t))).toBe(true);
  });
});
