/**
 * The bookkeeping of the asynchronous loop as pure functions over its context (no actor, no I/O):
 * which episodes may start now (admission), what a finished episode changes, and the time
 * accounting of a step. `async-loop-machine.ts` calls them from its actions; each can be tested by
 * hand.
 */
import type { Metrics } from '../../actors/learner.js';
import type { Clock } from '../../core/clock.js';
import { StalePolicyError, TurnwiseError } from '../../core/errors.js';
import type { Trajectory } from '../../core/types.js';
import type { EpisodePlan } from '../rollout.js';
import { admissible, splitByStaleness, type StalenessState } from './staleness.js';

/** How in-flight episodes meet a weight update. */
export type PartialRollout = 'continue' | 'finish-old';

/** The loop's fixed settings and the reads it makes (plans, the samplers' version, the clock). */
export interface AsyncLoopInput {
  /** First batch to train (= completed steps = learner version at start). */
  readonly startStep: number;
  readonly totalSteps: number;
  /** η: largest staleness any trained token may have. */
  readonly maxStaleness: number;
  readonly partialRollout: PartialRollout;
  /** Episodes running at once (the environment pool size). */
  readonly maxInFlight: number;
  /** Restored counters (from the checkpoint's `state.async`). */
  readonly restored?: StalenessState;
  readonly clock: Pick<Clock, 'now'>;
  /** Episode plans of batch `batch` (the synchronous loop's `trainPlans`), read when its first episode is admitted. */
  plans(batch: number): readonly EpisodePlan[];
  /** Weights version the samplers hold now (never decreases). */
  samplerVersion(): number;
  /** Stopped before it started (an abort signal already aborted). */
  readonly stopped?: boolean;
}

/** Accumulated milliseconds of one condition, and since when it holds (null: not now). */
export interface Stopwatch {
  readonly since: number | null;
  readonly total: number;
}

/** One batch's episodes: their plans, the trajectories in so far (plan order), and how many are missing. */
export interface BatchEpisodes {
  readonly plans: readonly EpisodePlan[];
  readonly results: readonly (Trajectory | undefined)[];
  readonly missing: number;
}

/** An episode to start: its plan, batch and index in the batch. */
export interface Admission {
  readonly plan: EpisodePlan;
  readonly batch: number;
  readonly index: number;
}

/** Everything the loop tracks. Immutable: each action returns a new one. */
export interface AsyncLoopContext {
  readonly input: AsyncLoopInput;
  /** Batch the learner is on. */
  readonly batch: number;
  /** Learner weights version (= completed steps). */
  readonly version: number;
  readonly rejectedStale: number;
  /** Batches with admitted episodes (or the learner's current one), by batch. */
  readonly batches: Readonly<Record<number, BatchEpisodes>>;
  /** Next episode to admit: batch and index in it. */
  readonly admitBatch: number;
  readonly admitIndex: number;
  readonly inFlight: number;
  /** finish-old: an update waits for the episodes in flight. */
  readonly holdForPublish: boolean;
  /** Exclusive work (evaluation) waits for, then runs with, no episode in flight. */
  readonly holdForExclusive: boolean;
  /** The loop is ending: nothing more is admitted. */
  readonly closing: boolean;
  readonly stopRequested: boolean;
  /** The first failed episode's error (raised when the learner next waits), or null. */
  readonly failure: unknown;
  /** What ends the run as failed, or null. */
  readonly error: unknown;
  /** The trajectories of the batch being trained (within η). */
  readonly kept: readonly Trajectory[];
  /** Metrics of the step being completed (training's, then the loop's added). */
  readonly metrics: Metrics;
  readonly samplerIdle: Stopwatch;
  readonly learnerIdle: Stopwatch;
  /** Admission held back by the bound or an update while there is work and room. */
  readonly blocked: Stopwatch;
  readonly stepStarted: number;
  readonly trainStarted: number;
  readonly finishedEpisodes: number;
  /** Set when the loop ends. */
  readonly status: 'finished' | 'stopped' | 'failed' | null;
}

/**
 * The context a loop starts with.
 * @example const context = initialContext({ startStep: 0, totalSteps: 4, maxStaleness: 1, partialRollout: 'continue', maxInFlight: 8, clock, plans, samplerVersion });
 */
export function initialContext(input: AsyncLoopInput): AsyncLoopContext {
  const now = input.clock.now();
  return {
    input,
    batch: input.startStep,
    version: input.startStep,
    rejectedStale: input.restored?.rejectedStale ?? 0,
    batches: {},
    admitBatch: input.startStep,
    admitIndex: 0,
    inFlight: 0,
    holdForPublish: false,
    holdForExclusive: false,
    closing: false,
    stopRequested: input.stopped === true,
    failure: null,
    error: null,
    kept: [],
    metrics: {},
    samplerIdle: { since: now, total: 0 },
    learnerIdle: { since: null, total: 0 },
    blocked: { since: null, total: 0 },
    stepStarted: now,
    trainStarted: now,
    finishedEpisodes: 0,
    status: null,
  };
}

/** Starts (`on`) or stops a stopwatch at `now`; unchanged when it already is so. */
export function setStopwatch(watch: Stopwatch, on: boolean, now: number): Stopwatch {
  if (on && watch.since === null) return { since: now, total: watch.total };
  if (!on && watch.since !== null) return { since: null, total: watch.total + now - watch.since };
  return watch;
}

/** The time accumulated so far (a running watch counts until `now`), and the watch reset to zero, still running if it was. */
export function takeStopwatch(watch: Stopwatch, now: number): { readonly taken: number; readonly next: Stopwatch } {
  const taken = watch.since === null ? watch.total : watch.total + now - watch.since;
  return { taken, next: { since: watch.since === null ? null : now, total: 0 } };
}

/** The state as a checkpoint stores it. */
export function persistedState(context: AsyncLoopContext): StalenessState {
  return { maxStaleness: context.input.maxStaleness, learnerVersion: context.version, rejectedStale: context.rejectedStale };
}

/** True while episodes may be admitted at all (the bound and the room aside). */
export function mayAdmit(context: AsyncLoopContext): boolean {
  const { stopRequested, failure, holdForPublish, holdForExclusive, closing, admitBatch, input } = context;
  return !stopRequested && failure === null && !holdForPublish && !holdForExclusive && !closing && admitBatch < input.totalSteps;
}

/** `batches` with batch `batch` present (its plans read once); throws when a batch has no plans. */
export function withBatch(context: AsyncLoopContext, batch: number): AsyncLoopContext['batches'] {
  if (context.batches[batch] !== undefined) return context.batches;
  const plans = context.input.plans(batch);
  if (plans.length === 0) throw new TurnwiseError(`async loop: batch ${batch} has no episode plans`);
  return { ...context.batches, [batch]: { plans, results: new Array<Trajectory | undefined>(plans.length).fill(undefined), missing: plans.length } };
}

/** The context with the learner's batch present, so its episodes count as missing before the first is admitted. */
export function withLearnerBatch(context: AsyncLoopContext): AsyncLoopContext {
  try {
    return { ...context, batches: withBatch(context, context.batch) };
  } catch (error) {
    return { ...context, failure: context.failure ?? error };
  }
}

/**
 * Admits episodes in batch order while the loop admits, there is room, and the samplers' version
 * keeps the batch within η; returns them and the context after. Also times the samplers' idleness
 * and how long admission is held back.
 * @example const { admitted, context: next } = admit(context); // start one episode per entry of `admitted`
 */
export function admit(context: AsyncLoopContext): { readonly admitted: readonly Admission[]; readonly context: AsyncLoopContext } {
  const { input } = context;
  const now = input.clock.now();
  const samplerVersion = input.samplerVersion();
  const admitted: Admission[] = [];
  let next = context;
  try {
    while (mayAdmit(next) && next.inFlight < input.maxInFlight && admissible(next.admitBatch, samplerVersion, input.maxStaleness)) {
      const batches = withBatch(next, next.admitBatch);
      const { plans } = batches[next.admitBatch] as BatchEpisodes;
      admitted.push({ plan: plans[next.admitIndex] as EpisodePlan, batch: next.admitBatch, index: next.admitIndex });
      const last = next.admitIndex + 1 >= plans.length;
      next = {
        ...next,
        batches,
        admitBatch: last ? next.admitBatch + 1 : next.admitBatch,
        admitIndex: last ? 0 : next.admitIndex + 1,
        inFlight: next.inFlight + 1,
        samplerIdle: setStopwatch(next.samplerIdle, false, now),
      };
    }
  } catch (error) {
    next = { ...next, failure: next.failure ?? error }; // raised when the learner next waits
  }
  const heldByBound = next.admitBatch < input.totalSteps && next.inFlight < input.maxInFlight && !admissible(next.admitBatch, samplerVersion, input.maxStaleness);
  const held = !next.stopRequested && (next.holdForPublish || next.holdForExclusive || heldByBound);
  return { admitted, context: { ...next, blocked: setStopwatch(next.blocked, held, now) } };
}

/** The context after an episode of `batch` (index `index`) ended with `trajectory` (or failed: `trajectory` null, `error` kept). */
export function episodeEnded(context: AsyncLoopContext, batch: number, index: number, trajectory: Trajectory | null, error?: unknown): AsyncLoopContext {
  const inFlight = context.inFlight - 1;
  const samplerIdle = inFlight === 0 ? setStopwatch(context.samplerIdle, true, context.input.clock.now()) : context.samplerIdle;
  const ended = { ...context, inFlight, samplerIdle };
  const episodes = context.batches[batch];
  if (trajectory === null || episodes === undefined) return { ...ended, failure: context.failure ?? error ?? new TurnwiseError(`async loop: episode ${index} of batch ${batch} ended without a trajectory`) };
  const results = episodes.results.slice();
  results[index] = trajectory;
  return {
    ...ended,
    batches: { ...context.batches, [batch]: { ...episodes, results, missing: episodes.missing - 1 } },
    finishedEpisodes: context.finishedEpisodes + 1,
  };
}

/** True when every episode of the learner's batch is in. */
export function batchComplete(context: AsyncLoopContext): boolean {
  return context.batches[context.batch]?.missing === 0;
}

/**
 * True when the learner waits for a batch that can never complete: nothing in flight and nothing
 * admissible (it cannot happen by the admission rule; the check makes a bookkeeping bug loud
 * instead of a hang).
 */
export function deadlocked(context: AsyncLoopContext): boolean {
  const { input } = context;
  return context.inFlight === 0 && !context.stopRequested && !(mayAdmit(context) && admissible(context.admitBatch, input.samplerVersion(), input.maxStaleness));
}

/** The error {@link deadlocked} reports. */
export function deadlockError(context: AsyncLoopContext): TurnwiseError {
  const { input } = context;
  return new TurnwiseError(
    `async loop deadlocked waiting for batch ${context.batch}: nothing in flight, next batch ${context.admitBatch} not admissible (samplers at version ${input.samplerVersion()}, η ${input.maxStaleness}, learner ${context.version})`,
  );
}

/**
 * The learner's batch split by the bound: the context with the trajectories to train (`kept`) and
 * the rejected ones counted, or with `error` set when nothing is left to train.
 */
export function takeBatch(context: AsyncLoopContext): AsyncLoopContext {
  const all = (context.batches[context.batch]?.results ?? []) as Trajectory[];
  const { kept, rejected } = splitByStaleness(all, context.version, context.input.maxStaleness);
  const rejectedStale = context.rejectedStale + rejected.length;
  if (kept.length === 0) {
    const oldest = Math.min(...all.flatMap((t) => t.turns.map((turn) => turn.policyVersion)));
    return { ...context, rejectedStale, error: context.error ?? new StalePolicyError(oldest, context.version, context.input.maxStaleness) };
  }
  return { ...context, kept, rejectedStale, trainStarted: context.input.clock.now() };
}

/**
 * Closes the step after the update was published: drops the batch's episodes and adds the loop's
 * metrics (idle and blocked shares of the step's time, throughput, train time) to `metrics`.
 */
export function finishStep(context: AsyncLoopContext): AsyncLoopContext {
  const now = context.input.clock.now();
  const ms = now - context.stepStarted;
  const seconds = ms / 1000;
  const ratio = (t: number) => (ms > 0 ? Math.min(1, t / ms) : 0);
  const learnerIdle = takeStopwatch(context.learnerIdle, now);
  const samplerIdle = takeStopwatch(context.samplerIdle, now);
  const blocked = takeStopwatch(context.blocked, now);
  const trainedTokens = context.kept.reduce((sum, t) => sum + t.turns.reduce((s, turn) => s + turn.promptTokens.length + turn.actionTokens.length, 0), 0);
  const { [context.batch]: _done, ...batches } = context.batches;
  return {
    ...context,
    batches,
    kept: [],
    metrics: {
      ...context.metrics,
      'async/rejectedStale': context.rejectedStale,
      'async/learnerIdleRatio': ratio(learnerIdle.taken),
      'async/samplerIdleRatio': ratio(samplerIdle.taken),
      'async/admissionBlockedRatio': ratio(blocked.taken),
      'throughput/trajectoriesPerSec': seconds > 0 ? context.finishedEpisodes / seconds : 0,
      'throughput/tokensPerSec': seconds > 0 ? trainedTokens / seconds : 0,
      'time/trainSec': (now - context.trainStarted) / 1000,
    },
    learnerIdle: learnerIdle.next,
    samplerIdle: samplerIdle.next,
    blocked: blocked.next,
    finishedEpisodes: 0,
    stepStarted: now,
  };
}
