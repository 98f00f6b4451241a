/**
 * Shared data types that cross actor and process boundaries.
 *
 * Everything here must survive the msgpackr codec (see `src/bus/codec.ts`): plain objects,
 * numbers, strings, booleans, arrays and typed arrays only — no class instances, no functions.
 */

/** Task item id as AgentGym writes it, e.g. `babyai_12` (environment name, underscore, integer index). */
export type TaskId = string;

/**
 * How an episode ended. `truncated`: the horizon in force was reached; `length`: truncated by
 * length — the context had no room for another reply (the model's context, or the interaction's
 * token budget `context.chat.maxResponseTokens`); `error`: the environment or policy failed.
 */
export type Outcome = 'success' | 'failure' | 'truncated' | 'length' | 'error';

/** Train/test split of an environment's tasks. */
export type Split = 'train' | 'test';

/** What the environment shows the agent after `reset` or `step`. */
export interface Observation {
  /** Text shown to the agent. */
  readonly text: string;
  /** Valid action strings, when the environment enumerates them (used for constrained decoding). */
  readonly availableActions?: readonly string[];
}

/** Result of one environment step. */
export interface StepResult {
  readonly observation: Observation;
  /** Reward for this step (AgentGym-RL uses the last step's reward as the trajectory reward). */
  readonly reward: number;
  /** True when the episode is over (success or failure decided by the environment). */
  readonly done: boolean;
  /** True when the environment judged the task solved. */
  readonly success?: boolean;
  /** Free-form details (parsed action, invalid flag, ...). JSON-safe. */
  readonly info?: Readonly<Record<string, string | number | boolean | null>>;
}

/**
 * Token-level constraint used when the action was decoded: for action position `j`, the allowed
 * token ids are `allowedIds[allowedOffsets[j] .. allowedOffsets[j + 1])`. CSR layout so that it is
 * compact and typed-array friendly. `null` when decoding was unconstrained.
 */
export interface DecodeConstraint {
  /** [actionLen + 1] offsets into `allowedIds`. */
  readonly allowedOffsets: Int32Array;
  /** [sum of allowed-set sizes] token ids. */
  readonly allowedIds: Int32Array;
}

/** One agent turn: the tokens appended to the context before acting, then the action the policy produced. */
export interface Turn {
  /** Index of this turn within its episode, from 0. */
  readonly index: number;
  /** Observation text the agent saw before acting. */
  readonly observationText: string;
  /**
   * [promptLen] the exact context tokens the policy conditioned on for this turn (built by
   * `src/models/context.ts`). The learner trains on these ids as they are: token-in, token-out.
   */
  readonly promptTokens: Int32Array;
  /** Raw action text produced by the policy (decoded from `actionTokens`). */
  readonly actionText: string;
  /** [actionLen] sampled token ids — what the learner trains on; never re-tokenized. */
  readonly actionTokens: Int32Array;
  /** [actionLen] behaviour log-probs of `actionTokens` under the (masked) sampling distribution. */
  readonly actionLogprobs: Float32Array;
  /** [actionLen] 1 where the token was a real choice (trains), 0 where it was forced by the constraint. */
  readonly actionLossMask: Uint8Array;
  /** Per-position allowed sets for constrained decoding, or null. */
  readonly constraint: DecodeConstraint | null;
  /** Version of the weights that produced this action. */
  readonly policyVersion: number;
  /** Reward the environment returned for this action. */
  readonly reward: number;
  /** True when the environment flagged the action as invalid or unparsable. */
  readonly invalidAction: boolean;
  /**
   * Reward the run's process-reward hook (`reward.shaper`) gave this turn; absent without a hook.
   * Trained on with `reward.mode: outcome+shaped` (see `src/algorithms/reward-modes.ts`).
   */
  readonly shapedReward?: number;
  /**
   * [actionLen] entropy in nats of the distribution each action token was drawn from (the
   * allowed-set distribution when `constraint` is set, the full vocabulary otherwise; 0 on forced
   * tokens); absent when the policy does not report it (text policies).
   */
  readonly entropies?: Float32Array;
}

/** A finished episode, as the learner receives it. */
export interface Trajectory {
  readonly trajectoryId: string;
  readonly taskId: TaskId;
  /** Episodes sampled from the same task in the same step share a group id (GRPO/RLOO groups). */
  readonly groupId: string;
  /** Training step whose rollout produced this trajectory. */
  readonly step: number;
  readonly turns: readonly Turn[];
  /** Outcome reward: the last step's reward, as AgentGym-RL defines it. */
  readonly reward: number;
  readonly outcome: Outcome;
  /** Horizon (max agent turns) in force when the episode started. */
  readonly horizon: number;
  /** Final observation after the last action (not trained on, kept for the viewer). */
  readonly finalObservationText: string;
  /** Error message when `outcome === 'error'`. */
  readonly error?: string;
}
