/**
 * The random baseline's query in free mode (`candidates: 0`): a well-formed SELECT over a table
 * and columns read from the schema in the observation — a column, COUNT(*), or MIN / MAX / AVG /
 * SUM of a numeric column, optionally with a GROUP BY — sent as the final answer (`submit …`), as
 * text or as a `submit_query` tool call.
 */
import type { RandomActionRequest } from '../random-action.js';
import { toolCallText } from '../tools.js';

interface Table {
  readonly name: string;
  readonly columns: readonly { readonly name: string; readonly numeric: boolean }[];
}

function tablesOf(text: string): Table[] {
  return [...text.matchAll(/CREATE TABLE (\w+) \(([^)]*)\)/g)].map((m) => ({
    name: m[1] as string,
    columns: (m[2] as string).split(',').map((c) => {
      const [name = '', type = ''] = c.trim().split(/\s+/);
      return { name, numeric: /INT|REAL|NUM/i.test(type) };
    }),
  }));
}

/**
 * One random query.
 * @example randomSqlAction({ observation, first, rng, form: 'text' }) // 'Action: submit SELECT AVG(weight_in_lbs) FROM cars'
 */
export function randomSqlAction(request: RandomActionRequest): string {
  const { rng, form } = request;
  const tables = tablesOf(request.first.text);
  let sql = 'SELECT 1';
  if (tables.length > 0) {
    const table = rng.pick(tables);
    const column = rng.pick(table.columns);
    const numeric = table.columns.filter((c) => c.numeric);
    const roll = rng.next();
    let select = column.name;
    if (roll < 0.25) select = 'COUNT(*)';
    else if (roll < 0.6 && numeric.length > 0) select = `${rng.pick(['MIN', 'MAX', 'AVG', 'SUM'])}(${rng.pick(numeric).name})`;
    const group = select !== column.name && rng.next() < 0.3 ? rng.pick(table.columns).name : null;
    sql = group === null ? `SELECT ${select} FROM ${table.name}` : `SELECT ${group}, ${select} FROM ${table.name} GROUP BY ${group}`;
  }
  return form === 'tools' ? toolCallText({ name: 'submit_query', arguments: { sql } }) : `Action: submit ${sql}`;
}
