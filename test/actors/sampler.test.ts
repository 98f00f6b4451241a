import { createActor, initialTransition, transition, waitFor } from 'xstate';
import { describe, expect, it } from 'vitest';
import { type SamplerEmits, samplerMachine, withSamplerEffects } from '../../src/actors/sampler.js';
import { SimulatedClock } from '../../src/core/clock.js';
import type { ActRequest, ActResult } from '../../src/core/policy.js';
import { type Deferred, deferred, fakeActResult } from './fakes.js';

const request = (id: number): ActRequest => ({ contextTokens: new Int32Array([id]), actionChoices: null });

/** A sampler whose generate/loadWeights calls the test settles by hand. */
function start(maxBatch: number, maxWaitMs: number) {
  const clock = new SimulatedClock();
  const batches: { requests: readonly ActRequest[]; reply: Deferred<ActResult[]> }[] = [];
  const loads: { version: number; weights: unknown; done: Deferred<void> }[] = [];
  let version = 0;
  const logic = withSamplerEffects({
    generate: (requests) => {
      const reply = deferred<ActResult[]>();
      batches.push({ requests, reply });
      return reply.promise;
    },
    loadWeights: (v, weights) => {
      const done = deferred<void>();
      loads.push({ version: v, weights, done });
      return done.promise.then(() => {
        version = v;
      });
    },
  });
  const actor = createActor(logic, { input: { maxBatch, maxWaitMs }, clock }).start();
  const emitted: SamplerEmits[] = [];
  actor.on('*', (e) => emitted.push(e));
  /** Answers batch `i` with one result per request, echoing the request's first token and the current version. */
  const answer = (i: number) => batches[i]?.reply.resolve(batches[i].requests.map((r) => fakeActResult(r.contextTokens[0] as number, version)));
  return { actor, clock, batches, loads, emitted, answer };
}

const ids = (emitted: SamplerEmits[], type: SamplerEmits['type']) => emitted.filter((e) => e.type === type).map((e) => ('requestId' in e ? e.requestId : ''));

describe('sampler actor', () => {
  it('starts collecting on the first request and arms the max-wait timer', () => {
    const [s0] = initialTransition(samplerMachine, { maxBatch: 4, maxWaitMs: 10 });
    const [s1, actions] = transition(samplerMachine, s0, { type: 'ACT', requestId: 'a', request: request(1) });
    expect(s1.value).toBe('collecting');
    expect(s1.context.pending.map((p) => p.requestId)).toEqual(['a']);
    expect(actions.map((a) => a.type)).toEqual(['xstate.raise']);
    expect(actions[0]?.params).toMatchObject({ delay: 10 });
  });

  it('flushes a batch as soon as maxBatch requests are pending', () => {
    const [s0] = initialTransition(samplerMachine, { maxBatch: 2, maxWaitMs: 10 });
    const [s1] = transition(samplerMachine, s0, { type: 'ACT', requestId: 'a', request: request(1) });
    const [s2, actions] = transition(samplerMachine, s1, { type: 'ACT', requestId: 'b', request: request(2) });
    expect(s2.value).toEqual({ generating: 'running' });
    expect(s2.context.inFlight.map((p) => p.requestId)).toEqual(['a', 'b']);
    expect(actions.some((a) => a.type === 'xstate.spawnChild')).toBe(true);
  });

  it('flushes a partial batch maxWaitMs after the first request and routes results by id', async () => {
    const { actor, clock, batches, emitted, answer } = start(8, 20);
    actor.send({ type: 'ACT', requestId: 'a', request: request(1) });
    clock.advance(10);
    actor.send({ type: 'ACT', requestId: 'b', request: request(2) });
    clock.advance(9);
    expect(batches).toHaveLength(0);
    clock.advance(1);
    expect(batches).toHaveLength(1);
    expect(batches[0]?.requests.map((r) => r.contextTokens[0])).toEqual([1, 2]);
    answer(0);
    await waitFor(actor, (s) => s.matches('idle'));
    const done = emitted.filter((e) => e.type === 'ACT_DONE');
    expect(done.map((e) => [e.requestId, e.result.tokens[0]])).toEqual([
      ['a', 1],
      ['b', 2],
    ]);
    expect(emitted.at(-1)).toEqual({ type: 'BATCH_GENERATED', size: 2, policyVersion: 0 });
  });

  it('queues requests that arrive during generation and serves them in the next batch', async () => {
    const { actor, clock, batches, emitted, answer } = start(2, 5);
    actor.send({ type: 'ACT', requestId: 'a', request: request(1) });
    actor.send({ type: 'ACT', requestId: 'b', request: request(2) });
    actor.send({ type: 'ACT', requestId: 'c', request: request(3) });
    expect(actor.getSnapshot().context.pending.map((p) => p.requestId)).toEqual(['c']);
    answer(0);
    await waitFor(actor, (s) => s.matches('collecting'));
    clock.advance(5);
    expect(batches[1]?.requests.map((r) => r.contextTokens[0])).toEqual([3]);
    answer(1);
    await waitFor(actor, (s) => s.matches('idle'));
    expect(ids(emitted, 'ACT_DONE')).toEqual(['a', 'b', 'c']);
  });

  it('drains the batch in flight before loading weights, queues requests meanwhile, then serves them with the new version', async () => {
    const { actor, loads, emitted, answer } = start(1, 5);
    actor.send({ type: 'ACT', requestId: 'a', request: request(1) });
    actor.send({ type: 'LOAD_WEIGHTS', version: 3, weights: { w: 1 } });
    expect(actor.getSnapshot().value).toEqual({ generating: 'draining' });
    actor.send({ type: 'ACT', requestId: 'b', request: request(2) });
    expect(loads).toHaveLength(0);
    answer(0);
    await waitFor(actor, (s) => s.matches('loadingWeights'));
    expect(loads.map((l) => [l.version, l.weights])).toEqual([[3, { w: 1 }]]);
    actor.send({ type: 'ACT', requestId: 'c', request: request(3) });
    loads[0]?.done.resolve();
    await waitFor(actor, (s) => s.matches({ generating: 'running' }));
    answer(1);
    await waitFor(actor, (s) => s.context.inFlight[0]?.requestId === 'c');
    answer(2);
    await waitFor(actor, (s) => s.matches('idle'));
    const done = emitted.filter((e) => e.type === 'ACT_DONE');
    expect(done.map((e) => [e.requestId, e.result.policyVersion])).toEqual([
      ['a', 0],
      ['b', 3],
      ['c', 3],
    ]);
    expect(emitted.filter((e) => e.type === 'WEIGHTS_LOADED')).toEqual([{ type: 'WEIGHTS_LOADED', version: 3 }]);
    expect(actor.getSnapshot().context.policyVersion).toBe(3);
  });

  it('fails every request of a batch whose generation throws, and keeps serving', async () => {
    const { actor, batches, emitted, answer } = start(2, 5);
    actor.send({ type: 'ACT', requestId: 'a', request: request(1) });
    actor.send({ type: 'ACT', requestId: 'b', request: request(2) });
    batches[0]?.reply.reject(new Error('out of memory'));
    await waitFor(actor, (s) => s.matches('idle'));
    expect(emitted).toEqual([
      { type: 'ACT_FAILED', requestId: 'a', error: 'generate failed: out of memory' },
      { type: 'ACT_FAILED', requestId: 'b', error: 'generate failed: out of memory' },
    ]);
    actor.send({ type: 'ACT', requestId: 'c', request: request(3) });
    actor.send({ type: 'ACT', requestId: 'd', request: request(4) });
    answer(1);
    await waitFor(actor, (s) => s.matches('idle'));
    expect(ids(emitted, 'ACT_DONE')).toEqual(['c', 'd']);
  });
});
