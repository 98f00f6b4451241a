/**
 * Tokenizer text for SQL: the instruction, first observations, candidate actions (as Thought/Action
 * replies), and the observations their results give. Results are computed with the trusted
 * in-thread runner (candidates are template-made, never agent text), so this stays synchronous.
 */
import { Rng } from '../../core/rng.js';
import type { EnvironmentOptions } from '../environment.js';
import { sqlBank } from './bank.js';
import { createSqlCatalog } from './catalog.js';
import { candidateQueries, SqlEnvironment } from './env.js';
import { formatResult } from './format.js';
import { parseSqlSettings } from './settings.js';

const ERRORS = ['Error: no such column: price', 'Error: near "FORM": syntax error', 'Error: Only a single read-only SELECT (or WITH ... SELECT) query is allowed; your action starts with "DELETE".'];

/**
 * Sample text over `episodes` random train questions. Deterministic in `seed`.
 * @example sqlCorpus(undefined, 5, 0).length > 5 // true
 */
export function sqlCorpus(options: EnvironmentOptions | undefined, episodes: number, seed: number): string[] {
  const settings = parseSqlSettings(options);
  const bank = sqlBank();
  const tasks = createSqlCatalog(options).indices('train');
  const rng = Rng.fromSeed(seed).fork('sql/corpus');
  const env = new SqlEnvironment(options);
  const out = [env.instruction()];
  try {
    for (let e = 0; e < episodes && tasks.length > 0; e++) {
      const index = rng.pick(tasks);
      const first = env.reset(index);
      out.push(first.text);
      const item = bank.items[index];
      if (item === undefined) continue;
      const queries = candidateQueries(bank, item, Math.max(settings.candidates, 2));
      const sql = rng.pick(queries);
      const action = settings.submit === 'explicit' && rng.next() < 0.7 ? `submit ${sql}` : sql;
      out.push(`Thought:\nI will run this query.\n\nAction:\n${action}`);
      const head = first.text.slice(0, first.text.indexOf('Question:'));
      out.push(`${head}Question: ${item.question}\n${rng.next() < 0.15 ? rng.pick(ERRORS) : formatResult(bank.query(item.db, sql), settings.maxRows)}`);
    }
  } finally {
    env.close();
  }
  return out;
}
