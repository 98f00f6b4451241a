import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/core/config.js';
import { createBabyAICatalog } from '../../../src/envs/babyai/catalog.js';

describe('configs/babyai-scalinginter.yaml', () => {
  it("parses with ScalingInter-RL's BabyAI schedule (6, 13, 20 turns, every 100 steps) over a multi-level mix", () => {
    const config = loadConfig('configs/babyai-scalinginter.yaml');
    expect(config.algorithm.name).toBe('grpo');
    expect(config.horizon).toEqual({ schedule: 'stepwise', horizons: [6, 13, 20], every: 100 });
    expect(config.train.steps).toBe(300);
    const catalog = createBabyAICatalog({ settings: config.env.settings });
    const categories = new Set(catalog.indices('test').slice(0, 40).map((i) => catalog.category?.(i)));
    expect([...categories].sort()).toEqual(['AOD', 'Find', 'GoTo', 'Pickup', 'Room', 'SLoc']);
  });
});
