import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/core/config.js';
import { createTextcraftCatalog } from '../../../src/envs/textcraft/catalog.js';

describe('TextCraft configs', () => {
  it('parses the GRPO config (free mode with recap, depths 2-4, 30 turns, a pretrained model)', () => {
    const config = loadConfig(new URL('../../../configs/textcraft-grpo.yaml', import.meta.url).pathname);
    expect(config.env.name).toBe('textcraft');
    expect(config.env.settings).toMatchObject({ listActions: false, recap: true });
    expect(config.horizon).toEqual({ schedule: 'fixed', horizon: 30 });
    expect(config.sampling.constrained).toBe(false);
    expect(createTextcraftCatalog({ settings: config.env.settings as Record<string, unknown> }).indices('test')).toHaveLength(77);
  });

  it("parses the ScalingInter-RL config with AgentGym-RL's TextCraft schedule", () => {
    const config = loadConfig(new URL('../../../configs/textcraft-scalinginter.yaml', import.meta.url).pathname);
    expect(config.horizon).toEqual({ schedule: 'stepwise', horizons: [10, 20, 30], every: 100 });
  });
});
