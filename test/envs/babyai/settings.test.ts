import { describe, expect, it } from 'vitest';
import { InvalidConfigError } from '../../../src/core/errors.js';
import { createBabyAICatalog } from '../../../src/envs/babyai/catalog.js';
import { BabyAIEnvironment } from '../../../src/envs/babyai/env.js';
import { babyaiSettings } from '../../../src/envs/babyai/settings.js';

describe('BabyAI settings', () => {
  it('refuses an unknown key by name, in the environment and in the catalog (a misspelt `level:` no longer trains on all 40 levels)', () => {
    expect(() => new BabyAIEnvironment({ settings: { level: ['GoToRedBall'] } })).toThrow(InvalidConfigError);
    expect(() => new BabyAIEnvironment({ settings: { level: ['GoToRedBall'] } })).toThrow(/env\.settings.*"level"/);
    expect(() => createBabyAICatalog({ settings: { level: ['GoToRedBall'] } })).toThrow(/"level"/);
  });

  it('defaults to Minigrid\'s generator with turnwise text', () => {
    expect(babyaiSettings()).toEqual({ textProfile: 'turnwise', generator: 'minigrid', sequenceWords: false, restateGoal: false });
  });

  it('names the field at fault for bad values and combinations', () => {
    expect(() => babyaiSettings({ settings: { textProfile: 'python' } })).toThrow(/env\.settings\.textProfile/);
    expect(() => babyaiSettings({ settings: { generator: 'xoroshiro' } })).toThrow(/env\.settings\.generator/);
    expect(() => babyaiSettings({ settings: { textProfile: 'agentgym', generator: 'turnwise' } })).toThrow(/env\.settings\.generator.*minigrid/);
    expect(() => babyaiSettings({ settings: { textProfile: 'agentgym', sequenceWords: true } })).toThrow(/env\.settings\.sequenceWords/);
    expect(() => babyaiSettings({ settings: { textProfile: 'agentgym', restateGoal: true } })).toThrow(/env\.settings\.restateGoal/);
    expect(() => babyaiSettings({ settings: { levels: [] } })).toThrow(/env\.settings\.levels/);
  });

  it('changes the worlds with the generator: the same item is a different GoToRedBall world under each', () => {
    const minigrid = new BabyAIEnvironment();
    const turnwise = new BabyAIEnvironment({ settings: { generator: 'turnwise' } });
    const differ = [1, 41, 81, 121].filter((i) => minigrid.reset(i).text !== turnwise.reset(i).text);
    expect(differ.length).toBeGreaterThan(2);
    // Minigrid's data_idx 41 says "the red ball" (AgentGym's server does too), turnwise's "a red ball".
    minigrid.reset(41);
    expect(minigrid.goal()).toBe('go to the red ball');
  });
});
