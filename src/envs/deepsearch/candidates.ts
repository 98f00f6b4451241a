/**
 * The finite action list offered for constrained decoding (free text stays accepted):
 * - `<search>name</search>` for each corpus entity name (country, province or state; a country's
 *   capital as `<name> capital`) that appears in the question or in the last documents, and for an
 *   IATA or currency code in the question, question first, at most four;
 * - `<answer>value</answer>` for the value of the relation the question asks about ("capital" or
 *   "continent") in each of the last documents, in rank order, at most three.
 * Built from the question text and the observations only, never from the gold answer.
 */
import { type SearchDocument, searchDocuments } from './documents.js';

const MAX_SEARCHES = 4;
const MAX_ANSWERS = 3;
const MAX_NAME_WORDS = 6;
/** Entity name -> the search it suggests (capitals with the word "capital", so that BM25 prefers countries over airports). */
let dictionary: Map<string, string> | null = null;

function names(): Map<string, string> {
  if (dictionary === null) {
    dictionary = new Map();
    for (const d of searchDocuments()) {
      if (d.kind === 'airport') continue;
      if (d.title.length >= 3) dictionary.set(d.title, d.title);
      const capital = d.kind === 'country' ? d.facts.capital : undefined;
      if (capital && capital.length >= 3 && !dictionary.has(capital)) dictionary.set(capital, `${capital} capital`);
    }
  }
  return dictionary;
}

/** Known names in `text`, in order, longest match first at each word (word n-gram lookup). */
function mentioned(text: string): string[] {
  const dict = names();
  const words = text.split(/\s+/).map((w) => w.replace(/^[("']+|[)"'.,;:?!]+$/g, ''));
  const out: string[] = [];
  for (let i = 0; i < words.length; i++) {
    for (let n = Math.min(MAX_NAME_WORDS, words.length - i); n >= 1; n--) {
      const phrase = words.slice(i, i + n).join(' ');
      const query = dict.get(phrase);
      if (query !== undefined) {
        out.push(query);
        i += n - 1;
        break;
      }
    }
  }
  return out;
}

/**
 * Candidate actions for a question and the documents last returned.
 * @example searchCandidates('What is the capital of France?', []) // ['<search>France</search>']
 */
export function searchCandidates(question: string, lastDocs: readonly SearchDocument[], searched: ReadonlySet<string>): string[] {
  const searches: string[] = [];
  const push = (q: string) => {
    if (searches.length < MAX_SEARCHES && !searches.includes(q) && !searched.has(q)) searches.push(q);
  };
  for (const code of question.match(/\b[A-Z0-9]{3}\b/g) ?? []) {
    if (/IATA code/.test(question)) push(code);
    else if (/currency code/.test(question)) push(`currency ${code}`);
  }
  for (const n of mentioned(question)) push(n);
  for (const d of lastDocs) for (const n of mentioned(d.text)) push(n);
  const relation = /\bcapital\b/.test(question) && !/whose capital is/.test(question) ? 'capital' : /\bcontinent\b/.test(question) ? 'continent' : null;
  const answers: string[] = [];
  if (relation !== null) {
    for (const d of lastDocs) {
      const value = d.facts[relation];
      if (value && !answers.includes(value) && answers.length < MAX_ANSWERS) answers.push(value);
    }
  }
  return [...searches.map((q) => `<search>${q}</search>`), ...answers.map((a) => `<answer>${a}</answer>`)];
}
