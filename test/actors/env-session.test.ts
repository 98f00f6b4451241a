import { createActor, initialTransition, transition, waitFor } from 'xstate';
import { describe, expect, it } from 'vitest';
import { type EnvSessionEffects, type EnvSessionEmits, envSessionMachine, withEnvSessionEffects } from '../../src/actors/env-session.js';
import { SimulatedClock } from '../../src/core/clock.js';
import type { Observation, StepResult } from '../../src/core/types.js';
import { deferred, emittedBy, never } from './fakes.js';

const input = { envName: 'counter', envTimeoutMs: 1000 };
const obs = (text: string): Observation => ({ text });
const stepResult: StepResult = { observation: obs('after'), reward: 0, done: false };

function start(effects: Partial<EnvSessionEffects>, clock = new SimulatedClock()) {
  const logic = withEnvSessionEffects({
    resetEnv: effects.resetEnv ?? (async () => obs('start')),
    stepEnv: effects.stepEnv ?? (async () => stepResult),
    closeEnv: effects.closeEnv ?? (async () => {}),
  });
  const actor = createActor(logic, { input, clock }).start();
  const emitted: EnvSessionEmits[] = [];
  actor.on('*', (e) => emitted.push(e));
  return { actor, emitted, clock };
}

describe('env-session actor', () => {
  it('goes idle → resetting and starts the reset effect with a deadline', () => {
    const [s0] = initialTransition(envSessionMachine, input);
    expect(s0.value).toBe('idle');
    const [s1, actions] = transition(envSessionMachine, s0, { type: 'RESET', taskIndex: 4 });
    expect(s1.value).toBe('resetting');
    expect(s1.context.pendingTaskIndex).toBe(4);
    expect(actions.map((a) => a.type)).toEqual(['callReset', 'xstate.raise']);
    expect(actions[1]?.params).toMatchObject({ delay: 1000 });
  });

  it('rejects a STEP before any RESET', () => {
    const [s0] = initialTransition(envSessionMachine, input);
    const [s1, actions] = transition(envSessionMachine, s0, { type: 'STEP', actionText: 'go' });
    expect(s1.value).toBe('idle');
    expect(emittedBy(actions)).toEqual([{ type: 'REJECTED', request: 'STEP', reason: "'STEP' is not accepted in this state" }]);
  });

  it('serves reset then steps, going ready ⇄ stepping', async () => {
    const { actor, emitted } = start({});
    actor.send({ type: 'RESET', taskIndex: 1 });
    await waitFor(actor, (s) => s.matches('ready'));
    actor.send({ type: 'STEP', actionText: 'inc' });
    expect(actor.getSnapshot().value).toBe('stepping');
    await waitFor(actor, (s) => s.matches('ready'));
    expect(emitted).toEqual([
      { type: 'RESET_DONE', observation: obs('start') },
      { type: 'STEP_DONE', result: stepResult },
    ]);
    expect(actor.getSnapshot().context.episodes).toBe(1);
  });

  it('fails with an EnvironmentError when a step outlives envTimeoutMs on the clock', async () => {
    const clock = new SimulatedClock();
    const { actor, emitted } = start({ stepEnv: () => never() }, clock);
    actor.send({ type: 'RESET', taskIndex: 1 });
    await waitFor(actor, (s) => s.matches('ready'));
    actor.send({ type: 'STEP', actionText: 'inc' });
    clock.advance(999);
    expect(actor.getSnapshot().value).toBe('stepping');
    clock.advance(1);
    expect(actor.getSnapshot().value).toBe('failed');
    expect(emitted.at(-1)).toEqual({ type: 'SESSION_FAILED', error: "environment 'counter' failed: step timed out after 1000 ms" });
  });

  it('fails when the environment throws, and answers later calls with the same failure', async () => {
    const { actor, emitted } = start({
      resetEnv: async () => {
        throw new Error('server gone');
      },
    });
    actor.send({ type: 'RESET', taskIndex: 3 });
    await waitFor(actor, (s) => s.matches('failed'));
    const error = "environment 'counter' failed: reset(3) threw: server gone";
    expect(actor.getSnapshot().context.error).toBe(error);
    actor.send({ type: 'STEP', actionText: 'x' });
    expect(emitted).toEqual([
      { type: 'SESSION_FAILED', error },
      { type: 'SESSION_FAILED', error },
    ]);
  });

  it('abandons a step in flight on CLOSE: its signal aborts and its late answer is never emitted', async () => {
    const late = deferred<StepResult>();
    let stepSignal: AbortSignal | null = null;
    const { actor, emitted } = start({
      stepEnv: (_, signal) => {
        stepSignal = signal;
        return late.promise;
      },
    });
    actor.send({ type: 'RESET', taskIndex: 1 });
    await waitFor(actor, (s) => s.matches('ready'));
    actor.send({ type: 'STEP', actionText: 'inc' });
    expect((stepSignal as AbortSignal | null)?.aborted).toBe(false);
    actor.send({ type: 'CLOSE' });
    expect((stepSignal as AbortSignal | null)?.aborted).toBe(true);
    await waitFor(actor, (s) => s.matches('closed'));
    late.resolve(stepResult);
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(emitted.map((e) => e.type)).toEqual(['RESET_DONE', 'CLOSED']);
  });

  it('closes from any state and rejects calls afterwards', async () => {
    const close = deferred<void>();
    const { actor, emitted } = start({ closeEnv: () => close.promise });
    actor.send({ type: 'RESET', taskIndex: 1 });
    await waitFor(actor, (s) => s.matches('ready'));
    actor.send({ type: 'CLOSE' });
    expect(actor.getSnapshot().value).toBe('closing');
    close.resolve();
    await waitFor(actor, (s) => s.matches('closed'));
    actor.send({ type: 'RESET', taskIndex: 2 });
    expect(emitted.slice(-2).map((e) => e.type)).toEqual(['CLOSED', 'REJECTED']);
  });
});
