/**
 * The horizon scheduler actor (ScalingInter-RL): owns the max number of agent turns per episode.
 * Episodes read `horizon` from its snapshot when they start; the coordinator tells it when a
 * training step completed. Stage logic lives in the pure `horizon-schedule.ts`.
 *
 * States: `holding` (a stage that will advance later) and `final` (the last horizon, held for the
 * rest of the run; a `fixed` schedule starts there).
 */
import { type ActorRefFrom, type SnapshotFrom, emit, enqueueActions, setup } from 'xstate';
import {
  type HorizonSchedule,
  type HorizonState,
  completeStep,
  horizonOfStage,
  initialHorizonState,
  isFinalStage,
  restoreHorizonState,
  validateHorizonSchedule,
} from './horizon-schedule.js';

/** Events the horizon actor accepts. */
export type HorizonAccepts = {
  /** Training step `step` (0-based) completed. Steps already counted are ignored (redelivery-safe). */
  readonly type: 'STEP_COMPLETED';
  readonly step: number;
};

/** Events the horizon actor emits. */
export type HorizonEmits = {
  readonly type: 'STAGE_CHANGED';
  readonly from: number;
  readonly to: number;
  /** Horizon in force from the next step on. */
  readonly horizon: number;
  /** Why, in words (for the run's event log). */
  readonly reason: string;
  /** The step whose completion caused the change. */
  readonly step: number;
};

/** Input: the schedule and, on resume, the state saved in the checkpoint. */
export interface HorizonInput {
  readonly schedule: HorizonSchedule;
  readonly restore?: HorizonState;
}

/** The actor's context (JSON-safe, so `getPersistedSnapshot()` works too). */
export interface HorizonContext extends HorizonState {
  readonly schedule: HorizonSchedule;
  /** Horizon in force for the next step. */
  readonly horizon: number;
}

/**
 * The horizon machine. No effects: it is pure state plus an emitted event.
 * @example
 * const horizon = createActor(horizonMachine, { input: { schedule: { schedule: 'stepwise', horizons: [5, 10], every: 100 } } }).start();
 * horizon.on('STAGE_CHANGED', (e) => log(e));
 * horizon.send({ type: 'STEP_COMPLETED', step: 0 });
 * currentHorizon(horizon.getSnapshot()); // 5
 */
export const horizonMachine = setup({
  types: {
    context: {} as HorizonContext,
    events: {} as HorizonAccepts,
    emitted: {} as HorizonEmits,
    input: {} as HorizonInput,
  },
  guards: {
    isFinal: ({ context }) => isFinalStage(context.schedule, context.stage),
    isNewStep: ({ context, event }) => Number.isInteger(event.step) && event.step >= context.completedSteps,
  },
  actions: {
    advance: enqueueActions(({ context, event, enqueue }) => {
      // Counting is by step number, so a gap (a step completed elsewhere) still lands on the right stage.
      const next = completeStep(context.schedule, { stage: context.stage, completedSteps: event.step });
      enqueue.assign({ stage: next.stage, completedSteps: next.completedSteps, horizon: horizonOfStage(context.schedule, next.stage) });
      if (next.stage !== context.stage) {
        const every = context.schedule.schedule === 'stepwise' ? context.schedule.every : 0;
        enqueue(
          emit({
            type: 'STAGE_CHANGED',
            from: context.stage,
            to: next.stage,
            horizon: horizonOfStage(context.schedule, next.stage),
            reason: `${next.completedSteps} steps completed (stage every ${every})`,
            step: event.step,
          }),
        );
      }
    }),
  },
}).createMachine({
  id: 'horizon',
  context: ({ input }) => {
    validateHorizonSchedule(input.schedule);
    const state = input.restore ? restoreHorizonState(input.schedule, input.restore) : initialHorizonState();
    return { schedule: input.schedule, ...state, horizon: horizonOfStage(input.schedule, state.stage) };
  },
  initial: 'choosing',
  states: {
    choosing: { always: [{ guard: 'isFinal', target: 'final' }, { target: 'holding' }] },
    holding: {
      always: { guard: 'isFinal', target: 'final' },
      on: { STEP_COMPLETED: { guard: 'isNewStep', actions: 'advance' } },
    },
    final: {
      // Still counts steps so that a checkpoint holds the right `completedSteps`.
      on: { STEP_COMPLETED: { guard: 'isNewStep', actions: 'advance' } },
    },
  },
});

/** A running horizon actor. */
export type HorizonRef = ActorRefFrom<typeof horizonMachine>;
type HorizonSnapshot = SnapshotFrom<typeof horizonMachine>;

/**
 * Horizon in force for the next episode.
 * @example currentHorizon(horizonRef.getSnapshot()) // 5
 */
export function currentHorizon(snapshot: HorizonSnapshot): number {
  return snapshot.context.horizon;
}

/**
 * What to store in a checkpoint; pass it back as `input.restore` on resume.
 * @example const saved = persistHorizon(horizonRef.getSnapshot()); // { stage: 1, completedSteps: 100 }
 */
export function persistHorizon(snapshot: HorizonSnapshot): HorizonState {
  return { stage: snapshot.context.stage, completedSteps: snapshot.context.completedSteps };
}
