/**
 * The Environment contract (text in, text out), as AgentGym's servers expose it.
 *
 * An environment instance is stateful and serves one episode at a time: `reset(taskIndex)` starts
 * an episode, `step(actionText)` advances it. The environment parses the agent's raw text itself
 * (AgentGym's `Thought: ... Action: ...` format and a bare action) and answers an unparsable
 * action with a clear observation (and `info.invalid = true`), never by throwing.
 */
import type { Observation, Split, StepResult } from '../core/types.js';
import type { RandomActionSource } from './random-action.js';
import type { ToolSpec } from './tools.js';

export interface Environment {
  /** Registry name, e.g. `babyai`. Task ids are `${name}_${index}`. */
  readonly name: string;
  /** The instruction given to the agent before the first observation (AgentGym's conversation_start[0]). */
  instruction(): string;
  /** Starts the episode for task `index` (the integer part of the task id). Deterministic in `index`. */
  reset(index: number): Promise<Observation> | Observation;
  /** Applies the agent's raw text. */
  step(actionText: string): Promise<StepResult> | StepResult;
  /** Releases resources. Idempotent. */
  close(): Promise<void> | void;
  /**
   * Text rendering of the true state for viewers and debugging (optional).
   * Not shown to the agent.
   */
  render?(): string;
  /**
   * The environment's actions as function declarations (optional). An environment that declares
   * tools accepts a call's canonical text (`toolCallText` in `./tools.ts`) as its `step` action.
   */
  tools?(): readonly ToolSpec[];
}

/** Which task indices belong to each split, and an optional category per task (for reporting). */
export interface TaskCatalog {
  /** Task indices of a split, in a fixed order. */
  indices(split: Split): readonly number[];
  /** Reporting category of a task (e.g. BabyAI `GoTo`), or undefined. */
  category?(index: number): string | undefined;
}

/** Options every environment factory accepts. */
export interface EnvironmentOptions {
  /** Environment-specific settings from the run config (e.g. `{ levels: ['GoToRedBall'] }`). */
  readonly settings?: Readonly<Record<string, unknown>>;
}

/** A registered environment: how to make instances and which tasks exist. */
export interface EnvironmentSpec {
  readonly name: string;
  /** One line for `turnwise envs` and docs/environments.md. */
  readonly description: string;
  create(options?: EnvironmentOptions): Environment;
  catalog(options?: EnvironmentOptions): TaskCatalog;
  /**
   * Sample text used to train the tokenizer: instruction, observations and actions the
   * environment produces over `episodes` random episodes. Deterministic in `seed`.
   */
  corpus(options: EnvironmentOptions | undefined, episodes: number, seed: number): string[];
  /**
   * A random valid-looking action for observations that list no actions (free modes), used by
   * `simulate --policy random`; absent when every observation lists its actions.
   */
  readonly randomAction?: RandomActionSource;
  /**
   * Whether the environment, with these settings, pays rewards on turns before the last (a shaped
   * per-turn reward), which `reward.mode: sum` needs. Absent: not known (e.g. a remote AgentGym
   * server), so `sum` is allowed.
   */
  paysTurnRewards?(options?: EnvironmentOptions): boolean;
}
