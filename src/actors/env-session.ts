/**
 * The env-session actor: one environment instance serving episodes one call at a time.
 *
 * States: `idle → resetting → ready ⇄ stepping`, `closing → closed`, and `failed`. Every call has a
 * deadline (`envTimeoutMs`, an xstate `after` delay, so a simulated clock drives it in tests); a
 * missed deadline or a thrown error ends in `failed` with an `EnvironmentError` message. Each
 * request is answered by exactly one emitted event, so an adapter (see `src/runtime/wiring/message-flow.ts`)
 * can turn the actor into a request/reply service.
 */
import { assign, emit, setup } from 'xstate';
import { EnvironmentError, TurnwiseError } from '../core/errors.js';
import type { Observation, StepResult } from '../core/types.js';
import { abandonEffect, type EffectTarget, startEffect } from './effect-call.js';

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
 * The outcomes of the session's own environment calls, sent to it by `effect-call.ts` (an invoke
 * without a child actor); nothing else sends them.
 */
export type EnvCallEvents =
  | { readonly type: 'ENV_RESET'; readonly observation: Observation }
  | { readonly type: 'ENV_STEPPED'; readonly result: StepResult }
  | { readonly type: 'ENV_CLOSED' }
  | { readonly type: 'ENV_FAILED'; readonly error: unknown };

type EnvSessionEvent = EnvSessionAccepts | EnvCallEvents;

/** What an environment-call action reads: the context, and the actor its outcome goes back to. */
interface CallArgs {
  readonly context: EnvSessionContext;
  readonly self: EffectTarget<EnvSessionEvent>;
}

const envFailed = (error: unknown): EnvSessionEvent => ({ type: 'ENV_FAILED', error });

/** The entry actions that call the environment through `effects` (and the exit that abandons a call). */
function callActions(effectsOf: () => EnvSessionEffects) {
  return {
    callReset: ({ context, self }: CallArgs) =>
      startEffect(self, (signal) => effectsOf().resetEnv(context.pendingTaskIndex, signal), (observation): EnvSessionEvent => ({ type: 'ENV_RESET', observation }), envFailed),
    callStep: ({ context, self }: CallArgs) =>
      startEffect(self, (signal) => effectsOf().stepEnv(context.pendingAction, signal), (result): EnvSessionEvent => ({ type: 'ENV_STEPPED', result }), envFailed),
    callClose: ({ self }: CallArgs) => startEffect(self, (signal) => effectsOf().closeEnv(signal), (): EnvSessionEvent => ({ type: 'ENV_CLOSED' }), envFailed),
    abandonCall: ({ self }: CallArgs) => abandonEffect(self),
  };
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
    events: {} as EnvSessionEvent,
    emitted: {} as EnvSessionEmits,
    input: {} as EnvSessionInput,
  },
  delays: {
    envTimeout: ({ context }) => context.envTimeoutMs,
  },
  actions: {
    ...callActions(() => ({ resetEnv: () => notProvided('resetEnv'), stepEnv: () => notProvided('stepEnv'), closeEnv: () => notProvided('closeEnv') })),
    reject: emit(({ event }, params: { reason: string } | undefined) => ({
      type: 'REJECTED' as const,
      request: event.type as EnvSessionAccepts['type'],
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
      entry: 'callReset',
      exit: 'abandonCall',
      on: {
        ENV_RESET: {
          target: 'ready',
          actions: [assign({ episodes: ({ context }) => context.episodes + 1 }), emit(({ event }) => ({ type: 'RESET_DONE' as const, observation: event.observation }))],
        },
        ENV_FAILED: {
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
      entry: 'callStep',
      exit: 'abandonCall',
      on: {
        ENV_STEPPED: { target: 'ready', actions: emit(({ event }) => ({ type: 'STEP_DONE' as const, result: event.result })) },
        ENV_FAILED: {
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
      entry: 'callClose',
      exit: 'abandonCall',
      on: {
        ENV_CLOSED: 'closed',
        // A failing close still leaves nothing to use: report it as closed with the error kept.
        ENV_FAILED: { target: 'closed', actions: assign({ error: ({ context, event }) => envErrorMessage(context.envName, 'close', event.error) }) },
        CLOSE: {},
      },
      after: { envTimeout: 'closed' },
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
  return envSessionMachine.provide({ actions: callActions(() => effects) });
}
