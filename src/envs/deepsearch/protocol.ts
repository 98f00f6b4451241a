/**
 * AgentGym SearchQA's (Search-R1's) action protocol: the first `<search>...</search>` or
 * `<answer>...</answer>` in the response decides the action (regex `<(search|answer)>(.*?)</\1>`,
 * dot matches newlines); for an answer, the text of the LAST `<answer>` is graded. Tags may follow an
 * `Action:` marker or stand alone, or come as a call of the `search` / `answer` tool. Grading is exact match after SQuAD normalisation: lower-case,
 * punctuation removed, articles (a, an, the) removed, whitespace collapsed. Pure; never throws.
 */
import { readToolAction, stringTool } from '../tool-action.js';
import type { ToolSpec } from '../tools.js';
import { exactMatchScore } from './qa-scoring.js';

/** A parsed response (an invalid one may carry the message a malformed tool call gets). */
export type SearchAction =
  | { readonly kind: 'search'; readonly query: string }
  | { readonly kind: 'answer'; readonly answer: string }
  | { readonly kind: 'invalid'; readonly message?: string };

/** The tools of deep search: `search(query)` and `answer(answer)`, the calls of Search-R1's tags. */
export const DEEPSEARCH_TOOLS: readonly ToolSpec[] = Object.freeze([
  stringTool('search', 'Search the encyclopedia; the top passages come back.', { query: 'What to search for.' }),
  stringTool('answer', 'Give the final answer (a short phrase, no explanation).', { answer: 'The answer.' }),
]);

/** Observation for a response without a usable tag (Search-R1's wording, addressed to the agent). */
export const INVALID_ACTION_MESSAGE =
  'Your previous action is invalid. If you want to search, you should put the query between <search> and </search>. If you want to give the final answer, you should put the answer between <answer> and </answer>. Let me try again.';

export { normalizeAnswer } from './qa-scoring.js';

const ACTION_RE = /<(search|answer)>([\s\S]*?)<\/\1>/;
const ANSWER_RE = /<answer>([\s\S]*?)<\/answer>/g;

/**
 * Parses one response.
 * @example parseSearchAction('<think>...</think><search> capital of France </search>') // { kind: 'search', query: 'capital of France' }
 */
export function parseSearchAction(text: string): SearchAction {
  const s = String(text);
  const call = readToolAction(s, DEEPSEARCH_TOOLS);
  if (call.kind === 'invalid') return { kind: 'invalid', message: call.message };
  if (call.kind === 'call') return call.name === 'search' ? { kind: 'search', query: call.args.query as string } : { kind: 'answer', answer: call.args.answer as string };
  const m = ACTION_RE.exec(s);
  if (m === null) return { kind: 'invalid' };
  if (m[1] === 'search') {
    const query = (m[2] ?? '').trim();
    return query.length === 0 ? { kind: 'invalid' } : { kind: 'search', query };
  }
  const answers = [...s.matchAll(ANSWER_RE)];
  const answer = (answers[answers.length - 1]?.[1] ?? '').trim();
  return answer.length === 0 ? { kind: 'invalid' } : { kind: 'answer', answer };
}

/**
 * Exact match against any gold answer (Search-R1's `em_check`).
 * @example exactMatch('paris', ['Paris']) // true
 */
export function exactMatch(answer: string, golds: readonly string[]): boolean {
  return exactMatchScore(answer, golds) === 1;
}
