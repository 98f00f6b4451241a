import { describe, expect, it } from 'vitest';
import '../../src/envs/index.js';
import { getEnvironmentSpec } from '../../src/envs/registry.js';
import { toolCallText } from '../../src/envs/tools.js';

describe('the move tool of the grid environments', () => {
  it.each(['maze', 'sokoban', 'frozenlake'])('%s: a move call acts as its direction typed as text', async (name) => {
    const spec = getEnvironmentSpec(name);
    const task = spec.catalog().indices('test')[0] as number;
    const [byCall, byText] = [spec.create(), spec.create()];
    expect(byCall.tools?.().map((t) => t.name)).toEqual(['move']);
    await byCall.reset(task);
    await byText.reset(task);
    for (const direction of ['up', 'left', 'down', 'right']) {
      const a = await byCall.step(toolCallText({ name: 'move', arguments: { direction } }));
      const b = await byText.step(`Action: ${direction}`);
      expect(a.observation.text).toBe(b.observation.text);
      if (a.done) break;
    }
    await byCall.reset(task);
    const bad = await byCall.step(toolCallText({ name: 'move', arguments: { direction: 'north' } }));
    expect(bad.info?.invalid).toBe(true);
    expect(bad.observation.text).toMatch(/must be one of "up", "down", "left", "right"/);
  });
});
