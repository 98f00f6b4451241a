/**
 * Question-answering scores as Search-R1 computes them (`verl/utils/reward_score/qa_em.py`) and
 * FlashRAG's token F1: answers are normalised the SQuAD way — lower-case, ASCII punctuation
 * removed, the articles a/an/the removed as whole words, whitespace collapsed — then
 *
 * - `em`: 1 when the answer equals some gold answer;
 * - `subem`: 1 when some gold answer occurs as a substring of the answer;
 * - `f1`: the best token-level F1 against the gold answers (a yes / no / noanswer answer or gold
 *   scores only against itself, as FlashRAG does).
 *
 * Word boundaries are Unicode-aware as in Python's `re` (`\b` next to `é` is no boundary), so
 * `ça` keeps its `a`. Pure.
 */

/** The scoring rules a deep-search run may use. */
export const QA_METRICS = ['em', 'subem', 'f1'] as const;
/** One scoring rule. */
export type QaMetric = (typeof QA_METRICS)[number];

// Python's string.punctuation: the 32 ASCII punctuation characters.
const PUNCTUATION = /[!"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~]/g;
// \b(a|an|the)\b with Python's Unicode notion of a word character (letters, digits, underscore).
const ARTICLES = /(?<![\p{L}\p{N}_])(?:a|an|the)(?![\p{L}\p{N}_])/gu;

/**
 * SQuAD / Search-R1 answer normalisation.
 * @example normalizeAnswer('The  Washington, D.C.!') // 'washington dc'
 */
export function normalizeAnswer(text: string): string {
  return text
    .toLowerCase()
    .replace(PUNCTUATION, '')
    .replace(ARTICLES, ' ')
    .split(/\s+/)
    .filter((w) => w.length > 0)
    .join(' ');
}

/**
 * 1 when the normalised answer equals a normalised gold answer, else 0.
 * @example exactMatchScore('paris', ['Paris']) // 1
 */
export function exactMatchScore(answer: string, golds: readonly string[]): number {
  const a = normalizeAnswer(answer);
  return golds.some((g) => normalizeAnswer(g) === a) ? 1 : 0;
}

/**
 * 1 when a normalised gold answer is a substring of the normalised answer, else 0.
 * @example substringMatchScore('it is Paris, France', ['Paris']) // 1
 */
export function substringMatchScore(answer: string, golds: readonly string[]): number {
  const a = normalizeAnswer(answer);
  return golds.some((g) => a.includes(normalizeAnswer(g))) ? 1 : 0;
}

const SPECIAL = new Set(['yes', 'no', 'noanswer']);

function tokenF1(answer: string, gold: string): number {
  const a = normalizeAnswer(answer);
  const g = normalizeAnswer(gold);
  if ((SPECIAL.has(a) || SPECIAL.has(g)) && a !== g) return 0;
  const at = a.split(' ').filter((t) => t.length > 0);
  const gt = g.split(' ').filter((t) => t.length > 0);
  const counts = new Map<string, number>();
  for (const t of gt) counts.set(t, (counts.get(t) ?? 0) + 1);
  let common = 0;
  for (const t of at) {
    const left = counts.get(t) ?? 0;
    if (left > 0) {
      common++;
      counts.set(t, left - 1);
    }
  }
  if (common === 0) return 0;
  const precision = common / at.length;
  const recall = common / gt.length;
  return (2 * precision * recall) / (precision + recall);
}

/**
 * The best token F1 of the answer against the gold answers.
 * @example f1Score('the Eiffel tower', ['Eiffel Tower in Paris']) // 0.666…
 */
export function f1Score(answer: string, golds: readonly string[]): number {
  let best = 0;
  for (const g of golds) best = Math.max(best, tokenF1(answer, g));
  return best;
}

/**
 * The score of `answer` under `metric`.
 * @example qaScore('f1', 'Paris', ['Paris']) // 1
 */
export function qaScore(metric: QaMetric, answer: string, golds: readonly string[]): number {
  if (metric === 'em') return exactMatchScore(answer, golds);
  if (metric === 'subem') return substringMatchScore(answer, golds);
  return f1Score(answer, golds);
}
