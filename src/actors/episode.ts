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
import { assign, emit, setup } from 'xstate';
import { TurnwiseError } from '../core/errors.js';
import type { Observation, Outcome, StepResult, Trajectory, Turn } from '../core/types.js';
import type { ActResult } from '../core/policy.js';
import { abandonEffect, type EffectTarget, startEffect } from './effect-call.js';
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

/**
 * The outcomes of the episode's own effect calls, sent to it by `effect-call.ts` (an invoke without
 * a child actor); nothing else sends them.
 */
export type EpisodeEffectEvents =
  | { readonly type: 'RESET_DONE'; readonly output: Observation }
  | { readonly type: 'ACT_DONE'; readonly output: EpisodeActResult }
  | { readonly type: 'STEP_DONE'; readonly output: StepResult }
  | { readonly type: 'EFFECT_FAILED'; readonly error: unknown };

type EpisodeEvent = EpisodeAccepts | EpisodeEffectEvents;

/** What an effect-starting action reads: the context, and the actor its outcome goes back to. */
interface EffectArgs {
  readonly context: EpisodeContext;
  readonly self: EffectTarget<EpisodeEvent>;
}

const effectFailed = (error: unknown): EpisodeEffectEvents => ({ type: 'EFFECT_FAILED', error });

function actRequestOf(context: EpisodeContext): EpisodeActRequest {
  return {
    taskId: context.input.taskId,
    step: context.input.step,
    instruction: context.input.instruction,
    turns: context.turns,
    observation: context.observation as Observation,
  };
}

/**
 * The three entry actions that start the episode's I/O, reading the effects with `effectsOf`
 * (the context's own, or those bound by {@link withEpisodeEffects}).
 */
function effectActions(effectsOf: (context: EpisodeContext, name: string) => EpisodeEffects) {
  return {
    callReset: ({ context, self }: EffectArgs) =>
      startEffect(self, (signal) => effectsOf(context, 'reset').reset(context.input.taskIndex, signal), (output): EpisodeEvent => ({ type: 'RESET_DONE', output }), effectFailed),
    callAct: ({ context, self }: EffectArgs) =>
      startEffect(self, (signal) => effectsOf(context, 'act').act(actRequestOf(context), signal), (output): EpisodeEvent => ({ type: 'ACT_DONE', output }), effectFailed),
    callStep: ({ context, self }: EffectArgs) =>
      startEffect(
        self,
        (signal) => effectsOf(context, 'step').step((context.pendingAct as EpisodeActResult).actText, signal),
        (output): EpisodeEvent => ({ type: 'STEP_DONE', output }),
        effectFailed,
      ),
    // The waiting state's exit: an answer that has not come is abandoned (a deadline or ABORT moved on).
    abandonCall: ({ self }: EffectArgs) => abandonEffect(self),
  };
}

const finish = (outcome: Outcome) => ({
  type: 'final' as const,
  entry: [{ type: 'setOutcome' as const, params: { outcome } }, { type: 'announce' as const }],
});

/**
 * The episode machine; its effects come with its input (`input.effects`) unless bound by
 * {@link withEpisodeEffects}. See {@link runEpisode}.
 * @example
 * const actor = createActor(withEpisodeEffects(effects), { input, clock }).start();
 * const trajectory = await toPromise(actor);
 */
export const episodeMachine = setup({
  types: {
    context: {} as EpisodeContext,
    events: {} as EpisodeEvent,
    emitted: {} as EpisodeEmits,
    input: {} as EpisodeInput,
    output: {} as Trajectory,
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
    ...effectActions((context, name) => context.effects ?? notProvided(name)),
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
      entry: 'callReset',
      exit: 'abandonCall',
      on: {
        RESET_DONE: { target: 'deciding', actions: assign({ observation: ({ event }) => event.output }) },
        EFFECT_FAILED: {
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
      entry: 'callAct',
      exit: 'abandonCall',
      on: {
        ACT_DONE: [
          { guard: ({ event }) => event.output.exhausted === true, target: 'length' },
          { target: 'stepping', actions: assign({ pendingAct: ({ event }) => event.output }) },
        ],
        EFFECT_FAILED: { target: 'error', actions: assign({ error: ({ event }) => episodeErrors.actFailed(event.error) }) },
      },
      after: {
        effectTimeout: {
          target: 'error',
          actions: assign({ error: ({ context }) => episodeErrors.actTimedOut(context.input.effectTimeoutMs) }),
        },
      },
    },
    stepping: {
      entry: 'callStep',
      exit: 'abandonCall',
      on: {
        STEP_DONE: {
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
        EFFECT_FAILED: {
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
  return episodeMachine.provide({ actions: effectActions(() => effects) });
}

/**
 * The machine for many episodes whose effects come with their input (`input.effects`): one
 * machine shared by all, where {@link withEpisodeEffects} builds one per call (xstate's `provide`).
 * @example const actor = createActor(episodeLogic, { input: { ...input, effects }, clock }).start();
 */
export const episodeLogic = episodeMachine;
