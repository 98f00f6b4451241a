/**
 * Builds the SQLite files of the SQL environment at first use, into a cache folder keyed by the
 * versions of turnwise, vega-datasets and the schema below, so that a package upgrade rebuilds.
 *
 * Folder: `$TURNWISE_CACHE_DIR`, else `~/.cache/turnwise`, else `<os tmpdir>/turnwise-cache`
 * (the first one that can be created). Concurrent first use is safe: each builder writes a private
 * temporary file and renames it into place (rename is atomic on one file system), so a reader only
 * ever opens a complete database; two builders racing write identical content.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { threadId } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { EnvironmentError } from '../../core/errors.js';
import { cellOf, DATABASES, type DatabaseDef } from './schema.js';
import { readVegaTable, vegaDatasetsVersion } from './vega.js';

/** Bump when the table definitions or the build change, so that old caches are not reused. */
export const SQL_SCHEMA_VERSION = 2;

let tmpCounter = 0;

/** Version of the turnwise package (the nearest package.json named turnwise above this file). */
function turnwiseVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'turnwise') return pkg.version ?? '0';
    } catch {
      // keep walking up
    }
    dir = dirname(dir);
  }
  return '0';
}

/**
 * The cache folder for this build of the databases (created if missing).
 * @example sqlCacheDir() // '/home/me/.cache/turnwise/sql-s1-vega3.2.1-tw0.1.0'
 */
export function sqlCacheDir(): string {
  const leaf = `sql-s${SQL_SCHEMA_VERSION}-vega${vegaDatasetsVersion()}-tw${turnwiseVersion()}`;
  const roots = [process.env.TURNWISE_CACHE_DIR, join(homedir(), '.cache', 'turnwise'), join(tmpdir(), 'turnwise-cache')].filter(
    (r): r is string => typeof r === 'string' && r.length > 0,
  );
  const errors: string[] = [];
  for (const root of roots) {
    const dir = join(root, leaf);
    try {
      mkdirSync(dir, { recursive: true });
      return dir;
    } catch (err) {
      errors.push(`${dir}: ${(err as Error).message}`);
    }
  }
  throw new EnvironmentError('sql', `no writable cache folder for the SQL databases (${errors.join('; ')}); set TURNWISE_CACHE_DIR`);
}

/** Writes one database into `path` (a fresh file). */
function writeDatabase(def: DatabaseDef, path: string): void {
  const db = new Database(path);
  try {
    db.pragma('journal_mode = OFF');
    db.pragma('synchronous = OFF');
    db.transaction(() => {
      for (const table of def.tables) {
        db.exec(`CREATE TABLE ${table.name} (${table.columns.map((c) => `${c.name} ${c.type}`).join(', ')})`);
        const insert = db.prepare(`INSERT INTO ${table.name} VALUES (${table.columns.map(() => '?').join(', ')})`);
        for (const record of readVegaTable(table.file)) insert.run(table.columns.map((c) => cellOf(c, record)));
        for (const column of [...table.categorical, ...(table.indexed ?? [])]) db.exec(`CREATE INDEX ${table.name}_${column} ON ${table.name} (${column})`);
      }
    })();
  } finally {
    db.close();
  }
}

/**
 * Paths of every database file, building the missing ones first (see the module comment).
 * @example ensureSqlDatabases().cars // '/home/me/.cache/turnwise/sql-.../cars.sqlite'
 */
export function ensureSqlDatabases(dir: string = sqlCacheDir()): Readonly<Record<string, string>> {
  const paths: Record<string, string> = {};
  mkdirSync(dir, { recursive: true });
  for (const def of DATABASES) {
    const path = join(dir, `${def.name}.sqlite`);
    if (!existsSync(path)) {
      const tmp = `${path}.${process.pid}-${threadId}-${tmpCounter++}.tmp`;
      try {
        writeDatabase(def, tmp);
        renameSync(tmp, path);
      } catch (cause) {
        rmSync(tmp, { force: true });
        throw new EnvironmentError('sql', `could not build database ${def.name} at ${path}`, { cause });
      }
    }
    paths[def.name] = path;
  }
  return paths;
}
