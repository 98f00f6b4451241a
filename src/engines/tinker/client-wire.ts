/**
 * The JSON shapes the client sends and reads, as far as the client needs them. Result schemas are
 * lenient about fields they do not use (servers add fields over time) and strict about the ones
 * turnwise computes with. Request shapes follow the official SDK's models; SkyRL tx ignores the
 * fields it does not know (`model_seq_id`, `type`, the `train_*` flags).
 *
 * Private to the client until the shared `wire.ts` of `turnwise tinker serve` lands.
 */
import { z } from 'zod';

/** A tensor on the wire: flat `data`, its dtype and shape. */
export interface WireTensor {
  readonly data: readonly number[];
  readonly dtype: 'int64' | 'float32';
  readonly shape: readonly number[];
}

/** One training sequence on the wire (Tinker's `Datum`). */
export interface WireDatum {
  readonly model_input: { readonly chunks: readonly { readonly type: 'encoded_text'; readonly tokens: readonly number[] }[] };
  readonly loss_fn_inputs: Readonly<Record<string, WireTensor>>;
}

/** The body of `forward` (`forward_input`) and `forward_backward` (`forward_backward_input`). */
export interface WireForwardInput {
  readonly loss_fn: string;
  readonly loss_fn_config?: Readonly<Record<string, number>>;
  readonly data: readonly WireDatum[];
}

/** `sampling_params` of `asample`. */
export interface WireSamplingParams {
  readonly max_tokens: number;
  readonly temperature: number;
  readonly top_p: number;
  readonly top_k: number;
  readonly seed?: number;
  readonly stop?: readonly number[];
}

/** Where `asample` takes its weights from: exactly one. */
export type WireSampleSource = { readonly model_path: string } | { readonly base_model: string };

/** The acknowledgement of a queued call (`{future_id, status, request_id}`; `create_model` and `unload_model` add fields). */
export const submittedSchema = z.object({ request_id: z.union([z.string(), z.number()]).transform(String) });

const tensorSchema = z.object({ data: z.array(z.number().nullable()) });

/** `forward` / `forward_backward` result. */
export const forwardResultSchema = z.object({
  loss_fn_outputs: z.array(z.record(z.string(), tensorSchema)),
  metrics: z.record(z.string(), z.number()).optional(),
});
export type ForwardResult = z.infer<typeof forwardResultSchema>;

/** `optim_step` result. */
export const optimStepResultSchema = z.object({ metrics: z.record(z.string(), z.number()).nullish() });

/** `create_model` result. */
export const createModelResultSchema = z.object({ model_id: z.string() });

/** `save_weights` and `save_weights_for_sampler` result (`path` null only for the SDK's sampling-session form). */
export const savedPathSchema = z.object({ path: z.string().nullish(), sampling_session_id: z.string().nullish() });

/** `asample` result. */
export const sampleResultSchema = z.object({
  sequences: z.array(
    z.object({
      tokens: z.array(z.number().int()),
      logprobs: z.array(z.number().nullable()).nullish(),
      stop_reason: z.enum(['stop', 'length']),
    }),
  ),
  prompt_logprobs: z.array(z.number().nullable()).nullish(),
});
export type SampleResult = z.infer<typeof sampleResultSchema>;

/** `create_session` answer (not a future). */
export const sessionSchema = z.object({
  session_id: z.string(),
  info_message: z.string().nullish(),
  warning_message: z.string().nullish(),
  error_message: z.string().nullish(),
});

/** `get_server_capabilities` answer. */
export const capabilitiesSchema = z.object({
  supported_models: z.array(z.object({ model_name: z.string().nullish(), max_context_length: z.number().nullish() }).loose()),
});
export type ServerCapabilities = z.infer<typeof capabilitiesSchema>;

/** `get_info` answer. */
export const modelInfoSchema = z
  .object({
    model_id: z.string(),
    model_data: z.object({ base_model: z.string().nullish(), lora_config: z.object({ rank: z.number().nullish() }).loose().nullish() }).loose().nullish(),
    lora_rank: z.number().nullish(),
  })
  .loose();
export type ModelInfo = z.infer<typeof modelInfoSchema>;

/** `GET training_runs/{id}/checkpoints` answer. */
export const checkpointListSchema = z.object({
  checkpoints: z.array(z.object({ checkpoint_id: z.string(), checkpoint_type: z.string(), tinker_path: z.string() }).loose()),
});
export type CheckpointList = z.infer<typeof checkpointListSchema>;

/** The archive endpoint's future contract (the SDK accepts it beside today's 302). */
export const archiveUrlSchema = z.object({ url: z.string() });
