/**
 * The local retriever: BM25 (`bm25.ts`) over a JSONL corpus in Search-R1's format. The index is
 * built once per corpus file and cached twice: in the process (one index shared by every
 * environment instance) and on disk (`<cache>/deepsearch-bm25/<key>.json`, keyed by the file's
 * path, size and modification time and the BM25 parameters), so the next process loads it
 * instead of re-indexing. Suited to corpora up to about a million passages; for wiki-18 (21 M)
 * run Search-R1's server and use the remote retriever.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { threadId } from 'node:worker_threads';
import { Bm25Index, type Bm25Parameters, PYSERINI_BM25 } from './bm25.js';
import { type Passage, readPassages } from './passages.js';
import type { RetrievedPassage, Retriever } from './retriever.js';

/** Bumped when the index layout or the terms change. */
const INDEX_VERSION = 1;

interface Loaded {
  readonly passages: readonly Passage[];
  readonly index: Bm25Index;
}

const inProcess = new Map<string, Loaded>();

function cacheFolder(): string | null {
  const roots = [process.env.TURNWISE_CACHE_DIR, join(homedir(), '.cache', 'turnwise'), join(tmpdir(), 'turnwise-cache')].filter((r): r is string => typeof r === 'string' && r.length > 0);
  for (const root of roots) {
    const dir = join(root, 'deepsearch-bm25');
    try {
      mkdirSync(dir, { recursive: true });
      return dir;
    } catch {
      // try the next root
    }
  }
  return null; // no cache: the index is rebuilt by each process
}

function load(path: string, params: Bm25Parameters): Loaded {
  const full = resolve(path);
  const stat = statSync(full);
  const key = createHash('sha256').update(JSON.stringify([INDEX_VERSION, full, stat.size, stat.mtimeMs, params.k1, params.b])).digest('hex').slice(0, 24);
  const hit = inProcess.get(key);
  if (hit !== undefined) return hit;
  const passages = readPassages(full);
  const folder = cacheFolder();
  const file = folder === null ? null : join(folder, `${basename(full).replace(/[^A-Za-z0-9._-]/g, '_')}-${key}.json`);
  let index: Bm25Index | null = null;
  if (file !== null) {
    try {
      const restored = Bm25Index.fromJSON(readFileSync(file, 'utf8'), params);
      if (restored.size === passages.length) index = restored;
    } catch {
      index = null; // missing or unreadable: rebuild below
    }
  }
  if (index === null) {
    index = Bm25Index.build(
      passages.map((p) => p.contents),
      params,
    );
    if (file !== null) {
      const tmp = `${file}.${process.pid}-${threadId}.tmp`;
      try {
        writeFileSync(tmp, index.toJSON());
        renameSync(tmp, file);
      } catch {
        rmSync(tmp, { force: true }); // a read-only cache only costs the rebuild next time
      }
    }
  }
  const loaded = { passages, index };
  inProcess.set(key, loaded);
  return loaded;
}

/**
 * BM25 over the JSONL corpus at `path` (read and indexed on first use).
 * @example const retriever = new LocalBm25Retriever('data/deepsearch/corpus.jsonl'); await retriever.retrieve(['capital of France'], 3);
 */
export class LocalBm25Retriever implements Retriever {
  readonly description: string;
  private readonly path: string;
  private readonly params: Bm25Parameters;

  constructor(path: string, params: Bm25Parameters = PYSERINI_BM25) {
    this.path = path;
    this.params = params;
    this.description = `bm25 (k1 ${params.k1}, b ${params.b}) over ${path}`;
  }

  /** Reads and indexes the corpus now (else on the first search). Returns the passage count. */
  prepare(): number {
    return load(this.path, this.params).passages.length;
  }

  /** Synchronous search (the local index needs no I/O once loaded). */
  retrieveNow(queries: readonly string[], topk: number): RetrievedPassage[][] {
    const { passages, index } = load(this.path, this.params);
    return queries.map((q) => index.top(q, topk).map((h) => ({ passage: passages[h.position] as Passage, score: h.score })));
  }

  retrieve(queries: readonly string[], topk: number): Promise<RetrievedPassage[][]> {
    try {
      return Promise.resolve(this.retrieveNow(queries, topk));
    } catch (error) {
      return Promise.reject(error);
    }
  }
}
