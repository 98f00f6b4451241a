/**
 * The adaptive horizon schedule's rules, pure: after each training step, look at that step's
 * signals and decide whether the current horizon is mastered or binding (raise), or whether the
 * policy collapsed (lower). AgentGym-RL only has a fixed step schedule; this raises when the data
 * says so instead of at a fixed step.
 *
 * Signals (rolling means over the last `window` steps *in the current stage*; the windows restart
 * at every change, since they describe the horizon in force):
 * - mastery: rollout success rate >= `successAbove`;
 * - binding: rollout truncation rate >= `truncationAbove` (episodes keep hitting the cap);
 * - plateau: the rolling success has not beaten its best in this stage by `minDelta` for `patience` steps;
 * - collapse (only with `lower`): per-turn entropy below `lower.entropyBelow`, or reward std below
 *   `lower.rewardStdBelow` while the rolling success is under 0.5 (every group failing alike, not
 *   every group solved).
 * A change is considered only once `cooldown` steps have passed since the last one and the window is
 * full; collapse is checked first, then mastery, binding and plateau. Everything the rules need is in
 * {@link AdaptiveState}, which is JSON-safe and saved in every checkpoint, so replaying the same
 * signals from a restored state gives the same decisions.
 */
import { InvalidConfigError } from '../core/errors.js';

/** Metric names the rules read (see `src/core/metrics.ts`). */
export const ADAPTIVE_SIGNALS = {
  success: 'rollout/successRate',
  truncation: 'rollout/truncationRate',
  entropy: 'rollout/actionEntropy',
  rewardStd: 'rollout/rewardStd',
} as const;

type SignalName = keyof typeof ADAPTIVE_SIGNALS;

/** The adaptive schedule's parameters (validated by {@link validateAdaptiveSchedule}). */
export interface AdaptiveSchedule {
  readonly schedule: 'adaptive';
  /** Horizon of stage 0 (and the floor when lowering). */
  readonly start: number;
  /** Turns added (or removed) per change. */
  readonly step: number;
  /** Largest horizon. */
  readonly max: number;
  /** Steps in the rolling windows. */
  readonly window: number;
  /** Steps after a change before another change is considered. */
  readonly cooldown: number;
  /** Raise when the rolling success rate reaches this (mastered). */
  readonly successAbove?: number | undefined;
  /** Raise when the rolling truncation rate reaches this (the horizon binds). */
  readonly truncationAbove?: number | undefined;
  /** Raise when the rolling success has not improved by `minDelta` for this many steps (plateau). */
  readonly patience?: number | undefined;
  /** Smallest improvement of the rolling success that resets the plateau counter. */
  readonly minDelta: number;
  /** Lower one stage when a collapse signal fires; absent: never lower. */
  readonly lower?: { readonly entropyBelow?: number | undefined; readonly rewardStdBelow?: number | undefined } | undefined;
}

/** What the rules remember between steps (JSON-safe). */
export interface AdaptiveState {
  /** Steps completed since the last change (or the start). */
  readonly sinceChange: number;
  /** Last values of each signal in this stage, oldest first, at most `window` long. */
  readonly windows: { readonly [K in SignalName]: readonly number[] };
  /** Best rolling success seen in this stage; null before the window first filled. */
  readonly bestSuccess: number | null;
  /** Steps since `bestSuccess` last improved by `minDelta`. */
  readonly sinceBest: number;
}

/**
 * Empty windows, no history.
 * @example initialAdaptiveState().sinceChange // 0
 */
export function initialAdaptiveState(): AdaptiveState {
  return { sinceChange: 0, windows: { success: [], truncation: [], entropy: [], rewardStd: [] }, bestSuccess: null, sinceBest: 0 };
}

function finiteList(value: unknown): number[] {
  return Array.isArray(value) ? value.filter((v): v is number => typeof v === 'number' && Number.isFinite(v)) : [];
}

/**
 * A saved adaptive state, checked field by field; anything missing (an old checkpoint) starts empty.
 * @example restoreAdaptiveState(undefined) // initialAdaptiveState()
 */
export function restoreAdaptiveState(saved: unknown): AdaptiveState {
  if (saved === undefined || saved === null || typeof saved !== 'object') return initialAdaptiveState();
  const s = saved as Partial<Record<keyof AdaptiveState, unknown>>;
  const w = (s.windows ?? {}) as Partial<Record<SignalName, unknown>>;
  const nonNeg = (v: unknown): number => (typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : 0);
  return {
    sinceChange: nonNeg(s.sinceChange),
    windows: { success: finiteList(w.success), truncation: finiteList(w.truncation), entropy: finiteList(w.entropy), rewardStd: finiteList(w.rewardStd) },
    bestSuccess: typeof s.bestSuccess === 'number' && Number.isFinite(s.bestSuccess) ? s.bestSuccess : null,
    sinceBest: nonNeg(s.sinceBest),
  };
}

function requireRate(value: number | undefined, path: string): void {
  if (value !== undefined && !(value >= 0 && value <= 1)) throw new InvalidConfigError(path, `expected a rate in [0, 1], got ${value}`);
}

/**
 * Throws {@link InvalidConfigError} naming the field when the schedule is malformed.
 * @example validateAdaptiveSchedule({ schedule: 'adaptive', start: 3, step: 3, max: 12, window: 5, cooldown: 5, successAbove: 0.8, minDelta: 0.02 }, 'horizon');
 */
export function validateAdaptiveSchedule(s: AdaptiveSchedule, path: string): void {
  const posInt = (v: number, field: string) => {
    if (!(Number.isInteger(v) && v > 0)) throw new InvalidConfigError(`${path}.${field}`, `expected a positive integer, got ${v}`);
  };
  posInt(s.start, 'start');
  posInt(s.step, 'step');
  posInt(s.max, 'max');
  posInt(s.window, 'window');
  if (s.max < s.start) throw new InvalidConfigError(`${path}.max`, `must be at least start (${s.start}), got ${s.max}`);
  if (!(Number.isInteger(s.cooldown) && s.cooldown >= 0)) throw new InvalidConfigError(`${path}.cooldown`, `expected a non-negative integer, got ${s.cooldown}`);
  requireRate(s.successAbove, `${path}.successAbove`);
  requireRate(s.truncationAbove, `${path}.truncationAbove`);
  if (s.patience !== undefined) posInt(s.patience, 'patience');
  if (!(s.minDelta >= 0)) throw new InvalidConfigError(`${path}.minDelta`, `expected a non-negative number, got ${s.minDelta}`);
  if (s.successAbove === undefined && s.truncationAbove === undefined && s.patience === undefined) {
    throw new InvalidConfigError(`${path}.successAbove`, 'an adaptive schedule needs at least one raise rule: successAbove, truncationAbove or patience');
  }
  if (s.lower) {
    const { entropyBelow, rewardStdBelow } = s.lower;
    if (entropyBelow !== undefined && !(entropyBelow >= 0)) throw new InvalidConfigError(`${path}.lower.entropyBelow`, `expected a non-negative number, got ${entropyBelow}`);
    if (rewardStdBelow !== undefined && !(rewardStdBelow >= 0)) throw new InvalidConfigError(`${path}.lower.rewardStdBelow`, `expected a non-negative number, got ${rewardStdBelow}`);
  }
}

const mean = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
const fmt = (x: number): string => x.toFixed(3);

/**
 * One completed step: push the step's signals, then apply the rules.
 * @example
 * const r = adaptiveStep(schedule, 0, initialAdaptiveState(), { 'rollout/successRate': 1 });
 * r.stage; // 0 until the window is full and the cooldown passed
 */
export function adaptiveStep(
  schedule: AdaptiveSchedule,
  stage: number,
  state: AdaptiveState,
  signals: Readonly<Record<string, number>>,
): { stage: number; state: AdaptiveState; reason: string } {
  const windows = { ...state.windows };
  for (const key of Object.keys(ADAPTIVE_SIGNALS) as SignalName[]) {
    const value = signals[ADAPTIVE_SIGNALS[key]];
    if (typeof value === 'number' && Number.isFinite(value)) windows[key] = [...windows[key], value].slice(-schedule.window);
  }
  const full = (key: SignalName) => windows[key].length >= schedule.window;
  const success = full('success') ? mean(windows.success) : null;
  let bestSuccess = state.bestSuccess;
  let sinceBest = state.sinceBest + 1;
  if (success !== null && (bestSuccess === null || success > bestSuccess + schedule.minDelta)) {
    bestSuccess = success;
    sinceBest = 0;
  }
  const held: AdaptiveState = { sinceChange: state.sinceChange + 1, windows, bestSuccess, sinceBest };
  const lastStage = Math.ceil((schedule.max - schedule.start) / schedule.step);
  const change = (to: number, reason: string) => ({ stage: to, state: initialAdaptiveState(), reason });
  if (held.sinceChange < schedule.cooldown) return { stage, state: held, reason: '' };

  if (schedule.lower && stage > 0) {
    const { entropyBelow, rewardStdBelow } = schedule.lower;
    if (entropyBelow !== undefined && full('entropy') && mean(windows.entropy) < entropyBelow) {
      return change(stage - 1, `entropy collapse: rolling turn entropy ${fmt(mean(windows.entropy))} < ${entropyBelow} over ${schedule.window} steps`);
    }
    if (rewardStdBelow !== undefined && full('rewardStd') && success !== null && success < 0.5 && mean(windows.rewardStd) < rewardStdBelow) {
      return change(
        stage - 1,
        `reward-variance collapse: rolling reward std ${fmt(mean(windows.rewardStd))} < ${rewardStdBelow} with rolling success ${fmt(success)} < 0.5`,
      );
    }
  }
  if (stage >= lastStage) return { stage, state: held, reason: '' };
  if (schedule.successAbove !== undefined && success !== null && success >= schedule.successAbove) {
    return change(stage + 1, `mastered: rolling success ${fmt(success)} >= ${schedule.successAbove} over ${schedule.window} steps`);
  }
  if (schedule.truncationAbove !== undefined && full('truncation') && mean(windows.truncation) >= schedule.truncationAbove) {
    return change(stage + 1, `binding: rolling truncation rate ${fmt(mean(windows.truncation))} >= ${schedule.truncationAbove} over ${schedule.window} steps`);
  }
  if (schedule.patience !== undefined && success !== null && sinceBest >= schedule.patience) {
    return change(stage + 1, `plateau: rolling success ${fmt(success)} not above best ${fmt(bestSuccess ?? 0)} + ${schedule.minDelta} for ${sinceBest} steps`);
  }
  return { stage, state: held, reason: '' };
}
