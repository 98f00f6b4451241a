import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { ensureSqlDatabases } from '../../src/envs/sql/build.js';
import { DEFAULT_MAX_CHARS, SqlSandbox } from '../../src/envs/sql/sandbox.js';

const paths = ensureSqlDatabases();
const cars = paths.cars as string;
const box = new SqlSandbox(Object.values(paths));
const limits = { timeoutMs: 3000, maxRows: 100 };
const hash = (p: string) => createHash('sha256').update(readFileSync(p)).digest('hex');
const scratch = mkdtempSync(join(tmpdir(), 'turnwise-sql-'));
afterAll(() => {
  box.close();
  rmSync(scratch, { recursive: true, force: true });
});

describe('SQL sandbox', () => {
  it('runs a SELECT and returns columns and rows', async () => {
    const out = await box.run(cars, 'SELECT origin, COUNT(*) AS n FROM cars GROUP BY origin ORDER BY origin', limits);
    expect(out).toEqual({ ok: true, truncated: false, result: { columns: ['origin', 'n'], rows: [['Europe', 73], ['Japan', 79], ['USA', 254]] } });
  });

  it('refuses every statement that writes, and the database file stays byte-identical', async () => {
    const before = hash(cars);
    const writes = [
      "INSERT INTO cars (name) VALUES ('x')",
      'UPDATE cars SET year = 0',
      'DELETE FROM cars',
      'DROP TABLE cars',
      'CREATE TABLE t (x)',
      "WITH x AS (SELECT 1) INSERT INTO cars (name) SELECT 'y'",
      'WITH x AS (SELECT 1) DELETE FROM cars',
      'SELECT 1; DELETE FROM cars',
      'PRAGMA query_only = 0',
      'VACUUM',
      `VACUUM INTO '${join(scratch, 'copy.db')}'`,
      'BEGIN IMMEDIATE',
      "REPLACE INTO cars (name) VALUES ('z')",
    ];
    for (const sql of writes) {
      const out = await box.run(cars, sql, limits);
      expect(out.ok, sql).toBe(false);
    }
    expect(hash(cars)).toBe(before);
    expect(existsSync(join(scratch, 'copy.db'))).toBe(false);
    const count = await box.run(cars, 'SELECT COUNT(*) FROM cars', limits);
    expect(count.ok && count.result.rows).toEqual([[406]]);
  });

  it('cannot attach or read other files, nor load extensions', async () => {
    const other = join(scratch, 'other.db');
    const db = new Database(other);
    db.exec("CREATE TABLE secret (s TEXT); INSERT INTO secret VALUES ('hidden')");
    db.close();
    for (const sql of [`ATTACH '${other}' AS o`, `SELECT * FROM o.secret`, "SELECT load_extension('/usr/lib/x86_64-linux-gnu/libm.so.6')", "SELECT readfile('/etc/passwd')", "SELECT * FROM fsdir('/')", "SELECT edit('x')"]) {
      const out = await box.run(cars, sql, limits);
      expect(out.ok, sql).toBe(false);
    }
    // A path outside the allowed set is refused by the child itself.
    const outside = await box.run(other, 'SELECT * FROM secret', limits);
    expect(outside).toMatchObject({ ok: false, kind: 'error', message: 'unknown database' });
  });

  it('stops an endless recursive CTE at the time limit and keeps serving queries', async () => {
    const spawnsBefore = box.spawns;
    const out = await box.run(cars, 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT COUNT(*) FROM c', { timeoutMs: 300, maxRows: 10 });
    expect(out).toMatchObject({ ok: false, kind: 'timeout' });
    const next = await box.run(cars, 'SELECT COUNT(*) FROM cars', limits);
    expect(next.ok && next.result.rows).toEqual([[406]]);
    expect(box.spawns).toBe(spawnsBefore + 1);
  });

  it('stops a huge cross join too, and truncates big results', async () => {
    const slow = await box.run(paths.movies as string, 'SELECT COUNT(*) FROM movies a, movies b, movies c', { timeoutMs: 300, maxRows: 10 });
    expect(slow).toMatchObject({ ok: false, kind: 'timeout' });
    const big = await box.run(cars, 'SELECT name FROM cars', { timeoutMs: 3000, maxRows: 10 });
    expect(big.ok && big.truncated).toBe(true);
    expect(big.ok && big.result.rows.length).toBe(10);
  });

  it('cuts a single huge cell to the text budget, so this process grows by a bounded amount', async () => {
    await box.run(cars, 'SELECT 1', limits); // the child is up
    const before = process.memoryUsage().rss;
    // hex(zeroblob(n)) is a 2n-character text: one 100M-character cell.
    const out = await box.run(cars, 'SELECT hex(zeroblob(50000000)) AS big', { timeoutMs: 20_000, maxRows: 10 });
    const grown = process.memoryUsage().rss - before;
    expect(out.ok && out.truncated).toBe(true);
    expect(out.ok && String(out.result.rows[0]?.[0]).length).toBe(DEFAULT_MAX_CHARS);
    expect(grown).toBeLessThan(32 * 2 ** 20); // it was about 280 MiB before the cut
    const two = await box.run(cars, 'SELECT hex(zeroblob(300)) AS a, hex(zeroblob(300)) AS b', { ...limits, maxChars: 1000 });
    expect(two.ok && two.truncated).toBe(true);
    expect(two.ok && two.result.rows[0]?.map((v) => String(v).length)).toEqual([600, 400]);
  }, 30_000);

  it('answers queued queries in order and resolves pending ones with an error on close', async () => {
    const local = new SqlSandbox([cars]);
    const results = await Promise.all([1, 2, 3].map((n) => local.run(cars, `SELECT ${n}`, limits)));
    expect(results.map((r) => r.ok && r.result.rows[0]?.[0])).toEqual([1, 2, 3]);
    const pending = local.run(cars, 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT COUNT(*) FROM c', limits);
    local.close();
    expect(await pending).toMatchObject({ ok: false, kind: 'error' });
  });
});

describe('SQL database build', () => {
  it('is safe under concurrent first use: two processes build the same fresh cache', async () => {
    const dir = join(scratch, 'race');
    const build = resolve('src/envs/sql/build.ts');
    const code = `import(${JSON.stringify(build)}).then((m) => console.log(JSON.stringify(m.ensureSqlDatabases(${JSON.stringify(dir)}))))`;
    const runs = await Promise.all(
      [0, 1].map(
        () =>
          new Promise<string>((done, fail) => {
            const child = spawn(process.execPath, ['--import', 'tsx', '-e', code], { stdio: ['ignore', 'pipe', 'pipe'] });
            let out = '';
            let err = '';
            child.stdout.on('data', (d) => (out += d));
            child.stderr.on('data', (d) => (err += d));
            child.on('close', (c) => (c === 0 ? done(out.trim()) : fail(new Error(`build process exited ${c}: ${err}`))));
          }),
      ),
    );
    expect(new Set(runs).size).toBe(1);
    const built = JSON.parse(runs[0] as string) as Record<string, string>;
    const db = new Database(built.cars as string, { readonly: true });
    expect(db.prepare('SELECT COUNT(*) AS n FROM cars').get()).toEqual({ n: 406 });
    db.close();
    const flights = new Database(built.flights as string, { readonly: true });
    expect(flights.prepare('SELECT COUNT(*) AS n FROM routes').get()).toEqual({ n: 5366 });
    flights.close();
  });
});
