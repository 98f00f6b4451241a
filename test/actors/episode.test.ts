import { createActor, initialTransition, toPromise, transition, waitFor } from 'xstate';
import { describe, expect, it } from 'vitest';
import { type EpisodeEffects, type EpisodeEmits, type EpisodeInput, episodeMachine, withEpisodeEffects } from '../../src/actors/episode.js';
import { SimulatedClock } from '../../src/core/clock.js';
import type { StepResult, Trajectory } from '../../src/core/types.js';
import { deferred, fakeActResult, never } from './fakes.js';

const input: EpisodeInput = { taskId: 'counter_2', taskIndex: 2, groupId: 'g0', step: 5, horizon: 4, instruction: 'count to 3' };

/** A counter that succeeds at 3; `quit` ends in failure; anything else is invalid. */
function counterEnv(target = 3) {
  let count = 0;
  return {
    reset: async (index: number) => {
      count = 0;
      return { text: `task ${index}: count 0`, availableActions: ['inc', 'quit'] };
    },
    step: async (actionText: string): Promise<StepResult> => {
      if (actionText === 'quit') return { observation: { text: 'gave up' }, reward: 0, done: true, success: false };
      if (actionText !== 'inc') return { observation: { text: `count ${count}` }, reward: 0, done: false, info: { invalid: true } };
      count++;
      const done = count >= target;
      return { observation: { text: `count ${count}` }, reward: done ? 1 : 0, done, ...(done ? { success: true } : {}) };
    },
  };
}

function scriptedAct(actions: string[]): EpisodeEffects['act'] {
  let i = 0;
  return async () => {
    const actText = actions[Math.min(i, actions.length - 1)] as string;
    const result = fakeActResult(i, 7);
    i++;
    return { actText, result, promptTokens: new Int32Array([100 + i]) };
  };
}

function run(effects: EpisodeEffects, episodeInput: EpisodeInput = input, clock = new SimulatedClock()) {
  const actor = createActor(withEpisodeEffects(effects), { input: episodeInput, clock });
  const emitted: EpisodeEmits[] = [];
  actor.on('*', (e) => emitted.push(e));
  actor.start();
  return { actor, emitted, clock, done: toPromise(actor) as Promise<Trajectory> };
}

describe('episode actor', () => {
  it('starts by resetting the task it was given', () => {
    const [snapshot, actions] = initialTransition(episodeMachine, input);
    expect(snapshot.value).toBe('resetting');
    expect(actions.map((a) => a.type)).toEqual(['callReset', 'xstate.raise']);
  });

  it('after a step that is not done and below the horizon, acts again', () => {
    const [s0] = initialTransition(episodeMachine, input);
    const [s1] = transition(episodeMachine, s0, { type: 'RESET_DONE', output: { text: 'count 0' } });
    expect(s1.value).toBe('choosingAction');
    const [s2] = transition(episodeMachine, s1, {
      type: 'ACT_DONE',
      output: { actText: 'inc', result: fakeActResult(0), promptTokens: new Int32Array([1]) },
    } as never);
    expect(s2.value).toBe('stepping');
    const [s3, actions] = transition(episodeMachine, s2, {
      type: 'STEP_DONE',
      output: { observation: { text: 'count 1' }, reward: 0, done: false },
    } as never);
    expect(s3.value).toBe('choosingAction');
    expect(s3.context.turns).toHaveLength(1);
    expect(actions.map((a) => a.type)).toEqual(['abandonCall', 'xstate.cancel', 'xstate.emit', 'callAct', 'xstate.raise']);
  });

  it('ends in success when the step says done and success, recording every turn', async () => {
    const env = counterEnv(3);
    const { done, emitted } = run({ reset: env.reset, step: env.step, act: scriptedAct(['inc']) });
    const t = await done;
    expect(t.outcome).toBe('success');
    expect(t.reward).toBe(1);
    expect(t.turns).toHaveLength(3);
    expect(t.finalObservationText).toBe('count 3');
    expect(t).toMatchObject({ trajectoryId: 'g0/counter_2', taskId: 'counter_2', groupId: 'g0', step: 5, horizon: 4 });
    expect(t.error).toBeUndefined();
    const first = t.turns[0];
    expect(first).toEqual({
      index: 0,
      observationText: 'task 2: count 0',
      promptTokens: new Int32Array([101]),
      actionText: 'inc',
      actionTokens: new Int32Array([0, 1, 2]),
      actionLogprobs: new Float32Array([-0.5, -0.25, 0]),
      actionLossMask: new Uint8Array([1, 1, 0]),
      constraint: null,
      policyVersion: 7,
      reward: 0,
      invalidAction: false,
    });
    expect(t.turns.map((turn) => turn.observationText)).toEqual(['task 2: count 0', 'count 1', 'count 2']);
    expect(emitted.map((e) => e.type)).toEqual(['TURN_RECORDED', 'TURN_RECORDED', 'TURN_RECORDED', 'EPISODE_FINISHED']);
  });

  it('truncates an episode at the current horizon', async () => {
    const env = counterEnv(10);
    const t = await run({ reset: env.reset, step: env.step, act: scriptedAct(['inc']) }).done;
    expect(t.outcome).toBe('truncated');
    expect(t.turns).toHaveLength(4);
    expect(t.horizon).toBe(4);
    expect(t.reward).toBe(0);
  });

  it('ends truncated by length, without a turn, when the context has no room for a reply', async () => {
    const env = counterEnv(10);
    let calls = 0;
    const act: EpisodeEffects['act'] = async (request) => {
      calls++;
      // Room for two replies, then none (the codec says so; nothing is sampled).
      if (request.turns.length >= 2) return { actText: '', result: fakeActResult(0, 0), promptTokens: new Int32Array([9]), exhausted: true };
      return { actText: 'inc', result: fakeActResult(request.turns.length, 7), promptTokens: new Int32Array([1]) };
    };
    const t = await run({ reset: env.reset, step: env.step, act }).done;
    expect(t.outcome).toBe('length');
    expect(t.turns).toHaveLength(2);
    expect(calls).toBe(3);
    expect(t.finalObservationText).toBe('count 2');
  });

  it('ends in failure when done without success, and flags invalid actions', async () => {
    const env = counterEnv(3);
    const t = await run({ reset: env.reset, step: env.step, act: scriptedAct(['jump', 'quit']) }).done;
    expect(t.outcome).toBe('failure');
    expect(t.turns.map((turn) => turn.invalidAction)).toEqual([true, false]);
    expect(t.finalObservationText).toBe('gave up');
  });

  it('counts a done step with positive reward and no success flag as success', async () => {
    const t = await run({
      reset: async () => ({ text: 'go' }),
      step: async () => ({ observation: { text: 'won' }, reward: 0.5, done: true }),
      act: scriptedAct(['x']),
    }).done;
    expect(t.outcome).toBe('success');
    expect(t.reward).toBe(0.5);
  });

  it('ends in error with the message kept when the environment fails', async () => {
    const t = await run({
      reset: async () => ({ text: 'go' }),
      step: async () => {
        throw new Error('connection reset');
      },
      act: scriptedAct(['inc']),
    }).done;
    expect(t.outcome).toBe('error');
    expect(t.error).toBe("environment 'counter' failed: step failed: connection reset");
    expect(t.turns).toEqual([]);
  });

  it('ends in error when the policy fails', async () => {
    const t = await run({
      reset: async () => ({ text: 'go' }),
      step: async () => ({ observation: { text: 'x' }, reward: 0, done: false }),
      act: async () => {
        throw new Error('no responder');
      },
    }).done;
    expect(t).toMatchObject({ outcome: 'error', error: 'act failed: no responder', finalObservationText: 'go' });
  });

  it('ends in error when a step outlives the effect timeout on the clock', async () => {
    const clock = new SimulatedClock();
    const env = counterEnv(3);
    const { actor, done } = run({ reset: env.reset, step: () => never(), act: scriptedAct(['inc']) }, { ...input, effectTimeoutMs: 50 }, clock);
    await waitFor(actor, (s) => s.matches('stepping'));
    clock.advance(50);
    const t = await done;
    expect(t.outcome).toBe('error');
    expect(t.error).toBe("environment 'counter' failed: step timed out after 50 ms");
  });

  it('aborts the signal of a step its deadline abandons and drops its late answer', async () => {
    const clock = new SimulatedClock();
    const env = counterEnv(3);
    const late = deferred<StepResult>();
    const signals: AbortSignal[] = [];
    const effects: EpisodeEffects = {
      reset: env.reset,
      act: scriptedAct(['inc']),
      step: (_, signal) => {
        signals.push(signal);
        return late.promise;
      },
    };
    const { actor, done, emitted } = run(effects, { ...input, effectTimeoutMs: 50 }, clock);
    await waitFor(actor, (s) => s.matches('stepping'));
    expect(signals[0]?.aborted).toBe(false);
    clock.advance(50);
    const t = await done;
    expect(signals[0]?.aborted).toBe(true);
    late.resolve({ observation: { text: 'too late' }, reward: 1, done: true, success: true });
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(t).toMatchObject({ outcome: 'error', turns: [] });
    expect(actor.getSnapshot().context.turns).toEqual([]);
    expect(emitted.map((e) => e.type)).toEqual(['EPISODE_FINISHED']);
  });

  it('never aborts the signal of a call that answered', async () => {
    const env = counterEnv(2);
    const signals: AbortSignal[] = [];
    const keep =
      <A extends unknown[], R>(f: (...args: A) => Promise<R>) =>
      (...args: A): Promise<R> => {
        signals.push(args[args.length - 1] as AbortSignal);
        return f(...args);
      };
    const t = await run({ reset: keep(env.reset), step: keep(env.step), act: keep(scriptedAct(['inc'])) }).done;
    expect(t.outcome).toBe('success');
    expect(signals).toHaveLength(5); // reset, then act and step twice
    expect(signals.some((signal) => signal.aborted)).toBe(false);
  });

  it('fails a call that throws before returning a promise like one that rejects', async () => {
    const t = await run({
      reset: async () => ({ text: 'go' }),
      step: () => {
        throw new Error('socket closed');
      },
      act: scriptedAct(['inc']),
    }).done;
    expect(t).toMatchObject({ outcome: 'error', error: "environment 'counter' failed: step failed: socket closed" });
  });

  it('ends in error with the reason when aborted', async () => {
    const { actor, done } = run({ reset: () => never(), step: () => never(), act: () => never() });
    actor.send({ type: 'ABORT', reason: 'run stopping' });
    const t = await done;
    expect(t).toMatchObject({ outcome: 'error', error: 'aborted: run stopping', turns: [] });
  });
});
