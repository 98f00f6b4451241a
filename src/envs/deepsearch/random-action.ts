/**
 * The random baseline's action in deep search without listed candidates: half the time a search
 * of two to four words drawn from the question, half the time an answer of one to three
 * consecutive words drawn from the passages the last search returned (a search when there are none), so
 * that a random agent searches and answers in the protocol's own form.
 */
import { type RandomActionRequest, wordsOf } from '../random-action.js';
import { toolCallText } from '../tools.js';

/**
 * One random `<search>` or `<answer>` (or the matching tool call).
 * @example randomSearchAction({ observation, first, rng, form: 'text' }) // '<search>capital France</search>'
 */
export function randomSearchAction(request: RandomActionRequest): string {
  const { rng, form } = request;
  const questionWords = wordsOf(request.first.text.replace(/^[\s\S]*?Question:/, ''), 2);
  const passages = /<information>([\s\S]*?)<\/information>/.exec(request.observation.text)?.[1] ?? '';
  const seen = wordsOf(passages.replace(/Doc \d+\(Title:/g, ''), 2);
  if (rng.next() < 0.5 || seen.length === 0) {
    const pool = questionWords.length > 0 ? questionWords : ['search'];
    const query = Array.from({ length: 2 + rng.int(3) }, () => rng.pick(pool)).join(' ');
    return form === 'tools' ? toolCallText({ name: 'search', arguments: { query } }) : `<search>${query}</search>`;
  }
  const start = rng.int(seen.length);
  const answer = seen.slice(start, start + 1 + rng.int(3)).join(' ');
  return form === 'tools' ? toolCallText({ name: 'answer', arguments: { answer } }) : `<answer>${answer}</answer>`;
}
