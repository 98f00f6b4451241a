import { createActor, initialTransition, transition } from 'xstate';
import { describe, expect, it } from 'vitest';
import { currentHorizon, horizonMachine, persistHorizon } from '../../src/actors/horizon.js';
import type { HorizonSchedule } from '../../src/actors/horizon-schedule.js';
import { emittedBy } from './fakes.js';

const schedule: HorizonSchedule = { schedule: 'stepwise', horizons: [5, 8, 10], every: 2 };

describe('horizon actor', () => {
  it('starts holding the first stage of a stepwise schedule', () => {
    const [snapshot, actions] = initialTransition(horizonMachine, { schedule });
    expect(snapshot.value).toEqual({ stepwise: 'holding' });
    expect(currentHorizon(snapshot)).toBe(5);
    expect(actions).toEqual([]);
  });

  it('starts in fixed for a fixed schedule', () => {
    const [snapshot] = initialTransition(horizonMachine, { schedule: { schedule: 'fixed', horizon: 12 } });
    expect(snapshot.value).toBe('fixed');
    expect(currentHorizon(snapshot)).toBe(12);
  });

  it('emits STAGE_CHANGED when a step completion crosses a stage boundary', () => {
    const [s0] = initialTransition(horizonMachine, { schedule });
    const [s1, a1] = transition(horizonMachine, s0, { type: 'STEP_COMPLETED', step: 0 });
    expect(s1.context.completedSteps).toBe(1);
    expect(emittedBy(a1)).toEqual([]);
    const [s2, a2] = transition(horizonMachine, s1, { type: 'STEP_COMPLETED', step: 1 });
    expect(currentHorizon(s2)).toBe(8);
    const emitted = emittedBy(a2);
    expect(emitted).toEqual([{ type: 'STAGE_CHANGED', from: 0, to: 1, horizon: 8, reason: '2 steps completed (stage every 2)', step: 1 }]);
  });

  it('enters final at the last stage and holds its horizon', () => {
    let [s] = initialTransition(horizonMachine, { schedule });
    for (let step = 0; step < 10; step++) [s] = transition(horizonMachine, s, { type: 'STEP_COMPLETED', step });
    expect(s.value).toEqual({ stepwise: 'final' });
    expect(currentHorizon(s)).toBe(10);
    expect(s.context.completedSteps).toBe(10);
  });

  it('ignores a step completion delivered twice', () => {
    const [s0] = initialTransition(horizonMachine, { schedule });
    const [s1] = transition(horizonMachine, s0, { type: 'STEP_COMPLETED', step: 0 });
    const [s2, actions] = transition(horizonMachine, s1, { type: 'STEP_COMPLETED', step: 0 });
    expect(s2.context.completedSteps).toBe(1);
    expect(actions).toEqual([]);
  });

  it('restored at a stage boundary, uses that stage for the next step (not the one after)', () => {
    const every100: HorizonSchedule = { schedule: 'stepwise', horizons: [10, 20, 30], every: 100 };
    const first = createActor(horizonMachine, { input: { schedule: every100 } }).start();
    for (let step = 0; step < 100; step++) first.send({ type: 'STEP_COMPLETED', step });
    const saved = JSON.parse(JSON.stringify(persistHorizon(first.getSnapshot())));
    first.stop();
    expect(saved).toEqual({ stage: 1, completedSteps: 100 });

    const resumed = createActor(horizonMachine, { input: { schedule: every100, restore: saved } }).start();
    const changes: unknown[] = [];
    resumed.on('STAGE_CHANGED', (e) => changes.push(e));
    expect(currentHorizon(resumed.getSnapshot())).toBe(20);
    resumed.send({ type: 'STEP_COMPLETED', step: 100 });
    expect(resumed.getSnapshot().context.stage).toBe(1);
    expect(changes).toEqual([]);
    for (let step = 101; step < 200; step++) resumed.send({ type: 'STEP_COMPLETED', step });
    expect(changes).toEqual([{ type: 'STAGE_CHANGED', from: 1, to: 2, horizon: 30, reason: '200 steps completed (stage every 100)', step: 199 }]);
  });

  it('resumes from an xstate persisted snapshot with context intact', () => {
    const actor = createActor(horizonMachine, { input: { schedule } }).start();
    actor.send({ type: 'STEP_COMPLETED', step: 0 });
    actor.send({ type: 'STEP_COMPLETED', step: 1 });
    const persisted = JSON.parse(JSON.stringify(actor.getPersistedSnapshot()));
    const restored = createActor(horizonMachine, { snapshot: persisted, input: { schedule } }).start();
    expect(currentHorizon(restored.getSnapshot())).toBe(8);
    expect(restored.getSnapshot().context.completedSteps).toBe(2);
  });
});

describe('horizon actor: linear and adaptive', () => {
  it('walks linear.holding to linear.final, emitting each rung', () => {
    const linear: HorizonSchedule = { schedule: 'linear', start: 4, step: 3, every: 2, max: 9 };
    const actor = createActor(horizonMachine, { input: { schedule: linear } }).start();
    const changes: { to: number; horizon: number }[] = [];
    actor.on('STAGE_CHANGED', (e) => changes.push({ to: e.to, horizon: e.horizon }));
    expect(actor.getSnapshot().value).toEqual({ linear: 'holding' });
    const horizons: number[] = [];
    for (let step = 0; step < 6; step++) {
      horizons.push(currentHorizon(actor.getSnapshot()));
      actor.send({ type: 'STEP_COMPLETED', step });
    }
    // 4, 4, 7, 7, 9 (capped at max), 9
    expect(horizons).toEqual([4, 4, 7, 7, 9, 9]);
    expect(changes).toEqual([
      { to: 1, horizon: 7 },
      { to: 2, horizon: 9 },
    ]);
    expect(actor.getSnapshot().value).toEqual({ linear: 'final' });
  });

  it('adaptive: cools down, watches, raises on the metrics sent with STEP_COMPLETED, and persists its windows', () => {
    const adaptive: HorizonSchedule = { schedule: 'adaptive', start: 3, step: 3, max: 9, window: 2, cooldown: 2, successAbove: 0.8, minDelta: 0.02 };
    const actor = createActor(horizonMachine, { input: { schedule: adaptive } }).start();
    const reasons: string[] = [];
    actor.on('STAGE_CHANGED', (e) => reasons.push(`${e.from}->${e.to} @${e.step}: ${e.reason}`));
    expect(actor.getSnapshot().value).toEqual({ adaptive: 'cooling' });
    actor.send({ type: 'STEP_COMPLETED', step: 0, metrics: { 'rollout/successRate': 0.9 } });
    expect(actor.getSnapshot().value).toEqual({ adaptive: 'cooling' });
    actor.send({ type: 'STEP_COMPLETED', step: 1, metrics: { 'rollout/successRate': 0.7 } });
    // mean(0.9, 0.7) = 0.8 >= 0.8: raise at the second step, windows restart, cooldown again.
    expect(reasons).toEqual(['0->1 @1: mastered: rolling success 0.800 >= 0.8 over 2 steps']);
    expect(currentHorizon(actor.getSnapshot())).toBe(6);
    expect(actor.getSnapshot().value).toEqual({ adaptive: 'cooling' });
    actor.send({ type: 'STEP_COMPLETED', step: 2, metrics: { 'rollout/successRate': 0.5 } });
    const saved = JSON.parse(JSON.stringify(persistHorizon(actor.getSnapshot())));
    expect(saved).toEqual({
      stage: 1,
      completedSteps: 3,
      adaptive: { sinceChange: 1, windows: { success: [0.5], truncation: [], entropy: [], rewardStd: [] }, bestSuccess: null, sinceBest: 1 },
    });
    const resumed = createActor(horizonMachine, { input: { schedule: adaptive, restore: saved } }).start();
    resumed.send({ type: 'STEP_COMPLETED', step: 3, metrics: { 'rollout/successRate': 0.6 } });
    expect(resumed.getSnapshot().value).toEqual({ adaptive: 'watching' });
    expect(currentHorizon(resumed.getSnapshot())).toBe(6);
  });
});
