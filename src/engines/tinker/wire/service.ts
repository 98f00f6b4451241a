/**
 * The service routes of the Tinker API on the JSON wire: health, capabilities, client config,
 * sessions and heartbeats, futures (`retrieve_future` and every answer it can give), training runs,
 * checkpoints and their archives, and the error bodies servers send.
 *
 * Answers of `retrieve_future` a client must handle (the SDK's `api_future_impl` and SkyRL tx):
 * - 200 with the result itself (no wrapper);
 * - 200 `{type: 'try_again', request_id, queue_state}`: still pending, ask again;
 * - 200 `{error, category}`: the work failed (Tinker's shape);
 * - 400 `{detail}`: the work failed (SkyRL's shape);
 * - 408 `{detail, queue_state?}`: a long poll ran out, ask again;
 * - 404 `{detail}`: no such future; 410: the future is gone, re-send the original request.
 */
import { z } from 'zod';

export const healthResponse = z.looseObject({ status: z.literal('ok') });
export type HealthResponse = z.infer<typeof healthResponse>;

export const supportedModel = z.looseObject({ model_name: z.string().nullish(), max_context_length: z.number().int().nullish() });
export const serverCapabilities = z.looseObject({ supported_models: z.array(supportedModel) });
export type ServerCapabilities = z.infer<typeof serverCapabilities>;

/** `POST client/config`: the SDK sends its version; SkyRL's recorded client sent `{}`. */
export const clientConfigRequest = z.looseObject({ sdk_version: z.string().optional() });

/** Server feature flags (the SDK ignores names it does not know; every field has an SDK default). */
export const clientConfigResponse = z.looseObject({
  pjwt_auth_enabled: z.boolean(),
  credential_default_source: z.string().optional(),
  /** When true, the SDK zstd-compresses its protobuf `forward_backward` bodies. */
  proto_compress_fwdbwd: z.boolean().optional(),
  parallel_fwdbwd_chunks: z.boolean().optional(),
  fwdbwd_max_chunk_len: z.number().int().optional(),
  create_model_via_load_weights: z.boolean().optional(),
});
export type ClientConfigResponse = z.infer<typeof clientConfigResponse>;

export const createSessionRequest = z.object({
  tags: z.array(z.string()).default([]),
  user_metadata: z.record(z.string(), z.unknown()).nullish(),
  sdk_version: z.string().default('unknown'),
  project_id: z.string().nullish(),
  type: z.literal('create_session').optional(),
});
export type CreateSessionRequest = z.infer<typeof createSessionRequest>;

export const createSessionResponse = z.looseObject({
  type: z.literal('create_session').optional(),
  info_message: z.string().nullish(),
  warning_message: z.string().nullish(),
  error_message: z.string().nullish(),
  session_id: z.string(),
});
export type CreateSessionResponse = z.infer<typeof createSessionResponse>;

export const sessionHeartbeatRequest = z.object({ session_id: z.string(), type: z.literal('session_heartbeat').optional() });
export const sessionHeartbeatResponse = z.looseObject({ type: z.literal('session_heartbeat') });

/** What a queued call answers at once: the future to poll (SkyRL repeats the id as `future_id`). */
export const untypedFuture = z.looseObject({
  request_id: z.string(),
  future_id: z.string().optional(),
  status: z.string().optional(),
  model_id: z.string().nullish(),
});
export type UntypedFuture = z.infer<typeof untypedFuture>;

export const retrieveFutureRequest = z.object({
  request_id: z.string(),
  allow_metadata_only: z.boolean().optional(),
});
export type RetrieveFutureRequest = z.infer<typeof retrieveFutureRequest>;

export const queueState = z.enum(['active', 'paused_capacity', 'paused_rate_limit']);

/** 200 `{type: 'try_again'}`: not finished yet. */
export const tryAgainResponse = z.looseObject({
  type: z.literal('try_again'),
  request_id: z.string(),
  queue_state: z.string(),
  queue_state_reason: z.string().nullish(),
});
export type TryAgainResponse = z.infer<typeof tryAgainResponse>;

/** Who is at fault for a failed request. */
export const requestErrorCategory = z.enum(['unknown', 'server', 'user']);
export type RequestErrorCategory = z.infer<typeof requestErrorCategory>;

/** 200 `{error, category}`: the work failed (Tinker's shape of a failed future). */
export const requestFailedResponse = z.looseObject({ error: z.string(), category: requestErrorCategory.catch('unknown') });
export type RequestFailedResponse = z.infer<typeof requestFailedResponse>;

/** One FastAPI-style validation issue of a 422. */
export const validationIssue = z.looseObject({
  type: z.string(),
  loc: z.array(z.union([z.string(), z.number()])),
  msg: z.string(),
  input: z.unknown().optional(),
  ctx: z.record(z.string(), z.unknown()).optional(),
});
export type ValidationIssue = z.infer<typeof validationIssue>;

/** Every non-2xx JSON body: a message, or a 422's list of issues; a 408 may carry the queue state. */
export const errorBody = z.looseObject({
  detail: z.union([z.string(), z.array(validationIssue)]),
  queue_state: z.string().optional(),
});
export type ErrorBody = z.infer<typeof errorBody>;

/**
 * One answer of `retrieve_future`, classified (status first, then the 200 body's shape). `result`
 * carries the body for the caller's own result schema.
 * @example classifyFutureAnswer(200, { type: 'try_again', request_id: '3', queue_state: 'active' }).kind // 'try_again'
 */
export type FutureAnswer =
  | { readonly kind: 'result'; readonly result: unknown }
  | { readonly kind: 'try_again'; readonly queueState: string | null }
  | { readonly kind: 'failed'; readonly message: string; readonly category: RequestErrorCategory }
  | { readonly kind: 'timeout'; readonly queueState: string | null }
  | { readonly kind: 'not_found'; readonly message: string }
  | { readonly kind: 'gone'; readonly message: string }
  | { readonly kind: 'http_error'; readonly status: number; readonly message: string };

/** Classifies one `retrieve_future` answer by status and body (see {@link FutureAnswer}). */
export function classifyFutureAnswer(status: number, body: unknown): FutureAnswer {
  const detail = errorMessageOf(body);
  if (status === 200) {
    const obj = body !== null && typeof body === 'object' ? (body as Record<string, unknown>) : {};
    if (obj.type === 'try_again') return { kind: 'try_again', queueState: typeof obj.queue_state === 'string' ? obj.queue_state : null };
    if (typeof obj.error === 'string' && !('sequences' in obj) && !('loss_fn_outputs' in obj)) {
      const category = requestErrorCategory.safeParse(obj.category);
      return { kind: 'failed', message: obj.error, category: category.success ? category.data : 'unknown' };
    }
    return { kind: 'result', result: body };
  }
  if (status === 408) {
    const qs = body !== null && typeof body === 'object' ? (body as Record<string, unknown>).queue_state : undefined;
    return { kind: 'timeout', queueState: typeof qs === 'string' ? qs : null };
  }
  if (status === 400) return { kind: 'failed', message: detail, category: 'user' };
  if (status === 404) return { kind: 'not_found', message: detail };
  if (status === 410) return { kind: 'gone', message: detail };
  return { kind: 'http_error', status, message: detail };
}

/**
 * The message of an error body: `detail` (a 422's issues joined), `error`, or the body as text.
 * @example errorMessageOf({ detail: 'Model not found' }) // 'Model not found'
 */
export function errorMessageOf(body: unknown): string {
  if (typeof body === 'string') return body;
  if (body === null || typeof body !== 'object') return String(body);
  const obj = body as Record<string, unknown>;
  if (typeof obj.detail === 'string') return obj.detail;
  if (Array.isArray(obj.detail)) {
    return obj.detail.map((d) => (d !== null && typeof d === 'object' ? `${((d as ValidationIssue).loc ?? []).join('.')}: ${(d as ValidationIssue).msg}` : String(d))).join('; ');
  }
  if (typeof obj.error === 'string') return obj.error;
  return JSON.stringify(body);
}

/** A checkpoint: `training` (weights + optimizer, for load_weights) or `sampler` (adapter, for sampling and download). */
export const checkpoint = z.looseObject({
  checkpoint_id: z.string(),
  checkpoint_type: z.enum(['training', 'sampler']),
  time: z.string(),
  tinker_path: z.string(),
  size_bytes: z.number().int().nullish(),
  public: z.boolean().optional(),
  expires_at: z.string().nullish(),
});
export type Checkpoint = z.infer<typeof checkpoint>;

export const cursor = z.looseObject({ offset: z.number().int(), limit: z.number().int(), total_count: z.number().int() });
export type Cursor = z.infer<typeof cursor>;

export const checkpointsListResponse = z.looseObject({ checkpoints: z.array(checkpoint), cursor: cursor.nullish() });
export type CheckpointsListResponse = z.infer<typeof checkpointsListResponse>;

/** The future (200 JSON) form of the archive route; today's servers answer 302 with `Location` instead. */
export const checkpointArchiveUrlResponse = z.looseObject({ url: z.string(), expires: z.string() });

export const trainingRun = z.looseObject({
  training_run_id: z.string(),
  base_model: z.string(),
  model_owner: z.string(),
  is_lora: z.boolean(),
  corrupted: z.boolean().optional(),
  lora_rank: z.number().int().nullish(),
  last_request_time: z.string(),
  last_checkpoint: checkpoint.nullish(),
  last_sampler_checkpoint: checkpoint.nullish(),
  user_metadata: z.record(z.string(), z.string()).nullish(),
});
export type TrainingRun = z.infer<typeof trainingRun>;

export const trainingRunsResponse = z.looseObject({ training_runs: z.array(trainingRun), cursor });
export type TrainingRunsResponse = z.infer<typeof trainingRunsResponse>;

/** A parsed `tinker://` path: the model (training run), whether it names training or sampler weights, and the name. */
export interface TinkerPath {
  readonly modelId: string;
  readonly kind: 'training' | 'sampler';
  readonly name: string;
}

/**
 * Parses `tinker://<model>/weights/<name>`, `tinker://<model>/sampler_weights/<name>`, or SkyRL's
 * short `tinker://<model>/<name>` (a sampler checkpoint); null when `path` is none of these.
 * @example parseTinkerPath('tinker://model_1/sampler_weights/final') // { modelId: 'model_1', kind: 'sampler', name: 'final' }
 */
export function parseTinkerPath(path: string): TinkerPath | null {
  if (!path.startsWith('tinker://')) return null;
  const parts = path.slice('tinker://'.length).split('/');
  if (parts.some((p) => p === '')) return null;
  if (parts.length === 2) return { modelId: parts[0] as string, kind: 'sampler', name: parts[1] as string };
  if (parts.length === 3 && (parts[1] === 'weights' || parts[1] === 'sampler_weights')) {
    return { modelId: parts[0] as string, kind: parts[1] === 'weights' ? 'training' : 'sampler', name: parts[2] as string };
  }
  return null;
}

/**
 * The canonical `tinker://` path of a checkpoint.
 * @example tinkerPath({ modelId: 'model_1', kind: 'training', name: 'step-3' }) // 'tinker://model_1/weights/step-3'
 */
export function tinkerPath(p: TinkerPath): string {
  return `tinker://${p.modelId}/${p.kind === 'training' ? 'weights' : 'sampler_weights'}/${p.name}`;
}
