/**
 * Registered plug-ins in a real training run: a policy loss and a reward shaper registered from
 * outside the library are the ones the learner uses, and the run store keeps the raw rewards.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ppoClipLoss, registerPolicyLoss, registerRewardShaper, z } from '../../src/index.js';
import { parseConfig, resolveConfig } from '../../src/core/config.js';
import { trainRun } from '../../src/runtime/train/train-run.js';
import { RunStore } from '../../src/store/run-store.js';

const dir = mkdtempSync(join(tmpdir(), 'turnwise-plugins-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const lossCalls: number[] = [];
const shapedTurns = new Map<string, number>(); // trajectory id -> turns the hook scored
registerPolicyLoss({
  name: 'counting-ppo',
  description: 'test: ppo-clip that records the micro-batch sizes it sees',
  loss: (input, options) => {
    lossCalls.push(input.logprobs.shape[0]);
    return ppoClipLoss(input, options);
  },
});
registerRewardShaper({
  name: 'plus-bonus',
  description: 'test: + bonus on every turn',
  settings: z.object({ bonus: z.number() }).strict(),
  create:
    ({ bonus }) =>
    ({ trajectoryId }) => {
      shapedTurns.set(trajectoryId, (shapedTurns.get(trajectoryId) ?? 0) + 1);
      return bonus;
    },
});

describe('registered plug-ins in a training run', () => {
  it('trains with the registered policy loss and reward shaper; the store keeps the raw rewards', async () => {
    const config = resolveConfig(
      parseConfig({
        seed: 4,
        run: { dir, name: 'plugins' },
        env: { name: 'babyai', settings: { levels: ['GoToRedBall'] } },
        algorithm: { tasksPerStep: 2, groupSize: 4, policyLoss: 'counting-ppo' },
        reward: { mode: 'outcome+shaped', shaper: 'plus-bonus', settings: { bonus: 0.5 } },
        train: { steps: 2, evalEvery: 0, checkpointEvery: 0 },
      }),
    );
    const result = await trainRun({ config, runDir: join(dir, 'plugins') });
    expect(result.status).toBe('finished');
    expect(lossCalls.length).toBeGreaterThan(0);
    expect(lossCalls.every((n) => n > 0)).toBe(true);
    expect(shapedTurns.size).toBe(2 * 8);

    const store = RunStore.open(join(dir, 'plugins'), { readonly: true });
    store.useRun(result.runId);
    const episodes = store.episodes({ split: 'train' });
    expect(episodes).toHaveLength(16);
    for (const e of episodes) {
      const turns = store.episodeTurns(e.id);
      expect(turns).toHaveLength(shapedTurns.get(e.id) as number);
      // Shaped rewards sit beside the environment's own: the outcome reward and each turn's are unchanged.
      expect(turns.map((t) => t.shapedReward)).toEqual(turns.map(() => 0.5));
      expect(turns.at(-1)?.reward).toBe(e.reward);
      // BabyAI's own outcome reward: positive exactly for a success (the +0.5 per turn was not added to it).
      expect(e.reward > 0, e.id).toBe(e.outcome === 'success');
      expect(e.reward).toBeLessThanOrEqual(1);
    }
    store.close();
  });
});
