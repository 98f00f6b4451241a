/**
 * The staleness bound η of asynchronous training, as pure functions over versions and
 * trajectories (no actors, no clock), so that the admission rule, the training-time check and
 * the persisted state can each be tested by hand.
 *
 * Versions: the learner trains batch `b` with weights version `b` (it starts at version 0, or at
 * the checkpoint's version = completed steps, and each step adds one), producing version `b + 1`.
 * A token made by version `p` and trained in batch `b` has staleness `b − p`. Batches are filled
 * in admission order, and a sampler's version never goes down, so admitting an episode of batch
 * `b` only while the samplers hold version `≥ b − η` bounds every token of it by η — whether the
 * episode later continues with newer weights or finishes with the old ones. The training-time
 * check ({@link splitByStaleness}) is the safety net: anything over η is rejected and counted.
 */
import { CheckpointError } from '../../core/errors.js';
import type { Trajectory } from '../../core/types.js';

/**
 * True when an episode of `batch` may start while the samplers hold `samplerVersion`.
 * @example admissible(5, 4, 1); // true: staleness at most 1
 * admissible(6, 4, 1); // false: it would be trained 2 versions after its first token
 */
export function admissible(batch: number, samplerVersion: number, maxStaleness: number): boolean {
  return batch - samplerVersion <= maxStaleness;
}

/** Staleness of one trajectory's trained tokens against `learnerVersion`. */
export interface TrajectoryStaleness {
  /** Largest `learnerVersion − turn.policyVersion` over turns with at least one trained token (−∞ when none). */
  readonly max: number;
  /** Trained tokens per staleness value. */
  readonly tokens: ReadonlyMap<number, number>;
}

/**
 * Per-token staleness of a trajectory (tokens with loss mask 1 only: forced tokens are not trained).
 * @example trajectoryStaleness(trajectory, 7).max; // 1 when its oldest trained turn came from version 6
 */
export function trajectoryStaleness(trajectory: Trajectory, learnerVersion: number): TrajectoryStaleness {
  const tokens = new Map<number, number>();
  let max = Number.NEGATIVE_INFINITY;
  for (const turn of trajectory.turns) {
    let trained = 0;
    for (const m of turn.actionLossMask) trained += m ? 1 : 0;
    if (trained === 0) continue;
    const s = learnerVersion - turn.policyVersion;
    tokens.set(s, (tokens.get(s) ?? 0) + trained);
    if (s > max) max = s;
  }
  return { max, tokens };
}

/**
 * Splits a batch into what may be trained at `learnerVersion` and what exceeds the bound (or comes
 * from a version newer than the learner, which means corrupt bookkeeping — also rejected).
 * @example const { kept, rejected } = splitByStaleness(batch, 7, 2);
 */
export function splitByStaleness(
  trajectories: readonly Trajectory[],
  learnerVersion: number,
  maxStaleness: number,
): { kept: Trajectory[]; rejected: Trajectory[] } {
  const kept: Trajectory[] = [];
  const rejected: Trajectory[] = [];
  for (const t of trajectories) {
    const { max, tokens } = trajectoryStaleness(t, learnerVersion);
    const negative = [...tokens.keys()].some((s) => s < 0);
    (max > maxStaleness || negative ? rejected : kept).push(t);
  }
  return { kept, rejected };
}

/**
 * Staleness histogram of a step as metrics: `async/staleness/<k>` trained tokens for k = 0..η,
 * `async/stalenessMax`, `async/stalenessMean`.
 * @example stalenessMetrics(kept, 3, 2); // { 'async/staleness/0': 120, 'async/staleness/1': 40, 'async/staleness/2': 0, ... }
 */
export function stalenessMetrics(trajectories: readonly Trajectory[], learnerVersion: number, maxStaleness: number): Record<string, number> {
  const bins = new Array<number>(maxStaleness + 1).fill(0);
  let max = 0;
  let sum = 0;
  let count = 0;
  for (const t of trajectories) {
    for (const [s, n] of trajectoryStaleness(t, learnerVersion).tokens) {
      if (s >= 0 && s <= maxStaleness) bins[s] = (bins[s] ?? 0) + n;
      if (s > max) max = s;
      sum += s * n;
      count += n;
    }
  }
  const out: Record<string, number> = { 'async/stalenessMax': max, 'async/stalenessMean': count > 0 ? sum / count : 0 };
  bins.forEach((n, s) => {
    out[`async/staleness/${s}`] = n;
  });
  return out;
}

/** What the checkpoint and the run state hold of the bound, so a resumed run keeps it. */
export interface StalenessState {
  /** η in force when the checkpoint was taken. */
  readonly maxStaleness: number;
  /** Learner weights version at the checkpoint (= completed steps). */
  readonly learnerVersion: number;
  /** Trajectories rejected so far for exceeding η. */
  readonly rejectedStale: number;
}

/**
 * Validates a checkpoint's `state.async` (absent in a checkpoint of a sync run: a fresh state at
 * `learnerVersion`). The learner version must equal the trainer's, or the bound would be measured
 * against the wrong version.
 * @example const state = restoreStaleness(checkpoint.state.async, trainer.version, config.async.maxStaleness, dir);
 */
export function restoreStaleness(saved: unknown, learnerVersion: number, maxStaleness: number, location: string): StalenessState {
  if (saved === undefined || saved === null) return { maxStaleness, learnerVersion, rejectedStale: 0 };
  const s = saved as Partial<Record<keyof StalenessState, unknown>>;
  for (const key of ['maxStaleness', 'learnerVersion', 'rejectedStale'] as const) {
    if (!Number.isInteger(s[key]) || (s[key] as number) < 0) {
      throw new CheckpointError(location, `state.async.${key} must be a non-negative integer, got ${JSON.stringify(s[key])}`);
    }
  }
  if (s.learnerVersion !== learnerVersion) {
    throw new CheckpointError(location, `state.async.learnerVersion is ${String(s.learnerVersion)} but the trainer resumed at version ${learnerVersion}`);
  }
  // The bound in force is the config's (a resumed run may tighten or loosen it on purpose); the counters carry over.
  return { maxStaleness, learnerVersion, rejectedStale: s.rejectedStale as number };
}
