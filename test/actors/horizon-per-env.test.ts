import { describe, expect, it } from 'vitest';
import { advanceAllEnvs, evalHorizonFor, type HorizonSpec, initialMultiState, scheduleForEnv } from '../../src/actors/horizon-per-env.js';
import { InvalidConfigError } from '../../src/core/errors.js';

const spec: HorizonSpec = {
  schedule: 'per-env',
  envs: {
    babyai: { schedule: 'stepwise', horizons: [3, 6], every: 2 },
    textcraft: { schedule: 'adaptive', start: 10, step: 10, max: 30, window: 1, cooldown: 0, successAbove: 0.5, minDelta: 0 },
  },
  default: { schedule: 'fixed', horizon: 7 },
};

describe('per-environment horizon schedules', () => {
  it('resolves each environment to its own schedule, unknown ones to the default', () => {
    expect(scheduleForEnv(spec, 'babyai')).toEqual({ schedule: 'stepwise', horizons: [3, 6], every: 2 });
    expect(scheduleForEnv(spec, 'wordle')).toEqual({ schedule: 'fixed', horizon: 7 });
    expect(scheduleForEnv({ schedule: 'fixed', horizon: 4, evalHorizon: 9 } as HorizonSpec, 'anything')).toEqual({ schedule: 'fixed', horizon: 4 });
    expect(evalHorizonFor({ schedule: 'fixed', horizon: 4, evalHorizon: 9 } as HorizonSpec, 'anything')).toBe(9);
  });

  it('names the missing environment when there is no default', () => {
    const noDefault: HorizonSpec = { schedule: 'per-env', envs: { babyai: { schedule: 'fixed', horizon: 3 } } };
    expect(() => scheduleForEnv(noDefault, 'sokoban')).toThrow(InvalidConfigError);
    expect(() => scheduleForEnv(noDefault, 'sokoban')).toThrow(/horizon\.envs\.sokoban.*listed: babyai/);
  });

  it('validates an entry under its own path', () => {
    const bad: HorizonSpec = { schedule: 'per-env', envs: { babyai: { schedule: 'stepwise', horizons: [3, 0], every: 2 } } };
    expect(() => scheduleForEnv(bad, 'babyai')).toThrow(/horizon\.envs\.babyai\.horizons\.1/);
  });

  it('advances every environment independently, each on its own signals', () => {
    let states = initialMultiState(spec, ['babyai', 'textcraft']);
    const log: string[] = [];
    for (let step = 0; step < 3; step++) {
      const r = advanceAllEnvs(spec, states, { textcraft: { 'rollout/successRate': step === 1 ? 0.9 : 0.1 } });
      for (const [env, c] of Object.entries(r.changes)) log.push(`${step} ${env} ${c.from}->${c.to} h=${c.horizon}`);
      states = r.states;
    }
    // babyai: stage 1 after 2 completed steps (step index 1); textcraft: mastered at step 1 (window 1, no cooldown).
    expect(log).toEqual(['1 babyai 0->1 h=6', '1 textcraft 0->1 h=20']);
    expect(states.babyai).toEqual({ stage: 1, completedSteps: 3 });
    expect(states.textcraft?.stage).toBe(1);
  });
});
