/**
 * ScalingInter-RL horizon schedules as pure functions (no xstate, no I/O).
 *
 * Where from: AgentGym-RL's `StepRoundsScheduler` (`fixed` and `scaling_inter_stepwise`, see
 * `shared/reference/agentgym-rl.md` §4.2). Unlike the original, the stage is *derived* from the
 * number of completed training steps, never incremented separately: the original keeps a counter
 * that lags the trainer's by one, so a run resumed from a checkpoint saved exactly at a stage
 * boundary advances one stage early. Here `stageAt(schedule, completedSteps)` is the single source
 * of truth, so "N steps, save, restore, N steps" equals "2N steps straight".
 */
import { InvalidConfigError } from '../core/errors.js';

/** How the horizon (max agent turns per episode) evolves with training steps. */
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
    };

/** What a checkpoint stores about the horizon: JSON-safe, resume-safe. */
export interface HorizonState {
  /** Index into the schedule's stages (0 for `fixed`). */
  readonly stage: number;
  /** Training steps completed so far (the next step to run is this number, counting from 0). */
  readonly completedSteps: number;
}

function isPositiveInt(value: number): boolean {
  return Number.isInteger(value) && value > 0;
}

/**
 * Throws {@link InvalidConfigError} naming the field when the schedule is malformed.
 * @example
 * validateHorizonSchedule({ schedule: 'stepwise', horizons: [5, 8, 10], every: 100 }, 'horizon');
 */
export function validateHorizonSchedule(schedule: HorizonSchedule, path = 'horizon'): void {
  if (schedule.schedule === 'fixed') {
    if (!isPositiveInt(schedule.horizon)) {
      throw new InvalidConfigError(`${path}.horizon`, `expected a positive integer, got ${schedule.horizon}`);
    }
    return;
  }
  if (schedule.schedule !== 'stepwise') {
    throw new InvalidConfigError(`${path}.schedule`, `expected 'fixed' or 'stepwise', got ${JSON.stringify((schedule as { schedule: unknown }).schedule)}`);
  }
  if (schedule.horizons.length === 0) {
    throw new InvalidConfigError(`${path}.horizons`, 'expected at least one horizon');
  }
  schedule.horizons.forEach((h, i) => {
    if (!isPositiveInt(h)) throw new InvalidConfigError(`${path}.horizons.${i}`, `expected a positive integer, got ${h}`);
  });
  if (!isPositiveInt(schedule.every)) {
    throw new InvalidConfigError(`${path}.every`, `expected a positive integer, got ${schedule.every}`);
  }
}

/**
 * Number of stages: 1 for `fixed`, `horizons.length` for `stepwise`.
 * @example stageCount({ schedule: 'fixed', horizon: 10 }) // 1
 */
export function stageCount(schedule: HorizonSchedule): number {
  return schedule.schedule === 'fixed' ? 1 : schedule.horizons.length;
}

/**
 * Stage in force for the step that runs after `completedSteps` steps have completed.
 * @example stageAt({ schedule: 'stepwise', horizons: [5, 8], every: 100 }, 100) // 1
 */
export function stageAt(schedule: HorizonSchedule, completedSteps: number): number {
  if (schedule.schedule === 'fixed') return 0;
  return Math.min(Math.floor(completedSteps / schedule.every), schedule.horizons.length - 1);
}

/**
 * Horizon of a stage.
 * @example horizonOfStage({ schedule: 'stepwise', horizons: [5, 8], every: 100 }, 1) // 8
 */
export function horizonOfStage(schedule: HorizonSchedule, stage: number): number {
  if (schedule.schedule === 'fixed') return schedule.horizon;
  const last = schedule.horizons.length - 1;
  return schedule.horizons[Math.min(Math.max(stage, 0), last)] as number;
}

/**
 * True when `stage` is the last one (its horizon is held for the rest of the run).
 * @example isFinalStage({ schedule: 'fixed', horizon: 10 }, 0) // true
 */
export function isFinalStage(schedule: HorizonSchedule, stage: number): boolean {
  return stage >= stageCount(schedule) - 1;
}

/**
 * State at the start of a run.
 * @example initialHorizonState() // { stage: 0, completedSteps: 0 }
 */
export function initialHorizonState(): HorizonState {
  return { stage: 0, completedSteps: 0 };
}

/**
 * State after one more training step completed.
 * @example completeStep(schedule, { stage: 0, completedSteps: 99 }) // { stage: 1, completedSteps: 100 } when every = 100
 */
export function completeStep(schedule: HorizonSchedule, state: HorizonState): HorizonState {
  const completedSteps = state.completedSteps + 1;
  return { stage: stageAt(schedule, completedSteps), completedSteps };
}

/**
 * Rebuilds the state from a checkpoint. The stage is recomputed from `completedSteps` (the source
 * of truth), so a checkpoint saved exactly at a stage boundary resumes in that stage, not the next,
 * and a schedule edited between save and resume is applied consistently.
 * @example restoreHorizonState(schedule, { stage: 1, completedSteps: 100 }) // { stage: 1, completedSteps: 100 }
 */
export function restoreHorizonState(schedule: HorizonSchedule, saved: HorizonState): HorizonState {
  if (!Number.isInteger(saved.completedSteps) || saved.completedSteps < 0) {
    throw new InvalidConfigError('horizonState.completedSteps', `expected a non-negative integer, got ${saved.completedSteps}`);
  }
  return { stage: stageAt(schedule, saved.completedSteps), completedSteps: saved.completedSteps };
}
