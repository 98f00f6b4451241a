import { describe, expect, it } from 'vitest';
import {
  type HorizonSchedule,
  type HorizonState,
  completeStep,
  horizonOfStage,
  initialHorizonState,
  restoreHorizonState,
  stageAt,
  validateHorizonSchedule,
} from '../../src/actors/horizon-schedule.js';
import { InvalidConfigError } from '../../src/core/errors.js';

const stepwise: HorizonSchedule = { schedule: 'stepwise', horizons: [10, 20, 30], every: 100 };

function run(schedule: HorizonSchedule, from: HorizonState, steps: number): { state: HorizonState; horizons: number[] } {
  let state = from;
  const horizons: number[] = [];
  for (let i = 0; i < steps; i++) {
    horizons.push(horizonOfStage(schedule, state.stage));
    state = completeStep(schedule, state);
  }
  return { state, horizons };
}

describe('horizon schedules', () => {
  it('keeps a fixed horizon for the whole run', () => {
    const fixed: HorizonSchedule = { schedule: 'fixed', horizon: 7 };
    const { horizons } = run(fixed, initialHorizonState(), 250);
    expect(new Set(horizons)).toEqual(new Set([7]));
  });

  it('advances a stepwise stage after every N completed steps and holds the last horizon', () => {
    const { horizons } = run(stepwise, initialHorizonState(), 350);
    expect(horizons[0]).toBe(10);
    expect(horizons[99]).toBe(10);
    expect(horizons[100]).toBe(20);
    expect(horizons[199]).toBe(20);
    expect(horizons[200]).toBe(30);
    expect(horizons[349]).toBe(30);
  });

  it('resumes at a stage boundary in the next stage, not the one after (AgentGym-RL resume bug)', () => {
    const { state: saved } = run(stepwise, initialHorizonState(), 100);
    const persisted = JSON.parse(JSON.stringify(saved)) as HorizonState;
    const restored = restoreHorizonState(stepwise, persisted);
    expect(restored).toEqual({ stage: 1, completedSteps: 100 });
    // The next step (the 101st) uses stage 1 — AgentGym-RL's scheduler would be on stage 2 after its next step() call.
    const { horizons } = run(stepwise, restored, 1);
    expect(horizons[0]).toBe(20);
    expect(completeStep(stepwise, restored).stage).toBe(1);
  });

  it('gives the same horizons for N steps + save/restore + N steps as for 2N steps straight', () => {
    for (const n of [1, 50, 99, 100, 101, 150]) {
      const straight = run(stepwise, initialHorizonState(), 2 * n);
      const first = run(stepwise, initialHorizonState(), n);
      const second = run(stepwise, restoreHorizonState(stepwise, JSON.parse(JSON.stringify(first.state))), n);
      expect([...first.horizons, ...second.horizons]).toEqual(straight.horizons);
      expect(second.state).toEqual(straight.state);
    }
  });

  it('derives the stage from completed steps when a checkpoint disagrees', () => {
    expect(restoreHorizonState(stepwise, { stage: 2, completedSteps: 100 })).toEqual({ stage: 1, completedSteps: 100 });
    expect(stageAt(stepwise, 10_000)).toBe(2);
  });

  it('names the field at fault in a malformed schedule', () => {
    expect(() => validateHorizonSchedule({ schedule: 'stepwise', horizons: [5, 0], every: 10 })).toThrow(/horizon\.horizons\.1/);
    expect(() => validateHorizonSchedule({ schedule: 'stepwise', horizons: [], every: 10 })).toThrow(InvalidConfigError);
    expect(() => validateHorizonSchedule({ schedule: 'stepwise', horizons: [5], every: 0 })).toThrow(/horizon\.every/);
    expect(() => validateHorizonSchedule({ schedule: 'fixed', horizon: 2.5 })).toThrow(/horizon\.horizon/);
    expect(() => restoreHorizonState(stepwise, { stage: 0, completedSteps: -1 })).toThrow(/completedSteps/);
  });
});

describe('linear horizon schedule', () => {
  const linear: HorizonSchedule = { schedule: 'linear', start: 4, step: 3, every: 10, max: 12 };

  it('adds `step` turns every `every` steps and holds `max` (the last rung is capped)', () => {
    const { horizons } = run(linear, initialHorizonState(), 45);
    // stages: 4 (steps 0-9), 7 (10-19), 10 (20-29), 12 (30+: 13 capped at 12)
    expect([horizons[0], horizons[9], horizons[10], horizons[19], horizons[20], horizons[29], horizons[30], horizons[44]]).toEqual([4, 4, 7, 7, 10, 10, 12, 12]);
    expect(stageAt(linear, 1000)).toBe(3);
  });

  it('resumes at and around every stage boundary exactly like an uninterrupted run', () => {
    for (const n of [9, 10, 11, 19, 20, 21, 29, 30, 31]) {
      const straight = run(linear, initialHorizonState(), n + 12);
      const first = run(linear, initialHorizonState(), n);
      const resumed = restoreHorizonState(linear, JSON.parse(JSON.stringify(first.state)));
      const second = run(linear, resumed, 12);
      expect([...first.horizons, ...second.horizons]).toEqual(straight.horizons);
    }
  });

  it('rejects max below start, naming the field', () => {
    expect(() => validateHorizonSchedule({ schedule: 'linear', start: 8, step: 2, every: 5, max: 6 })).toThrow(/horizon\.max/);
    expect(() => validateHorizonSchedule({ schedule: 'linear', start: 4, step: 0, every: 5, max: 6 })).toThrow(/horizon\.step/);
  });
});

describe('stepwise resume around boundaries (every = 3)', () => {
  it('matches the straight run when resumed one step before, at, and one step after each boundary', () => {
    const s: HorizonSchedule = { schedule: 'stepwise', horizons: [2, 4, 6], every: 3 };
    for (const n of [2, 3, 4, 5, 6, 7]) {
      const straight = run(s, initialHorizonState(), n + 5);
      const first = run(s, initialHorizonState(), n);
      const second = run(s, restoreHorizonState(s, JSON.parse(JSON.stringify(first.state))), 5);
      expect([...first.horizons, ...second.horizons]).toEqual(straight.horizons);
    }
    // Hand-computed: steps 0-2 -> 2, 3-5 -> 4, 6+ -> 6.
    expect(run(s, initialHorizonState(), 8).horizons).toEqual([2, 2, 2, 4, 4, 4, 6, 6]);
  });
});
