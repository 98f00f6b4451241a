import { describe, expect, it } from 'vitest';
import { Rng } from '../../../src/core/rng.js';
import { randomTextcraftAction, TEXTCRAFT_TREE_BONUS, TextCraftEnvironment } from '../../../src/envs/textcraft/env.js';
import { textcraftSpec } from '../../../src/envs/textcraft/index.js';
import { defaultRecipeBook } from '../../../src/envs/textcraft/recipe-book.js';
import { solveGoal } from '../../../src/envs/textcraft/solver.js';
import { toolCallText } from '../../../src/envs/tools.js';

describe('TextCraft free mode (listActions: false)', () => {
  it('lists nothing and keeps the goal, the recipes and the inventory in every observation', () => {
    const env = new TextCraftEnvironment({ settings: { listActions: false } });
    const first = env.reset(0);
    expect(first.availableActions).toBeUndefined();
    const plan = solveGoal(defaultRecipeBook(), env.goal()).plan;
    const after = env.step(`Action: ${plan[0]}`);
    expect(after.observation.availableActions).toBeUndefined();
    expect(after.observation.text).toContain(`Goal: craft ${env.goal()}.`);
    expect(after.observation.text).toContain('Crafting commands:');
    expect(after.observation.text).toMatch(/Inventory: /);
  });

  it('solves goals with get / craft tool calls as with text', () => {
    const env = new TextCraftEnvironment({ settings: { listActions: false } });
    for (const index of [0, 5, 40]) {
      env.reset(index);
      const plan = solveGoal(defaultRecipeBook(), env.goal()).plan;
      let last = null;
      for (const command of plan) {
        const [verb, ...rest] = command.split(' ');
        const call = verb === 'get' ? { name: 'get', arguments: { item: rest.join(' ') } } : { name: 'craft', arguments: { recipe: rest.join(' ') } };
        last = env.step(toolCallText(call));
        expect(last.info?.invalid).toBe(false);
      }
      expect(last).toMatchObject({ success: true, done: true });
    }
    env.reset(0);
    expect(env.step('{"name":"mine","arguments":{}}').observation.text).toMatch(/There is no tool "mine"; the tools are "get", "craft", "inventory"/);
  });

  it('pays shaped rewards for new items of the recipe tree with turnRewards, once each', () => {
    const env = new TextCraftEnvironment({ settings: { listActions: false, turnRewards: true } });
    env.reset(0);
    const plan = solveGoal(defaultRecipeBook(), env.goal()).plan;
    const rewards = plan.map((command) => env.step(command).reward);
    expect(rewards.at(-1)).toBeGreaterThan(1);
    expect(rewards.slice(0, -1).every((r) => r > 0 && r <= TEXTCRAFT_TREE_BONUS)).toBe(true);
    expect(rewards.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(1 + TEXTCRAFT_TREE_BONUS + 1e-12);
    expect(textcraftSpec.paysTurnRewards?.({ settings: { turnRewards: true } })).toBe(true);
  });

  it('random commands are well formed and read from the recipes shown', () => {
    const env = new TextCraftEnvironment({ settings: { listActions: false } });
    const first = env.reset(3);
    const rng = Rng.fromSeed(2);
    for (let i = 0; i < 30; i++) {
      const action = randomTextcraftAction({ observation: first, first, rng, form: 'text' });
      expect(action).toMatch(/^Action: (inventory|get [1-4] .+|craft \d+ .+ using .+)$/);
    }
  });
});
