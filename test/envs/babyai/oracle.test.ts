import { describe, expect, it } from 'vitest';
import { createBabyAICatalog } from '../../../src/envs/babyai/catalog.js';
import { BabyAIEnvironment } from '../../../src/envs/babyai/env.js';
import { BabyAIOracle, extractGoal, parseGoal, targetAction } from '../../../src/envs/babyai/oracle.js';

describe('BabyAI oracle', () => {
  it('parses goals with colour, type, or both', () => {
    expect(parseGoal('go to the red ball')).toEqual({ verb: 'go to', color: 'red', type: 'ball' });
    expect(parseGoal('pick up a key')).toEqual({ verb: 'pick up', color: null, type: 'key' });
    expect(parseGoal('pick up the grey object')).toEqual({ verb: 'pick up', color: 'grey', type: null });
    expect(parseGoal('dance')).toBeNull();
  });

  it('extracts the goal line', () => {
    expect(extractGoal('Your goal: open the red door\nYou see no objects.')).toBe('open the red door');
  });

  it('chooses the nearest matching object', () => {
    const actions = ['turn left', 'go to red ball 2', 'go to blue ball 1', 'go to red ball 1', 'pickup red ball 1'];
    expect(targetAction(actions, 'go to the red ball')).toBe('go to red ball 1');
    expect(targetAction(actions, 'pick up a red ball')).toBe('pickup red ball 1');
    expect(targetAction(['go to red closed door 1'], 'go to the red door')).toBe('go to red closed door 1');
    expect(targetAction(['toggle and go through red closed door 1'], 'open the red door')).toBe('toggle and go through red closed door 1');
  });

  it('searches by turning, then stepping forward', () => {
    const oracle = new BabyAIOracle();
    const obs = { text: '', availableActions: ['turn left', 'turn right', 'move forward'] };
    const moves = [0, 1, 2, 3].map(() => oracle.act(obs, 'go to the red ball'));
    expect(moves).toEqual(['turn left', 'turn left', 'turn left', 'move forward']);
  });

  it("wins 253 of the first 256 held-out GoToRedBall test tasks within 5 turns (Minigrid's worlds; the earlier quickstart's ceiling)", () => {
    const settings = { levels: ['GoToRedBall'] };
    const env = new BabyAIEnvironment({ settings });
    let wins = 0;
    for (const task of createBabyAICatalog({ settings }).indices('test').slice(0, 256)) {
      let obs = env.reset(task);
      const goal = extractGoal(obs.text) ?? '';
      const oracle = new BabyAIOracle();
      for (let turn = 0; turn < 5; turn++) {
        const r = env.step(oracle.act(obs, goal));
        obs = r.observation;
        if (r.done) {
          if (r.success) wins++;
          break;
        }
      }
    }
    expect(wins).toBe(253);
  });
});
