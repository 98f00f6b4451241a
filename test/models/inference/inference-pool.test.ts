import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ActRequest, ActResult } from '../../../src/core/policy.js';
import { Rng } from '../../../src/core/rng.js';
import { selectBackend } from '../../../src/backend/select.js';
import { InferencePool } from '../../../src/models/inference/inference-pool.js';
import { TransformerModel, type TransformerConfig } from '../../../src/models/transformer/model.js';
import { TransformerPolicy } from '../../../src/models/transformer-policy.js';

// Inference in worker threads (issue #20): real worker threads, each with its own wasm backend,
// against the in-thread TransformerPolicy on the same weights and seeded requests.

const SHAPE: TransformerConfig = { vocabSize: 40, dModel: 16, nLayers: 2, nHeads: 2, ffnHidden: 24, maxContext: 96, ropeTheta: 10000, rmsNormEps: 1e-5, tieEmbeddings: false };
const END = 1;
const SAMPLING = { temperature: 1, topP: 0.95, maxNewTokens: 6 };

let model: TransformerModel;
// Shared by the tests (a worker started from the sources takes 1–2 s): one pool of 1 worker, one of 2.
let one: InferencePool;
let two: InferencePool;

function openPool(workers: number): InferencePool {
  return new InferencePool({ workers, spec: { model: SHAPE, policy: { endTokenId: END }, backend: 'wasm', matmul: 'auto' }, weights: model.namedWeights(), version: 0 });
}

beforeAll(async () => {
  await selectBackend('wasm');
  model = new TransformerModel(SHAPE, Rng.fromSeed(4));
  one = openPool(1);
  two = openPool(2);
});
afterAll(async () => {
  await Promise.all([one.close(), two.close()]);
  model.dispose();
});

/** Requests of one turn: constrained and free, with per-request seeds and episode ids. */
function turnRequests(seed: number, count: number, turn: number): ActRequest[] {
  const rng = Rng.fromSeed(seed);
  return Array.from({ length: count }, (_, i) => {
    const contextTokens = Int32Array.from({ length: 4 + rng.int(20) + 8 * turn }, () => 2 + rng.int(SHAPE.vocabSize - 2));
    const choices = i % 3 === 2 ? null : [Int32Array.from([5, 6, END]), Int32Array.from([5, 7, END]), Int32Array.from([9, END])];
    return { contextTokens, actionChoices: choices, seed: 1000 + i + 100 * turn, episodeId: `ep-${i}` };
  });
}

/** Same tokens and masks; log-probs bit for bit, or within `tolerance`. */
function expectSame(actual: readonly ActResult[], expected: readonly ActResult[], tolerance = 0): void {
  expect(actual.length).toBe(expected.length);
  actual.forEach((r, i) => {
    const e = expected[i] as ActResult;
    expect(Array.from(r.tokens), `request ${i} tokens`).toEqual(Array.from(e.tokens));
    if (tolerance === 0) expect(Array.from(r.logprobs), `request ${i} logprobs`).toEqual(Array.from(e.logprobs));
    else {
      r.logprobs.forEach((x, j) => {
        expect(Math.abs(x - (e.logprobs[j] as number)), `request ${i} logprob ${j}`).toBeLessThanOrEqual(tolerance);
      });
    }
    expect(Array.from(r.lossMask)).toEqual(Array.from(e.lossMask));
    expect(r.policyVersion).toBe(e.policyVersion);
  });
}

describe('InferencePool', () => {
  // One worker runs the in-thread batch exactly, so every bit agrees. Two workers split the batch;
  // the packed prefill groups rows for attention by span, so a row's softmax sums can round
  // differently in another batch (1 ulp, as the in-thread path itself does across batch
  // compositions): tokens agree, log-probs within 1e-6.
  it('gives the same tokens and log-probs as the in-thread policy, with 1 and with 2 workers', async () => {
    const local = new TransformerPolicy(model, { endTokenId: END });
    for (let turn = 0; turn < 2; turn++) {
      const requests = turnRequests(7, 9, turn);
      const expected = await local.sampleActions(requests, SAMPLING, Rng.fromSeed(0));
      expectSame(await one.sampleActions(requests, SAMPLING, Rng.fromSeed(0)), expected);
      expectSame(await two.sampleActions(requests, SAMPLING, Rng.fromSeed(0)), expected, 1e-6);
      const greedy = await local.greedyActions(requests, 6);
      expectSame(await one.greedyActions(requests, 6), greedy);
      expectSame(await two.greedyActions(requests, 6), greedy, 1e-6);
    }
    // The batch was split: both workers served requests.
    expect(two.cacheStats.episodes).toBeGreaterThan(0);
  });

  it('loads new weights into every worker: results follow the new version', async () => {
    const pool = two;
    const other = new TransformerModel(SHAPE, Rng.fromSeed(99));
    try {
      const requests = turnRequests(3, 6, 0);
      const before = await pool.sampleActions(requests, SAMPLING, Rng.fromSeed(0));
      await pool.loadWeights(5, other.namedWeights());
      expect(pool.version).toBe(5);
      const after = await pool.sampleActions(requests, SAMPLING, Rng.fromSeed(0));
      const expected = await new TransformerPolicy(other, { endTokenId: END, version: 5 }).sampleActions(requests, SAMPLING, Rng.fromSeed(0));
      expectSame(after, expected, 1e-6);
      expect(after.map((r) => Array.from(r.logprobs))).not.toEqual(before.map((r) => Array.from(r.logprobs)));
    } finally {
      other.dispose();
      await pool.loadWeights(0, model.namedWeights());
    }
  });

  it('keeps an episode on one worker so its cached prefix serves the next turn; release frees it', async () => {
    const pool = two;
    pool.releaseEpisodes(Array.from({ length: 9 }, (_, i) => `ep-${i}`)); // what earlier tests left
    const first = turnRequests(11, 4, 0).map((r, i) => ({ ...r, episodeId: `cached-${i}` }));
    await pool.sampleActions(first, SAMPLING, Rng.fromSeed(0));
    expect(pool.cacheStats.episodes).toBe(4);
    // Next turn: each context extends the previous one (its context + action + new tokens).
    const results = await pool.sampleActions(first, SAMPLING, Rng.fromSeed(0));
    const next = first.map((r, i) => ({ ...r, contextTokens: Int32Array.from([...r.contextTokens, ...(results[i] as ActResult).tokens, 3, 4, 5]) }));
    const hitsBefore = pool.cacheStats.hits;
    await pool.sampleActions(next, SAMPLING, Rng.fromSeed(0));
    expect(pool.cacheStats.hits - hitsBefore).toBe(4);
    pool.releaseEpisodes(next.map((r) => r.episodeId as string));
    // The release is a message; the next answers (one per worker) carry the counters after it.
    const probe = (seed: number): ActRequest => ({ contextTokens: Int32Array.from([2, 3]), actionChoices: null, seed });
    await pool.sampleActions([probe(1), probe(2)], SAMPLING, Rng.fromSeed(0));
    expect(pool.cacheStats.episodes).toBe(0);
  });

  it('draws a seed per seedless request from the batch stream, so results do not depend on the worker count', async () => {
    const requests = turnRequests(5, 6, 0).map(({ seed: _, ...rest }) => rest);
    const byOne = await one.sampleActions(requests, SAMPLING, Rng.fromSeed(42));
    expectSame(await two.sampleActions(requests, SAMPLING, Rng.fromSeed(42)), byOne, 1e-6);
  });

  it('names the request at fault when a worker rejects it, and keeps serving', async () => {
    const pool = two;
    const bad: ActRequest = { contextTokens: Int32Array.from([2, SHAPE.vocabSize + 3]), actionChoices: null, seed: 1 };
    await expect(pool.sampleActions([bad], SAMPLING, Rng.fromSeed(0))).rejects.toThrow(/requests\[0\]\.contextTokens.*outside \[0, 40\)/);
    const [ok] = await pool.sampleActions(turnRequests(1, 1, 0), SAMPLING, Rng.fromSeed(0));
    expect(ok?.tokens.length).toBeGreaterThan(0);
  });

  it.runIf(existsSync('/proc/thread-self'))('runs its workers at a lower priority than the main thread (nice +5 by default)', async () => {
    await two.backend();
    // Field 19 of /proc/<pid>/task/<tid>/stat is the nice value (after the parenthesised name).
    const niceOf = (tid: string) => Number(readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').split(') ')[1]?.split(' ')[16]);
    const tids = readdirSync('/proc/self/task');
    const main = niceOf(String(process.pid));
    const lowered = tids.filter((tid) => niceOf(tid) === Math.min(19, main + 5));
    expect(lowered.length).toBeGreaterThanOrEqual(3); // one and two workers (other threads keep the main thread's)
  });

  it('fails calls after close() with a clear error', async () => {
    const pool = openPool(1);
    await pool.close();
    await expect(pool.sampleActions(turnRequests(1, 1, 0), SAMPLING, Rng.fromSeed(0))).rejects.toThrow(/inference pool used after close\(\)/);
  });
});
