/**
 * The retriever interface of deep search, as Search-R1's retrieval server defines it: a batch of
 * queries in, the top-k passages of each (with scores) out. Two implementations:
 * `local-bm25.ts` (BM25 over a JSONL corpus, in process) and `remote-retriever.ts` (any server
 * speaking Search-R1's `POST /retrieve`, e.g. its e5 + FAISS server).
 */
import type { Passage } from './passages.js';

/** One retrieved passage with its score (higher is better; BM25 or inner product). */
export interface RetrievedPassage {
  readonly passage: Passage;
  readonly score: number;
}

/** A retriever. */
export interface Retriever {
  /** What it is, for logs (`bm25 over corpus.jsonl (5,016 passages)`, `remote http://…/retrieve`). */
  readonly description: string;
  /** The top `topk` passages of each query, best first, one list per query in order. */
  retrieve(queries: readonly string[], topk: number): Promise<RetrievedPassage[][]>;
  /** Frees what it holds (sockets). Idempotent. */
  close?(): void;
}
