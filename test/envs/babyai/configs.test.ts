import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/core/config.js';
import { playBot } from '../../../src/envs/babyai/bot/play.js';
import { createBabyAICatalog } from '../../../src/envs/babyai/catalog.js';
import { BabyAIEnvironment } from '../../../src/envs/babyai/env.js';

describe('configs/babyai-scalinginter.yaml', () => {
  it("parses with ScalingInter-RL's BabyAI schedule (6, 13, 20 turns, every 100 steps) over a multi-level mix", () => {
    const config = loadConfig('configs/babyai-scalinginter.yaml');
    expect(config.algorithm.name).toBe('grpo');
    expect(config.horizon).toEqual({ schedule: 'stepwise', horizons: [6, 13, 20], every: 100 });
    expect(config.train.steps).toBe(300);
    const catalog = createBabyAICatalog({ settings: config.env.settings });
    const categories = new Set(catalog.indices('test').slice(0, 40).map((i) => catalog.category?.(i)));
    // Not AgentGym-RL's six categories: their AOD, Room and SLoc levels are solved by chance (the config's header).
    expect([...categories].sort()).toEqual(['Find', 'GoTo', 'Pickup', 'PutNext', 'Synth', 'Unlock']);
  });
});

describe('configs/babyai-grpo.yaml', () => {
  it("leaves room to learn: the bot wins 250 of the first 256 held-out tasks within the quickstart's horizon", () => {
    const config = loadConfig('configs/babyai-grpo.yaml');
    expect(config.horizon).toEqual({ schedule: 'fixed', horizon: 5 });
    const env = new BabyAIEnvironment({ settings: config.env.settings });
    const tasks = createBabyAICatalog({ settings: config.env.settings }).indices('test').slice(0, config.train.evalTasks);
    expect(tasks).toHaveLength(256);
    const wins = tasks.filter((task) => playBot(env, task, 5).success).length;
    // A uniformly random pick wins 9 of them (test/e2e/chance-baselines.test.ts, docs/environments-llm.md).
    expect(wins).toBe(250);
  });
});
