/**
 * Writes the small deep-search data set shipped in data/deepsearch/, in Search-R1's formats, from
 * the built-in encyclopedia (src/envs/deepsearch/documents.ts: countries, provinces, US states and
 * airports from country-list-js and vega-datasets) and its multi-hop question bank:
 *
 * - corpus.jsonl: one passage per line, {"id", "contents": "\"Title\"\ntext"} (wiki-18's format);
 * - train.jsonl, test.jsonl: {"id", "question", "golden_answers", "data_source"} (FlashRAG's
 *   format; data_source is the question template, e.g. hops2/province_capital).
 *
 *     node --import tsx scripts/make-deepsearch-data.ts
 *
 * Deterministic: the same package versions give the same files.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { searchDocuments } from '../src/envs/deepsearch/documents.js';
import { searchQuestions } from '../src/envs/deepsearch/questions.js';

const OUT = join(import.meta.dirname, '..', 'data', 'deepsearch');
/** Held-out questions kept (the first ones of the bank's shuffled test split). */
const TEST_SIZE = 200;

mkdirSync(OUT, { recursive: true });
const lines = (rows: readonly object[]) => `${rows.map((r) => JSON.stringify(r)).join('\n')}\n`;
writeFileSync(join(OUT, 'corpus.jsonl'), lines(searchDocuments().map((d) => ({ id: String(d.id), contents: `"${d.title}"\n${d.text}` }))));
const { items } = searchQuestions();
const row = (q: (typeof items)[number]) => ({ id: `${q.split}_${q.index}`, question: q.question, golden_answers: q.answers, data_source: q.template });
writeFileSync(join(OUT, 'train.jsonl'), lines(items.filter((q) => q.split === 'train').map(row)));
writeFileSync(join(OUT, 'test.jsonl'), lines(items.filter((q) => q.split === 'test').slice(0, TEST_SIZE).map(row)));
console.log(`wrote ${OUT}: ${searchDocuments().length} passages, ${items.filter((q) => q.split === 'train').length} train and ${Math.min(TEST_SIZE, items.filter((q) => q.split === 'test').length)} test questions`);
