/**
 * The run store: one SQLite file, `<runDir>/run.db`, holding runs, metrics (one row per metric),
 * episodes, their turns (token ids, behaviour logprobs and loss masks as blobs) and events such as
 * horizon stage changes.
 *
 * Why better-sqlite3 in WAL mode: synchronous prepared statements make a batch of trajectories one
 * cheap transaction, and WAL lets the dashboard read (`{ readonly: true }`) while training writes.
 * Recording is idempotent per trajectory id, so a redelivered trajectory is stored once.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { CheckpointError, InvalidArgumentError } from '../core/errors.js';
import type { Trajectory } from '../core/types.js';
import { float32FromBlob, int32FromBlob, toBlob, uint8FromBlob } from './blobs.js';
import {
  checkTrajectory,
  type EpisodeFilter,
  type EpisodeRecord,
  type EpisodeRow,
  type EpisodeSplit,
  type MetricPoint,
  nanToNull,
  nullToNan,
  RUN_STATUSES,
  type RunEvent,
  type RunInit,
  type RunRecord,
  type RunRow,
  type RunStatus,
  type RunStoreOptions,
  SPLITS,
  type StoredTurn,
  type TurnRow,
  toEpisode,
  toRun,
} from './records.js';
import { MIN_READABLE_VERSION, migrate, SCHEMA_VERSION, schemaVersion } from './schema.js';

export type { EpisodeFilter, EpisodeRecord, EpisodeSplit, MetricPoint, RunEvent, RunInit, RunRecord, RunStatus, RunStoreOptions, StoredTurn } from './records.js';

/**
 * A run folder's SQLite store.
 * @example
 * const store = RunStore.open('runs/babyai-grpo');
 * store.createRun({ id: 'r1', name: 'babyai-grpo', createdAt: clockMs, config, backend: 'wasm', seed: 1 });
 * store.logMetrics(1, { 'rollout/successRate': 0.25 });
 * store.recordTrajectories('r1', 'train', trajectories);
 * store.close();
 */
export class RunStore {
  /** Active run: the one `createRun`/`useRun` chose, or the newest in the file. */
  private active: string | null;
  private readonly metricListeners: ((step: number, metrics: Readonly<Record<string, number>>) => void)[] = [];
  private readonly statements: ReturnType<RunStore['prepareWrites']> | null;
  private readonly insertBatch: ((runId: string, split: EpisodeSplit, trajectories: readonly Trajectory[]) => number) | null;

  private constructor(
    private readonly db: Database.Database,
    /** Path of the SQLite file. */
    readonly path: string,
    readonly readonly: boolean,
  ) {
    const newest = db.prepare('SELECT id FROM runs ORDER BY created_at DESC, rowid DESC LIMIT 1').get() as { id: string } | undefined;
    this.active = newest?.id ?? null;
    this.statements = readonly ? null : this.prepareWrites();
    this.insertBatch = readonly ? null : db.transaction(this.insertTrajectories.bind(this));
  }

  /**
   * Opens (creating and migrating when writable) `<runDir>/run.db`.
   * @example const viewer = RunStore.open('runs/babyai-grpo', { readonly: true });
   */
  static open(runDir: string, options: RunStoreOptions = {}): RunStore {
    const path = join(runDir, 'run.db');
    const readonly = options.readonly ?? false;
    let db: Database.Database;
    try {
      if (!readonly) mkdirSync(runDir, { recursive: true });
      db = new Database(path, { readonly, fileMustExist: readonly });
    } catch (error) {
      throw new CheckpointError(path, `cannot open run store: ${(error as Error).message}`, { cause: error });
    }
    try {
      if (readonly) {
        const version = schemaVersion(db);
        if (version < MIN_READABLE_VERSION || version > SCHEMA_VERSION) {
          throw new CheckpointError(path, `run store has schema version ${version}, this build reads ${MIN_READABLE_VERSION}..${SCHEMA_VERSION}; open it writable once to migrate`);
        }
      } else {
        db.pragma('journal_mode = WAL');
        db.pragma('synchronous = NORMAL'); // durable across process crashes in WAL mode; fsync only at checkpoints
        db.pragma('foreign_keys = ON');
        migrate(db, path);
      }
      return new RunStore(db, path, readonly);
    } catch (error) {
      db.close();
      throw error;
    }
  }

  /** The active run's id, or null when the store has no run yet. */
  get runId(): string | null {
    return this.active;
  }

  /** Creates a run and makes it the active one. */
  createRun(init: RunInit): RunRecord {
    const s = this.writes('createRun');
    const status = init.status ?? 'running';
    this.checkStatus(status);
    if (!Number.isFinite(init.createdAt)) throw InvalidArgumentError.format('createdAt', `expected ms since the epoch, got ${init.createdAt}`);
    s.insertRun.run(init.id, init.name, Math.round(init.createdAt), JSON.stringify(init.config ?? null), status, init.backend, init.seed);
    this.active = init.id;
    return this.run(init.id) as RunRecord;
  }

  /** Makes an existing run the active one (for viewers of a store with several runs). */
  useRun(runId: string): void {
    if (this.run(runId) === null) throw InvalidArgumentError.format('runId', `no run '${runId}' in ${this.path}`);
    this.active = runId;
  }

  run(runId: string | null = this.active): RunRecord | null {
    if (runId === null) return null;
    const row = this.db.prepare('SELECT * FROM runs WHERE id = ?').get(runId) as RunRow | undefined;
    return row === undefined ? null : toRun(row);
  }

  runs(): RunRecord[] {
    return (this.db.prepare('SELECT * FROM runs ORDER BY created_at, rowid').all() as RunRow[]).map(toRun);
  }

  /** Sets the active run's status. */
  setRunStatus(status: RunStatus): void {
    const s = this.writes('setRunStatus');
    this.checkStatus(status);
    s.updateStatus.run(status, this.requireRun());
  }

  /** Writes one row per metric for the active run; a metric logged again at the same step replaces the old value. */
  logMetrics(step: number, record: Readonly<Record<string, number>>): void {
    const s = this.writes('logMetrics');
    const runId = this.requireRun();
    this.checkStep(step);
    this.db.transaction(() => {
      for (const [name, value] of Object.entries(record)) {
        if (typeof value !== 'number') throw InvalidArgumentError.format(`metrics.${name}`, `expected a number, got ${typeof value}`);
        s.insertMetric.run(runId, step, name, nanToNull(value));
      }
    })();
    for (const listener of this.metricListeners) listener(step, record);
  }

  /**
   * Calls `listener` after each {@link logMetrics} has committed (a live export, e.g. TensorBoard
   * event files); returns the function that removes it.
   * @example const off = store.onMetrics((step, metrics) => writer.scalars(step, metrics, Date.now() / 1000));
   */
  onMetrics(listener: (step: number, metrics: Readonly<Record<string, number>>) => void): () => void {
    this.metricListeners.push(listener);
    return () => {
      const i = this.metricListeners.indexOf(listener);
      if (i >= 0) this.metricListeners.splice(i, 1);
    };
  }

  /** One metric of the active run over steps, in step order. */
  metricsSeries(name: string): MetricPoint[] {
    const rows = this.db.prepare('SELECT step, value FROM metrics WHERE run_id = ? AND name = ? ORDER BY step').all(this.requireRun(), name) as {
      step: number;
      value: number | null;
    }[];
    return rows.map((r) => ({ step: r.step, value: nullToNan(r.value) }));
  }

  /** Names of every metric the active run logged, sorted. */
  metricNames(): string[] {
    const rows = this.db.prepare('SELECT DISTINCT name FROM metrics WHERE run_id = ? ORDER BY name').all(this.requireRun()) as { name: string }[];
    return rows.map((r) => r.name);
  }

  /** The newest value of every metric of the active run, with the step it was logged at. */
  latestMetrics(): Record<string, MetricPoint> {
    const rows = this.db
      .prepare('SELECT name, MAX(step) AS step, value FROM metrics WHERE run_id = ? GROUP BY name ORDER BY name')
      .all(this.requireRun()) as { name: string; step: number; value: number | null }[];
    const out: Record<string, MetricPoint> = {};
    for (const r of rows) out[r.name] = { step: r.step, value: nullToNan(r.value) };
    return out;
  }

  /**
   * Stores finished episodes and their turns in one transaction. A trajectory id already stored is
   * skipped (redelivery after a crash). Returns how many were new.
   */
  recordTrajectories(runId: string, split: EpisodeSplit, trajectories: readonly Trajectory[]): { inserted: number; duplicates: number } {
    this.writes('recordTrajectories');
    if (!SPLITS.includes(split)) throw InvalidArgumentError.format('split', `expected one of ${SPLITS.join(', ')}, got ${JSON.stringify(split)}`);
    const inserted = (this.insertBatch as NonNullable<RunStore['insertBatch']>)(runId, split, trajectories);
    return { inserted, duplicates: trajectories.length - inserted };
  }

  /** Episodes matching the filter, by step then id. */
  episodes(filter: EpisodeFilter = {}): EpisodeRecord[] {
    const where = ['run_id = @runId'];
    const params: Record<string, string | number> = { runId: filter.runId ?? this.requireRun() };
    const add = (sql: string, key: string, value: string | number | undefined) => {
      if (value === undefined) return;
      where.push(sql);
      params[key] = value;
    };
    add('step = @step', 'step', filter.step);
    add('step >= @fromStep', 'fromStep', filter.fromStep);
    add('step <= @toStep', 'toStep', filter.toStep);
    add('split = @split', 'split', filter.split);
    add('outcome = @outcome', 'outcome', filter.outcome);
    add('task_id = @taskId', 'taskId', filter.taskId);
    add('group_id = @groupId', 'groupId', filter.groupId);
    params.limit = filter.limit ?? 1000;
    params.offset = filter.offset ?? 0;
    const sql = `SELECT * FROM episodes WHERE ${where.join(' AND ')} ORDER BY step, id LIMIT @limit OFFSET @offset`;
    return (this.db.prepare(sql).all(params) as EpisodeRow[]).map(toEpisode);
  }

  /** One episode of the active run by id (the primary key: one indexed row), or null. */
  episode(episodeId: string): EpisodeRecord | null {
    const row = this.db.prepare('SELECT * FROM episodes WHERE id = ? AND run_id = ?').get(episodeId, this.requireRun()) as EpisodeRow | undefined;
    return row === undefined ? null : toEpisode(row);
  }

  /**
   * Episode counts of the active run's `split` per stored step and outcome, from `fromStep` up, in
   * step order. Lazy: the rows come from the `(run_id, split, step, outcome)` index as they are
   * read, so a caller that stops early reads only the steps it consumed.
   * @example for (const { step, outcome, count } of store.episodeCounts('train', 0)) if (step > 9) break;
   */
  *episodeCounts(split: EpisodeSplit, fromStep = 0): Generator<{ step: number; outcome: string; count: number }> {
    const sql = 'SELECT step, outcome, COUNT(*) AS count FROM episodes WHERE run_id = ? AND split = ? AND step >= ? GROUP BY step, outcome ORDER BY step, outcome';
    yield* this.db.prepare(sql).iterate(this.requireRun(), split, fromStep) as IterableIterator<{ step: number; outcome: string; count: number }>;
  }

  /** The turns of one episode, in order, with their token arrays. */
  episodeTurns(episodeId: string): StoredTurn[] {
    const rows = this.db.prepare('SELECT * FROM turns WHERE episode_id = ? ORDER BY idx').all(episodeId) as TurnRow[];
    return rows.map((r): StoredTurn => ({
      index: r.idx,
      observationText: r.observation,
      actionText: r.action,
      reward: r.reward,
      policyVersion: r.policy_version,
      promptTokens: int32FromBlob(r.prompt_tokens, 'turns.prompt_tokens'),
      actionTokens: int32FromBlob(r.action_tokens, 'turns.action_tokens'),
      actionLogprobs: float32FromBlob(r.logprobs, 'turns.logprobs'),
      actionLossMask: uint8FromBlob(r.loss_mask, 'turns.loss_mask'),
      invalidAction: r.invalid !== 0,
      ...(r.shaped_reward == null ? {} : { shapedReward: r.shaped_reward }),
      ...(r.entropies == null ? {} : { entropies: float32FromBlob(r.entropies, 'turns.entropies') }),
    }));
  }

  /** Records an event of the active run (horizon stage change, checkpoint saved, resume...). `data` must be JSON-safe. */
  logEvent(step: number, kind: string, message: string, data?: unknown): void {
    const s = this.writes('logEvent');
    this.checkStep(step);
    s.insertEvent.run(this.requireRun(), step, kind, message, data === undefined ? null : JSON.stringify(data));
  }

  /** Events of the active run in the order they were logged, optionally of one kind. */
  events(kind?: string): RunEvent[] {
    const runId = this.requireRun();
    const rows = (
      kind === undefined
        ? this.db.prepare('SELECT step, kind, message, data_json FROM events WHERE run_id = ? ORDER BY id').all(runId)
        : this.db.prepare('SELECT step, kind, message, data_json FROM events WHERE run_id = ? AND kind = ? ORDER BY id').all(runId, kind)
    ) as { step: number; kind: string; message: string; data_json: string | null }[];
    return rows.map((r) => ({ step: r.step, kind: r.kind, message: r.message, data: r.data_json === null ? null : JSON.parse(r.data_json) }));
  }

  /** Closes the file (a writable store checkpoints its WAL first). Idempotent. */
  close(): void {
    if (!this.db.open) return;
    if (!this.readonly) this.db.pragma('wal_checkpoint(TRUNCATE)');
    this.db.close();
  }

  private prepareWrites() {
    const db = this.db;
    return {
      insertRun: db.prepare('INSERT INTO runs (id, name, created_at, config_json, status, backend, seed) VALUES (?, ?, ?, ?, ?, ?, ?)'),
      updateStatus: db.prepare('UPDATE runs SET status = ? WHERE id = ?'),
      insertMetric: db.prepare('INSERT OR REPLACE INTO metrics (run_id, step, name, value) VALUES (?, ?, ?, ?)'),
      insertEpisode: db.prepare(
        // ON CONFLICT(id), not OR IGNORE: OR IGNORE would also silently drop rows that break NOT NULL or CHECK.
        `INSERT INTO episodes (id, run_id, step, task_id, group_id, split, outcome, reward, turns, horizon,
           policy_version_min, policy_version_max, error, final_observation) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (id) DO NOTHING`,
      ),
      insertTurn: db.prepare(
        `INSERT INTO turns (episode_id, idx, observation, action, reward, policy_version, prompt_tokens, action_tokens,
           logprobs, loss_mask, invalid, shaped_reward, entropies) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      insertEvent: db.prepare('INSERT INTO events (run_id, step, kind, message, data_json) VALUES (?, ?, ?, ?, ?)'),
    };
  }

  /** Runs inside a transaction (see the constructor). */
  private insertTrajectories(runId: string, split: EpisodeSplit, trajectories: readonly Trajectory[]): number {
    const s = this.statements as NonNullable<RunStore['statements']>;
    let inserted = 0;
    for (let i = 0; i < trajectories.length; i++) checkTrajectory(trajectories[i], `trajectories[${i}]`);
    for (const t of trajectories) {
      let min: number | null = null;
      let max: number | null = null;
      for (const turn of t.turns) {
        if (min === null || turn.policyVersion < min) min = turn.policyVersion;
        if (max === null || turn.policyVersion > max) max = turn.policyVersion;
      }
      const result = s.insertEpisode.run(
        t.trajectoryId,
        runId,
        t.step,
        t.taskId,
        t.groupId,
        split,
        t.outcome,
        t.reward,
        t.turns.length,
        t.horizon,
        min,
        max,
        t.error ?? null,
        t.finalObservationText,
      );
      if (result.changes === 0) continue; // already stored
      inserted++;
      for (const turn of t.turns) {
        s.insertTurn.run(
          t.trajectoryId,
          turn.index,
          turn.observationText,
          turn.actionText,
          turn.reward,
          turn.policyVersion,
          toBlob(turn.promptTokens),
          toBlob(turn.actionTokens),
          toBlob(turn.actionLogprobs),
          toBlob(turn.actionLossMask),
          turn.invalidAction ? 1 : 0,
          turn.shapedReward ?? null,
          turn.entropies === undefined ? null : toBlob(turn.entropies),
        );
      }
    }
    return inserted;
  }

  private writes(operation: string): NonNullable<RunStore['statements']> {
    if (this.statements === null) throw new CheckpointError(this.path, `opened read-only; cannot ${operation}`);
    return this.statements;
  }

  private requireRun(): string {
    if (this.active === null) throw new CheckpointError(this.path, 'the run store has no run yet; call createRun first');
    return this.active;
  }

  private checkStatus(status: RunStatus): void {
    if (!RUN_STATUSES.includes(status)) {
      throw InvalidArgumentError.format('status', `expected one of ${RUN_STATUSES.join(', ')}, got ${JSON.stringify(status)}`);
    }
  }

  private checkStep(step: number): void {
    if (!Number.isInteger(step) || step < 0) throw InvalidArgumentError.format('step', `expected a non-negative integer, got ${step}`);
  }
}
