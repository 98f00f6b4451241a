import { describe, expect, it } from 'vitest';
import { Rng } from '../../src/core/rng.js';
import { EnginePolicy, SamplerWeightsRegistry } from '../../src/engines/engine-policy.js';
import { RecordingEngine } from './recording-engine.js';

const options = { temperature: 1, topP: 0.9, maxNewTokens: 16 };

describe('EnginePolicy', () => {
  function policyOn(engine: RecordingEngine): { policy: EnginePolicy; registry: SamplerWeightsRegistry } {
    const registry = new SamplerWeightsRegistry();
    registry.set(0, { path: 'tinker://m/sampler_weights/v0' });
    return { policy: new EnginePolicy({ engine, registry, version: 0, stopTokenIds: [2, 0] }), registry };
  }

  it('sends the context ids, seed, stop ids and token budget of each request, and returns tokens with their log-probs', async () => {
    const engine = new RecordingEngine('sum');
    const { policy } = policyOn(engine);
    const results = await policy.sampleActions(
      [
        { contextTokens: Int32Array.of(1, 5, 9), actionChoices: null, seed: 42, maxNewTokens: 8 },
        { contextTokens: Int32Array.of(1, 7), actionChoices: null, seed: 43, stopTokenIds: [3] },
      ],
      options,
      Rng.fromSeed(1),
    );
    const [call] = engine.sampleCalls;
    expect(call?.weights).toEqual({ path: 'tinker://m/sampler_weights/v0' });
    expect(call?.requests.map((r) => [Array.from(r.promptTokens), r.seed, r.maxTokens, r.stopTokenIds, r.temperature, r.topP])).toEqual([
      [[1, 5, 9], 42, 8, [2, 0], 1, 0.9],
      [[1, 7], 43, 16, [3], 1, 0.9],
    ]);
    expect(Array.from(results[0]?.tokens ?? [])).toEqual([9, 2]);
    expect(Array.from(results[0]?.logprobs ?? [])).toEqual([-0.5, -0.25]);
    expect(Array.from(results[0]?.lossMask ?? [])).toEqual([1, 1]);
    expect(results[0]?.finishReason).toBe('stop');
    expect(results[0]?.policyVersion).toBe(0);
  });

  it('samples greedily (temperature 0) for evaluation', async () => {
    const engine = new RecordingEngine('sum');
    const { policy } = policyOn(engine);
    await policy.greedyActions([{ contextTokens: Int32Array.of(1), actionChoices: null }], 4);
    expect(engine.sampleCalls[0]?.requests[0]?.temperature).toBe(0);
    expect(engine.sampleCalls[0]?.requests[0]?.maxTokens).toBe(4);
  });

  it('moves to the weights of a loaded version, and refuses one the learner never saved', async () => {
    const engine = new RecordingEngine('sum');
    const { policy, registry } = policyOn(engine);
    registry.set(1, { path: 'tinker://m/sampler_weights/v1' });
    await policy.loadWeights(1, new Map());
    expect(policy.version).toBe(1);
    await policy.sampleActions([{ contextTokens: Int32Array.of(1), actionChoices: null, seed: 1 }], options, Rng.fromSeed(1));
    expect(engine.sampleCalls[0]?.weights).toEqual({ path: 'tinker://m/sampler_weights/v1' });
    await expect(policy.loadWeights(5, new Map())).rejects.toThrow(/policy version 5/);
  });

  it('refuses constrained decoding, naming the request', async () => {
    const { policy } = policyOn(new RecordingEngine('sum'));
    await expect(policy.sampleActions([{ contextTokens: Int32Array.of(1), actionChoices: [Int32Array.of(3)] }], options, Rng.fromSeed(1))).rejects.toThrow(/requests\[0\]\.actionChoices/);
  });
});
