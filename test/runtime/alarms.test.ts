/**
 * Collapse alarms: every detector fires on a constructed run that should trigger it and stays
 * silent on a near miss; trajectory-level signals (reward variance, echo trap) are built from
 * constructed trajectories through the real rollout metrics. Then the monitor's cooldown and
 * persistence, and the run-level actions (stop, lowerHorizon) with injected effects.
 */
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/core/config.js';
import type { AlarmsConfig } from '../../src/core/config/alarm-schema.js';
import type { Outcome, Trajectory } from '../../src/core/types.js';
import { type AlarmState, initialAlarmState, observeStep, restoreAlarmState } from '../../src/runtime/alarms/monitor.js';
import { RunAlarms, restorePersistedAlarms } from '../../src/runtime/alarms/run-alarms.js';
import { rolloutMetrics } from '../../src/runtime/rollout-metrics.js';
import { plainTurn } from '../helpers/turns.js';

const defaults = (): AlarmsConfig => parseConfig({}).alarms;
/** Only `name` enabled, with overrides; cooldown 0 so every step can fire. */
function only(name: keyof Omit<AlarmsConfig, 'cooldown' | 'lowerHorizonBy'>, overrides: Record<string, unknown> = {}): AlarmsConfig {
  const config = defaults();
  for (const key of ['entropyCollapse', 'rewardVariance', 'echoTrap', 'gradNormSpike', 'klBlowUp'] as const) config[key].enabled = key === name;
  Object.assign(config[name], overrides);
  config.cooldown = 0;
  return config;
}

/** Runs the monitor over per-step metrics; returns the steps each alarm fired at. */
function firings(config: AlarmsConfig, steps: Record<string, number>[]): { steps: number[]; messages: string[]; state: AlarmState } {
  let state = initialAlarmState();
  const fired: number[] = [];
  const messages: string[] = [];
  steps.forEach((metrics, i) => {
    const out = observeStep(state, i + 1, metrics, config);
    state = out.state;
    for (const a of out.alarms) {
      fired.push(a.step);
      messages.push(a.message);
    }
  });
  return { steps: fired, messages, state };
}

const turn = plainTurn;
const episode = (group: string, i: number, actions: string[], outcome: Outcome): Trajectory => ({
  trajectoryId: `${group}/${i}`,
  taskId: 'babyai_1',
  groupId: group,
  step: 0,
  turns: actions.map((a, k) => turn(k, a)),
  reward: outcome === 'success' ? 1 : 0,
  outcome,
  horizon: 6,
  finalObservationText: '',
});
/** One step: 4 groups of 4 samples, built by `make(group, sample)`. */
const step = (make: (g: number, i: number) => { actions: string[]; outcome: Outcome }): Record<string, number> =>
  rolloutMetrics(
    Array.from({ length: 16 }, (_, n) => {
      const { actions, outcome } = make(Math.floor(n / 4), n % 4);
      return episode(`g${Math.floor(n / 4)}`, n % 4, actions, outcome);
    }),
    1,
  );
const MOVES = ['turn left', 'turn right', 'move forward', 'go to red ball 1', 'pickup key 1'];

describe('collapse detectors', () => {
  it('entropy collapse: fires when the rolling entropy falls below 10% of the start, not at 30%', () => {
    const collapsing = [1.6, 1.6, 1.6, 1.0, 0.5, 0.1, 0.05, 0.05].map((h) => ({ 'rollout/tokenEntropy': h }));
    const out = firings(only('entropyCollapse'), collapsing);
    // 3-step means; start 1.6, threshold 0.16: step 7 (0.5 + 0.1 + 0.05) / 3 = 0.217 is not below, step 8 (0.1 + 0.05 + 0.05) / 3 = 0.067 is.
    expect(out.steps).toEqual([8]);
    expect(out.messages[0]).toMatch(/entropy collapse: rollout\/tokenEntropy 0\.067 nats \(3-step mean\) < 0\.160/);
    const cooling = [1.6, 1.6, 1.6, 1.0, 0.6, 0.5, 0.5, 0.5].map((h) => ({ 'rollout/tokenEntropy': h }));
    expect(firings(only('entropyCollapse'), cooling).steps).toEqual([]);
    // An absolute floor fires even without a large relative drop.
    // ... step 6: (1.0 + 0.6 + 0.5) / 3 = 0.7; step 7: 0.533 < 0.6.
    expect(firings(only('entropyCollapse', { below: 0.6 }), cooling).steps).toEqual([7, 8]);
  });

  it('reward-variance collapse: fires on groups that all fail alike, not on solved or mixed groups', () => {
    const stuck = step((_, i) => ({ actions: [MOVES[i] as string], outcome: 'failure' }));
    const solved = step((_, i) => ({ actions: [MOVES[i] as string], outcome: 'success' }));
    const mixed = step((g, i) => ({ actions: [MOVES[i] as string], outcome: (g + i) % 2 === 0 ? 'success' : 'failure' }));
    expect(stuck['rollout/zeroVarianceGroups']).toBe(1);
    expect(firings(only('rewardVariance'), [mixed, stuck, stuck, stuck]).steps).toEqual([4]);
    expect(firings(only('rewardVariance'), [solved, solved, solved, solved]).steps).toEqual([]);
    expect(firings(only('rewardVariance', { ignoreSolved: false }), [solved, solved, solved]).steps).toEqual([3]);
    expect(firings(only('rewardVariance'), [mixed, mixed, mixed, mixed]).steps).toEqual([]);
  });

  it('echo trap: fires when samples converge on one action sequence while their scores stop differing', () => {
    // Early: diverse actions, mixed outcomes. Late: every sample of a group does the same and fails alike.
    const diverse = step((g, i) => ({ actions: [MOVES[i] as string, MOVES[(i + g) % 5] as string, MOVES[(2 * i + 1) % 5] as string], outcome: i % 2 === 0 ? 'success' : 'failure' }));
    const echo = step((g) => ({ actions: ['turn left', MOVES[g] as string, 'turn left'], outcome: 'failure' }));
    expect(echo['rollout/groupSimilarity']).toBe(1);
    expect(diverse['rollout/groupSimilarity']).toBeLessThan(0.5);
    const trapped = [...Array(5).fill(diverse), ...Array(5).fill(echo)];
    expect(firings(only('echoTrap'), trapped).steps).toEqual([10]);
    // Near miss: the samples converge but keep succeeding and failing differently (spread does not fall).
    const alikeButSpread = step((g, i) => ({ actions: ['turn left', MOVES[g] as string, 'turn left'], outcome: i % 2 === 0 ? 'success' : 'failure' }));
    expect(firings(only('echoTrap'), [...Array(5).fill(diverse), ...Array(5).fill(alikeButSpread)]).steps).toEqual([]);
    // Near miss: always alike (no rise).
    expect(firings(only('echoTrap'), Array(10).fill(echo)).steps).toEqual([]);
  });

  it('gradient-norm spike: fires at 5x the median of the last 10 norms, not on noise or before 10 are logged', () => {
    const calm = [1, 1.2, 0.8, 1.1, 0.9, 1, 1.3, 0.7, 1, 1.1];
    expect(firings(only('gradNormSpike'), [...calm, 6, 1].map((g) => ({ 'optim/gradNorm': g }))).steps).toEqual([11]);
    expect(firings(only('gradNormSpike'), [...calm, 4.9, 2].map((g) => ({ 'optim/gradNorm': g }))).steps).toEqual([]);
    expect(firings(only('gradNormSpike'), [1, 1, 50].map((g) => ({ 'optim/gradNorm': g }))).steps).toEqual([]);
  });

  it('KL blow-up: fires when approxKl or klRef exceed their thresholds, silent below', () => {
    const run = [{ 'loss/approxKl': 0.02, 'loss/klRef': 0.1 }, { 'loss/approxKl': 0.3, 'loss/klRef': 0.1 }, { 'loss/approxKl': 0.01, 'loss/klRef': 0.9 }, { 'loss/approxKl': 0.05, 'loss/klRef': 0.4 }];
    const out = firings(only('klBlowUp'), run);
    expect(out.steps).toEqual([2, 3]);
    expect(out.messages[0]).toMatch(/loss\/approxKl 0\.300 > 0\.1/);
    expect(out.messages[1]).toMatch(/loss\/klRef 0\.900 > 0\.5/);
    expect(firings(only('klBlowUp', { klRefAbove: null }), run).steps).toEqual([2]);
  });

  it('fires each alarm at most once per cooldown, and the state survives a JSON round trip', () => {
    const config = { ...only('klBlowUp'), cooldown: 3 };
    const hot = { 'loss/approxKl': 1 };
    expect(firings(config, Array(7).fill(hot)).steps).toEqual([1, 4, 7]);
    const half = firings(config, Array(2).fill(hot)).state;
    const restored = restoreAlarmState(JSON.parse(JSON.stringify(half)), 'ckpt');
    expect(observeStep(restored, 3, hot, config).alarms).toHaveLength(0); // still cooling down from step 1
    expect(observeStep(restored, 4, hot, config).alarms).toHaveLength(1);
    expect(() => restoreAlarmState({ history: 'x' }, 'ckpt')).toThrow(/state\.alarms\.monitor\.history/);
  });

  it('keeps every default detector silent on a healthy run', () => {
    const healthy = Array.from({ length: 30 }, (_, i) => ({
      ...step((g, k) => ({ actions: [MOVES[(k + i) % 5] as string, MOVES[(g + k) % 5] as string], outcome: (g + k + i) % 3 === 0 ? 'success' : 'failure' })),
      'rollout/tokenEntropy': 1.5 - i * 0.02,
      'optim/gradNorm': 1 + 0.1 * Math.sin(i),
      'loss/approxKl': 0.01,
      'loss/klRef': 0,
    }));
    expect(firings(defaults(), healthy).steps).toEqual([]);
  });
});

describe('RunAlarms actions', () => {
  const recorder = () => {
    const events: { step: number; kind: string; message: string; data: Readonly<Record<string, unknown>> }[] = [];
    const stops: string[] = [];
    const reports: string[] = [];
    return {
      events,
      stops,
      reports,
      effects: {
        logEvent: (step: number, kind: string, message: string, data: Readonly<Record<string, unknown>>) => events.push({ step, kind, message, data }),
        report: (_: unknown, consequence: string) => reports.push(consequence),
        stop: (reason: string) => stops.push(reason),
      },
    };
  };

  it('stores an alarm/<name> event naming the metric, value and threshold; stop asks the run to stop', () => {
    const r = recorder();
    const alarms = new RunAlarms({ ...only('klBlowUp'), klBlowUp: { ...only('klBlowUp').klBlowUp, action: 'stop' } }, r.effects);
    alarms.observe(5, { 'loss/approxKl': 0.5 }, 8);
    expect(r.events).toHaveLength(1);
    expect(r.events[0]).toMatchObject({ step: 5, kind: 'alarm/klBlowUp', data: { alarm: 'klBlowUp', metric: 'loss/approxKl', value: 0.5, threshold: 0.1, action: 'stop' } });
    expect(r.stops).toHaveLength(1);
    expect(r.reports[0]).toMatch(/stopping the run/);
    expect(alarms.capHorizon(8)).toBe(8);
  });

  it('lowerHorizon caps the horizon below the one in force, never under 1, and the cap is persisted', () => {
    const r = recorder();
    const config = only('klBlowUp', { action: 'lowerHorizon' });
    config.lowerHorizonBy = 3;
    const alarms = new RunAlarms(config, r.effects);
    alarms.observe(1, { 'loss/approxKl': 0.5 }, 8);
    expect(alarms.capHorizon(8)).toBe(5);
    expect(alarms.capHorizon(4)).toBe(4); // a lower scheduled horizon stays
    alarms.observe(2, { 'loss/approxKl': 0.5 }, 5);
    alarms.observe(3, { 'loss/approxKl': 0.5 }, 2);
    expect(alarms.capHorizon(20)).toBe(1);
    expect(r.events.map((e) => e.data.consequence)).toEqual(['horizon capped 8 -> 5 for the rest of the run', 'horizon capped 5 -> 2 for the rest of the run', 'horizon capped 2 -> 1 for the rest of the run']);
    const resumed = new RunAlarms(config, r.effects, restorePersistedAlarms(JSON.parse(JSON.stringify(alarms.persist())), 'ckpt'));
    expect(resumed.capHorizon(20)).toBe(1);
    expect(() => restorePersistedAlarms({ monitor: initialAlarmState(), horizonCap: 0 }, 'ckpt')).toThrow(/horizonCap/);
    expect(restorePersistedAlarms(undefined, 'ckpt')).toBeUndefined();
  });
});
