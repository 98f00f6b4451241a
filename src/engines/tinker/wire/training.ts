/**
 * The training routes of the Tinker API on the JSON wire: models (`create_model`, `get_info`,
 * `unload_model`), passes (`forward`, `forward_backward`), `optim_step`, and weights
 * (`save_weights`, `load_weights`, `save_weights_for_sampler`, `weights_info`), requests and
 * the results their futures resolve to. Field names, defaults and bounds follow the official SDK's
 * types; where SkyRL tx answers with more fields, the result schemas keep them (loose objects).
 */
import { z } from 'zod';
import { type AdamParams, ENGINE_LOSS_NAMES } from '../../engine.js';
import { datum } from './tensors.js';

/**
 * Every `loss_fn` name a Tinker server may be asked for: Tinker's own and the ones SkyRL tx adds.
 * An unknown name is a validation error at submission (422); a known one a server does not
 * implement fails its future, naming it.
 */
export const KNOWN_LOSS_NAMES = [...ENGINE_LOSS_NAMES, 'gspo', 'ppo_critic', 'dppo'] as const;
export const lossFnName = z.enum(KNOWN_LOSS_NAMES);
export type LossFnName = z.infer<typeof lossFnName>;

/** `loss_fn_config` keys each loss accepts (SkyRL validates them per loss; unknown keys are refused). */
export const LOSS_CONFIG_KEYS: Readonly<Record<LossFnName, readonly string[]>> = {
  cross_entropy: [],
  importance_sampling: [],
  ppo: ['clip_low_threshold', 'clip_high_threshold'],
  cispo: ['clip_low_threshold', 'clip_high_threshold'],
  dro: ['beta'],
  gspo: ['clip_low_threshold', 'clip_high_threshold'],
  ppo_critic: ['clip_low_threshold', 'clip_high_threshold'],
  dppo: ['clip_low_threshold', 'clip_high_threshold'],
};

/** LoRA settings of `create_model` (the SDK's `LoraConfig`; SkyRL reads only rank and seed). */
export const loraConfig = z.looseObject({
  rank: z.number().int(),
  seed: z.number().int().nullish(),
  train_unembed: z.boolean().optional(),
  train_mlp: z.boolean().optional(),
  train_attn: z.boolean().optional(),
});
export type LoraConfig = z.infer<typeof loraConfig>;

export const createModelRequest = z.object({
  session_id: z.string(),
  model_seq_id: z.number().int().nullish(),
  base_model: z.string(),
  user_metadata: z.record(z.string(), z.unknown()).nullish(),
  lora_config: loraConfig.nullish(),
  type: z.literal('create_model').optional(),
});
export type CreateModelRequest = z.infer<typeof createModelRequest>;

/** The answer to `create_model` itself: a future (`request_id`) that also names the model at once. */
export const createModelAccepted = z.looseObject({
  model_id: z.string(),
  request_id: z.string(),
  base_model: z.string().optional(),
  lora_config: loraConfig.nullish(),
  status: z.string().optional(),
});
export type CreateModelAccepted = z.infer<typeof createModelAccepted>;

/** What a `create_model` future resolves to: the model with the LoRA settings the server filled in. */
export const createModelResult = z.looseObject({
  model_id: z.string(),
  base_model: z.string().optional(),
  lora_config: z.looseObject({ rank: z.number(), alpha: z.number().optional(), seed: z.number().nullish() }).optional(),
  type: z.literal('create_model').optional(),
});
export type CreateModelResult = z.infer<typeof createModelResult>;

export const getInfoRequest = z.object({ model_id: z.string(), type: z.literal('get_info').optional() });
export type GetInfoRequest = z.infer<typeof getInfoRequest>;

export const getInfoResponse = z.looseObject({
  model_id: z.string(),
  status: z.string().optional(),
  model_data: z.looseObject({
    base_model: z.string().nullish(),
    model_name: z.string().nullish(),
    arch: z.string().nullish(),
    tokenizer_id: z.string().nullish(),
    lora_config: z.looseObject({ rank: z.number(), seed: z.number().nullish() }).nullish(),
  }),
  is_lora: z.boolean().nullish(),
  lora_rank: z.number().nullish(),
  model_name: z.string().nullish(),
  type: z.literal('get_info').nullish(),
});
export type GetInfoResponse = z.infer<typeof getInfoResponse>;

/** The body of a forward or forward-backward pass (its `loss_fn_config` keys checked against the loss). */
export const forwardBackwardInput = z
  .object({
    loss_fn: lossFnName,
    loss_fn_config: z.record(z.string(), z.number()).nullish(),
    data: z.array(datum),
  })
  .superRefine((input, ctx) => {
    const allowed = LOSS_CONFIG_KEYS[input.loss_fn];
    const unknown = Object.keys(input.loss_fn_config ?? {}).filter((k) => !allowed.includes(k));
    if (unknown.length === 0) return;
    const accepts = allowed.length === 0 ? 'does not accept loss_fn_config keys' : `accepts only ${allowed.join(', ')}`;
    ctx.addIssue({ code: 'custom', path: ['loss_fn_config'], message: `loss_fn='${input.loss_fn}' ${accepts}. Received: ${unknown.join(', ')}` });
  });
export type ForwardBackwardInput = z.infer<typeof forwardBackwardInput>;

/** `POST forward`: log-probs and losses, no gradient. */
export const forwardRequest = z.object({
  model_id: z.string(),
  seq_id: z.number().int().nullish(),
  forward_input: forwardBackwardInput,
});
export type ForwardRequest = z.infer<typeof forwardRequest>;

/** `POST forward_backward`: as forward, and accumulates the gradient until the next optim_step. */
export const forwardBackwardRequest = z.object({
  model_id: z.string(),
  seq_id: z.number().int().nullish(),
  forward_backward_input: forwardBackwardInput,
});
export type ForwardBackwardRequest = z.infer<typeof forwardBackwardRequest>;

/** Adam(W) settings; omitted fields take the SDK's defaults (eps 1e-12, no decay, no clipping). */
export const adamParams = z.object({
  learning_rate: z.number().nonnegative().default(1e-4),
  beta1: z.number().nonnegative().lt(1).default(0.9),
  beta2: z.number().nonnegative().lt(1).default(0.95),
  eps: z.number().nonnegative().default(1e-12),
  weight_decay: z.number().nonnegative().default(0),
  grad_clip_norm: z.number().nonnegative().default(0),
});
export type WireAdamParams = z.infer<typeof adamParams>;

export const optimStepRequest = z.object({
  model_id: z.string(),
  seq_id: z.number().int().nullish(),
  adam_params: adamParams,
  type: z.literal('optim_step').optional(),
});
export type OptimStepRequest = z.infer<typeof optimStepRequest>;

export const optimStepResult = z.looseObject({ metrics: z.record(z.string(), z.number()).nullish() });
export type OptimStepResult = z.infer<typeof optimStepResult>;

export const saveWeightsRequest = z.object({
  model_id: z.string(),
  path: z.string().nullish(),
  seq_id: z.number().int().nullish(),
  ttl_seconds: z.number().int().nullish(),
  overwrite: z.boolean().optional(),
  type: z.literal('save_weights').optional(),
});
export type SaveWeightsRequest = z.infer<typeof saveWeightsRequest>;

export const saveWeightsResult = z.looseObject({ path: z.string(), type: z.literal('save_weights').nullish() });
export type SaveWeightsResult = z.infer<typeof saveWeightsResult>;

/** `POST load_weights`: a training checkpoint (`tinker://<model>/weights/<name>`) onto a model. */
export const loadWeightsRequest = z.object({
  model_id: z.string().nullish(),
  seq_id: z.number().int().nullish(),
  session_id: z.string().nullish(),
  model_seq_id: z.number().int().nullish(),
  base_model: z.string().nullish(),
  user_metadata: z.record(z.string(), z.unknown()).nullish(),
  path: z.string(),
  optimizer: z.boolean(),
  weights_access_token: z.string().nullish(),
  type: z.literal('load_weights').optional(),
});
export type LoadWeightsRequest = z.infer<typeof loadWeightsRequest>;

export const loadWeightsResult = z.looseObject({ path: z.string().nullish(), model_id: z.string().nullish(), type: z.literal('load_weights').nullish() });
export type LoadWeightsResult = z.infer<typeof loadWeightsResult>;

/**
 * `POST save_weights_for_sampler`: with `path`, a named sampler checkpoint (result `path`
 * `tinker://<model>/<name>`); without, the SDK's ephemeral form (`sampling_session_seq_id`),
 * whose result names a sampling session instead.
 */
export const saveWeightsForSamplerRequest = z.object({
  model_id: z.string(),
  path: z.string().nullish(),
  sampling_session_seq_id: z.number().int().nullish(),
  seq_id: z.number().int().nullish(),
  ttl_seconds: z.number().int().nullish(),
  type: z.literal('save_weights_for_sampler').optional(),
});
export type SaveWeightsForSamplerRequest = z.infer<typeof saveWeightsForSamplerRequest>;

export const saveWeightsForSamplerResult = z.looseObject({
  path: z.string().nullish(),
  sampling_session_id: z.string().nullish(),
  type: z.literal('save_weights_for_sampler').nullish(),
});
export type SaveWeightsForSamplerResult = z.infer<typeof saveWeightsForSamplerResult>;

export const weightsInfoRequest = z.object({ tinker_path: z.string() });
export const weightsInfoResponse = z.looseObject({
  base_model: z.string(),
  is_lora: z.boolean(),
  lora_rank: z.number().nullish(),
  train_unembed: z.boolean().nullish(),
  train_mlp: z.boolean().nullish(),
  train_attn: z.boolean().nullish(),
});
export type WeightsInfoResponse = z.infer<typeof weightsInfoResponse>;

export const unloadModelRequest = z.object({ model_id: z.string(), type: z.literal('unload_model').optional() });
export type UnloadModelRequest = z.infer<typeof unloadModelRequest>;

export const unloadModelResult = z.looseObject({ model_id: z.string(), status: z.string().optional(), type: z.literal('unload_model').nullish() });
export type UnloadModelResult = z.infer<typeof unloadModelResult>;

/**
 * Engine Adam settings on the wire.
 * @example adamParamsToWire({ learningRate: 1e-4, beta1: 0.9, beta2: 0.95, eps: 1e-12, weightDecay: 0, gradClipNorm: 1 })
 */
export function adamParamsToWire(a: AdamParams): WireAdamParams {
  return { learning_rate: a.learningRate, beta1: a.beta1, beta2: a.beta2, eps: a.eps, weight_decay: a.weightDecay, grad_clip_norm: a.gradClipNorm };
}

/**
 * Wire Adam settings (defaults already filled by {@link adamParams}) as the engine's.
 * @example adamParamsFromWire(adamParams.parse({ learning_rate: 0.01 })).eps // 1e-12
 */
export function adamParamsFromWire(w: WireAdamParams): AdamParams {
  return { learningRate: w.learning_rate, beta1: w.beta1, beta2: w.beta2, eps: w.eps, weightDecay: w.weight_decay, gradClipNorm: w.grad_clip_norm };
}

/**
 * The global gradient norm an optimizer step reported, whatever the server calls it
 * (`skyrl.ai/grad_norm`, `turnwise/grad_norm`, …): the first metric whose name ends in
 * `grad_norm`, or null.
 * @example gradNormOf({ 'skyrl.ai/grad_norm': 5.44 }) // 5.44
 */
export function gradNormOf(metrics: Readonly<Record<string, number>> | null | undefined): number | null {
  if (metrics === null || metrics === undefined) return null;
  const key = Object.keys(metrics).find((k) => /grad_norm(:\w+)?$/.test(k));
  return key === undefined ? null : (metrics[key] as number);
}
