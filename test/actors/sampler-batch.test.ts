import { initialTransition, transition } from 'xstate';
import { describe, expect, it } from 'vitest';
import { samplerMachine } from '../../src/actors/sampler.js';
import type { ActRequest } from '../../src/core/policy.js';

// ACT_BATCH (issue #20): several requests in one event queue exactly as the same ACTs would.

const request = (id: number): ActRequest => ({ contextTokens: new Int32Array([id]), actionChoices: null });
const acts = (...ids: string[]) => ids.map((requestId, i) => ({ requestId, request: request(i) }));

describe('sampler ACT_BATCH', () => {
  it('starts collecting and queues every request in order, like the same ACTs one by one', () => {
    const [s0] = initialTransition(samplerMachine, { maxBatch: 8, maxWaitMs: 10 });
    const [batched, actions] = transition(samplerMachine, s0, { type: 'ACT_BATCH', acts: acts('a', 'b', 'c') });
    let single = s0;
    for (const act of acts('a', 'b', 'c')) [single] = transition(samplerMachine, single, { type: 'ACT', ...act });
    expect(batched.value).toBe('collecting');
    expect(batched.context.pending).toEqual(single.context.pending);
    expect(actions.map((a) => a.type)).toEqual(['xstate.raise']); // the max-wait timer
  });

  it('flushes maxBatch at once when a batch fills the queue, keeping the rest pending', () => {
    const [s0] = initialTransition(samplerMachine, { maxBatch: 2, maxWaitMs: 10 });
    const [s1] = transition(samplerMachine, s0, { type: 'ACT_BATCH', acts: acts('a', 'b', 'c') });
    expect(s1.value).toEqual({ generating: 'running' });
    expect(s1.context.inFlight.map((p) => p.requestId)).toEqual(['a', 'b']);
    expect(s1.context.pending.map((p) => p.requestId)).toEqual(['c']);
  });

  it('stays idle on an empty batch', () => {
    const [s0] = initialTransition(samplerMachine, { maxBatch: 2, maxWaitMs: 10 });
    const [s1] = transition(samplerMachine, s0, { type: 'ACT_BATCH', acts: [] });
    expect(s1.value).toBe('idle');
    expect(s1.context.pending).toEqual([]);
  });
});
