/**
 * Okapi BM25 over passages, as Pyserini (Search-R1's BM25 retriever) scores it:
 *
 *     score(q, d) = Σ_{t ∈ q} ln(1 + (N − n_t + 0.5) / (n_t + 0.5)) · f_t,d / (f_t,d + k1 · (1 − b + b · |d| / avgdl))
 *
 * (Lucene's idf, and no constant factor k1 + 1, which changes no ranking; a term repeated in the
 * query counts each time). Defaults k1 = 0.9, b = 0.4 are Pyserini's. Terms: lower-cased runs of
 * letters and digits (no stemming, no stop words).
 *
 * Written here rather than on MiniSearch (already a dependency, used by the built-in corpus):
 * MiniSearch scores BM25+, multiplies each hit by its number of matched query terms, and takes a
 * field's length as its number of distinct terms; even with the first two undone its scores are
 * not BM25's (1.8 % off on the top passage of "capital of France" in the test corpus).
 * `test/envs/deepsearch/bm25.test.ts` checks these scores against bm25s' Lucene method.
 */

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

/** The serialised form (version 1). */
interface Bm25Json {
  readonly version: 1;
  readonly lengths: number[];
  /** term -> [position, frequency, position, frequency, …], positions ascending. */
  readonly postings: Record<string, number[]>;
}

/** An inverted index over a fixed list of passages. */
export class Bm25Index {
  private readonly lengths: Int32Array; // [passages] terms per passage
  private readonly postings: Map<string, Int32Array>; // term -> [position, frequency]*
  private readonly averageLength: number;
  private readonly params: Bm25Parameters;

  private constructor(lengths: Int32Array, postings: Map<string, Int32Array>, params: Bm25Parameters) {
    this.lengths = lengths;
    this.postings = postings;
    this.params = params;
    let total = 0;
    for (const l of lengths) total += l;
    this.averageLength = lengths.length === 0 ? 1 : Math.max(total / lengths.length, Number.MIN_VALUE);
  }

  /**
   * Indexes `texts` (position i = `texts[i]`).
   * @example const index = Bm25Index.build(['Paris is the capital of France.', 'Rome is in Italy.']);
   */
  static build(texts: readonly string[], params: Bm25Parameters = PYSERINI_BM25): Bm25Index {
    const lengths = new Int32Array(texts.length);
    const lists = new Map<string, number[]>();
    texts.forEach((text, position) => {
      const terms = bm25Terms(text);
      lengths[position] = terms.length;
      const counts = new Map<string, number>();
      for (const t of terms) counts.set(t, (counts.get(t) ?? 0) + 1);
      for (const [t, f] of counts) {
        let list = lists.get(t);
        if (list === undefined) {
          list = [];
          lists.set(t, list);
        }
        list.push(position, f);
      }
    });
    const postings = new Map<string, Int32Array>();
    for (const [t, list] of lists) postings.set(t, Int32Array.from(list));
    return new Bm25Index(lengths, postings, params);
  }

  /**
   * Restores an index saved with {@link toJSON}.
   * @example Bm25Index.fromJSON(index.toJSON())
   */
  static fromJSON(json: string, params: Bm25Parameters = PYSERINI_BM25): Bm25Index {
    const data = JSON.parse(json) as Bm25Json;
    if (data.version !== 1 || !Array.isArray(data.lengths) || typeof data.postings !== 'object') throw new TypeError('not a turnwise BM25 index (version 1)');
    const postings = new Map<string, Int32Array>();
    for (const [t, list] of Object.entries(data.postings)) postings.set(t, Int32Array.from(list));
    return new Bm25Index(Int32Array.from(data.lengths), postings, params);
  }

  /** The serialised index, for an on-disk cache. */
  toJSON(): string {
    const postings: Record<string, number[]> = {};
    for (const [t, list] of this.postings) postings[t] = Array.from(list);
    return JSON.stringify({ version: 1, lengths: Array.from(this.lengths), postings } satisfies Bm25Json);
  }

  /** Passages indexed. */
  get size(): number {
    return this.lengths.length;
  }

  /**
   * The `k` best passages for `query`, best first (ties: lower position first); none when no term matches.
   * @example index.top('capital of France', 3)[0].position // 0
   */
  top(query: string, k: number): Bm25Hit[] {
    const { k1, b } = this.params;
    const n = this.lengths.length;
    const scores = new Map<number, number>();
    for (const term of bm25Terms(query)) {
      const list = this.postings.get(term);
      if (list === undefined) continue;
      const df = list.length / 2;
      const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
      for (let i = 0; i < list.length; i += 2) {
        const position = list[i] as number;
        const tf = list[i + 1] as number;
        const norm = k1 * (1 - b + (b * (this.lengths[position] as number)) / this.averageLength);
        scores.set(position, (scores.get(position) ?? 0) + (idf * tf) / (tf + norm));
      }
    }
    const hits = [...scores].map(([position, score]) => ({ position, score }));
    hits.sort((x, y) => y.score - x.score || x.position - y.position);
    return hits.slice(0, k);
  }
}
