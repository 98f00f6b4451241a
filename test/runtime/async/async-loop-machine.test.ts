/**
 * The asynchronous loop's machine, one transition at a time (`initialTransition` / `transition`):
 * each test asserts the next state, what it starts (episodes, train, publish, stepCompleted) and
 * what it emits. No actor runs, no timer, no promise: effects appear only as actions.
 */
import { type ExecutableActionsFrom, initialTransition, type SnapshotFrom, transition } from 'xstate';
import { describe, expect, it } from 'vitest';
import { SimulatedClock } from '../../../src/core/clock.js';
import { StalePolicyError } from '../../../src/core/errors.js';
import type { Trajectory } from '../../../src/core/types.js';
import { type AsyncLoopAccepts, asyncLoopMachine } from '../../../src/runtime/async/async-loop-machine.js';
import type { AsyncLoopInput } from '../../../src/runtime/async/async-loop-state.js';

/** A loop of 2 episodes per batch whose samplers hold `sampler.version`. */
function loop(overrides: Partial<AsyncLoopInput> = {}) {
  const sampler = { version: overrides.startStep ?? 0 };
  const clock = new SimulatedClock();
  const input: AsyncLoopInput = {
    startStep: 0,
    totalSteps: 3,
    maxStaleness: 1,
    partialRollout: 'continue',
    maxInFlight: 3,
    clock,
    samplerVersion: () => sampler.version,
    plans: (batch) => [0, 1].map((i) => ({ taskId: `t_${i}`, taskIndex: i, groupId: `s${batch}`, trajectoryId: `s${batch}/g${i}`, seed: i })),
    ...overrides,
  };
  return { input, sampler, clock };
}

/** A one-turn trajectory of `batch` whose turn came from `policyVersion`. */
function trajectory(batch: number, policyVersion: number): Trajectory {
  const turn = {
    index: 0,
    observationText: 'o',
    promptTokens: new Int32Array([1, 2]),
    actionText: 'a',
    actionTokens: new Int32Array([3, 4]),
    actionLogprobs: new Float32Array([-0.5, 0]),
    actionLossMask: new Uint8Array([1, 0]),
    constraint: null,
    policyVersion,
    reward: 0,
    invalidAction: false,
  };
  return { trajectoryId: `s${batch}`, taskId: 't_0', groupId: `s${batch}`, step: batch, turns: [turn], reward: 0, outcome: 'failure', horizon: 1, finalObservationText: '' };
}

type Actions = ExecutableActionsFrom<typeof asyncLoopMachine>[];
type Snapshot = SnapshotFrom<typeof asyncLoopMachine>;

/** `batch/index` of every episode the actions start, in order. */
function started(actions: Actions): string[] {
  return actions.flatMap((a) => {
    const event = (a.params as { event?: { type: string; episodes?: { batch: number; index: number }[] } } | undefined)?.event;
    return a.type === 'xstate.sendTo' && event?.type === 'START_EPISODES' ? (event.episodes ?? []).map((e) => `${e.batch}/${e.index}`) : [];
  });
}

/** The input of the effect actor `src` the actions start, or undefined. */
function invoked(actions: Actions, src: string): Record<string, unknown> | undefined {
  const spawn = actions.find((a) => a.type === 'xstate.spawnChild' && (a.params as { src?: string }).src === src);
  return (spawn?.params as { input?: Record<string, unknown> } | undefined)?.input;
}

/** Types of the events the actions emit. */
function emitted(actions: Actions): string[] {
  return actions.flatMap((a) => ((a.type as string) === 'xstate.emit' ? [(a.params as { event: { type: string } }).event.type] : []));
}

const done = (batch: number, index: number, policyVersion = batch): AsyncLoopAccepts => ({ type: 'EPISODE_DONE', batch, index, trajectory: trajectory(batch, policyVersion) });
const trained = (version: number) => ({ type: 'xstate.done.actor.train', output: { version, metrics: { 'loss/policy': 0.5 } } }) as never;
const published = { type: 'xstate.done.actor.publishWeights', output: undefined } as never;
const completed = { type: 'xstate.done.actor.stepCompleted', output: undefined } as never;

/** Sends events one after another; returns the last snapshot and every action taken on the way. */
function run(snapshot: Snapshot, events: readonly AsyncLoopAccepts[]): [Snapshot, Actions] {
  let s = snapshot;
  const all: Actions = [];
  for (const event of events) {
    const [next, actions] = transition(asyncLoopMachine, s, event);
    s = next;
    all.push(...actions);
  }
  return [s, all];
}

describe('async loop machine', () => {
  it('admits in batch order up to the room and the staleness bound, then waits for its batch', () => {
    const eta1 = loop();
    const [s, actions] = initialTransition(asyncLoopMachine, eta1.input);
    expect(s.value).toBe('awaitingBatch');
    // Room for 3: both episodes of batch 0 and the first of batch 1 (1 − sampler version 0 ≤ η = 1).
    expect(started(actions)).toEqual(['0/0', '0/1', '1/0']);
    expect(s.context.inFlight).toBe(3);

    const eta0 = loop({ maxStaleness: 0 });
    const [t, held] = initialTransition(asyncLoopMachine, eta0.input);
    // η = 0: batch 1 waits for weights 1 although there is room, and that wait is timed.
    expect(started(held)).toEqual(['0/0', '0/1']);
    expect(t.context.blocked.since).not.toBeNull();
  });

  it('fills a freed slot at once and trains the batch when its last episode is in', () => {
    const [s0] = initialTransition(asyncLoopMachine, loop().input);
    const [s1, a1] = transition(asyncLoopMachine, s0, done(0, 1));
    expect(s1.value).toBe('awaitingBatch');
    expect(started(a1)).toEqual(['1/1']);
    const [s2, a2] = transition(asyncLoopMachine, s1, done(0, 0));
    expect(s2.value).toBe('training');
    const input = invoked(a2, 'train') as { batch: number; trajectories: Trajectory[] };
    expect(input.batch).toBe(0);
    expect(input.trajectories.map((t) => t.step)).toEqual([0, 0]);
    // Batch 2 is two versions ahead of the samplers: not admitted.
    expect(started(a2)).toEqual([]);
  });

  it('continue: publishes the new version at once, then completes the step with the loop metrics', () => {
    const l = loop();
    const [s0] = initialTransition(asyncLoopMachine, l.input);
    const [s1] = run(s0, [done(0, 0), done(0, 1)]);
    l.clock.advance(250); // the update takes 250 ms of the run's clock
    const [s2, a2] = transition(asyncLoopMachine, s1, trained(1));
    expect(s2.value).toEqual({ publishing: 'loading' });
    expect(invoked(a2, 'publishWeights')).toEqual({ version: 1 });
    expect(s2.context.version).toBe(1);

    l.sampler.version = 1; // the samplers loaded weights 1
    const [s3, a3] = transition(asyncLoopMachine, s2, published);
    expect(s3.value).toEqual({ completing: 'running' });
    // Weights 1 make batch 2 admissible: its episodes start while the step completes.
    expect(started(a3)).toEqual(['2/0']);
    const { batch, metrics } = invoked(a3, 'stepCompleted') as { batch: number; metrics: Record<string, number> };
    expect(batch).toBe(0);
    expect(metrics).toMatchObject({ 'loss/policy': 0.5, 'async/stalenessMax': 0, 'async/staleness/0': 2, 'async/rejectedStale': 0, 'time/trainSec': 0.25 });
    expect(s3.context.batches[0]).toBeUndefined(); // the trained batch is dropped
  });

  it('finish-old: admits nothing and waits until the episodes in flight ended with the old weights, then publishes', () => {
    const [s0] = initialTransition(asyncLoopMachine, loop({ partialRollout: 'finish-old' }).input);
    const [s1, a1] = run(s0, [done(0, 0), done(0, 1), trained(1)]);
    expect(s1.value).toEqual({ publishing: 'waiting' });
    expect(invoked(a1, 'publishWeights')).toBeUndefined();
    expect(s1.context.inFlight).toBe(2); // batch 1's episodes, started with weights 0
    const [s2, a2] = transition(asyncLoopMachine, s1, done(1, 0, 0));
    expect(s2.value).toEqual({ publishing: 'waiting' });
    expect(started(a2)).toEqual([]);
    const [s3, a3] = transition(asyncLoopMachine, s2, done(1, 1, 0));
    expect(s3.value).toEqual({ publishing: 'loading' });
    expect(invoked(a3, 'publishWeights')).toEqual({ version: 1 });
  });

  it('runs exclusive work only with nothing in flight: HOLD, EXCLUSIVE_READY once the last episode ends, RELEASE admits again', () => {
    const l = loop();
    const [s0] = initialTransition(asyncLoopMachine, l.input);
    const [s1] = run(s0, [done(0, 0), done(0, 1), trained(1)]);
    l.sampler.version = 1;
    const [s2] = run(s1, [published]); // batch 1 (2 episodes) and batch 2's first in flight
    expect(s2.context.inFlight).toBe(3);
    const [s3, a3] = transition(asyncLoopMachine, s2, { type: 'HOLD' });
    expect(s3.value).toEqual({ completing: 'holding' });
    expect(emitted(a3)).toEqual([]);
    const [s4, a4] = run(s3, [done(1, 0), done(1, 1)]);
    expect(started(a4)).toEqual([]); // slots free up but nothing is admitted while holding
    expect(emitted(a4)).toEqual([]);
    const [s5, a5] = transition(asyncLoopMachine, s4, done(2, 0, 1));
    expect(s5.value).toEqual({ completing: 'exclusive' });
    expect(emitted(a5)).toEqual(['EXCLUSIVE_READY']);
    const [s6, a6] = transition(asyncLoopMachine, s5, { type: 'RELEASE' });
    expect(s6.value).toEqual({ completing: 'running' });
    expect(started(a6)).toEqual(['2/1']);
  });

  it('refuses exclusive work outside a completing step, and when an episode failed', () => {
    const [s0] = initialTransition(asyncLoopMachine, loop().input);
    const [s1, a1] = transition(asyncLoopMachine, s0, { type: 'HOLD' });
    expect(s1.value).toBe('awaitingBatch');
    expect(emitted(a1)).toEqual(['EXCLUSIVE_REFUSED']);

    const l = loop();
    const [t0] = initialTransition(asyncLoopMachine, l.input);
    const [t1] = run(t0, [done(0, 0), done(0, 1), trained(1), published]);
    const [t2] = transition(asyncLoopMachine, t1, { type: 'EPISODE_FAILED', batch: 1, index: 0, error: new Error('sampler gone') });
    const [t3, a3] = transition(asyncLoopMachine, t2, { type: 'HOLD' });
    expect(t3.value).toEqual({ completing: 'running' });
    expect(emitted(a3)).toEqual(['EXCLUSIVE_REFUSED']);
    expect(t3.context.holdForExclusive).toBe(false);
  });

  it('goes on to the next batch after a completed step, and ends finished after the last one', () => {
    const l = loop({ totalSteps: 1, maxInFlight: 2 });
    const [s0] = initialTransition(asyncLoopMachine, l.input);
    const [s1] = run(s0, [done(0, 0), done(0, 1), trained(1), published]);
    const [s2] = transition(asyncLoopMachine, s1, completed);
    expect(s2.value).toBe('finished');
    expect(s2.output).toEqual({ status: 'finished', completedSteps: 1, state: { maxStaleness: 1, learnerVersion: 1, rejectedStale: 0 }, error: null });

    const longer = loop({ totalSteps: 3 });
    const [t0] = initialTransition(asyncLoopMachine, longer.input);
    const [t1] = run(t0, [done(0, 0), done(0, 1), trained(1), published, completed]);
    expect(t1.value).toBe('awaitingBatch');
    expect(t1.context.batch).toBe(1);
  });

  it('STOP admits nothing more and ends stopped once the episodes in flight ended', () => {
    const [s0] = initialTransition(asyncLoopMachine, loop().input);
    const [s1, a1] = transition(asyncLoopMachine, s0, { type: 'STOP' });
    expect(s1.value).toBe('draining');
    const [s2, a2] = run(s1, [done(0, 0), done(0, 1)]);
    expect(s2.value).toBe('draining');
    expect(started([...a1, ...a2])).toEqual([]);
    const [s3] = transition(asyncLoopMachine, s2, done(1, 0));
    expect(s3.value).toBe('stopped');
    expect(s3.output).toMatchObject({ status: 'stopped', completedSteps: 0, error: null });
  });

  it('fails with a failed episode’s error when the learner next waits, after the other episodes ended', () => {
    const failure = new Error('env server gone');
    const [s0] = initialTransition(asyncLoopMachine, loop().input);
    const [s1, a1] = transition(asyncLoopMachine, s0, { type: 'EPISODE_FAILED', batch: 0, index: 0, error: failure });
    expect(s1.value).toBe('draining');
    expect(started(a1)).toEqual([]);
    const [s2] = run(s1, [done(0, 1), done(1, 0)]);
    expect(s2.value).toBe('failed');
    expect(s2.output).toMatchObject({ status: 'failed', error: failure });
  });

  it('trains only the trajectories within η, counts the others, and fails when none is left', () => {
    const [s0] = initialTransition(asyncLoopMachine, loop({ maxInFlight: 2 }).input);
    // A turn from version −2 would be trained at version 0: staleness 2 > η = 1.
    const [s1, a1] = run(s0, [done(0, 0, -2), done(0, 1, 0)]);
    expect(s1.value).toBe('training');
    expect((invoked(a1, 'train') as { trajectories: Trajectory[] }).trajectories).toHaveLength(1);
    expect(s1.context.rejectedStale).toBe(1);

    const [t0] = initialTransition(asyncLoopMachine, loop({ maxInFlight: 2 }).input);
    const [t1] = run(t0, [done(0, 0, -2), done(0, 1, -3)]);
    expect(t1.value).toBe('draining'); // batch 1's episodes, admitted as batch 0's ended, finish first
    const [t2] = run(t1, [done(1, 0), done(1, 1)]);
    expect(t2.value).toBe('failed');
    expect(t2.output?.error).toBeInstanceOf(StalePolicyError);
  });

  it('fails when the learner returns a version other than the next', () => {
    const [s0] = initialTransition(asyncLoopMachine, loop({ maxInFlight: 2 }).input);
    const [s1] = run(s0, [done(0, 0), done(0, 1), trained(5), done(1, 0), done(1, 1)]);
    expect(s1.value).toBe('failed');
    expect(String(s1.output?.error)).toMatch(/learner returned version 5 after training batch 0 at version 0/);
  });

  it('reports a deadlock instead of hanging: nothing in flight and its batch never admissible', () => {
    const l = loop({ startStep: 1, maxStaleness: 0 });
    l.sampler.version = 0; // a bookkeeping bug: the samplers never got the checkpoint's weights
    const [s] = initialTransition(asyncLoopMachine, l.input);
    expect(s.value).toBe('failed');
    expect(String(s.output?.error)).toMatch(/deadlocked waiting for batch 1: nothing in flight, next batch 1 not admissible/);
  });

  it('finishes at once when resumed at the last step, starting nothing', () => {
    const [s, actions] = initialTransition(asyncLoopMachine, loop({ startStep: 3 }).input);
    expect(s.value).toBe('finished');
    expect(started(actions)).toEqual([]);
  });
});
