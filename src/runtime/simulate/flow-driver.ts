/**
 * The batched driver of flow episodes (`src/actors/episode-flow.ts`): it runs `lanes` episodes at
 * once, back to back, each an xstate machine that sees one event per turn — by default its snapshot
 * stepped through the machine's pure transition function (`episode-flow-steps.ts`: no live actor
 * per episode), or one live actor each (`episodes: 'actors'`). The driver turns the episodes'
 * requests into batches: resets and steps are queued per environment shard and sent as
 * one `BatchEnv.run` call (one promise, and in workers one transferred buffer, per batch); the
 * turns wanting an action after a wave of answers go to the policy in one synchronous call.
 * Deadlines: each batch carries one; a single timer sweeps expired batches (their episodes fail
 * with the training path's timeout message and their late answers are dropped).
 *
 * Per turn the main thread does: one machine transition, the policy's choice, and its share of a batch's
 * encoding — no promise, timer or AbortController per turn.
 */
import { episodeErrors } from '../../actors/episode-rules.js';
import type { FlowHost, FlowResult } from '../../actors/episode-flow.js';
import { type FlowEpisode, type FlowEpisodeMode, type FlowEpisodeStarter, flowEpisodes } from '../../actors/episode-flow-steps.js';
import type { Clock } from '../../core/clock.js';
import { InvalidArgumentError } from '../../core/errors.js';
import type { EnvOp, OpKind } from '../env-pool/batch-codec.js';
import { OP } from '../env-pool/batch-codec.js';
import type { BatchEnv, EnvAnswer } from '../env-pool/batch-env.js';
import type { EpisodePlan } from '../rollout.js';
import { assignEpisode, createLane, type Lane } from './flow-lane.js';
import type { FlowPolicy } from './flow-policies.js';

/** Options of {@link FlowDriver}. */
export interface FlowDriverOptions {
  readonly env: BatchEnv;
  readonly policy: FlowPolicy;
  /** Environment name, for error messages. */
  readonly envName: string;
  /** Concurrent episodes. */
  readonly lanes: number;
  /** Training step stamped on trajectories. */
  readonly step: number;
  readonly horizon: number;
  /** Deadline of each batch sent to the environments, in ms of `clock`. */
  readonly envTimeoutMs: number;
  readonly clock: Clock;
  /** Keep every turn in the trajectories (tests, small runs); off by default. */
  readonly recordTurns?: boolean;
  /** Most ops in one batch (default 1024): bounds the event-loop time one answer takes to process. */
  readonly maxBatch?: number;
  /** Batches in flight per shard (default 2: one stepping in the worker while the main thread prepares the next). */
  readonly maxInFlight?: number;
  /** How episodes run: `snapshots` (default, pure transitions) or `actors` (one live xstate actor each). */
  readonly episodes?: FlowEpisodeMode;
}

interface Batch {
  readonly shard: number;
  readonly lanes: (Lane | null)[];
  readonly tickets: number[];
  readonly kinds: OpKind[];
  readonly deadline: number;
  done: boolean;
}

interface ShardQueue {
  ops: EnvOp[];
  lanes: (Lane | null)[];
  tickets: number[];
  inFlight: number;
}

/** Lanes started per event-loop turn when a run begins. */
const START_CHUNK = 1024;

/** Counts of what crossed the environment boundary. */
export interface FlowDriverStats {
  readonly batches: number;
  readonly ops: number;
  /** Agent turns played: steps the environments answered, in episodes finished, running or cut. */
  readonly turns: number;
  /** Episodes cut when a run's budget was spent (ended there, handed to no `onResult`). */
  readonly cut: number;
}

/**
 * When a run stops by itself: after `turns` turns, or at clock time `until` (ms). Checked after
 * each wave of answers; the live episodes are then cut, so no wind-down follows.
 */
export interface FlowBudget {
  readonly turns?: number;
  readonly until?: number;
}

/**
 * Runs flow episodes over a batch environment with a batched policy.
 * @example
 * const driver = new FlowDriver({ env, policy, envName: 'babyai', lanes: 10_000, step: 0, horizon: 20, envTimeoutMs: 30_000, clock: systemClock });
 * await driver.run((i) => planOf(i), (i, result) => count(result));
 */
export class FlowDriver implements FlowHost {
  private readonly lanes: Lane[];
  private readonly queues: ShardQueue[];
  private readonly inFlight = new Set<Batch>();
  private readonly maxBatch: number;
  private readonly maxInFlight: number;
  private readonly startEpisode: FlowEpisodeStarter;
  private wantTurn: Lane[] = [];
  private ended: Lane[] = [];
  private nextSlot: number;
  private nextIndex = 0;
  private exhausted = false;
  private live = 0;
  private scheduled = false;
  private sweepTimer: unknown = null;
  /** Removes the abort listener of the current run. */
  private detach: () => void = () => {};
  private batches = 0;
  private ops = 0;
  private turns = 0;
  private cut = 0;
  /** The current run's {@link FlowBudget}, as absolute turns and clock time. */
  private limit = { turns: Number.POSITIVE_INFINITY, until: Number.POSITIVE_INFINITY };
  /** Set while {@link cutLive} ends episodes: their results are counted, not handed on. */
  private cutting = false;
  private running: { nextPlan: (index: number) => EpisodePlan | null; onResult: (index: number, result: FlowResult) => void; resolve: () => void; reject: (error: unknown) => void } | null = null;

  constructor(private readonly options: FlowDriverOptions) {
    if (!Number.isInteger(options.lanes) || options.lanes < 1) throw InvalidArgumentError.format('lanes', `expected a positive integer, got ${String(options.lanes)}`);
    this.maxBatch = options.maxBatch ?? 1024;
    this.maxInFlight = options.maxInFlight ?? 2;
    this.startEpisode = flowEpisodes(options.episodes ?? 'snapshots');
    this.lanes = Array.from({ length: options.lanes }, (_, lane) => createLane(lane));
    this.nextSlot = options.lanes;
    this.queues = Array.from({ length: options.env.shards }, () => ({ ops: [], lanes: [], tickets: [], inFlight: 0 }));
  }

  /** Batches sent, ops they carried and turns played so far. */
  stats(): FlowDriverStats {
    return { batches: this.batches, ops: this.ops, turns: this.turns, cut: this.cut };
  }

  /**
   * Plays episodes while `nextPlan` gives plans (called with 0, 1, 2, …; null stops starting new
   * ones), handing each result to `onResult`; resolves when the last episode has ended, or when
   * `budget` is spent (the live episodes are then cut). An abort ends every live episode in
   * `error` with the reason.
   */
  run(nextPlan: (index: number) => EpisodePlan | null, onResult: (index: number, result: FlowResult) => void, signal?: AbortSignal, budget: FlowBudget = {}): Promise<void> {
    if (this.running !== null) throw InvalidArgumentError.format('FlowDriver.run', 'already running: one run at a time per driver');
    return new Promise<void>((resolve, reject) => {
      this.running = { nextPlan, onResult, resolve, reject };
      this.exhausted = false;
      this.limit = { turns: this.turns + (budget.turns ?? Number.POSITIVE_INFINITY), until: budget.until ?? Number.POSITIVE_INFINITY };
      if (signal !== undefined) {
        const onAbort = () => this.abort(String(signal.reason ?? 'aborted'));
        signal.addEventListener('abort', onAbort, { once: true });
        this.detach = () => signal.removeEventListener('abort', onAbort);
      }
      this.startLanes(0);
    });
  }

  /**
   * Starts the idle lanes from `from` on, {@link START_CHUNK} per event-loop turn: ten thousand
   * episodes starting at once would otherwise hold the loop (timers, I/O) for their whole setup.
   */
  private startLanes(from: number): void {
    try {
      const end = Math.min(this.lanes.length, from + START_CHUNK);
      for (let i = from; i < end; i++) this.startNext(this.lanes[i] as Lane);
      if (end < this.lanes.length && this.running !== null && !this.exhausted) setImmediate(() => this.startLanes(end));
      this.settle();
    } catch (error) {
      this.fail(error);
    }
  }

  // --- FlowHost: called from the episodes' actions ---

  requestReset(slot: number): void {
    const lane = this.lanes[slot] as Lane;
    this.enqueue(lane, OP.reset, (lane.plan as EpisodePlan).taskIndex, '');
  }

  requestTurn(slot: number): void {
    this.wantTurn.push(this.lanes[slot] as Lane);
  }

  finished(slot: number, result: FlowResult): void {
    const lane = this.lanes[slot] as Lane;
    lane.result = result;
    this.ended.push(lane);
  }

  // --- internals ---

  private startNext(lane: Lane): void {
    const running = this.running;
    if (running === null || this.exhausted) return;
    const index = this.nextIndex++;
    const plan = running.nextPlan(index);
    if (plan === null) {
      this.exhausted = true;
      return;
    }
    assignEpisode(lane, plan, index);
    this.live++;
    const { step, horizon, recordTurns } = this.options;
    // Starting runs the entry action: requestReset queues this lane's reset.
    lane.episode = this.startEpisode({ host: this, slot: lane.lane, taskId: plan.taskId, groupId: plan.groupId, trajectoryId: plan.trajectoryId, step, horizon, recordTurns: recordTurns === true });
  }

  private enqueue(lane: Lane | null, kind: OpKind, taskIndex: number, text: string): void {
    const slot = lane === null ? -1 : lane.envSlot;
    const queue = this.queues[this.options.env.shardOf(slot)] as ShardQueue;
    queue.ops.push({ kind, slot, taskIndex, text });
    queue.lanes.push(lane);
    queue.tickets.push(lane === null ? 0 : ++lane.ticket);
    this.schedule();
  }

  private enqueueClose(slot: number): void {
    const queue = this.queues[this.options.env.shardOf(slot)] as ShardQueue;
    queue.ops.push({ kind: OP.close, slot, taskIndex: 0, text: '' });
    queue.lanes.push(null);
    queue.tickets.push(0);
    this.schedule();
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    // After this turn's microtasks: every request made in it joins the batch, and timers get a turn between waves.
    setImmediate(this.flush);
  }

  private readonly flush = (): void => {
    this.scheduled = false;
    const { env, envTimeoutMs, clock } = this.options;
    for (let shard = 0; shard < this.queues.length; shard++) {
      const queue = this.queues[shard] as ShardQueue;
      while (queue.ops.length > 0 && queue.inFlight < this.maxInFlight) {
        const n = Math.min(this.maxBatch, queue.ops.length);
        const ops = queue.ops.splice(0, n);
        const batch: Batch = { shard, lanes: queue.lanes.splice(0, n), tickets: queue.tickets.splice(0, n), kinds: ops.map((op) => op.kind), deadline: clock.now() + envTimeoutMs, done: false };
        queue.inFlight++;
        this.inFlight.add(batch);
        this.batches++;
        this.ops += n;
        env.run(shard, ops).then(
          (answers) => this.onAnswers(batch, answers),
          (error: unknown) => this.onAnswers(batch, batch.lanes.map(() => (error instanceof Error ? error : new Error(String(error))))),
        );
      }
    }
    this.armSweep();
  };

  private retire(batch: Batch): boolean {
    if (batch.done) return false;
    batch.done = true;
    this.inFlight.delete(batch);
    (this.queues[batch.shard] as ShardQueue).inFlight--;
    return true;
  }

  private onAnswers(batch: Batch, answers: readonly EnvAnswer[]): void {
    // A batch the deadline sweep already failed: its episodes have moved on.
    if (!this.retire(batch)) return;
    try {
      for (let i = 0; i < batch.lanes.length; i++) {
        const lane = batch.lanes[i];
        if (lane == null || lane.episode === null || batch.tickets[i] !== lane.ticket) continue;
        const answer = answers[i] ?? new Error('the environment gave no answer');
        if (batch.kinds[i] === OP.reset) this.onReset(lane, answer);
        else this.onStep(lane, answer);
      }
      this.afterWave();
    } catch (error) {
      this.fail(error);
    }
  }

  private onReset(lane: Lane, answer: EnvAnswer): void {
    const episode = lane.episode as FlowEpisode;
    if (answer instanceof Error) {
      episode.send({ type: 'FAILED', message: episodeErrors.resetFailed(this.options.envName, (lane.plan as EpisodePlan).taskIndex, answer) });
      return;
    }
    lane.observation = answer.observation;
    this.options.policy.begin(lane.lane, answer.observation, (lane.plan as EpisodePlan).trajectoryId);
    episode.send({ type: 'RESET_RESULT', observationText: answer.observation.text });
  }

  private onStep(lane: Lane, answer: EnvAnswer): void {
    const episode = lane.episode as FlowEpisode;
    if (answer instanceof Error) {
      episode.send({ type: 'FAILED', message: episodeErrors.stepFailed(this.options.envName, answer) });
      return;
    }
    lane.observation = answer.observation;
    lane.turnCount++;
    this.turns++;
    episode.send({
      type: 'TURN_RESULT',
      actionText: lane.action,
      observationText: answer.observation.text,
      reward: answer.reward,
      done: answer.done,
      // Undefined when the environment did not say (the rules then read the reward); a plain
      // property, not a conditional spread, so every event has one shape.
      success: answer.success,
      // `info` is parsed only when turns are recorded (a worker answer parses it on read).
      invalidAction: this.options.recordTurns === true && answer.info?.invalid === true,
    });
  }

  /**
   * After a wave of answers: one policy call for every turn asked for, then restart ended lanes. An
   * asynchronous policy answers later; its turns step then, unless their episode ended meanwhile.
   */
  private afterWave(): void {
    if (this.wantTurn.length > 0) {
      const turns = this.wantTurn;
      this.wantTurn = [];
      let actions: string[] | Promise<string[]> | null = null;
      try {
        actions = this.options.policy.act(turns);
      } catch (error) {
        for (const lane of turns) lane.episode?.send({ type: 'FAILED', message: episodeErrors.actFailed(error) });
      }
      if (Array.isArray(actions)) this.stepTurns(turns, null, actions);
      else if (actions !== null) {
        const episodes = turns.map((lane) => lane.planIndex);
        actions.then(
          (chosen) => this.afterActs(turns, episodes, chosen, null),
          (error: unknown) => this.afterActs(turns, episodes, null, error),
        );
      }
    }
    this.drainEnded();
    if (this.running !== null && (this.turns >= this.limit.turns || this.options.clock.now() >= this.limit.until)) this.cutLive();
    this.settle();
  }

  /** The run's budget is spent: start nothing more, end the live episodes without results. */
  private cutLive(): void {
    this.exhausted = true;
    this.cutting = true;
    for (const lane of this.lanes) lane.episode?.send({ type: 'ABORT', reason: 'the run budget is spent' });
    this.drainEnded();
    this.cutting = false;
  }

  /** An asynchronous policy answered (or failed) the turns of `episodes`. */
  private afterActs(turns: readonly Lane[], episodes: readonly number[], actions: readonly string[] | null, error: unknown): void {
    try {
      if (actions !== null) this.stepTurns(turns, episodes, actions);
      else {
        turns.forEach((lane, i) => {
          if (lane.episode !== null && lane.planIndex === episodes[i]) lane.episode.send({ type: 'FAILED', message: episodeErrors.actFailed(error) });
        });
      }
      this.drainEnded();
      this.settle();
    } catch (failure) {
      this.fail(failure);
    }
  }

  /** Queues each turn's step with its chosen action (skipping episodes that ended since, when `episodes` is given). */
  private stepTurns(turns: readonly Lane[], episodes: readonly number[] | null, actions: readonly string[]): void {
    for (let i = 0; i < turns.length; i++) {
      const lane = turns[i] as Lane;
      if (episodes !== null && (lane.episode === null || lane.planIndex !== episodes[i])) continue;
      lane.action = actions[i] ?? '';
      this.enqueue(lane, OP.step, 0, lane.action);
    }
  }

  private drainEnded(): void {
    const running = this.running;
    while (this.ended.length > 0) {
      const ended = this.ended;
      this.ended = [];
      for (const lane of ended) {
        const result = lane.result as FlowResult;
        lane.episode = null;
        lane.ticket++;
        this.live--;
        if (result.trajectory.outcome === 'error') {
          // The instance may be mid-step or broken: give it back and use a fresh slot.
          this.enqueueClose(lane.envSlot);
          lane.envSlot = this.nextSlot++;
        }
        this.options.policy.end?.(lane.lane);
        if (this.cutting) this.cut++;
        else running?.onResult(lane.planIndex, result);
        this.startNext(lane);
      }
    }
  }

  private settle(): void {
    if (this.running === null || this.live > 0 || !this.exhausted) return;
    const { resolve } = this.running;
    this.finish();
    resolve();
  }

  private fail(error: unknown): void {
    if (this.running === null) return;
    const { reject } = this.running;
    this.finish();
    reject(error);
  }

  private finish(): void {
    this.running = null;
    this.detach();
    this.detach = () => {};
    if (this.sweepTimer !== null) this.options.clock.clearTimeout(this.sweepTimer);
    this.sweepTimer = null;
  }

  private abort(reason: string): void {
    this.exhausted = true;
    for (const lane of this.lanes) lane.episode?.send({ type: 'ABORT', reason });
    this.drainEnded();
    this.settle();
  }

  /** One timer for all batches: fires at the earliest deadline. */
  private armSweep(): void {
    if (this.sweepTimer !== null || this.inFlight.size === 0 || this.running === null) return;
    let earliest = Number.POSITIVE_INFINITY;
    for (const batch of this.inFlight) earliest = Math.min(earliest, batch.deadline);
    const { clock } = this.options;
    this.sweepTimer = clock.setTimeout(this.sweep, Math.max(0, earliest - clock.now()));
  }

  private readonly sweep = (): void => {
    this.sweepTimer = null;
    const { clock, envName, envTimeoutMs } = this.options;
    const now = clock.now();
    for (const batch of [...this.inFlight]) {
      if (batch.deadline > now || !this.retire(batch)) continue;
      for (let i = 0; i < batch.lanes.length; i++) {
        const lane = batch.lanes[i];
        if (lane == null || lane.episode === null || batch.tickets[i] !== lane.ticket) continue;
        const message = batch.kinds[i] === OP.reset ? episodeErrors.resetTimedOut(envName, envTimeoutMs) : episodeErrors.stepTimedOut(envName, envTimeoutMs);
        lane.episode.send({ type: 'FAILED', message });
      }
    }
    this.drainEnded();
    this.settle();
    this.armSweep();
    // A shard whose batch expired has room again.
    this.schedule();
  };
}
