import { describe, expect, it } from 'vitest';
import { Rng } from '../../../src/core/rng.js';
import type { StepResult } from '../../../src/core/types.js';
import { TextCraftEnvironment } from '../../../src/envs/textcraft/env.js';
import { MAX_DISTRACTORS } from '../../../src/envs/textcraft/episode.js';
import { defaultRecipeBook } from '../../../src/envs/textcraft/recipe-book.js';
import { fuzzEnvironment } from '../fuzz.js';

const book = defaultRecipeBook();
const positionOf = (item: string): number => book.goals().findIndex((g) => g.item === item);

describe('TextCraft environment', () => {
  const env = new TextCraftEnvironment();

  it('shows the gold recipes plus at most 10 distractors, then the goal', () => {
    const position = positionOf('blue dye');
    const obs = env.reset(position);
    const lines = obs.text.split('\n');
    expect(lines[0]).toBe('Crafting commands:');
    expect(obs.text.endsWith('\n\nGoal: craft blue dye.')).toBe(true);
    const recipes = lines.slice(1, lines.indexOf(''));
    expect(recipes).toContain('craft 1 blue dye using 1 lapis lazuli');
    expect(recipes).toContain('craft 1 blue dye using 1 cornflower');
    // Distractors use a gold ingredient: lapis lazuli also makes lapis block.
    expect(recipes).toContain('craft 1 lapis block using 9 lapis lazuli');
    for (let i = 0; i < book.goals().length; i += 7) {
      const o = env.reset(i);
      const shown = o.text.split('\n\n')[0]!.split('\n').length - 1;
      expect(shown).toBeLessThanOrEqual(book.recipeTree(book.goals()[i]!.item).length + MAX_DISTRACTORS);
    }
  });

  it('is deterministic per task id, and ids wrap around the goal list', () => {
    const other = new TextCraftEnvironment();
    expect(other.reset(300)).toEqual(env.reset(300));
    expect(other.reset(300 + 547).text).toBe(env.reset(300).text);
  });

  it('plays crafting table with the original outcomes and messages', () => {
    env.reset(positionOf('crafting table'));
    const say = (text: string): StepResult => env.step(text);
    expect(say('get 1 oak log').observation.text).toBe('Got 1 oak log');
    expect(say('get 1 oak planks').observation.text).toBe('Could not find oak planks'); // craftable
    expect(say('get 1 planks').observation.text).toBe('Could not find planks'); // generic
    expect(say('get 1 unobtainium').observation.text).toBe('Could not find unobtainium');
    expect(say('inventory').observation.text).toBe('Inventory: [oak log] (1)');
    expect(say('Thought:\nPlanks first.\n\nAction:\ncraft 4 oak planks using 1 oak log').observation.text).toBe('Crafted 4 oak planks');
    expect(say('inventory').observation.text).toBe('Inventory: [oak planks] (4)');
    expect(say('craft 1 crafting table using 4 planks').observation.text).toBe('Could not find enough items to craft crafting table');
    expect(say('craft 1 crafting table using 3 oak planks').observation.text).toBe('Could not find a valid recipe for crafting table');
    expect(say('craft 1 crafting table using oak planks').observation.text).toBe('Wrong item format: oak planks');
    const bad = say('dance');
    expect(bad.observation.text).toBe('Could not execute dance');
    expect(bad.info?.invalid).toBe(true);
    expect(say('Action: get 1 oak log\nAction: get 2 oak log').observation.text).toMatch(/Only one 'Action'/);
    const done = say('craft 1 crafting table using 4 oak planks');
    expect(done).toMatchObject({ reward: 1, done: true, success: true });
    expect(done.observation.text).toBe('Crafted 1 crafting table');
    expect(say('inventory')).toMatchObject({ done: true, reward: 0, info: { invalid: true, error: 'episode-over' } });
  });

  it('crafts whole multiples of a recipe, and only consistent ones', () => {
    env.reset(positionOf('barrel'));
    env.step('get 3 oak log');
    expect(env.step('craft 12 oak planks using 3 oak log').observation.text).toBe('Crafted 12 oak planks');
    expect(env.step('craft 12 oak slab using 6 oak planks').observation.text).toBe('Crafted 12 oak slab');
    expect(env.step('craft 1 barrel using 6 oak planks, 4 oak slab').observation.text).toBe('Could not find a valid recipe for barrel'); // k = 1 vs 2
    expect(env.step('inventory').observation.text).toBe('Inventory: [oak planks] (6) [oak slab] (12)');
    expect(env.step('craft 1 barrel using 6 oak planks, 2 oak slab')).toMatchObject({ reward: 1, done: true });
  });

  it('checks counts: zero, huge and non-numeric quantities are refused clearly', () => {
    env.reset(positionOf('blue dye'));
    expect(env.step('get 0 lapis lazuli').observation.text).toMatch(/^Could not execute get 0 lapis lazuli: counts must be whole numbers from 1 to 1000/);
    expect(env.step('get 99999999999999999999 lapis lazuli').info?.error).toBe('bad-quantity');
    expect(env.step('get lapis lazuli').observation.text).toBe('Could not execute get lapis lazuli');
    expect(env.step('get 1 lapis lazuli').observation.text).toBe('Got 1 lapis lazuli');
    expect(env.step('craft 1 blue dye using 2 lapis lazuli').observation.text).toBe('Could not find enough items to craft blue dye');
  });

  it('lists a short set of actions, every one of them accepted, with crafts as soon as they are possible', () => {
    const position = positionOf('blue dye');
    const first = env.reset(position);
    expect([...first.availableActions!].sort()).toEqual(['get 1 cornflower', 'get 1 lapis lazuli', 'inventory']); // 9 lapis lazuli: a distractor's count
    const after = env.step('get 1 cornflower').observation;
    expect(after.availableActions?.[0]).toBe('craft 1 blue dye using 1 cornflower');

    const rng = Rng.fromSeed(5);
    let longest = 0;
    for (let i = 0; i < book.goals().length; i++) {
      let obs = env.reset(i);
      for (let t = 0; t < 12; t++) {
        const actions = obs.availableActions ?? [];
        longest = Math.max(longest, actions.length);
        const result = env.step(rng.pick(actions));
        expect(result.info?.invalid, `${rng.pick(actions)} in textcraft_${i}`).toBe(false);
        if (result.done) break;
        obs = result.observation;
      }
    }
    // Most goals list under 15 (mean about 7 at reset); wool and planks trees list one get per kind.
    expect(longest).toBeLessThanOrEqual(50);
  });

  it('specialises generic ingredients with the members held', () => {
    env.reset(positionOf('crafting table'));
    env.step('get 4 oak log');
    env.step('craft 16 oak planks using 4 oak log');
    env.step('get 1 birch log');
    const obs = env.step('craft 4 birch planks using 1 birch log').observation;
    expect(obs.availableActions).toContain('craft 1 crafting table using 4 oak planks');
    expect(obs.availableActions).toContain('craft 1 crafting table using 4 birch planks');
  });

  it('never throws on random or malformed text (fuzz)', () => {
    fuzzEnvironment(env, positionOf('crafting table'), 400, 3);
    const rng = Rng.fromSeed(9);
    env.reset(positionOf('barrel'));
    const words = ['craft', 'get', 'using', 'inventory', '1', '4', '0', 'oak', 'planks', 'log', ',', 'slab', 'wooden', 'slabs', '9999', 'Action:', 'Thought:'];
    for (let i = 0; i < 500; i++) {
      const text = Array.from({ length: 1 + rng.int(9) }, () => rng.pick(words)).join(rng.next() < 0.5 ? ' ' : '');
      const r = env.step(text);
      expect(r.observation.text.length).toBeGreaterThan(0);
      if (r.done) env.reset(positionOf('barrel'));
    }
  });

  it('renders goal, inventory and the recipes shown, marking the goal tree', () => {
    env.reset(positionOf('blue dye'));
    env.step('get 1 lapis lazuli');
    const text = env.render();
    expect(text).toContain('goal blue dye (depth 1)');
    expect(text).toContain('Inventory: [lapis lazuli] (1)');
    expect(text).toContain('* craft 1 blue dye using 1 lapis lazuli');
    expect(text).toContain('  craft 1 lapis block using 9 lapis lazuli');
  });
});
