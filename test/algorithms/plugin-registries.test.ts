import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { computeAdvantages, estimatorNames, estimatorNeedsValues } from '../../src/algorithms/advantages.js';
import { estimatorRegistry, registerAdvantageEstimator } from '../../src/algorithms/estimator-registry.js';
import { policyLossRegistry, registerPolicyLoss } from '../../src/algorithms/policy-loss-registry.js';
import { ppoClipLoss } from '../../src/algorithms/losses.js';
import { registerRewardShaper, rewardShaperRegistry, rewardShapingOf, shapeTrajectory } from '../../src/algorithms/reward-shapers.js';
import { parseConfig, resolveConfig } from '../../src/core/config.js';
import { InvalidConfigError } from '../../src/core/errors.js';
import type { Trajectory } from '../../src/core/types.js';
import { estimatorOptionsOf, trainStepOptionsOf } from '../../src/runtime/algorithm-setup.js';

function configError(run: () => unknown): InvalidConfigError {
  try {
    run();
  } catch (error) {
    if (error instanceof InvalidConfigError) return error;
    throw error;
  }
  throw new Error('expected an InvalidConfigError');
}

// A user estimator: the reward times `scale`, on every token of its row.
registerAdvantageEstimator({
  name: 'scaled-reward',
  description: 'test: reward x scale',
  settings: z.object({ scale: z.number().positive().default(2) }).strict(),
  estimate: (input, { scale }) => ({ advantages: input.rewards.map((r) => r * scale), returns: input.rewards.slice() }),
});
registerPolicyLoss({ name: 'test-loss', description: 'test: ppo-clip with a wide clip', loss: (input, options) => ppoClipLoss(input, { ...options, clipRatio: 10 }) });
registerRewardShaper({ name: 'test-double', description: 'test: the turn reward times by', settings: z.object({ by: z.number().default(2) }).strict(), create: ({ by }) => ({ turn }) => turn.reward * by });

const trajectory = (reward: number, turns: number): Trajectory =>
  ({ trajectoryId: `t${reward}`, taskId: 'babyai_0', groupId: 'g', step: 0, turns: Array.from({ length: turns }, (_, k) => ({ index: k, reward: k === turns - 1 ? reward : 0 })), reward, outcome: 'success', horizon: 5, finalObservationText: '' }) as unknown as Trajectory;

describe('plug-in registries', () => {
  it('holds the built-ins, registered the same way as user plug-ins', () => {
    expect(estimatorRegistry.names()).toEqual(expect.arrayContaining([...estimatorNames, 'scaled-reward']));
    expect(estimatorRegistry.list().filter((e) => e.builtIn === true).map((e) => e.name)).toEqual(estimatorNames);
    expect(estimatorNeedsValues({ name: 'gae', gamma: 1, lambda: 1, level: 'token', whiten: true })).toBe(true);
    expect(estimatorNeedsValues({ name: 'scaled-reward', settings: {} })).toBe(false);
    expect(policyLossRegistry.get('ppo-clip').builtIn).toBe(true);
    expect(rewardShaperRegistry.names()).toEqual(expect.arrayContaining(['turn-penalty', 'invalid-action-penalty', 'repeated-action-penalty', 'test-double']));
    expect(rewardShaperRegistry.get('test-double').builtIn).toBeUndefined();
  });

  it('dispatches computeAdvantages to a registered estimator with its settings', () => {
    const out = computeAdvantages({ rewards: Float32Array.of(1, 0, 0.5), groupIds: ['a', 'a', 'b'], options: { name: 'scaled-reward', settings: { scale: 3 } } });
    expect(Array.from(out.advantages)).toEqual([3, 0, 1.5]);
    expect(() => computeAdvantages({ rewards: Float32Array.of(1), groupIds: ['a'], options: { name: 'nope', settings: {} } })).toThrow(/unknown advantage estimator 'nope'; valid names: .*scaled-reward/);
  });

  it('refuses a second plug-in of the same name, and names that a config could not spell', () => {
    expect(() => registerAdvantageEstimator({ name: 'grpo', description: 'x', estimate: (i) => ({ advantages: i.rewards, returns: i.rewards }) })).toThrow(/already registered/);
    expect(() => registerRewardShaper({ name: 'has space', description: 'x', create: () => () => 0 })).toThrow(/letters, digits/);
  });
});

describe('the config and the registries', () => {
  it('accepts a registered estimator as algorithm.name, its settings parsed by its own schema', () => {
    const config = resolveConfig(parseConfig({ algorithm: { name: 'scaled-reward', settings: {}, groupSize: 4, lr: 3e-4 } }));
    expect(config.algorithm).toMatchObject({ name: 'scaled-reward', settings: { scale: 2 }, groupSize: 4, lr: 3e-4, clipRatio: 0.2 });
    expect(estimatorOptionsOf(config.algorithm)).toEqual({ name: 'scaled-reward', settings: { scale: 2 } });
    expect(trainStepOptionsOf(config).estimator).toEqual({ name: 'scaled-reward', settings: { scale: 2 } });
  });

  it('names the field at fault in a registered estimator section', () => {
    expect(configError(() => parseConfig({ algorithm: { name: 'scaled-reward', settings: { scale: -1 } } })).path).toBe('algorithm.settings.scale');
    expect(configError(() => parseConfig({ algorithm: { name: 'scaled-reward', normalizeStd: true } })).path).toBe('algorithm.normalizeStd');
  });

  it('lists the valid names for an unknown algorithm, built-in and registered', () => {
    const error = configError(() => parseConfig({ algorithm: { name: 'grpoo' } }, 'x.yaml'));
    expect(error.path).toBe('algorithm.name');
    expect(error.message).toMatch(/unknown algorithm 'grpoo'; valid: grpo, rloo, reinforce_pp, reinforce, ppo, or a registered estimator: scaled-reward \(in x\.yaml\)/);
    // A built-in estimator's registry name is not an algorithm name (ppo is the algorithm of gae).
    expect(configError(() => parseConfig({ algorithm: { name: 'gae' } })).path).toBe('algorithm.name');
  });

  it('checks policy loss and reward shaper names and settings', () => {
    expect(configError(() => parseConfig({ algorithm: { policyLoss: 'nope' } })).message).toMatch(/unknown policy loss 'nope'; valid: ppo-clip, .*test-loss/);
    const shaped = (shaper: string, settings?: unknown) => parseConfig({ reward: { mode: 'outcome+shaped', shaper, ...(settings === undefined ? {} : { settings }) } });
    expect(configError(() => shaped('nope')).message).toMatch(/reward\.shaper.*unknown reward shaper 'nope'; valid: turn-penalty, invalid-action-penalty, repeated-action-penalty, .*test-double/);
    expect(configError(() => shaped('turn-penalty', { penalty: -1 })).path).toBe('reward.settings.penalty');
    expect(configError(() => shaped('test-double', { by: 'two' })).path).toBe('reward.settings.by');
    expect(shaped('turn-penalty').reward.settings).toEqual({ penalty: 0.01 });
    expect(shaped('test-double', { by: 3 }).reward.settings).toEqual({ by: 3 });
    expect(trainStepOptionsOf(resolveConfig(parseConfig({ algorithm: { policyLoss: 'test-loss' } }))).policyLoss).toEqual({ name: 'test-loss', settings: {} });
  });

  it('refuses a registered policy loss where it cannot run: gradient worker threads, off-policy corrections', () => {
    expect(configError(() => parseConfig({ algorithm: { policyLoss: 'test-loss' }, train: { dataParallel: 2 } })).message).toMatch(/learner thread only; set train.dataParallel: 1/);
    expect(configError(() => parseConfig({ algorithm: { policyLoss: 'test-loss' }, offPolicy: { correction: 'tis' } })).message).toMatch(/has its own loss/);
  });
});

describe('reward shaping', () => {
  it('puts a shaped reward on every turn (turn-penalty: -penalty each), leaving the trajectory itself alone', async () => {
    const raw = trajectory(1, 3);
    const penalised = await shapeTrajectory(raw, rewardShapingOf('turn-penalty', { penalty: 0.1 }));
    expect(penalised.turns.map((t) => t.shapedReward)).toEqual([-0.1, -0.1, -0.1]);
    const doubled = await shapeTrajectory(raw, rewardShapingOf('test-double', { by: 3 }));
    expect(doubled.turns.map((t) => t.shapedReward)).toEqual([0, 0, 3]);
    expect(raw.turns.map((t) => t.shapedReward)).toEqual([undefined, undefined, undefined]);
    expect(raw.reward).toBe(1);
  });
});
