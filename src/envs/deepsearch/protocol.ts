/**
 * AgentGym SearchQA's (Search-R1's) action protocol: the first `<search>...</search>` or
 * `<answer>...</answer>` in the response decides the action (regex `<(search|answer)>(.*?)</\1>`,
 * dot matches newlines); for an answer, the text of the LAST `<answer>` is graded. Tags may follow an
 * `Action:` marker or stand alone. Grading is exact match after SQuAD normalisation: lower-case,
 * punctuation removed, articles (a, an, the) removed, whitespace collapsed. Pure; never throws.
 */

/** A parsed response. */
export type SearchAction = { readonly kind: 'search'; readonly query: string } | { readonly kind: 'answer'; readonly answer: string } | { readonly kind: 'invalid' };

/** Observation for a response without a usable tag (Search-R1's wording, addressed to the agent). */
export const INVALID_ACTION_MESSAGE =
  'Your previous action is invalid. If you want to search, you should put the query between <search> and </search>. If you want to give the final answer, you should put the answer between <answer> and </answer>. Let me try again.';

const ACTION_RE = /<(search|answer)>([\s\S]*?)<\/\1>/;
const ANSWER_RE = /<answer>([\s\S]*?)<\/answer>/g;

/**
 * Parses one response.
 * @example parseSearchAction('<think>...</think><search> capital of France </search>') // { kind: 'search', query: 'capital of France' }
 */
export function parseSearchAction(text: string): SearchAction {
  const s = String(text);
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
 * SQuAD answer normalisation.
 * @example normalizeAnswer('The  Washington, D.C.!') // 'washington dc'
 */
export function normalizeAnswer(text: string): string {
  return text
    .toLowerCase()
    .replace(/[!"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~]/g, '')
    .replace(/\b(a|an|the)\b/g, ' ')
    .split(/\s+/)
    .filter((w) => w.length > 0)
    .join(' ');
}

/**
 * Exact match against any gold answer.
 * @example exactMatch('paris', ['Paris']) // true
 */
export function exactMatch(answer: string, golds: readonly string[]): boolean {
  const a = normalizeAnswer(answer);
  return golds.some((g) => normalizeAnswer(g) === a);
}
