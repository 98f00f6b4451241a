import { describe, expect, it } from 'vitest';
import { InvalidConfigError } from '../../../src/core/errors.js';
import { parseHfConfig, writeHfConfig } from '../../../src/models/hf/hf-config.js';
import { RopeTable, ropeInverseFrequencies } from '../../../src/models/transformer/rope.js';

/** SmolLM2-135M's shape (a Llama with grouped-query attention and tied embeddings). */
const SMOL = {
  architectures: ['LlamaForCausalLM'],
  model_type: 'llama',
  hidden_size: 576,
  intermediate_size: 1536,
  num_hidden_layers: 30,
  num_attention_heads: 9,
  num_key_value_heads: 3,
  max_position_embeddings: 8192,
  rms_norm_eps: 1e-5,
  rope_theta: 100000,
  rope_scaling: null,
  tie_word_embeddings: true,
  vocab_size: 49152,
  hidden_act: 'silu',
  bos_token_id: 1,
  eos_token_id: 2,
  torch_dtype: 'bfloat16',
  transformers_version: '4.40.1',
  use_cache: true,
};

function expectFieldError(hf: Record<string, unknown>, field: RegExp): void {
  let caught: unknown;
  try {
    parseHfConfig(hf);
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(InvalidConfigError);
  expect((caught as InvalidConfigError).path).toMatch(field);
}

describe('parseHfConfig', () => {
  it('reads a SmolLM2-shaped llama config', () => {
    const { config, tokenIds, dtype, notes } = parseHfConfig(SMOL);
    expect(config).toMatchObject({ dModel: 576, nLayers: 30, nHeads: 9, nKvHeads: 3, headDim: 64, ffnHidden: 1536, vocabSize: 49152, tieEmbeddings: true, ropeTheta: 100000, rmsNormEps: 1e-5, architecture: 'llama' });
    expect(config.ropeScaling).toBeNull();
    expect(tokenIds).toEqual({ bos: 1, eos: [2], pad: null });
    expect(dtype).toBe('bfloat16');
    expect(notes).toEqual([]);
  });

  it('reads rope_theta and scaling where transformers 5 writes them (rope_parameters)', () => {
    const { rope_theta: _theta, rope_scaling: _scaling, ...v5 } = SMOL;
    const { config } = parseHfConfig({ ...v5, rope_parameters: { rope_type: 'llama3', rope_theta: 500000, factor: 32, low_freq_factor: 1, high_freq_factor: 4, original_max_position_embeddings: 8192 } });
    expect(config.ropeTheta).toBe(500000);
    expect(config.ropeScaling).toEqual({ type: 'llama3', factor: 32, lowFreqFactor: 1, highFreqFactor: 4, originalMaxPositions: 8192 });
    expect(parseHfConfig({ ...v5, rope_parameters: { rope_type: 'default', rope_theta: 1234 } }).config.ropeTheta).toBe(1234);
  });

  it('applies each architecture\'s own defaults (Qwen2 q/k/v biases, Qwen3 q/k-norm and head_dim 128)', () => {
    const base = { hidden_size: 64, num_hidden_layers: 1, num_attention_heads: 4, intermediate_size: 8, vocab_size: 10 };
    expect(parseHfConfig({ ...base, model_type: 'qwen2', num_key_value_heads: 2 }).config).toMatchObject({ qkvBias: true, outputBias: false, qkNorm: false, nKvHeads: 2 });
    // Qwen2's class default is 32 key/value heads (not "as many as the query heads"), as transformers has it.
    expectFieldError({ ...base, model_type: 'qwen2' }, /num_key_value_heads$/);
    const qwen3 = parseHfConfig({ ...base, model_type: 'qwen3', num_key_value_heads: 2 }).config;
    expect(qwen3).toMatchObject({ qkNorm: true, headDim: 128, qkvBias: false });
    expect(parseHfConfig({ ...base, model_type: 'llama', attention_bias: true, mlp_bias: true }).config).toMatchObject({ qkvBias: true, outputBias: true, mlpBias: true });
  });

  it('caps the context at a sliding window (exact there) and says so', () => {
    const mistral = { ...SMOL, architectures: ['MistralForCausalLM'], model_type: 'mistral', max_position_embeddings: 32768, sliding_window: 4096 };
    const { config, notes } = parseHfConfig(mistral);
    expect(config.maxContext).toBe(4096);
    expect(notes.join()).toMatch(/sliding_window 4096/);
    expect(parseHfConfig({ ...mistral, sliding_window: null }).config.maxContext).toBe(32768);
    const qwen = { ...SMOL, architectures: ['Qwen2ForCausalLM'], model_type: 'qwen2', max_position_embeddings: 32768, sliding_window: 32768, use_sliding_window: false };
    expect(parseHfConfig(qwen).config.maxContext).toBe(32768);
    expect(parseHfConfig({ ...qwen, use_sliding_window: true, sliding_window: 1024 }).config.maxContext).toBe(1024);
  });

  it('refuses every field that would change the math, naming it', () => {
    expectFieldError({ ...SMOL, hidden_act: 'gelu' }, /config\.json\.hidden_act$/);
    expectFieldError({ ...SMOL, rope_scaling: { type: 'dynamic', factor: 2 } }, /rope_scaling\.type$/);
    expectFieldError({ ...SMOL, rope_scaling: { rope_type: 'yarn', factor: 4 } }, /rope_scaling\.rope_type$/);
    expectFieldError({ ...SMOL, quantization_config: { quant_method: 'gptq' } }, /quantization_config$/);
    expectFieldError({ ...SMOL, attention_dropout: 0.1 }, /attention_dropout$/);
    expectFieldError({ ...SMOL, partial_rotary_factor: 0.5 }, /partial_rotary_factor$/);
    expectFieldError({ ...SMOL, model_type: 'gemma2' }, /model_type$/);
    expectFieldError({ ...SMOL, architectures: ['LlamaForSequenceClassification'] }, /architectures$/);
    expectFieldError({ ...SMOL, num_key_value_heads: 4 }, /num_key_value_heads$/);
    expectFieldError({ ...SMOL, hidden_size: 577 }, /head_dim$/);
    expectFieldError({ ...SMOL, rope_theta: -1 }, /rope_theta$/);
  });

  it('writes a config.json that reads back to the same model, with the token ids', () => {
    const parsed = parseHfConfig({ ...SMOL, rope_scaling: { rope_type: 'linear', factor: 2 } });
    const written = writeHfConfig(parsed.config, { bos: 1, eos: [2, 7], pad: 0 });
    expect(written).toMatchObject({ architectures: ['LlamaForCausalLM'], num_key_value_heads: 3, head_dim: 64, bos_token_id: 1, eos_token_id: [2, 7], pad_token_id: 0 });
    expect(parseHfConfig(written).config).toEqual(parsed.config);
  });
});

describe('RoPE frequencies', () => {
  it('follows transformers\' llama3 scaling (long wavelengths divided, short kept, smooth between)', () => {
    const cfg = { vocabSize: 1, dModel: 64, nLayers: 1, nHeads: 1, ffnHidden: 1, maxContext: 1024, ropeTheta: 500000, rmsNormEps: 1e-5, tieEmbeddings: false };
    const plain = ropeInverseFrequencies(cfg);
    const scaled = ropeInverseFrequencies({ ...cfg, ropeScaling: { type: 'llama3', factor: 8, lowFreqFactor: 1, highFreqFactor: 4, originalMaxPositions: 64 } });
    expect(scaled[0]).toBe(plain[0]); // wavelength 2π < 64/4: kept
    const last = plain.length - 1;
    expect(scaled[last]).toBeCloseTo(plain[last] / 8, 12); // wavelength far above 64: divided by the factor
    const medium = Array.from(plain).findIndex((f) => (2 * Math.PI) / f >= 16 && (2 * Math.PI) / f <= 64);
    expect(scaled[medium]).toBeLessThan(plain[medium]);
    expect(scaled[medium]).toBeGreaterThan(plain[medium] / 8);
  });

  it('grows its table on demand and keeps earlier rows', () => {
    const table = new RopeTable(Float32Array.of(1, 0.5), 10_000);
    table.ensure(3);
    const early = table.cos.slice(0, 12);
    table.ensure(500);
    expect(table.cos.length).toBeGreaterThanOrEqual(500 * 4);
    expect(Array.from(table.cos.slice(0, 12))).toEqual(Array.from(early));
    expect(table.sin[499 * 4 + 1]).toBeCloseTo(Math.sin(Math.fround(499 * 0.5)), 6);
  });
});
