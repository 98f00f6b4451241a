import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Rng } from '../../src/core/rng.js';
import { LocalBm25Retriever } from '../../src/envs/deepsearch/local-bm25.js';
import { readQaSet } from '../../src/envs/deepsearch/qa-dataset.js';
import { randomSearchAction } from '../../src/envs/deepsearch/random-action.js';
import { RemoteRetriever } from '../../src/envs/deepsearch/remote-retriever.js';
import { SearchR1Environment } from '../../src/envs/deepsearch/searchr1-env.js';
import '../../src/envs/index.js';
import { getEnvironmentSpec } from '../../src/envs/registry.js';
import { toolCallText } from '../../src/envs/tools.js';

const fixtures = new URL('../envs/deepsearch/fixtures/', import.meta.url).pathname;
const corpusPath = join(fixtures, 'bm25-corpus.jsonl');
const dir = mkdtempSync(join(tmpdir(), 'turnwise-searchr1-'));
const trainPath = join(dir, 'train.jsonl');
const testPath = join(dir, 'test.jsonl');
writeFileSync(trainPath, `${JSON.stringify({ id: 'a', question: 'What is the capital of Hungary?', golden_answers: ['Budapest'], data_source: 'nq' })}\n`);
writeFileSync(
  testPath,
  [
    { question: 'Which river flows through Vienna?', golden_answers: ['Danube', 'the Danube River'], data_source: 'hotpotqa' },
    { question: 'What is the highest mountain in the Alps?', golden_answers: 'Mont Blanc' },
  ]
    .map((r) => JSON.stringify(r))
    .join('\n'),
);

/** A Search-R1 retrieval server over the fixture corpus (BM25), recording what it was asked. */
let server: Server;
let url = '';
const requests: unknown[] = [];
let failNext = 0;
beforeAll(async () => {
  const local = new LocalBm25Retriever(corpusPath);
  server = createServer(async (req: IncomingMessage, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    if (req.method !== 'POST' || req.url !== '/retrieve') {
      res.writeHead(404).end('not found');
      return;
    }
    if (failNext > 0) {
      failNext--;
      res.writeHead(503).end('busy');
      return;
    }
    const request = JSON.parse(body) as { queries: string[]; topk?: number; return_scores?: boolean };
    requests.push(request);
    const results = local.retrieveNow(request.queries, request.topk ?? 3);
    const result = results.map((hits) => hits.map((h) => (request.return_scores ? { document: { id: h.passage.id, contents: h.passage.contents }, score: h.score } : { id: h.passage.id, contents: h.passage.contents })));
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ result }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/retrieve`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  rmSync(dir, { recursive: true, force: true });
});

describe('the remote retriever (Search-R1 /retrieve protocol)', () => {
  it('posts queries, topk and return_scores and reads one scored list per query, as the local index ranks', async () => {
    const remote = new RemoteRetriever({ url });
    const got = await remote.retrieve(['Danube river', 'highest mountain Alps'], 2);
    expect(requests.at(-1)).toEqual({ queries: ['Danube river', 'highest mountain Alps'], topk: 2, return_scores: true });
    const local = new LocalBm25Retriever(corpusPath).retrieveNow(['Danube river', 'highest mountain Alps'], 2);
    expect(got).toEqual(local);
    expect(got[0]!.map((h) => h.passage.id)).toEqual(['5', '8']);
  });

  it('retries a 503 and fails with the endpoint named after a 404 or when the server is gone', async () => {
    failNext = 2;
    const hits = await new RemoteRetriever({ url, retryBaseMs: 1 }).retrieve(['Paris'], 1);
    expect(hits[0]![0]!.passage.id).toBe('0');
    await expect(new RemoteRetriever({ url: url.replace('/retrieve', '/nope'), retryBaseMs: 1 }).retrieve(['x'], 1)).rejects.toThrow(/\/nope: HTTP 404/);
    await expect(new RemoteRetriever({ url: 'http://127.0.0.1:1/retrieve', retries: 1, retryBaseMs: 1 }).retrieve(['x'], 1)).rejects.toThrow(/failed 2 times/);
  });
});

describe('deep search over QA files and a retriever (Search-R1 setting)', () => {
  const qa = { train: trainPath, test: testPath };

  it('builds a catalog over the files: train rows first, then held-out rows (repeated on request)', () => {
    const catalog = getEnvironmentSpec('deepsearch').catalog({ settings: { qa, corpus: corpusPath, testRepeats: 2 } });
    expect(catalog.indices('train')).toEqual([0]);
    expect(catalog.indices('test')).toEqual([1, 2, 4, 5]);
    expect(catalog.category?.(1)).toBe('hotpotqa');
  });

  it.each([
    ['local BM25', () => ({ corpus: corpusPath })],
    ['remote retriever', () => ({ retriever: { url } })],
  ])('searches with tags or tool calls and ends on the first answer, scored by exact match (%s)', async (_, source) => {
    const env = getEnvironmentSpec('deepsearch').create({ settings: { qa, ...source(), topK: 2 } });
    expect(env).toBeInstanceOf(SearchR1Environment);
    expect(env.tools?.().map((t) => t.name)).toEqual(['search', 'answer']);
    expect((await env.reset(1)).text).toBe('Question: Which river flows through Vienna?');
    const search = await env.step('<think>look it up</think> <search> Vienna river </search>');
    expect(search.observation.text).toMatch(/^<information>Doc 1\(Title: "(Vienna|Danube)"\) /);
    expect(search.done).toBe(false);
    const answer = await env.step(toolCallText({ name: 'answer', arguments: { answer: 'The Danube' } }));
    expect(answer).toMatchObject({ reward: 1, done: true, success: true });
    await env.reset(2);
    const wrong = await env.step('<answer>Matterhorn</answer>');
    expect(wrong).toMatchObject({ reward: 0, done: true, success: false });
    env.close();
  });

  it('reads a Parquet QA file in Search-R1 layout (snappy, as pyarrow writes it)', async () => {
    const set = readQaSet(join(fixtures, 'qa.parquet'));
    expect(set.size).toBe(3);
    expect(set.itemsNow()).toBeNull();
    const items = await set.items();
    expect(items[1]).toEqual({ question: 'who wrote the novel war and peace?', goldenAnswers: ['Leo Tolstoy', 'Tolstoy'], source: 'nq' });
  });

  it('scores partial answers by F1 and pays the shaped search reward once with turnRewards', async () => {
    const env = getEnvironmentSpec('deepsearch').create({ settings: { qa, corpus: corpusPath, metric: 'f1', turnRewards: true } });
    await env.reset(1);
    const first = await env.step('<search>Danube</search>');
    const again = await env.step('<search>Danube river</search>');
    expect([first.reward, again.reward]).toEqual([0.1, 0]);
    const answer = await env.step('<answer>Danube in Vienna</answer>');
    expect(answer.reward).toBeCloseTo(0.5, 12); // "danube in vienna" vs "danube": precision 1/3, recall 1
    expect(answer.success).toBe(false);
    expect(getEnvironmentSpec('deepsearch').paysTurnRewards?.({ settings: { qa, corpus: corpusPath, turnRewards: true } })).toBe(true);
  });

  it('answers a malformed tool call and an untagged reply with a message, not a crash', async () => {
    const env = getEnvironmentSpec('deepsearch').create({ settings: { qa, corpus: corpusPath } });
    await env.reset(0);
    expect((await env.step('{"name":"lookup","arguments":{}}')).observation.text).toMatch(/There is no tool "lookup"; the tools are "search", "answer"/);
    expect((await env.step('{"name":"search","arguments":{}}')).observation.text).toMatch(/The tool "search" needs the argument "query"/);
    const untagged = await env.step('Budapest');
    expect(untagged.info?.invalid).toBe(true);
    expect(untagged.done).toBe(false);
  });

  it('refuses settings that cannot work, naming the field', () => {
    const catalog = (settings: Record<string, unknown>) => () => getEnvironmentSpec('deepsearch').catalog({ settings });
    expect(catalog({ qa })).toThrow(/env\.settings\.corpus.*needs a corpus/);
    expect(catalog({ qa, corpus: corpusPath, retriever: { url } })).toThrow(/env\.settings\.retriever/);
    expect(catalog({ corpus: corpusPath })).toThrow(/env\.settings\.qa/);
    expect(catalog({ qa, corpus: corpusPath, candidates: true })).toThrow(/env\.settings\.candidates/);
    expect(catalog({ qa: { train: join(dir, 'missing.jsonl'), test: testPath }, corpus: corpusPath })).toThrow(/cannot read the QA file .*missing\.jsonl/);
    writeFileSync(join(dir, 'bad.jsonl'), '{"question":"q","golden_answers":[]}\n');
    expect(catalog({ qa: { train: join(dir, 'bad.jsonl'), test: testPath }, corpus: corpusPath })).toThrow(/bad\.jsonl:1: "golden_answers" must be a non-empty list/);
  });

  it('draws random searches from the question and random answers from the passages', () => {
    const first = { text: 'Question: Which river flows through Vienna?' };
    const observation = { text: '<information>Doc 1(Title: "Danube") The Danube flows.\n</information>' };
    const rng = Rng.fromSeed(3);
    const actions = Array.from({ length: 40 }, () => randomSearchAction({ observation, first, rng, form: 'text' }));
    expect(actions.every((a) => /^<(search|answer)>[^<]+<\/\1>$/.test(a))).toBe(true);
    expect(actions.some((a) => a.startsWith('<answer>'))).toBe(true);
    const call = randomSearchAction({ observation: first, first, rng: Rng.fromSeed(1), form: 'tools' });
    expect(JSON.parse(call).name).toBe('search');
  });
});
