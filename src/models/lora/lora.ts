/**
 * LoRA (Hu et al. 2021, arXiv 2106.09685) as PEFT lays it out: for a linear layer `W [out, in]`,
 * `y = W x + scale * B (A dropout(x))` with `A = lora_A.weight [r, in]`, `B = lora_B.weight
 * [out, r]`, `scale = alpha / r` (or `alpha / sqrt(r)` with rsLoRA). A starts Kaiming-uniform
 * (bound `1 / sqrt(in)`, PEFT's default), B at zero, so a fresh adapter changes nothing.
 *
 * Files (PEFT-compatible): `adapter_config.json` and `adapter_model.safetensors` with tensors
 * `base_model.model.<module>.lora_A.weight` / `.lora_B.weight`.
 */
import { InvalidConfigError } from '../../core/errors.js';
import type { Rng } from '../../core/rng.js';
import { headDim, kvHeads, queryWidth, type TransformerConfig } from '../transformer/config.js';

/** The linear layers of a decoder block an adapter can sit on (PEFT `target_modules` names). */
export const LORA_TARGETS = ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'] as const;
export type LoraTarget = (typeof LORA_TARGETS)[number];

/** A LoRA configuration (PEFT's `LoraConfig` fields that matter here). */
export interface LoraSpec {
  /** r: rank of the update. */
  readonly rank: number;
  /** lora_alpha: the update is scaled by alpha / r. */
  readonly alpha: number;
  /** lora_dropout: dropout on the adapter's input while training. */
  readonly dropout: number;
  /** Which projections get an adapter. */
  readonly targets: readonly LoraTarget[];
  /** rsLoRA scaling alpha / sqrt(r). Default false. */
  readonly rsLora?: boolean;
  /**
   * q/k/v of a layer share one `lora_A`, and gate/up another (SkyRL tx fuses these projections into
   * one LoRA layer; its PEFT files hold equal copies). Training then sums the tied branches' A
   * gradients. Not a PEFT setting: the files are plain PEFT either way. Default false.
   */
  readonly sharedA?: boolean;
}

/** The projections whose `lora_A` is one matrix when {@link LoraSpec.sharedA} is set. */
export const SHARED_A_GROUPS: readonly (readonly LoraTarget[])[] = [
  ['q_proj', 'k_proj', 'v_proj'],
  ['gate_proj', 'up_proj'],
];

/** One adapted module: its HF name and the shapes of its A and B. */
export interface LoraModule {
  /** e.g. `model.layers.3.self_attn.q_proj` */
  readonly module: string;
  readonly inFeatures: number;
  readonly outFeatures: number;
}

/**
 * `alpha / r`, or `alpha / sqrt(r)` with rsLoRA.
 * @example loraScale({ rank: 8, alpha: 16, dropout: 0, targets: ['q_proj'] }) // 2
 */
export function loraScale(spec: LoraSpec): number {
  return spec.rsLora ? spec.alpha / Math.sqrt(spec.rank) : spec.alpha / spec.rank;
}

/**
 * Throws {@link InvalidConfigError} naming the bad field of `model.lora`.
 * @example validateLoraSpec({ rank: 0, alpha: 16, dropout: 0, targets: ['q_proj'] }) // throws model.lora.rank
 */
export function validateLoraSpec(spec: LoraSpec): void {
  if (!(Number.isInteger(spec.rank) && spec.rank > 0)) throw new InvalidConfigError('model.lora.rank', `expected a positive integer, got ${spec.rank}`);
  if (!(spec.alpha > 0)) throw new InvalidConfigError('model.lora.alpha', `expected > 0, got ${spec.alpha}`);
  if (!(spec.dropout >= 0 && spec.dropout < 1)) throw new InvalidConfigError('model.lora.dropout', `expected in [0, 1), got ${spec.dropout}`);
  if (spec.targets.length === 0) throw new InvalidConfigError('model.lora.targetModules', 'expected at least one module');
  for (const t of spec.targets) {
    if (!LORA_TARGETS.includes(t)) throw new InvalidConfigError('model.lora.targetModules', `unknown module ${JSON.stringify(t)} (known: ${LORA_TARGETS.join(', ')})`);
  }
}

/**
 * Every adapted module of a model, layer by layer in {@link LORA_TARGETS} order.
 * @example loraModules(cfg, spec)[0] // { module: 'model.layers.0.self_attn.q_proj', inFeatures: 576, outFeatures: 576 }
 */
export function loraModules(config: TransformerConfig, spec: LoraSpec): LoraModule[] {
  const d = config.dModel;
  const q = queryWidth(config);
  const kv = kvHeads(config) * headDim(config);
  const f = config.ffnHidden;
  const shapes: Record<LoraTarget, { prefix: string; inFeatures: number; outFeatures: number }> = {
    q_proj: { prefix: 'self_attn', inFeatures: d, outFeatures: q },
    k_proj: { prefix: 'self_attn', inFeatures: d, outFeatures: kv },
    v_proj: { prefix: 'self_attn', inFeatures: d, outFeatures: kv },
    o_proj: { prefix: 'self_attn', inFeatures: q, outFeatures: d },
    gate_proj: { prefix: 'mlp', inFeatures: d, outFeatures: f },
    up_proj: { prefix: 'mlp', inFeatures: d, outFeatures: f },
    down_proj: { prefix: 'mlp', inFeatures: f, outFeatures: d },
  };
  const out: LoraModule[] = [];
  for (let layer = 0; layer < config.nLayers; layer++) {
    for (const target of LORA_TARGETS) {
      if (!spec.targets.includes(target)) continue;
      const s = shapes[target];
      out.push({ module: `model.layers.${layer}.${s.prefix}.${target}`, inFeatures: s.inFeatures, outFeatures: s.outFeatures });
    }
  }
  return out;
}

/** PEFT's tensor names for a module's A and B. */
export function peftNames(module: string): { a: string; b: string } {
  return { a: `base_model.model.${module}.lora_A.weight`, b: `base_model.model.${module}.lora_B.weight` };
}

/**
 * A fresh adapter's A in PEFT layout `[r, in]`: Kaiming-uniform with a = sqrt(5), i.e. uniform in
 * `±1 / sqrt(in)`, drawn from `rng`.
 * @example initialLoraA(m, 8, rng.fork('lora', 0)) // Float32Array(8 * m.inFeatures)
 */
export function initialLoraA(module: LoraModule, rank: number, rng: Rng): Float32Array {
  const bound = 1 / Math.sqrt(module.inFeatures);
  const out = new Float32Array(rank * module.inFeatures);
  for (let i = 0; i < out.length; i++) out[i] = (2 * rng.next() - 1) * bound;
  return out;
}

/**
 * The `adapter_config.json` PEFT reads (`PeftModel.from_pretrained`, `AutoPeftModelForCausalLM`).
 * @example adapterConfigJson(spec, '/models/SmolLM2-135M-Instruct')
 */
export function adapterConfigJson(spec: LoraSpec, baseModel: string | null): Record<string, unknown> {
  return {
    peft_type: 'LORA',
    task_type: 'CAUSAL_LM',
    base_model_name_or_path: baseModel,
    r: spec.rank,
    lora_alpha: spec.alpha,
    lora_dropout: spec.dropout,
    target_modules: [...spec.targets],
    bias: 'none',
    fan_in_fan_out: false,
    use_rslora: spec.rsLora === true,
    use_dora: false,
    init_lora_weights: true,
    inference_mode: true,
    modules_to_save: null,
    layers_to_transform: null,
    layers_pattern: null,
    rank_pattern: {},
    alpha_pattern: {},
    revision: null,
  };
}

/**
 * The {@link LoraSpec} of an `adapter_config.json` (refusing what turnwise does not implement).
 * @example const spec = loraSpecFromAdapterConfig(JSON.parse(text), 'ckpt/adapter_config.json');
 */
export function loraSpecFromAdapterConfig(json: Record<string, unknown>, source: string): LoraSpec {
  const fail = (field: string, detail: string): never => {
    throw new InvalidConfigError(`${source}.${field}`, detail);
  };
  if (json.peft_type !== 'LORA') fail('peft_type', `expected "LORA", got ${JSON.stringify(json.peft_type)}`);
  if (json.use_dora === true) fail('use_dora', 'DoRA is not implemented');
  if (json.bias !== undefined && json.bias !== 'none') fail('bias', `only "none" is implemented, got ${JSON.stringify(json.bias)}`);
  if (json.fan_in_fan_out === true) fail('fan_in_fan_out', 'only false (nn.Linear layout) is implemented');
  for (const field of ['rank_pattern', 'alpha_pattern'] as const) {
    const p = json[field];
    if (p !== undefined && p !== null && Object.keys(p as object).length > 0) fail(field, 'per-module ranks or alphas are not implemented');
  }
  if (json.layers_to_transform !== undefined && json.layers_to_transform !== null) fail('layers_to_transform', 'adapters on a subset of layers are not implemented');
  const targets = json.target_modules;
  if (!Array.isArray(targets)) fail('target_modules', `expected a list of module names, got ${JSON.stringify(targets)}`);
  const spec: LoraSpec = {
    rank: json.r as number,
    alpha: json.lora_alpha as number,
    dropout: (json.lora_dropout as number | undefined) ?? 0,
    targets: targets as LoraTarget[],
    rsLora: json.use_rslora === true,
  };
  try {
    validateLoraSpec(spec);
  } catch (err) {
    if (err instanceof InvalidConfigError) fail(err.path.replace('model.lora.', '').replace('targetModules', 'target_modules').replace('rank', 'r').replace('alpha', 'lora_alpha').replace('dropout', 'lora_dropout'), err.detail);
    throw err;
  }
  return spec;
}
