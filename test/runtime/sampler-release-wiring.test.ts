import { createActor } from 'xstate';
import { describe, expect, it } from 'vitest';
import { withSamplerEffects } from '../../src/actors/sampler.js';
import { SimulatedClock } from '../../src/core/clock.js';
import type { ActRequest, ActResult } from '../../src/core/policy.js';
import { MemoryBus } from '../../src/bus/memory-bus.js';
import { releaseEpisodes, remoteAct, serveSampler } from '../../src/runtime/wiring/sampler.js';

describe('sampler wiring for per-episode caches', () => {
  it('carries episodeId and lastTurn through the codec and delivers releases to the sampler', async () => {
    const clock = new SimulatedClock();
    const bus = new MemoryBus({ clock, encode: true });
    const seen: ActRequest[] = [];
    const released: string[][] = [];
    const sampler = createActor(
      withSamplerEffects({
        generate: async (requests) => {
          seen.push(...requests);
          return requests.map((): ActResult => ({ tokens: new Int32Array([1]), logprobs: new Float32Array([0]), lossMask: new Uint8Array([0]), constraint: null, policyVersion: 0 }));
        },
        loadWeights: async () => {},
        release: (ids) => released.push([...ids]),
      }),
      { input: { maxBatch: 1, maxWaitMs: 1 }, clock },
    ).start();
    const served = serveSampler(bus, 'run1', sampler);
    const act = remoteAct(bus, 'run1', 1000);
    await act({ contextTokens: new Int32Array([3, 4]), actionChoices: null, seed: 9, episodeId: 'g0/babyai_1/0', lastTurn: true });
    await act({ contextTokens: new Int32Array([3]), actionChoices: null });
    expect(seen[0]).toMatchObject({ seed: 9, episodeId: 'g0/babyai_1/0', lastTurn: true });
    expect(seen[1]).not.toHaveProperty('episodeId');
    expect(seen[1]).not.toHaveProperty('lastTurn');
    releaseEpisodes(bus, 'run1', ['g0/babyai_1/0', 'g0/babyai_2/0']);
    await bus.drain();
    expect(released).toEqual([['g0/babyai_1/0', 'g0/babyai_2/0']]);
    served.close();
    sampler.stop();
  });
});
