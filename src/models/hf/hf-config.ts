/**
 * Hugging Face `config.json` <-> {@link TransformerConfig} for the causal LMs turnwise runs:
 * `llama` (Llama 2/3.x, SmolLM2), `mistral`, `qwen2` (Qwen2/2.5) and `qwen3`.
 *
 * Reading is strict where it matters: a field that changes the math and is not implemented here
 * (another activation, an unsupported RoPE scaling, quantization, partial rotary, dropout) is an
 * error naming the field and its value, never a silently different model. Defaults follow
 * transformers' config classes per architecture (v4 and v5 spellings: `rope_theta` +
 * `rope_scaling`, or `rope_parameters`). Sliding-window attention is exact as long as no context
 * is longer than the window, so a model with a window gets `maxContext` capped at it (and a note).
 */
import { InvalidConfigError } from '../../core/errors.js';
import type { Architecture, RopeScaling, TransformerConfig } from '../transformer/config.js';
import { headDim, kvHeads, validateTransformerConfig } from '../transformer/config.js';

/** Special-token ids a `config.json` carries (`eos` may list several; all stop generation). */
export interface ConfigTokenIds {
  readonly bos: number | null;
  readonly eos: readonly number[];
  readonly pad: number | null;
}

/** What {@link parseHfConfig} found. */
export interface ParsedHfConfig {
  readonly config: TransformerConfig;
  /** `torch_dtype` / `dtype` as written (informational: turnwise computes in float32). */
  readonly dtype: string | null;
  readonly tokenIds: ConfigTokenIds;
  /** Things the user should know, e.g. a context cap from a sliding window. */
  readonly notes: readonly string[];
}

/** Per-architecture defaults of transformers' config classes (used when a field is absent). */
const DEFAULTS: Record<Architecture, { vocab: number; hidden: number; ffn: number; layers: number; heads: number; kvHeads: number | null; maxPositions: number; slidingWindow: number | null }> = {
  llama: { vocab: 32000, hidden: 4096, ffn: 11008, layers: 32, heads: 32, kvHeads: null, maxPositions: 2048, slidingWindow: null },
  mistral: { vocab: 32000, hidden: 4096, ffn: 14336, layers: 32, heads: 32, kvHeads: 8, maxPositions: 4096 * 32, slidingWindow: 4096 },
  qwen2: { vocab: 151936, hidden: 4096, ffn: 22016, layers: 32, heads: 32, kvHeads: 32, maxPositions: 32768, slidingWindow: 4096 },
  qwen3: { vocab: 151936, hidden: 4096, ffn: 22016, layers: 32, heads: 32, kvHeads: 32, maxPositions: 32768, slidingWindow: 4096 },
};

/** The `*ForCausalLM` class name transformers uses for each architecture. */
export const CAUSAL_LM_CLASS: Record<Architecture, string> = {
  llama: 'LlamaForCausalLM',
  mistral: 'MistralForCausalLM',
  qwen2: 'Qwen2ForCausalLM',
  qwen3: 'Qwen3ForCausalLM',
};

const ARCHITECTURES = Object.keys(CAUSAL_LM_CLASS) as Architecture[];

/**
 * Reads a `config.json` object. `source` names the file in errors.
 * @throws InvalidConfigError naming `<source>.<field>` and the value at fault.
 * @example const { config, notes } = parseHfConfig(JSON.parse(text), 'models/SmolLM2/config.json');
 */
export function parseHfConfig(hf: Record<string, unknown>, source = 'config.json'): ParsedHfConfig {
  const fail = (field: string, detail: string): never => {
    throw new InvalidConfigError(`${source}.${field}`, detail);
  };
  const architecture = hf.model_type;
  if (typeof architecture !== 'string' || !ARCHITECTURES.includes(architecture as Architecture)) {
    fail('model_type', `${JSON.stringify(architecture)} is not supported (supported: ${ARCHITECTURES.join(', ')})`);
  }
  const arch = architecture as Architecture;
  const classes = hf.architectures;
  if (classes !== undefined && classes !== null) {
    if (!Array.isArray(classes) || !classes.every((c) => typeof c === 'string')) fail('architectures', `expected a list of class names, got ${JSON.stringify(classes)}`);
    const bad = (classes as string[]).find((c) => c !== CAUSAL_LM_CLASS[arch]);
    if (bad !== undefined) fail('architectures', `${JSON.stringify(bad)} is not a causal LM turnwise runs (expected ${CAUSAL_LM_CLASS[arch]})`);
  }
  const d = DEFAULTS[arch];
  const int = (field: string, fallback: number | null): number => {
    const value = hf[field] ?? fallback;
    if (typeof value !== 'number' || !Number.isInteger(value) || value <= 0) fail(field, `expected a positive integer, got ${JSON.stringify(value)}`);
    return value as number;
  };
  const positive = (field: string, fallback: number): number => {
    const value = hf[field] ?? fallback;
    if (typeof value !== 'number' || !(value > 0)) fail(field, `expected a positive number, got ${JSON.stringify(value)}`);
    return value as number;
  };
  const flag = (field: string, fallback: boolean): boolean => {
    const value = hf[field] ?? fallback;
    if (typeof value !== 'boolean') fail(field, `expected true or false, got ${JSON.stringify(value)}`);
    return value as boolean;
  };

  refuseUnimplemented(hf, fail);
  const heads = int('num_attention_heads', d.heads);
  const hidden = int('hidden_size', d.hidden);
  const explicitHeadDim = hf.head_dim === undefined || hf.head_dim === null ? undefined : int('head_dim', null);
  const { theta, scaling } = readRope(hf, fail);
  const notes: string[] = [];
  let maxContext = int('max_position_embeddings', d.maxPositions);
  const window = slidingWindowOf(hf, arch, d.slidingWindow, fail);
  if (window !== null && window < maxContext) {
    notes.push(`sliding_window ${window}: contexts are capped at ${window} tokens (max_position_embeddings ${maxContext}), where sliding-window attention equals full attention`);
    maxContext = window;
  }
  const attentionBias = arch === 'llama' || arch === 'qwen3' ? flag('attention_bias', false) : false;
  const config: TransformerConfig = {
    vocabSize: int('vocab_size', d.vocab),
    dModel: hidden,
    nLayers: int('num_hidden_layers', d.layers),
    nHeads: heads,
    nKvHeads: int('num_key_value_heads', d.kvHeads ?? heads),
    headDim: explicitHeadDim ?? (arch === 'qwen3' && hf.head_dim === undefined ? 128 : hidden / heads),
    ffnHidden: int('intermediate_size', d.ffn),
    maxContext,
    ropeTheta: theta,
    ropeScaling: scaling,
    rmsNormEps: positive('rms_norm_eps', 1e-6),
    tieEmbeddings: flag('tie_word_embeddings', false),
    qkvBias: arch === 'qwen2' ? true : attentionBias,
    outputBias: attentionBias,
    mlpBias: arch === 'llama' ? flag('mlp_bias', false) : false,
    qkNorm: arch === 'qwen3',
    architecture: arch,
  };
  if (!Number.isInteger(headDim(config))) fail('head_dim', `hidden_size ${hidden} is not divisible by num_attention_heads ${heads}; set head_dim`);
  if (heads % kvHeads(config) !== 0) fail('num_key_value_heads', `${kvHeads(config)} does not divide num_attention_heads ${heads}`);
  try {
    validateTransformerConfig(config);
  } catch (err) {
    if (err instanceof InvalidConfigError) fail(err.path.replace(/^model\./, ''), err.detail);
    throw err;
  }
  const dtypeRaw = hf.torch_dtype ?? hf.dtype ?? null;
  return { config, dtype: typeof dtypeRaw === 'string' ? dtypeRaw : null, tokenIds: tokenIdsOf(hf, fail), notes };
}

/**
 * The model shape of a `config.json` (see {@link parseHfConfig} for the rules).
 * @example const shape = fromHfConfig(checkpoint.hfConfig);
 */
export function fromHfConfig(hf: Record<string, unknown>, source = 'config.json'): TransformerConfig {
  return parseHfConfig(hf, source).config;
}

/** Fields whose non-default values change the math in ways this implementation does not do. */
function refuseUnimplemented(hf: Record<string, unknown>, fail: (field: string, detail: string) => never): void {
  const act = hf.hidden_act ?? hf.hidden_activation ?? 'silu';
  if (act !== 'silu' && act !== 'swish') fail('hidden_act', `${JSON.stringify(act)} is not implemented (only silu, as in SwiGLU)`);
  if (hf.quantization_config !== undefined && hf.quantization_config !== null) {
    fail('quantization_config', 'quantized weights are not supported; use a float32, bfloat16 or float16 checkpoint');
  }
  const partial = hf.partial_rotary_factor;
  if (partial !== undefined && partial !== null && partial !== 1) fail('partial_rotary_factor', `${JSON.stringify(partial)} is not implemented (only 1: RoPE over the whole head)`);
  for (const field of ['attention_dropout', 'hidden_dropout', 'mlp_dropout'] as const) {
    const p = hf[field];
    if (p !== undefined && p !== null && p !== 0) fail(field, `${JSON.stringify(p)} is not implemented (training would differ from transformers'); set it to 0.0`);
  }
  for (const field of ['final_logit_softcapping', 'attn_logit_softcapping'] as const) {
    const cap = hf[field];
    if (cap !== undefined && cap !== null) fail(field, `${JSON.stringify(cap)} is not implemented`);
  }
  const tp = hf.pretraining_tp;
  if (tp !== undefined && tp !== null && tp !== 1 && typeof tp !== 'number') fail('pretraining_tp', `expected a number, got ${JSON.stringify(tp)}`);
}

/** RoPE base and scaling from transformers 4 (`rope_theta`, `rope_scaling`) or 5 (`rope_parameters`). */
function readRope(hf: Record<string, unknown>, fail: (field: string, detail: string) => never): { theta: number; scaling: RopeScaling | null } {
  const params = hf.rope_parameters;
  let field = 'rope_scaling';
  let scaling: unknown = hf.rope_scaling;
  let theta: unknown = hf.rope_theta;
  if (params !== undefined && params !== null) {
    if (typeof params !== 'object' || Array.isArray(params)) fail('rope_parameters', `expected an object, got ${JSON.stringify(params)}`);
    const p = params as Record<string, unknown>;
    if ('full_attention' in p || 'sliding_attention' in p) fail('rope_parameters', 'per-layer-type RoPE parameters are not implemented');
    field = 'rope_parameters';
    theta = p.rope_theta ?? theta;
    scaling = p;
  }
  theta ??= 10000;
  if (typeof theta !== 'number' || !(theta > 0)) fail(params ? 'rope_parameters.rope_theta' : 'rope_theta', `expected a positive number, got ${JSON.stringify(theta)}`);
  if (scaling === undefined || scaling === null) return { theta: theta as number, scaling: null };
  if (typeof scaling !== 'object' || Array.isArray(scaling)) fail(field, `expected an object or null, got ${JSON.stringify(scaling)}`);
  const s = scaling as Record<string, unknown>;
  const type = s.rope_type ?? s.type ?? 'default';
  const num = (key: string, fallback?: number): number => {
    const value = s[key] ?? fallback;
    if (typeof value !== 'number' || !(value > 0)) fail(`${field}.${key}`, `expected a positive number, got ${JSON.stringify(value)}`);
    return value as number;
  };
  if (type === 'default') return { theta: theta as number, scaling: null };
  if (type === 'linear') return { theta: theta as number, scaling: { type: 'linear', factor: num('factor') } };
  if (type === 'llama3') {
    return {
      theta: theta as number,
      scaling: {
        type: 'llama3',
        factor: num('factor'),
        lowFreqFactor: num('low_freq_factor', 1),
        highFreqFactor: num('high_freq_factor', 4),
        originalMaxPositions: num('original_max_position_embeddings', 8192),
      },
    };
  }
  return fail(`${field}.${s.rope_type === undefined ? 'type' : 'rope_type'}`, `${JSON.stringify(type)} is not implemented (supported: default, linear, llama3)`);
}

/** The attention window that binds, or null when every layer attends fully. */
function slidingWindowOf(hf: Record<string, unknown>, arch: Architecture, fallback: number | null, fail: (field: string, detail: string) => never): number | null {
  const raw = hf.sliding_window === undefined ? fallback : hf.sliding_window;
  const layerTypes = hf.layer_types;
  let used: boolean;
  if (Array.isArray(layerTypes)) used = layerTypes.some((t) => t === 'sliding_attention');
  else if (arch === 'qwen2' || arch === 'qwen3') used = hf.use_sliding_window === true;
  else used = arch === 'mistral';
  if (!used || raw === null) return null;
  if (typeof raw !== 'number' || !Number.isInteger(raw) || raw <= 0) fail('sliding_window', `expected a positive integer or null, got ${JSON.stringify(raw)}`);
  return raw as number;
}

function tokenIdsOf(hf: Record<string, unknown>, fail: (field: string, detail: string) => never): ConfigTokenIds {
  const id = (field: string): number | null => {
    const v = hf[field];
    if (v === undefined || v === null) return null;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) fail(field, `expected a token id, got ${JSON.stringify(v)}`);
    return v as number;
  };
  const eosRaw = hf.eos_token_id;
  let eos: number[] = [];
  if (Array.isArray(eosRaw)) {
    if (!eosRaw.every((v) => Number.isInteger(v) && v >= 0)) fail('eos_token_id', `expected token ids, got ${JSON.stringify(eosRaw)}`);
    eos = eosRaw as number[];
  } else {
    const one = id('eos_token_id');
    if (one !== null) eos = [one];
  }
  return { bos: id('bos_token_id'), eos, pad: id('pad_token_id') };
}

/**
 * The `config.json` transformers needs to rebuild this model (`AutoModelForCausalLM`), with the
 * special-token ids so that `generate` stops where turnwise does.
 * @example writeHfConfig(model.config, { bos: 1, eos: [5], pad: 0 }) // { model_type: 'llama', ... }
 */
export function writeHfConfig(config: TransformerConfig, tokenIds: ConfigTokenIds): Record<string, unknown> {
  const arch = config.architecture ?? 'llama';
  const out: Record<string, unknown> = {
    architectures: [CAUSAL_LM_CLASS[arch]],
    model_type: arch,
    hidden_size: config.dModel,
    num_hidden_layers: config.nLayers,
    num_attention_heads: config.nHeads,
    num_key_value_heads: kvHeads(config),
    head_dim: headDim(config),
    intermediate_size: config.ffnHidden,
    vocab_size: config.vocabSize,
    max_position_embeddings: config.maxContext,
    rope_theta: config.ropeTheta,
    rope_scaling: ropeScalingJson(config.ropeScaling ?? null),
    rms_norm_eps: config.rmsNormEps,
    tie_word_embeddings: config.tieEmbeddings,
    hidden_act: 'silu',
    torch_dtype: 'float32',
    bos_token_id: tokenIds.bos,
    eos_token_id: tokenIds.eos.length === 1 ? tokenIds.eos[0] : [...tokenIds.eos],
    pad_token_id: tokenIds.pad,
    use_cache: true,
  };
  if (arch === 'llama') Object.assign(out, { attention_bias: config.qkvBias === true, mlp_bias: config.mlpBias === true });
  if (arch === 'qwen3') out.attention_bias = config.qkvBias === true;
  if (arch === 'mistral') out.sliding_window = null;
  if (arch === 'qwen2' || arch === 'qwen3') Object.assign(out, { use_sliding_window: false, sliding_window: null });
  return out;
}

function ropeScalingJson(scaling: RopeScaling | null): Record<string, unknown> | null {
  if (scaling === null) return null;
  if (scaling.type === 'linear') return { rope_type: 'linear', factor: scaling.factor };
  return {
    rope_type: 'llama3',
    factor: scaling.factor,
    low_freq_factor: scaling.lowFreqFactor,
    high_freq_factor: scaling.highFreqFactor,
    original_max_position_embeddings: scaling.originalMaxPositions,
  };
}
