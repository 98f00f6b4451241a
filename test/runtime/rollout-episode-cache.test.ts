/**
 * The rollout's side of per-episode KV caches: every act request names its episode, the request of
 * the last turn the horizon allows says so (nothing worth keeping), and every episode that ends —
 * however it ends — is released in the sampler.
 */
import { turnwiseText } from '../../src/models/policy-text.js';
import { describe, expect, it } from 'vitest';
import { createActor } from 'xstate';
import { withSamplerEffects } from '../../src/actors/sampler.js';
import { systemClock } from '../../src/core/clock.js';
import '../../src/envs/index.js';
import { getEnvironmentSpec } from '../../src/envs/registry.js';
import type { ActRequest, ActResult } from '../../src/core/policy.js';
import { BpeTokenizer } from '../../src/models/tokenizer/bpe.js';
import { baseVocab } from '../../src/models/tokenizer/tables.js';
import { MemoryBus } from '../../src/bus/memory-bus.js';
import { type EpisodePlan, RolloutRunner } from '../../src/runtime/rollout.js';
import { serveSampler } from '../../src/runtime/wiring/sampler.js';

// A merge-free byte tokenizer: the sampler below answers with the bytes of "turn left".
const tokenizer = new BpeTokenizer({ vocab: baseVocab(), merges: [] });

describe('RolloutRunner and per-episode caches', () => {
  it('names the episode in each act request, flags the horizon-last turn and releases every ended episode', async () => {
    const bus = new MemoryBus({ clock: systemClock });
    const seen: ActRequest[] = [];
    const released: string[] = [];
    const turnLeft = tokenizer.encode('turn left');
    const sampler = createActor(
      withSamplerEffects({
        generate: async (requests) => {
          seen.push(...requests);
          return requests.map((): ActResult => ({
            tokens: turnLeft,
            logprobs: new Float32Array(turnLeft.length),
            lossMask: new Uint8Array(turnLeft.length).fill(1),
            constraint: null,
            policyVersion: 0,
          }));
        },
        loadWeights: async () => {},
        release: (ids) => released.push(...ids),
      }),
      { input: { maxBatch: 8, maxWaitMs: 1 }, clock: systemClock },
    ).start();
    const served = serveSampler(bus, 'cache-run', sampler);
    const runner = new RolloutRunner({
      bus,
      runId: 'cache-run',
      spec: getEnvironmentSpec('babyai'),
      envSettings: { levels: ['GoToRedBall'] },
      poolSize: 3,
      text: turnwiseText(tokenizer, { history: 'full', includeInstruction: false, maxContextTokens: 4096 }),
      constrained: false,
      envTimeoutMs: 30_000,
      actTimeoutMs: 30_000,
      clock: systemClock,
    });
    const horizon = 3;
    const plans: EpisodePlan[] = [0, 1, 2, 3].map((i) => ({
      taskId: `babyai_${1000 * 40 + 40 * i}`,
      taskIndex: 1000 * 40 + 40 * i,
      groupId: 'g',
      trajectoryId: `episode-${i}`,
      seed: 17 + i,
    }));
    const trajectories = await runner.run(0, horizon, plans);
    await bus.drain();

    // Turning left never finishes GoToRedBall: every episode plays exactly `horizon` turns.
    expect(trajectories.map((t) => t.turns.length)).toEqual([3, 3, 3, 3]);
    expect(seen).toHaveLength(12);
    for (const plan of plans) {
      const mine = seen.filter((r) => r.episodeId === plan.trajectoryId);
      expect(mine.map((r) => r.lastTurn)).toEqual([false, false, true]);
      // With full history each turn's context extends the previous one: what the cache relies on.
      const contexts = mine.map((r) => [...r.contextTokens]);
      for (let t = 1; t < contexts.length; t++) {
        const before = contexts[t - 1] ?? [];
        expect(before.length).toBeGreaterThan(0);
        expect(contexts[t]?.slice(0, before.length)).toEqual(before);
      }
    }
    expect([...released].sort()).toEqual(plans.map((p) => p.trajectoryId));

    await runner.close();
    served.close();
    sampler.stop();
    await bus.close();
  });
});
