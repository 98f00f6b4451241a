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
