import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Bm25Index } from '../../../src/envs/deepsearch/bm25.js';
import { LocalBm25Retriever } from '../../../src/envs/deepsearch/local-bm25.js';

const dir = mkdtempSync(join(tmpdir(), 'turnwise-bm25-cache-'));
const saved = process.env.TURNWISE_CACHE_DIR;
afterAll(() => {
  if (saved === undefined) delete process.env.TURNWISE_CACHE_DIR;
  else process.env.TURNWISE_CACHE_DIR = saved;
  rmSync(dir, { recursive: true, force: true });
});

describe('the local BM25 retriever', () => {
  it('indexes a corpus once, writes the index to the cache folder, and answers from it', async () => {
    process.env.TURNWISE_CACHE_DIR = join(dir, 'cache');
    const corpus = join(dir, 'corpus.jsonl');
    copyFileSync(new URL('./fixtures/bm25-corpus.jsonl', import.meta.url), corpus);
    const retriever = new LocalBm25Retriever(corpus);
    expect(retriever.prepare()).toBe(12);
    const files = readdirSync(join(dir, 'cache', 'deepsearch-bm25'));
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(/^corpus\.jsonl-[0-9a-f]{24}\.json$/);
    const cached = Bm25Index.fromJSON(readFileSync(join(dir, 'cache', 'deepsearch-bm25', files[0] as string), 'utf8'));
    const [hits = []] = await retriever.retrieve(['highest mountain Alps'], 2);
    expect(hits.map((h) => h.passage.id)).toEqual(cached.top('highest mountain Alps', 2).map((h) => String(h.position)));
    expect(hits[0]?.passage.contents).toMatch(/^"(Alps|Mont Blanc)"\n/);
    // A second retriever over the same file shares the index: no second file, same answers.
    expect(await new LocalBm25Retriever(corpus).retrieve(['highest mountain Alps'], 2)).toEqual([hits]);
    expect(readdirSync(join(dir, 'cache', 'deepsearch-bm25'))).toHaveLength(1);
  });

  it('names the file and line of a corpus line that is not a passage', () => {
    process.env.TURNWISE_CACHE_DIR = join(dir, 'cache');
    const bad = join(dir, 'bad.jsonl');
    copyFileSync(new URL('./fixtures/qa-scores.json', import.meta.url), bad);
    expect(() => new LocalBm25Retriever(bad).prepare()).toThrow(/bad\.jsonl:1: not JSON/);
  });
});
