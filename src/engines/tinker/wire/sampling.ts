/**
 * The sampling routes of the Tinker API on the JSON wire: `asample` (and its older name `sample`),
 * sampling sessions (`create_sampling_session`, `GET samplers/{id}`), with converters to and from
 * the engine's sampling request and result.
 *
 * Two quirks servers differ on, both accepted when reading:
 * - `prompt_logprobs`: the SDK documents one entry per prompt token with `null` first; SkyRL tx
 *   sends one fewer (no leading null);
 * - `stop`: token ids or strings (never mixed); turnwise's engine stops on ids only.
 */
import { z } from 'zod';
import { InvalidArgumentError } from '../../../core/errors.js';
import type { EngineSampleRequest, EngineSampleResult, EngineSequence } from '../../engine.js';
import { modelInput, modelInputOf, modelInputTokens } from './tensors.js';

/** How to continue a prompt (the SDK's defaults: temperature 1, no top-k, no top-p). */
export const samplingParams = z.object({
  max_tokens: z.number().int().positive().nullish(),
  seed: z.number().int().nullish(),
  stop: z.union([z.string(), z.array(z.string()), z.array(z.number().int().nonnegative())]).nullish(),
  temperature: z.number().nonnegative().default(1),
  top_k: z.number().int().default(-1),
  top_p: z.number().gt(0).lte(1).default(1),
});
export type SamplingParams = z.infer<typeof samplingParams>;

/** `POST asample`: one prompt, `num_samples` continuations, from exactly one weights source. */
export const sampleRequest = z.object({
  prompt: modelInput,
  num_samples: z.number().int().positive().default(1),
  sampling_params: samplingParams,
  base_model: z.string().nullish(),
  model_path: z.string().nullish(),
  sampling_session_id: z.string().nullish(),
  seq_id: z.number().int().nullish(),
  prompt_logprobs: z.boolean().nullish(),
  topk_prompt_logprobs: z.number().int().nonnegative().default(0),
  type: z.literal('sample').optional(),
});
export type SampleRequest = z.infer<typeof sampleRequest>;

export const stopReason = z.enum(['length', 'stop']);

export const sampledSequence = z.looseObject({
  stop_reason: stopReason,
  tokens: z.array(z.number().int()),
  logprobs: z.array(z.number()).nullish(),
});
export type SampledSequence = z.infer<typeof sampledSequence>;

/** What a sampling future resolves to. */
export const sampleResponse = z.looseObject({
  sequences: z.array(sampledSequence),
  prompt_logprobs: z.array(z.number().nullable()).nullish(),
  topk_prompt_logprobs: z.array(z.array(z.tuple([z.number(), z.number()])).nullable()).nullish(),
  type: z.literal('sample').nullish(),
});
export type SampleResponse = z.infer<typeof sampleResponse>;

export const createSamplingSessionRequest = z.object({
  session_id: z.string(),
  sampling_session_seq_id: z.number().int(),
  base_model: z.string().nullish(),
  model_path: z.string().nullish(),
  type: z.literal('create_sampling_session').optional(),
});
export type CreateSamplingSessionRequest = z.infer<typeof createSamplingSessionRequest>;

export const createSamplingSessionResponse = z.looseObject({
  sampling_session_id: z.string(),
  type: z.literal('create_sampling_session').optional(),
});
export type CreateSamplingSessionResponse = z.infer<typeof createSamplingSessionResponse>;

/** `GET samplers/{sampling_session_id}`. */
export const getSamplerResponse = z.looseObject({
  sampler_id: z.string(),
  base_model: z.string(),
  model_path: z.string().nullish(),
});
export type GetSamplerResponse = z.infer<typeof getSamplerResponse>;

/** Where a sampling request takes its weights from. */
export type SampleSource = { readonly baseModel: string } | { readonly modelPath: string } | { readonly samplingSessionId: string; readonly seqId: number };

/**
 * An engine sampling request on the wire, from `source`.
 * @example sampleRequestToWire(req, { modelPath: 'tinker://model_1/sampler_weights/step-1' })
 */
export function sampleRequestToWire(req: EngineSampleRequest, source: SampleSource): SampleRequest {
  return {
    prompt: modelInputOf(req.promptTokens),
    num_samples: req.numSamples,
    sampling_params: {
      max_tokens: req.maxTokens,
      temperature: req.temperature,
      top_k: req.topK,
      top_p: req.topP,
      ...(req.stopTokenIds.length > 0 ? { stop: [...req.stopTokenIds] } : {}),
      ...(req.seed === undefined ? {} : { seed: req.seed }),
    },
    ...('baseModel' in source ? { base_model: source.baseModel } : {}),
    ...('modelPath' in source ? { model_path: source.modelPath } : {}),
    ...('samplingSessionId' in source ? { sampling_session_id: source.samplingSessionId, seq_id: source.seqId } : {}),
    prompt_logprobs: req.promptLogprobs === true,
    topk_prompt_logprobs: 0,
  };
}

/**
 * A wire sampling request as the engine's. `max_tokens` is required (as SkyRL requires it);
 * string stops and top-k prompt log-probs are refused by name.
 * @example sampleRequestFromWire(body, 'body')
 */
export function sampleRequestFromWire(w: SampleRequest, field: string): EngineSampleRequest {
  const p = w.sampling_params;
  if (p.max_tokens === null || p.max_tokens === undefined) throw InvalidArgumentError.format(`${field}.sampling_params.max_tokens`, 'max_tokens is currently required');
  if (w.topk_prompt_logprobs > 0) throw InvalidArgumentError.format(`${field}.topk_prompt_logprobs`, 'top-k prompt logprobs are not supported by this server');
  const stop = p.stop ?? [];
  if (typeof stop === 'string' || stop.some((s) => typeof s === 'string')) throw InvalidArgumentError.format(`${field}.sampling_params.stop`, 'stop strings are not supported by this server: send stop token ids');
  const promptTokens = modelInputTokens(w.prompt, `${field}.prompt`);
  if (promptTokens.length === 0) throw InvalidArgumentError.format(`${field}.prompt`, 'no tokens');
  if (p.top_k === 0 || p.top_k < -1) throw InvalidArgumentError.format(`${field}.sampling_params.top_k`, `expected -1 (off) or a positive integer, got ${p.top_k}`);
  return {
    promptTokens,
    numSamples: w.num_samples,
    maxTokens: p.max_tokens,
    temperature: p.temperature,
    topP: p.top_p,
    topK: p.top_k,
    stopTokenIds: stop as number[],
    ...(p.seed === null || p.seed === undefined ? {} : { seed: p.seed }),
    promptLogprobs: w.prompt_logprobs === true,
  };
}

/** How prompt log-probs are laid out on the JSON wire: the SDK's (null first) or SkyRL's (first dropped). */
export type PromptLogprobsLayout = 'leading-null' | 'drop-first';

/**
 * An engine sampling result on the wire.
 * @example sampleResultToWire(result, 'leading-null').prompt_logprobs // [null, -5.7, ...]
 */
export function sampleResultToWire(r: EngineSampleResult, layout: PromptLogprobsLayout = 'leading-null'): SampleResponse {
  let prompt: (number | null)[] | null = null;
  if (r.promptLogprobs !== null) {
    const values = Array.from(r.promptLogprobs, (v) => (Number.isNaN(v) ? null : v));
    prompt = layout === 'leading-null' ? values : values.slice(1);
  }
  return {
    sequences: r.sequences.map((s) => ({ stop_reason: s.stopReason, tokens: Array.from(s.tokens), logprobs: Array.from(s.logprobs) })),
    prompt_logprobs: prompt,
    topk_prompt_logprobs: null,
  };
}

/**
 * A wire sampling result as the engine's. Prompt log-probs come back as `[promptLen]` with NaN
 * at position 0 whichever layout the server used; a sequence without log-probs is refused, since
 * the learner trains on them.
 * @example sampleResultFromWire(answer, 16).promptLogprobs?.length // 16
 */
export function sampleResultFromWire(w: SampleResponse, promptLength: number): EngineSampleResult {
  const sequences: EngineSequence[] = w.sequences.map((s, i) => {
    if (s.logprobs === null || s.logprobs === undefined) throw InvalidArgumentError.format(`sequences[${i}].logprobs`, 'missing from the server’s answer');
    if (s.logprobs.length !== s.tokens.length) throw InvalidArgumentError.format(`sequences[${i}].logprobs`, `${s.logprobs.length} values for ${s.tokens.length} tokens`);
    return { tokens: Int32Array.from(s.tokens), logprobs: Float32Array.from(s.logprobs), stopReason: s.stop_reason };
  });
  const wire = w.prompt_logprobs ?? null;
  if (wire === null) return { sequences, promptLogprobs: null };
  const out = new Float32Array(promptLength).fill(Number.NaN);
  const offset = promptLength - wire.length;
  if (offset !== 0 && offset !== 1) throw InvalidArgumentError.format('prompt_logprobs', `${wire.length} values for a ${promptLength}-token prompt`);
  wire.forEach((v, i) => {
    out[i + offset] = v === null ? Number.NaN : v;
  });
  return { sequences, promptLogprobs: out };
}
