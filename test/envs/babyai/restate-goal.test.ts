import { describe, expect, it } from 'vitest';
import { BabyAIEnvironment } from '../../../src/envs/babyai/env.js';

describe('BabyAI settings.restateGoal', () => {
  it('states the goal in every observation when set, and only in the first by default (AgentGym)', () => {
    const plain = new BabyAIEnvironment();
    const restating = new BabyAIEnvironment({ settings: { restateGoal: true } });
    for (const env of [plain, restating]) env.reset(40 * 7 + 3);
    const goal = /^Your goal: (.+)$/m.exec(restating.reset(40 * 7 + 3).text)?.[1];
    expect(goal).toBeTruthy();
    for (const action of ['turn left', 'check available actions', 'fly away']) {
      const a = plain.step(action).observation.text;
      const b = restating.step(action).observation.text;
      expect(a.startsWith('Your goal:')).toBe(false);
      expect(b.startsWith(`Your goal: ${goal}\n`)).toBe(true);
      expect(b.slice(`Your goal: ${goal}\n`.length)).toBe(a); // otherwise the same observation
    }
    expect(() => new BabyAIEnvironment({ settings: { restateGoal: 'yes' } })).toThrow(/settings\.restateGoal/);
  });
});
