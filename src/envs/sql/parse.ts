/**
 * Reads the agent's SQL from its raw text. Accepted forms, in this order:
 * - `Thought: ... Action: <sql>`: everything after the single `Action:` marker (SQL may span lines);
 *   two markers are AgentGym's "only one Action" error;
 * - a fenced block (```sql ... ``` or ``` ... ```), inside the action text or anywhere when there
 *   is no marker;
 * - the bare text.
 * A leading `submit` (any case) marks the final answer. Trailing semicolons are dropped. What is
 * left must start with SELECT or WITH (after comments); anything else is refused here, before it
 * reaches the database. Pure; never throws.
 */
import { MULTIPLE_ACTIONS_MESSAGE } from '../parse-action.js';

/** A parsed SQL action, or the observation text to answer with. */
export type ParsedSql =
  | { readonly ok: true; readonly sql: string; readonly submit: boolean }
  | { readonly ok: false; readonly reason: 'multiple-actions' | 'missing-action' | 'empty' | 'not-select' | 'too-long'; readonly message: string };

/** Longest SQL text accepted, in characters. */
export const MAX_SQL_CHARS = 4000;

const FENCE_RE = /```[ \t]*(?:sql|sqlite)?[ \t]*\n?([\s\S]*?)```/i;
const LEADING_COMMENTS_RE = /^(?:\s+|--[^\n]*(?:\n|$)|\/\*[\s\S]*?\*\/)*/;

/**
 * Parses one response.
 * @example parseSqlAction('Thought: count them\nAction: submit SELECT COUNT(*) FROM cars;')
 * // { ok: true, sql: 'SELECT COUNT(*) FROM cars', submit: true }
 */
export function parseSqlAction(text: string): ParsedSql {
  const cleaned = String(text).replace(/<\/s>\s*$/, '');
  const markers = cleaned.match(/Action:/g)?.length ?? 0;
  if (markers > 1) return { ok: false, reason: 'multiple-actions', message: MULTIPLE_ACTIONS_MESSAGE };
  let body: string;
  if (markers === 1) body = cleaned.slice(cleaned.indexOf('Action:') + 'Action:'.length);
  else {
    const fence = FENCE_RE.exec(cleaned);
    if (fence) body = fence[1] ?? '';
    else if (/Thought:/.test(cleaned)) {
      return { ok: false, reason: 'missing-action', message: 'Your response has a Thought but no Action. End it with "Action:" followed by one SQL query.' };
    } else body = cleaned;
  }
  body = body.trim();
  let submit = false;
  const submitMatch = /^submit\b[:\s]*/i.exec(body);
  if (submitMatch) {
    submit = true;
    body = body.slice(submitMatch[0].length);
  }
  const fenced = FENCE_RE.exec(body);
  if (fenced) {
    body = (fenced[1] ?? '').trim();
    const inner = /^submit\b[:\s]*/i.exec(body);
    if (inner) {
      submit = true;
      body = body.slice(inner[0].length);
    }
  }
  const sql = body.trim().replace(/(?:\s*;)+$/, '').trim();
  if (sql.length === 0) return { ok: false, reason: 'empty', message: 'No SQL query found in your response. Reply with "Action:" followed by one SELECT query.' };
  if (sql.length > MAX_SQL_CHARS) return { ok: false, reason: 'too-long', message: `Your query is ${sql.length} characters long; the limit is ${MAX_SQL_CHARS}.` };
  const head = sql.replace(LEADING_COMMENTS_RE, '');
  if (!/^(select|with)\b/i.test(head)) {
    const word = head.split(/\s+/)[0]?.slice(0, 20) ?? '';
    return { ok: false, reason: 'not-select', message: `Only a single read-only SELECT (or WITH ... SELECT) query is allowed; your action starts with ${JSON.stringify(word)}.` };
  }
  return { ok: true, sql, submit };
}
