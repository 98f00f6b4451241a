/**
 * A retriever behind Search-R1's retrieval-server protocol (`search_r1/search/retrieval_server.py`),
 * so a user's own e5 + FAISS (or BM25) server plugs in:
 *
 *     POST <url>   {"queries": ["…", …], "topk": 3, "return_scores": true}
 *     200          {"result": [[{"document": {"id": "…", "contents": "\"Title\"\ntext"}, "score": 0.83}, …], …]}
 *
 * One list per query, in order. Without `return_scores` a server answers bare documents; both
 * shapes are read. A failed request (connection refused, 5xx, timeout) is retried with
 * exponential back-off; a 4xx or a malformed body fails at once with an error saying what was wrong.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { EnvironmentError } from '../../core/errors.js';
import { Rng } from '../../core/rng.js';
import { backoffDelay } from '../agentgym/backoff.js';
import type { Passage } from './passages.js';
import type { RetrievedPassage, Retriever } from './retriever.js';

/** Options of {@link RemoteRetriever}. */
export interface RemoteRetrieverOptions {
  /** The endpoint, e.g. `http://127.0.0.1:8000/retrieve` (Search-R1's `retriever.url`). */
  readonly url: string;
  /** Per-request time limit. */
  readonly timeoutMs?: number;
  /** Retries after a failed request (not after a 4xx). */
  readonly retries?: number;
  /** Back-off before the first retry (doubles each time, capped at 5 s). */
  readonly retryBaseMs?: number;
}

class PermanentError extends Error {}

function readPassage(value: unknown, where: string): Passage {
  const doc = value as { id?: unknown; contents?: unknown; title?: unknown; text?: unknown } | null;
  if (typeof doc !== 'object' || doc === null) throw new PermanentError(`${where} is not an object`);
  // Search-R1 sends `contents`; some servers send title and text apart.
  let contents: string;
  if (typeof doc.contents === 'string') contents = doc.contents;
  else if (typeof doc.text === 'string') contents = typeof doc.title === 'string' ? `${doc.title}\n${doc.text}` : doc.text;
  else throw new PermanentError(`${where} has no "contents" string`);
  return { id: typeof doc.id === 'string' || typeof doc.id === 'number' ? String(doc.id) : '', contents };
}

/**
 * Reads a `/retrieve` answer body for `count` queries.
 * @example parseRetrieveBody({ result: [[{ document: { id: '1', contents: '"A"\nb' }, score: 2 }]] }, 1)
 */
export function parseRetrieveBody(body: unknown, count: number): RetrievedPassage[][] {
  const result = (body as { result?: unknown } | null)?.result;
  if (!Array.isArray(result)) throw new PermanentError('the answer has no "result" list');
  if (result.length !== count) throw new PermanentError(`the answer has ${result.length} result lists for ${count} queries`);
  return result.map((list, q) => {
    if (!Array.isArray(list)) throw new PermanentError(`result[${q}] is not a list`);
    return list.map((item, k) => {
      const where = `result[${q}][${k}]`;
      const scored = item as { document?: unknown; score?: unknown } | null;
      if (typeof scored === 'object' && scored !== null && 'document' in scored) {
        if (typeof scored.score !== 'number' || !Number.isFinite(scored.score)) throw new PermanentError(`${where}.score is not a finite number`);
        return { passage: readPassage(scored.document, `${where}.document`), score: scored.score };
      }
      return { passage: readPassage(item, where), score: Number.NaN };
    });
  });
}

/**
 * Search-R1's retrieval client.
 * @example const retriever = new RemoteRetriever({ url: 'http://127.0.0.1:8000/retrieve' });
 */
export class RemoteRetriever implements Retriever {
  readonly description: string;
  private readonly options: Required<RemoteRetrieverOptions>;
  private readonly rng = Rng.fromSeed(0).fork('deepsearch/retriever-backoff');

  constructor(options: RemoteRetrieverOptions) {
    this.options = { timeoutMs: 30_000, retries: 3, retryBaseMs: 200, ...options };
    this.description = `remote retriever ${options.url}`;
  }

  async retrieve(queries: readonly string[], topk: number): Promise<RetrievedPassage[][]> {
    if (queries.length === 0) return [];
    const { url, timeoutMs, retries, retryBaseMs } = this.options;
    const body = JSON.stringify({ queries, topk, return_scores: true });
    let last = '';
    for (let attempt = 0; attempt <= retries; attempt++) {
      if (attempt > 0) await sleep(backoffDelay(attempt - 1, { baseMs: retryBaseMs, maxMs: 5_000 }, this.rng));
      try {
        const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body, signal: AbortSignal.timeout(timeoutMs) });
        const text = await response.text();
        if (response.status >= 400 && response.status < 500) throw new PermanentError(`HTTP ${response.status}: ${text.slice(0, 200)}`);
        if (!response.ok) {
          last = `HTTP ${response.status}: ${text.slice(0, 200)}`;
          continue;
        }
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch {
          throw new PermanentError(`the answer is not JSON: ${text.slice(0, 200)}`);
        }
        return parseRetrieveBody(parsed, queries.length);
      } catch (error) {
        if (error instanceof PermanentError) throw new EnvironmentError('deepsearch', `retriever ${url}: ${error.message}`);
        last = (error as Error).name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : `${(error as Error).message}${(error as { cause?: Error }).cause ? ` (${(error as { cause?: Error }).cause?.message})` : ''}`;
      }
    }
    throw new EnvironmentError('deepsearch', `retriever ${url} failed ${retries + 1} times; last: ${last}`);
  }
}
