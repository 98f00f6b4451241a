/**
 * Runs many episodes at once: a pool of environment sessions (one env-session actor each, served
 * on the bus) and one episode actor per episode, whose `act` goes to the samplers over the bus.
 * Used for training rollouts and for evaluation alike.
 *
 * A session that fails (env crash or timeout) ends its episode as `error` — the episode machine
 * does that — and is replaced by a fresh instance, so the run goes on.
 *
 * Actions take the form `context.actions` resolves to (`tool-actions.ts`): listed, text, or tool
 * calls. With tools, a reply that is not exactly one valid call is answered with its error as the
 * next observation, without stepping the environment.
 */
import { createActor, toPromise } from 'xstate';
import { withEnvSessionEffects } from '../actors/env-session.js';
import { episodeLogic } from '../actors/episode.js';
import { turnSeed } from '../actors/episode-rules.js';
import type { Clock } from '../core/clock.js';
import type { ToolSpec } from '../core/tools.js';
import type { Trajectory } from '../core/types.js';
import type { EnvironmentSpec } from '../envs/environment.js';
import type { PolicyText } from '../models/policy-text.js';
import type { ActRequest } from '../core/policy.js';
import type { EpisodeActRequest, EpisodeActResult } from '../actors/episode.js';
import { InvalidArgumentError } from '../core/errors.js';
import { ContextLengthExceededError } from '../policies/context-length.js';
import { TEXT_POLICY_VERSION, type TextPolicy } from '../policies/text-policy.js';
import { type RewardShaping, shapeTrajectory } from '../algorithms/reward-shapers.js';
import type { Bus } from '../bus/bus.js';
import { createEnvPool, type EnvPool } from './env-pool/index.js';
import { serveEnvSession } from './wiring/env-session.js';
import { remoteEpisodeEffects } from './wiring/episode.js';
import type { Served } from './wiring/ports.js';
import { releaseEpisodes } from './wiring/sampler.js';
import { type ActionMode, type ActionsSetting, invalidToolStep, type ResolvedActions, resolveActions, type ToolReplyLike, toolActionOf } from './tool-actions.js';

/** One episode to run. */
export interface EpisodePlan {
  readonly taskId: string;
  readonly taskIndex: number;
  readonly groupId: string;
  readonly trajectoryId: string;
  /** Seed of this episode's sampling stream (each turn derives its own seed from it). */
  readonly seed: number;
}

/** How episodes build contexts and reach the environment. */
export interface RolloutOptions {
  readonly bus: Bus;
  readonly runId: string;
  readonly spec: EnvironmentSpec;
  readonly envSettings: Readonly<Record<string, unknown>>;
  /** Environment instances (and so episodes in flight). */
  readonly poolSize: number;
  /** Worker threads for the environment instances (`env.workers`); 0 or absent: in-process. */
  readonly envWorkers?: number;
  /** Builds token contexts for the samplers and decodes their replies; required unless `textPolicy` is given. */
  readonly text?: PolicyText;
  /** Most tokens of one reply (`sampling.maxActionTokens`); a context's remaining budget may lower it. */
  readonly maxActionTokens?: number;
  /** Constrain decoding to the environment's available actions when it lists them (`sampling.constrained`). */
  readonly constrained: boolean;
  /** How actions reach the environment (`context.actions`); default `auto` (see `tool-actions.ts`). */
  readonly actions?: ActionsSetting;
  readonly envTimeoutMs: number;
  readonly actTimeoutMs: number;
  readonly clock: Clock;
  /**
   * Act through a text-level policy (a remote chat model) instead of the samplers on the bus. Its
   * turns keep empty token fields and policy version {@link TEXT_POLICY_VERSION}.
   */
  readonly textPolicy?: TextPolicy;
  /**
   * Process-reward hook (`reward.shaper`): called once per turn of every finished episode, in turn
   * order, before the trajectory is handed on; its values land in `Turn.shapedReward`.
   */
  readonly shaping?: RewardShaping;
}

interface Session {
  readonly id: string;
  readonly served: Served;
  /** Stops the session; resolves once its environment has closed (a remote one gives its server-side instance back). */
  readonly stop: () => Promise<void>;
}

/**
 * A reusable pool that runs episode plans to trajectories.
 * @example
 * const runner = new RolloutRunner(options);
 * const trajectories = await runner.run(step, horizon, plans);
 * await runner.close();
 */
export class RolloutRunner {
  private readonly free: Session[] = [];
  private readonly instruction: string;
  private readonly actions: ResolvedActions;
  private readonly envPool: EnvPool;
  private nextSessionId = 0;

  constructor(private readonly options: RolloutOptions) {
    if (!options.textPolicy && !options.text) {
      throw InvalidArgumentError.format('rollout.text', 'a policy text side (tokenizer and context layout) is required unless a textPolicy is given');
    }
    const probe = options.spec.create({ settings: options.envSettings });
    this.instruction = probe.instruction();
    const envTools: readonly ToolSpec[] = probe.tools?.() ?? [];
    void probe.close();
    const text = options.text;
    this.actions = resolveActions({
      setting: options.actions ?? 'auto',
      constrained: options.constrained,
      envName: options.spec.name,
      envTools,
      toolText: options.textPolicy || text === undefined ? null : (tools) => text.toolText(tools),
    });
    this.envPool = createEnvPool(options.spec, options.envSettings, options.envWorkers ?? 0);
    for (let i = 0; i < options.poolSize; i++) this.free.push(this.openSession());
  }

  private openSession(): Session {
    const { bus, runId, spec, envTimeoutMs, clock } = this.options;
    const id = `env-${this.nextSessionId++}`;
    const env = this.envPool.open();
    const logic = withEnvSessionEffects({
      resetEnv: (taskIndex) => env.reset(taskIndex),
      stepEnv: (actionText) => env.step(actionText),
      closeEnv: () => env.close(),
    });
    const actor = createActor(logic, { input: { envName: spec.name, envTimeoutMs }, clock }).start();
    const served = serveEnvSession(bus, runId, id, actor);
    return {
      id,
      served,
      stop: async () => {
        served.close();
        actor.stop();
        await env.close();
      },
    };
  }

  /** Runs every plan (at most `poolSize` at a time) and returns trajectories in plan order. */
  async run(step: number, horizon: number, plans: readonly EpisodePlan[]): Promise<Trajectory[]> {
    const results: Trajectory[] = new Array(plans.length);
    await this.runStream(
      step,
      horizon,
      (index) => plans[index] ?? null,
      (index, trajectory) => {
        results[index] = trajectory;
      },
    );
    return results;
  }

  /**
   * Runs episodes while `nextPlan` gives plans (called with 0, 1, 2, …; null stops), at most
   * `poolSize` at a time, handing each trajectory to `onTrajectory` as it ends instead of keeping
   * it (long simulations hold only the live episodes).
   * @example await runner.runStream(0, 20, (i) => (i < 1000 ? planOf(i) : null), (i, t) => count(t));
   */
  async runStream(
    step: number,
    horizon: number,
    nextPlan: (index: number) => EpisodePlan | null,
    onTrajectory: (index: number, trajectory: Trajectory) => void,
  ): Promise<void> {
    let next = 0;
    let exhausted = false;
    const lane = async (): Promise<void> => {
      while (!exhausted) {
        const index = next++;
        const plan = nextPlan(index);
        if (plan === null) {
          exhausted = true;
          return;
        }
        const session = this.free.pop();
        if (!session) throw new Error('rollout pool exhausted'); // unreachable: one lane per session
        const trajectory = await this.runEpisode(session, step, horizon, plan);
        if (trajectory.outcome === 'error') {
          void session.stop().catch(() => undefined);
          this.free.push(this.openSession());
        } else {
          this.free.push(session);
        }
        onTrajectory(index, trajectory);
      }
    };
    await Promise.all(Array.from({ length: this.free.length }, lane));
  }

  private async runEpisode(session: Session, step: number, horizon: number, plan: EpisodePlan): Promise<Trajectory> {
    const { bus, runId, envTimeoutMs, actTimeoutMs, clock, maxActionTokens } = this.options;
    const text = this.options.text as PolicyText;
    const { actions } = this;
    const instruction = this.instruction;
    // A tool-calling reply that is no valid call: its error, shown by the step that follows it.
    let toolError: string | null = null;
    const toolAction = (reply: ToolReplyLike, tools: readonly ToolSpec[]): string => {
      const action = toolActionOf(reply, tools);
      toolError = action.error;
      return action.actionText;
    };
    const source = actions.mode === 'tools' && actions.toolText !== null ? actions.toolText : text;
    const codec = {
      toActRequest: (request: Parameters<typeof buildContextRequest>[0]) =>
        buildContextRequest(request, source, actions.mode === 'listed' ? (a) => text.actionChoices(a) : null, instruction, plan, horizon, maxActionTokens),
      decode: (tokens: Int32Array) => (actions.mode === 'tools' && actions.toolText !== null ? toolAction(actions.toolText.reply(tokens), actions.tools) : text.actionText(tokens)),
    };
    const remote = remoteEpisodeEffects(bus, runId, session.id, codec, { envTimeoutMs, actTimeoutMs });
    const { textPolicy } = this.options;
    const tools = actions.mode === 'tools' ? actions.tools : undefined;
    const effects = {
      ...remote,
      ...(textPolicy ? { act: textAct(textPolicy, plan, tools, toolAction) } : {}),
      ...(tools === undefined
        ? {}
        : {
            step: (actionText: string, signal: AbortSignal) => {
              const error = toolError;
              toolError = null;
              return error === null ? remote.step(actionText, signal) : Promise.resolve(invalidToolStep(error));
            },
          }),
    };
    const actor = createActor(episodeLogic, {
      input: {
        effects,
        taskId: plan.taskId,
        taskIndex: plan.taskIndex,
        groupId: plan.groupId,
        step,
        horizon,
        instruction,
        trajectoryId: plan.trajectoryId,
        effectTimeoutMs: Math.max(envTimeoutMs, actTimeoutMs) * 2,
      },
      clock,
    }).start();
    try {
      const trajectory = await toPromise(actor);
      return this.options.shaping ? await shapeTrajectory(trajectory, this.options.shaping) : trajectory;
    } finally {
      // Episodes that end before their last turn (done, error) still hold a KV cache in the sampler.
      releaseEpisodes(bus, runId, [plan.trajectoryId]);
    }
  }

  /** The environment's instruction text (shown before the first observation). */
  get environmentInstruction(): string {
    return this.instruction;
  }

  /** Stops every session. */
  async close(): Promise<void> {
    // Awaited so that remote environments give their server-side instances back before the run ends.
    await Promise.allSettled(this.free.splice(0).map((session) => session.stop()));
    await this.envPool.close();
  }

  /** How actions reach the environment in this runner (`context.actions` resolved). */
  get actionMode(): ActionMode {
    return this.actions.mode;
  }

  /** Where the environment instances run (`in-process` or `N worker threads`). */
  get envPlacement(): string {
    return this.envPool.description;
  }
}

/**
 * The episode's `act` effect for a text policy: same per-turn seed as the token path, empty token
 * fields. With tools, the reply's calls become the action (`toolAction` keeps the error of a reply
 * that is no valid call for the step).
 */
function textAct(policy: TextPolicy, plan: EpisodePlan, tools: readonly ToolSpec[] | undefined, toolAction: (reply: ToolReplyLike, tools: readonly ToolSpec[]) => string) {
  return async (request: EpisodeActRequest, signal: AbortSignal): Promise<EpisodeActResult> => {
    const empty = { tokens: new Int32Array(0), logprobs: new Float32Array(0), lossMask: new Uint8Array(0), constraint: null, policyVersion: TEXT_POLICY_VERSION };
    let reply: Awaited<ReturnType<TextPolicy['act']>>;
    try {
      reply = await policy.act(
        {
          episodeId: plan.trajectoryId,
          instruction: request.instruction,
          turns: request.turns.map((t) => ({ observationText: t.observationText, actionText: t.actionText })),
          observation: request.observation,
          seed: turnSeed(plan.seed, request.turns.length),
          ...(tools === undefined ? {} : { tools }),
        },
        signal,
      );
    } catch (error) {
      // The server's model has no room for this conversation: the episode ends by length, not in error.
      if (error instanceof ContextLengthExceededError) return { actText: '', result: empty, promptTokens: new Int32Array(0), exhausted: true };
      throw error;
    }
    if (tools === undefined) return { actText: reply.text, result: empty, promptTokens: new Int32Array(0) };
    const calls = reply.toolCalls ?? [];
    const read: ToolReplyLike =
      reply.toolCallError !== undefined
        ? { kind: 'malformed', content: reply.text, error: reply.toolCallError }
        : calls.length > 0
          ? { kind: 'calls', content: reply.text, calls }
          : { kind: 'text', content: reply.text };
    return { actText: toolAction(read, tools), result: empty, promptTokens: new Int32Array(0) };
  };
}

/**
 * Builds the sampler request for an episode's turn: exact context ids, action choices, seed, and
 * the reply's token limit where the context has a budget (`exhausted` when nothing is left).
 */
function buildContextRequest(
  request: {
    readonly turns: readonly { readonly observationText: string; readonly actionTokens: Int32Array }[];
    readonly observation: { readonly text: string; readonly availableActions?: readonly string[] };
  },
  text: Pick<PolicyText, 'context' | 'replyBudget'>,
  actionChoicesOf: ((actions: readonly string[]) => Int32Array[]) | null,
  instruction: string,
  plan: EpisodePlan,
  horizon: number,
  maxActionTokens: number | undefined,
): ActRequest & { readonly exhausted?: boolean } {
  const input = {
    instruction,
    pastTurns: request.turns.map((t) => ({ observationText: t.observationText, actionTokens: t.actionTokens })),
    observationText: request.observation.text,
  };
  const contextTokens = text.context(input);
  const budget = text.replyBudget(input, contextTokens);
  const actions = request.observation.availableActions;
  const actionChoices = actionChoicesOf !== null && actions && actions.length > 0 ? actionChoicesOf(actions) : null;
  // A listed action that cannot fit counts as no room too: its ids would be cut mid-action.
  const needed = actionChoices === null ? 1 : Math.min(...actionChoices.map((c) => c.length));
  const limit = Number.isFinite(budget) ? Math.min(budget, maxActionTokens ?? budget) : undefined;
  // episodeId lets a caching policy keep this episode's keys/values for its next turn; on the last
  // turn allowed by the horizon there is no next turn, so nothing is kept.
  return {
    contextTokens,
    actionChoices,
    seed: turnSeed(plan.seed, request.turns.length),
    episodeId: plan.trajectoryId,
    lastTurn: request.turns.length + 1 >= horizon,
    ...(limit === undefined ? {} : { maxNewTokens: Math.max(1, limit) }),
    ...(budget < needed ? { exhausted: true } : {}),
  };
}
