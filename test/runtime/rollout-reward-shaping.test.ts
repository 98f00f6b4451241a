/**
 * The process-reward hook in a real rollout (RolloutRunner, episode actors, BabyAI sessions, a
 * sampler actor on the memory bus): called once per turn of every episode, in turn order, with
 * that turn and exactly the turns before it; its values land on the turns it scored.
 */
import { describe, expect, it } from 'vitest';
import { createActor } from 'xstate';
import { withSamplerEffects } from '../../src/actors/sampler.js';
import type { ProcessRewardInput } from '../../src/algorithms/reward-shapers.js';
import { systemClock } from '../../src/core/clock.js';
import type { ActResult } from '../../src/core/policy.js';
import '../../src/envs/index.js';
import { getEnvironmentSpec } from '../../src/envs/registry.js';
import { turnwiseText } from '../../src/models/policy-text.js';
import { BpeTokenizer } from '../../src/models/tokenizer/bpe.js';
import { baseVocab } from '../../src/models/tokenizer/tables.js';
import { MemoryBus } from '../../src/bus/memory-bus.js';
import { type EpisodePlan, RolloutRunner } from '../../src/runtime/rollout.js';
import { serveSampler } from '../../src/runtime/wiring/sampler.js';

const tokenizer = new BpeTokenizer({ vocab: baseVocab(), merges: [] });

describe('RolloutRunner with a process-reward hook', () => {
  it('calls the hook once per turn with the turn and the turns before it, and stores its values', async () => {
    const bus = new MemoryBus({ clock: systemClock });
    // Each request's context length picks the action, so episodes differ: "turn left" or "turn right".
    const actions = ['turn left', 'turn right'].map((a) => tokenizer.encode(a));
    const sampler = createActor(
      withSamplerEffects({
        generate: async (requests) =>
          requests.map((r): ActResult => {
            const tokens = actions[r.contextTokens.length % 2] as Int32Array;
            return { tokens, logprobs: new Float32Array(tokens.length), lossMask: new Uint8Array(tokens.length).fill(1), constraint: null, policyVersion: 0 };
          }),
        loadWeights: async () => {},
        release: () => {},
      }),
      { input: { maxBatch: 8, maxWaitMs: 1 }, clock: systemClock },
    ).start();
    const served = serveSampler(bus, 'shape-run', sampler);
    const calls: ProcessRewardInput[] = [];
    const runner = new RolloutRunner({
      bus,
      runId: 'shape-run',
      spec: getEnvironmentSpec('babyai'),
      envSettings: { levels: ['GoToRedBall'] },
      poolSize: 2,
      text: turnwiseText(tokenizer, { history: 'full', includeInstruction: false, maxContextTokens: 4096 }),
      constrained: false,
      envTimeoutMs: 30_000,
      actTimeoutMs: 30_000,
      clock: systemClock,
      shaping: {
        name: 'recorder',
        hook: async (input) => {
          calls.push(input);
          return input.turn.index * 10 + input.previousTurns.length; // distinct per turn; 11 * index when the prefix is right
        },
      },
    });
    const plans: EpisodePlan[] = [0, 1, 2].map((i) => ({ taskId: `babyai_${40_000 + 40 * i + 1}`, taskIndex: 40_000 + 40 * i + 1, groupId: 'g', trajectoryId: `e${i}`, seed: 5 + i }));
    const trajectories = await runner.run(0, 4, plans);
    await runner.close();
    served.close();
    sampler.stop();
    await bus.drain();

    const turnCount = trajectories.reduce((n, t) => n + t.turns.length, 0);
    expect(turnCount).toBeGreaterThan(3);
    expect(calls).toHaveLength(turnCount);
    for (const t of trajectories) {
      const mine = calls.filter((c) => c.trajectoryId === t.trajectoryId);
      expect(mine.map((c) => c.turn.index)).toEqual(t.turns.map((turn) => turn.index));
      mine.forEach((c, k) => {
        expect(c.taskId).toBe(t.taskId);
        expect(c.turn.actionText).toBe(t.turns[k]?.actionText);
        expect(c.turn.reward).toBe(t.turns[k]?.reward);
        expect(c.previousTurns.map((p) => p.index)).toEqual(t.turns.slice(0, k).map((p) => p.index));
        expect(c.previousTurns.map((p) => p.actionText)).toEqual(t.turns.slice(0, k).map((p) => p.actionText));
      });
      expect(t.turns.map((turn) => turn.shapedReward)).toEqual(t.turns.map((turn) => 11 * turn.index));
    }
  });
});
