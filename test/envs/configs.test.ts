import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/core/config.js';
import '../../src/envs/index.js';
import { getEnvironmentSpec } from '../../src/envs/registry.js';

describe('environment configs', () => {
  it.each(['maze', 'wordle', 'sokoban', 'frozenlake'])('configs/%s-grpo.yaml parses and its settings build a catalog with both splits', (name) => {
    const config = loadConfig(`configs/${name}-grpo.yaml`);
    expect(config.env.name).toBe(name);
    const catalog = getEnvironmentSpec(name).catalog({ settings: config.env.settings });
    expect(catalog.indices('train').length).toBeGreaterThan(0);
    expect(catalog.indices('test').length).toBeGreaterThan(0);
    expect(config.train.evalTasks).toBeLessThanOrEqual(catalog.indices('test').length);
  });
});
