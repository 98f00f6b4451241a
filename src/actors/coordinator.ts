/**
 * The coordinator actor: the synchronous training loop (AgentGym-RL's `RayPPOTrainer.fit`).
 *
 * Per step: `rollingOut → training → completing → evaluating? → checkpointing? → next step`,
 * ending in `finished`, `stopped` or `failed`. `completing` runs `stepCompleted` (logging and the
 * horizon advance) before any checkpoint, so a checkpoint taken after step `s` already holds the
 * horizon state for step `s + 1`.
 *
 * Cadence (steps count from 0; `completedSteps = s + 1` after step `s`): evaluate when
 * `completedSteps % evalEvery === 0`; checkpoint when `completedSteps % checkpointEvery === 0` or
 * after the last step. 0 disables a cadence. `STOP` (Ctrl-C) lets the current phase finish, then
 * checkpoints (unless that exact point is already saved) and ends in `stopped`; a step whose
 * rollout finished but whose training did not is simply redone on resume.
 */
import { assign, emit, fromPromise, setup } from 'xstate';
import { TurnwiseError } from '../core/errors.js';
import type { Trajectory } from '../core/types.js';
import type { Metrics } from './learner.js';

/** Events the coordinator accepts. */
export type CoordinatorAccepts = { readonly type: 'STOP' };

/** Events the coordinator emits. */
export type CoordinatorEmits =
  | { readonly type: 'PHASE'; readonly step: number; readonly phase: CoordinatorPhase }
  | { readonly type: 'STEP_DONE'; readonly step: number; readonly metrics: Metrics; readonly evalMetrics: Metrics | null }
  | { readonly type: 'CHECKPOINTED'; readonly completedSteps: number }
  | { readonly type: 'RUN_ENDED'; readonly status: 'finished' | 'stopped' | 'failed'; readonly completedSteps: number; readonly error: string | null };

/** Phases announced with `PHASE`. */
export type CoordinatorPhase = 'rollout' | 'train' | 'evaluate' | 'checkpoint';

/** The I/O the coordinator performs, injected. */
export interface CoordinatorEffects {
  /** Runs every episode of step `step` (the run assembly starts one episode actor each) and returns their trajectories. */
  rollout(step: number, signal: AbortSignal): Promise<readonly Trajectory[]>;
  train(step: number, trajectories: readonly Trajectory[], signal: AbortSignal): Promise<{ readonly metrics: Metrics }>;
  evaluate(step: number, signal: AbortSignal): Promise<Metrics>;
  /** Saves everything needed to resume with `startStep = completedSteps`. */
  checkpoint(completedSteps: number, signal: AbortSignal): Promise<void>;
  /** Logging and horizon advance for a finished step. */
  stepCompleted(step: number, metrics: Metrics, signal: AbortSignal): Promise<void>;
}

export interface CoordinatorInput {
  /** First step to run (the checkpoint's `completedSteps` on resume, else 0). */
  readonly startStep: number;
  /** Steps in the whole run; the last step run is `totalSteps - 1`. */
  readonly totalSteps: number;
  /** Evaluate every this many completed steps (0: never). */
  readonly evalEvery: number;
  /** Checkpoint every this many completed steps (0: only at the end / on STOP). */
  readonly checkpointEvery: number;
}

/** How the run ended: the machine's output. */
export interface CoordinatorOutput {
  readonly status: 'finished' | 'stopped' | 'failed';
  readonly completedSteps: number;
  readonly error: string | null;
}

export interface CoordinatorContext extends CoordinatorInput {
  /** Step being run. */
  readonly step: number;
  /** Steps fully done (trained and logged). */
  readonly completedSteps: number;
  readonly trajectories: readonly Trajectory[];
  readonly metrics: Metrics;
  readonly evalMetrics: Metrics | null;
  readonly stopRequested: boolean;
  /** `completedSteps` at the last checkpoint, or -1. */
  readonly lastCheckpoint: number;
  readonly error: string | null;
  /** Set when a final state is entered. */
  readonly status: CoordinatorOutput['status'] | null;
}

function notProvided(name: string): never {
  throw new TurnwiseError(`coordinator effect '${name}' was not provided (use withCoordinatorEffects)`);
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function every(n: number, completedSteps: number): boolean {
  return n > 0 && completedSteps % n === 0;
}

/** The `onError` transition of an effect: keep the message, end in `failed`. */
const fail = (what: string) => ({
  target: 'failed' as const,
  actions: { type: 'recordError' as const, params: ({ event }: { event: { error?: unknown } }) => ({ message: `${what} failed: ${messageOf(event.error)}` }) },
});

const phase = (name: CoordinatorPhase) => ({ type: 'announcePhase' as const, params: { phase: name } });

/**
 * The coordinator machine with placeholder effects; see {@link withCoordinatorEffects}.
 * @example
 * const run = createActor(withCoordinatorEffects(effects), { input: { startStep: 0, totalSteps: 100, evalEvery: 10, checkpointEvery: 25 } }).start();
 * process.once('SIGINT', () => run.send({ type: 'STOP' }));
 * const { status } = await toPromise(run);
 */
export const coordinatorMachine = setup({
  types: {
    context: {} as CoordinatorContext,
    events: {} as CoordinatorAccepts,
    emitted: {} as CoordinatorEmits,
    input: {} as CoordinatorInput,
    output: {} as CoordinatorOutput,
  },
  actors: {
    rollout: fromPromise<readonly Trajectory[], { step: number }>(async () => notProvided('rollout')),
    train: fromPromise<{ readonly metrics: Metrics }, { step: number; trajectories: readonly Trajectory[] }>(async () => notProvided('train')),
    evaluate: fromPromise<Metrics, { step: number }>(async () => notProvided('evaluate')),
    checkpoint: fromPromise<void, { completedSteps: number }>(async () => notProvided('checkpoint')),
    stepCompleted: fromPromise<void, { step: number; metrics: Metrics }>(async () => notProvided('stepCompleted')),
  },
  guards: {
    runDone: ({ context }) => context.step >= context.totalSteps,
    stopRequested: ({ context }) => context.stopRequested,
    evalDue: ({ context }) => every(context.evalEvery, context.completedSteps),
    checkpointDue: ({ context }) =>
      context.lastCheckpoint !== context.completedSteps &&
      (every(context.checkpointEvery, context.completedSteps) || context.completedSteps >= context.totalSteps),
    stopNeedsCheckpoint: ({ context }) => context.stopRequested && context.lastCheckpoint !== context.completedSteps,
  },
  actions: {
    recordError: assign((_, params: { message: string }) => ({ error: params.message })),
    announcePhase: emit(({ context }, params: { phase: CoordinatorPhase }) => ({ type: 'PHASE' as const, step: context.step, phase: params.phase })),
    setStatus: assign((_, params: { status: CoordinatorOutput['status'] }) => ({ status: params.status })),
    announceEnd: emit(({ context }) => ({
      type: 'RUN_ENDED' as const,
      status: context.status ?? 'failed',
      completedSteps: context.completedSteps,
      error: context.error,
    })),
    emitStepDone: emit(({ context }) => ({ type: 'STEP_DONE' as const, step: context.step, metrics: context.metrics, evalMetrics: context.evalMetrics })),
    nextStep: assign(({ context }) => ({ step: context.step + 1, trajectories: [], metrics: {}, evalMetrics: null })),
  },
}).createMachine({
  id: 'coordinator',
  context: ({ input }) => ({
    ...input,
    step: input.startStep,
    completedSteps: input.startStep,
    trajectories: [],
    metrics: {},
    evalMetrics: null,
    stopRequested: false,
    // A resumed run was loaded from the checkpoint at `startStep`: no need to save that point again.
    lastCheckpoint: input.startStep > 0 ? input.startStep : -1,
    error: null,
    status: null,
  }),
  initial: 'starting',
  on: { STOP: { actions: assign({ stopRequested: true }) } },
  states: {
    starting: {
      always: [{ guard: 'runDone', target: 'finished' }, { guard: 'stopRequested', target: 'stopped' }, { target: 'rollingOut' }],
    },
    rollingOut: {
      entry: phase('rollout'),
      invoke: {
        id: 'rollout',
        src: 'rollout',
        input: ({ context }) => ({ step: context.step }),
        onDone: [
          // Stopped mid-step: the rollout is dropped; the resumed run redoes this step.
          { guard: 'stopNeedsCheckpoint', target: 'checkpointing' },
          { guard: 'stopRequested', target: 'stopped' },
          { target: 'training', actions: assign({ trajectories: ({ event }) => event.output }) },
        ],
        onError: fail('rollout'),
      },
    },
    training: {
      entry: phase('train'),
      invoke: {
        id: 'train',
        src: 'train',
        input: ({ context }) => ({ step: context.step, trajectories: context.trajectories }),
        onDone: { target: 'completing', actions: assign({ metrics: ({ event }) => event.output.metrics, trajectories: [] }) },
        onError: fail('train'),
      },
    },
    completing: {
      invoke: {
        id: 'stepCompleted',
        src: 'stepCompleted',
        input: ({ context }) => ({ step: context.step, metrics: context.metrics }),
        onDone: [
          { guard: 'stopRequested', target: 'checkpointing', actions: assign({ completedSteps: ({ context }) => context.step + 1 }) },
          { target: 'afterTraining', actions: assign({ completedSteps: ({ context }) => context.step + 1 }) },
        ],
        onError: fail('stepCompleted'),
      },
    },
    afterTraining: {
      always: [{ guard: 'evalDue', target: 'evaluating' }, { target: 'afterEvaluation' }],
    },
    evaluating: {
      entry: phase('evaluate'),
      invoke: {
        id: 'evaluate',
        src: 'evaluate',
        input: ({ context }) => ({ step: context.step }),
        onDone: { target: 'afterEvaluation', actions: assign({ evalMetrics: ({ event }) => event.output }) },
        onError: fail('evaluate'),
      },
    },
    afterEvaluation: {
      always: [{ guard: 'checkpointDue', target: 'checkpointing' }, { guard: 'stopNeedsCheckpoint', target: 'checkpointing' }, { target: 'stepDone' }],
    },
    checkpointing: {
      entry: phase('checkpoint'),
      invoke: {
        id: 'checkpoint',
        src: 'checkpoint',
        input: ({ context }) => ({ completedSteps: context.completedSteps }),
        onDone: {
          target: 'stepDone',
          actions: [
            assign({ lastCheckpoint: ({ context }) => context.completedSteps }),
            emit(({ context }) => ({ type: 'CHECKPOINTED' as const, completedSteps: context.completedSteps })),
          ],
        },
        onError: fail('checkpoint'),
      },
    },
    stepDone: {
      always: [
        // A STOP during rollout reaches here without a completed step: nothing to announce.
        { guard: ({ context }) => context.completedSteps <= context.step, target: 'stopped' },
        { guard: 'stopRequested', target: 'stopped', actions: 'emitStepDone' },
        { target: 'starting', actions: ['emitStepDone', 'nextStep'] },
      ],
    },
    finished: { type: 'final', entry: [{ type: 'setStatus', params: { status: 'finished' } }, 'announceEnd'] },
    stopped: { type: 'final', entry: [{ type: 'setStatus', params: { status: 'stopped' } }, 'announceEnd'] },
    failed: { type: 'final', entry: [{ type: 'setStatus', params: { status: 'failed' } }, 'announceEnd'] },
  },
  output: ({ context }) => ({ status: context.status ?? 'failed', completedSteps: context.completedSteps, error: context.error }),
});

/**
 * The coordinator machine with its I/O bound to `effects`.
 * @example const logic = withCoordinatorEffects({ rollout, train, evaluate, checkpoint, stepCompleted });
 */
export function withCoordinatorEffects(effects: CoordinatorEffects) {
  return coordinatorMachine.provide({
    actors: {
      rollout: fromPromise<readonly Trajectory[], { step: number }>(({ input, signal }) => effects.rollout(input.step, signal)),
      train: fromPromise<{ readonly metrics: Metrics }, { step: number; trajectories: readonly Trajectory[] }>(({ input, signal }) =>
        effects.train(input.step, input.trajectories, signal),
      ),
      evaluate: fromPromise<Metrics, { step: number }>(({ input, signal }) => effects.evaluate(input.step, signal)),
      checkpoint: fromPromise<void, { completedSteps: number }>(({ input, signal }) => effects.checkpoint(input.completedSteps, signal)),
      stepCompleted: fromPromise<void, { step: number; metrics: Metrics }>(({ input, signal }) => effects.stepCompleted(input.step, input.metrics, signal)),
    },
  });
}
