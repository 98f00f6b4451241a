/**
 * Run-store schema as an ordered list of migrations. The `schema_version` table holds how many of
 * them a database has applied; opening a store applies the rest, each in its own transaction.
 * Never edit a shipped migration: append a new one.
 */
import type Database from 'better-sqlite3';
import { CheckpointError } from '../core/errors.js';

/** Migrations in order; index + 1 is the schema version after applying it. */
export const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE runs (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    created_at INTEGER NOT NULL,          -- ms since the Unix epoch, from the caller's clock
    config_json TEXT NOT NULL,
    status TEXT NOT NULL,
    backend TEXT NOT NULL,
    seed INTEGER NOT NULL
  );
  CREATE TABLE metrics (
    run_id TEXT NOT NULL REFERENCES runs(id),
    step INTEGER NOT NULL,
    name TEXT NOT NULL,
    value REAL,                           -- NULL stands for NaN
    PRIMARY KEY (run_id, name, step)
  ) WITHOUT ROWID;
  CREATE TABLE episodes (
    id TEXT PRIMARY KEY,                  -- the trajectory id
    run_id TEXT NOT NULL REFERENCES runs(id),
    step INTEGER NOT NULL,
    task_id TEXT NOT NULL,
    group_id TEXT NOT NULL,
    split TEXT NOT NULL CHECK (split IN ('train', 'test', 'eval')),
    outcome TEXT NOT NULL,
    reward REAL NOT NULL,
    turns INTEGER NOT NULL,
    horizon INTEGER NOT NULL,
    policy_version_min INTEGER,
    policy_version_max INTEGER,
    error TEXT,
    final_observation TEXT NOT NULL
  );
  CREATE INDEX episodes_by_run_step ON episodes (run_id, step);
  CREATE TABLE turns (
    episode_id TEXT NOT NULL REFERENCES episodes(id) ON DELETE CASCADE,
    idx INTEGER NOT NULL,
    observation TEXT NOT NULL,
    action TEXT NOT NULL,
    reward REAL NOT NULL,
    policy_version INTEGER NOT NULL,
    prompt_tokens BLOB NOT NULL,          -- int32 little-endian [promptLen]
    action_tokens BLOB NOT NULL,          -- int32 little-endian [actionLen]
    logprobs BLOB NOT NULL,               -- float32 little-endian [actionLen]
    loss_mask BLOB NOT NULL,              -- uint8 [actionLen]
    invalid INTEGER NOT NULL,
    PRIMARY KEY (episode_id, idx)
  ) WITHOUT ROWID;
  CREATE TABLE events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id TEXT NOT NULL REFERENCES runs(id),
    step INTEGER NOT NULL,
    kind TEXT NOT NULL,
    message TEXT NOT NULL,
    data_json TEXT
  );
  CREATE INDEX events_by_run ON events (run_id, id);
  `,
  // 2: per-turn shaped reward (the process-reward hook's, NULL without one) and the entropy of each
  // action token's sampling distribution (float32 little-endian [actionLen], NULL when not reported).
  `
  ALTER TABLE turns ADD COLUMN shaped_reward REAL;
  ALTER TABLE turns ADD COLUMN entropies BLOB;
  `,
  // 3: the dashboard's per-step outcome counts of one split read this index alone (covering), a
  // page of steps at a time, instead of every episode row of the run.
  `
  CREATE INDEX episodes_by_run_split_step ON episodes (run_id, split, step, outcome);
  `,
];

/**
 * Oldest schema version a read-only store can read: later migrations only add nullable columns
 * (which read as absent on an older file) and indexes (queries run without them, only slower),
 * so viewers need not migrate it.
 */
export const MIN_READABLE_VERSION = 1;

/** Schema version this build writes. */
export const SCHEMA_VERSION = MIGRATIONS.length;

/**
 * Reads the version, or 0 for a fresh database.
 * @example schemaVersion(db) // 1
 */
export function schemaVersion(db: Database.Database): number {
  const table = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'").get();
  if (table === undefined) return 0;
  const row = db.prepare('SELECT version FROM schema_version').get() as { version: number } | undefined;
  return row?.version ?? 0;
}

/**
 * Brings a writable database up to {@link SCHEMA_VERSION}.
 * @example migrate(new Database('run.db'), 'run.db');
 */
export function migrate(db: Database.Database, location: string): void {
  db.exec('CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)');
  const current = schemaVersion(db);
  if (current > SCHEMA_VERSION) {
    throw new CheckpointError(location, `run store has schema version ${current}, newer than this build's ${SCHEMA_VERSION}; upgrade turnwise`);
  }
  for (let version = current; version < SCHEMA_VERSION; version++) {
    db.transaction(() => {
      db.exec(MIGRATIONS[version]);
      db.prepare('DELETE FROM schema_version').run();
      db.prepare('INSERT INTO schema_version (version) VALUES (?)').run(version + 1);
    })();
  }
}
