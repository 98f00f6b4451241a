import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/core/config.js';
import '../../src/envs/index.js';
import { getEnvironmentSpec } from '../../src/envs/registry.js';

describe('environment configs', () => {
  it.each(['maze', 'wordle', 'sokoban', 'frozenlake', 'sql', 'deepsearch', 'textcraft'])('configs/%s-grpo.yaml parses and its settings build a catalog with both splits', (name) => {
    const config = loadConfig(`configs/${name}-grpo.yaml`);
    expect(config.env.name).toBe(name);
    const catalog = getEnvironmentSpec(name).catalog({ settings: config.env.settings });
    expect(catalog.indices('train').length).toBeGreaterThan(0);
    expect(catalog.indices('test').length).toBeGreaterThan(0);
    expect(config.train.evalTasks).toBeLessThanOrEqual(catalog.indices('test').length);
  });

  // Free modes: nothing listed, so a random agent must write its actions (docs/environments-llm.md measures it).
  it.each([
    ['wordle', { candidates: 0 }],
    ['sql', { candidates: 0 }],
    ['deepsearch', { candidates: false }],
    ['textcraft', { listActions: false }],
  ])('configs/%s-grpo.yaml runs a pretrained model in free mode (%o), its actions written, not listed', async (name, free) => {
    const config = loadConfig(`configs/${name}-grpo.yaml`);
    expect(config.model.from).toMatch(/Instruct/);
    expect(config.sampling.constrained).toBe(false);
    const env = getEnvironmentSpec(name).create({ settings: config.env.settings });
    const settings = (env as unknown as { settings?: Record<string, unknown> }).settings ?? config.env.settings;
    for (const [key, value] of Object.entries(free)) expect(settings[key]).toBe(value);
    const test = getEnvironmentSpec(name).catalog({ settings: config.env.settings }).indices('test');
    const first = await env.reset(test[0] as number);
    expect(first.availableActions ?? []).toEqual([]);
    expect(env.tools?.().length).toBeGreaterThan(0);
    await env.close();
  });
});
