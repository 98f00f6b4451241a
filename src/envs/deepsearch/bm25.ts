/**
 * Okapi BM25 over passages, with MiniSearch as the inverted index. MiniSearch scores BM25+ and
 * multiplies each hit by the number of query terms it matched; with `d = 0` (no BM25+ lower
 * bound) and that factor divided back out, a hit's score is plain BM25 with Lucene's idf, as
 * Pyserini (Search-R1's BM25 retriever) computes it:
 *
 *     score(q, d) = Σ_{t ∈ q} ln(1 + (N − n_t + 0.5) / (n_t + 0.5)) · f_t,d / (f_t,d + k1 · (1 − b + b · |d| / avgdl))
 *
 * (MiniSearch's factor k1 + 1 of the classic formula is divided out too, as Lucene leaves it out;
 * it changes no ranking.) Defaults k1 = 0.9,
 * b = 0.4 are Pyserini's. Terms: lower-cased runs of letters and digits (no stemming, no
 * stop words). `test/envs/deepsearch/bm25.test.ts` checks the scores against bm25s' Lucene method.
 */
import MiniSearch from 'minisearch';

/** Okapi BM25 parameters. */
export interface Bm25Parameters {
  readonly k1: number;
  readonly b: number;
}

/** Pyserini's defaults. */
export const PYSERINI_BM25: Bm25Parameters = Object.freeze({ k1: 0.9, b: 0.4 });

/** A hit: the passage's position in the indexed list and its BM25 score. */
export interface Bm25Hit {
  readonly position: number;
  readonly score: number;
}

/**
 * The terms of a text: lower-cased runs of letters and digits.
 * @example bm25Terms("Paris, France's capital") // ['paris', 'france', 's', 'capital']
 */
export function bm25Terms(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

interface Entry {
  readonly id: number;
  readonly text: string;
}

/** A BM25 index over a fixed list of passages. */
export class Bm25Index {
  private readonly search: MiniSearch<Entry>;
  private readonly params: Bm25Parameters;

  private constructor(search: MiniSearch<Entry>, params: Bm25Parameters) {
    this.search = search;
    this.params = params;
  }

  /**
   * Indexes `texts` (position i = `texts[i]`).
   * @example const index = Bm25Index.build(['Paris is the capital of France.', 'Rome is in Italy.']);
   */
  static build(texts: readonly string[], params: Bm25Parameters = PYSERINI_BM25): Bm25Index {
    const search = new MiniSearch<Entry>(Bm25Index.options());
    search.addAll(texts.map((text, id) => ({ id, text })));
    return new Bm25Index(search, params);
  }

  /**
   * Restores an index saved with {@link toJSON}.
   * @example Bm25Index.fromJSON(index.toJSON())
   */
  static fromJSON(json: string, params: Bm25Parameters = PYSERINI_BM25): Bm25Index {
    return new Bm25Index(MiniSearch.loadJSON<Entry>(json, Bm25Index.options()), params);
  }

  private static options() {
    return { fields: ['text'], idField: 'id', tokenize: bm25Terms, processTerm: (term: string) => term };
  }

  /** The serialised index (MiniSearch's JSON), for an on-disk cache. */
  toJSON(): string {
    return JSON.stringify(this.search);
  }

  /** Passages indexed. */
  get size(): number {
    return this.search.documentCount;
  }

  /**
   * The `k` best passages for `query`, best first (ties: lower position first); none when no term matches.
   * @example index.top('capital of France', 3)[0].position // 0
   */
  top(query: string, k: number): Bm25Hit[] {
    const { k1, b } = this.params;
    const hits = this.search
      .search(query, { prefix: false, fuzzy: false, combineWith: 'OR', bm25: { k: k1, b, d: 0 } })
      .map((r) => ({ position: r.id as number, score: r.score / Math.max(1, r.queryTerms.length) / (k1 + 1) }));
    hits.sort((x, y) => y.score - x.score || x.position - y.position);
    return hits.slice(0, k);
  }
}
