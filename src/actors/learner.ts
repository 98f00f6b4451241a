/**
 * The learner actor: turns a step's trajectories into new weights and publishes them.
 *
 * States: `idle → training → publishing → idle`, and `failed`. `TRAIN` requests that arrive while
 * busy are queued in order (the synchronous loop sends one at a time; an asynchronous variant may
 * send more). A failing `train` or `publishWeights` ends in `failed` with the error kept and
 * `TRAIN_FAILED` emitted; the coordinator decides whether the run goes on.
 */
import { assign, emit, fromPromise, setup } from 'xstate';
import { TurnwiseError } from '../core/errors.js';
import type { Trajectory } from '../core/types.js';

/** Named scalar metrics (names from `src/core/metrics.ts`). */
export type Metrics = Readonly<Record<string, number>>;

/** Events the learner accepts. */
export type LearnerAccepts = { readonly type: 'TRAIN'; readonly step: number; readonly trajectories: readonly Trajectory[] };

/** Events the learner emits. */
export type LearnerEmits =
  | { readonly type: 'TRAINED'; readonly step: number; readonly version: number; readonly metrics: Metrics }
  | { readonly type: 'TRAIN_FAILED'; readonly step: number; readonly phase: 'train' | 'publish'; readonly error: string };

/** What `train` returns. */
export interface TrainOutcome {
  readonly metrics: Metrics;
  /** Version of the weights after this update. */
  readonly version: number;
}

/** The I/O a learner performs, injected. */
export interface LearnerEffects {
  train(step: number, trajectories: readonly Trajectory[], signal: AbortSignal): Promise<TrainOutcome>;
  /** Makes weights `version` available to samplers (e.g. publishes on the weights subject). */
  publishWeights(version: number, signal: AbortSignal): Promise<void>;
}

interface TrainJob {
  readonly step: number;
  readonly trajectories: readonly Trajectory[];
}

export interface LearnerContext {
  readonly queue: readonly TrainJob[];
  readonly current: TrainJob | null;
  readonly lastOutcome: TrainOutcome | null;
  /** Latest published weights version. */
  readonly version: number;
  readonly error: string | null;
}

function notProvided(name: string): never {
  throw new TurnwiseError(`learner effect '${name}' was not provided (use withLearnerEffects)`);
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * The learner machine with placeholder effects; see {@link withLearnerEffects}.
 * @example
 * const learner = createActor(withLearnerEffects({ train, publishWeights }), { input: {} }).start();
 * learner.on('TRAINED', (e) => console.log(e.version));
 * learner.send({ type: 'TRAIN', step: 0, trajectories });
 */
export const learnerMachine = setup({
  types: {
    context: {} as LearnerContext,
    events: {} as LearnerAccepts,
    emitted: {} as LearnerEmits,
    input: {} as { readonly version?: number },
  },
  actors: {
    train: fromPromise<TrainOutcome, TrainJob>(async () => notProvided('train')),
    publishWeights: fromPromise<void, { version: number }>(async () => notProvided('publishWeights')),
  },
  guards: {
    hasQueued: ({ context }) => context.queue.length > 0,
  },
  actions: {
    enqueueJob: assign({ queue: ({ context, event }) => [...context.queue, { step: event.step, trajectories: event.trajectories }] }),
    takeJob: assign(({ context }) => ({ current: context.queue[0] ?? null, queue: context.queue.slice(1) })),
  },
}).createMachine({
  id: 'learner',
  context: ({ input }) => ({ queue: [], current: null, lastOutcome: null, version: input.version ?? 0, error: null }),
  initial: 'idle',
  on: { TRAIN: { actions: 'enqueueJob' } },
  states: {
    idle: {
      always: { guard: 'hasQueued', target: 'training' },
    },
    training: {
      entry: 'takeJob',
      invoke: {
        id: 'train',
        src: 'train',
        input: ({ context }) => context.current as TrainJob,
        onDone: { target: 'publishing', actions: assign({ lastOutcome: ({ event }) => event.output }) },
        onError: {
          target: 'failed',
          actions: [
            assign({ error: ({ event }) => `train failed: ${messageOf(event.error)}` }),
            emit(({ context }) => ({ type: 'TRAIN_FAILED' as const, step: context.current?.step ?? -1, phase: 'train' as const, error: context.error ?? '' })),
          ],
        },
      },
    },
    publishing: {
      invoke: {
        id: 'publishWeights',
        src: 'publishWeights',
        input: ({ context }) => ({ version: (context.lastOutcome as TrainOutcome).version }),
        onDone: {
          target: 'idle',
          actions: [
            assign(({ context }) => ({ version: (context.lastOutcome as TrainOutcome).version })),
            emit(({ context }) => ({
              type: 'TRAINED' as const,
              step: context.current?.step ?? -1,
              version: (context.lastOutcome as TrainOutcome).version,
              metrics: (context.lastOutcome as TrainOutcome).metrics,
            })),
            assign({ current: null }),
          ],
        },
        onError: {
          target: 'failed',
          actions: [
            assign({ error: ({ event }) => `publishWeights failed: ${messageOf(event.error)}` }),
            emit(({ context }) => ({ type: 'TRAIN_FAILED' as const, step: context.current?.step ?? -1, phase: 'publish' as const, error: context.error ?? '' })),
          ],
        },
      },
    },
    failed: {
      // Queued work would train on top of an unknown model state: refuse it, loudly.
      on: {
        TRAIN: {
          actions: emit(({ context, event }) => ({
            type: 'TRAIN_FAILED' as const,
            step: event.step,
            phase: 'train' as const,
            error: `learner is failed: ${context.error ?? ''}`,
          })),
        },
      },
    },
  },
});

/**
 * The learner machine with its I/O bound to `effects`.
 * @example const logic = withLearnerEffects({ train: (step, trajs) => trainer.update(trajs), publishWeights: (v) => publish(v) });
 */
export function withLearnerEffects(effects: LearnerEffects) {
  return learnerMachine.provide({
    actors: {
      train: fromPromise<TrainOutcome, TrainJob>(({ input, signal }) => effects.train(input.step, input.trajectories, signal)),
      publishWeights: fromPromise<void, { version: number }>(({ input, signal }) => effects.publishWeights(input.version, signal)),
    },
  });
}
