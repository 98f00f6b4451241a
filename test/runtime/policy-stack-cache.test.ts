import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig, resolveConfig } from '../../src/core/config.js';
import { Rng } from '../../src/core/rng.js';
import '../../src/envs/index.js';
import { getEnvironmentSpec } from '../../src/envs/registry.js';
import { tf } from '../../src/backend/tf.js';
import type { ActRequest } from '../../src/core/policy.js';
import { buildPolicyStack, type PolicyStack } from '../../src/runtime/policy-stack.js';

// `runtime.kvCacheMiB` reaches the sampler's policy: the default keeps an episode's KV cache
// between its turns, 0 keeps none.

let stack: PolicyStack | null = null;
beforeAll(async () => {
  await tf.setBackend('cpu');
});
afterEach(() => {
  stack?.dispose();
  stack = null;
});

async function cachedEpisodesAfterOneTurn(runtime: Record<string, unknown>): Promise<number> {
  const config = resolveConfig(parseConfig({ seed: 3, model: { dModel: 32, nLayers: 1, nHeads: 2, ffnHidden: 48, backend: 'cpu' }, runtime }));
  stack = await buildPolicyStack(config, getEnvironmentSpec('babyai'), null);
  const tokens = stack.text.encode('Your goal: go to the red ball\nYou see a red ball 2 steps forward');
  const request: ActRequest = { contextTokens: Int32Array.from(tokens), actionChoices: null, seed: 1, episodeId: 'ep-1' };
  await stack.policy.sampleActions([request], { temperature: 1, topP: 1, maxNewTokens: 3 }, Rng.fromSeed(1));
  return stack.policy.cacheStats.episodes;
}

describe('runtime.kvCacheMiB', () => {
  it('keeps the episode cache by default (128 MiB) and none at 0', async () => {
    expect(await cachedEpisodesAfterOneTurn({})).toBe(1);
    stack?.dispose();
    stack = null;
    expect(await cachedEpisodesAfterOneTurn({ kvCacheMiB: 0 })).toBe(0);
  });

  it('rejects a negative size, naming the field', () => {
    expect(() => parseConfig({ runtime: { kvCacheMiB: -1 } })).toThrow(/runtime\.kvCacheMiB/);
  });
});
