/**
 * The run store's record types (what callers read and write), the SQLite row shapes behind them,
 * and the conversions between the two. Kept apart so that `run-store.ts` reads as the SQL it runs.
 */
import { InvalidArgumentError } from '../core/errors.js';
import type { Outcome, TaskId, Trajectory } from '../core/types.js';

/** Life cycle of a run. */
export type RunStatus = 'running' | 'completed' | 'failed' | 'interrupted';
export const RUN_STATUSES: readonly RunStatus[] = ['running', 'completed', 'failed', 'interrupted'];

/** Which rollout an episode came from: training, a test-split evaluation, or an ad-hoc `turnwise eval`. */
export type EpisodeSplit = 'train' | 'test' | 'eval';
export const SPLITS: readonly EpisodeSplit[] = ['train', 'test', 'eval'];

/** What `createRun` needs. Timestamps come from the caller's clock, never from the store. */
export interface RunInit {
  readonly id: string;
  readonly name: string;
  /** Milliseconds since the Unix epoch. */
  readonly createdAt: number;
  /** The resolved config (JSON-serializable), stored as it is. */
  readonly config: unknown;
  /** Tensor backend in use (`tensorflow`, `wasm`, `cpu`). */
  readonly backend: string;
  readonly seed: number;
  readonly status?: RunStatus;
}

export interface RunRecord {
  readonly id: string;
  readonly name: string;
  readonly createdAt: number;
  readonly config: unknown;
  readonly status: RunStatus;
  readonly backend: string;
  readonly seed: number;
}

export interface MetricPoint {
  readonly step: number;
  /** NaN when NaN was logged. */
  readonly value: number;
}

export interface EpisodeRecord {
  readonly id: string;
  readonly runId: string;
  readonly step: number;
  readonly taskId: TaskId;
  readonly groupId: string;
  readonly split: EpisodeSplit;
  readonly outcome: Outcome;
  readonly reward: number;
  readonly turns: number;
  readonly horizon: number;
  /** Oldest and newest policy versions among the episode's turns (null for an episode with no turns). */
  readonly policyVersionMin: number | null;
  readonly policyVersionMax: number | null;
  readonly error: string | null;
  readonly finalObservation: string;
}

/** A stored turn: everything in `Turn` except the decode constraint. */
export interface StoredTurn {
  readonly index: number;
  readonly observationText: string;
  readonly actionText: string;
  readonly reward: number;
  readonly policyVersion: number;
  /** [promptLen] */
  readonly promptTokens: Int32Array;
  /** [actionLen] */
  readonly actionTokens: Int32Array;
  /** [actionLen] */
  readonly actionLogprobs: Float32Array;
  /** [actionLen] */
  readonly actionLossMask: Uint8Array;
  readonly invalidAction: boolean;
  /** The process-reward hook's reward for this turn; absent when the run had none. */
  readonly shapedReward?: number;
  /** [actionLen] entropy (nats) of each token's sampling distribution; absent when not recorded. */
  readonly entropies?: Float32Array;
}

export interface EpisodeFilter {
  /** Default: the active run. */
  readonly runId?: string;
  readonly step?: number;
  readonly fromStep?: number;
  readonly toStep?: number;
  readonly split?: EpisodeSplit;
  readonly outcome?: Outcome;
  readonly taskId?: TaskId;
  readonly groupId?: string;
  /** Default 1000. */
  readonly limit?: number;
  readonly offset?: number;
}

export interface RunEvent {
  readonly step: number;
  /** e.g. `horizon.stage`, `checkpoint.saved`, `run.resumed`. */
  readonly kind: string;
  readonly message: string;
  readonly data: unknown;
}

export interface RunStoreOptions {
  /** Open an existing store for reading only (viewers); writes throw. */
  readonly readonly?: boolean;
}

export interface RunRow {
  id: string;
  name: string;
  created_at: number;
  config_json: string;
  status: RunStatus;
  backend: string;
  seed: number;
}

export interface EpisodeRow {
  id: string;
  run_id: string;
  step: number;
  task_id: string;
  group_id: string;
  split: EpisodeSplit;
  outcome: Outcome;
  reward: number;
  turns: number;
  horizon: number;
  policy_version_min: number | null;
  policy_version_max: number | null;
  error: string | null;
  final_observation: string;
}

export interface TurnRow {
  idx: number;
  observation: string;
  action: string;
  reward: number;
  policy_version: number;
  prompt_tokens: Buffer;
  action_tokens: Buffer;
  logprobs: Buffer;
  loss_mask: Buffer;
  invalid: number;
  /** Absent (undefined) in a schema-1 file. */
  shaped_reward?: number | null;
  entropies?: Buffer | null;
}

export function toRun(row: RunRow): RunRecord {
  return {
    id: row.id,
    name: row.name,
    createdAt: row.created_at,
    config: JSON.parse(row.config_json),
    status: row.status,
    backend: row.backend,
    seed: row.seed,
  };
}

export function toEpisode(row: EpisodeRow): EpisodeRecord {
  return {
    id: row.id,
    runId: row.run_id,
    step: row.step,
    taskId: row.task_id,
    groupId: row.group_id,
    split: row.split,
    outcome: row.outcome,
    reward: row.reward,
    turns: row.turns,
    horizon: row.horizon,
    policyVersionMin: row.policy_version_min,
    policyVersionMax: row.policy_version_max,
    error: row.error,
    finalObservation: row.final_observation,
  };
}

export const OUTCOMES: readonly Outcome[] = ['success', 'failure', 'truncated', 'length', 'error'];

/** Cheap shape checks so that a bad trajectory fails the batch with the field named, not deep in SQLite. */
export function checkTrajectory(t: Trajectory, path: string): void {
  const fail = (field: string, detail: string) => InvalidArgumentError.format(`${path}.${field}`, detail);
  if (typeof t?.trajectoryId !== 'string' || t.trajectoryId.length === 0) throw fail('trajectoryId', 'expected a non-empty string');
  if (!OUTCOMES.includes(t.outcome)) throw fail('outcome', `expected one of ${OUTCOMES.join(', ')}, got ${JSON.stringify(t.outcome)}`);
  if (!Number.isInteger(t.step) || t.step < 0) throw fail('step', `expected a non-negative integer, got ${t.step}`);
  // NaN would be stored as NULL (SQLite has no NaN), so it is refused with the other non-numbers.
  if (typeof t.reward !== 'number' || Number.isNaN(t.reward)) throw fail('reward', `expected a number, got ${t.reward}`);
  if (!Number.isInteger(t.horizon) || t.horizon < 0) throw fail('horizon', `expected a non-negative integer, got ${t.horizon}`);
  for (const field of ['taskId', 'groupId', 'finalObservationText'] as const) {
    if (typeof t[field] !== 'string') throw fail(field, `expected a string, got ${typeof t[field]}`);
  }
  if (!Array.isArray(t.turns)) throw fail('turns', 'expected an array');
  t.turns.forEach((turn, j) => {
    const at = `turns[${j}]`;
    if (typeof turn !== 'object' || turn === null) throw fail(at, `expected a turn object, got ${turn === null ? 'null' : typeof turn}`);
    if (!Number.isInteger(turn.index) || turn.index < 0) throw fail(`${at}.index`, `expected a non-negative integer, got ${turn.index}`);
    if (!Number.isInteger(turn.policyVersion)) throw fail(`${at}.policyVersion`, `expected an integer, got ${turn.policyVersion}`);
    if (typeof turn.observationText !== 'string') throw fail(`${at}.observationText`, `expected a string, got ${typeof turn.observationText}`);
    if (typeof turn.actionText !== 'string') throw fail(`${at}.actionText`, `expected a string, got ${typeof turn.actionText}`);
    if (typeof turn.reward !== 'number' || Number.isNaN(turn.reward)) throw fail(`${at}.reward`, `expected a number, got ${turn.reward}`);
    if (!(turn.promptTokens instanceof Int32Array)) throw fail(`${at}.promptTokens`, 'expected an Int32Array');
    if (!(turn.actionTokens instanceof Int32Array)) throw fail(`${at}.actionTokens`, 'expected an Int32Array');
    if (!(turn.actionLogprobs instanceof Float32Array)) throw fail(`${at}.actionLogprobs`, 'expected a Float32Array');
    if (!(turn.actionLossMask instanceof Uint8Array)) throw fail(`${at}.actionLossMask`, 'expected a Uint8Array');
    if (turn.shapedReward !== undefined && !Number.isFinite(turn.shapedReward)) throw fail(`${at}.shapedReward`, `expected a finite number, got ${turn.shapedReward}`);
    if (turn.entropies !== undefined && !(turn.entropies instanceof Float32Array && turn.entropies.length === turn.actionTokens.length)) {
      throw fail(`${at}.entropies`, `expected a Float32Array of ${turn.actionTokens.length} entries (one per action token)`);
    }
  });
}

export const nanToNull = (value: number): number | null => (Number.isNaN(value) ? null : value);
export const nullToNan = (value: number | null): number => (value === null ? Number.NaN : value);

