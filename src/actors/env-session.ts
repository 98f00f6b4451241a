/**
 * The env-session actor: one environment instance serving episodes one call at a time.
 *
 * States: `idle → resetting → ready ⇄ stepping`, `closing → closed`, and `failed`. Every call has a
 * deadline (`envTimeoutMs`, an xstate `after` delay, so a simulated clock drives it in tests); a
 * missed deadline or a thrown error ends in `failed` with an `EnvironmentError` message. Each
 * request is answered by exactly one emitted event, so an adapter (see `src/runtime/wiring/message-flow.ts`)
 * can turn the actor into a request/reply service.
 */
import { assign, emit, fromPromise, setup } from 'xstate';
import { EnvironmentError, TurnwiseError } from '../core/errors.js';
import type { Observation, StepResult } from '../core/types.js';

/** Events the env session accepts. */
export type EnvSessionAccepts =
  /** Start an episode on task `taskIndex` (allowed when idle or ready: a session serves many episodes). */
  | { readonly type: 'RESET'; readonly taskIndex: number }
  /** Apply the agent's raw text (allowed when ready). */
  | { readonly type: 'STEP'; readonly actionText: string }
  /** Release the environment (allowed in any state but `closing`/`closed`). */
  | { readonly type: 'CLOSE' };

/** Events the env session emits; exactly one answers each accepted request. */
export type EnvSessionEmits =
  | { readonly type: 'RESET_DONE'; readonly observation: Observation }
  | { readonly type: 'STEP_DONE'; readonly result: StepResult }
  /** The environment failed (now or earlier); the session stays `failed`. */
  | { readonly type: 'SESSION_FAILED'; readonly error: string }
  /** The request is not valid in the current state (e.g. STEP before RESET, anything after CLOSE). */
  | { readonly type: 'REJECTED'; readonly request: EnvSessionAccepts['type']; readonly reason: string }
  | { readonly type: 'CLOSED' };

/** The I/O an env session performs, injected. `signal` aborts when the call is abandoned (timeout, close). */
export interface EnvSessionEffects {
  resetEnv(taskIndex: number, signal: AbortSignal): Promise<Observation>;
  stepEnv(actionText: string, signal: AbortSignal): Promise<StepResult>;
  closeEnv(signal: AbortSignal): Promise<void>;
}

export interface EnvSessionInput {
  /** Environment name, for error messages. */
  readonly envName: string;
  /** Deadline of each reset/step/close call, in milliseconds of the actor's clock. */
  readonly envTimeoutMs: number;
}

export interface EnvSessionContext {
  readonly envName: string;
  readonly envTimeoutMs: number;
  readonly pendingTaskIndex: number;
  readonly pendingAction: string;
  /** Message of the `EnvironmentError` that put the session in `failed`, else null. */
  readonly error: string | null;
  /** Episodes started so far. */
  readonly episodes: number;
}

function notProvided(name: string): never {
  throw new TurnwiseError(`env-session effect '${name}' was not provided (use withEnvSessionEffects)`);
}

function envErrorMessage(envName: string, what: string, error: unknown): string {
  if (error instanceof EnvironmentError) return error.message;
  const detail = error instanceof Error ? error.message : String(error);
  return new EnvironmentError(envName, `${what} threw: ${detail}`, { cause: error }).message;
}

/**
 * The env-session machine with placeholder effects; see {@link withEnvSessionEffects}.
 * @example
 * const logic = withEnvSessionEffects({ resetEnv: (i) => env.reset(i), stepEnv: (a) => env.step(a), closeEnv: () => env.close() });
 * const session = createActor(logic, { input: { envName: 'babyai', envTimeoutMs: 30_000 }, clock }).start();
 * session.on('STEP_DONE', (e) => console.log(e.result.reward));
 */
export const envSessionMachine = setup({
  types: {
    context: {} as EnvSessionContext,
    events: {} as EnvSessionAccepts,
    emitted: {} as EnvSessionEmits,
    input: {} as EnvSessionInput,
  },
  actors: {
    resetEnv: fromPromise<Observation, { taskIndex: number }>(async () => notProvided('resetEnv')),
    stepEnv: fromPromise<StepResult, { actionText: string }>(async () => notProvided('stepEnv')),
    closeEnv: fromPromise<void, Record<string, never>>(async () => notProvided('closeEnv')),
  },
  delays: {
    envTimeout: ({ context }) => context.envTimeoutMs,
  },
  actions: {
    reject: emit(({ event }, params: { reason: string } | undefined) => ({
      type: 'REJECTED' as const,
      request: event.type,
      reason: params?.reason ?? `'${event.type}' is not accepted in this state`,
    })),
    answerFailed: emit(({ context }) => ({ type: 'SESSION_FAILED' as const, error: context.error ?? 'failed' })),
  },
}).createMachine({
  id: 'envSession',
  context: ({ input }) => ({
    envName: input.envName,
    envTimeoutMs: input.envTimeoutMs,
    pendingTaskIndex: -1,
    pendingAction: '',
    error: null,
    episodes: 0,
  }),
  initial: 'idle',
  on: {
    RESET: { actions: 'reject' },
    STEP: { actions: 'reject' },
    CLOSE: { target: '.closing' },
  },
  states: {
    idle: {
      on: { RESET: { target: 'resetting', actions: assign({ pendingTaskIndex: ({ event }) => event.taskIndex }) } },
    },
    resetting: {
      invoke: {
        id: 'resetEnv',
        src: 'resetEnv',
        input: ({ context }) => ({ taskIndex: context.pendingTaskIndex }),
        onDone: {
          target: 'ready',
          actions: [
            assign({ episodes: ({ context }) => context.episodes + 1 }),
            emit(({ event }) => ({ type: 'RESET_DONE' as const, observation: event.output })),
          ],
        },
        onError: {
          target: 'failed',
          actions: assign({ error: ({ context, event }) => envErrorMessage(context.envName, `reset(${context.pendingTaskIndex})`, event.error) }),
        },
      },
      after: {
        envTimeout: {
          target: 'failed',
          actions: assign({
            error: ({ context }) => new EnvironmentError(context.envName, `reset(${context.pendingTaskIndex}) timed out after ${context.envTimeoutMs} ms`).message,
          }),
        },
      },
    },
    ready: {
      on: {
        RESET: { target: 'resetting', actions: assign({ pendingTaskIndex: ({ event }) => event.taskIndex }) },
        STEP: { target: 'stepping', actions: assign({ pendingAction: ({ event }) => event.actionText }) },
      },
    },
    stepping: {
      invoke: {
        id: 'stepEnv',
        src: 'stepEnv',
        input: ({ context }) => ({ actionText: context.pendingAction }),
        onDone: { target: 'ready', actions: emit(({ event }) => ({ type: 'STEP_DONE' as const, result: event.output })) },
        onError: {
          target: 'failed',
          actions: assign({ error: ({ context, event }) => envErrorMessage(context.envName, 'step', event.error) }),
        },
      },
      after: {
        envTimeout: {
          target: 'failed',
          actions: assign({ error: ({ context }) => new EnvironmentError(context.envName, `step timed out after ${context.envTimeoutMs} ms`).message }),
        },
      },
    },
    failed: {
      // The failure answers the call in flight, and every later call, until CLOSE.
      entry: 'answerFailed',
      on: { RESET: { actions: 'answerFailed' }, STEP: { actions: 'answerFailed' } },
    },
    closing: {
      invoke: {
        id: 'closeEnv',
        src: 'closeEnv',
        input: () => ({}),
        onDone: 'closed',
        // A failing close still leaves nothing to use: report it as closed with the error kept.
        onError: { target: 'closed', actions: assign({ error: ({ context, event }) => envErrorMessage(context.envName, 'close', event.error) }) },
      },
      after: { envTimeout: 'closed' },
      on: { CLOSE: {} },
    },
    closed: {
      entry: emit({ type: 'CLOSED' as const }),
      on: {
        CLOSE: { actions: emit({ type: 'CLOSED' as const }) },
        RESET: { actions: { type: 'reject', params: { reason: 'the session is closed' } } },
        STEP: { actions: { type: 'reject', params: { reason: 'the session is closed' } } },
      },
    },
  },
});

/**
 * The env-session machine with its I/O bound to `effects`.
 * @example
 * const logic = withEnvSessionEffects({ resetEnv: async (i) => env.reset(i), stepEnv: async (a) => env.step(a), closeEnv: async () => env.close() });
 */
export function withEnvSessionEffects(effects: EnvSessionEffects) {
  return envSessionMachine.provide({
    actors: {
      resetEnv: fromPromise<Observation, { taskIndex: number }>(({ input, signal }) => effects.resetEnv(input.taskIndex, signal)),
      stepEnv: fromPromise<StepResult, { actionText: string }>(({ input, signal }) => effects.stepEnv(input.actionText, signal)),
      closeEnv: fromPromise<void, Record<string, never>>(({ signal }) => effects.closeEnv(signal)),
    },
  });
}
