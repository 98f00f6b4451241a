/**
 * The episode actor: one episode of one task, from reset to an outcome, recording every turn as
 * the learner needs it (token-in, token-out: prompt ids, sampled ids, behaviour log-probs, loss
 * mask, constraint, policy version). Its final output is the {@link Trajectory}.
 *
 * States: `resetting → deciding → choosingAction → stepping → deciding → …` ending in one of the
 * final states `success | failure | truncated | length | error`. `deciding` is a transient state that
 * applies the rules in order: done+success → success; done → failure; agent turns = horizon →
 * truncated; else act again. Any failing or late effect ends in `error` with its message kept,
 * so the run goes on.
 */
import { assign, emit, fromPromise, setup } from 'xstate';
import { TurnwiseError } from '../core/errors.js';
import type { Observation, Outcome, StepResult, Trajectory, Turn } from '../core/types.js';
import type { ActResult } from '../core/policy.js';
import { envNameOf, episodeErrors, outcomeAfter } from './episode-rules.js';

/** Events the episode accepts. */
export type EpisodeAccepts =
  /** Give up now (run stopping): ends in `error` with the reason. */
  { readonly type: 'ABORT'; readonly reason: string };

/** Events the episode emits. */
export type EpisodeEmits =
  | { readonly type: 'TURN_RECORDED'; readonly trajectoryId: string; readonly turn: Turn }
  | { readonly type: 'EPISODE_FINISHED'; readonly trajectory: Trajectory };

/** What the `act` effect receives: everything needed to build the context (see `src/models/context.ts`). */
export interface EpisodeActRequest {
  readonly taskId: string;
  readonly step: number;
  readonly instruction: string;
  /** Turns taken so far in this episode. */
  readonly turns: readonly Turn[];
  /** Observation to act on. */
  readonly observation: Observation;
}

/** What the `act` effect returns: the decoded text, the sampler's result, and the exact prompt ids. */
export interface EpisodeActResult {
  readonly actText: string;
  readonly result: ActResult;
  /** [promptLen] context ids the policy conditioned on. */
  readonly promptTokens: Int32Array;
  /** True when the context left no room for a reply: nothing was generated, the episode ends as `length`. */
  readonly exhausted?: boolean;
}

/** The I/O an episode performs, injected. `signal` aborts when the call is abandoned (timeout, ABORT). */
export interface EpisodeEffects {
  reset(taskIndex: number, signal: AbortSignal): Promise<Observation>;
  act(request: EpisodeActRequest, signal: AbortSignal): Promise<EpisodeActResult>;
  step(actionText: string, signal: AbortSignal): Promise<StepResult>;
}

export interface EpisodeInput {
  readonly taskId: string;
  /** Integer part of the task id, passed to `reset`. */
  readonly taskIndex: number;
  readonly groupId: string;
  /** Training step whose rollout this episode belongs to. */
  readonly step: number;
  /** Max agent turns (read from the horizon actor when the episode starts). */
  readonly horizon: number;
  readonly instruction: string;
  /** Unique id; defaults to `${groupId}/${taskId}` — pass one when a group holds several episodes. */
  readonly trajectoryId?: string;
  /** Deadline of each reset/act/step call in ms of the actor's clock (default 300 000). */
  readonly effectTimeoutMs?: number;
  /**
   * The episode's I/O, for {@link episodeLogic}. Passing effects as input lets every episode share
   * one machine: `withEpisodeEffects` builds a new machine per call (xstate's `provide`), which
   * cost about a tenth of the CPU of a 10,000-episode simulation.
   */
  readonly effects?: EpisodeEffects;
}

export interface EpisodeContext {
  readonly input: Required<Omit<EpisodeInput, 'effects'>>;
  /** Effects given as input (see {@link episodeLogic}), else null. */
  readonly effects: EpisodeEffects | null;
  readonly envName: string;
  readonly observation: Observation | null;
  readonly turns: readonly Turn[];
  /** Latest act result, until its step returns. */
  readonly pendingAct: EpisodeActResult | null;
  readonly lastStep: StepResult | null;
  readonly outcome: Outcome | null;
  readonly error: string | null;
}

/** Default deadline of one effect call. */
export const DEFAULT_EFFECT_TIMEOUT_MS = 300_000;

function notProvided(name: string): never {
  throw new TurnwiseError(`episode effect '${name}' was not provided (use withEpisodeEffects)`);
}

/** The shared rules (`episode-rules.ts`) applied to this context. */
function outcomeOf(context: EpisodeContext): Outcome | null {
  return outcomeAfter(context.lastStep, context.turns.length, context.input.horizon);
}

/** Builds the Turn for the action just taken and the step that answered it. */
function recordTurn(context: EpisodeContext, step: StepResult): Turn {
  const act = context.pendingAct as EpisodeActResult;
  return {
    index: context.turns.length,
    observationText: context.observation?.text ?? '',
    promptTokens: act.promptTokens,
    actionText: act.actText,
    actionTokens: act.result.tokens,
    actionLogprobs: act.result.logprobs,
    actionLossMask: act.result.lossMask,
    constraint: act.result.constraint,
    policyVersion: act.result.policyVersion,
    reward: step.reward,
    invalidAction: step.info?.invalid === true,
    ...(act.result.entropies ? { entropies: act.result.entropies } : {}),
  };
}

/**
 * The trajectory an episode context stands for (also used as the machine's output).
 * @example const trajectory = toTrajectory(actor.getSnapshot().context);
 */
export function toTrajectory(context: EpisodeContext): Trajectory {
  const trajectory: Trajectory = {
    trajectoryId: context.input.trajectoryId,
    taskId: context.input.taskId,
    groupId: context.input.groupId,
    step: context.input.step,
    turns: context.turns,
    // AgentGym-RL: the trajectory reward is the last step's reward (overwritten, not summed).
    reward: context.lastStep?.reward ?? 0,
    outcome: context.outcome ?? 'error',
    horizon: context.input.horizon,
    finalObservationText: context.observation?.text ?? '',
  };
  return context.error === null ? trajectory : { ...trajectory, error: context.error };
}

/** What each effect actor receives: its arguments and the effects given as input (or null). */
type EffectInput<T> = T & { readonly effects: EpisodeEffects | null };

const finish = (outcome: Outcome) => ({
  type: 'final' as const,
  entry: [{ type: 'setOutcome' as const, params: { outcome } }, { type: 'announce' as const }],
});

/**
 * The episode machine with placeholder effects; see {@link withEpisodeEffects} and {@link runEpisode}.
 * @example
 * const actor = createActor(withEpisodeEffects(effects), { input, clock }).start();
 * const trajectory = await toPromise(actor);
 */
export const episodeMachine = setup({
  types: {
    context: {} as EpisodeContext,
    events: {} as EpisodeAccepts,
    emitted: {} as EpisodeEmits,
    input: {} as EpisodeInput,
    output: {} as Trajectory,
  },
  actors: {
    reset: fromPromise<Observation, EffectInput<{ taskIndex: number }>>(async () => notProvided('reset')),
    act: fromPromise<EpisodeActResult, EffectInput<EpisodeActRequest>>(async () => notProvided('act')),
    step: fromPromise<StepResult, EffectInput<{ actionText: string }>>(async () => notProvided('step')),
  },
  delays: {
    effectTimeout: ({ context }) => context.input.effectTimeoutMs,
  },
  guards: {
    isSuccess: ({ context }) => outcomeOf(context) === 'success',
    isDone: ({ context }) => outcomeOf(context) === 'failure',
    horizonReached: ({ context }) => outcomeOf(context) === 'truncated',
  },
  actions: {
    setOutcome: assign((_, params: { outcome: Outcome }) => ({ outcome: params.outcome })),
    announce: emit(({ context }) => ({ type: 'EPISODE_FINISHED' as const, trajectory: toTrajectory(context) })),
  },
}).createMachine({
  id: 'episode',
  context: ({ input: { effects, ...input } }) => ({
    input: {
      ...input,
      trajectoryId: input.trajectoryId ?? `${input.groupId}/${input.taskId}`,
      effectTimeoutMs: input.effectTimeoutMs ?? DEFAULT_EFFECT_TIMEOUT_MS,
    },
    effects: effects ?? null,
    envName: envNameOf(input.taskId),
    observation: null,
    turns: [],
    pendingAct: null,
    lastStep: null,
    outcome: null,
    error: null,
  }),
  initial: 'resetting',
  on: {
    ABORT: { target: '.error', actions: assign({ error: ({ event }) => episodeErrors.aborted(event.reason) }) },
  },
  states: {
    resetting: {
      invoke: {
        id: 'reset',
        src: 'reset',
        input: ({ context }) => ({ taskIndex: context.input.taskIndex, effects: context.effects }),
        onDone: { target: 'deciding', actions: assign({ observation: ({ event }) => event.output }) },
        onError: {
          target: 'error',
          actions: assign({ error: ({ context, event }) => episodeErrors.resetFailed(context.envName, context.input.taskIndex, event.error) }),
        },
      },
      after: {
        effectTimeout: {
          target: 'error',
          actions: assign({
            error: ({ context }) => episodeErrors.resetTimedOut(context.envName, context.input.effectTimeoutMs),
          }),
        },
      },
    },
    deciding: {
      always: [
        { guard: 'isSuccess', target: 'success' },
        { guard: 'isDone', target: 'failure' },
        { guard: 'horizonReached', target: 'truncated' },
        { target: 'choosingAction' },
      ],
    },
    choosingAction: {
      invoke: {
        id: 'act',
        src: 'act',
        input: ({ context }) => ({
          taskId: context.input.taskId,
          step: context.input.step,
          instruction: context.input.instruction,
          turns: context.turns,
          observation: context.observation as Observation,
          effects: context.effects,
        }),
        onDone: [
          { guard: ({ event }) => event.output.exhausted === true, target: 'length' },
          { target: 'stepping', actions: assign({ pendingAct: ({ event }) => event.output }) },
        ],
        onError: { target: 'error', actions: assign({ error: ({ event }) => episodeErrors.actFailed(event.error) }) },
      },
      after: {
        effectTimeout: {
          target: 'error',
          actions: assign({ error: ({ context }) => episodeErrors.actTimedOut(context.input.effectTimeoutMs) }),
        },
      },
    },
    stepping: {
      invoke: {
        id: 'step',
        src: 'step',
        input: ({ context }) => ({ actionText: (context.pendingAct as EpisodeActResult).actText, effects: context.effects }),
        onDone: {
          target: 'deciding',
          actions: [
            assign(({ context, event }) => ({
              turns: [...context.turns, recordTurn(context, event.output)],
              observation: event.output.observation,
              lastStep: event.output,
              pendingAct: null,
            })),
            emit(({ context }) => ({
              type: 'TURN_RECORDED' as const,
              trajectoryId: context.input.trajectoryId,
              turn: context.turns[context.turns.length - 1] as Turn,
            })),
          ],
        },
        onError: {
          target: 'error',
          actions: assign({ error: ({ context, event }) => episodeErrors.stepFailed(context.envName, event.error) }),
        },
      },
      after: {
        effectTimeout: {
          target: 'error',
          actions: assign({ error: ({ context }) => episodeErrors.stepTimedOut(context.envName, context.input.effectTimeoutMs) }),
        },
      },
    },
    success: finish('success'),
    failure: finish('failure'),
    truncated: finish('truncated'),
    length: finish('length'),
    error: finish('error'),
  },
  output: ({ context }) => toTrajectory(context),
});

/**
 * The episode machine with its I/O bound to `effects`.
 * @example const logic = withEpisodeEffects({ reset, act, step });
 */
export function withEpisodeEffects(effects: EpisodeEffects) {
  return episodeMachine.provide({
    actors: {
      reset: fromPromise<Observation, EffectInput<{ taskIndex: number }>>(({ input, signal }) => Promise.resolve(effects.reset(input.taskIndex, signal))),
      act: fromPromise<EpisodeActResult, EffectInput<EpisodeActRequest>>(({ input, signal }) => Promise.resolve(effects.act(actRequestOf(input), signal))),
      step: fromPromise<StepResult, EffectInput<{ actionText: string }>>(({ input, signal }) => Promise.resolve(effects.step(input.actionText, signal))),
    },
  });
}

function actRequestOf(input: EffectInput<EpisodeActRequest>): EpisodeActRequest {
  const { effects: _, ...request } = input;
  return request;
}

function effectsOf(input: { readonly effects: EpisodeEffects | null }, name: string): EpisodeEffects {
  return input.effects ?? notProvided(name);
}

/**
 * One episode machine for every episode, whose effects come with its input (`input.effects`);
 * cheaper than {@link withEpisodeEffects} when thousands of episodes start.
 * @example const actor = createActor(episodeLogic, { input: { ...input, effects }, clock }).start();
 */
export const episodeLogic = episodeMachine.provide({
  actors: {
    reset: fromPromise<Observation, EffectInput<{ taskIndex: number }>>(({ input, signal }) => Promise.resolve(effectsOf(input, 'reset').reset(input.taskIndex, signal))),
    act: fromPromise<EpisodeActResult, EffectInput<EpisodeActRequest>>(({ input, signal }) => Promise.resolve(effectsOf(input, 'act').act(actRequestOf(input), signal))),
    step: fromPromise<StepResult, EffectInput<{ actionText: string }>>(({ input, signal }) => Promise.resolve(effectsOf(input, 'step').step(input.actionText, signal))),
  },
});
