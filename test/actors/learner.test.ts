import { createActor, initialTransition, transition, waitFor } from 'xstate';
import { describe, expect, it } from 'vitest';
import { type LearnerEmits, learnerMachine, withLearnerEffects } from '../../src/actors/learner.js';
import { deferred } from './fakes.js';

describe('learner actor', () => {
  it('starts training on TRAIN', () => {
    const [s0] = initialTransition(learnerMachine, {});
    expect(s0.value).toBe('idle');
    const [s1, actions] = transition(learnerMachine, s0, { type: 'TRAIN', step: 0, trajectories: [] });
    expect(s1.value).toBe('training');
    expect(s1.context.current).toEqual({ step: 0, trajectories: [] });
    expect(actions.map((a) => a.type)).toContain('xstate.spawnChild');
  });

  it('trains, publishes the new version, then emits TRAINED', async () => {
    const published: number[] = [];
    const actor = createActor(
      withLearnerEffects({
        train: async (step) => ({ metrics: { 'loss/policy': 0.5 + step }, version: step + 1 }),
        publishWeights: async (version) => {
          published.push(version);
        },
      }),
      { input: {} },
    ).start();
    const emitted: LearnerEmits[] = [];
    actor.on('*', (e) => emitted.push(e));
    actor.send({ type: 'TRAIN', step: 0, trajectories: [] });
    actor.send({ type: 'TRAIN', step: 1, trajectories: [] });
    await waitFor(actor, (s) => s.matches('idle') && s.context.queue.length === 0 && emitted.length === 2);
    expect(published).toEqual([1, 2]);
    expect(emitted).toEqual([
      { type: 'TRAINED', step: 0, version: 1, metrics: { 'loss/policy': 0.5 } },
      { type: 'TRAINED', step: 1, version: 2, metrics: { 'loss/policy': 1.5 } },
    ]);
    expect(actor.getSnapshot().context.version).toBe(2);
  });

  it('goes to failed with the error when training throws, and refuses later work', async () => {
    const publish = deferred<void>();
    const actor = createActor(
      withLearnerEffects({
        train: async () => {
          throw new Error('NaN loss');
        },
        publishWeights: () => publish.promise,
      }),
      { input: {} },
    ).start();
    const emitted: LearnerEmits[] = [];
    actor.on('*', (e) => emitted.push(e));
    actor.send({ type: 'TRAIN', step: 4, trajectories: [] });
    await waitFor(actor, (s) => s.matches('failed'));
    expect(actor.getSnapshot().context.error).toBe('train failed: NaN loss');
    actor.send({ type: 'TRAIN', step: 5, trajectories: [] });
    expect(emitted).toEqual([
      { type: 'TRAIN_FAILED', step: 4, phase: 'train', error: 'train failed: NaN loss' },
      { type: 'TRAIN_FAILED', step: 5, phase: 'train', error: 'learner is failed: train failed: NaN loss' },
    ]);
  });

  it('goes to failed when publishing the weights throws', async () => {
    const actor = createActor(
      withLearnerEffects({
        train: async () => ({ metrics: {}, version: 1 }),
        publishWeights: async () => {
          throw new Error('bus closed');
        },
      }),
      { input: {} },
    ).start();
    const emitted: LearnerEmits[] = [];
    actor.on('*', (e) => emitted.push(e));
    actor.send({ type: 'TRAIN', step: 0, trajectories: [] });
    await waitFor(actor, (s) => s.matches('failed'));
    expect(emitted).toEqual([{ type: 'TRAIN_FAILED', step: 0, phase: 'publish', error: 'publishWeights failed: bus closed' }]);
  });
});
