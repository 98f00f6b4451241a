/**
 * The sampler's weight-update path (draining → loadingWeights → resuming) under load, with the
 * timeouts that keep a lost reply from hanging the run. Time is a SimulatedClock; random delays
 * are random numbers of microtask yields from a seeded stream.
 */
import { createActor, waitFor } from 'xstate';
import { describe, expect, it } from 'vitest';
import { type SamplerEmits, withSamplerEffects } from '../../src/actors/sampler.js';
import { SimulatedClock } from '../../src/core/clock.js';
import { Rng } from '../../src/core/rng.js';
import type { ActRequest } from '../../src/core/policy.js';
import { fakeActResult, never } from './fakes.js';

const request = (id: number): ActRequest => ({ contextTokens: new Int32Array([id]), actionChoices: null });

describe('sampler weight updates', () => {
  it('answers every act request of a flood during repeated weight updates, with monotone versions', async () => {
    for (const seed of [1, 2, 3]) {
      const rng = Rng.fromSeed(seed);
      const clock = new SimulatedClock();
      const pause = async (max: number) => {
        for (let k = rng.int(max); k > 0; k--) await Promise.resolve();
      };
      let loaded = 0;
      const actor = createActor(
        withSamplerEffects({
          async generate(requests) {
            await pause(30);
            return requests.map((r) => fakeActResult(r.contextTokens[0] as number, loaded));
          },
          async loadWeights(version) {
            await pause(30);
            loaded = version;
          },
        }),
        { input: { maxBatch: 4, maxWaitMs: 3, generateTimeoutMs: 10_000, loadTimeoutMs: 10_000 }, clock },
      ).start();
      const emitted: SamplerEmits[] = [];
      actor.on('*', (e) => emitted.push(e));
      const total = 400;
      let version = 0;
      for (let i = 0; i < total; i++) {
        actor.send({ type: 'ACT', requestId: `r${i}`, request: request(i) });
        if (rng.next() < 0.1) actor.send({ type: 'LOAD_WEIGHTS', version: ++version, weights: null });
        if (rng.next() < 0.3) clock.advance(rng.int(4));
        await pause(5);
      }
      const answered = () => emitted.filter((e) => e.type === 'ACT_DONE' || e.type === 'ACT_FAILED').length;
      for (let spins = 0; answered() < total || !actor.getSnapshot().matches('idle'); spins++) {
        expect(spins, 'sampler stopped answering').toBeLessThan(10_000);
        clock.advance(1);
        await pause(3);
        await Promise.resolve();
      }
      const done = emitted.filter((e) => e.type === 'ACT_DONE');
      expect(done).toHaveLength(total); // none failed, none timed out
      expect(new Set(done.map((e) => e.requestId)).size).toBe(total);
      const versions = done.map((e) => e.result.policyVersion);
      for (let i = 1; i < versions.length; i++) expect(versions[i]).toBeGreaterThanOrEqual(versions[i - 1] as number);
      const loads = emitted.filter((e) => e.type === 'WEIGHTS_LOADED').map((e) => e.version);
      expect(loads.at(-1)).toBe(version); // the newest weights always end up loaded
      for (let i = 1; i < loads.length; i++) expect(loads[i]).toBeGreaterThan(loads[i - 1] as number);
      expect(version).toBeGreaterThan(20);
      actor.stop();
    }
  });

  it('gives up a weight load that never settles after loadTimeoutMs, keeps the old weights and serves queued requests', async () => {
    const clock = new SimulatedClock();
    const actor = createActor(
      withSamplerEffects({
        generate: async (requests) => requests.map((r) => fakeActResult(r.contextTokens[0] as number, 0)),
        loadWeights: () => never(),
      }),
      { input: { maxBatch: 8, maxWaitMs: 5, loadTimeoutMs: 1_000 }, clock },
    ).start();
    const emitted: SamplerEmits[] = [];
    actor.on('*', (e) => emitted.push(e));
    actor.send({ type: 'LOAD_WEIGHTS', version: 1, weights: null });
    expect(actor.getSnapshot().value).toBe('loadingWeights');
    actor.send({ type: 'ACT', requestId: 'a', request: request(1) });
    clock.advance(999);
    expect(actor.getSnapshot().value).toBe('loadingWeights');
    clock.advance(1);
    expect(emitted).toContainEqual({ type: 'WEIGHTS_FAILED', version: 1, error: 'loadWeights timed out after 1000 ms' });
    // resuming flushed the queued request at once (no max-wait).
    expect(actor.getSnapshot().matches('generating')).toBe(true);
    await waitFor(actor, (s) => s.matches('idle'));
    expect(emitted.filter((e) => e.type === 'ACT_DONE').map((e) => [e.requestId, e.result.policyVersion])).toEqual([['a', 0]]);
    expect(actor.getSnapshot().context.policyVersion).toBe(0);
  });

  it('fails a batch whose generation never settles after generateTimeoutMs, then drains into a pending load', async () => {
    const clock = new SimulatedClock();
    let calls = 0;
    const actor = createActor(
      withSamplerEffects({
        generate: async (requests) => (calls++ === 0 ? never() : requests.map((r) => fakeActResult(r.contextTokens[0] as number, 2))),
        loadWeights: async () => {},
      }),
      { input: { maxBatch: 1, maxWaitMs: 5, generateTimeoutMs: 500 }, clock },
    ).start();
    const emitted: SamplerEmits[] = [];
    actor.on('*', (e) => emitted.push(e));
    actor.send({ type: 'ACT', requestId: 'a', request: request(1) });
    actor.send({ type: 'LOAD_WEIGHTS', version: 2, weights: null });
    actor.send({ type: 'ACT', requestId: 'b', request: request(2) });
    expect(actor.getSnapshot().value).toEqual({ generating: 'draining' });
    clock.advance(500);
    expect(emitted[0]).toEqual({ type: 'ACT_FAILED', requestId: 'a', error: 'generate timed out after 500 ms' });
    await waitFor(actor, (s) => s.matches('idle'));
    expect(emitted.filter((e) => e.type !== 'ACT_FAILED')).toEqual([
      { type: 'WEIGHTS_LOADED', version: 2 },
      { type: 'ACT_DONE', requestId: 'b', result: fakeActResult(2, 2) },
      { type: 'BATCH_GENERATED', size: 1, policyVersion: 2 },
    ]);
  });
});
