import { createActor, initialTransition, toPromise, transition, waitFor } from 'xstate';
import { describe, expect, it } from 'vitest';
import { type CoordinatorEffects, type CoordinatorEmits, type CoordinatorInput, coordinatorMachine, withCoordinatorEffects } from '../../src/actors/coordinator.js';
import type { Trajectory } from '../../src/core/types.js';
import { type Deferred, deferred } from './fakes.js';

const fakeTrajectory = (step: number): Trajectory => ({
  trajectoryId: `t${step}`,
  taskId: 'counter_0',
  groupId: `g${step}`,
  step,
  turns: [],
  reward: 1,
  outcome: 'success',
  horizon: 3,
  finalObservationText: '',
});

/** Effects that log every call; `hold` makes a phase wait for the test. */
function loggingEffects(hold: Partial<Record<'rollout' | 'train' | 'evaluate', Deferred<void>>> = {}) {
  const log: string[] = [];
  const effects: CoordinatorEffects = {
    async rollout(step) {
      log.push(`rollout ${step}`);
      await hold.rollout?.promise;
      return [fakeTrajectory(step)];
    },
    async train(step, trajectories) {
      log.push(`train ${step} (${trajectories.length})`);
      await hold.train?.promise;
      return { metrics: { 'loss/policy': step } };
    },
    async evaluate(step) {
      log.push(`evaluate ${step}`);
      await hold.evaluate?.promise;
      return { 'eval/successRate': 0.5 };
    },
    async checkpoint(completedSteps) {
      log.push(`checkpoint ${completedSteps}`);
    },
    async stepCompleted(step) {
      log.push(`completed ${step}`);
    },
  };
  return { log, effects };
}

function start(input: CoordinatorInput, effects: CoordinatorEffects) {
  const actor = createActor(withCoordinatorEffects(effects), { input });
  const emitted: CoordinatorEmits[] = [];
  actor.on('*', (e) => emitted.push(e));
  actor.start();
  return { actor, emitted, done: toPromise(actor) };
}

describe('coordinator actor', () => {
  it('starts rolling out from startStep', () => {
    const [s, actions] = initialTransition(coordinatorMachine, { startStep: 3, totalSteps: 5, evalEvery: 0, checkpointEvery: 0 });
    expect(s.value).toBe('rollingOut');
    expect(s.context.step).toBe(3);
    expect(actions.find((a) => a.type === 'xstate.spawnChild')?.params).toMatchObject({ src: 'rollout', input: { step: 3 } });
  });

  it('moves from rollout to training with the trajectories', () => {
    const [s0] = initialTransition(coordinatorMachine, { startStep: 0, totalSteps: 2, evalEvery: 0, checkpointEvery: 0 });
    const [s1] = transition(coordinatorMachine, s0, { type: 'xstate.done.actor.rollout', output: [fakeTrajectory(0)] } as never);
    expect(s1.value).toBe('training');
    expect(s1.context.trajectories).toHaveLength(1);
  });

  it('finishes immediately when resumed at the last step', async () => {
    const { log, effects } = loggingEffects();
    const { done } = start({ startStep: 4, totalSteps: 4, evalEvery: 1, checkpointEvery: 1 }, effects);
    expect(await done).toEqual({ status: 'finished', completedSteps: 4, error: null });
    expect(log).toEqual([]);
  });

  it('evaluates and checkpoints on their cadence, and checkpoints after the last step', async () => {
    const { log, effects } = loggingEffects();
    const { done, emitted } = start({ startStep: 0, totalSteps: 5, evalEvery: 2, checkpointEvery: 3 }, effects);
    expect(await done).toEqual({ status: 'finished', completedSteps: 5, error: null });
    expect(log).toEqual([
      'rollout 0', 'train 0 (1)', 'completed 0',
      'rollout 1', 'train 1 (1)', 'completed 1', 'evaluate 1',
      'rollout 2', 'train 2 (1)', 'completed 2', 'checkpoint 3',
      'rollout 3', 'train 3 (1)', 'completed 3', 'evaluate 3',
      'rollout 4', 'train 4 (1)', 'completed 4', 'checkpoint 5',
    ]);
    const stepDone = emitted.filter((e) => e.type === 'STEP_DONE');
    expect(stepDone.map((e) => e.step)).toEqual([0, 1, 2, 3, 4]);
    expect(stepDone[1]).toEqual({ type: 'STEP_DONE', step: 1, metrics: { 'loss/policy': 1 }, evalMetrics: { 'eval/successRate': 0.5 } });
    expect(stepDone[2]?.evalMetrics).toBeNull();
    expect(emitted.at(-1)).toEqual({ type: 'RUN_ENDED', status: 'finished', completedSteps: 5, error: null });
  });

  it('on STOP during training, finishes the step, checkpoints, and ends stopped', async () => {
    const train = deferred<void>();
    const { log, effects } = loggingEffects({ train });
    const { actor, done } = start({ startStep: 0, totalSteps: 10, evalEvery: 0, checkpointEvery: 0 }, effects);
    await waitFor(actor, (s) => s.matches('training'));
    actor.send({ type: 'STOP' });
    train.resolve();
    expect(await done).toEqual({ status: 'stopped', completedSteps: 1, error: null });
    expect(log).toEqual(['rollout 0', 'train 0 (1)', 'completed 0', 'checkpoint 1']);
  });

  it('on STOP during rollout, drops that rollout and checkpoints the last completed step', async () => {
    const rollout = deferred<void>();
    const { log, effects } = loggingEffects({ rollout });
    const { actor, done } = start({ startStep: 0, totalSteps: 10, evalEvery: 0, checkpointEvery: 0 }, effects);
    actor.send({ type: 'STOP' });
    rollout.resolve();
    expect(await done).toEqual({ status: 'stopped', completedSteps: 0, error: null });
    expect(log).toEqual(['rollout 0', 'checkpoint 0']);
    expect(actor.getSnapshot().matches('stopped')).toBe(true);
  });

  it('on STOP during the first rollout of a resumed run, does not re-save the checkpoint it resumed from', async () => {
    const rollout = deferred<void>();
    const { log, effects } = loggingEffects({ rollout });
    const { actor, done } = start({ startStep: 7, totalSteps: 10, evalEvery: 0, checkpointEvery: 0 }, effects);
    actor.send({ type: 'STOP' });
    rollout.resolve();
    expect(await done).toEqual({ status: 'stopped', completedSteps: 7, error: null });
    expect(log).toEqual(['rollout 7']);
  });

  it('does not checkpoint twice when STOP arrives after a step that was just checkpointed', async () => {
    const evaluate = deferred<void>();
    const { log, effects } = loggingEffects({ evaluate });
    const { actor, done } = start({ startStep: 0, totalSteps: 10, evalEvery: 1, checkpointEvery: 1 }, effects);
    await waitFor(actor, (s) => s.matches('evaluating'));
    actor.send({ type: 'STOP' });
    evaluate.resolve();
    expect(await done).toMatchObject({ status: 'stopped', completedSteps: 1 });
    expect(log).toEqual(['rollout 0', 'train 0 (1)', 'completed 0', 'evaluate 0', 'checkpoint 1']);
  });

  it('ends in failed with the message when an effect throws', async () => {
    const { effects } = loggingEffects();
    const { done, emitted } = start(
      { startStep: 0, totalSteps: 3, evalEvery: 0, checkpointEvery: 0 },
      {
        ...effects,
        train: async () => {
          throw new Error('shape mismatch');
        },
      },
    );
    expect(await done).toEqual({ status: 'failed', completedSteps: 0, error: 'train failed: shape mismatch' });
    expect(emitted.at(-1)).toEqual({ type: 'RUN_ENDED', status: 'failed', completedSteps: 0, error: 'train failed: shape mismatch' });
  });
});
