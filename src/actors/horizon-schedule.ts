/**
 * ScalingInter-RL horizon schedules as pure functions (no xstate, no I/O).
 *
 * Where from: AgentGym-RL's `StepRoundsScheduler` (`fixed` and `scaling_inter_stepwise`, in its
 * `agent_trainer/ppo/ray_trainer.py`). Unlike the original, the stage of a step-driven
 * schedule (`fixed`, `stepwise`, `linear`) is *derived* from the number of completed training
 * steps, never incremented separately: the original keeps a counter that lags the trainer's by one,
 * so a run resumed from a checkpoint saved exactly at a stage boundary advances one stage early.
 * Here `stageAt(schedule, completedSteps)` is the single source of truth, so "N steps, save,
 * restore, N steps" equals "2N steps straight".
 *
 * The `adaptive` schedule depends on what training saw, so its stage cannot be derived from the
 * step count: its whole decision state (stage, signal windows, cooldown, plateau counters) is part
 * of {@link HorizonState}, and the rules live in `horizon-adaptive.ts`.
 */
import { InvalidConfigError } from '../core/errors.js';
import {
  type AdaptiveSchedule,
  type AdaptiveState,
  adaptiveStep,
  initialAdaptiveState,
  restoreAdaptiveState,
  validateAdaptiveSchedule,
} from './horizon-adaptive.js';

export type { AdaptiveSchedule, AdaptiveState } from './horizon-adaptive.js';

/** How the horizon (max agent turns per episode) evolves with training. */
export type HorizonSchedule =
  | {
      readonly schedule: 'fixed';
      /** Max agent turns per episode, for the whole run. */
      readonly horizon: number;
    }
  | {
      readonly schedule: 'stepwise';
      /** Horizon of each stage, in order; the last one is held once reached. */
      readonly horizons: readonly number[];
      /** Completed training steps per stage: after `every` completed steps the stage advances. */
      readonly every: number;
    }
  | {
      readonly schedule: 'linear';
      /** Horizon of stage 0. */
      readonly start: number;
      /** Turns added per stage. */
      readonly step: number;
      /** Completed training steps per stage. */
      readonly every: number;
      /** Largest horizon; the stage that reaches it is the last. */
      readonly max: number;
    }
  | AdaptiveSchedule;

/** What a checkpoint stores about the horizon: JSON-safe, resume-safe. */
export interface HorizonState {
  /** Index into the schedule's stages (0 for `fixed`). */
  readonly stage: number;
  /** Training steps completed so far (the next step to run is this number, counting from 0). */
  readonly completedSteps: number;
  /** Decision state of an `adaptive` schedule; absent for the step-driven ones (and old checkpoints). */
  readonly adaptive?: AdaptiveState;
}

/** A stage change and why, as the actor emits it. */
export interface StageChange {
  readonly from: number;
  readonly to: number;
  readonly horizon: number;
  readonly reason: string;
}

/** Per-step signals (metric name -> value, names from `src/core/metrics.ts`); only `adaptive` reads them. */
export type StepSignals = Readonly<Record<string, number>>;

export function isPositiveInt(value: number): boolean {
  return Number.isInteger(value) && value > 0;
}

function requirePositiveInt(value: number, path: string): void {
  if (!isPositiveInt(value)) throw new InvalidConfigError(path, `expected a positive integer, got ${value}`);
}

/**
 * Throws {@link InvalidConfigError} naming the field when the schedule is malformed.
 * @example
 * validateHorizonSchedule({ schedule: 'stepwise', horizons: [5, 8, 10], every: 100 }, 'horizon');
 */
export function validateHorizonSchedule(schedule: HorizonSchedule, path = 'horizon'): void {
  switch (schedule.schedule) {
    case 'fixed':
      requirePositiveInt(schedule.horizon, `${path}.horizon`);
      return;
    case 'stepwise':
      if (schedule.horizons.length === 0) throw new InvalidConfigError(`${path}.horizons`, 'expected at least one horizon');
      schedule.horizons.forEach((h, i) => {
        requirePositiveInt(h, `${path}.horizons.${i}`);
      });
      requirePositiveInt(schedule.every, `${path}.every`);
      return;
    case 'linear':
      requirePositiveInt(schedule.start, `${path}.start`);
      requirePositiveInt(schedule.step, `${path}.step`);
      requirePositiveInt(schedule.every, `${path}.every`);
      requirePositiveInt(schedule.max, `${path}.max`);
      if (schedule.max < schedule.start) throw new InvalidConfigError(`${path}.max`, `must be at least start (${schedule.start}), got ${schedule.max}`);
      return;
    case 'adaptive':
      validateAdaptiveSchedule(schedule, path);
      return;
    default:
      throw new InvalidConfigError(
        `${path}.schedule`,
        `expected 'fixed', 'stepwise', 'linear' or 'adaptive', got ${JSON.stringify((schedule as { schedule: unknown }).schedule)}`,
      );
  }
}

/** Stages of a start/step/max ladder (linear and adaptive): start, start+step, ..., max. */
function ladderLength(start: number, step: number, max: number): number {
  return Math.ceil((max - start) / step) + 1;
}

/**
 * Number of stages: 1 for `fixed`, `horizons.length` for `stepwise`, the rungs of start..max for the others.
 * @example stageCount({ schedule: 'linear', start: 4, step: 3, every: 10, max: 12 }) // 4 (4, 7, 10, 12)
 */
export function stageCount(schedule: HorizonSchedule): number {
  switch (schedule.schedule) {
    case 'fixed':
      return 1;
    case 'stepwise':
      return schedule.horizons.length;
    default:
      return ladderLength(schedule.start, schedule.step, schedule.max);
  }
}

/**
 * Stage in force for the step that runs after `completedSteps` steps have completed, for the
 * step-driven schedules. `adaptive` has no such function (its stage is in the state): 0 here.
 * @example stageAt({ schedule: 'stepwise', horizons: [5, 8], every: 100 }, 100) // 1
 */
export function stageAt(schedule: HorizonSchedule, completedSteps: number): number {
  if (schedule.schedule === 'fixed' || schedule.schedule === 'adaptive') return 0;
  return Math.min(Math.floor(completedSteps / schedule.every), stageCount(schedule) - 1);
}

/**
 * Horizon of a stage (clamped to the valid stages).
 * @example horizonOfStage({ schedule: 'stepwise', horizons: [5, 8], every: 100 }, 1) // 8
 */
export function horizonOfStage(schedule: HorizonSchedule, stage: number): number {
  const clamped = Math.min(Math.max(stage, 0), stageCount(schedule) - 1);
  switch (schedule.schedule) {
    case 'fixed':
      return schedule.horizon;
    case 'stepwise':
      return schedule.horizons[clamped] as number;
    default:
      return Math.min(schedule.start + clamped * schedule.step, schedule.max);
  }
}

/**
 * True when `stage` is the last one. For step-driven schedules the last horizon is then held for
 * the rest of the run; an `adaptive` schedule at its maximum may still lower on collapse.
 * @example isFinalStage({ schedule: 'fixed', horizon: 10 }, 0) // true
 */
export function isFinalStage(schedule: HorizonSchedule, stage: number): boolean {
  return stage >= stageCount(schedule) - 1;
}

/**
 * State at the start of a run (the schedule argument only matters for `adaptive`).
 * @example initialHorizonState() // { stage: 0, completedSteps: 0 }
 */
export function initialHorizonState(schedule?: HorizonSchedule): HorizonState {
  if (schedule?.schedule === 'adaptive') return { stage: 0, completedSteps: 0, adaptive: initialAdaptiveState() };
  return { stage: 0, completedSteps: 0 };
}

/**
 * State after one more training step completed; `signals` are that step's metrics (adaptive only).
 * @example completeStep(schedule, { stage: 0, completedSteps: 99 }) // { stage: 1, completedSteps: 100 } when every = 100
 */
export function completeStep(schedule: HorizonSchedule, state: HorizonState, signals: StepSignals = {}): HorizonState {
  return advanceHorizon(schedule, state, signals).state;
}

/**
 * One completed step: the next state and, when the stage changed, what changed and why.
 * @example
 * const { state, change } = advanceHorizon(schedule, state, { 'rollout/successRate': 0.9 });
 * if (change) log(change.reason);
 */
export function advanceHorizon(schedule: HorizonSchedule, state: HorizonState, signals: StepSignals = {}): { state: HorizonState; change: StageChange | null } {
  const completedSteps = state.completedSteps + 1;
  if (schedule.schedule === 'adaptive') {
    const adaptive = state.adaptive ?? initialAdaptiveState();
    const result = adaptiveStep(schedule, state.stage, adaptive, signals);
    const next: HorizonState = { stage: result.stage, completedSteps, adaptive: result.state };
    const change =
      result.stage !== state.stage
        ? { from: state.stage, to: result.stage, horizon: horizonOfStage(schedule, result.stage), reason: result.reason }
        : null;
    return { state: next, change };
  }
  const stage = stageAt(schedule, completedSteps);
  const every = schedule.schedule === 'fixed' ? 0 : schedule.every;
  const change =
    stage !== state.stage
      ? { from: state.stage, to: stage, horizon: horizonOfStage(schedule, stage), reason: `${completedSteps} steps completed (stage every ${every})` }
      : null;
  return { state: { stage, completedSteps }, change };
}

/**
 * Rebuilds the state from a checkpoint. For step-driven schedules the stage is recomputed from
 * `completedSteps` (the source of truth), so a checkpoint saved exactly at a stage boundary resumes
 * in that stage, not the next, and a schedule edited between save and resume is applied
 * consistently. For `adaptive` the saved stage and decision state are taken as they are (clamped
 * to the schedule's stages); a checkpoint from before adaptive existed starts with empty windows.
 * @example restoreHorizonState(schedule, { stage: 1, completedSteps: 100 }) // { stage: 1, completedSteps: 100 }
 */
export function restoreHorizonState(schedule: HorizonSchedule, saved: HorizonState): HorizonState {
  if (!Number.isInteger(saved.completedSteps) || saved.completedSteps < 0) {
    throw new InvalidConfigError('horizonState.completedSteps', `expected a non-negative integer, got ${saved.completedSteps}`);
  }
  if (schedule.schedule === 'adaptive') {
    if (!Number.isInteger(saved.stage) || saved.stage < 0) {
      throw new InvalidConfigError('horizonState.stage', `expected a non-negative integer, got ${saved.stage}`);
    }
    const stage = Math.min(saved.stage, stageCount(schedule) - 1);
    return { stage, completedSteps: saved.completedSteps, adaptive: restoreAdaptiveState(saved.adaptive) };
  }
  return { stage: stageAt(schedule, saved.completedSteps), completedSteps: saved.completedSteps };
}
