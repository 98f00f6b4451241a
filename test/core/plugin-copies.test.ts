import { describe, expect, it, vi } from 'vitest';
import { InvalidConfigError } from '../../src/core/errors.js';
import { parseConfig } from '../../src/core/config.js';
import '../../src/algorithms/index.js';
import { getEnvironmentSpec } from '../../src/envs/registry.js';

/** A second copy of the registration list's module, as a CommonJS copy of turnwise would load it. */
async function anotherCopy(): Promise<typeof import('../../src/core/plugin-copies.js')> {
  vi.resetModules();
  return import('../../src/core/plugin-copies.js');
}

describe('a plug-in registered with another copy of turnwise', () => {
  it("names the cause and the fix when the config's environment was registered in the other copy", async () => {
    (await anotherCopy()).noteRegistration('environment', 'grid_elsewhere');
    expect(() => getEnvironmentSpec('grid_elsewhere')).toThrow(/unknown environment "grid_elsewhere"; valid: .*babyai.* — 'grid_elsewhere' was registered with another copy of turnwise loaded in this process: .*Add "type": "module" to the package.json beside the plug-in \(or name the file \.mts\)/);
  });

  it('does so for an advantage estimator named by algorithm.name', async () => {
    (await anotherCopy()).noteRegistration('advantageEstimator', 'median-elsewhere');
    let error: unknown;
    try {
      parseConfig({ algorithm: { name: 'median-elsewhere' } });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InvalidConfigError);
    expect((error as Error).message).toMatch(/unknown algorithm 'median-elsewhere'.*another copy of turnwise.*"type": "module"/);
  });

  it('says nothing of copies for a name no copy registered, nor for one registered in this copy alone', () => {
    expect(() => getEnvironmentSpec('never_registered')).toThrow(/unknown environment "never_registered"; valid: [a-z_, ]+$/);
    expect(() => parseConfig({ algorithm: { name: 'never-registered' } })).toThrow(/unknown algorithm 'never-registered'; valid: [^—]+$/);
  });
});
