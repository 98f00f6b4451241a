/**
 * A trained model as the batched policy of the flow path (`turnwise simulate --policy
 * checkpoint:<run>`, issue #20): each turn's token context is built exactly as the training path's
 * episode builds it (`buildContext` over the ids the model sampled, never re-tokenized; the same
 * per-turn seed, episode id and last-turn flag), sent to the sampler's dynamic batcher through
 * `act`, and the sampled ids are decoded into the action text. The episodes therefore play the same
 * actions as `RolloutRunner` with the same sampler; only the runtime around them is cheaper.
 *
 * Per lane it keeps the episode's past turns (observation text plus the sampled ids), as the
 * episode actor does; the text side's layout decides how many go into each context. Unlike the
 * episode actor it does not end an episode early when the context leaves no room for a reply (the
 * request then asks for one token).
 */
import { turnSeed } from '../../actors/episode-rules.js';
import type { ActRequest, ActResult } from '../../core/policy.js';
import type { PastTurn } from '../../models/context.js';
import type { PolicyText } from '../../models/policy-text.js';
import type { FlowPolicy, FlowTurn } from './flow-policies.js';

/** Options of {@link modelFlowPolicy}. */
export interface ModelFlowPolicyOptions {
  readonly description: string;
  /** A wave's act requests to the sampler (its batcher groups them with other waves'), results in order. */
  readonly act: (requests: readonly ActRequest[]) => Promise<ActResult[]>;
  /** Episodes ended: free their KV caches in the sampler. */
  readonly release: (episodeIds: readonly string[]) => void;
  /** The run's text side: context layout (turnwise's or a chat template), action choices, reply text. */
  readonly text: PolicyText;
  /** The environment's instruction (used when the context layout includes it). */
  readonly instruction: string;
  /** Constrain decoding to the listed actions when the environment lists them. */
  readonly constrained: boolean;
  /** The sampling cap of a reply (`sampling.maxActionTokens`), applied with the context's own reply budget. */
  readonly maxActionTokens: number;
  readonly horizon: number;
}

/** Turns whose contexts are built in one event-loop turn (about 2 ms of tokenizing at ~40 µs each). */
const CONTEXT_CHUNK = 48;

interface LaneState {
  episodeId: string;
  past: PastTurn[];
}

/**
 * The flow policy of a served model.
 * @example const policy = modelFlowPolicy({ description: 'checkpoint runs/x', act, release, tokenizer, instruction, context, constrained: true, horizon: 20 });
 */
export function modelFlowPolicy(options: ModelFlowPolicyOptions): FlowPolicy {
  const { text, instruction, constrained, horizon, maxActionTokens } = options;
  const lanes: (LaneState | undefined)[] = [];
  // As the episode path builds it (src/runtime/rollout.ts): the whole history goes in; the layout keeps what it keeps.
  const request = (turn: FlowTurn, state: LaneState): ActRequest => {
    const input = { instruction, pastTurns: state.past, observationText: turn.observation.text };
    const contextTokens = text.context(input);
    const budget = text.replyBudget(input, contextTokens);
    const actions = turn.observation.availableActions;
    const actionChoices = constrained && actions !== undefined && actions.length > 0 ? text.actionChoices(actions) : null;
    const limit = Number.isFinite(budget) ? Math.min(budget, maxActionTokens) : undefined;
    return {
      contextTokens,
      actionChoices,
      seed: turnSeed(turn.seed, turn.turnCount),
      episodeId: state.episodeId,
      lastTurn: turn.turnCount + 1 >= horizon,
      ...(limit === undefined ? {} : { maxNewTokens: Math.max(1, limit) }),
    };
  };
  return {
    description: options.description,
    begin(lane, _observation, episodeId) {
      lanes[lane] = { episodeId: episodeId ?? `lane-${lane}`, past: [] };
    },
    end(lane) {
      const state = lanes[lane];
      if (state === undefined) return;
      lanes[lane] = undefined;
      options.release([state.episodeId]);
    },
    async act(turns) {
      const states = turns.map((turn) => lanes[turn.lane] as LaneState);
      // Contexts are built (tokenized) in chunks, one event-loop turn each, and each chunk goes to
      // the sampler at once: a wave of hundreds of turns would otherwise hold the loop for tens of ms.
      const pending: Promise<ActResult[]>[] = [];
      for (let from = 0; from < turns.length; from += CONTEXT_CHUNK) {
        if (from > 0) await new Promise<void>((resolve) => setImmediate(resolve));
        const chunk = turns.slice(from, from + CONTEXT_CHUNK);
        pending.push(options.act(chunk.map((turn, k) => request(turn, states[from + k] as LaneState))));
      }
      const results = (await Promise.all(pending)).flat();
      return turns.map((turn, i) => {
        const tokens = (results[i] as ActResult).tokens;
        const state = states[i] as LaneState;
        state.past.push({ observationText: turn.observation.text, actionTokens: tokens });
        return text.actionText(tokens);
      });
    },
  };
}
