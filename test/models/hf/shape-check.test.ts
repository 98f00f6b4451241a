import { describe, expect, it } from 'vitest';
import { CheckpointError } from '../../../src/core/errors.js';
import { parseHfConfig } from '../../../src/models/hf/hf-config.js';
import { checkShapeFitsFiles, parameterCountOf } from '../../../src/models/hf/shape-check.js';
import type { TransformerConfig } from '../../../src/models/transformer/config.js';
import { weightSpecs } from '../../../src/models/transformer/weights.js';

const base = { hidden_size: 64, intermediate_size: 96, num_hidden_layers: 3, num_attention_heads: 4, num_key_value_heads: 2, vocab_size: 300, max_position_embeddings: 128 };
const shapes: Record<string, Record<string, unknown>> = {
  'llama, tied': { ...base, model_type: 'llama', tie_word_embeddings: true },
  'llama, biases everywhere': { ...base, model_type: 'llama', attention_bias: true, mlp_bias: true },
  'mistral, untied': { ...base, model_type: 'mistral' },
  'qwen2 (q/k/v bias)': { ...base, model_type: 'qwen2' },
  'qwen3 (q/k-norm, head_dim 32)': { ...base, model_type: 'qwen3', head_dim: 32 },
};

const listed = (config: TransformerConfig): number => weightSpecs(config).reduce((n, s) => n + s.hfShape.reduce((a, b) => a * b, 1), 0);

describe('parameterCountOf', () => {
  for (const [name, hf] of Object.entries(shapes)) {
    it(`equals the sum over the weight list: ${name}`, () => {
      const { config } = parseHfConfig(hf);
      expect(parameterCountOf(config)).toBe(listed(config));
    });
  }
});

describe('checkShapeFitsFiles', () => {
  const { config } = parseHfConfig(shapes['llama, tied'] as Record<string, unknown>);

  it('accepts files that hold the shape at 2 bytes a parameter or more', () => {
    expect(() => checkShapeFitsFiles(config, 4 * parameterCountOf(config), 'm/config.json')).not.toThrow();
    expect(() => checkShapeFitsFiles(config, 2 * parameterCountOf(config), 'm/config.json')).not.toThrow();
  });

  it('refuses 3,000,000 layers against files of the real size, naming config.json and the layer count', () => {
    const absurd = { ...config, nLayers: 3_000_000 };
    let caught: unknown;
    try {
      checkShapeFitsFiles(absurd, 4 * parameterCountOf(config), 'm/config.json');
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(CheckpointError);
    expect((caught as Error).message).toMatch(/m\/config\.json.*num_hidden_layers 3000000.*the weight files hold/);
  });

  it('refuses files one byte short of 2 bytes a parameter', () => {
    expect(() => checkShapeFitsFiles(config, 2 * parameterCountOf(config) - 1, 'm/config.json')).toThrow(CheckpointError);
  });
});
