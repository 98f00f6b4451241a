import { describe, expect, it } from 'vitest';
import { createTextcraftCatalog } from '../../../src/envs/textcraft/catalog.js';
import { TextCraftEnvironment } from '../../../src/envs/textcraft/env.js';
import { defaultRecipeBook } from '../../../src/envs/textcraft/recipe-book.js';
import { solveGoal } from '../../../src/envs/textcraft/solver.js';

const book = defaultRecipeBook();

describe('TextCraft solver', () => {
  it('finds the hand-checked optimum on small goals', () => {
    expect(solveGoal(book, 'blue dye').plan).toHaveLength(2);
    expect(solveGoal(book, 'crafting table').plan).toEqual(['get 1 oak log', 'craft 4 oak planks using 1 oak log', 'craft 1 crafting table using 4 oak planks']);
    // barrel: 1 log kind, planks, slabs, barrel = 4 turns; 9 planks needed -> 3 logs in one get.
    expect(solveGoal(book, 'barrel').plan).toEqual([
      'get 3 oak log',
      'craft 12 oak planks using 3 oak log',
      'craft 6 oak slab using 3 oak planks',
      'craft 1 barrel using 6 oak planks, 2 oak slab',
    ]);
    expect(solveGoal(book, 'golden carrot').optimalTurns).toBe(3);
  });

  it('solves every test goal in the environment, with the optimal plan and with listed actions only', () => {
    const env = new TextCraftEnvironment();
    const turns: number[] = [];
    const listTurns: number[] = [];
    for (const index of createTextcraftCatalog().indices('test')) {
      const goal = book.goals()[index]!.item;
      const solution = solveGoal(book, goal);
      for (const plan of [solution.plan, solution.listPlan]) {
        let obs = env.reset(index);
        let success = false;
        for (const action of plan) {
          if (plan === solution.listPlan) expect(obs.availableActions, `${action} listed for ${goal}`).toContain(action);
          const result = env.step(action);
          expect(result.info?.invalid, `${action} for ${goal}: ${result.observation.text}`).toBe(false);
          success = result.success === true;
          obs = result.observation;
        }
        expect(success, goal).toBe(true);
      }
      turns.push(solution.optimalTurns);
      listTurns.push(solution.listPlan.length);
    }
    expect(turns).toHaveLength(100);
    expect(Math.max(...turns)).toBeLessThanOrEqual(30); // within AgentGym-RL's 30-turn horizon
    expect(Math.min(...turns)).toBe(2);
  });

  it('refuses an item without a recipe', () => {
    expect(() => solveGoal(book, 'oak log')).toThrow(/no recipe/);
  });
});
