/**
 * The text-to-SQL environment: a question about one SQLite database (built from vega-datasets
 * tables), answered with SQL that runs read-only in a sandboxed child process with a time limit.
 *
 * Protocol (AgentGym's SQLGym gives one round and a reward by execution; we keep that as
 * `submit: 'first-query'` and default to a multi-turn variant): each query runs and its result is
 * shown, so the agent can explore; `submit <SQL>` runs the final answer and ends the episode with
 * reward 1 when its result set equals the gold query's (rules in `equivalence.ts`), else 0. A query
 * that cannot run (refused, SQL error, time limit) is answered with the error, flagged invalid, and
 * does not end the episode; after `maxTurns` queries the episode ends as failed.
 */
import { EnvironmentError } from '../../core/errors.js';
import { Rng } from '../../core/rng.js';
import type { Observation, StepResult } from '../../core/types.js';
import type { Environment, EnvironmentOptions } from '../environment.js';
import { type SqlBank, type SqlItem, sqlBank } from './bank.js';
import { resultsEquivalent } from './equivalence.js';
import { formatActions, formatResult, schemaText } from './format.js';
import { readToolAction, stringTool } from '../tool-action.js';
import type { ToolSpec } from '../tools.js';
import { parseSqlAction } from './parse.js';
import { acquireSandbox, type SqlSandbox } from './sandbox.js';
import { parseSqlSettings, type SqlSettings } from './settings.js';

const NAME = 'sql';

/** SQL's tools: run a query to explore, or submit one as the answer. */
export const SQL_TOOLS: readonly ToolSpec[] = Object.freeze([
  stringTool('run_query', 'Run a read-only SELECT query and see its result (does not answer).', { sql: 'One SELECT (or WITH … SELECT) statement.' }),
  stringTool('submit_query', 'Submit a SELECT query as the answer: its result is compared with the expected one and the episode ends.', { sql: 'One SELECT (or WITH … SELECT) statement.' }),
]);
/** Rows fetched from an agent query for comparison (gold results have at most 60). */
const FETCH_ROWS = 1000;

/**
 * The SQL instruction shown before the first observation.
 * @example sqlInstruction(parseSqlSettings()).includes('submit') // true
 */
export function sqlInstruction(settings: SqlSettings): string {
  const explicit = settings.submit === 'explicit';
  return [
    'You are an expert in SQL. You answer questions about a SQLite database by writing queries.',
    'Each round you see the database schema, the question and the result (or error) of your last query.',
    'Reply with one read-only SQL query: a single SELECT (or WITH ... SELECT) statement; anything that writes is refused.',
    explicit
      ? `Queries you send run and show their result (at most ${settings.maxRows} rows), so you can explore. When a query gives the answer, send it again as "submit <query>": its result is compared with the expected answer and the episode ends.`
      : 'Your first query that runs is your answer: its result is compared with the expected answer and the episode ends.',
    'Row order matters only when the question asks for an order; column names do not matter.',
    `A query may run for at most ${settings.timeoutMs} ms.`,
    '',
    'Reply in this format:',
    'Thought:',
    '<your thought>',
    '',
    'Action:',
    explicit ? 'submit SELECT ...' : 'SELECT ...',
  ].join('\n');
}

/**
 * One SQL episode at a time.
 * @example
 * const env = new SqlEnvironment();
 * const first = env.reset(0);
 * const result = await env.step('Action: submit SELECT COUNT(*) FROM cars');
 */
export class SqlEnvironment implements Environment {
  readonly name = NAME;
  readonly settings: SqlSettings;
  private bank: SqlBank | null = null;
  private sandbox: { sandbox: SqlSandbox; release: () => void } | null = null;
  private item: SqlItem | null = null;
  private actions: string[] = [];
  private turns = 0;
  private done = false;
  private closed = false;
  private last = '';

  constructor(options: EnvironmentOptions = {}) {
    this.settings = parseSqlSettings(options);
  }

  instruction(): string {
    return sqlInstruction(this.settings);
  }

  tools(): readonly ToolSpec[] {
    return SQL_TOOLS;
  }

  /** Starts question `index` (`sql_<index>`); ids past the bank are test repeats (see `testRepeats`) of question `index % bank size`. */
  reset(index: number): Observation {
    this.assertOpen('reset');
    const bank = this.loadBank();
    const limit = bank.items.length * this.settings.testRepeats;
    const item = Number.isInteger(index) && index >= 0 && index < limit ? bank.items[index % bank.items.length] : undefined;
    if (item === undefined) {
      throw new EnvironmentError(NAME, `reset: task index must be an integer in [0, ${limit}), got ${index}`);
    }
    this.item = item;
    this.turns = 0;
    this.done = false;
    this.last = '';
    this.actions = candidateQueries(bank, item, this.settings.candidates).map((sql) => (this.settings.submit === 'explicit' ? `submit ${sql}` : sql));
    return this.observation(null);
  }

  /** Runs the agent's query (see the module comment for the protocol). */
  async step(actionText: string): Promise<StepResult> {
    this.assertOpen('step');
    const item = this.item;
    if (item === null) throw new EnvironmentError(NAME, 'step called before reset');
    if (this.done) {
      return { observation: { text: 'The episode is over. Reset the environment to start a new one.' }, reward: 0, done: true, success: false, info: { invalid: true, error: 'episode-over' } };
    }
    this.turns++;
    const text = typeof actionText === 'string' ? actionText : '';
    const call = readToolAction(text, SQL_TOOLS);
    if (call.kind === 'invalid') return this.invalid(call.message, 'bad-tool-call', null);
    const parsed = call.kind === 'call' ? parseSqlAction(`${call.name === 'submit_query' || this.settings.submit === 'first-query' ? 'submit ' : ''}${call.args.sql}`) : parseSqlAction(text);
    if (!parsed.ok) return this.invalid(`Error: ${parsed.message}`, parsed.reason, null);
    const bank = this.loadBank();
    this.sandbox ??= acquireSandbox(Object.values(bank.paths));
    const outcome = await this.sandbox.sandbox.run(bank.paths[item.db] as string, parsed.sql, { timeoutMs: this.settings.timeoutMs, maxRows: FETCH_ROWS });
    if (this.closed) throw new EnvironmentError(NAME, 'closed while a query was running');
    if (!outcome.ok) return this.invalid(`Error: ${outcome.message}`, outcome.kind === 'timeout' ? 'timeout' : 'sql-error', parsed.sql);
    const table = formatResult(outcome.result, this.settings.maxRows, outcome.truncated);
    const answer = parsed.submit || this.settings.submit === 'first-query';
    const info = { invalid: false, action: parsed.sql.slice(0, 500), rows: outcome.result.rows.length, submitted: answer, family: item.family, db: item.db };
    if (answer) {
      const correct = !outcome.truncated && resultsEquivalent(outcome.result, item.gold, { ordered: item.ordered });
      this.done = true;
      this.last = `${correct ? 'correct' : 'incorrect'} answer: ${parsed.sql}`;
      const verdict = correct ? 'Your answer is correct: its result matches the expected answer.' : 'Your answer is incorrect: its result does not match the expected answer.';
      return { observation: this.observation(`${table}\n${verdict}`), reward: correct ? 1 : 0, done: true, success: correct, info: { ...info, correct } };
    }
    this.last = `query: ${parsed.sql}`;
    return this.afterTurn(table, { ...info, correct: false });
  }

  close(): void {
    this.closed = true;
    this.sandbox?.release();
    this.sandbox = null;
    this.item = null;
  }

  render(): string {
    const item = this.item;
    if (item === null) return '(no episode)';
    return [
      `sql_${item.index} [${item.family}, ${item.split}] database ${item.db}`,
      `Question: ${item.question}`,
      `Gold${item.ordered ? ' (ordered)' : ''}: ${item.sql}`,
      `Gold ${formatResult(item.gold, 5)}`,
      `Turn ${this.turns}/${this.settings.maxTurns}${this.done ? ' (done)' : ''}${this.last ? ` · last ${this.last}` : ''}`,
    ].join('\n');
  }

  /** The current question (viewer, solver). */
  current(): SqlItem | null {
    return this.item;
  }

  private afterTurn(text: string, info: Record<string, string | number | boolean | null>): StepResult {
    if (this.turns >= this.settings.maxTurns) {
      this.done = true;
      return { observation: this.observation(`${text}\nYou have used all ${this.settings.maxTurns} queries without submitting; the episode is over.`), reward: 0, done: true, success: false, info: { ...info, truncated: true } };
    }
    return { observation: this.observation(text), reward: 0, done: false, success: false, info };
  }

  private invalid(text: string, error: string, sql: string | null): StepResult {
    this.last = `${error}${sql === null ? '' : `: ${sql}`}`;
    return this.afterTurn(text, { invalid: true, error, action: sql === null ? null : sql.slice(0, 500) });
  }

  private observation(feedback: string | null): Observation {
    const item = this.item as SqlItem;
    const parts = [`Database: ${item.db}`, schemaText(item.db), `Question: ${item.question}`];
    if (feedback !== null) parts.push(feedback);
    if (this.actions.length > 0 && !this.done) parts.push(formatActions(this.actions));
    return this.actions.length > 0 && !this.done ? { text: parts.join('\n'), availableActions: [...this.actions] } : { text: parts.join('\n') };
  }

  private loadBank(): SqlBank {
    this.bank ??= sqlBank();
    return this.bank;
  }

  private assertOpen(method: string): void {
    if (this.closed) throw new EnvironmentError(NAME, `${method} called after close`);
  }
}

/**
 * The candidate list of a question: the gold and up to `count - 1` near misses whose results differ
 * from the gold's (closest variants first), in an order fixed by the item index.
 * @example candidateQueries(sqlBank(), sqlBank().items[0], 4).length // 4 (or fewer when variants run out)
 */
export function candidateQueries(bank: SqlBank, item: SqlItem, count: number): string[] {
  if (count <= 0) return [];
  const picked = [item.sql];
  for (const sql of item.variants) {
    if (picked.length >= count) break;
    if (picked.includes(sql)) continue;
    try {
      const result = bank.query(item.db, sql);
      if (!resultsEquivalent(result, item.gold, { ordered: item.ordered })) picked.push(sql);
    } catch {
      // a variant that does not run is no distractor
    }
  }
  return Rng.fromSeed(item.index).fork('sql/candidates').shuffle(picked);
}
