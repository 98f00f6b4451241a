import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/core/config.js';
import { createTextcraftCatalog } from '../../../src/envs/textcraft/catalog.js';

describe('TextCraft configs', () => {
  it('parses the GRPO config (depth-1 goals, 4 turns)', () => {
    const config = loadConfig(new URL('../../../configs/textcraft-grpo.yaml', import.meta.url).pathname);
    expect(config.env.name).toBe('textcraft');
    expect(config.horizon).toEqual({ schedule: 'fixed', horizon: 4 });
    expect(createTextcraftCatalog({ settings: config.env.settings as Record<string, unknown> }).indices('test')).toHaveLength(115);
  });

  it("parses the ScalingInter-RL config with AgentGym-RL's TextCraft schedule", () => {
    const config = loadConfig(new URL('../../../configs/textcraft-scalinginter.yaml', import.meta.url).pathname);
    expect(config.horizon).toEqual({ schedule: 'stepwise', horizons: [10, 20, 30], every: 100 });
  });
});
