import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/core/config.js';

/** A config that a Tinker engine accepts: a chat model folder, LoRA, free text at temperature 1. */
const tinkerConfig = (over: Record<string, unknown> = {}, model: Record<string, unknown> = {}) =>
  parseConfig({
    model: { from: 'models/qwen3', engine: 'tinker', tinker: { url: 'http://127.0.0.1:8000' }, lora: { rank: 8 }, ...model },
    sampling: { constrained: false, temperature: 1 },
    ...over,
  });

describe('model.engine: tinker', () => {
  it('accepts a config a Tinker server can run, with its defaults', () => {
    const config = tinkerConfig();
    expect(config.model.tinker).toMatchObject({ url: 'http://127.0.0.1:8000', apiKeyEnv: 'TINKER_API_KEY', server: 'tinker', reduction: null, baseModel: null });
  });

  const refusals: [string, () => unknown, RegExp][] = [
    ['no server', () => tinkerConfig({}, { tinker: null }), /model\.tinker/],
    ['no model folder', () => tinkerConfig({}, { from: null }), /model\.from/],
    ['full fine-tuning', () => tinkerConfig({}, { lora: null }), /model\.lora/],
    ['a critic', () => tinkerConfig({ algorithm: { name: 'ppo' } }), /algorithm\.name/],
    ['a KL term in the loss', () => tinkerConfig({ algorithm: { klCoef: 0.01 } }), /algorithm\.klPlacement/],
    ['an entropy bonus', () => tinkerConfig({ algorithm: { entropyCoef: 0.01 } }), /algorithm\.entropyCoef/],
    ['dual clip', () => tinkerConfig({ algorithm: { dualClip: 3 } }), /algorithm\.dualClip/],
    ['an off-policy correction', () => tinkerConfig({ offPolicy: { correction: 'tis' } }), /offPolicy\.correction/],
    ['constrained decoding', () => tinkerConfig({ sampling: { constrained: true } }), /sampling\.constrained/],
    ['a tempered sampler', () => tinkerConfig({ sampling: { constrained: false, temperature: 0.7 } }), /sampling\.temperature/],
    ['gradient workers', () => tinkerConfig({ train: { dataParallel: 2 } }), /train\.dataParallel/],
    ['a key in place of a variable name', () => tinkerConfig({}, { tinker: { url: 'http://x', apiKeyEnv: 'sk-abc-123' } }), /model\.tinker\.apiKeyEnv/],
    ['a gradient clip SkyRL would not apply', () => tinkerConfig({}, { tinker: { url: 'http://x', server: 'skyrl' } }), /algorithm\.gradClip/],
    ['a non-HTTP url', () => tinkerConfig({}, { tinker: { url: 'ftp://x' } }), /model\.tinker\.url/],
    ['a LoRA alpha the server would not use', () => tinkerConfig({}, { lora: { rank: 8, alpha: 16 } }), /model\.lora\.alpha/],
    ['a LoRA dropout the server would not apply', () => tinkerConfig({}, { lora: { rank: 8, dropout: 0 } }), /model\.lora\.dropout/],
    ['LoRA targets the server picks itself', () => tinkerConfig({}, { lora: { rank: 8, targetModules: ['q_proj'] } }), /model\.lora\.targetModules/],
  ];
  for (const [what, parse, field] of refusals) {
    it(`refuses ${what} at parse time, naming the field`, () => {
      expect(parse).toThrow(field);
    });
  }

  it('accepts SkyRL with gradient clipping off', () => {
    const config = tinkerConfig({ algorithm: { gradClip: null } }, { tinker: { url: 'http://x', server: 'skyrl' } });
    expect(config.algorithm.gradClip).toBeNull();
  });

  it('accepts the KL as a reward penalty', () => {
    expect(tinkerConfig({ algorithm: { klCoef: 0.01, klPlacement: 'reward' } }).algorithm.klCoef).toBe(0.01);
  });

  it('refuses a model.tinker section left on a local run', () => {
    expect(() => parseConfig({ model: { tinker: { url: 'http://x' } } })).toThrow(/model\.tinker/);
  });
});
