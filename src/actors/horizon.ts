/**
 * The horizon scheduler actor (ScalingInter-RL): owns the max number of agent turns per episode.
 * Episodes read `horizon` from its snapshot when they start; the coordinator tells it when a
 * training step completed, with that step's metrics (the adaptive schedule's signals). Stage logic
 * lives in the pure `horizon-schedule.ts` / `horizon-adaptive.ts`.
 *
 * States, one group per schedule kind, so a snapshot says what the scheduler is doing:
 * - `fixed`: one horizon for the whole run;
 * - `stepwise.holding` / `stepwise.final` and `linear.holding` / `linear.final`: a stage that will
 *   advance after more steps, or the last horizon held for the rest of the run;
 * - `adaptive.cooling` (a change happened less than `cooldown` steps ago: no decision yet) and
 *   `adaptive.watching` (each step's signals may raise or lower the horizon).
 */
import { type SnapshotFrom, emit, enqueueActions, not, setup } from 'xstate';
import {
  type HorizonSchedule,
  type HorizonState,
  type StepSignals,
  advanceHorizon,
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
  /** That step's metrics (names from `src/core/metrics.ts`); read by the adaptive schedule only. */
  readonly metrics?: StepSignals;
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

function stateOf(context: HorizonContext): HorizonState {
  return context.adaptive ? { stage: context.stage, completedSteps: context.completedSteps, adaptive: context.adaptive } : { stage: context.stage, completedSteps: context.completedSteps };
}

const counting = { STEP_COMPLETED: { guard: 'isNewStep', actions: 'advance' } } as const;

/**
 * The horizon machine. No effects: it is pure state plus an emitted event.
 * @example
 * const horizon = createActor(horizonMachine, { input: { schedule: { schedule: 'stepwise', horizons: [5, 10], every: 100 } } }).start();
 * horizon.on('STAGE_CHANGED', (e) => log(e));
 * horizon.send({ type: 'STEP_COMPLETED', step: 0, metrics: { 'rollout/successRate': 0.4 } });
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
    isFixed: ({ context }) => context.schedule.schedule === 'fixed',
    isStepwise: ({ context }) => context.schedule.schedule === 'stepwise',
    isLinear: ({ context }) => context.schedule.schedule === 'linear',
    inCooldown: ({ context }) =>
      context.schedule.schedule === 'adaptive' && (context.adaptive?.sinceChange ?? 0) < context.schedule.cooldown,
  },
  actions: {
    advance: enqueueActions(({ context, event, enqueue }) => {
      // Counting is by step number, so a gap (a step completed elsewhere) still lands on the right stage.
      const { state, change } = advanceHorizon(context.schedule, { ...stateOf(context), completedSteps: event.step }, event.metrics ?? {});
      enqueue.assign({
        stage: state.stage,
        completedSteps: state.completedSteps,
        horizon: horizonOfStage(context.schedule, state.stage),
        ...(state.adaptive ? { adaptive: state.adaptive } : {}),
      });
      if (change) enqueue(emit({ type: 'STAGE_CHANGED', ...change, step: event.step }));
    }),
  },
}).createMachine({
  id: 'horizon',
  context: ({ input }) => {
    validateHorizonSchedule(input.schedule);
    const state = input.restore ? restoreHorizonState(input.schedule, input.restore) : initialHorizonState(input.schedule);
    return { schedule: input.schedule, ...state, horizon: horizonOfStage(input.schedule, state.stage) };
  },
  initial: 'choosing',
  states: {
    choosing: {
      always: [
        { guard: 'isFixed', target: 'fixed' },
        { guard: 'isStepwise', target: 'stepwise' },
        { guard: 'isLinear', target: 'linear' },
        { target: 'adaptive' },
      ],
    },
    // Still counts steps so that a checkpoint holds the right `completedSteps`.
    fixed: { on: counting },
    stepwise: {
      initial: 'holding',
      on: counting,
      states: {
        holding: { always: { guard: 'isFinal', target: 'final' } },
        final: {},
      },
    },
    linear: {
      initial: 'holding',
      on: counting,
      states: {
        holding: { always: { guard: 'isFinal', target: 'final' } },
        final: {},
      },
    },
    adaptive: {
      initial: 'cooling',
      on: counting,
      states: {
        cooling: { always: { guard: not('inCooldown'), target: 'watching' } },
        watching: { always: { guard: 'inCooldown', target: 'cooling' } },
      },
    },
  },
});

type HorizonSnapshot = SnapshotFrom<typeof horizonMachine>;

/**
 * Horizon in force for the next episode.
 * @example currentHorizon(horizonRef.getSnapshot()) // 5
 */
export function currentHorizon(snapshot: HorizonSnapshot): number {
  return snapshot.context.horizon;
}

/**
 * What to store in a checkpoint; pass it back as `input.restore` on resume. Includes the adaptive
 * schedule's windows, counters and cooldown, so a resumed run makes the same decisions.
 * @example const saved = persistHorizon(horizonRef.getSnapshot()); // { stage: 1, completedSteps: 100 }
 */
export function persistHorizon(snapshot: HorizonSnapshot): HorizonState {
  return stateOf(snapshot.context);
}
