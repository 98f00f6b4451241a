/**
 * The question bank: every template question of every database, validated against the data (the
 * gold returns 1 to 60 rows and not a lone NULL; duplicates dropped), shuffled with a fixed seed,
 * and split: the first `testSize` items are the test split, the rest train. Item `sql_<n>` is bank
 * entry `n`, so a task id always means the same question for a given data and schema version.
 * Built once (about a second: thousands of validation queries) and cached as `bank-v<N>.json` next
 * to the database files (same atomic write-then-rename as the databases); loaded once per process.
 */
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { threadId } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { Rng } from '../../core/rng.js';
import type { Split } from '../../core/types.js';
import { ensureSqlDatabases } from './build.js';
import type { ResultSet } from './equivalence.js';
import { DATABASES } from './schema.js';
import { generateQuestions, type SqlQuestion, type TrustedQuery } from './templates.js';

/** A validated question with its index, split and gold result. */
export interface SqlItem extends SqlQuestion {
  readonly index: number;
  readonly split: Split;
  readonly gold: ResultSet;
}

/** The bank and how to query its databases with trusted (template-made) SQL. */
export interface SqlBank {
  readonly items: readonly SqlItem[];
  readonly testSize: number;
  /** Database name -> file path. */
  readonly paths: Readonly<Record<string, string>>;
  /** Runs trusted SQL in this thread (never agent text: that goes to the sandbox). */
  readonly query: TrustedQuery;
}

/** Largest gold result kept, in rows. */
export const MAX_GOLD_ROWS = 60;
const BANK_SEED = 20_250;
const TEST_FRACTION = 0.2;
const MAX_TEST = 500;
/** Bump when templates, validation or the split change (the cache folder already keys the data). */
export const SQL_BANK_VERSION = 1;

let bank: SqlBank | null = null;

/** Opens each database read-only in this thread, for template-made queries. */
function trustedRunner(paths: Readonly<Record<string, string>>): TrustedQuery {
  const dbs = new Map<string, Database.Database>();
  return (db, sql) => {
    let conn = dbs.get(db);
    if (conn === undefined) {
      const path = paths[db];
      if (path === undefined) throw new RangeError(`unknown SQL database ${db}`);
      conn = new Database(path, { readonly: true, fileMustExist: true });
      conn.pragma('query_only = ON');
      dbs.set(db, conn);
    }
    const stmt = conn.prepare(sql).raw(true);
    return { columns: stmt.columns().map((c) => c.name), rows: stmt.all() as (number | string | null)[][] };
  };
}

function usable(gold: ResultSet): boolean {
  if (gold.rows.length === 0 || gold.rows.length > MAX_GOLD_ROWS) return false;
  return !(gold.rows.length === 1 && gold.rows[0]?.every((c) => c === null));
}

/**
 * The bank (built on first call).
 * @example sqlBank().items[0].question // 'How many cars have ...?'
 */
export function sqlBank(): SqlBank {
  if (bank !== null) return bank;
  const paths = ensureSqlDatabases();
  const query = trustedRunner(paths);
  const file = join(dirname(paths.cars as string), `bank-v${SQL_BANK_VERSION}.json`);
  let cached: { items: SqlItem[]; testSize: number } | null = null;
  if (existsSync(file)) {
    try {
      cached = JSON.parse(readFileSync(file, 'utf8')) as { items: SqlItem[]; testSize: number };
    } catch {
      cached = null; // unreadable: rebuild below
    }
  }
  if (cached === null) {
    cached = buildItems(query);
    const tmp = `${file}.${process.pid}-${threadId}.tmp`;
    try {
      writeFileSync(tmp, JSON.stringify(cached));
      renameSync(tmp, file);
    } catch {
      rmSync(tmp, { force: true }); // a read-only cache only costs the rebuild next time
    }
  }
  bank = { items: cached.items, testSize: cached.testSize, paths, query };
  return bank;
}

/** Generates, validates, shuffles and splits every question. */
function buildItems(query: TrustedQuery): { items: SqlItem[]; testSize: number } {
  const seen = new Set<string>();
  const valid: { q: SqlQuestion; gold: ResultSet }[] = [];
  for (const def of DATABASES) {
    for (const q of generateQuestions(def, query)) {
      const key = `${q.db}\n${q.sql}`;
      if (seen.has(key) || seen.has(`${q.db}\n${q.question}`)) continue;
      seen.add(key);
      seen.add(`${q.db}\n${q.question}`);
      const gold = query(q.db, q.sql);
      if (usable(gold)) valid.push({ q, gold });
    }
  }
  Rng.fromSeed(BANK_SEED).fork('sql/bank').shuffle(valid);
  const testSize = Math.min(MAX_TEST, Math.round(valid.length * TEST_FRACTION));
  const items = valid.map(({ q, gold }, index): SqlItem => ({ ...q, gold, index, split: index < testSize ? 'test' : 'train' }));
  return { items, testSize };
}
