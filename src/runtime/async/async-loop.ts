/**
 * The asynchronous training loop (AReaL-style): episodes start as soon as a slot frees up, the
 * learner trains batch `b` as soon as all of its episodes are in, and new weights reach the
 * samplers while episodes are in flight. Its I/O is injected, so a seeded simulation (scripted
 * episodes, random interleavings) drives the same code as a real run.
 *
 * Batches are filled in admission order with the same plans as the synchronous loop
 * (`trainPlans(config, indices, b, runId)`), so every mode sees the same tasks and seeds per step.
 * Admission (see `staleness.ts`): an episode of batch `b` starts only while fewer than
 * `maxInFlight` are running and the samplers hold version ≥ `b − η`; otherwise it waits (samplers
 * pause rather than produce data that would be discarded).
 *
 * Weight updates: `continue` publishes right after each update, while episodes run (they finish
 * with the new weights; each turn records its version). `finish-old` stops admitting, lets the
 * episodes in flight finish with the weights they started with, then publishes and admits again.
 *
 * No hang: every wait re-checks whether progress is still possible, and a state in which nothing
 * is in flight, nothing may be admitted and the learner still waits is reported as an error (it
 * cannot happen by the rule above; the check makes a bookkeeping bug loud instead of a hang).
 */
import type { Metrics } from '../../actors/learner.js';
import type { Clock } from '../../core/clock.js';
import { StalePolicyError, TurnwiseError } from '../../core/errors.js';
import type { Trajectory } from '../../core/types.js';
import type { EpisodePlan } from '../rollout.js';
import { admissible, splitByStaleness, type StalenessState, stalenessMetrics } from './staleness.js';

/** How in-flight episodes meet a weight update. */
export type PartialRollout = 'continue' | 'finish-old';

/** The I/O of the loop, injected. */
export interface AsyncLoopEffects {
  /** Episode plans of batch `batch` (the synchronous loop's `trainPlans`). */
  plans(batch: number): readonly EpisodePlan[];
  /** Runs one episode to its trajectory (environment failures end as outcome `error`, not as a rejection). */
  runEpisode(plan: EpisodePlan, batch: number): Promise<Trajectory>;
  /** Weights version the samplers hold now (never decreases). */
  samplerVersion(): number;
  /** One update on batch `batch`'s trajectories at learner version `batch`; returns the new version. */
  train(batch: number, trajectories: readonly Trajectory[]): Promise<{ readonly version: number; readonly metrics: Metrics }>;
  /** Hands weights `version` to the samplers; resolves once they loaded it (rejects on timeout). */
  publishWeights(version: number): Promise<void>;
  /**
   * Logging, horizon advance, evaluation, checkpoint of a finished step. `exclusive(work)` runs
   * `work` with no episode in flight (evaluation shares the samplers and environments).
   */
  stepCompleted(batch: number, metrics: Metrics, control: AsyncLoopControl): Promise<void>;
}

/** What `stepCompleted` may do with the loop. */
export interface AsyncLoopControl {
  /** Runs `work` once every episode in flight has finished, admitting none meanwhile. */
  exclusive<T>(work: () => Promise<T>): Promise<T>;
  /** The bound's state as a checkpoint stores it. */
  persist(): StalenessState;
}

export interface AsyncLoopOptions {
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
  /** Abort: stop admitting, finish the step being trained, return `stopped`. */
  readonly signal?: AbortSignal;
}

export interface AsyncLoopResult {
  readonly status: 'finished' | 'stopped';
  readonly completedSteps: number;
  readonly state: StalenessState;
}

/** Time accumulators, each reset when a step completes. */
class Stopwatch {
  private since: number | null = null;
  total = 0;
  constructor(private readonly clock: Pick<Clock, 'now'>) {}
  set(on: boolean): void {
    if (on && this.since === null) this.since = this.clock.now();
    if (!on && this.since !== null) {
      this.total += this.clock.now() - this.since;
      this.since = null;
    }
  }
  take(): number {
    const running = this.since !== null;
    this.set(false);
    const t = this.total;
    this.total = 0;
    if (running) this.set(true);
    return t;
  }
}

/**
 * Runs batches `startStep .. totalSteps − 1` asynchronously under the staleness bound.
 * @example const { status, completedSteps } = await runAsyncLoop({ startStep: 0, totalSteps: 60, maxStaleness: 2, partialRollout: 'continue', maxInFlight: 64, clock }, effects);
 */
export async function runAsyncLoop(o: AsyncLoopOptions, fx: AsyncLoopEffects): Promise<AsyncLoopResult> {
  const eta = o.maxStaleness;
  let version = o.startStep;
  let rejectedStale = o.restored?.rejectedStale ?? 0;
  const plans = new Map<number, readonly EpisodePlan[]>();
  const results = new Map<number, Trajectory[]>();
  const missing = new Map<number, number>();
  let admitBatch = o.startStep;
  let admitIndex = 0;
  let inFlight = 0;
  let holdForPublish = false; // finish-old: an update waits for the episodes in flight
  let holdForExclusive = false;
  let failure: unknown = null;
  const stopped = () => o.signal?.aborted === true;

  // One promise that settles whenever anything the waits depend on changed.
  let wake: () => void = () => {};
  let changed = new Promise<void>((r) => {
    wake = r;
  });
  const notify = () => {
    const w = wake;
    changed = new Promise<void>((r) => {
      wake = r;
    });
    w();
  };
  o.signal?.addEventListener('abort', notify);

  const samplerIdle = new Stopwatch(o.clock);
  const learnerIdle = new Stopwatch(o.clock);
  const blocked = new Stopwatch(o.clock);
  samplerIdle.set(true);
  let stepStarted = o.clock.now();
  let finishedEpisodes = 0;

  const plansOf = (batch: number): readonly EpisodePlan[] => {
    let p = plans.get(batch);
    if (p === undefined) {
      p = fx.plans(batch);
      if (p.length === 0) throw new TurnwiseError(`async loop: batch ${batch} has no episode plans`);
      plans.set(batch, p);
      results.set(batch, new Array<Trajectory>(p.length));
      missing.set(batch, p.length);
    }
    return p;
  };
  const mayAdmit = (): boolean => !stopped() && failure === null && !holdForPublish && !holdForExclusive && admitBatch < o.totalSteps;
  const admit = (): void => {
    while (mayAdmit() && inFlight < o.maxInFlight && admissible(admitBatch, fx.samplerVersion(), eta)) {
      const batch = admitBatch;
      const index = admitIndex;
      const plan = plansOf(batch)[index] as EpisodePlan;
      if (++admitIndex >= plansOf(batch).length) {
        admitBatch++;
        admitIndex = 0;
      }
      inFlight++;
      samplerIdle.set(false);
      fx.runEpisode(plan, batch).then(
        (trajectory) => {
          (results.get(batch) as Trajectory[])[index] = trajectory;
          missing.set(batch, (missing.get(batch) ?? 1) - 1);
          finishedEpisodes++;
        },
        (error: unknown) => {
          failure ??= error;
        },
      ).finally(() => {
        inFlight--;
        if (inFlight === 0) samplerIdle.set(true);
        admit();
        notify();
      });
    }
    // Held back by the bound or an update while there is work and room: time the samplers pause.
    const heldByBound = admitBatch < o.totalSteps && inFlight < o.maxInFlight && !admissible(admitBatch, fx.samplerVersion(), eta);
    blocked.set(!stopped() && (holdForPublish || holdForExclusive || heldByBound));
  };

  /** Waits until `done()`; throws on a failed episode, or when no progress is possible any more. */
  const until = async (done: () => boolean, what: string): Promise<void> => {
    for (;;) {
      if (failure !== null) throw failure;
      admit();
      if (done()) return;
      if (inFlight === 0 && !(mayAdmit() && admissible(admitBatch, fx.samplerVersion(), eta)) && !stopped()) {
        throw new TurnwiseError(
          `async loop deadlocked waiting for ${what}: nothing in flight, next batch ${admitBatch} not admissible (samplers at version ${fx.samplerVersion()}, η ${eta}, learner ${version})`,
        );
      }
      if (stopped() && inFlight === 0) return;
      await changed;
    }
  };

  const publish = async (v: number): Promise<void> => {
    if (o.partialRollout === 'continue') {
      await fx.publishWeights(v);
    } else {
      holdForPublish = true;
      blocked.set(true);
      await until(() => inFlight === 0, `episodes to finish with version ${v - 1}`);
      await fx.publishWeights(v);
      holdForPublish = false;
    }
    admit();
  };

  const control: AsyncLoopControl = {
    async exclusive(work) {
      holdForExclusive = true;
      try {
        await until(() => inFlight === 0, 'episodes to finish before exclusive work');
        return await work();
      } finally {
        holdForExclusive = false;
        admit();
      }
    },
    persist: () => ({ maxStaleness: eta, learnerVersion: version, rejectedStale }),
  };

  try {
    admit();
    for (let batch = o.startStep; batch < o.totalSteps; batch++) {
      learnerIdle.set(true);
      plansOf(batch);
      await until(() => stopped() || missing.get(batch) === 0, `batch ${batch}`);
      learnerIdle.set(false);
      if (stopped()) break;
      const all = results.get(batch) as Trajectory[];
      const { kept, rejected } = splitByStaleness(all, version, eta);
      rejectedStale += rejected.length;
      if (kept.length === 0) {
        const oldest = Math.min(...all.flatMap((t) => t.turns.map((turn) => turn.policyVersion)));
        throw new StalePolicyError(oldest, version, eta);
      }
      const trainStarted = o.clock.now();
      const { version: next, metrics } = await fx.train(batch, kept);
      if (next !== version + 1) throw new TurnwiseError(`async loop: learner returned version ${next} after training batch ${batch} at version ${version}`);
      const staleness = stalenessMetrics(kept, version, eta);
      version = next;
      await publish(version);
      results.delete(batch);
      missing.delete(batch);
      plans.delete(batch);
      const seconds = (o.clock.now() - stepStarted) / 1000;
      const ms = seconds * 1000;
      const ratio = (t: number) => (ms > 0 ? Math.min(1, t / ms) : 0);
      const trainedTokens = kept.reduce((sum, t) => sum + t.turns.reduce((s, turn) => s + turn.promptTokens.length + turn.actionTokens.length, 0), 0);
      const stepMetrics: Metrics = {
        ...metrics,
        ...staleness,
        'async/rejectedStale': rejectedStale,
        'async/learnerIdleRatio': ratio(learnerIdle.take()),
        'async/samplerIdleRatio': ratio(samplerIdle.take()),
        'async/admissionBlockedRatio': ratio(blocked.take()),
        'throughput/trajectoriesPerSec': seconds > 0 ? finishedEpisodes / seconds : 0,
        'throughput/tokensPerSec': seconds > 0 ? trainedTokens / seconds : 0,
        'time/trainSec': (o.clock.now() - trainStarted) / 1000,
      };
      finishedEpisodes = 0;
      stepStarted = o.clock.now();
      await fx.stepCompleted(batch, stepMetrics, control);
      if (stopped()) break;
    }
  } finally {
    // Let the episodes in flight end before the caller tears the samplers and environments down.
    holdForExclusive = true;
    while (inFlight > 0) await changed;
    o.signal?.removeEventListener('abort', notify);
  }
  const completedSteps = version;
  return { status: completedSteps >= o.totalSteps ? 'finished' : 'stopped', completedSteps, state: control.persist() };
}
