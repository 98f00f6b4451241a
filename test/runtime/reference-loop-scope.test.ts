import { describe, expect, it } from 'vitest';
import { loadConfig, parseOverride, resolveConfig } from '../../src/core/config.js';
import { InvalidConfigError } from '../../src/core/errors.js';
import { referenceTrain } from '../../src/runtime/reference-loop.js';

const quickstartWith = (...overrides: string[]) => resolveConfig(loadConfig('configs/babyai-grpo.yaml', overrides.map(parseOverride)));

describe('the reference loop refuses what it does not implement', () => {
  it.each([
    ['mode=async', 'mode'],
    ['algorithm.klCoef=0.01', 'algorithm.klCoef'],
    ['offPolicy.correction=tis', 'offPolicy.correction'],
    ['train.dataParallel=2', 'train.dataParallel'],
  ])('refuses %s, naming %s, before any work', async (override, field) => {
    const refused = referenceTrain(quickstartWith(override));
    await expect(refused).rejects.toBeInstanceOf(InvalidConfigError);
    await expect(refused).rejects.toThrow(field);
  });

  it('refuses a horizon schedule other than fixed and an algorithm with a critic', async () => {
    await expect(referenceTrain(resolveConfig(loadConfig('configs/babyai-scalinginter.yaml')))).rejects.toThrow(/horizon\.schedule/);
    await expect(referenceTrain(resolveConfig(loadConfig('configs/babyai-ppo.yaml')))).rejects.toThrow(/algorithm\.name/);
  });
});
