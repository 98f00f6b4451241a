import { createActor } from 'xstate';
import { describe, expect, it } from 'vitest';
import { withSamplerEffects } from '../../src/actors/sampler.js';
import { SimulatedClock } from '../../src/core/clock.js';
import type { ActResult } from '../../src/core/policy.js';
import { deferred } from './fakes.js';

describe('sampler actor RELEASE', () => {
  it('frees ended episodes through the release effect in any state, without touching the batch in flight', async () => {
    const released: string[][] = [];
    const reply = deferred<ActResult[]>();
    const logic = withSamplerEffects({
      generate: () => reply.promise,
      loadWeights: async () => {},
      release: (ids) => released.push([...ids]),
    });
    const actor = createActor(logic, { input: { maxBatch: 1, maxWaitMs: 5 }, clock: new SimulatedClock() }).start();
    actor.send({ type: 'RELEASE', episodeIds: ['ep-1'] }); // idle
    actor.send({ type: 'ACT', requestId: 'a', request: { contextTokens: new Int32Array([1]), actionChoices: null, episodeId: 'ep-2' } });
    expect(actor.getSnapshot().value).toEqual({ generating: 'running' });
    actor.send({ type: 'RELEASE', episodeIds: ['ep-3', 'ep-4'] }); // generating: stays there
    expect(actor.getSnapshot().value).toEqual({ generating: 'running' });
    expect(actor.getSnapshot().context.inFlight.map((p) => p.requestId)).toEqual(['a']);
    expect(released).toEqual([['ep-1'], ['ep-3', 'ep-4']]);
    actor.stop();
  });

  it('ignores RELEASE when no release effect is given', () => {
    const logic = withSamplerEffects({ generate: async () => [], loadWeights: async () => {} });
    const actor = createActor(logic, { input: { maxBatch: 4, maxWaitMs: 5 }, clock: new SimulatedClock() }).start();
    expect(() => actor.send({ type: 'RELEASE', episodeIds: ['x'] })).not.toThrow();
    expect(actor.getSnapshot().value).toBe('idle');
    actor.stop();
  });
});
