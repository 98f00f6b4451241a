/**
 * The asynchronous training loop (AReaL-style) as an xstate machine: episodes start as soon as a
 * slot frees up, the learner trains batch `b` as soon as all of its episodes are in, and new
 * weights reach the samplers while episodes are in flight.
 *
 * Two things happen at once. Episodes: the `episodes` child (invoked for the machine's life) starts
 * each admitted one (`START_EPISODES`) and reports it `EPISODE_DONE` or `EPISODE_FAILED`; every
 * event re-runs admission (`admit`, see
 * `async-loop-state.ts`), which starts the next episodes in batch order while there is room and the
 * samplers' version keeps the batch within η (otherwise they wait: samplers pause rather than
 * produce data that would be discarded). The learner, one state at a time:
 *
 *   awaitingBatch → training → publishing → completing → awaitingBatch … → draining → finished | stopped | failed
 *
 * - `awaitingBatch`: until every episode of batch `b` is in (or a failure, a stop, or a deadlock:
 *   nothing in flight and nothing admissible, which the admission rule makes impossible; the check
 *   makes a bookkeeping bug loud instead of a hang).
 * - `training`: the `train` actor on the batch's trajectories within η (over η: rejected, counted).
 * - `publishing`: `continue` hands the new weights to the samplers at once (episodes in flight go
 *   on with them; each turn records its version); `finish-old` first stops admitting and waits
 *   (`waiting`) until the episodes in flight finished with the weights they started with.
 * - `completing`: the `stepCompleted` actor (logging, horizon, evaluation, checkpoint). It may ask
 *   for exclusive work (evaluation shares the samplers and environments): `HOLD` stops admission,
 *   `EXCLUSIVE_READY` is emitted once nothing is in flight, `RELEASE` admits again.
 * - `draining`: the loop ends (all steps done, `STOP`, or an error); the episodes in flight finish
 *   before the caller tears the samplers and environments down.
 */
import { assign, emit, enqueueActions, fromCallback, fromPromise, setup } from 'xstate';
import type { Metrics } from '../../actors/learner.js';
import { TurnwiseError } from '../../core/errors.js';
import type { Trajectory } from '../../core/types.js';
import {
  type Admission,
  type AsyncLoopContext,
  type AsyncLoopInput,
  admit,
  batchComplete,
  deadlocked,
  deadlockError,
  episodeEnded,
  finishStep,
  initialContext,
  persistedState,
  setStopwatch,
  takeBatch,
  withLearnerBatch,
} from './async-loop-state.js';
import { type StalenessState, stalenessMetrics } from './staleness.js';

/** Events the loop accepts. */
export type AsyncLoopAccepts =
  /** An episode ended with its trajectory (from the `episodes` child). */
  | { readonly type: 'EPISODE_DONE'; readonly batch: number; readonly index: number; readonly trajectory: Trajectory }
  /** An episode's effect rejected: the run fails once the learner next waits. */
  | { readonly type: 'EPISODE_FAILED'; readonly batch: number; readonly index: number; readonly error: unknown }
  /** Admit nothing more, finish the step being trained, end `stopped`. */
  | { readonly type: 'STOP' }
  /** From `stepCompleted`: stop admitting; `EXCLUSIVE_READY` follows once nothing is in flight. */
  | { readonly type: 'HOLD' }
  /** The exclusive work is done: admit again. */
  | { readonly type: 'RELEASE' };

/** Events the loop emits. */
export type AsyncLoopEmits =
  | { readonly type: 'EXCLUSIVE_READY' }
  /** Exclusive work cannot run: an episode failed, or `HOLD` came outside `completing` or twice. */
  | { readonly type: 'EXCLUSIVE_REFUSED'; readonly error: unknown };

/** How the loop ended: the machine's output. */
export interface AsyncLoopOutput {
  readonly status: 'finished' | 'stopped' | 'failed';
  /** Learner version at the end (= completed steps). */
  readonly completedSteps: number;
  readonly state: StalenessState;
  /** Why it failed (an episode's error, a rejected effect, a stale batch, a deadlock), else null. */
  readonly error: unknown;
}

/** What the `episodes` child receives: episodes to start, in admission order. */
export interface StartEpisodes {
  readonly type: 'START_EPISODES';
  readonly episodes: readonly Admission[];
}

function notProvided(name: string): never {
  throw new TurnwiseError(`async loop effect '${name}' was not provided (use runAsyncLoop)`);
}

/** The `onError` of an effect: keep the first error, then drain. */
const failTo = (target: string) => ({ target, actions: { type: 'recordError' as const, params: ({ event }: { event: { error?: unknown } }) => ({ error: event.error }) } });

/**
 * The loop's machine with placeholder effects; `runAsyncLoop` (`async-loop.ts`) provides them and drives it.
 * @example const [snapshot, actions] = initialTransition(asyncLoopMachine, { startStep: 0, totalSteps: 4, maxStaleness: 1, partialRollout: 'continue', maxInFlight: 8, clock, plans, samplerVersion: () => 0 });
 */
export const asyncLoopMachine = setup({
  types: {
    context: {} as AsyncLoopContext,
    events: {} as AsyncLoopAccepts,
    emitted: {} as AsyncLoopEmits,
    input: {} as AsyncLoopInput,
    output: {} as AsyncLoopOutput,
  },
  actors: {
    episodes: fromCallback<StartEpisodes>(() => notProvided('episodes')),
    train: fromPromise<{ readonly version: number; readonly metrics: Metrics }, { batch: number; trajectories: readonly Trajectory[] }>(async () => notProvided('train')),
    publishWeights: fromPromise<void, { version: number }>(async () => notProvided('publishWeights')),
    stepCompleted: fromPromise<void, { batch: number; metrics: Metrics }>(async () => notProvided('stepCompleted')),
  },
  guards: {
    failed: ({ context }) => context.error !== null,
    episodeFailed: ({ context }) => context.failure !== null,
    stopRequested: ({ context }) => context.stopRequested,
    batchComplete: ({ context }) => batchComplete(context),
    deadlocked: ({ context }) => deadlocked(context),
    runDone: ({ context }) => context.batch >= context.input.totalSteps,
    nothingInFlight: ({ context }) => context.inFlight === 0,
    finishOld: ({ context }) => context.input.partialRollout === 'finish-old',
    finishedAll: ({ context }) => context.version >= context.input.totalSteps,
  },
  actions: {
    /** Starts every episode admission allows now (the `episodes` child runs them). */
    admit: enqueueActions(({ context, enqueue }) => {
      const { admitted, context: next } = admit(context);
      enqueue.assign(() => next);
      if (admitted.length > 0) enqueue.sendTo('episodes', { type: 'START_EPISODES', episodes: admitted } satisfies StartEpisodes);
    }),
    learnerIdle: assign(({ context }, params: { idle: boolean }) => ({ learnerIdle: setStopwatch(context.learnerIdle, params.idle, context.input.clock.now()) })),
    recordError: assign(({ context }, params: { error: unknown }) => ({ error: context.error ?? params.error })),
    raiseFailure: assign(({ context }) => ({ error: context.error ?? context.failure })),
    takeBatch: assign(({ context }) => takeBatch(context)),
    finishStep: assign(({ context }) => finishStep(context)),
    refuseExclusive: emit(({ context }) => ({
      type: 'EXCLUSIVE_REFUSED' as const,
      error: context.failure ?? new TurnwiseError('async loop: exclusive work is possible only while a step completes, one at a time'),
    })),
  },
}).createMachine({
  id: 'asyncLoop',
  context: ({ input }) => initialContext(input),
  initial: 'starting',
  invoke: { id: 'episodes', src: 'episodes' },
  entry: 'admit',
  on: {
    EPISODE_DONE: { actions: [assign(({ context, event }) => episodeEnded(context, event.batch, event.index, event.trajectory)), 'admit'] },
    EPISODE_FAILED: { actions: [assign(({ context, event }) => episodeEnded(context, event.batch, event.index, null, event.error)), 'admit'] },
    STOP: { actions: [assign({ stopRequested: true }), 'admit'] },
    HOLD: { actions: 'refuseExclusive' },
  },
  states: {
    starting: { always: [{ guard: 'runDone', target: 'draining' }, { target: 'awaitingBatch' }] },
    awaitingBatch: {
      entry: [{ type: 'learnerIdle', params: { idle: true } }, assign(({ context }) => withLearnerBatch(context)), 'admit'],
      always: [
        { guard: 'episodeFailed', target: 'draining', actions: 'raiseFailure' },
        { guard: 'stopRequested', target: 'draining' },
        { guard: 'batchComplete', target: 'takingBatch', actions: 'takeBatch' },
        { guard: 'deadlocked', target: 'draining', actions: assign({ error: ({ context }) => deadlockError(context) }) },
      ],
      exit: { type: 'learnerIdle', params: { idle: false } },
    },
    // Nothing within η to train: the run fails (StalePolicyError).
    takingBatch: { always: [{ guard: 'failed', target: 'draining' }, { target: 'training' }] },
    training: {
      invoke: {
        id: 'train',
        src: 'train',
        input: ({ context }) => ({ batch: context.batch, trajectories: context.kept }),
        onDone: [
          {
            guard: ({ context, event }) => event.output.version === context.version + 1,
            target: 'publishing',
            actions: assign(({ context, event }) => ({
              // Staleness against the version that trained (before the update).
              metrics: { ...event.output.metrics, ...stalenessMetrics(context.kept, context.version, context.input.maxStaleness) },
              version: event.output.version,
            })),
          },
          {
            target: 'draining',
            actions: assign({
              error: ({ context, event }) =>
                new TurnwiseError(`async loop: learner returned version ${event.output.version} after training batch ${context.batch} at version ${context.version}`),
            }),
          },
        ],
        onError: failTo('draining'),
      },
    },
    publishing: {
      initial: 'choosing',
      states: {
        choosing: { always: [{ guard: 'finishOld', target: 'waiting', actions: [assign({ holdForPublish: true }), 'admit'] }, { target: 'loading' }] },
        // finish-old: the episodes in flight end with the weights they started with.
        waiting: {
          always: [
            { guard: 'episodeFailed', target: '#asyncLoop.draining', actions: 'raiseFailure' },
            { guard: 'nothingInFlight', target: 'loading' },
          ],
        },
        loading: {
          invoke: {
            id: 'publishWeights',
            src: 'publishWeights',
            input: ({ context }) => ({ version: context.version }),
            onDone: { target: '#asyncLoop.completing', actions: [assign({ holdForPublish: false }), 'admit', 'finishStep'] },
            onError: failTo('#asyncLoop.draining'),
          },
        },
      },
    },
    completing: {
      invoke: {
        id: 'stepCompleted',
        src: 'stepCompleted',
        input: ({ context }) => ({ batch: context.batch, metrics: context.metrics }),
        onDone: [
          { guard: 'stopRequested', target: 'draining', actions: assign({ metrics: {} }) },
          { target: 'starting', actions: assign(({ context }) => ({ batch: context.batch + 1, metrics: {} })) },
        ],
        onError: failTo('draining'),
      },
      initial: 'running',
      states: {
        running: { on: { HOLD: { target: 'holding', actions: [assign({ holdForExclusive: true }), 'admit'] } } },
        holding: {
          always: [
            { guard: 'episodeFailed', target: 'running', actions: ['refuseExclusive', assign({ holdForExclusive: false }), 'admit'] },
            { guard: 'nothingInFlight', target: 'exclusive', actions: emit({ type: 'EXCLUSIVE_READY' as const }) },
          ],
        },
        exclusive: { on: { RELEASE: { target: 'running', actions: [assign({ holdForExclusive: false }), 'admit'] } } },
      },
    },
    draining: {
      entry: [assign({ closing: true }), 'admit'],
      always: { guard: 'nothingInFlight', target: 'ended' },
    },
    ended: { always: [{ guard: 'failed', target: 'failed' }, { guard: 'finishedAll', target: 'finished' }, { target: 'stopped' }] },
    finished: { type: 'final', entry: assign({ status: 'finished' as const }) },
    stopped: { type: 'final', entry: assign({ status: 'stopped' as const }) },
    failed: { type: 'final', entry: assign({ status: 'failed' as const }) },
  },
  output: ({ context }) => ({ status: context.status ?? 'failed', completedSteps: context.version, state: persistedState(context), error: context.error }),
});

