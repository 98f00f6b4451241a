/**
 * Policy calls, named by phase (RLlib style): `sampleActions` for rollouts (exploration, returns
 * behaviour log-probs and the weights version), `greedyActions` for evaluation. Training goes
 * through the model's `forwardTrain` (see `src/models/transformer/model.ts`).
 */
import type { Rng } from './rng.js';
import type { DecodeConstraint } from './types.js';

/**
 * A grammar free generation is kept to (serve's tool calls): asked for the ids allowed next before
 * each token, told the id chosen after. Stateful and in-process: a policy that cannot consult it
 * while decoding (a worker, a remote engine) refuses a request that carries one.
 */
export interface GrammarConstraint {
  /** The ids allowed next, ascending, never empty. */
  allowed(): Int32Array;
  /** Records the id chosen. */
  accept(id: number): void;
}

/** One generation request: a context and, for constrained decoding, the allowed actions. */
export interface ActRequest {
  /** [contextLen] token ids the policy conditions on (ends with the `<|act|>` token). */
  readonly contextTokens: Int32Array;
  /**
   * Allowed actions as token sequences, each ending with the `<|end|>` id, or null for free
   * generation (stops at `<|end|>` or `maxNewTokens`).
   */
  readonly actionChoices: readonly Int32Array[] | null;
  /**
   * Per-request sampling seed. When present, this request's random draws come from
   * `Rng.fromSeed(seed)` instead of the batch `rng`, so what an episode samples does not depend on
   * which other requests shared its batch (dynamic batching stays deterministic).
   */
  readonly seed?: number;
  /**
   * Key of the episode this request belongs to (e.g. the trajectory id). When present, a policy
   * that caches may keep this episode's keys/values after the turn and, next turn, prefill only
   * the tokens the context gained. Results never depend on it (caching changes speed only).
   */
  readonly episodeId?: string;
  /** True when the episode will not act again (its last turn): nothing is kept for it. */
  readonly lastTurn?: boolean;
  /**
   * Ids that end free generation (a chat model's end-of-turn and eos ids); default the policy's
   * own. Constrained choices always end with the policy's end id.
   */
  readonly stopTokenIds?: readonly number[];
  /**
   * Keeps free generation to a grammar (not with `actionChoices`). Log-probs are then under the
   * distribution masked to its allowed ids, and `ActResult.constraint` stays null: the allowed sets
   * are not recorded, so such results are for serving, not for training.
   */
  readonly grammar?: GrammarConstraint;
  /** Most tokens this request may generate (e.g. what is left of an episode's token budget); at most the call's `maxNewTokens`. */
  readonly maxNewTokens?: number;
  /**
   * Alternatives to return per generated token: the k most likely ids (and their log-probs) of the
   * distribution the token was drawn from (for OpenAI-style `top_logprobs`). Default 0: none.
   */
  readonly topLogprobs?: number;
}

/**
 * The k most likely ids at each generated position, `[n, k]` row-major, most likely first (ties:
 * lower id first), under the same masked, temperature-scaled distribution as `ActResult.logprobs`.
 * A position with fewer than k allowed ids is padded with id -1 and log-prob -Infinity.
 */
export interface TopLogprobs {
  readonly k: number;
  /** [n * k] ids. */
  readonly ids: Int32Array;
  /** [n * k] log-probs. */
  readonly logprobs: Float32Array;
}

/** What the policy produced for one request. */
export interface ActResult {
  /** [n] generated ids, including the closing `<|end|>` when produced. */
  readonly tokens: Int32Array;
  /** [n] log-prob of each token under the (masked, temperature-scaled) sampling distribution. */
  readonly logprobs: Float32Array;
  /** [n] 1 where the token was a real choice, 0 where it was forced (single allowed token). */
  readonly lossMask: Uint8Array;
  /**
   * [n] entropy in nats of the distribution each token was drawn from: over the allowed ids when
   * `constraint` is set, over the full vocabulary otherwise, temperature-scaled (the distribution
   * `logprobs` are under; before top-p truncation); 0 for forced tokens. Absent when the policy
   * cannot tell (e.g. a remote chat model).
   */
  readonly entropies?: Float32Array;
  /** Allowed sets per position (CSR), or null when unconstrained. */
  readonly constraint: DecodeConstraint | null;
  /** Weights version that produced the tokens. */
  readonly policyVersion: number;
  /** Why generation stopped: a stop id or a complete action (`stop`), or the token limit (`length`). */
  readonly finishReason?: 'stop' | 'length';
  /** The alternatives the request asked for (`ActRequest.topLogprobs` > 0), else absent. */
  readonly topLogprobs?: TopLogprobs;
}

export interface SamplingOptions {
  /** Softmax temperature (> 0). */
  readonly temperature: number;
  /** Nucleus sampling mass in (0, 1]. */
  readonly topP: number;
  /** Cap on generated tokens per action. */
  readonly maxNewTokens: number;
}

/** A policy that can act: local tfjs model, remote API, scripted. */
export interface Policy {
  /** Current weights version (0 = initial). */
  readonly version: number;
  /** Rollout sampling; batched over all requests. Randomness only from `rng`. */
  sampleActions(requests: readonly ActRequest[], options: SamplingOptions, rng: Rng): Promise<ActResult[]>;
  /** Deterministic argmax decoding for evaluation. */
  greedyActions(requests: readonly ActRequest[], maxNewTokens: number): Promise<ActResult[]>;
  /** Frees whatever the policy keeps for these episodes (they ended); optional, ids it never saw are ignored. */
  releaseEpisodes?(episodeIds: readonly string[]): void;
}
