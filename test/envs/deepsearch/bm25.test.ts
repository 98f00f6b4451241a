import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Bm25Index, bm25Terms } from '../../../src/envs/deepsearch/bm25.js';
import { parsePassages } from '../../../src/envs/deepsearch/passages.js';

// Recorded by scripts/deepsearch-fixtures/record.py with bm25s' "lucene" method (Pyserini's formula).
const fixtures = new URL('./fixtures/', import.meta.url);
const corpus = parsePassages(readFileSync(new URL('bm25-corpus.jsonl', fixtures), 'utf8'), 'bm25-corpus.jsonl');
const reference = JSON.parse(readFileSync(new URL('bm25-scores.json', fixtures), 'utf8')) as { k1: number; b: number; queries: { query: string; scores: number[] }[] };

describe('BM25 over MiniSearch', () => {
  const index = Bm25Index.build(
    corpus.map((p) => p.contents),
    { k1: reference.k1, b: reference.b },
  );

  it.each(reference.queries.map((q) => [q.query, q.scores] as const))('scores every passage for %j as the reference implementation does', (query, expected) => {
    const got = new Array<number>(corpus.length).fill(0);
    for (const hit of index.top(query, corpus.length)) got[hit.position] = hit.score;
    // The reference computes in float32: agreement to 5 decimals.
    got.forEach((score, i) => {
      expect(score).toBeCloseTo(expected[i] as number, 5);
    });
  });

  it('ranks best first, breaks ties by position, and returns nothing for unknown terms', () => {
    const hits = index.top('Danube river', 3);
    expect(hits.map((h) => h.position)).toEqual([5, 8, 6]);
    expect(hits[0]!.score).toBeGreaterThan(hits[1]!.score);
    expect(index.top('unknownword', 3)).toEqual([]);
    const twins = Bm25Index.build(['same words here', 'same words here']);
    expect(twins.top('words', 2).map((h) => h.position)).toEqual([0, 1]);
  });

  it('survives a JSON round trip with the same scores', () => {
    const restored = Bm25Index.fromJSON(index.toJSON(), { k1: reference.k1, b: reference.b });
    expect(restored.top('capital of France', 5)).toEqual(index.top('capital of France', 5));
  });

  it('reads terms as lower-cased runs of letters and digits', () => {
    expect(bm25Terms("Zürich's 2nd-LARGEST lake")).toEqual(['zürich', 's', '2nd', 'largest', 'lake']);
  });
});
