/**
 * Source of the child process that runs agent SQL (see `sandbox.ts`). Kept as plain CommonJS text
 * and started with `node -e`, so that it runs the same under tsx, vitest and the compiled build,
 * with no TypeScript loader in the child.
 *
 * argv[1]: path of better-sqlite3's entry; argv[2]: JSON array of the database paths it may open.
 * Each database is opened `readonly: true` with `PRAGMA query_only = ON`; a statement must start
 * with SELECT or WITH (after comments), must be a single statement (better-sqlite3's `prepare`
 * refuses trailing statements), and SQLite must report it read-only (`sqlite3_stmt_readonly`) and
 * returning rows. Extension loading stays disabled (better-sqlite3 never enables the SQL
 * `load_extension()` function). Rows are capped at `maxRows` and `maxChars` of text, a single cell included (cut, with `truncated` set).
 */
export const SANDBOX_CHILD_SOURCE = String.raw`
'use strict';
const Database = require(process.argv[1]);
const allowed = new Set(JSON.parse(process.argv[2]));
const dbs = new Map();
const LEAD = /^(?:\s+|--[^\n]*(?:\n|$)|\/\*[\s\S]*?\*\/)*/;
function open(path) {
  if (!allowed.has(path)) throw new Error('unknown database');
  let db = dbs.get(path);
  if (db === undefined) {
    db = new Database(path, { readonly: true, fileMustExist: true });
    db.pragma('query_only = ON');
    dbs.set(path, db);
  }
  return db;
}
function cell(v) {
  if (v === null || typeof v === 'number' || typeof v === 'string') return v;
  if (typeof v === 'bigint') return Number(v);
  if (Buffer.isBuffer(v)) return "x'" + v.subarray(0, 32).toString('hex') + (v.length > 32 ? '...' : '') + "'";
  return String(v);
}
process.on('message', (m) => {
  let reply;
  try {
    const db = open(m.db);
    const head = String(m.sql).replace(LEAD, '');
    if (!/^(select|with)\b/i.test(head)) throw new Error('only a single SELECT (or WITH ... SELECT) statement is allowed');
    const stmt = db.prepare(m.sql);
    if (!stmt.reader || !stmt.readonly) throw new Error('only read-only statements that return rows are allowed');
    const columns = stmt.columns().map((c) => c.name);
    const rows = [];
    let truncated = false;
    let chars = 0;
    for (const row of stmt.raw(true).iterate()) {
      if (rows.length >= m.maxRows || chars >= m.maxChars) { truncated = true; break; }
      const out = row.map(cell);
      // A text cell is cut to what is left of the budget, so one huge cell cannot pass it either.
      for (let i = 0; i < out.length; i++) {
        const v = out[i];
        if (typeof v !== 'string') { chars += 8; continue; }
        const room = Math.max(0, m.maxChars - chars);
        if (v.length > room) { out[i] = v.slice(0, room); truncated = true; }
        chars += out[i].length;
      }
      rows.push(out);
      if (truncated) break;
    }
    reply = { id: m.id, ok: true, columns, rows, truncated };
  } catch (e) {
    reply = { id: m.id, ok: false, error: String((e && e.message) || e) };
  }
  process.send(reply);
});
process.on('disconnect', () => process.exit(0));
process.send({ ready: true });
`;
