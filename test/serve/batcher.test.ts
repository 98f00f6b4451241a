/**
 * The serve batcher's token budget: a burst of long prompts is generated in several calls, each
 * within `maxBatchTokens` (what the memory estimate counts in flight), in arrival order, with each
 * request's result what it would be alone.
 */
import { describe, expect, it } from 'vitest';
import type { ActRequest, ActResult, Policy } from '../../src/core/policy.js';
import { Rng } from '../../src/core/rng.js';
import { GenerationBatcher } from '../../src/serve/batcher.js';

type Request = ActRequest & { readonly maxNewTokens: number };

/** A policy whose answer depends only on the request (its seed and prompt), recording every call's rows. */
function recordingPolicy(): { policy: Policy; calls: Request[][] } {
  const calls: Request[][] = [];
  const answer = (r: ActRequest): ActResult => {
    const id = (r.seed ?? 0) * 1000 + r.contextTokens.length;
    return { tokens: new Int32Array([id]), logprobs: new Float32Array([-0.5]), lossMask: new Uint8Array([1]), constraint: null, policyVersion: 0 };
  };
  const policy = {
    sampleActions: async (requests: readonly Request[]) => {
      calls.push([...requests]);
      return requests.map(answer);
    },
    greedyActions: async (requests: readonly Request[]) => {
      calls.push([...requests]);
      return requests.map(answer);
    },
  } as unknown as Policy;
  return { policy, calls };
}

const request = (seed: number, promptTokens: number, maxNewTokens = 24): Request => ({
  contextTokens: new Int32Array(promptTokens).fill(seed),
  actionChoices: null,
  seed,
  maxNewTokens,
});

const cost = (r: Request): number => r.contextTokens.length + r.maxNewTokens;
const sampling = { temperature: 1, topP: 1 };

describe('GenerationBatcher token budget', () => {
  it('splits a burst of long prompts into calls within the budget, in arrival order, with the results of serving each alone', async () => {
    const { policy, calls } = recordingPolicy();
    const batcher = new GenerationBatcher(policy, Rng.fromSeed(0), 32, 4096);
    const requests = Array.from({ length: 10 }, (_, i) => request(i + 1, 1000 + 100 * (i % 3)));
    const results = await Promise.all(requests.map((r) => batcher.generate(r, sampling)));

    expect(calls.length).toBeGreaterThan(1);
    for (const call of calls) expect(call.reduce((n, r) => n + cost(r), 0)).toBeLessThanOrEqual(4096);
    expect(batcher.batchTokens.every((t) => t <= 4096)).toBe(true);
    // Arrival order across calls: flattening the calls gives the requests as sent.
    expect(calls.flat().map((r) => r.seed)).toEqual(requests.map((r) => r.seed));

    const alone = recordingPolicy();
    const solo = new GenerationBatcher(alone.policy, Rng.fromSeed(0), 1);
    for (const [i, r] of requests.entries()) {
      const own = await solo.generate(r, sampling);
      expect(Array.from(results[i]?.tokens ?? [])).toEqual(Array.from(own.tokens));
    }
  });

  it('fills a call up to the budget and no further', async () => {
    const { policy, calls } = recordingPolicy();
    const batcher = new GenerationBatcher(policy, Rng.fromSeed(0), 32, 4096);
    // Each costs 1,000 + 24 = 1,024: four fit 4,096 exactly, the fifth starts the next call.
    await Promise.all(Array.from({ length: 6 }, (_, i) => batcher.generate(request(i, 1000), sampling)));
    expect(calls.map((c) => c.length)).toEqual([4, 2]);
    expect(batcher.batchTokens).toEqual([4096, 2048]);
  });

  it('serves a request larger than the budget alone rather than never', async () => {
    const { policy, calls } = recordingPolicy();
    const batcher = new GenerationBatcher(policy, Rng.fromSeed(0), 32, 512);
    const results = await Promise.all([batcher.generate(request(1, 100), sampling), batcher.generate(request(2, 900), sampling), batcher.generate(request(3, 100), sampling)]);
    expect(calls.map((c) => c.map((r) => r.seed))).toEqual([[1], [2], [3]]);
    expect(results.map((r) => r.tokens[0])).toEqual([1100, 2900, 3100]);
  });

  it('without a budget keeps one call for a burst, as before', async () => {
    const { policy, calls } = recordingPolicy();
    const batcher = new GenerationBatcher(policy, Rng.fromSeed(0), 32);
    await Promise.all(Array.from({ length: 10 }, (_, i) => batcher.generate(request(i, 1000), sampling)));
    expect(calls.map((c) => c.length)).toEqual([10]);
  });
});
