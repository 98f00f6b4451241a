import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Rng } from '../../src/core/rng.js';
import { tf } from '../../src/backend/tf.js';
import type { ActRequest, ActResult, SamplingOptions } from '../../src/core/policy.js';
import type { TransformerModel } from '../../src/models/transformer/model.js';
import { TransformerPolicy, type TransformerPolicyOptions } from '../../src/models/transformer-policy.js';
import { randomSeq, tinyModel } from './transformer-fixtures.js';

// Per-episode KV caches across turns (issue #10): cached + batched results must equal the simple
// path (each request alone, no cache) — same tokens, log-probs within 1e-4 — whatever happens
// between turns (weights change, truncated context, eviction).

const END = 5;
const OPTIONS: SamplingOptions = { temperature: 1.3, topP: 1, maxNewTokens: 6 };
let model: TransformerModel;

beforeAll(async () => {
  await tf.setBackend('cpu');
  model = tinyModel(21, { maxContext: 160 });
});
afterAll(() => model.dispose());

/** A multi-turn episode: its context grows by the emitted action and a new observation each turn. */
interface Episode {
  readonly id: string;
  context: Int32Array;
  readonly rng: Rng;
  readonly free: boolean;
}

function episodes(count: number, seed: number): Episode[] {
  return Array.from({ length: count }, (_, i) => {
    const rng = Rng.fromSeed(seed * 100 + i);
    return { id: `ep-${i}`, context: randomSeq(rng, 4 + rng.int(12)), rng, free: i % 4 === 3 };
  });
}

function choices(rng: Rng): Int32Array[] {
  return Array.from({ length: 2 + rng.int(4) }, () => Int32Array.from([...randomSeq(rng, 1 + rng.int(3)), END]));
}

function requestsOf(eps: readonly Episode[], turn: number, extra: Partial<ActRequest> = {}): ActRequest[] {
  return eps.map((ep, i) => ({
    contextTokens: ep.context,
    actionChoices: ep.free ? null : choices(Rng.fromSeed(turn * 1000 + i)),
    seed: 7919 * turn + i,
    episodeId: ep.id,
    ...extra,
  }));
}

/** Appends the action and a fresh observation (3..10 ids) to every episode's context. */
function advance(eps: readonly Episode[], results: readonly ActResult[]): void {
  eps.forEach((ep, i) => {
    const obs = randomSeq(ep.rng, 3 + ep.rng.int(8));
    ep.context = Int32Array.from([...ep.context, ...(results[i] as ActResult).tokens, ...obs]);
  });
}

/** The simple path: a fresh uncached policy, one request at a time, no episode ids, padded `extend`. */
async function reference(requests: readonly ActRequest[], greedy = false): Promise<ActResult[]> {
  const simple = new TransformerPolicy(model, { endTokenId: END, reuseCaches: false, packed: false });
  const out: ActResult[] = [];
  for (const { episodeId: _, ...r } of requests) {
    const [res] = greedy ? await simple.greedyActions([r], OPTIONS.maxNewTokens) : await simple.sampleActions([r], OPTIONS, Rng.fromSeed(1));
    out.push(res as ActResult);
  }
  return out;
}

function expectSame(got: readonly ActResult[], want: readonly ActResult[]): void {
  expect(got.map((r) => Array.from(r.tokens))).toEqual(want.map((r) => Array.from(r.tokens)));
  got.forEach((r, i) => {
    const w = want[i] as ActResult;
    expect(Array.from(r.lossMask)).toEqual(Array.from(w.lossMask));
    for (let j = 0; j < r.logprobs.length; j++) expect(Math.abs((r.logprobs[j] as number) - (w.logprobs[j] as number))).toBeLessThan(1e-4);
  });
}

/** Which batched path the suite below runs: packed (the default) or padded buckets. */
let packed = true;

function cachedPolicy(options: Partial<TransformerPolicyOptions> = {}): TransformerPolicy {
  return new TransformerPolicy(model, { endTokenId: END, minBucketRows: 2, packed, ...options });
}

describe.each([
  ['packed', true],
  ['padded', false],
])('TransformerPolicy per-episode KV caches (%s model calls)', (_, mode) => {
  beforeAll(() => {
    packed = mode;
  });

  it('prefills only the new tokens on later turns and samples exactly what the uncached single-request path samples', async () => {
    const policy = cachedPolicy();
    const eps = episodes(7, 1);
    let previous: { context: number; tokens: number }[] = [];
    for (let turn = 0; turn < 4; turn++) {
      const requests = requestsOf(eps, turn);
      const results = await policy.sampleActions(requests, OPTIONS, Rng.fromSeed(99));
      const stats = policy.lastStats;
      expectSame(results, await reference(requests));
      if (turn === 0) expect(stats.cacheHits).toBe(0);
      else {
        // Every episode hit: its previous context and the action tokens fed back (all but the
        // trailing ones that were never fed) are reused; only the rest is fed again.
        expect(stats.cacheHits).toBe(eps.length);
        const sum = (f: (p: { context: number; tokens: number }) => number) => previous.reduce((n, p) => n + f(p), 0);
        expect(stats.reusedTokens).toBeGreaterThanOrEqual(sum((p) => p.context));
        expect(stats.reusedTokens).toBeLessThanOrEqual(sum((p) => p.context + p.tokens - 1));
        const contextTokens = requests.reduce((n, r) => n + r.contextTokens.length, 0);
        expect(stats.realTokens).toBeLessThanOrEqual(contextTokens - stats.reusedTokens + stats.sampledTokens + stats.forcedTokens);
      }
      previous = requests.map((r, i) => ({ context: r.contextTokens.length, tokens: (results[i] as ActResult).tokens.length }));
      advance(eps, results);
    }
    expect(policy.cacheStats.episodes).toBe(eps.length);
  });

  it('gives the same greedy actions with and without caches, across several turns', async () => {
    const policy = cachedPolicy({ bucketRatio: 0 }); // one padded bucket: ragged cached lengths in one call
    const eps = episodes(5, 2);
    for (let turn = 0; turn < 3; turn++) {
      const requests = requestsOf(eps, turn);
      const results = await policy.greedyActions(requests, OPTIONS.maxNewTokens);
      expect(policy.lastStats.prefillBuckets).toBe(1);
      expectSame(results, await reference(requests, true));
      advance(eps, results);
    }
  });

  it('drops every cache when the weights change, then caches again', async () => {
    const other = tinyModel(22, { maxContext: 160 });
    const original = model.namedWeights();
    try {
      const policy = cachedPolicy();
      const eps = episodes(4, 3);
      let results = await policy.sampleActions(requestsOf(eps, 0), OPTIONS, Rng.fromSeed(1));
      advance(eps, results);
      // New weights loaded without a version bump: the weights' identity still invalidates.
      model.loadNamedWeights(other.namedWeights());
      let requests = requestsOf(eps, 1);
      results = await policy.sampleActions(requests, OPTIONS, Rng.fromSeed(1));
      expect(policy.lastStats.cacheHits).toBe(0);
      expectSame(results, await reference(requests));
      advance(eps, results);
      requests = requestsOf(eps, 2);
      results = await policy.sampleActions(requests, OPTIONS, Rng.fromSeed(1));
      expect(policy.lastStats.cacheHits).toBe(eps.length);
      expectSame(results, await reference(requests));
      // A version bump alone also drops them.
      advance(eps, results);
      policy.setVersion(1);
      await policy.sampleActions(requestsOf(eps, 3), OPTIONS, Rng.fromSeed(1));
      expect(policy.lastStats.cacheHits).toBe(0);
    } finally {
      model.loadNamedWeights(original);
      other.dispose();
    }
  });

  it('falls back to a full prefill for a truncated context', async () => {
    const policy = cachedPolicy();
    const eps = episodes(6, 4);
    let results = await policy.sampleActions(requestsOf(eps, 0), OPTIONS, Rng.fromSeed(1));
    advance(eps, results);
    // Episode 1's context is windowed: its front is cut, so the cached ids are no longer a prefix.
    (eps[1] as Episode).context = (eps[1] as Episode).context.subarray(5);
    const requests = requestsOf(eps, 1);
    results = await policy.sampleActions(requests, OPTIONS, Rng.fromSeed(1));
    expect(policy.lastStats.cacheHits).toBe(5);
    expect(policy.lastStats.reusedTokens).toBeGreaterThan(0);
    expectSame(results, await reference(requests));
  });

  it('evicts the least recently used episodes beyond the cap, and evicted ones prefill in full', async () => {
    const policy = cachedPolicy({ cacheMaxEpisodes: 4 });
    const eps = episodes(6, 6);
    let results = await policy.sampleActions(requestsOf(eps, 0), OPTIONS, Rng.fromSeed(1));
    expect(policy.cacheStats.episodes).toBe(4);
    expect(policy.cacheStats.evictions).toBe(2);
    advance(eps, results);
    const requests = requestsOf(eps, 1);
    results = await policy.sampleActions(requests, OPTIONS, Rng.fromSeed(1));
    expect(policy.lastStats.cacheHits).toBe(4);
    expectSame(results, await reference(requests));
    // A byte cap smaller than one episode keeps nothing.
    const tiny = cachedPolicy({ cacheMaxBytes: 1000 });
    await tiny.sampleActions(requestsOf(eps, 2), OPTIONS, Rng.fromSeed(1));
    expect(tiny.cacheStats.episodes).toBe(0);
  });

  it('keeps nothing for a last turn, frees released episodes and leaks no tensors', async () => {
    const policy = cachedPolicy();
    const eps = episodes(4, 5);
    const before = tf.memory().numTensors;
    const results = await policy.sampleActions(requestsOf(eps, 0), OPTIONS, Rng.fromSeed(1));
    expect(policy.cacheStats.episodes).toBe(4);
    expect(policy.cacheStats.bytes).toBeGreaterThan(0);
    advance(eps, results);
    const last = requestsOf(eps, 1).map((r, i) => (i < 2 ? { ...r, lastTurn: true } : r));
    await policy.sampleActions(last, OPTIONS, Rng.fromSeed(1));
    expect(policy.cacheStats.episodes).toBe(2);
    policy.releaseEpisodes(['ep-2', 'ep-3', 'never-seen']);
    expect(policy.cacheStats.episodes).toBe(0);
    expect(policy.cacheStats.bytes).toBe(0);
    expect(tf.memory().numTensors).toBe(before);
  });
});

// Prefill buckets exist only on the padded path (packed attention groups: test/models/packed-extend.test.ts).
describe('TransformerPolicy padded prefill buckets', () => {
  it('splits a prefill whose attention scores exceed the cap into more calls, with the same results', async () => {
    const eps = episodes(6, 7);
    const requests = requestsOf(eps, 0);
    const capped = cachedPolicy({ packed: false, bucketRatio: 0, maxPrefillScores: 2 * 16 * 32 }); // ~one row per call
    const results = await capped.sampleActions(requests, OPTIONS, Rng.fromSeed(1));
    expect(capped.lastStats.prefillBuckets).toBeGreaterThanOrEqual(3);
    const open = cachedPolicy({ packed: false, bucketRatio: 0 });
    await open.sampleActions(requests, OPTIONS, Rng.fromSeed(1));
    expect(open.lastStats.prefillBuckets).toBe(1);
    expectSame(results, await reference(requests));
  });
});
