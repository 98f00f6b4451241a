import { createActor, toPromise, waitFor } from 'xstate';
import { afterEach, describe, expect, it } from 'vitest';
import { withEnvSessionEffects } from '../../src/actors/env-session.js';
import { type EpisodeInput, withEpisodeEffects } from '../../src/actors/episode.js';
import { withLearnerEffects } from '../../src/actors/learner.js';
import { withSamplerEffects } from '../../src/actors/sampler.js';
import { SimulatedClock } from '../../src/core/clock.js';
import { InvalidArgumentError } from '../../src/core/errors.js';
import type { StepResult, Trajectory } from '../../src/core/types.js';
import type { ActRequest, ActResult } from '../../src/core/policy.js';
import { roundTrip } from '../../src/bus/codec.js';
import { MemoryBus } from '../../src/bus/memory-bus.js';
import { messageFlow, subjects } from '../../src/runtime/wiring/message-flow.js';
import { serveEnvSession } from '../../src/runtime/wiring/env-session.js';
import { type ActCodec, remoteEpisodeEffects } from '../../src/runtime/wiring/episode.js';
import { remoteTrain, serveLearner } from '../../src/runtime/wiring/learner.js';
import type { Served } from '../../src/runtime/wiring/ports.js';
import { announceWeights, serveSampler } from '../../src/runtime/wiring/sampler.js';

const RUN = 'run1';
/** Token ids of the scripted vocabulary. */
const INC = 5;
const QUIT = 6;
const END = 2;

/** A 3-step counter environment: `inc` three times succeeds; `quit` fails; `crash` throws. */
function counterEnv() {
  let count = 0;
  return {
    resetEnv: async (index: number) => {
      count = 0;
      return { text: `task ${index}: count 0`, availableActions: ['inc', 'quit'] };
    },
    stepEnv: async (actionText: string): Promise<StepResult> => {
      if (actionText === 'crash') throw new Error('segfault in env');
      if (actionText === 'quit') return { observation: { text: 'gave up' }, reward: 0, done: true, success: false };
      count++;
      const done = count >= 3;
      return { observation: { text: `count ${count}` }, reward: done ? 1 : 0, done, success: done, info: { invalid: false, count } };
    },
    closeEnv: async () => {},
  };
}

/** The scripted policy's context: [turn index, first char code of the instruction]. */
const codec: ActCodec = {
  toActRequest: (request) => ({ contextTokens: new Int32Array([request.turns.length, request.instruction.charCodeAt(0)]), actionChoices: null }),
  decode: (tokens) => (tokens[0] === INC ? 'inc' : tokens[0] === QUIT ? 'quit' : 'crash'),
};

describe('wiring over a MemoryBus with the codec', () => {
  const cleanup: Served[] = [];
  afterEach(() => {
    for (const s of cleanup.splice(0)) s.close();
  });

  function setup(options: { maxBatch?: number; sessions?: string[] } = {}) {
    const clock = new SimulatedClock();
    const bus = new MemoryBus({ clock, encode: true });
    const batchSizes: number[] = [];
    let version = 0;
    // Instruction 'i' → always `inc`; 'q' → `quit`; anything else → `crash`.
    const generate = async (requests: readonly ActRequest[]): Promise<ActResult[]> => {
      batchSizes.push(requests.length);
      return requests.map((r) => {
        const first = r.contextTokens[1] === 'i'.charCodeAt(0) ? INC : r.contextTokens[1] === 'q'.charCodeAt(0) ? QUIT : 9;
        return { tokens: new Int32Array([first, END]), logprobs: new Float32Array([-0.1, -0.01]), lossMask: new Uint8Array([1, 0]), constraint: null, policyVersion: version };
      });
    };
    const sampler = createActor(
      withSamplerEffects({
        generate,
        loadWeights: async (v) => {
          version = v;
        },
      }),
      { input: { maxBatch: options.maxBatch ?? 1, maxWaitMs: 10 }, clock },
    ).start();
    cleanup.push(serveSampler(bus, RUN, sampler));
    for (const sessionId of options.sessions ?? ['env-0']) {
      const session = createActor(withEnvSessionEffects(counterEnv()), { input: { envName: 'counter', envTimeoutMs: 1000 }, clock }).start();
      cleanup.push(serveEnvSession(bus, RUN, sessionId, session));
    }
    const runEpisode = (input: Partial<EpisodeInput> & { instruction: string }, sessionId = 'env-0') => {
      const effects = remoteEpisodeEffects(bus, RUN, sessionId, codec, { envTimeoutMs: 1000, actTimeoutMs: 1000 });
      const episode = createActor(withEpisodeEffects(effects), {
        input: { taskId: 'counter_4', taskIndex: 4, groupId: 'g0', step: 0, horizon: 5, ...input },
        clock,
      }).start();
      return toPromise(episode) as Promise<Trajectory>;
    };
    return { bus, clock, sampler, batchSizes, runEpisode };
  }

  it('runs an episode to success across env session and sampler, and the trajectory survives the codec', async () => {
    const { bus, runEpisode } = setup();
    const received: unknown[] = [];
    bus.subscribe('turnwise.run1.test', (t) => {
      received.push(t);
    });
    const trajectory = await runEpisode({ instruction: 'inc to 3' });
    expect(trajectory.outcome).toBe('success');
    expect(trajectory.reward).toBe(1);
    expect(trajectory.turns.map((t) => t.actionText)).toEqual(['inc', 'inc', 'inc']);
    expect(trajectory.turns[1]?.promptTokens).toEqual(new Int32Array([1, 'i'.charCodeAt(0)]));
    expect(trajectory.turns[0]?.actionTokens).toEqual(new Int32Array([INC, END]));
    expect(trajectory.turns[0]?.actionLogprobs).toBeInstanceOf(Float32Array);
    expect(trajectory.finalObservationText).toBe('count 3');

    expect(roundTrip(trajectory)).toEqual(trajectory);
    bus.publish('turnwise.run1.test', trajectory);
    await bus.drain();
    expect(received).toEqual([trajectory]);
    expect((received[0] as Trajectory).turns[0]?.actionLossMask).toBeInstanceOf(Uint8Array);
  });

  it('truncates an episode at the horizon over the bus', async () => {
    const { runEpisode } = setup();
    const trajectory = await runEpisode({ instruction: 'inc forever', horizon: 2 });
    expect(trajectory.outcome).toBe('truncated');
    expect(trajectory.turns).toHaveLength(2);
  });

  it('ends failure when the environment says done without success', async () => {
    const { runEpisode } = setup();
    expect((await runEpisode({ instruction: 'quit' })).outcome).toBe('failure');
  });

  it('ends an episode in error with the remote message when the environment crashes', async () => {
    const { runEpisode } = setup();
    const trajectory = await runEpisode({ instruction: 'x' });
    expect(trajectory.outcome).toBe('error');
    expect(trajectory.error).toContain('segfault in env');
    expect(roundTrip(trajectory)).toEqual(trajectory);
  });

  it('ends an episode in error when its env session does not exist', async () => {
    const { runEpisode } = setup();
    const trajectory = await runEpisode({ instruction: 'inc' }, 'env-missing');
    expect(trajectory.outcome).toBe('error');
    expect(trajectory.error).toMatch(/no responder/);
  });

  it('batches act requests of concurrent episodes into one generate call', async () => {
    const { runEpisode, batchSizes } = setup({ maxBatch: 2, sessions: ['env-0', 'env-1'] });
    const [a, b] = await Promise.all([runEpisode({ instruction: 'inc', horizon: 2 }, 'env-0'), runEpisode({ instruction: 'inc', horizon: 2 }, 'env-1')]);
    expect([a.outcome, b.outcome]).toEqual(['truncated', 'truncated']);
    expect(batchSizes).toEqual([2, 2]);
  });

  it('delivers new weights to the sampler through the bus', async () => {
    const { bus, sampler, runEpisode } = setup();
    announceWeights(bus, RUN, 4, { layers: new Float32Array([1, 2]) });
    await waitFor(sampler, (s) => s.context.policyVersion === 4);
    const trajectory = await runEpisode({ instruction: 'inc' });
    expect(trajectory.turns.every((t) => t.policyVersion === 4)).toBe(true);
  });

  it('serves learner train requests and reports a training failure to the caller', async () => {
    const bus = new MemoryBus({ encode: true });
    let fail = false;
    const learner = createActor(
      withLearnerEffects({
        train: async (step, trajectories) => {
          if (fail) throw new Error('NaN loss');
          return { metrics: { 'loss/policy': trajectories.length }, version: step + 1 };
        },
        publishWeights: async (version) => announceWeights(bus, RUN, version, null),
      }),
      { input: {} },
    ).start();
    cleanup.push(serveLearner(bus, RUN, learner));
    const train = remoteTrain(bus, RUN, 1000);
    expect(await train(0, [])).toEqual({ version: 1, metrics: { 'loss/policy': 0 } });
    fail = true;
    await expect(train(1, [])).rejects.toThrow(/NaN loss/);
  });

  it('names subjects per run and rejects ids that are not one token', () => {
    expect(subjects.act('run1')).toBe('turnwise.run1.sampler.act');
    expect(subjects.envStep('run1', 'env-3')).toBe('turnwise.run1.env.env-3.step');
    expect(() => subjects.envStep('run1', 'a.b')).toThrow(InvalidArgumentError);
    expect(messageFlow.every((f) => (f.subject === null) === (f.kind === 'in-process'))).toBe(true);
    expect(messageFlow.every((f) => f.subject === null || f.subject in subjects)).toBe(true);
  });
});
