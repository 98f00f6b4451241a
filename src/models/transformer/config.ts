/**
 * Shape hyper-parameters of the decoder. One implementation serves turnwise's own small model and
 * the pretrained Llama-family models it loads (Llama, Mistral, Qwen2, Qwen3): the optional fields
 * below default to the plain Llama form, so a config that names none of them is the original
 * multi-head model. The Hugging Face `config.json` side lives in src/models/hf/hf-config.ts.
 */
import { InvalidConfigError } from '../../core/errors.js';

/** The model families whose `config.json` turnwise reads and writes (`model_type`). */
export type Architecture = 'llama' | 'mistral' | 'qwen2' | 'qwen3';

/** RoPE frequency scaling, as transformers' `rope_scaling` / `rope_parameters` describe it. */
export type RopeScaling =
  /** Position interpolation: every inverse frequency divided by `factor`. */
  | { readonly type: 'linear'; readonly factor: number }
  /** Llama 3.1: long wavelengths divided by `factor`, short ones kept, a smooth blend between. */
  | {
      readonly type: 'llama3';
      readonly factor: number;
      readonly lowFreqFactor: number;
      readonly highFreqFactor: number;
      readonly originalMaxPositions: number;
    };

/** Hyper-parameters of a Llama-style decoder-only transformer. */
export interface TransformerConfig {
  /** Vocabulary size (rows of the embedding and of the LM head). */
  readonly vocabSize: number;
  /** Model width (hidden size). */
  readonly dModel: number;
  /** Number of decoder blocks. */
  readonly nLayers: number;
  /** Query heads per block. */
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
  /** Key/value heads (grouped-query attention); must divide `nHeads`. Default `nHeads`. */
  readonly nKvHeads?: number;
  /** Width of one head; must be even (RoPE pairs). Default `dModel / nHeads`. */
  readonly headDim?: number;
  /** Biases on the q, k and v projections (Qwen2; Llama's `attention_bias`). Default false. */
  readonly qkvBias?: boolean;
  /** Bias on the o projection (Llama's `attention_bias`, not Qwen2). Default false. */
  readonly outputBias?: boolean;
  /** Biases on the MLP's gate, up and down projections (Llama's `mlp_bias`). Default false. */
  readonly mlpBias?: boolean;
  /** Per-head RMSNorm of queries and keys before RoPE (Qwen3's `q_norm` / `k_norm`). Default false. */
  readonly qkNorm?: boolean;
  /** RoPE frequency scaling, or none. Default none. */
  readonly ropeScaling?: RopeScaling | null;
  /** Family written into an exported `config.json`. Default `llama`. */
  readonly architecture?: Architecture;
}

/**
 * Head dimension (`headDim`, else `dModel / nHeads`).
 * @example headDim({ ...cfg, dModel: 64, nHeads: 4 }) // 16
 */
export function headDim(config: TransformerConfig): number {
  return config.headDim ?? config.dModel / config.nHeads;
}

/**
 * Key/value heads (`nKvHeads`, else `nHeads`).
 * @example kvHeads({ ...cfg, nHeads: 9, nKvHeads: 3 }) // 3
 */
export function kvHeads(config: TransformerConfig): number {
  return config.nKvHeads ?? config.nHeads;
}

/**
 * Width of the q projection's output, `nHeads * headDim` (not always `dModel`: Qwen3).
 * @example queryWidth({ ...cfg, dModel: 64, nHeads: 4, headDim: 32 }) // 128
 */
export function queryWidth(config: TransformerConfig): number {
  return config.nHeads * headDim(config);
}

/**
 * Width of the k and v projections' outputs, `nKvHeads * headDim`.
 * @example keyValueWidth({ ...cfg, nHeads: 9, nKvHeads: 3, headDim: 64 }) // 192
 */
export function keyValueWidth(config: TransformerConfig): number {
  return kvHeads(config) * headDim(config);
}

/**
 * Throws {@link InvalidConfigError} naming the first bad field.
 * @example validateTransformerConfig({ ...cfg, nHeads: 3 }) // throws: 'model.nHeads'
 */
export function validateTransformerConfig(config: TransformerConfig): void {
  const positiveInts: (keyof TransformerConfig)[] = ['vocabSize', 'dModel', 'nLayers', 'nHeads', 'ffnHidden', 'maxContext'];
  if (config.nKvHeads !== undefined) positiveInts.push('nKvHeads');
  if (config.headDim !== undefined) positiveInts.push('headDim');
  for (const key of positiveInts) {
    const value = config[key];
    if (typeof value !== 'number' || !Number.isInteger(value) || value <= 0) {
      throw new InvalidConfigError(`model.${key}`, `expected a positive integer, got ${String(value)}`);
    }
  }
  if (config.headDim === undefined && config.dModel % config.nHeads !== 0) {
    throw new InvalidConfigError('model.nHeads', `dModel ${config.dModel} is not divisible by nHeads ${config.nHeads}`);
  }
  if (config.nHeads % kvHeads(config) !== 0) {
    throw new InvalidConfigError('model.nKvHeads', `nHeads ${config.nHeads} is not a multiple of nKvHeads ${kvHeads(config)}`);
  }
  if (headDim(config) % 2 !== 0) {
    throw new InvalidConfigError('model.nHeads', `head dim ${headDim(config)} must be even for rotary embeddings`);
  }
  if (!(config.ropeTheta > 0)) throw new InvalidConfigError('model.ropeTheta', `expected > 0, got ${config.ropeTheta}`);
  if (!(config.rmsNormEps > 0)) throw new InvalidConfigError('model.rmsNormEps', `expected > 0, got ${config.rmsNormEps}`);
  const scaling = config.ropeScaling;
  if (scaling) {
    if (!(scaling.factor > 0)) throw new InvalidConfigError('model.ropeScaling.factor', `expected > 0, got ${scaling.factor}`);
    if (scaling.type === 'llama3') {
      if (!(scaling.highFreqFactor > scaling.lowFreqFactor)) {
        throw new InvalidConfigError('model.ropeScaling.highFreqFactor', `expected > lowFreqFactor ${scaling.lowFreqFactor}, got ${scaling.highFreqFactor}`);
      }
      if (!(scaling.originalMaxPositions > 0)) {
        throw new InvalidConfigError('model.ropeScaling.originalMaxPositions', `expected > 0, got ${scaling.originalMaxPositions}`);
      }
    }
  }
}

/**
 * The config with every optional field written out (what a `config.json` round trip returns).
 * @example completeConfig(tiny).nKvHeads // tiny.nHeads
 */
export function completeConfig(config: TransformerConfig): Required<TransformerConfig> {
  return {
    ...config,
    nKvHeads: kvHeads(config),
    headDim: headDim(config),
    qkvBias: config.qkvBias ?? false,
    outputBias: config.outputBias ?? false,
    mlpBias: config.mlpBias ?? false,
    qkNorm: config.qkNorm ?? false,
    ropeScaling: config.ropeScaling ?? null,
    architecture: config.architecture ?? 'llama',
  };
}
