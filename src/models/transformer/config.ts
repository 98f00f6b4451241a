/**
 * Shape hyper-parameters of the Llama-style decoder and their Hugging Face `config.json` form.
 */
import { InvalidConfigError } from '../../core/errors.js';

/** Hyper-parameters of a Llama-style decoder-only transformer. */
export interface TransformerConfig {
  /** Vocabulary size (rows of the embedding and of the LM head). */
  readonly vocabSize: number;
  /** Model width (hidden size). Must be divisible by `nHeads`. */
  readonly dModel: number;
  /** Number of decoder blocks. */
  readonly nLayers: number;
  /** Attention heads per block; head dim = dModel / nHeads, which must be even (RoPE pairs). */
  readonly nHeads: number;
  /** Inner width of the SwiGLU MLP (Llama's `intermediate_size`). */
  readonly ffnHidden: number;
  /** Largest position id + 1 the model accepts. */
  readonly maxContext: number;
  /** RoPE base θ (Llama: 10000). */
  readonly ropeTheta: number;
  /** RMSNorm epsilon (Llama: 1e-5 or 1e-6). */
  readonly rmsNormEps: number;
  /** When true the LM head reuses the token embedding (no `lm_head.weight`). */
  readonly tieEmbeddings: boolean;
}

/** A Llama `config.json` object as Hugging Face transformers writes it. */
export interface HfLlamaConfig {
  readonly architectures: readonly ['LlamaForCausalLM'];
  readonly model_type: 'llama';
  readonly hidden_size: number;
  readonly num_hidden_layers: number;
  readonly num_attention_heads: number;
  readonly num_key_value_heads: number;
  readonly intermediate_size: number;
  readonly vocab_size: number;
  readonly max_position_embeddings: number;
  readonly rope_theta: number;
  readonly rms_norm_eps: number;
  readonly tie_word_embeddings: boolean;
  readonly hidden_act: 'silu';
  readonly attention_bias: false;
  readonly mlp_bias: false;
  readonly torch_dtype: 'float32';
}

/**
 * Head dimension (`dModel / nHeads`).
 * @example headDim({ ...cfg, dModel: 64, nHeads: 4 }) // 16
 */
export function headDim(config: TransformerConfig): number {
  return config.dModel / config.nHeads;
}

/**
 * Throws {@link InvalidConfigError} naming the first bad field.
 * @example validateTransformerConfig({ ...cfg, nHeads: 3 }) // throws: 'model.nHeads'
 */
export function validateTransformerConfig(config: TransformerConfig): void {
  const positiveInts: (keyof TransformerConfig)[] = ['vocabSize', 'dModel', 'nLayers', 'nHeads', 'ffnHidden', 'maxContext'];
  for (const key of positiveInts) {
    const value = config[key];
    if (typeof value !== 'number' || !Number.isInteger(value) || value <= 0) {
      throw new InvalidConfigError(`model.${key}`, `expected a positive integer, got ${String(value)}`);
    }
  }
  if (config.dModel % config.nHeads !== 0) {
    throw new InvalidConfigError('model.nHeads', `dModel ${config.dModel} is not divisible by nHeads ${config.nHeads}`);
  }
  if (headDim(config) % 2 !== 0) {
    throw new InvalidConfigError('model.nHeads', `head dim ${headDim(config)} must be even for rotary embeddings`);
  }
  if (!(config.ropeTheta > 0)) throw new InvalidConfigError('model.ropeTheta', `expected > 0, got ${config.ropeTheta}`);
  if (!(config.rmsNormEps > 0)) throw new InvalidConfigError('model.rmsNormEps', `expected > 0, got ${config.rmsNormEps}`);
}

/**
 * The Llama `config.json` for this model, so a checkpoint (config + safetensors) loads in HF.
 * @example JSON.stringify(toHfConfig(cfg)) // {"architectures":["LlamaForCausalLM"],...}
 */
export function toHfConfig(config: TransformerConfig): HfLlamaConfig {
  return {
    architectures: ['LlamaForCausalLM'],
    model_type: 'llama',
    hidden_size: config.dModel,
    num_hidden_layers: config.nLayers,
    num_attention_heads: config.nHeads,
    num_key_value_heads: config.nHeads,
    intermediate_size: config.ffnHidden,
    vocab_size: config.vocabSize,
    max_position_embeddings: config.maxContext,
    rope_theta: config.ropeTheta,
    rms_norm_eps: config.rmsNormEps,
    tie_word_embeddings: config.tieEmbeddings,
    hidden_act: 'silu',
    attention_bias: false,
    mlp_bias: false,
    torch_dtype: 'float32',
  };
}

/**
 * Reads the fields turnwise needs back from a Llama `config.json` object.
 * @example const cfg = fromHfConfig(JSON.parse(fs.readFileSync('config.json', 'utf8')));
 */
export function fromHfConfig(hf: Record<string, unknown>): TransformerConfig {
  const num = (key: string, fallback?: number): number => {
    const value = hf[key] ?? fallback;
    if (typeof value !== 'number') throw new InvalidConfigError(`config.json.${key}`, `expected a number, got ${String(value)}`);
    return value;
  };
  const heads = num('num_attention_heads');
  if (num('num_key_value_heads', heads) !== heads) {
    throw new InvalidConfigError('config.json.num_key_value_heads', 'grouped-query attention is not supported');
  }
  const config: TransformerConfig = {
    vocabSize: num('vocab_size'),
    dModel: num('hidden_size'),
    nLayers: num('num_hidden_layers'),
    nHeads: heads,
    ffnHidden: num('intermediate_size'),
    maxContext: num('max_position_embeddings'),
    ropeTheta: num('rope_theta', 10000),
    rmsNormEps: num('rms_norm_eps', 1e-6),
    tieEmbeddings: hf.tie_word_embeddings === true,
  };
  validateTransformerConfig(config);
  return config;
}
