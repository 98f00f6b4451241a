/**
 * BM25 retrieval over the local corpus with MiniSearch (its scoring is BM25+, a BM25 variant with a
 * lower bound on term-frequency normalisation), titles boosted 2x. Exact terms only (no fuzzy or
 * prefix matching), so that results are deterministic and a query means what it says; ties keep
 * corpus order (MiniSearch sorts stably by score).
 */
import MiniSearch from 'minisearch';
import { type SearchDocument, searchDocuments } from './documents.js';

/** A hit: the document and its score. */
export interface SearchHit {
  readonly doc: SearchDocument;
  readonly score: number;
}

let index: MiniSearch<SearchDocument> | null = null;

function build(): MiniSearch<SearchDocument> {
  const ms = new MiniSearch<SearchDocument>({ fields: ['title', 'text'], idField: 'id', searchOptions: { boost: { title: 2 }, prefix: false, fuzzy: false } });
  ms.addAll([...searchDocuments()]);
  return ms;
}

/**
 * The top `k` documents for `query` (none for a query with no known term).
 * @example searchCorpus('France', 3)[0]?.doc.title // 'France'
 */
export function searchCorpus(query: string, k: number): SearchHit[] {
  index ??= build();
  const docs = searchDocuments();
  return index
    .search(query)
    .slice(0, k)
    .map((r) => ({ doc: docs[r.id as number] as SearchDocument, score: r.score }));
}

/**
 * Search-R1's `<information>` block: `Doc i(Title: t) text` per hit.
 * @example formatInformation(searchCorpus('France', 1)) // '<information>Doc 1(Title: France) France is ...\n</information>'
 */
export function formatInformation(hits: readonly SearchHit[]): string {
  if (hits.length === 0) return '<information>No documents found.\n</information>';
  return `<information>${hits.map((h, i) => `Doc ${i + 1}(Title: ${h.doc.title}) ${h.doc.text}\n`).join('')}</information>`;
}
