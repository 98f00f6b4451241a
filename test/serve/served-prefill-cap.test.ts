/**
 * The served policy feeds at most the served context's tokens per prefill call (what
 * `serveMemory` counts as one full-context prefill), even when handed a burst directly, and a
 * burst split that way generates what each prompt generates alone.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { Rng } from '../../src/core/rng.js';
import type { TransformerPolicy } from '../../src/models/transformer-policy.js';
import { tinyOwnServedModel } from './tiny-own-model.js';

const { served, model } = await tinyOwnServedModel();
afterAll(() => served.dispose());

const prompt = (seed: number, length: number): Int32Array => {
  const rng = Rng.fromSeed(seed);
  return Int32Array.from({ length }, () => 3 + Math.floor(rng.next() * 200));
};

describe('served prefill cap', () => {
  it('prefills a burst past the served context in several calls, with the results of each prompt alone', async () => {
    const policy = served.policy as TransformerPolicy;
    const maxContext = model.config.maxContext;
    const requests = Array.from({ length: 6 }, (_, i) => ({ contextTokens: prompt(i + 1, 100), actionChoices: null, seed: i + 1 }));
    expect(requests.reduce((n, r) => n + r.contextTokens.length, 0)).toBeGreaterThan(maxContext);
    const together = await policy.greedyActions(requests, 4);
    const stats = policy.lastStats;
    // 600 prompt tokens at most 128 a call: one 100-token row per call.
    expect(stats.prefillBuckets).toBe(6);
    expect(stats.realTokens).toBeGreaterThanOrEqual(600);
    for (const [i, r] of requests.entries()) {
      const [alone] = await policy.greedyActions([r], 4);
      expect(Array.from(together[i]?.tokens ?? [])).toEqual(Array.from(alone?.tokens ?? []));
    }
  });
});
