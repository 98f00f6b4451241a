import { describe, expect, it } from 'vitest';
import { type AdaptiveSchedule, adaptiveStep, initialAdaptiveState, restoreAdaptiveState } from '../../src/actors/horizon-adaptive.js';
import { type HorizonState, advanceHorizon, initialHorizonState, restoreHorizonState, validateHorizonSchedule } from '../../src/actors/horizon-schedule.js';

const base: AdaptiveSchedule = { schedule: 'adaptive', start: 3, step: 3, max: 9, window: 3, cooldown: 3, minDelta: 0.02 };

type Signals = Record<string, number>;
const succ = (...xs: number[]): Signals[] => xs.map((x) => ({ 'rollout/successRate': x }));

/** Feeds signals step by step; returns the horizon in force at each step and the change log. */
function replay(schedule: AdaptiveSchedule, signals: readonly Signals[], from: HorizonState = initialHorizonState(schedule)) {
  let state = from;
  const horizons: number[] = [];
  const changes: string[] = [];
  for (const s of signals) {
    horizons.push(Math.min(schedule.start + state.stage * schedule.step, schedule.max));
    const r = advanceHorizon(schedule, state, s);
    if (r.change) changes.push(`@${state.completedSteps} ${r.change.from}->${r.change.to} ${r.change.reason}`);
    state = r.state;
  }
  return { state, horizons, changes };
}

describe('adaptive horizon rules', () => {
  it('raises on mastery once the window is full, then restarts its window', () => {
    const s: AdaptiveSchedule = { ...base, successAbove: 0.8 };
    // steps 0-2: window (0.5, 1, 1) mean 0.833 -> raise after step 2; then three new steps (mean 0.7) do not raise.
    const { horizons, changes } = replay(s, succ(0.5, 1, 1, 0.9, 0.6, 0.6, 0.6));
    expect(changes).toEqual(['@2 0->1 mastered: rolling success 0.833 >= 0.8 over 3 steps']);
    expect(horizons).toEqual([3, 3, 3, 6, 6, 6, 6]);
  });

  it('raises when the horizon binds (rolling truncation rate above threshold)', () => {
    const s: AdaptiveSchedule = { ...base, truncationAbove: 0.5 };
    const sig = [0.4, 0.6, 0.7].map((t) => ({ 'rollout/successRate': 0.1, 'rollout/truncationRate': t }));
    const { changes } = replay(s, sig);
    // mean(0.4, 0.6, 0.7) = 0.5667 >= 0.5
    expect(changes).toEqual(['@2 0->1 binding: rolling truncation rate 0.567 >= 0.5 over 3 steps']);
  });

  it('raises on a plateau: no rolling-success gain above minDelta for `patience` steps', () => {
    const s: AdaptiveSchedule = { ...base, window: 2, cooldown: 0, patience: 3, minDelta: 0.05 };
    // rolling means: -, 0.30, 0.32, 0.33, 0.33 — best set at step 1 (0.30); +0.02, +0.03 stay within 0.05.
    const { changes } = replay(s, succ(0.3, 0.3, 0.34, 0.32, 0.34, 0.5));
    expect(changes).toEqual(['@4 0->1 plateau: rolling success 0.330 not above best 0.300 + 0.05 for 3 steps']);
  });

  it('respects the cooldown even when the signal fires earlier', () => {
    const s: AdaptiveSchedule = { ...base, window: 1, cooldown: 4, successAbove: 0.5 };
    const { changes } = replay(s, succ(1, 1, 1, 1, 1, 1, 1, 1));
    // window 1 is full at once, but a change may only happen on the 4th step since the last one.
    expect(changes.map((c) => c.slice(0, 7))).toEqual(['@3 0->1', '@7 1->2']);
  });

  it('never raises above max', () => {
    const s: AdaptiveSchedule = { ...base, start: 3, step: 4, max: 9, window: 1, cooldown: 1, successAbove: 0.5 };
    const { horizons, state } = replay(s, succ(1, 1, 1, 1, 1, 1));
    // 3 -> 7 -> 9 (13 capped to max), then held.
    expect(horizons).toEqual([3, 7, 9, 9, 9, 9]);
    expect(state.stage).toBe(2);
  });

  it('lowers on entropy collapse, and not below start', () => {
    const s: AdaptiveSchedule = { ...base, window: 2, cooldown: 2, successAbove: 0.9, lower: { entropyBelow: 0.1 } };
    const sig = (success: number, entropy: number) => ({ 'rollout/successRate': success, 'rollout/actionEntropy': entropy });
    const { changes, state } = replay(s, [sig(1, 1), sig(1, 1), sig(0.2, 0.05), sig(0.2, 0.05), sig(0.2, 0.01), sig(0.2, 0.01)]);
    expect(changes).toEqual([
      '@1 0->1 mastered: rolling success 1.000 >= 0.9 over 2 steps',
      '@3 1->0 entropy collapse: rolling turn entropy 0.050 < 0.1 over 2 steps',
    ]);
    // At stage 0 a collapse cannot lower further.
    expect(state.stage).toBe(0);
  });

  it('lowers on reward-variance collapse only while most episodes fail', () => {
    const s: AdaptiveSchedule = { ...base, start: 3, window: 2, cooldown: 0, successAbove: 0.95, lower: { rewardStdBelow: 0.05 } };
    const sig = (success: number, std: number) => ({ 'rollout/successRate': success, 'rollout/rewardStd': std });
    const fromStage1: HorizonState = { stage: 1, completedSteps: 10, adaptive: initialAdaptiveState() };
    // Every group solved (success 0.9, std 0): not a collapse.
    expect(replay(s, [sig(0.9, 0), sig(0.9, 0)], fromStage1).changes).toEqual([]);
    // Every group failing alike: collapse, lower.
    expect(replay(s, [sig(0, 0), sig(0.1, 0.02)], fromStage1).changes).toEqual([
      '@11 1->0 reward-variance collapse: rolling reward std 0.010 < 0.05 with rolling success 0.050 < 0.5',
    ]);
  });

  it('replays deterministically from a persisted state (save mid-window, restore, same decisions)', () => {
    const s: AdaptiveSchedule = { ...base, window: 3, cooldown: 2, successAbove: 0.75, truncationAbove: 0.6, patience: 4, lower: { entropyBelow: 0.2 } };
    const signals: Signals[] = Array.from({ length: 40 }, (_, i) => ({
      'rollout/successRate': (Math.sin(i * 0.7) + 1) / 2,
      'rollout/truncationRate': (Math.cos(i * 0.3) + 1) / 2,
      'rollout/actionEntropy': 0.1 + (i % 7) * 0.1,
    }));
    const straight = replay(s, signals);
    expect(straight.changes.length).toBeGreaterThanOrEqual(2);
    for (const cut of [1, 5, 13, 22, 31]) {
      const first = replay(s, signals.slice(0, cut));
      const restored = restoreHorizonState(s, JSON.parse(JSON.stringify(first.state)));
      const second = replay(s, signals.slice(cut), restored);
      expect([...first.horizons, ...second.horizons]).toEqual(straight.horizons);
      expect(second.state).toEqual(straight.state);
    }
  });

  it('ignores missing or NaN signals instead of poisoning the windows', () => {
    const s: AdaptiveSchedule = { ...base, window: 2, cooldown: 0, successAbove: 0.5 };
    const r1 = adaptiveStep(s, 0, initialAdaptiveState(), { 'rollout/successRate': Number.NaN });
    expect(r1.state.windows.success).toEqual([]);
    const r2 = adaptiveStep(s, 0, r1.state, {});
    expect(r2.stage).toBe(0);
  });

  it('restores old checkpoints (no adaptive state) with empty windows, and clamps a stage beyond the ladder', () => {
    const s: AdaptiveSchedule = { ...base, successAbove: 0.8 };
    expect(restoreHorizonState(s, { stage: 1, completedSteps: 40 })).toEqual({ stage: 1, completedSteps: 40, adaptive: initialAdaptiveState() });
    expect(restoreHorizonState(s, { stage: 9, completedSteps: 40 }).stage).toBe(2);
    expect(restoreAdaptiveState({ windows: { success: [0.5, 'x'] }, sinceChange: -1 })).toEqual({ ...initialAdaptiveState(), windows: { success: [0.5], truncation: [], entropy: [], rewardStd: [] } });
  });

  it('names the field at fault', () => {
    expect(() => validateHorizonSchedule({ ...base })).toThrow(/horizon\.successAbove.*at least one raise rule/);
    expect(() => validateHorizonSchedule({ ...base, successAbove: 1.5 })).toThrow(/horizon\.successAbove/);
    expect(() => validateHorizonSchedule({ ...base, successAbove: 0.5, max: 2 })).toThrow(/horizon\.max/);
    expect(() => validateHorizonSchedule({ ...base, successAbove: 0.5, lower: { entropyBelow: -1 } })).toThrow(/horizon\.lower\.entropyBelow/);
  });
});
