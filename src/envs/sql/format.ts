/**
 * Text the SQL environment shows: the schema, a result table (Markdown-style rows, truncated), and
 * the available-action list.
 */
import type { ResultSet } from './equivalence.js';
import type { Cell } from './schema.js';
import { createTableSql, databaseDef } from './schema.js';

const MAX_CELL_CHARS = 40;

/** Schema text of a database: one CREATE TABLE per table. */
export function schemaText(db: string): string {
  const def = databaseDef(db);
  return def === undefined ? '' : def.tables.map(createTableSql).join('\n');
}

function cellText(c: Cell): string {
  if (c === null) return 'NULL';
  const s = typeof c === 'number' ? String(Number.isInteger(c) ? c : Number(c.toPrecision(10))) : c;
  return s.length > MAX_CELL_CHARS ? `${s.slice(0, MAX_CELL_CHARS - 3)}...` : s.replace(/\s+/g, ' ');
}

/**
 * A result as text: header, then at most `maxRows` rows, then how many were left out.
 * @example formatResult({ columns: ['n'], rows: [[3]] }, 10) // 'Result (1 row):\n| n |\n| 3 |'
 */
export function formatResult(result: ResultSet, maxRows: number, truncatedAtSource = false): string {
  const total = result.rows.length;
  const shown = result.rows.slice(0, maxRows);
  const count = truncatedAtSource ? `more than ${total} rows` : `${total} row${total === 1 ? '' : 's'}`;
  const lines = [`Result (${count}):`, `| ${result.columns.map((c) => cellText(c)).join(' | ')} |`];
  for (const row of shown) lines.push(`| ${row.map(cellText).join(' | ')} |`);
  if (total > shown.length || truncatedAtSource) lines.push(`(${truncatedAtSource ? 'more' : total - shown.length} more rows not shown)`);
  return lines.join('\n');
}

/** The available actions, one per line (they contain commas, so not a JSON-ish list). */
export function formatActions(actions: readonly string[]): string {
  return actions.length === 0 ? '' : `Available actions:\n${actions.map((a) => `- ${a}`).join('\n')}`;
}
